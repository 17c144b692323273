/* The desktop app as a user drives it, under Xvfb: edits through the bench
 * panel's widgets, results from the background engine. */
#include "config.h"

#include <math.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <gtk/gtk.h>
#include <glib/gstdio.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-view-math.h"
#include "airy-test-gtk.h"
#include "airy-test-app.h"
#include "airy-fit-dialog.h"
#include "airy-atomic-private.h"

static gboolean have_display;
static GtkApplication *app;
static char *tmpdir;

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
  return test_new_window (app, preset);
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
                   "elements[0].na: must be in [0.001, n=1.33], got 1.5");
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
                   "sample.file: /nonexistent/volume.tif: No such file or directory");
  g_assert_true (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window))) == shown);

  /* a sample whose image overflows float32: the run's message, the last
   * result stays */
  {
    AirySystem *system = airy_window_get_system (window);
    g_autoptr(AiryStack) huge = airy_stack_new (8, 32, 32);
    g_autofree char *path = g_build_filename (tmpdir, "huge-sample.tif", NULL);
    const double *z;
    guint nz;
    gsize i;

    z = airy_system_get_z (system, &nz);
    g_assert_cmpuint (nz, ==, 8);
    for (i = 0; i < 8 * 32 * 32; i++)
      huge->data[i] = 3e38f;
    huge->dx = huge->dy = airy_system_get_spacing (system);
    huge->z0 = z[0];
    huge->dz = (z[nz - 1] - z[0]) / (nz - 1);
    g_assert_true (airy_tiff_write (path, huge, NULL));
    gtk_editable_set_text (GTK_EDITABLE (file), path);
    wait_idle (window);
    g_assert_cmpstr (airy_bench_panel_get_error (airy_window_get_panel (window)), ==,
                     "the result has 1024 non-finite values (the first at plane 0, y 0, x 0): the sample's values "
                     "(up to 3e+38) overflow float32 (at most 3.4e+38) when imaged; scale the sample down");
    g_assert_true (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window))) == shown);
    g_unlink (path);
  }
  close_window (window);
}

/* ---- files from the file manager, and the Flatpak sandbox ---- */

static void
write_file (const char *path, const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
}

/* a small PSF system whose phase mask comes from an image file */
static char *
masked_system (const char *mask)
{
  return g_strdup_printf ("{ \"airy\": 1, \"name\": \"masked\",\n"
                          "  \"grid\": { \"shape\": [64, 64], \"spacing\": 2.0 },\n"
                          "  \"spectrum\": { \"wavelengths\": [0.532], \"weights\": [1.0] },\n"
                          "  \"z\": { \"start\": -1.0, \"stop\": 1.0, \"count\": 3 },\n"
                          "  \"elements\": [\n"
                          "    { \"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.33, \"na\": 0.8 },\n"
                          "    { \"type\": \"phase-mask\", \"source\": \"image\", \"file\": \"%s\" },\n"
                          "    { \"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.33 } ] }\n", mask);
}

static void
write_mask (const char *path)
{
  g_autoptr(AiryStack) mask = airy_stack_new (1, 8, 8);
  g_autoptr(GError) error = NULL;
  guint i;

  for (i = 0; i < 64; i++)
    mask->data[i] = (float) (i % 8);
  g_assert_true (airy_tiff_write (path, mask, &error));
  g_assert_no_error (error);
}

static gboolean
bench_shown (AiryWindow *window)
{
  return gtk_widget_is_visible (GTK_WIDGET (airy_window_get_panel (window)));
}

/* until no window reads or writes a file on its workers */
static void
wait_all_files (void)
{
  gboolean pending = TRUE;

  while (pending)
    {
      GList *l;

      pending = FALSE;
      for (l = gtk_application_get_windows (app); l; l = l->next)
        pending |= airy_window_get_pending_files (l->data) > 0;
      if (pending)
        g_main_context_iteration (NULL, TRUE);
    }
}

