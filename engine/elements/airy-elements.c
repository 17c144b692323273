/* The built-in element types: their registration and the enumerations of
 * their parameters. The types themselves live in the family files beside
 * this one (sources, masks, lenses, propagation, sensor); a lab's own type
 * is a module instead (tests/modules/airy-ring-mask.c). */
#define G_LOG_DOMAIN "airy-elements"

#include "config.h"

#include "airy-elements-private.h"

#define DEFINE_ENUM(func, Name, ...)                                         \
  GType                                                                      \
  func (void)                                                                \
  {                                                                          \
    static gsize type_id;                                                    \
    if (g_once_init_enter (&type_id))                                        \
      {                                                                      \
        static const GEnumValue values[] = { __VA_ARGS__, { 0, NULL, NULL } }; \
        g_once_init_leave (&type_id, g_enum_register_static (Name, values)); \
      }                                                                      \
    return type_id;                                                          \
  }

DEFINE_ENUM (_airy_defocus_model_get_type, "AiryDefocusModel",
  { AIRY_DEFOCUS_PARAXIAL, "AIRY_DEFOCUS_PARAXIAL", "paraxial" },
  { AIRY_DEFOCUS_NONPARAXIAL, "AIRY_DEFOCUS_NONPARAXIAL", "nonparaxial" })

DEFINE_ENUM (_airy_apodisation_get_type, "AiryApodisation",
  { AIRY_APODISATION_NONE, "AIRY_APODISATION_NONE", "none" },
  { AIRY_APODISATION_APLANATIC, "AIRY_APODISATION_APLANATIC", "aplanatic" })

DEFINE_ENUM (_airy_field_model_get_type, "AiryFieldModel",
  { AIRY_FIELD_SCALAR, "AIRY_FIELD_SCALAR", "scalar" },
  { AIRY_FIELD_VECTORIAL, "AIRY_FIELD_VECTORIAL", "vectorial" })

DEFINE_ENUM (_airy_polarization_get_type, "AiryPolarization",
  { AIRY_POLARIZATION_UNPOLARIZED, "AIRY_POLARIZATION_UNPOLARIZED", "unpolarized" },
  { AIRY_POLARIZATION_X, "AIRY_POLARIZATION_X", "x" },
  { AIRY_POLARIZATION_Y, "AIRY_POLARIZATION_Y", "y" },
  { AIRY_POLARIZATION_CIRCULAR, "AIRY_POLARIZATION_CIRCULAR", "circular" },
  { AIRY_POLARIZATION_DIPOLE, "AIRY_POLARIZATION_DIPOLE", "dipole" })

DEFINE_ENUM (_airy_phase_source_get_type, "AiryPhaseSource",
  { AIRY_PHASE_CONSTANT, "AIRY_PHASE_CONSTANT", "constant" },
  { AIRY_PHASE_IMAGE, "AIRY_PHASE_IMAGE", "image" },
  { AIRY_PHASE_ZERNIKE, "AIRY_PHASE_ZERNIKE", "zernike" },
  { AIRY_PHASE_NAMED, "AIRY_PHASE_NAMED", "named" })

DEFINE_ENUM (_airy_zernike_indexing_get_type, "AiryZernikeIndexing",
  { AIRY_ZERNIKE_ANSI, "AIRY_ZERNIKE_ANSI", "ansi" },
  { AIRY_ZERNIKE_NOLL, "AIRY_ZERNIKE_NOLL", "noll" })

DEFINE_ENUM (_airy_zernike_unit_get_type, "AiryZernikeUnit",
  { AIRY_ZERNIKE_WAVES, "AIRY_ZERNIKE_WAVES", "waves" },
  { AIRY_ZERNIKE_MICRONS, "AIRY_ZERNIKE_MICRONS", "um" })

DEFINE_ENUM (_airy_named_mask_get_type, "AiryNamedMask",
  { AIRY_NAMED_DEFOCUSED_RAMPS, "AIRY_NAMED_DEFOCUSED_RAMPS", "defocused-ramps" },
  { AIRY_NAMED_CUBIC, "AIRY_NAMED_CUBIC", "cubic" },
  { AIRY_NAMED_VORTEX, "AIRY_NAMED_VORTEX", "vortex" },
  { AIRY_NAMED_AXICON, "AIRY_NAMED_AXICON", "axicon" },
  { AIRY_NAMED_GRATING, "AIRY_NAMED_GRATING", "grating" },
  { AIRY_NAMED_PRISM, "AIRY_NAMED_PRISM", "prism" })

DEFINE_ENUM (_airy_propagate_method_get_type, "AiryPropagateMethod",
  { AIRY_PROPAGATE_TRANSFER, "AIRY_PROPAGATE_TRANSFER", "transfer" },
  { AIRY_PROPAGATE_ANGULAR_SPECTRUM, "AIRY_PROPAGATE_ANGULAR_SPECTRUM", "angular-spectrum" },
  { AIRY_PROPAGATE_SINGLE_FFT, "AIRY_PROPAGATE_SINGLE_FFT", "single-fft" })

DEFINE_ENUM (_airy_output_mode_get_type, "AiryOutputMode",
  { AIRY_OUTPUT_SAME, "AIRY_OUTPUT_SAME", "same" },
  { AIRY_OUTPUT_FULL, "AIRY_OUTPUT_FULL", "full" })

DEFINE_ENUM (_airy_reduce_get_type, "AiryReduce",
  { AIRY_REDUCE_NONE, "AIRY_REDUCE_NONE", "none" },
  { AIRY_REDUCE_SUM, "AIRY_REDUCE_SUM", "sum" })

DEFINE_ENUM (_airy_resample_get_type, "AiryResample",
  { AIRY_RESAMPLE_NONE, "AIRY_RESAMPLE_NONE", "none" },
  { AIRY_RESAMPLE_BLOCK_SUM, "AIRY_RESAMPLE_BLOCK_SUM", "block-sum" },
  { AIRY_RESAMPLE_LINEAR, "AIRY_RESAMPLE_LINEAR", "linear" })

DEFINE_ENUM (_airy_noise_get_type, "AiryNoise",
  { AIRY_NOISE_NONE, "AIRY_NOISE_NONE", "none" },
  { AIRY_NOISE_POISSON, "AIRY_NOISE_POISSON", "poisson" },
  { AIRY_NOISE_GAUSSIAN, "AIRY_NOISE_GAUSSIAN", "gaussian" })

/* The built-in element types, in the order "airy-sim info" lists them. */
static GType (*const builtin_types[]) (void) = {
  _airy_objective_point_source_get_type,
  _airy_plane_wave_get_type,
  _airy_point_source_get_type,
  _airy_gaussian_beam_get_type,
  _airy_circular_pupil_get_type,
  _airy_square_pupil_get_type,
  _airy_rectangular_pupil_get_type,
  _airy_gaussian_pupil_get_type,
  _airy_amplitude_mask_get_type,
  _airy_phase_mask_get_type,
  _airy_gibson_lanni_get_type,
  _airy_ff_lens_get_type,
  _airy_df_lens_get_type,
  _airy_thin_lens_get_type,
  _airy_propagate_get_type,
  _airy_sensor_get_type,
};

void
_airy_elements_register_builtin (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (builtin_types); i++)
    airy_element_register (builtin_types[i] ());
}

/* TRUE for Airy's own types, FALSE for those a module brought. */
gboolean
_airy_elements_is_builtin (GType type)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (builtin_types); i++)
    if (builtin_types[i] () == type)
      return TRUE;
  return FALSE;
}
