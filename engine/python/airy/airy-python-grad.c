/* airy._airy's gradient and optimizer (issue #28): the engine's reverse
 * pass and optimizer (engine/airy-grad-private.h,
 * engine/airy-optimize-private.h) on a system's JSON. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#include "airy.h"
#include "airy-grad-private.h"
#include "airy-optimize-private.h"
#include "airy-python-private.h"

/* The system of json (base_dir for its files) and its JSON with every
 * parameter written, so that any number is a path into it. */
static gboolean
load (const char *json, const char *base_dir, AirySystem **system, JsonNode **root, GError **error)
{
  g_autofree char *full = NULL;

  if ((*system = airy_system_new_from_data (json, -1, base_dir, NULL, error)) == NULL)
    return FALSE;
  full = airy_system_to_json_full (*system);
  *root = json_from_string (full, error);
  return *root != NULL;
}

/* paths: a list of str, or None for every differentiable number */
static GPtrArray *
variables (JsonNode *root, AirySystem *system, PyObject *paths, GError **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) strv = NULL;
  Py_ssize_t i;

  if (paths == Py_None)
    return _airy_grad_vars_all (root, system);
  for (i = 0; i < PyList_Size (paths); i++)
    {
      const char *p = PyUnicode_AsUTF8 (PyList_GetItem (paths, i));

      if (p == NULL)
        return NULL;
      g_strv_builder_add (builder, p);
    }
  strv = g_strv_builder_end (builder);
  return _airy_grad_vars_from_paths (root, system, (const char *const *) strv, error);
}

/* grad(json, base_dir, loss, paths or None, threads) → (loss, {path: float
 * or Stack}) */
PyObject *
_airy_py_grad (PyObject *module, PyObject *args)
{
  const char *json, *base_dir, *spec;
  PyObject *paths, *grads, *out;
  unsigned int threads;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GPtrArray) vars = NULL;
  GError *error = NULL;
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 1 };
  double value = 0;
  gboolean ok;
  guint i;

  if (!PyArg_ParseTuple (args, "szsOI", &json, &base_dir, &spec, &paths, &threads))
    return NULL;
  if (paths != Py_None && !PyList_Check (paths))
    return PyErr_Format (PyExc_TypeError, "vary: must be a list of paths or None");
  if (!load (json, base_dir, &system, &root, &error) || (loss = _airy_loss_new_from_spec (spec, &error)) == NULL)
    return _airy_py_raise (error, NULL);
  if ((vars = variables (root, system, paths, &error)) == NULL)
    return PyErr_Occurred () ? NULL : _airy_py_raise (error, NULL);
  options.threads = MAX (threads, 1);
  Py_BEGIN_ALLOW_THREADS
  /* without paths, the numbers the pass cannot follow here are left out */
  while (!(ok = _airy_grad_compute (system, root, base_dir, loss, vars, &options, &value, NULL, &error))
         && paths == Py_None && _airy_grad_vars_refused (vars, error) >= 0)
    {
      g_ptr_array_remove_index (vars, _airy_grad_vars_refused (vars, error));
      g_clear_error (&error);
    }
  Py_END_ALLOW_THREADS
  if (!ok)
    return _airy_py_raise (error, NULL);
  if ((grads = PyDict_New ()) == NULL)
    return NULL;
  for (i = 0; i < vars->len; i++)
    {
      AiryGradVar *var = g_ptr_array_index (vars, i);
      PyObject *g = var->pixels ? _airy_py_stack_wrap (NULL, g_steal_pointer (&var->grad_pixels))
                                : PyFloat_FromDouble (var->grad);

      if (g == NULL || PyDict_SetItemString (grads, var->path, g) < 0)
        {
          Py_XDECREF (g);
          Py_DECREF (grads);
          return NULL;
        }
      Py_DECREF (g);
    }
  out = Py_BuildValue ("(dN)", value, grads);
  return out;
}

