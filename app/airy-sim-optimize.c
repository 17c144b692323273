/* airy-sim optimize: a system's variables moved to minimise a loss of its
 * result, by Adam or L-BFGS on the reverse pass's gradient
 * (engine/airy-optimize-private.h). */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy.h"
#include "airy-optimize-private.h"
#include "airy-options-private.h"
#include "airy-sim-private.h"

/* the signal that asked to stop (SIGINT, SIGTERM), 0 while none did */
static volatile int stop_signal;

static void
on_stop_signal (int sig)
{
  stop_signal = sig;
}

/* Ctrl-C and SIGTERM stop the optimizer after the evaluation under way;
 * the best system so far is then written as at the end. */
static void
catch_stop_signals (void)
{
  static const int sigs[] = { SIGINT, SIGTERM };
  struct sigaction sa;
  guint i;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset (&sa.sa_mask);
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      struct sigaction old;

      if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
      sigaction (sigs[i], &sa, NULL);
    }
}

static gboolean
parse_number (const char *text, double *value)
{
  char *end = NULL;

  *value = g_ascii_strtod (text, &end);
  return end != text && *end == '\0' && isfinite (*value);
}

/* --bounds PATH=A:B, for a variable of --vary and inside its range */
static gboolean
apply_bounds (GPtrArray *vars, const char *arg, GError **error)
{
  const char *eq = strchr (arg, '=');
  g_autofree char *path = eq ? g_strndup (arg, eq - arg) : NULL;
  g_auto(GStrv) sides = eq ? g_strsplit (eq + 1, ":", 2) : NULL;
  AiryGradVar *var = NULL;
  double a, b;
  guint i;

  if (sides == NULL || sides[0] == NULL || sides[1] == NULL || !parse_number (sides[0], &a)
      || !parse_number (sides[1], &b))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--bounds %s: must be PATH=A:B with two numbers (elements[0].na=0.5:1.2)"), arg);
      return FALSE;
    }
  for (i = 0; i < vars->len; i++)
    if (g_str_equal (((AiryGradVar *) g_ptr_array_index (vars, i))->path, path))
      var = g_ptr_array_index (vars, i);
  if (var == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("--bounds %s: %s is not a variable of --vary"),
                   arg, path);
      return FALSE;
    }
  return _airy_grad_var_set_bounds (var, a, b, error);
}

typedef struct
{
  GPtrArray *vars;
  guint      steps;
  gboolean   quiet, tty;
  FILE      *log;
} Watch;

static void
log_step (Watch *w, AiryOptimizer *o, const AiryOptimizeStep *s)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *line = NULL;
  guint v;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "step");
  json_builder_add_int_value (b, s->step);
  json_builder_set_member_name (b, "evaluations");
  json_builder_add_int_value (b, s->evaluations);
  json_builder_set_member_name (b, "loss");
  json_builder_add_double_value (b, s->loss);
  json_builder_set_member_name (b, "best");
  json_builder_add_double_value (b, s->best);
  json_builder_set_member_name (b, "gradient-norm");
  json_builder_add_double_value (b, s->grad_norm);
  json_builder_set_member_name (b, "time-s");
  json_builder_add_double_value (b, s->elapsed_s);
  json_builder_set_member_name (b, "values");
  json_builder_begin_object (b);
  for (v = 0; v < w->vars->len; v++)
    {
      const AiryGradVar *var = g_ptr_array_index (w->vars, v);

      if (var->pixels)
        continue;
      json_builder_set_member_name (b, var->path);
      json_builder_add_double_value (b, var->value);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);
  node = json_builder_get_root (b);
  line = json_to_string (node, FALSE);
  fprintf (w->log, "%s\n", line);
  fflush (w->log);
  (void) o;
}

static gboolean
on_step (AiryOptimizer *o, const AiryOptimizeStep *s, gpointer user_data)
{
  Watch *w = user_data;

  if (w->log)
    log_step (w, o, s);
  if (!w->quiet)
    {
      double left = s->step ? s->elapsed_s / s->step * (w->steps - s->step) : 0.0;

      fprintf (stderr, _("%sstep %u/%u  loss %.6g  best %.6g (step %u)  %.0f s left"), w->tty ? "\r" : "", s->step,
               w->steps, s->loss, s->best, s->best_step, left);
      fprintf (stderr, w->tty ? "   " : "\n");
    }
  return stop_signal == 0;
}

