#define G_LOG_DOMAIN "airy-fit"

/* The fit's forward model and its adjoint gradient (airy-fit-private.h):
 * the system's fused PSF with free Zernike terms, the bead's position, an
 * amplitude and a background; its loss, gradient and Fisher information. */

#include "config.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "airy-error.h"
#include "airy-fit-private.h"
#include "airy-fit-kernels.h"
#include "airy-elements-private.h"
#include "airy-modality.h"

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
  _airy_backend_fit_free (model->backend, model->dev);
  g_clear_error (&model->dev_error);
  g_clear_pointer (&model->plan, _airy_plan_unref);
  g_free (model->indices);
  g_free (model->basis);
  g_free (model->lscale);
  g_free (model->dpos);
  g_free (model->dconst);
  g_free (model);
}

/* A phase mask holding Zernike terms (ANSI, waves, unit RMS). */
AiryElement *
_airy_fit_zernike_mask_new (const int *indices, const double *coefficients, guint n, GError **error)
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
AirySystem *
_airy_fit_system_insert_mask (AirySystem *system, AiryElement *mask, guint *chain_at)
{
  AirySystem *copy = airy_system_copy (system);
  GPtrArray *elements = airy_system_get_elements (copy);
  gboolean objective = _airy_modality_has_objective (_airy_modality_of (copy));
  guint at, i, enabled = 0;

  if (objective)
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
    *chain_at = objective ? 1 + enabled : enabled;
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
  g_autoptr(AiryElement) mask = NULL;

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  mask = _airy_fit_zernike_mask_new (indices, NULL, n_terms, error);
  if (mask == NULL)
    return NULL;
  return _airy_fit_model_new_for_mask (system, mask, win_h, win_w, threads, warnings, error);
}

/* The basis Z_j on the band, per wavelength: the one the mask's op carries
 * (its compile() made it over the mask's own pupil radius), folded into
 * the fused PSF with the mask's factor. */
static gboolean
basis_from_op (AiryFitModel *m, guint chain_at, GError **error)
{
  const AiryZernikeBasis *b = _airy_op_find_basis (m->op, chain_at);
  guint j, l, r, x;

  if (b == NULL || b->n_terms != m->K || b->n_lambda != m->NL || b->height != m->H || b->width != m->W)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the fit's Zernike mask did not reach the fused PSF as a basis of %u terms"), m->K);
      return FALSE;
    }
  m->basis = g_new0 (double, (gsize) MAX (m->K, 1) * m->NL * m->nband);
  for (l = 0; l < m->NL; l++)
    for (r = 0; r < m->rows; r++)
      for (x = 0; x < m->W; x++)
        for (j = 0; j < m->K; j++)
          m->basis[((gsize) j * m->NL + l) * m->nband + (gsize) r * m->W + x]
            = _airy_zernike_basis_at (b, j, l, m->y0 + r, x);
  return TRUE;
}

AiryFitModel *
_airy_fit_model_new_for_mask (AirySystem  *system,
                              AiryElement *mask,
                              guint        win_h,
                              guint        win_w,
                              guint        threads,
                              GPtrArray   *warnings,
                              GError     **error)
{
  g_autoptr(AiryFitModel) m = g_new0 (AiryFitModel, 1);
  g_autoptr(AirySystem) sys = NULL;
  AiryRunOptions options = { 0 };
  const AiryFusedPsf *psf;
  const double *zi;
  AiryElement *sensor;
  double lc;
  gsize n_terms, j;
  guint chain_at, l;

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  zi = airy_element_get_doubles (mask, "zernike-indices", &n_terms);
  if (_airy_modality_combines (_airy_modality_of (system), system))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: the fit models the PSF of one optical chain; %s combines several (fit its chain "
                     "in the psf modality)"), airy_system_get_modality (system));
      return NULL;
    }
  sys = _airy_fit_system_insert_mask (system, mask, &chain_at);
  if (_airy_modality_of (sys)->needs_sample)
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
  m->K = (guint) n_terms;
  m->indices = g_new (int, MAX (n_terms, 1));
  for (j = 0; j < n_terms; j++)
    m->indices[j] = (int) zi[j];
  m->lscale = g_new (double, m->NL);

  lc = m->plan->spectrum->wavelengths[0];
  for (l = 0; l < m->NL; l++)
    m->lscale[l] = lc / m->plan->spectrum->wavelengths[l];
  if (!basis_from_op (m, chain_at, error))
    return NULL;
  return g_steal_pointer (&m);
}

