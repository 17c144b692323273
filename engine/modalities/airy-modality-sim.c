/* sim: the raw images of structured-illumination microscopy. The zeroth
 * and the ±1 orders of a grating interfere in the sample plane,
 *
 *   E = a0 + e^{i(κu + φ)} + e^{−i(κu + φ)} = a0 + 2 cos (κu + φ),
 *   I = a0² + 2 + 4·a0·cos (κu + φ) + 2·cos (2κu + 2φ),
 *
 * u = x cos α + y sin α along the orientation α, κ = 2π·NA/λ the ±1
 * orders' lateral wave number (NA = n sin θ of the orders, λ the
 * illumination's vacuum wavelength): fringes at NA/λ (zeroth with ±1) and
 * at the pattern frequency 2·NA/λ (±1 with each other; a0 = 0 leaves only
 * these, two-beam SIM). Each raw image is Σ_z (S_z · P) ⊛ h_z, the widefield
 * detection of the imaging modality (its PSF stack and its CONVOLVE op's
 * definition) with the sample S multiplied by the pattern P = I/((a0² + 2)·
 * n_phases), whose phases φ = 2πp/n_phases sum to 1: the raw images of one
 * angle add up to the widefield image. The pattern is the same in every
 * plane (2-D SIM: the orders' axial walk-off is left out). The result is
 * the raw stack, phases fastest, then angles (ImageJ's slices × frames). */
#define G_LOG_DOMAIN "airy-modality-sim"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-modality.h"
#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-image-file.h"
#include "airy-ops-private.h"

typedef struct
{
  double lambda, na, angle, zeroth;
  int    angles, phases;
} SimParams;

static gboolean
sim_read (AirySystem *system, SimParams *p, int *at, GError **error)
{
  AiryElement *e, *objective = airy_system_get_objective (system), *sensor = airy_system_get_sensor (system);
  double n;

  *at = _airy_modality_find_element (system, "sim-illumination");
  if (*at < 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: sim needs a \"sim-illumination\" element (the pattern)"));
      return FALSE;
    }
  e = g_ptr_array_index (airy_system_get_elements (system), *at);
  p->lambda = airy_element_get_double (e, "wavelength");
  p->na = airy_element_get_double (e, "na");
  p->angle = airy_element_get_double (e, "angle");
  p->zeroth = airy_element_get_double (e, "zeroth");
  p->angles = airy_element_get_int (e, "angles");
  p->phases = airy_element_get_int (e, "phases");
  n = objective ? airy_element_get_double (objective, "n") : 1.0;
  if (!_airy_modality_check_na (*at, p->na, n, error))
    return FALSE;
  if (sensor && (airy_element_get_enum (sensor, "resample") != AIRY_RESAMPLE_NONE
                 || airy_element_get_enum (sensor, "noise") != AIRY_NOISE_NONE))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sensor: sim writes the raw images as the optics make them: no resampling or noise"));
      return FALSE;
    }
  return TRUE;
}

/* The geometry: the widefield microscope's. */
static gboolean
sim_chain (AiryGeometry *geom, GError **error)
{
  SimParams p;
  int at;

  if (!sim_read (geom->system, &p, &at, error))
    return FALSE;
  g_ptr_array_remove_index (airy_system_get_elements (geom->system), at);
  return _airy_modality_imaging.chain (geom, error);
}

/* P at (x, y) for orientation a and phase q, normalised as above */
static double
pattern_at (const SimParams *p, int a, int q, double x, double y)
{
  double alpha = p->angle + G_PI * a / p->angles, kappa = 2.0 * G_PI * p->na / p->lambda;
  double e = p->zeroth + 2.0 * cos (kappa * (x * cos (alpha) + y * sin (alpha)) + 2.0 * G_PI * q / p->phases);

  return e * e / ((p->zeroth * p->zeroth + 2.0) * p->phases);
}

/* The sample as the imaging modality's CONVOLVE sees it: its planes. */
static AiryStack *
sim_sample (AirySystem *system, const AiryStack *psf, AiryConvolveOp *conv, GError **error)
{
  const AirySample *sample = airy_system_get_sample (system);
  AiryStack *volume;
  guint z;

  *conv = (AiryConvolveOp) { .kind = sample->kind, .value = sample->value, .count = sample->count,
                             .seed = sample->seed, .intensity = sample->intensity, .n_planes = psf->depth,
                             .psf_height = psf->height, .psf_width = psf->width,
                             .vol_height = psf->height, .vol_width = psf->width };
  if (sample->kind == AIRY_SAMPLE_FILE)
    {
      g_autofree char *path = g_path_is_absolute (sample->file) || !airy_system_get_base_dir (system)
                                ? g_strdup (sample->file)
                                : g_build_filename (airy_system_get_base_dir (system), sample->file, NULL);

      AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

      ro.channel = sample->channel_set ? (int) sample->channel : -1;
      ro.frame = sample->frame_set ? (int) sample->frame : -1;
      volume = airy_image_read_full (path, &ro, error);
      if (volume == NULL)
        return NULL;
      if (volume->depth != psf->depth || volume->height != psf->height || volume->width != psf->width
          || (volume->dx > 0.0 && fabs (volume->dx / psf->dx - 1.0) > 1e-6))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("sample.file: sim takes a sample of the image's shape and pixel, %u × %u × %u of "
                         "%g µm (no resampling), got %u × %u × %u of %g µm"),
                       psf->depth, psf->height, psf->width, psf->dx, volume->depth, volume->height, volume->width,
                       volume->dx);
          airy_stack_free (volume);
          return NULL;
        }
      return volume;
    }
  volume = airy_stack_new (psf->depth, psf->height, psf->width);
  for (z = 0; z < psf->depth; z++)
    _airy_convolve_volume_plane (conv, z, airy_stack_plane (volume, z));
  return volume;
}

