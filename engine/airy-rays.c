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

/* d, a thin lens f, f (the df-lens's object distance d; the ff-lens's
 * d = f); inverse: the inverse matrix, −f, the lens −f, −d */
static void
fourier_abcd (double d, double f, gboolean inverse, double *abcd)
{
  double in[4], lens[4], out[4];

  airy_abcd_free_space (inverse ? -f : d, in);
  airy_abcd_thin_lens (f, inverse, lens);
  airy_abcd_free_space (inverse ? -d : f, out);
  airy_abcd_multiply (lens, in, abcd);
  airy_abcd_multiply (out, abcd, abcd);
}

/**
 * airy_element_get_abcd:
 * @element: an element
 * @abcd: (out caller-allocates) (array fixed-size=4): its paraxial ray
 *   transfer matrix, the identity where it has none
 *
 * The lenses (thin, FF, DF, thick plano-convex and its FF version) and
 * free-space propagation have a ray transfer matrix; sources, pupils, masks
 * and samples do not (a ray passes them unchanged). A disabled element is
 * the identity.
 *
 * Returns: whether the element has a ray transfer matrix
 */
gboolean
airy_element_get_abcd (AiryElement *element, double *abcd)
{
  const char *type;
  double gap[4];

  g_return_val_if_fail (AIRY_IS_ELEMENT (element), FALSE);
  g_return_val_if_fail (abcd != NULL, FALSE);
  airy_abcd_free_space (0.0, abcd);
  if (!airy_element_get_enabled (element))
    return FALSE;
  type = airy_element_get_type_name (element);
  if (g_str_equal (type, "propagate"))
    airy_abcd_free_space (airy_element_get_double (element, "z"), abcd);
  else if (g_str_equal (type, "thin-lens"))
    airy_abcd_thin_lens (airy_element_get_double (element, "f"), FALSE, abcd);
  else if (g_str_equal (type, "ff-lens") || g_str_equal (type, "df-lens"))
    {
      double f = airy_element_get_double (element, "f");

      fourier_abcd (g_str_equal (type, "df-lens") ? airy_element_get_double (element, "d") : f, f,
                    airy_element_get_boolean (element, "inverse"), abcd);
    }
  else if (g_str_has_prefix (type, "thick-plano-convex-"))
    {
      double radius = airy_element_get_double (element, "radius");

      if (!(radius > 0.0))
        return FALSE;
      airy_abcd_plano_convex (radius, airy_element_get_double (element, "thickness"),
                              airy_element_get_double (element, "n-lens"), airy_element_get_double (element, "n"),
                              airy_element_get_boolean (element, "inverse"), abcd);
      if (g_str_equal (type, "thick-plano-convex-ff-lens"))
        {
          airy_abcd_free_space (airy_element_get_double (element, "f"), gap);
          airy_abcd_multiply (abcd, gap, abcd);
          airy_abcd_multiply (gap, abcd, abcd);
        }
    }
  else
    return FALSE;
  return TRUE;
}

/**
 * airy_system_get_abcd:
 * @system: a system
 * @abcd: (out caller-allocates) (array fixed-size=4): the product of its
 *   elements' ray transfer matrices, the last one leftmost
 *
 * Returns: how many elements have a ray transfer matrix
 */
guint
airy_system_get_abcd (AirySystem *system, double *abcd)
{
  GPtrArray *elements;
  guint i, n = 0;
  double m[4];

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), 0);
  g_return_val_if_fail (abcd != NULL, 0);
  airy_abcd_free_space (0.0, abcd);
  elements = airy_system_get_elements (system);
  for (i = 0; i < elements->len; i++)
    if (airy_element_get_abcd (g_ptr_array_index (elements, i), m))
      {
        airy_abcd_multiply (m, abcd, abcd);
        n++;
      }
  return n;
}
