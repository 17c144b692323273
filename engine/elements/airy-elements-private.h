#pragma once

#include "airy-element.h"
#include "airy-physics.h"

G_BEGIN_DECLS

/* Physical lower bounds of the declarations, where "above 0" let 5e-324
 * through and its reciprocal overflowed the stack to inf: a focal length
 * of 1 µm (a microlens; nothing shorter images light), an objective NA of
 * 0.001 (a 1 mm aperture at 0.5 m; below it the pupil is one sample of any
 * usable grid), and 1 nm for the sizes of waists and periods (a hundredth
 * of the shortest wavelength). */
#define AIRY_FOCAL_LENGTH_MIN 1.0
#define AIRY_NA_MIN 1e-3
#define AIRY_FEATURE_MIN 1e-3

/* Enumerations shared by the built-in elements (nicks are the JSON values). */
typedef enum { AIRY_DEFOCUS_PARAXIAL, AIRY_DEFOCUS_NONPARAXIAL } AiryDefocusModel;
typedef enum { AIRY_APODISATION_NONE, AIRY_APODISATION_APLANATIC } AiryApodisation;
typedef enum { AIRY_FIELD_SCALAR, AIRY_FIELD_VECTORIAL } AiryFieldModel;
typedef enum
{
  AIRY_POLARIZATION_UNPOLARIZED,
  AIRY_POLARIZATION_X,
  AIRY_POLARIZATION_Y,
  AIRY_POLARIZATION_CIRCULAR,
  AIRY_POLARIZATION_DIPOLE,
} AiryPolarization;
typedef enum { AIRY_PHASE_CONSTANT, AIRY_PHASE_IMAGE, AIRY_PHASE_ZERNIKE, AIRY_PHASE_NAMED, AIRY_PHASE_SEIDEL } AiryPhaseSource;
typedef enum { AIRY_ZERNIKE_ANSI, AIRY_ZERNIKE_NOLL } AiryZernikeIndexing;
typedef enum { AIRY_ZERNIKE_WAVES, AIRY_ZERNIKE_MICRONS } AiryZernikeUnit;
typedef enum { AIRY_PROPAGATE_TRANSFER, AIRY_PROPAGATE_ANGULAR_SPECTRUM, AIRY_PROPAGATE_SINGLE_FFT,
               AIRY_PROPAGATE_SAS } AiryPropagateMethod;
typedef enum { AIRY_OUTPUT_SAME, AIRY_OUTPUT_FULL } AiryOutputMode;
typedef enum { AIRY_REDUCE_NONE, AIRY_REDUCE_SUM } AiryReduce;
typedef enum { AIRY_RESAMPLE_NONE, AIRY_RESAMPLE_BLOCK_SUM, AIRY_RESAMPLE_LINEAR } AiryResample;
typedef enum { AIRY_NOISE_NONE, AIRY_NOISE_POISSON, AIRY_NOISE_GAUSSIAN } AiryNoise;
typedef enum { AIRY_HANDEDNESS_LEFT, AIRY_HANDEDNESS_RIGHT } AiryHandedness;
typedef enum
{
  AIRY_JONES_PATTERN_UNIFORM,
  AIRY_JONES_PATTERN_SPHERULITE,
  AIRY_JONES_PATTERN_COMPONENTS,
  AIRY_JONES_PATTERN_MAP,
} AiryJonesPattern;
typedef enum { AIRY_ARRAY_SQUARE, AIRY_ARRAY_HEXAGONAL } AiryArrayLayout;
typedef enum { AIRY_DEPLETION_VORTEX, AIRY_DEPLETION_TOP_HAT } AiryDepletionShape;
typedef enum { AIRY_LIGHT_SHEET_GAUSSIAN, AIRY_LIGHT_SHEET_BESSEL } AiryLightSheetProfile;

typedef enum { AIRY_SAMPLE_SOURCE_CONSTANT, AIRY_SAMPLE_SOURCE_IMAGE, AIRY_SAMPLE_SOURCE_MAP } AirySampleSource;
typedef enum
{
  AIRY_MICROLENS_SQUARE,
  AIRY_MICROLENS_RECTANGULAR,
  AIRY_MICROLENS_HEXAGONAL,
  AIRY_MICROLENS_CUSTOM,
} AiryMicrolensLayout;
typedef enum { AIRY_VOLUME_SLAB, AIRY_VOLUME_BEAD, AIRY_VOLUME_MAP, AIRY_VOLUME_FILE } AiryVolumeKind;

GType _airy_defocus_model_get_type     (void);
GType _airy_apodisation_get_type       (void);
GType _airy_field_model_get_type       (void);
GType _airy_polarization_get_type      (void);
GType _airy_phase_source_get_type      (void);
GType _airy_zernike_indexing_get_type  (void);
GType _airy_zernike_unit_get_type      (void);
GType _airy_named_mask_get_type        (void);
GType _airy_propagate_method_get_type  (void);
GType _airy_output_mode_get_type       (void);
GType _airy_reduce_get_type            (void);
GType _airy_resample_get_type          (void);
GType _airy_noise_get_type             (void);
GType _airy_handedness_get_type        (void);
GType _airy_jones_pattern_get_type     (void);
GType _airy_array_layout_get_type      (void);
GType _airy_depletion_shape_get_type   (void);
GType _airy_light_sheet_profile_get_type (void);
GType _airy_sample_source_get_type     (void);
GType _airy_volume_kind_get_type       (void);
GType _airy_microlens_layout_get_type  (void);

