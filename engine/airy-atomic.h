#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Atomic output: a file appears under its name only when complete, and an
 * earlier file of that name stays whole until then.
 *
 * The bytes go to a temporary in the output's folder: an anonymous one
 * (O_TMPFILE, which cannot outlive the process) where the file system has
 * them, else a hidden `.airy-HOST-PID-XXXXXX` (a short name, whatever the
 * output's length), which a later write into the same folder removes once
 * its process is gone. Commit links and renames it over the output.
 *
 * An output that names a symbolic link replaces the file the link leads
 * to (the link stays); one that names anything but a regular file (a
 * folder, a FIFO, a device, a socket) is refused. */
typedef struct _AiryAtomicFile AiryAtomicFile;

typedef enum
{
  AIRY_ATOMIC_DEFAULT = 0,
  /* a named temporary that other processes open by name and write into
   * (airy_atomic_file_get_temp_path): the ranks of an MPI run */
  AIRY_ATOMIC_SHARED  = 1 << 0,
} AiryAtomicFlags;

AiryAtomicFile *airy_atomic_file_new           (const char      *path,
                                                AiryAtomicFlags  flags,
                                                GError         **error);
/* The temporary's descriptor: write there, and leave it open (commit and
 * abort close it). */
int             airy_atomic_file_get_fd        (AiryAtomicFile  *file);
/* The temporary's name (AIRY_ATOMIC_SHARED), or NULL for an anonymous one. */
const char     *airy_atomic_file_get_temp_path (AiryAtomicFile  *file);
/* Closes the temporary (its errors are the write's) and renames it over
 * the output, or stages it in the group of this thread (below). Frees
 * file, also on failure (the temporary is then removed). */
gboolean        airy_atomic_file_commit        (AiryAtomicFile  *file,
                                                GError         **error);
/* Removes the temporary and frees file; NULL is ignored. */
void            airy_atomic_file_abort         (AiryAtomicFile  *file);

/* data as the whole contents of path, atomically */
gboolean        airy_atomic_set_contents       (const char      *path,
                                                const char      *data,
                                                gsize            length,
                                                GError         **error);

/* Several outputs of one run, committed together or not at all: between
 * begin and commit, every airy_atomic_file_commit of the calling thread
 * only stages its file (complete, still under its temporary). Group commit
 * renames them all; when one cannot be, those already renamed are put back
 * (the previous files, kept as hard links meanwhile) and none is left.
 * Abort (also the autoptr cleanup) removes every staged temporary. Both
 * free group and end it; a thread has one group at a time. */
typedef struct _AiryAtomicGroup AiryAtomicGroup;

AiryAtomicGroup *airy_atomic_group_begin  (void);
gboolean         airy_atomic_group_commit (AiryAtomicGroup *group,
                                           GError         **error);
void             airy_atomic_group_abort  (AiryAtomicGroup *group);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryAtomicFile, airy_atomic_file_abort)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryAtomicGroup, airy_atomic_group_abort)

G_END_DECLS
