/* airy._airy's jobs: an engine call on a pooled worker thread while the
 * calling thread waits with the GIL released, waking every 50 ms to check
 * for signals (Ctrl-C cancels) and to hand the worker's progress to a
 * Python callable. Runs and fits go through it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "airy-python-private.h"

/* a thread per call costs more than a tiny run */
static GThreadPool *pool;

static void
job_thread (gpointer data, gpointer unused)
{
  AiryPyJob *job = data;

  job->work (job);
  g_mutex_lock (&job->lock);
  job->finished = TRUE;
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
}

void
_airy_py_job_init_pool (void)
{
  pool = g_thread_pool_new (job_thread, NULL, -1, FALSE, NULL);
}

void
_airy_py_job_report (AiryPyJob *job, guint a, guint b, double c)
{
  g_mutex_lock (&job->lock);
  job->a = a;
  job->b = b;
  job->c = c;
  job->reports++;
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
}

/* progress(a, b) or, with_value, progress(a, b, c), once per new report */
static int
call_progress (PyObject *progress, gboolean with_value, guint a, guint b, double c)
{
  PyObject *r = with_value ? PyObject_CallFunction (progress, "IId", a, b, c)
                           : PyObject_CallFunction (progress, "II", a, b);

  Py_XDECREF (r);
  return r == NULL ? -1 : 0;
}

int
_airy_py_job_run (AiryPyJob *job, PyObject *progress, gboolean with_value)
{
  guint reported = 0;
  int failed = 0;

  job->cancellable = g_cancellable_new ();
  g_mutex_init (&job->lock);
  g_cond_init (&job->cond);
  g_thread_pool_push (pool, job, NULL);
  /* returns once the worker has set finished, its last touch of job */
  for (;;)
    {
      gboolean finished;
      guint reports, a, b;
      double c;

      Py_BEGIN_ALLOW_THREADS
      g_mutex_lock (&job->lock);
      if (!job->finished)
        g_cond_wait_until (&job->cond, &job->lock, g_get_monotonic_time () + 50 * G_TIME_SPAN_MILLISECOND);
      finished = job->finished;
      reports = job->reports;
      a = job->a;
      b = job->b;
      c = job->c;
      g_mutex_unlock (&job->lock);
      Py_END_ALLOW_THREADS
      if (finished)
        break;
      if (failed)
        continue;
      if (PyErr_CheckSignals () < 0)
        failed = 1;
      else if (progress != Py_None && reports != reported)
        {
          reported = reports;
          failed = call_progress (progress, with_value, a, b, c) < 0;
        }
      if (failed)
        g_cancellable_cancel (job->cancellable);
    }
  g_clear_object (&job->cancellable);
  g_mutex_clear (&job->lock);
  g_cond_clear (&job->cond);
  return failed ? -1 : 0;
}
