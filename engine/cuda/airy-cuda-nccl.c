#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* The reduction across devices: one NCCL all-reduce of the sums of the
 * slots with planes, with communicators made once per device set; over
 * several ranks one communicator spans every rank's devices. */

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

/* ---- across ranks (airy-cuda-private.h) ---- */

G_STATIC_ASSERT (sizeof (ncclUniqueId) == AIRY_NCCL_ID_BYTES);

static int
rank_unique_id (guint8 *id, gpointer user_data)
{
  return (int) ncclGetUniqueId ((ncclUniqueId *) id);
}

static int
rank_group (gboolean start, gpointer user_data)
{
  return (int) (start ? ncclGroupStart () : ncclGroupEnd ());
}

static int
rank_init (gpointer *comm, int nranks, const guint8 *id, int rank, int device, gpointer user_data)
{
  ncclUniqueId uid;
  cudaError_t e = cudaSetDevice (device);

  if (e != cudaSuccess)
    return (int) ncclUnhandledCudaError;
  memcpy (&uid, id, sizeof uid);
  return (int) ncclCommInitRank ((ncclComm_t *) comm, nranks, uid, rank);
}

static const AiryRankCommOps rank_comm_ops = { rank_unique_id, rank_group, rank_init, comm_destroy };

/* ---- waiting for the all-reduce (airy-cuda-private.h) ---- */

typedef struct
{
  CudaRun  *run;
  gpointer *comms;
} Wait;

static int
wait_query (int i, gpointer user_data)
{
  Wait *w = user_data;
  Slot *s = &w->run->slots[w->run->active[i]];
  cudaError_t e = cudaSetDevice (s->device);

  if (e == cudaSuccess)
    e = cudaStreamQuery (s->stream);
  if (e == cudaErrorNotReady)
    {
      cudaGetLastError ();
      return 1;
    }
  return (int) e;
}

static int
wait_async_error (int i, gpointer user_data)
{
  Wait *w = user_data;
  ncclResult_t state = ncclSuccess, r = ncclCommGetAsyncError (w->comms[i], &state);

  return (int) (r != ncclSuccess ? r : state);
}

static gint64
wait_now (gpointer user_data)
{
  return g_get_monotonic_time ();
}

static void
wait_pause (gpointer user_data)
{
  g_usleep (100);
}

static const AiryCollectiveWaitOps wait_ops = { wait_query, wait_async_error, wait_now, wait_pause };

/* The all-reduce on every device with planes, in one group, then polled to
 * its end within AIRY_NCCL_TIMEOUT (never a bare stream sync: a peer that
 * stopped would hang it). */
static gboolean
all_reduce_on (CudaRun *run, gpointer *comms, gsize count, GError **error)
{
  Wait w = { run, comms };
  gint64 timeout_us;
  gboolean ok;
  guint i;

  if (!_airy_collective_timeout (&timeout_us, error))
    return FALSE;
  ok = NCCL (ncclGroupStart (), error);
  for (i = 0; ok && i < run->n_active; i++)
    {
      Slot *s = &run->slots[run->active[i]];
      void *buf = run->sum_first ? (void *) s->img : (void *) s->acc;

      ok = CHECK (cudaSetDevice (s->device), error)
           && NCCL (ncclAllReduce (buf, buf, count, ncclFloat, ncclSum, comms[i], s->stream), error);
    }
  ok = NCCL (ncclGroupEnd (), ok ? error : NULL) && ok;
  return ok && _airy_collective_wait (&wait_ops, &_airy_cuda_gpu_hooks, (int) run->n_active, timeout_us, &w, error);
}

/* Over several ranks: one communicator over the devices with planes of
 * every rank (made for this run, from an id rank 0 broadcasts), one
 * all-reduce on the devices, no host copy. */
static gboolean
all_reduce_ranks (AiryRunState *state, CudaRun *run, gsize count, GError **error)
{
  g_autofree int *devices = g_new (int, run->n_active);
  g_autofree gpointer *comms = g_new0 (gpointer, run->n_active);
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok;
  guint i;

  for (i = 0; i < run->n_active; i++)
    devices[i] = run->slots[run->active[i]].device;
  if (!_airy_rank_comms_init (state->comm, devices, (int) run->n_active, comms, &rank_comm_ops,
                              &_airy_cuda_gpu_hooks, NULL, error))
    return FALSE;
  ok = all_reduce_on (run, comms, count, error);
  for (i = 0; i < run->n_active; i++)
    (ok ? comm_destroy : comm_abort) (comms[i], NULL);
  state->reduce_us += g_get_monotonic_time () - t0;
  return ok;
}

/* One all-reduce of the sums of the slots with planes (one device: none),
 * with NCCL communicators made once per device set and kept; after a
 * failure they are aborted and made anew by the next reduction. The sums:
 * Σ_z I (SUM, and CONVOLVE of a sample constant in z: the smaller buffer)
 * or Σ_z P̂·V̂. */
gboolean
_airy_cuda_all_reduce (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaBackend *self = backend->priv;
  CudaRun *run = state->backend_data;
  gsize count = run->sum_first ? (gsize) plan->psf_height * plan->psf_width
                               : 2 * (gsize) run->conv->pad_height * (run->conv->pad_width / 2 + 1);
  g_autofree int *devices = g_new (int, run->n_active);
  gboolean ok;
  guint i;

  if (state->comm->size > 1)
    return all_reduce_ranks (state, run, count, error);
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
  ok = all_reduce_on (run, self->comms.comms, count, error);
  if (!ok)
    _airy_comms_failed (&self->comms, &_airy_cuda_comm_ops, NULL);
  g_mutex_unlock (&self->comm_lock);
  return ok;
}