/* OPTIMIZED.json, its pixel files and the report, together or none */
static gboolean
write_best (AiryOptimizer *o, GPtrArray *vars, char **files, const char *output, const char *report,
            const char *optimizer, AiryOptimizeEnd end, const GError *failure, GError **error)
{
  g_autoptr(AiryAtomicGroup) group = airy_atomic_group_begin ();
  g_auto(GStrv) names = g_new0 (char *, vars->len + 1);
  g_autoptr(JsonNode) best = NULL;
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autofree char *json = NULL, *text = NULL;
  guint v;

  for (v = 0; v < vars->len; v++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, v);

      /* relative to OPTIMIZED.json, beside which it is written */
      names[v] = var->pixels ? g_path_get_basename (files[v]) : g_strdup ("");
      if (var->pixels)
        {
          g_autoptr(AiryStack) pixels = _airy_optimizer_best_pixels (o, v);

          if (!airy_tiff_write (files[v], pixels, error))
            return FALSE;
        }
    }
  best = _airy_optimizer_best_json (o, (const char *const *) names);
  json_generator_set_root (gen, best);
  json_generator_set_pretty (gen, TRUE);
  json = json_generator_to_data (gen, NULL);
  if (!airy_atomic_set_contents (output, json, strlen (json), error))
    return FALSE;
  if (report)
    {
      text = _airy_optimizer_report (o, (const char *const *) files, optimizer,
                                     stop_signal ? "interrupted" : _airy_optimize_end_name (end), failure);
      if (!airy_atomic_set_contents (report, text, strlen (text), error))
        return FALSE;
    }
  return airy_atomic_group_commit (g_steal_pointer (&group), error);
}

static void
print_summary (AiryOptimizer *o, GPtrArray *vars, char **files, AiryOptimizeEnd end, const char *output)
{
  guint v;

  g_print (_("loss %.9g → %.9g in %u steps (%u evaluations, %.1f s), %s\n"), o->first_loss, o->best_loss,
           o->steps_done, o->evaluations, o->elapsed_s, stop_signal ? "interrupted" : _airy_optimize_end_name (end));
  for (v = 0; v < vars->len; v++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, v);

      if (var->pixels)
        g_print ("  %s: %s\n", var->path, files[v]);
      else
        g_print ("  %s: %.9g\n", var->path, _airy_optimizer_best_value (o, v));
    }
  g_print (_("wrote %s\n"), output);
}

typedef struct
{
  char  *output, *report, *log;
  char  *loss, *optimizer, *lr;
  GStrv  vary, bounds;
  int    steps, threads;
  gboolean quiet;
} Args;

static void
args_clear (Args *a)
{
  g_free (a->output);
  g_free (a->report);
  g_free (a->log);
  g_free (a->loss);
  g_free (a->optimizer);
  g_free (a->lr);
  g_strfreev (a->vary);
  g_strfreev (a->bounds);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Args, args_clear)

/* the options' own checks: EXIT_OK or the usage error's status */
static int
check_args (const Args *a, int argc, AiryOptimizerKind *kind, double *lr)
{
  static const char *const json_suffix[] = { ".json", NULL };
  g_autoptr(GError) error = NULL;
  int status;

  if (argc != 2)
    return usage_error (_("optimize: give one system file"));
  if (a->loss == NULL)
    return usage_error (_("optimize: give the loss with --loss l2:TARGET.tif, poisson:COUNTS.tif, region:MASK.tif or "
                            "crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND"));
  if (a->vary == NULL)
    return usage_error (_("optimize: give the variables with --vary PATH[,PATH…]"));
  if (a->output == NULL)
    return usage_error (_("optimize: give the optimized system's file with -o OPTIMIZED.json"));
  if (!_airy_option_check_int ("optimize-steps", a->steps, "--steps", &error))
    return usage_error ("%s", error->message);
  if (a->optimizer == NULL || g_str_equal (a->optimizer, "adam"))
    *kind = AIRY_OPTIMIZER_ADAM;
  else if (g_str_equal (a->optimizer, "lbfgs"))
    *kind = AIRY_OPTIMIZER_LBFGS;
  else
    return usage_error (_("--optimizer: must be one of adam, lbfgs, got \"%s\""), a->optimizer);
  *lr = 0.01;
  if (a->lr && (!parse_number (a->lr, lr) || !(*lr > 0)))
    return usage_error (_("--lr: must be a number > 0 (the step, in the variables' units), got \"%s\""), a->lr);
  if ((status = check_threads_backend (a->threads, NULL)) != EXIT_OK)
    return status;
  if (!check_output_path ("-o", a->output, json_suffix, &error)
      || (a->report && !check_output_path ("--report", a->report, json_suffix, &error)))
    return fail (error);
  return EXIT_OK;
}

