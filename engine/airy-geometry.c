#define G_LOG_DOMAIN "airy-geometry"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-geometry.h"
#include "airy-system-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-sensor-private.h"
#include "airy-elements-private.h"
#include "airy-modality.h"

static guint n_geometries;

guint
_airy_geometry_count (void)
{
  return g_atomic_int_get (&n_geometries);
}

void
_airy_geometry_free (AiryGeometry *geom)
{
  guint i;

  if (geom == NULL)
    return;
  g_clear_object (&geom->system);
  airy_spectrum_free (geom->spectrum);
  g_free (geom->z);
  if (geom->contexts)
    for (i = 0; i < geom->chain->len; i++)
      airy_context_clear (&geom->contexts[i]);
  g_free (geom->contexts);
  g_clear_pointer (&geom->chain, g_ptr_array_unref);
  g_free (geom->in_dy);
  g_free (geom->in_dx);
  g_free (geom->psf_dy_l);
  g_free (geom->psf_dx_l);
  g_clear_object (&geom->sensor);
  g_free (geom->sample.file);
  g_free (geom);
}

static gboolean
check_declared (AirySystemProp prop, double value, GError **error)
{
  GParamSpec *pspec = _airy_system_param (prop);

  return airy_param_check_number (pspec, value, airy_param_spec_get_path (pspec), error);
}

/* Walk the chain with a context: cross-field checks, warnings, the
 * intensity's grid and the pupil. */
static gboolean
walk_chain (AiryGeometry *geom, gboolean read_files, GPtrArray *warnings, GError **error)
{
  gboolean microscope = geom->imaging;
  AiryContext ctx;
  double zmax = 0.0;
  guint i, l;

  for (i = 0; i < geom->n_planes; i++)
    zmax = MAX (zmax, fabs (geom->z[i]));
  geom->contexts = g_new0 (AiryContext, geom->chain->len);
  airy_context_init (&ctx, geom->spectrum, geom->in_height, geom->in_width, geom->in_dx);
  for (l = 0; l < geom->spectrum->n; l++)
    ctx.dy[l] = geom->in_dy[l];
  ctx.warnings = warnings;
  ctx.z_max = zmax;
  ctx.no_files = !read_files;
  ctx.camera_grid = geom->tube_lens;
  ctx.jones = geom->jones;
  for (i = 0; i < geom->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (geom->chain, i);
      g_autofree char *path = NULL;
      gboolean ok;

      /* name elements as the user wrote them */
      if (microscope)
        path = i == 0 ? g_strdup ("microscope")
               : i + 1 == geom->chain->len && geom->tube_lens ? g_strdup ("microscope.f-tube")
               : g_strdup_printf ("elements[%u]", i - 1);
      else
        path = g_strdup_printf ("elements[%u]", i);
      ctx.path = path;
      airy_context_copy (&geom->contexts[i], &ctx);
      ok = airy_element_check (e, &ctx, error);
      geom->contexts[i].path = NULL;
      if (!ok)
        {
          airy_context_clear (&ctx);
          return FALSE;
        }
    }
  ctx.path = NULL;
  if (ctx.defocus_step > AIRY_PI)
    {
      /* the objective's own path, as the walk named it */
      g_autofree char *what = g_strdup_printf (_("defocus phase at |z| = %.4g µm"), ctx.defocus_z);
      AiryContext at = geom->contexts[0];

      /* the pupil as the objective left it */
      at.pupil_radius = geom->chain->len > 1 ? geom->contexts[1].pupil_radius : ctx.pupil_radius;
      at.path = microscope ? "microscope" : "elements[0]";
      at.warnings = warnings;
      _airy_context_check_phase_step (&at, ctx.defocus_step, what);
    }
  geom->held_bytes = ctx.held_bytes;
  geom->psf_height = ctx.height;
  geom->psf_width = ctx.width;
  geom->psf_dy = ctx.dy[0];
  geom->psf_dx = ctx.dx[0];
  geom->psf_dy_l = g_memdup2 (ctx.dy, geom->spectrum->n * sizeof (double));
  geom->psf_dx_l = g_memdup2 (ctx.dx, geom->spectrum->n * sizeof (double));
  geom->na = ctx.na;
  geom->pupil_radius = ctx.pupil_radius;
  if (geom->spectrum->n > 1 && !geom->imaging)
    for (l = 1; l < geom->spectrum->n; l++)
      if (fabs (ctx.dx[l] - ctx.dx[0]) > 1e-9 * ctx.dx[0])
        {
          airy_context_warn (&ctx, _("the output spacing differs between wavelengths (%.4g µm at "
                             "%g µm, %.4g µm at %g µm); intensities are summed pixel by pixel "
                             "as in chromatix, and the first wavelength's spacing is reported"),
                             ctx.dx[0], geom->spectrum->wavelengths[0], ctx.dx[l],
                             geom->spectrum->wavelengths[l]);
          break;
        }
  airy_context_clear (&ctx);
  return TRUE;
}