static void
test_open_by_content (void)
{
  /* what the file manager does: files through the application's "open"
   * signal, one window each, decided by content, not by name */
  g_autofree char *stack_path = g_build_filename (tmpdir, "stack.dat", NULL);
  g_autofree char *system_path = g_build_filename (tmpdir, "bench.txt", NULL);
  g_autofree char *notes_path = g_build_filename (tmpdir, "notes.tif", NULL);
  g_autofree char *missing_path = g_build_filename (tmpdir, "missing.airy.json", NULL);
  g_autofree char *json = masked_system ("mask.tif");
  g_autofree char *mask_path = g_build_filename (tmpdir, "mask.tif", NULL);
  g_autofree char *want_notes = NULL, *want_missing = NULL;
  g_autoptr(AiryStack) stack = airy_stack_new (3, 16, 24);
  g_autoptr(GError) error = NULL;
  GFile *files[5];
  GList *before, *l;
  AiryWindow *viewer = NULL, *bench = NULL, *notes = NULL, *missing = NULL, *remote = NULL;
  AiryStack *shown;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  for (i = 0; i < 3 * 16 * 24; i++)
    stack->data[i] = (float) i;
  stack->dx = stack->dy = 0.1;
  stack->dz = 0.25;
  g_assert_true (airy_tiff_write (stack_path, stack, &error));
  g_assert_no_error (error);
  write_mask (mask_path);
  write_file (system_path, json);
  write_file (notes_path, "These are notes, not an image.\n");
  files[0] = g_file_new_for_path (stack_path);
  files[1] = g_file_new_for_path (system_path);
  files[2] = g_file_new_for_path (notes_path);
  files[3] = g_file_new_for_path (missing_path);
  /* a URI without a local path (as GVfs may give): read through GIO */
  files[4] = g_file_new_for_uri ("resource:///io/github/airyoptics/Airy/presets/imaging.json");

  before = g_list_copy (gtk_application_get_windows (app));
  g_application_open (G_APPLICATION (app), files, 5, "");
  /* each window reads its file on a worker */
  wait_all_files ();
  for (l = gtk_application_get_windows (app); l; l = l->next)
    {
      AiryWindow *w = l->data;
      AirySystem *system = airy_window_get_system (w);

      if (g_list_find (before, w))
        continue;
      airy_worker_set_debounce (airy_window_get_worker (w), 30);
      if (airy_window_get_notice (w, NULL) && strstr (airy_window_get_notice (w, NULL), "notes.tif"))
        notes = w;
      else if (airy_window_get_notice (w, NULL))
        missing = w;
      else if (system && g_strcmp0 (airy_system_get_name (system), "masked") == 0)
        bench = w;
      else if (system)
        remote = w;
      else
        viewer = w;
    }
  g_list_free (before);
  g_assert_nonnull (viewer);
  g_assert_nonnull (bench);
  g_assert_nonnull (notes);
  g_assert_nonnull (missing);
  g_assert_nonnull (remote);

  /* the TIFF named .dat: the viewer alone, with the stack as written */
  g_assert_false (bench_shown (viewer));
  g_assert_null (airy_window_get_system (viewer));
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (viewer)));
  g_assert_nonnull (shown);
  g_assert_cmpuint (shown->depth, ==, 3);
  g_assert_cmpuint (shown->height, ==, 16);
  g_assert_cmpuint (shown->width, ==, 24);
  g_assert_cmpfloat (shown->data[3 * 16 * 24 - 1], ==, 3 * 16 * 24 - 1);
  g_assert_cmpstr (airy_window_get_status (viewer), ==, stack_path);
  /* nothing to save or run there */
  g_assert_false (window_action_enabled (viewer, "win.save"));
  g_assert_false (window_action_enabled (viewer, "win.copy-command"));

  /* the JSON named .txt: the bench, computing (its mask lies next to it) */
  wait_idle (bench);
  g_assert_true (bench_shown (bench));
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (bench)));
  g_assert_cmpuint (airy_window_get_shown (bench), ==, 1);
  g_assert_cmpuint (airy_window_get_shown_hash (bench), ==, airy_system_hash (airy_window_get_system (bench)));
  g_assert_true (window_action_enabled (bench, "win.save"));

  /* neither: the message stays in the window after the default bench has
   * computed, and the bench is usable */
  want_notes = g_strdup_printf ("%s: neither a TIFF or PNG image nor an Airy system (JSON)", notes_path);
  want_missing = g_strdup_printf ("%s: no such file", missing_path);
  wait_idle (notes);
  wait_idle (missing);
  g_assert_cmpstr (airy_window_get_notice (notes, NULL), ==, want_notes);
  g_assert_cmpstr (airy_window_get_notice (missing, NULL), ==, want_missing);
  g_assert_true (bench_shown (notes));
  g_assert_cmpuint (airy_window_get_shown (notes), ==, 1);
  g_assert_cmpstr (airy_system_get_name (airy_window_get_system (notes)), ==, "widefield");

  /* the system from a URI: in the bench, with no file to save back to */
  wait_idle (remote);
  g_assert_true (bench_shown (remote));
  g_assert_cmpstr (airy_system_get_name (airy_window_get_system (remote)), ==, "imaging");
  g_assert_true (airy_system_is_microscope (airy_window_get_system (remote)));
  g_assert_cmpuint (airy_window_get_shown (remote), ==, 1);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (remote)), ==, "imaging — Airy");

  /* a FIFO is refused at once (reading it blocked the window for good;
   * the alarm fails the test instead) */
  {
    g_autofree char *fifo = g_build_filename (tmpdir, "fifo.tif", NULL);
    g_autofree char *want = g_strdup_printf ("%s: is a FIFO (named pipe), not a regular file", fifo);
    g_autoptr(GFile) f = g_file_new_for_path (fifo);

    g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
    alarm (10);
    g_assert_false (airy_window_open_location (viewer, f, &error));
    alarm (0);
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
    g_assert_cmpstr (error->message, ==, want);
    g_clear_error (&error);
    g_unlink (fifo);
  }

  /* opening a system in the viewer window brings the bench back */
  g_assert_true (airy_window_open_file (viewer, system_path, &error));
  g_assert_no_error (error);
  g_assert_true (bench_shown (viewer));
  g_assert_true (window_action_enabled (viewer, "win.save"));

  close_window (viewer);
  close_window (bench);
  close_window (notes);
  close_window (missing);
  close_window (remote);
  for (i = 0; i < 5; i++)
    g_object_unref (files[i]);
  g_unlink (stack_path);
  g_unlink (system_path);
  g_unlink (notes_path);
  g_unlink (mask_path);
}

