#pragma once

#include "airy-volume-stream-private.h"

#include "airy-element.h"
#include "airy-fft-private.h"
#include "airy-physics.h"
#include "airy-plan-private.h"

G_BEGIN_DECLS

/* The one intermediate form every backend executes (DESIGN §4, "One plan
 * form"; ggml's graph). A plan's element chain compiles to a short list of
 * device-friendly operations, each element writing its own with compile()
 * (or, for a pixelwise type, its apply() on a field of ones: a MULTIPLY):
 *
 *   field stage      SET | OBJECTIVE | POINT | GAUSS | APPLY   (the source)
 *                    MULTIPLY, FFT, RESIZE, APPLY …            (the chain)
 *                    INTENSITY                                 (Σ_l w_l |u_l|²)
 *   intensity stage  [CONVOLVE | SUM] [SENSOR]                 (what a plane's intensity becomes)
 *
 * An engine pass (airy-ops-fuse.c) then folds the multiplications that
 * follow a source into its factor and recognises the pattern
 * OBJECTIVE → centred forward FFT → INTENSITY (a pupil field with a
 * z-dependent phase, one lens transform, |u|²) as one FUSED_PSF op that
 * carries F, G, the pupil's row band and the scale. It matches ops, not
 * element types: any element whose compile() emits those ops runs fused.
 * Each backend implements FUSED_PSF its own way (CPU: pruned, cache-blocked
 * FFTW passes; CUDA: batched cuFFT on the band) and the other kinds
 * generically; _airy_ops_run() is the reference interpreter that the tests
 * compare with the elements' apply() (tests/test-ops.c). */

typedef enum
{
  AIRY_OP_SET,        /* u = factor (a source that does not depend on z) */
  AIRY_OP_OBJECTIVE,  /* u = factor · e^{i (z_plane + z) phase}: a source whose phase is linear in z */
  AIRY_OP_POINT,      /* paraxial spherical wave at z_plane + z, power */
  AIRY_OP_GAUSS,      /* Gaussian beam at z_plane + z, waist, power */
  AIRY_OP_MULTIPLY,   /* u *= factor */
  AIRY_OP_JONES,      /* (Ex, Ey) = J·(Ex, Ey) per pixel: a Jones field's entry pairs (airy-jones.h) */
  AIRY_OP_FFT,        /* u = scale · DFT^{sign}(u), centred or plain */
  AIRY_OP_RESIZE,     /* pad with zeros or crop about pixel ⌊N/2⌋ */
  AIRY_OP_APPLY,      /* the element's apply() on the host: a type without a device form (CPU only) */
  AIRY_OP_INTENSITY,  /* I = Σ_l weights_l |u_l|²: the end of the field stage */
  AIRY_OP_FUSED_PSF,  /* I = Σ_l s_l |DFT(F_l · e^{i (z_plane + z0) G_l})|² (AiryFusedPsf), made by the pass;
                       * l: wavelengths × field components */
  AIRY_OP_CONVOLVE,   /* microscope: acc += DFT(pad I_z)·DFT(pad V_z) over the planes, then the image
                       * is crop(DFT⁻¹(acc)) (the plan's sample, vol_* and pad_* geometry) */
  AIRY_OP_SUM,        /* image = Σ_z I_z */
  AIRY_OP_SENSOR,     /* resampling and noise (AirySensorOp): of each plane, or of the image after
                       * CONVOLVE or SUM */
  AIRY_N_OP_KINDS
} AiryOpKind;

/* FUSED_PSF. The intensity of plane z is Σ_l scale_l·|DFT(u_l)|² with
 * u_l = F_l · e^{i (z + z0) G_l} on rows [y0, y0 + rows) and 0 elsewhere;
 * l runs over the op's batch entries (its n_lambda): the wavelengths, or for
 * a vectorial field wavelength × component (entry l·C + c), each component
 * the scalar pupil times its polarisation factor, sharing the row band;
 * DFT the plain forward transform (the centring modulation is in F, so it
 * gives the centred transform up to a phase per output pixel that |·|²
 * removes). */
