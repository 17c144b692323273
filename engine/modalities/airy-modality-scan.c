/* The scanning microscopes: confocal, two-photon and image scanning (ISM,
 * Airyscan). Each runs two psf chains (airy-modality-scan-setup.c), the
 * excitation E at λ_ex and the detection D at λ_em, both in the image
 * plane at one pixel du, each plane of power 1 (Σ·du² = 1, DESIGN §3), and
 * combines them plane by plane:
 *
 *   confocal    E · (D ⊛ P)      P the pinhole disk (its pixels' covered
 *                                fractions), so D ⊛ P·du² is the fraction
 *                                of the emitted light the pinhole passes
 *                                (→ 1 for a large pinhole, → D·area for a
 *                                small one)
 *   two-photon  E² (· (D ⊛ P) with a pinhole)
 *   ism         Σ_k PSF_k(r − s·c_k), PSF_k = E · (D ⊛ A_k), A_k the
 *               element (a square or a hexagon) at −c_k: each element's
 *               PSF moved back by s·c_k through its transform, which keeps
 *               its sum (pixel reassignment; s the reassignment factor,
 *               c_k the element's centre in the image plane)
 *
 * The convolutions are linear (zero padding), by FFT, one per plane; the
 * planes run in parallel. */
#define G_LOG_DOMAIN "airy-modality-scan"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-modality.h"
#include "airy-modality-scan-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"

/* ---- apertures in the image plane ---- */

typedef double (*CoverageFunc) (double y, double x, double du, gconstpointer data);

typedef struct { double radius; } Disk;
typedef struct { double cy, cx, side; } Cell;   /* a square's side, a hexagon's width across flats */

/* the fraction of the pixel at (y, x) inside the disk centred at 0 */
static double
disk_coverage (double y, double x, double du, gconstpointer data)
{
  const Disk *d = data;
  double r = hypot (y, x), half = du * G_SQRT2 / 2.0, sum = 0.0;
  const int n = 16;
  int i, j;

  if (r + half <= d->radius)
    return 1.0;
  if (r - half >= d->radius)
    return 0.0;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      {
        double yy = y + ((i + 0.5) / n - 0.5) * du, xx = x + ((j + 0.5) / n - 0.5) * du;

        sum += yy * yy + xx * xx <= d->radius * d->radius;
      }
  return sum / (n * n);
}

/* the overlap of [c − a/2, c + a/2] with the pixel [x − du/2, x + du/2] */
static double
overlap (double x, double du, double c, double a)
{
  double lo = MAX (x - du / 2.0, c - a / 2.0), hi = MIN (x + du / 2.0, c + a / 2.0);

  return hi > lo ? (hi - lo) / du : 0.0;
}

static double
square_coverage (double y, double x, double du, gconstpointer data)
{
  const Cell *s = data;

  return overlap (y, du, s->cy, s->side) * overlap (x, du, s->cx, s->side);
}

/* inside the hexagon of inradius r (flats facing ±x, corners at ±y) */
static gboolean
in_hexagon (double y, double x, double r)
{
  return fabs (x) <= r && fabs (x / 2.0 + y * AIRY_SCAN_SQRT3 / 2.0) <= r && fabs (-x / 2.0 + y * AIRY_SCAN_SQRT3 / 2.0) <= r;
}

static double
hexagon_coverage (double y, double x, double du, gconstpointer data)
{
  const Cell *h = data;
  double r = h->side / 2.0, dy = y - h->cy, dx = x - h->cx, d = hypot (dy, dx), half = du * G_SQRT2 / 2.0;
  const int n = 16;
  int i, j, sum = 0;

  if (d + half <= r)
    return 1.0;
  if (d - half >= 2.0 * r / AIRY_SCAN_SQRT3)
    return 0.0;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      sum += in_hexagon (dy + ((i + 0.5) / n - 0.5) * du, dx + ((j + 0.5) / n - 0.5) * du, r);
  return (double) sum / (n * n);
}

