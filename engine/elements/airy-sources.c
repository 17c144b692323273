#define G_LOG_DOMAIN "airy-sources"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-ops-private.h"

/* Sources write a fresh field for each plane. Their normalisation follows
 * chromatix: every wavelength carries `power` (Σ|u|²·dx·dy = power). */

static double
plane_power_scale (const AiryField *field, guint l, double power)
{
  double p = airy_field_power (field, l);
  return p > 0.0 ? sqrt (power / p) : 0.0;
}

static void
scale_plane (AiryField *field, guint l, double s)
{
  gsize n = airy_field_plane_size (field), i;
  fftwf_complex *u = field->data + l * n;

  for (i = 0; i < n; i++)
    u[i] *= (float) s;
}

static gboolean
check_medium (AiryElement *self, AiryContext *ctx, GError **error)
{
  double n = airy_element_get_double (self, "n");

  ctx->n = n;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* objective-point-source                                                   */

typedef struct { AiryElement parent; } AiryObjectivePointSource;
typedef struct { AiryElementClass parent_class; } AiryObjectivePointSourceClass;
G_DEFINE_FINAL_TYPE (AiryObjectivePointSource, _airy_objective_point_source, AIRY_TYPE_ELEMENT)

/* The vectorial field's components: at most six (x and y input, three
 * field components each). */
#define MAX_COMPONENTS 6

typedef struct
{
  double f, n, na, power, ox, oy, z0;
  int    model, apod;
  int    field_model, polarization;
  double dipole[3];    /* the emitter's unit orientation */
  guint  n_comp;       /* 0: scalar */
  double comp_weight[MAX_COMPONENTS];
  double *amplitude;   /* per wavelength: normalisation, independent of z */
  double *dx, *dy;
  guint  h, w, n_lambda;
  double *lambda;
} ObjectiveState;

/* Too few pupil pixels to sample the pupil (a PSF of 1.5 pupil pixels is a
 * striped field, not a PSF); and the defocus phase from one pupil pixel to
 * the next at the rim at the largest |z|, which the plan warns about above
 * π (the defocused PSF then wraps around the grid). */
#define MIN_PUPIL_PIXELS 8.0

static void
check_objective_sampling (AiryElement *self, AiryContext *ctx)
{
  double n = ctx->n, f = ctx->f, radius = ctx->pupil_radius;
  double z = ctx->z_max + fabs (airy_element_get_double (self, "z"));
  double worst = 0.0, dx = 0.0;
  guint l;

  if (radius <= 0.0)
    return;
  for (l = 0; l < ctx->spectrum->n; l++)
    {
      double lambda = ctx->spectrum->wavelengths[l], d = MAX (ctx->dx[l], ctx->dy[l]);
      double r0 = MAX (radius - d, 0.0);
      double step = z * fabs (airy_objective_defocus (radius * radius, n, lambda, f, ctx->nonparaxial)
                              - airy_objective_defocus (r0 * r0, n, lambda, f, ctx->nonparaxial));

      dx = MAX (dx, d);
      worst = MAX (worst, step);
    }
  if (radius / dx < MIN_PUPIL_PIXELS)
    {
      g_autofree char *advice = _airy_context_sampling_advice (ctx, MIN_PUPIL_PIXELS * dx / radius);

      airy_context_warn (ctx, _("%s: the objective pupil is only %.3g pupil pixels in radius (f·NA/n = %.4g µm, "
                                "pupil pixels of %.4g µm): at least %.0f are needed to sample it; %s"),
                         ctx->path, radius / dx, radius, dx, MIN_PUPIL_PIXELS, advice);
      return;
    }
  /* told by the plan once the chain is walked: a later element may
   * compensate it */
  ctx->defocus_step = worst;
  ctx->defocus_z = z;
}

static gboolean
objective_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  double n = airy_element_get_double (self, "n");
  double na = airy_element_get_double (self, "na");
  double f = airy_element_get_double (self, "f");

  if (na > n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.na: must be in [%g, n=%g], got %g"), ctx->path, AIRY_NA_MIN, n, na);
      if (error)
        airy_error_set_range (*error, &(AiryErrorRange) { .minimum = AIRY_NA_MIN, .maximum = n, .value = na, .maximum_name = "n" });
      return FALSE;
    }
  if (airy_element_get_enum (self, "field") == AIRY_FIELD_VECTORIAL
      && airy_element_get_enum (self, "defocus-model") != AIRY_DEFOCUS_NONPARAXIAL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.field: vectorial needs \"defocus-model\": \"nonparaxial\", got \"paraxial\""),
                   ctx->path);
      return FALSE;
    }
  ctx->n = n;
  ctx->f = f;
  ctx->na = na;
  ctx->nonparaxial = airy_element_get_enum (self, "defocus-model") == AIRY_DEFOCUS_NONPARAXIAL;
  ctx->pupil_radius = f * na / n;
  _airy_context_check_pupil (ctx, ctx->pupil_radius, "objective pupil");
  check_objective_sampling (self, ctx);
  return TRUE;
}

