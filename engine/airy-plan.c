#define G_LOG_DOMAIN "airy-plan"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-plan-private.h"
#include "airy-system-private.h"
#include "airy-ops-private.h"
#include "airy-error.h"
#include "airy-image-file.h"
#include "airy-fft-private.h"
#include "airy-physics.h"
#include "airy-sensor-private.h"
#include "airy-elements-private.h"

#include <glib/gstdio.h>

char *
airy_format_bytes (guint64 bytes)
{
  if (bytes >= (G_GUINT64_CONSTANT (1) << 40))
    return g_strdup_printf ("%.1f TiB", bytes / 1099511627776.0);
  if (bytes >= (1u << 30))
    return g_strdup_printf ("%.2f GiB", bytes / 1073741824.0);
  return g_strdup_printf ("%.1f MiB", bytes / 1048576.0);
}

AiryPlan *
_airy_plan_ref (AiryPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);
  g_atomic_int_inc (&plan->ref);
  return plan;
}

void
_airy_plan_unref (AiryPlan *plan)
{
  guint i;

  if (plan == NULL || !g_atomic_int_dec_and_test (&plan->ref))
    return;
  g_clear_object (&plan->system);
  airy_spectrum_free (plan->spectrum);
  g_free (plan->z);
  if (plan->contexts)
    for (i = 0; i < plan->chain->len; i++)
      airy_context_clear (&plan->contexts[i]);
  g_free (plan->contexts);
  g_clear_pointer (&plan->chain, g_ptr_array_unref);
  g_free (plan->in_dy);
  g_free (plan->in_dx);
  g_free (plan->psf_dy_l);
  g_free (plan->psf_dx_l);
  g_clear_object (&plan->sensor);
  g_free (plan->sample.file);
  if (plan->volume_box)
    g_atomic_rc_box_release_full (plan->volume_box, _airy_volume_box_clear);
  else
    airy_stack_free (plan->volume);
  g_free (plan->volume_key);
  g_clear_pointer (&plan->ops, g_ptr_array_unref);
  _airy_ops_unref (plan->compiled);
  g_free (plan);
}

/* Working memory of one device slot (CPU): the field and its scratch, the
 * prepared masks (≤ one complex plane per wavelength and element), the
 * intensity plane and, for imaging, the padded transforms. */
guint64
_airy_plan_bytes_per_slot (AiryPlan *plan)
{
  guint64 L = plan->spectrum->n;
  guint64 field = 0, masks = 0, imaging = 0;
  guint i;

  for (i = 0; i < plan->chain->len; i++)
    {
      guint64 n = (guint64) plan->contexts[i].height * plan->contexts[i].width;
      field = MAX (field, 2 * L * n * 8);
      masks += L * n * 8;
    }
  field = MAX (field, 2 * L * (guint64) plan->psf_height * plan->psf_width * 8);
  if (plan->imaging)
    {
      guint64 ph = plan->pad_height, pw = plan->pad_width;
      imaging = ph * pw * 4 + 3 * ph * (pw / 2 + 1) * 8;
    }
  return field + masks + imaging + (guint64) plan->psf_height * plan->psf_width * 8;
}

static gboolean
same_size (double a, double b)
{
  return fabs (a - b) <= 1e-4 * MAX (fabs (a), fabs (b));
}

/* Whether the volume's z steps are the system's (positions themselves do
 * not matter: plane k of the volume is imaged at z[k]). */
