#define G_LOG_DOMAIN "airy-masks"

/* phase-mask (split from airy-masks.c, which holds the other masks) */

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-image-file.h"
#include "airy-ops-private.h"
#include "airy-stack.h"

/* The last Zernike index a phase mask takes: ANSI 230 ends radial order 20. */
#define ZERNIKE_LAST 230

/* ------------------------------------------------------------------------ */
/* phase-mask: constant, image, Zernike sum, named mask or Seidel          */
/* aberrations; optional SLM                                                */

typedef struct { AiryElement parent; } AiryPhaseMask;
typedef struct { AiryElementClass parent_class; } AiryPhaseMaskClass;
G_DEFINE_FINAL_TYPE (AiryPhaseMask, _airy_phase_mask, AIRY_TYPE_ELEMENT)

typedef struct
{
  guint          h, w, n_lambda;
  gboolean       constant;
  gboolean       modulate;   /* φ·λ_c/λ at each wavelength (else φ at every one) */
  double         value;
  fftwf_complex *factor;     /* exp(iφ λ_c/λ) per wavelength, or NULL */
  double        *radius;     /* the unit pupil's radius per wavelength */
} PhaseState;

static void
phase_state_free (gpointer p)
{
  PhaseState *s = p;

  fftwf_free (s->factor);
  g_free (s->radius);
  g_free (s);
}

static double
phase_pupil_radius (AiryElement *self, const AiryContext *ctx, guint l)
{
  double r = airy_element_get_double (self, "pupil-radius");

  if (r > 0.0)
    return r;
  if (ctx->pupil_radius > 0.0)
    return ctx->pupil_radius;
  return MIN (ctx->height / 2 * ctx->dy[l], ctx->width / 2 * ctx->dx[l]);
}

static void check_phase_sampling (AiryElement *self, AiryContext *ctx);

static gboolean
phase_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  int source = airy_element_get_enum (self, "source");

  if (source == AIRY_PHASE_ZERNIKE)
    {
      gsize ni, nc, i;
      const double *idx = airy_element_get_doubles (self, "zernike-indices", &ni);
      int indexing = airy_element_get_enum (self, "zernike-indexing");
      double first = 0, last = 0;

      airy_element_get_doubles (self, "zernike-coefficients", &nc);
      if (ni != nc)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s.zernike-coefficients: must have as many entries as zernike-indices (%lu), got %lu"),
                       ctx->path, (unsigned long) ni, (unsigned long) nc);
          return FALSE;
        }
      /* the declared range is ANSI's; Noll counts from 1 */
      airy_param_spec_get_item_range (g_object_class_find_property (G_OBJECT_GET_CLASS (self), "zernike-indices"),
                                      &first, &last);
      for (i = 0; i < ni; i++)
        {
          double lo = indexing == AIRY_ZERNIKE_NOLL ? 1 : first;
          gsize j;

          if (idx[i] != floor (idx[i]) || idx[i] < lo || idx[i] > last)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("%s.zernike-indices[%lu]: must be an integer in [%g, %g], got %g"),
                           ctx->path, (unsigned long) i, lo, last, idx[i]);
              return FALSE;
            }
          /* a term given twice would be summed without a word */
          for (j = 0; j < i; j++)
            if (idx[j] == idx[i])
              {
                g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                             _("%s.zernike-indices[%lu]: index %g is given twice (also at [%lu]); "
                               "give each term once"),
                             ctx->path, (unsigned long) i, idx[i], (unsigned long) j);
                return FALSE;
              }
        }
    }
  else if (source == AIRY_PHASE_SEIDEL)
    {
      gsize n = 0;

      airy_element_get_doubles (self, "seidel-coefficients", &n);
      if (n != 5)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s.seidel-coefficients: needs 5 values (W040, W131, W222, W220, W311 in waves), got %lu"),
                       ctx->path, (unsigned long) n);
          return FALSE;
        }
    }
  else if (source == AIRY_PHASE_IMAGE && ctx->no_files)
    {
      if (!_airy_mask_file_named (self, ctx, error))
        return FALSE;
    }
  else if (source == AIRY_PHASE_IMAGE)
    {
      g_autofree char *prop = g_strdup_printf ("%s.file", ctx->path);
      g_autofree float *img = _airy_load_mask_image (self, prop, airy_element_get_string (self, "file"),
                                                     ctx->height, ctx->width, error);
      if (img == NULL)
        return FALSE;
    }
  check_phase_sampling (self, ctx);
  return TRUE;
}

