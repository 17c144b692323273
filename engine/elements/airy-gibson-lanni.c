#define G_LOG_DOMAIN "airy-gibson-lanni"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"

/* gibson-lanni: the refractive-index mismatch of an emitter `depth` below
 * the coverslip (DESIGN §3), a pupil-plane phase k·OPD after the objective
 * point source (airy_gibson_lanni_opd). The objective's n is the actual
 * immersion index n_i and its f, NA and grid give sin θ = r/f; the system's
 * z planes are stage focus offsets (immersion thickness ti0 + z), whose
 * phase is the objective's own non-paraxial defocus. Rays evanescent in the
 * sample or the coverslip are cut from the pupil. Elementwise: the fusion
 * pass folds it into the source, so it costs nothing per plane. */

typedef struct { AiryElement parent; } AiryGibsonLanni;
typedef struct { AiryElementClass parent_class; } AiryGibsonLanniClass;
G_DEFINE_FINAL_TYPE (AiryGibsonLanni, _airy_gibson_lanni, AIRY_TYPE_ELEMENT)

typedef struct
{
  double f, ni;   /* the objective's */
  double ns, ng, ng0, ni0, tg, tg0, ti0, depth;
} GibsonLanniState;

static gboolean
gibson_lanni_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  double ns = airy_element_get_double (self, "ns");
  double ng = airy_element_get_double (self, "ng");
  double cut = MIN (ns, ng);

  if (ctx->f <= 0.0 || ctx->na <= 0.0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: gibson-lanni needs an objective-point-source before it (its n, NA and f)"),
                   ctx->path);
      return FALSE;
    }
  /* the immersion term (ti0 + z)·√(ni² − NA²ρ²) is the objective's own
   * defocus: its paraxial form would make the OPD wrong at any NA */
  if (!ctx->nonparaxial)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: gibson-lanni needs the objective's \"defocus-model\": \"nonparaxial\", got \"paraxial\""),
                   ctx->path);
      return FALSE;
    }
  if (ctx->na > cut)
    airy_context_warn (ctx, _("%s: the NA %g exceeds the smallest index on the path (%g): "
                              "rays beyond NA %g are evanescent and cut from the pupil"),
                       ctx->path, ctx->na, cut, cut);
  /* the stage's z scans a focus the index mismatch moves: the objective's
   * defocus alone says nothing about the pupil's phase */
  ctx->defocus_step = 0.0;
  return TRUE;
}

static gpointer
gibson_lanni_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  GibsonLanniState *s = g_new0 (GibsonLanniState, 1);

  s->f = ctx->f;
  s->ni = ctx->n;
  s->ns = airy_element_get_double (self, "ns");
  s->ng = airy_element_get_double (self, "ng");
  s->ng0 = airy_element_get_double (self, "ng0");
  s->ni0 = airy_element_get_double (self, "ni0");
  s->tg = airy_element_get_double (self, "tg");
  s->tg0 = airy_element_get_double (self, "tg0");
  s->ti0 = airy_element_get_double (self, "ti0");
  s->depth = airy_element_get_double (self, "depth");
  return s;
}

static gboolean
gibson_lanni_apply (AiryElement *self, gpointer state, AiryField *field,
                    const AiryPlane *plane, GError **error)
{
  const GibsonLanniState *s = state;
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;
      double k = 2.0 * AIRY_PI / field->lambda[l];

      for (y = 0; y < field->height; y++)
        {
          double yy = airy_grid_coord (y, field->height, field->dy[l]);
          fftwf_complex *row = u + (gsize) y * field->width;

          for (x = 0; x < field->width; x++)
            {
              double xx = airy_grid_coord (x, field->width, field->dx[l]);
              double s2 = (xx * xx + yy * yy) / (s->f * s->f);
              int propagating;
              double opd = airy_gibson_lanni_opd (s2, s->ni, s->ns, s->ng, s->ng0, s->ni0,
                                                  s->tg, s->tg0, s->ti0, s->depth, &propagating);

              if (!propagating)
                row[x] = 0.0f;
              else if (opd != 0.0)
                row[x] *= _airy_cis (k * opd);
            }
        }
    }
  return TRUE;
}

static void
_airy_gibson_lanni_class_init (AiryGibsonLanniClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "gibson-lanni", N_("Index mismatch (Gibson–Lanni)"),
                                   AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->check = gibson_lanni_check;
  element_class->prepare = gibson_lanni_prepare;
  element_class->free_state = g_free;
  element_class->apply = gibson_lanni_apply;

  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ns", N_("Sample index"), N_("Refractive index of the sample"), NULL,
                            1.0, 4.0, 1.33, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ng", N_("Coverslip index"), N_("Refractive index of the coverslip"), NULL,
                            1.0, 4.0, 1.5, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ng0", N_("Coverslip index (design)"), N_("Coverslip index the objective is designed for"), NULL,
                            1.0, 4.0, 1.5, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("tg", N_("Coverslip thickness"), N_("Thickness of the coverslip"), "µm",
                            0.0, 1e4, 170.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("tg0", N_("Coverslip thickness (design)"), N_("Coverslip thickness the objective is designed for"), "µm",
                            0.0, 1e4, 170.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ni0", N_("Immersion index (design)"),
                            N_("Immersion index the objective is designed for (the objective's n is the actual one)"), NULL,
                            1.0, 4.0, 1.518, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ti0", N_("Working distance (design)"),
                            N_("Immersion thickness of the design; the actual one is ti0 + z"), "µm",
                            0.0, 1e5, 150.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("depth", N_("Emitter depth"), N_("Depth of the emitter below the coverslip"), "µm",
                            0.0, 1e5, 0.0, 0));
}

static void
_airy_gibson_lanni_init (AiryGibsonLanni *self)
{
}