static gboolean
same_z_steps (const AiryStack *v, const double *z, guint n)
{
  guint k;

  if (v->depth != n)
    return FALSE;
  for (k = 0; k + 1 < n; k++)
    if (!same_size (airy_stack_get_z (v, k + 1) - airy_stack_get_z (v, k), z[k + 1] - z[k]))
      return FALSE;
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

/* The sample volume: checked against the system's camera pixel and z
 * planes before its pixels are read, then read, and resampled on request.
 * Over several ranks a rank reads only the planes of its part (without
 * resampling: resampling in z needs the planes around them). */
static gboolean
load_volume (AiryPlan *plan, const AiryRunOptions *options, const char *base_dir, double spacing,
             GPtrArray *warnings, GError **error)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(AiryStack) head = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  const AirySample *s = &plan->sample;
  guint n = plan->n_planes;
  double mean_dz = n > 1 ? (plan->z[n - 1] - plan->z[0]) / (n - 1) : 0.0;
  gboolean lateral_known, axial_known, lateral_ok, axial_ok;

  path = g_path_is_absolute (s->file) || base_dir == NULL
         ? g_strdup (s->file) : g_build_filename (base_dir, s->file, NULL);
  ro.channel = s->channel_set ? (int) s->channel : -1;
  ro.frame = s->frame_set ? (int) s->frame : -1;
  /* without resampling the file must have the system's planes: stop
   * walking a file with more */
  ro.max_planes = s->resample ? 0 : n;
  {
    GStatBuf st;
    if (g_stat (path, &st) == 0)
      plan->volume_key = g_strdup_printf ("file %s %lld %lld c%d t%d r%d", path, (long long) st.st_mtime,
                                          (long long) st.st_size, ro.channel, ro.frame, s->resample);
  }
  head = airy_tiff_probe (path, &ro, &local);
  if (head == NULL)
    {
      g_set_error (error, AIRY_ERROR, local->domain == AIRY_ERROR ? local->code : AIRY_ERROR_FILE,
                   _("sample.file: %s"), local->message);
      return FALSE;
    }

  lateral_known = head->dx > 0 && head->dy > 0;
  axial_known = n == 1 || (head->depth > 1 && (head->z != NULL || head->dz != 0));
  lateral_ok = !lateral_known || (same_size (head->dx, spacing) && same_size (head->dy, spacing));
  axial_ok = !axial_known || n == 1 || same_z_steps (head, plan->z, n);
  if (!s->resample && (!lateral_ok || !axial_ok))
    {
      AiryStack sys = { .depth = n, .z = plan->z };
      g_autofree char *vz = head->depth > 1 && axial_known
                            ? g_strdup_printf (airy_stack_z_uniform (head) ? "%.4g" : _("%.4g (uneven)"), fabs (head->dz))
                            : g_strdup ("?");
      g_autofree char *sz = g_strdup_printf (airy_stack_z_uniform (&sys) ? "%.4g" : _("%.4g (uneven)"), fabs (mean_dz));

      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample.file: %s has voxels of %.4g × %.4g × %s µm, the system images %.4g × %.4g × %s µm "
                     "(grid.spacing and the z step); resample the volume to the system's grid, or add "
                     "\"resample\": true to the sample"),
                   path, head->dx, head->dy, vz, spacing, spacing, sz);
      return FALSE;
    }
  if (!s->resample && head->depth != n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample.file: %s has %u planes, the system has %u z planes"), path, head->depth, n);
      return FALSE;
    }
  if (s->resample && (!lateral_known || (n > 1 && head->depth > 1 && !axial_known)))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample.resample: %s does not say its voxel size (%s), so it cannot be resampled"),
                   path, !lateral_known ? _("no pixel size") : _("no z spacing"));
      return FALSE;
    }
  if (warnings && !lateral_known)
    g_ptr_array_add (warnings, g_strdup_printf (_("sample.file: %s has no pixel size; it is taken to have the "
                                                  "camera's %.4g µm pixels"), path, spacing));
  if (warnings && !axial_known && n > 1)
    g_ptr_array_add (warnings, g_strdup_printf (_("sample.file: %s has no z spacing; its planes are taken "
                                                  "as the system's z planes"), path));

  if (!s->resample && options && options->comm && options->comm->size > 1)
    {
      guint first, count;

      if (!_airy_plan_choose_part (options, n, &first, &count, error))
        return FALSE;
      /* a rank with no planes reads one: the volume's shape is the plan's */
      ro.first_plane = MIN (first, n - 1);
      ro.n_planes = MAX (count, 1);
      plan->volume_first = ro.first_plane;
      if (plan->volume_key)
        {
          char *key = g_strdup_printf ("%s planes %u+%u", plan->volume_key, ro.first_plane, ro.n_planes);
          g_free (plan->volume_key);
          plan->volume_key = key;
        }
    }
  plan->volume = airy_tiff_read_full (path, &ro, &local);
  if (plan->volume == NULL)
    {
      g_set_error (error, AIRY_ERROR, local->domain == AIRY_ERROR ? local->code : AIRY_ERROR_FILE,
                   _("sample.file: %s"), local->message);
      return FALSE;
    }
  /* a NaN or an inf in the sample spreads over the whole image through its
   * Fourier transform */
  {
    g_autofree char *bad = _airy_stack_describe_nonfinite (plan->volume, plan->volume->depth, ro.first_plane,
                                                           NULL, NULL);
    if (bad != NULL)
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("sample.file: %s has %s; a sample's voxels must be finite numbers"), path, bad);
        return FALSE;
      }
  }
  if (s->resample && (!lateral_ok || !axial_ok || head->depth != n))
    {
      const AiryStack *v = plan->volume;
      guint h = (guint) CLAMP (floor (v->height * v->dy / spacing + 0.5), 1, 65536);
      guint w = (guint) CLAMP (floor (v->width * v->dx / spacing + 0.5), 1, 65536);
      g_autofree double *zsrc = NULL;
      AiryStack *r;
      guint k;

      /* a file with its own z positions keeps them relative to its middle */
      if (v->depth > 1)
        {
          zsrc = g_new (double, v->depth);
          for (k = 0; k < v->depth; k++)
            zsrc[k] = airy_stack_get_z (v, k) - 0.5 * (airy_stack_get_z (v, 0) + airy_stack_get_z (v, v->depth - 1))
                      + 0.5 * (plan->z[0] + plan->z[n - 1]);
        }
      r = _airy_stack_resample (v, h, w, spacing, spacing, n, plan->z, zsrc);
      if (r == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                       _("sample.file: not enough memory to resample %s to %u × %u × %u"), path, n, h, w);
          return FALSE;
        }
      if (warnings)
        g_ptr_array_add (warnings,
                         g_strdup_printf (_("sample.file: %s resampled from %u × %u × %u voxels of %.4g × %.4g × %.4g µm "
                                            "to %u × %u × %u of %.4g × %.4g × %.4g µm"),
                                          path, v->depth, v->height, v->width, v->dx, v->dy, fabs (v->dz),
                                          n, h, w, spacing, spacing, fabs (mean_dz)));
      airy_stack_free (plan->volume);
      plan->volume = r;
    }
  return TRUE;
}

