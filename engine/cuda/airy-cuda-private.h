/* The CUDA backend's bookkeeping that needs no GPU: the check path of
 * every CUDA, cuFFT and NCCL call, the NCCL communicator set, the cache of
 * CUDA–GL registrations and the device budget. Plain C (no CUDA headers),
 * static inline, so that the CPU tests (tests/test-backend.c) run exactly
 * this code with fake CUDA functions. */
#pragma once

#include <string.h>
#include <glib.h>

#include "airy-comm.h"
#include "airy-error.h"

G_BEGIN_DECLS

/* ---- checks ---- */

typedef enum
{
  AIRY_GPU_CUDA,
  AIRY_GPU_CUFFT,
  AIRY_GPU_NCCL,
} AiryGpuApi;

/* The codes for "out of memory" (the backend asserts they match the
 * headers): cudaErrorMemoryAllocation, CUFFT_ALLOC_FAILED. */
#define AIRY_GPU_CUDA_OUT_OF_MEMORY  2
#define AIRY_GPU_CUFFT_ALLOC_FAILED  2

typedef struct
{
  const char *(*error_string) (AiryGpuApi api, int status);
  /* cudaGetLastError(): reads and resets the calling thread's last error */
  int         (*clear)        (void);
} AiryGpuHooks;

/* A failed call becomes a GError naming the call, the file and the line
 * (the first failure wins: a later one does not overwrite it); running out
 * of memory is AIRY_ERROR_BUDGET. A failed CUDA call (or a cuFFT or NCCL
 * call failing inside CUDA) also leaves its code as the thread's last
 * error, which every later kernel launch on this thread would report: it
 * is cleared here, so that the next run does not fail at its first launch
 * with this run's "out of memory". */
static inline gboolean
_airy_gpu_check (const AiryGpuHooks *hooks,
                 int                 status,
                 const char         *expr,
                 const char         *file,
                 int                 line,
                 AiryGpuApi          api,
                 GError            **error)
{
  gboolean oom;

  if (status == 0)
    return TRUE;
  hooks->clear ();
  if (error && *error)
    return FALSE;
  oom = (api == AIRY_GPU_CUDA && status == AIRY_GPU_CUDA_OUT_OF_MEMORY)
        || (api == AIRY_GPU_CUFFT && status == AIRY_GPU_CUFFT_ALLOC_FAILED);
  g_set_error (error, AIRY_ERROR, oom ? AIRY_ERROR_BUDGET : AIRY_ERROR_BACKEND,
               "%s failed: %s (%d) (%s:%d)", expr, hooks->error_string (api, status), status, file, line);
  return FALSE;
}

/* ---- NCCL communicators ---- */

/* One communicator per device of the last reduction's device set (the
 * devices whose slots have planes, so never an empty one), made once and
 * kept (NCCL's examples). */
typedef struct
{
  int       n;
  int      *devices;
  gpointer *comms;
} AiryCommSet;

typedef struct
{
  /* ncclCommInitAll: 0 on success */
  int  (*init_all) (gpointer *comms, int n, const int *devices, gpointer user_data);
  void (*destroy)  (gpointer comm, gpointer user_data);
  void (*abort)    (gpointer comm, gpointer user_data);
} AiryCommOps;

static inline void
_airy_comms_clear (AiryCommSet *set, const AiryCommOps *ops, gpointer user_data, gboolean abort_them)
{
  int i;

  for (i = 0; i < set->n; i++)
    if (set->comms[i])
      (abort_them ? ops->abort : ops->destroy) (set->comms[i], user_data);
  g_clear_pointer (&set->comms, g_free);
  g_clear_pointer (&set->devices, g_free);
  set->n = 0;
}

/* The communicators for these devices (n ≥ 2, all different): the kept
 * ones for the same set, else new ones. Returns the init status (0: ok). */
static inline int
_airy_comms_get (AiryCommSet *set, const int *devices, int n, const AiryCommOps *ops, gpointer user_data)
{
  int status;

  g_return_val_if_fail (n >= 2, -1);
  if (set->n == n && memcmp (set->devices, devices, n * sizeof (int)) == 0)
    return 0;
  _airy_comms_clear (set, ops, user_data, FALSE);
  set->comms = g_new0 (gpointer, n);
  status = ops->init_all (set->comms, n, devices, user_data);
  if (status != 0)
    {
      /* a partial init leaves nothing usable behind */
      g_clear_pointer (&set->comms, g_free);
      return status;
    }
  set->devices = g_memdup2 (devices, n * sizeof (int));
  set->n = n;
  return 0;
}

