/* light-sheet: the detection PSF times the illumination's intensity,
 *
 *   h_eff (x, y, z) = h_det (x, y, z) · I_ill (s, t [, y]),
 *
 * the sheet propagating along s = x·cos θ + (z − o)·sin θ with its normal
 * t = −x·sin θ + (z − o)·cos θ (tilt θ about y, offset o along the
 * detection axis z). The illumination is computed by angular-spectrum
 * quadrature in the medium n at the illumination wavelength λ (k = 2πn/λ,
 * evanescent waves left out), not from the beam formulas:
 *   gaussian: a cylindrical (1-D) Gaussian beam, its waist field
 *     exp(−t²/w0²) with w0 = λ/(π·NA) (the 1/e² intensity radius for a
 *     1/e² divergence half-angle θ0 = NA/n in the medium); its Rayleigh
 *     range is z_R = π·n·w0²/λ. E(s, t) = ∫ exp(−κ²w0²/4) e^{iκt + i√(k²−κ²)s} dκ.
 *     Scanned, a round Gaussian beam swept along y gives the same sheet.
 *   bessel: a round beam from an annulus of NA·annulus … NA in the back
 *     focal plane (an axicon's ring), E(ρ, s) = ∫ J0(κρ) e^{i√(k²−κ²)s} κ dκ,
 *     ρ = √(y² + t²); its central lobe's first zero is 2.405/(k sin α).
 *     Scanned along y: the sheet ∫ I(√(y² + t²), s) dy.
 * The detection PSF is the system's source and elements (the light-sheet
 * element left out) as a psf system. The result is the effective PSF;
 * asked for channels (spectrum.channels, --channels) it has three: the
 * effective PSF, the detection PSF and the illumination (peak 1 at the
 * waist's centre). */
#define G_LOG_DOMAIN "airy-modality-light-sheet"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <complex.h>
#include <math.h>

#include "airy-modality.h"
#include "airy-error.h"
#include "airy-elements-private.h"

typedef struct
{
  int      profile;      /* AiryLightSheetProfile */
  gboolean scanned;
  double   wavelength, na, n, annulus, offset, tilt;
} AiryLightSheet;

#define N_KAPPA 400
#define N_RHO 2048
#define N_S 129

/* |E|² on a table over s (n_s rows from s0 by ds) and ρ or |t| (N_RHO
 * columns from 0 by dr), normalised to 1 at (0, 0). */
typedef struct
{
  double s0, ds, dr;
  guint  n_s;
  float *table;
} SheetTable;

/* The quadrature: the field at (s, r) is Σ_j M[r][j]·a_j(s) over N_KAPPA + 1
 * transverse wave numbers κ_j (trapezoid weights), a_j(s) = w_j·e^{iβ_j s}
 * with β_j = √(k² − κ_j²), and M the transverse factor: A(κ)·e^{iκt} of
 * the Gaussian (A = exp(−κ²w0²/4)), κ·J0(κρ) of the annulus. */
typedef struct
{
  double          kappa[N_KAPPA + 1];
  double          beta[N_KAPPA + 1];
  double          weight[N_KAPPA + 1];
  double complex *m;   /* [N_RHO][N_KAPPA + 1] */
} Quadrature;

static void
quadrature_init (Quadrature *q, const AiryLightSheet *p, double dr)
{
  double k = 2.0 * G_PI * p->n / p->wavelength, w0 = p->wavelength / (G_PI * p->na);
  double lo, hi, dk;
  guint i, j;

  if (p->profile == AIRY_LIGHT_SHEET_GAUSSIAN)
    {
      hi = MIN (k, 14.0 / w0);
      lo = -hi;
    }
  else
    {
      hi = 2.0 * G_PI * p->na / p->wavelength;
      lo = hi * p->annulus;
    }
  dk = (hi - lo) / N_KAPPA;
  for (j = 0; j <= N_KAPPA; j++)
    {
      q->kappa[j] = lo + j * dk;
      q->beta[j] = sqrt (MAX (k * k - q->kappa[j] * q->kappa[j], 0.0));
      q->weight[j] = (j == 0 || j == N_KAPPA) ? 0.5 * dk : dk;
    }
  q->m = g_new (double complex, (gsize) N_RHO * (N_KAPPA + 1));
  for (i = 0; i < N_RHO; i++)
    for (j = 0; j <= N_KAPPA; j++)
      {
        double r = i * dr, kappa = q->kappa[j];

        q->m[(gsize) i * (N_KAPPA + 1) + j] = p->profile == AIRY_LIGHT_SHEET_GAUSSIAN
                                                ? exp (-kappa * kappa * w0 * w0 / 4.0) * cexp (I * kappa * r)
                                                : kappa * j0 (kappa * r);
      }
}