static void
objective_free_state (gpointer p)
{
  ObjectiveState *s = p;

  g_free (s->amplitude);
  g_free (s->dx);
  g_free (s->dy);
  g_free (s->lambda);
  g_free (s);
}

static double
objective_apodisation (const ObjectiveState *s, double r2)
{
  return s->apod == AIRY_APODISATION_APLANATIC ? airy_apodisation_aplanatic (r2, s->f) : 1.0;
}

/* The components' polarisation factors at the pupil point (ux, uy) = (x, y)/f
 * (airy_vectorial_factors): x or y input, both for unpolarized light (an
 * incoherent sum, weight ½ each), (x + i y)/√2 for circular, and for a dipole
 * p the detected x and y fields Σ_i p_i P_i(input j) (reciprocity). */
static guint
objective_components (const ObjectiveState *s, double ux, double uy, fftwf_complex *out)
{
  double px[3], py[3];
  guint c;

  airy_vectorial_factors (ux, uy, 0, px);
  airy_vectorial_factors (ux, uy, 1, py);
  switch (s->polarization)
    {
    case AIRY_POLARIZATION_X:
      for (c = 0; c < 3; c++)
        out[c] = (float) px[c];
      return 3;
    case AIRY_POLARIZATION_Y:
      for (c = 0; c < 3; c++)
        out[c] = (float) py[c];
      return 3;
    case AIRY_POLARIZATION_CIRCULAR:
      for (c = 0; c < 3; c++)
        out[c] = (float) (px[c] / G_SQRT2) + I * (float) (py[c] / G_SQRT2);
      return 3;
    case AIRY_POLARIZATION_DIPOLE:
      out[0] = (float) (s->dipole[0] * px[0] + s->dipole[1] * px[1] + s->dipole[2] * px[2]);
      out[1] = (float) (s->dipole[0] * py[0] + s->dipole[1] * py[1] + s->dipole[2] * py[2]);
      return 2;
    default:
      for (c = 0; c < 3; c++)
        {
          out[c] = (float) px[c];
          out[3 + c] = (float) py[c];
        }
      return 6;
    }
}

/* Σ_c w_c |P_c|² at a pupil point: 1 for the plane-wave inputs, |p_⊥|² for
 * a dipole (what the power normalisation divides by). */
static double
objective_component_power (const ObjectiveState *s, double ux, double uy)
{
  fftwf_complex v[MAX_COMPONENTS];
  guint c, n;
  double sum = 0.0;

  if (s->n_comp == 0)
    return 1.0;
  n = objective_components (s, ux, uy, v);
  for (c = 0; c < n; c++)
    sum += s->comp_weight[c] * (crealf (v[c]) * crealf (v[c]) + cimagf (v[c]) * cimagf (v[c]));
  return sum;
}

