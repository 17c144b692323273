#define G_LOG_DOMAIN "airy-fit"

#include "config.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>
#include <json-glib/json-glib.h>

#include "airy-error.h"
#include "airy-fit-private.h"
#include "airy-elements-private.h"
#include "airy-ops-private.h"

/* The forward model is the compiled plan's FUSED_PSF op (airy-ops-fuse.c)
 * of the system with a zero Zernike phase mask inserted where the fitted
 * one goes: F holds the source, every pupil mask and the centring
 * modulation, G the defocus phase per µm. For parameters p, on the pupil's
 * band of rows,
 *
 *   u_l(z_k) = F_l · e^{iΦ_l} · e^{i (z_k − z_b + z0) G_l},
 *   Φ_l = 2π (λ_c/λ_l) Σ_j c_j Z_j + 2π (x·x_b/(W du_x) + y·y_b/(H du_y)),
 *   I(z_k) = Σ_l s_l |DFT(u_l)|²,  μ = amplitude · I + background
 *
 * (a ramp e^{2πi x s/W} shifts a plain DFT's output by s pixels; the
 * phase mask evaluates the same Z_j on the same grid and radius, so the
 * model at p is airy_run's PSF of the system with those terms). The
 * gradient of a loss L(μ) with w = ∂L/∂μ: with Y_l = amplitude·s_l·w·U_l
 * (zero outside the window) and V_l = DFTᴴ(Y_l) (one backward transform),
 * ∂L/∂θ = −2 Σ_pixels φ_θ Im(conj(V_l) u_l) for every phase parameter
 * whose phase derivative is φ_θ (Z_j, the ramps, −G), so one pixel map
 * M_l = −2 Σ_k Im(conj(V_l) u_l) gives all of them. */

#define ZERNIKE_DEFAULT_MAX 14
#define MAX_ITERATIONS      300
/* a start's evaluations (forward + adjoint passes) per iteration it may
 * take: BFGS needs one to three, GSL's line search may try up to 200 */
#define EVALUATIONS_PER_ITERATION 5

struct _AiryFitModel
{
  AiryPlan     *plan;
  const AiryOp *op;              /* plan->ops[0], FUSED_PSF */
  guint         H, W, y0, rows;
  guint         L;               /* the FUSED_PSF's entries: wavelengths × components */
  guint         C;               /* components per wavelength (1: scalar); entry e is wavelength e / C */
  guint         NL;              /* wavelengths */
  gsize         nband, np;
  guint         depth;
  const double *z;               /* the system's planes (plan->z) */
  guint         K;
  int          *indices;
  double       *basis;           /* K × NL × nband: Z_j on the band, per wavelength */
  double       *lscale;          /* λ_c/λ_l, per wavelength */
  double        du_x, du_y;      /* PSF pixel (first wavelength) */
  guint         win_h, win_w, win_y0, win_x0;
  guint         threads;
  guint         stride;          /* planes used: every stride-th */
  /* Poisson's per-voxel constants of the last data (airy-fit-private.h) */
  const float  *data;
  float        *dpos;
  double       *dconst;
};

typedef struct
{
  fftwf_complex *X;              /* L × H × W */
  fftwf_complex *ub;             /* L × nband: u of the plane */
  fftwf_complex *T;              /* H × W: Fisher's derivative transforms */
  double        *w;              /* win: ∂L/∂μ of the plane */
  double        *inten;          /* win: I of the plane */
  double        *dI;             /* (K + 3) × win */
} Workspace;

static void
workspace_init (Workspace *ws, const AiryFitModel *m, gboolean fisher)
{
  gsize win = (gsize) m->win_h * m->win_w;

  ws->X = fftwf_alloc_complex ((gsize) m->L * m->np);
  ws->ub = fftwf_alloc_complex ((gsize) m->L * m->nband);
  ws->w = g_new (double, win);
  ws->inten = g_new (double, win);
  ws->T = fisher ? fftwf_alloc_complex (m->np) : NULL;
  ws->dI = fisher ? g_new (double, (gsize) (m->K + 3) * win) : NULL;
}

static void
workspace_clear (Workspace *ws)
{
  fftwf_free (ws->X);
  fftwf_free (ws->ub);
  fftwf_free (ws->T);
  g_free (ws->w);
  g_free (ws->inten);
  g_free (ws->dI);
}

guint
_airy_fit_model_n_params (AiryFitModel *model)
{
  return model->K + 5;
}

void
_airy_fit_model_set_stride (AiryFitModel *model,
                            guint         stride)
{
  model->stride = MAX (stride, 1);
}

guint
_airy_fit_model_depth (AiryFitModel *model)
{
  return model->depth;
}

void
_airy_fit_model_free (AiryFitModel *model)
{
  if (model == NULL)
    return;
  g_clear_pointer (&model->plan, _airy_plan_unref);
  g_free (model->indices);
  g_free (model->basis);
  g_free (model->lscale);
  g_free (model->dpos);
  g_free (model->dconst);
  g_free (model);
}

/* A phase mask holding Zernike terms (ANSI, waves, unit RMS). */
static AiryElement *
zernike_mask_new (const int *indices, const double *coefficients, guint n, GError **error)
{
  g_autoptr(JsonObject) o = json_object_new ();
  JsonArray *ai = json_array_new (), *ac = json_array_new ();
  guint i;

  for (i = 0; i < n; i++)
    {
      json_array_add_int_element (ai, indices[i]);
      json_array_add_double_element (ac, coefficients ? coefficients[i] : 0.0);
    }
  json_object_set_string_member (o, "type", "phase-mask");
  json_object_set_string_member (o, "source", "zernike");
  json_object_set_string_member (o, "zernike-indexing", "ansi");
  json_object_set_string_member (o, "zernike-unit", "waves");
  json_object_set_array_member (o, "zernike-indices", ai);
  json_object_set_array_member (o, "zernike-coefficients", ac);
  return airy_element_new_from_json (o, "fit", G_TYPE_INVALID, NULL, error);
}

/* A copy of system with mask in the pupil: after the last mask of a
 * microscope, or after the source and the pixelwise masks that follow it.
 * *chain_at: the mask's place in the plan's chain. */
static AirySystem *
system_insert_mask (AirySystem *system, AiryElement *mask, guint *chain_at)
{
  AirySystem *copy = airy_system_copy (system);
  GPtrArray *elements = airy_system_get_elements (copy);
  guint at, i, enabled = 0;

  if (airy_system_is_microscope (copy))
    at = elements->len;
  else
    for (at = 1; at < elements->len; at++)
      if (!AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (elements, at))->elementwise)
        break;
  for (i = 0; i < at && i < elements->len; i++)
    if (airy_element_get_enabled (g_ptr_array_index (elements, i)))
      enabled++;
  g_ptr_array_insert (elements, (gint) MIN (at, elements->len), g_object_ref (mask));
  airy_system_changed (copy);
  if (chain_at)
    *chain_at = airy_system_is_microscope (copy) ? 1 + enabled : enabled;
  return copy;
}

