#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include <math.h>
#include <glib/gi18n.h>

#include "airy-window-private.h"
#include "airy-modality.h"

/* The window's side of the engine: results from the worker go to the
 * viewer, the header says what was run and how the slices reach the
 * screen, and the progress (planes, times, Cancel) follows the worker. */

/* ---- memory ---- */

/* Host bytes of the shown result (0 for one kept on the GPUs, or none). */
static guint64
shown_bytes (AiryWindow *self)
{
  AiryResident *r = airy_stack_view_get_resident (airy_stack_viewer_get_view (self->viewer));
  const AiryStack *s = r ? airy_resident_get_stack (r) : NULL;

  return s && s->data ? (guint64) s->depth * s->height * s->width * sizeof (float) : 0;
}

/* What the process may hold in all: a fixed AIRY_MEMORY_BUDGET, or 90 % of
 * what was available after the last run plus the results it held then
 * (self->memory_total; the UI thread reads no /proc/meminfo). 0: unknown. */
static guint64
process_budget (AiryWindow *self)
{
  return g_getenv ("AIRY_MEMORY_BUDGET") ? airy_memory_budget () : self->memory_total;
}

/* Tight: the shown result and a new one together would take more than half
 * of the budget. Then the shown result gives way before the run (its
 * current plane stays as a preview), and the memory the engine keeps for a
 * next stack of the same size goes back at once. */
static gboolean
tight (AiryWindow *self,
       guint64     incoming)
{
  guint64 budget = process_budget (self);

  return budget > 0 && 2 * (shown_bytes (self) + incoming) > budget;
}

/* "64 planes 512² · 41 ms · CUDA 2 threads · slices: copied on GPU 0 …" */
void
_airy_window_show_run_status (AiryWindow *self)
{
  const char *path = airy_stack_view_get_slice_path (airy_stack_viewer_get_view (self->viewer));
  g_autofree char *text = path ? g_strdup_printf ("%s · %s", self->run_status, path) : NULL;

  if (self->run_status)
    _airy_window_set_status (self, text ? text : self->run_status);
}

static void
on_slice_path (GObject    *view,
               GParamSpec *pspec,
               AiryWindow *self)
{
  _airy_window_show_run_status (self);
}

char *
_airy_window_run_settings (AiryWindow *self)
{
  guint n, i;
  const guint *devices = airy_bench_panel_get_devices (self->panel, &n);
  GString *s = g_string_new (airy_bench_panel_get_backend (self->panel));

  g_string_append_printf (s, " %u", airy_bench_panel_get_threads (self->panel));
  for (i = 0; i < n; i++)
    g_string_append_printf (s, "%s%u", i ? "," : " ", devices[i]);
  return g_string_free (s, FALSE);
}

/* "64 planes 512² · 41 ms · CPU 2 threads", "1 plane 256 × 512 · …": the
 * shape of the stack that was run */
static char *
describe_run (const AiryStack  *s,
              const AiryResult *result)
{
  g_autofree char *planes = g_strdup_printf (ngettext ("%u plane", "%u planes", s->depth), s->depth);
  g_autofree char *shape = s->width == s->height ? g_strdup_printf ("%u²", s->width)
                                                 : g_strdup_printf ("%u × %u", s->height, s->width);
  g_autofree char *threads = g_strdup_printf (ngettext ("%u thread", "%u threads", result->threads), result->threads);

  /* TRANSLATORS: planes, shape, time, backend, threads */
  return g_strdup_printf (_("%s %s · %.0f ms · %s %s"), planes, shape, result->seconds * 1e3,
                          g_str_equal (result->backend, "cpu") ? "CPU" : "CUDA", threads);
}

static void
on_finished (AiryWorker *worker,
             AiryResult *result,
             guint64     hash,
             AiryWindow *self)
{
  g_autofree char *status = NULL;
  const AiryStack *s;

  /* only a result of the parameters now in the panel is shown */
  if (hash != airy_system_hash (self->system))
    return;
  s = airy_resident_get_stack (result->resident);
  status = describe_run (s, result);
  /* the budget was read with this result and the shown one held */
  self->memory_total = airy_worker_get_memory_budget (worker) + shown_bytes (self)
                       + (s->data ? (guint64) s->depth * s->height * s->width * sizeof (float) : 0);
  g_free (self->run_status);
  self->run_status = g_steal_pointer (&status);
  /* the run's warnings: the check on the UI thread could not see the files */
  airy_bench_panel_set_warnings (self->panel, result->warnings);
  /* the result stays with its backend (on the GPUs for CUDA) */
  airy_stack_viewer_set_resident (self->viewer, airy_resident_ref (result->resident));
  if (result->n_channels > 1)
    {
      /* spectrum.channels: each wavelength's stack goes to the viewer's
       * channel chooser (taken from the result: no copy) */
      GPtrArray *channels = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
      guint l;

      for (l = 0; l < result->n_channels; l++)
        g_ptr_array_add (channels, g_steal_pointer (&result->channels[l]));
      result->n_channels = 0;
      g_clear_pointer (&result->channels, g_free);
      airy_stack_viewer_set_channels (self->viewer, channels);
    }
  self->previewing = FALSE;
  self->partial = FALSE;
  self->displayed_hash = hash;
  g_clear_pointer (&self->last_full, airy_resident_unref);
  self->last_full = airy_resident_ref (result->resident);
  /* the old result's memory is the engine's spare now: kept for a next
   * result of its size unless memory is tight */
  if (tight (self, shown_bytes (self)))
    airy_stack_release_spare ();
  _airy_window_show_run_status (self);
  self->shown++;
  self->shown_hash = hash;
  g_free (self->shown_settings);
  self->shown_settings = _airy_window_run_settings (self);
}

