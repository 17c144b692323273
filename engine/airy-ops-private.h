#pragma once

#include "airy-element.h"
#include "airy-fft-private.h"
#include "airy-plan-private.h"

G_BEGIN_DECLS

/* A plan's element chain as a short list of device-friendly operations, so
 * that a backend without the CPU elements' code (the GPU) runs every
 * element: sources, pixelwise factors, centred or plain 2-D transforms with
 * a scale per wavelength, and centred pad/crop. Factors are computed once on
 * the host by the elements themselves; _airy_ops_run() is the reference
 * interpreter the tests compare with the element-by-element CPU path. */

typedef enum
{
  AIRY_OP_SET,        /* u = factor (a source that does not depend on z) */
  AIRY_OP_OBJECTIVE,  /* u = factor · e^{i (z_plane + z) phase} */
  AIRY_OP_POINT,      /* paraxial spherical wave at z_plane + z, power */
  AIRY_OP_GAUSS,      /* Gaussian beam at z_plane + z, waist, power */
  AIRY_OP_MULTIPLY,   /* u *= factor */
  AIRY_OP_FFT,        /* u = scale · DFT^{sign}(u), centred or plain */
  AIRY_OP_RESIZE,     /* pad with zeros or crop about pixel ⌊N/2⌋ */
} AiryOpKind;

typedef struct
{
  AiryOpKind     kind;
  guint          n_lambda;
  guint          height;      /* the field's shape after the op */
  guint          width;
  fftwf_complex *factor;      /* SET, OBJECTIVE, MULTIPLY: n_lambda × height × width */
  float         *phase;       /* OBJECTIVE: phase per µm of z, n_lambda × height × width */
  gboolean       centred;     /* FFT */
  AiryFftSign    sign;        /* FFT */
  fftwf_complex *scale;       /* FFT: per wavelength, NULL for 1 */
  double         z;           /* OBJECTIVE, POINT, GAUSS: added to the plane's z */
  double         n;           /* POINT, GAUSS */
  double         power;
  double         waist;
  double        *lambda;      /* POINT, GAUSS: the grid per wavelength */
  double        *dy;
  double        *dx;
  AiryElement   *element;     /* POINT, GAUSS: the source, for the CPU interpreter */
  gpointer       state;
} AiryOp;

typedef struct
{
  GPtrArray *ops;             /* AiryOp */
  gpointer  *states;          /* the elements' prepared states */
  AiryPlan  *plan;
  guint      max_height;      /* the largest field on the way */
  guint      max_width;
  gsize      max_size;        /* n_lambda × the largest plane */
} AiryOpList;

AiryOpList *_airy_ops_compile (AiryPlan          *plan,
                               GError           **error);
void        _airy_ops_free    (AiryOpList        *list);
gboolean    _airy_ops_run     (AiryOpList        *list,
                               AiryField         *field,
                               const AiryPlane   *plane,
                               GError           **error);
gsize       _airy_ops_bytes   (AiryOpList        *list);

/* for the elements' compile(): field holds the geometry entering the op */
AiryOp     *_airy_op_new      (AiryOpKind         kind,
                               const AiryField   *field);
/* an op whose factor is field's current content (field is left as is) */
AiryOp     *_airy_op_take_factor (AiryOpKind      kind,
                                  const AiryField *field);
void        _airy_field_fill_ones (AiryField     *field);

/* the check point-source makes of each plane's distance */
gboolean    _airy_point_source_check_z (guint      index,
                                        double     z,
                                        GError   **error);

G_END_DECLS