/* A Jones source first (a vectorial plane wave or point source): every
 * wavelength becomes the entry pair (Ex, Ey) of the same wavelength, grid
 * and weight, so that the elements, the ops and the intensity Σ_e w_e|u_e|²
 * run over components as they run over wavelengths (airy-jones.h). */
static gboolean
expand_jones (AiryGeometry *geom, GError **error)
{
  AirySpectrum *s = geom->spectrum, *j;
  guint L = s->n, l, p;
  double *dy = geom->in_dy, *dx = geom->in_dx;

  if (geom->chain->len == 0 || !_airy_element_is_jones_source (g_ptr_array_index (geom->chain, 0)))
    return TRUE;
  if (airy_system_get_channels (geom->system))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("spectrum.channels: a vectorial (Jones) field keeps no per-wavelength channels; "
                     "turn spectrum.channels off"));
      return FALSE;
    }
  j = g_new0 (AirySpectrum, 1);
  j->n = 2 * L;
  j->wavelengths = g_new (double, 2 * L);
  j->weights = g_new (double, 2 * L);
  geom->in_dy = g_new (double, 2 * L);
  geom->in_dx = g_new (double, 2 * L);
  for (l = 0; l < L; l++)
    for (p = 0; p < 2; p++)
      {
        j->wavelengths[2 * l + p] = s->wavelengths[l];
        j->weights[2 * l + p] = s->weights[l];
        geom->in_dy[2 * l + p] = dy[l];
        geom->in_dx[2 * l + p] = dx[l];
      }
  g_free (dy);
  g_free (dx);
  airy_spectrum_free (s);
  geom->spectrum = j;
  geom->jones = TRUE;
  return TRUE;
}

/* The sensor's check and whether the result is one image. */
static gboolean
check_sensor (AiryGeometry *geom, GError **error)
{
  AirySystem *system = geom->system;
  g_autofree char *path = g_strdup ("sensor");
  AiryContext sctx;
  gboolean ok;

  if (airy_system_get_sensor (system) == NULL)
    {
      geom->reduce = geom->imaging;
      return TRUE;
    }
  geom->sensor = airy_element_copy (airy_system_get_sensor (system));
  airy_context_init (&sctx, geom->spectrum, geom->imaging ? geom->in_height : geom->psf_height,
                     geom->imaging ? geom->in_width : geom->psf_width, geom->in_dx);
  sctx.path = path;
  ok = airy_element_check (geom->sensor, &sctx, error);
  airy_context_clear (&sctx);
  geom->reduce = geom->imaging || _airy_sensor_reduces (geom->sensor);
  return ok;
}

/* A microscope's sample as the system gives it: a file is only named here
 * (its shape is the planner's, once read). */
static gboolean
check_sample (AiryGeometry *geom, gboolean read_files, GError **error)
{
  const AirySample *sample = airy_system_get_sample (geom->system);

  geom->sample = *sample;
  geom->sample.file = g_strdup (sample->file);
  geom->vol_height = geom->in_height;
  geom->vol_width = geom->in_width;
  geom->vol_spacing = airy_system_get_spacing (geom->system);
  if (sample->kind == AIRY_SAMPLE_FILE && !read_files && (sample->file == NULL || *sample->file == '\0'))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("sample.file: no file given"));
      return FALSE;
    }
  if (sample->kind == AIRY_SAMPLE_NONE)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample: missing (a microscope needs a sample)"));
      return FALSE;
    }
  _airy_geometry_set_volume (geom, geom->vol_height, geom->vol_width);
  return TRUE;
}

/* The result's shape after the sensor (a block sum or a bilinear resample
 * changes it), from the image's grid: the sample's in a microscope. */
static void
output_shape (AiryGeometry *geom)
{
  guint bh = geom->imaging ? geom->vol_height : geom->psf_height;
  guint bw = geom->imaging ? geom->vol_width : geom->psf_width;
  double bdy = geom->imaging ? geom->vol_spacing : geom->psf_dy;
  double bdx = geom->imaging ? geom->vol_spacing : geom->psf_dx;

  if (geom->sensor)
    _airy_sensor_output_shape (geom->sensor, bh, bw, bdy, bdx, &geom->out_height,
                               &geom->out_width, &geom->out_dy, &geom->out_dx);
  else
    {
      geom->out_height = bh;
      geom->out_width = bw;
      geom->out_dy = bdy;
      geom->out_dx = bdx;
    }
  geom->out_depth = geom->reduce ? 1 : geom->n_planes;
}

