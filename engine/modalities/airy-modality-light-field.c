#define G_LOG_DOMAIN "airy-modality-light-field"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"

/* A Fourier light-field microscope: the objective's pupil (the microscope's
 * f, n and NA, f its focal length as seen from the microlens plane, which
 * is conjugate to the pupil) on the grid's spacing, then the elements —
 * a microlens array and the propagation to its focal plane, the camera —
 * and no tube lens. The image is Σ_z sample_z ⊛ PSF_z (each depth's
 * light field is shift-invariant), the sample on the camera's pixels. */
static gboolean
light_field_chain (AiryGeometry *geom, GError **error)
{
  return _airy_modality_microscope_chain (geom, FALSE, error);
}

const AiryModality _airy_modality_light_field = {
  .name = "light-field",
  .label = N_("Light-field image"),
  .description = ("Fourier light-field microscope: a sample convolved with the PSF of an objective's pupil, "
                  "a microlens array in the pupil's conjugate plane and the way to the camera, no tube lens"),
  .needs_microscope = TRUE,
  .needs_sample = TRUE,
  .combine = AIRY_MODALITY_COMBINE_CONVOLVE,
  .chain = light_field_chain,
  .schema_note = "needs \"microscope\" (its f-tube unused) and \"sample\"; the elements end at the camera; "
                 "Σ_z sample ⊛ PSF",
};