AiryFitModel *
_airy_fit_model_new (AirySystem  *system,
                     const int   *indices,
                     guint        n_terms,
                     guint        win_h,
                     guint        win_w,
                     guint        threads,
                     GPtrArray   *warnings,
                     GError     **error)
{
  g_autoptr(AiryFitModel) m = g_new0 (AiryFitModel, 1);
  g_autoptr(AiryElement) mask = NULL;
  g_autoptr(AirySystem) sys = NULL;
  AiryRunOptions options = { 0 };
  const AiryFusedPsf *psf;
  const AiryContext *ctx;
  AiryElement *sensor;
  double radius, lc;
  guint chain_at, j, l, r, x;

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  mask = zernike_mask_new (indices, NULL, n_terms, error);
  if (mask == NULL)
    return NULL;
  sys = system_insert_mask (system, mask, &chain_at);
  if (airy_system_is_microscope (sys))
    {
      /* the PSF is what is fitted: no sample file is read */
      AirySample sample = { .kind = AIRY_SAMPLE_CONSTANT, .value = 1.0 };
      airy_system_set_sample (sys, &sample);
    }
  sensor = airy_system_get_sensor (sys);
  if (sensor && airy_element_get_enum (sensor, "resample") != AIRY_RESAMPLE_NONE)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sensor.resample: the fit models the PSF on the camera grid; a sensor that "
                     "resamples is not supported, got \"%s\""),
                   airy_element_get_enum (sensor, "resample") == AIRY_RESAMPLE_BLOCK_SUM ? "block-sum" : "linear");
      return NULL;
    }
  m->plan = _airy_plan_new (sys, &options, warnings, error);
  if (m->plan == NULL || !_airy_plan_compile (m->plan, error))
    return NULL;
  m->op = g_ptr_array_index (m->plan->ops, 0);
  if (m->op->kind != AIRY_OP_FUSED_PSF)
    {
      g_autofree char *what = _airy_plan_describe (m->plan);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: the fit needs a PSF of the form source → pupil masks → lens "
                     "(the fused PSF); this system runs \"%s\""), what);
      return NULL;
    }
  psf = m->op->psf;
  m->H = m->op->height;
  m->W = m->op->width;
  m->L = m->op->n_lambda;
  m->C = MAX (psf->n_components, 1);
  m->NL = m->L / m->C;
  if (m->NL * m->C != m->L || m->NL != m->plan->spectrum->n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the fit's model has %u entries for %u wavelengths × %u field components"),
                   m->L, m->plan->spectrum->n, m->C);
      return NULL;
    }
  m->y0 = psf->y0;
  m->rows = psf->rows;
  m->nband = (gsize) m->rows * m->W;
  m->np = (gsize) m->H * m->W;
  m->depth = m->plan->n_planes;
  m->z = m->plan->z;
  m->du_x = m->plan->psf_dx;
  m->du_y = m->plan->psf_dy;
  if (win_h == 0 || win_w == 0 || win_h > m->H || win_w > m->W)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the fitted window (%u × %u pixels) must lie within the system's PSF plane (%u × %u)"),
                   win_w, win_h, m->W, m->H);
      return NULL;
    }
  m->win_h = win_h;
  m->win_w = win_w;
  m->win_y0 = m->H / 2 - win_h / 2;
  m->win_x0 = m->W / 2 - win_w / 2;
  m->stride = 1;
  m->threads = MAX (threads, 1);
  m->threads = MIN (m->threads, MAX (m->depth, 1));
  m->K = n_terms;
  m->indices = g_memdup2 (indices, sizeof (int) * MAX (n_terms, 1));
  m->lscale = g_new (double, m->NL);
  m->basis = g_new0 (double, (gsize) MAX (n_terms, 1) * m->NL * m->nband);

  /* Z_j exactly as the phase mask evaluates them (airy-masks.c): on the
   * grid entering the mask, over the objective's pupil radius */
  ctx = &m->plan->contexts[chain_at];
  lc = m->plan->spectrum->wavelengths[0];
  for (l = 0; l < m->NL; l++)
    {
      m->lscale[l] = lc / m->plan->spectrum->wavelengths[l];
      radius = ctx->pupil_radius > 0.0 ? ctx->pupil_radius
                                       : MIN (ctx->height / 2 * ctx->dy[l], ctx->width / 2 * ctx->dx[l]);
      for (r = 0; r < m->rows; r++)
        for (x = 0; x < m->W; x++)
          {
            double u = airy_grid_coord (x, m->W, ctx->dx[l]) / radius;
            double v = airy_grid_coord (m->y0 + r, m->H, ctx->dy[l]) / radius;
            double rho = sqrt (u * u + v * v), theta = atan2 (v, u);

            if (rho > 1.0)
              continue;
            for (j = 0; j < m->K; j++)
              {
                int zn, zm;
                airy_zernike_ansi_to_nm (indices[j], &zn, &zm);
                m->basis[((gsize) j * m->NL + l) * m->nband + (gsize) r * m->W + x]
                  = airy_zernike (zn, zm, rho, theta, TRUE);
              }
          }
    }
  return g_steal_pointer (&m);
}

/* The plain 2-D DFT of X (H × W) whose rows outside the pupil's band are
 * zero: the row transforms of the band only, then every column (FFTW's
 * pruning by hand; the full transform where the band is not aligned as the
 * plans want). */
static void
band_forward (const AiryFitModel *m, fftwf_complex *X)
{
  fftwf_complex *band = X + (gsize) m->y0 * m->W;

  if (fftwf_alignment_of ((float *) band) != 0 || fftwf_alignment_of ((float *) X) != 0)
    {
      _airy_fft_c2c_execute (m->H, m->W, AIRY_FFT_FORWARD, 1, X, X);
      return;
    }
  fftwf_execute_dft (_airy_fft_plan_many (m->W, m->rows, 1, m->W, TRUE, AIRY_FFT_FORWARD, 1), band, band);
  fftwf_execute_dft (_airy_fft_plan_many (m->H, m->W, m->W, 1, TRUE, AIRY_FFT_FORWARD, 1), X, X);
}

/* The unnormalised backward DFT of X, exact on the band's rows only (the
 * others are left half transformed: nobody reads them). */
static void
band_backward (const AiryFitModel *m, fftwf_complex *X)
{
  fftwf_complex *band = X + (gsize) m->y0 * m->W;

  if (fftwf_alignment_of ((float *) band) != 0 || fftwf_alignment_of ((float *) X) != 0)
    {
      _airy_fft_c2c_execute (m->H, m->W, AIRY_FFT_BACKWARD, 1, X, X);
      return;
    }
  fftwf_execute_dft (_airy_fft_plan_many (m->H, m->W, m->W, 1, TRUE, AIRY_FFT_BACKWARD, 1), X, X);
  fftwf_execute_dft (_airy_fft_plan_many (m->W, m->rows, 1, m->W, TRUE, AIRY_FFT_BACKWARD, 1), band, band);
}

/* F·e^{iΦ} on the band, every entry: Φ is the wavelength's, the same for
 * each of its components */
static fftwf_complex *
model_base (const AiryFitModel *m, const double *p)
{
  const AiryFusedPsf *psf = m->op->psf;
  fftwf_complex *base = fftwf_alloc_complex ((gsize) m->L * m->nband);
  double kx = 2.0 * AIRY_PI * p[m->K] / (m->W * m->du_x);
  double ky = 2.0 * AIRY_PI * p[m->K + 1] / (m->H * m->du_y);
  guint l, c, j, r, x;

  for (l = 0; l < m->NL; l++)
    for (r = 0; r < m->rows; r++)
      for (x = 0; x < m->W; x++)
        {
          gsize b = (gsize) r * m->W + x;
          double w = 0.0;
          fftwf_complex e;

          for (j = 0; j < m->K; j++)
            w += p[j] * m->basis[((gsize) j * m->NL + l) * m->nband + b];
          e = _airy_cis (2.0 * AIRY_PI * m->lscale[l] * w + kx * x + ky * (m->y0 + r));
          for (c = 0; c < m->C; c++)
            {
              gsize k = (gsize) (l * m->C + c) * m->nband + b;
              base[k] = psf->F[k] * e;
            }
        }
  return base;
}