/* ---- convolution with an aperture, by FFT ---- */

/* Circular, on the PSF's own grid (its FFT made it periodic there), with
 * the aperture at its nearest offsets (a pinhole larger than the grid
 * passes every pixel once), and pruned: the detection's spectrum reaches
 * only |f| ≤ 2·NA/(λ·M) (the pupil's autocorrelation), so the columns
 * kx beyond it are neither transformed nor multiplied. */
typedef struct
{
  guint          h, w, wh, band;            /* band: the last column kx kept */
  fftwf_plan     row_r2c, row_c2r, cols_forward, cols_backward;
  float         *row;                       /* w */
  fftwf_complex *row_spec;                  /* w/2 + 1 */
  fftwf_complex *spec;                      /* h × (w/2 + 1): the loaded plane's transform */
  fftwf_complex *work;
} Convolver;

static void
convolver_free (Convolver *c)
{
  fftwf_free (c->row);
  fftwf_free (c->row_spec);
  fftwf_free (c->spec);
  fftwf_free (c->work);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Convolver, convolver_free)

/* cutoff: the highest spatial frequency (cycles/µm) of what is convolved */
static Convolver *
convolver_new (guint h, guint w, double du, double cutoff)
{
  Convolver *c = g_new0 (Convolver, 1);
  gsize nspec;

  c->h = h;
  c->w = w;
  c->wh = w / 2 + 1;
  /* one FFTW thread each: the planes run in parallel (each_plane) */
  c->band = (guint) MIN ((double) c->wh - 1, ceil (cutoff * w * du) + 2.0);
  nspec = (gsize) h * c->wh;
  c->row_r2c = _airy_fft_plan_r2c_1d (w, 1);
  c->row_c2r = _airy_fft_plan_c2r_1d (w, 1);
  c->cols_forward = _airy_fft_plan_many (h, c->band + 1, c->wh, 1, TRUE, AIRY_FFT_FORWARD, 1);
  c->cols_backward = _airy_fft_plan_many (h, c->band + 1, c->wh, 1, TRUE, AIRY_FFT_BACKWARD, 1);
  c->row = fftwf_alloc_real (w);
  c->row_spec = fftwf_alloc_complex (c->wh);
  c->spec = fftwf_alloc_complex (nspec);
  c->work = fftwf_alloc_complex (nspec);
  memset (c->spec, 0, nspec * sizeof (fftwf_complex));
  memset (c->work, 0, nspec * sizeof (fftwf_complex));
  return c;
}

/* the band columns of plane's transform into c->spec */
static void
convolver_load (Convolver *c, const float *plane)
{
  guint y;

  for (y = 0; y < c->h; y++)
    {
      memcpy (c->row, plane + (gsize) y * c->w, c->w * sizeof (float));
      fftwf_execute_dft_r2c (c->row_r2c, c->row, c->row_spec);
      memcpy (c->spec + (gsize) y * c->wh, c->row_spec, (c->band + 1) * sizeof (fftwf_complex));
    }
  fftwf_execute_dft (c->cols_forward, c->spec, c->spec);
}

/* The transform of an aperture (pixel weights at the nearest offsets),
 * scaled by du²/(h·w) so that a product with a plane's transform gives
 * Σ_q I[q]·A[r − q]·du². area: the aperture's exact area (µm²), to which
 * the weights are brought when the grid cuts none of it (reach: its
 * farthest point, µm). */