static void
test_sandbox_folder (void)
{
  /* a system chosen through the portal comes without its sibling files: the
   * window says so and reloads it with the folder the user then chooses */
  g_autofree char *sys_dir = g_build_filename (tmpdir, "portal-doc", NULL);
  g_autofree char *data_dir = g_build_filename (tmpdir, "lab-data", NULL);
  g_autofree char *empty_dir = g_build_filename (tmpdir, "empty", NULL);
  g_autofree char *path = g_build_filename (sys_dir, "masked.airy.json", NULL);
  g_autofree char *abs_path = g_build_filename (sys_dir, "absolute.airy.json", NULL);
  g_autofree char *mask = g_build_filename (data_dir, "mask.tif", NULL);
  g_autofree char *json = masked_system ("mask.tif");
  g_autofree char *abs_json = masked_system ("/nonexistent/lab/mask.tif");
  g_autofree char *cmd = NULL, *saved = NULL;
  g_autoptr(GError) error = NULL;
  AiryWindow *window;
  AirySystem *before;
  gboolean offers = FALSE;
  const char *notice;
  guint shown;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (sys_dir, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (data_dir, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (empty_dir, 0700), ==, 0);
  write_file (path, json);
  write_file (abs_path, abs_json);
  write_mask (mask);

  /* outside a sandbox a missing file is the field's error, nothing more */
  window = new_window (NULL);
  g_assert_true (airy_window_open_file (window, path, &error));
  wait_idle (window);
  g_assert_true (g_str_has_prefix (airy_bench_panel_get_error (airy_window_get_panel (window)), "elements[1].file: "));
  g_assert_null (airy_window_get_notice (window, NULL));
  close_window (window);

  g_setenv ("AIRY_TEST_FLATPAK", "1", TRUE);
  window = new_window (NULL);
  g_assert_true (airy_window_open_file (window, path, &error));
  wait_idle (window);
  shown = airy_window_get_shown (window);
  notice = airy_window_get_notice (window, &offers);
  g_assert_cmpstr (notice, ==, "Airy cannot read elements[1].file: mask.tif. Inside the Flatpak sandbox it sees "
                               "only the files you choose; choose the folder that contains them to give it access.");
  g_assert_true (offers);

  /* a folder without the file changes nothing */
  before = airy_window_get_system (window);
  g_assert_false (airy_window_grant_folder (window, empty_dir, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_nonnull (strstr (error->message, "holds none of the files Airy is missing (elements[1].file: mask.tif)"));
  g_clear_error (&error);
  g_assert_true (airy_window_get_system (window) == before);

  /* the folder that holds it: the system computes, its file names unchanged */
  g_assert_true (airy_window_grant_folder (window, data_dir, &error));
  g_assert_no_error (error);
  wait_idle (window);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_null (airy_window_get_notice (window, NULL));
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 1);
  g_assert_cmpstr (airy_system_get_base_dir (airy_window_get_system (window)), ==, data_dir);
  g_assert_cmpstr (airy_element_get_string (g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 1),
                                            "file"), ==, "mask.tif");
  g_assert_false (airy_window_get_dirty (window));

  /* the command line runs the Flatpak's airy-sim, with the file found */
  cmd = airy_window_command_line (window);
  g_assert_true (g_str_has_prefix (cmd, "flatpak run --command=airy-sim --filesystem=\"$PWD\" io.github.airyoptics.Airy "
                                        "run /dev/stdin -o airy-result.tif --backend cpu"));
  saved = g_strdup_printf ("\"file\" : \"%s\"", mask);
  g_assert_nonnull (strstr (cmd, saved));
  close_window (window);

  /* an absolute name that does not exist here: looked up in the folder by
   * name, which changes the system */
  window = new_window (NULL);
  g_assert_true (airy_window_open_file (window, abs_path, &error));
  wait_idle (window);
  g_assert_nonnull (strstr (airy_window_get_notice (window, NULL), "elements[1].file: /nonexistent/lab/mask.tif"));
  g_assert_true (airy_window_grant_folder (window, data_dir, &error));
  wait_idle (window);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_cmpstr (airy_element_get_string (g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 1),
                                            "file"), ==, mask);
  g_assert_true (airy_window_get_dirty (window));
  close_window (window);
  g_unsetenv ("AIRY_TEST_FLATPAK");

  g_unlink (path);
  g_unlink (abs_path);
  g_unlink (mask);
  g_rmdir (sys_dir);
  g_rmdir (data_dir);
  g_rmdir (empty_dir);
}