/* After a failed collective the communicators may be broken (the next
 * collective on them can hang): abort them, so that the next reduction
 * makes new ones. */
static inline void
_airy_comms_failed (AiryCommSet *set, const AiryCommOps *ops, gpointer user_data)
{
  _airy_comms_clear (set, ops, user_data, TRUE);
}

/* ---- NCCL across ranks ----
 *
 * Over several processes (airy-comm.h) one NCCL communicator spans the
 * devices of every rank: device i of rank r is NCCL rank first_r + i, with
 * first_r the devices of the ranks before it (one all-reduce of the
 * counts); rank 0 makes the ncclUniqueId, the engine's communicator
 * broadcasts it (with rank 0's status, so that a failure there stops every
 * rank), and each device joins with ncclCommInitRank inside one group.
 * The sums then stay on the devices. */

#define AIRY_NCCL_ID_BYTES 128   /* NCCL_UNIQUE_ID_BYTES, asserted by the backend */

typedef struct
{
  int  (*unique_id) (guint8 *id, gpointer user_data);            /* ncclGetUniqueId */
  int  (*group)     (gboolean start, gpointer user_data);        /* ncclGroupStart / End */
  int  (*init_rank) (gpointer *comm, int nranks, const guint8 *id, int rank, int device,
                     gpointer user_data);                         /* cudaSetDevice + ncclCommInitRank */
  void (*destroy)   (gpointer comm, gpointer user_data);          /* ncclCommDestroy */
} AiryRankCommOps;

/* Where this process's n devices sit among all ranks' (collective). */
static inline gboolean
_airy_rank_comms_layout (AiryComm *comm, int n, int *first, int *total, GError **error)
{
  float *counts = g_new0 (float, comm->size);
  gboolean ok;
  guint r;

  /* device counts are small whole numbers: exact in a float */
  counts[comm->rank] = (float) n;
  ok = airy_comm_all_reduce (comm, counts, comm->size, AIRY_COMM_SUM, error);
  *first = *total = 0;
  for (r = 0; ok && r < comm->size; r++)
    {
      if (r < comm->rank)
        *first += (int) counts[r];
      *total += (int) counts[r];
    }
  g_free (counts);
  return ok;
}

/* comms[0 … n) for this process's devices in one communicator over every
 * rank's (collective over comm); FALSE with the failed call's error. */
static inline gboolean
_airy_rank_comms_init (AiryComm              *comm,
                       const int             *devices,
                       int                    n,
                       gpointer              *comms,
                       const AiryRankCommOps *ops,
                       const AiryGpuHooks    *hooks,
                       gpointer               user_data,
                       GError               **error)
{
  guint8 msg[4 + AIRY_NCCL_ID_BYTES];   /* rank 0's status, then the id */
  gint32 status = 0;
  int first, total, i, st;

  if (!_airy_rank_comms_layout (comm, n, &first, &total, error))
    return FALSE;
  memset (msg, 0, sizeof msg);
  if (comm->rank == 0)
    {
      status = ops->unique_id (msg + 4, user_data);
      memcpy (msg, &status, 4);
    }
  if (!airy_comm_broadcast (comm, msg, sizeof msg, 0, error))
    return FALSE;
  memcpy (&status, msg, 4);
  if (status != 0)
    return _airy_gpu_check (hooks, status, "ncclGetUniqueId (&id) on rank 0", __FILE__, __LINE__, AIRY_GPU_NCCL,
                            error);
  st = ops->group (TRUE, user_data);
  for (i = 0; st == 0 && i < n; i++)
    st = ops->init_rank (&comms[i], total, msg + 4, first + i, devices[i], user_data);
  /* the group ends also after a failure inside it */
  if (ops->group (FALSE, user_data) != 0 && st == 0)
    st = -1;
  if (st != 0)
    {
      for (i = 0; i < n; i++)
        if (comms[i])
          {
            ops->destroy (comms[i], user_data);
            comms[i] = NULL;
          }
      return _airy_gpu_check (hooks, st, "ncclCommInitRank (&comm, nranks, id, rank)", __FILE__, __LINE__,
                              AIRY_GPU_NCCL, error);
    }
  return TRUE;
}

/* ---- CUDA–GL registrations ---- */

