#define G_LOG_DOMAIN "airy-grad"

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "airy-grad-ops-private.h"
#include "airy-error.h"
#include "airy-modality.h"

/* The unfused program of a system, which both the reverse pass
 * (airy-grad.c) and the variables' tangents (airy-grad-vars.c) run. */

void
_airy_grad_program_clear (Program *p)
{
  g_clear_pointer (&p->ops, g_ptr_array_unref);
  g_clear_pointer (&p->list, _airy_ops_unref);
  g_clear_pointer (&p->plan, _airy_plan_unref);
}

gboolean
_airy_grad_program_init (Program *p, AirySystem *system, GError **error)
{
  AiryRunOptions options = { 0 };
  AiryStages st;
  guint k;

  memset (p, 0, sizeof *p);
  if (_airy_modality_combines (_airy_modality_of (system), system))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: the gradient follows one optical chain; %s combines several (take its chain in "
                     "the psf modality)"), airy_system_get_modality (system));
      return FALSE;
    }
  if ((p->plan = _airy_plan_new (system, &options, NULL, error)) == NULL)
    return FALSE;
  /* one compile of the chain: the fused field stage is not the gradient's */
  p->plan->unfused = TRUE;
  if (!_airy_plan_compile (p->plan, error))
    return FALSE;
  p->list = _airy_ops_ref (p->plan->compiled);
  p->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) _airy_op_unref);
  for (k = 0; k < p->list->ops->len; k++)
    g_ptr_array_add (p->ops, _airy_op_ref (g_ptr_array_index (p->list->ops, k)));
  p->n_field = p->ops->len;
  _airy_ops_stages (p->plan->ops, &st);
  for (k = st.n_field; k < p->plan->ops->len; k++)
    g_ptr_array_add (p->ops, _airy_op_ref (g_ptr_array_index (p->plan->ops, k)));
  return TRUE;
}

