#pragma once

#include <glib.h>

#include "airy-stack.h"

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

G_END_DECLS