/* Raw image (a, q): Σ_z (S_z · P) ⊛ h_z by the CONVOLVE op's definition,
 * with the detection PSF's spectra transformed once for all raw images. */
static void
sim_raw (const SimParams *p, int a, int q, AiryStack *sample, const AiryStack *psf, const fftwf_complex *otf,
         const AiryConvolveOp *base, double dy, double dx, float *out)
{
  g_autoptr(AiryStack) lit = airy_stack_copy (sample);
  AiryConvolveOp conv = *base;
  guint z, y, x;

  for (z = 0; z < lit->depth; z++)
    for (y = 0; y < lit->height; y++)
      for (x = 0; x < lit->width; x++)
        airy_stack_plane (lit, z)[(gsize) y * lit->width + x] *=
          (float) pattern_at (p, a, q, airy_grid_coord (x, lit->width, dx), airy_grid_coord (y, lit->height, dy));
  conv.kind = AIRY_SAMPLE_FILE;
  conv.volume = &lit;
  conv.volume_first = 0;
  _airy_convolve_forward_with (&conv, psf->data, otf, psf->depth, 0, out);
}

static AiryResult *
sim_run (AirySystem *system, AiryModalityRunFunc run_chain, const AiryRunOptions *options,
         AiryProgressFunc progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  AiryRunOptions opts = _airy_modality_chain_options (options);
  g_autoptr(AirySystem) det_sys = airy_system_copy (system);
  g_autoptr(AiryResult) wide = NULL;
  g_autoptr(AiryStack) sample = NULL;
  AiryConvolveOp base;
  fftwf_complex *otf;
  AiryStack *raw;
  AiryResult *result;
  SimParams p;
  double na_det, cutoff;
  int at, a, q;

  if (!sim_read (det_sys, &p, &at, error))
    return NULL;
  g_ptr_array_remove_index (airy_system_get_elements (det_sys), at);
  airy_system_set_modality (det_sys, "imaging");
  opts.keep_psf = TRUE;
  if ((wide = run_chain (det_sys, &opts, progress, user_data, cancellable, error)) == NULL)
    return NULL;
  if (wide->ranks > 1 || wide->psf == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: sim combines the whole PSF stack; run it in one process"));
      return NULL;
    }
  if ((sample = sim_sample (det_sys, wide->psf, &base, error)) == NULL)
    return NULL;
  base.vol_height = sample->height;
  base.vol_width = sample->width;
  base.pad_height = _airy_fft_good_size (base.vol_height + base.psf_height - 1);
  base.pad_width = _airy_fft_good_size (base.vol_width + base.psf_width - 1);
  raw = airy_stack_new ((guint) (p.angles * p.phases), sample->height, sample->width);
  airy_stack_copy_metadata (raw, wide->stack);
  raw->dz = 0.0;
  raw->n_frames = (guint) p.angles;
  otf = _airy_convolve_psf_spectra (&base, wide->psf->data, wide->psf->depth);
  for (a = 0; a < p.angles; a++)
    for (q = 0; q < p.phases; q++)
      sim_raw (&p, a, q, sample, wide->psf, otf, &base, wide->stack->dy, wide->stack->dx,
               airy_stack_plane (raw, (guint) (a * p.phases + q)));
  fftwf_free (otf);
  result = _airy_modality_result_new (wide, NULL, NULL, raw, NULL, 0, options);
  result->n_planes = raw->depth;
  na_det = airy_element_get_double (airy_system_get_objective (system), "na");
  cutoff = 2.0 * na_det / airy_system_get_spectrum (system)->wavelengths[0];
  if (2.0 * p.na / p.lambda > cutoff)
    g_ptr_array_add (result->warnings,
                     g_strdup_printf (_("elements[%d].na: the pattern's frequency 2·NA/λ = %.4g /µm is beyond the "
                                        "detection cut-off 2·NA/λ = %.4g /µm: not resolvable"),
                                      at, 2.0 * p.na / p.lambda, cutoff));
  return result;
}

/* the widefield image and the raw images, angles × phases of them */
static guint
sim_result_stacks (AirySystem *system, gboolean channels)
{
  SimParams p = { 0 };
  int at;

  if (!sim_read (system, &p, &at, NULL))
    return 1;
  return 1 + (guint) MAX (p.angles * p.phases, 0);
}

const AiryModality _airy_modality_sim = {
  .name = "sim",
  .label = N_("SIM raw images"),
  .description = ("SIM: the raw images of a structured illumination (the zeroth and ±1 orders, angles × phases) on "
                  "the sample, imaged by the widefield microscope"),
  .needs_microscope = TRUE,
  .needs_sample = TRUE,
  .combine = AIRY_MODALITY_COMBINE_CONVOLVE,
  .chain = sim_chain,
  .schema_note = "needs \"microscope\", \"sample\" and a sim-illumination element; angles × phases raw images",
  .parts = (const char *const[]) { "{\"type\": \"sim-illumination\"}", NULL },
  .run = sim_run,
  .result_stacks = sim_result_stacks,
};
