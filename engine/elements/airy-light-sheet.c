/* light-sheet: the illumination of the light-sheet modality
 * (engine/modalities/airy-modality-light-sheet.c), which computes it on
 * the detection PSF's voxels and leaves this element out of the detection
 * chain. A source of its own: no other modality's chain takes it. */
#define G_LOG_DOMAIN "airy-light-sheet"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-elements-private.h"
#include "airy-error.h"

typedef struct { AiryElement parent; } AiryLightSheetElement;
typedef struct { AiryElementClass parent_class; } AiryLightSheetElementClass;
G_DEFINE_FINAL_TYPE (AiryLightSheetElement, _airy_light_sheet, AIRY_TYPE_ELEMENT)

static gboolean
light_sheet_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("light-sheet: the illumination of \"modality\": \"light-sheet\", not an element of a chain"));
  return FALSE;
}

static gboolean
light_sheet_param_relevant (AiryElement *self, GParamSpec *pspec)
{
  if (g_str_equal (pspec->name, "annulus"))
    return airy_element_get_enum (self, "profile") == AIRY_LIGHT_SHEET_BESSEL;
  return TRUE;
}

static void
_airy_light_sheet_class_init (AiryLightSheetElementClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "light-sheet", N_("Light-sheet illumination"),
                                   AIRY_CATEGORY_SOURCE);
  element_class->apply = light_sheet_apply;
  element_class->param_relevant = light_sheet_param_relevant;
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("profile", N_("Profile"), N_("A Gaussian sheet or a Bessel beam from an annulus"),
                          _airy_light_sheet_profile_get_type (), AIRY_LIGHT_SHEET_GAUSSIAN, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("scanned", N_("Scanned"),
                             N_("Swept along y (a digitally scanned sheet); a static Bessel beam otherwise"), FALSE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("wavelength", N_("Illumination wavelength"), N_("Vacuum wavelength of the sheet"), "µm",
                            0.1, 10.0, 0.488, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("Illumination NA"),
                            N_("n·sin θ of the illumination: the Gaussian's divergence, the annulus' outer edge (≤ n)"),
                            NULL, AIRY_NA_MIN, 4.0, 0.1, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Medium the sheet travels in"), NULL, 1.0, 4.0, 1.33,
                            AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("annulus", N_("Annulus inner edge"), N_("The annulus' inner NA over its outer NA"), NULL,
                            0.0, 0.999, 0.95, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("offset", N_("Offset"), N_("The sheet's centre along the detection axis z"), "µm",
                            -1e4, 1e4, 0.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("tilt", N_("Tilt"), N_("The sheet's angle to the x axis, about y"), "rad",
                            -G_PI / 2, G_PI / 2, 0.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
}

static void
_airy_light_sheet_init (AiryLightSheetElement *self)
{
}
