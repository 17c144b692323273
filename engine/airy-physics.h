/* airy-physics.h: per-pixel physics, one formula for two compilers.
 *
 * Everything here is a static inline function of scalars that compiles as C and
 * as CUDA (AIRY_HD expands to __host__ __device__ under nvcc), so the CPU backend
 * and the CUDA kernels evaluate exactly the same expressions (DESIGN §4).
 * Units: µm, radians; λ is the vacuum wavelength, n the medium index.
 */
#pragma once

#include <math.h>

#ifdef __CUDACC__
# define AIRY_HD __host__ __device__ __forceinline__
#else
# define AIRY_HD static inline
#endif

#define AIRY_PI 3.14159265358979323846

/* Grid: x_j = (j − ⌊N/2⌋)·d, so pixel ⌊N/2⌋ is the optical axis for even and odd N. */
AIRY_HD double
airy_grid_coord (int j, int n, double d)
{
  return (double) (j - n / 2) * d;
}

/* Pupil test, inclusive on the rim (chromatix's circular_pupil). */
AIRY_HD int
airy_inside_circle (double r2, double radius)
{
  return r2 <= radius * radius;
}

/* Paraxial defocus of a point source at z seen in the back focal plane:
 * φ = −π z n r² / (λ f²)  (chromatix objective_point_source). */
AIRY_HD double
airy_defocus_paraxial (double r2, double z, double n, double lambda, double f)
{
  return -AIRY_PI * z * n * r2 / (lambda * f * f);
}

/* Non-paraxial defocus: φ = (2π n z/λ)(√(1 − (r/f)²) − 1), with r/f = sin θ
 * (sine condition); its paraxial limit is the formula above. */
AIRY_HD double
airy_defocus_nonparaxial (double r2, double z, double n, double lambda, double f)
{
  double s2 = r2 / (f * f);
  double c = s2 < 1.0 ? sqrt (1.0 - s2) : 0.0;
  return 2.0 * AIRY_PI * n * z / lambda * (c - 1.0);
}

/* The objective's defocus phase per µm of z: both models are linear in z
 * (φ(z) = z·G), so this one function gives apply()'s phase, compile()'s G
 * and the fused PSF's G (the CPU and CUDA kernels only ever see G). */
AIRY_HD double
airy_objective_defocus (double r2, double n, double lambda, double f, int nonparaxial)
{
  return nonparaxial ? airy_defocus_nonparaxial (r2, 1.0, n, lambda, f)
                     : airy_defocus_paraxial (r2, 1.0, n, lambda, f);
}

/* Aplanatic apodisation on the pupil grid, which is uniform in sin θ = r/f
 * (in kx, ky): (cos θ)^−½ = (1 − (r/f)²)^−¼, Richards–Wolf's √cos θ per solid
 * angle divided by the cos θ of the Jacobian dkx dky = k² cos θ sin θ dθ dφ
 * (DESIGN §3; Hanser et al. 2004, Leutenegger et al. 2006). It grows towards
 * the rim; sin θ = 1 (NA = n on the rim) carries no light and gives 0. */
AIRY_HD double
airy_apodisation_aplanatic (double r2, double f)
{
  double s2 = r2 / (f * f);
  return s2 < 1.0 ? 1.0 / sqrt (sqrt (1.0 - s2)) : 0.0;
}

/* Richards–Wolf polarisation factors (Richards & Wolf 1959; Novotny & Hecht
 * eq. 3.66) of the focal field for a unit input polarisation along x
 * (input 0) or y (input 1), at the pupil point (x, y)/f = sin θ (cos φ, sin φ):
 * x input: (cos θ cos²φ + sin²φ, (cos θ − 1) sin φ cos φ, −sin θ cos φ),
 * y input: ((cos θ − 1) sin φ cos φ, cos θ sin²φ + cos²φ, −sin θ sin φ).
 * The map is a rotation (meridional and sagittal parts kept), so the three
 * factors' squares sum to 1. By reciprocity, component i of input j is also
 * what a dipole along i sends into detected polarisation j. */