typedef struct
{
  guint          y0, rows;    /* the band of rows that holds the pupil (all wavelengths) */
  fftwf_complex *F;           /* n_lambda × rows × width: the field at z = −z0, every factor folded in */
  double        *G;           /* n_lambda × rows × width: phase per µm of z (double: the CPU's precision) */
  double        *gx;          /* when G is separable (paraxial): G[l][r][x] = gy[l][r] + gx[l][x]; */
  double        *gy;          /*   n_lambda × width and n_lambda × rows; else NULL */
  float         *scale;       /* per entry: w_l·|c_l|² (times the component's weight), c_l the
                               * transform's constant */
  guint          n_components; /* C: entries per wavelength (1: scalar); entry e is wavelength e / C */
  double         z0;          /* added to each plane's z */
  guint64        hash;        /* what F and G were made from, z left out (the plan's optics hash) */
} AiryFusedPsf;

/* A Zernike phase mask's basis, as data (the phase-mask's compile()):
 * what its factor is made of, for the fit (airy-fit-model.c), which varies
 * the coefficients. Term j at pixel (y, x) of wavelength l is
 * airy_zernike_at (n[j], m[j], x_l, y_l, radius[l], normalised) with
 * x_l = airy_grid_coord (x, width, dx[l]), y_l likewise. */
typedef struct
{
  guint     index;            /* the mask's place in the chain */
  guint     n_terms;
  int      *n, *m;
  gboolean  normalised;
  guint     n_lambda, height, width;
  double   *radius;           /* per wavelength: the unit pupil's radius (µm) */
  double   *dy, *dx;          /* per wavelength: the grid */
} AiryZernikeBasis;

void        _airy_zernike_basis_free (gpointer basis);
double      _airy_zernike_basis_at   (const AiryZernikeBasis *basis,
                                      guint                   j,
                                      guint                   l,
                                      guint                   y,
                                      guint                   x);
/* The basis of the mask at chain index `index` folded into op (a source,
 * MULTIPLY or FUSED_PSF), or NULL. */
const AiryZernikeBasis *_airy_op_find_basis (const AiryOp *op,
                                              guint         index);

/* SENSOR: the element's resampling and noise chain, as data, written by
 * the sensor's own compile() (airy-sensor.c); every backend reads this and
 * nothing else. */
typedef enum
{
  AIRY_SENSOR_COPY,           /* no resampling */
  AIRY_SENSOR_BLOCK_SUM,
  AIRY_SENSOR_LINEAR,         /* bilinear onto out_* (only when the grid changes) */
} AirySensorResample;

typedef struct
{
  AirySensorResample resample;
  guint              factor;      /* BLOCK_SUM */
  double             scale;       /* LINEAR: (ody·odx)/(dy·dx) when the pixel sum is kept, else 1 */
  guint              in_height, in_width;
  double             in_dy, in_dx;
  guint              out_height, out_width;
  double             out_dy, out_dx;
  AiryNoiseParams    noise;       /* .stream is the plane (0 for a reduced image) */
} AirySensorOp;

/* CONVOLVE: the sample and the padded geometry, as data (the plan's
 * compiler writes it; the backends read this, never the plan). The image
 * is crop(DFT⁻¹(Σ_z DFT(pad I_z)·DFT(pad V_z))), V_z plane z of the sample
 * (_airy_convolve_volume_plane); the crop keeps the PSF's centre. */
typedef struct
{
  AirySampleKind kind;         /* CONSTANT, FILE or BEADS */
  double         value;        /* CONSTANT */
  guint          count;        /* BEADS: how many, their seed and intensity */
  guint          seed;
  double         intensity;
  guint          n_planes;     /* the sample's planes (the plan's planes) */
  AiryStack    **volume;       /* FILE: a shared reference (g_atomic_rc_box) to */
  guint          volume_first; /*   this process's planes, from volume_first */
  AiryVolumeStream *stream;    /* FILE, instead of volume: read in batches (a reference) */
  char          *key;          /* the sample's content, for caches (NULL: none) */
  guint          psf_height, psf_width;  /* each plane's intensity */
  guint          vol_height, vol_width;  /* the sample's planes, the image */
  guint          pad_height, pad_width;  /* the padded transforms */
} AiryConvolveOp;

/* SUM: the reduction, as data: Σ over the batch axis (the planes) of
 * height × width intensities, into one image. */
typedef enum
{
  AIRY_REDUCE_AXIS_PLANES,
} AiryReduceAxis;

typedef struct
{
  AiryReduceAxis axis;
  guint          n_planes;
} AiryReduceOp;

