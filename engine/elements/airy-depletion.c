/* depletion-mask: the STED modality's depletion beam. In a "sted" system it
 * carries the depletion's parameters (its wavelength, the saturation
 * factor I_dep/I_sat, its polarisation) and is the pupil mask of the
 * depletion chain only (the excitation chain leaves it out,
 * engine/modalities/airy-modality-sted.c). As a plain mask (a psf system)
 * it shapes the beam it is placed in:
 *   vortex:  exp(i·ℓ·φ), φ = atan2 (y, x) — the lateral donut;
 *   top-hat: −1 (a π phase) inside ρ < a of the pupil, 1 outside — the
 *            axial donut (a = 1/√2 gives equal areas, a zero at focus).
 * Elementwise: its factor is fused into the source on every backend. */
#define G_LOG_DOMAIN "airy-depletion"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"

typedef struct { AiryElement parent; } AiryDepletionMask;
typedef struct { AiryElementClass parent_class; } AiryDepletionMaskClass;
G_DEFINE_FINAL_TYPE (AiryDepletionMask, _airy_depletion_mask, AIRY_TYPE_ELEMENT)

typedef struct
{
  int    shape;
  int    charge;
  double radius;   /* the top-hat's disk, µm in the pupil plane */
} DepletionState;

static gboolean
depletion_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  if (airy_element_get_enum (self, "mask") == AIRY_DEPLETION_TOP_HAT && ctx->pupil_radius <= 0.0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.mask: a top-hat needs the pupil of an objective point source before it"), ctx->path);
      return FALSE;
    }
  return TRUE;
}

static gpointer
depletion_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  DepletionState *s = g_new0 (DepletionState, 1);

  s->shape = airy_element_get_enum (self, "mask");
  s->charge = airy_element_get_int (self, "charge");
  s->radius = airy_element_get_double (self, "radius") * ctx->pupil_radius;
  return s;
}

static gboolean
depletion_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  DepletionState *s = state;
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    for (y = 0; y < field->height; y++)
      {
        double yy = airy_grid_coord (y, field->height, field->dy[l]);
        fftwf_complex *row = field->data + l * np + (gsize) y * field->width;

        for (x = 0; x < field->width; x++)
          {
            double xx = airy_grid_coord (x, field->width, field->dx[l]);

            if (s->shape == AIRY_DEPLETION_VORTEX)
              row[x] *= (xx == 0.0 && yy == 0.0) ? 1.0f : _airy_cis (s->charge * atan2 (yy, xx));
            else if (xx * xx + yy * yy < s->radius * s->radius)
              row[x] = -row[x];
          }
      }
  return TRUE;
}

static gboolean
depletion_param_relevant (AiryElement *self, GParamSpec *pspec)
{
  int shape = airy_element_get_enum (self, "mask");

  if (g_str_equal (pspec->name, "charge"))
    return shape == AIRY_DEPLETION_VORTEX;
  if (g_str_equal (pspec->name, "radius"))
    return shape == AIRY_DEPLETION_TOP_HAT;
  return TRUE;
}

static void
_airy_depletion_mask_class_init (AiryDepletionMaskClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "depletion-mask", N_("STED depletion mask"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->check = depletion_check;
  element_class->prepare = depletion_prepare;
  element_class->free_state = g_free;
  element_class->apply = depletion_apply;
  element_class->param_relevant = depletion_param_relevant;
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("mask", N_("Mask"), N_("Vortex (lateral donut) or top-hat (axial donut)"),
                          _airy_depletion_shape_get_type (), AIRY_DEPLETION_VORTEX, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("charge", N_("Vortex charge"),
                         N_("ℓ of exp(iℓφ); +1 matches the circular polarisation (a real zero), −1 fills it"),
                         -8, 8, 1, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("radius", N_("Top-hat radius"), N_("The π disk's radius, of the pupil's (1/√2: equal areas)"),
                            NULL, 0.0, 1.0, G_SQRT2 / 2.0, AIRY_PARAM_EXCLUSIVE_MIN | AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("wavelength", N_("Depletion wavelength"),
                            N_("STED: the depletion beam's vacuum wavelength"), "µm", 0.1, 10.0, 0.775,
                            AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("saturation", N_("Saturation I_dep/I_sat"),
                            N_("STED: the depletion's crest intensity over the saturation intensity"), NULL, 0.0,
                            1e4, 20.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("polarization", N_("Depletion polarization"),
                          N_("STED: the depletion beam's polarisation (vectorial excitation); circular gives a "
                             "real zero"),
                          _airy_polarization_get_type (), AIRY_POLARIZATION_CIRCULAR, 0));
}

static void
_airy_depletion_mask_init (AiryDepletionMask *self)
{
}