/* The phase-mask parameters, read once per preparation (property lookups
 * are far too slow for a per-pixel loop). */
typedef struct
{
  int           source;
  int           noll;
  int           normalised;
  int           microns;
  int           named;
  double        strength;
  double        angle;
  double        defocus;
  double        period;
  double        chip_depth, chip_c0;  /* the potato chip's d (µm) and C0 */
  double        medium_n;             /* the medium's index (the potato chip's k = n/λ) */
  int           count;
  gsize         nz;
  int          *zn;      /* Zernike (n, m) per term */
  int          *zm;
  const double *zc;
  double        seidel[5];   /* W040, W131, W222, W220, W311 (waves) */
  double        field_u, field_v;
} PhaseParams;

static void
phase_params_init (PhaseParams *p, AiryElement *self)
{
  const double *zi;
  gsize i;

  p->source = airy_element_get_enum (self, "source");
  p->noll = airy_element_get_enum (self, "zernike-indexing") == AIRY_ZERNIKE_NOLL;
  p->normalised = airy_element_get_boolean (self, "zernike-normalised");
  p->microns = airy_element_get_enum (self, "zernike-unit") == AIRY_ZERNIKE_MICRONS;
  p->named = airy_element_get_enum (self, "named");
  p->strength = airy_element_get_double (self, "strength");
  p->angle = airy_element_get_double (self, "angle");
  p->defocus = airy_element_get_double (self, "defocus");
  p->period = airy_element_get_double (self, "period");
  p->chip_depth = airy_element_get_double (self, "chip-depth");
  p->chip_c0 = airy_element_get_double (self, "chip-c0");
  p->medium_n = 1.0;
  p->count = airy_element_get_int (self, "count");
  {
    gsize n = 0, k;
    const double *w = airy_element_get_doubles (self, "seidel-coefficients", &n);

    for (k = 0; k < 5; k++)
      p->seidel[k] = k < n ? w[k] : 0.0;
  }
  p->field_u = airy_element_get_double (self, "field-u");
  p->field_v = airy_element_get_double (self, "field-v");
  zi = airy_element_get_doubles (self, "zernike-indices", &p->nz);
  p->zc = airy_element_get_doubles (self, "zernike-coefficients", &i);
  p->nz = MIN (p->nz, i);
  p->zn = g_new (int, MAX (p->nz, 1));
  p->zm = g_new (int, MAX (p->nz, 1));
  for (i = 0; i < p->nz; i++)
    {
      if (p->noll)
        airy_zernike_noll_to_nm ((int) zi[i], &p->zn[i], &p->zm[i]);
      else
        airy_zernike_ansi_to_nm ((int) zi[i], &p->zn[i], &p->zm[i]);
    }
}

static void
phase_params_clear (PhaseParams *p)
{
  g_free (p->zn);
  g_free (p->zm);
}