/* u of plane k on the band, and the full-size transforms X_l = DFT(u_l) */
static void
plane_forward (const AiryFitModel *m, Workspace *ws, const fftwf_complex *base, double zt)
{
  const AiryFusedPsf *psf = m->op->psf;
  guint l, r, x;

  for (l = 0; l < m->L; l++)
    {
      fftwf_complex *ub = ws->ub + (gsize) l * m->nband;
      fftwf_complex *X = ws->X + (gsize) l * m->np;
      const fftwf_complex *bl = base + (gsize) l * m->nband;

      if (psf->gx && psf->gy)
        {
          /* separable (paraxial): e^{izG} = e^{iz gy[r]}·e^{iz gx[x]} */
          fftwf_complex ex[m->W];
          const double *gx = psf->gx + (gsize) l * m->W, *gy = psf->gy + (gsize) l * m->rows;

          for (x = 0; x < m->W; x++)
            ex[x] = _airy_cis (zt * gx[x]);
          for (r = 0; r < m->rows; r++)
            {
              fftwf_complex ey = _airy_cis (zt * gy[r]);
              for (x = 0; x < m->W; x++)
                ub[(gsize) r * m->W + x] = bl[(gsize) r * m->W + x] * (ey * ex[x]);
            }
        }
      else
        {
          const double *G = psf->G + (gsize) l * m->nband;
          gsize b;
          for (b = 0; b < m->nband; b++)
            ub[b] = bl[b] * _airy_cis (zt * G[b]);
        }
      memset (X, 0, (gsize) m->y0 * m->W * sizeof (fftwf_complex));
      memcpy (X + (gsize) m->y0 * m->W, ub, m->nband * sizeof (fftwf_complex));
      memset (X + (gsize) (m->y0 + m->rows) * m->W, 0,
              (gsize) (m->H - m->y0 - m->rows) * m->W * sizeof (fftwf_complex));
      band_forward (m, X);
    }
}

/* I on the window from X */
static void
plane_intensity (const AiryFitModel *m, Workspace *ws)
{
  const float *s = m->op->psf->scale;
  guint i, j, l;

  for (i = 0; i < m->win_h; i++)
    for (j = 0; j < m->win_w; j++)
      {
        gsize p = (gsize) (m->win_y0 + i) * m->W + m->win_x0 + j;
        double v = 0.0;

        for (l = 0; l < m->L; l++)
          {
            fftwf_complex c = ws->X[(gsize) l * m->np + p];
            v += s[l] * ((double) crealf (c) * crealf (c) + (double) cimagf (c) * cimagf (c));
          }
        ws->inten[(gsize) i * m->win_w + j] = v;
      }
}

typedef struct
{
  const AiryFitModel  *m;
  guint                k0, k1;
  const fftwf_complex *base;
  const double        *p;
  const float         *data;
  gboolean             poisson;
  double               inv_var;
  float               *mu_out;
  gboolean             grad;
  gboolean             fisher;
  double               loss, gA, gB;
  double              *M;       /* L × nband */
  double              *F;       /* (K + 5)² */
} Chunk;

static double
mu_floor (double mu)
{
  return mu > 1e-12 ? mu : 1e-12;
}

static void
chunk_fisher_plane (Chunk *c, Workspace *ws, double zt)
{
  const AiryFitModel *m = c->m;
  const AiryFusedPsf *psf = m->op->psf;
  guint P = m->K + 5, nphase = m->K + 3, q, a, b, l, r, x, i, j;
  gsize win = (gsize) m->win_h * m->win_w, pix;
  double A = c->p[m->K + 3], B = c->p[m->K + 4];
  double kx = 2.0 * AIRY_PI / (m->W * m->du_x), ky = 2.0 * AIRY_PI / (m->H * m->du_y);
  double J[P];

  memset (ws->dI, 0, nphase * win * sizeof (double));
  for (q = 0; q < nphase; q++)
    for (l = 0; l < m->L; l++)
      {
        const fftwf_complex *ub = ws->ub + (gsize) l * m->nband;
        const fftwf_complex *X = ws->X + (gsize) l * m->np;
        fftwf_complex *T = ws->T;

        memset (T, 0, m->np * sizeof (fftwf_complex));
        for (r = 0; r < m->rows; r++)
          for (x = 0; x < m->W; x++)
            {
              gsize bi = (gsize) r * m->W + x;
              double phi;

              if (q < m->K)
                phi = 2.0 * AIRY_PI * m->lscale[l / m->C] * m->basis[((gsize) q * m->NL + l / m->C) * m->nband + bi];
              else if (q == m->K)
                phi = kx * x;
              else if (q == m->K + 1)
                phi = ky * (m->y0 + r);
              else
                phi = -psf->G[(gsize) l * m->nband + bi];
              T[(gsize) (m->y0 + r) * m->W + x] = (float) phi * I * ub[bi];
            }
        band_forward (m, T);
        for (i = 0; i < m->win_h; i++)
          for (j = 0; j < m->win_w; j++)
            {
              gsize p = (gsize) (m->win_y0 + i) * m->W + m->win_x0 + j;
              fftwf_complex u = X[p], d = T[p];
              ws->dI[q * win + (gsize) i * m->win_w + j]
                += 2.0 * psf->scale[l] * ((double) crealf (u) * crealf (d) + (double) cimagf (u) * cimagf (d));
            }
      }
  for (pix = 0; pix < win; pix++)
    {
      double mu = mu_floor (A * ws->inten[pix] + B);
      double wgt = c->poisson ? 1.0 / mu : c->inv_var;

      for (q = 0; q < nphase; q++)
        J[q] = A * ws->dI[q * win + pix];
      J[m->K + 3] = ws->inten[pix];
      J[m->K + 4] = 1.0;
      for (a = 0; a < P; a++)
        for (b = a; b < P; b++)
          c->F[a * P + b] += wgt * J[a] * J[b];
    }
}

/* The loss of one plane's window and w = ∂L/∂μ, with local sums (the
 * compiler keeps them in registers). Poisson: Σ μ − d⁺·log μ + c with
 * d⁺ = max(d, 0) and c = d⁺·log d⁺ − d (the NLL minus its saturated value,
 * c precomputed per voxel); log μ = log B + log1p(x/B) by its series
 * where the PSF adds x < B/100 to the background (error below 2·10⁻¹³):
 * the far wings cost no logarithm. */
static void
plane_loss (Chunk *c, Workspace *ws, guint k, gsize win, double A, double B)
{
  const AiryFitModel *m = c->m;
  const double *in = ws->inten;
  double *w = ws->w, loss = 0.0, gA = 0.0, gB = 0.0;
  gsize q;

  if (c->poisson)
    {
      const float *dp = m->dpos + (gsize) k * win;
      const double *cst = m->dconst + (gsize) k * win;
      double logB = B > 0 ? log (B) : 0.0, small = B > 0 ? 0.01 * B : -1.0, invB = B > 0 ? 1.0 / B : 0.0;

      for (q = 0; q < win; q++)
        {
          double x = A * in[q], mu = mu_floor (x + B), lg, wq, dm = dp[q];

          if (x >= 0.0 && x < small)
            {
              double t = x * invB;
              lg = logB + t * (1.0 - t * (0.5 - t * (1.0 / 3 - t * (0.25 - t * 0.2))));
            }
          else
            lg = log (mu);
          loss += mu - dm * lg + cst[q];
          wq = 1.0 - dm / mu;
          w[q] = wq;
          gA += wq * in[q];
          gB += wq;
        }
    }
  else
    {
      const float *d = c->data + (gsize) k * win;

      for (q = 0; q < win; q++)
        {
          double e = A * in[q] + B - d[q], wq = e * c->inv_var;

          loss += 0.5 * e * wq;
          w[q] = wq;
          gA += wq * in[q];
          gB += wq;
        }
    }
  c->loss += loss;
  c->gA += gA;
  c->gB += gB;
}

