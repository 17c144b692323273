#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Atomic output: write to a temporary file beside path, then rename. */
int        airy_atomic_begin     (const char      *path,
                                  char           **tmp_path,
                                  GError         **error);
gboolean   airy_atomic_commit    (const char      *tmp_path,
                                  const char      *path,
                                  GError         **error);
void       airy_atomic_abort     (const char      *tmp_path);

G_END_DECLS
