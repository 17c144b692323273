#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include <glib/gi18n.h>

#include "airy-window-private.h"

/* The window's side of the engine: results from the worker go to the
 * viewer, the header says what was run and how the slices reach the
 * screen, and the progress bar follows the worker's properties. */

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
  g_free (self->run_status);
  self->run_status = g_steal_pointer (&status);
  /* the run's warnings: the check on the UI thread could not see the files */
  airy_bench_panel_set_warnings (self->panel, result->warnings);
  /* the result stays with its backend (on the GPUs for CUDA) */
  airy_stack_viewer_set_resident (self->viewer, airy_resident_ref (result->resident));
  _airy_window_show_run_status (self);
  self->shown++;
  self->shown_hash = hash;
  g_free (self->shown_settings);
  self->shown_settings = _airy_window_run_settings (self);
}

static void
on_failed (AiryWorker   *worker,
           const GError *error,
           AiryWindow   *self)
{
  /* the last good result stays on screen */
  airy_bench_panel_show_error (self->panel, error->message);
  _airy_window_set_status (self, _("not computed: fix the marked field"));
  _airy_window_offer_folder (self, error);
}

void
_airy_window_wire_run (AiryWindow *self)
{
  g_assert (self->worker == NULL);

  self->worker = airy_worker_new ();
  /* shown while the engine works: from an edit until its result */
  g_object_bind_property (self->worker, "busy", self->progress, "visible", G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->worker, "fraction", self->progress, "fraction", G_BINDING_SYNC_CREATE);
  g_signal_connect (self->worker, "finished", G_CALLBACK (on_finished), self);
  g_signal_connect (self->worker, "failed", G_CALLBACK (on_failed), self);
  g_signal_connect_object (airy_stack_viewer_get_view (self->viewer), "notify::slice-path", G_CALLBACK (on_slice_path),
                           self, 0);
}