static gpointer
chunk_run (gpointer data)
{
  Chunk *c = data;
  const AiryFitModel *m = c->m;
  const float *s = m->op->psf->scale;
  double A = c->p[m->K + 3], B = c->p[m->K + 4], zb = c->p[m->K + 2];
  gsize win = (gsize) m->win_h * m->win_w;
  Workspace ws;
  guint k, l, i, j, r, x;

  workspace_init (&ws, m, c->fisher);
  for (k = c->k0 * m->stride; k < c->k1 * m->stride; k += m->stride)
    {
      double zt = m->z[k] - zb + m->op->psf->z0;
      gsize q;

      plane_forward (m, &ws, c->base, zt);
      plane_intensity (m, &ws);
      if (c->fisher)
        {
          chunk_fisher_plane (c, &ws, zt);
          continue;
        }
      if (c->mu_out)
        for (q = 0; q < win; q++)
          c->mu_out[(gsize) k * win + q] = (float) (A * ws.inten[q] + B);
      if (c->data != NULL)
        plane_loss (c, &ws, k, win, A, B);
      if (!c->grad)
        continue;
      for (l = 0; l < m->L; l++)
        {
          fftwf_complex *X = ws.X + (gsize) l * m->np;
          const fftwf_complex *ub = ws.ub + (gsize) l * m->nband;
          double *M = c->M + (gsize) l * m->nband;
          double f = A * s[l];

          /* Y = amplitude·s_l·w·U on the window, 0 elsewhere */
          memset (X, 0, (gsize) m->win_y0 * m->W * sizeof (fftwf_complex));
          for (i = 0; i < m->win_h; i++)
            {
              fftwf_complex *row = X + (gsize) (m->win_y0 + i) * m->W;
              memset (row, 0, m->win_x0 * sizeof (fftwf_complex));
              for (j = 0; j < m->win_w; j++)
                row[m->win_x0 + j] *= (float) (f * ws.w[(gsize) i * m->win_w + j]);
              memset (row + m->win_x0 + m->win_w, 0, (m->W - m->win_x0 - m->win_w) * sizeof (fftwf_complex));
            }
          memset (X + (gsize) (m->win_y0 + m->win_h) * m->W, 0,
                  (gsize) (m->H - m->win_y0 - m->win_h) * m->W * sizeof (fftwf_complex));
          /* V = DFTᴴ(Y): the unnormalised backward transform */
          band_backward (m, X);
          for (r = 0; r < m->rows; r++)
            for (x = 0; x < m->W; x++)
              {
                fftwf_complex v = X[(gsize) (m->y0 + r) * m->W + x], u = ub[(gsize) r * m->W + x];
                /* −2 Im(conj(v)·u) */
                M[(gsize) r * m->W + x] -= 2.0 * ((double) crealf (v) * cimagf (u) - (double) cimagf (v) * crealf (u));
              }
        }
    }
  workspace_clear (&ws);
  return NULL;
}

/* Runs the planes split over the model's threads; sums into chunks[0]. */
static void
run_chunks (const AiryFitModel *m, Chunk *proto, Chunk *out)
{
  guint T = m->threads, t;
  g_autofree Chunk *chunks = g_new0 (Chunk, T);
  g_autofree GThread **threads = g_new0 (GThread *, T);
  gsize nM = (gsize) m->L * m->nband, nF = (gsize) (m->K + 5) * (m->K + 5), i;
  guint nv = (m->depth + m->stride - 1) / m->stride;

  for (t = 0; t < T; t++)
    {
      chunks[t] = *proto;
      chunks[t].k0 = nv * t / T;
      chunks[t].k1 = nv * (t + 1) / T;
      chunks[t].M = proto->grad ? g_new0 (double, nM) : NULL;
      chunks[t].F = proto->fisher ? g_new0 (double, nF) : NULL;
    }
  for (t = 1; t < T; t++)
    threads[t] = g_thread_new ("airy-fit", chunk_run, &chunks[t]);
  chunk_run (&chunks[0]);
  for (t = 1; t < T; t++)
    {
      g_thread_join (threads[t]);
      chunks[0].loss += chunks[t].loss;
      chunks[0].gA += chunks[t].gA;
      chunks[0].gB += chunks[t].gB;
      if (proto->grad)
        for (i = 0; i < nM; i++)
          chunks[0].M[i] += chunks[t].M[i];
      if (proto->fisher)
        for (i = 0; i < nF; i++)
          chunks[0].F[i] += chunks[t].F[i];
      g_free (chunks[t].M);
      g_free (chunks[t].F);
    }
  *out = chunks[0];
}

void
_airy_fit_model_eval (AiryFitModel *m, const double *p, float *out)
{
  fftwf_complex *base = model_base (m, p);
  Chunk proto = { .m = m, .base = base, .p = p, .mu_out = out }, res;

  run_chunks (m, &proto, &res);
  fftwf_free (base);
}

double
_airy_fit_model_loss (AiryFitModel *m,
                      const float  *data,
                      gboolean      poisson,
                      double        noise_var,
                      const double *p,
                      double       *grad)
{
  fftwf_complex *base;
  Chunk proto = { .m = m, .p = p, .data = data, .poisson = poisson,
                  .inv_var = 1.0 / noise_var, .grad = grad != NULL }, res;
  guint l, j, r, x;

  if (poisson && data != m->data)
    {
      gsize n = (gsize) m->depth * m->win_h * m->win_w, q;

      g_free (m->dpos);
      g_free (m->dconst);
      m->dpos = g_new (float, n);
      m->dconst = g_new (double, n);
      for (q = 0; q < n; q++)
        {
          double d = data[q], dp = d > 0 ? d : 0.0;
          m->dpos[q] = (float) dp;
          m->dconst[q] = (dp > 0 ? dp * log (dp) : 0.0) - d;
        }
      m->data = data;
    }
  base = model_base (m, p);
  proto.base = base;
  run_chunks (m, &proto, &res);
  fftwf_free (base);
  if (grad)
    {
      const double *G = m->op->psf->G;
      double gx = 0.0, gy = 0.0, gz = 0.0;

      for (j = 0; j < m->K; j++)
        {
          double g = 0.0;
          for (l = 0; l < m->L; l++)
            {
              const double *Z = m->basis + ((gsize) j * m->NL + l / m->C) * m->nband, *M = res.M + (gsize) l * m->nband;
              double gl = 0.0;
              gsize b;
              for (b = 0; b < m->nband; b++)
                gl += Z[b] * M[b];
              g += 2.0 * AIRY_PI * m->lscale[l / m->C] * gl;
            }
          grad[j] = g;
        }
      for (l = 0; l < m->L; l++)
        for (r = 0; r < m->rows; r++)
          for (x = 0; x < m->W; x++)
            {
              gsize b = (gsize) l * m->nband + (gsize) r * m->W + x;
              gx += x * res.M[b];
              gy += (m->y0 + r) * res.M[b];
              gz -= G[b] * res.M[b];
            }
      grad[m->K] = 2.0 * AIRY_PI * gx / (m->W * m->du_x);
      grad[m->K + 1] = 2.0 * AIRY_PI * gy / (m->H * m->du_y);
      grad[m->K + 2] = gz;
      grad[m->K + 3] = res.gA;
      grad[m->K + 4] = res.gB;
      g_free (res.M);
    }
  return res.loss;
}

void
_airy_fit_model_fisher (AiryFitModel *m,
                        gboolean      poisson,
                        double        noise_var,
                        const double *p,
                        double       *fisher)
{
  fftwf_complex *base = model_base (m, p);
  Chunk proto = { .m = m, .base = base, .p = p, .poisson = poisson, .inv_var = 1.0 / noise_var,
                  .fisher = TRUE }, res;
  guint P = m->K + 5, a, b;

  run_chunks (m, &proto, &res);
  fftwf_free (base);
  for (a = 0; a < P; a++)
    for (b = 0; b < P; b++)
      fisher[a * P + b] = b >= a ? res.F[a * P + b] : res.F[b * P + a];
  g_free (res.F);
}

/* ------------------------------------------------------------------------ */
/* The fit                                                                   */

void
airy_fit_options_init (AiryFitOptions *options)
{
  memset (options, 0, sizeof *options);
  options->offset = NAN;
}

void
airy_fit_result_free (AiryFitResult *result)
{
  if (result == NULL)
    return;
  g_free (result->indices);
  g_free (result->coefficients);
  g_free (result->uncertainties);
  g_clear_pointer (&result->model, airy_stack_free);
  g_clear_pointer (&result->residual, airy_stack_free);
  g_clear_pointer (&result->warnings, g_ptr_array_unref);
  g_free (result);
}

static int
compare_floats (gconstpointer a, gconstpointer b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return x < y ? -1 : x > y;
}

