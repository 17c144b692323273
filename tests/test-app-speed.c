/* Speed as a person feels it, and that it stays correct: a run computes
 * the plane on screen first and hands it over as a partial resident
 * (engine), the worker announces it only while its run is the newest, the
 * window shows it labelled as partial and replaces it by the full stack (or
 * brings the last full result back when the run is cancelled), the viewer
 * draws the planes not computed yet as the canvas, statistics are computed
 * once, an edit on its own starts at once, and `airy --bench-ui` measures. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-test-gtk.h"
#include "airy-test-app.h"

static gboolean have_display;
static GtkApplication *app;

/* widefield on a 64² grid (pupil radius 15 px) with 9 planes over ±2 µm */
static AirySystem *
small_system (void)
{
  AirySystem *system = airy_system_new_from_preset ("widefield", NULL);

  g_assert_nonnull (system);
  airy_system_set_shape (system, 64, 64);
  airy_system_set_spacing (system, 4.0);
  airy_system_set_z_range (system, -2.0, 2.0, 9);
  return system;
}

/* ---- the engine: the first plane, before the others ---- */

typedef struct
{
  guint         done;          /* planes reported so far */
  guint         done_at_preview;
  guint         previews;
  AiryResident *partial;
} PreviewSeen;

static void
count_planes (guint done, guint total, gpointer data)
{
  PreviewSeen *seen = data;

  g_atomic_int_set (&seen->done, done);
}

static void
keep_preview (AiryResident *partial, gpointer data)
{
  PreviewSeen *seen = data;

  seen->previews++;
  seen->done_at_preview = g_atomic_int_get (&seen->done);
  seen->partial = partial;
}