static void
test_command_line_files (void)
{
  /* an edited system travels in a here-document: its relative file names
   * must still reach the files next to the system */
  g_autofree char *dir = g_build_filename (tmpdir, "with-mask", NULL);
  g_autofree char *path = g_build_filename (dir, "masked.airy.json", NULL);
  g_autofree char *mask = g_build_filename (dir, "mask.tif", NULL);
  g_autofree char *json = masked_system ("mask.tif");
  g_autofree char *out = g_build_filename (tmpdir, "airy-result.tif", NULL);
  g_autofree char *cmd = NULL, *script = NULL, *bin = NULL, *quoted = NULL;
  g_autoptr(AiryStack) back = NULL;
  g_autoptr(GError) error = NULL;
  AiryStack *shown;
  AiryWindow *window;
  int status = -1;
  float lo, hi;
  gsize k, n;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  write_file (path, json);
  write_mask (mask);
  window = new_window (NULL);
  g_assert_true (airy_window_open_file (window, path, &error));
  wait_idle (window);
  /* saved: the file itself */
  cmd = airy_window_command_line (window);
  quoted = g_shell_quote (path);
  g_assert_true (g_str_has_prefix (cmd, "airy-sim run "));
  g_assert_nonnull (strstr (cmd, quoted));
  g_clear_pointer (&cmd, g_free);

  spin_set (window, "z.count", 2);
  wait_idle (window);
  g_assert_true (airy_window_get_dirty (window));
  cmd = airy_window_command_line (window);
  g_assert_true (g_str_has_prefix (cmd, "airy-sim run /dev/stdin -o airy-result.tif"));
  bin = g_path_get_dirname (g_getenv ("AIRY_SIM"));
  script = g_strdup_printf ("cd '%s' && PATH='%s':\"$PATH\" %s", tmpdir, bin, cmd);
  g_assert_true (g_spawn_sync (NULL, (char *[]) { (char *) "/bin/sh", (char *) "-c", script, NULL }, NULL,
                               G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  back = airy_tiff_read (out, &error);
  g_assert_no_error (error);
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  n = (gsize) shown->depth * airy_stack_plane_size (shown);
  g_assert_cmpuint (back->depth, ==, 2);
  airy_stack_min_max (shown, &lo, &hi);
  g_assert_cmpfloat (hi, >, 0);
  for (k = 0; k < n; k++)
    g_assert_cmpfloat_with_epsilon (back->data[k], shown->data[k], 1e-5 * hi);
  close_window (window);
  g_unlink (out);
  g_unlink (path);
  g_unlink (mask);
  g_rmdir (dir);
}

static void
record_fraction (GObject *worker, GParamSpec *pspec, GArray *values)
{
  double fraction;

  g_object_get (worker, "fraction", &fraction, NULL);
  g_array_append_val (values, fraction);
}

static void
test_worker_progress (void)
{
  /* the worker says when it is busy and how far the newest run is, once
   * per change; the header's progress (its box: Cancel, bar, times) follows */
  g_autoptr(GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GArray) fractions = g_array_new (FALSE, FALSE, sizeof (double));
  AiryWindow *window;
  AiryWorker *worker;
  GtkWidget *bar;
  gboolean busy;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  worker = airy_window_get_worker (window);
  bar = test_find_widget (gtk_window_get_titlebar (GTK_WINDOW (window)), GTK_TYPE_PROGRESS_BAR, NULL);
  g_assert_nonnull (bar);
  g_assert_false (gtk_widget_get_visible (gtk_widget_get_parent (bar)));
  g_signal_connect (worker, "notify", G_CALLBACK (test_count_notify), counts);
  g_signal_connect (worker, "notify::fraction", G_CALLBACK (record_fraction), fractions);

  /* busy from the edit on, the debounce included */
  spin_set (window, "elements[0].na", 0.6);
  g_object_get (worker, "busy", &busy, NULL);
  g_assert_true (busy);
  g_assert_cmpuint (test_notified (counts, "busy"), ==, 1);
  g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (bar)));
  wait_idle (window);
  g_assert_false (airy_worker_is_busy (worker));
  g_assert_cmpuint (test_notified (counts, "busy"), ==, 2);
  g_assert_false (gtk_widget_get_visible (gtk_widget_get_parent (bar)));
  /* from 0 at the start, rising, within [0, 1]; the bar shows the last */
  g_assert_cmpuint (fractions->len, >=, 2);
  g_assert_cmpfloat (g_array_index (fractions, double, 0), ==, 0.0);
  for (i = 1; i < fractions->len; i++)
    g_assert_cmpfloat (g_array_index (fractions, double, i), >, g_array_index (fractions, double, i - 1));
  g_assert_cmpfloat (g_array_index (fractions, double, fractions->len - 1), <=, 1.0);
  g_assert_cmpfloat (gtk_progress_bar_get_fraction (GTK_PROGRESS_BAR (bar)), ==, airy_worker_get_fraction (worker));

  /* an edit that does not validate starts nothing: never busy */
  spin_set (window, "elements[0].na", 1.5);
  wait_idle (window);
  g_assert_cmpuint (test_notified (counts, "busy"), ==, 2);
  g_assert_false (gtk_widget_get_visible (gtk_widget_get_parent (bar)));
  g_signal_handlers_disconnect_by_data (worker, counts);
  g_signal_handlers_disconnect_by_data (worker, fractions);
  close_window (window);
}

static void
keep_result (AiryWorker *worker, AiryResult *result, guint64 hash, AiryResult **kept)
{
  g_clear_pointer (kept, airy_result_free);
  *kept = g_boxed_copy (AIRY_TYPE_RESULT, result);
}

static void
test_worker_signals (void)
{
  /* ::finished carries a boxed AiryResult (a copy is a reference: it
   * outlives the emission), ::failed a GError */
  AiryWindow *window;
  AiryResult *kept = NULL;
  GSignalQuery q;

  g_signal_query (g_signal_lookup ("finished", AIRY_TYPE_WORKER), &q);
  g_assert_cmpuint (q.n_params, ==, 2);
  g_assert_true ((q.param_types[0] & ~G_SIGNAL_TYPE_STATIC_SCOPE) == AIRY_TYPE_RESULT);
  g_assert_true ((q.param_types[1] & ~G_SIGNAL_TYPE_STATIC_SCOPE) == G_TYPE_UINT64);
  g_signal_query (g_signal_lookup ("failed", AIRY_TYPE_WORKER), &q);
  g_assert_cmpuint (q.n_params, ==, 1);
  g_assert_true ((q.param_types[0] & ~G_SIGNAL_TYPE_STATIC_SCOPE) == G_TYPE_ERROR);
  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window (NULL);
  g_signal_connect (airy_window_get_worker (window), "finished", G_CALLBACK (keep_result), &kept);
  g_assert_true (airy_window_load_preset (window, "widefield", NULL));
  wait_idle (window);
  g_assert_nonnull (kept);
  g_assert_true (g_boxed_copy (AIRY_TYPE_RESULT, kept) == kept);
  airy_result_free (kept);
  g_assert_cmpuint (kept->hash, ==, airy_window_get_shown_hash (window));
  g_assert_cmpstr (kept->backend, ==, "cpu");
  g_assert_cmpuint (airy_resident_get_stack (kept->resident)->depth, ==, 64);
  /* the viewer holds the same resident */
  g_assert_true (airy_stack_view_get_resident (airy_stack_viewer_get_view (airy_window_get_viewer (window)))
                 == kept->resident);
  g_signal_handlers_disconnect_by_data (airy_window_get_worker (window), &kept);
  airy_result_free (kept);
  close_window (window);
}