typedef struct
{
  AiryFitModel *m;
  const float  *data;
  gboolean      poisson;
  double        noise_var;
  double       *scale;        /* p_i = v_i / scale_i */
  guint         P;
  double       *p, *g;
  guint         evaluations;
  /* the last point, for f and df called apart */
  double       *last_v;
  double        last_f;
  double       *last_g;
  gboolean      have_last;
  /* the bounds of one start (run_bfgs): once stopped, every evaluation
   * returns +∞ and a zero gradient without computing, so that GSL's line
   * search ends at once */
  guint         budget;       /* evaluations left */
  gboolean      first;        /* the next evaluation is the start point */
  gboolean      stopped;
  gboolean      non_finite;   /* stopped by a non-finite loss or gradient */
  double        bad_f;        /* that loss */
  guint         bad_param;    /* the first non-finite gradient component, or P */
} Objective;

/* the optimiser's variables: the terms in waves, the position in µm,
 * amplitude and background relative to their first guesses A0, B0 */
static void
objective_init (Objective *o, AiryFitModel *m, const float *data, gboolean poisson, double noise_var,
                double A0, double B0)
{
  guint i;

  memset (o, 0, sizeof *o);
  o->m = m;
  o->data = data;
  o->poisson = poisson;
  o->noise_var = noise_var;
  o->P = _airy_fit_model_n_params (m);
  o->scale = g_new (double, o->P);
  for (i = 0; i < o->P; i++)
    o->scale[i] = 1.0;
  o->scale[o->P - 2] = 1.0 / A0;
  o->scale[o->P - 1] = 1.0 / MAX (fabs (B0), 1.0);
  o->p = g_new (double, o->P);
  o->last_g = g_new (double, o->P);
  o->last_v = g_new (double, o->P);
}

static void
objective_clear (Objective *o)
{
  g_clear_pointer (&o->scale, g_free);
  g_clear_pointer (&o->p, g_free);
  g_clear_pointer (&o->last_g, g_free);
  g_clear_pointer (&o->last_v, g_free);
}

static void
objective_params (const Objective *o, const gsl_vector *v, double *p)
{
  guint i;

  for (i = 0; i < o->P; i++)
    p[i] = gsl_vector_get (v, i) / o->scale[i];
}

static void
objective_eval (Objective *o, const gsl_vector *v)
{
  guint i;

  if (o->have_last)
    {
      for (i = 0; i < o->P; i++)
        if (gsl_vector_get (v, i) != o->last_v[i])
          break;
      if (i == o->P)
        return;
    }
  for (i = 0; i < o->P; i++)
    o->last_v[i] = gsl_vector_get (v, i);
  o->have_last = TRUE;
  if (!o->stopped && o->budget == 0)
    o->stopped = TRUE;
  if (o->stopped)
    {
      o->last_f = GSL_POSINF;
      memset (o->last_g, 0, o->P * sizeof (double));
      return;
    }
  objective_params (o, v, o->p);
  o->last_f = _airy_fit_model_loss (o->m, o->data, o->poisson, o->noise_var, o->p, o->last_g);
  o->evaluations++;
  o->budget--;
  for (i = 0; i < o->P; i++)
    o->last_g[i] /= o->scale[i];
  /* a non-finite loss at a trial point of the line search is +∞ (the
   * search steps back); at the start, or a non-finite gradient where the
   * loss is finite, the fit cannot go on */
  for (i = 0; i < o->P && isfinite (o->last_g[i]); i++)
    ;
  if ((o->first && !isfinite (o->last_f)) || (isfinite (o->last_f) && i < o->P))
    {
      o->stopped = o->non_finite = TRUE;
      o->bad_f = o->last_f;
      o->bad_param = i;
      o->last_f = GSL_POSINF;
      memset (o->last_g, 0, o->P * sizeof (double));
    }
  o->first = FALSE;
}

static double
objective_f (const gsl_vector *v, void *data)
{
  Objective *o = data;
  objective_eval (o, v);
  return isfinite (o->last_f) ? o->last_f : GSL_POSINF;
}

static void
objective_df (const gsl_vector *v, void *data, gsl_vector *g)
{
  Objective *o = data;
  guint i;

  objective_eval (o, v);
  for (i = 0; i < o->P; i++)
    gsl_vector_set (g, i, o->last_g[i]);
}

static void
objective_fdf (const gsl_vector *v, void *data, double *f, gsl_vector *g)
{
  *f = objective_f (v, data);
  objective_df (v, data, g);
}

static void
objective_params_array (const Objective *o, const double *v, double *p)
{
  guint i;

  for (i = 0; i < o->P; i++)
    p[i] = v[i] / o->scale[i];
}

/* GSL's BFGS (vector_bfgs2) from v until the loss moves by less than
 * 10⁻⁴ (in units of the log-likelihood, where one σ is ½) three times
 * running, for at most max iterations and o->budget evaluations (which it
 * uses up); v is the end point. FALSE with an error when cancelled or the
 * loss or its gradient is not finite. */
static gboolean
run_bfgs (Objective            *o,
          double               *v,
          const AiryFitOptions *options,
          guint                 restart,
          guint                 max,
          guint                *iterations,
          double               *loss,
          GCancellable         *cancellable,
          GError              **error)
{
  gsl_multimin_function_fdf fdf = { objective_f, objective_df, objective_fdf, o->P, o };
  gsl_multimin_fdfminimizer *min = gsl_multimin_fdfminimizer_alloc (gsl_multimin_fdfminimizer_vector_bfgs2, o->P);
  gsl_vector *x = gsl_vector_alloc (o->P);
  guint it, still = 0, i;
  double prev = INFINITY;
  gboolean ok = TRUE;

  for (i = 0; i < o->P; i++)
    gsl_vector_set (x, i, v[i]);
  o->have_last = FALSE;
  o->first = TRUE;
  o->stopped = o->non_finite = FALSE;
  gsl_multimin_fdfminimizer_set (min, &fdf, x, 0.02, 0.1);
  for (it = 0; it < max && !o->stopped; it++)
    {
      int status = gsl_multimin_fdfminimizer_iterate (min);
      double f = gsl_multimin_fdfminimizer_minimum (min);

      if (o->stopped)
        break;    /* the iteration ran on values that were not computed */
      if (options->progress)
        options->progress (restart, it + 1, f, options->user_data);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }
      if (status)
        {
          it++;   /* an iteration that made no progress counts: it was evaluated */
          break;
        }
      still = prev - f < 1e-4 ? still + 1 : 0;
      prev = f;
      if (still >= 3 || gsl_multimin_test_gradient (gsl_multimin_fdfminimizer_gradient (min), 1e-6) == GSL_SUCCESS)
        {
          it++;
          break;
        }
    }
  *iterations = it;
  *loss = gsl_multimin_fdfminimizer_minimum (min);
  for (i = 0; i < o->P; i++)
    v[i] = gsl_vector_get (gsl_multimin_fdfminimizer_x (min), i);
  if (ok && o->non_finite)
    {
      if (o->bad_param < o->P)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the fit cannot go on: at start %u, iteration %u, the gradient in parameter %u is not "
                       "finite (the model or the data hold values that are not finite)"),
                     restart + 1, it + 1, o->bad_param);
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the fit cannot go on: at start %u, iteration %u, the loss is %g (the model or the "
                       "data hold values that are not finite)"),
                     restart + 1, it + 1, o->bad_f);
      ok = FALSE;
    }
  gsl_multimin_fdfminimizer_free (min);
  gsl_vector_free (x);
  return ok;
}

gboolean
_airy_fit_minimize (AiryFitModel  *model,
                    const float   *data,
                    gboolean       poisson,
                    double         noise_var,
                    double        *params,
                    guint          max_iterations,
                    guint         *iterations,
                    guint         *evaluations,
                    double        *loss,
                    GError       **error)
{
  AiryFitOptions options;
  Objective o;
  guint P = _airy_fit_model_n_params (model), i;
  double v[P];
  gboolean ok;

  airy_fit_options_init (&options);
  gsl_set_error_handler_off ();
  objective_init (&o, model, data, poisson, noise_var, params[P - 2], params[P - 1]);
  o.budget = EVALUATIONS_PER_ITERATION * max_iterations;
  for (i = 0; i < P; i++)
    v[i] = params[i] * o.scale[i];
  ok = run_bfgs (&o, v, &options, 0, max_iterations, iterations, loss, NULL, error);
  objective_params_array (&o, v, params);
  *evaluations = o.evaluations;
  objective_clear (&o);
  return ok;
}