static fftwf_complex *
convolver_aperture (Convolver *c, double du, CoverageFunc coverage, gconstpointer data, double reach, double area)
{
  gsize nspec = (gsize) c->h * c->wh, i;
  g_autofree float *kernel = g_new0 (float, (gsize) c->h * c->w);
  fftwf_complex *hat = fftwf_alloc_complex (nspec);
  gboolean cut = reach > MIN (c->h / 2, c->w / 2) * du;
  double sum = 0.0, scale;
  guint y, x;

  for (y = 0; y < c->h; y++)
    for (x = 0; x < c->w; x++)
      {
        double oy = y <= c->h / 2 ? (double) y : (double) y - c->h, ox = x <= c->w / 2 ? (double) x : (double) x - c->w;
        double v = coverage (oy * du, ox * du, du, data);

        kernel[(gsize) y * c->w + x] = (float) v;
        sum += v;
      }
  if (sum <= 0.0)
    {
      /* narrower than the supersampling: its area at the centre */
      kernel[0] = 1.0f;
      sum = 1.0;
    }
  scale = du * du / ((double) c->h * c->w);
  if (!cut && area > 0.0)
    scale *= area / (du * du) / sum;
  convolver_load (c, kernel);
  for (i = 0; i < nspec; i++)
    hat[i] = c->spec[i] * (float) scale;
  return hat;
}

/* out = the loaded plane ⊛ the aperture */
static void
convolver_apply (Convolver *c, const fftwf_complex *hat, float *out)
{
  guint y, k;

  for (y = 0; y < c->h; y++)
    for (k = 0; k <= c->band; k++)
      c->work[(gsize) y * c->wh + k] = c->spec[(gsize) y * c->wh + k] * hat[(gsize) y * c->wh + k];
  fftwf_execute_dft (c->cols_backward, c->work, c->work);
  for (y = 0; y < c->h; y++)
    {
      memcpy (c->row_spec, c->work + (gsize) y * c->wh, (c->band + 1) * sizeof (fftwf_complex));
      memset (c->row_spec + c->band + 1, 0, (c->wh - c->band - 1) * sizeof (fftwf_complex));
      fftwf_execute_dft_c2r (c->row_c2r, c->row_spec, c->row);
      memcpy (out + (gsize) y * c->w, c->row, c->w * sizeof (float));
    }
}

/* ---- planes in parallel, each thread with its own convolver ---- */

typedef struct
{
  guint    depth;
  gint     next;              /* the next plane, atomic */
  guint    h, w;
  double   du, cutoff;        /* the convolvers' grid and band */
  void   (*plane) (gpointer job, Convolver *c, guint z);
  gpointer job;
  GCancellable *cancellable;  /* checked before each plane */
} Planes;

static gpointer
planes_worker (gpointer data)
{
  Planes *p = data;
  g_autoptr(Convolver) c = convolver_new (p->h, p->w, p->du, p->cutoff);
  gint z;

  while ((z = g_atomic_int_add (&p->next, 1)) < (gint) p->depth && !g_cancellable_is_cancelled (p->cancellable))
    p->plane (p->job, c, (guint) z);
  return NULL;
}

static gboolean
each_plane (Planes *p, GError **error)
{
  guint n = MIN (MAX (1, g_get_num_processors ()), p->depth), t;
  g_autofree GThread **threads = g_new0 (GThread *, n);

  for (t = 1; t < n; t++)
    threads[t] = g_thread_new ("airy-scan", planes_worker, p);
  planes_worker (p);
  for (t = 1; t < n; t++)
    g_thread_join (threads[t]);
  return !g_cancellable_set_error_if_cancelled (p->cancellable, error);
}

/* ---- the combinations ---- */

/* the detection's highest frequency in the image plane, 2·NA/(λ·M) at
 * its shortest wavelength: 1 AU is 1.22·λ_em·M/NA */
static double
detection_cutoff (const AiryScanSetup *s)
{
  return 2.0 * 1.22 / s->au * s->lambda_em / s->lambda_min;
}

static gboolean
same_pixel (AiryStack *e, AiryStack *d, GError **error)
{
  if (fabs (e->dx - d->dx) <= 1e-6 * d->dx && fabs (e->dy - d->dy) <= 1e-6 * d->dy)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("modality: the excitation's pixel (%.6g µm) is not the detection's (%.6g µm)"), e->dx, d->dx);
  return FALSE;
}

