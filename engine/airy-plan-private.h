#pragma once

#include "airy-volume-stream-private.h"

#include "airy-backend-impl.h"
#include "airy-element.h"
#include "airy-geometry.h"
#include "airy-run.h"
#include "airy-system.h"

G_BEGIN_DECLS

typedef struct _AiryOpList AiryOpList;

/* A system compiled for execution (DESIGN §4): the enabled elements
 * (copies) in chain order with the context entering each, the geometry,
 * the sample, the output geometry and, once _airy_plan_compile has run,
 * the program (plan->ops). Refcounted and read-only once made: every run
 * of it has its own AiryRunState (airy-backend-impl.h). Backends read the
 * geometry, the sample and the program; the chain, its contexts and the
 * system are the compiler's. */
struct _AiryPlan
{
  AirySystem    *system;         /* private copy */
  AirySpectrum  *spectrum;
  guint          n_planes;
  double        *z;

  GPtrArray     *chain;          /* AiryElement */
  AiryContext   *contexts;       /* entering each chain element */
  guint          in_height, in_width;
  double        *in_dy, *in_dx;  /* per wavelength */
  guint          psf_height, psf_width;   /* intensity after the chain */
  double         psf_dy, psf_dx;
  double        *psf_dy_l, *psf_dx_l;   /* per wavelength (an FF lens's output spacing scales with λ) */

  AiryElement   *sensor;         /* may be NULL */
  gboolean       imaging;        /* microscope: Σ_z volume ⊛ PSF */
  gboolean       reduce;         /* one image out */
  guint          out_depth, out_height, out_width;  /* after the sensor */
  double         out_dy, out_dx;

  /* imaging */
  AirySample     sample;
  AiryStack     *volume;         /* sample file, NULL for generated samples; over
                                  * several ranks this rank's planes only: */
  guint          volume_first;   /*   plane volume_first of the sample is its 0 */
  AiryStack    **volume_box;     /* once compiled: volume, shared with CONVOLVE (g_atomic_rc_box) */
  char          *volume_key;     /* identifies the sample's content, for caches */
  AiryVolumeStream *volume_stream; /* a sample file larger than its share of the
                                  * budget, read in batches while imaged (volume NULL) */
  guint          vol_height, vol_width;
  guint          pad_height, pad_width;
  double         vol_spacing;    /* the sample's and the image's pixel (grid.spacing) */

  /* compiled by _airy_plan_compile (airy-plan-compile.c), in the worker */
  AiryOpList    *compiled;       /* the field stage: shared by plans of the same optics */
  GPtrArray     *ops;            /* AiryOp: the program every backend runs (airy-ops-private.h) */
  guint64        optics_hash;    /* what the field stage depends on, z left out */
  gboolean       unfused;        /* set before compiling: the field stage as compiled, no fusion pass,
                                  * not kept (the gradient's program, airy-grad-program.c) */

  guint64        memory;         /* what a run of it holds (_airy_geometry_memory), budgeted */
  AiryGeometry  *geometry;       /* what the planner consumed: owns the chain's contexts and grids */

  gint           ref;
};

AiryPlan *_airy_plan_new        (AirySystem           *system,
                                 const AiryRunOptions *options,
                                 GPtrArray            *warnings,
                                 GError              **error);
AiryPlan *_airy_plan_ref        (AiryPlan *plan);
void      _airy_plan_unref      (AiryPlan *plan);
/* Plane z (of the whole sample) of a sample file: in this rank's part. */
const float *_airy_plan_volume_data (AiryPlan *plan,
                                     guint     z);
guint64   _airy_plan_bytes_per_slot (AiryPlan *plan);

/* The program of the plan (plan->ops): the field stage, reused from the
 * last plan of the same optics (the hash) or compiled and passed through
 * the fusion pass, then the intensity stage (CONVOLVE, SUM, SENSOR). In
 * the worker: it computes F and G, reads masks. */
gboolean  _airy_plan_compile    (AiryPlan *plan,
                                 GError  **error);
/* The chain, its geometry and spectrum and the files the elements read,
 * z left out: two systems that differ in z only have the same. */
guint64   _airy_plan_optics_hash (AiryPlan *plan);
/* A file's stamp for caches: device, inode, size, modification and change
 * times to the nanosecond; NULL when it cannot be stat'ed. */
char     *_airy_file_stamp (const char *path);
/* The program's op kinds, e.g. "fused-psf convolve sensor" (tests). */
char     *_airy_plan_describe   (AiryPlan *plan);
/* Plans made since the start (tests: the worker plans once per edit). */
guint     _airy_plan_count      (void);
/* Field stages compiled (not reused) since the start (tests). */
guint     _airy_plan_compiles   (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryPlan, _airy_plan_unref)

G_END_DECLS
