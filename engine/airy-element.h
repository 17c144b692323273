#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

#include "airy-field.h"
#include "airy-param.h"

G_BEGIN_DECLS

#define AIRY_TYPE_ELEMENT (airy_element_get_type ())
G_DECLARE_DERIVABLE_TYPE (AiryElement, airy_element, AIRY, ELEMENT, GObject)

typedef enum
{
  AIRY_CATEGORY_SOURCE,
  AIRY_CATEGORY_MASK,
  AIRY_CATEGORY_LENS,
  AIRY_CATEGORY_PROPAGATION,
  AIRY_CATEGORY_POLARIZATION,
  AIRY_CATEGORY_SENSOR,
} AiryCategory;

/**
 * AiryContext:
 * What an element sees of the system at its place in the chain while the
 * system is checked and compiled: the field shape and spacing entering it,
 * the medium and the objective's pupil so far, and where to put warnings.
 */
typedef struct
{
  const AirySpectrum *spectrum;
  const char         *path;           /* "elements[2]" for messages */
  guint               height;
  guint               width;
  double             *dy;             /* per wavelength, µm */
  double             *dx;
  double              n;              /* medium of the last source or lens */
  /* the pupil of the chain's source so far, whichever modality built the
   * chain (objective-point-source sets them; a modality's own source, an
   * excitation beam, would too): */
  double              f;              /* focal length (0: none yet) */
  double              na;             /* NA (0: none yet) */
  double              pupil_radius;   /* f·NA/n (0: none) */
  double              z_max;          /* largest |z| of the run */
  GPtrArray          *warnings;       /* char*, may be NULL */
  /* a check on the UI thread (airy_system_check): check() reads no file;
   * what it would load is loaded by prepare() in the run */
  gboolean            no_files;
  /* the source's defocus is non-paraxial (what gibson-lanni needs) */
  gboolean            nonparaxial;
  /* the modality's chain set the pupil spacing from grid.shape and the
   * camera pixel (f_tube·λ/(n·N·s)), not from grid.spacing (imaging's
   * chain does: geom->imaging) */
  gboolean            camera_grid;
  /* the source's defocus phase between the two outermost pupil pixels
   * at the largest |z| of the run (rad), and that |z|; the plan warns when
   * the step is above π (an element that compensates the defocus, such as
   * gibson-lanni, sets it to 0) */
  double              defocus_step;
  double              defocus_z;
  /* a Jones field (a vectorial plane wave or point source first): the
   * spectrum's entries come in pairs, 2l the Ex and 2l + 1 the Ey of
   * wavelength l (airy-jones.h); FALSE: one scalar entry per wavelength */
  gboolean            jones;
  /* what the elements so far hold in a plan beyond one complex plane per
   * wavelength (a multislice volume: its slices), bytes, for the memory
   * budget; check() adds its own */
  guint64             held_bytes;
} AiryContext;

/* One batch element being computed. */
typedef struct
{
  guint  index;   /* global plane index */
  double z;       /* defocus of this plane, µm */
  guint  threads; /* FFTW threads of this device */
} AiryPlane;

struct _AiryElementClass
{
  GObjectClass parent_class;

  const char  *type_name;
  const char  *title;
  AiryCategory category;
  /* TRUE when apply() multiplies the field by a factor that depends only on
   * the pixel and the wavelength (masks, pupils, thin lenses): it compiles
   * to a MULTIPLY op (its apply() on a field of ones), which the engine's
   * fusion pass folds into the source (airy-ops-private.h). */
  gboolean     elementwise;

  /* Cross-parameter checks against the context; advances the context past
   * this element (shape, spacing, pupil) and adds warnings. */
  gboolean (*check)      (AiryElement       *self,
                          AiryContext       *context,
                          GError           **error);
  /* Per-device preparation (masks, file contents) for the context entering it. */
  gpointer (*prepare)    (AiryElement       *self,
                          const AiryContext *context,
                          GError           **error);
  void     (*free_state) (gpointer           state);
  /* Apply to a field of one plane (CPU). */
  gboolean (*apply)      (AiryElement       *self,
                          gpointer           state,
                          AiryField         *field,
                          const AiryPlane   *plane,
                          GError           **error);