static void
test_preview_first_plane (void)
{
  g_autoptr(AirySystem) system = small_system ();
  PreviewSeen seen = { 0 };
  AiryRunOptions options = { .backend = "cpu", .threads = 2, .preview = keep_preview, .preview_data = &seen,
                             .preview_plane = 6 };
  AiryRunOptions plain = { .backend = "cpu", .threads = 2 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = airy_run (system, &options, count_planes, &seen, NULL, &error);
  g_autoptr(AiryResult) reference = airy_run (system, &plain, NULL, NULL, NULL, &error);
  g_autoptr(AiryResident) partial = NULL;
  g_autoptr(AiryStack) saved = NULL;
  g_autofree float *xy = g_new (float, 64 * 64);
  g_autofree float *xz = g_new (float, 9 * 64);
  g_autofree float *column = g_new (float, 9);
  const AiryStack *geometry;
  AirySliceStats stats = { 0 };
  float lo, hi;
  guint k, i, z;

  g_assert_no_error (error);
  g_assert_nonnull (result);
  /* once, with one plane done and the other eight not yet */
  g_assert_cmpuint (seen.previews, ==, 1);
  g_assert_cmpuint (seen.done_at_preview, ==, 1);
  partial = seen.partial;
  g_assert_true (airy_resident_is_partial (partial, &k));
  g_assert_cmpuint (k, ==, 6);
  {
    g_autoptr(AiryResident) host = airy_resident_new_host (airy_stack_new (1, 2, 2));

    g_assert_false (airy_resident_is_partial (host, NULL));
  }
  /* the whole stack's geometry: 9 planes at the system's z */
  geometry = airy_resident_get_stack (partial);
  g_assert_cmpuint (geometry->depth, ==, 9);
  g_assert_cmpuint (geometry->height, ==, 64);
  g_assert_null (geometry->data);
  g_assert_cmpfloat_with_epsilon (airy_stack_get_z (geometry, 6), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (geometry->dx, result->stack->dx, 1e-12);
  /* plane 6 is the run's plane 6, bit for bit, and the same as a run
   * without a preview */
  g_assert_true (airy_resident_read_slice (partial, &(AirySlice) { AIRY_SLICE_XY, 6 }, xy, &error));
  g_assert_cmpmem (xy, 64 * 64 * sizeof (float), airy_stack_plane (result->stack, 6), 64 * 64 * sizeof (float));
  g_assert_cmpmem (result->stack->data, 9 * 64 * 64 * sizeof (float), reference->stack->data,
                   9 * 64 * 64 * sizeof (float));
  /* the other planes are not known: NaN */
  g_assert_true (airy_resident_read_slice (partial, &(AirySlice) { AIRY_SLICE_XY, 2 }, xy, &error));
  for (i = 0; i < 64 * 64; i++)
    g_assert_true (isnan (xy[i]));
  /* a section has its row of plane 6 and NaN elsewhere */
  g_assert_true (airy_resident_read_slice (partial, &(AirySlice) { AIRY_SLICE_XZ, 32 }, xz, &error));
  for (z = 0; z < 9; z++)
    for (i = 0; i < 64; i++)
      if (z == 6)
        g_assert_cmpfloat (xz[z * 64 + i], ==, airy_stack_plane (result->stack, 6)[32 * 64 + i]);
      else
        g_assert_true (isnan (xz[z * 64 + i]));
  g_assert_true (airy_resident_read_box (partial, &(AiryBox) { 0, 32, 32, 9, 1, 1 }, column, &error));
  g_assert_cmpfloat (column[6], ==, airy_stack_plane (result->stack, 6)[32 * 64 + 32]);
  g_assert_true (isnan (column[0]) && isnan (column[8]));
  /* the stack's statistics are the known plane's */
  g_assert_true (airy_resident_stats (partial, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &stats, &error));
  airy_values_min_max (airy_stack_plane (result->stack, 6), 64 * 64, &lo, &hi);
  g_assert_cmpfloat (stats.min, ==, lo);
  g_assert_cmpfloat (stats.max, ==, hi);
  g_assert_cmpfloat (hi, >, 0.0f);
  /* and it cannot be saved as if it were the stack */
  saved = airy_resident_to_stack (partial, &error);
  g_assert_null (saved);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "the stack is still being computed: only plane 7 of 9 is known");
}

/* A run with nothing to show plane by plane (an image: the planes are
 * summed) or over several devices calls no preview and computes as before. */
static void
test_preview_not_for_images (void)
{
  g_autoptr(AirySystem) system = small_system ();
  g_autoptr(AirySystem) image = airy_system_new_from_preset ("imaging", NULL);
  PreviewSeen seen = { 0 };
  AiryRunOptions options = { .backend = "cpu", .preview = keep_preview, .preview_data = &seen, .preview_plane = 2 };
  guint devices[] = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) a = NULL;
  g_autoptr(AiryResult) b = NULL;

  airy_system_set_z_range (image, -1.0, 1.0, 4);
  a = airy_run (image, &options, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (a->stack->depth, ==, 1);
  g_assert_cmpuint (seen.previews, ==, 0);
  /* a plane beyond the stack: none either */
  options.preview_plane = 9;
  options.devices = devices;
  options.n_devices = 1;
  b = airy_run (system, &options, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (b->stack->depth, ==, 9);
  g_assert_cmpuint (seen.previews, ==, 0);
}

/* ---- statistics: computed once per slice ---- */

static guint stats_calls;

static gboolean
counting_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  stats_calls++;
  airy_values_stats (r->stack->data + (slice->kind == AIRY_SLICE_XY ? slice->index * 4 : 0),
                     slice->kind == AIRY_SLICE_XY ? 4 : 8, stats);
  return TRUE;
}

static gboolean
no_read (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  return FALSE;
}

static gboolean
no_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  return FALSE;
}

