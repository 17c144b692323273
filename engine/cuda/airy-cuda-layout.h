/* airy-cuda-layout.h: the fused PSF's batch on the GPU, one formula for
 * two compilers (airy-physics.h's rule): the kernels of
 * airy-cuda-kernels.cu are these bodies, one thread per index, and
 * tests/test-cuda-host.c runs the same bodies on the host, with FFTW's
 * strided transforms for cuFFT's, against the CPU backend. Plain C, no
 * GLib: complex values are interleaved float pairs.
 *
 * A batch of nb planes of L entries (wavelengths × vectorial components,
 * entry l of wavelength l / C) is one row-interleaved array u[y][t][x] of
 * T = L·nb transforms of h × w, t = l·nb + b: the pupil's rows y0 …
 * y0 + rows − 1 of every transform are one contiguous block (one batched
 * row pass of rows·T transforms of w, distance w), every column of every
 * transform a sequence of stride T·w (one batched column pass of T·w
 * transforms of h, distance 1). So all the components and planes of a
 * batch go through one row and one column transform, and the intensity
 * Σ_l s_l |u_l|² is taken in one pass over the column pass's output. */
#pragma once

#include <stddef.h>

#include "airy-physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The batch's transform of entry l of plane b. */
AIRY_HD size_t
airy_band_transform (unsigned l, unsigned b, unsigned nb)
{
  return (size_t) l * nb + b;
}

/* The band's values, index i < rows·L·nb·w of band[r][t][x] (band: the
 * batch's row y0): F_l[r][x] · e^{i z_b G_l[r][x]}; F and G are L × rows × w
 * (the pupil's rows), z the batch's planes. */
AIRY_HD void
airy_band_generate_at (size_t i, const float *F, const double *G, const double *z, unsigned L, unsigned nb,
                       unsigned rows, unsigned w, float *band)
{
  size_t T = (size_t) L * nb, rt = i / w;
  unsigned x = (unsigned) (i % w), t = (unsigned) (rt % T), r = (unsigned) (rt / T);
  unsigned l = t / nb, b = t % nb;
  size_t k = ((size_t) l * rows + r) * w + x;
  float s, c;

  airy_defocus_cis (z[b], G[k], &s, &c);
  band[2 * i] = F[2 * k] * c - F[2 * k + 1] * s;
  band[2 * i + 1] = F[2 * k] * s + F[2 * k + 1] * c;
}

/* The intensity, index i < nb·h·w of out[b][y][x]: Σ_l scale_l |u[y][l·nb + b][x]|²
 * (out may be NULL); with chan, also each wavelength's part, chan[c][b][y][x]
 * summed over its C entries c·C … c·C + C − 1. */
AIRY_HD void
airy_band_intensity_at (size_t i, const float *u, const float *scale, unsigned L, unsigned C, unsigned nb,
                        unsigned h, unsigned w, float *out, float *chan)
{
  size_t n = (size_t) h * w, p = i % n;
  unsigned b = (unsigned) (i / n), y = (unsigned) (p / w), x = (unsigned) (p % w), l;
  float total = 0.0f, part = 0.0f;

  for (l = 0; l < L; l++)
    {
      const float *v = u + 2 * (((size_t) y * L * nb + airy_band_transform (l, b, nb)) * w + x);
      float q = airy_intensity_term (scale[l], v[0], v[1]);

      total += q;
      part += q;
      if (chan != NULL && (l + 1) % C == 0)
        {
          chan[((size_t) (l / C) * nb + b) * n + p] = part;
          part = 0.0f;
        }
    }
  if (out != NULL)
    out[i] = total;
}

#ifdef __cplusplus
}
#endif
