#define G_LOG_DOMAIN "airy-result"

#include "config.h"

#include "airy-run.h"

/* A run's result, apart from the run (the modalities that combine runs
 * free theirs without depending on the run itself). */
G_DEFINE_BOXED_TYPE (AiryResult, airy_result, airy_result_ref, airy_result_free)

AiryResult *
airy_result_ref (AiryResult *result)
{
  g_return_val_if_fail (result != NULL, NULL);

  g_atomic_int_inc (&result->extra_refs);
  return result;
}

void
airy_result_free (AiryResult *result)
{
  /* the counter is 0 while one reference is held */
  if (result == NULL || g_atomic_int_add (&result->extra_refs, -1) > 0)
    return;
  airy_stack_free (result->stack);
  airy_stack_free (result->psf);
  for (guint l = 0; l < result->n_channels; l++)
    airy_stack_free (result->channels[l]);
  g_free (result->channels);
  airy_resident_unref (result->resident);
  g_clear_pointer (&result->warnings, g_ptr_array_unref);
  g_free (result->backend);
  g_free (result);
}
