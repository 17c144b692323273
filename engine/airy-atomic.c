/* Files that appear under their name only when complete: written to a
 * temporary beside them, then renamed; live temporaries are known so a
 * signal handler can remove them. */
#define G_LOG_DOMAIN "airy-atomic"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "airy-atomic.h"
#include "airy-atomic-private.h"
#include "airy-error.h"

int
airy_atomic_begin (const char *path,
                   char      **tmp_path,
                   GError    **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmpl = g_strdup_printf ("%s%c.%s.XXXXXX", dir, G_DIR_SEPARATOR, base);
  int fd = g_mkstemp (tmpl);

  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE,
                   _("%s: cannot write: %s"), path, g_strerror (e));
      return -1;
    }
  _airy_atomic_register (tmpl);
  *tmp_path = g_steal_pointer (&tmpl);
  return fd;
}

gboolean
airy_atomic_commit (const char *tmp_path,
                    const char *path,
                    GError    **error)
{
  /* mkstemp makes 0600; outputs are ordinary files */
  g_chmod (tmp_path, 0644);
  if (g_rename (tmp_path, path) != 0)
    {
      int e = errno;
      g_unlink (tmp_path);
      _airy_atomic_unregister (tmp_path);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE,
                   _("%s: cannot write: %s"), path, g_strerror (e));
      return FALSE;
    }
  _airy_atomic_unregister (tmp_path);
  return TRUE;
}

void
airy_atomic_abort (const char *tmp_path)
{
  if (tmp_path != NULL)
    {
      g_unlink (tmp_path);
      _airy_atomic_unregister (tmp_path);
    }
}

/* The temporaries being written, for a fatal signal's handler to remove
 * (airy-sim): fixed slots that it reads without locks or allocation. A slot
 * is 0 (free), 1 (being filled) or 2 (live). */
#define LIVE_SLOTS 16
static char live_paths[LIVE_SLOTS][4096];
static gint live_state[LIVE_SLOTS];

void
_airy_atomic_register (const char *tmp_path)
{
  guint i;

  if (strlen (tmp_path) >= sizeof live_paths[0])
    return;
  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&live_state[i], 0, 1))
      {
        strcpy (live_paths[i], tmp_path);
        g_atomic_int_set (&live_state[i], 2);
        return;
      }
}

void
_airy_atomic_unregister (const char *tmp_path)
{
  guint i;

  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_get (&live_state[i]) == 2 && strcmp (live_paths[i], tmp_path) == 0)
      {
        g_atomic_int_set (&live_state[i], 0);
        return;
      }
}

/* Async-signal-safe: lock-free atomics and unlink () only. */
void
_airy_atomic_remove_live (void)
{
  guint i;

  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_get (&live_state[i]) == 2)
      unlink (live_paths[i]);
}

static GThread *volatile io_forbidden;

void
_airy_file_io_forbid_thread (GThread *thread)
{
  io_forbidden = thread;
}

void
_airy_file_io_note (const char *path)
{
  if (io_forbidden != NULL && g_thread_self () == io_forbidden)
    g_critical ("%s: a file read on a thread that must not touch files", path);
}
