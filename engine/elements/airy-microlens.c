/* microlens-array: chromatix's microlens_array, rectangular_microlens_array
 * and hexagonal_microlens_array. Lens i, centred at c_i with radius r,
 * adds the thin-lens phase −π n d²/(λ f) (d = |x − c_i|) where d < r
 * (chromatix's strict test; overlapping lenses add their phases); with
 * block-between the light outside every lens is blocked. Layouts: a square
 * or rectangular grid of lenses at the pitch (centred on the axis, lens
 * ⌊m/2⌋ on it, as chromatix's), a hexagon of `lenses` per outer side (3k² −
 * 3k + 1 lenses: rows √3/2·pitch apart, each offset by half a pitch), or the
 * centres given (y, x pairs). The phase is exact at every wavelength, which
 * is chromatix's phase at its central wavelength scaled by λ_c/λ. */
#define G_LOG_DOMAIN "airy-microlens"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"

typedef struct { AiryElement parent; } AiryMicrolensArray;
typedef struct { AiryElementClass parent_class; } AiryMicrolensArrayClass;
G_DEFINE_FINAL_TYPE (AiryMicrolensArray, _airy_microlens_array, AIRY_TYPE_ELEMENT)

/* The lens centres of the layout (y, x pairs, µm) into centres; FALSE
 * with error set for a custom list that is not pairs. */
static gboolean
lens_centres (AiryElement *self, GArray *centres, const char *path, GError **error)
{
  double pitch = airy_element_get_double (self, "pitch");
  int layout = airy_element_get_enum (self, "layout");
  int my, mx, i, j, q, r, k;

  switch (layout)
    {
    case AIRY_MICROLENS_CUSTOM:
      {
        gsize n = 0;
        const double *v = airy_element_get_doubles (self, "centers", &n);

        if (n == 0 || n % 2 != 0)
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("%s.centers: needs (y, x) pairs of lens centres (µm), got %lu values"),
                         path, (unsigned long) n);
            return FALSE;
          }
        g_array_append_vals (centres, v, n);
        return TRUE;
      }
    case AIRY_MICROLENS_HEXAGONAL:
      k = airy_element_get_int (self, "lenses") - 1;
      /* chromatix's axial coordinates: q along x, r at 60° */
      for (q = -k; q <= k; q++)
        for (r = MAX (-k, -q - k); r <= MIN (k, -q + k); r++)
          {
            double c[2] = { pitch * r * sqrt (3.0) / 2.0, pitch * (q + r / 2.0) };

            g_array_append_vals (centres, c, 2);
          }
      return TRUE;
    default:
      my = layout == AIRY_MICROLENS_SQUARE ? airy_element_get_int (self, "lenses")
                                          : airy_element_get_int (self, "lenses-y");
      mx = layout == AIRY_MICROLENS_SQUARE ? my : airy_element_get_int (self, "lenses-x");
      for (i = 0; i < my; i++)
        for (j = 0; j < mx; j++)
          {
            double c[2] = { pitch * (i - my / 2), pitch * (j - mx / 2) };

            g_array_append_vals (centres, c, 2);
          }
      return TRUE;
    }
}

static gboolean
microlens_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  g_autoptr(GArray) centres = g_array_new (FALSE, FALSE, sizeof (double));
  double pitch = airy_element_get_double (self, "pitch");
  double pixel = MAX (ctx->dx[0], ctx->dy[0]);

  if (airy_element_get_enum (self, "layout") != AIRY_MICROLENS_CUSTOM && pitch < 2.0 * pixel)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.pitch: must be at least two pixels (2 × %g µm), got %g µm"), ctx->path, pixel, pitch);
      return FALSE;
    }
  if (!lens_centres (self, centres, ctx->path, error))
    return FALSE;
  ctx->n = airy_element_get_double (self, "n");
  return TRUE;
}

/* plane l times e^{iφ}·a: φ the sum of the lenses' phases, a 1 inside a
 * lens and 0 elsewhere with block-between (each lens visits its own box) */