void
_airy_geometry_set_volume (AiryGeometry *geom,
                           guint         height,
                           guint         width)
{
  geom->vol_height = height;
  geom->vol_width = width;
  /* linear convolution: pad to a fast size ≥ N_vol + N_psf − 1 */
  geom->pad_height = _airy_fft_good_size (geom->vol_height + geom->psf_height - 1);
  geom->pad_width = _airy_fft_good_size (geom->vol_width + geom->psf_width - 1);
  output_shape (geom);
}

/* The figures of DESIGN §3 at the first wavelength: the pupil f·NA/n in
 * pixels of the source plane, the focal plane's pixel and Nyquist's
 * λ/(4·NA). */
static void
figures (AiryGeometry *geom)
{
  AiryElement *last = g_ptr_array_index (geom->chain, geom->chain->len - 1);
  double lambda = geom->spectrum->wavelengths[0];

  geom->pupil_spacing = geom->in_dx[0];
  geom->pupil_radius_px = geom->pupil_radius / geom->pupil_spacing;
  geom->nyquist = geom->na > 0 ? lambda / (4 * geom->na) : 0.0;
  geom->output_pixel = geom->chain->len > 1 && g_str_equal (airy_element_get_type_name (last), "ff-lens")
                       ? geom->psf_dx : 0.0;
  /* what _airy_run_state_alloc_outputs allocates: the summed stack, and
   * for channels one per wavelength (a microscope run refuses channels) */
  if (geom->n_stacks == 0)
    geom->n_stacks = airy_system_get_channels (geom->system) && !geom->imaging ? 1 + geom->spectrum->n : 1;
}

AiryGeometry *
_airy_geometry_new (AirySystem *system,
                    gboolean    read_files,
                    GPtrArray  *warnings,
                    GError    **error)
{
  g_autoptr(AiryGeometry) geom = g_new0 (AiryGeometry, 1);
  const AiryModality *modality;
  const double *z;
  guint h, w;
  double spacing;

  g_atomic_int_inc (&n_geometries);
  geom->system = airy_system_copy (system);
  geom->spectrum = airy_spectrum_copy (airy_system_get_spectrum (system));
  z = airy_system_get_z (system, &geom->n_planes);
  /* the system's own fields, against their declarations (a system built
   * through the API has not been through the file reader's checks) */
  if (!check_declared (AIRY_SYSTEM_PROP_Z_COUNT, geom->n_planes, error))
    return NULL;
  geom->z = g_memdup2 (z, sizeof (double) * geom->n_planes);
  airy_system_get_shape (system, &h, &w);
  spacing = airy_system_get_spacing (system);
  if (!check_declared (AIRY_SYSTEM_PROP_HEIGHT, h, error) || !check_declared (AIRY_SYSTEM_PROP_WIDTH, w, error)
      || !check_declared (AIRY_SYSTEM_PROP_SPACING, spacing, error))
    return NULL;

  geom->chain = g_ptr_array_new_with_free_func (g_object_unref);
  geom->in_height = h;
  geom->in_width = w;
  geom->in_dy = g_new (double, geom->spectrum->n);
  geom->in_dx = g_new (double, geom->spectrum->n);
  /* the system's modality turns it into its chain */
  if (!_airy_modality_check (system, airy_system_get_modality (system), error))
    return NULL;
  modality = _airy_modality_lookup (airy_system_get_modality (system));
  /* a combining modality's stacks (its chains, its channels), of the
   * system before its chain rule takes its own elements out */
  if (modality->result_stacks)
    geom->n_stacks = modality->result_stacks (system, airy_system_get_channels (system));
  geom->warnings = warnings;
  if (!modality->chain (geom, error) || !expand_jones (geom, error))
    return NULL;
  geom->warnings = NULL;
  if (!walk_chain (geom, read_files, warnings, error) || !check_sensor (geom, error))
    return NULL;
  if (geom->imaging && !check_sample (geom, read_files, error))
    return NULL;
  if (!geom->imaging)
    output_shape (geom);
  figures (geom);
  return g_steal_pointer (&geom);
}

guint64
_airy_geometry_result_bytes (const AiryGeometry *geom)
{
  return (guint64) geom->n_stacks * geom->out_depth * geom->out_height * geom->out_width * sizeof (float);
}

