#pragma once

#include <gio/gio.h>

#include "airy-backend.h"
#include "airy-comm.h"
#include "airy-stack.h"
#include "airy-system.h"

G_BEGIN_DECLS

/* A run's first plane, before the others (AiryRunOptions.preview): a
 * resident of the whole stack's geometry of which only that plane is known
 * (airy_resident_new_partial; transfer full), on the run's thread. */
typedef void (*AiryPreviewFunc) (AiryResident *partial,
                                 gpointer      user_data);

typedef struct
{
  const char  *backend;    /* "cpu", "cuda", "auto" or NULL (auto) */
  const guint *devices;    /* backend device indices; NULL: all */
  guint        n_devices;
  guint        threads;    /* host threads in all; 0: all cores */
  const guint *chunks;     /* explicit planes per device (sum = planes); NULL: even split */
  gboolean     keep_psf;   /* imaging: also return the PSF stack */
  gboolean     resident;   /* return the result kept by its backend (result->resident,
                            * for the viewer; CUDA: on the GPUs, no host copy) instead
                            * of result->stack */
  AiryComm    *comm;       /* the processes of the run (MPI ranks); NULL: this one.
                            * Each rank computes a contiguous part of the planes
                            * (rank_planes, or evenly), over its own devices;
                            * reductions meet across ranks (airy-comm.h) */
  const guint *rank_planes; /* explicit planes per rank (comm->size of them, sum =
                             * planes); NULL: even split. `chunks` then splits
                             * the rank's part over its devices */
  gboolean     per_wavelength; /* PSF mode: also one stack per wavelength
                              * (result->channels; CPU backend only) */
  AiryPreviewFunc preview; /* with it, plane preview_plane is computed first and
                            * handed over before the other planes are; a PSF
                            * stack (no reduction) of one process on one CPU
                            * device previews, other runs compute as before and
                            * call no preview */
  gpointer     preview_data;
  guint        preview_plane;
} AiryRunOptions;

/**
 * AiryRunOptions:
 * @backend: "cpu", "cuda", "auto" or %NULL (auto)
 * @devices: (array length=n_devices) (nullable): backend device indices; %NULL: all
 * @n_devices: the number of @devices
 * @threads: host threads in all; 0: all cores
 * @chunks: (skip): explicit planes per device
 * @keep_psf: imaging: also return the PSF stack
 * @resident: return the result kept by its backend
 * @comm: (skip): the processes of the run
 * @rank_planes: (skip): explicit planes per rank
 * @per_wavelength: PSF mode: also one stack per wavelength
 * @preview: (skip): the first plane's callback
 * @preview_data: (skip): its data
 * @preview_plane: the plane previewed
 *
 * How airy_run() runs a system. On the stack, `{ 0 }` gives the defaults and
 * the caller owns what the pointers point to. As a boxed type (bindings,
 * callers that keep options) from airy_run_options_new() or
 * airy_run_options_copy(), the options own their backend name and arrays
 * (devices; chunks, one per device the run uses; rank_planes, comm->size)
 * and free them; set those with the setters. @comm and @preview are shared,
 * not copied.
 */
#define AIRY_TYPE_RUN_OPTIONS (airy_run_options_get_type ())
GType           airy_run_options_get_type    (void);
/**
 * airy_run_options_new: (constructor)
 * Returns: (transfer full): the default options
 */
AiryRunOptions *airy_run_options_new         (void);
AiryRunOptions *airy_run_options_copy        (const AiryRunOptions *options);
void            airy_run_options_free        (AiryRunOptions       *options);
/**
 * airy_run_options_set_backend:
 * @options: boxed options
 * @backend: (nullable): "cpu", "cuda", "auto", a module's backend, or %NULL (auto)
 */
void            airy_run_options_set_backend (AiryRunOptions       *options,
                                              const char           *backend);
/**
 * airy_run_options_set_devices:
 * @options: boxed options
 * @devices: (array length=n_devices) (nullable): backend device indices; %NULL: all
 * @n_devices: their number
 */