static void
table_fill (SheetTable *t, const AiryLightSheet *p, double s_min, double s_max, double r_max, double pixel)
{
  g_autofree double complex *a = g_new (double complex, N_KAPPA + 1);
  Quadrature q;
  double norm = 0.0;
  guint i, r, j;

  t->n_s = s_max > s_min ? N_S : 1;
  t->s0 = s_min;
  t->ds = t->n_s > 1 ? (s_max - s_min) / (t->n_s - 1) : 1.0;
  t->dr = MAX (r_max, pixel) / (N_RHO - 2);
  t->table = g_new (float, (gsize) t->n_s * N_RHO);
  quadrature_init (&q, p, t->dr);
  /* |E (0, 0)|² */
  {
    double complex e0 = 0.0;

    for (j = 0; j <= N_KAPPA; j++)
      e0 += q.weight[j] * q.m[j];
    norm = cabs (e0) > 0.0 ? 1.0 / (cabs (e0) * cabs (e0)) : 0.0;
  }
  for (i = 0; i < t->n_s; i++)
    {
      double s = t->s0 + i * t->ds;

      for (j = 0; j <= N_KAPPA; j++)
        a[j] = q.weight[j] * cexp (I * q.beta[j] * s);
      for (r = 0; r < N_RHO; r++)
        {
          const double complex *m = q.m + (gsize) r * (N_KAPPA + 1);
          double complex e = 0.0;

          for (j = 0; j <= N_KAPPA; j++)
            e += m[j] * a[j];
          t->table[(gsize) i * N_RHO + r] = (float) (norm * (creal (e) * creal (e) + cimag (e) * cimag (e)));
        }
    }
  g_free (q.m);
}

/* bilinear in (s, r) */
static double
table_at (const SheetTable *t, double s, double r)
{
  double fs = t->n_s > 1 ? CLAMP ((s - t->s0) / t->ds, 0.0, t->n_s - 1.000001) : 0.0;
  double fr = CLAMP (fabs (r) / t->dr, 0.0, N_RHO - 1.000001);
  guint i = (guint) fs, j = (guint) fr;
  const float *a = t->table + (gsize) i * N_RHO + j;
  const float *b = t->n_s > 1 ? a + N_RHO : a;
  double u = fs - i, v = fr - j;

  return (1 - u) * ((1 - v) * a[0] + v * a[1]) + u * ((1 - v) * b[0] + v * b[1]);
}

/* the scanned Bessel sheet: ∫ I(√(y² + t²), s) dy / ∫ I(|y|, 0) dy on the
 * table's ρ grid, over the table's range */
static double
scanned_at (const SheetTable *t, double s, double r, double norm)
{
  double r_end = (N_RHO - 2) * t->dr, sum = 0.0;
  guint k;

  for (k = 0; k < N_RHO / 4; k++)
    {
      double y = k * t->dr * 4.0;

      if (y * y + r * r > r_end * r_end)
        break;
      sum += (k == 0 ? 1.0 : 2.0) * table_at (t, s, sqrt (y * y + r * r));
    }
  return sum / norm;
}

/* The illumination on the detection stack's voxels. */
static AiryStack *
light_sheet_illumination (const AiryLightSheet *p, const AiryStack *grid)
{
  AiryStack *out = airy_stack_copy (grid);
  double c = cos (p->tilt), sn = sin (p->tilt), s_min = G_MAXDOUBLE, s_max = -G_MAXDOUBLE, r_max = 0.0;
  double x_half = grid->width / 2 * grid->dx, y_half = grid->height / 2 * grid->dy, norm = 1.0;
  gboolean round = p->profile == AIRY_LIGHT_SHEET_BESSEL && !p->scanned;
  SheetTable t;
  guint k, y, x;

  for (k = 0; k < grid->depth; k++)
    {
      double z = airy_stack_get_z (grid, k) - p->offset;
      int e;

      for (e = -1; e <= 1; e += 2)
        {
          double xe = e * x_half;

          s_min = MIN (s_min, xe * c + z * sn);
          s_max = MAX (s_max, xe * c + z * sn);
          r_max = MAX (r_max, fabs (-xe * sn + z * c));
        }
    }
  if (p->profile == AIRY_LIGHT_SHEET_BESSEL)
    r_max = sqrt (r_max * r_max + y_half * y_half);
  table_fill (&t, p, s_min, s_max, r_max, MIN (grid->dx, grid->dy));
  if (p->scanned && p->profile == AIRY_LIGHT_SHEET_BESSEL)
    norm = scanned_at (&t, 0.0, 0.0, 1.0);
  for (k = 0; k < grid->depth; k++)
    {
      double z = airy_stack_get_z (grid, k) - p->offset;
      float *plane = airy_stack_plane (out, k);

      for (x = 0; x < grid->width; x++)
        {
          double xx = airy_grid_coord (x, grid->width, grid->dx);
          double s = xx * c + z * sn, r = -xx * sn + z * c;

          if (round)
            for (y = 0; y < grid->height; y++)
              {
                double yy = airy_grid_coord (y, grid->height, grid->dy);

                plane[(gsize) y * grid->width + x] = (float) table_at (&t, s, sqrt (r * r + yy * yy));
              }
          else
            {
              /* a sheet: the same along y */
              float v = (float) (p->profile == AIRY_LIGHT_SHEET_BESSEL ? scanned_at (&t, s, r, norm)
                                                                        : table_at (&t, s, r));

              for (y = 0; y < grid->height; y++)
                plane[(gsize) y * grid->width + x] = v;
            }
        }
    }
  g_free (t.table);
  return out;
}