/* The built-in element types. */
GType _airy_objective_point_source_get_type (void);
GType _airy_plane_wave_get_type             (void);
GType _airy_point_source_get_type           (void);
GType _airy_gaussian_beam_get_type          (void);
GType _airy_circular_pupil_get_type         (void);
GType _airy_square_pupil_get_type           (void);
GType _airy_rectangular_pupil_get_type      (void);
GType _airy_gaussian_pupil_get_type         (void);
GType _airy_amplitude_mask_get_type         (void);
GType _airy_phase_mask_get_type             (void);
GType _airy_gibson_lanni_get_type           (void);
GType _airy_ff_lens_get_type                (void);
GType _airy_df_lens_get_type                (void);
GType _airy_thin_lens_get_type              (void);
GType _airy_thick_lens_get_type             (void);
GType _airy_thick_ff_lens_get_type          (void);
GType _airy_propagate_get_type              (void);
GType _airy_kernel_propagate_get_type       (void);
GType _airy_sensor_get_type                 (void);
/* the scanning modalities' parts (airy-scan.c) */
GType _airy_excitation_get_type             (void);
GType _airy_pinhole_get_type                (void);
GType _airy_detector_array_get_type         (void);
GType _airy_linear_polarizer_get_type       (void);
GType _airy_circular_polarizer_get_type     (void);
GType _airy_phase_retarder_get_type         (void);
GType _airy_half_wave_plate_get_type        (void);
GType _airy_quarter_wave_plate_get_type     (void);
GType _airy_universal_compensator_get_type  (void);
GType _airy_jones_sample_get_type           (void);
GType _airy_depletion_mask_get_type         (void);
GType _airy_light_sheet_get_type            (void);
GType _airy_sim_illumination_get_type       (void);
GType _airy_thin_sample_get_type            (void);
GType _airy_multislice_get_type             (void);
GType _airy_microlens_array_get_type        (void);
GType _airy_super_gaussian_pupil_get_type   (void);
GType _airy_tukey_pupil_get_type            (void);
GType _airy_field_filter_get_type           (void);
GType _airy_scale_and_bias_get_type         (void);

/* Maps of a sample (thin-sample, multislice: airy-thin-sample.c): a
 * parameter holding need values (shape says which, for the message) or
 * none; the map's values times scale as floats, NULL when it is empty. */
gboolean _airy_sample_map_check  (AiryElement *self,
                                  const char  *name,
                                  gsize        need,
                                  const char  *shape,
                                  const char  *path,
                                  GError     **error);
float   *_airy_sample_map_floats (AiryElement *self,
                                  const char  *name,
                                  double       scale);

/* Jones fields (airy-polarizers.c; airy-jones.h): a source with "field":
 * "vectorial" and a Jones vector (cos θ, sin θ·e^{iβ}) from "jones-angle"
 * θ and "jones-phase" β makes the field one of entry pairs (Ex, Ey). */
gboolean _airy_element_is_jones_source (AiryElement       *self);
void     _airy_jones_source_install    (GObjectClass      *object_class);
gboolean _airy_jones_source_relevant   (AiryElement       *self,
                                        GParamSpec        *pspec);
/* scales entry 2l by the vector's x and 2l + 1 by its y (a Jones source's
 * apply(); every entry arrives with the source's power) */
void     _airy_jones_source_scale      (AiryElement       *self,
                                        AiryField         *field);
/* the same as an op after a generated source (POINT, GAUSS) */
void     _airy_jones_source_compile    (AiryElement       *self,
                                        AiryField         *field,
                                        GPtrArray         *ops);
/* FALSE with a message naming the element when the field entering it is
 * scalar (what a polariser needs is Ex and Ey) */
gboolean _airy_context_require_jones   (AiryElement       *self,
                                        const AiryContext *context,
                                        GError           **error);
/* applies J(y, x, pair) of fn to a Jones field's pairs (the apply() of the
 * Jones elements) */
void     _airy_field_apply_jones       (AiryField         *field,
                                        void             (*fn) (guint y, guint x, guint pair,
                                                                double j[8], gpointer user_data),
                                        gpointer           user_data);

void        _airy_elements_register_builtin (void);
gboolean    _airy_elements_is_builtin       (GType        type);
const char *_airy_element_get_base_dir      (AiryElement *self);
void        _airy_element_set_base_dir      (AiryElement *self,
                                             const char  *base_dir);