AIRY_HD void
airy_vectorial_factors (double ux, double uy, int input, double out[3])
{
  double s2 = ux * ux + uy * uy;
  double s = sqrt (s2), c = s2 < 1.0 ? sqrt (1.0 - s2) : 0.0;
  double cp = s > 0.0 ? ux / s : 1.0, sp = s > 0.0 ? uy / s : 0.0;

  if (input == 0)
    {
      out[0] = c * cp * cp + sp * sp;
      out[1] = (c - 1.0) * sp * cp;
      out[2] = -s * cp;
    }
  else
    {
      out[0] = (c - 1.0) * sp * cp;
      out[1] = c * sp * sp + cp * cp;
      out[2] = -s * sp;
    }
}

/* Gibson–Lanni optical path difference (Gibson & Lanni 1991; Li, Xue & Blu
 * 2017 eq. 2–3) without its stage-focus term, at sin θ in the immersion
 * (s2 = sin²θ, NA·ρ = ni·sin θ): depth·√(ns² − ni²s²) + ti0·√(ni² − ni²s²)
 * − ti0·√(ni0² − ni²s²) + tg·√(ng² − ni²s²) − tg0·√(ng0² − ni²s²). The
 * (ti0 + z) immersion thickness's z part is the objective's non-paraxial
 * defocus, so it is not here. The design terms (ni0, ng0) are a reference
 * only: a square root of a negative there counts as 0. *propagating is 0
 * where the ray is evanescent in the sample or the coverslip. */
AIRY_HD double
airy_gibson_lanni_opd (double s2, double ni, double ns, double ng, double ng0, double ni0,
                       double tg, double tg0, double ti0, double depth, int *propagating)
{
  double q = ni * ni * s2;
  double cs = ns * ns - q, cg = ng * ng - q;

  *propagating = cs >= 0.0 && cg >= 0.0;
  if (!*propagating)
    return 0.0;
  return depth * sqrt (cs) + ti0 * sqrt (fmax (ni * ni - q, 0.0)) - ti0 * sqrt (fmax (ni0 * ni0 - q, 0.0))
         + tg * sqrt (cg) - tg0 * sqrt (fmax (ng0 * ng0 - q, 0.0));
}

/* Thin lens transmission phase: −π n r² / (λ f). */
AIRY_HD double
airy_thin_lens_phase (double r2, double n, double lambda, double f)
{
  return -AIRY_PI * n * r2 / (lambda * f);
}

/* Zernike radial polynomial R_n^|m|(ρ) by its finite sum. */
AIRY_HD double
airy_zernike_radial (int n, int m, double rho)
{
  double sum = 0.0;
  int k;

  m = m < 0 ? -m : m;
  if ((n - m) % 2 != 0)
    return 0.0;
  for (k = 0; k <= (n - m) / 2; k++)
    {
      double num = ((k % 2) ? -1.0 : 1.0);
      double den = 1.0;
      int i;

      /* (n−k)! / (k! ((n+m)/2−k)! ((n−m)/2−k)!) without overflow for n ≤ 40 */
      for (i = 2; i <= n - k; i++)
        num *= i;
      for (i = 2; i <= k; i++)
        den *= i;
      for (i = 2; i <= (n + m) / 2 - k; i++)
        den *= i;
      for (i = 2; i <= (n - m) / 2 - k; i++)
        den *= i;
      sum += num / den * pow (rho, n - 2 * k);
    }
  return sum;
}

/* Z_n^m(ρ, θ) over the unit pupil, optionally normalised to unit RMS
 * (√(2(n+1)/(1+δ_m0)), ANSI Z80.28 / Noll); m < 0 is the sine term. */
AIRY_HD double
airy_zernike (int n, int m, double rho, double theta, int normalised)
{
  double v, norm = 1.0;

  if (rho > 1.0)
    return 0.0;
  v = airy_zernike_radial (n, m, rho);
  if (normalised)
    norm = sqrt ((m == 0 ? 1.0 : 2.0) * (n + 1));
  if (m > 0)
    v *= cos (m * theta);
  else if (m < 0)
    v *= sin (-m * theta);
  return norm * v;
}

/* Z_n^m at (x, y) µm of a pupil of the given radius (0 outside it): the
 * phase mask's term and the fit's basis, one formula. */
AIRY_HD double
airy_zernike_at (int n, int m, double x, double y, double radius, int normalised)
{
  double u = x / radius, v = y / radius;
  double rho = sqrt (u * u + v * v);

  if (rho > 1.0)
    return 0.0;
  return airy_zernike (n, m, rho, atan2 (v, u), normalised);
}

