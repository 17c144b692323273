/* The parts of a point-scanning microscope that are no element of the
 * optical chain: the excitation beam, the detection pinhole and the
 * detector array of an image scanning microscope. They sit in "elements"
 * beside the chain (after its final lens); the scanning modalities
 * (engine/modalities/airy-modality-scan.c) read them and take them out
 * before the chain is compiled, so a chain that reaches one is in another
 * modality, which is told. Category "sensor": not in the panel's menu of
 * elements to add (a scanning modality adds those it reads). */
#define G_LOG_DOMAIN "airy-scan"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-elements-private.h"
#include "airy-error.h"

/* reached in a chain: the system is not in a scanning modality */
static gboolean
scan_part_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s: \"%s\" belongs to a scanning microscope; set \"modality\" to confocal, two-photon or ism, "
                 "or remove it"), ctx->path, airy_element_get_type_name (self));
  return FALSE;
}

static gboolean
scan_part_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("\"%s\" belongs to a scanning microscope and is no element of the optical chain"),
               airy_element_get_type_name (self));
  return FALSE;
}

static void
scan_part_class_init (AiryElementClass *klass, const char *type_name, const char *title)
{
  airy_element_class_set_metadata (klass, type_name, title, AIRY_CATEGORY_SENSOR);
  klass->check = scan_part_check;
  klass->apply = scan_part_apply;
}

/* ------------------------------------------------------------------------ */
/* excitation: the scanned laser focus                                      */

typedef struct { AiryElement parent; } AiryExcitation;
typedef struct { AiryElementClass parent_class; } AiryExcitationClass;
G_DEFINE_FINAL_TYPE (AiryExcitation, _airy_excitation, AIRY_TYPE_ELEMENT)

static void
_airy_excitation_class_init (AiryExcitationClass *klass)
{
  scan_part_class_init (AIRY_ELEMENT_CLASS (klass), "excitation", N_("Excitation beam"));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("wavelength", N_("Excitation wavelength"),
                            N_("Vacuum wavelength of the scanned laser (two-photon: e.g. 0.92 µm)"), "µm",
                            0.0, 10.0, 0.488, AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("fill", N_("Back-aperture fill"),
                            N_("The laser's 1/e² intensity radius over the pupil radius f·NA/n; 0: a uniformly "
                               "filled pupil"), NULL, 0.0, 100.0, 0.0, 0));
}

static void
_airy_excitation_init (AiryExcitation *self)
{
}

/* ------------------------------------------------------------------------ */
/* pinhole: a disk in the image plane, its diameter in Airy units           */

typedef struct { AiryElement parent; } AiryPinhole;
typedef struct { AiryElementClass parent_class; } AiryPinholeClass;
G_DEFINE_FINAL_TYPE (AiryPinhole, _airy_pinhole, AIRY_TYPE_ELEMENT)

static void
_airy_pinhole_class_init (AiryPinholeClass *klass)
{
  scan_part_class_init (AIRY_ELEMENT_CLASS (klass), "pinhole", N_("Pinhole"));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("diameter", N_("Pinhole diameter"),
                            N_("In Airy units: 1 AU = 1.22·λ_em/NA in the sample plane"), "AU",
                            0.0, 1000.0, 1.0, AIRY_PARAM_EXCLUSIVE_MIN));
}

static void
_airy_pinhole_init (AiryPinhole *self)
{
}

/* ------------------------------------------------------------------------ */
/* detector-array: image scanning (Airyscan), N × N square elements         */

typedef struct { AiryElement parent; } AiryDetectorArray;
typedef struct { AiryElementClass parent_class; } AiryDetectorArrayClass;
G_DEFINE_FINAL_TYPE (AiryDetectorArray, _airy_detector_array, AIRY_TYPE_ELEMENT)

static gboolean
detector_array_param_relevant (AiryElement *self, GParamSpec *pspec)
{
  gboolean hexagonal = airy_element_get_enum (self, "layout") == AIRY_ARRAY_HEXAGONAL;

  if (g_str_equal (pspec->name, "size"))
    return !hexagonal;
  if (g_str_equal (pspec->name, "elements"))
    return hexagonal;
  return TRUE;
}

static void
_airy_detector_array_class_init (AiryDetectorArrayClass *klass)
{
  scan_part_class_init (AIRY_ELEMENT_CLASS (klass), "detector-array", N_("Detector array"));
  AIRY_ELEMENT_CLASS (klass)->param_relevant = detector_array_param_relevant;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_enum ("layout", N_("Layout"),
                          N_("Square N × N elements, or hexagonal ones (Airyscan's 32) on a honeycomb"),
                          _airy_array_layout_get_type (), AIRY_ARRAY_SQUARE, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_set_unit (airy_param_spec_int ("size", N_("Array size"),
                                                   N_("Elements per side of the square array (N × N)"),
                                                   1, 15, 5, 0), "px"));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_int ("elements", N_("Elements"),
                         N_("Hexagonal elements, the honeycomb's cells nearest the axis"), 1, 61, 32, 0));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("element-size", N_("Element size"),
                            N_("Width of one element in Airy units (1.22·λ_em/NA): a square's side, a hexagon's "
                               "width across its flats (the pitch)"), "AU",
                            0.0, 10.0, 0.25, AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("reassignment", N_("Reassignment factor"),
                            N_("Each element's image moves back by this fraction of its offset; 0: from the "
                               "wavelengths, λ_ex²/(λ_ex² + λ_em²)"), NULL, 0.0, 1.0, 0.0, 0));
}

static void
_airy_detector_array_init (AiryDetectorArray *self)
{
}
