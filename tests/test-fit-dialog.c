/* "Fit Measured PSF…": the dialog fits a stack file on its worker, plots
 * one loss per iteration, shows the result, applies it and cancels;
 * "Fit Bead at Cursor…" fits a window around the viewer's cursor. */

#include "config.h"

#include "airy-fit-dialog.h"
#include "airy-stack-viewer.h"
#include "airy-test-gtk.h"
#include "airy-test-util.h"
#include "airy-atomic-private.h"
#include "airy-options-private.h"

/* opens a file in the dialog and waits for its read, which is on a worker:
 * the UI thread touching a file meanwhile is a critical (the engine's
 * guard) */
static void
set_file (AiryFitDialog *dialog, const char *path)
{
  _airy_file_io_forbid_thread (g_thread_self ());
  airy_fit_dialog_set_file (dialog, path);
  while (airy_fit_dialog_is_reading (dialog))
    g_main_context_iteration (NULL, TRUE);
  _airy_file_io_forbid_thread (NULL);
}

static gboolean have_display;

static const char *const system_json =
  "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.1},"
  " \"spectrum\": {\"wavelengths\": [0.532], \"weights\": [1.0]},"
  " \"z\": {\"start\": -2.0, \"stop\": 2.0, \"count\": 12},"
  " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0%s},"
  " \"elements\": [%s], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1.0}}";

static void
wait_for (AiryFitDialog *dialog)
{
  while (airy_fit_dialog_is_running (dialog))
    g_main_context_iteration (NULL, TRUE);
  /* the last idle of the progress */
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* the drawing areas that drew a result image (draw_image leaves its scale) */
static guint
count_drawn_images (GtkWidget *root)
{
  GtkWidget *child;
  guint n = GTK_IS_DRAWING_AREA (root) && g_object_get_data (G_OBJECT (root), "airy-scale") != NULL;

  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    n += count_drawn_images (child);
  return n;
}

static gboolean
find_label_prefix (GtkWidget *root, const char *prefix, const char *fragment)
{
  GtkWidget *child;

  if (GTK_IS_LABEL (root) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (root)), prefix)
      && strstr (gtk_label_get_text (GTK_LABEL (root)), fragment))
    return TRUE;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if (find_label_prefix (child, prefix, fragment))
      return TRUE;
  return FALSE;
}

static void
on_apply (gpointer user_data, AirySystem *system, const char *path)
{
  AirySystem **out = user_data;

  g_assert_null (path);
  g_set_object (out, system);
}

/* another file: the old result goes, nothing to apply, the new stack shown;
 * its fit fails; a file that is no stack */
static void
check_other_files (AiryFitDialog *dialog, const char *dir, const AiryStack *beads)
{
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) flat = airy_stack_new (beads->depth, beads->height, beads->width);
  g_autofree char *flat_path = g_build_filename (dir, "flat.tif", NULL);
  g_autofree char *text_path = g_build_filename (dir, "notes.txt", NULL);

  flat->dx = flat->dy = beads->dx;
  flat->dz = beads->dz;
  for (q = 0; q < n; q++)
    flat->data[q] = 10.0f;
  g_assert_true (airy_tiff_write (flat_path, flat, &error));
  g_assert_no_error (error);
  set_file (dialog, flat_path);
  g_assert_null (airy_fit_dialog_get_result (dialog));
  g_assert_cmpuint (airy_fit_dialog_get_n_losses (dialog), ==, 0);
  g_assert_false (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON,
                                                              "_Apply to System")));
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Fit")));
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), "flat.tif: 48 × 48 pixels, 12 planes"));
  /* the measured view shows the opened stack before a fit, the others nothing */
  {
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
    while (count_drawn_images (GTK_WIDGET (dialog)) < 1 && g_get_monotonic_time () < until)
      g_main_context_iteration (NULL, FALSE);
  }
  g_assert_cmpuint (count_drawn_images (GTK_WIDGET (dialog)), ==, 1);
  /* the slider counts planes from 1 */
  g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_SCALE, NULL))),
                     ==, 7);

  /* its fit fails: the message, still no result */
  airy_fit_dialog_start (dialog);
  wait_for (dialog);
  g_test_message ("%s", airy_fit_dialog_get_status (dialog));
  g_assert_null (airy_fit_dialog_get_result (dialog));
  g_assert_null (strstr (airy_fit_dialog_get_status (dialog), "phase mask is in the bench"));
  g_assert_false (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON,
                                                              "_Apply to System")));

  /* a file that is no stack: said when it is opened, nothing to fit */
  g_assert_true (g_file_set_contents (text_path, "not a TIFF\n", -1, NULL));
  set_file (dialog, text_path);
  g_test_message ("%s", airy_fit_dialog_get_status (dialog));
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), text_path));
  g_assert_false (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Fit")));
  g_unlink (text_path);
  g_unlink (flat_path);
}