static void
test_stats_kept (void)
{
  static const AiryResidentOps ops = { .read_slice = no_read, .read_box = no_box, .stats = counting_stats };
  AiryStack *stack = airy_stack_new (2, 2, 2);
  g_autoptr(AiryResident) r = NULL;
  guint64 counts[4], again[4];
  AirySliceStats with_bins = { 0, 0, 4, counts }, plain = { 0 }, more = { 0, 0, 4, again };
  guint i;

  for (i = 0; i < 8; i++)
    stack->data[i] = (float) i;
  r = airy_resident_new (NULL, &ops, stack, NULL);
  stats_calls = 0;
  g_assert_true (airy_resident_stats (r, &(AirySlice) { AIRY_SLICE_XY, 1 }, &with_bins, NULL));
  g_assert_cmpuint (stats_calls, ==, 1);
  g_assert_cmpfloat (with_bins.min, ==, 4.0f);
  g_assert_cmpfloat (with_bins.max, ==, 7.0f);
  /* the same question, and one without bins: answered from what was kept */
  g_assert_true (airy_resident_stats (r, &(AirySlice) { AIRY_SLICE_XY, 1 }, &more, NULL));
  g_assert_true (airy_resident_stats (r, &(AirySlice) { AIRY_SLICE_XY, 1 }, &plain, NULL));
  g_assert_cmpuint (stats_calls, ==, 1);
  g_assert_cmpmem (counts, sizeof counts, again, sizeof again);
  g_assert_cmpfloat (plain.min, ==, 4.0f);
  g_assert_cmpfloat (plain.max, ==, 7.0f);
  /* another plane, and the stack, are their own questions */
  g_assert_true (airy_resident_stats (r, &(AirySlice) { AIRY_SLICE_XY, 0 }, &plain, NULL));
  g_assert_cmpfloat (plain.max, ==, 3.0f);
  g_assert_true (airy_resident_stats (r, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &plain, NULL));
  g_assert_cmpfloat (plain.max, ==, 7.0f);
  g_assert_cmpuint (stats_calls, ==, 3);
  /* bins asked for where only the extremes are kept: computed */
  g_assert_true (airy_resident_stats (r, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &with_bins, NULL));
  g_assert_cmpuint (stats_calls, ==, 4);
}

/* ---- the worker ---- */

typedef struct
{
  GArray  *previews;   /* hashes, in order */
  GArray  *finished;
  GString *order;      /* "p" for a preview, "f" for a result */
  guint    known;      /* the plane of the last preview */
} Seen;

static void
on_worker_preview (AiryWorker *worker, AiryResident *partial, guint64 hash, Seen *seen)
{
  g_assert_true (airy_resident_is_partial (partial, &seen->known));
  g_array_append_val (seen->previews, hash);
  g_string_append_c (seen->order, 'p');
  airy_worker_preview_shown (worker);
}

static void
on_worker_finished (AiryWorker *worker, AiryResult *result, guint64 hash, Seen *seen)
{
  g_array_append_val (seen->finished, hash);
  g_string_append_c (seen->order, 'f');
}

static void
seen_init (Seen *seen, AiryWorker *worker)
{
  seen->previews = g_array_new (FALSE, FALSE, sizeof (guint64));
  seen->finished = g_array_new (FALSE, FALSE, sizeof (guint64));
  seen->order = g_string_new (NULL);
  g_signal_connect (worker, "preview", G_CALLBACK (on_worker_preview), seen);
  g_signal_connect (worker, "finished", G_CALLBACK (on_worker_finished), seen);
}

static void
seen_clear (Seen *seen)
{
  g_array_unref (seen->previews);
  g_array_unref (seen->finished);
  g_string_free (seen->order, TRUE);
}

static void
wait_worker (AiryWorker *worker)
{
  guint tries;

  for (tries = 0; tries < 3000 && airy_worker_is_busy (worker); tries++)
    spin_loop (10);
  g_assert_false (airy_worker_is_busy (worker));
  spin_loop (20);
}

/* The first plane comes before the result, both of the newest system; an
 * edit on its own starts its run at once, a burst one run per interval,
 * the last edit's; a preview of a run overtaken by a newer edit is never
 * announced. */
