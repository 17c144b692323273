#define G_LOG_DOMAIN "airy-run"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-run.h"
#include "airy-error.h"
#include "airy-atomic-private.h"
#include "airy-fft-private.h"
#include "airy-plan-private.h"
#include "airy-ops-private.h"
#include "airy-modality.h"

/* ---- one run's state ---- */

static AiryRunState *
run_state_new (AiryPlan *plan)
{
  AiryRunState *state = g_new0 (AiryRunState, 1);

  state->plan = _airy_plan_ref (plan);
  state->ops = g_ptr_array_ref (plan->ops);
  state->reduce = plan->reduce;
  state->out_height = plan->out_height;
  state->out_width = plan->out_width;
  g_mutex_init (&state->lock);
  return state;
}

static void
run_state_free (AiryRunState *state)
{
  if (state == NULL)
    return;
  g_free (state->chunks);
  g_ptr_array_unref (state->ops);
  airy_stack_free (state->input);
  airy_stack_free (state->out);
  airy_stack_free (state->psf);
  for (guint l = 0; l < state->n_channels; l++)
    airy_stack_free (state->channels[l]);
  g_free (state->channels);
  g_clear_pointer (&state->resident, airy_resident_unref);
  g_clear_object (&state->cancellable);
  g_mutex_clear (&state->lock);
  _airy_plan_unref (state->plan);
  g_free (state);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryRunState, run_state_free)

void
_airy_run_state_plane_done (AiryRunState *state)
{
  guint done;

  g_mutex_lock (&state->lock);
  done = ++state->done;
  if (state->progress)
    state->progress (done, state->part_count, state->progress_data);
  g_mutex_unlock (&state->lock);
}

gboolean
_airy_run_state_alloc_outputs (AiryRunState *state,
                               GError      **error)
{
  AiryPlan *plan = state->plan;

  if (!state->reduce)
    {
      /* every plane of this process's part is written by the run */
      g_assert (state->tail_from > 0 || plan->out_depth == plan->n_planes);
      state->out = _airy_stack_new_uninitialised (MAX (state->part_count, 1), state->out_height, state->out_width);
      if (state->out == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("not enough memory for the output stack"));
          return FALSE;
        }
    }
  if (state->keep_psf)
    state->psf = airy_stack_new (MAX (state->part_count, 1), plan->psf_height, plan->psf_width);
  return _airy_run_state_alloc_channels (state, error);
}

gboolean
_airy_run_state_alloc_channels (AiryRunState *state,
                                GError      **error)
{
  AiryPlan *plan = state->plan;

  if (state->per_wavelength)
    {
      guint l;

      state->n_channels = plan->spectrum->n;
      state->channels = g_new0 (AiryStack *, state->n_channels);
      for (l = 0; l < state->n_channels; l++)
        {
          state->channels[l] = _airy_stack_new_uninitialised (MAX (state->part_count, 1), state->out_height,
                                                              state->out_width);
          if (state->channels[l] == NULL)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                           _("not enough memory for the stack of each wavelength"));
              return FALSE;
            }
        }
    }
  return TRUE;
}

gboolean
_airy_run_state_check_channels (AiryRunState     *state,
                                const AiryStages *stages,
                                const char       *backend,
                                GError          **error)
{
  AiryPlan *plan = state->plan;
  const AiryOp *fused = stages->fused;

  if (!state->per_wavelength)
    return TRUE;
  if (fused == NULL || stages->convolve || stages->sum || stages->sensor)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("per-wavelength channels: this system's elements do not run as one fused PSF on the %s backend"),
                   backend);
      return FALSE;
    }
  if (fused->n_lambda != plan->spectrum->n * MAX (fused->psf->n_components, 1))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("per-wavelength channels: the fused PSF has %u entries, not %u per each of %u wavelengths"),
                   fused->n_lambda, MAX (fused->psf->n_components, 1), plan->spectrum->n);
      return FALSE;
    }
  return TRUE;
}