/* JSON Schema of parameters and element types (airy-sim schema). */
typedef enum
{
  AIRY_SCHEMA_TYPE_NONE,      /* no "type" key */
  AIRY_SCHEMA_TYPE_OPTIONAL,  /* "type" may name the element type */
  AIRY_SCHEMA_TYPE_REQUIRED,  /* "type" must: the discriminator in "elements" */
} AirySchemaTypeKey;

JsonObject *_airy_element_schema            (GType              type,
                                             AirySchemaTypeKey  type_key);

/* Loads an image file (TIFF or PNG) as float values in [0, 1] for integer
 * images (scaled by the type's maximum) or as stored for float TIFFs, and
 * resamples it bilinearly onto an h × w grid covering the same extent.
 * The image is read row by row and never held whole (a TIFF's first plane,
 * a strip at a time); over 2^30 pixels it is refused. */
float      *_airy_load_mask_image   (AiryElement *self,
                                     const char  *property,
                                     const char  *path,
                                     guint        height,
                                     guint        width,
                                     GError     **error);

/* FF lens transform of every wavelength plane (see airy-lenses.c). */
void _airy_ff_transform (AiryField *field,
                         double     f,
                         double     n,
                         gboolean   inverse,
                         guint      threads);

/* The generated sources on field's grid at distance z (the plane's and
 * the element's), from their parameters only: apply() and the reference
 * interpreter's POINT and GAUSS (airy-sources.c). */
gboolean _airy_point_source_fill  (AiryField *field,
                                   double     n,
                                   double     z,
                                   double     power,
                                   guint      index,
                                   GError   **error);
void     _airy_gaussian_beam_fill (AiryField *field,
                                   double     n,
                                   double     w0,
                                   double     z,
                                   double     power);

/* A mask's file is named: all a check on the UI thread asks of it (airy-masks.c). */
gboolean _airy_mask_file_named    (AiryElement       *self,
                                   const AiryContext *ctx,
                                   GError           **error);

/* exp(iφ) as complex64 */
static inline fftwf_complex
_airy_cis (double phi)
{
  return (float) cos (phi) + I * (float) sin (phi);
}

/* Multiplies plane l of a field's uncentred spectrum by fn(fx, fy) / N at
 * each frequency (cycles/µm, FFT order), N for the unnormalised backward
 * transform (airy-propagate.c; propagate and multislice). */
typedef fftwf_complex (*AirySpectrumFunc) (double fx, double fy, gpointer user_data);
void _airy_field_multiply_spectrum (AiryField        *field,
                                    guint             l,
                                    AirySpectrumFunc  fn,
                                    gpointer          user_data);
/* The angular spectrum kernel of z in a medium n at wavelength l of field:
 * its band limit (when asked) and evanescent rule, then its value. */
typedef struct
{
  double   z, n, lambda, limit_x, limit_y;
  gboolean remove_evanescent;
} AiryAngularSpectrum;
void          _airy_angular_spectrum_init (AiryAngularSpectrum       *kernel,
                                           const AiryField           *field,
                                           guint                      l,
                                           double                     z,
                                           double                     n,
                                           gboolean                   band_limit,
                                           gboolean                   remove_evanescent);
fftwf_complex _airy_angular_spectrum_at   (const AiryAngularSpectrum *kernel,
                                           double                     fx,
                                           double                     fy);

/* Lens helpers (airy-lenses.c): `na` against `n`; the pupil of radius f·na/n
 * (none for na 0); plane l times exp(i·c·r²) on its own grid. */
gboolean _airy_lens_check_na                  (AiryElement *self,
                                               AiryContext *ctx,
                                               GError     **error);
void     _airy_lens_apply_pupil               (AiryElement *self,
                                               AiryField   *field);
void     _airy_field_multiply_quadratic_phase (AiryField   *field,
                                               guint        l,
                                               double       c);

/* Multiplies every plane of the field by a real mask evaluated per pixel:
 * fn(x, y, l, user_data) with x, y in µm on the field's grid. */
typedef double (*AiryMaskFunc) (double x, double y, guint l, gpointer user_data);
void _airy_field_multiply_real (AiryField   *field,
                                AiryMaskFunc fn,
                                gpointer     user_data);

/* Pixels of the objective pupil (f·NA/n) that the field grid clips. */
/* The pupil's pixels must get `factor` times finer to sample it: what to
 * change, "use grid.spacing ≤ 0.0677 µm on this 512² grid" (a PSF) or "use
 * grid.shape ≥ 3800²" (a microscope, whose pupil pixel is the camera's and
 * the grid's). */
char *_airy_context_sampling_advice (const AiryContext *context,
                                     double             factor);
/* An aberration the pupil grid cannot sample: a pupil phase that changes by
 * `step` rad (> π) between neighbouring pupil pixels is warned with what
 * would sample it (`what`: "defocus at |z| = 4 µm", "Zernike phase"). */
void  _airy_context_check_phase_step (AiryContext *context,
                                      double       step,
                                      const char  *what);
void _airy_context_check_pupil (AiryContext *context,
                                double       radius,
                                const char  *what);

G_END_DECLS