/* The stack on the system's grid: resampled (with a warning) when its
 * voxels are not the system's; errors name the file's and the system's. */
static AiryStack *
beads_on_grid (const AiryStack *beads, const AiryPlan *geom, GPtrArray *warnings, GError **error)
{
  double du = geom->psf_dx, dz_sys = 0.0, dx = beads->dx > 0 ? beads->dx : du;
  double dy = beads->dy > 0 ? beads->dy : dx, dz = beads->dz;
  guint nz = geom->n_planes, h, w;
  gboolean z_ok, xy_ok;

  if (nz > 1)
    dz_sys = (geom->z[nz - 1] - geom->z[0]) / (nz - 1);
  if (beads->dx <= 0)
    g_ptr_array_add (warnings, g_strdup_printf (_("the bead stack has no pixel size; taken as the system's (%g µm)"), du));
  if (nz > 1 && beads->depth > 1 && dz <= 0)
    {
      g_ptr_array_add (warnings, g_strdup_printf (_("the bead stack has no z spacing; taken as the system's (%g µm)"), dz_sys));
      dz = dz_sys;
    }
  xy_ok = fabs (dx - du) <= 1e-3 * du && fabs (dy - du) <= 1e-3 * du;
  z_ok = nz <= 1 ? beads->depth == 1 : beads->depth == nz && fabs (dz - dz_sys) <= 1e-3 * fabs (dz_sys);
  if (xy_ok && z_ok)
    return airy_stack_copy (beads);
  if (nz > 1 && beads->depth > 1 && (beads->depth - 1) * dz < (geom->z[nz - 1] - geom->z[0]) * (1 - 1e-6))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack spans %g µm in z (%u planes of %g µm), less than the system's planes "
                     "(%g µm, %u planes of %g µm)"),
                   (beads->depth - 1) * dz, beads->depth, dz, geom->z[nz - 1] - geom->z[0], nz, dz_sys);
      return NULL;
    }
  if (nz > 1 && beads->depth == 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack has one plane, the system %u (z.count): fit a stack or give the system one plane"), nz);
      return NULL;
    }
  if (nz == 1 && beads->depth != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack has %u planes, the system one (z.count)"), beads->depth);
      return NULL;
    }
  h = (guint) MAX (1.0, floor (beads->height * dy / du + 1e-6));
  w = (guint) MAX (1.0, floor (beads->width * dx / du + 1e-6));
  g_ptr_array_add (warnings,
                   g_strdup_printf (_("the bead stack's voxels (%g × %g × %g µm) are not the system's (%g × %g × %g µm): "
                                      "resampled to %u × %u × %u"),
                                    dx, dy, dz, du, du, dz_sys, w, h, nz));
  {
    g_autoptr(AiryStack) src = airy_stack_copy (beads);
    AiryStack *out;

    src->dx = dx;
    src->dy = dy;
    src->dz = dz;
    out = _airy_stack_resample (src, h, w, du, du, nz, geom->z, NULL);
    if (out == NULL)
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("the bead stack resampled to %u × %u × %u does not fit in memory"), w, h, nz);
    return out;
  }
}

