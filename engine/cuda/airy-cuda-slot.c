#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* A device's slot for one run: its buffers, from one list
 * (airy-cuda-private.h: _airy_slot_buffers) that the budget counts and the
 * allocation walks alike, taken from the last run's kept blocks where the
 * sizes match (no cudaMalloc, no cudaFree per run) and given back after;
 * its cuFFT plans from the pool; the batch sized to what fits. */

/* The slot's shape for the buffer list. */
static AirySlotShape
slot_shape (AiryRunState *state, Slot *s, const AiryChunk *chunk)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  AirySlotShape sh = { 0 };

  sh.h = plan->psf_height;
  sh.w = plan->psf_width;
  sh.entries = run->pupil ? s->n_lambda : 0;
  sh.channels = state->n_channels;
  sh.max_field = run->pupil ? 0 : plan->compiled->max_size;
  sh.count = chunk->count;
  sh.keep = !_airy_cuda_run_reduces (run);
  sh.out_h = state->out_height;
  sh.out_w = state->out_width;
  sh.sum = run->sum_first;
  sh.convolve = run->stages.convolve != NULL;
  sh.varying = sh.convolve && run->conv->kind != AIRY_SAMPLE_CONSTANT;
  if (sh.convolve)
    {
      sh.pad_h = run->conv->pad_height;
      sh.pad_w = run->conv->pad_width;
      sh.vol_h = run->conv->vol_height;
      sh.vol_w = run->conv->vol_width;
    }
  return sh;
}

static void **
slot_buffer (Slot *s, AirySlotBuffer k)
{
  switch (k)
    {
    case AIRY_SLOT_INTEN:  return (void **) &s->inten;
    case AIRY_SLOT_ZBUF:   return (void **) &s->zbuf;
    case AIRY_SLOT_FIELD:  return (void **) &s->field;
    case AIRY_SLOT_FIELD2: return (void **) &s->field2;
    case AIRY_SLOT_CHAN:   return (void **) &s->chan;
    case AIRY_SLOT_GA:     return (void **) &s->ga;
    case AIRY_SLOT_GB:     return (void **) &s->gb;
    case AIRY_SLOT_OUT:    return (void **) &s->out;
    case AIRY_SLOT_IMG:    return (void **) &s->img;
    case AIRY_SLOT_PAD:    return (void **) &s->pad;
    case AIRY_SLOT_SPEC:   return (void **) &s->spec;
    case AIRY_SLOT_ACC:    return (void **) &s->acc;
    case AIRY_SLOT_VOL:    return (void **) &s->vol;
    case AIRY_SLOT_VSPEC:  return (void **) &s->vspec;
    case AIRY_SLOT_VCONST: return (void **) &s->vconst;
    default:               g_assert_not_reached ();
    }
  return NULL;
}

/* Every cuFFT plan a slot uses for batches of `batch` planes (the last one
 * of `rest`). */
static void
slot_plan_specs (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs)
{
  CudaRun *run = state->backend_data;

  if (run->pupil)
    _airy_cuda_psf_specs (state, s, batch, rest, specs);
  else
    _airy_cuda_ops_specs (state, s, specs);
  if (run->stages.convolve)
    _airy_cuda_imaging_specs (state, s, batch, rest, specs);
}

/* The list's buffers for batches of s->batch planes: kept blocks of the
 * same sizes first (the others of this device are freed before anything
 * new is allocated), *reused the bytes that were kept. */
