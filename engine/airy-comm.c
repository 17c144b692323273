#define G_LOG_DOMAIN "airy-comm"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <stdlib.h>
#include <string.h>

#include "airy-comm.h"
#include "airy-error.h"

/* ---- one process ---- */

static gboolean
self_all_reduce (AiryComm *comm, float *buf, gsize count, AiryCommOp op, GError **error)
{
  return TRUE;
}

static gboolean
self_broadcast (AiryComm *comm, void *buf, gsize n_bytes, guint root, GError **error)
{
  return TRUE;
}

static gboolean
self_barrier (AiryComm *comm, GError **error)
{
  return TRUE;
}

static gboolean
self_counter_reset (AiryComm *comm, GError **error)
{
  comm->counter = 0;
  return TRUE;
}

static gboolean
self_counter_next (AiryComm *comm, guint64 *value, GError **error)
{
  *value = comm->counter++;
  return TRUE;
}

static void
self_abort (AiryComm *comm, int status)
{
  exit (status);
}

static const AiryCommVTable self_ops = {
  .name = "self",
  .all_reduce = self_all_reduce,
  .broadcast = self_broadcast,
  .barrier = self_barrier,
  .counter_reset = self_counter_reset,
  .counter_next = self_counter_next,
  .abort = self_abort,
  .free = NULL,
};

static AiryComm self_comm = { &self_ops, 0, 1, NULL, 0 };

AiryComm *
airy_comm_self (void)
{
  return &self_comm;
}

void
airy_comm_free (AiryComm *comm)
{
  if (comm == NULL || comm == &self_comm)
    return;
  if (comm->ops->free)
    comm->ops->free (comm);
}

/* a call through the communicator: its payload and its time */
static gboolean
accounted (AiryComm *comm, guint64 bytes, gint64 t0, gboolean ok)
{
  comm->moved_bytes += bytes;
  comm->comm_us += g_get_monotonic_time () - t0;
  return ok;
}

gboolean
airy_comm_all_reduce (AiryComm   *comm,
                      float      *buf,
                      gsize       count,
                      AiryCommOp  op,
                      GError    **error)
{
  gint64 t0 = g_get_monotonic_time ();

  g_return_val_if_fail (comm != NULL, FALSE);
  g_return_val_if_fail (buf != NULL || count == 0, FALSE);

  if (comm->size == 1 || count == 0)
    return TRUE;
  return accounted (comm, count * sizeof (float), t0, comm->ops->all_reduce (comm, buf, count, op, error));
}

gboolean
airy_comm_broadcast (AiryComm *comm,
                     void     *buf,
                     gsize     n_bytes,
                     guint     root,
                     GError  **error)
{
  gint64 t0 = g_get_monotonic_time ();

  g_return_val_if_fail (comm != NULL && root < comm->size, FALSE);

  if (comm->size == 1 || n_bytes == 0)
    return TRUE;
  return accounted (comm, n_bytes, t0, comm->ops->broadcast (comm, buf, n_bytes, root, error));
}

gboolean
airy_comm_barrier (AiryComm *comm,
                   GError  **error)
{
  gint64 t0 = g_get_monotonic_time ();

  g_return_val_if_fail (comm != NULL, FALSE);

  return comm->size == 1 || accounted (comm, 0, t0, comm->ops->barrier (comm, error));
}

static gboolean
no_counter (AiryComm *comm, GError **error)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, _("communicator %s: no shared counter"),
               comm->ops->name);
  return FALSE;
}

gboolean
airy_comm_counter_reset (AiryComm *comm,
                         GError  **error)
{
  g_return_val_if_fail (comm != NULL, FALSE);

  if (comm->ops->counter_reset == NULL)
    return no_counter (comm, error);
  return comm->ops->counter_reset (comm, error);
}

gboolean
airy_comm_counter_next (AiryComm *comm,
                        guint64  *value,
                        GError  **error)
{
  gint64 t0 = g_get_monotonic_time ();

  g_return_val_if_fail (comm != NULL && value != NULL, FALSE);

  if (comm->ops->counter_next == NULL)
    return no_counter (comm, error);
  if (comm->size == 1)
    return comm->ops->counter_next (comm, value, error);
  return accounted (comm, sizeof *value, t0, comm->ops->counter_next (comm, value, error));
}

void
airy_comm_abort (AiryComm *comm,
                 int       status)
{
  g_return_if_fail (comm != NULL);

  comm->ops->abort (comm, status);
}

static gboolean
agree_ranks (AiryComm *comm, GError **error)
{
  GError *mine = *error;
  /* ranks are exact in a float below 2^24; [1]: 0 when every rank found
   * bad input, −1 when one did not (the minimum) */
  float lowest[2];
  guint32 head[3];
  g_autofree char *message = NULL;
  GError *transport = NULL;
  guint root;

  comm->agreed = comm->agreed_bad_input = FALSE;

  lowest[0] = mine ? (float) comm->rank : (float) comm->size;
  lowest[1] = airy_error_is_bad_input (mine) ? 0.0f : -1.0f;
  if (!comm->ops->all_reduce (comm, lowest, 2, AIRY_COMM_MIN, &transport))
    goto broken;
  if (lowest[0] >= (float) comm->size)
    return TRUE;
  root = (guint) lowest[0];

  /* the failing rank's domain (Airy's or not), code and message */
  if (root == comm->rank)
    {
      message = g_strdup (mine->message);
      head[0] = mine->domain == AIRY_ERROR;
      head[1] = (guint32) mine->code;
      head[2] = (guint32) strlen (message) + 1;
    }
  if (!comm->ops->broadcast (comm, head, sizeof head, root, &transport))
    goto broken;
  if (root != comm->rank)
    message = g_malloc0 (head[2]);
  if (!comm->ops->broadcast (comm, message, head[2], root, &transport))
    goto broken;
  comm->moved_bytes += sizeof head + head[2];
  message[head[2] - 1] = '\0';

  g_clear_error (error);
  g_set_error (error, AIRY_ERROR, head[0] ? (int) head[1] : AIRY_ERROR_BACKEND,
               _("rank %u of %u: %s"), root, comm->size, message);
  comm->agreed = TRUE;
  comm->agreed_bad_input = lowest[1] == 0.0f;
  return FALSE;

broken:
  /* the ranks cannot agree any more: this one's own error, or the transport's */
  if (mine == NULL)
    g_propagate_error (error, transport);
  else
    g_clear_error (&transport);
  return FALSE;
}

gboolean
airy_comm_agree (AiryComm *comm,
                 GError  **error)
{
  gint64 t0;

  g_return_val_if_fail (comm != NULL && error != NULL, FALSE);

  /* one process: nothing to agree (and the shared self communicator is
   * left alone, for threads) */
  if (comm->size == 1)
    return *error == NULL;
  t0 = g_get_monotonic_time ();
  return accounted (comm, 2 * sizeof (float), t0, agree_ranks (comm, error));
}

void
airy_comm_split (guint  n,
                 guint  size,
                 guint  rank,
                 guint *first,
                 guint *count)
{
  g_return_if_fail (size > 0 && rank < size);

  *count = n / size + (rank < n % size);
  *first = rank * (n / size) + MIN (rank, n % size);
}
