#pragma once

#include "airy-image-file.h"

G_BEGIN_DECLS

/* The built-in formats, each defined beside its reader and writer. */
extern const AiryImageFormat _airy_tiff_format;
extern const AiryImageFormat _airy_png_format;

/* An image read row by row, top to bottom, without holding its plane
 * (masks far larger than the grid): `begin` gets the first plane's size
 * and bits (a stack without data) before any pixel is decoded and may
 * refuse it (FALSE, error set); `row` then gets each row as float32, the
 * values airy_image_read () would give. */
typedef struct
{
  gboolean (*begin)     (const AiryStack *head,
                         gpointer         user_data,
                         GError         **error);
  void     (*row)       (guint            y,
                         const float     *values,
                         gpointer         user_data);
  gpointer   user_data;
} AiryRowSink;

gboolean _airy_image_read_rows (const char        *path,
                                const AiryRowSink *sink,
                                GError           **error);
gboolean _airy_png_read_rows   (const char        *path,
                                const AiryRowSink *sink,
                                GError           **error);
gboolean _airy_tiff_read_rows  (const char        *path,
                                const AiryRowSink *sink,
                                GError           **error);

/* The system's JSON (airy_system_to_json_full) that a TIFF written by
 * Airy carries (ImageJ info or OME-XML), or NULL: not a TIFF libtiff
 * opens (error set), or one that carries none (error untouched); and the
 * file's format (AIRY_TIFF_IMAGEJ, _OME, or _BIGTIFF: ImageJ's in BigTIFF). */
char    *_airy_tiff_read_provenance (const char      *path,
                                     AiryTiffFormat  *format,
                                     GError         **error);

G_END_DECLS
