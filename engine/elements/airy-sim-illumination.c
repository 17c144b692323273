/* sim-illumination: the structured illumination of the sim modality
 * (engine/modalities/airy-modality-sim.c), which multiplies the sample by
 * its patterns and leaves this element out of the detection chain. A
 * source of its own: no other modality's chain takes it. */
#define G_LOG_DOMAIN "airy-sim-illumination"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-elements-private.h"
#include "airy-error.h"

typedef struct { AiryElement parent; } AirySimIllumination;
typedef struct { AiryElementClass parent_class; } AirySimIlluminationClass;
G_DEFINE_FINAL_TYPE (AirySimIllumination, _airy_sim_illumination, AIRY_TYPE_ELEMENT)

static gboolean
sim_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("sim-illumination: the illumination of \"modality\": \"sim\", not an element of a chain"));
  return FALSE;
}

static void
_airy_sim_illumination_class_init (AirySimIlluminationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "sim-illumination", N_("SIM illumination"), AIRY_CATEGORY_SOURCE);
  element_class->apply = sim_apply;
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("wavelength", N_("Illumination wavelength"), N_("Vacuum wavelength of the pattern"), "µm",
                            0.1, 10.0, 0.488, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("Illumination NA"),
                            N_("n·sin θ of the ±1 orders: the fringes' frequency 2·NA/λ"), NULL, AIRY_NA_MIN, 4.0,
                            0.8, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("angles", N_("Angles"), N_("Pattern orientations, evenly over 180°"), 1, 12, 3, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("phases", N_("Phases"), N_("Pattern phases per orientation, evenly over 2π (3 or 5)"), 3, 9,
                         3, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("angle", N_("First angle"), N_("The first orientation's angle to the x axis"), "rad",
                            -G_PI, G_PI, 0.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("zeroth", N_("Zeroth order"),
                            N_("The zeroth order's amplitude over each ±1 order's (0: two-beam fringes)"), NULL, 0.0,
                            10.0, 1.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
}

static void
_airy_sim_illumination_init (AirySimIllumination *self)
{
}
