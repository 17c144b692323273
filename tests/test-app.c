/* The desktop app as a user drives it, under Xvfb: edits through the bench
 * panel's widgets, results from the background engine. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gtk/gtk.h>
#include <glib/gstdio.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-view-math.h"

static gboolean have_display;
static GtkApplication *app;
static char *tmpdir;

static gboolean
flag_timeout (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until the window's engine is idle (nothing pending or
 * running), then a little longer for the last signals. */
static void
wait_idle (AiryWindow *window)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (60, flag_timeout, &timed_out);

  while (!timed_out && airy_worker_is_busy (airy_window_get_worker (window)))
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  if (!timed_out)
    g_source_remove (id);
  g_assert_false (timed_out);
}

static void
spin_set (AiryWindow *window, const char *path, double value)
{
  GtkWidget *w = airy_bench_panel_get_editor (airy_window_get_panel (window), path);

  g_assert_nonnull (w);
  g_assert_true (GTK_IS_SPIN_BUTTON (w));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), value);
}

/* FWHM along x through the brightest pixel of the brightest plane, in µm */
static double
shown_fwhm (AiryWindow *window)
{
  AiryStack *s = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  gsize n = airy_stack_plane_size (s), best = 0, i;
  guint z, bz = 0;
  float peak = -1;

  for (z = 0; z < s->depth; z++)
    for (i = 0; i < n; i++)
      if (airy_stack_plane (s, z)[i] > peak)
        {
          peak = airy_stack_plane (s, z)[i];
          bz = z;
          best = i;
        }
  return airy_profile_fwhm (airy_stack_plane (s, bz) + (best / s->width) * s->width, s->width, s->dx,
                            best % s->width);
}

static AiryWindow *
new_window (const char *preset)
{
  AiryWindow *window = airy_window_new (app);

  airy_worker_set_debounce (airy_window_get_worker (window), 30);
  gtk_window_present (GTK_WINDOW (window));
  if (preset)
    g_assert_true (airy_window_load_preset (window, preset, NULL));
  wait_idle (window);
  return window;
}

static void
close_window (AiryWindow *window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
test_small_window (void)
{
  /* the window goes down well below 1280 × 800 without clipping controls:
   * its minimum size is small (toolbars scroll, the panel scrolls) */
  AiryWindow *window;
  int min_w, min_h, nat;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat, NULL, NULL);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_VERTICAL, min_w, &min_h, &nat, NULL, NULL);
  g_test_message ("minimum window size %d × %d", min_w, min_h);
  g_assert_cmpint (min_w, <=, 1024);
  g_assert_cmpint (min_h, <=, 700);
  close_window (window);
}

static void
test_na_changes_fwhm (void)
{
  AiryWindow *window;
  double f08, f05;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  g_assert_cmpuint (airy_window_get_shown (window), ==, 1);
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 512² · "));
  g_assert_nonnull (strstr (airy_window_get_status (window), " ms · CPU "));
  f08 = shown_fwhm (window);
  /* the Airy disk: 0.5145 λ/NA, here sampled at 0.156 µm */
  g_assert_cmpfloat_with_epsilon (f08 / (0.5145 * 0.532 / 0.8), 1.0, 0.05);

  spin_set (window, "elements[0].na", 0.5);
  wait_idle (window);
  g_assert_cmpuint (airy_window_get_shown (window), ==, 2);
  g_assert_true (airy_window_get_dirty (window));
  f05 = shown_fwhm (window);
  /* a smaller NA widens the PSF as 1/NA */
  g_assert_cmpfloat (f05, >, f08);
  g_assert_cmpfloat_with_epsilon ((f05 / f08) / (0.8 / 0.5), 1.0, 0.05);
  close_window (window);
}

static void
test_burst (void)
{
  AiryWindow *window;
  g_autoptr(AiryResult) direct = NULL;
  AiryStack *shown;
  guint before, i;
  double worst = 0.0;
  float lo, hi;
  gsize k, n;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  before = airy_window_get_shown (window);
  /* 20 edits in a burst, as fast as a slider drags */
  for (i = 0; i < 20; i++)
    {
      spin_set (window, "elements[0].na", 0.50 + 0.01 * i);
      g_main_context_iteration (NULL, FALSE);
    }
  wait_idle (window);
  /* one result, the last edit's */
  g_assert_cmpuint (airy_window_get_shown (window), ==, before + 1);
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));
  g_assert_cmpfloat (airy_element_get_double (g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 0), "na"),
                     ==, 0.69);
  direct = airy_run (airy_window_get_system (window), NULL, NULL, NULL, NULL, NULL);
  g_assert_nonnull (direct);
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  n = (gsize) shown->depth * airy_stack_plane_size (shown);
  g_assert_cmpuint (n, ==, (gsize) direct->stack->depth * airy_stack_plane_size (direct->stack));
  airy_stack_min_max (direct->stack, &lo, &hi);
  for (k = 0; k < n; k++)
    worst = MAX (worst, fabs (shown->data[k] - direct->stack->data[k]));
  g_assert_cmpfloat (worst, <=, 1e-6 * hi);
  close_window (window);
}

static void
test_invalid_keeps_result (void)
{
  AiryWindow *window;
  AiryStack *before;
  GtkWidget *na;
  guint shown;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  before = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  shown = airy_window_get_shown (window);
  spin_set (window, "elements[0].na", 1.5);
  wait_idle (window);
  /* the engine's message at the field; the last result stays on screen */
  g_assert_cmpstr (airy_bench_panel_get_error (airy_window_get_panel (window)), ==,
                   "elements[0].na: must be in (0, n=1.33], got 1.5");
  na = airy_bench_panel_get_editor (airy_window_get_panel (window), "elements[0].na");
  g_assert_true (gtk_widget_has_css_class (na, "error"));
  g_assert_true (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window))) == before);
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown);
  /* and a valid value clears it and computes again */
  spin_set (window, "elements[0].na", 0.9);
  wait_idle (window);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_false (gtk_widget_has_css_class (na, "error"));
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 1);
  close_window (window);
}

