#pragma once

#include <gio/gio.h>

#include "airy.h"

G_BEGIN_DECLS

#define AIRY_TYPE_WORKER (airy_worker_get_type ())
G_DECLARE_FINAL_TYPE (AiryWorker, airy_worker, AIRY, WORKER, GObject)

/* The bridge between the window and the engine: every submission replaces
 * the pending one, cancels the run in flight and starts a new one on a
 * worker thread (at once, or in a burst of edits at most one per debounce
 * interval); only the newest run's result is announced
 * (::finished with the result and the hash of the system it was computed
 * for, ::failed with the error). Properties for widgets to bind: :busy and
 * :fraction (the newest run's progress, which reaches the main thread from
 * the engine's threads through at most one idle source at a time). */
AiryWorker *airy_worker_new          (void);
void        airy_worker_set_debounce (AiryWorker *self,
                                      guint       milliseconds);
/* preview_plane ≥ 0: that plane is computed first and announced by
 * ::preview (as a partial resident of the whole stack) before the others,
 * where the run allows it (a PSF stack on one CPU device); -1: none. */
void        airy_worker_submit       (AiryWorker  *self,
                                      AirySystem  *system,
                                      const char  *backend,
                                      guint        threads,
                                      const guint *devices,
                                      guint        n_devices,
                                      int          preview_plane);
/* The newest run's ::preview is on screen: its other planes, which wait
 * for that (150 ms at most), go on. */
void        airy_worker_preview_shown (AiryWorker *self);
void        airy_worker_cancel       (AiryWorker *self);
gboolean    airy_worker_is_busy      (AiryWorker *self);
double      airy_worker_get_fraction (AiryWorker *self);
guint       airy_worker_get_started  (AiryWorker *self);
/* The host memory budget (airy_memory_budget ()) as the last run to end
 * found it, with its result held; 0 before the first. */
guint64     airy_worker_get_memory_budget (AiryWorker *self);
/* The newest run's planes done and in all (:done, :total) and the seconds
 * since it started (0 when none runs). */
void        airy_worker_get_progress (AiryWorker *self,
                                      guint      *done,
                                      guint      *total,
                                      double     *elapsed);

G_END_DECLS