static gpointer
objective_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  ObjectiveState *s = g_new0 (ObjectiveState, 1);
  double radius;
  guint l;

  s->f = airy_element_get_double (self, "f");
  s->n = airy_element_get_double (self, "n");
  s->na = airy_element_get_double (self, "na");
  s->power = airy_element_get_double (self, "power");
  s->ox = airy_element_get_double (self, "offset-x");
  s->oy = airy_element_get_double (self, "offset-y");
  s->z0 = airy_element_get_double (self, "z");
  s->model = airy_element_get_enum (self, "defocus-model");
  s->apod = airy_element_get_enum (self, "apodisation");
  s->field_model = airy_element_get_enum (self, "field");
  s->polarization = airy_element_get_enum (self, "polarization");
  if (s->field_model == AIRY_FIELD_VECTORIAL)
    {
      double polar = airy_element_get_double (self, "dipole-polar");
      double azimuth = airy_element_get_double (self, "dipole-azimuth");
      fftwf_complex unused[MAX_COMPONENTS];
      guint c;

      s->dipole[0] = sin (polar) * cos (azimuth);
      s->dipole[1] = sin (polar) * sin (azimuth);
      s->dipole[2] = cos (polar);
      s->n_comp = objective_components (s, 0.0, 0.0, unused);
      for (c = 0; c < s->n_comp; c++)
        s->comp_weight[c] = s->polarization == AIRY_POLARIZATION_UNPOLARIZED ? 0.5 : 1.0;
    }
  s->h = ctx->height;
  s->w = ctx->width;
  s->n_lambda = ctx->spectrum->n;
  s->dx = g_memdup2 (ctx->dx, sizeof (double) * s->n_lambda);
  s->dy = g_memdup2 (ctx->dy, sizeof (double) * s->n_lambda);
  s->lambda = g_memdup2 (ctx->spectrum->wavelengths, sizeof (double) * s->n_lambda);
  s->amplitude = g_new0 (double, s->n_lambda);
  radius = s->f * s->na / s->n;

  /* |u| inside the pupil does not depend on z:
   * A = √(power / (Σ apod² Σ_c w_c |P_c|² dx dy)) (Σ_c … = 1 for a scalar field). */
  for (l = 0; l < s->n_lambda; l++)
    {
      double sum = 0.0;
      guint y, x;

      for (y = 0; y < s->h; y++)
        {
          double yy = airy_grid_coord (y, s->h, s->dy[l]);
          for (x = 0; x < s->w; x++)
            {
              double xx = airy_grid_coord (x, s->w, s->dx[l]);
              double r2 = xx * xx + yy * yy;

              if (airy_inside_circle (r2, radius))
                {
                  double a = objective_apodisation (s, r2);
                  sum += a * a * objective_component_power (s, xx / s->f, yy / s->f);
                }
            }
        }
      s->amplitude[l] = sum > 0.0 ? sqrt (s->power / (sum * s->dx[l] * s->dy[l])) : 0.0;
    }
  return s;
}

/* The objective's field at total defocus z (plane->z + the extra z) and,
 * with G non-NULL, its defocus phase per µm of z there (zero outside the
 * pupil): the one loop behind apply() and compile(). */