static void
test_worker_preview (void)
{
  g_autoptr(AiryWorker) worker = airy_worker_new ();
  g_autoptr(AirySystem) system = small_system ();
  g_autoptr(AirySystem) big = airy_system_new_from_preset ("widefield", NULL);
  AiryElement *objective = g_ptr_array_index (airy_system_get_elements (big), 0);
  Seen seen = { 0 };
  guint64 last;
  guint started, i;

  seen_init (&seen, worker);
  airy_worker_set_debounce (worker, 200);
  started = airy_worker_get_started (worker);
  airy_worker_submit (worker, system, "cpu", 2, NULL, 0, 3);
  /* at once, not after the interval */
  g_assert_cmpuint (airy_worker_get_started (worker), ==, started + 1);
  wait_worker (worker);
  g_assert_cmpstr (seen.order->str, ==, "pf");
  g_assert_cmpuint (seen.known, ==, 3);
  g_assert_true (g_array_index (seen.previews, guint64, 0) == airy_system_hash (system));
  g_assert_true (g_array_index (seen.finished, guint64, 0) == airy_system_hash (system));

  /* a burst: the first starts, the four after it wait for the interval and
   * only the newest of them runs */
  g_string_truncate (seen.order, 0);
  g_array_set_size (seen.previews, 0);
  g_array_set_size (seen.finished, 0);
  spin_loop (250);
  started = airy_worker_get_started (worker);
  for (i = 0; i < 5; i++)
    {
      g_object_set (objective, "na", 0.6 + 0.02 * i, NULL);
      airy_worker_submit (worker, big, "cpu", 2, NULL, 0, 32);
    }
  last = airy_system_hash (big);
  g_assert_cmpuint (airy_worker_get_started (worker), ==, started + 1);
  wait_worker (worker);
  g_assert_cmpuint (airy_worker_get_started (worker), ==, started + 2);
  /* the overtaken first run said nothing */
  for (i = 0; i < seen.previews->len; i++)
    g_assert_true (g_array_index (seen.previews, guint64, i) == last);
  g_assert_cmpuint (seen.finished->len, ==, 1);
  g_assert_true (g_array_index (seen.finished, guint64, 0) == last);
  g_assert_cmpstr (seen.order->str, ==, "pf");
  seen_clear (&seen);
}

/* ---- the window ---- */

typedef struct
{
  AiryWindow *window;
  guint       checked;
  guint       shown_before;
  guint64     hash_before;
  float      *plane;        /* the partial's plane, as shown */
  guint       known;
  gboolean    cancel;       /* cancel the run when its first plane is in */
} PartialCheck;

/* after the window's handler: what the person sees while the stack fills */
static void
check_partial (AiryWorker *worker, AiryResident *partial, guint64 hash, PartialCheck *c)
{
  AiryStackViewer *viewer = airy_window_get_viewer (c->window);
  AiryStackView *view = airy_stack_viewer_get_view (viewer);
  AiryStack *s = airy_stack_view_get_stack (view);

  c->checked++;
  g_assert_true (airy_window_shows_partial (c->window));
  g_assert_true (airy_stack_view_get_resident (view) == partial);
  g_assert_true (airy_resident_is_partial (partial, &c->known));
  /* the whole stack's planes, on the plane nearest the one shown before */
  g_assert_cmpuint (s->depth, ==, 64);
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, c->known);
  g_assert_cmpuint (c->known, ==, 32);
  /* labelled: the header, the z label; no axial profile yet */
  g_assert_true (g_str_has_prefix (airy_window_get_status (c->window), "plane 33 of 64 (z +0.063 µm) shown; computing"));
  g_assert_cmpfloat (airy_plot_get_fwhm (airy_stack_viewer_get_axial_plot (viewer)), ==, 0.0);
  /* not a result yet: the shown count and hash are the last full one's */
  g_assert_cmpuint (airy_window_get_shown (c->window), ==, c->shown_before);
  g_assert_true (airy_window_get_shown_hash (c->window) == c->hash_before);
  c->plane = g_memdup2 (airy_stack_view_get_xy_plane (view), airy_stack_plane_size (s) * sizeof (float));
  /* a plane not computed yet reads as such */
  airy_stack_view_set_z (view, 3);
  g_assert_nonnull (strstr (airy_stack_viewer_get_readout (viewer), "not computed yet"));
  airy_stack_view_set_z (view, c->known);
  if (c->cancel)
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (c->window), "win.cancel", NULL));
}