static gboolean
sheet_read (AirySystem *system, AiryLightSheet *p, int *at, GError **error)
{
  AiryElement *e;

  *at = _airy_modality_find_element (system, "light-sheet");
  if (*at < 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: light-sheet needs a \"light-sheet\" element (the illumination)"));
      return FALSE;
    }
  e = g_ptr_array_index (airy_system_get_elements (system), *at);
  p->profile = airy_element_get_enum (e, "profile");
  p->scanned = airy_element_get_boolean (e, "scanned");
  p->wavelength = airy_element_get_double (e, "wavelength");
  p->na = airy_element_get_double (e, "na");
  p->n = airy_element_get_double (e, "n");
  p->annulus = airy_element_get_double (e, "annulus");
  p->offset = airy_element_get_double (e, "offset");
  p->tilt = airy_element_get_double (e, "tilt");
  return _airy_modality_check_na (*at, p->na, p->n, error);
}

/* the detection chain as a psf system; at: the light-sheet element */
static AirySystem *
detection_system (AirySystem *system, AiryLightSheet *p, GError **error)
{
  AirySystem *sub = airy_system_copy (system);
  int at;

  if (!sheet_read (sub, p, &at, error))
    {
      g_object_unref (sub);
      return NULL;
    }
  g_ptr_array_remove_index (airy_system_get_elements (sub), at);
  airy_system_set_modality (sub, "psf");
  return sub;
}

/* The geometry: the detection chain (the result's shape). */
static gboolean
light_sheet_chain (AiryGeometry *geom, GError **error)
{
  AiryLightSheet p;
  int at;

  if (!sheet_read (geom->system, &p, &at, error))
    return FALSE;
  g_ptr_array_remove_index (airy_system_get_elements (geom->system), at);
  return _airy_modality_psf_chain (geom, error);
}

static AiryResult *
light_sheet_run (AirySystem *system, AiryModalityRunFunc run_chain, const AiryRunOptions *options,
                 AiryProgressFunc progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  AiryRunOptions opts = _airy_modality_chain_options (options);
  AiryLightSheet p;
  g_autoptr(AirySystem) det_sys = detection_system (system, &p, error);
  g_autoptr(AiryResult) det = NULL;
  AiryStack **channels, *illumination;
  gsize i, n;

  if (det_sys == NULL || (det = run_chain (det_sys, &opts, progress, user_data, cancellable, error)) == NULL)
    return NULL;
  if (det->stack_is_part && det->ranks > 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: light-sheet combines the whole stack; run it in one process"));
      return NULL;
    }
  illumination = light_sheet_illumination (&p, det->stack);
  if (!(options && options->per_wavelength))
    {
      n = (gsize) det->stack->depth * det->stack->height * det->stack->width;
      for (i = 0; i < n; i++)
        det->stack->data[i] *= illumination->data[i];
      airy_stack_free (illumination);
      return _airy_modality_result_new (det, NULL, NULL, g_steal_pointer (&det->stack), NULL, 0, options);
    }
  /* with channels (spectrum.channels, --channels): effective, detection,
   * illumination */
  channels = g_new0 (AiryStack *, 3);
  channels[2] = illumination;
  channels[0] = airy_stack_copy (det->stack);
  n = (gsize) det->stack->depth * det->stack->height * det->stack->width;
  for (i = 0; i < n; i++)
    channels[0]->data[i] *= channels[2]->data[i];
  channels[1] = g_steal_pointer (&det->stack);
  airy_stack_set_channel_name (channels[0], _("effective"));
  airy_stack_set_channel_name (channels[1], _("detection"));
  /* TRANSLATORS: a channel of the light sheet's result: the sheet's intensity */
  airy_stack_set_channel_name (channels[2], _("illumination"));
  return _airy_modality_result_new (det, NULL, NULL, airy_stack_copy (channels[0]), channels, 3, options);
}

const AiryModality _airy_modality_light_sheet = {
  .name = "light-sheet",
  .label = N_("Light sheet"),
  .description = ("Light-sheet: the detection PSF times the intensity of a Gaussian or Bessel illumination sheet "
                  "along the detection axis"),
  .needs_microscope = FALSE,
  .combine = AIRY_MODALITY_COMBINE_ONE,
  .chain = light_sheet_chain,
  .schema_note = "a source first, then the elements with one light-sheet; h_det · I_sheet",
  .parts = (const char *const[]) { "{\"type\": \"light-sheet\"}", NULL },
  .run = light_sheet_run,
  .result_stacks = _airy_modality_pair_stacks,
};
