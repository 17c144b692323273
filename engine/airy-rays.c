#define G_LOG_DOMAIN "airy-rays"

#include "config.h"

#include "airy-rays.h"

#include <math.h>

static void
set (double *m, double a, double b, double c, double d)
{
  m[0] = a;
  m[1] = b;
  m[2] = c;
  m[3] = d;
}

/**
 * airy_abcd_free_space:
 * @z: distance (µm)
 * @abcd: (out caller-allocates) (array fixed-size=4): the matrix {1, z, 0, 1}
 */
void
airy_abcd_free_space (double z, double *abcd)
{
  g_return_if_fail (abcd != NULL);
  set (abcd, 1.0, z, 0.0, 1.0);
}

/**
 * airy_abcd_thin_lens:
 * @f: focal length (µm), not 0
 * @inverse: passing backwards (the focal length negated)
 * @abcd: (out caller-allocates) (array fixed-size=4): the matrix {1, 0, −1/f, 1}
 */
void
airy_abcd_thin_lens (double f, gboolean inverse, double *abcd)
{
  g_return_if_fail (abcd != NULL);
  g_return_if_fail (f != 0.0);
  set (abcd, 1.0, 0.0, -1.0 / (inverse ? -f : f), 1.0);
}

/**
 * airy_abcd_multiply:
 * @second: (array fixed-size=4): the element the ray meets second
 * @first: (array fixed-size=4): the element the ray meets first
 * @abcd: (out caller-allocates) (array fixed-size=4): @second · @first (may alias either)
 */
void
airy_abcd_multiply (const double *second, const double *first, double *abcd)
{
  double a, b, c, d;

  g_return_if_fail (second != NULL && first != NULL && abcd != NULL);
  a = second[0] * first[0] + second[1] * first[2];
  b = second[0] * first[1] + second[1] * first[3];
  c = second[2] * first[0] + second[3] * first[2];
  d = second[2] * first[1] + second[3] * first[3];
  set (abcd, a, b, c, d);
}

/**
 * airy_abcd_plano_convex:
 * @radius: radius of the curved face (µm), > 0
 * @thickness: centre thickness (µm), ≥ 0
 * @n_lens: the glass's index
 * @n_medium: the surrounding medium's index
 * @inverse: convex face last (the light passes backwards)
 * @abcd: (out caller-allocates) (array fixed-size=4): exit · thickness · entrance
 *
 * Forwards the curved face comes first: refraction into the glass
 * {1, 0, (n_m − n_l)/(R·n_l), n_m/n_l}, the thickness, the flat face
 * {1, 0, 0, n_l/n_m}; backwards the flat face, the thickness and the curved
 * face {1, 0, −(n_l − n_m)/(R·n_m), n_l/n_m}. Either way C = −(n_l − n_m)/(n_m·R),
 * the lensmaker's 1/f for one flat face.
 */
void
airy_abcd_plano_convex (double radius, double thickness, double n_lens, double n_medium,
                        gboolean inverse, double *abcd)
{
  double entrance[4], centre[4], exit[4];

  g_return_if_fail (abcd != NULL);
  g_return_if_fail (radius > 0.0 && n_lens > 0.0 && n_medium > 0.0);
  if (inverse)
    {
      set (entrance, 1.0, 0.0, 0.0, n_medium / n_lens);
      set (exit, 1.0, 0.0, -(n_lens - n_medium) / (radius * n_medium), n_lens / n_medium);
    }
  else
    {
      set (entrance, 1.0, 0.0, (n_medium - n_lens) / (radius * n_lens), n_medium / n_lens);
      set (exit, 1.0, 0.0, 0.0, n_lens / n_medium);
    }
  airy_abcd_free_space (thickness, centre);
  airy_abcd_multiply (centre, entrance, abcd);
  airy_abcd_multiply (exit, abcd, abcd);
}

/**
 * airy_abcd_focal_length:
 * @abcd: (array fixed-size=4): a system's matrix
 *
 * Returns: the effective focal length −1/C (infinite for an afocal system)
 */
double
airy_abcd_focal_length (const double *abcd)
{
  g_return_val_if_fail (abcd != NULL, NAN);
  return abcd[2] == 0.0 ? INFINITY : -1.0 / abcd[2];
}
