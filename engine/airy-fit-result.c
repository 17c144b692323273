#define G_LOG_DOMAIN "airy-fit"

/* The fit's result (airy-fit.h): freed, applied to a system as a phase
 * mask of the fitted terms, and its report as JSON. */

#include "config.h"

#include <math.h>

#include <json-glib/json-glib.h>

#include "airy-fit-private.h"

void
airy_fit_result_free (AiryFitResult *result)
{
  if (result == NULL)
    return;
  g_free (result->indices);
  g_free (result->coefficients);
  g_free (result->uncertainties);
  g_free (result->backend);
  g_free (result->device);
  g_clear_pointer (&result->model, airy_stack_free);
  g_clear_pointer (&result->residual, airy_stack_free);
  g_clear_pointer (&result->warnings, g_ptr_array_unref);
  g_free (result);
}

AirySystem *
airy_fit_result_apply (const AiryFitResult *result,
                       AirySystem          *system,
                       GError             **error)
{
  g_autoptr(AiryElement) mask = NULL;

  g_return_val_if_fail (result != NULL, NULL);
  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  mask = _airy_fit_zernike_mask_new (result->indices, result->coefficients, result->n_terms, error);
  if (mask == NULL)
    return NULL;
  return _airy_fit_system_insert_mask (system, mask, NULL);
}

static JsonNode *
doubles_node (const double *v, guint n)
{
  JsonArray *a = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);
  guint i;

  for (i = 0; i < n; i++)
    {
      if (isfinite (v[i]))
        json_array_add_double_element (a, v[i]);
      else
        json_array_add_null_element (a);
    }
  json_node_take_array (node, a);
  return node;
}

static void
set_number (JsonObject *o, const char *name, double v)
{
  if (isfinite (v))
    json_object_set_double_member (o, name, v);
  else
    json_object_set_null_member (o, name);
}

char *
airy_fit_result_to_json (const AiryFitResult *result)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  JsonObject *o = json_object_new (), *z = json_object_new ();
  JsonArray *idx = json_array_new ();
  guint i;

  for (i = 0; i < result->n_terms; i++)
    json_array_add_int_element (idx, result->indices[i]);
  json_object_set_string_member (z, "indexing", "ansi");
  json_object_set_string_member (z, "unit", "waves");
  json_object_set_array_member (z, "indices", idx);
  json_object_set_member (z, "coefficients", doubles_node (result->coefficients, result->n_terms));
  json_object_set_member (z, "uncertainties", doubles_node (result->uncertainties, result->n_terms));
  json_object_set_object_member (o, "zernike", z);
  set_number (o, "rms_waves", result->rms_waves);
  set_number (o, "strehl", result->strehl);
  json_object_set_member (o, "position", doubles_node (result->position, 3));
  json_object_set_member (o, "position_uncertainties", doubles_node (result->position_uncertainties, 3));
  set_number (o, "amplitude", result->amplitude);
  set_number (o, "amplitude_uncertainty", result->amplitude_uncertainty);
  set_number (o, "background", result->background);
  set_number (o, "background_uncertainty", result->background_uncertainty);
  json_object_set_string_member (o, "objective",
                                 result->objective == AIRY_FIT_OBJECTIVE_POISSON ? "poisson" : "least-squares");
  set_number (o, "loss", result->loss);
  json_object_set_int_member (o, "iterations", result->iterations);
  json_object_set_boolean_member (o, "converged", result->converged);
  json_object_set_int_member (o, "iterations_total", result->iterations_total);
  json_object_set_int_member (o, "evaluations", result->evaluations);
  json_object_set_int_member (o, "restarts", result->restarts);
  set_number (o, "seconds", result->seconds);
  set_number (o, "seconds_per_iteration", result->seconds_per_iteration);
  json_object_set_string_member (o, "backend", result->backend ? result->backend : "cpu");
  json_object_set_string_member (o, "device", result->device ? result->device : "");
  json_object_set_int_member (o, "threads", result->threads);
  json_node_take_object (root, o);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  return json_generator_to_data (gen, NULL);
}