/* The window's columns, widened to the left until their first is as
 * aligned as X (FFTW's plans are made on aligned arrays): *c0, and the
 * count. */
static guint
window_columns (const AiryFitModel *m, fftwf_complex *X, guint *c0)
{
  guint c = m->win_x0;

  while (c > 0 && fftwf_alignment_of ((float *) (X + c)) != 0)
    c--;
  *c0 = c;
  return m->win_x0 + m->win_w - c;
}

/* The plain 2-D DFT of X (H × W) whose rows outside the pupil's band are
 * zero, exact on the window's columns: the row transforms of the band
 * only, then the window's columns (FFTW's pruning by hand: the other
 * columns are left half transformed, and nobody reads them; the full
 * transform where the band is not aligned as the plans want). */
static void
band_forward (const AiryFitModel *m, fftwf_complex *X)
{
  fftwf_complex *band = X + (gsize) m->y0 * m->W;
  guint c0, nc;

  if (fftwf_alignment_of ((float *) band) != 0 || fftwf_alignment_of ((float *) X) != 0)
    {
      _airy_fft_c2c_execute (m->H, m->W, AIRY_FFT_FORWARD, 1, X, X);
      return;
    }
  nc = window_columns (m, X, &c0);
  fftwf_execute_dft (_airy_fft_plan_many (m->W, m->rows, 1, m->W, TRUE, AIRY_FFT_FORWARD, 1), band, band);
  fftwf_execute_dft (_airy_fft_plan_many (m->H, nc, m->W, 1, TRUE, AIRY_FFT_FORWARD, 1), X + c0, X + c0);
}

/* The unnormalised backward DFT of X, which is zero off the window's
 * columns, exact on the band's rows only: the window's columns (the
 * others stay zero), then the band's rows (the other rows are left half
 * transformed: nobody reads them). */
