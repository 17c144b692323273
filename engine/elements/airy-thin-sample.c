/* thin-sample: chromatix's thin_sample, a thin absorbing and phase object
 * that transmits t(x, y) = e^{i 2π (Δn + i·α)·d/λ} (Δn the index change
 * from the medium, α the absorption, d the thickness, λ each wavelength in
 * vacuum). Δn and α are constants, images (a PNG or TIFF stretched over the
 * grid, its values mapped to [0, 1] and scaled by dn and absorption), or
 * maps (a value per pixel of the grid, row by row). Pixelwise: a MULTIPLY
 * op that the fusion pass folds into the source. */
#define G_LOG_DOMAIN "airy-thin-sample"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"
#include "airy-error.h"

typedef struct { AiryElement parent; } AiryThinSample;
typedef struct { AiryElementClass parent_class; } AiryThinSampleClass;
G_DEFINE_FINAL_TYPE (AiryThinSample, _airy_thin_sample, AIRY_TYPE_ELEMENT)

typedef struct
{
  guint   height, width;
  double  dn, absorption, thickness;
  float  *dn_map, *absorption_map;  /* height × width, or NULL for the constant */
} ThinState;

static void
thin_state_free (gpointer p)
{
  ThinState *s = p;

  g_free (s->dn_map);
  g_free (s->absorption_map);
  g_free (s);
}

/* A map of the grid's n entries (row by row) or none: what a map parameter
 * of a sample must hold (thin-sample, multislice). */
gboolean
_airy_sample_map_check (AiryElement *self, const char *name, gsize need, const char *shape,
                        const char *path, GError **error)
{
  gsize n = 0;

  airy_element_get_doubles (self, name, &n);
  if (n == 0 || n == need)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s.%s: needs %s = %lu values (row by row), got %lu"),
               path, name, shape, (unsigned long) need, (unsigned long) n);
  return FALSE;
}

/* the map as floats (NULL when it is empty) */
float *
_airy_sample_map_floats (AiryElement *self, const char *name, double scale)
{
  gsize n = 0, i;
  const double *v = airy_element_get_doubles (self, name, &n);
  float *out;

  if (n == 0)
    return NULL;
  out = g_new (float, n);
  for (i = 0; i < n; i++)
    out[i] = (float) (scale * v[i]);
  return out;
}

static gboolean
thin_check_maps (AiryElement *self, const AiryContext *ctx, GError **error)
{
  g_autofree char *shape = g_strdup_printf ("%u × %u", ctx->height, ctx->width);
  gsize need = (gsize) ctx->height * ctx->width;

  if (airy_element_get_enum (self, "source") != AIRY_SAMPLE_SOURCE_MAP)
    return TRUE;
  return _airy_sample_map_check (self, "dn-map", need, shape, ctx->path, error)
         && _airy_sample_map_check (self, "absorption-map", need, shape, ctx->path, error);
}

/* an image's values in [0, 1] times scale, or NULL (with error set when
 * the file cannot be read; with neither when no file is named and the
 * image is optional) */
static float *
thin_load_image (AiryElement *self, const AiryContext *ctx, const char *name, double scale,
                 gboolean optional, GError **error)
{
  g_autofree char *prop = g_strdup_printf ("%s.%s", ctx->path, name);
  const char *file = airy_element_get_string (self, name);
  gsize i, n = (gsize) ctx->height * ctx->width;
  float *v;

  if (optional && (file == NULL || *file == '\0'))
    return NULL;
  v = _airy_load_mask_image (self, prop, file, ctx->height, ctx->width, error);
  if (v != NULL)
    for (i = 0; i < n; i++)
      v[i] = (float) (scale * v[i]);
  return v;
}

