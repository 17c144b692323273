#define G_LOG_DOMAIN "airy-optimize"

#include "config.h"

#include <math.h>

#include "airy-json-private.h"
#include "airy-optimize-private.h"

/* The optimizer's report (airy-optimize-private.h): what airy-sim
 * optimize writes with --report and the Python package returns. */

const char *
_airy_optimize_end_name (AiryOptimizeEnd end)
{
  static const char *const names[] = { "steps", "converged", "stopped", "failed" };

  return names[end];
}

char *
_airy_optimizer_report (AiryOptimizer *o, const char *const *files, const char *optimizer, const char *end,
                        const GError *failure)
{
  GPtrArray *vars = o->vars;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  guint v, i;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "optimizer");
  json_builder_add_string_value (b, optimizer);
  json_builder_set_member_name (b, "end");
  json_builder_add_string_value (b, end);
  if (failure)
    {
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, failure->message);
    }
  json_builder_set_member_name (b, "steps");
  json_builder_add_int_value (b, o->steps_done);
  json_builder_set_member_name (b, "evaluations");
  json_builder_add_int_value (b, o->evaluations);
  json_builder_set_member_name (b, "loss-before");
  json_builder_add_double_value (b, o->first_loss);
  json_builder_set_member_name (b, "loss-after");
  json_builder_add_double_value (b, o->best_loss);
  json_builder_set_member_name (b, "best-step");
  json_builder_add_int_value (b, o->best_step);
  json_builder_set_member_name (b, "gradient-norm");
  json_builder_add_double_value (b, o->last_grad_norm);
  json_builder_set_member_name (b, "time-s");
  json_builder_add_double_value (b, o->elapsed_s);
  json_builder_set_member_name (b, "parameters");
  json_builder_begin_object (b);
  for (v = 0; v < vars->len; v++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, v);

      json_builder_set_member_name (b, var->path);
      json_builder_begin_object (b);
      if (var->pixels)
        {
          g_autofree char *base = g_path_get_basename (files[v]);

          json_builder_set_member_name (b, "file");
          json_builder_add_string_value (b, base);
        }
      else
        {
          JsonNode *start = _airy_json_find_number (o->root, var->path);

          json_builder_set_member_name (b, "before");
          json_builder_add_double_value (b, start ? json_node_get_double (start) : NAN);
          json_builder_set_member_name (b, "after");
          json_builder_add_double_value (b, _airy_optimizer_best_value (o, v));
        }
      if (isfinite (var->lo))
        {
          json_builder_set_member_name (b, "lower");
          json_builder_add_double_value (b, var->lo);
        }
      if (isfinite (var->hi))
        {
          json_builder_set_member_name (b, "upper");
          json_builder_add_double_value (b, var->hi);
        }
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "loss-curve");
  json_builder_begin_array (b);
  for (i = 0; i < o->curve->len; i++)
    json_builder_add_double_value (b, g_array_index (o->curve, double, i));
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}
