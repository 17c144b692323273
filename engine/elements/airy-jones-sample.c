/* jones-sample: a thin birefringent sample on a Jones field. Uniform or a
 * spherulite (a disk whose slow axis is radial: the Maltese cross between
 * crossed polarisers), a retarder of orientation θ and retardance δ at the
 * first wavelength λ_c (δ·λ_c/λ at the others); or chromatix's
 * jones_sample from the matrix components' dn and absorption and the
 * thickness t, J_pq = e^{i 2π (dn_pq + i·absorption_pq)·t/λ}; or a map:
 * an orientation and a retardance (at λ_c) per pixel, row by row. */
#define G_LOG_DOMAIN "airy-jones-sample"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-jones.h"
#include "airy-ops-private.h"

typedef struct { AiryElement parent; } AiryJonesSample;
typedef struct { AiryElementClass parent_class; } AiryJonesSampleClass;
G_DEFINE_FINAL_TYPE (AiryJonesSample, _airy_jones_sample, AIRY_TYPE_ELEMENT)

typedef struct
{
  int     pattern;
  double  theta, delta, radius, thickness;
  double  dn[4], absorption[4];
  double  lambda_c;
  guint   height, width;
  double *lambda, *dy, *dx;   /* per pair */
  double *theta_map, *delta_map;  /* MAP: height × width */
} SampleState;

static void
sample_free (gpointer p)
{
  SampleState *s = p;

  g_free (s->lambda);
  g_free (s->dy);
  g_free (s->dx);
  g_free (s->theta_map);
  g_free (s->delta_map);
  g_free (s);
}

static gboolean
components (AiryElement *self, const char *name, double out[4], const char *path, GError **error)
{
  gsize n = 0, k;
  const double *v = airy_element_get_doubles (self, name, &n);

  if (n != 0 && n != 4)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.%s: needs 4 values (xx, xy, yx, yy), got %" G_GSIZE_FORMAT), path, name, n);
      return FALSE;
    }
  for (k = 0; k < 4; k++)
    out[k] = n ? v[k] : 0.0;
  return TRUE;
}

/* MAP: both maps of the grid's height × width entries */
static gboolean
check_maps (AiryElement *self, const AiryContext *ctx, GError **error)
{
  gsize n_theta = 0, n_delta = 0, need = (gsize) ctx->height * ctx->width;

  if (airy_element_get_enum (self, "pattern") != AIRY_JONES_PATTERN_MAP)
    return TRUE;
  airy_element_get_doubles (self, "orientation-map", &n_theta);
  airy_element_get_doubles (self, "retardance-map", &n_delta);
  if (n_theta == need && n_delta == need)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s.orientation-map, retardance-map: need %u × %u = %lu values each (the grid, "
                 "row by row), got %lu and %lu"),
               ctx->path, ctx->height, ctx->width, (unsigned long) need, (unsigned long) n_theta,
               (unsigned long) n_delta);
  return FALSE;
}

static gboolean
sample_check (AiryElement *self, AiryContext *context, GError **error)
{
  double v[4];

  return _airy_context_require_jones (self, context, error)
         && components (self, "dn", v, context->path, error)
         && components (self, "absorption", v, context->path, error)
         && check_maps (self, context, error);
}

static gpointer
sample_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  SampleState *s = g_new0 (SampleState, 1);
  guint p, P = ctx->spectrum->n / 2;

  s->pattern = airy_element_get_enum (self, "pattern");
  s->theta = airy_element_get_double (self, "orientation");
  s->delta = airy_element_get_double (self, "retardance");
  s->radius = airy_element_get_double (self, "radius");
  s->thickness = airy_element_get_double (self, "thickness");
  if (!components (self, "dn", s->dn, ctx->path, error) || !components (self, "absorption", s->absorption, ctx->path, error))
    {
      sample_free (s);
      return NULL;
    }
  if (s->pattern == AIRY_JONES_PATTERN_MAP)
    {
      gsize n = 0;
      const double *v;

      if (!check_maps (self, ctx, error))
        {
          sample_free (s);
          return NULL;
        }
      v = airy_element_get_doubles (self, "orientation-map", &n);
      s->theta_map = g_memdup2 (v, n * sizeof (double));
      v = airy_element_get_doubles (self, "retardance-map", &n);
      s->delta_map = g_memdup2 (v, n * sizeof (double));
    }
  s->lambda_c = ctx->spectrum->wavelengths[0];
  s->height = ctx->height;
  s->width = ctx->width;
  s->lambda = g_new (double, P);
  s->dy = g_new (double, P);
  s->dx = g_new (double, P);
  for (p = 0; p < P; p++)
    {
      s->lambda[p] = ctx->spectrum->wavelengths[2 * p];
      s->dy[p] = ctx->dy[2 * p];
      s->dx[p] = ctx->dx[2 * p];
    }
  return s;
}