/* a stack larger than the system's plane: the engine names the CLI's
 * --crop, the dialog its Crop field; resampled, from which pixel size */
static void
check_stack_too_big (AiryFitDialog *dialog, const char *dir, const AiryStack *beads)
{
  g_autoptr(GError) error = NULL;
  gsize q;
  guint i;

  for (i = 0; i < 2; i++)
    {
      g_autoptr(AiryStack) big = airy_stack_new (beads->depth, 64, 64);
      g_autofree char *big_path = g_build_filename (dir, "big.tif", NULL);
      gsize m = (gsize) big->depth * 64 * 64;
      const char *status;

      big->dx = big->dy = i == 0 ? beads->dx : 0.09;
      big->dz = beads->dz;
      for (q = 0; q < m; q++)
        big->data[q] = 10.0f + (q % 4096 == 32 * 64 + 32 ? 1e4f : 0.0f);
      g_assert_true (airy_tiff_write (big_path, big, &error));
      g_assert_no_error (error);
      set_file (dialog, big_path);
      airy_fit_dialog_start (dialog);
      wait_for (dialog);
      status = airy_fit_dialog_get_status (dialog);
      g_test_message ("%s", status);
      g_assert_null (airy_fit_dialog_get_result (dialog));
      g_assert_nonnull (strstr (status, "larger than the system's PSF plane"));
      g_assert_nonnull (strstr (status, "in this dialog: set Crop (pixels) to the bead's window"));
      if (i == 1)
        g_assert_nonnull (strstr (status, "(the stack, 64 × 64 pixels of 0.09 µm, was resampled to the system's "
                                          "grid.spacing, 0.1 µm)"));
      else
        g_assert_null (strstr (status, "resampled"));
      g_unlink (big_path);
    }
}

/* six long warnings: scrolled in their area, the window within a
 * 1280 × 800 screen */
static void
check_long_warnings (AiryFitDialog *dialog)
{
  guint i;

  {
    GtkWidget *scroll = test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_SCROLLED_WINDOW, NULL);
    g_autoptr(GString) many = g_string_new (NULL);
    int natural = 0;

    g_assert_nonnull (scroll);
    for (i = 0; i < 6; i++)
      g_string_append_printf (many, "%sWarning: the bead stack's voxels (0.1002 × 0.1002 × 0.363636 µm) are not "
                              "the system's (0.1 × 0.1 × 0.363636 µm): resampled to 48 × 48 × 12, warning %u",
                              i ? "\n" : "", i);
    {
    GtkWidget *label = gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scroll));

    if (GTK_IS_VIEWPORT (label))
      label = gtk_viewport_get_child (GTK_VIEWPORT (label));
    g_assert_true (GTK_IS_LABEL (label));
    /* shown while it has warnings, whoever set them */
    gtk_label_set_text (GTK_LABEL (label), "");
    g_assert_false (gtk_widget_get_visible (scroll));
    gtk_label_set_text (GTK_LABEL (label), many->str);
    g_assert_true (gtk_widget_get_visible (scroll));
    gtk_widget_measure (GTK_WIDGET (dialog), GTK_ORIENTATION_VERTICAL, 900, NULL, &natural, NULL, NULL);
    g_test_message ("natural height with 6 warnings: %d px", natural);
    g_assert_cmpint (natural, <=, 760);
    }
  }
}

