/* "Optimize…" (issue #28): the dialog moves the ticked differentiable
 * numbers of the bench's system to its target's on a worker (the target
 * is the system's own result with a known z and astigmatism), Cancel
 * keeps the best, Apply changes only the variables, as one undo step of
 * the window; bad input is said in the dialog. */

#include "config.h"

#include <math.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy-optimize-dialog.h"
#include "airy-json-private.h"
#include "airy-test-app.h"
#include "airy-test-gtk.h"

static gboolean have_display;
static GtkApplication *app;
static char *tmpdir;

/* a point source at z (µm) behind an objective, a Zernike mask with
 * defocus 0.1 and astigmatism (ANSI 5) astig waves, a tube lens */
static char *
system_text (double z, double astig)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 4.5},"
    " \"spectrum\": {\"wavelengths\": [0.6], \"weights\": [1.0]},"
    " \"z\": {\"start\": -1.0, \"stop\": 1.0, \"count\": 3},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"power\": 1.5, \"z\": %s},"
    "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 5],"
    "   \"zernike-coefficients\": [0.1, %s]},"
    "  {\"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.33}]}",
    g_ascii_dtostr (b, sizeof b, z), g_ascii_dtostr (a, sizeof a, astig));
}

static AirySystem *
system_at (double z, double astig)
{
  g_autofree char *json = system_text (z, astig);
  g_autoptr(GError) error = NULL;
  AirySystem *system = airy_system_new_from_data (json, -1, tmpdir, NULL, &error);

  g_assert_no_error (error);
  return system;
}

/* the result of z = 0.3 µm, ANSI 5 = 0.15 waves, as a TIFF (name in tmpdir) */
static char *
write_target (const char *name, guint shrink)
{
  g_autoptr(AirySystem) truth = system_at (0.3, 0.15);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) run = airy_run (truth, NULL, NULL, NULL, NULL, &error);
  g_autoptr(AiryStack) part = NULL;
  char *path = g_build_filename (tmpdir, name, NULL);

  g_assert_no_error (error);
  if (shrink)
    {
      /* a target of another shape: a corner of the result */
      guint x, y, z;

      part = airy_stack_new (run->stack->depth, run->stack->height - shrink, run->stack->width - shrink);
      for (z = 0; z < part->depth; z++)
        for (y = 0; y < part->height; y++)
          for (x = 0; x < part->width; x++)
            part->data[((gsize) z * part->height + y) * part->width + x]
              = run->stack->data[((gsize) z * run->stack->height + y) * run->stack->width + x];
    }
  g_assert_true (airy_tiff_write (path, part ? part : run->stack, &error));
  g_assert_no_error (error);
  return path;
}

static void
on_apply (gpointer user_data, AirySystem *system, const char *path)
{
  AirySystem **out = user_data;

  g_assert_null (path);
  g_set_object (out, system);
}