static void
test_save_reopen_export (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "bench.json", NULL);
  g_autofree char *png = g_build_filename (tmpdir, "view.png", NULL);
  g_autofree char *tif = g_build_filename (tmpdir, "stack.tif", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *a = NULL, *b = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(AiryStack) back = NULL;
  AiryWindow *window, *again;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  spin_set (window, "elements[0].na", 0.7);
  spin_set (window, "z.count", 9);
  wait_idle (window);
  g_assert_true (airy_window_get_dirty (window));
  g_assert_true (airy_window_save (window, path, &error));
  g_assert_false (airy_window_get_dirty (window));

  again = new_window (NULL);
  g_assert_true (airy_window_open_file (again, path, &error));
  wait_idle (again);
  a = airy_system_to_json (airy_window_get_system (window));
  b = airy_system_to_json (airy_window_get_system (again));
  g_assert_cmpstr (a, ==, b);
  g_assert_nonnull (strstr (b, "\"na\" : 0.7"));

  /* exports through the viewer decode */
  g_assert_true (airy_stack_viewer_export_view (airy_window_get_viewer (again), png, 1, &error));
  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, 512);
  g_assert_true (airy_stack_viewer_export_tiff (airy_window_get_viewer (again), tif, FALSE, &error));
  back = airy_tiff_read (tif, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->depth, ==, 9);
  g_assert_cmpfloat_with_epsilon (back->dx, 100 * 0.532 / (1.33 * 512 * 0.5), 1e-6);
  close_window (window);
  close_window (again);
  g_unlink (path);
  g_unlink (png);
  g_unlink (tif);
}

static void
test_command_line (void)
{
  /* "Copy command line" reproduces the shown result with airy-sim */
  g_autofree char *dir = NULL;
  g_autofree char *cmd = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = g_build_filename (tmpdir, "airy-result.tif", NULL);
  g_autoptr(AiryStack) back = NULL;
  g_autoptr(GError) error = NULL;
  AiryStack *shown;
  AiryWindow *window;
  int status = -1;
  gsize k, n;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  spin_set (window, "z.count", 3);
  wait_idle (window);
  cmd = airy_window_command_line (window);
  g_assert_true (g_str_has_prefix (cmd, "airy-sim run /dev/stdin -o airy-result.tif --backend cpu"));
  dir = g_path_get_dirname (g_getenv ("AIRY_SIM"));
  script = g_strdup_printf ("cd '%s' && PATH='%s':\"$PATH\" %s", tmpdir, dir, cmd);
  g_assert_true (g_spawn_sync (NULL, (char *[]) { (char *) "/bin/sh", (char *) "-c", script, NULL }, NULL,
                               G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  back = airy_tiff_read (out, &error);
  g_assert_no_error (error);
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  n = (gsize) shown->depth * airy_stack_plane_size (shown);
  g_assert_cmpuint (back->depth, ==, 3);
  for (k = 0; k < n; k++)
    g_assert_cmpfloat_with_epsilon (back->data[k], shown->data[k], 1e-5);
  close_window (window);
  g_unlink (out);
}

static void
test_imaging_and_bad_sample (void)
{
  AiryWindow *window;
  GtkWidget *mode, *kind, *file;
  AiryStack *shown;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  spin_set (window, "z.count", 8);
  wait_idle (window);
  /* switch to imaging: the viewer shows one image */
  mode = airy_bench_panel_get_editor (airy_window_get_panel (window), "mode");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (mode), 1);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  wait_idle (window);
  g_assert_true (airy_system_is_microscope (airy_window_get_system (window)));
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  g_assert_cmpuint (shown->depth, ==, 1);
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));

  /* an unreadable sample file is reported at its field */
  kind = airy_bench_panel_get_editor (airy_window_get_panel (window), "sample");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (kind), 2);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  file = airy_bench_panel_get_editor (airy_window_get_panel (window), "sample.file");
  g_assert_nonnull (file);
  gtk_editable_set_text (GTK_EDITABLE (file), "/nonexistent/volume.tif");
  wait_idle (window);
  g_assert_cmpstr (airy_bench_panel_get_error (airy_window_get_panel (window)), ==,
                   "sample.file: /nonexistent/volume.tif: no such file");
  g_assert_true (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window))) == shown);
  close_window (window);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  have_display = gtk_init_check ();
  tmpdir = g_dir_make_tmp ("airy-app-XXXXXX", NULL);
  app = gtk_application_new ("io.github.airyoptics.Airy.Test", G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, NULL);

  g_test_add_func ("/app/na-changes-fwhm", test_na_changes_fwhm);
  g_test_add_func ("/app/small-window", test_small_window);
  g_test_add_func ("/app/burst-of-edits", test_burst);
  g_test_add_func ("/app/invalid-keeps-result", test_invalid_keeps_result);
  g_test_add_func ("/app/save-reopen-export", test_save_reopen_export);
  g_test_add_func ("/app/command-line", test_command_line);
  g_test_add_func ("/app/imaging-and-bad-sample", test_imaging_and_bad_sample);
  status = g_test_run ();
  g_rmdir (tmpdir);
  g_object_unref (app);
  return status;
}
