#pragma once

#include <glib.h>

#include "airy-image-file.h"

G_BEGIN_DECLS

/* A sample volume larger than its share of the memory budget, read from
 * its file (TIFF or OME-Zarr) in batches of planes while it is imaged
 * (issue #32 §4): a thread holds one batch of its planes at a time, so the
 * sample takes O(threads × batch) memory, not O(planes). Every batch read
 * is checked as a whole read is (finite values, the file's shape).
 * Refcounted; threads read in parallel. */
typedef struct _AiryVolumeStream AiryVolumeStream;

/* planes [first, first + count) of path (channel and frame of ro), each
 * height × width; batch planes per read */
AiryVolumeStream *_airy_volume_stream_new   (const char            *path,
                                             const AiryReadOptions *ro,
                                             guint                  first,
                                             guint                  count,
                                             guint                  height,
                                             guint                  width,
                                             guint                  batch);
AiryVolumeStream *_airy_volume_stream_ref   (AiryVolumeStream      *stream);
void              _airy_volume_stream_unref (AiryVolumeStream      *stream);
guint             _airy_volume_stream_batch (const AiryVolumeStream *stream);

/* Plane z (of the whole sample) into out: from *held, the caller's batch
 * (a thread's, freed with airy_stack_free; NULL: read the plane alone),
 * read anew when it does not hold z. FALSE with error set when the file
 * cannot be read (the stream also keeps the first error). */
gboolean          _airy_volume_stream_plane (AiryVolumeStream      *stream,
                                             AiryStack            **held,
                                             guint                  z,
                                             float                 *out,
                                             GError               **error);
/* The first read that failed (FALSE, error set), or TRUE. */
gboolean          _airy_volume_stream_check (AiryVolumeStream      *stream,
                                             GError               **error);
/* The largest |value| read so far, and how many reads were made. */
double            _airy_volume_stream_max_abs (AiryVolumeStream    *stream);
guint             _airy_volume_stream_reads   (AiryVolumeStream    *stream);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryVolumeStream, _airy_volume_stream_unref)

G_END_DECLS
