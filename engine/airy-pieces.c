/* A stack written in its format's pieces (airy-image-file.h): begin, the
 * pieces on a thread pool, commit, or abort when one fails. Below both the
 * format table and the chunked formats, which write a whole stack this way. */
#define G_LOG_DOMAIN "airy-image-file"

#include "config.h"

#include "airy-image-file-private.h"

typedef struct
{
  const AiryImageFormat *format;
  const char            *partial;
  const AiryStack       *stack;
  GMutex                 lock;
  GError                *error;    /* the first piece that failed */
} Pieces;

static void
write_one_piece (gpointer data, gpointer user_data)
{
  Pieces *p = user_data;
  guint piece = GPOINTER_TO_UINT (data) - 1;
  GError *local = NULL;

  g_mutex_lock (&p->lock);
  if (p->error != NULL)
    {
      /* one failed: the rest are not written */
      g_mutex_unlock (&p->lock);
      return;
    }
  g_mutex_unlock (&p->lock);
  if (p->format->write_piece (p->partial, p->stack, piece, airy_stack_plane (p->stack, piece), &local))
    return;
  g_mutex_lock (&p->lock);
  if (p->error == NULL)
    p->error = local;
  else
    g_error_free (local);
  g_mutex_unlock (&p->lock);
}

gboolean
_airy_image_write_pieces_with (const AiryImageFormat *format,
                               const char            *location,
                               const AiryStack       *stack,
                               guint                  n_threads,
                               GError               **error)
{
  g_autofree char *partial = format->begin_pieces (location, stack, error);
  Pieces p = { format, partial, stack };
  GThreadPool *pool;
  guint n, k;

  if (partial == NULL)
    return FALSE;
  n = format->n_pieces (stack);
  pool = g_thread_pool_new (write_one_piece, &p, n_threads ? (int) n_threads : (int) g_get_num_processors (),
                            FALSE, NULL);
  for (k = 0; k < n; k++)
    g_thread_pool_push (pool, GUINT_TO_POINTER (k + 1), NULL);
  g_thread_pool_free (pool, FALSE, TRUE);
  if (p.error == NULL && format->commit_pieces (partial, location, stack, &p.error))
    return TRUE;
  format->abort_pieces (partial);
  g_propagate_error (error, p.error);
  return FALSE;
}
