/* The scanning microscopes' setup: what a confocal, two-photon or image
 * scanning system asks for (its "excitation", "pinhole" and
 * "detector-array" in "elements", checked), and its chains: the excitation
 * at λ_ex and the detection at the spectrum's wavelengths, each a psf
 * system of the same elements, so that both end in the same image plane
 * at the same pixel. */
#define G_LOG_DOMAIN "airy-modality-scan"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-modality.h"
#include "airy-modality-scan-private.h"
#include "airy-error.h"
#include "airy-elements-private.h"

static const char *const scan_parts[] = { "excitation", "pinhole", "detector-array" };

static gboolean
is_scan_part (AiryElement *e)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (scan_parts); i++)
    if (g_str_equal (airy_element_get_type_name (e), scan_parts[i]))
      return TRUE;
  return FALSE;
}

/* the enabled part of this type and its index, or NULL; a second one is an
 * error */
static AiryElement *
find_part (GPtrArray *elements, const char *type, guint *index, GError **error)
{
  AiryElement *found = NULL;
  guint i;

  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);

      if (!airy_element_get_enabled (e) || !g_str_equal (airy_element_get_type_name (e), type))
        continue;
      if (found)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("elements[%u]: a second \"%s\" (the first is elements[%u]); give one"), i, type, *index);
          return NULL;
        }
      found = e;
      *index = i;
    }
  return found;
}

/* the chain's source and final lens, with the image plane's pixel */
static gboolean
setup_optics (AirySystem *system, AiryScanSetup *s, GError **error)
{
  GPtrArray *elements = airy_system_get_elements (system);
  AiryElement *source = elements->len ? g_ptr_array_index (elements, 0) : NULL, *lens = NULL;
  guint i, h, w;
  double na, n, f;

  if (source == NULL || g_object_class_find_property (G_OBJECT_GET_CLASS (source), "na") == NULL
      || g_object_class_find_property (G_OBJECT_GET_CLASS (source), "f") == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements[0]: a scanning microscope's chain starts at an objective-point-source (its NA "
                     "sets the Airy unit), got %s"), source ? airy_element_get_type_name (source) : _("nothing"));
      return FALSE;
    }
  for (i = elements->len; i-- > 1;)
    {
      AiryElement *e = g_ptr_array_index (elements, i);

      if (!airy_element_get_enabled (e) || is_scan_part (e))
        continue;
      if (!g_str_equal (airy_element_get_type_name (e), "ff-lens") || airy_element_get_boolean (e, "inverse"))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("elements[%u]: a scanning microscope's chain ends in an ff-lens (the image plane of the "
                         "pinhole), got %s"), i, airy_element_get_type_name (e));
          return FALSE;
        }
      lens = e;
      break;
    }
  if (lens == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: a scanning microscope's chain ends in an ff-lens (the image plane of the pinhole)"));
      return FALSE;
    }
  na = airy_element_get_double (source, "na");
  n = airy_element_get_double (source, "n");
  f = airy_element_get_double (source, "f");
  airy_system_get_shape (system, &h, &w);
  s->pupil_radius = f * na / n;
  /* the image plane of a lens f_lens behind an objective f: magnification
   * f_lens/f; its pixel f_lens·λ/(n_lens·N·dx) (DESIGN §3, FF lens) */
  s->au = 1.22 * s->lambda_em / na * airy_element_get_double (lens, "f") / f;
  s->pixel = airy_element_get_double (lens, "f") * s->lambda_em
             / (airy_element_get_double (lens, "n") * w * airy_system_get_spacing (system));
  return TRUE;
}

static gint
compare_cells (gconstpointer a, gconstpointer b)
{
  const double *p = a, *q = b;

  if (p[2] != q[2])
    return p[2] < q[2] ? -1 : 1;
  return p[3] < q[3] ? -1 : p[3] > q[3];
}

/* the element centres in the image plane (µm): a square N × N, or the
 * honeycomb's n cells nearest the axis (by distance, then by angle from +x
 * counter-clockwise), the honeycomb's rows along x */
static void
array_centres (AiryScanSetup *s, guint size)
{
  double pitch = s->element * s->au;
  guint k;

  if (!s->hexagonal)
    {
      double mid = (size - 1) / 2.0;

      for (k = 0; k < s->n_elements; k++)
        {
          s->cy[k] = (k / size - mid) * pitch;
          s->cx[k] = (k % size - mid) * pitch;
        }
      return;
    }
  {
    const int m = 8;
    g_autoptr(GArray) cells = g_array_new (FALSE, FALSE, sizeof (double) * 4);
    int i, j;

    for (i = -m; i <= m; i++)
      for (j = -m; j <= m; j++)
        {
          double c[4];

          c[0] = (j * AIRY_SCAN_SQRT3 / 2.0) * pitch;                 /* y */
          c[1] = (i + j / 2.0) * pitch;                        /* x */
          c[2] = round (hypot (c[0], c[1]) / pitch * 1e9);     /* distance, to ties */
          c[3] = fmod (atan2 (c[0], c[1]) + 2.0 * G_PI + 1e-12, 2.0 * G_PI);
          g_array_append_val (cells, c);
        }
    g_array_sort (cells, compare_cells);
    for (k = 0; k < s->n_elements; k++)
      {
        const double *c = (const double *) cells->data + 4 * k;

        s->cy[k] = c[0];
        s->cx[k] = c[1];
      }
  }
}