static gboolean
check_declared (AirySystemProp prop, double value, GError **error)
{
  GParamSpec *pspec = _airy_system_param (prop);

  return airy_param_check_number (pspec, value, airy_param_spec_get_path (pspec), error);
}

AiryPlan *
_airy_plan_new (AirySystem           *system,
                const AiryRunOptions *options,
                GPtrArray            *warnings,
                GError              **error)
{
  return _airy_plan_new_checked (system, options, FALSE, warnings, error);
}

/* light: what a check on the UI thread may do — ranges, cross-field rules,
 * shapes; no file is read (sample, mask images) and no memory budget taken
 * (/proc/meminfo): the run does those, and reports at the same paths. */
AiryPlan *
_airy_plan_new_checked (AirySystem           *system,
                        const AiryRunOptions *options,
                        gboolean              light,
                        GPtrArray            *warnings,
                        GError              **error)
{
  g_autoptr(AiryPlan) plan = g_new0 (AiryPlan, 1);
  AiryContext ctx;
  GPtrArray *elements;
  AiryElement *objective;
  const double *z;
  double spacing, zmax = 0.0;
  guint h, w, i, l, n_slots, planes_here, n_stacks = 1;
  guint64 need, budget;
  gboolean keep_psf;

  plan->ref = 1;
  plan->system = airy_system_copy (system);
  plan->spectrum = airy_spectrum_copy (airy_system_get_spectrum (system));
  z = airy_system_get_z (system, &plan->n_planes);
  /* the system's own fields, against their declarations (a system built
   * through the API has not been through the file reader's checks) */
  if (!check_declared (AIRY_SYSTEM_PROP_Z_COUNT, plan->n_planes, error))
    return NULL;
  plan->z = g_memdup2 (z, sizeof (double) * plan->n_planes);
  for (i = 0; i < plan->n_planes; i++)
    zmax = MAX (zmax, fabs (z[i]));
  airy_system_get_shape (system, &h, &w);
  spacing = airy_system_get_spacing (system);
  if (!check_declared (AIRY_SYSTEM_PROP_HEIGHT, h, error) || !check_declared (AIRY_SYSTEM_PROP_WIDTH, w, error)
      || !check_declared (AIRY_SYSTEM_PROP_SPACING, spacing, error))
    return NULL;

  plan->chain = g_ptr_array_new_with_free_func (g_object_unref);
  plan->in_height = h;
  plan->in_width = w;
  plan->in_dy = g_new (double, plan->spectrum->n);
  plan->in_dx = g_new (double, plan->spectrum->n);
  objective = airy_system_get_objective (system);
  elements = airy_system_get_elements (system);

  if (objective != NULL)
    {
      /* Optical4FSystemPSF: pupil spacing f_tube·λ/(n·N·s) per wavelength, so
       * the camera plane has spacing s for every wavelength. */
      double n = airy_element_get_double (objective, "n");
      double f_tube = airy_system_get_f_tube (system);
      AiryElement *tube;

      for (l = 0; l < plan->spectrum->n; l++)
        {
          plan->in_dy[l] = f_tube * plan->spectrum->wavelengths[l] / (n * h * spacing);
          plan->in_dx[l] = f_tube * plan->spectrum->wavelengths[l] / (n * w * spacing);
        }
      plan->imaging = TRUE;
      g_ptr_array_add (plan->chain, airy_element_copy (objective));
      for (i = 0; i < elements->len; i++)
        {
          AiryElement *e = g_ptr_array_index (elements, i);
          AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);

          if (klass->category == AIRY_CATEGORY_SOURCE)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("elements[%u]: a microscope has its own source (the objective); "
                           "remove \"%s\""), i, klass->type_name);
              return NULL;
            }
          if (airy_element_get_enabled (e))
            g_ptr_array_add (plan->chain, airy_element_copy (e));
        }
      tube = airy_element_new ("ff-lens", NULL);
      g_object_set (tube, "f", f_tube, "n", n, NULL);
      g_ptr_array_add (plan->chain, tube);
    }
  else
    {
      for (l = 0; l < plan->spectrum->n; l++)
        plan->in_dy[l] = plan->in_dx[l] = spacing;
      for (i = 0; i < elements->len; i++)
        {
          AiryElement *e = g_ptr_array_index (elements, i);
          AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);

          if ((i == 0) != (klass->category == AIRY_CATEGORY_SOURCE))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           i == 0 ? "elements[%u]: the first element must be a source, got \"%s\""
                                  : "elements[%u]: only the first element may be a source, got \"%s\"",
                           i, klass->type_name);
              return NULL;
            }
          if (i == 0 && !airy_element_get_enabled (e))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("elements[0]: the source cannot be disabled"));
              return NULL;
            }
          if (airy_element_get_enabled (e))
            g_ptr_array_add (plan->chain, airy_element_copy (e));
        }
      if (plan->chain->len == 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("elements: an optical system needs at least a source"));
          return NULL;
        }
    }

  /* Walk the chain with a context: cross-field checks, warnings, geometry. */
  plan->contexts = g_new0 (AiryContext, plan->chain->len);
  airy_context_init (&ctx, plan->spectrum, h, w, plan->in_dx);
  for (l = 0; l < plan->spectrum->n; l++)
    ctx.dy[l] = plan->in_dy[l];
  ctx.warnings = warnings;
  ctx.z_max = zmax;
  ctx.no_files = light;
  ctx.camera_grid = plan->imaging;
  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      g_autofree char *path = NULL;
      gboolean ok;

      /* name elements as the user wrote them */
      if (objective != NULL)
        path = i == 0 ? g_strdup ("microscope")
               : i + 1 == plan->chain->len ? g_strdup ("microscope.f-tube")
               : g_strdup_printf ("elements[%u]", i - 1);
      else
        path = g_strdup_printf ("elements[%u]", i);
      ctx.path = path;
      airy_context_copy (&plan->contexts[i], &ctx);
      ok = airy_element_check (e, &ctx, error);
      plan->contexts[i].path = NULL;
      if (!ok)
        {
          airy_context_clear (&ctx);
          return NULL;
        }
    }
  ctx.path = NULL;
  if (ctx.defocus_step > AIRY_PI)
    {
      /* the objective's own path, as the walk named it */
      g_autofree char *what = g_strdup_printf (_("defocus phase at |z| = %.4g µm"), ctx.defocus_z);
      AiryContext at = plan->contexts[0];

      /* the pupil as the objective left it */
      at.pupil_radius = plan->chain->len > 1 ? plan->contexts[1].pupil_radius : ctx.pupil_radius;
      at.path = objective != NULL ? "microscope" : "elements[0]";
      at.warnings = warnings;
      _airy_context_check_phase_step (&at, ctx.defocus_step, what);
    }
  plan->psf_height = ctx.height;
  plan->psf_width = ctx.width;
  plan->psf_dy = ctx.dy[0];
  plan->psf_dx = ctx.dx[0];
  plan->psf_dy_l = g_memdup2 (ctx.dy, plan->spectrum->n * sizeof (double));
  plan->psf_dx_l = g_memdup2 (ctx.dx, plan->spectrum->n * sizeof (double));
  if (plan->spectrum->n > 1 && !plan->imaging)
    for (l = 1; l < plan->spectrum->n; l++)
      if (fabs (ctx.dx[l] - ctx.dx[0]) > 1e-9 * ctx.dx[0])
        {
          airy_context_warn (&ctx, _("the output spacing differs between wavelengths (%.4g µm at "
                             "%g µm, %.4g µm at %g µm); intensities are summed pixel by pixel "
                             "as in chromatix, and the first wavelength's spacing is reported"),
                             ctx.dx[0], plan->spectrum->wavelengths[0], ctx.dx[l],
                             plan->spectrum->wavelengths[l]);
          break;
        }
  airy_context_clear (&ctx);

  /* The sensor and the output geometry. */
  if (airy_system_get_sensor (system))
    {
      g_autofree char *path = g_strdup ("sensor");
      AiryContext sctx;

      plan->sensor = airy_element_copy (airy_system_get_sensor (system));
      airy_context_init (&sctx, plan->spectrum, plan->imaging ? h : plan->psf_height,
                         plan->imaging ? w : plan->psf_width, plan->in_dx);
      sctx.path = path;
      if (!airy_element_check (plan->sensor, &sctx, error))
        {
          airy_context_clear (&sctx);
          return NULL;
        }
      airy_context_clear (&sctx);
    }
  plan->reduce = plan->imaging || (plan->sensor && _airy_sensor_reduces (plan->sensor));

  if (plan->imaging)
    {
      const AirySample *sample = airy_system_get_sample (system);

      plan->sample = *sample;
      plan->sample.file = g_strdup (sample->file);
      plan->vol_height = h;
      plan->vol_width = w;
      plan->vol_spacing = spacing;
      if (sample->kind == AIRY_SAMPLE_FILE && light)
        {
          if (sample->file == NULL || *sample->file == '\0')
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("sample.file: no file given"));
              return NULL;
            }
        }
      else if (sample->kind == AIRY_SAMPLE_FILE)
        {
          if (!load_volume (plan, options, airy_system_get_base_dir (system), spacing, warnings, error))
            return NULL;
          plan->vol_height = plan->volume->height;
          plan->vol_width = plan->volume->width;
        }
      else if (sample->kind == AIRY_SAMPLE_NONE)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("sample: missing (a microscope needs a sample)"));
          return NULL;
        }
      if (sample->kind == AIRY_SAMPLE_CONSTANT)
        plan->volume_key = g_strdup_printf ("constant %.17g", sample->value);
      else if (sample->kind == AIRY_SAMPLE_BEADS)
        plan->volume_key = g_strdup_printf ("beads %u %u %.17g in %u planes", sample->count,
                                            sample->seed, sample->intensity, plan->n_planes);
      /* linear convolution: pad to a fast size ≥ N_vol + N_psf − 1 */
      plan->pad_height = _airy_fft_good_size (plan->vol_height + plan->psf_height - 1);
      plan->pad_width = _airy_fft_good_size (plan->vol_width + plan->psf_width - 1);
    }

  {
    guint bh = plan->imaging ? plan->vol_height : plan->psf_height;
    guint bw = plan->imaging ? plan->vol_width : plan->psf_width;
    double bdy = plan->imaging ? spacing : plan->psf_dy;
    double bdx = plan->imaging ? spacing : plan->psf_dx;

    if (plan->sensor)
      _airy_sensor_output_shape (plan->sensor, bh, bw, bdy, bdx, &plan->out_height,
                                 &plan->out_width, &plan->out_dy, &plan->out_dx);
    else
      {
        plan->out_height = bh;
        plan->out_width = bw;
        plan->out_dy = bdy;
        plan->out_dx = bdx;
      }
    plan->out_depth = plan->reduce ? 1 : plan->n_planes;
  }

  if (light)
    return g_steal_pointer (&plan);

  /* Memory: budget before allocating anything big. */
  n_slots = options && options->n_devices ? options->n_devices : 1;
  if (options && options->devices == NULL && g_strcmp0 (options->backend, "cuda") != 0)
    n_slots = MAX (n_slots, 1);
  keep_psf = options ? options->keep_psf : FALSE;
  /* over several processes each holds its own part of the stack only */
  planes_here = plan->n_planes;
  if (options && options->comm && options->comm->size > 1)
    {
      guint first;

      if (!_airy_plan_choose_part (options, plan->n_planes, &first, &planes_here, error))
        return NULL;
    }
  /* the result's stacks, counted as the panel and the app count them: the
   * sum, and with per-wavelength channels one stack per wavelength (the
   * run's choice, which the command line may set apart from the system's) */
  {
    AirySystem *counted = plan->system;
    g_autoptr(AirySystem) other = NULL;
    gboolean per_wavelength = options ? options->per_wavelength : FALSE;

    if (airy_system_get_channels (counted) != per_wavelength)
      {
        counted = other = airy_system_copy (plan->system);
        airy_system_set_channels (other, per_wavelength);
      }
    airy_system_get_result_bytes (counted, &n_stacks);
  }
  need = (guint64) n_stacks * (plan->reduce ? plan->out_depth : planes_here) * plan->out_height * plan->out_width * 4
         + (keep_psf ? (guint64) planes_here * plan->psf_height * plan->psf_width * 4 : 0)
         + (plan->volume ? (guint64) plan->volume->depth * plan->vol_height * plan->vol_width * 4 : 0)
         + n_slots * _airy_plan_bytes_per_slot (plan);
  budget = airy_memory_budget ();
  if (need > budget)
    {
      g_autofree char *need_s = airy_format_bytes (need);
      g_autofree char *budget_s = airy_memory_budget_describe (budget, TRUE);

      if (n_stacks > 1)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                     _("grid.shape: a run of %u plane%s on a %u × %u grid that keeps its %u wavelengths as "
                       "channels (%u stacks: their sum and one per wavelength) needs %s of memory, more than "
                       "the budget of %s; reduce "
                       "grid.shape or z.count, or turn spectrum.channels off (--channels none)"),
                     planes_here, planes_here == 1 ? "" : "s", h, w, n_stacks - 1, n_stacks, need_s, budget_s);
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                     _("grid.shape: a run of %u plane%s on a %u × %u grid needs %s of memory, more than "
                     "the budget of %s; reduce "
                     "grid.shape or z.count"), planes_here, planes_here == 1 ? "" : "s", h, w,
                     need_s, budget_s);
      return NULL;
    }
  return g_steal_pointer (&plan);
}

const float *
_airy_plan_volume_data (AiryPlan *plan,
                        guint     z)
{
  g_assert (plan->volume != NULL);
  g_assert (z >= plan->volume_first && z - plan->volume_first < plan->volume->depth);
  return airy_stack_plane (plan->volume, z - plan->volume_first);
}
