#define G_LOG_DOMAIN "airy-worker"

#include "config.h"

#include "airy-worker.h"
#include "airy-histogram.h"

typedef struct
{
  AirySystem *system;
  char       *backend;
  guint       threads;
  GArray     *devices;
  guint64     hash;
  int         preview_plane;   /* computed and shown first; -1: none */
  GCond       shown;           /* the preview is on screen (under lock) */
  gboolean    preview_shown;
  gint64      preview_wait;    /* µs the run waited for it */
  /* progress, written by the engine's threads */
  GMutex      lock;
  guint       done;
  guint       total;
  guint       idle;
  gint64      last_idle; /* when the last one was added */
  AiryWorker *worker;    /* weak: for the idle */
  GCancellable *cancellable;
  guint64     budget;    /* the memory budget after the run, read on its thread */
} Job;

struct _AiryWorker
{
  GObject       parent_instance;
  guint         debounce_ms;
  guint         timeout;
  Job          *pending;
  GCancellable *current;    /* the run whose result counts */
  Job          *current_job; /* its job while it runs */
  guint         running;
  guint         started;
  gboolean      busy;       /* as last notified */
  double        fraction;
  guint         done;       /* planes of the newest run, as last notified */
  guint         total;
  gint64        run_start;  /* g_get_monotonic_time () when it started */
  gint64        last_start; /* … the last one */
  guint64       budget;     /* as the last run found it; 0: none ran yet */
};

G_DEFINE_FINAL_TYPE (AiryWorker, airy_worker, G_TYPE_OBJECT)

enum { SIGNAL_FINISHED, SIGNAL_FAILED, SIGNAL_PREVIEW, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_BUSY, PROP_FRACTION, PROP_DONE, PROP_TOTAL, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* After every change of pending or running: ::notify::busy when it flips. */
static void
update_busy (AiryWorker *self)
{
  gboolean busy = self->pending != NULL || self->running > 0;

  if (busy == self->busy)
    return;
  self->busy = busy;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
set_fraction (AiryWorker *self,
              double      fraction)
{
  if (fraction == self->fraction)
    return;
  self->fraction = fraction;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FRACTION]);
}

/* planes done / total first, so that a handler of ::notify::fraction reads
 * the counts of the same moment */
static void
set_progress (AiryWorker *self,
              guint       done,
              guint       total)
{
  g_object_freeze_notify (G_OBJECT (self));
  if (done != self->done)
    {
      self->done = done;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DONE]);
    }
  if (total != self->total)
    {
      self->total = total;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOTAL]);
    }
  set_fraction (self, total ? (double) done / total : 0.0);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
job_free (Job *job)
{
  if (job == NULL)
    return;
  g_clear_object (&job->system);
  g_clear_object (&job->cancellable);
  g_free (job->backend);
  g_array_unref (job->devices);
  g_mutex_clear (&job->lock);
  g_cond_clear (&job->shown);
  g_free (job);
}

static gboolean
progress_idle (gpointer data)
{
  Job *job = data;
  guint done, total;

  g_mutex_lock (&job->lock);
  done = job->done;
  total = job->total;
  job->idle = 0;
  g_mutex_unlock (&job->lock);
  if (job->worker && job->cancellable == job->worker->current)
    set_progress (job->worker, done, total);
  return G_SOURCE_REMOVE;
}

#define PROGRESS_US 100000
#define PREVIEW_WAIT_US 150000

static void
on_progress (guint done, guint total, gpointer data)
{
  Job *job = data;

  gint64 now = g_get_monotonic_time ();

  g_mutex_lock (&job->lock);
  job->done = done;
  job->total = total;
  /* one idle at a time, however fast the planes come, and at most ten a
   * second: each redraws the header, and a frame drawn while the result
   * arrives delays it */
  if (job->idle == 0 && (now - job->last_idle >= PROGRESS_US || done == total))
    {
      job->idle = g_idle_add_full (G_PRIORITY_DEFAULT, progress_idle, job, NULL);
      job->last_idle = now;
    }
  g_mutex_unlock (&job->lock);
}

/* The statistics the viewer asks for first (the limits' range over the
 * stack, the histogram of the shown plane), computed here, off the UI
 * thread, and kept with the resident. A GPU's resident is read on the UI
 * thread only. */
static void
precompute_stats (AiryResident *resident,
                  guint         plane)
{
  guint64 counts[AIRY_HISTOGRAM_BINS];
  AirySliceStats stats = { 0.0f, 1.0f, 0, NULL };
  const AiryStack *s = airy_resident_get_stack (resident);

  if (!g_str_equal (airy_resident_get_backend_name (resident), "cpu"))
    return;
  airy_resident_stats (resident, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &stats, NULL);
  stats = (AirySliceStats) { 0.0f, 1.0f, AIRY_HISTOGRAM_BINS, counts };
  airy_resident_stats (resident, &(AirySlice) { AIRY_SLICE_XY, MIN (plane, s->depth - 1) }, &stats, NULL);
}

/* A preview on its way to the main thread: announced only if its run is
 * still the newest when it gets there. */
