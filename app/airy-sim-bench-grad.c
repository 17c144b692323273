/* airy-sim bench --grad: the forward against forward + gradient, in one
 * run: the fused forward airy-sim run computes, the reference program's
 * forward the reverse pass runs on, and the whole gradient call with the
 * pass stored and checkpointed, each with the peak RSS after it. */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <stdio.h>
#include <sys/resource.h>
#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "airy.h"
#include "airy-grad-private.h"
#include "airy-sim-private.h"

static guint64
peak_rss (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (guint64) ru.ru_maxrss * 1024;
}

static int
compare (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (double *t, guint n)
{
  qsort (t, n, sizeof *t, compare);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

typedef struct
{
  double   seconds;   /* median of the repeats */
  double   forward_s; /* the call's own forward, median */
  guint64  peak;      /* peak RSS after the repeats */
  gboolean stored;
} GradTime;

/* the whole gradient call in mode, repeat times; the variables the pass
 * does not follow in this system are dropped the first time */
static gboolean
time_grad (AirySystem *system, JsonNode *root, const char *base_dir, const AiryLoss *loss, GPtrArray *vars,
           AiryGradMode mode, guint threads, int repeat, GradTime *out, GError **error)
{
  g_autofree double *t = g_new (double, repeat), *f = g_new (double, repeat);
  int i;

  for (i = 0; i < repeat; i++)
    {
      AiryGradOptions options = { mode, 0, threads };
      g_autoptr(GError) local = NULL;
      double value;

      while (!_airy_grad_compute (system, root, base_dir, loss, vars, &options, &value, NULL, &local))
        {
          if (!drop_refused (vars, NULL, local))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          g_clear_error (&local);
        }
      t[i] = options.total_s;
      f[i] = options.forward_s;
      out->stored = options.stored;
    }
  out->seconds = median (t, repeat);
  out->forward_s = median (f, repeat);
  out->peak = peak_rss ();
  return TRUE;
}

static char *
mib (guint64 bytes)
{
  return g_strdup_printf ("%.0f MiB", bytes / 1048576.0);
}

int
bench_grad (AirySystem *system, const char *what, int repeat, guint threads, gboolean json)
{
  g_autofree char *base_dir = g_str_has_suffix (what, ".json") ? g_path_get_dirname (what) : NULL;
  g_autoptr(GError) error = NULL;
  /* every parameter written: the variables are the numbers of this file */
  g_autofree char *text = airy_system_to_json_full (system);
  g_autoptr(JsonNode) root = json_from_string (text, &error);
  g_autoptr(GPtrArray) vars = NULL;
  g_autoptr(AiryResult) first = NULL;
  g_autofree double *fused = g_new (double, repeat), *reference = g_new (double, repeat);
  AiryRunOptions options = { 0 };
  AiryLoss loss = { AIRY_LOSS_L2, (char *) "zeros", NULL };
  GradTime stored = { 0 }, checkpointed = { 0 }, pass = { 0 };
  guint64 peak_forward;
  guint h, w, nz;
  int i;

  if (ranks->size > 1)
    return usage_error ("--grad: times one process, got %u ranks", ranks->size);
  if (root == NULL)
    return fail (error);
  options.threads = threads;
  airy_system_get_shape (system, &h, &w);
  airy_system_get_z (system, &nz);
  /* a warm-up (FFTW's planning), then the fused forward (airy-sim run's)
   * and the reference program's */
  if ((first = airy_run (system, &options, NULL, NULL, NULL, &error)) == NULL)
    return fail (error);
  g_clear_pointer (&first, airy_result_free);
  for (i = 0; i < repeat; i++)
    {
      g_autoptr(AiryResult) r = airy_run (system, &options, NULL, NULL, NULL, &error);
      g_autoptr(AiryStack) s = NULL;
      gint64 t0;

      if (r == NULL)
        return fail (error);
      fused[i] = r->seconds;
      t0 = g_get_monotonic_time ();
      if ((s = _airy_grad_forward (system, threads, &error)) == NULL)
        return fail (error);
      reference[i] = (g_get_monotonic_time () - t0) / 1e6;
      if (loss.target == NULL)
        loss.target = airy_stack_new (s->depth, s->height, s->width);
    }
  peak_forward = peak_rss ();
  vars = _airy_grad_vars_all (root, system);
  /* the reverse pass alone (no variable's tangent), then checkpointed
   * before stored: its peak is not hidden by the stored pass's */
  {
    g_autoptr(GPtrArray) none = g_ptr_array_new ();

    if (!time_grad (system, root, base_dir, &loss, none, AIRY_GRAD_CHECKPOINT, threads, repeat, &pass, &error))
      {
        airy_stack_free (loss.target);
        return fail (error);
      }
  }
  if (!time_grad (system, root, base_dir, &loss, vars, AIRY_GRAD_CHECKPOINT, threads, repeat, &checkpointed, &error)
      || !time_grad (system, root, base_dir, &loss, vars, AIRY_GRAD_STORE, threads, repeat, &stored, &error))
    {
      airy_stack_free (loss.target);
      return fail (error);
    }
  airy_stack_free (loss.target);
  {
    double f = median (fused, repeat), ref = median (reference, repeat);
    g_autofree char *p0 = mib (peak_forward), *p1 = mib (checkpointed.peak), *p2 = mib (stored.peak);

    if (json)
      {
        g_print ("{\"system\": \"%s\", \"planes\": %u, \"height\": %u, \"width\": %u, \"threads\": %u, "
                 "\"variables\": %u, \"forward_fused_s\": %.6f, \"forward_reference_s\": %.6f, "
                 "\"pass_s\": %.6f, \"grad_stored_s\": %.6f, \"grad_checkpointed_s\": %.6f, \"ratio_stored\": %.4f, "
                 "\"ratio_checkpointed\": %.4f, \"peak_rss_forward\": %" G_GUINT64_FORMAT ", "
                 "\"peak_rss_checkpointed\": %" G_GUINT64_FORMAT ", \"peak_rss_stored\": %" G_GUINT64_FORMAT "}\n",
                 what, nz, h, w, threads, vars->len, f, ref, pass.seconds, stored.seconds, checkpointed.seconds, stored.seconds / f,
                 checkpointed.seconds / f, peak_forward, checkpointed.peak, stored.peak);
        return EXIT_OK;
      }
    g_print ("system      %s: %u planes of %u × %u, %u threads, %u variables (loss l2 to zeros)\n", what, nz, h, w,
             threads, vars->len);
    g_print ("forward     %.1f ms fused (airy-sim run), %.1f ms reference program (median of %d)\n", f * 1e3,
             ref * 1e3, repeat);
    g_print ("pass        %.1f ms forward + reverse pass, no variable (%.2f × fused, %.2f × reference)\n",
             pass.seconds * 1e3, pass.seconds / f, pass.seconds / ref);
    g_print ("gradient    %.1f ms stored (%.2f × fused, %.2f × reference)\n", stored.seconds * 1e3,
             stored.seconds / f, stored.seconds / ref);
    g_print ("            %.1f ms checkpointed (%.2f × fused, %.2f × reference)\n", checkpointed.seconds * 1e3,
             checkpointed.seconds / f, checkpointed.seconds / ref);
    g_print ("memory      peak RSS %s after the forwards, %s after checkpointed, %s after stored\n", p0, p1, p2);
  }
  return EXIT_OK;
}
