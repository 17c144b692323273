/* Polarisation optics on Jones fields (airy-jones.h): the Jones sources'
 * parameters, and the polarisers, retarders and wave plates, each a Jones
 * matrix that is the same at every pixel (the JONES op; the engine pass
 * multiplies neighbouring ones into one and folds them into a plane wave). */
#define G_LOG_DOMAIN "airy-polarizers"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-jones.h"
#include "airy-ops-private.h"

/* ---- Jones sources ---- */

gboolean
_airy_element_is_jones_source (AiryElement *self)
{
  return g_object_class_find_property (G_OBJECT_GET_CLASS (self), "jones-angle") != NULL
         && airy_element_get_enum (self, "field") == AIRY_FIELD_VECTORIAL;
}

void
_airy_jones_source_install (GObjectClass *object_class)
{
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("field", N_("Field model"),
                          N_("Scalar, or vectorial: a Jones field (Ex, Ey) for polarisation optics"),
                          _airy_field_model_get_type (), AIRY_FIELD_SCALAR, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("jones-angle", N_("Polarisation angle"),
                            N_("θ of the Jones vector (cos θ, sin θ·e^{iβ}) from the x axis"), "rad",
                            -2.0 * G_PI, 2.0 * G_PI, 0.0, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("jones-phase", N_("Polarisation phase"),
                            N_("β of the Jones vector: the delay of Ey after Ex (±π/2: circular at θ = π/4)"),
                            "rad", -2.0 * G_PI, 2.0 * G_PI, 0.0, AIRY_PARAM_PHASE));
}

gboolean
_airy_jones_source_relevant (AiryElement *self, GParamSpec *pspec)
{
  if (g_str_has_prefix (pspec->name, "jones-"))
    return airy_element_get_enum (self, "field") == AIRY_FIELD_VECTORIAL;
  return TRUE;
}

static void
jones_vector (AiryElement *self, fftwf_complex v[2])
{
  double t = airy_element_get_double (self, "jones-angle"), b = airy_element_get_double (self, "jones-phase");

  v[0] = (float) cos (t);
  v[1] = (float) sin (t) * _airy_cis (b);
}

void
_airy_jones_source_scale (AiryElement *self, AiryField *field)
{
  gsize np = airy_field_plane_size (field), i;
  fftwf_complex v[2];
  guint e;

  if (!_airy_element_is_jones_source (self))
    return;
  g_return_if_fail (field->n_lambda % 2 == 0);
  jones_vector (self, v);
  for (e = 0; e < field->n_lambda; e++)
    for (i = 0; i < np; i++)
      field->data[e * np + i] *= v[e % 2];
}

void
_airy_jones_source_compile (AiryElement *self, AiryField *field, GPtrArray *ops)
{
  if (!_airy_element_is_jones_source (self))
    return;
  _airy_field_fill_ones (field);
  _airy_jones_source_scale (self, field);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
}

gboolean
_airy_context_require_jones (AiryElement *self, const AiryContext *context, GError **error)
{
  if (context->jones)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s (%s): needs a vectorial field, got a scalar one: a polarisation element acts on "
                 "Ex and Ey; give the source \"field\": \"vectorial\" (a plane wave, point source or "
                 "Gaussian beam with a Jones vector)"),
               context->path, airy_element_get_type_name (self));
  return FALSE;
}

void
_airy_field_apply_jones (AiryField *field,
                         void     (*fn) (guint y, guint x, guint pair, double j[8], gpointer user_data),
                         gpointer   user_data)
{
  gsize np = airy_field_plane_size (field);
  guint p, y, x;

  for (p = 0; p < field->n_lambda / 2; p++)
    for (y = 0; y < field->height; y++)
      for (x = 0; x < field->width; x++)
        {
          fftwf_complex *ex = field->data + 2 * p * np + (gsize) y * field->width + x, *ey = ex + np;
          fftwf_complex a = *ex, b = *ey;
          double j[8];

          fn (y, x, p, j, user_data);
          *ex = (fftwf_complex) ((j[0] + I * j[1]) * a + (j[2] + I * j[3]) * b);
          *ey = (fftwf_complex) ((j[4] + I * j[5]) * a + (j[6] + I * j[7]) * b);
        }
}