typedef struct
{
  GWeakRef      worker;
  GCancellable *cancellable;
  guint64       hash;
  AiryResident *partial;
} Preview;

static void
preview_free (gpointer data)
{
  Preview *p = data;

  g_weak_ref_clear (&p->worker);
  g_clear_object (&p->cancellable);
  airy_resident_unref (p->partial);
  g_free (p);
}

static gboolean
preview_idle (gpointer data)
{
  Preview *p = data;
  g_autoptr(AiryWorker) self = g_weak_ref_get (&p->worker);

  if (self && p->cancellable == self->current)
    g_signal_emit (self, signals[SIGNAL_PREVIEW], 0, p->partial, p->hash);
  return G_SOURCE_REMOVE;
}

/* on the run's thread: the first plane, before the others are computed */
static void
on_preview (AiryResident *partial, gpointer data)
{
  Job *job = data;
  Preview *p = g_new0 (Preview, 1);
  gint64 start, end;

  precompute_stats (partial, (guint) job->preview_plane);
  g_weak_ref_init (&p->worker, job->worker);
  p->cancellable = g_object_ref (job->cancellable);
  p->hash = job->hash;
  p->partial = partial;
  g_main_context_invoke_full (NULL, G_PRIORITY_DEFAULT, preview_idle, p, preview_free);
  /* the other planes wait for the frame that shows this one (a while at
   * most): on a machine with few cores they would slow that frame, which
   * is what the person waits for */
  start = g_get_monotonic_time ();
  end = start + PREVIEW_WAIT_US;
  g_mutex_lock (&job->lock);
  while (!job->preview_shown && !g_cancellable_is_cancelled (job->cancellable)
         && g_get_monotonic_time () < end)
    g_cond_wait_until (&job->shown, &job->lock, MIN (end, g_get_monotonic_time () + 10000));
  g_mutex_unlock (&job->lock);
  job->preview_wait = g_get_monotonic_time () - start;
}

void
airy_worker_preview_shown (AiryWorker *self)
{
  Job *job = self->current_job;

  g_return_if_fail (AIRY_IS_WORKER (self));

  if (job == NULL)
    return;
  g_mutex_lock (&job->lock);
  job->preview_shown = TRUE;
  g_cond_signal (&job->shown);
  g_mutex_unlock (&job->lock);
}

static void
run_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  /* the result stays with its backend (on the GPUs for CUDA): the viewer
   * reads it through the resident's slots */
  AiryRunOptions options = { .backend = job->backend, .threads = job->threads,
                             .devices = job->devices->len ? (guint *) job->devices->data : NULL,
                             .n_devices = job->devices->len, .resident = TRUE,
                             .per_wavelength = airy_system_get_channels (job->system),
                             .preview = job->preview_plane >= 0 ? on_preview : NULL, .preview_data = job,
                             .preview_plane = (guint) MAX (job->preview_plane, 0) };
  AiryResult *result = airy_run (job->system, &options, on_progress, job, cancellable, &error);

  /* /proc/meminfo is a file: read here, not on the UI thread */
  job->budget = airy_memory_budget ();
  if (result && result->resident)
    precompute_stats (result->resident, (guint) MAX (job->preview_plane, 0));
  /* the run's own time: not the pause in which the first frame was drawn */
  if (result)
    result->seconds = MAX (0.0, result->seconds - job->preview_wait / 1e6);

  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, (GDestroyNotify) airy_result_free);
}

static void
run_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryWorker *self = AIRY_WORKER (source);
  GTask *task = G_TASK (res);
  Job *job = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = g_task_propagate_pointer (task, &error);

  self->running--;
  update_busy (self);
  g_mutex_lock (&job->lock);
  if (job->idle)
    {
      g_source_remove (job->idle);
      job->idle = 0;
    }
  job->worker = NULL;
  if (self->current_job == job)
    self->current_job = NULL;
  g_mutex_unlock (&job->lock);
  /* a stale run (cancelled, or overtaken by a newer one) announces nothing */
  if (job->budget)
    self->budget = job->budget;
  if (job->cancellable != self->current)
    return;
  g_clear_object (&self->current);
  if (result)
    g_signal_emit (self, signals[SIGNAL_FINISHED], 0, result, job->hash);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_signal_emit (self, signals[SIGNAL_FAILED], 0, error);
}