static void
apply_plane (AiryElement *self, const GArray *centres, AiryField *field, guint l)
{
  double f = airy_element_get_double (self, "f"), n = airy_element_get_double (self, "n");
  double r = airy_element_get_double (self, "radius");
  gboolean block = airy_element_get_boolean (self, "block-between");
  guint h = field->height, w = field->width, i;
  gsize np = (gsize) h * w, k;
  double dy = field->dy[l], dx = field->dx[l];
  double c = airy_thin_lens_phase (1.0, n, field->lambda[l], f);
  g_autofree double *phase = g_new0 (double, np);
  g_autofree guint8 *inside = g_new0 (guint8, np);
  fftwf_complex *u = field->data + l * np;

  for (i = 0; i + 1 < centres->len; i += 2)
    {
      double cy = g_array_index (centres, double, i), cx = g_array_index (centres, double, i + 1);
      /* the pixels within r of the centre: x_j = (j − ⌊W/2⌋)·dx */
      int y0 = MAX (0, (int) floor ((cy - r) / dy) + (int) h / 2);
      int y1 = MIN ((int) h - 1, (int) ceil ((cy + r) / dy) + (int) h / 2);
      int x0 = MAX (0, (int) floor ((cx - r) / dx) + (int) w / 2);
      int x1 = MIN ((int) w - 1, (int) ceil ((cx + r) / dx) + (int) w / 2);
      int y, x;

      for (y = y0; y <= y1; y++)
        for (x = x0; x <= x1; x++)
          {
            double yy = airy_grid_coord (y, h, dy) - cy, xx = airy_grid_coord (x, w, dx) - cx;
            double d2 = xx * xx + yy * yy;

            if (d2 < r * r)
              {
                phase[(gsize) y * w + x] += c * d2;
                inside[(gsize) y * w + x] = 1;
              }
          }
    }
  for (k = 0; k < np; k++)
    u[k] *= block && !inside[k] ? 0.0f : _airy_cis (phase[k]);
}

static gboolean
microlens_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  g_autoptr(GArray) centres = g_array_new (FALSE, FALSE, sizeof (double));
  guint l;

  if (!lens_centres (self, centres, "microlens-array", error))
    return FALSE;
  for (l = 0; l < field->n_lambda; l++)
    apply_plane (self, centres, field, l);
  return TRUE;
}

static gboolean
microlens_relevant (AiryElement *self, GParamSpec *pspec)
{
  int layout = airy_element_get_enum (self, "layout");
  const char *name = pspec->name;

  if (g_str_equal (name, "lenses"))
    return layout == AIRY_MICROLENS_SQUARE || layout == AIRY_MICROLENS_HEXAGONAL;
  if (g_str_equal (name, "lenses-y") || g_str_equal (name, "lenses-x"))
    return layout == AIRY_MICROLENS_RECTANGULAR;
  if (g_str_equal (name, "pitch"))
    return layout != AIRY_MICROLENS_CUSTOM;
  if (g_str_equal (name, "centers"))
    return layout == AIRY_MICROLENS_CUSTOM;
  return TRUE;
}

static void
_airy_microlens_array_class_init (AiryMicrolensArrayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "microlens-array", N_("Microlens array"), AIRY_CATEGORY_LENS);
  element_class->elementwise = TRUE;
  element_class->check = microlens_check;
  element_class->apply = microlens_apply;
  element_class->param_relevant = microlens_relevant;
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("layout", N_("Layout"), N_("A square, rectangular or hexagonal array, or the centres given"),
                          _airy_microlens_layout_get_type (), AIRY_MICROLENS_SQUARE, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("f", N_("Focal length"), N_("Of each lens"), "µm", AIRY_FOCAL_LENGTH_MIN, 1e7, 2000.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Of the medium"), NULL, 1.0, 4.0, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("radius", N_("Lens radius"), N_("Of each lens"), "µm", AIRY_FEATURE_MIN, 1e6, 50.0,
                            AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("pitch", N_("Pitch"), N_("Distance between neighbouring lens centres"), "µm",
                            AIRY_FEATURE_MIN, 1e6, 100.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("lenses", N_("Lenses"), N_("Per side of the square, or per outer side of the hexagon"),
                         1, 1024, 5, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("lenses-y", N_("Rows of lenses"), N_("Of the rectangular array"), 1, 1024, 3, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("lenses-x", N_("Columns of lenses"), N_("Of the rectangular array"), 1, 1024, 5, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("centers", N_("Centres"), N_("Lens centres as y, x pairs"), "µm"));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("block-between", N_("Block between"), N_("Block the light outside the lenses"), FALSE));
}

static void
_airy_microlens_array_init (AiryMicrolensArray *self)
{
}