/* a copy of stack as the channel name (with metadata's wavelengths) */
static void
add_channel (GPtrArray *channels, AiryStack *stack, AiryStack *metadata, const char *name)
{
  AiryStack *copy = airy_stack_copy (stack);

  if (metadata)
    airy_stack_set_provenance (copy, metadata->n_wavelengths, metadata->wavelengths, metadata->weights, NULL);
  airy_stack_set_channel_name (copy, name);
  g_ptr_array_add (channels, copy);
}

typedef struct
{
  fftwf_complex *hat;
  AiryStack     *det;
} PinholeJob;

static void
pinhole_plane (gpointer data, Convolver *c, guint z)
{
  PinholeJob *job = data;

  convolver_load (c, airy_stack_plane (job->det, z));
  convolver_apply (c, job->hat, airy_stack_plane (job->det, z));
}

/* confocal and two-photon: E^photons · (D ⊛ pinhole) */
static gboolean
combine_pinhole (const AiryScanSetup *s, AiryStack *ex, AiryStack *det, GPtrArray *channels, GCancellable *cancellable,
                 GError **error)
{
  gsize plane = airy_stack_plane_size (ex), i, n = plane * ex->depth;

  /* the channels: the excitation's intensity, the detection term, the
   * effective PSF */
  if (channels)
    /* TRANSLATORS: a channel of a modality's result (the viewer's channel chooser, the TIFF's labels) */
    add_channel (channels, ex, NULL, _("excitation"));
  if (s->photons == 2)
    for (i = 0; i < n; i++)
      ex->data[i] *= ex->data[i];
  if (det == NULL || s->pinhole <= 0.0)
    {
      if (channels)
        /* TRANSLATORS: a channel: the modality's PSF, its result */
        add_channel (channels, ex, NULL, _("effective"));
      return TRUE;
    }
  {
    double radius = s->pinhole * s->au / 2.0;
    Disk disk = { radius };
    g_autoptr(Convolver) c = convolver_new (ex->height, ex->width, ex->dx, detection_cutoff (s));
    PinholeJob job = { convolver_aperture (c, ex->dx, disk_coverage, &disk, radius, G_PI * radius * radius), det };
    Planes planes = { det->depth, 0, det->height, det->width, det->dx, detection_cutoff (s), pinhole_plane, &job,
                      cancellable };
    gboolean done = each_plane (&planes, error);

    fftwf_free (job.hat);
    if (!done)
      return FALSE;
  }
  if (channels)
    /* TRANSLATORS: a channel of a modality's result */
    add_channel (channels, det, NULL, _("detection"));
  for (i = 0; i < n; i++)
    ex->data[i] *= det->data[i];
  if (channels)
    add_channel (channels, ex, det, _("effective"));
  return TRUE;
}

/* out = plane moved by (sy, sx) µm: out(r) = plane(r − s), by the phase of
 * its transform (the PSF's own periodic grid) */
static void
shift_plane (const fftwf_complex *spec, guint h, guint w, double du, double sy, double sx, fftwf_complex *work,
             fftwf_plan c2r, float *out)
{
  guint wh = w / 2 + 1, y, x;

  for (y = 0; y < h; y++)
    {
      double fy = (y < (h + 1) / 2 ? (double) y : (double) y - h) / (h * du);

      for (x = 0; x < wh; x++)
        {
          double fx = (double) x / (w * du), phase = -2.0 * G_PI * (fy * sy + fx * sx);
          gsize i = (gsize) y * wh + x;

          work[i] = spec[i] * ((float) cos (phase) + I * (float) sin (phase)) / (float) ((double) h * w);
        }
    }
  fftwf_execute_dft_c2r (c2r, work, out);
}

typedef struct
{
  const AiryScanSetup *s;
  GPtrArray           *hats;      /* element k's aperture, at −c_k */
  AiryStack           *ex, *det;
  AiryStack          **elements;  /* with channels: each element's PSF */
  fftwf_plan           r2c, c2r;  /* of a plane */
} ArrayJob;

/* plane z: each element's PSF E·(D ⊛ A at −c_k), moved back by s·c_k
 * through its transform (its sum, the element's light, stays), summed */
