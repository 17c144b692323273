/* The communicator of a run over MPI ranks (engine/airy-comm.h). This is
 * the only unit that includes mpi.h: the engine sees AiryComm, airy-sim
 * makes one here when a launcher started it. */
#ifndef G_LOG_DOMAIN          /* the tests link this unit with their own */
#define G_LOG_DOMAIN "airy-mpi"
#endif

#include "config.h"

#include <glib/gi18n.h>
#include <limits.h>
#include <mpi.h>

#include "airy-error.h"
#include "airy-mpi.h"

/* MPI counts are int: one call takes at most this many elements */
static gsize max_count = (gsize) 1 << 30;

void
airy_mpi_set_max_count (gsize count)
{
  g_return_if_fail (count > 0 && count < INT_MAX);
  max_count = count;
}

gboolean
airy_mpi_launched (void)
{
  static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (vars); i++)
    if (g_getenv (vars[i]) != NULL)
      return TRUE;
  return FALSE;
}

static gboolean
mpi_check (int status, const char *what, GError **error)
{
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;

  if (status == MPI_SUCCESS)
    return TRUE;
  if (MPI_Error_string (status, text, &len) != MPI_SUCCESS)
    g_snprintf (text, sizeof text, "error %d", status);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, _("MPI: %s failed: %s"), what, text);
  return FALSE;
}

typedef struct
{
  MPI_Comm  world;
  MPI_Win   counter;       /* one int64 on rank 0, or MPI_WIN_NULL */
  gint64   *counter_mem;
} Mpi;

static MPI_Comm
world_of (AiryComm *comm)
{
  return ((Mpi *) comm->data)->world;
}

static void
counter_free (Mpi *m)
{
  if (m->counter == MPI_WIN_NULL)
    return;
  MPI_Win_unlock_all (m->counter);
  MPI_Win_free (&m->counter);
}

/* a window of one int64 on rank 0, locked for passive access by all */
static gboolean
mpi_counter_reset (AiryComm *comm, GError **error)
{
  Mpi *m = comm->data;
  MPI_Aint bytes = comm->rank == 0 ? sizeof (gint64) : 0;

  counter_free (m);
  if (!mpi_check (MPI_Win_allocate (bytes, sizeof (gint64), MPI_INFO_NULL, m->world, &m->counter_mem,
                                    &m->counter), "MPI_Win_allocate", error))
    return FALSE;
  if (comm->rank == 0)
    *m->counter_mem = 0;
  return mpi_check (MPI_Barrier (m->world), "MPI_Barrier", error)
         && mpi_check (MPI_Win_lock_all (MPI_MODE_NOCHECK, m->counter), "MPI_Win_lock_all", error);
}

static gboolean
mpi_counter_next (AiryComm *comm, guint64 *value, GError **error)
{
  Mpi *m = comm->data;
  const gint64 one = 1;
  gint64 old = 0;

  if (!mpi_check (MPI_Fetch_and_op (&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, m->counter), "MPI_Fetch_and_op",
                  error)
      || !mpi_check (MPI_Win_flush (0, m->counter), "MPI_Win_flush", error))
    return FALSE;
  *value = (guint64) old;
  return TRUE;
}

static gboolean
mpi_all_reduce (AiryComm *comm, float *buf, gsize count, AiryCommOp op, GError **error)
{
  MPI_Op mop = op == AIRY_COMM_MIN ? MPI_MIN : op == AIRY_COMM_MAX ? MPI_MAX : MPI_SUM;
  gsize done;

  /* in place, in pieces whose count fits an int */
  for (done = 0; done < count; done += max_count)
    {
      int n = (int) MIN (count - done, max_count);

      if (!mpi_check (MPI_Allreduce (MPI_IN_PLACE, buf + done, n, MPI_FLOAT, mop, world_of (comm)),
                      "MPI_Allreduce", error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
mpi_broadcast (AiryComm *comm, void *buf, gsize n_bytes, guint root, GError **error)
{
  gsize done;

  for (done = 0; done < n_bytes; done += max_count)
    {
      int n = (int) MIN (n_bytes - done, max_count);

      if (!mpi_check (MPI_Bcast ((char *) buf + done, n, MPI_BYTE, (int) root, world_of (comm)), "MPI_Bcast",
                      error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
mpi_barrier (AiryComm *comm, GError **error)
{
  return mpi_check (MPI_Barrier (world_of (comm)), "MPI_Barrier", error);
}

static void
mpi_abort (AiryComm *comm, int status)
{
  MPI_Abort (world_of (comm), status);
}

static void
mpi_free (AiryComm *comm)
{
  Mpi *m = comm->data;

  counter_free (m);
  MPI_Comm_free (&m->world);
  g_free (m);
  g_free (comm);
  MPI_Finalize ();
}

static const AiryCommVTable mpi_vtable = {
  .name = "mpi",
  .all_reduce = mpi_all_reduce,
  .broadcast = mpi_broadcast,
  .barrier = mpi_barrier,
  .counter_reset = mpi_counter_reset,
  .counter_next = mpi_counter_next,
  .abort = mpi_abort,
  .free = mpi_free,
};

AiryComm *
airy_mpi_comm_new (int     *argc,
                   char  ***argv,
                   GError **error)
{
  Mpi *m;
  AiryComm *comm;
  int provided = 0, rank = 0, size = 1;

  if (!mpi_check (MPI_Init_thread (argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread", error))
    return NULL;
  m = g_new0 (Mpi, 1);
  m->counter = MPI_WIN_NULL;
  MPI_Comm_dup (MPI_COMM_WORLD, &m->world);
  /* failures come back as codes, turned into errors, not as aborts */
  MPI_Comm_set_errhandler (m->world, MPI_ERRORS_RETURN);
  MPI_Comm_rank (m->world, &rank);
  MPI_Comm_size (m->world, &size);
  comm = g_new0 (AiryComm, 1);
  *comm = (AiryComm) { &mpi_vtable, (guint) rank, (guint) size, m, 0 };
  return comm;
}
