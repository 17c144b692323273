#pragma once

#include <glib.h>

#include "airy-colormap.h"
#include "airy-stack.h"

G_BEGIN_DECLS

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
/* Stacks of one shape and z (each channel's provenance: one wavelength) as
 * one ImageJ hyperstack: channels=n, slices=depth, channel fastest. An
 * OME-TIFF path or unevenly spaced planes are an error. */
gboolean   airy_tiff_write_channels (const char                 *path,
                                     AiryStack *const           *channels,
                                     guint                       n_channels,
                                     const AiryTiffWriteOptions *options,
                                     GError                    **error);
/* The format a path gets by default. */
AiryTiffFormat airy_tiff_format_for_path (const char *path);

/* The same file in two steps, for writers that hold parts of a stack (the
 * ranks of an MPI run): the layout of a stack with `stack`'s shape and
 * metadata (its data are not read; ImageJ's display range is lo … hi, the
 * whole stack's), then the frame (header, IFDs; the file is sized) and
 * the planes, each part at its own offsets, from any process. The bytes
 * are airy_tiff_write_full's when lo and hi are the stack's min and max. */
typedef struct _AiryTiffLayout AiryTiffLayout;

AiryTiffLayout *airy_tiff_layout_new        (const char                 *path,
                                             const AiryStack            *stack,
                                             float                       lo,
                                             float                       hi,
                                             const AiryTiffWriteOptions *options,
                                             GError                    **error);
void            airy_tiff_layout_free       (AiryTiffLayout             *layout);
guint64         airy_tiff_layout_get_size   (const AiryTiffLayout       *layout);
/* Where plane z's bytes start. */
guint64         airy_tiff_layout_plane_offset (const AiryTiffLayout     *layout,
                                               guint                     z);
gboolean        airy_tiff_layout_write_frame (const AiryTiffLayout      *layout,
                                              int                        fd,
                                              GError                   **error);
/* count planes (float32, native order) from plane `first`, with pwrite. */
gboolean        airy_tiff_layout_write_planes (const AiryTiffLayout     *layout,
                                               int                       fd,
                                               guint                     first,
                                               guint                     count,
                                               const float              *data,
                                               GError                  **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryTiffLayout, airy_tiff_layout_free)

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
  guint   first_plane;  /* TIFF: only the planes [first_plane, first_plane + */
  guint   n_planes;     /*   n_planes) of the z stack (n_planes 0: all of it) */
  guint   level;        /* a multiscale store (OME-Zarr): which level (0: full size) */
} AiryReadOptions;

#define AIRY_READ_OPTIONS_INIT { -1, -1, 0, 0, 0, 0, 0 }

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

/**
 * AiryImageFormat:
 * One format Airy reads and writes stacks in: a new format is one file
 * defining one of these and a line in airy-image-file.c's table. Read and
 * write take a location: a file, or for a format with @folder set a folder
 * (a chunked format such as OME-Zarr).
 * @sniff looks at a file's first bytes (up to 16; n may be fewer);
 * @sniff_location recognises a folder of a @folder format (NULL for file
 * formats); @write may be NULL for a read-only format; @warnings collects
 * what a reader of the file will not see. @mime_type is the type the
 * desktop file and the metainfo list (a test checks that they do).
 * @write_full writes with a command's write options (airy-sim's --format,
 * the warnings, the classic-TIFF limit; NULL: the defaults); NULL for a
 * format that has none beyond its warnings, which @write then gets.
 * Writing in parallel pieces (a chunked format): @n_pieces says how many
 * pieces a stack of this shape is written in (its data are not read; for
 * OME-Zarr one per plane), @begin_pieces makes a partial location beside
 * @location (hidden, not yet a store) and returns its path, @write_piece
 * writes piece k (plane k's values) into it from any thread or process,
 * and @commit_pieces writes the metadata and renames the partial location
 * into place (@abort_pieces removes it). The ranks of an MPI run share the
 * partial path: each writes its planes, rank 0 begins and commits. The
 * file formats write one piece, the whole stack: their slots are NULL.
 * @probe reads the header alone (data NULL); NULL: read it whole.
 */
