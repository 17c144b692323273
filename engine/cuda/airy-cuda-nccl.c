#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* The reduction across devices: one NCCL all-reduce of the sums of the
 * slots with planes, with communicators made once per device set. */

/* ---- NCCL through airy-cuda-private.h ---- */

static int
comm_init_all (gpointer *comms, int n, const int *devices, gpointer user_data)
{
  return (int) ncclCommInitAll ((ncclComm_t *) comms, n, devices);
}

static void
comm_destroy (gpointer comm, gpointer user_data)
{
  ncclCommDestroy (comm);
}

static void
comm_abort (gpointer comm, gpointer user_data)
{
  ncclCommAbort (comm);
}

const AiryCommOps _airy_cuda_comm_ops = { comm_init_all, comm_destroy, comm_abort };

/* One all-reduce of the sums of the slots with planes (one device: none),
 * with NCCL communicators made once per device set and kept; after a
 * failure they are aborted and made anew by the next reduction. */
gboolean
_airy_cuda_all_reduce (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaBackend *self = backend->priv;
  CudaRun *run = state->backend_data;
  gboolean imaging = run->stages.convolve != NULL;
  gsize count = imaging ? 2 * (gsize) plan->pad_height * (plan->pad_width / 2 + 1)
                        : (gsize) plan->psf_height * plan->psf_width;
  g_autofree int *devices = g_new (int, run->n_active);
  gboolean ok = TRUE;
  guint i;

  if (run->n_active < 2)
    return TRUE;
  for (i = 0; i < run->n_active; i++)
    devices[i] = run->slots[run->active[i]].device;
  g_mutex_lock (&self->comm_lock);
  if (!NCCL (_airy_comms_get (&self->comms, devices, (int) run->n_active, &_airy_cuda_comm_ops, NULL), error))
    {
      g_mutex_unlock (&self->comm_lock);
      return FALSE;
    }
  ok = NCCL (ncclGroupStart (), error);
  for (i = 0; ok && i < run->n_active; i++)
    {
      Slot *s = &run->slots[run->active[i]];
      void *buf = imaging ? (void *) s->acc : (void *) s->img;

      ok = CHECK (cudaSetDevice (s->device), error)
           && NCCL (ncclAllReduce (buf, buf, count, ncclFloat, ncclSum, self->comms.comms[i], s->stream), error);
    }
  ok = NCCL (ncclGroupEnd (), ok ? error : NULL) && ok;
  for (i = 0; ok && i < run->n_active; i++)
    ok = CHECK (cudaSetDevice (run->slots[run->active[i]].device), error)
         && CHECK (cudaStreamSynchronize (run->slots[run->active[i]].stream), error);
  if (!ok)
    _airy_comms_failed (&self->comms, &_airy_cuda_comm_ops, NULL);
  g_mutex_unlock (&self->comm_lock);
  return ok;
}
