/* airy._airy's fit (issue 31): the engine's PSF and aberration fit
 * (engine/airy-fit.h) of a bead stack, from a file or a float32 buffer, on
 * a worker thread (Ctrl-C cancels it, progress reaches Python). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "config.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#include "airy.h"
#include "airy-python-private.h"

typedef struct
{
  AiryPyJob       job;          /* first: the worker gets &job */
  AirySystem     *system;
  const AiryStack *beads;
  AiryFitOptions  options;
  AiryFitResult  *result;
  GError         *error;
} FitState;

static void
fit_progress (guint restart, guint iteration, double loss, gpointer user_data)
{
  _airy_py_job_report (user_data, restart, iteration, loss);
}

static void
fit_work (AiryPyJob *job)
{
  FitState *s = (FitState *) job;

  s->result = airy_fit_stack (s->system, s->beads, &s->options, job->cancellable, &s->error);
}

/* the bead stack: a path (str, bytes, os.PathLike) read through the format
 * table, or a float32 C-contiguous (z, y, x) buffer with its voxel size (µm,
 * 0: unknown, the system's) and the bit depth it was measured with */
static AiryStack *
beads_from (PyObject *obj, double dx, double dy, double dz, int bits)
{
  AiryStack *stack;
  GError *error = NULL;
  Py_buffer view;

  if (PyUnicode_Check (obj) || PyBytes_Check (obj) || PyObject_HasAttrString (obj, "__fspath__"))
    {
      PyObject *bytes;

      if (!PyUnicode_FSConverter (obj, &bytes))
        return NULL;
      Py_BEGIN_ALLOW_THREADS
      stack = airy_image_read (PyBytes_AS_STRING (bytes), &error);
      Py_END_ALLOW_THREADS
      if (stack == NULL)
        _airy_py_raise (error, PyBytes_AS_STRING (bytes));
      Py_DECREF (bytes);
      return stack;
    }
  if (PyObject_GetBuffer (obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
    return NULL;
  if (view.ndim != 3 || view.itemsize != 4 || view.format == NULL || strcmp (view.format, "f") != 0
      || view.shape[0] < 1 || view.shape[1] < 1 || view.shape[2] < 1)
    {
      PyBuffer_Release (&view);
      _airy_py_raise_printf (PyExc_TypeError, "%s", _("stack: must be float32 with 3 dimensions (z, y, x), none empty"));
      return NULL;
    }
  stack = airy_stack_new (view.shape[0], view.shape[1], view.shape[2]);
  memcpy (stack->data, view.buf, view.len);
  PyBuffer_Release (&view);
  stack->dx = dx;
  stack->dy = dy > 0 ? dy : dx;
  stack->dz = dz;
  stack->bits = bits;
  return stack;
}

/* the options of fit(), each checked by its declared range */
static int
parse_options (FitState *s, PyObject *kwargs, PyObject **progress)
{
  static char *keywords[] = { "zernike", "crop", "crop_at", "objective", "gain", "offset", "restarts",
                              "max_iterations", "seed", "threads", "backend", "device", "progress", NULL };
  long long zernike = 14, crop = 0, restarts = 0, iterations = 0, seed = 0, threads = 0, device = 0;
  PyObject *crop_at = Py_None, *empty = PyTuple_New (0);
  const char *objective = "auto", *backend = "auto";
  double gain = 0.0, offset = NAN;
  int ok;

  ok = PyArg_ParseTupleAndKeywords (empty, kwargs, "|$LLOsddLLLLsLO:fit", keywords, &zernike, &crop, &crop_at,
                                    &objective, &gain, &offset, &restarts, &iterations, &seed, &threads, &backend,
                                    &device, progress);
  Py_DECREF (empty);
  if (!ok
      || _airy_py_check_option ("fit-zernike", zernike, "zernike") < 0
      || _airy_py_check_option ("fit-crop", crop, "crop") < 0
      || _airy_py_check_option ("fit-restarts", restarts, "restarts") < 0
      || _airy_py_check_option ("fit-max-iterations", iterations, "max_iterations") < 0
      || _airy_py_check_option ("fit-seed", seed, "seed") < 0
      || _airy_py_check_option ("threads", threads, "threads") < 0
      || _airy_py_check_option ("device", device, "device") < 0
      || _airy_py_check_backend (backend, "backend") < 0)
    return -1;
  if (g_str_equal (objective, "poisson"))
    s->options.objective = AIRY_FIT_OBJECTIVE_POISSON;
  else if (g_str_equal (objective, "least-squares"))
    s->options.objective = AIRY_FIT_OBJECTIVE_LEAST_SQUARES;
  else if (!g_str_equal (objective, "auto"))
    {
      _airy_py_raise_printf (PyExc_ValueError, _("objective: must be one of auto, poisson, least-squares, got \"%s\""), objective);
      return -1;
    }
  if (gain != 0.0 && !(gain > 0 && isfinite (gain)))
    {
      _airy_py_raise_printf (PyExc_ValueError, _("gain: must be a number > 0 (ADU per photon), got %g"), gain);
      return -1;
    }
  if (isinf (offset))
    {
      _airy_py_raise_printf (PyExc_ValueError, _("offset: must be a finite number (ADU), got %g"), offset);
      return -1;
    }
  if (crop_at != Py_None)
    {
      unsigned int x, y;

      if (!PyArg_ParseTuple (crop_at, "II:crop_at", &x, &y))
        {
          PyErr_Clear ();
          _airy_py_raise_printf (PyExc_TypeError, "%s", _("crop_at: must be None or a pixel (x, y) of two ints ≥ 0"));
          return -1;
        }
      s->options.crop_at = TRUE;
      s->options.crop_x = x;
      s->options.crop_y = y;
    }
  if (*progress != Py_None && !PyCallable_Check (*progress))
    {
      _airy_py_raise_printf (PyExc_TypeError, "%s", _("progress: must be callable(start, iteration, loss) or None"));
      return -1;
    }
  s->options.zernike_max = (guint) zernike;
  s->options.crop = (guint) crop;
  s->options.gain = gain;
  s->options.offset = offset;
  s->options.restarts = (guint) restarts;
  s->options.max_iterations = (guint) iterations;
  s->options.seed = (guint) seed;
  s->options.threads = (guint) threads;
  s->options.backend = backend;
  s->options.device = (guint) device;
  return 0;
}

/* (fitted System, report JSON, model Stack, residual Stack, [warnings]) of
 * a result (freed) */
static PyObject *
fit_tuple (FitState *s)
{
  GError *error = NULL;
  AirySystem *fitted = airy_fit_result_apply (s->result, s->system, &error);
  g_autofree char *report = airy_fit_result_to_json (s->result);
  PyObject *system = _airy_py_system_wrap (fitted, error), *warnings, *model, *residual;

  if (system == NULL)
    return NULL;
  warnings = PyList_New (0);
  for (guint i = 0; warnings != NULL && i < s->result->warnings->len; i++)
    {
      PyObject *w = PyUnicode_FromString (g_ptr_array_index (s->result->warnings, i));

      PyList_Append (warnings, w);
      Py_XDECREF (w);
    }
  model = _airy_py_stack_wrap (NULL, g_steal_pointer (&s->result->model));
  residual = _airy_py_stack_wrap (NULL, g_steal_pointer (&s->result->residual));
  return Py_BuildValue ("(NsNNN)", system, report, model, residual, warnings);
}

/* fit(system, stack or path, dx, dy, dz, bits, *, options…) */
PyObject *
_airy_py_fit (PyObject *module, PyObject *args, PyObject *kwargs)
{
  PyObject *native, *obj, *progress = Py_None, *ret;
  double dx, dy, dz;
  int bits;
  FitState s = { { fit_work } };
  g_autoptr(AiryStack) beads = NULL;

  if (!PyArg_ParseTuple (args, "OOdddi:fit", &native, &obj, &dx, &dy, &dz, &bits))
    return NULL;
  airy_fit_options_init (&s.options);
  if ((s.system = _airy_py_system_get (native, "system")) == NULL || parse_options (&s, kwargs, &progress) < 0
      || (beads = beads_from (obj, dx, dy, dz, bits)) == NULL)
    return NULL;
  s.system = g_object_ref (s.system);
  s.beads = beads;
  s.options.progress = progress != Py_None ? fit_progress : NULL;
  s.options.user_data = &s.job;
  if (_airy_py_job_run (&s.job, progress, TRUE) < 0)
    {
      g_clear_error (&s.error);
      g_clear_pointer (&s.result, airy_fit_result_free);
      g_object_unref (s.system);
      return NULL;
    }
  if (s.result == NULL)
    ret = _airy_py_raise (s.error, NULL);
  else
    ret = fit_tuple (&s);
  g_clear_pointer (&s.result, airy_fit_result_free);
  g_object_unref (s.system);
  return ret;
}