static void
test_dialog (void)
{
  g_autofree char *truth_json = g_strdup_printf (system_json, ", \"offset-x\": 0.1",
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5, 7, 12],"
    " \"zernike-coefficients\": [0.1, -0.08, 0.05]}");
  g_autofree char *base_json = g_strdup_printf (system_json, "", "");
  g_autoptr(AirySystem) truth = test_system (truth_json);
  g_autoptr(AirySystem) base = test_system (base_json);
  AiryRunOptions options = { .keep_psf = TRUE, .threads = 2 };
  g_autoptr(AiryResult) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("airy-fit-dialog-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "beads.tif", NULL);
  g_autoptr(AiryStack) beads = NULL;
  g_autoptr(AirySystem) applied = NULL;
  AiryFitDialog *dialog;
  const AiryFitResult *res;
  gsize n, q;
  double peak = 0;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  run = test_run (truth, &options);
  beads = airy_stack_copy (run->psf);
  n = (gsize) beads->depth * beads->height * beads->width;
  for (q = 0; q < n; q++)
    peak = MAX (peak, beads->data[q]);
  for (q = 0; q < n; q++)
    beads->data[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
  g_assert_true (airy_tiff_write (path, beads, &error));
  g_assert_no_error (error);

  dialog = AIRY_FIT_DIALOG (airy_fit_dialog_new (NULL, base));
  airy_fit_dialog_set_apply_func (dialog, on_apply, &applied);
  gtk_window_present (GTK_WINDOW (dialog));
  set_file (dialog, path);
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Fit")));
  airy_fit_dialog_start (dialog);
  g_assert_true (airy_fit_dialog_is_running (dialog));
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Cancel")));
  wait_for (dialog);
  res = airy_fit_dialog_get_result (dialog);
  g_test_message ("%s", airy_fit_dialog_get_status (dialog));
  g_assert_nonnull (res);
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), "iterations"));
  /* as the CLI: the best start's iterations, all of them over the starts, converged or not */
  {
    g_autofree char *it = res->restarts > 1
      ? g_strdup_printf ("%s: %u iterations of the best start, %u over %u starts, in ",
                         res->converged ? "converged" : "not converged", res->iterations, res->iterations_total,
                         res->restarts)
      : g_strdup_printf ("%s: %u iterations in ", res->converged ? "converged" : "not converged", res->iterations);

    g_assert_true (g_str_has_prefix (airy_fit_dialog_get_status (dialog), it));
    g_assert_null (strstr (airy_fit_dialog_get_status (dialog), "-0.000"));
  }
  /* the loss plot has one point per iteration of every start and stage */
  g_assert_cmpuint (airy_fit_dialog_get_n_losses (dialog), ==, res->iterations_total);
  g_assert_cmpuint (airy_fit_dialog_get_n_losses (dialog), >, 5);
  for (i = 0; i < res->n_terms; i++)
    {
      double t = res->indices[i] == 5 ? 0.1 : res->indices[i] == 7 ? -0.08 : res->indices[i] == 12 ? 0.05 : 0.0;
      g_assert_cmpfloat (fabs (res->coefficients[i] - t), <=, 0.01);
    }
  g_assert_cmpfloat (fabs (res->position[0] - 0.1), <=, 0.02);
  /* drawn: the three images, the wavefront and the bars after a z change */
  gtk_range_set_value (GTK_RANGE (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_SCALE, NULL)), 3);
  {
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
    while (count_drawn_images (GTK_WIDGET (dialog)) < 3 && g_get_monotonic_time () < until)
      g_main_context_iteration (NULL, FALSE);
  }
  g_assert_cmpuint (count_drawn_images (GTK_WIDGET (dialog)), ==, 3);
  /* the readout of the shared cursor (the window's centre pixel) at plane 3 */
  g_assert_true (find_label_prefix (GTK_WIDGET (dialog), "x 24, y 24, plane 3:", "residual"));

  /* Apply to System: the fitted system, with its phase mask */
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON,
                                                             "_Apply to System")));
  airy_fit_dialog_apply (dialog);
  g_assert_nonnull (applied);
  g_assert_cmpuint (airy_system_get_elements (applied)->len, ==, 1);
  g_assert_cmpstr (airy_element_get_type_name (g_ptr_array_index (airy_system_get_elements (applied), 0)), ==,
                   "phase-mask");

  /* cancel: the status says so, the last result stays */
  airy_fit_dialog_start (dialog);
  airy_fit_dialog_cancel (dialog);
  wait_for (dialog);
  g_assert_cmpstr (airy_fit_dialog_get_status (dialog), ==, "Cancelled.");
  g_assert_true (airy_fit_dialog_get_result (dialog) == res);

  /* another file: the old result goes, nothing to apply, the new stack shown */
  check_other_files (dialog, dir, beads);

  /* a folder: its message at once */
  set_file (dialog, dir);
  g_test_message ("%s", airy_fit_dialog_get_status (dialog));
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), dir));
  g_assert_false (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Fit")));

  check_stack_too_big (dialog, dir, beads);
  check_long_warnings (dialog);

  gtk_window_destroy (GTK_WINDOW (dialog));
  g_unlink (path);
  g_rmdir (dir);
}

