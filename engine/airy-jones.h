/* airy-jones.h: Jones calculus, one formula for two compilers (as
 * airy-physics.h: C and CUDA evaluate the same expressions).
 *
 * A Jones (vectorial, paraxial) field is two complex components per
 * wavelength, Ex and Ey, held as neighbouring batch entries (entry 2l is Ex
 * of wavelength l, 2l + 1 its Ey; DESIGN §3, "components are batch entries
 * like wavelengths"). A Jones matrix J acts per pixel, (Ex', Ey') =
 * J·(Ex, Ey), and is written as four complex numbers re/im interleaved:
 * j[0..1] = Jxx, j[2..3] = Jxy, j[4..5] = Jyx, j[6..7] = Jyy.
 *
 * Conventions (chromatix's functional/polarizers.py, without its division of
 * every matrix by its Frobenius norm, which would make a lossless retarder
 * pass half the power): angles from the x axis towards y; a retarder delays
 * the component along its fast axis θ by −η/2 and the slow one by +η/2. */
#pragma once

#include "airy-physics.h"

AIRY_HD void
airy_jones_set (double j[8], double xx_re, double xx_im, double xy_re, double xy_im,
                double yx_re, double yx_im, double yy_re, double yy_im)
{
  j[0] = xx_re; j[1] = xx_im; j[2] = xy_re; j[3] = xy_im;
  j[4] = yx_re; j[5] = yx_im; j[6] = yy_re; j[7] = yy_im;
}

/* Linear polariser with its transmission axis at θ: the projector
 * [[c², cs], [cs, s²]] (Malus: |J·e|² = cos²(θ − α) for e at α). */
AIRY_HD void
airy_jones_linear_polarizer (double theta, double j[8])
{
  double c = cos (theta), s = sin (theta);

  airy_jones_set (j, c * c, 0.0, c * s, 0.0, c * s, 0.0, s * s, 0.0);
}

/* Circular polariser: the projector onto (1, ±i)/√2, left (+i, chromatix's
 * left_circular) for left != 0: ½[[1, ∓i], [±i, 1]]. */
AIRY_HD void
airy_jones_circular_polarizer (int left, double j[8])
{
  double s = left ? 1.0 : -1.0;

  airy_jones_set (j, 0.5, 0.0, 0.0, -0.5 * s, 0.0, 0.5 * s, 0.5, 0.0);
}

/* General retarder (chromatix's phase_retarder): fast axis θ, retardance η,
 * circularity φ, e^{−iη/2}·[[c² + e^{iη}s², (1 − e^{iη}) e^{−iφ} sc],
 * [(1 − e^{iη}) e^{iφ} sc, s² + e^{iη}c²]]. Unitary: it conserves power. */
AIRY_HD void
airy_jones_retarder (double theta, double eta, double phi, double j[8])
{
  double c = cos (theta), s = sin (theta);
  double er = cos (eta), ei = sin (eta);           /* e^{iη} */
  double hr = cos (eta / 2), hi = -sin (eta / 2);  /* e^{−iη/2} */
  double ar = c * c + er * s * s, ai = ei * s * s; /* c² + e^{iη}s² */
  double dr = s * s + er * c * c, di = ei * c * c; /* s² + e^{iη}c² */
  double br = (1.0 - er) * s * c, bi = -ei * s * c; /* (1 − e^{iη}) sc */
  double pr = cos (phi), pi = sin (phi);
  /* b·e^{∓iφ} */
  double b1r = br * pr + bi * pi, b1i = bi * pr - br * pi;
  double b2r = br * pr - bi * pi, b2i = bi * pr + br * pi;

  airy_jones_set (j, hr * ar - hi * ai, hr * ai + hi * ar, hr * b1r - hi * b1i, hr * b1i + hi * b1r,
                  hr * b2r - hi * b2i, hr * b2i + hi * b2r, hr * dr - hi * di, hr * di + hi * dr);
}

/* (Ex, Ey) ← J·(Ex, Ey) at one pixel, in the field's single precision:
 * j as airy_jones_set's layout, e = (Ex re, Ex im, Ey re, Ey im). The JONES
 * op's one formula: the CPU's interpreter and the CUDA kernel call it. */
AIRY_HD void
airy_jones_apply_pixel (const float j[8], float e[4])
{
  float ar = e[0], ai = e[1], br = e[2], bi = e[3];

  e[0] = j[0] * ar - j[1] * ai + j[2] * br - j[3] * bi;
  e[1] = j[0] * ai + j[1] * ar + j[2] * bi + j[3] * br;
  e[2] = j[4] * ar - j[5] * ai + j[6] * br - j[7] * bi;
  e[3] = j[4] * ai + j[5] * ar + j[6] * bi + j[7] * br;
}

/* c = a·b (a applied after b) */
AIRY_HD void
airy_jones_product (const double a[8], const double b[8], double c[8])
{
  int r, k;

  for (r = 0; r < 2; r++)
    for (k = 0; k < 2; k++)
      {
        const double *a0 = a + 4 * r, *a1 = a + 4 * r + 2;
        const double *b0 = b + 2 * k, *b1 = b + 4 + 2 * k;

        c[4 * r + 2 * k] = a0[0] * b0[0] - a0[1] * b0[1] + a1[0] * b1[0] - a1[1] * b1[1];
        c[4 * r + 2 * k + 1] = a0[0] * b0[1] + a0[1] * b0[0] + a1[0] * b1[1] + a1[1] * b1[0];
      }
}

/* The thin birefringent sample of chromatix's jones_sample: each component
 * of the matrix is e^{i 2π (dn + i·absorption)·t/λ} of its own dn and
 * absorption (indices xx, xy, yx, yy), t the thickness. */
AIRY_HD void
airy_jones_sample_component (double dn, double absorption, double t, double lambda, double out[2])
{
  airy_thin_sample (dn, absorption, t, lambda, out);
}
