/* airy._airy: the engine in-process for Python (issue 31). Systems, runs
 * (GIL released, Ctrl-C cancels), stacks exported through the buffer
 * protocol without a copy, the format table's readers and writers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "config.h"

#include <glib/gi18n-lib.h>
#include <locale.h>
#include <glib/gstdio.h>

#include "airy.h"
#include "airy-options-private.h"
#include "airy-python-private.h"

/* ---- errors ---------------------------------------------------------- */

static PyObject *
raise_gerror (GError *error, const char *path)
{
  PyObject *type = PyExc_RuntimeError;

  if (error->domain == AIRY_ERROR)
    switch (error->code)
      {
      case AIRY_ERROR_INVALID_VALUE:
      case AIRY_ERROR_PARSE:
      case AIRY_ERROR_UNKNOWN_KEY:
      case AIRY_ERROR_UNKNOWN_TYPE:
      case AIRY_ERROR_NOT_FINITE:
        type = PyExc_ValueError;
        break;
      case AIRY_ERROR_WRONG_TYPE:
        type = PyExc_TypeError;
        break;
      case AIRY_ERROR_FILE:
        type = (path != NULL && !g_file_test (path, G_FILE_TEST_EXISTS))
               ? PyExc_FileNotFoundError : PyExc_OSError;
        break;
      case AIRY_ERROR_WRITE:
        type = PyExc_OSError;
        break;
      case AIRY_ERROR_BUDGET:
        type = PyExc_MemoryError;
        break;
      default:
        break;
      }
  else if (g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
           || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    type = PyExc_FileNotFoundError;
  else if (error->domain == G_FILE_ERROR || error->domain == G_IO_ERROR)
    type = PyExc_OSError;
  PyErr_SetString (type, error->message);
  g_error_free (error);
  return NULL;
}

PyObject *
_airy_py_raise (GError *error, const char *path)
{
  return raise_gerror (error, path);
}

PyObject *
_airy_py_raise_printf (PyObject *type, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  PyErr_SetString (type, message);
  return NULL;
}

int
_airy_py_check_option (const char *name, long long value, const char *argument)
{
  GError *error = NULL;

  if (_airy_option_check_int (name, value, argument, &error))
    return 0;
  raise_gerror (error, NULL);
  return -1;
}

int
_airy_py_check_backend (const char *name, const char *argument)
{
  GError *error = NULL;

  if (_airy_option_check_backend (name, argument, &error))
    return 0;
  raise_gerror (error, NULL);
  return -1;
}

/* ---- Stack: a float32 (z, y, x) buffer over an engine stack ------------ */

typedef struct
{
  PyObject_HEAD
  AiryResult *result;   /* owner of stack, or NULL */
  AiryStack  *stack;    /* owned when result is NULL */
  Py_ssize_t  shape[3];
  Py_ssize_t  strides[3];
  Py_ssize_t  exports;
} StackObject;

static PyTypeObject StackType;

static PyObject *
stack_wrap (AiryResult *result, AiryStack *stack)
{
  StackObject *self = PyObject_New (StackObject, &StackType);

  if (self == NULL)
    {
      if (result != NULL)
        airy_result_free (result);
      else
        airy_stack_free (stack);
      return NULL;
    }
  self->result = result;
  self->stack = stack;
  self->shape[0] = stack->depth;
  self->shape[1] = stack->height;
  self->shape[2] = stack->width;
  self->strides[2] = sizeof (float);
  self->strides[1] = (Py_ssize_t) stack->width * sizeof (float);
  self->strides[0] = (Py_ssize_t) stack->height * stack->width * sizeof (float);
  self->exports = 0;
  return (PyObject *) self;
}

PyObject *
_airy_py_stack_wrap (AiryResult *result, AiryStack *stack)
{
  return stack_wrap (result, stack);
}

static void
stack_dealloc (StackObject *self)
{
  if (self->result != NULL)
    airy_result_free (self->result);
  else if (self->stack != NULL)
    airy_stack_free (self->stack);
  PyObject_Free (self);
}

static int
stack_getbuffer (StackObject *self, Py_buffer *view, int flags)
{
  if (self->stack->data == NULL)
    {
      PyErr_SetString (PyExc_BufferError, "the stack has no pixels");
      return -1;
    }
  view->obj = Py_NewRef ((PyObject *) self);
  view->buf = self->stack->data;
  view->len = self->shape[0] * self->strides[0];
  view->readonly = 0;
  view->itemsize = sizeof (float);
  view->format = (flags & PyBUF_FORMAT) ? (char *) "f" : NULL;
  view->ndim = 3;
  view->shape = (flags & PyBUF_ND) ? self->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? self->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  self->exports++;
  return 0;
}

static void
stack_releasebuffer (StackObject *self, Py_buffer *view)
{
  self->exports--;
}

static PyBufferProcs stack_as_buffer = {
  (getbufferproc) stack_getbuffer,
  (releasebufferproc) stack_releasebuffer,
};

static PyObject *
stack_get_spacing (StackObject *self, void *closure)
{
  return Py_BuildValue ("(ddd)", self->stack->dz, self->stack->dy, self->stack->dx);
}

static PyObject *
stack_get_z (StackObject *self, void *closure)
{
  PyObject *list = PyList_New (self->stack->depth);

  for (guint k = 0; list != NULL && k < self->stack->depth; k++)
    {
      double z = self->stack->z != NULL ? self->stack->z[k]
                                        : self->stack->z0 + k * self->stack->dz;
      PyList_SET_ITEM (list, k, PyFloat_FromDouble (z));
    }
  return list;
}

static PyObject *
stack_get_address (StackObject *self, void *closure)
{
  return PyLong_FromVoidPtr (self->stack->data);
}

static PyObject *
stack_get_system_json (StackObject *self, void *closure)
{
  if (self->stack->system_json == NULL)
    Py_RETURN_NONE;
  return PyUnicode_FromString (self->stack->system_json);
}

static PyObject *
stack_get_seconds (StackObject *self, void *closure)
{
  if (self->result == NULL)
    Py_RETURN_NONE;
  return PyFloat_FromDouble (self->result->seconds);
}

static PyGetSetDef stack_getset[] = {
  { "seconds", (getter) stack_get_seconds, NULL, "the engine's run time", NULL },
  { "spacing", (getter) stack_get_spacing, NULL, "(dz, dy, dx) in µm", NULL },
  { "z", (getter) stack_get_z, NULL, "z of each plane, µm", NULL },
  { "address", (getter) stack_get_address, NULL, "address of the first pixel", NULL },
  { "system_json", (getter) stack_get_system_json, NULL, "provenance", NULL },
  { NULL },
};

static PyObject *
stack_save (StackObject *self, PyObject *args)
{
  const char *path;
  GError *error = NULL;
  gboolean ok;

  if (!PyArg_ParseTuple (args, "s:save", &path))
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  ok = airy_image_write (path, self->stack, NULL, &error);
  Py_END_ALLOW_THREADS
  if (!ok)
    return raise_gerror (error, NULL);
  Py_RETURN_NONE;
}

/* The plane as a colormapped PNG (bytes), its range from its own values. */
static PyObject *
stack_png (StackObject *self, PyObject *args)
{
  unsigned int plane;
  GError *error = NULL;
  char *path = NULL;
  char *bytes = NULL;
  gsize len = 0;
  PyObject *ret;
  int fd;

  if (!PyArg_ParseTuple (args, "I:png", &plane))
    return NULL;
  if (plane >= self->stack->depth)
    {
      PyErr_Format (PyExc_ValueError, "plane: must be in [0, %u], got %u",
                    self->stack->depth - 1, plane);
      return NULL;
    }
  fd = g_file_open_tmp ("airy-XXXXXX.png", &path, &error);
  if (fd < 0)
    return raise_gerror (error, NULL);
  close (fd);
  {
    const float *p = airy_stack_plane (self->stack, plane);
    gsize n = airy_stack_plane_size (self->stack);
    float lo = p[0], hi = p[0];
    for (gsize i = 1; i < n; i++)
      {
        lo = MIN (lo, p[i]);
        hi = MAX (hi, p[i]);
      }
    if (hi <= lo)
      hi = lo + 1.0f;
    if (!airy_png_write_colormapped (path, p, self->stack->height, self->stack->width,
                                     self->stack->dx, AIRY_COLORMAP_INFERNO, lo, hi, &error)
        || !g_file_get_contents (path, &bytes, &len, &error))
      {
        g_unlink (path);
        g_free (path);
        return raise_gerror (error, NULL);
      }
  }
  g_unlink (path);
  g_free (path);
  ret = PyBytes_FromStringAndSize (bytes, len);
  g_free (bytes);
  return ret;
}

static PyMethodDef stack_methods[] = {
  { "save", (PyCFunction) stack_save, METH_VARARGS, "save(path): through the format table" },
  { "png", (PyCFunction) stack_png, METH_VARARGS, "png(plane) -> bytes" },
  { NULL },
};

static PyTypeObject StackType = {
  PyVarObject_HEAD_INIT (NULL, 0)
  .tp_name = "airy._airy.Stack",
  .tp_basicsize = sizeof (StackObject),
  .tp_dealloc = (destructor) stack_dealloc,
  .tp_as_buffer = &stack_as_buffer,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "An engine stack, float32 (z, y, x), exported without a copy",
  .tp_getset = stack_getset,
  .tp_methods = stack_methods,
};

/* ---- System ---------------------------------------------------------- */

typedef struct
{
  PyObject_HEAD
  AirySystem *system;
} SystemObject;

static PyTypeObject SystemType;

static PyObject *
system_wrap (AirySystem *system, GError *error, const char *path)
{
  SystemObject *self;

  if (system == NULL)
    return raise_gerror (error, path);
  self = PyObject_New (SystemObject, &SystemType);
  if (self == NULL)
    {
      g_object_unref (system);
      return NULL;
    }
  self->system = system;
  return (PyObject *) self;
}

PyObject *
_airy_py_system_wrap (AirySystem *system, GError *error)
{
  return system_wrap (system, error, NULL);
}

AirySystem *
_airy_py_system_get (PyObject *object, const char *argument)
{
  if (!PyObject_TypeCheck (object, &SystemType))
    {
      PyErr_Format (PyExc_TypeError, "%s: must be an airy.System, got %s", argument, Py_TYPE (object)->tp_name);
      return NULL;
    }
  return ((SystemObject *) object)->system;
}

static void
system_dealloc (SystemObject *self)
{
  g_clear_object (&self->system);
  PyObject_Free (self);
}

static PyObject *
system_to_json (SystemObject *self, PyObject *unused)
{
  g_autofree char *json = airy_system_to_json (self->system);
  return PyUnicode_FromString (json);
}

typedef struct
{
  AiryPyJob       job;          /* first: the worker gets &job */
  AirySystem     *system;
  AiryRunOptions  options;
  AiryResult     *result;
  GError         *error;
} RunState;

static void
run_progress (guint done, guint total, gpointer user_data)
{
  _airy_py_job_report (user_data, done, total, 0.0);
}

static void
run_work (AiryPyJob *job)
{
  RunState *s = (RunState *) job;

  s->result = airy_run (s->system, &s->options, run_progress, s, job->cancellable, &s->error);
}

/* devices: None (the backend's), a count n (devices 0 … n − 1) or a list
 * of device indices, each checked by the option table's ranges */
static GArray *
parse_devices (PyObject *devices)
{
  g_autoptr(GArray) out = g_array_new (FALSE, FALSE, sizeof (guint));
  PyObject *seq;

  if (devices == Py_None)
    return g_steal_pointer (&out);
  if (PyLong_Check (devices) && !PyBool_Check (devices))
    {
      long long n = PyLong_AsLongLong (devices);

      if ((n == -1 && PyErr_Occurred ()) || _airy_py_check_option ("devices", n, "devices") < 0)
        return NULL;
      for (guint i = 0; i < n; i++)
        g_array_append_val (out, i);
      return g_steal_pointer (&out);
    }
  if (PyUnicode_Check (devices) || PyBytes_Check (devices)
      || (seq = PySequence_Fast (devices, "")) == NULL)
    {
      PyErr_Clear ();
      _airy_py_raise_printf (PyExc_TypeError, _("devices: must be None, a count or a list of device indices, got %s"),
                    Py_TYPE (devices)->tp_name);
      return NULL;
    }
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE (seq); i++)
    {
      PyObject *item = PySequence_Fast_GET_ITEM (seq, i);
      g_autofree char *as = g_strdup_printf ("devices[%zd]", i);
      long long d;

      if (!PyLong_Check (item) || PyBool_Check (item))
        {
          _airy_py_raise_printf (PyExc_TypeError, _("%s: must be a device index (int), got %s"), as,
                                 Py_TYPE (item)->tp_name);
          Py_DECREF (seq);
          return NULL;
        }
      d = PyLong_AsLongLong (item);
      if ((d == -1 && PyErr_Occurred ()) || _airy_py_check_option ("device", d, as) < 0)
        {
          Py_DECREF (seq);
          return NULL;
        }
      g_array_append_val (out, (guint) { d });
    }
  Py_DECREF (seq);
  if (out->len == 0)
    {
      _airy_py_raise_printf (PyExc_ValueError, "%s", _("devices: give at least one device index, got an empty list"));
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* (intensity, [channels…], warnings) of a run's result (stolen) */
static PyObject *
run_tuple (AiryResult *result)
{
  PyObject *ret = PyTuple_New (3);
  PyObject *chans = PyList_New (0);
  PyObject *warns = PyList_New (0);

  for (guint c = 0; c < result->n_channels; c++)
    {
      PyObject *v = stack_wrap (airy_result_ref (result), result->channels[c]);
      PyList_Append (chans, v);
      Py_DECREF (v);
    }
  for (guint w = 0; result->warnings != NULL && w < result->warnings->len; w++)
    {
      PyObject *v = PyUnicode_FromString (g_ptr_array_index (result->warnings, w));
      PyList_Append (warns, v);
      Py_DECREF (v);
    }
  PyTuple_SET_ITEM (ret, 0, stack_wrap (result, result->stack));
  PyTuple_SET_ITEM (ret, 1, chans);
  PyTuple_SET_ITEM (ret, 2, warns);
  return ret;
}

static PyObject *
system_run (SystemObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "backend", "threads", "progress", "channels", "devices", NULL };
  const char *backend = "auto";
  long long threads = 0;
  PyObject *progress = Py_None, *devices_arg = Py_None;
  int channels = 0;
  g_autoptr(GArray) devices = NULL;
  RunState s = { { run_work } };

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "|sLOpO:run", keywords,
                                    &backend, &threads, &progress, &channels, &devices_arg))
    return NULL;
  if (_airy_py_check_option ("threads", threads, "threads") < 0
      || _airy_py_check_backend (backend, "backend") < 0
      || (devices = parse_devices (devices_arg)) == NULL)
    return NULL;
  if (progress != Py_None && !PyCallable_Check (progress))
    {
      PyErr_SetString (PyExc_TypeError, "progress: must be callable(done, total) or None");
      return NULL;
    }
  s.system = g_object_ref (self->system);
  s.options.backend = backend;
  s.options.threads = (guint) threads;
  s.options.per_wavelength = channels;
  s.options.devices = devices->len ? (const guint *) devices->data : NULL;
  s.options.n_devices = devices->len;
  if (_airy_py_job_run (&s.job, progress, FALSE) < 0)
    {
      g_object_unref (s.system);
      g_clear_error (&s.error);
      g_clear_pointer (&s.result, airy_result_free);
      return NULL;
    }
  g_object_unref (s.system);
  if (s.result == NULL)
    return raise_gerror (s.error, NULL);
  return run_tuple (s.result);
}