/* the fit dialog the action opened (the newest) */
static AiryFitDialog *
find_dialog (void)
{
  g_autoptr(GList) list = gtk_window_list_toplevels ();
  GList *l;

  for (l = list; l; l = l->next)
    if (AIRY_IS_FIT_DIALOG (l->data) && gtk_widget_get_visible (l->data))
      return l->data;
  return NULL;
}

typedef struct
{
  GtkWidget       *window;
  AiryStackViewer *viewer;
} Bench;

/* a window class with the fit's actions installed on it, as the app's */
#define TEST_TYPE_BENCH_WINDOW (test_bench_window_get_type ())
G_DECLARE_FINAL_TYPE (TestBenchWindow, test_bench_window, TEST, BENCH_WINDOW, GtkApplicationWindow)
struct _TestBenchWindow { GtkApplicationWindow parent; };
G_DEFINE_FINAL_TYPE (TestBenchWindow, test_bench_window, GTK_TYPE_APPLICATION_WINDOW)

static void
test_bench_window_init (TestBenchWindow *self)
{
}

/* the class's apply: the window is its user data; it keeps the system */
static void
bench_apply (gpointer window, AirySystem *system, const char *path)
{
  g_assert_true (TEST_IS_BENCH_WINDOW (window));
  g_assert_null (path);
  g_object_set_data_full (G_OBJECT (window), "applied", g_object_ref (system), g_object_unref);
}

static void
test_bench_window_class_init (TestBenchWindowClass *klass)
{
  airy_fit_dialog_class_install_actions (GTK_WIDGET_CLASS (klass), bench_apply);
}

static void
bench_init (Bench *b, AirySystem *system)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  GtkWidget *panel = airy_bench_panel_new ();
  g_autoptr(GMenu) menu = g_menu_new ();

  b->window = g_object_new (TEST_TYPE_BENCH_WINDOW, NULL);
  b->viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  airy_bench_panel_set_system (AIRY_BENCH_PANEL (panel), system);
  gtk_box_append (GTK_BOX (box), panel);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (b->viewer));
  gtk_window_set_child (GTK_WINDOW (b->window), box);
  airy_fit_dialog_append_menu (menu);
  g_assert_cmpint (g_menu_model_get_n_items (G_MENU_MODEL (menu)), ==, 2);
  gtk_window_present (GTK_WINDOW (b->window));
}

/* activates win.fit-bead with the cursor at (x, y), z plane, and waits;
 * returns the dialog */
static AiryFitDialog *
fit_at (Bench *b, guint crop, guint x, guint y, guint z)
{
  AiryStackView *view = airy_stack_viewer_get_view (b->viewer);
  AiryFitDialog *dialog;
  GtkWidget *spin;

  airy_stack_view_set_cursor (view, x, y);
  airy_stack_view_set_z (view, z);
  g_assert_true (gtk_widget_activate_action (b->window, "win.fit-bead", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  if (crop)
    {
      /* another window size: the same stack and cursor, fitted again */
      g_assert_true (airy_fit_dialog_is_running (dialog));
      airy_fit_dialog_cancel (dialog);
      wait_for (dialog);
      spin = test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_SPIN_BUTTON, NULL);
      spin = gtk_widget_get_next_sibling (gtk_widget_get_next_sibling (spin));
      g_assert_true (GTK_IS_SPIN_BUTTON (spin));
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), crop);
      airy_fit_dialog_start (dialog);
    }
  wait_for (dialog);
  g_test_message ("cursor %u, %u: %s", x, y, airy_fit_dialog_get_status (dialog));
  return dialog;
}