AiryFitResult *
airy_fit_stack (AirySystem           *system,
                const AiryStack      *beads,
                const AiryFitOptions *options_in,
                GCancellable         *cancellable,
                GError              **error)
{
  g_autoptr(AiryFitResult) res = g_new0 (AiryFitResult, 1);
  g_autoptr(AiryPlan) geom = NULL;
  g_autoptr(AiryStack) grid = NULL;
  g_autoptr(AiryFitModel) m = NULL;
  g_autoptr(GArray) border = g_array_new (FALSE, FALSE, sizeof (float));
  g_autofree int *indices = NULL;
  g_autofree float *data = NULL;
  g_autofree float *proj = NULL;
  g_autofree double *p = NULL, *best = NULL, *fisher = NULL;
  AiryFitOptions options;
  AiryRunOptions run_options = { 0 };
  GError *local_error = NULL;
  AiryElement *sensor;
  gboolean poisson;
  double gain, offset, B0, noise_var, A0 = 1.0, best_loss = INFINITY, sigma, z_starts[4];
  gint64 t0 = g_get_monotonic_time ();
  guint zmax, K = 0, P, wh, ww, cx, cy, bx = 0, by = 0, i, j, k, restart, threads, n_starts, coarse, max_it;
  gsize win, n, q;
  float vmax = -INFINITY;
  Objective o = { 0 };

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  g_return_val_if_fail (beads != NULL && beads->data != NULL, NULL);
  if (options_in)
    options = *options_in;
  else
    airy_fit_options_init (&options);
  /* GSL's default handler aborts; its status codes are checked here */
  gsl_set_error_handler_off ();
  res->warnings = g_ptr_array_new_with_free_func (g_free);

  zmax = options.zernike_max ? options.zernike_max : ZERNIKE_DEFAULT_MAX;
  if (zmax < 3 || zmax > 65)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("zernike: the highest ANSI index must be in [3, 65], got %u"), zmax);
      return NULL;
    }
  indices = g_new (int, zmax);
  for (i = 3; i <= zmax; i++)
    if (i != 4)
      indices[K++] = (int) i;
  P = K + 5;

  /* the stack: finite, on the system's grid */
  n = (gsize) beads->depth * beads->height * beads->width;
  for (q = 0; q < n; q++)
    if (!isfinite (beads->data[q]))
      {
        gsize plane = (gsize) beads->height * beads->width;
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the bead stack has a non-finite value (%g) at x %u, y %u, z %u; every voxel must be finite"),
                     (double) beads->data[q], (guint) (q % beads->width), (guint) (q % plane / beads->width),
                     (guint) (q / plane));
        return NULL;
      }
  geom = _airy_plan_new_checked (system, &run_options, TRUE, res->warnings, error);
  if (geom == NULL)
    return NULL;
  grid = beads_on_grid (beads, geom, res->warnings, error);
  if (grid == NULL)
    return NULL;

  /* counts: photons = (ADU − offset)/gain */
  sensor = airy_system_get_sensor (system);
  poisson = options.objective == AIRY_FIT_OBJECTIVE_POISSON
            || (options.objective == AIRY_FIT_OBJECTIVE_AUTO && (beads->bits == 8 || beads->bits == 16));
  gain = options.gain > 0 ? options.gain : sensor ? airy_element_get_double (sensor, "gain") : 1.0;
  offset = !isnan (options.offset) ? options.offset : sensor ? airy_element_get_double (sensor, "offset") : 0.0;
  if (!(gain > 0) || !isfinite (gain) || !isfinite (offset))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("gain: must be a finite number > 0, got %g (offset %g)"), gain, offset);
      return NULL;
    }
  if (!poisson)
    gain = 1.0, offset = 0.0;
  res->objective = poisson ? AIRY_FIT_OBJECTIVE_POISSON : AIRY_FIT_OBJECTIVE_LEAST_SQUARES;

  /* the window: the whole stack, or crop² around the brightest pixel of the
   * projection over z */
  proj = g_new0 (float, (gsize) grid->height * grid->width);
  for (k = 0; k < grid->depth; k++)
    for (q = 0; q < (gsize) grid->height * grid->width; q++)
      proj[q] += grid->data[(gsize) k * grid->height * grid->width + q];
  for (i = 0; i < grid->height; i++)
    for (j = 0; j < grid->width; j++)
      if (proj[(gsize) i * grid->width + j] > vmax)
        {
          vmax = proj[(gsize) i * grid->width + j];
          by = i;
          bx = j;
        }
  if (options.crop > 0)
    {
      if (options.crop > grid->width || options.crop > grid->height)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("crop: must be at most the stack's size (%u × %u pixels), got %u"),
                       grid->width, grid->height, options.crop);
          return NULL;
        }
      ww = wh = options.crop;
      cx = (guint) CLAMP ((int) bx - (int) (ww / 2), 0, (int) (grid->width - ww));
      cy = (guint) CLAMP ((int) by - (int) (wh / 2), 0, (int) (grid->height - wh));
    }
  else
    {
      ww = grid->width;
      wh = grid->height;
      cx = cy = 0;
    }
  if (wh > geom->psf_height || ww > geom->psf_width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack is %u × %u pixels, larger than the system's PSF plane (%u × %u): "
                     "crop it (--crop) or enlarge grid.shape"),
                   ww, wh, geom->psf_width, geom->psf_height);
      return NULL;
    }
  win = (gsize) wh * ww;
  data = g_new (float, win * grid->depth);
  for (k = 0; k < grid->depth; k++)
    for (i = 0; i < wh; i++)
      for (j = 0; j < ww; j++)
        {
          float v = grid->data[((gsize) k * grid->height + cy + i) * grid->width + cx + j];
          data[(gsize) k * win + (gsize) i * ww + j] = (float) ((v - offset) / gain);
        }

  /* background and noise from the window's border */
  for (k = 0; k < grid->depth; k++)
    for (i = 0; i < wh; i++)
      for (j = 0; j < ww; j++)
        if (i == 0 || j == 0 || i + 1 == wh || j + 1 == ww)
          g_array_append_val (border, data[(gsize) k * win + (gsize) i * ww + j]);
  g_array_sort (border, compare_floats);
  B0 = g_array_index (border, float, border->len / 2);
  for (q = 0; q < border->len; q++)
    g_array_index (border, float, q) = fabsf (g_array_index (border, float, q) - (float) B0);
  g_array_sort (border, compare_floats);
  sigma = 1.4826 * g_array_index (border, float, border->len / 2);
  if (poisson)
    sigma = MAX (sigma, sqrt (MAX (B0, 1.0)));
  {
    float dmax = -INFINITY;

    for (q = 0; q < win * grid->depth; q++)
      dmax = MAX (dmax, data[q]);
    if (!(dmax - B0 > 10.0 * sigma) || dmax <= 0)
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the bead stack holds no bead: its brightest voxel (%g) is within 10 σ (σ = %g) of the "
                       "background (%g)"), dmax * gain + offset, sigma * gain, B0 * gain + offset);
        return NULL;
      }
  }
  noise_var = sigma > 0 ? sigma * sigma : 1.0;

  threads = options.threads ? options.threads : g_get_num_processors ();
  m = _airy_fit_model_new (system, indices, K, wh, ww, threads, res->warnings, error);
  if (m == NULL)
    return NULL;

  /* the start: zero aberration, the bead at the centroid of the brightest
   * 5 × 5 pixels of the projection and in its brightest plane */
  p = g_new0 (double, P);
  best = g_new0 (double, P);
  {
    double sx = 0, sy = 0, sw = 0, pk = -INFINITY;
    int wbx = (int) bx - (int) cx, wby = (int) by - (int) cy, di, dj;
    guint kmax = 0;
    g_autofree float *mu = g_new (float, win * m->depth);
    double sd = 0, sm = 0;

    for (di = -2; di <= 2; di++)
      for (dj = -2; dj <= 2; dj++)
        {
          int yy = wby + di, xx = wbx + dj;
          double v = 0;
          if (yy < 0 || xx < 0 || yy >= (int) wh || xx >= (int) ww)
            continue;
          for (k = 0; k < m->depth; k++)
            v += data[(gsize) k * win + (gsize) yy * ww + xx] - B0;
          v = MAX (v, 0.0);
          sx += v * xx;
          sy += v * yy;
          sw += v;
        }
    if (sw > 0)
      {
        p[K] = (sx / sw - (double) (ww / 2)) * m->du_x;
        p[K + 1] = (sy / sw - (double) (wh / 2)) * m->du_y;
      }
    for (k = 0; k < m->depth; k++)
      for (q = 0; q < win; q++)
        if (data[(gsize) k * win + q] > pk)
          pk = data[(gsize) k * win + q], kmax = k;
    p[K + 3] = 1.0;
    p[K + 4] = 0.0;
    for (q = 0; q < win * m->depth; q++)
      sd += data[q] - B0;
    /* z: the brightest plane is a poor guess under strong aberrations;
     * the best of up to 9 depths over the planes' range (at zero
     * aberration, the amplitude matching the data's sum) */
    {
      guint nc = m->depth > 1 ? MIN (m->depth, 9) : 1, ci;
      double best_z = m->z[kmax], best_f = INFINITY;

      for (ci = 0; ci <= nc; ci++)
        {
          double zc = ci == nc ? m->z[kmax]
                               : nc > 1 ? m->z[0] + (m->z[m->depth - 1] - m->z[0]) * ci / (nc - 1) : m->z[0];
          double f, A;

          p[K + 2] = zc;
          p[K + 3] = 1.0;
          p[K + 4] = 0.0;
          _airy_fit_model_eval (m, p, mu);
          sm = 0;
          for (q = 0; q < win * m->depth; q++)
            sm += mu[q];
          A = sd > 0 && sm > 0 ? sd / sm : 1.0;
          p[K + 3] = A;
          p[K + 4] = B0;
          f = _airy_fit_model_loss (m, data, poisson, noise_var, p, NULL);
          if (f < best_f)
            {
              best_f = f;
              best_z = zc;
              A0 = A;
            }
        }
      z_starts[0] = m->depth > 1 ? 0.5 * (m->z[0] + m->z[m->depth - 1]) : m->z[0];
      z_starts[1] = best_z;
      z_starts[2] = m->depth > 1 ? 0.75 * m->z[0] + 0.25 * m->z[m->depth - 1] : m->z[0];
      z_starts[3] = m->depth > 1 ? 0.25 * m->z[0] + 0.75 * m->z[m->depth - 1] : m->z[0];
    }
  }

  /* Starts: at zero aberration from the middle of the planes, the best
   * depth of the scan and the quartiles (the loss has a second basin
   * where a strong aberration trades against the depth); for a single
   * plane, random terms of ±0.1 waves (it leaves the sign of the even
   * terms open, so all of them run and the best is kept). A stack stops at
   * the first start that fits to the noise: a loss of at most 0.75 per
   * voxel (½ expected), unless a number of starts was asked for. */
  objective_init (&o, m, data, poisson, noise_var, A0, B0);
  p[K + 3] = A0;
  p[K + 4] = B0;
  /* four starts at most by default; every one of them for a single plane */
  n_starts = options.restarts ? options.restarts : 4;
  max_it = options.max_iterations ? options.max_iterations : MAX_ITERATIONS;
  coarse = m->depth >= 16 ? m->depth / 8 : 1;
  for (restart = 0; restart < n_starts; restart++)
    {
      g_autoptr(GRand) rand = g_rand_new_with_seed (options.seed + restart);
      double v[P], f = INFINITY;
      guint it = 0, it2 = 0;

      if (!options.restarts && m->depth > 1 && best_loss <= 0.75 * win * m->depth)
        break;
      res->restarts++;
      for (i = 0; i < P; i++)
        v[i] = p[i] * o.scale[i];
      v[K + 2] = z_starts[restart % 4] * o.scale[K + 2];
      if (restart > 0 && (m->depth <= 1 || restart >= 4))
        for (i = 0; i < K; i++)
          v[i] = g_rand_double_range (rand, -0.1, 0.1) * o.scale[i];
      /* every coarse-th plane first (the path to the basin costs a
       * fraction), then all of them: at most max_it iterations and
       * EVALUATIONS_PER_ITERATION·max_it evaluations in all, the coarse
       * stage at most half of each */
      if (coarse > 1)
        {
          _airy_fit_model_set_stride (m, coarse);
          o.budget = EVALUATIONS_PER_ITERATION * max_it / 2;
          if (!run_bfgs (&o, v, &options, restart, max_it / 2, &it, &f, cancellable, &local_error))
            break;
          _airy_fit_model_set_stride (m, 1);
          o.budget += EVALUATIONS_PER_ITERATION * (max_it - max_it / 2);
        }
      else
        o.budget = EVALUATIONS_PER_ITERATION * max_it;
      if (!run_bfgs (&o, v, &options, restart, max_it - it, &it2, &f, cancellable, &local_error))
        break;
      if (o.stopped)
        g_ptr_array_add (res->warnings,
                         g_strdup_printf (_("start %u stopped at its limit of %u evaluations (%u per iteration)"),
                                          restart + 1, EVALUATIONS_PER_ITERATION * max_it,
                                          EVALUATIONS_PER_ITERATION));
      res->iterations_total += it + it2;
      if (f < best_loss)
        {
          best_loss = f;
          objective_params_array (&o, v, best);
          res->iterations = it + it2;
        }
    }
  _airy_fit_model_set_stride (m, 1);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      objective_clear (&o);
      return NULL;
    }
  res->evaluations = o.evaluations;
  objective_clear (&o);
  res->loss = best_loss;

  /* 1-σ uncertainties: the diagonal of the inverse Fisher information;
   * least squares with the noise of the residuals */
  fisher = g_new0 (double, (gsize) P * P);
  if (!poisson)
    {
      double rss = _airy_fit_model_loss (m, data, FALSE, 1.0, best, NULL) * 2.0;
      gsize N = win * m->depth;
      noise_var = N > P ? rss / (N - P) : noise_var;
    }
  _airy_fit_model_fisher (m, poisson, noise_var, best, fisher);
  res->n_terms = K;
  res->indices = g_memdup2 (indices, sizeof (int) * K);
  res->coefficients = g_memdup2 (best, sizeof (double) * K);
  res->uncertainties = g_new (double, K);
  {
    gsl_matrix_view F = gsl_matrix_view_array (fisher, P, P);
    double sig[P];
    int status = gsl_linalg_cholesky_decomp1 (&F.matrix);

    if (status == 0)
      status = gsl_linalg_cholesky_invert (&F.matrix);
    for (i = 0; i < P; i++)
      sig[i] = status == 0 ? sqrt (gsl_matrix_get (&F.matrix, i, i)) : NAN;
    if (status != 0)
      g_ptr_array_add (res->warnings, g_strdup (_("the Fisher information is singular: no uncertainties")));
    memcpy (res->uncertainties, sig, sizeof (double) * K);
    for (i = 0; i < 3; i++)
      res->position_uncertainties[i] = sig[K + i];
    res->amplitude_uncertainty = sig[K + 3] * gain;
    res->background_uncertainty = sig[K + 4] * gain;
  }
  res->position[0] = ((double) cx + ww / 2 - (double) (grid->width / 2)) * m->du_x + best[K];
  res->position[1] = ((double) cy + wh / 2 - (double) (grid->height / 2)) * m->du_y + best[K + 1];
  res->position[2] = best[K + 2];
  res->amplitude = best[K + 3] * gain;
  res->background = best[K + 4] * gain + offset;
  res->window[0] = cx;
  res->window[1] = cy;
  res->window[2] = ww;
  res->window[3] = wh;

  /* RMS and Strehl over the pupil at the first wavelength; vectorial:
   * Σ_c s_c |⟨P_c e^{2πiW}⟩|² / Σ_c s_c ⟨P_c⟩² over its components */
  {
    double s2 = 0, num = 0, den = 0;
    gsize b;
    guint c;

    for (i = 0; i < K; i++)
      s2 += best[i] * best[i];
    res->rms_waves = sqrt (s2);
    for (c = 0; c < m->C; c++)
      {
        const fftwf_complex *F = m->op->psf->F + (gsize) c * m->nband;
        double complex sum = 0;
        double sp = 0;

        for (b = 0; b < m->nband; b++)
          {
            double a = cabsf (F[b]), w = 0;
            for (i = 0; i < K; i++)
              w += best[i] * m->basis[(gsize) i * m->NL * m->nband + b];
            sum += a * cexp (2.0 * AIRY_PI * I * w);
            sp += a;
          }
        num += m->op->psf->scale[c] * creal (sum * conj (sum));
        den += m->op->psf->scale[c] * sp * sp;
      }
    res->strehl = den > 0 ? num / den : NAN;
  }

  /* the model and the residual in data units */
  res->model = airy_stack_new (m->depth, wh, ww);
  res->residual = airy_stack_new (m->depth, wh, ww);
  _airy_fit_model_eval (m, best, res->model->data);
  for (q = 0; q < win * m->depth; q++)
    {
      res->model->data[q] = (float) (res->model->data[q] * gain + offset);
      res->residual->data[q] = (float) (data[q] * gain + offset) - res->model->data[q];
    }
  for (i = 0; i < 2; i++)
    {
      AiryStack *s = i == 0 ? res->model : res->residual;
      s->dx = m->du_x;
      s->dy = m->du_y;
      s->dz = m->depth > 1 ? (m->z[m->depth - 1] - m->z[0]) / (m->depth - 1) : 0.0;
      airy_stack_set_z (s, m->z);
    }
  res->seconds = (g_get_monotonic_time () - t0) / 1e6;
  res->seconds_per_iteration = res->iterations_total > 0 ? res->seconds / res->iterations_total : 0.0;
  return g_steal_pointer (&res);
}