/* ANSI (OSA) single index j → (n, m): n = ⌈(−3 + √(9 + 8j))/2⌉, m = 2j − n(n+2). */
AIRY_HD void
airy_zernike_ansi_to_nm (int j, int *n, int *m)
{
  int nn = (int) ceil ((-3.0 + sqrt (9.0 + 8.0 * j)) / 2.0 - 1e-9);
  *n = nn;
  *m = 2 * j - nn * (nn + 2);
}

/* Noll index j (from 1) → (n, m): even j carry cos (m > 0), odd j sin (m < 0). */
AIRY_HD void
airy_zernike_noll_to_nm (int j, int *n, int *m)
{
  int nn = 0, jj = j - 1, mm;

  while (jj > nn)
    {
      nn++;
      jj -= nn;
    }
  /* jj is now the position within row nn (0 … nn) */
  mm = (nn % 2) + 2 * ((jj + ((nn + 1) % 2)) / 2);
  if (mm != 0 && (j % 2) != 0)
    mm = -mm;
  *n = nn;
  *m = mm;
}

/* Fresnel transfer function phase (without the constant e^{ikz}):
 * H = exp(−iπ λ z (fx² + fy²) / n). */
AIRY_HD double
airy_fresnel_tf_phase (double f2, double z, double n, double lambda)
{
  return -AIRY_PI * lambda * z * f2 / n;
}

/* Angular spectrum: kz·z = 2π z √((n/λ)² − f²); returns 0 and *propagating = 0
 * for evanescent frequencies (their decay is handled by the caller). */
AIRY_HD double
airy_angular_spectrum_phase (double f2, double z, double n, double lambda,
                             int *propagating, double *decay)
{
  double k2 = (n / lambda) * (n / lambda) - f2;

  if (k2 >= 0.0)
    {
      *propagating = 1;
      *decay = 1.0;
      return 2.0 * AIRY_PI * z * sqrt (k2);
    }
  *propagating = 0;
  *decay = exp (-2.0 * AIRY_PI * fabs (z) * sqrt (-k2));
  return 0.0;
}

/* chromatix's thin_sample: a slice of thickness t with index change dn
 * from the medium and absorption α transmits e^{i 2π (dn + iα)·t/λ}
 * (λ the vacuum wavelength), re and im in out. */
AIRY_HD void
airy_thin_sample (double dn, double absorption, double t, double lambda, double out[2])
{
  double a = exp (-2.0 * AIRY_PI * absorption * t / lambda), p = 2.0 * AIRY_PI * dn * t / lambda;

  out[0] = a * cos (p);
  out[1] = a * sin (p);
}

/* chromatix's super_gaussian_pupil: e^{−(r/w)^n} */
AIRY_HD double
airy_super_gaussian (double r, double w, double n)
{
  return exp (-pow (r / w, n));
}

/* chromatix's tukey_pupil at ρ = |(y/extent_y, x/extent_x)| clipped to ½,
 * α = w/max(extent): 1 within α/2, then ½(1 + cos(2π(ρ − α/2)/(1 − α))),
 * 0 at ρ = ½ */
AIRY_HD double
airy_tukey (double rho, double alpha)
{
  rho = rho < 0.5 ? rho : 0.5;
  if (rho <= alpha / 2)
    return 1.0;
  return 0.5 * (1.0 + cos (2.0 * AIRY_PI / (1.0 - alpha) * (rho - alpha / 2)));
}

/* chromatix's seidel_aberrations (Voelz, Computational Fourier Optics):
 * the wavefront in waves at (u, v) over the unit pupil for the object
 * field point (hu, hv) (normalised, |h| ≤ 1), with the pupil turned so that
 * X points at the field point: W040 ρ⁴ + W131 h ρ² X + W222 h² X² + W220
 * h² ρ² + W311 h³ X (spherical, coma, astigmatism, field curvature,
 * distortion); 0 outside ρ ≤ 1 */