/* Ctrl-C between steps stops the optimizer, which keeps the best point */
static gboolean
on_step (AiryOptimizer *o, const AiryOptimizeStep *s, gpointer user_data)
{
  gboolean *interrupted = user_data;
  PyGILState_STATE state = PyGILState_Ensure ();

  if (PyErr_CheckSignals () != 0)
    {
      PyErr_Clear ();
      *interrupted = TRUE;
    }
  PyGILState_Release (state);
  return !*interrupted;
}

static gboolean
apply_bounds (GPtrArray *vars, PyObject *bounds, GError **error)
{
  guint i;

  for (i = 0; bounds != Py_None && i < vars->len; i++)
    {
      AiryGradVar *var = g_ptr_array_index (vars, i);
      PyObject *b = PyDict_GetItemString (bounds, var->path);
      double lo, hi;

      if (b == NULL)
        continue;
      if (!PyArg_ParseTuple (b, "dd", &lo, &hi))
        return FALSE;
      if (!_airy_grad_var_set_bounds (var, lo, hi, error))
        return FALSE;
    }
  return TRUE;
}

/* optimize(json, base_dir, loss, paths, optimizer, steps, lr, bounds, threads,
 * pixel_dir) → (the best system's JSON, the report's JSON); a pixel
 * variable's best phase is written to pixel_dir, which the JSON names */
PyObject *
_airy_py_optimize (PyObject *module, PyObject *args)
{
  const char *json, *base_dir, *spec, *name, *pixel_dir;
  PyObject *paths, *bounds;
  unsigned int steps, threads;
  double lr;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(JsonNode) root = NULL, best = NULL;
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GPtrArray) vars = NULL;
  g_autoptr(AiryOptimizer) o = NULL;
  g_auto(GStrv) files = NULL;
  g_autofree char *best_json = NULL, *report = NULL;
  GError *error = NULL, *failure = NULL;
  AiryOptimizeEnd end;
  gboolean interrupted = FALSE;
  guint i;

  if (!PyArg_ParseTuple (args, "szsO!sIdOIs", &json, &base_dir, &spec, &PyList_Type, &paths, &name, &steps, &lr,
                         &bounds, &threads, &pixel_dir))
    return NULL;
  if (!load (json, base_dir, &system, &root, &error) || (loss = _airy_loss_new_from_spec (spec, &error)) == NULL)
    return _airy_py_raise (error, NULL);
  if ((vars = variables (root, system, paths, &error)) == NULL || !apply_bounds (vars, bounds, &error))
    return PyErr_Occurred () ? NULL : _airy_py_raise (error, NULL);
  if ((o = _airy_optimizer_new (root, base_dir, loss, vars, threads, &error)) == NULL)
    return _airy_py_raise (error, NULL);
  Py_BEGIN_ALLOW_THREADS
  end = _airy_optimizer_run (o, g_str_equal (name, "lbfgs") ? AIRY_OPTIMIZER_LBFGS : AIRY_OPTIMIZER_ADAM, steps, lr,
                             on_step, &interrupted, &failure);
  Py_END_ALLOW_THREADS
  if (end == AIRY_OPTIMIZE_FAILED && !isfinite (o->best_loss))
    return _airy_py_raise (failure, NULL);
  files = g_new0 (char *, vars->len + 1);
  for (i = 0; i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);
      g_autofree char *base = g_strdup_printf ("pixels-%u.tif", i);

      files[i] = var->pixels ? g_build_filename (pixel_dir, base, NULL) : g_strdup ("");
      if (var->pixels)
        {
          g_autoptr(AiryStack) px = _airy_optimizer_best_pixels (o, i);

          if (!airy_tiff_write (files[i], px, &error))
            {
              g_clear_error (&failure);
              return _airy_py_raise (error, files[i]);
            }
        }
    }
  best = _airy_optimizer_best_json (o, (const char *const *) files);
  best_json = json_to_string (best, FALSE);
  report = _airy_optimizer_report (o, (const char *const *) files, name,
                                   interrupted ? "interrupted" : _airy_optimize_end_name (end), failure);
  g_clear_error (&failure);
  return Py_BuildValue ("(ss)", best_json, report);
}