static void
band_backward (const AiryFitModel *m, fftwf_complex *X)
{
  fftwf_complex *band = X + (gsize) m->y0 * m->W;
  guint c0, nc;

  if (fftwf_alignment_of ((float *) band) != 0 || fftwf_alignment_of ((float *) X) != 0)
    {
      _airy_fft_c2c_execute (m->H, m->W, AIRY_FFT_BACKWARD, 1, X, X);
      return;
    }
  nc = window_columns (m, X, &c0);
  fftwf_execute_dft (_airy_fft_plan_many (m->H, nc, m->W, 1, TRUE, AIRY_FFT_BACKWARD, 1), X + c0, X + c0);
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
      double mu = airy_fit_mu_floor (A * ws->inten[pix] + B);
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
 * compiler keeps them in registers); the voxel's formulas are the device's
 * (airy-fit-kernels.h). */
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
      double logB = B > 0 ? log (B) : 0.0;

      for (q = 0; q < win; q++)
        {
          loss += airy_fit_voxel_poisson (A * in[q], B, logB, dp[q], cst[q], &w[q]);
          gA += w[q] * in[q];
          gB += w[q];
        }
    }
  else
    {
      const float *d = c->data + (gsize) k * win;

      for (q = 0; q < win; q++)
        {
          loss += airy_fit_voxel_lsq (A * in[q] + B, d[q], c->inv_var, &w[q]);
          gA += w[q] * in[q];
          gB += w[q];
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
                M[(gsize) r * m->W + x] += airy_fit_adjoint_term (crealf (v), cimagf (v), crealf (u), cimagf (u));
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

gboolean
_airy_fit_model_set_device (AiryFitModel *m, AiryBackend *backend, guint device, GError **error)
{
  AiryFitShape shape = {
    .L = m->L, .height = m->H, .width = m->W, .y0 = m->y0, .rows = m->rows,
    .win_y0 = m->win_y0, .win_x0 = m->win_x0, .win_h = m->win_h, .win_w = m->win_w,
    .depth = m->depth, .scale = m->op->psf->scale, .G = m->op->psf->G,
  };
  gpointer dev = _airy_backend_fit_new (backend, device, &shape, error);

  if (dev == NULL)
    return FALSE;
  _airy_backend_fit_free (m->backend, m->dev);
  m->backend = backend;
  m->dev = dev;
  m->dev_data = NULL;
  g_clear_error (&m->dev_error);
  return TRUE;
}

gboolean
_airy_fit_model_check (AiryFitModel *m, GError **error)
{
  if (m->dev_error == NULL)
    return TRUE;
  g_propagate_error (error, g_error_copy (m->dev_error));
  return FALSE;
}

/* The planes run_chunks would run, as one pass on the model's device
 * (airy-backend-impl.h); after a failure there, the loss is NaN (and μ) and
 * _airy_fit_model_check tells why. */
static void
device_pass (AiryFitModel *m, Chunk *proto, Chunk *out)
{
  guint nv = (m->depth + m->stride - 1) / m->stride, i;
  gsize win = (gsize) m->win_h * m->win_w, q;
  g_autofree guint *k = g_new (guint, nv);
  g_autofree double *zt = g_new (double, nv);
  g_autofree float *mu = NULL;
  gboolean poisson = proto->poisson && proto->data != NULL;
  AiryFitPass pass = {
    .base = (const float *) proto->base, .n = nv, .k = k, .zt = zt,
    .A = proto->p[m->K + 3], .B = proto->p[m->K + 4],
    .has_data = proto->data != NULL, .poisson = poisson, .inv_var = proto->inv_var, .grad = proto->grad,
  };

  *out = *proto;
  out->loss = out->gA = out->gB = 0.0;
  out->M = proto->grad ? g_new0 (double, (gsize) m->L * m->nband) : NULL;
  for (i = 0; i < nv; i++)
    {
      k[i] = i * m->stride;
      zt[i] = m->z[k[i]] - proto->p[m->K + 2] + m->op->psf->z0;
    }
  if (proto->mu_out)
    pass.mu = m->stride == 1 ? proto->mu_out : (mu = g_new (float, nv * win));
  pass.M = out->M;
  if (m->dev_error == NULL && proto->data != NULL && (proto->data != m->dev_data || poisson != m->dev_poisson))
    {
      if (_airy_backend_fit_set_data (m->backend, m->dev, poisson ? m->dpos : NULL, poisson ? m->dconst : NULL,
                                      poisson ? NULL : proto->data, &m->dev_error))
        {
          m->dev_data = proto->data;
          m->dev_poisson = poisson;
        }
    }
  if (m->dev_error == NULL)
    _airy_backend_fit_pass (m->backend, m->dev, &pass, &m->dev_error);
  if (m->dev_error != NULL)
    {
      out->loss = NAN;
      if (proto->mu_out)
        for (i = 0; i < nv; i++)
          for (q = 0; q < win; q++)
            proto->mu_out[(gsize) k[i] * win + q] = NAN;
      return;
    }
  if (mu)
    for (i = 0; i < nv; i++)
      memcpy (proto->mu_out + (gsize) k[i] * win, mu + (gsize) i * win, win * sizeof (float));
  out->loss = pass.loss;
  out->gA = pass.dA;
  out->gB = pass.dB;
}

/* eval's and loss's passes: on the model's device, or the CPU's threads */
static void
model_pass (AiryFitModel *m, Chunk *proto, Chunk *out)
{
  if (m->dev != NULL)
    device_pass (m, proto, out);
  else
    run_chunks (m, proto, out);
}

void
_airy_fit_model_eval (AiryFitModel *m, const double *p, float *out)
{
  fftwf_complex *base = model_base (m, p);
  Chunk proto = { .m = m, .base = base, .p = p, .mu_out = out }, res;

  model_pass (m, &proto, &res);
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
  model_pass (m, &proto, &res);
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

/* |⟨P e^{2πiW}⟩|² / ⟨P⟩² over the pupil at the first wavelength, W the
 * terms' phase (waves); vectorial: Σ_c s_c |⟨P_c e^{2πiW}⟩|² / Σ_c s_c ⟨P_c⟩²
 * over its components */
double
_airy_fit_model_strehl (AiryFitModel *m, const double *coefficients)
{
  double num = 0, den = 0;
  gsize b;
  guint c, i;

  for (c = 0; c < m->C; c++)
    {
      const fftwf_complex *F = m->op->psf->F + (gsize) c * m->nband;
      double complex sum = 0;
      double sp = 0;

      for (b = 0; b < m->nband; b++)
        {
          double a = cabsf (F[b]), w = 0;
          for (i = 0; i < m->K; i++)
            w += coefficients[i] * m->basis[(gsize) i * m->NL * m->nband + b];
          sum += a * cexp (2.0 * AIRY_PI * I * w);
          sp += a;
        }
      num += m->op->psf->scale[c] * creal (sum * conj (sum));
      den += m->op->psf->scale[c] * sp * sp;
    }
  return den > 0 ? num / den : NAN;
}
