#define G_LOG_DOMAIN "airy-modality-imaging"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"
#include "airy-error.h"

/* A microscope's chain: the objective, the elements and, with tube, the
 * tube lens (Optical4FSystemPSF); with the tube lens the pupil spacing is
 * f_tube·λ/(n·N·s) per wavelength, so that the camera plane has spacing s
 * for every wavelength, without it the grid's spacing s (the elements keep
 * it to the camera: light-field's microlenses and propagation). */
gboolean
_airy_modality_microscope_chain (AiryGeometry *geom, gboolean tube, GError **error)
{
  AirySystem *system = geom->system;
  AiryElement *objective = airy_system_get_objective (system);
  GPtrArray *elements = airy_system_get_elements (system);
  double n = airy_element_get_double (objective, "n");
  double f_tube = airy_system_get_f_tube (system);
  double spacing = airy_system_get_spacing (system);
  guint h = geom->in_height, w = geom->in_width, i, l;
  AiryElement *lens;

  for (l = 0; l < geom->spectrum->n; l++)
    {
      geom->in_dy[l] = tube ? f_tube * geom->spectrum->wavelengths[l] / (n * h * spacing) : spacing;
      geom->in_dx[l] = tube ? f_tube * geom->spectrum->wavelengths[l] / (n * w * spacing) : spacing;
    }
  geom->imaging = TRUE;
  geom->tube_lens = tube;
  g_ptr_array_add (geom->chain, airy_element_copy (objective));
  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);

      if (klass->category == AIRY_CATEGORY_SOURCE)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("elements[%u]: a microscope has its own source (the objective); "
                       "remove \"%s\""), i, klass->type_name);
          return FALSE;
        }
      if (airy_element_get_enabled (e))
        g_ptr_array_add (geom->chain, airy_element_copy (e));
    }
  if (!tube)
    return TRUE;
  lens = airy_element_new ("ff-lens", NULL);
  g_object_set (lens, "f", f_tube, "n", n, NULL);
  g_ptr_array_add (geom->chain, lens);
  return TRUE;
}

static gboolean
imaging_chain (AiryGeometry *geom, GError **error)
{
  return _airy_modality_microscope_chain (geom, TRUE, error);
}

const AiryModality _airy_modality_imaging = {
  .name = "imaging",
  .label = N_("Microscope image"),
  .description = ("Microscope imaging: a sample convolved with the PSF of an objective, its pupil-plane elements "
                    "and a tube lens"),
  .needs_microscope = TRUE,
  .needs_sample = TRUE,
  .combine = AIRY_MODALITY_COMBINE_CONVOLVE,
  .chain = imaging_chain,
  .schema_note = "needs \"microscope\" and \"sample\"; Σ_z sample ⊛ PSF",
};