/* φ(x, y) in rad at the first wavelength; (u, v) = (x, y)/R over the unit pupil. */
static double
phase_value (const PhaseParams *p, double x, double y, double radius, double lambda_c)
{
  double u = x / radius, v = y / radius;

  switch (p->source)
    {
    case AIRY_PHASE_ZERNIKE:
      {
        double rho = sqrt (u * u + v * v), sum = 0.0;
        gsize i;

        if (rho > 1.0)
          return 0.0;
        /* the same terms as the basis the op carries (phase_compile) */
        for (i = 0; i < p->nz; i++)
          if (p->zc[i] != 0.0)
            sum += p->zc[i] * airy_zernike_at (p->zn[i], p->zm[i], x, y, radius, p->normalised);
        /* waves: φ = 2π·W; µm of wavefront: φ = 2π·W/λ_c */
        return p->microns ? 2.0 * AIRY_PI * sum / lambda_c : 2.0 * AIRY_PI * sum;
      }
    case AIRY_PHASE_SEIDEL:
      return 2.0 * AIRY_PI * airy_seidel_waves (u, v, p->seidel, p->field_u, p->field_v);
    case AIRY_PHASE_NAMED:
      switch (p->named)
        {
        case AIRY_NAMED_DEFOCUSED_RAMPS:
          return airy_named_defocused_ramps (u, v, p->count, p->strength, p->defocus);
        case AIRY_NAMED_CUBIC:
          return airy_named_cubic (u, v, p->strength);
        case AIRY_NAMED_VORTEX:
          return airy_named_vortex (u, v, p->strength);
        case AIRY_NAMED_AXICON:
          return airy_named_axicon (u, v, p->strength);
        case AIRY_NAMED_GRATING:
          return airy_named_grating (x, y, p->period, p->angle);
        case AIRY_NAMED_SINUSOID:
          return airy_named_sinusoid (x, y, p->strength, p->period, p->angle);
        case AIRY_NAMED_CIRCULAR:
          return airy_named_circular (u, v, p->strength);
        case AIRY_NAMED_POTATO_CHIP:
          return airy_named_potato_chip (u, v, p->chip_depth, p->chip_c0, p->medium_n, lambda_c);
        case AIRY_NAMED_PRISM:
          return airy_named_prism (u, v, p->strength * cos (p->angle), p->strength * sin (p->angle));
        default:
          return 0.0;
        }
    default:
      return 0.0;
    }
}

/* whether a Zernike coefficient is not 0 */
static gboolean
zernike_any (AiryElement *self)
{
  gsize n, i;
  const double *c = airy_element_get_doubles (self, "zernike-coefficients", &n);

  for (i = 0; i < n; i++)
    if (c[i] != 0.0)
      return TRUE;
  return FALSE;
}

/* The largest |∇φ| of a smooth mask phase over the unit pupil, per unit of
 * ρ: central differences on a 49 × 49 grid of the disc and on its rim (the
 * terms of a Zernike sum are steepest there). */
static double
gradient_at (const PhaseParams *p, double u, double v, double lambda_c)
{
  const double h = 1e-4;
  double gx = (phase_value (p, u + h, v, 1.0, lambda_c) - phase_value (p, u - h, v, 1.0, lambda_c)) / (2.0 * h);
  double gy = (phase_value (p, u, v + h, 1.0, lambda_c) - phase_value (p, u, v - h, 1.0, lambda_c)) / (2.0 * h);

  return hypot (gx, gy);
}

static double
phase_max_gradient (const PhaseParams *p, double lambda_c)
{
  const double edge = 1.0 - 2e-4;
  double gmax = 0.0;
  int i, j;

  for (j = 0; j < 49; j++)
    for (i = 0; i < 49; i++)
      {
        double u = -1.0 + 2.0 * i / 48.0, v = -1.0 + 2.0 * j / 48.0;

        if (u * u + v * v <= edge * edge)
          gmax = MAX (gmax, gradient_at (p, u, v, lambda_c));
      }
  for (i = 0; i < 256; i++)
    gmax = MAX (gmax, gradient_at (p, edge * cos (2.0 * AIRY_PI * i / 256.0), edge * sin (2.0 * AIRY_PI * i / 256.0),
                                   lambda_c));
  return gmax;
}

/* A Zernike sum, a cubic, an axicon or a prism steeper than the pupil's
 * pixels sample: more than π from one pixel to the next. (A vortex, a
 * grating, ramps and the potato chip change by jumps on purpose.) */
