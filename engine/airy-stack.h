#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * AiryStack:
 * A float32 stack data[z][y][x] with its voxel size in µm (0: unknown) and,
 * for images read from disk, the bit depth they were stored with.
 */
typedef struct
{
  guint   depth;
  guint   height;
  guint   width;
  float  *data;
  double  dx;
  double  dy;
  double  dz;
  double  z0;      /* z of the first plane, µm */
  int     bits;    /* 8, 16 or 32 as read; 32 for computed stacks */
  /*< private >*/
  gsize   mapped;  /* bytes mapped for data (large stacks), 0 when malloc'd */
} AiryStack;

AiryStack *airy_stack_new        (guint depth,
                                  guint height,
                                  guint width);
void       airy_stack_free       (AiryStack *stack);
AiryStack *_airy_stack_new_uninitialised (guint depth,
                                          guint height,
                                          guint width);
AiryStack *airy_stack_copy       (const AiryStack *stack);
float     *airy_stack_plane      (const AiryStack *stack,
                                  guint            z);
gsize      airy_stack_plane_size (const AiryStack *stack);
void       airy_stack_min_max    (const AiryStack *stack,
                                  float           *min,
                                  float           *max);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryStack, airy_stack_free)

typedef enum
{
  AIRY_COLORMAP_GRAY,
  AIRY_COLORMAP_INFERNO,
  AIRY_COLORMAP_MAGMA,
  AIRY_COLORMAP_VIRIDIS,
  AIRY_COLORMAP_FIRE,
  AIRY_N_COLORMAPS
} AiryColormap;

/* 256 RGB triplets; inverted reverses the map. */
void         airy_colormap_lut        (AiryColormap colormap,
                                       gboolean     inverted,
                                       guint8       lut[256 * 3]);
const char  *airy_colormap_name       (AiryColormap colormap);
gboolean     airy_colormap_from_name  (const char   *name,
                                       AiryColormap *colormap);

/* TIFF: multi-page float32 with ImageJ metadata (images, slices, unit=micron,
 * spacing) and resolution tags. Reading accepts 8/16-bit unsigned and 32-bit
 * float pages of one size. */
gboolean   airy_tiff_write       (const char      *path,
                                  const AiryStack *stack,
                                  GError         **error);
AiryStack *airy_tiff_read        (const char      *path,
                                  GError         **error);

/* PNG: 8-bit RGB through a colormap between lo and hi, or 16-bit gray of raw
 * values scaled to the plane maximum (the scale in a tEXt chunk
 * "airy:scale"); pHYs from the pixel size. */
gboolean   airy_png_write_rgb    (const char      *path,
                                  const guint8    *rgb,
                                  guint            height,
                                  guint            width,
                                  double           dx,
                                  GError         **error);
gboolean   airy_png_write_colormapped (const char      *path,
                                       const float     *plane,
                                       guint            height,
                                       guint            width,
                                       double           dx,
                                       AiryColormap     colormap,
                                       float            lo,
                                       float            hi,
                                       GError         **error);
gboolean   airy_png_write_gray16 (const char      *path,
                                  const float     *plane,
                                  guint            height,
                                  guint            width,
                                  double           dx,
                                  GError         **error);
/* Reads any PNG as one plane of gray values in the file's integer scale,
 * bits = 8 (1-, 2-, 4-bit gray scaled to 0 … 255; palette) or 16: colour
 * becomes Rec. 709 luminance (0.2126 R + 0.7152 G + 0.0722 B, in integers),
 * alpha and tRNS are composited over black (a transparent pixel reads 0),
 * gAMA/cHRM/sRGB/iCCP are ignored, Adam7 files read like plain ones. A
 * 16-bit file written by Airy comes back in its original units (bits = 32).
 * Refused: width or height outside [1, 65536], a plane over the memory
 * budget (checked from IHDR, before decoding), corrupt or truncated files. */
AiryStack *airy_png_read         (const char      *path,
                                  GError         **error);

/* TIFF or PNG by content. */
AiryStack *airy_image_read       (const char      *path,
                                  GError         **error);

/* Atomic output: write to a temporary file beside path, then rename. */
int        airy_atomic_begin     (const char      *path,
                                  char           **tmp_path,
                                  GError         **error);
gboolean   airy_atomic_commit    (const char      *tmp_path,
                                  const char      *path,
                                  GError         **error);
void       airy_atomic_abort     (const char      *tmp_path);

G_END_DECLS
