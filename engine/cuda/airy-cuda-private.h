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

/* At the entry of a call that other code may have used this thread for
 * before (the fit's new, set_data and pass): an error an unchecked call
 * left behind (a cleanup's cudaFree, a query) is read and dropped, so that
 * this call's first kernel launch, which reports the thread's last error,
 * does not fail with it. Returns the code dropped (0: none). */
static inline int
_airy_gpu_enter (const AiryGpuHooks *hooks)
{
  return hooks->clear ();
}

/* ---- cuFFT plans past 2³¹ elements ---- */

/* The elements a batched plan spans (rank 1 or 2 of n[0] × n[1], batch
 * transforms; embedded: element stride and transform distance; else
 * contiguous): computed in 64 bits. cuFFT's 32-bit cufftMakePlanMany
 * fails once this passes 2³¹ − 1 (8 planes of 16384², or a column pass of
 * 16384² × 8 planes); the backend plans with cufftMakePlanMany64, whose
 * sizes are 64-bit, and cuFFT still picks 32-bit kernels where they do. */
static inline guint64
_airy_fft_span (int rank, const gint64 n[2], gboolean embed, gint64 stride, gint64 dist, gint64 batch)
{
  gint64 elems = rank == 2 ? n[0] * n[1] : n[0];

  if (!embed)
    return (guint64) (elems * batch);
  return (guint64) ((elems - 1) * stride + (batch - 1) * dist + 1);
}

#define AIRY_FFT_SPAN_32 G_GUINT64_CONSTANT (2147483647)

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

/* ---- waiting for a collective ----
 *
 * A plain cudaStreamSynchronize after an all-reduce waits forever when a
 * peer stopped (a device lost, a rank killed): instead each device's
 * stream is polled together with its communicator's asynchronous error,
 * up to a deadline; FALSE names the error or the timeout, and the caller
 * aborts the communicators (ncclCommAbort), so the next reduction makes
 * new ones. */

#define AIRY_NCCL_IN_PROGRESS 7   /* ncclInProgress, asserted by the backend */

typedef struct
{
  /* device i's stream: 0 done, 1 still running, else its CUDA error */
  int    (*query)       (int i, gpointer user_data);
  /* device i's communicator: ncclCommGetAsyncError's state (0, in progress, or the error) */
  int    (*async_error) (int i, gpointer user_data);
  gint64 (*now)         (gpointer user_data);    /* µs, monotonic */
  void   (*pause)       (gpointer user_data);    /* between two polls */
} AiryCollectiveWaitOps;

static inline gboolean
_airy_collective_wait (const AiryCollectiveWaitOps *ops, const AiryGpuHooks *hooks, int n, gint64 timeout_us,
                       gpointer user_data, GError **error)
{
  gint64 deadline = ops->now (user_data) + timeout_us;
  gboolean *done = g_new0 (gboolean, MAX (n, 1));
  gboolean ok = TRUE;
  int left = n, i, st;

  while (ok && left > 0)
    {
      for (i = 0; ok && i < n; i++)
        {
          if (done[i])
            continue;
          st = ops->async_error (i, user_data);
          if (st != 0 && st != AIRY_NCCL_IN_PROGRESS)
            {
              ok = _airy_gpu_check (hooks, st, "ncclCommGetAsyncError (comm, &state)", __FILE__, __LINE__,
                                    AIRY_GPU_NCCL, error);
              break;
            }
          st = ops->query (i, user_data);
          if (st == 0)
            {
              done[i] = TRUE;
              left--;
            }
          else if (st != 1)
            ok = _airy_gpu_check (hooks, st, "cudaStreamQuery (stream)", __FILE__, __LINE__, AIRY_GPU_CUDA, error);
        }
      if (!ok || left == 0)
        break;
      if (ops->now (user_data) >= deadline)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                       "NCCL all-reduce: %d of %d devices not done after %g s (a device "
                       "or a rank stopped taking part; AIRY_NCCL_TIMEOUT sets the limit)",
                       left, n, timeout_us / 1e6);
          ok = FALSE;
          break;
        }
      ops->pause (user_data);
    }
  g_free (done);
  return ok;
}