/* A widefield window whose NA is edited, check_partial at the run's first
 * plane (cancelling it there with `cancel`), the run ended; NULL without a
 * display. */
static AiryWindow *
edit_watched (PartialCheck *c, gboolean cancel, AiryStack **before)
{
  AiryWindow *window;

  if (!have_display)
    {
      g_test_skip ("no display");
      return NULL;
    }
  window = test_new_window (app, "widefield");
  *before = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  c->window = window;
  c->cancel = cancel;
  c->shown_before = airy_window_get_shown (window);
  c->hash_before = airy_window_get_shown_hash (window);
  g_assert_false (airy_window_shows_partial (window));
  g_signal_connect_after (airy_window_get_worker (window), "preview", G_CALLBACK (check_partial), c);
  spin_set (window, "elements[0].na", 0.7);
  wait_idle (window);
  g_assert_cmpuint (c->checked, ==, 1);
  g_assert_false (airy_window_shows_partial (window));
  return window;
}

static void
test_window_partial_then_full (void)
{
  PartialCheck c = { 0 };
  AiryStack *before, *full;
  AiryWindow *window = edit_watched (&c, FALSE, &before);
  AiryStackView *view;

  if (window == NULL)
    return;
  view = airy_stack_viewer_get_view (airy_window_get_viewer (window));
  /* the full stack replaced it, the plane the same values */
  g_assert_cmpuint (airy_window_get_shown (window), ==, c.shown_before + 1);
  g_assert_true (airy_window_get_shown_hash (window) == airy_system_hash (airy_window_get_system (window)));
  full = airy_stack_view_get_stack (view);
  g_assert_true (full != before);
  g_assert_nonnull (full->data);
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, 32);
  g_assert_cmpmem (c.plane, airy_stack_plane_size (full) * sizeof (float), airy_stack_plane (full, 32),
                   airy_stack_plane_size (full) * sizeof (float));
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 512² · "));
  g_assert_cmpfloat (airy_plot_get_fwhm (airy_stack_viewer_get_axial_plot (airy_window_get_viewer (window))), >, 0.0);
  g_free (c.plane);
  close_window (window);
}

/* Cancelled while its first plane is shown: the last full result comes
 * back, not half a stack of the new system. */
static void
test_window_cancel_restores (void)
{
  PartialCheck c = { 0 };
  AiryStack *before;
  AiryWindow *window = edit_watched (&c, TRUE, &before);
  AiryStackView *view;

  if (window == NULL)
    return;
  view = airy_stack_viewer_get_view (airy_window_get_viewer (window));
  g_assert_true (airy_stack_view_get_stack (view) == before);
  g_assert_false (airy_resident_is_partial (airy_stack_view_get_resident (view), NULL));
  g_assert_cmpuint (airy_window_get_shown (window), ==, c.shown_before);
  g_assert_cmpstr (airy_window_get_status (window), ==, "cancelled: the view shows the last result");
  g_free (c.plane);
  close_window (window);
}

/* ---- the viewer: planes not computed yet ---- */

typedef struct
{
  const guint8 *pixels;
  int           w, h;
} Frame;

static void
on_readback (AiryStackView *view, Frame *frame)
{
  frame->pixels = airy_stack_view_get_readback (view, &frame->w, &frame->h);
}

static void
frame_of (AiryStackView *view, Frame *frame)
{
  guint tries;

  frame->pixels = NULL;
  spin_loop (50);
  airy_stack_view_request_readback (view);
  for (tries = 0; tries < 500 && frame->pixels == NULL; tries++)
    spin_loop (10);
  g_assert_nonnull (frame->pixels);
}

/* the middle of XY at fit (the PSF's peak there), RGB */
static const guint8 *
middle (const Frame *frame)
{
  return frame->pixels + ((gsize) (frame->h / 2) * frame->w + frame->w / 2) * 4;
}

