/* airy-sim grad: the gradient of a loss of a system's result with respect
 * to its differentiable parameters (engine/airy-grad-private.h). */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <string.h>
#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "airy.h"
#include "airy-grad-private.h"
#include "airy-sim-private.h"

/* GRAD.json's name with its suffix swapped for "-VAR.tif" (the path's
 * brackets and dots made plain) */
char *
pixels_file (const char *output, const AiryGradVar *var)
{
  g_autofree char *stem = g_strndup (output, strlen (output) - strlen (".json"));
  g_autofree char *name = g_strdup (var->path);
  char *c;

  for (c = name; *c; c++)
    if (!g_ascii_isalnum (*c) && *c != '-')
      *c = '_';
  return g_strdup_printf ("%s-%s.tif", stem, name);
}

/* Without --vary: the variable that the pass found not differentiable in
 * this system (its error names it first) is left out, with a warning;
 * FALSE for any other error. */
gboolean
drop_refused (GPtrArray *vars, char **files, const GError *error)
{
  gint i = _airy_grad_vars_refused (vars, error);

  if (i < 0)
    return FALSE;
  g_printerr (_("airy-sim: warning: left out %s\n"), error->message);
  g_ptr_array_remove_index (vars, i);
  if (files)
    {
      g_free (files[i]);
      memmove (files + i, files + i + 1, (vars->len - i + 1) * sizeof *files);
    }
  return TRUE;
}

AirySystem *
load_system_json (const char *file, JsonParser *parser, GError **error)
{
  g_autoptr(AirySystem) system = load_system (file, NULL, error);
  g_autofree char *text = NULL;
  gsize len;

  /* the file again, as JSON: the variables are paths into it */
  if (system == NULL || !g_file_get_contents (file, &text, &len, error)
      || !json_parser_load_from_data (parser, text, len, error))
    return NULL;
  return g_steal_pointer (&system);
}

GPtrArray *
parse_vary (JsonNode *root, AirySystem *system, char **vary, GError **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) paths = NULL;
  guint i;

  for (i = 0; vary[i]; i++)
    {
      g_auto(GStrv) parts = g_strsplit (vary[i], ",", -1);

      g_strv_builder_addv (builder, (const char **) parts);
    }
  paths = g_strv_builder_end (builder);
  return _airy_grad_vars_from_paths (root, system, (const char *const *) paths, error);
}

static char *
grad_json (double loss_value, GPtrArray *vars, char **files)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  guint i;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "loss");
  json_builder_add_double_value (b, loss_value);
  json_builder_set_member_name (b, "gradient");
  json_builder_begin_object (b);
  for (i = 0; i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);

      json_builder_set_member_name (b, var->path);
      if (var->pixels)
        {
          g_autofree char *base = g_path_get_basename (files[i]);

          json_builder_begin_object (b);
          json_builder_set_member_name (b, "file");
          json_builder_add_string_value (b, base);
          json_builder_end_object (b);
        }
      else
        json_builder_add_double_value (b, var->grad);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

int
cmd_grad (int argc, char **argv)
{
  int status, threads = 0;
  g_autofree char *output = NULL, *loss_spec = NULL, *dir = NULL, *json = NULL;
  g_auto(GStrv) vary = NULL;
  const SimOption options_table[] = {
    { "output", 'o', SIM_OPTION_STRING, &output },
    { "loss", 0, SIM_OPTION_STRING, &loss_spec },
    { "vary", 0, SIM_OPTION_STRINGS, &vary },
    { "threads", 0, SIM_OPTION_INT, &threads },
    { NULL }
  };
  static const char *const json_suffix[] = { ".json", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GPtrArray) vars = NULL;
  g_auto(GStrv) files = NULL;
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 0 };
  double loss_value = 0;
  guint i;

  if ((status = parse_command_line ("grad", options_table, &argc, &argv)) != EXIT_OK)
    return status;
  if (ranks->size > 1)
    {
      if (!is_root ())
        return EXIT_INPUT;
      return usage_error (_("grad: runs in one process, started as %u ranks (mpirun -np 1 or without mpirun)"),
                          ranks->size);
    }
  if (argc != 2)
    return usage_error (_("grad: give one system file"));
  if (loss_spec == NULL)
    return usage_error (_("grad: give the loss with --loss l2:TARGET.tif, poisson:COUNTS.tif, region:MASK.tif or "
                            "crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND"));
  if (output == NULL)
    return usage_error (_("grad: give the gradient's file with -o GRAD.json"));
  if ((status = check_threads_backend (threads, NULL)) != EXIT_OK)
    return status;
  if (!check_output_path ("-o", output, json_suffix, &error) || !check_environment (&error))
    return fail (error);
  if ((system = load_system_json (argv[1], parser, &error)) == NULL)
    return fail (error);
  dir = g_path_get_dirname (argv[1]);
  loss = _airy_loss_new_from_spec (loss_spec, &error);
  if (loss == NULL)
    return fail (error);
  if (vary == NULL)
    vars = _airy_grad_vars_all (json_parser_get_root (parser), system);
  else if ((vars = parse_vary (json_parser_get_root (parser), system, vary, &error)) == NULL)
    return fail (error);
  files = g_new0 (char *, vars->len + 1);
  for (i = 0; i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);

      files[i] = var->pixels ? pixels_file (output, var) : g_strdup ("");
    }
  {
    g_autofree NamedFile *outputs = g_new0 (NamedFile, vars->len + 1);
    const NamedFile inputs[] = { { _("the system"), argv[1] }, { "--loss", loss->file } };
    guint n = 0;

    outputs[n++] = (NamedFile){ "-o", output };
    for (i = 0; i < vars->len; i++)
      if (files[i][0])
        outputs[n++] = (NamedFile){ "--vary", files[i] };
    if (!check_outputs (outputs, n, inputs, G_N_ELEMENTS (inputs), &error))
      return fail (error);
  }
  options.threads = (guint) threads;
  while (!_airy_grad_compute (system, json_parser_get_root (parser), dir, loss, vars, &options, &loss_value, NULL,
                              &error))
    if (vary != NULL || !drop_refused (vars, files, error))
      return fail (error);
    else
      g_clear_error (&error);
  json = grad_json (loss_value, vars, files);
  /* GRAD.json and its pixel files appear together, or none of them */
  {
    g_autoptr(AiryAtomicGroup) group = airy_atomic_group_begin ();

    for (i = 0; i < vars->len; i++)
      {
        const AiryGradVar *var = g_ptr_array_index (vars, i);

        if (var->pixels && !airy_tiff_write (files[i], var->grad_pixels, &error))
          return fail (error);
      }
    if (!airy_atomic_set_contents (output, json, strlen (json), &error)
        || !airy_atomic_group_commit (g_steal_pointer (&group), &error))
      return fail (error);
  }
  g_print (_("loss %.9g (%s)\n"), loss_value, options.stored ? _("stored pass") : _("checkpointed pass"));
  for (i = 0; i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);

      if (var->pixels)
        g_print ("  %s: %s\n", var->path, files[i]);
      else
        g_print ("  %s: %.9g\n", var->path, var->grad);
    }
  g_print (_("wrote %s\n"), output);
  return EXIT_OK;
}
