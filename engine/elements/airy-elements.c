/* The built-in element types: their registration and the enumerations of
 * their parameters. The types themselves live in the family files beside
 * this one (sources, masks, lenses, propagation, sensor); a lab's own type
 * is a module instead (tests/modules/airy-ring-mask.c). */
#define G_LOG_DOMAIN "airy-elements"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-elements-private.h"

/* Each value's nick is its name in the JSON, the CLI and the schema and
 * never changes; its value_name is the label the panel shows, marked for
 * translation (the panel shows _(value_name)). */
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
  { AIRY_DEFOCUS_PARAXIAL, N_("paraxial"), "paraxial" },
  { AIRY_DEFOCUS_NONPARAXIAL, N_("non-paraxial"), "nonparaxial" })

DEFINE_ENUM (_airy_apodisation_get_type, "AiryApodisation",
  { AIRY_APODISATION_NONE, N_("none"), "none" },
  { AIRY_APODISATION_APLANATIC, N_("aplanatic"), "aplanatic" })

DEFINE_ENUM (_airy_field_model_get_type, "AiryFieldModel",
  { AIRY_FIELD_SCALAR, N_("scalar"), "scalar" },
  { AIRY_FIELD_VECTORIAL, N_("vectorial"), "vectorial" })

DEFINE_ENUM (_airy_polarization_get_type, "AiryPolarization",
  { AIRY_POLARIZATION_UNPOLARIZED, N_("unpolarized"), "unpolarized" },
  { AIRY_POLARIZATION_X, N_("x"), "x" },
  { AIRY_POLARIZATION_Y, N_("y"), "y" },
  { AIRY_POLARIZATION_CIRCULAR, N_("circular"), "circular" },
  { AIRY_POLARIZATION_DIPOLE, N_("dipole"), "dipole" })

DEFINE_ENUM (_airy_phase_source_get_type, "AiryPhaseSource",
  { AIRY_PHASE_CONSTANT, N_("constant"), "constant" },
  { AIRY_PHASE_IMAGE, N_("image file"), "image" },
  { AIRY_PHASE_ZERNIKE, N_("Zernike terms"), "zernike" },
  { AIRY_PHASE_NAMED, N_("named mask"), "named" },
  { AIRY_PHASE_SEIDEL, N_("Seidel aberrations"), "seidel" })

DEFINE_ENUM (_airy_zernike_indexing_get_type, "AiryZernikeIndexing",
  { AIRY_ZERNIKE_ANSI, N_("ANSI"), "ansi" },
  { AIRY_ZERNIKE_NOLL, N_("Noll"), "noll" })

DEFINE_ENUM (_airy_zernike_unit_get_type, "AiryZernikeUnit",
  { AIRY_ZERNIKE_WAVES, N_("waves"), "waves" },
  { AIRY_ZERNIKE_MICRONS, N_("µm"), "um" })

DEFINE_ENUM (_airy_named_mask_get_type, "AiryNamedMask",
  { AIRY_NAMED_DEFOCUSED_RAMPS, N_("defocused ramps"), "defocused-ramps" },
  { AIRY_NAMED_CUBIC, N_("cubic"), "cubic" },
  { AIRY_NAMED_VORTEX, N_("vortex"), "vortex" },
  { AIRY_NAMED_AXICON, N_("axicon"), "axicon" },
  { AIRY_NAMED_GRATING, N_("grating"), "grating" },
  { AIRY_NAMED_PRISM, N_("prism"), "prism" },
  { AIRY_NAMED_SINUSOID, N_("sinusoid grating"), "sinusoid" },
  { AIRY_NAMED_CIRCULAR, N_("circular phase"), "circular" },
  { AIRY_NAMED_POTATO_CHIP, N_("potato chip"), "potato-chip" })

DEFINE_ENUM (_airy_propagate_method_get_type, "AiryPropagateMethod",
  { AIRY_PROPAGATE_TRANSFER, N_("transfer function"), "transfer" },
  { AIRY_PROPAGATE_ANGULAR_SPECTRUM, N_("angular spectrum"), "angular-spectrum" },
  { AIRY_PROPAGATE_SINGLE_FFT, N_("single FFT"), "single-fft" },
  { AIRY_PROPAGATE_SAS, N_("scalable angular spectrum"), "sas" })

DEFINE_ENUM (_airy_output_mode_get_type, "AiryOutputMode",
  { AIRY_OUTPUT_SAME, N_("cropped"), "same" },
  { AIRY_OUTPUT_FULL, N_("padded"), "full" })

DEFINE_ENUM (_airy_reduce_get_type, "AiryReduce",
  { AIRY_REDUCE_NONE, N_("none"), "none" },
  { AIRY_REDUCE_SUM, N_("sum of planes"), "sum" })