float *
_airy_run_state_out_plane (AiryRunState *state,
                           guint         b)
{
  g_assert (b >= state->part_first && b - state->part_first < state->out->depth);
  return airy_stack_plane (state->out, b - state->part_first);
}

float *
_airy_run_state_channel_plane (AiryRunState *state,
                               guint         l,
                               guint         b)
{
  g_assert (l < state->n_channels);
  g_assert (b >= state->part_first && b - state->part_first < state->channels[l]->depth);
  return airy_stack_plane (state->channels[l], b - state->part_first);
}

float *
_airy_run_state_psf_plane (AiryRunState *state,
                           guint         b)
{
  g_assert (b >= state->part_first && b - state->part_first < state->psf->depth);
  return airy_stack_plane (state->psf, b - state->part_first);
}

gboolean
_airy_run_state_reduce_ranks (AiryRunState *state,
                              float        *buf,
                              gsize         count,
                              GError      **error)
{
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok = airy_comm_all_reduce (state->comm, buf, count, AIRY_COMM_SUM, error);

  state->reduce_us += g_get_monotonic_time () - t0;
  return ok;
}

void
_airy_run_state_set_metadata (AiryRunState *state)
{
  AiryPlan *plan = state->plan;
  AiryStack *stacks[2] = { state->out, state->psf };
  g_autofree char *json = airy_system_to_json_full (plan->system);
  guint i;

  /* a program that stops before the intensity stage (the fallback's
   * first part) gives the PSF's planes */
  state->out->dy = state->ops->len < plan->ops->len ? plan->psf_dy : plan->out_dy;
  state->out->dx = state->ops->len < plan->ops->len ? plan->psf_dx : plan->out_dx;
  if (state->psf)
    {
      state->psf->dy = plan->psf_dy;
      state->psf->dx = plan->psf_dx;
    }
  for (i = 0; i < G_N_ELEMENTS (stacks); i++)
    {
      AiryStack *s = stacks[i];

      if (s == NULL)
        continue;
      /* a stack of planes holds this process's part; a reduction's image
       * is at the plane's z when there is one plane */
      if (s == state->out && state->reduce)
        {
          if (s->depth == plan->n_planes)
            airy_stack_set_z (s, plan->z);
        }
      else if (state->part_count > 0 && s->depth == state->part_count)
        airy_stack_set_z (s, plan->z + state->part_first);
      airy_stack_set_provenance (s, plan->spectrum->n, plan->spectrum->wavelengths,
                                 plan->spectrum->weights, json);
    }
  /* each wavelength's stack: the result's geometry at its own output
   * spacing (a PSF run without a sensor: the FF lens's spacing scales
   * with λ), its own wavelength */
  for (i = 0; i < state->n_channels; i++)
    {
      AiryStack *c = state->channels[i];

      airy_stack_copy_metadata (c, state->out);
      if (!plan->imaging && plan->sensor == NULL)
        {
          c->dy = plan->psf_dy_l[i];
          c->dx = plan->psf_dx_l[i];
        }
      airy_stack_set_provenance (c, 1, plan->spectrum->wavelengths + i, plan->spectrum->weights + i, json);
    }
}

guint
_airy_run_state_active_slots (AiryRunState *state,
                              guint        *active)
{
  guint i, n = 0;

  for (i = 0; i < state->n_slots; i++)
    if (state->chunks[i].count > 0)
      active[n++] = i;
  return n;
}

/* ---- the driver ---- */

typedef struct
{
  AiryBackend  *backend;
  AiryRunState *state;
  AiryChunk    *chunk;
  GError       *error;
} Worker;

static gpointer
worker_run (gpointer data)
{
  Worker *w = data;

  if (w->chunk->count > 0
      && !w->backend->ops->execute (w->backend, w->state, w->chunk, &w->error))
    /* stop the other devices early */
    g_cancellable_cancel (w->state->cancellable);
  return NULL;
}