void            airy_run_options_set_devices (AiryRunOptions       *options,
                                              const guint          *devices,
                                              guint                 n_devices);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryRunOptions, airy_run_options_free)

typedef void (*AiryProgressFunc) (guint    done,
                                  guint    total,
                                  gpointer user_data);

typedef struct
{
  AiryStack *stack;        /* PSF stack, or the image (depth 1) of a reduction;
                            * over several ranks: this rank's planes of the
                            * stack (part_first …), the whole image */
  AiryStack *psf;          /* imaging with keep_psf (this rank's planes) */
  AiryResident *resident;  /* with AiryRunOptions.resident (stack is NULL then) */
  guint      n_channels;   /* with per_wavelength: one stack per wavelength, */
  AiryStack **channels;    /*   each its entries' weighted intensity (they add up
                            *   to stack), this rank's planes; else 0, NULL */
  GPtrArray *warnings;     /* char* */
  guint64    hash;         /* airy_system_hash() of the system run */
  double     seconds;
  char      *backend;
  guint      n_devices;
  guint      threads;
  guint      ranks;        /* processes of the run (1 without MPI) */
  guint      part_first;   /* this rank's planes in the stack and psf: */
  guint      part_count;   /*   [part_first, part_first + part_count) */
  guint      n_planes;     /* the whole stack's */
  gboolean   stack_is_part; /* stack holds this rank's planes (not one image) */
  double     reduce_s;     /* time in the cross-rank reduction */
  double     own_s;        /* this rank's own work: seconds less the time in
                            * the agreements with the other ranks (waiting
                            * for them) and in the reduction */
  /*< private >*/
  gint       extra_refs;   /* references beyond the first: a zeroed result has one */
} AiryResult;

/* A boxed type, so that signals carry results: a copy is a reference. */
#define AIRY_TYPE_RESULT (airy_result_get_type ())
GType       airy_result_get_type (void);

/**
 * airy_run:
 * @system: the system
 * @options: (nullable): how to run it; %NULL: the defaults
 * @progress: (scope call) (closure user_data) (nullable): planes done of all, on the run's threads
 * @user_data: (closure): for @progress
 * @cancellable: (nullable): cancels the run
 * @error: where a failure is told
 *
 * Computes the system: its PSF stack or, for a microscope, its image.
 *
 * Returns: (transfer full): the result, %NULL with @error set
 */
AiryResult *airy_run          (AirySystem           *system,
                               const AiryRunOptions *options,
                               AiryProgressFunc      progress,
                               gpointer              user_data,
                               GCancellable         *cancellable,
                               GError              **error);
AiryResult *airy_result_ref   (AiryResult           *result);
/* Drops a reference; the last one frees the result. */
void        airy_result_free  (AiryResult           *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryResult, airy_result_free)

/* The floor for `airy-sim bench`: seconds for `planes` bare in-place 2-D
 * complex single-precision transforms of h × w with FFTW MEASURE plans on
 * `threads` threads (planning excluded). */
double      airy_bench_fft_floor (guint h,
                                  guint w,
                                  guint planes,
                                  guint threads);

/* Host memory budget in bytes: AIRY_MEMORY_BUDGET (e.g. "2G") or 90 % of
 * MemAvailable. airy_memory_budget() falls back to the latter on a wrong
 * value, which airy_memory_budget_get() reports. */
guint64     airy_memory_budget (void);
/* A budget for a message: its size, and for the process's budget
 * (airy_memory_budget) where it comes from: "2.0 GiB (AIRY_MEMORY_BUDGET=2G)". */
char       *airy_memory_budget_describe (guint64  budget,
                                         gboolean process);
gboolean    airy_memory_budget_get (guint64 *budget,
                                    GError **error);
/* AIRY_CPU_DEVICES: the CPU backend's number of virtual devices, 1 … 64
 * (default 1). */
gboolean    airy_cpu_devices_from_env (guint   *n_devices,
                                       GError **error);
char       *airy_format_bytes  (guint64 bytes);

G_END_DECLS