/* A copy with other z planes (the system itself is left as it is). */
static PyObject *
system_with_z (SystemObject *self, PyObject *arg)
{
  PyObject *seq = PySequence_Fast (arg, "z: must be a sequence of numbers (µm)");
  Py_ssize_t n;
  double *values;
  AirySystem *copy;

  if (seq == NULL)
    return NULL;
  n = PySequence_Fast_GET_SIZE (seq);
  if (n < 1)
    {
      Py_DECREF (seq);
      PyErr_SetString (PyExc_ValueError, "z: must hold at least one plane, got none");
      return NULL;
    }
  values = g_new (double, n);
  for (Py_ssize_t i = 0; i < n; i++)
    {
      values[i] = PyFloat_AsDouble (PySequence_Fast_GET_ITEM (seq, i));
      if (values[i] == -1.0 && PyErr_Occurred ())
        {
          g_free (values);
          Py_DECREF (seq);
          PyErr_Format (PyExc_TypeError, "z[%zd]: must be a number (µm)", i);
          return NULL;
        }
    }
  Py_DECREF (seq);
  copy = airy_system_copy (self->system);
  airy_system_set_z_values (copy, values, n);
  g_free (values);
  return system_wrap (copy, NULL, NULL);
}

static PyObject *
system_validate (SystemObject *self, PyObject *unused)
{
  GError *error = NULL;
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);

  if (!airy_system_validate (self->system, warnings, &error))
    return raise_gerror (error, NULL);
  Py_RETURN_NONE;
}