/* Planning shared by the ranks of a run. Rank 0 prepares and computes its
 * first plane: FFTW measures the run's transforms there once. Every rank
 * then agrees (a rank that failed so far stops them all) and gets rank 0's
 * wisdom, so that the others plan those transforms from it: none repeats
 * the measuring, and all make the plans rank 0 made, the plans of a
 * one-process run with the same wisdom. *first_done says that rank 0's
 * first plane is computed (its chunk then starts one later); *prepared
 * that rank 0's prepare ran. Every rank of a run of several calls it
 * exactly once (airy_run does for a rank that failed before). */
static gboolean
share_planning (AiryBackend  *backend,
                AiryRunState *state,
                gboolean     *first_done,
                gboolean     *prepared,
                GError      **error)
{
  AiryComm *comm = state->comm;
  g_autofree char *wisdom = NULL;
  guint64 len = 0;

  *first_done = *prepared = FALSE;
  if (comm->rank == 0 && state->n_slots == 1 && state->tail_from == 0
      && g_str_equal (backend->ops->name, "cpu"))
    {
      AiryChunk one = state->chunks[0];

      *prepared = TRUE;
      one.count = MIN (one.count, 1);
      if ((backend->ops->prepare == NULL || backend->ops->prepare (backend, state, error))
          && one.count == 1 && backend->ops->execute (backend, state, &one, error))
        *first_done = TRUE;
    }
  if (!airy_comm_agree (comm, error))
    return FALSE;
  if (comm->rank == 0)
    {
      wisdom = _airy_fft_export_wisdom ();
      len = strlen (wisdom) + 1;
    }
  if (!airy_comm_broadcast (comm, &len, sizeof len, 0, error))
    return FALSE;
  if (len == 0)
    return TRUE;  /* a transport that does not broadcast: each plans alone */
  if (comm->rank != 0)
    wisdom = g_malloc0 (len);
  if (!airy_comm_broadcast (comm, wisdom, len, 0, error))
    return FALSE;
  wisdom[len - 1] = '\0';
  if (comm->rank != 0 && !_airy_fft_import_wisdom (wisdom))
    g_warning ("rank %u: FFTW could not read rank 0's wisdom; planning anew", comm->rank);
  return TRUE;
}

/* The preview is the CPU's: its planes are written into the host stack of
 * the run (state->out), so the first one can be copied out while the
 * others are computed. A reduction has no planes to show; a GPU run keeps
 * its planes on the device until the end. */
static gboolean
previews (const AiryRunOptions *opts,
          AiryComm             *comm,
          AiryBackend          *backend,
          AiryRunState         *state)
{
  AiryPlan *plan = state->plan;

  return opts->preview != NULL && comm->size == 1 && !state->reduce && state->out != NULL
         && state->tail_from == 0
         && g_str_equal (backend->ops->name, "cpu") && opts->preview_plane < plan->n_planes
         && state->part_first == 0 && state->part_count == plan->n_planes;
}

/* One device: plane k first, handed over as a partial resident, then the
 * planes before it and after it. Each plane is computed once, by the same
 * prepared run (one plan, one pupil). */
static void
run_with_preview (AiryBackend          *backend,
                  AiryRunState         *state,
                  const AiryRunOptions *opts,
                  GError              **error)
{
  AiryPlan *plan = state->plan;
  AiryChunk all = state->chunks[0], one = all, before = all, after = all;
  guint k = opts->preview_plane;
  AiryStack *geometry, *plane;

  one.first = k;
  one.count = 1;
  if (!backend->ops->execute (backend, state, &one, error)
      || g_cancellable_set_error_if_cancelled (state->cancellable, error))
    return;
  /* the whole stack's geometry, the one known plane's values */
  geometry = g_new0 (AiryStack, 1);
  geometry->depth = plan->n_planes;
  geometry->height = plan->out_height;
  geometry->width = plan->out_width;
  geometry->bits = 32;
  geometry->dy = plan->out_dy;
  geometry->dx = plan->out_dx;
  airy_stack_set_z (geometry, plan->z);
  plane = airy_stack_new (1, plan->out_height, plan->out_width);
  memcpy (plane->data, _airy_run_state_out_plane (state, k), airy_stack_plane_size (plane) * sizeof (float));
  plane->dy = plan->out_dy;
  plane->dx = plan->out_dx;
  plane->z0 = plan->z[k];
  opts->preview (airy_resident_new_partial (geometry, plane, k), opts->preview_data);

  before.count = k - all.first;
  after.first = k + 1;
  after.count = all.first + all.count - (k + 1);
  if (before.count > 0 && !backend->ops->execute (backend, state, &before, error))
    return;
  if (after.count > 0)
    backend->ops->execute (backend, state, &after, error);
}