/* AIRY_NCCL_TIMEOUT: seconds a collective may take (default 120). (The
 * messages of this header are not translated, as the checks' are not.) */
static inline gboolean
_airy_collective_timeout (gint64 *timeout_us, GError **error)
{
  const char *env = g_getenv ("AIRY_NCCL_TIMEOUT");
  guint64 v = 120;

  if (env != NULL && *env != '\0' && !g_ascii_string_to_unsigned (env, 10, 1, 86400, &v, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   "AIRY_NCCL_TIMEOUT: must be whole seconds in [1, 86400], got \"%s\"", env);
      return FALSE;
    }
  *timeout_us = (gint64) v * G_USEC_PER_SEC;
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
  /* cudaSetDevice; returns the device that was current */
  int  (*set_device)     (int device, gpointer user_data);
} AiryGlRegistrationOps;

static inline void
_airy_gl_registration_free (AiryGlRegistration *reg)
{
  g_free (reg);
}

/* A registration goes on the device it was made on (cudaGraphicsUnregisterResource
 * acts on the current device's context), which is current again after. */
static inline void
_airy_gl_registration_drop (AiryGlRegistration *reg, const AiryGlRegistrationOps *ops, gpointer user_data)
{
  int previous = ops->set_device (reg->device, user_data);

  ops->unregister (reg->resource, user_data);
  if (previous != reg->device)
    ops->set_device (previous, user_data);
  _airy_gl_registration_free (reg);
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
      g_ptr_array_remove_index_fast (cache, i);
      _airy_gl_registration_drop (reg, ops, user_data);
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
      g_ptr_array_remove_index_fast (cache, i);
      _airy_gl_registration_drop (reg, ops, user_data);
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

/* ---- a slot's buffers: one list, allocated and budgeted alike ---- */

typedef enum
{
  AIRY_SLOT_INTEN,    /* a batch's intensity planes */
  AIRY_SLOT_ZBUF,     /* the chunk's planes' z */
  AIRY_SLOT_FIELD,    /* FUSED_PSF: the batch, row-interleaved (airy-cuda-layout.h) */
  AIRY_SLOT_FIELD2,   /*   the column pass's output */
  AIRY_SLOT_CHAN,     /*   each wavelength's intensity (per-wavelength runs) */
  AIRY_SLOT_GA,       /* the field ops: two fields of the largest shape */
  AIRY_SLOT_GB,
  AIRY_SLOT_OUT,      /* the device's planes of the stack (no reduction) */
  AIRY_SLOT_IMG,      /* Σ_z I (SUM, or CONVOLVE of a sample constant in z) */
  AIRY_SLOT_PAD,      /* CONVOLVE: padded planes */
  AIRY_SLOT_SPEC,     /*   their spectra */
  AIRY_SLOT_ACC,      /*   Σ_z P̂·V̂ */
  AIRY_SLOT_VOL,      /*   the sample's planes */
  AIRY_SLOT_VSPEC,    /*   their spectra (a sample varying in z) */
  AIRY_SLOT_VCONST,   /*   the spectrum of a sample constant in z */
  AIRY_SLOT_N_BUFFERS
} AirySlotBuffer;

typedef struct
{
  guint    h, w;            /* the intensity planes */
  guint    entries;         /* FUSED_PSF: a plane's entries (wavelengths × components); 0: the field ops */
  guint    channels;        /* per-wavelength stacks kept (0: none) */
  guint64  max_field;       /* the field ops: complex values of the largest field, all wavelengths */
  guint    count;           /* the chunk's planes */
  gboolean keep;            /* no reduction: the device holds its planes of the stack */
  guint    out_h, out_w;    /*   a plane of it (after the sensor) */
  gboolean sum;             /* Σ_z I on the device: SUM, or CONVOLVE of a sample constant in z */
  gboolean convolve;        /* CONVOLVE */
  gboolean varying;         /*   of a sample that varies in z */
  guint    pad_h, pad_w, vol_h, vol_w;
} AirySlotShape;

typedef struct
{
  guint64 fixed;       /* bytes once */
  guint64 per_plane;   /* and for each plane of a batch */
} AirySlotBytes;

/* Every buffer of a slot. A sample constant in z convolves the planes'
 * sum once (Σ_z (P_z ⊛ V) = (Σ_z P_z) ⊛ V): its padded plane, spectrum and
 * volume plane are one each, not one per plane of a batch. */
static inline void
_airy_slot_buffers (const AirySlotShape *s, AirySlotBytes b[AIRY_SLOT_N_BUFFERS])
{
  guint64 n = (guint64) s->h * s->w, np = (guint64) s->pad_h * s->pad_w;
  guint64 nspec = (guint64) s->pad_h * (s->pad_w / 2 + 1), nvol = (guint64) s->vol_h * s->vol_w;

  memset (b, 0, AIRY_SLOT_N_BUFFERS * sizeof (AirySlotBytes));
  b[AIRY_SLOT_INTEN].per_plane = n * sizeof (float);
  b[AIRY_SLOT_ZBUF].fixed = (guint64) s->count * sizeof (double);
  if (s->entries > 0)
    {
      b[AIRY_SLOT_FIELD].per_plane = b[AIRY_SLOT_FIELD2].per_plane = s->entries * n * 2 * sizeof (float);
      b[AIRY_SLOT_CHAN].per_plane = s->channels * n * sizeof (float);
    }
  else
    b[AIRY_SLOT_GA].fixed = b[AIRY_SLOT_GB].fixed = s->max_field * 2 * sizeof (float);
  if (s->keep)
    b[AIRY_SLOT_OUT].fixed = (guint64) s->count * s->out_h * s->out_w * sizeof (float);
  if (s->sum)
    b[AIRY_SLOT_IMG].fixed = n * sizeof (float);
  if (s->convolve)
    {
      AirySlotBytes *pad = &b[AIRY_SLOT_PAD], *spec = &b[AIRY_SLOT_SPEC], *vol = &b[AIRY_SLOT_VOL];

      b[AIRY_SLOT_ACC].fixed = nspec * 2 * sizeof (float);
      if (s->varying)
        {
          pad->per_plane = np * sizeof (float);
          spec->per_plane = nspec * 2 * sizeof (float);
          vol->per_plane = nvol * sizeof (float);
          b[AIRY_SLOT_VSPEC].per_plane = nspec * 2 * sizeof (float);
        }
      else
        {
          pad->fixed = np * sizeof (float);
          spec->fixed = nspec * 2 * sizeof (float);
          vol->fixed = nvol * sizeof (float);
          b[AIRY_SLOT_VCONST].fixed = nspec * 2 * sizeof (float);
        }
    }
}

static inline guint64
_airy_slot_buffer_bytes (const AirySlotBytes *b, guint batch)
{
  return b->fixed + b->per_plane * batch;
}

/* What the budget counts: every buffer, and cuFFT's one work area of the
 * slot as one more copy of the largest transform's data. */
static inline void
_airy_slot_budget (const AirySlotShape *s, guint64 *fixed, guint64 *per_plane)
{
  AirySlotBytes b[AIRY_SLOT_N_BUFFERS];
  guint64 n = (guint64) s->h * s->w, nspec = (guint64) s->pad_h * (s->pad_w / 2 + 1);
  guint k;

  _airy_slot_buffers (s, b);
  *fixed = *per_plane = 0;
  for (k = 0; k < AIRY_SLOT_N_BUFFERS; k++)
    {
      *fixed += b[k].fixed;
      *per_plane += b[k].per_plane;
    }
  if (s->entries > 0)
    *per_plane += s->entries * n * 2 * sizeof (float);
  else
    *fixed += s->max_field * 2 * sizeof (float);
  if (s->convolve && s->varying)
    *per_plane += nspec * 2 * sizeof (float);
  else if (s->convolve)
    *fixed += nspec * 2 * sizeof (float);
}

/* ---- device buffers kept across runs ----
 *
 * A slot's buffers (2 GB and more at the seed size) go back to the backend
 * after a run instead of to cudaFree, and the next run of the same shapes
 * takes them again: no allocation, no free, per run. Only the last run's
 * are kept: a run frees (before it measures free memory) the device's
 * kept blocks it will not take, and a run short of memory frees them all. */

typedef struct
{
  int      device;
  gpointer ptr;
  guint64  bytes;
} AiryDeviceBlock;

typedef struct
{
  /* cudaMalloc on `device` (current): 0 on success */
  int  (*alloc)   (int device, guint64 bytes, gpointer *ptr, gpointer user_data);
  void (*release) (int device, gpointer ptr, gpointer user_data);
} AiryBlockOps;

/* Bytes kept for `device`. */
static inline guint64
_airy_blocks_held (GPtrArray *cache, int device)
{
  guint64 sum = 0;
  guint i;

  for (i = 0; i < cache->len; i++)
    {
      AiryDeviceBlock *b = g_ptr_array_index (cache, i);

      if (b->device == device)
        sum += b->bytes;
    }
  return sum;
}

static inline void
_airy_blocks_remove (GPtrArray *cache, guint i, const AiryBlockOps *ops, gpointer user_data)
{
  AiryDeviceBlock *b = g_ptr_array_index (cache, i);

  ops->release (b->device, b->ptr, user_data);
  g_ptr_array_remove_index_fast (cache, i);
  g_free (b);
}

/* Frees the device's kept blocks that none of the n sizes would take
 * (each size takes one block of exactly its bytes). */
static inline void
_airy_blocks_keep (GPtrArray *cache, int device, const guint64 *sizes, guint n, const AiryBlockOps *ops,
                   gpointer user_data)
{
  gboolean *used = g_new0 (gboolean, MAX (n, 1));
  guint i = 0, k;

  while (i < cache->len)
    {
      AiryDeviceBlock *b = g_ptr_array_index (cache, i);
      gboolean wanted = b->device != device;

      for (k = 0; !wanted && k < n; k++)
        if (!used[k] && sizes[k] == b->bytes)
          wanted = used[k] = TRUE;
      if (wanted)
        i++;
      else
        _airy_blocks_remove (cache, i, ops, user_data);
    }
  g_free (used);
}

/* Frees every kept block of `device` (-1: of every device). */
static inline void
_airy_blocks_trim (GPtrArray *cache, int device, const AiryBlockOps *ops, gpointer user_data)
{
  guint i = 0;

  while (i < cache->len)
    {
      AiryDeviceBlock *b = g_ptr_array_index (cache, i);

      if (device >= 0 && b->device != device)
        i++;
      else
        _airy_blocks_remove (cache, i, ops, user_data);
    }
}

/* A buffer of `bytes` on `device`: a kept block of that size (*reused), or
 * a new one; returns the allocation's status (0: ok). */
static inline int
_airy_blocks_take (GPtrArray *cache, int device, guint64 bytes, const AiryBlockOps *ops, gpointer user_data,
                   gpointer *ptr, gboolean *reused)
{
  guint i;

  *reused = FALSE;
  for (i = 0; i < cache->len; i++)
    {
      AiryDeviceBlock *b = g_ptr_array_index (cache, i);

      if (b->device == device && b->bytes == bytes)
        {
          *ptr = b->ptr;
          *reused = TRUE;
          g_ptr_array_remove_index_fast (cache, i);
          g_free (b);
          return 0;
        }
    }
  *ptr = NULL;
  return ops->alloc (device, bytes, ptr, user_data);
}

/* A run's buffer back, kept for the next run. */
static inline void
_airy_blocks_give (GPtrArray *cache, int device, gpointer ptr, guint64 bytes)
{
  AiryDeviceBlock *b;

  if (ptr == NULL)
    return;
  b = g_new (AiryDeviceBlock, 1);
  b->device = device;
  b->ptr = ptr;
  b->bytes = bytes;
  g_ptr_array_add (cache, b);
}

G_END_DECLS