static void
test_viewer_draws_unknown_as_canvas (void)
{
  GtkWidget *window;
  AiryStackViewer *viewer;
  AiryStackView *view;
  AiryStack *geometry = g_new0 (AiryStack, 1);
  AiryStack *plane = airy_stack_new (1, 32, 32);
  AiryDisplay d;
  Frame frame = { 0 };
  const guint8 *p;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  *geometry = (AiryStack) { .depth = 3, .height = 32, .width = 32, .dx = 0.1, .dy = 0.1, .dz = 0.5, .bits = 32 };
  for (i = 0; i < 32 * 32; i++)
    plane->data[i] = 1.0f;
  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 900, 700);
  viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (viewer));
  gtk_window_present (GTK_WINDOW (window));
  view = airy_stack_viewer_get_view (viewer);
  g_signal_connect (view, "readback", G_CALLBACK (on_readback), &frame);
  airy_stack_viewer_set_resident (viewer, airy_resident_new_partial (geometry, plane, 1));
  airy_stack_view_set_sections (view, FALSE);
  airy_stack_view_set_fit (view, TRUE);
  d = *airy_stack_view_get_display (view);
  d.lo = 0.0f;
  d.hi = 1.0f;
  d.colormap = AIRY_COLORMAP_GRAY;
  airy_stack_viewer_set_display (viewer, &d);
  /* the known plane: white */
  airy_stack_view_set_z (view, 1);
  frame_of (view, &frame);
  p = middle (&frame);
  g_assert_cmpuint (p[0], ==, 255);
  g_assert_cmpuint (p[1], ==, 255);
  /* a plane not computed: the canvas (0.12, 0.12, 0.13), not a value */
  airy_stack_view_set_z (view, 0);
  frame_of (view, &frame);
  p = middle (&frame);
  g_assert_cmpuint (p[0], ==, 31);
  g_assert_cmpuint (p[1], ==, 31);
  g_assert_cmpuint (p[2], ==, 33);
  gtk_window_destroy (GTK_WINDOW (window));
  spin_loop (20);
}

/* ---- the benchmark ---- */

static void
test_bench_ui_runs (void)
{
  g_autofree char *dir = g_path_get_dirname (g_getenv ("AIRY_SIM"));
  g_autofree char *airy = g_build_filename (dir, "airy", NULL);
  const char *argv[] = { airy, "--bench-ui", "3", "--bench-size", "128", NULL };
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "airy --bench-ui: widefield, 64 planes of 128 × 128, 3 NA edits; load average "));
  g_assert_true (g_regex_match_simple ("^start → first frame +[0-9.]+ ms", out, G_REGEX_MULTILINE, 0));
  g_assert_true (g_regex_match_simple ("^edit → first frame +median +[0-9.]+ ms +min +[0-9.]+ +max +[0-9.]+ +\\(3\\)$",
                                       out, G_REGEX_MULTILINE, 0));
  g_assert_true (g_regex_match_simple ("^edit → full stack +median", out, G_REGEX_MULTILINE, 0));
  g_assert_true (g_regex_match_simple ("^engine, full run +median", out, G_REGEX_MULTILINE, 0));
}

int
main (int argc, char **argv)
{
  int status;

  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestSpeed", 0, &have_display);

  g_test_add_func ("/speed/preview/first-plane", test_preview_first_plane);
  g_test_add_func ("/speed/preview/not-for-images", test_preview_not_for_images);
  g_test_add_func ("/speed/resident/stats-kept", test_stats_kept);
  g_test_add_func ("/speed/worker/preview", test_worker_preview);
  g_test_add_func ("/speed/window/partial-then-full", test_window_partial_then_full);
  g_test_add_func ("/speed/window/cancel-restores", test_window_cancel_restores);
  g_test_add_func ("/speed/viewer/unknown-as-canvas", test_viewer_draws_unknown_as_canvas);
  g_test_add_func ("/speed/bench-ui", test_bench_ui_runs);
  status = g_test_run ();
  g_object_unref (app);
  return status;
}
