#pragma once

#include "airy-field.h"

G_BEGIN_DECLS

/* A zoomed 1-D DFT (chirp-z transform, Bluestein's algorithm on FFTW):
 * with J = j − ⌊n/2⌋ and K = k − ⌊m/2⌋,
 *
 *   out[k] = Σ_{j<n} in[j] · e^{−i (σ·J·K + τ·J)}
 *
 * σ the phase per input and output step, τ the phase per input step of the
 * output region's centre. σ = 2π/n, τ = 0, m = n is the centred DFT. */
typedef struct
{
  guint  n, m;
  double sigma, tau;
} AiryCztAxis;

/* Both axes of one plane: in is in_h × in_w (axis y: in_h → out_h,
 * axis x: in_w → out_w), out is y->m × x->m. */
void _airy_czt_2d (const fftwf_complex *in,
                   fftwf_complex       *out,
                   const AiryCztAxis   *y,
                   const AiryCztAxis   *x);

G_END_DECLS