static void
objective_fill (const ObjectiveState *s, AiryField *field, double z, double *G)
{
  double radius = s->f * s->na / s->n;
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;
      double lambda = field->lambda[l];
      /* A lateral offset (x0, y0) of the point is a tilt in the pupil:
       * +2π n (x0 x + y0 y)/(λ f), so the PSF peak lands at (x0, y0). */
      double kx = 2.0 * AIRY_PI * s->n * s->ox / (lambda * s->f);
      double ky = 2.0 * AIRY_PI * s->n * s->oy / (lambda * s->f);

      for (y = 0; y < field->height; y++)
        {
          double yy = airy_grid_coord (y, field->height, field->dy[l]);
          fftwf_complex *row = u + (gsize) y * field->width;

          for (x = 0; x < field->width; x++)
            {
              double xx = airy_grid_coord (x, field->width, field->dx[l]);
              double r2 = xx * xx + yy * yy;
              double g;

              if (!airy_inside_circle (r2, radius))
                {
                  row[x] = 0.0f;
                  continue;
                }
              g = airy_objective_defocus (r2, s->n, lambda, s->f, s->model == AIRY_DEFOCUS_NONPARAXIAL);
              if (G)
                G[l * np + (gsize) y * field->width + x] = g;
              row[x] = (float) (s->amplitude[l] * objective_apodisation (s, r2))
                       * _airy_cis (z * g + kx * xx + ky * yy);
            }
        }
    }
}

static gboolean
objective_apply (AiryElement *self, gpointer state, AiryField *field,
                 const AiryPlane *plane, GError **error)
{
  ObjectiveState *s = state;

  if (s->n_comp > 0)
    {
      /* one scalar plane per wavelength: no room for the components */
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("objective-point-source.field: a vectorial field runs on the fused PSF path only"));
      return FALSE;
    }
  objective_fill (s, field, plane->z + s->z0, NULL);
  return TRUE;
}

/* The vectorial components' factors on the whole grid (zero outside the
 * pupil, where the scalar factor is zero anyway). */
static void
objective_fill_components (const ObjectiveState *s, const AiryField *field, AiryOp *op)
{
  gsize np = airy_field_plane_size (field);
  guint L = field->n_lambda, l, y, x, c;

  op->n_components = s->n_comp;
  op->components = fftwf_alloc_complex ((gsize) s->n_comp * L * np);
  op->component_weights = g_memdup2 (s->comp_weight, s->n_comp * sizeof (double));
  for (l = 0; l < L; l++)
    for (y = 0; y < field->height; y++)
      {
        double yy = airy_grid_coord (y, field->height, field->dy[l]);

        for (x = 0; x < field->width; x++)
          {
            double xx = airy_grid_coord (x, field->width, field->dx[l]);
            fftwf_complex v[MAX_COMPONENTS];
            gsize i = (gsize) y * field->width + x;

            objective_components (s, xx / s->f, yy / s->f, v);
            for (c = 0; c < s->n_comp; c++)
              op->components[((gsize) c * L + l) * np + i] = v[c];
          }
      }
}

/* On a device: F = the field at z = 0 and G = φ per µm of z, so
 * u(z) = F·e^{i z G}; the paraxial G is also given as its x and y parts. */
static gboolean
objective_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  ObjectiveState *s = state;
  gsize np = airy_field_plane_size (field);
  guint l, y, x;
  AiryOp *op;
  double *G = g_new0 (double, field->n_lambda * np);

  objective_fill (s, field, 0.0, G);
  op = _airy_op_take_factor (AIRY_OP_OBJECTIVE, field);
  op->z = s->z0;
  op->phase = G;
  if (s->n_comp > 0)
    objective_fill_components (s, field, op);
  if (s->model == AIRY_DEFOCUS_PARAXIAL)
    {
      op->phase_x = g_new (double, field->n_lambda * field->width);
      op->phase_y = g_new (double, field->n_lambda * field->height);
      for (l = 0; l < field->n_lambda; l++)
        {
          for (x = 0; x < field->width; x++)
            {
              double xx = airy_grid_coord (x, field->width, field->dx[l]);
              op->phase_x[l * field->width + x] = airy_objective_defocus (xx * xx, s->n, field->lambda[l], s->f, FALSE);
            }
          for (y = 0; y < field->height; y++)
            {
              double yy = airy_grid_coord (y, field->height, field->dy[l]);
              op->phase_y[l * field->height + y] = airy_objective_defocus (yy * yy, s->n, field->lambda[l], s->f, FALSE);
            }
        }
    }
  g_ptr_array_add (ops, op);
  return TRUE;
}