static void
check_phase_sampling (AiryElement *self, AiryContext *ctx)
{
  int source = airy_element_get_enum (self, "source");
  int named = airy_element_get_enum (self, "named");
  double lambda_c = ctx->spectrum->wavelengths[0], gmax, step = 0.0;
  PhaseParams params;
  guint l;

  if (source != AIRY_PHASE_ZERNIKE && source != AIRY_PHASE_SEIDEL
      && !(source == AIRY_PHASE_NAMED && (named == AIRY_NAMED_CUBIC || named == AIRY_NAMED_AXICON
                                          || named == AIRY_NAMED_PRISM || named == AIRY_NAMED_CIRCULAR)))
    return;
  phase_params_init (&params, self);
  gmax = phase_max_gradient (&params, lambda_c);
  phase_params_clear (&params);
  /* per pupil pixel: ∇φ over ρ times the pixel over the radius, at each
   * wavelength's share of the phase (λ_c/λ) */
  for (l = 0; l < ctx->spectrum->n; l++)
    step = MAX (step, gmax * MAX (ctx->dx[l], ctx->dy[l]) / phase_pupil_radius (self, ctx, l)
                      * lambda_c / ctx->spectrum->wavelengths[l]);
  _airy_context_check_phase_step (ctx, step, source == AIRY_PHASE_ZERNIKE ? _("Zernike phase") : _("mask's phase"));
}

static gpointer
phase_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  PhaseState *s = g_new0 (PhaseState, 1);
  int source = airy_element_get_enum (self, "source");
  int bits = airy_element_get_int (self, "bits");
  gboolean slm = airy_element_get_boolean (self, "wrap") || bits > 0;
  double lambda_c = ctx->spectrum->wavelengths[0];
  g_autofree float *image = NULL;
  PhaseParams params;
  gsize np;
  guint l, y, x;

  s->h = ctx->height;
  s->w = ctx->width;
  s->n_lambda = ctx->spectrum->n;
  s->modulate = airy_element_get_boolean (self, "spectral-modulation");
  s->radius = g_new (double, s->n_lambda);
  for (l = 0; l < s->n_lambda; l++)
    s->radius[l] = phase_pupil_radius (self, ctx, l);
  if (source == AIRY_PHASE_CONSTANT && !slm)
    {
      s->constant = TRUE;
      s->value = airy_element_get_double (self, "value");
      return s;
    }
  if (source == AIRY_PHASE_CONSTANT)
    {
      s->constant = TRUE;
      s->value = airy_slm_phase (airy_element_get_double (self, "value"), bits);
      return s;
    }
  if (source == AIRY_PHASE_ZERNIKE && !zernike_any (self))
    {
      /* every coefficient 0 (a term added, not set yet): no phase */
      s->constant = TRUE;
      s->value = slm ? airy_slm_phase (0.0, bits) : 0.0;
      return s;
    }
  if (source == AIRY_PHASE_IMAGE)
    {
      g_autofree char *prop = g_strdup_printf ("%s.file", ctx->path);
      image = _airy_load_mask_image (self, prop, airy_element_get_string (self, "file"),
                                     s->h, s->w, error);
      if (image == NULL)
        {
          phase_state_free (s);
          return NULL;
        }
    }
  phase_params_init (&params, self);
  params.medium_n = ctx->n;
  np = (gsize) s->h * s->w;
  s->factor = fftwf_alloc_complex (np * s->n_lambda);
  for (l = 0; l < s->n_lambda; l++)
    {
      double radius = s->radius[l];
      double scale = s->modulate ? lambda_c / ctx->spectrum->wavelengths[l] : 1.0;
      double pmin = airy_element_get_double (self, "phase-min");
      double pmax = airy_element_get_double (self, "phase-max");

      for (y = 0; y < s->h; y++)
        for (x = 0; x < s->w; x++)
          {
            gsize i = (gsize) y * s->w + x;
            double xx = airy_grid_coord (x, s->w, ctx->dx[l]);
            double yy = airy_grid_coord (y, s->h, ctx->dy[l]);
            double phi = image ? pmin + image[i] * (pmax - pmin)
                               : phase_value (&params, xx, yy, radius, lambda_c);

            if (slm)
              phi = airy_slm_phase (phi, bits);
            /* most of the grid lies outside the unit pupil, at phase 0 */
            s->factor[l * np + i] = phi == 0.0 ? 1.0f : _airy_cis (phi * scale);
          }
    }
  phase_params_clear (&params);
  return s;
}