static void
test_fit_bead (void)
{
  /* the astigmatic preset's term (ANSI 5, 0.08 waves) in a small system */
  g_autofree char *truth_json = g_strdup_printf (system_json, ", \"offset-x\": 0.1",
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5],"
    " \"zernike-coefficients\": [0.08]}");
  g_autofree char *base_json = g_strdup_printf (system_json, "", "");
  g_autoptr(AirySystem) truth = test_system (truth_json);
  g_autoptr(AirySystem) base = test_system (base_json);
  AiryRunOptions options = { .keep_psf = TRUE, .threads = 2 };
  g_autoptr(AiryResult) run = NULL;
  AiryStack *beads;
  AiryFitDialog *dialog;
  const AiryFitResult *res;
  const char *status;
  Bench b;
  gsize n, q;
  double peak = 0;
  guint i, found = 0;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  bench_init (&b, base);

  /* no stack in the viewer: said, nothing fitted */
  g_assert_true (gtk_widget_activate_action (b.window, "win.fit-bead", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  g_assert_false (airy_fit_dialog_is_running (dialog));
  g_assert_null (airy_fit_dialog_get_result (dialog));
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), "The viewer shows no stack"));
  g_assert_false (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Fit")));
  gtk_window_destroy (GTK_WINDOW (dialog));

  /* the bench's result, as the CPU keeps it: a resident in host memory */
  run = test_run (truth, &options);
  beads = airy_stack_copy (run->psf);
  n = (gsize) beads->depth * beads->height * beads->width;
  for (q = 0; q < n; q++)
    peak = MAX (peak, beads->data[q]);
  for (q = 0; q < n; q++)
    beads->data[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
  airy_stack_viewer_set_resident (b.viewer, airy_resident_new_host (beads));

  /* the bead (pixel 25, 24: offset-x one pixel) under the cursor, the default window */
  dialog = fit_at (&b, 0, 25, 24, 6);
  res = airy_fit_dialog_get_result (dialog);
  g_assert_nonnull (res);
  /* the crop became the window, centred on the cursor */
  g_assert_cmpuint (res->window[2], ==, AIRY_FIT_DIALOG_BEAD_CROP);
  g_assert_cmpuint (res->window[3], ==, AIRY_FIT_DIALOG_BEAD_CROP);
  g_assert_cmpuint (res->window[0] + res->window[2] / 2, ==, 25);
  g_assert_cmpuint (res->window[1] + res->window[3] / 2, ==, 24);
  for (i = 0; i < res->n_terms; i++)
    {
      double t = res->indices[i] == 5 ? 0.08 : 0.0;
      if (res->indices[i] == 5)
        found++;
      g_assert_cmpfloat (fabs (res->coefficients[i] - t), <=, 0.01);
    }
  g_assert_cmpuint (found, ==, 1);
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), "window x 9 … 40, y 8 … 39 around the cursor"));
  /* Apply to System works as for a file */
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON,
                                                             "_Apply to System")));
  gtk_window_destroy (GTK_WINDOW (dialog));

  /* at the edge: the window moves inside the stack, the warning says so */
  dialog = fit_at (&b, 0, 3, 24, 6);
  res = airy_fit_dialog_get_result (dialog);
  g_assert_nonnull (res);
  g_assert_cmpuint (res->window[0], ==, 0);
  g_assert_cmpuint (res->window[1], ==, 8);
  status = airy_fit_dialog_get_status (dialog);
  g_assert_nonnull (strstr (status, "Warning: the 32 × 32 window around x 3, y 24 does not fit in the stack "
                                    "(48 × 48 pixels): moved to x 0 … 31, y 8 … 39"));
  gtk_window_destroy (GTK_WINDOW (dialog));

  /* a stack whose pixels are not the system's: resampled, and the warning shown */
  beads = airy_stack_copy (airy_stack_view_get_stack (airy_stack_viewer_get_view (b.viewer)));
  beads->dx = beads->dy = 0.1002;
  airy_stack_viewer_set_resident (b.viewer, airy_resident_new_host (beads));
  dialog = fit_at (&b, 0, 25, 24, 6);
  g_assert_nonnull (airy_fit_dialog_get_result (dialog));
  status = airy_fit_dialog_get_status (dialog);
  g_assert_nonnull (strstr (status, "Warning: the bead stack's voxels (0.1002 × 0.1002 × 0.363636 µm) are not the "
                                    "system's (0.1 × 0.1 × 0.363636 µm): resampled to 48 × 48 × 12"));
  gtk_window_destroy (GTK_WINDOW (dialog));

  /* the cursor on no bead: the fit's own error */
  dialog = fit_at (&b, 8, 4, 4, 6);
  g_assert_null (airy_fit_dialog_get_result (dialog));
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), "holds no bead"));
  gtk_window_destroy (GTK_WINDOW (dialog));

  /* a window larger than the stack */
  dialog = fit_at (&b, 64, 25, 24, 6);
  g_assert_null (airy_fit_dialog_get_result (dialog));
  g_assert_cmpstr (airy_fit_dialog_get_status (dialog), ==,
                   "crop: must be at most the stack's size (48 × 48 pixels), got 64");
  gtk_window_destroy (GTK_WINDOW (dialog));

  gtk_window_destroy (GTK_WINDOW (b.window));
}