/* ---- the uniform Jones elements ---- */

typedef void (*UniformMatrix) (AiryElement *self, double j[8]);

typedef struct
{
  AiryElementClass parent_class;
  UniformMatrix    matrix;
} AiryJonesElementClass;

static void
uniform_at (guint y, guint x, guint pair, double j[8], gpointer user_data)
{
  const double *m = user_data;
  guint k;

  for (k = 0; k < 8; k++)
    j[k] = m[k];
}

static gboolean
uniform_check (AiryElement *self, AiryContext *context, GError **error)
{
  return _airy_context_require_jones (self, context, error);
}

static gboolean
uniform_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  double j[8];

  ((AiryJonesElementClass *) AIRY_ELEMENT_GET_CLASS (self))->matrix (self, j);
  _airy_field_apply_jones (field, uniform_at, j);
  return TRUE;
}

static gboolean
uniform_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  double j[8];

  ((AiryJonesElementClass *) AIRY_ELEMENT_GET_CLASS (self))->matrix (self, j);
  g_ptr_array_add (ops, _airy_op_jones_new (field, uniform_at, j));
  return TRUE;
}

static void
uniform_class_setup (AiryElementClass *element_class, const char *type_name, const char *title, UniformMatrix matrix)
{
  airy_element_class_set_metadata (element_class, type_name, title, AIRY_CATEGORY_POLARIZATION);
  element_class->check = uniform_check;
  element_class->apply = uniform_apply;
  element_class->compile = uniform_compile;
  ((AiryJonesElementClass *) element_class)->matrix = matrix;
}

static void
install_angle (GObjectClass *object_class, const char *name, const char *nick, const char *blurb, double def)
{
  airy_element_class_install_property (object_class,
    airy_param_spec_double (name, nick, blurb, "rad", -2.0 * G_PI, 2.0 * G_PI, def, AIRY_PARAM_PHASE));
}

#define DEFINE_JONES_TYPE(TypeName, type_name)                                              \
  typedef struct { AiryElement parent; } TypeName;                                          \
  typedef AiryJonesElementClass TypeName##Class;                                            \
  G_DEFINE_FINAL_TYPE (TypeName, type_name, AIRY_TYPE_ELEMENT)                              \
  static void type_name##_init (TypeName *self) { }

/* linear-polarizer */
DEFINE_JONES_TYPE (AiryLinearPolarizer, _airy_linear_polarizer)

static void
linear_matrix (AiryElement *self, double j[8])
{
  airy_jones_linear_polarizer (airy_element_get_double (self, "angle"), j);
}

static void
_airy_linear_polarizer_class_init (AiryLinearPolarizerClass *klass)
{
  uniform_class_setup (AIRY_ELEMENT_CLASS (klass), "linear-polarizer", N_("Linear polariser"), linear_matrix);
  install_angle (G_OBJECT_CLASS (klass), "angle", N_("Angle"), N_("Transmission axis from the x axis"), 0.0);
}

/* circular-polarizer */
DEFINE_JONES_TYPE (AiryCircularPolarizer, _airy_circular_polarizer)

static void
circular_matrix (AiryElement *self, double j[8])
{
  airy_jones_circular_polarizer (airy_element_get_enum (self, "handedness") == AIRY_HANDEDNESS_LEFT, j);
}

static void
_airy_circular_polarizer_class_init (AiryCircularPolarizerClass *klass)
{
  uniform_class_setup (AIRY_ELEMENT_CLASS (klass), "circular-polarizer", N_("Circular polariser"), circular_matrix);
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_enum ("handedness", N_("Handedness"), N_("Left passes (1, i)/√2, right (1, −i)/√2"),
                          _airy_handedness_get_type (), AIRY_HANDEDNESS_LEFT, 0));
}