static PyObject *
system_base_dir (SystemObject *self, PyObject *unused)
{
  const char *dir = airy_system_get_base_dir (self->system);

  if (dir == NULL)
    Py_RETURN_NONE;
  return PyUnicode_FromString (dir);
}

static PyMethodDef system_methods[] = {
  { "base_dir", (PyCFunction) system_base_dir, METH_NOARGS, "the folder its files are relative to, or None" },
  { "to_json", (PyCFunction) system_to_json, METH_NOARGS, "the system as JSON" },
  { "run", (PyCFunction) (void (*) (void)) system_run, METH_VARARGS | METH_KEYWORDS,
    "run(backend='auto', threads=0, progress=None, channels=False, devices=None)" },
  { "with_z", (PyCFunction) system_with_z, METH_O, "a copy with these z planes" },
  { "validate", (PyCFunction) system_validate, METH_NOARGS, "checks what a run checks" },
  { NULL },
};

static PyTypeObject SystemType = {
  PyVarObject_HEAD_INIT (NULL, 0)
  .tp_name = "airy._airy.System",
  .tp_basicsize = sizeof (SystemObject),
  .tp_dealloc = (destructor) system_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "An engine system (airy.System wraps it)",
  .tp_methods = system_methods,
};

/* ---- module functions ------------------------------------------------ */