static gboolean
start_pending (gpointer data)
{
  AiryWorker *self = data;
  Job *job = g_steal_pointer (&self->pending);
  g_autoptr(GTask) task = NULL;

  self->timeout = 0;
  if (job == NULL)
    return G_SOURCE_REMOVE;
  if (self->current)
    g_cancellable_cancel (self->current);
  g_clear_object (&self->current);
  self->current = g_cancellable_new ();
  job->cancellable = g_object_ref (self->current);
  job->worker = self;
  self->current_job = job;
  task = g_task_new (self, self->current, run_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  self->running++;
  self->started++;
  self->run_start = self->last_start = g_get_monotonic_time ();
  set_progress (self, 0, 0);
  g_task_run_in_thread (task, run_thread);
  update_busy (self);
  return G_SOURCE_REMOVE;
}

void
airy_worker_submit (AiryWorker  *self,
                    AirySystem  *system,
                    const char  *backend,
                    guint        threads,
                    const guint *devices,
                    guint        n_devices,
                    int          preview_plane)
{
  Job *job = g_new0 (Job, 1);
  gint64 since;

  g_return_if_fail (AIRY_IS_WORKER (self));

  g_mutex_init (&job->lock);
  g_cond_init (&job->shown);
  job->system = airy_system_copy (system);
  job->backend = g_strdup (backend);
  job->threads = threads;
  job->devices = g_array_new (FALSE, FALSE, sizeof (guint));
  if (devices)
    g_array_append_vals (job->devices, devices, n_devices);
  job->hash = airy_system_hash (system);
  job->preview_plane = preview_plane;
  job_free (self->pending);
  self->pending = job;
  /* a newer edit makes the running one stale at once */
  if (self->current)
    {
      g_cancellable_cancel (self->current);
      g_clear_object (&self->current);
    }
  g_clear_handle_id (&self->timeout, g_source_remove);
  /* a burst (a slider, an arrow held) starts a run at most every
   * debounce_ms, the newest edit of it last; an edit on its own starts at
   * once */
  since = (g_get_monotonic_time () - self->last_start) / 1000;
  if (self->last_start == 0 || since >= self->debounce_ms)
    start_pending (self);
  else
    self->timeout = g_timeout_add ((guint) (self->debounce_ms - since), start_pending, self);
  update_busy (self);
}

void
airy_worker_cancel (AiryWorker *self)
{
  g_clear_handle_id (&self->timeout, g_source_remove);
  g_clear_pointer (&self->pending, job_free);
  if (self->current)
    g_cancellable_cancel (self->current);
  g_clear_object (&self->current);
  update_busy (self);
}

gboolean
airy_worker_is_busy (AiryWorker *self)
{
  g_return_val_if_fail (AIRY_IS_WORKER (self), FALSE);

  return self->busy;
}

double
airy_worker_get_fraction (AiryWorker *self)
{
  g_return_val_if_fail (AIRY_IS_WORKER (self), 0.0);

  return self->fraction;
}

guint
airy_worker_get_started (AiryWorker *self)
{
  return self->started;
}

guint64
airy_worker_get_memory_budget (AiryWorker *self)
{
  g_return_val_if_fail (AIRY_IS_WORKER (self), 0);

  return self->budget;
}

void
airy_worker_get_progress (AiryWorker *self,
                          guint      *done,
                          guint      *total,
                          double     *elapsed)
{
  g_return_if_fail (AIRY_IS_WORKER (self));

  if (done)
    *done = self->done;
  if (total)
    *total = self->total;
  if (elapsed)
    *elapsed = self->running > 0 && self->current ? (g_get_monotonic_time () - self->run_start) / 1e6 : 0.0;
}

void
airy_worker_set_debounce (AiryWorker *self,
                          guint       milliseconds)
{
  self->debounce_ms = milliseconds;
}

static void
airy_worker_dispose (GObject *object)
{
  airy_worker_cancel (AIRY_WORKER (object));
  G_OBJECT_CLASS (airy_worker_parent_class)->dispose (object);
}

static void
airy_worker_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  AiryWorker *self = AIRY_WORKER (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    case PROP_FRACTION:
      g_value_set_double (value, self->fraction);
      break;
    case PROP_DONE:
      g_value_set_uint (value, self->done);
      break;
    case PROP_TOTAL:
      g_value_set_uint (value, self->total);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
airy_worker_class_init (AiryWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = airy_worker_dispose;
  object_class->get_property = airy_worker_get_property;

  /* a submission waits for its debounce or a run (also a cancelled one
   * winding down) is on a thread */
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* planes done / planes in all of the newest run, 0 when it starts */
  properties[PROP_FRACTION] = g_param_spec_double ("fraction", NULL, NULL, 0.0, 1.0, 0.0,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS
                                                   | G_PARAM_EXPLICIT_NOTIFY);
  /* the newest run's planes done and planes in all (0 until it reports) */
  properties[PROP_DONE] = g_param_spec_uint ("done", NULL, NULL, 0, G_MAXUINT, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_TOTAL] = g_param_spec_uint ("total", NULL, NULL, 0, G_MAXUINT, 0,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* (AiryResult *result, guint64 hash): the newest run's result; a handler
   * that keeps a part of it takes a reference (airy_resident_ref) */
  signals[SIGNAL_FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 2, AIRY_TYPE_RESULT, G_TYPE_UINT64);
  /* (GError *error): the newest run failed; a cancelled run says nothing */
  signals[SIGNAL_FAILED] = g_signal_new ("failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  /* (AiryResident *partial, guint64 hash): the newest run's first plane
   * (airy_resident_new_partial), before its other planes; ::finished or
   * ::failed follows. A handler that keeps it takes a reference. */
  signals[SIGNAL_PREVIEW] = g_signal_new ("preview", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_UINT64);
}

static void
airy_worker_init (AiryWorker *self)
{
  self->debounce_ms = 120;
}

AiryWorker *
airy_worker_new (void)
{
  return g_object_new (AIRY_TYPE_WORKER, NULL);
}