static gboolean
slot_buffers_take (Slot *s, const AirySlotBytes *list, guint64 *reused, GError **error)
{
  CudaBackend *self = s->backend;
  guint64 sizes[AIRY_SLOT_N_BUFFERS];
  gboolean ok = TRUE;
  guint k;

  for (k = 0; k < AIRY_SLOT_N_BUFFERS; k++)
    sizes[k] = s->bytes[k] = _airy_slot_buffer_bytes (&list[k], s->batch);
  *reused = 0;
  g_mutex_lock (&self->lock);
  _airy_blocks_keep (self->blocks, s->device, sizes, AIRY_SLOT_N_BUFFERS, &_airy_cuda_block_ops, self);
  for (k = 0; ok && k < AIRY_SLOT_N_BUFFERS; k++)
    {
      gboolean kept = FALSE;

      if (sizes[k] == 0)
        continue;
      ok = CHECK (_airy_blocks_take (self->blocks, s->device, sizes[k], &_airy_cuda_block_ops, self,
                                     slot_buffer (s, k), &kept), error);
      if (ok && kept)
        *reused += sizes[k];
    }
  g_mutex_unlock (&self->lock);
  return ok && CHECK (cudaSetDevice (s->device), error);
}

gboolean
_airy_cuda_slot_alloc (AiryRunState *state, Slot *s, const AiryChunk *chunk, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  CudaBackend *self = run->backend;
  AirySlotShape shape = slot_shape (state, s, chunk);
  AirySlotBytes list[AIRY_SLOT_N_BUFFERS];
  guint64 fixed, per_plane, budget, kept = 0, reused = 0;
  gsize free_b = 0, total = 0;
  AiryBatchVerdict verdict;
  gboolean room_made = FALSE;

  if (!_airy_cuda_device_budget (&budget, error))
    return FALSE;
  if (!run->pupil)
    {
      s->n_ops = run->n_ops;
      s->op_factor = g_new0 (void *, s->n_ops);
      s->op_phase = g_new0 (double *, s->n_ops);
      s->op_scale = g_new0 (float2 *, s->n_ops);
      s->op_geom = g_new0 (double *, s->n_ops);
      s->op_plan = g_new0 (cufftHandle, s->n_ops);
    }
  s->taken = g_ptr_array_new_with_free_func ((GDestroyNotify) _airy_cuda_taken_free);

  /* pooled plans this run cannot use go before the free memory is measured */
  {
    g_autoptr(GArray) specs = g_array_new (FALSE, FALSE, sizeof (PlanSpec));
    g_autoptr(GPtrArray) keys = NULL;
    guint want = MIN (MAX_BATCH, chunk->count);

    slot_plan_specs (state, s, want, chunk->count % want, specs);
    keys = _airy_cuda_spec_keys (s->device, specs);
    g_mutex_lock (&self->lock);
    _airy_cuda_plans_destroy (self, s->device, keys);
    g_mutex_unlock (&self->lock);
  }

  /* budget the device before allocating: the list's fixed buffers, the
   * pupil's or the field ops' data, then as many planes per batch as fit;
   * the blocks kept from the last run count as free (taken or freed) */
  _airy_slot_buffers (&shape, list);
  _airy_slot_budget (&shape, &fixed, &per_plane);
  if (run->pupil)
    fixed += run->pupil->dF[s->device] ? 0
             : s->n_lambda * (run->pupil->nband * (sizeof (float2) + sizeof (double)) + sizeof (float));
  else
    fixed += _airy_ops_bytes (plan->compiled);
  for (;;)
    {
      if (!CHECK (cudaMemGetInfo (&free_b, &total), error))
        return FALSE;
      g_mutex_lock (&self->lock);
      kept = _airy_blocks_held (self->blocks, s->device);
      g_mutex_unlock (&self->lock);
      verdict = _airy_device_batch (_airy_device_usable (free_b + kept, budget, _airy_cuda_held_get (self, s->device)),
                                    fixed, per_plane, chunk->count, MAX_BATCH, room_made, &s->batch);
      if (verdict != AIRY_BATCH_MAKE_ROOM)
        break;
      /* short of a full batch: the pooled plans and kept blocks go, and
       * results kept for the viewer move to host memory (the viewer keeps
       * showing them) */
      g_mutex_lock (&self->lock);
      _airy_cuda_plans_destroy (self, s->device, NULL);
      _airy_cuda_residents_spill (self, s->device);
      _airy_blocks_trim (self->blocks, s->device, &_airy_cuda_block_ops, self);
      g_mutex_unlock (&self->lock);
      room_made = TRUE;
      /* that went through other devices too */
      if (!CHECK (cudaSetDevice (s->device), error))
        return FALSE;
    }
  if (verdict == AIRY_BATCH_TOO_BIG)
    {
      g_autofree char *need = airy_format_bytes (fixed + per_plane);
      g_autofree char *have = airy_format_bytes (_airy_device_usable (free_b + kept, budget,
                                                                      _airy_cuda_held_get (self, s->device)));
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("grid.shape: device %d needs at least %s for this run, %s is free"), s->device, need, have);
      return FALSE;
    }
  s->rest = chunk->count % s->batch;

  if (!slot_buffers_take (s, list, &reused, error)
      || (s->img && !CHECK (cudaMemsetAsync (s->img, 0, s->bytes[AIRY_SLOT_IMG], s->stream), error)))
    return FALSE;
  if (run->pupil ? !_airy_cuda_psf_alloc (state, s, error) : !_airy_cuda_ops_alloc (state, s, error))
    return FALSE;
  if (run->stages.convolve && !_airy_cuda_imaging_alloc (state, s, error))
    return FALSE;
  {
    g_autoptr(GArray) specs = g_array_new (FALSE, FALSE, sizeof (PlanSpec));

    slot_plan_specs (state, s, s->batch, s->rest, specs);
    if (!_airy_cuda_slot_plans (s, specs, error))
      return FALSE;
  }
  if (s->transfers && !_airy_cuda_dl_init (self, s, error))
    return FALSE;

  /* what this run holds on the device, for `airy-sim bench`: the memory
   * used now less what was used before it, the kept blocks not counted
   * as used before (they are this run's buffers or were freed) */
  {
    size_t now = 0;

    if (!CHECK (cudaMemGetInfo (&now, &total), error))
      return FALSE;
    g_mutex_lock (&self->lock);
    if (free_b + kept > now)
      self->peak[s->device] = MAX (self->peak[s->device], (guint64) (free_b + kept - now));
    g_mutex_unlock (&self->lock);
    g_debug ("device %d: batch %u, %" G_GUINT64_FORMAT " of the buffers' bytes kept from the last run", s->device,
             s->batch, reused);
  }
  return TRUE;
}

