#pragma once

#include "airy-image-file.h"

G_BEGIN_DECLS

/* The built-in formats, each defined beside its reader and writer. */
extern const AiryImageFormat _airy_tiff_format;
extern const AiryImageFormat _airy_png_format;

/* A stack written in format's pieces on up to n_threads threads (0: one
 * per core; airy_image_write_pieces): begin, every piece, commit, or abort
 * when one fails. format has the piece slots. */
/* Pieces first … first + count − 1 of a stack of this shape, piece
 * first + k from plane k of part, into a begun partial location, on up to
 * n_threads threads (0: one per core); the first failure. */
gboolean _airy_image_write_piece_range (const AiryImageFormat *format,
                                        const char            *partial,
                                        const AiryStack       *shape,
                                        const AiryStack       *part,
                                        guint                  first,
                                        guint                  count,
                                        guint                  n_threads,
                                        GError               **error);
gboolean _airy_image_write_pieces_with (const AiryImageFormat *format,
                                        const char            *location,
                                        const AiryStack       *stack,
                                        guint                  n_threads,
                                        GError               **error);

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
