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

G_END_DECLS