AIRY_HD double
airy_seidel_waves (double u, double v, const double w[5], double hu, double hv)
{
  double a = atan2 (hv, hu), h = sqrt (hu * hu + hv * hv);
  double X = u * cos (a) + v * sin (a), Y = -u * sin (a) + v * cos (a);
  double r2 = X * X + Y * Y;

  if (u * u + v * v > 1.0)
    return 0.0;
  return w[0] * r2 * r2 + w[1] * h * r2 * X + w[2] * h * h * X * X + w[3] * h * h * r2 + w[4] * h * h * h * X;
}

/* Matsushima–Shimobaba band limit of the angular spectrum method:
 * |f_x| ≤ 1 / (λ_m √((2 Δf z)² + 1)), λ_m = λ/n, Δf = 1/(N d). */
AIRY_HD double
airy_angular_spectrum_band_limit (double z, double n, double lambda, double df)
{
  double t = 2.0 * df * z;
  return n / (lambda * sqrt (t * t + 1.0));
}

/* The frequency of FFT index k of n samples at spacing d (numpy's fftfreq). */
AIRY_HD double
airy_fft_freq (int k, int n, double d)
{
  int kk = k < (n + 1) / 2 ? k : k - n;

  return kk / (n * d);
}

/* The angular spectrum kernel at (fx, fy) for z in a medium n, re and im
 * in out: e^{i2πz√((n/λ)² − f²)}; an evanescent wave decays (or is removed);
 * 0 beyond the band limit (limit_x, limit_y; below 0: none). */
AIRY_HD void
airy_angular_spectrum_kernel (double fx, double fy, double z, double n, double lambda, int remove_evanescent,
                              double limit_x, double limit_y, double out[2])
{
  int propagating;
  double decay, phi = airy_angular_spectrum_phase (fx * fx + fy * fy, z, n, lambda, &propagating, &decay);

  out[0] = out[1] = 0.0;
  if (!propagating)
    out[0] = remove_evanescent ? 0.0 : decay;
  else if (!(limit_x >= 0.0 && (fabs (fx) > limit_x || fabs (fy) > limit_y)))
    {
      out[0] = cos (phi);
      out[1] = sin (phi);
    }
}

/* Wrap a phase into [0, 2π). */
AIRY_HD double
airy_wrap_phase (double phi)
{
  double two_pi = 2.0 * AIRY_PI;
  double w = fmod (phi, two_pi);
  return w < 0.0 ? w + two_pi : w;
}

/* SLM: wrap into [0, 2π) and quantise to 2^bits levels (bits 0: no quantising). */
AIRY_HD double
airy_slm_phase (double phi, int bits)
{
  double w = airy_wrap_phase (phi);
  double levels, step;

  if (bits <= 0)
    return w;
  levels = (double) (1 << bits);
  step = 2.0 * AIRY_PI / levels;
  w = floor (w / step + 0.5) * step;
  return w >= 2.0 * AIRY_PI ? 0.0 : w;
}

/* Named phase masks over the unit pupil (u, v) = (x, y)/R, ρ² = u² + v². */
typedef enum
{
  AIRY_NAMED_DEFOCUSED_RAMPS = 0,
  AIRY_NAMED_CUBIC,
  AIRY_NAMED_VORTEX,
  AIRY_NAMED_AXICON,
  AIRY_NAMED_GRATING,
  AIRY_NAMED_PRISM,
  AIRY_NAMED_SINUSOID,
  AIRY_NAMED_CIRCULAR,
  AIRY_NAMED_POTATO_CHIP,
} AiryNamedMask;

/* Defocused ramps (chromatix's PSF-engineering mask): the pupil is split into
 * `count` angular sectors, each with a linear ramp of `slope` rad per unit ρ
 * along the sector's bisector plus a defocus of `defocus` rad at the rim. */
AIRY_HD double
airy_named_defocused_ramps (double u, double v, int count, double slope, double defocus)
{
  double theta = atan2 (v, u);
  double sector = 2.0 * AIRY_PI / (count > 0 ? count : 1);
  double t = theta < 0.0 ? theta + 2.0 * AIRY_PI : theta;
  double centre = (floor (t / sector) + 0.5) * sector;

  return slope * (u * cos (centre) + v * sin (centre)) + defocus * (u * u + v * v);
}

/* Cubic (EDOF, Dowski–Cathey): φ = α (u³ + v³). */
AIRY_HD double
airy_named_cubic (double u, double v, double alpha)
{
  return alpha * (u * u * u + v * v * v);
}