/* Edits never touch a file on the UI thread: the check there reads no
 * sample and no mask image (the worker does, and reports at the fields),
 * and the main loop keeps running while a large sample TIFF is read. */
static gboolean
count_tick (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static void
test_edits_touch_no_file (void)
{
  g_autofree char *volume = g_build_filename (tmpdir, "large-sample.tif", NULL);
  g_autofree char *system_path = g_build_filename (tmpdir, "large-sample.airy.json", NULL);
  g_autofree char *json = NULL;
  g_autoptr(AiryStack) v = airy_stack_new (48, 512, 512);
  g_autoptr(GError) error = NULL;
  AiryWindow *window;
  guint ticks = 0, tick_id, edit;
  gsize i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  /* 48 planes of 512² (48 MiB), the system's 0.1 µm pixels and z steps */
  for (i = 0; i < 48 * 512 * 512; i += 997)
    v->data[i] = 1.0f;
  v->dx = v->dy = 0.1;
  v->dz = 2.0 / 47;
  v->z0 = -1.0;
  g_assert_true (airy_tiff_write (volume, v, &error));
  json = g_strdup_printf ("{\"airy\": 1, \"grid\": {\"shape\": [512, 512], \"spacing\": 0.1},"
                          " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -1, \"stop\": 1, \"count\": 48},"
                          " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
                          " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"%s\"}}", volume);
  write_file (system_path, json);
  window = airy_window_new (app);
  airy_worker_set_debounce (airy_window_get_worker (window), 30);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (airy_window_open_file (window, system_path, &error));
  wait_idle (window);
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));

  /* from here the main thread may not open a file: a critical (fatal in
   * tests) if it does */
  _airy_file_io_forbid_thread (g_thread_self ());
  tick_id = g_timeout_add (5, count_tick, &ticks);
  for (edit = 0; edit < 3; edit++)
    {
      spin_set (window, "microscope.na", 0.7 + 0.05 * edit);
      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
  wait_idle (window);
  g_source_remove (tick_id);
  _airy_file_io_forbid_thread (NULL);
  /* the result of the last edit, computed from the file by the worker,
   * while the main loop went on dispatching */
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));
  g_assert_cmpfloat_with_epsilon (airy_element_get_double (airy_system_get_objective (airy_window_get_system (window)), "na"),
                                  0.8, 1e-12);
  g_test_message ("main loop ticks while the worker read and ran: %u", ticks);
  g_assert_cmpuint (ticks, >=, 3);

  /* a sample that cannot be read is reported at its field, by the run */
  _airy_file_io_forbid_thread (g_thread_self ());
  g_unlink (volume);
  spin_set (window, "microscope.na", 0.75);
  wait_idle (window);
  _airy_file_io_forbid_thread (NULL);
  g_assert_nonnull (strstr (airy_bench_panel_get_error (airy_window_get_panel (window)), "sample.file: "));
  g_assert_nonnull (strstr (airy_bench_panel_get_error (airy_window_get_panel (window)), "No such file or directory"));
  close_window (window);
  g_unlink (system_path);
}

/* ---- big runs: progress, cancel, memory ---- */

/* until the worker has done some planes of a run started after `before`
 * runs */
static void
wait_planes (AiryWindow *window, guint before)
{
  AiryWorker *worker = airy_window_get_worker (window);
  guint done = 0, tries;

  for (tries = 0; tries < 3000 && (done == 0 || airy_worker_get_started (worker) <= before); tries++)
    {
      spin_loop (10);
      airy_worker_get_progress (worker, &done, NULL, NULL);
    }
  g_assert_cmpuint (airy_worker_get_started (worker), >, before);
  g_assert_cmpuint (done, >, 0);
  spin_loop (30);
}

static GtkWidget *
cancel_button (AiryWindow *window)
{
  GtkWidget *titlebar = gtk_window_get_titlebar (GTK_WINDOW (window));
  GtkWidget *bar = test_find_widget (titlebar, GTK_TYPE_PROGRESS_BAR, NULL);
  GtkWidget *w;

  g_assert_nonnull (bar);
  for (w = gtk_widget_get_first_child (gtk_widget_get_parent (bar)); w; w = gtk_widget_get_next_sibling (w))
    if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (w)), "win.cancel") == 0)
      return w;
  g_assert_not_reached ();
}

static const char *
escape_action (AiryWindow *window)
{
  return shortcut_action (window, GDK_KEY_Escape, 0);
}

