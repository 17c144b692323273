#define G_LOG_DOMAIN "airy-modality-chains"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"
#include "airy-error.h"
#include "airy-resident.h"

/* A modality of several chains: each chain runs as a system of its own and
 * their intensities combine, plane by plane, or by the modality's own rule
 * (combine_stacks). The result's metadata are the first chain's, its hash
 * the whole system's; the chains run on the host, whole, and a resident
 * result holds the combination. */
static gboolean
chain_joins (const AiryModality *m, guint k, AiryResult *first, AiryResult *r, GError **error)
{
  gsize count = (gsize) first->stack->depth * first->stack->height * first->stack->width, i;

  if (r->stack->depth * r->stack->height * r->stack->width != count)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: %s: chain %u gives %u×%u×%u, chain 0 %u×%u×%u"), m->name, k, r->stack->depth,
                   r->stack->height, r->stack->width, first->stack->depth, first->stack->height,
                   first->stack->width);
      return FALSE;
    }
  if (m->combine_stacks == NULL)
    {
      for (i = 0; i < count; i++)
        if (m->combine == AIRY_MODALITY_COMBINE_PRODUCT)
          first->stack->data[i] *= r->stack->data[i];
        else
          first->stack->data[i] += r->stack->data[i];
    }
  for (i = 0; r->warnings && i < r->warnings->len; i++)
    g_ptr_array_add (first->warnings, g_strdup (g_ptr_array_index (r->warnings, i)));
  return TRUE;
}

static AiryResult *
run_chains (const AiryModality *m, AirySystem *system, guint n, AiryModalityRunFunc run_chain,
            const AiryRunOptions *options, AiryProgressFunc progress, gpointer user_data, GCancellable *cancellable,
            GError **error)
{
  static const AiryRunOptions defaults = { 0 };
  AiryRunOptions sub = options ? *options : defaults;
  g_autoptr(GPtrArray) stacks = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
  g_autoptr(GPtrArray) channels = NULL;
  g_autoptr(GPtrArray) backends = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *json = NULL;
  const AirySpectrum *spectrum = airy_system_get_spectrum (system);
  AiryResult *first = NULL;
  gint64 t0 = g_get_monotonic_time ();
  AiryModalityProgress whole = { progress, user_data, 0, n };
  guint k;

  sub.resident = FALSE;
  sub.per_wavelength = FALSE;
  sub.preview = NULL;
  for (k = 0; k < n; k++)
    {
      g_autoptr(AirySystem) chain = m->chain_system (system, k, error);
      AiryResult *r;

      whole.k = k;
      r = chain ? run_chain (chain, &sub, progress ? _airy_modality_progress : NULL, &whole, cancellable, error)
                : NULL;

      if (r == NULL || (first != NULL && !chain_joins (m, k, first, r, error)))
        {
          g_clear_pointer (&r, airy_result_free);
          g_clear_pointer (&first, airy_result_free);
          return NULL;
        }
      g_ptr_array_add (backends, g_strdup (r->backend));
      if (first != NULL && m->combine_stacks)
        g_ptr_array_add (stacks, g_steal_pointer (&r->stack));
      if (first == NULL)
        first = r;
      else
        airy_result_free (r);
    }
  if (m->combine_stacks)
    {
      channels = options && options->per_wavelength
                 ? g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free) : NULL;
      g_ptr_array_insert (stacks, 0, first->stack);
      if (!m->combine_stacks (system, (AiryStack **) stacks->pdata, stacks->len, channels, first->warnings,
                              cancellable, error))
        {
          g_ptr_array_steal_index (stacks, 0);
          airy_result_free (first);
          return NULL;
        }
      /* stacks[0] is the result's own */
      stacks->pdata[0] = NULL;
      if (channels && channels->len)
        {
          first->n_channels = channels->len;
          g_ptr_array_set_free_func (channels, NULL);
          first->channels = (AiryStack **) g_ptr_array_free (g_steal_pointer (&channels), FALSE);
        }
    }
  g_free (first->backend);
  first->backend = _airy_modality_backends_join ((const char *const *) backends->pdata, backends->len);
  first->hash = airy_system_hash (system);
  first->seconds = (g_get_monotonic_time () - t0) / 1e6;
  /* the provenance is the whole system (a channel keeps its wavelength) */
  json = airy_system_to_json_full (system);
  airy_stack_set_provenance (first->stack, spectrum->n, spectrum->wavelengths, spectrum->weights, json);
  for (k = 0; k < first->n_channels; k++)
    airy_stack_set_provenance (first->channels[k], first->channels[k]->n_wavelengths,
                               first->channels[k]->wavelengths, first->channels[k]->weights, json);
  if (options && options->resident)
    first->resident = airy_resident_new_host (g_steal_pointer (&first->stack));
  return first;
}

/* The stacks the combination holds at once (result_stacks) within the
 * memory budget, before any chain runs. */
static gboolean
check_budget (const AiryModality *m, AirySystem *system, GError **error)
{
  guint n_stacks = 0;
  guint64 need = m->result_stacks ? airy_system_get_result_bytes (system, &n_stacks) : 0;
  guint64 budget = airy_memory_budget ();

  if (need <= budget)
    return TRUE;
  {
    g_autofree char *need_s = airy_format_bytes (need);
    g_autofree char *budget_s = airy_memory_budget_describe (budget, TRUE);

    g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                 _("grid.shape: %s holds %u stacks at once (its chains, the result and its channels), %s of "
                   "memory, more than the budget of %s; reduce grid.shape or z.count, or turn spectrum.channels "
                   "off (--channels none)"),
                 m->name, n_stacks, need_s, budget_s);
  }
  return FALSE;
}

AiryResult *
_airy_modality_run (const AiryModality   *m,
                    AirySystem           *system,
                    AiryModalityRunFunc   run_chain,
                    const AiryRunOptions *options,
                    AiryProgressFunc      progress,
                    gpointer              user_data,
                    GCancellable         *cancellable,
                    GError              **error)
{
  gint64 t0 = g_get_monotonic_time ();
  AiryResult *result;

  if (!check_budget (m, system, error))
    return NULL;
  if (m->run == NULL)
    return run_chains (m, system, m->n_chains ? m->n_chains (system) : 1, run_chain, options, progress, user_data,
                       cancellable, error);
  result = m->run (system, run_chain, options, progress, user_data, cancellable, error);
  if (result)
    {
      result->hash = airy_system_hash (system);
      result->seconds = (g_get_monotonic_time () - t0) / 1e6;
    }
  return result;
}