/* Vortex of topological charge ℓ: φ = ℓ θ. */
AIRY_HD double
airy_named_vortex (double u, double v, double charge)
{
  return charge * atan2 (v, u);
}

/* Axicon: a cone, φ = −slope · ρ (slope in rad per unit ρ). */
AIRY_HD double
airy_named_axicon (double u, double v, double slope)
{
  return -slope * sqrt (u * u + v * v);
}

/* Blazed grating of `period` (µm) at angle `angle`, wrapped to [0, 2π). */
AIRY_HD double
airy_named_grating (double x, double y, double period, double angle)
{
  return airy_wrap_phase (2.0 * AIRY_PI * (x * cos (angle) + y * sin (angle)) / period);
}

/* Sinusoid grating (chromatix's sinusoid_grating about the axis): an
 * amplitude of `strength` rad, φ = strength·sin(2π (x cos θ + y sin θ)/period). */
AIRY_HD double
airy_named_sinusoid (double x, double y, double strength, double period, double angle)
{
  return strength * sin (2.0 * AIRY_PI * (x * cos (angle) + y * sin (angle)) / period);
}

/* Circular phase (chromatix's circular_phase, shift·r² inside r ≤ w/2, with
 * the unit pupil's radius R = w/2): φ = strength·ρ² for ρ ≤ 1, strength =
 * shift·R² the phase at the rim; 0 outside. */
AIRY_HD double
airy_named_circular (double u, double v, double strength)
{
  double rho2 = u * u + v * v;

  return rho2 <= 1.0 ? strength * rho2 : 0.0;
}

/* The "potato chip" (helical focus) mask of Broxton's thesis (chromatix's
 * potato_chip): φ = θ·(d·√(k² − ρ²) + C0) for ρ < 1, θ = atan2(v, u),
 * k = n/λ; 0 outside. */
AIRY_HD double
airy_named_potato_chip (double u, double v, double depth, double c0, double n, double lambda)
{
  double rho2 = u * u + v * v, k = n / lambda;

  if (rho2 >= 1.0)
    return 0.0;
  return atan2 (v, u) * (depth * sqrt (k * k - rho2) + c0);
}

/* Prism: an unwrapped linear ramp, φ = 2π (x sin α_x + y sin α_y) n / λ, with the
 * deflection given by the tilt (kx, ky) in rad/µm. */
AIRY_HD double
airy_named_prism (double x, double y, double kx, double ky)
{
  return kx * x + ky * y;
}

/* ---- Counter-based random numbers (identical on CPU and GPU, and for any
 * sharding): a SplitMix64 finaliser over (seed, stream, counter). ---- */

