#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The temporary files of airy_atomic_begin () still being written, so that
 * a program killed by a signal can remove them (airy-sim). Begin registers,
 * commit and abort unregister. */
void _airy_atomic_register    (const char *tmp_path);
void _airy_atomic_unregister  (const char *tmp_path);
/* Unlinks every registered temporary; async-signal-safe. */
void _airy_atomic_remove_live (void);

/* A guard for "the UI thread never touches a file": every file the engine
 * opens passes _airy_file_io_note (), which is a critical when called on
 * the forbidden thread (tests set it to the main thread around edits;
 * NULL, the default, allows every thread). */
void _airy_file_io_forbid_thread (GThread    *thread);
void _airy_file_io_note          (const char *path);

G_END_DECLS
