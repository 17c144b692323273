#define G_LOG_DOMAIN "airy-grad"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-grad-ops-private.h"
#include "airy-image-file.h"
#include "airy-json-private.h"
#include "airy-param.h"

/* The variables of a gradient (paths of the system file) and the losses. */

void
_airy_grad_var_free (gpointer data)
{
  AiryGradVar *var = data;

  g_free (var->path);
  g_free (var->name);
  g_free (var->range);
  g_clear_pointer (&var->grad_pixels, airy_stack_free);
  g_free (var);
}

/* "elements[I].NAME" or "elements[I].NAME[J]" */
static gboolean
parse_path (const char *path, guint *element, char **name, gint *item)
{
  guint64 e;
  char *end;
  const char *dot, *br;

  if (!g_str_has_prefix (path, "elements["))
    return FALSE;
  e = g_ascii_strtoull (path + 9, &end, 10);
  if (end == path + 9 || *end != ']' || end[1] != '.' || e > G_MAXUINT)
    return FALSE;
  dot = end + 2;
  br = strchr (dot, '[');
  *element = (guint) e;
  *item = -1;
  if (br)
    {
      guint64 j = g_ascii_strtoull (br + 1, &end, 10);

      if (end == br + 1 || *end != ']' || end[1] != '\0' || j > G_MAXINT)
        return FALSE;
      *item = (gint) j;
      *name = g_strndup (dot, br - dot);
    }
  else
    *name = g_strdup (dot);
  return **name != '\0';
}

AiryGradVar *
_airy_grad_var_new (JsonNode *root, AirySystem *system, const char *path, GError **error)
{
  g_autoptr(GPtrArray) vars = NULL;
  GPtrArray *elements = airy_system_get_elements (system);
  AiryGradVar *var = g_new0 (AiryGradVar, 1);
  AiryElement *e;
  GParamSpec *pspec;
  const char *why = NULL;
  JsonNode *node;

  var->path = g_strdup (path);
  var->lo = -INFINITY;
  var->hi = INFINITY;
  if (!parse_path (path, &var->element, &var->name, &var->item) || var->element >= elements->len)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--vary %s: not a parameter of an element (elements[I].NAME or elements[I].NAME[J])"), path);
      goto fail;
    }
  e = g_ptr_array_index (elements, var->element);
  if (g_str_equal (var->name, "pixels") && var->item < 0)
    {
      const char *type = airy_element_get_type_name (e);

      if (!(g_str_equal (type, "amplitude-mask") || (g_str_equal (type, "phase-mask")
                                                     && airy_element_get_enum (e, "source") == AIRY_PHASE_IMAGE)))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--vary %s: %s has no pixels (an amplitude mask or an image phase mask has)"), path, type);
          goto fail;
        }
      var->pixels = TRUE;
      return var;
    }
  pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e), var->name);
  if (pspec == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("--vary %s: %s has no parameter %s"), path,
                   airy_element_get_type_name (e), var->name);
      goto fail;
    }
  if (!airy_param_spec_is_differentiable (pspec, &why))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("--vary %s: not differentiable: %s"), path, why);
      goto fail;
    }
  if ((node = _airy_json_find_number (root, path)) == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--vary %s: the system file gives no number there (give the value to vary it)"), path);
      goto fail;
    }
  var->value = json_node_get_double (node);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      var->lo = G_PARAM_SPEC_DOUBLE (pspec)->minimum;
      var->hi = G_PARAM_SPEC_DOUBLE (pspec)->maximum;
    }
  else
    airy_param_spec_get_item_range (pspec, &var->lo, &var->hi);
  var->lo_open = (airy_param_spec_get_flags (pspec) & AIRY_PARAM_EXCLUSIVE_MIN) != 0;
  var->range = airy_param_spec_range_string (pspec);
  var->step = 1e-3 * MAX (fabs (var->value), 1.0);
  return var;
fail:
  _airy_grad_var_free (var);
  return NULL;
}

GPtrArray *
_airy_grad_vars_from_paths (JsonNode *root, AirySystem *system, const char *const *paths, GError **error)
{
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  guint j, k;

  for (j = 0; paths[j]; j++)
    {
      JsonNode *array = _airy_json_find_array (root, paths[j]);
      guint n = array ? json_array_get_length (json_node_get_array (array)) : 1;

      /* a path naming an array of numbers: each of its entries */
      for (k = 0; k < n; k++)
        {
          g_autofree char *path = array ? g_strdup_printf ("%s[%u]", paths[j], k) : g_strdup (paths[j]);
          AiryGradVar *var = _airy_grad_var_new (root, system, path, error);

          if (var == NULL)
            return NULL;
          g_ptr_array_add (vars, var);
        }
    }
  return g_steal_pointer (&vars);
}

gint
_airy_grad_vars_refused (GPtrArray *vars, const GError *error)
{
  guint i;

  for (i = 0; i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);
      gsize n = strlen (var->path);

      if (strncmp (error->message, var->path, n) == 0 && error->message[n] == ':')
        return (gint) i;
    }
  return -1;
}