/* The astigmatic preset's aberration (ANSI 5, 0.08 waves) in a small
 * microscope; the bench has the mask, the dialog opens, then the mask is
 * switched off in the bench: Fit models the bench as it is then (no mask:
 * the 0.08 waves are found, not RMS 0), says so, and Apply adds the
 * fitted terms, leaving the switched-off mask off and adding no zero one. */
static void
test_fit_current_system (void)
{
  g_autofree char *json = g_strdup_printf (system_json, "",
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5],"
    " \"zernike-coefficients\": [0.08]}");
  g_autoptr(AirySystem) truth = test_system (json);
  g_autoptr(AirySystem) bench = test_system (json);
  g_autoptr(AirySystem) applied = NULL;
  AiryRunOptions options = { .keep_psf = TRUE, .threads = 2 };
  g_autoptr(AiryResult) run = NULL;
  AiryFitDialog *dialog;
  const AiryFitResult *res;
  AiryBenchPanel *panel;
  GtkWidget *check;
  GPtrArray *elements;
  AiryStack *beads;
  Bench b;
  gsize n, q;
  double peak = 0, c5 = 0;
  guint i, masks = 0;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  bench_init (&b, bench);
  run = test_run (truth, &options);
  beads = airy_stack_copy (run->psf);
  n = (gsize) beads->depth * beads->height * beads->width;
  for (q = 0; q < n; q++)
    peak = MAX (peak, beads->data[q]);
  for (q = 0; q < n; q++)
    beads->data[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
  airy_stack_viewer_set_resident (b.viewer, airy_resident_new_host (beads));

  /* the dialog first, with the mask on */
  g_assert_true (gtk_widget_activate_action (b.window, "win.fit-psf", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  airy_fit_dialog_set_apply_func (dialog, on_apply, &applied);
  g_assert_cmpstr (airy_fit_dialog_get_system_text (dialog), ==,
                   "Model: the bench now (Untitled): Microscope objective, Phase mask");
  /* then the mask off, in the bench as a person does */
  panel = AIRY_BENCH_PANEL (test_find_widget (b.window, AIRY_TYPE_BENCH_PANEL, NULL));
  check = test_find_widget (airy_bench_panel_get_editor (panel, "elements[0]"), GTK_TYPE_CHECK_BUTTON, NULL);
  g_assert_nonnull (check);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), FALSE);
  g_assert_false (airy_element_get_enabled (g_ptr_array_index (airy_system_get_elements (bench), 0)));

  airy_fit_dialog_set_resident (dialog, airy_stack_view_get_resident (airy_stack_viewer_get_view (b.viewer)),
                                24, 24, 6);
  /* planes counted from 1 (z index 6 is plane 7 of 12) */
  g_assert_true (find_label_prefix (GTK_WIDGET (dialog), "Viewer stack 48 × 48 × 12, cursor x 24, y 24, plane 7 of 12",
                                    ""));
  airy_fit_dialog_start (dialog);
  wait_for (dialog);
  g_assert_cmpstr (airy_fit_dialog_get_system_text (dialog), ==,
                   "Model: the bench now (Untitled), off and not modelled: Phase mask; on: Microscope objective");
  res = airy_fit_dialog_get_result (dialog);
  g_assert_nonnull (res);
  for (i = 0; i < res->n_terms; i++)
    if (res->indices[i] == 5)
      c5 = res->coefficients[i];
  g_assert_cmpfloat (fabs (c5 - 0.08), <=, 0.01);
  g_assert_cmpfloat (res->rms_waves, >, 0.07);

  airy_fit_dialog_apply (dialog);
  g_assert_nonnull (applied);
  elements = airy_system_get_elements (applied);
  /* the switched-off mask stays off, one mask added: the fitted terms */
  g_assert_cmpuint (elements->len, ==, 2);
  g_assert_false (airy_element_get_enabled (g_ptr_array_index (elements, 0)));
  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);
      const double *c;
      gsize k, m;

      if (!airy_element_get_enabled (e))
        continue;
      masks++;
      c = airy_element_get_doubles (e, "zernike-coefficients", &m);
      g_assert_cmpuint (m, >, 0);
      for (k = 0; k < m; k++)
        g_assert_cmpfloat (fabs (c[k]), >=, 5e-5);
    }
  g_assert_cmpuint (masks, ==, 1);
  gtk_window_destroy (GTK_WINDOW (dialog));
  gtk_window_destroy (GTK_WINDOW (b.window));
}