static PyObject *
mod_from_file (PyObject *mod, PyObject *arg)
{
  PyObject *bytes;
  AirySystem *sys;
  GError *error = NULL;
  PyObject *ret;

  if (!PyUnicode_FSConverter (arg, &bytes))
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  sys = airy_system_new_from_file (PyBytes_AS_STRING (bytes), &error);
  Py_END_ALLOW_THREADS
  ret = system_wrap (sys, error, PyBytes_AS_STRING (bytes));
  Py_DECREF (bytes);
  return ret;
}

static PyObject *
mod_from_json (PyObject *mod, PyObject *args)
{
  const char *json, *base_dir = NULL;
  Py_ssize_t len;
  GError *error = NULL;
  AirySystem *sys;

  if (!PyArg_ParseTuple (args, "s#|z:from_json", &json, &len, &base_dir))
    return NULL;
  sys = airy_system_new_from_data (json, len, base_dir, "<python>", &error);
  return system_wrap (sys, error, NULL);
}

static PyObject *
mod_preset (PyObject *mod, PyObject *args)
{
  const char *name;
  GError *error = NULL;
  AirySystem *sys;

  if (!PyArg_ParseTuple (args, "s:preset", &name))
    return NULL;
  sys = airy_system_new_from_preset (name, &error);
  return system_wrap (sys, error, NULL);
}