/* The run's first plane: shown at once, in the geometry of the whole
 * stack (its other planes read NaN until the full result replaces it),
 * and said to be partial in the header. */
/* The frame after a preview: the run's other planes may go on. */
static void
on_preview_painted (GdkFrameClock *clock,
                    AiryWindow    *self)
{
  g_clear_signal_handler (&self->preview_paint, clock);
  airy_worker_preview_shown (self->worker);
}

static void
on_preview (AiryWorker   *worker,
            AiryResident *partial,
            guint64       hash,
            AiryWindow   *self)
{
  const AiryStack *s = airy_resident_get_stack (partial);
  g_autofree char *status = NULL;
  guint k;

  if (hash != airy_system_hash (self->system) || !airy_resident_is_partial (partial, &k))
    return;
  airy_stack_viewer_set_resident (self->viewer, airy_resident_ref (partial));
  airy_stack_view_set_z (airy_stack_viewer_get_view (self->viewer), k);
  self->partial = TRUE;
  self->displayed_hash = hash;
  /* TRANSLATORS: the plane shown, the planes in all, its z */
  status = g_strdup_printf (_("plane %u of %u (z %+.3f µm) shown; computing the others…"), k + 1, s->depth,
                            airy_stack_get_z (s, k));
  _airy_window_set_status (self, status);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)) && self->preview_paint == 0)
    self->preview_paint = g_signal_connect (gtk_widget_get_frame_clock (GTK_WIDGET (self)), "after-paint",
                                            G_CALLBACK (on_preview_painted), self);
  else if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    airy_worker_preview_shown (worker);
}

void
_airy_window_drop_partial (AiryWindow *self)
{
  if (!self->partial)
    return;
  self->partial = FALSE;
  self->displayed_hash = self->last_full ? self->shown_hash : 0;
  airy_stack_viewer_set_resident (self->viewer, self->last_full ? airy_resident_ref (self->last_full) : NULL);
}

int
_airy_window_preview_plane (AiryWindow *self)
{
  AiryStackView *view = airy_stack_viewer_get_view (self->viewer);
  const AiryStack *s = airy_stack_view_get_stack (view);
  const double *z;
  guint n, k, best = 0;
  double at;

  z = airy_system_get_z (self->system, &n);
  if (n <= 1 || _airy_modality_one_image (_airy_modality_of (self->system))
      || airy_system_get_sensor (self->system) || self->previewing)
    return -1;
  if (s == NULL || s->depth <= 1)
    return (int) (n / 2);
  at = airy_stack_get_z (s, MIN (airy_stack_view_get_z (view), s->depth - 1));
  for (k = 1; k < n; k++)
    if (fabs (z[k] - at) < fabs (z[best] - at))
      best = k;
  return (int) best;
}

static void
on_failed (AiryWorker   *worker,
           const GError *error,
           AiryWindow   *self)
{
  _airy_window_drop_partial (self);
  /* the last good result stays on screen */
  airy_bench_panel_show_error (self->panel, error);
  _airy_window_set_status (self, _("not computed: fix the marked field"));
  _airy_window_offer_folder (self, error);
}

void
_airy_window_make_room (AiryWindow *self)
{
  AiryStackView *view = airy_stack_viewer_get_view (self->viewer);
  AiryResident *r = airy_stack_view_get_resident (view);
  const AiryStack *s = r ? airy_resident_get_stack (r) : NULL;
  g_autoptr(AiryStack) preview = NULL;
  g_autoptr(GError) error = NULL;
  guint z = airy_stack_view_get_z (view);

  if (!tight (self, airy_system_get_result_bytes (self->system, NULL)))
    return;
  if (s == NULL || s->data == NULL || s->depth <= 1)
    {
      airy_stack_release_spare ();
      return;
    }
  preview = airy_stack_new (1, s->height, s->width);
  if (preview == NULL
      || !airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_XY, MIN (z, s->depth - 1) }, preview->data, &error))
    return;
  preview->dx = s->dx;
  preview->dy = s->dy;
  preview->dz = s->dz;
  preview->z0 = airy_stack_get_z (s, MIN (z, s->depth - 1));
  g_debug ("memory is tight: the shown %u planes give way to plane %u as a preview", s->depth, z);
  g_clear_pointer (&self->last_full, airy_resident_unref);
  airy_stack_viewer_set_stack (self->viewer, g_steal_pointer (&preview));
  self->previewing = TRUE;
  /* the shown stack's memory went to the engine's spare: back to the system */
  airy_stack_release_spare ();
}