/* The dialog's fields take their bounds and defaults from the option
 * table airy-sim fit checks (--zernike, --crop): [0, 65536], not 4096. */
static void
test_declared_fields (void)
{
  const char *const options[] = { "fit-zernike", "fit-crop" };
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GError) error = NULL;
  GtkWidget *dialog, *spin;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  system = airy_system_new_from_preset ("widefield", &error);
  g_assert_no_error (error);
  dialog = airy_fit_dialog_new (NULL, system);
  spin = test_find_widget (dialog, GTK_TYPE_SPIN_BUTTON, NULL);
  for (i = 0; i < G_N_ELEMENTS (options); i++)
    {
      GParamSpecInt *spec = G_PARAM_SPEC_INT (_airy_option_spec (options[i]));
      double lo, hi;

      g_assert_true (GTK_IS_SPIN_BUTTON (spin));
      gtk_spin_button_get_range (GTK_SPIN_BUTTON (spin), &lo, &hi);
      g_assert_cmpfloat (lo, ==, spec->minimum);
      g_assert_cmpfloat (hi, ==, spec->maximum);
      g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (spin)), ==, spec->default_value);
      /* the crop's field follows the label after the Zernike field */
      spin = gtk_widget_get_next_sibling (gtk_widget_get_next_sibling (spin));
    }
  g_assert_cmpint (G_PARAM_SPEC_INT (_airy_option_spec ("fit-crop"))->maximum, ==, 65536);
  gtk_window_destroy (GTK_WINDOW (dialog));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("AIRY_FFTW_PLANNER", "estimate", FALSE);
  have_display = gtk_init_check ();
  airy_init ();
  g_test_add_func ("/fit-dialog/fit-apply-cancel", test_dialog);
  g_test_add_func ("/fit-dialog/fit-bead-at-cursor", test_fit_bead);
  g_test_add_func ("/fit-dialog/current-system", test_fit_current_system);
  g_test_add_func ("/fit-dialog/declared-fields", test_declared_fields);
  return g_test_run ();
}