static gpointer
thin_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  ThinState *s = g_new0 (ThinState, 1);
  g_autoptr(GError) local = NULL;

  s->height = ctx->height;
  s->width = ctx->width;
  s->dn = airy_element_get_double (self, "dn");
  s->absorption = airy_element_get_double (self, "absorption");
  s->thickness = airy_element_get_double (self, "thickness");
  switch (airy_element_get_enum (self, "source"))
    {
    case AIRY_SAMPLE_SOURCE_IMAGE:
      s->dn_map = thin_load_image (self, ctx, "dn-file", s->dn, FALSE, &local);
      if (local == NULL)
        s->absorption_map = thin_load_image (self, ctx, "absorption-file", s->absorption, TRUE, &local);
      break;
    case AIRY_SAMPLE_SOURCE_MAP:
      if (!thin_check_maps (self, ctx, &local))
        break;
      s->dn_map = _airy_sample_map_floats (self, "dn-map", 1.0);
      s->absorption_map = _airy_sample_map_floats (self, "absorption-map", 1.0);
      /* an empty map is 0 everywhere */
      s->dn = s->absorption = 0.0;
      break;
    default:
      break;
    }
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      thin_state_free (s);
      return NULL;
    }
  return s;
}

static gboolean
thin_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  ThinState *s;

  if (!thin_check_maps (self, ctx, error))
    return FALSE;
  if (airy_element_get_enum (self, "source") != AIRY_SAMPLE_SOURCE_IMAGE)
    return TRUE;
  if (ctx->no_files)
    {
      const char *file = airy_element_get_string (self, "dn-file");

      if (file != NULL && *file != '\0')
        return TRUE;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s.dn-file: no file given"), ctx->path);
      return FALSE;
    }
  /* read once here: a missing or corrupt file is reported with the system */
  s = thin_prepare (self, ctx, error);
  if (s == NULL)
    return FALSE;
  thin_state_free (s);
  return TRUE;
}

static gboolean
thin_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  const ThinState *s = state;
  gsize np = airy_field_plane_size (field), i;
  guint l;

  g_assert (np == (gsize) s->height * s->width);
  for (l = 0; l < field->n_lambda; l++)
    for (i = 0; i < np; i++)
      {
        double dn = s->dn_map ? s->dn_map[i] : s->dn;
        double ab = s->absorption_map ? s->absorption_map[i] : s->absorption;
        double t[2];

        airy_thin_sample (dn, ab, s->thickness, field->lambda[l], t);
        field->data[l * np + i] *= (float) t[0] + I * (float) t[1];
      }
  return TRUE;
}

static gboolean
thin_relevant (AiryElement *self, GParamSpec *pspec)
{
  int source = airy_element_get_enum (self, "source");
  const char *name = pspec->name;

  if (g_str_has_suffix (name, "-file"))
    return source == AIRY_SAMPLE_SOURCE_IMAGE;
  if (g_str_has_suffix (name, "-map"))
    return source == AIRY_SAMPLE_SOURCE_MAP;
  if (g_str_equal (name, "dn") || g_str_equal (name, "absorption"))
    return source != AIRY_SAMPLE_SOURCE_MAP;
  return TRUE;
}

static void
_airy_thin_sample_class_init (AiryThinSampleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "thin-sample", N_("Thin sample"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->check = thin_check;
  element_class->prepare = thin_prepare;
  element_class->free_state = thin_state_free;
  element_class->apply = thin_apply;
  element_class->param_relevant = thin_relevant;
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("source", N_("Source"), N_("Constant, image files or maps of the grid"),
                          _airy_sample_source_get_type (), AIRY_SAMPLE_SOURCE_CONSTANT, AIRY_PARAM_SELECTS));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("dn", N_("Index change"), N_("Δn from the medium (an image's value 1)"), NULL,
                            -4.0, 4.0, 0.01, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("absorption", N_("Absorption"), N_("α: the amplitude falls by e^{−2πα·d/λ} (an image's value 1)"),
                            NULL, 0.0, 10.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("thickness", N_("Thickness"), N_("Of the sample"), "µm", 0.0, 1e6, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_string ("dn-file", N_("Index file"), N_("PNG or TIFF stretched over the grid; values → [0, 1] × Δn"),
                            AIRY_PARAM_FILE));
  airy_element_class_install_property (object_class,
    airy_param_spec_string ("absorption-file", N_("Absorption file"),
                            N_("PNG or TIFF stretched over the grid; values → [0, 1] × α (none: α everywhere)"),
                            AIRY_PARAM_FILE));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("dn-map", N_("Index map"), N_("Δn per pixel, row by row over the grid"), NULL));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("absorption-map", N_("Absorption map"), N_("α per pixel, row by row over the grid"), NULL));
}

static void
_airy_thin_sample_init (AiryThinSample *self)
{
}
