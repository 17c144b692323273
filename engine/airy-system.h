#pragma once

#include <glib-object.h>

#include "airy-element.h"
#include "airy-field.h"

G_BEGIN_DECLS

#define AIRY_TYPE_SYSTEM (airy_system_get_type ())
G_DECLARE_FINAL_TYPE (AirySystem, airy_system, AIRY, SYSTEM, GObject)

typedef enum
{
  AIRY_SAMPLE_NONE,
  AIRY_SAMPLE_CONSTANT,
  AIRY_SAMPLE_FILE,
  AIRY_SAMPLE_BEADS,
} AirySampleKind;

typedef struct
{
  AirySampleKind kind;
  double         value;      /* constant */
  char          *file;       /* file (as written in the JSON) */
  guint          count;      /* beads */
  guint          seed;
  double         intensity;
  /* file: which channel and frame of a hyperstack (unset: the file must
   * hold one), and whether a voxel size other than the system's is
   * resampled instead of refused */
  gboolean       channel_set;
  guint          channel;
  gboolean       frame_set;
  guint          frame;
  gboolean       resample;
} AirySample;

/* A file a system reads, for checks such as "an output must not overwrite
 * an input": its role ("sample.file", "elements[1].file") and its name
 * resolved against the system's folder. */
typedef struct
{
  char *role;
  char *path;
} AiryInputFile;

void          airy_input_file_free         (AiryInputFile *file);

/* The system's own fields are its properties, declared like the elements'
 * parameters (airy-param.h) with their place in the file
 * (airy_param_spec_get_path): "height" and "width" (grid.shape), "spacing",
 * "wavelengths", "weights", "z-start", "z-stop", "z-count", "z-values",
 * "f-tube", "sample-constant", "sample-file", "beads-count", "beads-seed",
 * "beads-intensity", "sample-channel", "sample-frame", "sample-resample".
 * The setters below notify them. Setting "wavelengths" to another number of
 * entries gives them equal weights; "z-start", "z-stop" and "z-count" make
 * the planes a range. */
gboolean      airy_system_param_relevant   (AirySystem  *self,
                                            GParamSpec  *pspec);

AirySystem   *airy_system_new              (void);
AirySystem   *airy_system_new_from_data    (const char  *data,
                                            gssize       length,
                                            const char  *base_dir,
                                            const char  *source_name,
                                            GError     **error);
AirySystem   *airy_system_new_from_file    (const char  *path,
                                            GError     **error);
AirySystem   *airy_system_new_from_preset  (const char  *name,
                                            GError     **error);
/**
 * airy_system_copy:
 * @self: a system
 *
 * Returns: (transfer full): a copy that shares nothing with @self
 */
AirySystem   *airy_system_copy             (AirySystem  *self);

char         *airy_system_to_json          (AirySystem  *self);
/* every element parameter written, defaults too: the provenance stored
 * with results (TIFF, OME), complete whatever a later version's defaults */
char         *airy_system_to_json_full     (AirySystem  *self);
gboolean      airy_system_save             (AirySystem  *self,
                                            const char  *path,
                                            GError     **error);
/* what is computed: the name and the description are no part of it */
guint64       airy_system_hash             (AirySystem  *self);
/**
 * airy_system_list_input_files:
 * @self: a system
 *
 * Returns: (transfer full) (element-type AiryInputFile): the files it reads
 */
GPtrArray    *airy_system_list_input_files (AirySystem  *self);

/* JSON Schema (draft 2020-12) of system files, from the registered element
 * types' parameters; with_modules FALSE: the built-in types only (the
 * installed airy-system.schema.json). */
char         *airy_system_schema           (gboolean     with_modules);

/* Checks everything a run would check (ranges, cross-field rules, files,
 * memory budget) and collects warnings (char*) without computing. */
/**
 * airy_system_validate:
 * @self: a system
 * @warnings: (element-type utf8): where warnings are added
 * @error: where the first error is told
 */
gboolean      airy_system_validate         (AirySystem  *self,
                                            GPtrArray   *warnings,
                                            GError     **error);
/* What a check on the UI thread may do: ranges, cross-field rules, shapes,
 * warnings of the optics; no file is read (sample, mask images) and no
 * memory budget taken. A run checks the rest and reports at the same paths. */
/**
 * airy_system_check:
 * @self: a system
 * @warnings: (element-type utf8): where warnings are added
 * @error: where the first error is told
 */
gboolean      airy_system_check            (AirySystem  *self,
                                            GPtrArray   *warnings,
                                            GError     **error);

