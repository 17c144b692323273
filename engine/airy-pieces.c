/* A stack written in its format's pieces (airy-image-file.h): begin, the
 * pieces on a thread pool, commit, or abort when one fails. Below both the
 * format table and the chunked formats, which write a whole stack this way;
 * the ranks of an MPI run write their own planes' pieces with it too. */
#define G_LOG_DOMAIN "airy-image-file"

#include "config.h"

#include "airy-image-file-private.h"

typedef struct
{
  const AiryImageFormat *format;
  const char            *partial;
  const AiryStack       *shape;
  const AiryStack       *part;     /* its planes are pieces first … */
  guint                  first;
  GMutex                 lock;
  GError                *error;    /* the first piece that failed */
} Pieces;

static void
write_one_piece (gpointer data, gpointer user_data)
{
  Pieces *p = user_data;
  guint k = GPOINTER_TO_UINT (data) - 1;
  GError *local = NULL;

  g_mutex_lock (&p->lock);
  if (p->error != NULL)
    {
      /* one failed: the rest are not written */
      g_mutex_unlock (&p->lock);
      return;
    }
  g_mutex_unlock (&p->lock);
  if (p->format->write_piece (p->partial, p->shape, p->first + k, airy_stack_plane (p->part, k), &local))
    return;
  g_mutex_lock (&p->lock);
  if (p->error == NULL)
    p->error = local;
  else
    g_error_free (local);
  g_mutex_unlock (&p->lock);
}

gboolean
_airy_image_write_piece_range (const AiryImageFormat *format,
                               const char            *partial,
                               const AiryStack       *shape,
                               const AiryStack       *part,
                               guint                  first,
                               guint                  count,
                               guint                  n_threads,
                               GError               **error)
{
  Pieces p = { format, partial, shape, part, first };
  GThreadPool *pool;
  guint k;

  pool = g_thread_pool_new (write_one_piece, &p, n_threads ? (int) n_threads : (int) g_get_num_processors (),
                            FALSE, NULL);
  for (k = 0; k < count; k++)
    g_thread_pool_push (pool, GUINT_TO_POINTER (k + 1), NULL);
  g_thread_pool_free (pool, FALSE, TRUE);
  if (p.error == NULL)
    return TRUE;
  g_propagate_error (error, p.error);
  return FALSE;
}

gboolean
_airy_image_write_pieces_with (const AiryImageFormat *format,
                               const char            *location,
                               const AiryStack       *stack,
                               guint                  n_threads,
                               GError               **error)
{
  g_autofree char *partial = format->begin_pieces (location, stack, error);
  GError *local = NULL;

  if (partial == NULL)
    return FALSE;
  if (_airy_image_write_piece_range (format, partial, stack, stack, 0, format->n_pieces (stack), n_threads, &local)
      && format->commit_pieces (partial, location, stack, &local))
    return TRUE;
  format->abort_pieces (partial);
  g_propagate_error (error, local);
  return FALSE;
}