/* ---- progress and cancel ---- */

/* "0:07", "12:03", "1:02:03" */
static char *
format_duration (double seconds)
{
  guint s = (guint) MAX (seconds + 0.5, 0.0);

  if (s >= 3600)
    return g_strdup_printf ("%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
  return g_strdup_printf ("%u:%02u", s / 60, s % 60);
}

static void
update_progress (AiryWindow *self)
{
  guint done, total;
  double elapsed;
  g_autofree char *planes = NULL;
  g_autofree char *gone = NULL;
  g_autofree char *times = NULL;

  airy_worker_get_progress (self->worker, &done, &total, &elapsed);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), total ? (double) done / total : 0.0);
  if (total)
    planes = g_strdup_printf (ngettext ("%u / %u plane", "%u / %u planes", total), done, total);
  gtk_progress_bar_set_text (GTK_PROGRESS_BAR (self->progress), planes ? planes : "");
  gone = format_duration (elapsed);
  if (done > 0 && total > done)
    {
      g_autofree char *left = format_duration (elapsed * (total - done) / done);

      /* TRANSLATORS: the time a run took so far and the time it still needs */
      times = g_strdup_printf (_("%s, %s left"), gone, left);
    }
  gtk_label_set_text (GTK_LABEL (self->progress_times), times ? times : gone);
}

static gboolean
progress_tick (gpointer data)
{
  update_progress (data);
  return G_SOURCE_CONTINUE;
}

static void
on_busy (AiryWorker *worker,
         GParamSpec *pspec,
         AiryWindow *self)
{
  gboolean busy = airy_worker_is_busy (worker);

  gtk_widget_set_visible (self->progress_box, busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cancel", busy);
  /* the time goes on between the planes */
  if (busy && self->progress_tick == 0)
    self->progress_tick = g_timeout_add_seconds (1, progress_tick, self);
  else if (!busy)
    g_clear_handle_id (&self->progress_tick, g_source_remove);
  update_progress (self);
}

static void
on_progress (AiryWorker *worker,
             GParamSpec *pspec,
             AiryWindow *self)
{
  update_progress (self);
}

GtkWidget *
_airy_window_progress_new (AiryWindow *self)
{
  GtkWidget *cancel = gtk_button_new_from_icon_name ("process-stop-symbolic");

  self->progress_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->progress = gtk_progress_bar_new ();
  gtk_progress_bar_set_show_text (GTK_PROGRESS_BAR (self->progress), TRUE);
  gtk_widget_set_valign (self->progress, GTK_ALIGN_CENTER);
  gtk_widget_set_size_request (self->progress, 160, -1);
  /* "87 / 200 planes" in the header's own type, not the theme's small grey */
  gtk_widget_add_css_class (self->progress, "airy-progress");
  gtk_widget_add_css_class (self->progress, "numeric");
  self->progress_times = gtk_label_new ("");
  gtk_widget_add_css_class (self->progress_times, "dim-label");
  gtk_widget_add_css_class (self->progress_times, "numeric");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (cancel), "win.cancel");
  gtk_widget_set_tooltip_text (cancel, _("Cancel the run (Esc); the shown result stays"));
  gtk_widget_set_valign (cancel, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (self->progress_box), cancel);
  gtk_box_append (GTK_BOX (self->progress_box), self->progress);
  gtk_box_append (GTK_BOX (self->progress_box), self->progress_times);
  gtk_widget_set_visible (self->progress_box, FALSE);
  return self->progress_box;
}

void
_airy_window_cancel_run (AiryWindow *self)
{
  if (!airy_worker_is_busy (self->worker))
    return;
  airy_worker_cancel (self->worker);
  _airy_window_drop_partial (self);
  _airy_window_set_status (self, self->previewing ? _("cancelled: the view shows a plane of the last result")
                                 : self->shown ? _("cancelled: the view shows the last result") : _("cancelled"));
}

guint64
_airy_window_displayed_hash (AiryWindow *self)
{
  return self->displayed_hash;
}

gboolean
airy_window_shows_partial (AiryWindow *self)
{
  g_return_val_if_fail (AIRY_IS_WINDOW (self), FALSE);

  return self->partial;
}

void
_airy_window_wire_run (AiryWindow *self)
{
  g_assert (self->worker == NULL);

  self->worker = airy_worker_new ();
  /* shown while the engine works: from an edit until its result */
  g_signal_connect (self->worker, "notify::busy", G_CALLBACK (on_busy), self);
  g_signal_connect (self->worker, "notify::fraction", G_CALLBACK (on_progress), self);
  on_busy (self->worker, NULL, self);
  g_signal_connect (self->worker, "finished", G_CALLBACK (on_finished), self);
  g_signal_connect (self->worker, "failed", G_CALLBACK (on_failed), self);
  g_signal_connect (self->worker, "preview", G_CALLBACK (on_preview), self);
  g_signal_connect_object (airy_stack_viewer_get_view (self->viewer), "notify::slice-path", G_CALLBACK (on_slice_path),
                           self, 0);
}
