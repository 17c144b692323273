/* What the modalities that make their result themselves (the run hook:
 * sted, light-sheet) share: finding their parameter element and putting
 * the result together from the runs of their chains. */
#define G_LOG_DOMAIN "airy-modality"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"
#include "airy-error.h"
#include "airy-resident.h"

int
_airy_modality_find_element (AirySystem *system,
                             const char *type_name)
{
  GPtrArray *elements = airy_system_get_elements (system);
  guint i;

  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);

      if (airy_element_get_enabled (e) && g_str_equal (airy_element_get_type_name (e), type_name))
        return (int) i;
    }
  return -1;
}

/* The result's backend from its chains' (in order): the one name when
 * every chain ran on it, else each chain's ("chain 0: cuda, chain 1:
 * cpu"), so that a chain that another backend ran shows in the run's
 * report beside the fallback's warning. */
char *
_airy_modality_backends_join (const char *const *backends,
                              guint              n)
{
  g_autoptr(GString) s = g_string_new (NULL);
  gboolean same = TRUE;
  guint k;

  for (k = 1; k < n; k++)
    same = same && g_strcmp0 (backends[k], backends[0]) == 0;
  if (n == 0 || same)
    return g_strdup (n ? backends[0] : NULL);
  for (k = 0; k < n; k++)
    {
      if (k)
        g_string_append (s, ", ");
      /* TRANSLATORS: which backend ran a modality's chain k */
      g_string_append_printf (s, _("chain %u: %s"), k, backends[k] ? backends[k] : "?");
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

AiryResult *
_airy_modality_result_new (AiryResult           *first,
                           AiryResult           *second,
                           const char           *second_name,
                           AiryStack            *stack,
                           AiryStack           **channels,
                           guint                 n_channels,
                           const AiryRunOptions *options)
{
  AiryResult *result = g_new0 (AiryResult, 1);
  guint i;

  result->backend = _airy_modality_backends_join ((const char *[]) { first->backend, second ? second->backend : NULL },
                                                  second ? 2 : 1);
  result->n_devices = first->n_devices;
  result->threads = first->threads;
  result->ranks = first->ranks;
  result->part_first = first->part_first;
  result->part_count = first->part_count;
  result->n_planes = first->n_planes;
  result->stack_is_part = first->stack_is_part;
  result->stack = stack;
  result->n_channels = n_channels;
  result->channels = channels;
  result->warnings = g_ptr_array_new_with_free_func (g_free);
  for (i = 0; first->warnings && i < first->warnings->len; i++)
    g_ptr_array_add (result->warnings, g_strdup (g_ptr_array_index (first->warnings, i)));
  for (i = 0; second && second->warnings && i < second->warnings->len; i++)
    g_ptr_array_add (result->warnings,
                     g_strdup_printf ("%s: %s", second_name, (char *) g_ptr_array_index (second->warnings, i)));
  result->seconds = first->seconds + (second ? second->seconds : 0.0);
  result->own_s = first->own_s + (second ? second->own_s : 0.0);
  if (options && options->resident)
    result->resident = airy_resident_new_host (g_steal_pointer (&result->stack));
  return result;
}

/* Two stacks (a chain's and a second: STED's depletion, a light sheet's
 * illumination); with channels the result and its three channels (the
 * second one of them). */
guint
_airy_modality_pair_stacks (AirySystem *system,
                            gboolean    channels)
{
  return channels ? 4 : 2;
}

/* The options of a chain's run: on the host, whole, no extras. */
AiryRunOptions
_airy_modality_chain_options (const AiryRunOptions *options)
{
  AiryRunOptions opts = options ? *options : (AiryRunOptions) { 0 };

  opts.resident = FALSE;
  opts.keep_psf = FALSE;
  opts.per_wavelength = FALSE;
  opts.preview = NULL;
  return opts;
}

/* An illumination's NA at elements[at] against its medium's n. */
gboolean
_airy_modality_check_na (int      at,
                         double   na,
                         double   n,
                         GError **error)
{
  if (na <= n)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("elements[%d].na: must be in (0, n=%g], got %g (an illumination NA above the medium's index)"), at,
               n, na);
  if (error)
    airy_error_set_range (*error, &(AiryErrorRange) { .minimum = 0.0, .maximum = n, .value = na, .maximum_name = "n" });
  return FALSE;
}
