#define G_LOG_DOMAIN "airy-modality-imaging"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"
#include "airy-error.h"

/* A microscope's chain: Optical4FSystemPSF, the objective, the elements and
 * the tube lens; the pupil spacing f_tube·λ/(n·N·s) per wavelength, so the
 * camera plane has spacing s for every wavelength. */
static gboolean
imaging_chain (AiryGeometry *geom, GError **error)
{
  AirySystem *system = geom->system;
  AiryElement *objective = airy_system_get_objective (system);
  GPtrArray *elements = airy_system_get_elements (system);
  double n = airy_element_get_double (objective, "n");
  double f_tube = airy_system_get_f_tube (system);
  double spacing = airy_system_get_spacing (system);
  guint h = geom->in_height, w = geom->in_width, i, l;
  AiryElement *tube;

  for (l = 0; l < geom->spectrum->n; l++)
    {
      geom->in_dy[l] = f_tube * geom->spectrum->wavelengths[l] / (n * h * spacing);
      geom->in_dx[l] = f_tube * geom->spectrum->wavelengths[l] / (n * w * spacing);
    }
  geom->imaging = TRUE;
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
  tube = airy_element_new ("ff-lens", NULL);
  g_object_set (tube, "f", f_tube, "n", n, NULL);
  g_ptr_array_add (geom->chain, tube);
  return TRUE;
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