int
cmd_optimize (int argc, char **argv)
{
  g_auto(Args) a = { .steps = _airy_option_default ("optimize-steps") };
  const SimOption options_table[] = {
    { "output", 'o', SIM_OPTION_STRING, &a.output },
    { "loss", 0, SIM_OPTION_STRING, &a.loss },
    { "vary", 0, SIM_OPTION_STRINGS, &a.vary },
    { "bounds", 0, SIM_OPTION_STRINGS, &a.bounds },
    { "steps", 0, SIM_OPTION_INT, &a.steps },
    { "optimizer", 0, SIM_OPTION_STRING, &a.optimizer },
    { "lr", 0, SIM_OPTION_STRING, &a.lr },
    { "report", 0, SIM_OPTION_STRING, &a.report },
    { "log", 0, SIM_OPTION_STRING, &a.log },
    { "threads", 0, SIM_OPTION_INT, &a.threads },
    { "quiet", 'q', SIM_OPTION_FLAG, &a.quiet },
    { NULL }
  };
  g_autoptr(GError) error = NULL, failure = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GPtrArray) vars = NULL;
  g_autoptr(AiryOptimizer) o = NULL;
  g_auto(GStrv) files = NULL;
  g_autofree char *dir = NULL;
  AiryOptimizerKind kind = AIRY_OPTIMIZER_ADAM;
  AiryOptimizeEnd end;
  Watch watch = { 0 };
  double lr = 0.01;
  int status;
  guint i;

  if ((status = parse_command_line ("optimize", options_table, &argc, &argv)) != EXIT_OK)
    return status;
  if (ranks->size > 1)
    {
      if (!is_root ())
        return EXIT_INPUT;
      return usage_error (_("optimize: runs in one process, started as %u ranks (mpirun -np 1 or without mpirun)"),
                          ranks->size);
    }
  if ((status = check_args (&a, argc, &kind, &lr)) != EXIT_OK)
    return status;
  if (!check_environment (&error) || (system = load_system_json (argv[1], parser, &error)) == NULL
      || (loss = _airy_loss_new_from_spec (a.loss, &error)) == NULL
      || (vars = parse_vary (json_parser_get_root (parser), system, a.vary, &error)) == NULL)
    return fail (error);
  for (i = 0; a.bounds && a.bounds[i]; i++)
    if (!apply_bounds (vars, a.bounds[i], &error))
      return fail (error);
  files = g_new0 (char *, vars->len + 1);
  for (i = 0; i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);

      files[i] = var->pixels ? pixels_file (a.output, var) : g_strdup ("");
    }
  {
    g_autofree NamedFile *outputs = g_new0 (NamedFile, vars->len + 3);
    const NamedFile inputs[] = { { _("the system"), argv[1] }, { "--loss", loss->file } };
    guint n = 0;

    outputs[n++] = (NamedFile){ "-o", a.output };
    outputs[n++] = (NamedFile){ "--report", a.report };
    outputs[n++] = (NamedFile){ "--log", a.log };
    for (i = 0; i < vars->len; i++)
      if (files[i][0])
        outputs[n++] = (NamedFile){ "--vary", files[i] };
    if (!check_outputs (outputs, n, inputs, G_N_ELEMENTS (inputs), &error))
      return fail (error);
  }
  dir = g_path_get_dirname (argv[1]);
  o = _airy_optimizer_new (json_parser_get_root (parser), dir, loss, vars, (guint) a.threads, &error);
  if (o == NULL)
    return fail (error);
  if (a.log && (watch.log = g_fopen (a.log, "w")) == NULL)
    {
      g_printerr (_("airy-sim: --log %s: %s\n"), a.log, g_strerror (errno));
      return EXIT_INPUT;
    }
  watch = (Watch){ vars, (guint) a.steps, a.quiet, isatty (STDERR_FILENO), watch.log };
  o->stop = &stop_signal;
  catch_stop_signals ();
  end = _airy_optimizer_run (o, kind, (guint) a.steps, lr, on_step, &watch, &failure);
  if (watch.log)
    fclose (watch.log);
  if (!a.quiet && watch.tty)
    fprintf (stderr, "\n");
  if (end == AIRY_OPTIMIZE_FAILED && !isfinite (o->best_loss))
    return fail (failure);
  if (!write_best (o, vars, files, a.output, a.report, kind == AIRY_OPTIMIZER_ADAM ? "adam" : "lbfgs", end, failure,
                   &error))
    return fail (error);
  print_summary (o, vars, files, end, a.output);
  if (end == AIRY_OPTIMIZE_FAILED)
    {
      g_printerr (_("airy-sim: %s; stopped, kept the best system (step %u)\n"), failure->message, o->best_step);
      return EXIT_INPUT;
    }
  return stop_signal ? 128 + stop_signal : EXIT_OK;
}