static void
wait_for (AiryOptimizeDialog *dialog)
{
  while (airy_optimize_dialog_is_running (dialog))
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* a number of the system's file (every parameter written) */
static double
number_at (AirySystem *system, const char *path)
{
  g_autofree char *json = airy_system_to_json_full (system);
  g_autoptr(JsonNode) root = json_from_string (json, NULL);
  JsonNode *node = _airy_json_find_number (root, path);

  g_assert_nonnull (node);
  return json_node_get_double (node);
}

static gboolean
offers (AiryOptimizeDialog *dialog, const char *path)
{
  guint i;

  for (i = 0; i < airy_optimize_dialog_get_n_variables (dialog); i++)
    if (g_str_equal (airy_optimize_dialog_get_variable (dialog, i), path))
      return TRUE;
  return FALSE;
}

static void
test_recover_apply (void)
{
  g_autoptr(AirySystem) start = system_at (0.0, 0.0);
  g_autoptr(AirySystem) applied = NULL;
  g_autofree char *target = write_target ("target.tif", 0);
  AiryOptimizeDialog *dialog;
  double z, c;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  dialog = AIRY_OPTIMIZE_DIALOG (airy_optimize_dialog_new (NULL, start));
  airy_optimize_dialog_set_apply_func (dialog, on_apply, &applied);
  gtk_window_present (GTK_WINDOW (dialog));
  /* the differentiable numbers, integers not */
  g_assert_true (offers (dialog, "elements[0].z"));
  g_assert_true (offers (dialog, "elements[0].na"));
  g_assert_true (offers (dialog, "elements[1].zernike-coefficients[1]"));
  g_assert_false (offers (dialog, "elements[1].zernike-indices[1]"));
  airy_optimize_dialog_set_target (dialog, target);
  airy_optimize_dialog_set_loss (dialog, "l2");
  airy_optimize_dialog_set_optimizer (dialog, "lbfgs", 25, 0.05);
  g_assert_true (airy_optimize_dialog_set_variable_active (dialog, "elements[0].z", TRUE));
  g_assert_true (airy_optimize_dialog_set_variable_active (dialog, "elements[1].zernike-coefficients[1]", TRUE));
  /* the worker may not touch the dialog's widgets: it runs off the UI thread */
  airy_optimize_dialog_start (dialog);
  g_assert_true (airy_optimize_dialog_is_running (dialog));
  wait_for (dialog);
  g_test_message ("%s; %s", airy_optimize_dialog_get_status (dialog), airy_optimize_dialog_get_progress (dialog));
  g_assert_true (airy_optimize_dialog_get_best (dialog, "elements[0].z", &z));
  g_assert_true (airy_optimize_dialog_get_best (dialog, "elements[1].zernike-coefficients[1]", &c));
  g_assert_cmpfloat (fabs (z - 0.3), <=, 1e-3);
  g_assert_cmpfloat (fabs (c - 0.15), <=, 1e-3);
  g_assert_nonnull (strstr (airy_optimize_dialog_get_progress (dialog), "Step "));
  g_assert_null (applied);
  airy_optimize_dialog_apply (dialog);
  g_assert_nonnull (applied);
  g_assert_cmpfloat (fabs (number_at (applied, "elements[0].z") - 0.3), <=, 1e-3);
  g_assert_cmpfloat (fabs (number_at (applied, "elements[1].zernike-coefficients[1]") - 0.15), <=, 1e-3);
  /* nothing else moved */
  g_assert_cmpfloat (number_at (applied, "elements[0].na"), ==, 0.8);
  g_assert_cmpfloat (number_at (applied, "elements[1].zernike-coefficients[0]"), ==, 0.1);
  g_assert_cmpfloat (number_at (applied, "elements[2].f"), ==, 100.0);
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* Cancel during a long run: it stops, the best so far is kept and applies */
static void
test_cancel (void)
{
  g_autoptr(AirySystem) start = system_at (0.0, 0.0);
  g_autoptr(AirySystem) applied = NULL;
  g_autofree char *target = write_target ("target.tif", 0);
  AiryOptimizeDialog *dialog;
  double z;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  dialog = AIRY_OPTIMIZE_DIALOG (airy_optimize_dialog_new (NULL, start));
  airy_optimize_dialog_set_apply_func (dialog, on_apply, &applied);
  airy_optimize_dialog_set_target (dialog, target);
  airy_optimize_dialog_set_optimizer (dialog, "adam", 1000000, 0.01);
  airy_optimize_dialog_set_variable_active (dialog, "elements[0].z", TRUE);
  airy_optimize_dialog_start (dialog);
  /* the first progress line shown cancels */
  while (airy_optimize_dialog_get_progress (dialog) == NULL)
    g_main_context_iteration (NULL, TRUE);
  airy_optimize_dialog_cancel (dialog);
  wait_for (dialog);
  g_test_message ("%s", airy_optimize_dialog_get_status (dialog));
  g_assert_true (g_str_has_prefix (airy_optimize_dialog_get_status (dialog), "Cancelled after "));
  g_assert_cmpuint (airy_optimize_dialog_get_steps_done (dialog), <, 1000000);
  g_assert_true (airy_optimize_dialog_get_best (dialog, "elements[0].z", &z));
  /* Adam moves z from 0 by its step (0.01 µm) at most per step */
  g_assert_cmpfloat (fabs (z), <=, 0.01 * (airy_optimize_dialog_get_steps_done (dialog) + 1) + 1e-9);
  airy_optimize_dialog_apply (dialog);
  g_assert_nonnull (applied);
  g_assert_cmpfloat (number_at (applied, "elements[0].z"), ==, z);
  gtk_window_destroy (GTK_WINDOW (dialog));
}

static void
test_bad_input (void)
{
  g_autoptr(AirySystem) start = system_at (0.0, 0.0);
  g_autofree char *small = write_target ("small.tif", 8);
  g_autoptr(AirySystem) applied = NULL;
  AiryOptimizeDialog *dialog;
  double z;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  dialog = AIRY_OPTIMIZE_DIALOG (airy_optimize_dialog_new (NULL, start));
  airy_optimize_dialog_set_apply_func (dialog, on_apply, &applied);
  airy_optimize_dialog_set_variable_active (dialog, "elements[0].z", TRUE);
  airy_optimize_dialog_start (dialog);
  g_assert_false (airy_optimize_dialog_is_running (dialog));
  g_assert_cmpstr (airy_optimize_dialog_get_status (dialog), ==,
                   "Choose the target stack (a TIFF of the result's shape) first.");
  airy_optimize_dialog_set_target (dialog, small);
  airy_optimize_dialog_set_variable_active (dialog, "elements[0].z", FALSE);
  airy_optimize_dialog_start (dialog);
  g_assert_false (airy_optimize_dialog_is_running (dialog));
  g_assert_cmpstr (airy_optimize_dialog_get_status (dialog), ==,
                   "Tick at least one variable: no parameter would change.");
  /* a target of another shape: the engine's message, both shapes named */
  airy_optimize_dialog_set_variable_active (dialog, "elements[0].z", TRUE);
  airy_optimize_dialog_start (dialog);
  wait_for (dialog);
  g_test_message ("%s", airy_optimize_dialog_get_status (dialog));
  g_assert_true (g_str_has_prefix (airy_optimize_dialog_get_status (dialog), "Target: "));
  g_assert_nonnull (strstr (airy_optimize_dialog_get_status (dialog), "3 × 24 × 24"));
  g_assert_nonnull (strstr (airy_optimize_dialog_get_status (dialog), "32"));
  g_assert_false (airy_optimize_dialog_get_best (dialog, "elements[0].z", &z));
  /* nothing to apply */
  airy_optimize_dialog_apply (dialog);
  g_assert_null (applied);
  /* no viewer, no pinned reference */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "optimize.use-reference", NULL));
  g_assert_true (g_str_has_prefix (airy_optimize_dialog_get_status (dialog), "The viewer has no pinned reference"));
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* In the app: the truth's result pinned in the viewer, the start system
 * opened; ☰ → Optimize… with "Use Pinned Reference" as the target; Apply
 * is one undo step changing the two variables alone */
static void
test_window_undo (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "start.json", NULL);
  g_autofree char *truth_path = g_build_filename (tmpdir, "truth.json", NULL);
  g_autofree char *json = system_text (0.0, 0.0), *truth = system_text (0.3, 0.15);
  AiryStackViewer *viewer;
  g_autofree char *before = NULL, *after = NULL, *expected = NULL;
  g_autoptr(GError) error = NULL;
  AiryOptimizeDialog *dialog;
  AiryWindow *window;
  double z;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_true (g_file_set_contents (path, json, -1, NULL));
  g_assert_true (g_file_set_contents (truth_path, truth, -1, NULL));
  window = test_new_window (app, NULL);
  g_assert_true (airy_window_open_file (window, truth_path, &error));
  g_assert_no_error (error);
  wait_idle (window);
  viewer = airy_window_get_viewer (window);
  airy_stack_viewer_pin_reference (viewer);
  g_assert_true (airy_window_open_file (window, path, &error));
  g_assert_no_error (error);
  wait_idle (window);
  g_assert_true (airy_stack_viewer_get_pinned (viewer));
  before = airy_system_to_json (airy_window_get_system (window));
  g_assert_true (window_action_enabled (window, "win.optimize"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.optimize", NULL));
  dialog = AIRY_OPTIMIZE_DIALOG (airy_optimize_dialog_find (GTK_WINDOW (window)));
  g_assert_nonnull (dialog);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "optimize.use-reference", NULL));
  g_assert_cmpstr (airy_optimize_dialog_get_status (dialog), ==, "");
  airy_optimize_dialog_set_optimizer (dialog, "lbfgs", 25, 0.05);
  g_assert_true (airy_optimize_dialog_set_variable_active (dialog, "elements[0].z", TRUE));
  g_assert_true (airy_optimize_dialog_set_variable_active (dialog, "elements[1].zernike-coefficients[1]", TRUE));
  airy_optimize_dialog_start (dialog);
  wait_for (dialog);
  g_assert_true (airy_optimize_dialog_get_best (dialog, "elements[0].z", &z));
  g_assert_false (window_action_enabled (window, "win.undo"));
  airy_optimize_dialog_apply (dialog);
  wait_idle (window);
  g_assert_cmpfloat (fabs (number_at (airy_window_get_system (window), "elements[0].z") - 0.3), <=, 1e-3);
  g_assert_cmpfloat (fabs (number_at (airy_window_get_system (window), "elements[1].zernike-coefficients[1]") - 0.15),
                     <=, 1e-3);
  g_assert_cmpfloat (number_at (airy_window_get_system (window), "elements[0].na"), ==, 0.8);
  g_assert_true (window_action_enabled (window, "win.undo"));
  after = airy_system_to_json (airy_window_get_system (window));
  g_assert_cmpstr (after, !=, before);
  /* one undo: the system before */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  wait_idle (window);
  expected = airy_system_to_json (airy_window_get_system (window));
  g_assert_cmpstr (expected, ==, before);
  g_assert_false (window_action_enabled (window, "win.undo"));
  gtk_window_destroy (GTK_WINDOW (dialog));
  close_window (window);
}

int
main (int argc, char **argv)
{
  int status;

  g_setenv ("AIRY_FFTW_PLANNER", "estimate", FALSE);
  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestOptimizeDialog", G_APPLICATION_DEFAULT_FLAGS,
                       &have_display);
  tmpdir = g_dir_make_tmp ("airy-optimize-dialog-XXXXXX", NULL);
  g_test_add_func ("/optimize-dialog/recover-apply", test_recover_apply);
  g_test_add_func ("/optimize-dialog/cancel", test_cancel);
  g_test_add_func ("/optimize-dialog/bad-input", test_bad_input);
  g_test_add_func ("/optimize-dialog/window-undo", test_window_undo);
  status = g_test_run ();
  g_object_unref (app);
  {
    g_autoptr(GDir) dir = g_dir_open (tmpdir, 0, NULL);
    const char *name;

    while (dir && (name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *file = g_build_filename (tmpdir, name, NULL);

        g_unlink (file);
      }
  }
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return status;
}
