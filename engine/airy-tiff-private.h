#pragma once

#include <glib.h>
#include <tiffio.h>

#include "airy-image-file.h"
#include "airy-image-file-private.h"

G_BEGIN_DECLS

/* Length units of ImageJ descriptions and OME-XML, as a factor to µm;
 * FALSE for units that are not lengths (pixel) or unknown. */
gboolean _airy_length_unit_to_um (const char *unit,
                                  double     *scale);

/* OME-XML (schema 2016-06), the parts Airy writes and reads. */
typedef struct
{
  guint    ifd;
  guint    first_z, first_c, first_t;
  guint    plane_count;
  gboolean has_ifd, has_count;
} AiryOmeTiffData;

typedef struct
{
  guint    the_z, the_c, the_t;
  double   position_z;    /* µm */
  gboolean has_z;
} AiryOmePlane;

typedef struct
{
  guint    size_x, size_y, size_z, size_c, size_t;
  char     order[6];      /* DimensionOrder, e.g. "XYZCT" */
  char    *type;          /* Pixels Type: "float", "uint16", … */
  double   physical_x, physical_y, physical_z;   /* µm, 0: not given */
  GArray  *tiff_data;     /* AiryOmeTiffData */
  GArray  *planes;        /* AiryOmePlane */
  gboolean other_files;   /* TiffData naming another file (multi-file set) */
  GArray  *channel_wavelengths; /* double per Channel: EmissionWavelength (µm), NaN if none */
  guint    n_images;
  /* parser state */
  int      depth_image, in_pixels, in_tiff_data;
} AiryOmeInfo;

/* The OME-XML of a stack written as one file with one IFD per plane. */
char    *_airy_ome_xml_new       (const AiryStack *stack,
                                  const char      *name);
gboolean _airy_ome_parse         (const char      *xml,
                                  const char      *file,
                                  AiryOmeInfo     *info,
                                  GError         **error);
void     _airy_ome_info_clear    (AiryOmeInfo     *info);
/* IFD holding plane (z, c, t), or −1 when the file does not map it. */
gint64   _airy_ome_ifd_of        (const AiryOmeInfo *info,
                                  guint              z,
                                  guint              c,
                                  guint              t);


/* ---- TIFF files (airy-tiff-write.c, airy-tiff-read.c, airy-tiff-layout.c) ---- */

/* TIFF tags and types the writer uses */
enum
{
  TAG_NEW_SUBFILE_TYPE = 254, TAG_IMAGE_WIDTH = 256, TAG_IMAGE_LENGTH = 257,
  TAG_BITS_PER_SAMPLE = 258, TAG_COMPRESSION = 259, TAG_PHOTOMETRIC = 262,
  TAG_IMAGE_DESCRIPTION = 270, TAG_STRIP_OFFSETS = 273, TAG_SAMPLES_PER_PIXEL = 277,
  TAG_ROWS_PER_STRIP = 278, TAG_STRIP_BYTE_COUNTS = 279, TAG_X_RESOLUTION = 282,
  TAG_Y_RESOLUTION = 283, TAG_PLANAR_CONFIG = 284, TAG_RESOLUTION_UNIT = 296,
  TAG_SOFTWARE = 305, TAG_SAMPLE_FORMAT = 339,
  TAG_IJ_META_COUNTS = 50838, TAG_IJ_META = 50839,
  /* Airy's private tag: the exact z of every plane, µm (DOUBLE[depth]);
   * 65000–65535 is the TIFF range for private use without registration */
  TAG_AIRY_Z = 65500,
  /* and each channel's vacuum wavelength of a hyperstack, µm (DOUBLE[channels]; 0: not known) */
  TAG_AIRY_WAVELENGTHS = 65501,
};

enum { T_BYTE = 1, T_ASCII = 2, T_SHORT = 3, T_LONG = 4, T_RATIONAL = 5, T_DOUBLE = 12, T_LONG8 = 16 };

typedef struct
{
  const char   *name;
  TIFF         *tif;
  char         *message;     /* libtiff's first error */
  int           fd;          /* −1 when reading from memory */
  const guint8 *mem;
  guint64       size;        /* file size */
  guint64       pos;         /* memory reads */
  gboolean      swap;        /* file byte order is not the host's */
  const AiryRowSink *sink;   /* the first plane, row by row, to it */
} Reader;

/* One page as libtiff describes it, checked before anything is read. */
typedef struct
{
  guint64  offset;         /* of its IFD */
  guint32  width, height;
  guint16  bits, format, spp, compression, planar, photometric;
  guint32  subfile;
  gboolean tiled;
} Page;

/* The logical stack a file holds and where each of the chosen planes is. */
typedef struct
{
  guint     depth;
  guint     n_channels, n_frames, channel, frame;
  guint     height, width;
  guint16   bits, format;
  double    dx, dy, dz, z0;
  double   *z;                 /* exact positions or NULL */
  double   *wavelengths;       /* n_channels: each channel's wavelength (µm, 0 not known) or NULL */
  char    **channel_names;     /* n_channels names ("" for none), from ImageJ's labels, or NULL */
  guint64  *ifd;               /* per plane: IFD offset, or 0 for contiguous */
  guint64   contiguous_offset; /* ImageJ single-IFD stacks: first plane's bytes */
  gboolean  contiguous;
} Layout;

/* airy-tiff-page.c: below the reader and the layout finder */
const char *_airy_tiff_reader_message  (Reader     *r);
gboolean    _airy_tiff_reader_pread    (Reader     *r,
                                        guint64     offset,
                                        void       *buf,
                                        gsize       n);
gboolean    _airy_tiff_read_rational   (Reader     *r,
                                        guint64     ifd,
                                        guint16     tag,
                                        double     *out);
/* an unsigned integer of size 2, 4 or 8 bytes in the file's byte order */
guint64     _airy_tiff_file_uint       (const Reader *r,
                                        const guint8 *p,
                                        guint         size);
/* the current page has one StripOffsets and StripByteCounts entry per strip */
gboolean    _airy_tiff_strip_entries_check (Reader  *r,
                                            guint    z,
                                            guint32  n_strips,
                                            GError **error);
void        _airy_tiff_page_read       (TIFF       *tif,
                                        Page       *p);
gboolean    _airy_tiff_page_check      (Reader     *r,
                                        const Page *p,
                                        guint       index,
                                        const Page *first,
                                        GError    **error);
gboolean    _airy_tiff_page_data_check (Reader     *r,
                                        guint       z,
                                        guint64     need,
                                        GError    **error);
gboolean    _airy_tiff_walk_pages      (Reader     *r,
                                        guint       limit,
                                        gboolean    skip_reduced,
                                        const Page *first,
                                        GArray     *pages,
                                        gboolean   *more,
                                        GError    **error);
/* airy-tiff-page.c: the stack's bytes against the memory budget */
gboolean    _airy_tiff_budget_check    (Reader                *r,
                                        const AiryReadOptions *o,
                                        guint64                planes,
                                        guint                  h,
                                        guint                  w,
                                        GError               **error);
/* airy-tiff-layout.c */
gboolean    _airy_tiff_layout_find     (Reader                *r,
                                        const AiryReadOptions *o,
                                        Layout                *l,
                                        GError               **error);
void        _airy_tiff_layout_clear    (Layout                *l);
/* airy-tiff-provenance.c */
char      **_airy_tiff_imagej_channel_names (TIFF *tif,
                                             guint n_channels);

G_END_DECLS