DEFINE_ENUM (_airy_resample_get_type, "AiryResample",
  { AIRY_RESAMPLE_NONE, N_("none"), "none" },
  { AIRY_RESAMPLE_BLOCK_SUM, N_("block sum"), "block-sum" },
  { AIRY_RESAMPLE_LINEAR, N_("bilinear"), "linear" })

DEFINE_ENUM (_airy_noise_get_type, "AiryNoise",
  { AIRY_NOISE_NONE, N_("none"), "none" },
  { AIRY_NOISE_POISSON, N_("Poisson"), "poisson" },
  { AIRY_NOISE_GAUSSIAN, N_("Gaussian"), "gaussian" })

DEFINE_ENUM (_airy_handedness_get_type, "AiryHandedness",
  { AIRY_HANDEDNESS_LEFT, N_("left"), "left" },
  { AIRY_HANDEDNESS_RIGHT, N_("right"), "right" })

DEFINE_ENUM (_airy_jones_pattern_get_type, "AiryJonesPattern",
  { AIRY_JONES_PATTERN_UNIFORM, N_("uniform"), "uniform" },
  { AIRY_JONES_PATTERN_SPHERULITE, N_("spherulite"), "spherulite" },
  { AIRY_JONES_PATTERN_COMPONENTS, N_("matrix components"), "components" },
  { AIRY_JONES_PATTERN_MAP, N_("orientation and retardance maps"), "map" })

DEFINE_ENUM (_airy_array_layout_get_type, "AiryArrayLayout",
  { AIRY_ARRAY_SQUARE, N_("square"), "square" },
  { AIRY_ARRAY_HEXAGONAL, N_("hexagonal"), "hexagonal" })
DEFINE_ENUM (_airy_depletion_shape_get_type, "AiryDepletionShape",
  { AIRY_DEPLETION_VORTEX, N_("vortex (lateral)"), "vortex" },
  { AIRY_DEPLETION_TOP_HAT, N_("top-hat (axial)"), "top-hat" })

DEFINE_ENUM (_airy_light_sheet_profile_get_type, "AiryLightSheetProfile",
  { AIRY_LIGHT_SHEET_GAUSSIAN, N_("Gaussian"), "gaussian" },
  { AIRY_LIGHT_SHEET_BESSEL, N_("Bessel (annulus)"), "bessel" })
DEFINE_ENUM (_airy_sample_source_get_type, "AirySampleSource",
  { AIRY_SAMPLE_SOURCE_CONSTANT, N_("constant"), "constant" },
  { AIRY_SAMPLE_SOURCE_IMAGE, N_("image files"), "image" },
  { AIRY_SAMPLE_SOURCE_MAP, N_("maps"), "map" })

DEFINE_ENUM (_airy_volume_kind_get_type, "AiryVolumeKind",
  { AIRY_VOLUME_SLAB, N_("slab"), "slab" },
  { AIRY_VOLUME_BEAD, N_("bead"), "bead" },
  { AIRY_VOLUME_MAP, N_("maps"), "map" },
  { AIRY_VOLUME_FILE, N_("TIFF stacks"), "file" })

DEFINE_ENUM (_airy_microlens_layout_get_type, "AiryMicrolensLayout",
  { AIRY_MICROLENS_SQUARE, N_("square"), "square" },
  { AIRY_MICROLENS_RECTANGULAR, N_("rectangular"), "rectangular" },
  { AIRY_MICROLENS_HEXAGONAL, N_("hexagonal"), "hexagonal" },
  { AIRY_MICROLENS_CUSTOM, N_("centres given"), "custom" })

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
  _airy_super_gaussian_pupil_get_type,
  _airy_tukey_pupil_get_type,
  _airy_amplitude_mask_get_type,
  _airy_phase_mask_get_type,
  _airy_field_filter_get_type,
  _airy_scale_and_bias_get_type,
  _airy_thin_sample_get_type,
  _airy_gibson_lanni_get_type,
  _airy_ff_lens_get_type,
  _airy_df_lens_get_type,
  _airy_thin_lens_get_type,
  _airy_thick_lens_get_type,
  _airy_thick_ff_lens_get_type,
  _airy_microlens_array_get_type,
  _airy_propagate_get_type,
  _airy_kernel_propagate_get_type,
  _airy_multislice_get_type,
  _airy_linear_polarizer_get_type,
  _airy_circular_polarizer_get_type,
  _airy_phase_retarder_get_type,
  _airy_half_wave_plate_get_type,
  _airy_quarter_wave_plate_get_type,
  _airy_universal_compensator_get_type,
  _airy_jones_sample_get_type,
  _airy_depletion_mask_get_type,
  _airy_light_sheet_get_type,
  _airy_sim_illumination_get_type,
  _airy_sensor_get_type,
  _airy_excitation_get_type,
  _airy_pinhole_get_type,
  _airy_detector_array_get_type,
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
