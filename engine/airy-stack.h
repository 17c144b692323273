#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * AiryStack:
 * A float32 stack data[z][y][x] with its voxel size in µm (0: unknown) and,
 * for images read from disk, the bit depth they were stored with.
 *
 * z positions: plane k sits at z0 + k·dz, unless `z` holds the exact
 * position of every plane (a non-uniform list; dz is then their mean
 * spacing). Computed stacks also carry their provenance: the spectrum and
 * the system as JSON, which OME-TIFF files store.
 */
typedef struct
{
  guint   depth;
  guint   height;
  guint   width;
  float  *data;    /* NULL for a probe: the header of a file without its pixels */
  double  dx;
  double  dy;
  double  dz;
  double  z0;      /* z of the first plane, µm */
  int     bits;    /* 8, 16 or 32 as read; 32 for computed stacks */
  double *z;       /* depth exact positions (µm), or NULL for z0 + k·dz */
  guint   n_channels;      /* read from a hyperstack: its channels and time */
  guint   n_frames;        /*   points (1 or 0: none), and which were read */
  guint   channel;
  guint   frame;
  guint   n_wavelengths;   /* provenance, 0 when unknown */
  double *wavelengths;     /* vacuum, µm */
  double *weights;
  char   *system_json;
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
/* The whole stack's range (NaN ignored), on all cores. */
void       airy_stack_min_max    (const AiryStack *stack,
                                  float           *min,
                                  float           *max);
/* Position of plane k (µm), and whether the planes are evenly spaced
 * (to 1e-6 of the spacing). */
double     airy_stack_get_z      (const AiryStack *stack,
                                  guint            k);
gboolean   airy_stack_z_uniform  (const AiryStack *stack);
/* Sets the exact plane positions (depth values) and z0/dz from them; a
 * uniform list is kept as z0 + k·dz alone. */
void       airy_stack_set_z      (AiryStack       *stack,
                                  const double    *z);
/* Copies the metadata (voxel size, z, provenance; not the pixels nor the
 * plane ranges) of src. */
void       airy_stack_copy_metadata (AiryStack       *dst,
                                     const AiryStack *src);
void       airy_stack_set_provenance (AiryStack    *stack,
                                      guint         n_wavelengths,
                                      const double *wavelengths,
                                      const double *weights,
                                      const char   *system_json);
/* The stack on another grid: depth × height × width at dy, dx (pixel
 * ⌊N/2⌋ stays on the axis) and at the planes z_dst (µm; the source's
 * planes at z_src, or centred on z_dst's middle with spacing dz when
 * z_src is NULL). Values are densities: linear interpolation where the
 * new grid is finer, the mean over each new voxel where it is coarser;
 * zero outside the source. NULL when memory runs out. */
AiryStack *_airy_stack_resample  (const AiryStack *src,
                                  guint            height,
                                  guint            width,
                                  double           dy,
                                  double           dx,
                                  guint            depth,
                                  const double    *z_dst,
                                  const double    *z_src);
/* min and max of n floats (NaN ignored; +inf/−inf when all are NaN). */
void       _airy_floats_min_max  (const float     *v,
                                  gsize            n,
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

/* TIFF writing (DESIGN §6). All pixel data in one contiguous block after
 * the first IFD, the IFDs of the other pages after it (the layout ImageJ
 * and tifffile write: ImageJ reads `images=N` planes back to back from the
 * first strip offset, tifffile memory-maps the block).
 *  - ImageJ hyperstack TIFF (default): float32, ImageJ description
 *    (images, slices, unit=micron, spacing, origins, display range),
 *    resolution tags, slice labels with each plane's z; exact z positions
 *    in Airy's private tag. Beyond 4 GB: ImageJ's own large-stack layout,
 *    a classic TIFF whose only IFD describes the whole block (what ImageJ
 *    itself writes; ImageJ, Fiji and tifffile read it), or BigTIFF with
 *    every IFD (for libtiff-based readers) on request.
 *  - OME-TIFF (.ome.tif): OME-XML with physical sizes, per-plane z,
 *    wavelengths, the Airy version and the system; BigTIFF beyond 4 GB.
 * Data are written in native byte order with large writes; the file
 * appears under its name only when complete. */
typedef enum
{
  AIRY_TIFF_AUTO,      /* OME for *.ome.tif(f), else ImageJ */
  AIRY_TIFF_IMAGEJ,
  AIRY_TIFF_OME,
  AIRY_TIFF_BIGTIFF,   /* ImageJ metadata, BigTIFF with one IFD per plane */
} AiryTiffFormat;

typedef struct
{
  AiryTiffFormat format;
  GPtrArray     *warnings;      /* char*: what a reader will not see (may be NULL) */
  guint64        classic_limit; /* bytes above which a classic TIFF is not used;
                                   0: 4 GiB (tests lower it) */
} AiryTiffWriteOptions;

gboolean   airy_tiff_write       (const char      *path,
                                  const AiryStack *stack,
                                  GError         **error);
gboolean   airy_tiff_write_full  (const char                 *path,
                                  const AiryStack            *stack,
                                  const AiryTiffWriteOptions *options,
                                  GError                    **error);
/* The format a path gets by default. */
AiryTiffFormat airy_tiff_format_for_path (const char *path);

/* Reading (TIFF and PNG). TIFF: ImageJ (hyperstack axes, units nm/µm/mm,
 * spacing, origins, Airy's exact z, the >4 GB single-IFD layout),
 * OME-TIFF (physical sizes and units, Plane PositionZ, TiffData mapping,
 * single file) and plain multi-page files; 8/16/32-bit integer and 32/64-bit
 * float samples, one sample per pixel, strips. Every page is checked before
 * it is read, and the memory a stack needs is checked against the budget
 * before anything is allocated. */
typedef struct
{
  int     channel;      /* hyperstacks: which channel (0-based); −1: refuse several */
  int     frame;        /* which time point; −1: refuse several */
  guint   max_planes;   /* refuse files with more z planes (0: no limit) */
  guint64 budget;       /* bytes the float32 stack may take; 0: airy_memory_budget () */
} AiryReadOptions;

#define AIRY_READ_OPTIONS_INIT { -1, -1, 0, 0 }

AiryStack *airy_tiff_read        (const char            *path,
                                  GError               **error);
AiryStack *airy_tiff_read_full   (const char            *path,
                                  const AiryReadOptions *options,
                                  GError               **error);
/* The header alone: shape, voxel size and z of what airy_tiff_read_full
 * would return, with data NULL. */
AiryStack *airy_tiff_probe       (const char            *path,
                                  const AiryReadOptions *options,
                                  GError               **error);
/* From memory (fuzzing): the same checks, name used in messages. */
AiryStack *_airy_tiff_read_memory (const guint8          *data,
                                   gsize                  length,
                                   const char            *name,
                                   const AiryReadOptions *options,
                                   GError               **error);

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
AiryStack *airy_image_read_full  (const char            *path,
                                  const AiryReadOptions *options,
                                  GError               **error);

/* Atomic output: write to a temporary file beside path, then rename. */
int        airy_atomic_begin     (const char      *path,
                                  char           **tmp_path,
                                  GError         **error);
gboolean   airy_atomic_commit    (const char      *tmp_path,
                                  const char      *path,
                                  GError         **error);
void       airy_atomic_abort     (const char      *tmp_path);

G_END_DECLS
