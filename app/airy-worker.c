#define G_LOG_DOMAIN "airy-worker"

#include "config.h"

#include "airy-worker.h"

typedef struct
{
  AirySystem *system;
  char       *backend;
  guint       threads;
  GArray     *devices;
  guint64     hash;
  /* progress, written by the engine's threads */
  GMutex      lock;
  guint       done;
  guint       total;
  guint       idle;
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
  guint         running;
  guint         started;
  gboolean      busy;       /* as last notified */
  double        fraction;
  guint         done;       /* planes of the newest run, as last notified */
  guint         total;
  gint64        run_start;  /* g_get_monotonic_time () when it started */
  guint64       budget;     /* as the last run found it; 0: none ran yet */
};

G_DEFINE_FINAL_TYPE (AiryWorker, airy_worker, G_TYPE_OBJECT)

enum { SIGNAL_FINISHED, SIGNAL_FAILED, N_SIGNALS };
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

static void
on_progress (guint done, guint total, gpointer data)
{
  Job *job = data;

  g_mutex_lock (&job->lock);
  job->done = done;
  job->total = total;
  /* one idle at a time, however fast the planes come */
  if (job->idle == 0)
    job->idle = g_idle_add_full (G_PRIORITY_DEFAULT, progress_idle, job, NULL);
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
                             .per_wavelength = airy_system_get_channels (job->system) };
  AiryResult *result = airy_run (job->system, &options, on_progress, job, cancellable, &error);

  /* /proc/meminfo is a file: read here, not on the UI thread */
  job->budget = airy_memory_budget ();

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
  task = g_task_new (self, self->current, run_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  self->running++;
  self->started++;
  self->run_start = g_get_monotonic_time ();
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
                    guint        n_devices)
{
  Job *job = g_new0 (Job, 1);

  g_return_if_fail (AIRY_IS_WORKER (self));

  g_mutex_init (&job->lock);
  job->system = airy_system_copy (system);
  job->backend = g_strdup (backend);
  job->threads = threads;
  job->devices = g_array_new (FALSE, FALSE, sizeof (guint));
  if (devices)
    g_array_append_vals (job->devices, devices, n_devices);
  job->hash = airy_system_hash (system);
  job_free (self->pending);
  self->pending = job;
  /* a newer edit makes the running one stale at once */
  if (self->current)
    {
      g_cancellable_cancel (self->current);
      g_clear_object (&self->current);
    }
  g_clear_handle_id (&self->timeout, g_source_remove);
  self->timeout = g_timeout_add (self->debounce_ms, start_pending, self);
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