gboolean
_airy_grad_var_set_bounds (AiryGradVar *var, double a, double b, GError **error)
{
  if (a > b)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--bounds %s=%g:%g: the lower bound %g is above the upper bound %g"), var->path, a, b, a, b);
      return FALSE;
    }
  if (a < var->lo || (var->lo_open && a <= var->lo) || b > var->hi)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("--bounds %s=%g:%g: %g:%g must lie in %s's range %s"),
                   var->path, a, b, a, b, var->path, var->range ? var->range : "");
      return FALSE;
    }
  var->lo = a;
  var->hi = b;
  var->lo_open = FALSE;
  return TRUE;
}

GPtrArray *
_airy_grad_vars_all (JsonNode *root, AirySystem *system)
{
  GPtrArray *vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  JsonArray *elements = json_object_get_array_member (json_node_get_object (root), "elements");
  guint i, j;

  for (i = 0; elements && i < json_array_get_length (elements); i++)
    {
      JsonObject *o = json_array_get_object_element (elements, i);
      g_autoptr(GList) members = o ? json_object_get_members (o) : NULL;
      GList *m;

      for (m = members; m; m = m->next)
        {
          JsonNode *n = json_object_get_member (o, m->data);
          guint count = JSON_NODE_HOLDS_ARRAY (n) ? json_array_get_length (json_node_get_array (n)) : 1;

          for (j = 0; j < count; j++)
            {
              g_autofree char *path = JSON_NODE_HOLDS_ARRAY (n)
                                        ? g_strdup_printf ("elements[%u].%s[%u]", i, (char *) m->data, j)
                                        : g_strdup_printf ("elements[%u].%s", i, (char *) m->data);
              AiryGradVar *var = _airy_grad_var_new (root, system, path, NULL);

              if (var)
                g_ptr_array_add (vars, var);
            }
        }
    }
  return vars;
}

/* the system of copy (a deep copy of the file's JSON) with var at value */
static AirySystem *
system_of_copy (JsonNode *copy, const char *base_dir, const AiryGradVar *var, double value, GError **error)
{
  g_autofree char *json = NULL;
  JsonNode *node = _airy_json_find_number (copy, var->path);

  if (node)
    json_node_set_double (node, value);
  json = json_to_string (copy, FALSE);
  return airy_system_new_from_data (json, -1, base_dir, NULL, error);
}

/* a deep copy: json_node_copy shares the objects and arrays */
static JsonNode *
deep_copy (JsonNode *root)
{
  g_autofree char *text = json_to_string (root, FALSE);

  return json_from_string (text, NULL);
}

AirySystem *
_airy_grad_system_with (JsonNode *root, const char *base_dir, const AiryGradVar *var, double value, GError **error)
{
  g_autoptr(JsonNode) copy = deep_copy (root);

  return system_of_copy (copy, base_dir, var, value, error);
}

/* the chain's element of the system file's elements[var->element]: the
 * same type, in the same order among that type's enabled elements */
static gint
chain_index_of (const AiryGradVar *var, JsonNode *root, GPtrArray *chain)
{
  JsonArray *elements = json_object_get_array_member (json_node_get_object (root), "elements");
  JsonObject *target = json_array_get_object_element (elements, var->element);
  const char *type = json_object_get_string_member_with_default (target, "type", "");
  guint i, nth = 0;

  for (i = 0; i < var->element; i++)
    {
      JsonObject *o = json_array_get_object_element (elements, i);

      if (g_str_equal (json_object_get_string_member_with_default (o, "type", ""), type)
          && json_object_get_boolean_member_with_default (o, "enabled", TRUE))
        nth++;
    }
  for (i = 0; i < chain->len; i++)
    if (g_str_equal (airy_element_get_type_name (g_ptr_array_index (chain, i)), type) && nth-- == 0)
      return (gint) i;
  return -1;
}

/* A mask's pixels: the phase's cotangent φ̄ = Σ_l s_l·Im(conj(f)·f̄)
 * (s_l = λ_0/λ_l, the mask's phase scaling), or the amplitude's
 * ā = Σ_l Re(f̄) (−ā with invert). */
static gboolean
pixels_apply (AiryGradVar *var, JsonNode *root, const AiryGradOps *go, GError **error)
{
  gint c = chain_index_of (var, root, go->chain);
  AiryElement *e = c >= 0 ? g_ptr_array_index (go->chain, c) : NULL;
  gboolean phase = e && g_str_equal (airy_element_get_type_name (e), "phase-mask");
  guint k, l;

  for (k = 0; c >= 0 && k + 1 < go->n_field; k++)
    {
      const AiryOp *op = g_ptr_array_index (go->ops, k);
      const AiryGradAcc *acc = &go->acc[k];
      gsize np = (gsize) op->height * op->width, i;

      if (op->chain_index != (guint) c || op->kind != AIRY_OP_MULTIPLY)
        continue;
      var->grad_pixels = airy_stack_new (1, op->height, op->width);
      for (l = 0; l < op->n_lambda; l++)
        for (i = 0; i < np; i++)
          {
            double complex fb = acc->factor[l * np + i];
            double v = phase ? go->lambda0 / (op->lambda ? op->lambda[l] : go->lambda0)
                               * cimag (conj (op->factor[l * np + i]) * fb)
                             : creal (fb) * (airy_element_get_boolean (e, "invert") ? -1.0 : 1.0);

            var->grad_pixels->data[i] += (float) v;
          }
      return TRUE;
    }
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s: the mask is not a factor of the field (first in the chain, or disabled)"), var->path);
  return FALSE;
}

