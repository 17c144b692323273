/* Colormaps for display and PNG export. */
#define G_LOG_DOMAIN "airy-colormap"

#include "config.h"

#include <math.h>

#include "airy-colormap.h"

/* perceptual maps as 10 evenly spaced stops (matplotlib's
 * published values), interpolated linearly; fire after ImageJ's LUT. ---- */

static const guint32 stops_inferno[] = { 0x000004, 0x1b0c41, 0x4a0c6b, 0x781c6d, 0xa52c60,
                                         0xcf4446, 0xed6925, 0xfb9b06, 0xf7d13d, 0xfcffa4 };
static const guint32 stops_magma[]   = { 0x000004, 0x180f3d, 0x440f76, 0x721f81, 0x9e2f7f,
                                         0xcd4071, 0xf1605d, 0xfd9668, 0xfeca8d, 0xfcfdbf };
static const guint32 stops_viridis[] = { 0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e,
                                         0x1f9e89, 0x35b779, 0x6ece58, 0xb5de2b, 0xfde725 };
static const guint32 stops_fire[]    = { 0x000000, 0x1f0060, 0x5a0090, 0x9a0078, 0xd4103c,
                                         0xf54a00, 0xff8c00, 0xffc000, 0xffe860, 0xffffff };
static const guint32 stops_gray[]    = { 0x000000, 0xffffff };
/* ColorBrewer's RdBu, 11 classes, blue to red: white at the middle */
static const guint32 stops_diverging[] = { 0x053061, 0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7,
                                           0xfddbc7, 0xf4a582, 0xd6604d, 0xb2182b, 0x67001f };

static const char *colormap_names[AIRY_N_COLORMAPS] = { "gray", "inferno", "magma", "viridis", "fire",
                                                        "diverging" };

const char *
airy_colormap_name (AiryColormap colormap)
{
  g_return_val_if_fail (colormap < AIRY_N_COLORMAPS, NULL);
  return colormap_names[colormap];
}

gboolean
airy_colormap_from_name (const char   *name,
                         AiryColormap *colormap)
{
  guint i;

  for (i = 0; i < AIRY_N_COLORMAPS; i++)
    if (g_strcmp0 (name, colormap_names[i]) == 0)
      {
        *colormap = i;
        return TRUE;
      }
  return FALSE;
}

void
airy_colormap_lut (AiryColormap colormap,
                   gboolean     inverted,
                   guint8       lut[256 * 3])
{
  const guint32 *stops;
  guint n, i, c;

  switch (colormap)
    {
    case AIRY_COLORMAP_INFERNO: stops = stops_inferno; n = G_N_ELEMENTS (stops_inferno); break;
    case AIRY_COLORMAP_MAGMA:   stops = stops_magma;   n = G_N_ELEMENTS (stops_magma); break;
    case AIRY_COLORMAP_VIRIDIS: stops = stops_viridis; n = G_N_ELEMENTS (stops_viridis); break;
    case AIRY_COLORMAP_FIRE:    stops = stops_fire;    n = G_N_ELEMENTS (stops_fire); break;
    case AIRY_COLORMAP_DIVERGING: stops = stops_diverging; n = G_N_ELEMENTS (stops_diverging); break;
    case AIRY_COLORMAP_GRAY:
    default:                    stops = stops_gray;    n = G_N_ELEMENTS (stops_gray); break;
    }
  for (i = 0; i < 256; i++)
    {
      double t = (inverted ? 255 - i : i) / 255.0 * (n - 1);
      guint k = MIN ((guint) t, n - 2);
      double f = t - k;

      for (c = 0; c < 3; c++)
        {
          int shift = 16 - 8 * c;
          double a = (stops[k] >> shift) & 0xff, b = (stops[k + 1] >> shift) & 0xff;
          lut[3 * i + c] = (guint8) floor (a + f * (b - a) + 0.5);
        }
    }
}