static void
forward_cancel (GCancellable *cancellable, gpointer data)
{
  g_cancellable_cancel (data);
}

static gboolean
choose_devices (AiryBackend          *backend,
                const AiryRunOptions *options,
                GArray               *devices,
                GError              **error)
{
  guint available = backend->ops->n_devices (backend), i;

  if (options->devices == NULL || options->n_devices == 0)
    {
      for (i = 0; i < available; i++)
        g_array_append_val (devices, i);
      return TRUE;
    }
  for (i = 0; i < options->n_devices; i++)
    {
      guint d = options->devices[i], j;

      if (d >= available)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("devices: device %u does not exist; the %s backend has %u (0 … %u)"),
                       d, backend->ops->name, available, available - 1);
          return FALSE;
        }
      for (j = 0; j < devices->len; j++)
        if (g_array_index (devices, guint, j) == d)
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("devices: device %u is listed twice"), d);
            return FALSE;
          }
      g_array_append_val (devices, d);
    }
  return TRUE;
}

/* What a run does on its own process, up to its cross-process step: the
 * plan, the chunks of this process's part over its devices, prepare and
 * execute. FALSE with *error set; the caller agrees with the other ranks
 * either way. */
/* The fallback per op: the first op of the program the backend does not
 * run (supports_op), or ops->len. An op of the field stage gives the whole
 * program to the CPU backend (*backend changes); one of the intensity
 * stage leaves it and the ops after it to the CPU backend, on the planes
 * the backend makes (*tail_from). Either is said in a warning. */
static gboolean
split_program (AiryBackend **backend, AiryPlan *plan, AiryRunOptions *opts, GArray *devices, GPtrArray *warnings,
               guint *tail_from, GError **error)
{
  AiryStages stages;
  AiryBackend *cpu;
  const AiryOp *op;
  guint i;

  *tail_from = 0;
  for (i = 0; i < plan->ops->len; i++)
    if (!_airy_backend_supports_op (*backend, g_ptr_array_index (plan->ops, i)))
      break;
  if (i == plan->ops->len)
    return TRUE;
  op = g_ptr_array_index (plan->ops, i);
  _airy_ops_stages (plan->ops, &stages);
  if ((cpu = airy_backend_choose ("cpu", error)) == NULL)
    return FALSE;
  if (i < stages.n_field)
    {
      if (warnings)
        g_ptr_array_add (warnings, g_strdup_printf (_("backend %s does not run the operation “%s”: the CPU "
                                                      "backend runs this system"),
                                                    (*backend)->ops->name, _airy_op_kind_name (op->kind)));
      /* the CPU's own devices */
      *backend = cpu;
      g_array_set_size (devices, 0);
      opts->devices = NULL;
      opts->n_devices = 0;
      if (!choose_devices (cpu, opts, devices, error))
        return FALSE;
      opts->devices = (guint *) devices->data;
      opts->n_devices = devices->len;
      return TRUE;
    }
  if (warnings)
    g_ptr_array_add (warnings, g_strdup_printf (_("backend %s does not run the operation “%s”: the CPU backend "
                                                  "runs it and the ones after it"),
                                                (*backend)->ops->name, _airy_op_kind_name (op->kind)));
  *tail_from = i;
  return TRUE;
}

/* The fallback's first part: this backend makes the planes' intensities
 * only, ops[0 … tail_from). */
