/* The window's files on workers (issue 27): a 48 MiB stack opened (the
 * path of --view, Open and the files the application is given) and saved
 * (Export Stack), and the system saved and opened again, while the UI
 * thread is forbidden to touch a file: the engine's guard (a critical,
 * fatal in tests) fails the test if it reads or writes one. */
#include "config.h"

#include <string.h>
#include <gtk/gtk.h>
#include <glib/gstdio.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-test-app.h"
#include "airy-atomic-private.h"

static gboolean have_display;
static GtkApplication *app;
static char *tmpdir;

static gboolean
count_tick (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

/* the main loop until the window's files are done (at most a minute) */
static void
wait_files (AiryWindow *window)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (60, flag_timeout, &timed_out);

  while (!timed_out && airy_window_get_pending_files (window) > 0)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (id);
  g_assert_false (timed_out);
}

static void
test_big_stack (void)
{
  g_autofree char *in = g_build_filename (tmpdir, "big.tif", NULL);
  g_autofree char *out = g_build_filename (tmpdir, "saved.tif", NULL);
  g_autoptr(AiryStack) stack = airy_stack_new (48, 512, 512);
  g_autoptr(AiryStack) back = NULL;
  g_autoptr(GError) error = NULL;
  AiryWindow *window;
  AiryStack *shown;
  guint ticks = 0, tick_id;
  gsize i, n = (gsize) 48 * 512 * 512;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_cmpuint (n * sizeof (float), ==, 48u << 20);
  for (i = 0; i < n; i++)
    stack->data[i] = (float) (i % 65521);
  stack->dx = stack->dy = 0.1;
  stack->dz = 0.2;
  g_assert_true (airy_tiff_write (in, stack, &error));
  g_assert_no_error (error);
  window = test_new_window (app, NULL);

  /* from here a file touched on this thread is a critical */
  _airy_file_io_forbid_thread (g_thread_self ());
  tick_id = g_timeout_add (5, count_tick, &ticks);
  airy_window_open_path_async (window, in, NULL);
  g_assert_cmpuint (airy_window_get_pending_files (window), ==, 1);
  wait_files (window);
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  g_assert_nonnull (shown);
  g_assert_cmpuint (shown->depth, ==, 48);
  g_assert_cmpuint (shown->height, ==, 512);
  g_assert_cmpuint (shown->width, ==, 512);
  g_assert_true (memcmp (shown->data, stack->data, n * sizeof (float)) == 0);
  g_assert_null (airy_window_get_system (window));
  g_assert_cmpstr (airy_window_get_status (window), ==, in);

  /* Export Stack: written on a worker */
  airy_stack_viewer_export_tiff_async (airy_window_get_viewer (window), out, FALSE);
  g_assert_cmpuint (airy_window_get_pending_files (window), ==, 1);
  wait_files (window);
  g_source_remove (tick_id);
  _airy_file_io_forbid_thread (NULL);
  /* the main loop went on dispatching while the worker read and wrote */
  g_test_message ("main loop ticks during the open and the save: %u", ticks);
  g_assert_cmpuint (ticks, >=, 2);
  back = airy_tiff_read (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->depth, ==, 48);
  g_assert_true (memcmp (back->data, stack->data, n * sizeof (float)) == 0);
  g_assert_cmpfloat_with_epsilon (back->dz, 0.2, 1e-9);

  /* a file that cannot be read: the message, the stack stays */
  _airy_file_io_forbid_thread (g_thread_self ());
  airy_window_open_path_async (window, "/nonexistent/stack.tif", NULL);
  wait_files (window);
  _airy_file_io_forbid_thread (NULL);
  g_assert_cmpstr (airy_window_get_notice (window, NULL), ==, "/nonexistent/stack.tif: no such file");
  g_assert_true (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window))) == shown);
  close_window (window);
  g_unlink (in);
  g_unlink (out);
}

