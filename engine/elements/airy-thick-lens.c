#define G_LOG_DOMAIN "airy-thick-lens"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-ops-private.h"
#include "airy-rays.h"

/* Thick plano-convex lenses as chromatix's ray_transfer does them: the
 * lens's ABCD matrix (airy-rays.c; the FF version between two distances f)
 * through Collins' integral split into an input chirp exp(ik(A−1)r²/(2B)),
 * a Fresnel transfer over B, exp(−iπλB f²/n), and an output chirp
 * exp(ik(D−1)r²/(2B)), k = 2πn/λ; the grid's spacing is kept
 * (magnification 1). B = 0 with A = 1 (a lens of no thickness) is the thin
 * lens exp(ikC r²/2). */

typedef struct { AiryElement parent; } AiryThickLens;
typedef struct { AiryElementClass parent_class; } AiryThickLensClass;
G_DEFINE_FINAL_TYPE (AiryThickLens, _airy_thick_lens, AIRY_TYPE_ELEMENT)

typedef struct { AiryElement parent; } AiryThickFfLens;
typedef struct { AiryElementClass parent_class; } AiryThickFfLensClass;
G_DEFINE_FINAL_TYPE (AiryThickFfLens, _airy_thick_ff_lens, AIRY_TYPE_ELEMENT)

static void
thick_abcd (AiryElement *self, double *abcd)
{
  double f = airy_element_get_double (self, "f"), gap[4];

  airy_abcd_plano_convex (airy_element_get_double (self, "radius"),
                          airy_element_get_double (self, "thickness"),
                          airy_element_get_double (self, "n-lens"),
                          airy_element_get_double (self, "n"),
                          airy_element_get_boolean (self, "inverse"), abcd);
  if (g_str_equal (airy_element_get_type_name (self), "thick-plano-convex-ff-lens"))
    {
      airy_abcd_free_space (f, gap);
      airy_abcd_multiply (abcd, gap, abcd);
      airy_abcd_multiply (gap, abcd, abcd);
    }
}

static gboolean
thick_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  double radius = airy_element_get_double (self, "radius"), abcd[4];

  if (!(radius > 0.0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.radius: the curved face's radius must be > 0 µm, got %g"), ctx->path, radius);
      return FALSE;
    }
  if (!_airy_lens_check_na (self, ctx, error))
    return FALSE;
  thick_abcd (self, abcd);
  if (abcd[1] == 0.0 && abcd[0] != 1.0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: the system images its input plane (B = 0, A = %g); change f or thickness"),
                   ctx->path, abcd[0]);
      return FALSE;
    }
  ctx->n = airy_element_get_double (self, "n");
  return TRUE;
}

typedef struct { double k; } TransferPhase;

static fftwf_complex
transfer_at (double fx, double fy, gpointer user_data)
{
  return _airy_cis (((const TransferPhase *) user_data)->k * (fx * fx + fy * fy));
}

/* chirp: 0 the input's, 1 the output's, 2 the thin lens's (B = 0) */
static void
chirp (AiryField *field, const double *abcd, double n, int which)
{
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      double k = 2.0 * AIRY_PI * n / field->lambda[l];
      double c = which == 2 ? k * abcd[2] / 2.0
                            : k * (which == 0 ? abcd[0] - 1.0 : abcd[3] - 1.0) / (2.0 * abcd[1]);

      if (c != 0.0)
        _airy_field_multiply_quadratic_phase (field, l, c);
    }
}

static void
spectrum (AiryField *field, guint l, const double *abcd, double n)
{
  TransferPhase t = { -AIRY_PI * field->lambda[l] / n * abcd[1] };

  _airy_field_multiply_spectrum (field, l, transfer_at, &t);
}

static gboolean
thick_apply (AiryElement *self, gpointer state, AiryField *field,
             const AiryPlane *plane, GError **error)
{
  double n = airy_element_get_double (self, "n"), abcd[4];
  gsize np = airy_field_plane_size (field);
  guint l;

  thick_abcd (self, abcd);
  _airy_lens_apply_pupil (self, field);
  if (abcd[1] == 0.0)
    {
      chirp (field, abcd, n, 2);
      return TRUE;
    }
  chirp (field, abcd, n, 0);
  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      /* the field is centred at ⌊N/2⌋ and the transfer phase even in f:
       * an uncentred pair leaves it in place (as propagate) */
      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_FORWARD, plane->threads, u, u);
      spectrum (field, l, abcd, n);
      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_BACKWARD, plane->threads, u, u);
    }
  chirp (field, abcd, n, 1);
  return TRUE;
}

/* The same steps as device operations: pupil and input chirp, transform,
 * transfer factor, inverse transform, output chirp. */
static gboolean
thick_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  double n = airy_element_get_double (self, "n"), abcd[4];
  AiryOp *op;
  guint l;

  thick_abcd (self, abcd);
  _airy_field_fill_ones (field);
  _airy_lens_apply_pupil (self, field);
  chirp (field, abcd, n, abcd[1] == 0.0 ? 2 : 0);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
  if (abcd[1] == 0.0)
    return TRUE;
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->sign = AIRY_FFT_FORWARD;
  g_ptr_array_add (ops, op);
  _airy_field_fill_ones (field);
  for (l = 0; l < field->n_lambda; l++)
    spectrum (field, l, abcd, n);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->sign = AIRY_FFT_BACKWARD;
  g_ptr_array_add (ops, op);
  if (abcd[3] != 1.0)
    {
      _airy_field_fill_ones (field);
      chirp (field, abcd, n, 1);
      g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
    }
  return TRUE;
}

static void
install_thick_properties (AiryElementClass *element_class)
{
  GObjectClass *object_class = G_OBJECT_CLASS (element_class);

  element_class->check = thick_check;
  element_class->apply = thick_apply;
  element_class->compile = thick_compile;
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("f", N_("Focal length"), N_("Focal length: the pupil's f·NA/n (and the FF lens's distances)"),
                            "µm", AIRY_FOCAL_LENGTH_MIN, 1e6, 100.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("radius", N_("Radius of curvature"), N_("Radius of the curved face"), "µm",
                            0.0, 1e9, 50.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("thickness", N_("Centre thickness"), N_("The lens's thickness on the axis"), "µm",
                            0.0, 1e6, 5.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n-lens", N_("Lens index"), N_("Refractive index of the glass"), NULL,
                            1.0, 4.0, 1.5, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Medium index"), NULL, 1.0, 4.0, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("NA"), N_("Pupil applied before the lens (0: none)"), NULL,
                            0.0, 4.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("inverse", N_("Inverse"), N_("Convex face last (the light passes backwards)"), FALSE));
}

static void
_airy_thick_lens_class_init (AiryThickLensClass *klass)
{
  airy_element_class_set_metadata (AIRY_ELEMENT_CLASS (klass), "thick-plano-convex-lens",
                                   N_("Thick plano-convex lens"), AIRY_CATEGORY_LENS);
  install_thick_properties (AIRY_ELEMENT_CLASS (klass));
}

static void
_airy_thick_lens_init (AiryThickLens *self)
{
}

static void
_airy_thick_ff_lens_class_init (AiryThickFfLensClass *klass)
{
  airy_element_class_set_metadata (AIRY_ELEMENT_CLASS (klass), "thick-plano-convex-ff-lens",
                                   N_("Thick plano-convex lens between focal planes"), AIRY_CATEGORY_LENS);
  install_thick_properties (AIRY_ELEMENT_CLASS (klass));
}

static void
_airy_thick_ff_lens_init (AiryThickFfLens *self)
{
}