static void
run_state_take_prefix (AiryRunState *state, guint tail_from)
{
  AiryPlan *plan = state->plan;
  guint i;

  g_ptr_array_unref (state->ops);
  state->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) _airy_op_unref);
  for (i = 0; i < tail_from; i++)
    g_ptr_array_add (state->ops, _airy_op_ref (g_ptr_array_index (plan->ops, i)));
  state->tail_from = tail_from;
  state->reduce = FALSE;
  state->out_height = plan->psf_height;
  state->out_width = plan->psf_width;
}

/* one stack per wavelength: a PSF stack on the CPU, in one process */
static gboolean
check_per_wavelength (AiryPlan *plan, const AiryRunOptions *opts, GError **error)
{
  if (plan->reduce || plan->imaging || plan->sensor != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("per-wavelength channels: only a PSF run without a sensor keeps one stack "
                     "per wavelength (microscope runs and sensors sum the wavelengths)"));
      return FALSE;
    }
  if (opts->keep_psf)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("per-wavelength channels: cannot be combined with a kept PSF"));
      return FALSE;
    }
  if (plan->geometry->jones)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("per-wavelength channels: a vectorial (Jones) field sums its components"));
      return FALSE;
    }
  return TRUE;
}

static gboolean
run_local (AirySystem           *system,
           AiryRunOptions       *opts,
           AiryComm             *comm,
           AiryProgressFunc      progress,
           gpointer              user_data,
           GCancellable         *cancellable,
           GPtrArray            *warnings,
           AiryBackend         **backend_out,
           AiryRunState        **state_out,
           guint                *threads_out,
           gboolean             *prepare_called,
           gboolean             *shared,
           GError              **error)
{
  gboolean first_done = FALSE, rank0_prepared = FALSE;
  g_autoptr(GArray) devices = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(AiryPlan) plan = NULL;
  g_autoptr(GError) local = NULL;
  AiryRunState *state;
  AiryBackend *backend;
  guint threads, i, first, part_first, part_count, tail_from;
  gulong handler = 0;

  /* wrong settings in the environment are errors, not defaults in disguise */
  if (!airy_memory_budget_get (NULL, error) || !airy_cpu_devices_from_env (NULL, error))
    return FALSE;
  backend = airy_backend_choose (opts->backend, error);
  if (backend == NULL)
    return FALSE;
  *backend_out = backend;
  if (opts->per_wavelength && !backend->ops->per_wavelength)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("per-wavelength channels: backend %s cannot keep one stack per wavelength, "
                     "use the CPU or the CUDA backend"), backend->ops->name);
      return FALSE;
    }
  if (backend->ops->execute == NULL && backend->ops->prepare == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("backend %s: cannot run systems"), backend->ops->name);
      return FALSE;
    }
  if (comm->size > 1 && opts->resident)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("resident: a result kept by its backend needs a run in one process, got %u ranks"),
                   comm->size);
      return FALSE;
    }
  if (!choose_devices (backend, opts, devices, error))
    return FALSE;
  opts->devices = (guint *) devices->data;
  opts->n_devices = devices->len;

  plan = _airy_plan_new (system, opts, warnings, error);
  if (plan == NULL || !_airy_plan_compile (plan, error))
    return FALSE;
  if (!split_program (&backend, plan, opts, devices, warnings, &tail_from, error))
    return FALSE;
  *backend_out = backend;
  if (!_airy_plan_choose_part (opts, plan->n_planes, &part_first, &part_count, error))
    return FALSE;
  state = *state_out = run_state_new (plan);
  state->comm = comm;
  state->part_first = part_first;
  state->part_count = part_count;
  if (tail_from > 0)
    run_state_take_prefix (state, tail_from);

  /* Shard this process's planes over its devices in contiguous chunks, as
   * asked or evenly. */
  state->n_slots = devices->len;
  state->chunks = g_new0 (AiryChunk, state->n_slots);
  threads = *threads_out = opts->threads ? opts->threads : g_get_num_processors ();
  if (opts->chunks != NULL)
    {
      guint sum = 0;

      for (i = 0; i < state->n_slots; i++)
        sum += opts->chunks[i];
      if (sum != part_count)
        {
          if (comm->size > 1)
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("chunks: must add up to the rank's %u planes, got %u"), part_count, sum);
          else
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("chunks: must add up to the %u planes, got %u"), plan->n_planes, sum);
          return FALSE;
        }
    }
  first = part_first;
  for (i = 0; i < state->n_slots; i++)
    {
      guint count = opts->chunks ? opts->chunks[i]
                                 : part_count / state->n_slots + (i < part_count % state->n_slots);
      state->chunks[i] = (AiryChunk) {
        .slot = i,
        .device = g_array_index (devices, guint, i),
        .first = first,
        .count = count,
        .threads = MAX (1, threads / state->n_slots),
      };
      first += count;
    }

  /* the fallback's first part gives the CPU backend host planes */
  state->want_resident = opts->resident && tail_from == 0;
  state->keep_psf = opts->keep_psf && tail_from == 0;
  state->per_wavelength = opts->per_wavelength;
  if (opts->per_wavelength && !check_per_wavelength (plan, opts, error))
    return FALSE;
  state->progress = progress;
  state->progress_data = user_data;
  state->cancellable = g_cancellable_new ();
  if (cancellable)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (forward_cancel),
                                     g_object_ref (state->cancellable), g_object_unref);

  *prepare_called = TRUE;
  if (comm->size > 1)
    {
      *shared = TRUE;
      if (!share_planning (backend, state, &first_done, &rank0_prepared, error))
        {
          g_cancellable_disconnect (cancellable, handler);
          return FALSE;
        }
      if (first_done)
        {
          state->chunks[0].first++;
          state->chunks[0].count--;
        }
    }
  if (!rank0_prepared && backend->ops->prepare && !backend->ops->prepare (backend, state, error))
    {
      /* what prepare made so far (buffers, cache references) goes too,
       * in airy_run */
      g_cancellable_disconnect (cancellable, handler);
      return FALSE;
    }

  if (state->n_slots == 1 && previews (opts, comm, backend, state))
    run_with_preview (backend, state, opts, &local);
  else if (state->n_slots == 1)
    {
      Worker w = { backend, state, &state->chunks[0], NULL };
      worker_run (&w);
      if (w.error)
        g_propagate_error (&local, w.error);
    }
  else
    {
      g_autofree Worker *workers = g_new0 (Worker, state->n_slots);
      g_autofree GThread **th = g_new0 (GThread *, state->n_slots);

      for (i = 0; i < state->n_slots; i++)
        {
          workers[i] = (Worker) { backend, state, &state->chunks[i], NULL };
          th[i] = g_thread_new ("airy-device", worker_run, &workers[i]);
        }
      for (i = 0; i < state->n_slots; i++)
        {
          g_thread_join (th[i]);
          if (workers[i].error)
            {
              /* keep the first real failure, not a cancellation it caused */
              if (local == NULL || g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                {
                  g_clear_error (&local);
                  local = workers[i].error;
                }
              else
                g_error_free (workers[i].error);
            }
        }
    }
  g_cancellable_disconnect (cancellable, handler);

  if (local == NULL)
    g_cancellable_set_error_if_cancelled (state->cancellable, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

/* What made a result overflow, as far as the inputs tell: the sample's
 * scale for an image, the optics' for a PSF. */
static char *
overflow_cause (AiryPlan *plan)
{
  double sample = 0.0;

  if (!plan->imaging)
    return g_strdup (_("the optics' scale overflows float32 (at most 3.4e+38) or gives an undefined value "
                       "(inf − inf); lower the source's power or the sensor's exposure and gain"));
  if (plan->volume != NULL)
    {
      float lo, hi;

      airy_stack_min_max (plan->volume, &lo, &hi);
      sample = MAX (fabs (lo), fabs (hi));
    }
  else if (plan->volume_stream != NULL)
    sample = _airy_volume_stream_max_abs (plan->volume_stream);
  else
    sample = plan->sample.kind == AIRY_SAMPLE_BEADS ? plan->sample.intensity : plan->sample.value;
  return g_strdup_printf (_("the sample's values (up to %g) overflow float32 (at most 3.4e+38) when imaged; "
                            "scale the sample down"), sample);
}

/* A stack with NaN or inf is no result: refused before anyone writes or
 * shows it, with where the first one is and why. One pass on all cores;
 * a result kept on the GPUs is not seen here. */
static gboolean
check_stack_finite (AiryRunState *state, const AiryStack *stack, gboolean whole, const char *what, GError **error)
{
  g_autofree char *bad = NULL;
  g_autofree char *cause = NULL;

  if (stack == NULL || stack->data == NULL || (!whole && state->part_count == 0))
    return TRUE;
  bad = _airy_stack_describe_nonfinite (stack, whole ? stack->depth : state->part_count,
                                        whole ? 0 : state->part_first, NULL, NULL);
  if (bad == NULL)
    return TRUE;
  cause = overflow_cause (state->plan);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_NOT_FINITE, _("%s has %s: %s"), what, bad, cause);
  return FALSE;
}

static gboolean
check_finite (AiryRunState *state, GError **error)
{
  const AiryStack *out = state->out ? state->out : state->resident ? airy_resident_get_stack (state->resident) : NULL;
  guint l;

  if (!check_stack_finite (state, out, state->reduce, _("the result"), error)
      || !check_stack_finite (state, state->psf, FALSE, _("the PSF stack"), error))
    return FALSE;
  for (l = 0; l < state->n_channels; l++)
    {
      g_autofree char *what = g_strdup_printf (_("the stack of λ = %g µm"), state->plan->spectrum->wavelengths[l]);

      if (!check_stack_finite (state, state->channels[l], FALSE, what, error))
        return FALSE;
    }
  return TRUE;
}

/* An agreement, its time added to *us: there a rank waits for the others. */
static gboolean
timed_agree (AiryComm *comm, gint64 *us, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok = airy_comm_agree (comm, error);

  *us += g_get_monotonic_time () - t0;
  return ok;
}

/* The fallback's second part: the CPU backend runs the whole program on
 * the planes the first backend made (state->input instead of its field
 * stage), so the ops from state->tail_from on are the CPU's, with its
 * reduction across processes. *statep becomes the CPU's run. */
static gboolean
run_tail (AiryRunState **statep, const AiryRunOptions *opts, guint threads, GError **error)
{
  AiryRunState *first = *statep;
  g_autoptr(AiryRunState) state = run_state_new (first->plan);
  AiryBackend *cpu = airy_backend_choose ("cpu", error);
  gboolean ok;

  if (cpu == NULL)
    return FALSE;
  state->comm = first->comm;
  state->part_first = first->part_first;
  state->part_count = first->part_count;
  state->n_slots = 1;
  state->chunks = g_new0 (AiryChunk, 1);
  state->chunks[0] = (AiryChunk) { .first = first->part_first, .count = first->part_count,
                                   .threads = MAX (threads, 1) };
  state->keep_psf = opts->keep_psf;
  state->want_resident = opts->resident;
  state->input = g_steal_pointer (&first->out);
  state->cancellable = g_object_ref (first->cancellable);
  ok = cpu->ops->prepare (cpu, state, error)
       && (state->part_count == 0 || cpu->ops->execute (cpu, state, &state->chunks[0], error))
       && (!state->reduce || cpu->ops->all_reduce (cpu, state, error))
       && cpu->ops->finish (cpu, state, error);
  cpu->ops->release (cpu, state);
  if (!ok)
    return FALSE;
  state->reduce_us += first->reduce_us;
  run_state_free (first);
  *statep = g_steal_pointer (&state);
  return TRUE;
}

AiryResult *
airy_run (AirySystem           *system,
          const AiryRunOptions *options,
          AiryProgressFunc      progress,
          gpointer              user_data,
          GCancellable         *cancellable,
          GError              **error)
{
  static const AiryRunOptions defaults = { 0 };
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(AiryRunState) state = NULL;
  g_autoptr(GError) local = NULL;
  AiryRunOptions opts;
  AiryComm *comm;
  AiryBackend *backend = NULL;
  AiryPlan *plan;
  AiryResult *result;
  gint64 t0 = g_get_monotonic_time (), agree_us = 0;
  guint threads = 0, n_devices = 0;
  gboolean prepared = FALSE, shared = FALSE;
  const AiryModality *modality;

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);

  modality = _airy_modality_lookup (airy_system_get_modality (system));
  if (_airy_modality_combines (modality, system))
    return _airy_modality_run (modality, system, airy_run, options, progress, user_data, cancellable, error);
  opts = options ? *options : defaults;
  comm = opts.comm ? opts.comm : airy_comm_self ();

  run_local (system, &opts, comm, progress, user_data, cancellable, warnings, &backend, &state, &threads,
             &prepared, &shared, &local);
  /* the agreement of share_planning, for a rank that failed before it */
  if (comm->size > 1 && !shared)
    timed_agree (comm, &agree_us, &local);
  /* Every rank learns whether all got here (the lowest failing rank's
   * message otherwise) before the first collective step: a rank that
   * failed never leaves the others waiting in the reduction. */
  plan = state ? state->plan : NULL;
  if (comm->size > 1 && (local == NULL || !comm->agreed) && timed_agree (comm, &agree_us, &local))
    {
      if (state->reduce && backend->ops->all_reduce == NULL)
        g_set_error (&local, AIRY_ERROR, AIRY_ERROR_BACKEND,
                     _("backend %s: cannot reduce across processes"), backend->ops->name);
      if (local == NULL && state->reduce)
        backend->ops->all_reduce (backend, state, &local);
      if (local == NULL && backend->ops->finish)
        backend->ops->finish (backend, state, &local);
      if (state->tail_from > 0 && timed_agree (comm, &agree_us, &local))
        {
          /* every rank's first part is done: the CPU's reduces across them */
          if (backend->ops->release)
            backend->ops->release (backend, state);
          prepared = FALSE;
          n_devices = state->n_slots;
          run_tail (&state, &opts, threads, &local);
        }
      if (local == NULL)
        check_finite (state, &local);
      /* and once more after the steps that may fail on one rank only, so
       * that a failed run is a failed run on every rank */
      timed_agree (comm, &agree_us, &local);
    }
  else if (comm->size == 1)
    {
      if (local == NULL && state->reduce && backend->ops->all_reduce)
        backend->ops->all_reduce (backend, state, &local);
      if (local == NULL && backend->ops->finish)
        backend->ops->finish (backend, state, &local);
      if (local == NULL && state->tail_from > 0)
        {
          if (backend->ops->release)
            backend->ops->release (backend, state);
          prepared = FALSE;
          n_devices = state->n_slots;
          run_tail (&state, &opts, threads, &local);
        }
      if (local == NULL)
        check_finite (state, &local);
    }
  if (prepared && backend->ops->release)
    backend->ops->release (backend, state);
  if (local != NULL)
    {
      if (state)
        g_clear_pointer (&state->resident, airy_resident_unref);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }

  _airy_fft_save_wisdom ();
  result = g_new0 (AiryResult, 1);
  if (state->want_resident)
    result->resident = state->resident ? g_steal_pointer (&state->resident)
                                       : airy_resident_new_host (g_steal_pointer (&state->out));
  else
    result->stack = g_steal_pointer (&state->out);
  result->psf = g_steal_pointer (&state->psf);
  result->n_channels = state->n_channels;
  result->channels = g_steal_pointer (&state->channels);
  state->n_channels = 0;
  result->warnings = g_steal_pointer (&warnings);
  result->hash = airy_system_hash (system);
  result->seconds = (g_get_monotonic_time () - t0) / 1e6;
  result->backend = g_strdup (backend->ops->name);
  result->n_devices = n_devices ? n_devices : state->n_slots;
  result->threads = threads;
  result->ranks = comm->size;
  result->part_first = state->part_first;
  result->part_count = state->part_count;
  result->stack_is_part = !state->reduce;
  result->n_planes = plan->n_planes;
  result->reduce_s = state->reduce_us / 1e6;
  result->own_s = MAX (0.0, result->seconds - (agree_us + state->reduce_us) / 1e6);
  return result;
}