static void
test_cancel_run (void)
{
  AiryWindow *window;
  AiryStack *before;
  GtkWidget *bar;
  guint shown, done, total, round;
  g_autofree char *want = NULL;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  before = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  shown = airy_window_get_shown (window);
  bar = test_find_widget (gtk_window_get_titlebar (GTK_WINDOW (window)), GTK_TYPE_PROGRESS_BAR, NULL);
  g_assert_cmpstr (escape_action (window), ==, "win.cancel");
  g_assert_false (window_action_enabled (window, "win.cancel"));
  g_assert_false (gtk_widget_get_visible (gtk_widget_get_parent (bar)));

  for (round = 0; round < 2; round++)
    {
      /* a big run: 768² × 400 planes (an edit on its own starts at once) */
      guint started = airy_worker_get_started (airy_window_get_worker (window));
      spin_set (window, "grid.shape[0]", 768);
      spin_set (window, "grid.shape[1]", 768);
      spin_set (window, "z.count", 400 + round);
      wait_planes (window, started);
      /* what the header says while it runs */
      airy_worker_get_progress (airy_window_get_worker (window), &done, &total, NULL);
      g_assert_cmpuint (total, ==, 400 + round);
      g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (bar)));
      g_assert_true (window_action_enabled (window, "win.cancel"));
      g_assert_true (g_str_has_suffix (gtk_progress_bar_get_text (GTK_PROGRESS_BAR (bar)),
                                       round == 0 ? " / 400 planes" : " / 401 planes"));
      g_assert_cmpfloat (gtk_progress_bar_get_fraction (GTK_PROGRESS_BAR (bar)), >, 0.0);
      {
        GtkWidget *times = gtk_widget_get_next_sibling (bar);
        const char *text = gtk_label_get_text (GTK_LABEL (times));

        g_test_message ("progress: %s, %s", gtk_progress_bar_get_text (GTK_PROGRESS_BAR (bar)), text);
        g_assert_true (g_regex_match_simple ("^[0-9]+:[0-9][0-9], [0-9]+:[0-9][0-9] left$", text, 0, 0));
      }
      /* Escape, then the button */
      if (round == 0)
        g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), escape_action (window), NULL));
      else
        g_signal_emit_by_name (cancel_button (window), "clicked");
      wait_idle (window);
      /* the run ended, nothing new shown: the old result stays */
      g_assert_false (airy_worker_is_busy (airy_window_get_worker (window)));
      g_assert_cmpuint (airy_window_get_shown (window), ==, shown);
      g_assert_true (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window))) == before);
      g_assert_cmpstr (airy_window_get_status (window), ==, "cancelled: the view shows the last result");
      g_assert_false (gtk_widget_get_visible (gtk_widget_get_parent (bar)));
      g_assert_false (window_action_enabled (window, "win.cancel"));
    }
  /* an edit runs again */
  spin_set (window, "grid.shape[0]", 128);
  spin_set (window, "grid.shape[1]", 128);
  spin_set (window, "z.count", 8);
  wait_idle (window);
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 1);
  want = g_strdup ("8 planes 128² · ");
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), want));
  close_window (window);
}

static guint64
rss_bytes (void)
{
  g_autofree char *statm = NULL;
  g_auto(GStrv) f = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL));
  f = g_strsplit (statm, " ", -1);
  return g_ascii_strtoull (f[1], NULL, 10) * (guint64) sysconf (_SC_PAGESIZE);
}

static void
test_big_runs_memory (void)
{
  /* three runs of 1024² × ~96 planes (~384 MiB each) under a budget of
   * 1200 MiB: two stacks would take more than half of it */
  AiryWindow *window;
  guint64 base, stack_bytes, rss;
  AiryStack *shown;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_setenv ("AIRY_MEMORY_BUDGET", "1200M", TRUE);
  window = new_window ("widefield");
  spin_set (window, "z.count", 2);
  wait_idle (window);
  base = rss_bytes ();
  for (i = 0; i < 3; i++)
    {
      stack_bytes = (guint64) 1024 * 1024 * (96 + i) * 4;
      spin_set (window, "grid.shape[0]", 1024);
      spin_set (window, "grid.shape[1]", 1024);
      spin_set (window, "z.count", 96 + i);
      /* the shown stack gave way to one plane of it before the run */
      shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
      if (i > 0)
        g_assert_cmpuint (shown->depth, ==, 1);
      wait_idle (window);
      shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
      g_assert_cmpuint (shown->depth, ==, 96 + i);
      rss = rss_bytes ();
      g_test_message ("after run %u: RSS %.0f MiB = base %.0f MiB + %.2f stacks", i + 1, rss / 1048576.0,
                      base / 1048576.0, ((double) rss - base) / stack_bytes);
      /* one stack above the base (and the engine's plans and work areas
       * for the new grid: an eighth of a stack), not two */
      g_assert_cmpuint (rss, <=, base + stack_bytes + (stack_bytes >> 3));
    }
  close_window (window);
  g_unsetenv ("AIRY_MEMORY_BUDGET");
}

/* a 64² PSF system of two wavelengths (µm) with their weights, at path */
static void
write_two_wavelengths (const char *path, const char *wavelengths, const char *weights)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [%s], \"weights\": [%s]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.6},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}", wavelengths, weights);

  g_assert_true (g_file_set_contents (path, json, -1, NULL));
}

/* ---- presets and translations ---- */

static void
test_astigmatic_preset (void)
{
  /* the README's screenshot, reproducible: 96 planes of 256², a peak of
   * 5.4853 and a lateral FWHM of 0.359 µm as the picture shows */
  g_auto(GStrv) names = airy_presets_list ();
  AiryWindow *window;
  AiryStack *s;
  float lo, hi;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_true (g_strv_contains ((const char *const *) names, "astigmatic"));
  window = new_window ("astigmatic");
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "96 planes 256² · "));
  s = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  airy_stack_min_max (s, &lo, &hi);
  g_assert_cmpfloat_with_epsilon (hi, 5.4853, 1e-3);
  g_assert_cmpfloat_with_epsilon (shown_fwhm (window), 0.3593, 0.005);
  close_window (window);
}