  /* Describe apply() as ops (AiryOp, airy-ops-private.h) appended to ops,
   * advancing field's shape and spacing past this element: the one form
   * every backend runs, fused by pattern (an OBJECTIVE source, MULTIPLY
   * factors and a centred forward FFT become one FUSED_PSF), and checked
   * against apply() by tests/test-ops.c. NULL for elementwise types (their
   * factor is apply() on a field of ones); a type with neither runs its
   * apply() on the CPU only, with its prepared state shared by the threads
   * (read-only). */
  gboolean (*compile)    (AiryElement       *self,
                          gpointer           state,
                          AiryField         *field,
                          GPtrArray         *ops,
                          GError           **error);

  /* Whether a parameter applies with the element's present values (a phase
   * mask's Zernike terms only with a Zernike source); NULL: all do. A
   * parameter whose value changes the answer is flagged AIRY_PARAM_SELECTS. */
  gboolean (*param_relevant) (AiryElement     *self,
                              GParamSpec      *pspec);

  gpointer padding[5];
};

/* Installs a parameter (declared with airy_param_spec_*) and gives it its
 * property id. */
void         airy_element_class_install_property (GObjectClass *object_class,
                                                  GParamSpec   *pspec);
void         airy_element_class_set_metadata (AiryElementClass *klass,
                                              const char       *type_name,
                                              const char       *title,
                                              AiryCategory      category);

const char  *airy_element_get_type_name   (AiryElement *self);
gboolean     airy_element_get_enabled     (AiryElement *self);
void         airy_element_set_enabled     (AiryElement *self,
                                           gboolean     enabled);

/* Typed access to the element's own parameters (by property name). */
double       airy_element_get_double      (AiryElement *self,
                                           const char  *name);
int          airy_element_get_int         (AiryElement *self,
                                           const char  *name);
gboolean     airy_element_get_boolean     (AiryElement *self,
                                           const char  *name);
int          airy_element_get_enum        (AiryElement *self,
                                           const char  *name);
const char  *airy_element_get_string      (AiryElement *self,
                                           const char  *name);
const double *airy_element_get_doubles    (AiryElement *self,
                                           const char  *name,
                                           gsize       *n);
gboolean     airy_element_is_set          (AiryElement *self,
                                           const char  *name);

gboolean     airy_element_param_relevant  (AiryElement  *self,
                                           GParamSpec   *pspec);
gboolean     airy_element_check           (AiryElement  *self,
                                           AiryContext  *context,
                                           GError      **error);
/**
 * airy_element_copy:
 * @self: an element
 *
 * Returns: (transfer full): a copy with the same parameters
 */
AiryElement *airy_element_copy            (AiryElement *self);

/* JSON: {"type": …, properties…}; errors carry the JSON path. */
AiryElement *airy_element_new_from_json   (JsonObject  *object,
                                           const char  *path,
                                           GType        required_type,
                                           const char  *base_dir,
                                           GError     **error);
gboolean     airy_element_set_from_json   (AiryElement *self,
                                           JsonObject  *object,
                                           const char  *path,
                                           const char  *base_dir,
                                           GError     **error);
JsonObject  *airy_element_to_json         (AiryElement *self);
/* every parameter, its defaults too (the provenance stored with results:
 * it states the optics whatever a later version's defaults are) */
JsonObject  *airy_element_to_json_full    (AiryElement *self);

/* Registry: type name → GType. Built-in types are registered by airy_init(). */
void         airy_element_register        (GType        type);
GType        airy_element_lookup          (const char  *type_name);
GType       *airy_element_list_types      (guint       *n);
AiryElement *airy_element_new             (const char  *type_name,
                                           GError     **error);

/* Context helpers. */
void         airy_context_init            (AiryContext        *context,
                                           const AirySpectrum *spectrum,
                                           guint               height,
                                           guint               width,
                                           const double       *spacing);
void         airy_context_clear           (AiryContext *context);
void         airy_context_copy            (AiryContext       *dst,
                                           const AiryContext *src);
void         airy_context_warn            (AiryContext *context,
                                           const char  *format,
                                           ...) G_GNUC_PRINTF (2, 3);

G_END_DECLS