static gboolean
objective_param_relevant (AiryElement *self, GParamSpec *pspec)
{
  if (g_str_equal (pspec->name, "polarization"))
    return airy_element_get_enum (self, "field") == AIRY_FIELD_VECTORIAL;
  if (g_str_has_prefix (pspec->name, "dipole-"))
    return airy_element_get_enum (self, "field") == AIRY_FIELD_VECTORIAL
           && airy_element_get_enum (self, "polarization") == AIRY_POLARIZATION_DIPOLE;
  return TRUE;
}

static void
_airy_objective_point_source_class_init (AiryObjectivePointSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "objective-point-source",
                                   N_("Objective point source"), AIRY_CATEGORY_SOURCE);
  element_class->check = objective_check;
  element_class->prepare = objective_prepare;
  element_class->free_state = objective_free_state;
  element_class->apply = objective_apply;
  element_class->compile = objective_compile;
  element_class->param_relevant = objective_param_relevant;

  airy_element_class_install_property (object_class,
    airy_param_spec_double ("f", N_("Focal length"), N_("Objective focal length"), "µm",
                            AIRY_FOCAL_LENGTH_MIN, 1e6, 100.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Immersion medium index"), NULL,
                            1.0, 4.0, 1.33, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("NA"), N_("Numerical aperture (≤ n)"), NULL,
                            AIRY_NA_MIN, 4.0, 0.8, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("power", N_("Power"), N_("Power of each plane (Σ|u|²·dx·dy)"), NULL,
                            0.0, 1e12, 1.0, AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("defocus-model", N_("Defocus model"), N_("Paraxial (chromatix) or non-paraxial"),
                          _airy_defocus_model_get_type (), AIRY_DEFOCUS_PARAXIAL, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("apodisation", N_("Apodisation"), N_("Pupil apodisation"),
                          _airy_apodisation_get_type (), AIRY_APODISATION_NONE, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("field", N_("Field model"),
                          N_("Scalar, or vectorial (Richards–Wolf; needs the non-paraxial defocus)"),
                          _airy_field_model_get_type (), AIRY_FIELD_SCALAR, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("polarization", N_("Polarization"),
                          N_("Of the vectorial field: unpolarized, linear x or y, circular, or a fixed dipole"),
                          _airy_polarization_get_type (), AIRY_POLARIZATION_UNPOLARIZED, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("dipole-polar", N_("Dipole polar angle"), N_("Angle of the dipole to the optical axis"),
                            "rad", 0.0, G_PI, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("dipole-azimuth", N_("Dipole azimuth"), N_("Angle of the dipole's projection to the x axis"),
                            "rad", -2.0 * G_PI, 2.0 * G_PI, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("offset-x", N_("Offset x"), N_("Lateral offset of the point"), "µm",
                            -1e4, 1e4, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("offset-y", N_("Offset y"), N_("Lateral offset of the point"), "µm",
                            -1e4, 1e4, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("z", N_("Extra defocus"), N_("Added to each plane's z"), "µm",
                            -1e4, 1e4, 0.0, 0));
}

static void
_airy_objective_point_source_init (AiryObjectivePointSource *self)
{
}

/* the medium and the power of a generated source (plane wave, point
 * source, Gaussian beam), the first two of their parameters */
static void
install_medium_and_power (GObjectClass *object_class)
{
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Medium index"), NULL, 1.0, 4.0, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("power", N_("Power"), N_("Σ|u|²·dx·dy"), NULL, 0.0, 1e12, 1.0,
                            AIRY_PARAM_EXCLUSIVE_MIN));
}

/* ------------------------------------------------------------------------ */
/* plane-wave                                                               */

typedef struct { AiryElement parent; } AiryPlaneWave;
typedef struct { AiryElementClass parent_class; } AiryPlaneWaveClass;
G_DEFINE_FINAL_TYPE (AiryPlaneWave, _airy_plane_wave, AIRY_TYPE_ELEMENT)

static gboolean
plane_wave_apply (AiryElement *self, gpointer state, AiryField *field,
                  const AiryPlane *plane, GError **error)
{
  double power = airy_element_get_double (self, "power");
  double n = airy_element_get_double (self, "n");
  double ax = airy_element_get_double (self, "angle-x");
  double ay = airy_element_get_double (self, "angle-y");
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;
      double k = 2.0 * AIRY_PI * n / field->lambda[l];
      double a = sqrt (power / (np * field->dx[l] * field->dy[l]));

      for (y = 0; y < field->height; y++)
        for (x = 0; x < field->width; x++)
          {
            double xx = airy_grid_coord (x, field->width, field->dx[l]);
            double yy = airy_grid_coord (y, field->height, field->dy[l]);
            u[(gsize) y * field->width + x] = (float) a * _airy_cis (k * (sin (ax) * xx + sin (ay) * yy));
          }
    }
  _airy_jones_source_scale (self, field);
  return TRUE;
}

static gboolean
plane_wave_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  AiryPlane any = { 0, 0.0, 1 };

  if (!plane_wave_apply (self, state, field, &any, error))
    return FALSE;
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_SET, field));
  return TRUE;
}

static void
_airy_plane_wave_class_init (AiryPlaneWaveClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "plane-wave", N_("Plane wave"), AIRY_CATEGORY_SOURCE);
  element_class->check = check_medium;
  element_class->apply = plane_wave_apply;
  element_class->compile = plane_wave_compile;
  element_class->param_relevant = _airy_jones_source_relevant;
  install_medium_and_power (object_class);
  _airy_jones_source_install (object_class);
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("angle-x", N_("Angle x"), N_("Propagation angle to the axis in x"), "rad",
                            -1.5, 1.5, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("angle-y", N_("Angle y"), N_("Propagation angle to the axis in y"), "rad",
                            -1.5, 1.5, 0.0, 0));
}

static void
_airy_plane_wave_init (AiryPlaneWave *self)
{
}

/* ------------------------------------------------------------------------ */
/* point-source: a paraxial spherical wave at distance z                    */

typedef struct { AiryElement parent; } AiryPointSource;
typedef struct { AiryElementClass parent_class; } AiryPointSourceClass;
G_DEFINE_FINAL_TYPE (AiryPointSource, _airy_point_source, AIRY_TYPE_ELEMENT)

gboolean
_airy_point_source_check_z (guint index, double z, GError **error)
{
  if (fabs (z) < 1e-9)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("point-source: distance z must not be 0 (plane %u has z = %g µm)"), index, z);
      return FALSE;
    }
  return TRUE;
}