struct _AiryOp
{
  gint           ref;
  AiryOpKind     kind;
  guint          n_lambda;
  guint          height;      /* the field's (or the intensity's) shape after the op */
  guint          width;
  fftwf_complex *factor;      /* SET, OBJECTIVE, MULTIPLY: n_lambda × height × width;
                               * JONES: J of each entry pair p, [p][xx, xy, yx, yy][y][x]
                               * (2 × n_lambda planes) */
  double        *phase;       /* OBJECTIVE: phase per µm of z, n_lambda × height × width */
  double        *phase_x;     /* OBJECTIVE, optional: phase = phase_y[l][y] + phase_x[l][x] */
  double        *phase_y;     /*   (separable, paraxial): n_lambda × width, n_lambda × height */
  guint          n_components;      /* OBJECTIVE, vectorial: field components (0: scalar) */
  fftwf_complex *components;        /*   their polarisation factors, n_components × n_lambda × height × width */
  double        *component_weights; /*   their weights in the intensity, n_components */
  gboolean       centred;     /* FFT */
  AiryFftSign    sign;        /* FFT */
  fftwf_complex *scale;       /* FFT: per wavelength, NULL for 1 */
  double        *weights;     /* INTENSITY: per wavelength */
  double         z;           /* OBJECTIVE, POINT, GAUSS: added to the plane's z */
  double         n;           /* POINT, GAUSS */
  double         power;
  double         waist;
  double        *lambda;      /* POINT, GAUSS: the grid per wavelength */
  double        *dy;
  double        *dx;
  AiryElement   *element;     /* POINT, GAUSS, APPLY: the element, for the CPU interpreter */
  gpointer       state;
  guint          index;       /* APPLY: its place in the chain, for messages */
  guint          chain_index; /* the chain element that emitted it (_airy_ops_compile; the gradient) */
  AiryFusedPsf  *psf;         /* FUSED_PSF */
  AirySensorOp  *sensor;      /* SENSOR */
  AiryConvolveOp *convolve;   /* CONVOLVE */
  AiryReduceOp  *reduce;      /* SUM */
  GPtrArray     *bases;       /* SET, OBJECTIVE, MULTIPLY, FUSED_PSF: the Zernike bases of the masks in
                               * the factor (AiryZernikeBasis), or NULL */
};

/* A compiled field stage: refcounted, shared by every plan of the same
 * optics (airy-plan-compile.c keeps the last one). It owns the elements'
 * prepared states that POINT, GAUSS and APPLY ops use at run time. */
struct _AiryOpList
{
  gint       ref;
  GPtrArray *ops;             /* AiryOp (references) */
  GPtrArray *chain;           /* the elements compiled (a reference): the states' owners */
  gpointer  *states;          /* the elements' prepared states */
  guint      max_height;      /* the largest field on the way */
  guint      max_width;
  gsize      max_size;        /* n_lambda × the largest plane */
  guint64    hash;            /* the optics it was compiled from, z left out (0: not known) */
};

/* The chain lowered to field ops (no INTENSITY, no pass run). */
AiryOpList *_airy_ops_compile (AiryPlan          *plan,
                               GError           **error);
AiryOpList *_airy_ops_ref     (AiryOpList        *list);
void        _airy_ops_unref   (AiryOpList        *list);
/* Appends the INTENSITY op that ends the field stage (weights of spectrum). */
void        _airy_ops_end_field (AiryOpList         *list,
                                 const AirySpectrum *spectrum);
/* The engine pass (airy-ops-fuse.c): folds MULTIPLY into the source before
 * it, merges neighbouring MULTIPLY ops and replaces OBJECTIVE → centred
 * forward FFT → INTENSITY by one FUSED_PSF op. */
void        _airy_ops_fuse    (AiryOpList        *list);
/* The reference interpreter: runs the field ops of list on field (stops at
 * INTENSITY; a list with FUSED_PSF has no field to give). */
gboolean    _airy_ops_run     (AiryOpList        *list,
                               AiryField         *field,
                               const AiryPlane   *plane,
                               GError           **error);
/* The field stage of ops (up to INTENSITY, or one FUSED_PSF) for one
 * plane: its intensity in out (psf geometry); field is the scratch of the
 * unfused ops, with the plan's input geometry. */
gboolean    _airy_ops_run_intensity (GPtrArray       *ops,
                                     AiryField       *field,
                                     const AiryPlane *plane,
                                     float           *out,
                                     GError         **error);