const char   *airy_system_get_name         (AirySystem  *self);
void          airy_system_set_name         (AirySystem  *self,
                                            const char  *name);
const char   *airy_system_get_description  (AirySystem  *self);
void          airy_system_set_description  (AirySystem  *self,
                                            const char  *description);
const char   *airy_system_get_base_dir     (AirySystem  *self);
gboolean      airy_system_is_microscope    (AirySystem  *self);
/**
 * airy_system_get_modality:
 *
 * Returns: the system's modality ("psf", "imaging" or one registered
 *   later): as set or read from the file's "modality", else inferred as
 *   files without the key always were (a microscope images, else psf)
 */
const char   *airy_system_get_modality     (AirySystem  *self);
/* NULL: inferred again. The name is checked when the system is checked or
 * run (the registry is the engine's). */
void          airy_system_set_modality     (AirySystem  *self,
                                            const char  *modality);
/**
 * airy_system_get_shape:
 * @self: a system
 * @height: (out): grid rows
 * @width: (out): grid columns
 */
void          airy_system_get_shape        (AirySystem  *self,
                                            guint       *height,
                                            guint       *width);
void          airy_system_set_shape        (AirySystem  *self,
                                            guint        height,
                                            guint        width);
double        airy_system_get_spacing      (AirySystem  *self);
void          airy_system_set_spacing      (AirySystem  *self,
                                            double       spacing);
const AirySpectrum *airy_system_get_spectrum (AirySystem *self);
void          airy_system_set_spectrum     (AirySystem  *self,
                                            const AirySpectrum *spectrum);
/**
 * airy_system_get_z:
 * @self: a system
 * @n: (out): the number of planes
 *
 * Returns: (array length=n) (transfer none): the planes' z, µm
 */
const double *airy_system_get_z            (AirySystem  *self,
                                            guint       *n);
void          airy_system_set_z_range      (AirySystem  *self,
                                            double       start,
                                            double       stop,
                                            guint        count);
/**
 * airy_system_set_z_values:
 * @self: a system
 * @values: (array length=count): the planes' z, µm
 * @count: their number
 */
void          airy_system_set_z_values     (AirySystem  *self,
                                            const double *values,
                                            guint        count);
/**
 * airy_system_get_elements:
 * @self: a system
 *
 * Returns: (transfer none) (element-type AiryElement): the elements, in order
 */
GPtrArray    *airy_system_get_elements     (AirySystem  *self);
void          airy_system_add_element      (AirySystem  *self,
                                            AiryElement *element);
/**
 * airy_system_get_objective:
 * @self: a system
 *
 * Returns: (transfer none) (nullable): the microscope's objective
 */
AiryElement  *airy_system_get_objective    (AirySystem  *self);
/* spectrum.channels: a PSF run keeps one stack per wavelength (the app and
 * airy-sim ask airy_run for them: AiryRunOptions.per_wavelength). */
gboolean      airy_system_get_channels     (AirySystem  *self);
/* The bytes of the stacks a run of the system holds as its result, from
 * its geometry: planes × the sensor's output shape in float32 (one plane
 * for an image that sums over z; a block-sum or bilinear sensor changes
 * the shape), and with spectrum.channels (PSF runs) one such stack per
 * wavelength beside their sum; n_stacks (may be NULL) gets how many.
 * 0 (and no stacks) for a system that does not pass airy_system_check. */
guint64       airy_system_get_result_bytes (AirySystem  *self,
                                            guint       *n_stacks);
void          airy_system_set_channels     (AirySystem  *self,
                                            gboolean     channels);
double        airy_system_get_f_tube       (AirySystem  *self);
void          airy_system_set_f_tube       (AirySystem  *self,
                                            double       f_tube);
/**
 * airy_system_get_sensor:
 * @self: a system
 *
 * Returns: (transfer none) (nullable): the sensor
 */
AiryElement  *airy_system_get_sensor       (AirySystem  *self);
void          airy_system_set_sensor       (AirySystem  *self,
                                            AiryElement *sensor);
const AirySample *airy_system_get_sample   (AirySystem  *self);
void          airy_system_set_sample       (AirySystem  *self,
                                            const AirySample *sample);
void          airy_system_make_microscope  (AirySystem  *self,
                                            AiryElement *objective,
                                            double       f_tube);
void          airy_system_changed          (AirySystem  *self);

/**
 * airy_presets_list:
 *
 * Returns: (transfer full) (array zero-terminated=1): the presets' names
 */
char        **airy_presets_list            (void);
char         *airy_preset_get_json         (const char  *name,
                                            GError     **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryInputFile, airy_input_file_free)

G_END_DECLS