static void
sample_at (guint y, guint x, guint p, double j[8], gpointer user_data)
{
  const SampleState *s = user_data;
  double lambda = s->lambda[p], xx, yy;
  guint m;

  switch (s->pattern)
    {
    case AIRY_JONES_PATTERN_COMPONENTS:
      for (m = 0; m < 4; m++)
        airy_jones_sample_component (s->dn[m], s->absorption[m], s->thickness, lambda, j + 2 * m);
      return;
    case AIRY_JONES_PATTERN_MAP:
      {
        gsize i = (gsize) y * s->width + x;

        airy_jones_retarder (s->theta_map[i], s->delta_map[i] * s->lambda_c / lambda, 0.0, j);
        return;
      }
    case AIRY_JONES_PATTERN_SPHERULITE:
      xx = airy_grid_coord (x, s->width, s->dx[p]);
      yy = airy_grid_coord (y, s->height, s->dy[p]);
      if (!airy_inside_circle (xx * xx + yy * yy, s->radius))
        {
          airy_jones_set (j, 1, 0, 0, 0, 0, 0, 1, 0);
          return;
        }
      /* the slow axis radial: the fast one at the azimuth + π/2 */
      airy_jones_retarder (atan2 (yy, xx) + G_PI / 2, s->delta * s->lambda_c / lambda, 0.0, j);
      return;
    default:
      airy_jones_retarder (s->theta, s->delta * s->lambda_c / lambda, 0.0, j);
    }
}

static gboolean
sample_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  _airy_field_apply_jones (field, sample_at, state);
  return TRUE;
}

static gboolean
sample_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  g_ptr_array_add (ops, _airy_op_jones_new (field, sample_at, state));
  return TRUE;
}

static gboolean
sample_relevant (AiryElement *self, GParamSpec *pspec)
{
  int pattern = airy_element_get_enum (self, "pattern");
  const char *name = pspec->name;

  if (g_str_equal (name, "dn") || g_str_equal (name, "absorption") || g_str_equal (name, "thickness"))
    return pattern == AIRY_JONES_PATTERN_COMPONENTS;
  if (g_str_equal (name, "radius"))
    return pattern == AIRY_JONES_PATTERN_SPHERULITE;
  if (g_str_equal (name, "orientation"))
    return pattern == AIRY_JONES_PATTERN_UNIFORM;
  if (g_str_equal (name, "retardance"))
    return pattern == AIRY_JONES_PATTERN_UNIFORM || pattern == AIRY_JONES_PATTERN_SPHERULITE;
  if (g_str_has_suffix (name, "-map"))
    return pattern == AIRY_JONES_PATTERN_MAP;
  return TRUE;
}

static void
_airy_jones_sample_class_init (AiryJonesSampleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "jones-sample", N_("Birefringent sample"), AIRY_CATEGORY_POLARIZATION);
  element_class->check = sample_check;
  element_class->prepare = sample_prepare;
  element_class->free_state = sample_free;
  element_class->apply = sample_apply;
  element_class->compile = sample_compile;
  element_class->param_relevant = sample_relevant;
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("pattern", N_("Pattern"), N_("Uniform, a spherulite disk, or chromatix's matrix components"),
                          _airy_jones_pattern_get_type (), AIRY_JONES_PATTERN_UNIFORM, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("orientation", N_("Orientation"), N_("Fast axis from the x axis"), "rad",
                            -2.0 * G_PI, 2.0 * G_PI, 0.0, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("retardance", N_("Retardance"), N_("At the first wavelength (scaled by λ_c/λ)"), "rad",
                            -4.0 * G_PI, 4.0 * G_PI, G_PI / 2, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("radius", N_("Radius"), N_("Of the spherulite disk"), "µm",
                            AIRY_FEATURE_MIN, 1e6, 10.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("dn", N_("Index change"), N_("Δn of the matrix components xx, xy, yx, yy"), NULL));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("absorption", N_("Absorption"), N_("Of the matrix components xx, xy, yx, yy"), NULL));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("thickness", N_("Thickness"), N_("Of the sample"), "µm", 0.0, 1e6, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("orientation-map", N_("Orientation map"),
                             N_("Fast axis per pixel from the x axis, row by row over the grid"), "rad"));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("retardance-map", N_("Retardance map"),
                             N_("Per pixel at the first wavelength (scaled by λ_c/λ), row by row over the grid"), "rad"));
}

static void
_airy_jones_sample_init (AiryJonesSample *self)
{
}
