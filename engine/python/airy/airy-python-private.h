/* Between the parts of airy._airy: airy-python.c (systems, runs, stacks),
 * airy-python-job.c (engine calls on a worker thread), airy-python-grad.c
 * (the gradient and the optimizer) and airy-python-fit.c (the fit). */
#pragma once

#include <Python.h>

#include "airy.h"

/* the engine's error as the Python exception it means (steals error) */
PyObject *_airy_py_raise       (GError     *error,
                                const char *path);
/* sets an exception of type with a printf-formatted message (GLib's
 * formats, %g among them, which PyErr_Format lacks); returns NULL */
PyObject *_airy_py_raise_printf (PyObject   *type,
                                 const char *format,
                                 ...) G_GNUC_PRINTF (2, 3);
/* a Stack over the engine's stack (steals result, or stack when result is NULL) */
PyObject *_airy_py_stack_wrap  (AiryResult *result,
                                AiryStack  *stack);
/* an airy._airy.System over system (steals it; NULL: raises error) */
PyObject *_airy_py_system_wrap (AirySystem *system,
                                GError     *error);
/* the engine's system of an airy._airy.System (borrowed), or NULL with a
 * TypeError naming the argument */
AirySystem *_airy_py_system_get (PyObject   *object,
                                 const char *argument);
/* an integer option of the table (engine/airy-options-private.h) checked
 * by its declared range: ValueError "threads: must be in [0, 4096], got
 * 5000"; -1 with the exception set */
int       _airy_py_check_option (const char *name,
                                 long long   value,
                                 const char *argument);
/* a backend name: ValueError naming the registered ones */
int       _airy_py_check_backend (const char *name,
                                  const char *argument);

/* An engine call on a pooled thread (airy-python-job.c): work runs there
 * with job->cancellable, reporting progress through _airy_py_job_report. */
typedef struct _AiryPyJob AiryPyJob;
struct _AiryPyJob
{
  void         (*work) (AiryPyJob *job);
  GCancellable  *cancellable;
  GMutex         lock;
  GCond          cond;
  gboolean       finished;
  guint          reports;
  guint          a, b;          /* the last report: (done, total), (start, iteration) */
  double         c;             /*   and a value (the fit's loss) */
};

void      _airy_py_job_init_pool (void);
void      _airy_py_job_report   (AiryPyJob  *job,
                                 guint       a,
                                 guint       b,
                                 double      c);
/* Runs job->work on a worker and waits for it with the GIL released;
 * progress (None or a callable) gets (a, b) or, with_value, (a, b, c).
 * Ctrl-C or an exception in progress cancels the work: returns -1 with
 * the exception set once the worker is done, else 0. */
int       _airy_py_job_run      (AiryPyJob  *job,
                                 PyObject   *progress,
                                 gboolean    with_value);

PyObject *_airy_py_grad        (PyObject   *module,
                                PyObject   *args);
PyObject *_airy_py_optimize    (PyObject   *module,
                                PyObject   *args);
PyObject *_airy_py_fit         (PyObject   *module,
                                PyObject   *args,
                                PyObject   *kwargs);
