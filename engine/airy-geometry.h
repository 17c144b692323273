#pragma once

/* Internal (not installed): the geometry of a system, apart from planning.
 * FFTW makes and checks a problem before any planner sees it; Airy's
 * problem is this: the enabled chain with the context entering each
 * element, the pupil, the grids of the field and of the intensity, the
 * result's shape after the sensor and the memory a run takes. No file is
 * read (unless asked: the planner checks the mask images in the same
 * walk), no budget is taken and nothing is compiled, so the UI thread, the
 * panel's figures, `airy-sim validate` and the planner all read the same
 * numbers; the planner consumes a geometry once (_airy_plan_new). */

#include "airy-element.h"
#include "airy-run.h"
#include "airy-system.h"

G_BEGIN_DECLS

typedef struct
{
  AirySystem    *system;         /* private copy */
  AirySpectrum  *spectrum;
  guint          n_planes;
  double        *z;

  GPtrArray     *chain;          /* AiryElement (copies), the enabled ones in order */
  AiryContext   *contexts;       /* entering each chain element */
  guint          in_height, in_width;
  double        *in_dy, *in_dx;  /* the source plane, per wavelength */
  guint          psf_height, psf_width;   /* intensity after the chain */
  double         psf_dy, psf_dx;
  double        *psf_dy_l, *psf_dx_l;     /* per wavelength */

  AiryElement   *sensor;         /* may be NULL */
  gboolean       imaging;        /* microscope: Σ_z volume ⊛ PSF */
  guint64        held_bytes;     /* what the chain's elements hold beyond a plane each (AiryContext) */
  gboolean       tube_lens;      /* the chain ends in the microscope's tube lens (imaging's; light-field's
                                  * ends in its own elements) */
  gboolean       jones;          /* a Jones field: spectrum holds each wavelength twice (Ex, Ey) */
  gboolean       reduce;         /* one image out */
  guint          out_depth, out_height, out_width;  /* after the sensor */
  double         out_dy, out_dx;

  /* imaging: the sample as the system gives it (a file's own shape is the
   * planner's, once it has read the file) */
  AirySample     sample;
  guint          vol_height, vol_width;
  guint          pad_height, pad_width;   /* linear convolution's padded size */
  double         vol_spacing;

  /* the figures the panel shows (DESIGN §3), at the first wavelength */
  double         na;             /* the objective's NA; 0 without an objective */
  double         pupil_radius;   /* f·NA/n, µm; 0 without an objective */
  double         pupil_spacing;  /* the source plane's dx (µm): f_tube·λ/(n·N·s) in a microscope */
  double         pupil_radius_px;/* pupil_radius / pupil_spacing */
  double         output_pixel;   /* the focal plane's pixel (after an FF lens, the microscope's
                                  * tube lens included), µm; 0 where the chain ends elsewhere */
  double         nyquist;        /* λ/(4·NA), µm; 0 without an objective */
  guint          n_stacks;       /* the result's stacks: 1, or the sum and one per wavelength */
  GPtrArray     *warnings;       /* char*, may be NULL: where the modality's chain step warns
                                  * (not owned; set while _airy_geometry_new runs) */
} AiryGeometry;

/* The geometry of system: its own fields against their declarations, the
 * chain's rules and each element's check() with its warnings. read_files:
 * the elements' check() also reads their files (mask images), as a run
 * does; FALSE on the UI thread. NULL with error set at the field's path. */
AiryGeometry *_airy_geometry_new      (AirySystem           *system,
                                       gboolean              read_files,
                                       GPtrArray            *warnings,
                                       GError              **error);
void          _airy_geometry_free     (AiryGeometry         *geometry);
/* A microscope's sample file as read: its plane size sets the padding
 * and the result's shape. */
void          _airy_geometry_set_volume (AiryGeometry       *geometry,
                                         guint               height,
                                         guint               width);
/* The result's stacks in bytes: n_stacks of out_depth × out_height ×
 * out_width floats (what the run allocates, the sensor's resampling
 * included). */
guint64       _airy_geometry_result_bytes (const AiryGeometry *geometry);
/* Working memory of one device slot (CPU). */
guint64       _airy_geometry_bytes_per_slot (const AiryGeometry *geometry);
/* What a run of the geometry under options holds (the planner's budget):
 * the result's stacks, the kept PSF, the sample file's planes
 * (volume_planes of vol_height × vol_width; 0 for a generated sample) and
 * the device slots. The planes of this process in *planes_here (NULL: not
 * wanted). FALSE with error on a wrong options->rank_planes. */
gboolean      _airy_geometry_memory   (const AiryGeometry   *geometry,
                                       const AiryRunOptions *options,
                                       guint                 volume_planes,
                                       guint64              *bytes,
                                       guint                *planes_here,
                                       GError              **error);
/* The planes of this process under options->comm: [first, first + count)
 * of n (options->rank_planes, or evenly). */
gboolean      _airy_plan_choose_part  (const AiryRunOptions *options,
                                       guint                 n,
                                       guint                *first,
                                       guint                *count,
                                       GError              **error);
/* Geometries made since the start (tests: the UI thread's check makes one
 * and no plan). */
guint         _airy_geometry_count    (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryGeometry, _airy_geometry_free)

G_END_DECLS