static void
test_save_open_system (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "saved.airy.json", NULL);
  g_autoptr(AirySystem) back = NULL;
  g_autoptr(GError) error = NULL;
  AiryWindow *window;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  spin_set (window, "z.count", 5);
  wait_idle (window);
  g_assert_true (airy_window_get_dirty (window));

  _airy_file_io_forbid_thread (g_thread_self ());
  airy_window_save_async (window, path, FALSE);
  g_assert_cmpuint (airy_window_get_pending_files (window), ==, 1);
  /* until written: still dirty, the old file name */
  g_assert_true (airy_window_get_dirty (window));
  wait_files (window);
  g_assert_false (airy_window_get_dirty (window));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "saved.airy.json — Airy");
  _airy_file_io_forbid_thread (NULL);
  back = airy_system_new_from_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (airy_system_hash (back), ==, airy_system_hash (airy_window_get_system (window)));

  /* opened again (Open, Open Recent): read and parsed on a worker */
  spin_set (window, "z.count", 9);
  wait_idle (window);
  _airy_file_io_forbid_thread (g_thread_self ());
  airy_window_open_path_async (window, path, NULL);
  wait_files (window);
  wait_idle (window);
  _airy_file_io_forbid_thread (NULL);
  g_assert_false (airy_window_get_dirty (window));
  g_assert_cmpuint (airy_system_hash (airy_window_get_system (window)), ==, airy_system_hash (back));
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (back));

  /* a folder that does not exist: the message, the system stays and is
   * still its file's */
  _airy_file_io_forbid_thread (g_thread_self ());
  airy_window_save_async (window, "/nonexistent/dir/x.airy.json", FALSE);
  wait_files (window);
  _airy_file_io_forbid_thread (NULL);
  g_assert_nonnull (strstr (airy_stack_viewer_get_message (airy_window_get_viewer (window)), "/nonexistent/dir"));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "saved.airy.json — Airy");
  close_window (window);
  g_unlink (path);
}

/* A hyperstack (Open, --view): its first channel shown, with the chooser
 * for the others (the window's open read it whole and failed: "Airy reads
 * one z stack"); and a URI without a local path (a portal's, GVfs) read
 * and parsed on a worker too, not on the UI thread. */
static void
test_hyperstack_and_uri (void)
{
  g_autofree char *tif = g_build_filename (tmpdir, "three.tif", NULL);
  g_autoptr(GFile) uri = g_file_new_for_uri ("resource:///io/github/airyoptics/Airy/presets/widefield.json");
  g_autoptr(GError) error = NULL;
  AiryStack *channels[3];
  AiryStackViewer *viewer;
  AiryWindow *window;
  const AiryStack *shown;
  guint c, n_c, n_t, ch, t;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  for (c = 0; c < 3; c++)
    {
      channels[c] = airy_stack_new (4, 16, 16);
      for (gsize i = 0; i < 4 * 16 * 16; i++)
        channels[c]->data[i] = (float) (100 * c + i % 97);
      channels[c]->dx = channels[c]->dy = 0.1;
      channels[c]->dz = 0.2;
    }
  g_assert_true (airy_tiff_write_channels (tif, channels, 3, NULL, &error));
  g_assert_no_error (error);
  window = test_new_window (app, NULL);
  viewer = airy_window_get_viewer (window);
  _airy_file_io_forbid_thread (g_thread_self ());
  airy_window_open_path_async (window, tif, NULL);
  wait_files (window);
  _airy_file_io_forbid_thread (NULL);
  g_assert_null (airy_window_get_notice (window, NULL));
  shown = airy_stack_view_get_stack (airy_stack_viewer_get_view (viewer));
  g_assert_nonnull (shown);
  g_assert_cmpuint (shown->n_channels, ==, 3);
  g_assert_cmpuint (shown->channel, ==, 0);
  g_assert_true (memcmp (shown->data, channels[0]->data, 4 * 16 * 16 * sizeof (float)) == 0);
  airy_stack_viewer_get_hyperstack (viewer, &n_c, &n_t, &ch, &t);
  g_assert_cmpuint (n_c, ==, 3);

  /* the URI: the open is a task, the system arrives with it */
  airy_window_open_location_async (window, uri, NULL);
  g_assert_cmpuint (airy_window_get_pending_files (window), ==, 1);
  g_assert_null (airy_window_get_system (window));
  wait_files (window);
  wait_idle (window);
  g_assert_nonnull (airy_window_get_system (window));
  g_assert_cmpstr (airy_system_get_name (airy_window_get_system (window)), ==, "widefield");
  close_window (window);
  for (c = 0; c < 3; c++)
    airy_stack_free (channels[c]);
  g_unlink (tif);
}

int
main (int argc, char **argv)
{
  int status;

  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestFiles", G_APPLICATION_DEFAULT_FLAGS,
                       &have_display);
  tmpdir = g_dir_make_tmp ("airy-app-files-XXXXXX", NULL);
  g_test_add_func ("/app-files/big-stack", test_big_stack);
  g_test_add_func ("/app-files/save-open-system", test_save_open_system);
  g_test_add_func ("/app-files/hyperstack-and-uri", test_hyperstack_and_uri);
  status = g_test_run ();
  g_rmdir (tmpdir);
  g_object_unref (app);
  return status;
}