typedef struct
{
  const char        *name;
  const char *const *suffixes;   /* lower case, with the dot; the first is the usual one */
  gboolean         (*sniff) (const guint8 *head,
                             gsize         n);
  AiryStack       *(*read)  (const char            *location,
                             const AiryReadOptions *options,
                             GError               **error);
  gboolean         (*write) (const char      *location,
                             const AiryStack *stack,
                             GPtrArray       *warnings,
                             GError         **error);
  const char        *mime_type;
  gboolean         (*write_full) (const char                 *location,
                                  const AiryStack            *stack,
                                  const AiryTiffWriteOptions *options,
                                  GError                    **error);
  gboolean           folder;
  gboolean         (*sniff_location) (const char *location);
  guint            (*n_pieces)       (const AiryStack *shape);
  char            *(*begin_pieces)   (const char      *location,
                                      const AiryStack *shape,
                                      GError         **error);
  gboolean         (*write_piece)    (const char      *partial,
                                      const AiryStack *shape,
                                      guint            piece,
                                      const float     *data,
                                      GError         **error);
  gboolean         (*commit_pieces)  (const char      *partial,
                                      const char      *location,
                                      const AiryStack *shape,
                                      GError         **error);
  void             (*abort_pieces)   (const char      *partial);
  AiryStack       *(*probe)          (const char            *location,
                                      const AiryReadOptions *options,
                                      GError               **error);
} AiryImageFormat;

/* The formats (NULL-terminated), by content and by name. */
const AiryImageFormat *const *airy_image_formats      (void);
const AiryImageFormat *airy_image_format_sniff        (const char      *path,
                                                       GError         **error);
const AiryImageFormat *airy_image_format_for_suffix   (const char      *path);

/* A stack from a file of any format, by content. */
AiryStack *airy_image_read       (const char      *path,
                                  GError         **error);
AiryStack *airy_image_read_full  (const char            *path,
                                  const AiryReadOptions *options,
                                  GError               **error);
/**
 * airy_image_read_level:
 * @path: a file or a store
 * @options: (nullable): read options (its level is the finest one tried)
 * @level: (out): the level read
 * @error: the error
 *
 * The stack of a file of any format; of a multiscale store (OME-Zarr)
 * whose stack does not fit the memory budget, the finest level that does
 * (the viewer of a store larger than memory).
 *
 * Returns: (transfer full): the stack, or %NULL
 */
AiryStack *airy_image_read_level (const char            *path,
                                  const AiryReadOptions *options,
                                  guint                 *level,
                                  GError               **error);
/* Its header alone (shape, voxel size, z; data NULL), for any format. */
AiryStack *airy_image_probe      (const char            *path,
                                  const AiryReadOptions *options,
                                  GError               **error);
/* A stack to a file, in the format its name says. */
gboolean   airy_image_write      (const char      *path,
                                  const AiryStack *stack,
                                  GPtrArray       *warnings,
                                  GError         **error);
/* The same with a command's write options (airy-sim run, sweep; NULL:
 * the defaults, as airy_image_write without warnings). */
gboolean   airy_image_write_full (const char                 *path,
                                  const AiryStack            *stack,
                                  const AiryTiffWriteOptions *options,
                                  GError                    **error);
/* The same in the format's pieces, on up to n_threads threads (0: one per
 * core): begin, the pieces in parallel, commit (or abort when one fails).
 * A file format is one piece: airy_image_write. */
gboolean   airy_image_write_pieces (const char      *location,
                                    const AiryStack *stack,
                                    guint            n_threads,
                                    GPtrArray       *warnings,
                                    GError         **error);
/* The format called name ("TIFF", "PNG"), or NULL. */
const AiryImageFormat *airy_image_format_lookup (const char *name);

G_END_DECLS