static void
array_plane (gpointer data, Convolver *c, guint z)
{
  ArrayJob *job = data;
  const AiryScanSetup *s = job->s;
  guint h = job->ex->height, w = job->ex->width, k;
  gsize plane = (gsize) h * w, i, nspec = (gsize) h * (w / 2 + 1);
  fftwf_complex *spec = fftwf_alloc_complex (nspec), *work = fftwf_alloc_complex (nspec);
  float *product = fftwf_alloc_real (plane), *moved = fftwf_alloc_real (plane);
  g_autofree float *total = g_new0 (float, plane);
  float *e = airy_stack_plane (job->ex, z);

  convolver_load (c, airy_stack_plane (job->det, z));
  for (k = 0; k < job->hats->len; k++)
    {
      convolver_apply (c, g_ptr_array_index (job->hats, k), product);
      for (i = 0; i < plane; i++)
        product[i] *= e[i];
      if (job->elements)
        memcpy (airy_stack_plane (job->elements[k], z), product, plane * sizeof (float));
      fftwf_execute_dft_r2c (job->r2c, product, spec);
      shift_plane (spec, h, w, job->ex->dx, s->reassignment * s->cy[k], s->reassignment * s->cx[k], work, job->c2r,
                   moved);
      for (i = 0; i < plane; i++)
        total[i] += moved[i];
    }
  memcpy (e, total, plane * sizeof (float));
  fftwf_free (spec);
  fftwf_free (work);
  fftwf_free (product);
  fftwf_free (moved);
}

/* ism: the reassigned sum into ex; the elements' PSFs as channels */
static gboolean
combine_array (const AiryScanSetup *s, AiryStack *ex, AiryStack *det, GPtrArray *channels, GCancellable *cancellable,
               GError **error)
{
  guint h = ex->height, w = ex->width, n_el = s->n_elements, k;
  double du = ex->dx, side = s->element * s->au, reach = 0.0;
  g_autoptr(Convolver) c = NULL;
  g_autoptr(GPtrArray) hats = g_ptr_array_new_with_free_func (fftwf_free);
  g_autofree AiryStack **elements = channels ? g_new0 (AiryStack *, n_el) : NULL;
  ArrayJob job = { s, hats, ex, det, elements, _airy_fft_plan_r2c (h, w, 1), _airy_fft_plan_c2r (h, w, 1) };
  Planes planes = { ex->depth, 0, h, w, du, detection_cutoff (s), array_plane, &job, cancellable };

  for (k = 0; k < n_el; k++)
    reach = MAX (reach, (MAX (fabs (s->cy[k]), fabs (s->cx[k])) + side) * G_SQRT2);
  c = convolver_new (h, w, du, detection_cutoff (s));
  for (k = 0; k < n_el; k++)
    {
      /* element k at −c_k (module docs) */
      Cell el = { -s->cy[k], -s->cx[k], side };

      if (s->hexagonal)
        g_ptr_array_add (hats, convolver_aperture (c, du, hexagon_coverage, &el, reach,
                                                   AIRY_SCAN_SQRT3 / 2.0 * side * side));
      else
        g_ptr_array_add (hats, convolver_aperture (c, du, square_coverage, &el, reach, side * side));
      if (elements)
        elements[k] = airy_stack_copy (det);
    }
  if (!each_plane (&planes, error))
    {
      for (k = 0; elements && k < n_el; k++)
        airy_stack_free (elements[k]);
      return FALSE;
    }
  for (k = 0; elements && k < n_el; k++)
    {
      /* TRANSLATORS: a channel of ISM's result: one detector element's PSF */
      g_autofree char *name = g_strdup_printf (_("element %u"), k + 1);

      airy_stack_set_channel_name (elements[k], name);
      g_ptr_array_add (channels, elements[k]);
    }
  if (channels)
    /* TRANSLATORS: a channel of ISM's result: the pixel-reassigned sum of the elements */
    add_channel (channels, ex, det, _("reassigned sum"));
  return TRUE;
}