AirySystem *
airy_fit_result_apply (const AiryFitResult *result,
                       AirySystem          *system,
                       GError             **error)
{
  g_autoptr(AiryElement) mask = NULL;

  g_return_val_if_fail (result != NULL, NULL);
  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  mask = zernike_mask_new (result->indices, result->coefficients, result->n_terms, error);
  if (mask == NULL)
    return NULL;
  return system_insert_mask (system, mask, NULL);
}

static JsonNode *
doubles_node (const double *v, guint n)
{
  JsonArray *a = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);
  guint i;

  for (i = 0; i < n; i++)
    {
      if (isfinite (v[i]))
        json_array_add_double_element (a, v[i]);
      else
        json_array_add_null_element (a);
    }
  json_node_take_array (node, a);
  return node;
}

static void
set_number (JsonObject *o, const char *name, double v)
{
  if (isfinite (v))
    json_object_set_double_member (o, name, v);
  else
    json_object_set_null_member (o, name);
}

char *
airy_fit_result_to_json (const AiryFitResult *result)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  JsonObject *o = json_object_new (), *z = json_object_new ();
  JsonArray *idx = json_array_new ();
  guint i;

  for (i = 0; i < result->n_terms; i++)
    json_array_add_int_element (idx, result->indices[i]);
  json_object_set_string_member (z, "indexing", "ansi");
  json_object_set_string_member (z, "unit", "waves");
  json_object_set_array_member (z, "indices", idx);
  json_object_set_member (z, "coefficients", doubles_node (result->coefficients, result->n_terms));
  json_object_set_member (z, "uncertainties", doubles_node (result->uncertainties, result->n_terms));
  json_object_set_object_member (o, "zernike", z);
  set_number (o, "rms_waves", result->rms_waves);
  set_number (o, "strehl", result->strehl);
  json_object_set_member (o, "position", doubles_node (result->position, 3));
  json_object_set_member (o, "position_uncertainties", doubles_node (result->position_uncertainties, 3));
  set_number (o, "amplitude", result->amplitude);
  set_number (o, "amplitude_uncertainty", result->amplitude_uncertainty);
  set_number (o, "background", result->background);
  set_number (o, "background_uncertainty", result->background_uncertainty);
  json_object_set_string_member (o, "objective",
                                 result->objective == AIRY_FIT_OBJECTIVE_POISSON ? "poisson" : "least-squares");
  set_number (o, "loss", result->loss);
  json_object_set_int_member (o, "iterations", result->iterations);
  json_object_set_int_member (o, "iterations_total", result->iterations_total);
  json_object_set_int_member (o, "evaluations", result->evaluations);
  json_object_set_int_member (o, "restarts", result->restarts);
  set_number (o, "seconds", result->seconds);
  set_number (o, "seconds_per_iteration", result->seconds_per_iteration);
  json_node_take_object (root, o);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  return json_generator_to_data (gen, NULL);
}