static GtkWidget *
find_check_labelled (GtkWidget *root, const char *label)
{
  GtkWidget *child, *found;

  if (GTK_IS_CHECK_BUTTON (root) && g_strcmp0 (gtk_check_button_get_label (GTK_CHECK_BUTTON (root)), label) == 0)
    return root;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = find_check_labelled (child, label)) != NULL)
      return found;
  return NULL;
}

static double
stack_sum (const AiryStack *s)
{
  gsize n = (gsize) s->depth * airy_stack_plane_size (s), k;
  double sum = 0;

  for (k = 0; k < n; k++)
    sum += s->data[k];
  return sum;
}

static void
test_wavelength_channels (void)
{
  /* two wavelengths: the panel's Channels (spectrum.channels) makes the
   * result two stacks, shown with the channel chooser and as a composite;
   * each channel is its wavelength's weighted intensity, the two add up
   * to the summed stack shown before */
  g_autofree char *dir = g_dir_make_tmp ("airy-channels-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "two.json", NULL);
  AiryWindow *window;
  AiryStackViewer *viewer;
  AiryStackView *view;
  GtkWidget *check, *composite;
  g_autoptr(GError) error = NULL;
  guint n_c, n_t, c, t, shown;
  double summed, first, second;
  AiryStack *s;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  write_two_wavelengths (path, "0.5, 0.6", "1, 3");
  window = new_window (NULL);
  viewer = airy_window_get_viewer (window);
  view = airy_stack_viewer_get_view (viewer);
  g_assert_true (airy_window_open_file (window, path, &error));
  g_assert_no_error (error);
  wait_idle (window);
  airy_stack_viewer_get_hyperstack (viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 0);
  s = airy_stack_view_get_stack (view);
  g_assert_nonnull (s);
  summed = stack_sum (s);

  check = airy_bench_panel_get_editor (airy_window_get_panel (window), "spectrum.channels");
  g_assert_nonnull (check);
  g_assert_true (GTK_IS_CHECK_BUTTON (check));
  shown = airy_window_get_shown (window);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), TRUE);
  for (c = 0; c < 500 && airy_window_get_shown (window) == shown; c++)
    spin_loop (20);
  wait_idle (window);
  g_assert_true (airy_system_get_channels (airy_window_get_system (window)));
  g_assert_cmpuint (airy_window_get_shown (window), >, shown);
  airy_stack_viewer_get_hyperstack (viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 2);
  g_assert_cmpuint (c, ==, 0);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpuint (s->n_channels, ==, 2);
  g_assert_cmpuint (s->n_wavelengths, ==, 1);
  g_assert_cmpfloat (s->wavelengths[0], ==, 0.5);
  first = stack_sum (s);
  airy_stack_viewer_set_hyperstack_plane (viewer, 1, 0);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpfloat (s->wavelengths[0], ==, 0.6);
  second = stack_sum (s);
  g_test_message ("summed %.6g, channels %.6g + %.6g", summed, first, second);
  g_assert_cmpfloat (fabs (first + second - summed), <=, 1e-5 * summed);
  g_assert_cmpfloat (second, >, 2.0 * first);

  composite = find_check_labelled (GTK_WIDGET (viewer), "Composite");
  g_assert_nonnull (composite);
  g_assert_true (gtk_widget_get_visible (composite));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (composite), TRUE);
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 2);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (composite), FALSE);
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 0);

  /* off again: one summed stack, no chooser */
  shown = airy_window_get_shown (window);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), FALSE);
  for (c = 0; c < 500 && airy_window_get_shown (window) == shown; c++)
    spin_loop (20);
  wait_idle (window);
  airy_stack_viewer_get_hyperstack (viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 0);
  close_window (window);
  g_unlink (path);
  g_rmdir (dir);
}

/* The spin button after the label text (a toolbar's "Channel" chooser). */
static GtkWidget *
find_spin_after_label (GtkWidget *root, const char *label)
{
  GtkWidget *child, *found;

  if (GTK_IS_LABEL (root) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (root)), label) == 0
      && GTK_IS_SPIN_BUTTON (gtk_widget_get_next_sibling (root)))
    return gtk_widget_get_next_sibling (root);
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = find_spin_after_label (child, label)) != NULL)
      return found;
  return NULL;
}