/* The whole program from the ops' data alone (the reference of "an op
 * carries all the data its kind needs"): planes z[0 … n_planes) (plane b
 * has index b), the field stage per plane, then CONVOLVE (by its
 * definition, full complex transforms), SUM, SENSOR. No plan, no element
 * (but APPLY's, by its definition). */
AiryStack  *_airy_ops_run_program (GPtrArray       *ops,
                                   guint            n_planes,
                                   const double    *z,
                                   guint            threads,
                                   GError         **error);
/* ---- each kind's forward and adjoint (airy-ops-kinds.c) ----
 *
 * A complex cotangent is x̄ = ∂L/∂Re x + i ∂L/∂Im x (δL = Re Σ conj(x̄)·δx).
 * The parameters' cotangents of one op are added to (a NULL array is not
 * wanted). */
typedef struct
{
  fftwf_complex *factor;   /* SET, OBJECTIVE, MULTIPLY: n_lambda × height × width;
                            * FUSED_PSF: F's, n_lambda × rows × width */
  double        *phase;    /* OBJECTIVE: G's (n_lambda × height × width); FUSED_PSF: on the band */
  double         power;    /* POINT, GAUSS */
  double         z;        /* POINT: its distance (GAUSS: not given) */
  float         *sample;   /* CONVOLVE: the sample's planes V_z, n_in × vol_height × vol_width */
  double         gain;     /* SENSOR (the deterministic one) */
  double         exposure;
  double         offset;
} AiryOpGrad;

typedef struct
{
  /* a field op: u ← op(u) on field (its shape may change) */
  gboolean (*forward)       (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error);
  /* its vector–Jacobian product: bar holds ∂L/∂u' (the output's) on entry
   * and ∂L/∂u (the input's shape) on return; in is the op's primal input.
   * NULL: no adjoint (APPLY) */
  gboolean (*adjoint)       (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane,
                             AiryOpGrad *grad, GError **error);
  /* an op of the intensity stage: n_in planes of its input (planes first …
   * of the run) to its output (one image, or n_in planes for SENSOR) */
  gboolean (*image_forward) (const AiryOp *op, const float *in, guint n_in, guint first, float *out,
                             GError **error);
  /* its adjoint: out_bar (the output's cotangent) to in_bar (n_in planes) */
  gboolean (*image_adjoint) (const AiryOp *op, const float *in, guint n_in, guint first, const float *out_bar,
                             float *in_bar, AiryOpGrad *grad, GError **error);
} AiryOpKindInfo;

const AiryOpKindInfo *_airy_op_kind_info (AiryOpKind kind);
/* INTENSITY (I = Σ_l w_l |u_l|²) and its adjoint (ū_l = 2 w_l Ī u_l, bar
 * takes in's shape) */
void        _airy_op_intensity_forward (const AiryOp    *op,
                                        const AiryField *field,
                                        float           *out);
void        _airy_op_intensity_adjoint (const AiryOp    *op,
                                        const AiryField *in,
                                        const float     *ibar,
                                        AiryField       *bar);
/* FUSED_PSF's adjoint at plane z: ibar (∂L/∂I, height × width) to the
 * cotangents of F and G (grad->factor, grad->phase: on the band) */
void        _airy_fused_psf_adjoint   (const AiryOp    *op,
                                       double           z,
                                       guint            threads,
                                       const float     *ibar,
                                       AiryOpGrad      *grad);
AiryField  *_airy_field_copy          (const AiryField *field);
/* The field stage's vector–Jacobian product for one plane (the reference
 * interpreter's adjoint run): the forward of ops on field keeping each
 * op's input, then from ibar (∂L/∂I) the adjoints in reverse; grads[i]
 * gets op i's parameters' cotangents. FALSE for an op without an adjoint. */
gboolean    _airy_ops_run_vjp         (GPtrArray       *ops,
                                       AiryField       *field,
                                       const AiryPlane *plane,
                                       const float     *ibar,
                                       AiryOpGrad      *grads,
                                       GError         **error);
/* The whole program's vector–Jacobian product (_airy_ops_run_program's
 * adjoint): from out_bar (its result's cotangent) back through the
 * intensity stage and each plane's field stage; grads[i] (one per op)
 * gets op i's parameters' cotangents, summed over the planes. */