/* Whether two ops have the same structure and the data the gradient does
 * not follow unchanged. */
static gboolean
same_op (const AiryOp *a, const AiryOp *b, guint n_lambda)
{
  gsize n = (gsize) a->n_lambda * a->height * a->width;

  if (a->kind != b->kind || a->height != b->height || a->width != b->width || a->n_lambda != b->n_lambda
      || !a->factor != !b->factor || !a->phase != !b->phase)
    return FALSE;
  if (a->scale && memcmp (a->scale, b->scale, a->n_lambda * sizeof (fftwf_complex)) != 0)
    return FALSE;
  if (a->weights && memcmp (a->weights, b->weights, a->n_lambda * sizeof (double)) != 0)
    return FALSE;
  if (a->kind == AIRY_OP_POINT || a->kind == AIRY_OP_GAUSS)
    return a->n == b->n && a->waist == b->waist && memcmp (a->dx, b->dx, n_lambda * sizeof (double)) == 0;
  if (a->kind == AIRY_OP_CONVOLVE)
    return a->convolve->kind == b->convolve->kind && a->convolve->value == b->convolve->value
           && a->convolve->intensity == b->convolve->intensity;
  (void) n;
  return TRUE;
}

/* A number's gradient: Σ over the ops of ⟨cotangent, tangent⟩, the
 * tangent of each op's data by the symmetric step (the ops made again at
 * value ± step). A factor's tangent goes in polar form (its modulus and
 * phase differences, exact to the step's square where the float factor's
 * own difference would lose digits). */
static gboolean
number_apply (AiryGradVar *var, JsonNode *root, const char *base_dir, const AiryGradOps *go, GError **error)
{
  /* one copy of the file for both steps */
  g_autoptr(JsonNode) copy = deep_copy (root);
  g_autoptr(AirySystem) sp = system_of_copy (copy, base_dir, var, var->value + var->step, error);
  g_autoptr(AirySystem) sm = sp ? system_of_copy (copy, base_dir, var, var->value - var->step, error) : NULL;
  g_auto(Program) pp = { 0 };
  g_auto(Program) pm = { 0 };
  double h2 = 2.0 * var->step, g = 0.0;
  guint k;

  if (sm == NULL || !_airy_grad_program_init (&pp, sp, error) || !_airy_grad_program_init (&pm, sm, error))
    return FALSE;
  if (pp.ops->len != go->ops->len || pm.ops->len != go->ops->len)
    goto changed;
  for (k = 0; k < go->ops->len; k++)
    {
      const AiryOp *o = g_ptr_array_index (go->ops, k), *a = g_ptr_array_index (pp.ops, k),
                   *b = g_ptr_array_index (pm.ops, k);
      const AiryGradAcc *acc = &go->acc[k];
      gsize n = (gsize) o->n_lambda * o->height * o->width, i;

      if (!same_op (o, a, o->n_lambda) || !same_op (o, b, o->n_lambda))
        goto changed;
      for (i = 0; acc->factor && i < n; i++)
        {
          double complex fa = a->factor[i], fb = b->factor[i], f = o->factor[i], df;
          double ma = cabs (fa), mb = cabs (fb), m = cabs (f);

          if (fa == fb)
            continue;
          if (m > 0 && ma > 0 && mb > 0)
            df = (f / m) * ((ma - mb) + I * m * carg (fa * conj (fb))) / h2;
          else
            df = (fa - fb) / h2;
          g += creal (conj (acc->factor[i]) * df);
        }
      for (i = 0; acc->phase && i < n; i++)
        g += acc->phase[i] * (a->phase[i] - b->phase[i]) / h2;
      g += acc->power * (a->power - b->power) / h2 + acc->z * (a->z - b->z) / h2;
      if (o->kind == AIRY_OP_SENSOR)
        g += acc->gain * (a->sensor->noise.gain - b->sensor->noise.gain) / h2
             + acc->exposure * (a->sensor->noise.exposure - b->sensor->noise.exposure) / h2
             + acc->offset * (a->sensor->noise.offset - b->sensor->noise.offset) / h2;
    }
  var->grad = g;
  return TRUE;
changed:
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s: not differentiable here: a change of it changes the grid or data the gradient does not "
                 "follow"), var->path);
  return FALSE;
}

gboolean
_airy_grad_var_apply (AiryGradVar *var, JsonNode *root, const char *base_dir, const AiryGradOps *go, GError **error)
{
  if (var->pixels)
    return pixels_apply (var, root, go, error);
  return number_apply (var, root, base_dir, go, error);
}