/* the array fits the pinhole (its farthest corner within the pinhole's
 * radius), or without one the image plane */
static gboolean
check_array (AirySystem *system, AiryScanSetup *s, const char *path, guint pinhole_at, GError **error)
{
  /* a square's corner is side/√2 from its centre, a hexagon's width/√3 */
  double corner = s->element * s->au / (s->hexagonal ? AIRY_SCAN_SQRT3 : G_SQRT2);
  double half = s->hexagonal ? corner : s->element * s->au / 2.0, reach = 0.0, box = 0.0;
  guint h, w, k;

  for (k = 0; k < s->n_elements; k++)
    {
      reach = MAX (reach, hypot (s->cy[k], s->cx[k]) + corner);
      box = MAX (box, MAX (fabs (s->cy[k]), fabs (s->cx[k])) + half);
    }
  airy_system_get_shape (system, &h, &w);
  if (s->pinhole > 0 && reach / s->au > s->pinhole / 2.0 * (1.0 + 1e-9))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: the array's %u elements of %g AU (%.4g AU across its farthest corners) do not fit the "
                     "pinhole of %g AU (elements[%u].diameter); use fewer or smaller elements or a larger pinhole"),
                   path, s->n_elements, s->element, 2.0 * reach / s->au, s->pinhole, pinhole_at);
      return FALSE;
    }
  if (2.0 * box > MIN (h, w) * s->pixel * (1.0 + 1e-9))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: the array (%.4g µm across in the image plane) does not fit the grid's image plane "
                     "(%.4g µm across); use fewer or smaller elements or a larger grid"),
                   path, 2.0 * box, MIN (h, w) * s->pixel);
      return FALSE;
    }
  return TRUE;
}

/* the excitation and the detector of the modality */
static gboolean
setup_parts (AirySystem *system, const char *modality, AiryScanSetup *s, GPtrArray *warnings, GError **error)
{
  GPtrArray *elements = airy_system_get_elements (system);
  guint ex_at = 0, pin_at = 0, array_at = 0;
  AiryElement *ex, *pin, *array;
  GError *local = NULL;
  gboolean ism = g_str_equal (modality, "ism");

  ex = find_part (elements, "excitation", &ex_at, &local);
  pin = local ? NULL : find_part (elements, "pinhole", &pin_at, &local);
  array = local ? NULL : find_part (elements, "detector-array", &array_at, &local);
  if (local)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  s->photons = g_str_equal (modality, "two-photon") ? 2 : 1;
  /* without an "excitation": its declared wavelength, two-photon's 0.92 µm */
  s->lambda_ex = ex ? airy_element_get_double (ex, "wavelength") : s->photons == 2 ? 0.92 : 0.488;
  s->fill = ex ? airy_element_get_double (ex, "fill") : 0.0;
  /* a confocal always has its pinhole (1 AU unless given); two-photon's
   * detector is open unless a pinhole is given; an ism's array may sit
   * behind one */
  s->pinhole = pin ? airy_element_get_double (pin, "diameter") : g_str_equal (modality, "confocal") ? 1.0 : 0.0;
  if (array && !ism)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements[%u]: a detector array is read by the ism modality; set \"modality\": \"ism\" or "
                     "remove it"), array_at);
      return FALSE;
    }
  if (ism)
    {
      g_autoptr(AiryElement) defaults = array ? NULL : airy_element_new ("detector-array", NULL);
      AiryElement *a = array ? array : defaults;
      double r = airy_element_get_double (a, "reassignment");
      guint size = (guint) airy_element_get_int (a, "size");
      g_autofree char *path = NULL;

      s->hexagonal = airy_element_get_enum (a, "layout") == AIRY_ARRAY_HEXAGONAL;
      s->n_elements = s->hexagonal ? (guint) airy_element_get_int (a, "elements") : size * size;
      s->element = airy_element_get_double (a, "element-size");
      /* the peak of exc(r)·det(r + d) for Gaussians of widths ∝ λ */
      s->reassignment = r > 0.0 ? r : s->lambda_ex * s->lambda_ex
                                      / (s->lambda_ex * s->lambda_ex + s->lambda_em * s->lambda_em);
      array_centres (s, size);
      path = g_strdup_printf ("elements[%u].%s", array ? array_at : elements->len, s->hexagonal ? "elements" : "size");
      if (!check_array (system, s, path, pin_at, error))
        return FALSE;
    }
  if (s->photons == 1 && s->lambda_ex > s->lambda_em && warnings)
    {
      g_autofree char *path = ex ? g_strdup_printf ("elements[%u].wavelength", ex_at)
                                 : g_strdup ("spectrum.wavelengths");

      g_ptr_array_add (warnings, g_strdup_printf (_("%s: the excitation (%g µm) is longer than the emission (%g µm): "
                                                    "a Stokes shift the wrong way"), path, s->lambda_ex,
                                                  s->lambda_em));
    }
  return TRUE;
}

