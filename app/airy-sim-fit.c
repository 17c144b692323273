/* airy-sim fit: a measured bead stack fitted by the system's PSF (engine/airy-fit.h). */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy.h"
#include "airy-atomic-private.h"
#include "airy-options-private.h"
#include "airy-sim-private.h"
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

/* ---- fit ---- */

static void
on_fit_progress (guint restart, guint iteration, double loss, gpointer user_data)
{
  Progress *p = user_data;

  if (!p->tty)
    return;
  fprintf (stderr, "\r");
  fprintf (stderr, _("fit: start %u, iteration %u, loss %.6g   "), restart + 1, iteration, loss);
  p->shown = TRUE;
}

int
cmd_fit (int argc, char **argv)
{
  int status;
  g_autofree char *system_file = NULL, *output = NULL, *report_out = NULL, *residual_out = NULL;
  g_autofree char *objective_arg = NULL, *gain_arg = NULL, *offset_arg = NULL, *backend = NULL;
  int device = 0, zernike = _airy_option_default ("fit-zernike"), crop = 0, restarts = 0, threads = 0, seed = 0, max_iterations = 0;
  gboolean quiet = FALSE;
  const SimOption options_table[] = {
    { "system", 0, SIM_OPTION_STRING, &system_file },
    { "output", 'o', SIM_OPTION_STRING, &output },
    { "report", 0, SIM_OPTION_STRING, &report_out },
    { "residual", 0, SIM_OPTION_STRING, &residual_out },
    { "zernike", 0, SIM_OPTION_INT, &zernike },
    { "crop", 0, SIM_OPTION_INT, &crop },
    { "objective", 0, SIM_OPTION_STRING, &objective_arg },
    { "gain", 0, SIM_OPTION_STRING, &gain_arg },
    { "offset", 0, SIM_OPTION_STRING, &offset_arg },
    { "restarts", 0, SIM_OPTION_INT, &restarts },
    { "max-iterations", 0, SIM_OPTION_INT, &max_iterations },
    { "seed", 0, SIM_OPTION_INT, &seed },
    { "threads", 0, SIM_OPTION_INT, &threads },
    { "backend", 0, SIM_OPTION_STRING, &backend },
    { "device", 0, SIM_OPTION_INT, &device },
    { "quiet", 'q', SIM_OPTION_FLAG, &quiet },
    { NULL }
  };
  static const char *const json[] = { ".json", NULL };
  const char *const *tif = airy_image_format_lookup ("TIFF")->suffixes;
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AirySystem) fitted = NULL;
  g_autoptr(AiryStack) beads = NULL;
  g_autoptr(AiryFitResult) res = NULL;
  g_autofree char *report = NULL;
  AiryFitOptions options;
  Progress progress = { isatty (STDERR_FILENO), g_get_monotonic_time (), FALSE };
  guint i;

  airy_fit_options_init (&options);
  if ((status = parse_command_line ("fit", options_table, &argc, &argv)) != EXIT_OK)
    return status;
  /* one process: under mpirun every rank would run the whole fit and
   * write the same files (rank 0 says so, every rank exits 2) */
  if (ranks->size > 1)
    {
      if (!is_root ())
        return EXIT_INPUT;
      return usage_error (_("fit: runs in one process, started as %u ranks (mpirun -np 1 or without mpirun)"),
                          ranks->size);
    }
  if (argc != 2)
    return usage_error (_("fit: give one bead stack (TIFF)"));
  if (system_file == NULL)
    return usage_error (_("fit: give the system with --system SYSTEM.json"));
  if (output == NULL)
    return usage_error (_("fit: give the fitted system's file with -o FITTED.json"));
  if (!_airy_option_check_int ("fit-zernike", zernike, "--zernike", &error)
      || !_airy_option_check_int ("fit-crop", crop, "--crop", &error)
      || !_airy_option_check_int ("fit-restarts", restarts, "--restarts", &error)
      || !_airy_option_check_int ("fit-max-iterations", max_iterations, "--max-iterations", &error))
    return usage_error ("%s", error->message);
  if ((status = check_threads_backend (threads, backend)) != EXIT_OK)
    return status;
  if (!_airy_option_check_int ("fit-seed", seed, "--seed", &error)
      || !_airy_option_check_int ("device", device, "--device", &error))
    return usage_error ("%s", error->message);
  if (objective_arg && g_str_equal (objective_arg, "poisson"))
    options.objective = AIRY_FIT_OBJECTIVE_POISSON;
  else if (objective_arg && g_str_equal (objective_arg, "least-squares"))
    options.objective = AIRY_FIT_OBJECTIVE_LEAST_SQUARES;
  else if (objective_arg && !g_str_equal (objective_arg, "auto"))
    return usage_error ("--objective: must be one of auto, poisson, least-squares, got \"%s\"", objective_arg);
  if (gain_arg)
    {
      char *end = NULL;
      options.gain = g_ascii_strtod (gain_arg, &end);
      if (end == gain_arg || *end != '\0' || !(options.gain > 0) || !isfinite (options.gain))
        return usage_error ("--gain: must be a number > 0 (ADU per photon), got \"%s\"", gain_arg);
    }
  if (offset_arg)
    {
      char *end = NULL;
      options.offset = g_ascii_strtod (offset_arg, &end);
      if (end == offset_arg || *end != '\0' || !isfinite (options.offset))
        return usage_error ("--offset: must be a number (ADU), got \"%s\"", offset_arg);
    }
  if (!check_output_path ("-o", output, json, &error)
      || (report_out && !check_output_path ("--report", report_out, json, &error))
      || (residual_out && !check_output_path ("--residual", residual_out, tif, &error))
      || !check_environment (&error))
    return fail (error);
  {
    const NamedFile outputs[] = { { "-o", output }, { "--report", report_out }, { "--residual", residual_out } };
    const NamedFile inputs[] = { { _("the bead stack"), argv[1] }, { "--system", system_file } };

    if (!check_outputs (outputs, G_N_ELEMENTS (outputs), inputs, G_N_ELEMENTS (inputs), &error))
      return fail (error);
  }
  system = load_system (system_file, NULL, &error);
  if (system == NULL)
    return fail (error);
  beads = airy_image_read (argv[1], &error);
  if (beads == NULL)
    return fail (error);

  options.zernike_max = (guint) zernike;
  options.crop = (guint) crop;
  options.restarts = (guint) restarts;
  options.max_iterations = (guint) max_iterations;
  options.threads = (guint) threads;
  options.seed = (guint) seed;
  options.backend = backend;
  options.device = (guint) device;
  options.progress = quiet ? NULL : on_fit_progress;
  options.user_data = &progress;
  res = airy_fit_stack (system, beads, &options, NULL, &error);
  if (progress.shown)
    fprintf (stderr, "\n");
  if (res == NULL)
    return fail (error);
  print_warnings (res->warnings);

  fitted = airy_fit_result_apply (res, system, &error);
  report = airy_fit_result_to_json (res);
  /* the three files appear together, or none of them */
  {
    g_autoptr(AiryAtomicGroup) group = airy_atomic_group_begin ();

    if (fitted == NULL
        || (residual_out && !airy_image_write_full (residual_out, res->residual, NULL, &error))
        || (report_out && !airy_atomic_set_contents (report_out, report, strlen (report), &error))
        || !airy_system_save (fitted, output, &error)
        || !airy_atomic_group_commit (g_steal_pointer (&group), &error))
      return fail (error);
  }
  if (quiet)
    return EXIT_OK;
  if (res->restarts > 1)
    g_print (_("fitted %s (%s, %u × %u pixels at x %u, y %u): %u iterations of the best start, %u over %u starts, "
               "in %.2f s (%.1f ms each), loss %.6g%s\n"),
             argv[1], res->objective == AIRY_FIT_OBJECTIVE_POISSON ? "Poisson" : _("least squares"),
             res->window[2], res->window[3], res->window[0], res->window[1], res->iterations,
             res->iterations_total, res->restarts, res->seconds, 1e3 * res->seconds_per_iteration, res->loss,
             res->converged ? "" : _(", not converged"));
  else
    g_print (_("fitted %s (%s, %u × %u pixels at x %u, y %u): %u iterations in %.2f s (%.1f ms each), loss %.6g%s\n"),
             argv[1], res->objective == AIRY_FIT_OBJECTIVE_POISSON ? "Poisson" : _("least squares"),
             res->window[2], res->window[3], res->window[0], res->window[1], res->iterations_total,
             res->seconds, 1e3 * res->seconds_per_iteration, res->loss, res->converged ? "" : _(", not converged"));
  if (res->threads)
    g_print (ngettext ("  on %s (%s, %u thread)\n", "  on %s (%s, %u threads)\n", res->threads), res->backend,
             res->device, res->threads);
  else
    g_print (_("  on %s (%s)\n"), res->backend, res->device);
  for (i = 0; i < res->n_terms; i++)
    g_print ("  Z%-3d %+.4f ± %.1e %s\n", res->indices[i], res->coefficients[i], res->uncertainties[i],
             _("waves"));
  g_print (_("  RMS %.4f waves, Strehl %.3f; bead at x %.4f, y %.4f, z %.4f µm; amplitude %.6g, background %.4g\n"),
           res->rms_waves, res->strehl, res->position[0], res->position[1], res->position[2],
           res->amplitude, res->background);
  g_print (_("wrote %s\n"), output);
  return EXIT_OK;
}