static gboolean
phase_apply (AiryElement *self, gpointer state, AiryField *field,
             const AiryPlane *plane, GError **error)
{
  PhaseState *s = state;
  gsize np = airy_field_plane_size (field), i;
  guint l;

  g_assert (field->height == s->h && field->width == s->w);
  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      if (s->constant)
        {
          /* u·exp(iφ λ_c/λ), or u·exp(iφ) unmodulated */
          fftwf_complex c = _airy_cis (s->modulate ? s->value * field->lambda[0] / field->lambda[l] : s->value);
          for (i = 0; i < np; i++)
            u[i] *= c;
        }
      else
        {
          const fftwf_complex *f = s->factor + l * np;
          for (i = 0; i < np; i++)
            u[i] *= f[i];
        }
    }
  return TRUE;
}

/* The factor as apply() on a field of ones (what a pixelwise type gives),
 * and for a Zernike source without wrapping its basis: its terms over
 * this mask's pupil radius (pupil-radius, else the objective's), which the
 * fit varies (airy-fit-model.c). */
static gboolean
phase_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  PhaseState *s = state;
  AiryPlane any = { 0, 0.0, 1 };
  AiryOp *op;

  _airy_field_fill_ones (field);
  if (!phase_apply (self, state, field, &any, error))
    return FALSE;
  op = _airy_op_take_factor (AIRY_OP_MULTIPLY, field);
  /* (the fit's Zernike model scales the phase by λ_c/λ: no basis without it) */
  if (airy_element_get_enum (self, "source") == AIRY_PHASE_ZERNIKE && !airy_element_get_boolean (self, "wrap")
      && airy_element_get_int (self, "bits") == 0 && s->modulate)
    {
      AiryZernikeBasis *b = g_new0 (AiryZernikeBasis, 1);
      PhaseParams params;

      phase_params_init (&params, self);
      b->n_terms = (guint) params.nz;
      b->n = g_memdup2 (params.zn, MAX (params.nz, 1) * sizeof (int));
      b->m = g_memdup2 (params.zm, MAX (params.nz, 1) * sizeof (int));
      b->normalised = params.normalised;
      phase_params_clear (&params);
      b->n_lambda = s->n_lambda;
      b->height = field->height;
      b->width = field->width;
      b->radius = g_memdup2 (s->radius, s->n_lambda * sizeof (double));
      b->dy = g_memdup2 (field->dy, s->n_lambda * sizeof (double));
      b->dx = g_memdup2 (field->dx, s->n_lambda * sizeof (double));
      op->bases = g_ptr_array_new_with_free_func (_airy_zernike_basis_free);
      g_ptr_array_add (op->bases, b);
    }
  g_ptr_array_add (ops, op);
  return TRUE;
}

/* Which parameters the source uses; the rest (pupil radius, wrap, bits)
 * apply to every source. */
static gboolean
phase_param_relevant (AiryElement *self, GParamSpec *pspec)
{
  static const char *const named[] = { "named", "strength", "count", "defocus", "period", "angle", "chip-depth", "chip-c0",
                                       NULL };
  const char *name = pspec->name;
  int source = airy_element_get_enum (self, "source");

  if (g_str_equal (name, "value"))
    return source == AIRY_PHASE_CONSTANT;
  if (g_str_equal (name, "file") || g_str_has_prefix (name, "phase-"))
    return source == AIRY_PHASE_IMAGE;
  if (g_str_has_prefix (name, "zernike-"))
    return source == AIRY_PHASE_ZERNIKE;
  if (g_str_has_prefix (name, "seidel-") || g_str_has_prefix (name, "field-"))
    return source == AIRY_PHASE_SEIDEL;
  if (g_strv_contains (named, name))
    return source == AIRY_PHASE_NAMED;
  return TRUE;
}

