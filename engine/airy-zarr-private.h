#pragma once

#include <glib.h>

#include "airy-image-file.h"

G_BEGIN_DECLS

/* OME-Zarr (OME-NGFF 0.4 on Zarr v2; DESIGN §6): a store is a folder
 *
 *   NAME.ome.zarr/.zgroup            {"zarr_format": 2}
 *   NAME.ome.zarr/.zattrs            multiscales (axes z, y, x in micrometer,
 *                                    each level's scale and translation) and
 *                                    "airy" (version, exact z, spectrum, system)
 *   NAME.ome.zarr/L/.zarray          level L: float32 "<f4", Blosc/zstd,
 *                                    chunks of one plane, or of tiles of large planes
 *   NAME.ome.zarr/L/z/ty/tx          one chunk ("/" separator)
 *
 * Level L is level 0 averaged over 2^L × 2^L pixels in y and x (z is kept),
 * so each plane is written on its own: a piece is one plane with all its
 * levels. Pieces go into a hidden partial folder beside the store; the
 * metadata (.zarray, .zattrs, .zgroup) is written last, by the commit,
 * which then renames the folder into place: until then no reader finds an
 * array, and a failed run never leaves a store that reads as whole. */

#define AIRY_ZARR_MAX_DIMS 5

typedef enum
{
  AIRY_ZARR_CODEC_NONE,
  AIRY_ZARR_CODEC_BLOSC,
  AIRY_ZARR_CODEC_ZSTD,
} AiryZarrCodec;

/* One array's .zarray, checked. */
typedef struct
{
  guint         ndim;
  guint64       shape[AIRY_ZARR_MAX_DIMS];
  guint64       chunks[AIRY_ZARR_MAX_DIMS];
  char          kind;          /* 'f', 'u' or 'i' */
  guint         itemsize;      /* 1, 2, 4 or 8 */
  gboolean      big_endian;
  AiryZarrCodec codec;
  gboolean      has_fill;      /* fill_value not null: a missing chunk reads as fill */
  double        fill;
  char          separator;     /* '.' or '/' */
} AiryZarrArray;

/* A group's multiscales and Airy's attributes, checked. */
typedef struct
{
  guint    ndim;
  char     axes[AIRY_ZARR_MAX_DIMS];      /* 't', 'c', 'z', 'y', 'x' */
  guint    n_levels;
  char   **paths;                         /* each level's array, n_levels */
  double  *scales;                        /* n_levels × ndim, space axes in µm */
  double  *translations;                  /* n_levels × ndim */
  /* Airy's attributes (a store another program wrote has none) */
  gboolean airy;                          /* written by Airy: every chunk is there */
  guint    n_z;                           /* exact plane positions, or 0 */
  double  *z;
  guint    n_wavelengths;
  double  *wavelengths;
  double  *weights;
  char    *system_json;
} AiryZarrGroup;

/* .zarray text (name: for messages, "STORE/0/.zarray"); messages name the
 * key and the value. */
gboolean _airy_zarr_parse_array (const char    *data,
                                 gsize          length,
                                 const char    *name,
                                 AiryZarrArray *array,
                                 GError       **error);
/* .zattrs text of an OME-Zarr image group. */
gboolean _airy_zarr_parse_group (const char    *data,
                                 gsize          length,
                                 const char    *name,
                                 AiryZarrGroup *group,
                                 GError       **error);
void     _airy_zarr_group_clear (AiryZarrGroup *group);

/* A stack from a store (read options: channel, frame, planes, budget;
 * level picks a multiscale level). */
AiryStack *_airy_zarr_read       (const char            *location,
                                  const AiryReadOptions *options,
                                  GError               **error);
/* The header alone (shape, voxel size, z, provenance; data NULL). */
AiryStack *_airy_zarr_probe      (const char            *location,
                                  const AiryReadOptions *options,
                                  GError               **error);

/* Chunks of level 0 for a plane of height × width: the whole plane up to
 * `plane_limit` bytes of float32, else square tiles of `tile` pixels.
 * Tests lower both (0 restores the defaults: 16 MiB, 1024). */
void     _airy_zarr_set_chunking (gsize plane_limit,
                                  guint tile);

extern const AiryImageFormat _airy_zarr_format;

G_END_DECLS
