/* Sample volumes read in batches while they are imaged
 * (airy-volume-stream-private.h). */
#define G_LOG_DOMAIN "airy-plan"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-volume-stream-private.h"
#include "airy-error.h"
#include "airy-stack.h"

struct _AiryVolumeStream
{
  gint            ref;
  char           *path;
  AiryReadOptions ro;
  guint           first, count, height, width, batch;
  GMutex          lock;
  GError         *error;     /* the first failed read */
  double          max_abs;
  guint           reads;
};

AiryVolumeStream *
_airy_volume_stream_new (const char            *path,
                         const AiryReadOptions *ro,
                         guint                  first,
                         guint                  count,
                         guint                  height,
                         guint                  width,
                         guint                  batch)
{
  AiryVolumeStream *s = g_new0 (AiryVolumeStream, 1);

  s->ref = 1;
  s->path = g_strdup (path);
  s->ro = *ro;
  s->first = first;
  s->count = count;
  s->height = height;
  s->width = width;
  s->batch = MAX (batch, 1);
  g_mutex_init (&s->lock);
  return s;
}

AiryVolumeStream *
_airy_volume_stream_ref (AiryVolumeStream *stream)
{
  if (stream)
    g_atomic_int_inc (&stream->ref);
  return stream;
}

void
_airy_volume_stream_unref (AiryVolumeStream *stream)
{
  if (stream == NULL || !g_atomic_int_dec_and_test (&stream->ref))
    return;
  g_clear_error (&stream->error);
  g_mutex_clear (&stream->lock);
  g_free (stream->path);
  g_free (stream);
}

guint
_airy_volume_stream_batch (const AiryVolumeStream *stream)
{
  return stream->batch;
}

static void
keep_error (AiryVolumeStream *s, const GError *error)
{
  g_mutex_lock (&s->lock);
  if (s->error == NULL)
    s->error = g_error_copy (error);
  g_mutex_unlock (&s->lock);
}

/* planes [start, start + n) of the sample, checked */
static AiryStack *
read_batch (AiryVolumeStream *s, guint start, guint n, GError **error)
{
  AiryReadOptions ro = s->ro;
  g_autoptr(AiryStack) v = NULL;
  g_autofree char *bad = NULL;
  float lo, hi;

  ro.first_plane = start;
  ro.n_planes = n;
  ro.max_planes = 0;
  v = airy_image_read_full (s->path, &ro, error);
  if (v == NULL)
    {
      g_prefix_error (error, _("sample.file: "));
      return NULL;
    }
  if (v->depth != n || v->height != s->height || v->width != s->width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("sample.file: %s changed while it was read (planes %u to %u are %u × %u × %u, not %u × %u × %u)"),
                   s->path, start, start + n - 1, v->depth, v->height, v->width, n, s->height, s->width);
      return NULL;
    }
  bad = _airy_stack_describe_nonfinite (v, v->depth, start, &lo, &hi);
  if (bad != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample.file: %s has %s; a sample's voxels must be finite numbers"), s->path, bad);
      return NULL;
    }
  g_mutex_lock (&s->lock);
  s->max_abs = MAX (s->max_abs, MAX (fabs (lo), fabs (hi)));
  s->reads++;
  g_mutex_unlock (&s->lock);
  return g_steal_pointer (&v);
}

gboolean
_airy_volume_stream_plane (AiryVolumeStream *stream,
                           AiryStack       **held,
                           guint             z,
                           float            *out,
                           GError          **error)
{
  AiryVolumeStream *s = stream;
  gsize n = (gsize) s->height * s->width;
  g_autoptr(AiryStack) one = NULL;
  GError *local = NULL;
  const AiryStack *from;
  guint start;

  g_assert (z >= s->first && z < s->first + s->count);
  start = s->first + (z - s->first) / s->batch * s->batch;
  if (held != NULL && *held != NULL && (*held)->z0 == start)
    from = *held;
  else
    {
      AiryStack *v = held ? read_batch (s, start, MIN (s->batch, s->first + s->count - start), &local)
                          : read_batch (s, z, 1, &local);
      if (v == NULL)
        {
          keep_error (s, local);
          g_propagate_error (error, local);
          memset (out, 0, n * sizeof (float));
          return FALSE;
        }
      /* the batch's first plane, as its tag (its z is not needed here) */
      v->z0 = held ? start : z;
      g_clear_pointer (&v->z, g_free);
      if (held)
        {
          g_clear_pointer (held, airy_stack_free);
          *held = v;
        }
      else
        one = v;
      from = v;
      start = (guint) v->z0;
    }
  memcpy (out, airy_stack_plane (from, z - start), n * sizeof (float));
  return TRUE;
}

gboolean
_airy_volume_stream_check (AiryVolumeStream *stream,
                           GError          **error)
{
  gboolean ok;

  g_mutex_lock (&stream->lock);
  ok = stream->error == NULL;
  if (!ok)
    g_propagate_error (error, g_error_copy (stream->error));
  g_mutex_unlock (&stream->lock);
  return ok;
}

double
_airy_volume_stream_max_abs (AiryVolumeStream *stream)
{
  double m;

  g_mutex_lock (&stream->lock);
  m = stream->max_abs;
  g_mutex_unlock (&stream->lock);
  return m;
}

guint
_airy_volume_stream_reads (AiryVolumeStream *stream)
{
  guint n;

  g_mutex_lock (&stream->lock);
  n = stream->reads;
  g_mutex_unlock (&stream->lock);
  return n;
}