gboolean
_airy_scan_setup (AirySystem    *system,
                  AiryScanSetup *setup,
                  GPtrArray     *warnings,
                  GError       **error)
{
  AiryScanSetup s = { 0 };
  const AirySpectrum *spectrum = airy_system_get_spectrum (system);
  guint l;

  /* the combination is plane by plane: a sensor's sum over z (or its
   * resampling and noise) would come before it */
  if (airy_system_get_sensor (system) != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sensor: a scanning microscope's result is its PSF stack, combined plane by plane; remove the "
                     "sensor"));
      return FALSE;
    }
  s.lambda_em = spectrum->wavelengths[0];
  s.lambda_min = s.lambda_em;
  for (l = 1; l < spectrum->n; l++)
    s.lambda_min = MIN (s.lambda_min, spectrum->wavelengths[l]);
  if (!setup_optics (system, &s, error)
      || !setup_parts (system, airy_system_get_modality (system), &s, warnings, error))
    return FALSE;
  *setup = s;
  return TRUE;
}

/* ---- chains ---- */

guint
_airy_scan_n_chains (AirySystem *system)
{
  AiryScanSetup s;

  /* a system that fails its setup still has its two chains; the run's
   * first chain_system tells what is wrong */
  if (!_airy_scan_setup (system, &s, NULL, NULL))
    return 2;
  return s.photons == 2 && s.pinhole == 0.0 ? 1 : 2;
}

/* the system without the scanning parts, in the psf modality */
static AirySystem *
optics_only (AirySystem *system)
{
  AirySystem *copy = airy_system_copy (system);
  GPtrArray *elements = airy_system_get_elements (copy);
  guint i;

  for (i = elements->len; i-- > 0;)
    if (is_scan_part (g_ptr_array_index (elements, i)))
      g_ptr_array_remove_index (elements, i);
  airy_system_set_modality (copy, "psf");
  airy_system_set_channels (copy, FALSE);
  return copy;
}

/* Chain 0: the excitation at λ_ex, its pupil spacing scaled by λ_ex/λ_em so
 * that the final lens's pixel f·λ/(n·N·dx) is the detection's; a Gaussian
 * laser (fill) as a gaussian-pupil after the source. Chain 1: the
 * detection, the system's optics at its spectrum. */
AirySystem *
_airy_scan_chain_system (AirySystem *system,
                         guint       index,
                         GError    **error)
{
  g_autoptr(AirySystem) sub = NULL;
  AiryScanSetup s;
  AirySpectrum *spectrum;
  double one = 1.0;

  if (!_airy_scan_setup (system, &s, NULL, error))
    return NULL;
  sub = optics_only (system);
  if (index == 1)
    return g_steal_pointer (&sub);
  spectrum = airy_spectrum_new (&s.lambda_ex, &one, 1, error);
  if (spectrum == NULL)
    return NULL;
  airy_system_set_spectrum (sub, spectrum);
  airy_spectrum_free (spectrum);
  airy_system_set_spacing (sub, airy_system_get_spacing (system) * s.lambda_ex / s.lambda_em);
  if (s.fill > 0.0)
    {
      AiryElement *laser = airy_element_new ("gaussian-pupil", NULL);

      /* amplitude exp(−r²/w²) is intensity exp(−2r²/w²): w the 1/e² radius */
      g_object_set (laser, "waist", s.fill * s.pupil_radius, NULL);
      g_ptr_array_insert (airy_system_get_elements (sub), 1, laser);
    }
  return g_steal_pointer (&sub);
}

/* The geometry's chain: the detection's (the spectrum's), which sets the
 * result's shape and pixel; the setup is checked here, so that the panel
 * and `airy-sim validate` tell what a run would. */
gboolean
_airy_scan_chain (AiryGeometry *geom,
                  GError      **error)
{
  GPtrArray *elements = airy_system_get_elements (geom->system);
  AiryScanSetup s;
  guint i;

  if (!_airy_scan_setup (geom->system, &s, geom->warnings, error))
    return FALSE;
  for (i = elements->len; i-- > 0;)
    if (is_scan_part (g_ptr_array_index (elements, i)))
      g_ptr_array_remove_index (elements, i);
  return _airy_modality_psf_chain (geom, error);
}