static void
_airy_phase_mask_class_init (AiryPhaseMaskClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "phase-mask", N_("Phase mask"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->check = phase_check;
  element_class->prepare = phase_prepare;
  element_class->free_state = phase_state_free;
  element_class->apply = phase_apply;
  element_class->compile = phase_compile;
  element_class->param_relevant = phase_param_relevant;

  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("source", N_("Source"), N_("Where the phase comes from"),
                          _airy_phase_source_get_type (), AIRY_PHASE_CONSTANT, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("value", N_("Phase"), N_("Constant phase"), "rad", -1e4, 1e4, 0.0, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_string ("file", N_("File"), N_("PNG or TIFF phase image, stretched over the grid"),
                            AIRY_PARAM_FILE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("phase-min", N_("Phase of 0"), N_("Phase of the image's lowest value"), "rad",
                            -1e4, 1e4, 0.0, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("phase-max", N_("Phase of 1"), N_("Phase of the image's highest value"), "rad",
                            -1e4, 1e4, 2.0 * G_PI, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("zernike-indexing", N_("Zernike indexing"), N_("Single-index convention"),
                          _airy_zernike_indexing_get_type (), AIRY_ZERNIKE_ANSI, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_set_max_items (airy_param_spec_double_array ("zernike-indices", N_("Zernike indices"),
                                   N_("Single indices (ANSI from 0, Noll from 1)"), NULL,
                                   0, ZERNIKE_LAST, AIRY_PARAM_INTEGER), ZERNIKE_LAST + 1));
  /* ±1000 waves (or µm) at the rim: a phase gradient no grid samples (a
   * 4096² grid holds at most π per pixel, 2048·π ≈ 1000 waves over the
   * pupil's radius) */
  airy_element_class_install_property (object_class,
    airy_param_spec_set_max_items (airy_param_spec_double_array ("zernike-coefficients", N_("Zernike coefficients"),
                                   N_("One per index"), NULL, -1000.0, 1000.0, 0), ZERNIKE_LAST + 1));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("zernike-unit", N_("Zernike unit"), N_("Coefficients in waves or in µm of wavefront"),
                          _airy_zernike_unit_get_type (), AIRY_ZERNIKE_WAVES, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("zernike-normalised", N_("Normalised"), N_("Unit-RMS Zernike polynomials"), TRUE));
  airy_element_class_install_property (object_class,
    airy_param_spec_set_max_items (airy_param_spec_double_array ("seidel-coefficients", N_("Seidel coefficients"),
                                   N_("W040 spherical, W131 coma, W222 astigmatism, W220 field curvature, W311 "
                                      "distortion (waves)"), NULL, -1000.0, 1000.0, 0), 5));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("field-u", N_("Field point x"), N_("Object field point, normalised (1: the edge)"), NULL,
                            -1.0, 1.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("field-v", N_("Field point y"), N_("Object field point, normalised (1: the edge)"), NULL,
                            -1.0, 1.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("named", N_("Named mask"), N_("Which named mask"),
                          _airy_named_mask_get_type (), AIRY_NAMED_CUBIC, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("strength", N_("Strength"),
                            N_("Cubic α, vortex charge, axicon or ramp slope, prism tilt, circular phase (rad at the rim), "
                               "sinusoid amplitude (rad)"),
                            "rad", -1e5, 1e5, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("count", N_("Ramps"), N_("Number of defocused ramps"), 1, 64, 6, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("defocus", N_("Ramp defocus"), N_("Defocus of the ramps at the rim"), "rad",
                            -1e5, 1e5, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("period", N_("Period"), N_("Grating period"), "µm", AIRY_FEATURE_MIN, 1e6, 10.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("angle", N_("Angle"), N_("Grating or prism direction"), "rad", -10.0, 10.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("chip-depth", N_("Chip depth"),
                            N_("Potato chip: the PSF's axial extent d"), "µm", -1e5, 1e5, 50.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("chip-c0", N_("Chip focus"), N_("Potato chip: the focus term C0"), NULL,
                            -1e5, 1e5, -146.7, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("pupil-radius", N_("Pupil radius"),
                            N_("Radius of the unit pupil (0: the objective's f·NA/n)"), "µm",
                            0.0, 1e6, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("spectral-modulation", N_("Spectral modulation"),
                             N_("Scale the phase by λ_c/λ at each wavelength (off: the same phase at every one)"),
                             TRUE));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("wrap", N_("Wrap"), N_("Wrap the phase into [0, 2π) like an SLM"), FALSE));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("bits", N_("SLM bits"), N_("Quantise the wrapped phase to 2^bits levels (0: off)"),
                         0, 16, 0, 0));
}

static void
_airy_phase_mask_init (AiryPhaseMask *self)
{
}