/* phase-retarder */
DEFINE_JONES_TYPE (AiryPhaseRetarder, _airy_phase_retarder)

static void
retarder_matrix (AiryElement *self, double j[8])
{
  airy_jones_retarder (airy_element_get_double (self, "angle"), airy_element_get_double (self, "retardance"),
                       airy_element_get_double (self, "circularity"), j);
}

static void
_airy_phase_retarder_class_init (AiryPhaseRetarderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  uniform_class_setup (AIRY_ELEMENT_CLASS (klass), "phase-retarder", N_("Phase retarder"), retarder_matrix);
  install_angle (object_class, "angle", N_("Angle"), N_("Fast axis from the x axis"), 0.0);
  install_angle (object_class, "retardance", N_("Retardance"), N_("Phase of the slow axis after the fast one"),
                 G_PI / 2);
  install_angle (object_class, "circularity", N_("Circularity"), N_("φ of the general retarder (0: a wave plate)"),
                 0.0);
}

/* half-wave-plate, quarter-wave-plate */
DEFINE_JONES_TYPE (AiryHalfWavePlate, _airy_half_wave_plate)
DEFINE_JONES_TYPE (AiryQuarterWavePlate, _airy_quarter_wave_plate)

static void
half_matrix (AiryElement *self, double j[8])
{
  airy_jones_retarder (airy_element_get_double (self, "angle"), G_PI, 0.0, j);
}

static void
quarter_matrix (AiryElement *self, double j[8])
{
  airy_jones_retarder (airy_element_get_double (self, "angle"), G_PI / 2, 0.0, j);
}

static void
_airy_half_wave_plate_class_init (AiryHalfWavePlateClass *klass)
{
  uniform_class_setup (AIRY_ELEMENT_CLASS (klass), "half-wave-plate", N_("Half-wave plate"), half_matrix);
  install_angle (G_OBJECT_CLASS (klass), "angle", N_("Angle"), N_("Fast axis from the x axis"), 0.0);
}

static void
_airy_quarter_wave_plate_class_init (AiryQuarterWavePlateClass *klass)
{
  uniform_class_setup (AIRY_ELEMENT_CLASS (klass), "quarter-wave-plate", N_("Quarter-wave plate"), quarter_matrix);
  install_angle (G_OBJECT_CLASS (klass), "angle", N_("Angle"), N_("Fast axis from the x axis"), 0.0);
}

/* universal-compensator: the LC-PolScope's, a polariser at 0 then wave
 * plates at −45° and 0° (chromatix's universal_compensator) */
DEFINE_JONES_TYPE (AiryUniversalCompensator, _airy_universal_compensator)

static void
compensator_matrix (AiryElement *self, double j[8])
{
  double lp[8], w45[8], w0[8], t[8];

  airy_jones_linear_polarizer (0.0, lp);
  airy_jones_retarder (-G_PI / 4, airy_element_get_double (self, "retardance-45"), 0.0, w45);
  airy_jones_retarder (0.0, airy_element_get_double (self, "retardance-0"), 0.0, w0);
  airy_jones_product (w45, lp, t);
  airy_jones_product (w0, t, j);
}

static void
_airy_universal_compensator_class_init (AiryUniversalCompensatorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  uniform_class_setup (AIRY_ELEMENT_CLASS (klass), "universal-compensator", N_("Universal compensator"),
                       compensator_matrix);
  install_angle (object_class, "retardance-45", N_("Retardance at 45°"), N_("Of the liquid crystal at −45°"), 0.0);
  install_angle (object_class, "retardance-0", N_("Retardance at 0°"), N_("Of the liquid crystal at 0°"), 0.0);
}