/* point-source and gaussian-beam on a device: generated there per plane */
static gboolean
generated_source_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  gboolean gauss = g_str_equal (airy_element_get_type_name (self), "gaussian-beam");
  AiryOp *op = _airy_op_new (gauss ? AIRY_OP_GAUSS : AIRY_OP_POINT, field);

  op->z = airy_element_get_double (self, "z");
  op->n = airy_element_get_double (self, "n");
  op->power = airy_element_get_double (self, "power");
  op->waist = gauss ? airy_element_get_double (self, "waist") : 0.0;
  g_ptr_array_add (ops, op);
  _airy_jones_source_compile (self, field, ops);
  return TRUE;
}

/* The point source at distance z (plane and element together) on field's
 * grid: what apply() and the reference interpreter's POINT compute. */
gboolean
_airy_point_source_fill (AiryField *field, double n, double z, double power, guint index, GError **error)
{
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  if (!_airy_point_source_check_z (index, z, error))
    return FALSE;
  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;
      double lambda = field->lambda[l];

      /* u = exp(iπ n r² / (λ z)), normalised to the power below */
      for (y = 0; y < field->height; y++)
        for (x = 0; x < field->width; x++)
          {
            double xx = airy_grid_coord (x, field->width, field->dx[l]);
            double yy = airy_grid_coord (y, field->height, field->dy[l]);
            u[(gsize) y * field->width + x] = _airy_cis (airy_point_source_phase (xx, yy, n, lambda, z));
          }
      scale_plane (field, l, plane_power_scale (field, l, power));
    }
  return TRUE;
}

