#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The temporaries with a name (a shared one, an anonymous one between its
 * link and its rename, a previous file kept by a group commit), so that a
 * program killed by a signal can remove them (airy-sim). */
void _airy_atomic_register    (const char *tmp_path);
void _airy_atomic_unregister  (const char *tmp_path);
/* Unlinks every registered temporary; async-signal-safe. */
void _airy_atomic_remove_live (void);
/* Handlers for the signals that end a process by default (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU, SIGXFSZ):
 * remove the registered temporaries, then die of the signal as without a
 * handler. A signal ignored at start (nohup) stays ignored. */
void _airy_atomic_remove_on_signals (void);

/* The file that an output named path replaces: path, or the file its
 * symbolic links lead to (which need not exist yet). Anything but a
 * regular file there is refused (AIRY_ERROR_INVALID_VALUE, naming path). */
char *_airy_atomic_resolve_output (const char  *path,
                                   GError     **error);

/* Tests: FALSE makes every temporary a named one, as on a file system
 * without O_TMPFILE (default TRUE). */
void _airy_atomic_set_anonymous (gboolean allowed);

/* A guard for "the UI thread never touches a file": every file the engine
 * opens passes _airy_file_io_note (), and every file it writes (each
 * airy_atomic_file_new: TIFF, PNG, JSON, CSV) _airy_file_io_note_write (),
 * which are criticals when called on the forbidden thread (tests set it to
 * the main thread around edits, opens and saves; NULL, the default, allows
 * every thread). */
void _airy_file_io_forbid_thread (GThread    *thread);
void _airy_file_io_note          (const char *path);
void _airy_file_io_note_write    (const char *path);

/* Opens an input file for reading without blocking on a FIFO that has no
 * writer (O_NONBLOCK for the open, cleared after it), and refuses anything
 * but a regular file (AIRY_ERROR_FILE: "PATH: is a FIFO (named pipe), not
 * a regular file"), or with `streams` anything but a regular file, a pipe
 * or FIFO, a character device or a socket (a system read from /dev/stdin;
 * a FIFO is then opened again to wait for its writer, as FIFOs are read).
 * Returns the descriptor; −1 with errno set and error untouched when the
 * open itself fails (the caller words that), −1 with error set when the
 * file is refused. Notes the access (_airy_file_io_note). */
int  _airy_input_open            (const char *path,
                                  gboolean    streams,
                                  GError    **error);

G_END_DECLS
