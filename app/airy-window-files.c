#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "airy-window-private.h"
#include "airy-atomic-private.h"

/* What the window opens: a file decided by its content (a TIFF or PNG
 * stack in the viewer, a system in the bench), also from a URI without a
 * local path; and the recent files in the menu. */

/* ---- recent files ---- */

void
_airy_window_rebuild_recent (AiryWindow *self)
{
  g_auto(GStrv) recent = self->settings ? g_settings_get_strv (self->settings, "recent-files") : NULL;
  guint i;

  g_menu_remove_all (self->recent_menu);
  for (i = 0; recent && recent[i]; i++)
    {
      g_autofree char *base = g_path_get_basename (recent[i]);
      g_autoptr(GMenuItem) item = g_menu_item_new (base, NULL);

      g_menu_item_set_action_and_target_value (item, "win.open-recent", g_variant_new_string (recent[i]));
      g_menu_append_item (self->recent_menu, item);
    }
}

void
_airy_window_remember (AiryWindow *self,
                       const char *path)
{
  g_auto(GStrv) old = NULL;
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_auto(GStrv) list = NULL;
  guint i, n = 1;

  if (self->settings == NULL)
    return;
  old = g_settings_get_strv (self->settings, "recent-files");
  g_strv_builder_add (b, path);
  for (i = 0; old[i] && n < 10; i++)
    if (!g_str_equal (old[i], path))
      {
        g_strv_builder_add (b, old[i]);
        n++;
      }
  list = g_strv_builder_end (b);
  g_settings_set_strv (self->settings, "recent-files", (const char *const *) list);
  _airy_window_rebuild_recent (self);
}

/* ---- files by content ---- */

/* By content, not by name: TIFF and PNG magic numbers, or a JSON object. */
static FileKind
sniff (const guint8 *head,
       gsize         n)
{
  const AiryImageFormat *const *f;
  gsize i = 0;

  /* a stack in any format the engine reads */
  for (f = airy_image_formats (); *f; f++)
    if ((*f)->sniff (head, n))
      return KIND_IMAGE;
  if (n >= 3 && memcmp (head, "\xef\xbb\xbf", 3) == 0)
    i = 3;
  while (i < n && g_ascii_isspace (head[i]))
    i++;
  return i < n && head[i] == '{' ? KIND_SYSTEM : KIND_UNKNOWN;
}

/* A file that is not on a local path (a URI from a portal or GVfs without a
 * FUSE path): systems are parsed from memory, images from a temporary copy. */
static gboolean
open_remote (AiryWindow *self,
             GFile      *file,
             FileKind    kind,
             const char *name,
             GError    **error)
{
  g_autofree char *data = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr(GError) local = NULL;
  gsize length;
  gboolean ok;
  int fd;

  if (!g_file_load_contents (file, NULL, &data, &length, NULL, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", name, local->message);
      return FALSE;
    }
  if (kind == KIND_SYSTEM)
    {
      g_autoptr(AirySystem) system = airy_system_new_from_data (data, length, NULL, name, error);

      if (system == NULL)
        return FALSE;
      _airy_window_show_notice (self, NULL, FALSE);
      _airy_window_set_system (self, system, NULL);
      return TRUE;
    }
  fd = g_file_open_tmp ("airy-XXXXXX", &tmp, &local);
  if (fd < 0 || !g_close (fd, &local) || !g_file_set_contents (tmp, data, length, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", name, local->message);
      if (tmp)
        g_unlink (tmp);
      return FALSE;
    }
  ok = airy_window_view_file (self, tmp, error);
  g_unlink (tmp);
  if (ok)
    _airy_window_set_status (self, name);
  return ok;
}

/* What a file holds, from its first bytes (read here: call it on a
 * worker); KIND_UNKNOWN with the message for one that cannot be read or
 * holds neither. */
FileKind
_airy_window_file_kind (GFile      *file,
                        const char *name,
                        GError    **error)
{
  g_autoptr(GFileInputStream) in = NULL;
  g_autoptr(GError) local = NULL;
  g_autofree char *path = g_file_get_path (file);
  guint8 head[512];
  gssize n = -1;
  FileKind kind;

  /* a folder: a store of a chunked format (OME-Zarr), or nothing Airy reads */
  if (path != NULL && g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      const AiryImageFormat *format = airy_image_format_sniff (path, &local);

      if (format != NULL)
        return KIND_IMAGE;
      g_propagate_error (error, g_steal_pointer (&local));
      return KIND_UNKNOWN;
    }
  /* a FIFO or a device would block the read below (and its thread) */
  if (path != NULL)
    {
      int fd = _airy_input_open (path, FALSE, &local);

      if (fd >= 0)
        close (fd);
      else if (local != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return KIND_UNKNOWN;
        }
    }
  in = g_file_read (file, NULL, &local);
  if (in)
    n = g_input_stream_read (G_INPUT_STREAM (in), head, sizeof head, NULL, &local);
  if (n < 0)
    {
      /* GIO's own message names the file */
      if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: no such file"), name);
      else
        g_set_error_literal (error, AIRY_ERROR, AIRY_ERROR_FILE, local->message);
      return KIND_UNKNOWN;
    }
  kind = sniff (head, n);
  if (kind == KIND_UNKNOWN)
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                 _("%s: neither a TIFF or PNG image nor an Airy system (JSON)"), name);
  return kind;
}

gboolean
airy_window_open_location (AiryWindow *self,
                           GFile      *file,
                           GError    **error)
{
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *name = g_file_get_parse_name (file);
  g_autoptr(GError) local = NULL;
  FileKind kind;
  gboolean ok;

  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  kind = _airy_window_file_kind (file, name, &local);
  if (kind == KIND_UNKNOWN)
    goto failed;
  if (path == NULL)
    ok = open_remote (self, file, kind, name, &local);
  else if (kind == KIND_SYSTEM)
    ok = airy_window_open_file (self, path, &local);
  else
    ok = airy_window_view_file (self, path, &local);
  if (ok)
    return TRUE;

failed:
  _airy_window_report (self, local);
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

void
airy_window_open_files (GApplication *application,
                        GFile       **files,
                        int           n_files,
                        const char   *hint,
                        gpointer      data)
{
  int i;

  /* one window per file: stacks in the viewer, systems in the bench */
  for (i = 0; i < n_files; i++)
    {
      AiryWindow *window = airy_window_new (GTK_APPLICATION (application));

      gtk_window_present (GTK_WINDOW (window));
      /* read on a worker; a file that cannot be opened leaves its message
       * in the window, which opens on the default bench */
      airy_window_open_location_async (window, files[i], "widefield");
    }
}