static gboolean
point_source_apply (AiryElement *self, gpointer state, AiryField *field,
                    const AiryPlane *plane, GError **error)
{
  if (!_airy_point_source_fill (field, airy_element_get_double (self, "n"),
                                plane->z + airy_element_get_double (self, "z"),
                                airy_element_get_double (self, "power"), plane->index, error))
    return FALSE;
  _airy_jones_source_scale (self, field);
  return TRUE;
}

static void
_airy_point_source_class_init (AiryPointSourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "point-source", N_("Point source"), AIRY_CATEGORY_SOURCE);
  element_class->check = check_medium;
  element_class->apply = point_source_apply;
  element_class->compile = generated_source_compile;
  element_class->param_relevant = _airy_jones_source_relevant;
  install_medium_and_power (object_class);
  _airy_jones_source_install (object_class);
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("z", N_("Distance"), N_("Added to each plane's z"), "µm", -1e6, 1e6, 0.0, 0));
}

static void
_airy_point_source_init (AiryPointSource *self)
{
}

/* ------------------------------------------------------------------------ */
/* gaussian-beam                                                            */

typedef struct { AiryElement parent; } AiryGaussianBeam;
typedef struct { AiryElementClass parent_class; } AiryGaussianBeamClass;
G_DEFINE_FINAL_TYPE (AiryGaussianBeam, _airy_gaussian_beam, AIRY_TYPE_ELEMENT)

/* The Gaussian beam z from its waist w0 on field's grid: what apply() and
 * the reference interpreter's GAUSS compute. */
void
_airy_gaussian_beam_fill (AiryField *field, double n, double w0, double z, double power)
{
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;
      double lambda = field->lambda[l];

      /* the q-parameter form (airy-physics.h, the device's formula too) */
      for (y = 0; y < field->height; y++)
        for (x = 0; x < field->width; x++)
          {
            double xx = airy_grid_coord (x, field->width, field->dx[l]);
            double yy = airy_grid_coord (y, field->height, field->dy[l]);
            double re, im;

            airy_gaussian_beam (xx, yy, n, lambda, z, w0, &re, &im);
            u[(gsize) y * field->width + x] = (float) re + I * (float) im;
          }
      scale_plane (field, l, plane_power_scale (field, l, power));
    }
}

static gboolean
gaussian_beam_apply (AiryElement *self, gpointer state, AiryField *field,
                     const AiryPlane *plane, GError **error)
{
  _airy_gaussian_beam_fill (field, airy_element_get_double (self, "n"), airy_element_get_double (self, "waist"),
                            plane->z + airy_element_get_double (self, "z"), airy_element_get_double (self, "power"));
  _airy_jones_source_scale (self, field);
  return TRUE;
}

static void
_airy_gaussian_beam_class_init (AiryGaussianBeamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "gaussian-beam", N_("Gaussian beam"), AIRY_CATEGORY_SOURCE);
  element_class->check = check_medium;
  element_class->apply = gaussian_beam_apply;
  element_class->compile = generated_source_compile;
  element_class->param_relevant = _airy_jones_source_relevant;
  install_medium_and_power (object_class);
  _airy_jones_source_install (object_class);
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("waist", N_("Waist"), N_("1/e² intensity radius w0 at the waist"), "µm",
                            AIRY_FEATURE_MIN, 1e6, 10.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("z", N_("Distance from waist"), N_("Added to each plane's z"), "µm",
                            -1e6, 1e6, 0.0, 0));
}

static void
_airy_gaussian_beam_init (AiryGaussianBeam *self)
{
}
