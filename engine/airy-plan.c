#define G_LOG_DOMAIN "airy-plan"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-plan-private.h"
#include "airy-geometry.h"
#include "airy-ops-private.h"
#include "airy-error.h"
#include "airy-image-file.h"

#include <glib/gstdio.h>

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
  if (plan == NULL || !g_atomic_int_dec_and_test (&plan->ref))
    return;
  g_clear_object (&plan->system);
  airy_spectrum_free (plan->spectrum);
  g_free (plan->z);
  g_clear_pointer (&plan->chain, g_ptr_array_unref);
  /* the contexts and the grids are the geometry's */
  _airy_geometry_free (plan->geometry);
  g_clear_object (&plan->sensor);
  g_free (plan->sample.file);
  _airy_volume_stream_unref (plan->volume_stream);
  if (plan->volume_box)
    g_atomic_rc_box_release_full (plan->volume_box, _airy_volume_box_clear);
  else
    airy_stack_free (plan->volume);
  g_free (plan->volume_key);
  g_clear_pointer (&plan->ops, g_ptr_array_unref);
  _airy_ops_unref (plan->compiled);
  g_free (plan);
}

guint64
_airy_plan_bytes_per_slot (AiryPlan *plan)
{
  return _airy_geometry_bytes_per_slot (plan->geometry);
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

/* The sample volume: checked against the system's camera pixel and z
 * planes before its pixels are read, then read, and resampled on request.
 * Over several ranks a rank reads only the planes of its part (without
 * resampling: resampling in z needs the planes around them). */
/* A sample whose planes here take more than a quarter of the memory budget
 * is read in batches while it is imaged (airy-volume-stream-private.h):
 * each thread holds one batch, and the batches together take at most a
 * sixteenth of the budget. */
static gboolean
stream_volume (AiryPlan *plan, const AiryRunOptions *options, const char *path, const AiryReadOptions *ro,
               const AiryStack *head)
{
  guint first = ro->n_planes ? ro->first_plane : 0;
  guint count = ro->n_planes ? ro->n_planes : head->depth;
  guint64 plane = (guint64) head->height * head->width * 4, budget = airy_memory_budget ();
  guint threads = options && options->threads ? options->threads : g_get_num_processors ();
  guint64 batch;

  if ((guint64) count * plane <= budget / 4 && g_getenv ("AIRY_STREAM_SAMPLE") == NULL)
    return FALSE;
  batch = CLAMP (budget / 16 / (threads * plane), 1, 64);
  plan->volume_stream = _airy_volume_stream_new (path, ro, first, count, head->height, head->width, (guint) batch);
  plan->volume_first = first;
  _airy_geometry_set_volume (plan->geometry, head->height, head->width);
  return TRUE;
}

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
    g_autofree char *stamp = _airy_file_stamp (path);
    if (stamp != NULL)
      plan->volume_key = g_strdup_printf ("file %s %s c%d t%d r%d", path, stamp, ro.channel, ro.frame, s->resample);
  }
  {
    /* the header: its planes need not fit (a large sample is streamed) */
    AiryReadOptions probe = ro;

    probe.budget = G_MAXUINT64;
    if (!g_file_test (path, G_FILE_TEST_EXISTS))
      g_set_error (&local, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", path, g_strerror (ENOENT));
    else
      head = airy_image_probe (path, &probe, &local);
  }
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
  if (!s->resample && stream_volume (plan, options, path, &ro, head))
    return TRUE;
  plan->volume = airy_image_read_full (path, &ro, &local);
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

/* The geometry's chain, grids and sample move into the plan (the fields
 * the backends and the compiler read); the geometry keeps its figures for
 * the memory estimate. */
static void
take_geometry (AiryPlan *plan, AiryGeometry *geom)
{
  plan->system = g_object_ref (geom->system);
  plan->spectrum = airy_spectrum_copy (geom->spectrum);
  plan->n_planes = geom->n_planes;
  plan->z = g_memdup2 (geom->z, sizeof (double) * geom->n_planes);
  plan->chain = g_ptr_array_ref (geom->chain);
  plan->contexts = geom->contexts;
  plan->in_height = geom->in_height;
  plan->in_width = geom->in_width;
  plan->in_dy = geom->in_dy;
  plan->in_dx = geom->in_dx;
  plan->psf_height = geom->psf_height;
  plan->psf_width = geom->psf_width;
  plan->psf_dy = geom->psf_dy;
  plan->psf_dx = geom->psf_dx;
  plan->psf_dy_l = geom->psf_dy_l;
  plan->psf_dx_l = geom->psf_dx_l;
  plan->sensor = geom->sensor ? g_object_ref (geom->sensor) : NULL;
  plan->imaging = geom->imaging;
  plan->reduce = geom->reduce;
  plan->sample = geom->sample;
  plan->sample.file = g_strdup (geom->sample.file);
  plan->vol_spacing = geom->vol_spacing;
  plan->geometry = geom;
}

/* The plan's copy of the geometry's shapes after the sample is known. */
static void
take_shapes (AiryPlan *plan)
{
  const AiryGeometry *geom = plan->geometry;

  plan->vol_height = geom->vol_height;
  plan->vol_width = geom->vol_width;
  plan->pad_height = geom->pad_height;
  plan->pad_width = geom->pad_width;
  plan->out_depth = geom->out_depth;
  plan->out_height = geom->out_height;
  plan->out_width = geom->out_width;
  plan->out_dy = geom->out_dy;
  plan->out_dx = geom->out_dx;
}

/* A microscope's sample: a file read (its shape is the image's), and the
 * key that identifies what it holds. */
static gboolean
plan_sample (AiryPlan *plan, const AiryRunOptions *options, GPtrArray *warnings, GError **error)
{
  const AirySample *sample = &plan->sample;

  if (sample->kind == AIRY_SAMPLE_FILE)
    {
      if (!load_volume (plan, options, airy_system_get_base_dir (plan->system), plan->vol_spacing, warnings, error))
        return FALSE;
      if (plan->volume)   /* a streamed sample set its shape from the file's header */
        _airy_geometry_set_volume (plan->geometry, plan->volume->height, plan->volume->width);
    }
  if (sample->kind == AIRY_SAMPLE_CONSTANT)
    plan->volume_key = g_strdup_printf ("constant %.17g", sample->value);
  else if (sample->kind == AIRY_SAMPLE_BEADS)
    plan->volume_key = g_strdup_printf ("beads %u %u %.17g in %u planes", sample->count,
                                        sample->seed, sample->intensity, plan->n_planes);
  return TRUE;
}

/* Memory: budget before allocating anything big. */
static gboolean
check_budget (AiryPlan *plan, const AiryRunOptions *options, GError **error)
{
  const AiryGeometry *geom = plan->geometry;
  gboolean per_wavelength = options ? options->per_wavelength : FALSE;
  guint n_stacks = per_wavelength && !plan->imaging ? 1 + plan->spectrum->n : 1;
  guint planes_here;
  guint64 need, budget;
  guint threads = options && options->threads ? options->threads : g_get_num_processors ();
  /* a streamed sample: the batches its threads hold */
  guint volume_planes = plan->volume ? plan->volume->depth
                        : plan->volume_stream ? threads * _airy_volume_stream_batch (plan->volume_stream) : 0;

  if (!_airy_geometry_memory (geom, options, volume_planes, &need, &planes_here, error))
    return FALSE;
  plan->memory = need;
  budget = airy_memory_budget ();
  if (need > budget)
    {
      g_autofree char *need_s = airy_format_bytes (need);
      g_autofree char *budget_s = airy_memory_budget_describe (budget, TRUE);
      guint h = plan->in_height, w = plan->in_width;

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
      return FALSE;
    }
  return TRUE;
}

static guint n_plans;

guint
_airy_plan_count (void)
{
  return g_atomic_int_get (&n_plans);
}

/* The planner consumes the geometry once: the geometry (with the elements'
 * files checked), the sample file read, the memory budgeted. */
AiryPlan *
_airy_plan_new (AirySystem           *system,
                const AiryRunOptions *options,
                GPtrArray            *warnings,
                GError              **error)
{
  g_autoptr(AiryPlan) plan = NULL;
  AiryGeometry *geom;

  geom = _airy_geometry_new (system, TRUE, warnings, error);
  if (geom == NULL)
    return NULL;
  g_atomic_int_inc (&n_plans);
  plan = g_new0 (AiryPlan, 1);
  plan->ref = 1;
  take_geometry (plan, geom);
  if (plan->imaging && !plan_sample (plan, options, warnings, error))
    return NULL;
  take_shapes (plan);
  if (!check_budget (plan, options, error))
    return NULL;
  return g_steal_pointer (&plan);
}

/* Checks everything a run would check (airy-system.h): the planner's
 * geometry, files and budget, without compiling. */
gboolean
airy_system_validate (AirySystem *self,
                      GPtrArray  *warnings,
                      GError    **error)
{
  g_autoptr(AiryPlan) plan = NULL;

  /* a wrong AIRY_MEMORY_BUDGET is an error, not the default in disguise */
  if (!airy_memory_budget_get (NULL, error))
    return FALSE;
  plan = _airy_plan_new (self, NULL, warnings, error);
  return plan != NULL;
}

const float *
_airy_plan_volume_data (AiryPlan *plan,
                        guint     z)
{
  g_assert (plan->volume != NULL);
  g_assert (z >= plan->volume_first && z - plan->volume_first < plan->volume->depth);
  return airy_stack_plane (plan->volume, z - plan->volume_first);
}