gboolean    _airy_ops_run_program_vjp (GPtrArray       *ops,
                                       guint            n_planes,
                                       const double    *z,
                                       guint            threads,
                                       const float     *out_bar,
                                       AiryOpGrad      *grads,
                                       GError         **error);
/* FUSED_PSF by its definition, one plain 2-D transform per wavelength. */
void        _airy_fused_psf_reference (const AiryOp *op,
                                       double        z,
                                       guint         threads,
                                       float        *out);
/* SENSOR from the op's data (airy-physics.h's resampling and noise): a
 * new image of out_height × out_width. */
float      *_airy_op_sensor_process (const AiryOp *op,
                                     const float  *in,
                                     guint64       stream);
gsize       _airy_ops_bytes   (AiryOpList        *list);
/* Plane z (of the whole sample) of CONVOLVE's sample, vol_height ×
 * vol_width: generated (constant, beads) or this process's part of the
 * file; FALSE for a kind without planes. */
gboolean    _airy_convolve_volume_plane (const AiryConvolveOp *conv,
                                         guint                 z,
                                         float                *out);
/* CONVOLVE's PSF spectra (n padded planes), and CONVOLVE of n_in planes
 * with them (or, spectra NULL, with the PSF `in` transformed here). */
fftwf_complex *_airy_convolve_psf_spectra (const AiryConvolveOp *conv,
                                           const float          *psf,
                                           guint                 n);
void        _airy_convolve_forward_with (const AiryConvolveOp *conv,
                                         const float          *in,
                                         const fftwf_complex  *spectra,
                                         guint                 n_in,
                                         guint                 first,
                                         float                *out);
/* g_atomic_rc_box_release_full's clear function of a shared sample file */
void        _airy_volume_box_clear (gpointer box);
/* FILE: plane z (of the whole sample) in this process's part. */
const float *_airy_convolve_volume_data (const AiryConvolveOp *conv,
                                         guint                 z);

/* The shape of a program (the plan's op list), for the backends' pattern
 * match: the field stage ops[0 … n_field) ends in INTENSITY or is one
 * FUSED_PSF; then at most one of CONVOLVE and SUM, then SENSOR. */
typedef struct
{
  guint   n_field;
  AiryOp *fused;              /* the FUSED_PSF op, or NULL: run the field ops */
  AiryOp *convolve;
  AiryOp *sum;
  AiryOp *sensor;
} AiryStages;

void        _airy_ops_stages  (GPtrArray         *ops,
                               AiryStages        *stages);
const char *_airy_op_kind_name (AiryOpKind        kind);
/* FALSE (naming the backend) unless a per_wavelength run is one fused PSF
 * of every wavelength's entries without an intensity stage. */
gboolean  _airy_run_state_check_channels (AiryRunState     *state,
                                          const AiryStages *stages,
                                          const char       *backend,
                                          GError          **error);

/* JONES (airy-ops-jones.c): its forward and adjoint (the kinds' table),
 * a new op of field's geometry with a matrix per pixel from fn(y, x, pair,
 * J, user_data), and the engine pass's folds: neighbouring JONES ops
 * multiply into one, a MULTIPLY beside a JONES and a JONES after a SET
 * are taken into it. */
typedef void (*AiryJonesFunc) (guint y, guint x, guint pair, double j[8], gpointer user_data);
gboolean    _airy_op_jones_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error);
gboolean    _airy_op_jones_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar,
                                    const AiryPlane *plane, AiryOpGrad *grad, GError **error);
AiryOp     *_airy_op_jones_new     (const AiryField *field, AiryJonesFunc fn, gpointer user_data);
gboolean    _airy_ops_fold_jones   (GPtrArray *ops);

/* for the elements' compile(): field holds the geometry entering the op */
AiryOp     *_airy_op_new      (AiryOpKind         kind,
                               const AiryField   *field);
/* an op whose factor is field's current content (field is left as is) */
AiryOp     *_airy_op_take_factor (AiryOpKind      kind,
                                  const AiryField *field);
AiryOp     *_airy_op_ref      (AiryOp            *op);
void        _airy_op_unref    (AiryOp            *op);
void        _airy_field_fill_ones (AiryField     *field);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryOpList, _airy_ops_unref)

/* the check point-source makes of each plane's distance */
gboolean    _airy_point_source_check_z (guint      index,
                                        double     z,
                                        GError   **error);

G_END_DECLS
