#define G_LOG_DOMAIN "airy-modality-psf"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"
#include "airy-error.h"

/* A PSF system's chain: a source first, then the enabled elements. */
gboolean
_airy_modality_psf_chain (AiryGeometry *geom, GError **error)
{
  GPtrArray *elements = airy_system_get_elements (geom->system);
  double spacing = airy_system_get_spacing (geom->system);
  guint i, l;

  for (l = 0; l < geom->spectrum->n; l++)
    geom->in_dy[l] = geom->in_dx[l] = spacing;
  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);

      if ((i == 0) != (klass->category == AIRY_CATEGORY_SOURCE))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       i == 0 ? "elements[%u]: the first element must be a source, got \"%s\""
                              : "elements[%u]: only the first element may be a source, got \"%s\"",
                       i, klass->type_name);
          return FALSE;
        }
      if (i == 0 && !airy_element_get_enabled (e))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("elements[0]: the source cannot be disabled"));
          return FALSE;
        }
      if (airy_element_get_enabled (e))
        g_ptr_array_add (geom->chain, airy_element_copy (e));
    }
  if (geom->chain->len == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: an optical system needs at least a source"));
      return FALSE;
    }
  return TRUE;
}

const AiryModality _airy_modality_psf = {
  .name = "psf",
  .label = N_("Point spread function"),
  .description = ("Point spread function: a source and the elements after it"),
  .needs_microscope = FALSE,
  .combine = AIRY_MODALITY_COMBINE_ONE,
  .chain = _airy_modality_psf_chain,
  .schema_note = "a source first, then the elements; the intensity after the chain",
};
