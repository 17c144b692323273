/* airy-mpi.h: the MPI implementation of the engine's communicator
 * (engine/airy-comm.h), airy-sim's only. Built with Meson's `mpi` option;
 * the engine library never links MPI. */
#pragma once

#include "airy-comm.h"

G_BEGIN_DECLS

/* Whether a launcher started this process as a rank (mpirun, srun). */
gboolean  airy_mpi_launched      (void);
/* MPI_Init_thread (funneled: only the thread that calls the communicator
 * talks to MPI) and a communicator of MPI_COMM_WORLD; freeing it finalises
 * MPI. */
AiryComm *airy_mpi_comm_new      (int     *argc,
                                  char  ***argv,
                                  GError **error);
/* The most floats one MPI call reduces (default 2^30, below INT_MAX);
 * smaller in tests, to exercise the split. */
void      airy_mpi_set_max_count (gsize    count);

G_END_DECLS