/* Working memory of one device slot (CPU): the field and its scratch, the
 * prepared masks (≤ one complex plane per wavelength and element, and what
 * an element says it holds beyond that: a multislice's slices), the
 * intensity plane and, for imaging, the padded transforms. */
guint64
_airy_geometry_bytes_per_slot (const AiryGeometry *geom)
{
  guint64 L = geom->spectrum->n;
  guint64 field = 0, masks = 0, imaging = 0;
  guint i;

  for (i = 0; i < geom->chain->len; i++)
    {
      guint64 n = (guint64) geom->contexts[i].height * geom->contexts[i].width;
      field = MAX (field, 2 * L * n * 8);
      masks += L * n * 8;
    }
  field = MAX (field, 2 * L * (guint64) geom->psf_height * geom->psf_width * 8);
  masks += geom->held_bytes;
  if (geom->imaging)
    {
      guint64 ph = geom->pad_height, pw = geom->pad_width;
      imaging = ph * pw * 4 + 3 * ph * (pw / 2 + 1) * 8;
    }
  return field + masks + imaging + (guint64) geom->psf_height * geom->psf_width * 8;
}

gboolean
_airy_geometry_memory (const AiryGeometry   *geom,
                       const AiryRunOptions *options,
                       guint                 volume_planes,
                       guint64              *bytes,
                       guint                *planes_here_out,
                       GError              **error)
{
  guint n_slots = options && options->n_devices ? options->n_devices : 1;
  gboolean keep_psf = options ? options->keep_psf : FALSE;
  /* the result's stacks, counted as the panel and the app count them: the
   * sum, and with per-wavelength channels one stack per wavelength (the
   * run's choice, which the command line may set apart from the system's) */
  gboolean per_wavelength = options ? options->per_wavelength : FALSE;
  guint n_stacks = per_wavelength && !geom->imaging ? 1 + geom->spectrum->n : 1;
  guint planes_here = geom->n_planes;

  /* over several processes each holds its own part of the stack only */
  if (options && options->comm && options->comm->size > 1)
    {
      guint first;

      if (!_airy_plan_choose_part (options, geom->n_planes, &first, &planes_here, error))
        return FALSE;
    }
  *bytes = (guint64) n_stacks * (geom->reduce ? geom->out_depth : planes_here) * geom->out_height * geom->out_width * 4
           + (keep_psf ? (guint64) planes_here * geom->psf_height * geom->psf_width * 4 : 0)
           + (guint64) volume_planes * geom->vol_height * geom->vol_width * 4
           + n_slots * _airy_geometry_bytes_per_slot (geom);
  if (planes_here_out)
    *planes_here_out = planes_here;
  return TRUE;
}

gboolean
_airy_plan_choose_part (const AiryRunOptions *options,
                        guint                 n,
                        guint                *first,
                        guint                *count,
                        GError              **error)
{
  AiryComm *comm = options && options->comm ? options->comm : airy_comm_self ();
  guint sum = 0, i;

  if (options == NULL || options->rank_planes == NULL)
    {
      airy_comm_split (n, comm->size, comm->rank, first, count);
      return TRUE;
    }
  *first = 0;
  for (i = 0; i < comm->size; i++)
    {
      if (i < comm->rank)
        *first += options->rank_planes[i];
      sum += options->rank_planes[i];
    }
  if (sum != n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("chunks: the planes per rank must add up to the %u planes, got %u"), n, sum);
      return FALSE;
    }
  *count = options->rank_planes[comm->rank];
  return TRUE;
}

/* Checks on the UI thread (airy-system.h): the geometry alone. */
gboolean
airy_system_check (AirySystem *self,
                   GPtrArray  *warnings,
                   GError    **error)
{
  g_autoptr(AiryGeometry) geom = NULL;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), FALSE);

  geom = _airy_geometry_new (self, FALSE, warnings, error);
  return geom != NULL;
}

/* The result's bytes (airy-system.h) from the geometry, as the run
 * allocates them: its shape is the sensor's output (a block sum or a
 * bilinear resample changes it) and, in a microscope, the sample's. */
guint64
airy_system_get_result_bytes (AirySystem *self,
                              guint      *n_stacks)
{
  g_autoptr(AiryGeometry) geom = NULL;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), 0);

  geom = _airy_geometry_new (self, FALSE, NULL, NULL);
  if (n_stacks)
    *n_stacks = geom ? geom->n_stacks : 0;
  return geom ? _airy_geometry_result_bytes (geom) : 0;
}