static gboolean
scan_combine (AirySystem   *system,
              AiryStack   **stacks,
              guint         n,
              GPtrArray    *channels,
              GPtrArray    *warnings,
              GCancellable *cancellable,
              GError      **error)
{
  AiryScanSetup s;
  AiryStack *det = n > 1 ? stacks[1] : NULL;

  if (!_airy_scan_setup (system, &s, warnings, error) || (det && !same_pixel (stacks[0], det, error)))
    return FALSE;
  if (s.n_elements > 0)
    return combine_array (&s, stacks[0], det, channels, cancellable, error);
  return combine_pinhole (&s, stacks[0], det, channels, cancellable, error);
}

/* the excitation and detection chains; with channels the excitation, the
 * detection term and the effective PSF (two-photon without a pinhole:
 * the excitation and the effective), ism's elements and their sum */
static guint
scan_result_stacks (AirySystem *system, gboolean channels)
{
  AiryScanSetup s = { 0 };
  guint chains = _airy_scan_n_chains (system);

  if (!channels)
    return chains;
  if (_airy_scan_setup (system, &s, NULL, NULL) && s.n_elements > 0)
    return chains + s.n_elements + 1;
  return chains + (chains > 1 ? 3 : 2);
}

const AiryModality _airy_modality_confocal = {
  .name = "confocal",
  .label = N_("Confocal"),
  .description = ("Confocal: the excitation PSF at the excitation wavelength times the detection PSF convolved "
                  "with the pinhole"),
  .combine = AIRY_MODALITY_COMBINE_PRODUCT,
  .n_chains = _airy_scan_n_chains,
  .chain_system = _airy_scan_chain_system,
  .chain = _airy_scan_chain,
  .schema_note = "a psf chain ending in an ff-lens, with an \"excitation\" and a \"pinhole\" in elements; "
                 "E · (D ⊛ pinhole)",
  .combine_stacks = scan_combine,
  .result_stacks = scan_result_stacks,
  .parts = (const char *const[]) { "{\"type\": \"excitation\", \"wavelength\": 0.488}",
                                   "{\"type\": \"pinhole\", \"diameter\": 1.0}", NULL },
};

const AiryModality _airy_modality_two_photon = {
  .name = "two-photon",
  .label = N_("Two-photon"),
  .description = ("Two-photon: the squared excitation PSF (times the detection PSF convolved with a pinhole, "
                  "when one is given)"),
  .combine = AIRY_MODALITY_COMBINE_PRODUCT,
  .n_chains = _airy_scan_n_chains,
  .chain_system = _airy_scan_chain_system,
  .chain = _airy_scan_chain,
  .schema_note = "a psf chain ending in an ff-lens, with an \"excitation\" in elements; E², open detector "
                 "unless a \"pinhole\" is given",
  .combine_stacks = scan_combine,
  .result_stacks = scan_result_stacks,
  .parts = (const char *const[]) { "{\"type\": \"excitation\", \"wavelength\": 0.92}", NULL },
};

const AiryModality _airy_modality_ism = {
  .name = "ism",
  .label = N_("Image scanning (Airyscan)"),
  .description = ("Image scanning: a detector array in the pinhole plane, each element's PSF moved back by the "
                  "reassignment factor and summed"),
  .combine = AIRY_MODALITY_COMBINE_PRODUCT,
  .n_chains = _airy_scan_n_chains,
  .chain_system = _airy_scan_chain_system,
  .chain = _airy_scan_chain,
  .schema_note = "a psf chain ending in an ff-lens, with an \"excitation\" and a \"detector-array\" in "
                 "elements; Σ_k (E·(D ⊛ element k))(r − s·c_k)",
  .combine_stacks = scan_combine,
  .result_stacks = scan_result_stacks,
  .parts = (const char *const[]) { "{\"type\": \"excitation\", \"wavelength\": 0.488}",
                                   "{\"type\": \"detector-array\", \"size\": 5, \"element-size\": 0.25}", NULL },
};