static PyObject *
mod_presets (PyObject *mod, PyObject *unused)
{
  g_auto (GStrv) names = airy_presets_list ();
  PyObject *list = PyList_New (0);

  for (guint i = 0; names != NULL && names[i] != NULL; i++)
    {
      PyObject *s = PyUnicode_FromString (names[i]);
      PyList_Append (list, s);
      Py_DECREF (s);
    }
  return list;
}

static PyObject *
mod_read (PyObject *mod, PyObject *arg)
{
  PyObject *bytes;
  AiryStack *stack;
  GError *error = NULL;
  PyObject *ret;

  if (!PyUnicode_FSConverter (arg, &bytes))
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  stack = airy_image_read (PyBytes_AS_STRING (bytes), &error);
  Py_END_ALLOW_THREADS
  ret = stack == NULL ? raise_gerror (error, PyBytes_AS_STRING (bytes)) : stack_wrap (NULL, stack);
  Py_DECREF (bytes);
  return ret;
}

/* A float32 C-contiguous (z, y, x) buffer to a file, with its spacing. */
static PyObject *
mod_write (PyObject *mod, PyObject *args)
{
  const char *path;
  PyObject *obj;
  Py_buffer view;
  double dx, dz = 1.0;
  GError *error = NULL;
  AiryStack *stack;
  gboolean ok;

  if (!PyArg_ParseTuple (args, "sOd|d:write", &path, &obj, &dx, &dz))
    return NULL;
  if (PyObject_GetBuffer (obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
    return NULL;
  if (view.ndim != 3 || view.itemsize != 4 || view.format == NULL || strcmp (view.format, "f") != 0)
    {
      PyBuffer_Release (&view);
      PyErr_SetString (PyExc_TypeError, "array: must be float32 with 3 dimensions (z, y, x)");
      return NULL;
    }
  stack = airy_stack_new (view.shape[0], view.shape[1], view.shape[2]);
  memcpy (stack->data, view.buf, view.len);
  PyBuffer_Release (&view);
  stack->dx = stack->dy = dx;
  stack->dz = dz;
  ok = airy_image_write (path, stack, NULL, &error);
  airy_stack_free (stack);
  if (!ok)
    return raise_gerror (error, NULL);
  Py_RETURN_NONE;
}

static PyObject *
mod_backends (PyObject *mod, PyObject *unused)
{
  g_autoptr (GPtrArray) list = airy_backend_list ();
  PyObject *ret = PyList_New (0);

  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      AiryBackend *b = g_ptr_array_index (list, i);
      const char *why = airy_backend_get_unavailable_reason (b);
      PyObject *d = Py_BuildValue ("{s:s,s:s,s:O,s:I,s:z}",
                                   "name", airy_backend_get_name (b),
                                   "description", airy_backend_get_description (b),
                                   "available", airy_backend_is_available (b) ? Py_True : Py_False,
                                   "devices", airy_backend_n_devices (b),
                                   "unavailable_reason", why);
      PyList_Append (ret, d);
      Py_DECREF (d);
    }
  return ret;
}

/* The engine's messages in the language the environment asks for: its
 * gettext domain bound to dir. Python sets only LC_CTYPE from the
 * environment, so LC_MESSAGES is taken from it here, unless a program set
 * it already; LANGUAGE alone in a C locale (a container, a minimal system)
 * takes C.UTF-8, which honours it and keeps C's formats, as the apps do. */
static PyObject *
mod_bind_locale (PyObject *mod, PyObject *args)
{
  const char *dir, *now, *language = g_getenv ("LANGUAGE");

  if (!PyArg_ParseTuple (args, "s:bind_locale", &dir))
    return NULL;
  now = setlocale (LC_MESSAGES, NULL);
  if (now == NULL || g_str_equal (now, "C") || g_str_equal (now, "POSIX"))
    {
      const char *l = setlocale (LC_MESSAGES, "");

      if (language && *language && (l == NULL || g_str_equal (l, "C") || g_str_equal (l, "POSIX"))
          && !g_getenv ("LC_ALL") && !g_getenv ("LC_MESSAGES"))
        setlocale (LC_MESSAGES, "C.UTF-8");
    }
  bindtextdomain (GETTEXT_PACKAGE, dir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
  { "bind_locale", mod_bind_locale, METH_VARARGS, "bind_locale(dir): the engine's translations from dir" },
  { "from_file", mod_from_file, METH_O, "a system from a file" },
  { "from_json", mod_from_json, METH_VARARGS, "a system from JSON text" },
  { "preset", mod_preset, METH_VARARGS, "a built-in system" },
  { "presets", mod_presets, METH_NOARGS, "the preset names" },
  { "read", mod_read, METH_O, "a stack from a file of any format" },
  { "write", mod_write, METH_VARARGS, "write(path, float32 array, dx, dz=1)" },
  { "backends", mod_backends, METH_NOARGS, "the registered backends" },
  { "grad", _airy_py_grad, METH_VARARGS, "grad(json, base_dir, loss, paths, threads)" },
  { "fit", (PyCFunction) (void (*) (void)) _airy_py_fit, METH_VARARGS | METH_KEYWORDS,
    "fit(system, stack or path, dx, dy, dz, bits, **options) -> (System, report JSON, model, residual, warnings)" },
  { "optimize", _airy_py_optimize, METH_VARARGS,
    "optimize(json, base_dir, loss, paths, optimizer, steps, lr, bounds, threads, pixel_dir)" },
  { NULL },
};

static struct PyModuleDef airy_module = {
  PyModuleDef_HEAD_INIT, "_airy", "Airy's engine (libairy)", -1, module_methods,
};

PyMODINIT_FUNC PyInit__airy (void);

PyMODINIT_FUNC
PyInit__airy (void)
{
  PyObject *m;

  if (PyType_Ready (&StackType) < 0 || PyType_Ready (&SystemType) < 0)
    return NULL;
  airy_init ();
  _airy_py_job_init_pool ();
  m = PyModule_Create (&airy_module);
  if (m == NULL)
    return NULL;
  PyModule_AddObjectRef (m, "Stack", (PyObject *) &StackType);
  PyModule_AddObjectRef (m, "System", (PyObject *) &SystemType);
  PyModule_AddStringConstant (m, "version", airy_version_string ());
  PyModule_AddStringConstant (m, "localedir", LOCALEDIR);
  PyModule_AddStringConstant (m, "gettext_domain", GETTEXT_PACKAGE);
  return m;
}
