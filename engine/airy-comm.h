/* airy-comm.h: the processes of one run (DESIGN §4, "Processes").
 *
 * Layering: the engine knows processes only through this small
 * communicator interface (rank, size, all-reduce of a float buffer in
 * place, broadcast of bytes, barrier, abort) and never includes mpi.h.
 * A single process uses airy_comm_self (); the MPI implementation lives
 * outside the engine library, in app/airy-mpi.c, linked into airy-sim
 * only when Meson finds MPI (option `mpi`). Backends reach other ranks
 * through the run state (state->comm), and the CUDA backend bootstraps
 * its cross-rank NCCL communicator with airy_comm_broadcast. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  AIRY_COMM_SUM,
  AIRY_COMM_MIN,
  AIRY_COMM_MAX,
} AiryCommOp;

typedef struct _AiryComm AiryComm;

typedef struct
{
  const char *name;
  /* count floats, in place, on every rank; an implementation splits counts
   * its transport cannot take in one call */
  gboolean (*all_reduce) (AiryComm   *comm,
                          float      *buf,
                          gsize       count,
                          AiryCommOp  op,
                          GError    **error);
  gboolean (*broadcast)  (AiryComm   *comm,
                          void       *buf,
                          gsize       n_bytes,
                          guint       root,
                          GError    **error);
  gboolean (*barrier)    (AiryComm   *comm,
                          GError    **error);
  /* a counter shared by all ranks, for dynamic load balancing: reset is
   * collective (the counter becomes 0), next is not (it returns the
   * counter and adds one, atomically across ranks) */
  gboolean (*counter_reset) (AiryComm *comm,
                             GError  **error);
  gboolean (*counter_next)  (AiryComm *comm,
                             guint64  *value,
                             GError  **error);
  /* ends every process of the run with this status (last resort: a rank
   * that cannot take part in the agreement any more) */
  void     (*abort)      (AiryComm   *comm,
                          int         status);
  void     (*free)       (AiryComm   *comm);
} AiryCommVTable;

struct _AiryComm
{
  const AiryCommVTable *ops;
  guint              rank;
  guint              size;
  gpointer           data;
  guint64            counter;   /* the one-process counter */
  /* the last airy_comm_agree of several ranks: whether it ended in an agreed failure (every
   * rank holds the same message), and whether every rank had failed with
   * bad input (airy_error_is_bad_input) */
  gboolean           agreed;
  gboolean           agreed_bad_input;
  /* what this rank moved through the communicator so far: the payload of
   * its reductions, broadcasts and agreements (bytes), and the time in
   * those calls (µs; a rank that waits for the others waits there) */
  guint64            moved_bytes;
  gint64             comm_us;
};

/* The trivial communicator of one process (rank 0 of 1); not to be freed. */
AiryComm *airy_comm_self       (void);
void      airy_comm_free       (AiryComm   *comm);

gboolean  airy_comm_all_reduce (AiryComm   *comm,
                                float      *buf,
                                gsize       count,
                                AiryCommOp  op,
                                GError    **error);
gboolean  airy_comm_broadcast  (AiryComm   *comm,
                                void       *buf,
                                gsize       n_bytes,
                                guint       root,
                                GError    **error);
gboolean  airy_comm_barrier    (AiryComm   *comm,
                                GError    **error);
void      airy_comm_abort      (AiryComm   *comm,
                                int         status);
/* Work handed out dynamically: after a (collective) reset, each call of
 * next on any rank gets the next whole number 0, 1, 2, … once. */
gboolean  airy_comm_counter_reset (AiryComm *comm,
                                   GError  **error);
gboolean  airy_comm_counter_next  (AiryComm *comm,
                                   guint64  *value,
                                   GError  **error);
/* Error agreement, collective: every rank passes its own outcome (*error
 * set or NULL). TRUE when no rank failed; otherwise every rank returns
 * FALSE with *error replaced by the message of the lowest failing rank,
 * prefixed by its rank when the run has several ("rank 1 of 2: …"), and
 * comm->agreed set (comm->agreed_bad_input when every rank failed with bad
 * input). A failure of the transport leaves comm->agreed FALSE: each rank
 * then holds its own error. Also a barrier. */
gboolean  airy_comm_agree      (AiryComm   *comm,
                                GError    **error);

/* Contiguous split of n items over size parts: part `rank` starts at
 * *first and holds *count (the first n % size parts one more). */
void      airy_comm_split      (guint       n,
                                guint       size,
                                guint       rank,
                                guint      *first,
                                guint      *count);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryComm, airy_comm_free)

G_END_DECLS