/* A registration is valid for one texture of one GL context, as it was
 * specified (size, generation) and registered on one device: any change
 * needs a new one, and a context going away takes its registrations. */
typedef struct
{
  gpointer context;
  guint    texture;
  guint    generation;
  guint    width, height;
  int      device;
  gpointer resource;
} AiryGlRegistration;

typedef struct
{
  /* cudaGraphicsGLRegisterImage on `device` (current): 0 on success */
  int  (*register_image) (const AiryGlRegistration *key, gpointer *resource, gpointer user_data);
  void (*unregister)     (gpointer resource, gpointer user_data);
} AiryGlRegistrationOps;

static inline void
_airy_gl_registration_free (AiryGlRegistration *reg)
{
  g_free (reg);
}

/* The registration of key's texture, made (or remade) as needed; NULL with
 * *status set when registering fails. cache holds AiryGlRegistration*. */
static inline AiryGlRegistration *
_airy_gl_registration_get (GPtrArray                   *cache,
                           const AiryGlRegistration    *key,
                           const AiryGlRegistrationOps *ops,
                           gpointer                     user_data,
                           int                         *status)
{
  AiryGlRegistration *reg;
  guint i;

  *status = 0;
  for (i = 0; i < cache->len; i++)
    {
      reg = g_ptr_array_index (cache, i);
      if (reg->context != key->context || reg->texture != key->texture)
        continue;
      if (reg->generation == key->generation && reg->width == key->width && reg->height == key->height
          && reg->device == key->device)
        return reg;
      /* re-specified, resized or another device: the old one is stale */
      ops->unregister (reg->resource, user_data);
      g_ptr_array_remove_index_fast (cache, i);
      _airy_gl_registration_free (reg);
      break;
    }
  reg = g_new (AiryGlRegistration, 1);
  *reg = *key;
  reg->resource = NULL;
  *status = ops->register_image (reg, &reg->resource, user_data);
  if (*status != 0)
    {
      _airy_gl_registration_free (reg);
      return NULL;
    }
  g_ptr_array_add (cache, reg);
  return reg;
}

/* Drops every registration of one context (NULL: all). */
static inline void
_airy_gl_registrations_release (GPtrArray                   *cache,
                                gpointer                     context,
                                const AiryGlRegistrationOps *ops,
                                gpointer                     user_data)
{
  guint i = 0;

  while (i < cache->len)
    {
      AiryGlRegistration *reg = g_ptr_array_index (cache, i);

      if (context != NULL && reg->context != context)
        {
          i++;
          continue;
        }
      ops->unregister (reg->resource, user_data);
      g_ptr_array_remove_index_fast (cache, i);
      _airy_gl_registration_free (reg);
    }
}

/* ---- device budget ---- */

/* What a run may allocate on a device: the free memory, but within a
 * forced budget (AIRY_DEVICE_MEMORY_BUDGET, 0: none) the backend's own
 * holdings (results kept for the viewer, pupil copies) count as used. */
static inline guint64
_airy_device_usable (guint64 free_bytes, guint64 budget, guint64 held)
{
  if (budget == 0)
    return free_bytes;
  return MIN (free_bytes, budget > held ? budget - held : 0);
}

typedef enum
{
  AIRY_BATCH_OK,           /* *batch planes per batch */
  AIRY_BATCH_MAKE_ROOM,    /* less than a full batch fits: free what the backend keeps, then ask again */
  AIRY_BATCH_TOO_BIG,      /* not even one plane fits */
} AiryBatchVerdict;

/* Planes per batch for `count` planes (at most max_batch): fixed bytes
 * once, per_plane bytes for each plane of a batch, 90 % of usable. */
static inline AiryBatchVerdict
_airy_device_batch (guint64 usable, guint64 fixed, guint64 per_plane, guint count, guint max_batch,
                    gboolean room_made, guint *batch)
{
  guint64 room = (guint64) (usable * 0.9);
  guint want = MAX (1, MIN (max_batch, count));

  *batch = 0;
  if (fixed + per_plane * want > room && !room_made)
    return AIRY_BATCH_MAKE_ROOM;
  if (fixed + per_plane > room)
    return AIRY_BATCH_TOO_BIG;
  *batch = (guint) MIN ((guint64) want, (room - fixed) / MAX (per_plane, 1));
  return AIRY_BATCH_OK;
}

G_END_DECLS