static void
test_wavelength_channel_names (void)
{
  /* 0.532 and 0.64 µm kept as channels: the chooser names each channel's
   * wavelength, and the composite's tooltip which colour shows which (by
   * wavelength: the shorter green, the longer red); a
   * typed number still picks the channel. The same stacks as a hyperstack
   * file carry their wavelengths: the same names for the file opened. */
  g_autofree char *dir = g_dir_make_tmp ("airy-channel-names-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "two.json", NULL);
  g_autofree char *tif = g_build_filename (dir, "two.tif", NULL);
  AiryWindow *window;
  AiryStackViewer *viewer;
  AiryStackView *view;
  GtkWidget *check, *spin, *composite;
  g_autoptr(GError) error = NULL;
  const char *tip;
  guint n_c, n_t, c, t, shown;
  AiryStack *stacks[2];

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  write_two_wavelengths (path, "0.532, 0.64", "1, 1");
  window = new_window (NULL);
  viewer = airy_window_get_viewer (window);
  view = airy_stack_viewer_get_view (viewer);
  g_assert_true (airy_window_open_file (window, path, &error));
  g_assert_no_error (error);
  wait_idle (window);
  check = airy_bench_panel_get_editor (airy_window_get_panel (window), "spectrum.channels");
  shown = airy_window_get_shown (window);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), TRUE);
  for (c = 0; c < 500 && airy_window_get_shown (window) == shown; c++)
    spin_loop (20);
  wait_idle (window);
  airy_stack_viewer_get_hyperstack (viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 2);

  spin = find_spin_after_label (GTK_WIDGET (viewer), "Channel");
  g_assert_nonnull (spin);
  g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (spin)));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "1 \xc2\xb7 532 nm");
  composite = find_check_labelled (GTK_WIDGET (viewer), "Composite");
  tip = gtk_widget_get_tooltip_text (composite);
  g_assert_cmpstr (tip, ==, "All channels over each other: green: 1 \xc2\xb7 532 nm, red: 2 \xc2\xb7 640 nm");
  airy_stack_viewer_set_hyperstack_plane (viewer, 1, 0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "2 \xc2\xb7 640 nm");
  g_assert_cmpfloat (airy_stack_view_get_stack (view)->wavelengths[0], ==, 0.64);
  /* typed: the number before the wavelength picks the channel */
  gtk_editable_set_text (GTK_EDITABLE (spin), "1");
  gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
  g_assert_cmpint (gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (spin)), ==, 1);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "1 \xc2\xb7 532 nm");
  g_assert_cmpfloat (airy_stack_view_get_stack (view)->wavelengths[0], ==, 0.532);

  /* the channels as a hyperstack file, opened in the viewer */
  for (c = 0; c < 2; c++)
    {
      airy_stack_viewer_set_hyperstack_plane (viewer, c, 0);
      stacks[c] = airy_stack_copy (airy_stack_view_get_stack (view));
      stacks[c]->n_channels = 0;
    }
  g_assert_true (airy_tiff_write_channels (tif, stacks, 2, NULL, &error));
  g_assert_no_error (error);
  airy_stack_free (stacks[0]);
  airy_stack_free (stacks[1]);
  g_assert_true (airy_stack_viewer_open (viewer, tif, &error));
  g_assert_no_error (error);
  airy_stack_viewer_get_hyperstack (viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 2);
  g_assert_cmpuint (airy_stack_view_get_stack (view)->n_wavelengths, ==, 2);
  g_assert_cmpfloat (airy_stack_view_get_stack (view)->wavelengths[1], ==, 0.64);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "1 \xc2\xb7 532 nm");
  tip = gtk_widget_get_tooltip_text (composite);
  g_assert_cmpstr (tip, ==, "All channels over each other: green: 1 \xc2\xb7 532 nm, red: 2 \xc2\xb7 640 nm");
  airy_stack_viewer_set_hyperstack_plane (viewer, 1, 0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "2 \xc2\xb7 640 nm");
  close_window (window);
  g_unlink (tif);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_german_without_variables (void)
{
  /* what ./dev.sh run does with LANGUAGE=de: the program from the build
   * folder, no AIRY_LOCALEDIR, no LANG, finds the build's German */
  g_autofree char *dir = g_path_get_dirname (g_getenv ("AIRY_SIM"));
  g_autofree char *airy = g_build_filename (dir, "airy", NULL);
  const char *argv[] = { airy, "--help", NULL };
  g_auto(GStrv) env = g_get_environ ();
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  env = g_environ_unsetenv (env, "AIRY_LOCALEDIR");
  env = g_environ_unsetenv (env, "LANG");
  env = g_environ_unsetenv (env, "LC_ALL");
  env = g_environ_unsetenv (env, "LC_MESSAGES");
  env = g_environ_setenv (env, "LANGUAGE", "de", TRUE);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_test_message ("%s", out);
  /* Airy's "[FILE…]" in German, and GLib's own words too */
  g_assert_nonnull (strstr (out, "[DATEI …]"));
  g_assert_nonnull (strstr (out, "Aufruf:"));
}

int
main (int argc, char **argv)
{
  int status;

  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.Test", G_APPLICATION_HANDLES_OPEN, &have_display);
  tmpdir = g_dir_make_tmp ("airy-app-XXXXXX", NULL);
  /* the program's own "open" handler, as in airy.c */
  g_signal_connect (app, "open", G_CALLBACK (airy_window_open_files), NULL);

  g_test_add_func ("/app/na-changes-fwhm", test_na_changes_fwhm);
  g_test_add_func ("/app/small-window", test_small_window);
  g_test_add_func ("/app/burst-of-edits", test_burst);
  g_test_add_func ("/app/invalid-keeps-result", test_invalid_keeps_result);
  g_test_add_func ("/app/save-reopen-export", test_save_reopen_export);
  g_test_add_func ("/app/command-line", test_command_line);
  g_test_add_func ("/app/imaging-and-bad-sample", test_imaging_and_bad_sample);
  g_test_add_func ("/app/open-by-content", test_open_by_content);
  g_test_add_func ("/app/sandbox-folder", test_sandbox_folder);
  g_test_add_func ("/app/command-line-files", test_command_line_files);
  g_test_add_func ("/app/worker-progress", test_worker_progress);
  g_test_add_func ("/app/worker-signals", test_worker_signals);
  g_test_add_func ("/app/edits-touch-no-file", test_edits_touch_no_file);
  g_test_add_func ("/app/cancel-run", test_cancel_run);
  g_test_add_func ("/app/big-runs-memory", test_big_runs_memory);
  g_test_add_func ("/app/astigmatic-preset", test_astigmatic_preset);
  g_test_add_func ("/app/german-without-variables", test_german_without_variables);
  g_test_add_func ("/app/wavelength-channels", test_wavelength_channels);
  g_test_add_func ("/app/wavelength-channel-names", test_wavelength_channel_names);
  status = g_test_run ();
  g_rmdir (tmpdir);
  g_object_unref (app);
  return status;
}