AIRY_HD unsigned long long
airy_mix64 (unsigned long long z)
{
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
AIRY_HD double
airy_uniform (unsigned long long seed, unsigned long long stream, unsigned long long counter)
{
  unsigned long long h = airy_mix64 (airy_mix64 (airy_mix64 (seed) ^ stream) ^ counter);
  return ((double) (h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal by Box–Muller from two counters. */
AIRY_HD double
airy_normal (unsigned long long seed, unsigned long long stream, unsigned long long counter)
{
  double u1 = airy_uniform (seed, stream, 2 * counter);
  double u2 = airy_uniform (seed, stream, 2 * counter + 1);
  return sqrt (-2.0 * log (u1)) * cos (2.0 * AIRY_PI * u2);
}

/* Poisson(mean): inversion for small means, Hörmann's transformed rejection
 * (PTRS, 1993) above 10. Counters 1000… are the rejection loop's draws. */
AIRY_HD double
airy_poisson (double mean, unsigned long long seed, unsigned long long stream)
{
  if (!(mean > 0.0))
    return 0.0;
  if (mean < 10.0)
    {
      double u = airy_uniform (seed, stream, 0);
      double p = exp (-mean), cdf = p;
      int k = 0;

      while (u > cdf && k < 1000)
        {
          k++;
          p *= mean / k;
          cdf += p;
        }
      return (double) k;
    }
  else
    {
      double slam = sqrt (mean), loglam = log (mean);
      double b = 0.931 + 2.53 * slam;
      double a = -0.059 + 0.02483 * b;
      double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
      double vr = 0.9277 - 3.6224 / (b - 2.0);
      unsigned long long c;

      for (c = 1000; c < 1000 + 2 * 4096; c += 2)
        {
          double u = airy_uniform (seed, stream, c) - 0.5;
          double v = airy_uniform (seed, stream, c + 1);
          double us = 0.5 - fabs (u);
          double k = floor ((2.0 * a / us + b) * u + mean + 0.43);

          if (us >= 0.07 && v <= vr)
            return k;
          if (k < 0.0 || (us < 0.013 && v > us))
            continue;
          if (log (v) + log (inv_alpha) - log (a / (us * us) + b)
              <= -mean + k * loglam - lgamma (k + 1.0))
            return k;
        }
      return floor (mean + 0.5);
    }
}

/* The sensor's noise chain for one pixel: photo-electrons = exposure ·
 * intensity, shot noise (Poisson or its Gaussian approximation), full-well
 * saturation, read noise, gain and offset, rounding to the bit depth. The
 * random numbers are counter-based: (seed, plane << 40 ^ pixel), so the CPU
 * and the GPU draw the same ones. */
typedef struct
{
  int                noise;        /* 0 none, 1 Poisson, 2 Gaussian */
  double             exposure;
  double             read_noise;
  double             gain;
  double             offset;
  double             full_well;    /* 0: none */
  int                bits;         /* 0: no rounding */
  unsigned long long seed;
  unsigned long long stream;       /* the plane */
} AiryNoiseParams;

AIRY_HD double
airy_sensor_pixel (const AiryNoiseParams *p, double intensity, unsigned long long i)
{
  double e = p->exposure * intensity;
  unsigned long long s = (p->stream << 40) ^ i;

  if (p->noise == 1)
    e = airy_poisson (e, p->seed, s);
  else if (p->noise == 2)
    e = fmax (0.0, e + sqrt (fmax (e, 0.0)) * airy_normal (p->seed, s, 1));
  if (p->full_well > 0.0)
    e = fmin (e, p->full_well);
  if (p->read_noise > 0.0)
    e += p->read_noise * airy_normal (p->seed, s, 2);
  e = p->gain * e + p->offset;
  if (p->bits > 0)
    e = fmin (fmax (floor (e + 0.5), 0.0), ldexp (1.0, p->bits) - 1.0);
  return e;
}

/* e^{i·z·g} in float, with the phase z·g and its reduction to [−π, π] in
 * double, as the CPU computes it: a float product drifts by ≈ |z·g|·2⁻²³
 * rad (10⁻³ rad at z·g = 10⁴), the reduced one stays at float rounding of
 * the result whatever z is. */
AIRY_HD void
airy_defocus_cis (double z, double g, float *s, float *c)
{
    double phi = z * g;
    float t = (float) (phi - 2.0 * AIRY_PI * rint (phi / (2.0 * AIRY_PI)));
#ifdef __CUDA_ARCH__
    sincosf (t, s, c);
#else
    *s = sinf (t);
    *c = cosf (t);
#endif
}

/* ---- Sources generated per plane (POINT, GAUSS) ---- */

/* sin and cos of one angle, as the CPU's libm computes them */
AIRY_HD void
airy_sincos (double t, double *s, double *c)
{
#ifdef __CUDA_ARCH__
    sincos (t, s, c);
#else
    *s = sin (t);
    *c = cos (t);
#endif
}

/* The point source's phase at (x, y): u = exp(iπ n r² / (λ z)), the
 * Fresnel approximation of e^{ikR}/R (normalised to the power per plane). */
AIRY_HD double
airy_point_source_phase (double x, double y, double n, double lambda, double z)
{
  return AIRY_PI * n * (x * x + y * y) / (lambda * z);
}

/* The Gaussian beam at (x, y), z from the waist w0, in its q-parameter form:
 * u = (1/q)·exp(−iπ n r² / (λ q)), q = z + i z_R, z_R = π w0² n / λ (|u| ∝
 * exp(−r²/w(z)²), the Gouy phase included; normalised to the power per
 * plane). The operations are those of C's complex arithmetic under
 * -fcx-limited-range, so the CPU's numbers did not change when this
 * became the one formula. */
AIRY_HD void
airy_gaussian_beam (double x, double y, double n, double lambda, double z, double w0, double *re, double *im)
{
  double zr = AIRY_PI * w0 * w0 * n / lambda;
  double d = z * z + zr * zr;
  double qr = (z + 0.0 * zr) / d, qi = (0.0 * z - zr) / d;   /* 1/q */
  double a = AIRY_PI * n * (x * x + y * y);
  /* −iπ n r² (1/q) / λ: the real part of −i·π·n·r² is −0 */
  double er = (-0.0 * qr - (-a) * qi) / lambda, ei = (-0.0 * qi + (-a) * qr) / lambda;
  double m = exp (er), s, c;

  airy_sincos (ei, &s, &c);
  *re = qr * (m * c) - qi * (m * s);
  *im = qr * (m * s) + qi * (m * c);
}

/* One wavelength's share of a pixel's intensity, w·|u|², in float: the
 * INTENSITY of every backend and the fused PSF's sum over its entries. */
AIRY_HD float
airy_intensity_term (float w, float re, float im)
{
  return w * (re * re + im * im);
}

/* Padding or cropping about pixel ⌊N/2⌋: pixel j of the n_to-long axis
 * takes pixel j − airy_centred_offset (n_to, n_from) of the other. */
AIRY_HD int
airy_centred_offset (unsigned n_to, unsigned n_from)
{
  return (int) (n_to / 2) - (int) (n_from / 2);
}

/* ---- The sensor's resampling ---- */

/* Bilinear sample of img (h × w, spacing dy, dx, centre ⌊N/2⌋) at (y, x) µm; 0 outside. */
AIRY_HD double
airy_bilinear_sample (const float *img, unsigned h, unsigned w, double dy, double dx, double y, double x)
{
  double sy = y / dy + h / 2, sx = x / dx + w / 2;
  int y0 = (int) floor (sy), x0 = (int) floor (sx);
  double fy = sy - y0, fx = sx - x0, v = 0.0;
  int j, i;

  for (j = 0; j < 2; j++)
    for (i = 0; i < 2; i++)
      {
        int yy = y0 + j, xx = x0 + i;
        double wgt = (j ? fy : 1 - fy) * (i ? fx : 1 - fx);

        if (yy >= 0 && yy < (int) h && xx >= 0 && xx < (int) w)
          v += wgt * img[(size_t) yy * w + xx];
      }
  return v;
}

/* Output pixel (oy, ox) of the linear resampling onto oh × ow pixels of
 * ody × odx: the point sample at its centre, times scale. */
AIRY_HD float
airy_linear_resample_at (const float *in, unsigned h, unsigned w, double dy, double dx, unsigned oy, unsigned ox,
                         unsigned oh, unsigned ow, double ody, double odx, double scale)
{
  return (float) (scale * airy_bilinear_sample (in, h, w, dy, dx, airy_grid_coord (oy, oh, ody),
                                                airy_grid_coord (ox, ow, odx)));
}

/* Output pixel (oy, ox) of the block sum of f × f pixels of in (width w),
 * added in row order from 0. */
AIRY_HD float
airy_block_sum_at (const float *in, unsigned w, unsigned f, unsigned oy, unsigned ox)
{
  float s = 0.0f;
  unsigned y, x;

  for (y = 0; y < f; y++)
    for (x = 0; x < f; x++)
      s += in[(size_t) (oy * f + y) * w + ox * f + x];
  return s;
}

/* ---- Samples ---- */

/* Bead i of a bead sample (counter-based uniforms: the same beads for any
 * sharding and on any device): its plane of `planes`, row and column. */
AIRY_HD void
airy_bead_position (unsigned long long seed, unsigned long long i, unsigned planes, unsigned h, unsigned w,
                    unsigned *z, unsigned *y, unsigned *x)
{
  *z = (unsigned) (airy_uniform (seed, i, 0) * planes);
  *y = (unsigned) (airy_uniform (seed, i, 1) * h);
  *x = (unsigned) (airy_uniform (seed, i, 2) * w);
}

/* The "same" crop of a linear convolution that keeps the PSF's centre:
 * image pixel (y, x) is full[(y + cy)·pw + x + cx], times norm (the
 * inverse transform's 1/N). */
AIRY_HD float
airy_conv_crop_at (const float *full, unsigned pw, unsigned cy, unsigned cx, unsigned y, unsigned x, float norm)
{
  return full[(size_t) (y + cy) * pw + x + cx] * norm;
}
