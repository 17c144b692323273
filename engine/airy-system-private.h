#pragma once

#include "airy-system.h"

G_BEGIN_DECLS

/* One type over three files: the model and its fields (airy-system.c), the
 * system file (airy-system-json.c) and its JSON Schema
 * (airy-system-schema.c). */

struct _AirySystem
{
  GObject       parent_instance;

  char         *name;
  char         *description;
  char         *schema;       /* "$schema", kept as written */
  char         *base_dir;
  char         *modality;     /* NULL: inferred (airy_system_get_modality) */
  guint         height;
  guint         width;
  double        spacing;
  AirySpectrum *spectrum;
  gboolean      channels;     /* spectrum.channels: one stack per wavelength */
  GArray       *z;            /* double */
  gboolean      z_is_range;
  double        z_start, z_stop;
  GPtrArray    *elements;     /* AiryElement */
  AiryElement  *objective;    /* microscope only */
  double        f_tube;
  AiryElement  *sensor;
  AirySample    sample;
};

/* The system's own fields, in the order of the file: their declarations
 * (range, default, unit, JSON path) are the system's properties. */
typedef enum
{
  AIRY_SYSTEM_PROP_0,
  AIRY_SYSTEM_PROP_HEIGHT,
  AIRY_SYSTEM_PROP_WIDTH,
  AIRY_SYSTEM_PROP_SPACING,
  AIRY_SYSTEM_PROP_WAVELENGTHS,
  AIRY_SYSTEM_PROP_WEIGHTS,
  AIRY_SYSTEM_PROP_CHANNELS,
  AIRY_SYSTEM_PROP_Z_START,
  AIRY_SYSTEM_PROP_Z_STOP,
  AIRY_SYSTEM_PROP_Z_COUNT,
  AIRY_SYSTEM_PROP_Z_VALUES,
  AIRY_SYSTEM_PROP_F_TUBE,
  AIRY_SYSTEM_PROP_SAMPLE_CONSTANT,
  AIRY_SYSTEM_PROP_SAMPLE_FILE,
  AIRY_SYSTEM_PROP_BEADS_COUNT,
  AIRY_SYSTEM_PROP_BEADS_SEED,
  AIRY_SYSTEM_PROP_BEADS_INTENSITY,
  AIRY_SYSTEM_PROP_SAMPLE_CHANNEL,
  AIRY_SYSTEM_PROP_SAMPLE_FRAME,
  AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE,
  AIRY_SYSTEM_N_PROPS
} AirySystemProp;

GParamSpec *_airy_system_param         (AirySystemProp  prop);
/* The file's key of a field in its section: "shape" for grid.shape[0]. */
char       *_airy_system_param_key     (AirySystemProp  prop);
/* The keys of a section ("grid", "sample.beads") in declaration order. */
char      **_airy_system_section_keys  (const char     *section);

void        _airy_system_set_base_dir  (AirySystem     *self,
                                        const char     *base_dir);
/* Save As into another folder: relative file names rewritten to name the
 * same files from new_dir_abs, which becomes the base folder new_base. */
void        _airy_system_rebase        (AirySystem     *self,
                                        const char     *new_dir_abs,
                                        const char     *new_base);
char       *_airy_physical_path        (const char     *path);
/* A copy as airy_system_hash sees it: files by real path, no name or
 * description. */
AirySystem *_airy_system_copy_for_hash (AirySystem     *self);

G_END_DECLS
