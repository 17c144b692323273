/* An Airy element module: an annular amplitude mask, "ring-mask".
 * Built as a shared module and found on the modules path, it registers its
 * element type with the running program (DESIGN §4, "Modules"). */
#define G_LOG_DOMAIN "airy-ring-mask"

#include <gmodule.h>

#include "airy-element.h"
#include "airy-physics.h"

typedef struct { AiryElement parent; } AiryRingMask;
typedef struct { AiryElementClass parent_class; } AiryRingMaskClass;

GType airy_ring_mask_get_type (void);
G_DEFINE_FINAL_TYPE (AiryRingMask, airy_ring_mask, AIRY_TYPE_ELEMENT)

static gboolean
ring_apply (AiryElement *self, gpointer state, AiryField *field,
            const AiryPlane *plane, GError **error)
{
  double r_in = airy_element_get_double (self, "inner");
  double r_out = airy_element_get_double (self, "outer");
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    for (y = 0; y < field->height; y++)
      for (x = 0; x < field->width; x++)
        {
          double xx = airy_grid_coord (x, field->width, field->dx[l]);
          double yy = airy_grid_coord (y, field->height, field->dy[l]);
          double r2 = xx * xx + yy * yy;

          if (r2 < r_in * r_in || r2 > r_out * r_out)
            field->data[l * np + (gsize) y * field->width + x] = 0.0f;
        }
  return TRUE;
}

static void
airy_ring_mask_class_init (AiryRingMaskClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "ring-mask", "Ring mask (example module)",
                                   AIRY_CATEGORY_MASK);
  element_class->apply = ring_apply;
  element_class->elementwise = TRUE;
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("inner", "Inner radius", "Blocked below this radius", "µm",
                            0.0, 1e6, 20.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("outer", "Outer radius", "Blocked beyond this radius", "µm",
                            0.0, 1e6, 40.0, AIRY_PARAM_EXCLUSIVE_MIN));
}

static void
airy_ring_mask_init (AiryRingMask *self)
{
}

G_MODULE_EXPORT gboolean airy_module_register (const char *path, GError **error);

G_MODULE_EXPORT gboolean
airy_module_register (const char *path,
                      GError    **error)
{
  airy_element_register (airy_ring_mask_get_type ());
  return TRUE;
}