void
_airy_cuda_slot_free (Slot *s)
{
  CudaBackend *self = s->backend;
  guint i, k;

  cudaSetDevice (s->device);
  if (s->stream)
    cudaStreamSynchronize (s->stream);
  _airy_cuda_dl_free (self, &s->dl);
  /* the list's buffers are kept for the next run (the stack's planes too,
   * unless a resident result took them) */
  g_mutex_lock (&self->lock);
  for (k = 0; k < AIRY_SLOT_N_BUFFERS; k++)
    {
      void **p = slot_buffer (s, k);

      _airy_blocks_give (self->blocks, s->device, *p, s->bytes[k]);
      *p = NULL;
    }
  g_mutex_unlock (&self->lock);
  for (i = 0; i < s->n_ops; i++)
    {
      cudaFree (s->op_factor[i]);
      cudaFree (s->op_phase[i]);
      cudaFree (s->op_scale[i]);
      cudaFree (s->op_geom[i]);
    }
  g_free (s->op_factor);
  g_free (s->op_phase);
  g_free (s->op_scale);
  g_free (s->op_geom);
  g_free (s->op_plan);
  cudaFree (s->sums);
  cudaFree (s->weights);
  _airy_cuda_plans_return (s);
  cudaFree (s->work);
  if (s->stream)
    cudaStreamDestroy (s->stream);
  /* nothing of this slot's failures may reach the thread's next run */
  cudaGetLastError ();
}
