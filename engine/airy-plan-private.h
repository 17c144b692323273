#pragma once

#include "airy-backend-impl.h"
#include "airy-element.h"
#include "airy-run.h"
#include "airy-system.h"

G_BEGIN_DECLS

/* A system compiled for execution: the enabled elements (copies) in chain
 * order with the context entering each, the output geometry, and the run's
 * buffers. Backends read it; the driver owns it. */
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

  AiryElement   *sensor;         /* may be NULL */
  gboolean       imaging;        /* microscope: Σ_z volume ⊛ PSF */
  gboolean       reduce;         /* one image out */
  guint          out_depth, out_height, out_width;  /* after the sensor */
  double         out_dy, out_dx;

  /* imaging */
  AirySample     sample;
  AiryStack     *volume;         /* sample file, NULL for generated samples */
  char          *volume_key;     /* identifies the sample's content, for caches */
  guint          vol_height, vol_width;
  guint          pad_height, pad_width;

  /* run */
  guint          n_slots;
  AiryChunk     *chunks;
  gboolean       keep_psf;
  AiryStack     *out;            /* host result */
  AiryStack     *psf;            /* host PSF stack when kept */
  gboolean       want_resident;  /* AiryRunOptions.resident */
  AiryResident  *resident;       /* the backend's result when wanted (finish) */
  gpointer       backend_data;

  GMutex         lock;
  guint          done;
  AiryProgressFunc progress;
  gpointer       progress_data;
  GCancellable  *cancellable;
};

AiryPlan *_airy_plan_new        (AirySystem           *system,
                                 const AiryRunOptions *options,
                                 GPtrArray            *warnings,
                                 GError              **error);
void      _airy_plan_free       (AiryPlan *plan);
void      _airy_plan_plane_done (AiryPlan *plan);
gboolean  _airy_plan_volume_plane (AiryPlan *plan,
                                   guint     z,
                                   float    *out);
guint64   _airy_plan_bytes_per_slot (AiryPlan *plan);
gboolean  _airy_plan_alloc_outputs  (AiryPlan *plan,
                                     GError  **error);
void      _airy_plan_set_metadata   (AiryPlan *plan);
/* The slots that have planes, in order: active[0] is the reduction's root
 * (where the image is made); returns how many. */
guint     _airy_plan_active_slots   (AiryPlan *plan,
                                     guint    *active);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryPlan, _airy_plan_free)

G_END_DECLS
