#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  AIRY_COLORMAP_GRAY,
  AIRY_COLORMAP_INFERNO,
  AIRY_COLORMAP_MAGMA,
  AIRY_COLORMAP_VIRIDIS,
  AIRY_COLORMAP_FIRE,
  AIRY_COLORMAP_DIVERGING,   /* signed values: blue, white at the middle, red */
  AIRY_N_COLORMAPS
} AiryColormap;

/* 256 RGB triplets; inverted reverses the map. */
void         airy_colormap_lut        (AiryColormap colormap,
                                       gboolean     inverted,
                                       guint8       lut[256 * 3]);
const char  *airy_colormap_name       (AiryColormap colormap);
gboolean     airy_colormap_from_name  (const char   *name,
                                       AiryColormap *colormap);

G_END_DECLS
