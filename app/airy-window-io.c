/* The window's files on workers (GTask), as GNOME Text Editor loads and
 * saves documents: Open, Open Recent, --view and the files the application
 * is given are read, parsed or decoded on a worker; Save and Save As are
 * written there. The UI thread applies what comes back; until then the
 * window keeps what it shows, with "Opening …" or "Saving …" as its status,
 * and stays responsive. */
#define G_LOG_DOMAIN "airy"

#include "config.h"

#include <glib/gi18n.h>

#include "airy-window-private.h"
#include "airy-system-private.h"

/* ---- opening ---- */

typedef struct
{
  GFile      *file;
  char       *path;
  char       *name;
  char       *fallback;   /* a new window's preset when the file cannot be opened */
  char       *status;     /* the window's status before: back on a failure */
  AirySystem *system;     /* what the worker read */
  AiryStack  *stack;
  guint       level;      /* a store: the level read (a coarser one when the stack exceeds the budget) */
} OpenJob;

static void
open_job_free (OpenJob *j)
{
  g_clear_object (&j->file);
  g_free (j->path);
  g_free (j->name);
  g_free (j->fallback);
  g_free (j->status);
  g_clear_object (&j->system);
  airy_stack_free (j->stack);
  g_free (j);
}

static void
open_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  OpenJob *j = data;
  GError *error = NULL;
  FileKind kind = _airy_window_file_kind (j->file, j->name, &error);

  if (kind == KIND_SYSTEM)
    j->system = airy_system_new_from_file (j->path, &error);
  else if (kind == KIND_IMAGE)
    j->stack = airy_image_read_level (j->path, NULL, &j->level, &error);   /* a store too large: a coarser level */
  if (j->system || j->stack)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
open_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryWindow *self = AIRY_WINDOW (source);
  OpenJob *j = g_task_get_task_data (G_TASK (res));
  g_autoptr(GError) error = NULL;

  self->file_tasks--;
  if (self->worker == NULL)
    return;   /* the window went away meanwhile */
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      /* in the window until dismissed: it keeps what it had */
      _airy_window_report (self, error);
      if (j->fallback)
        {
          g_printerr ("airy: %s\n", error->message);
          airy_window_load_preset (self, j->fallback, NULL);
        }
      else
        _airy_window_set_status (self, j->status);
      return;
    }
  _airy_window_show_notice (self, NULL, FALSE);
  if (j->system)
    {
      _airy_window_set_system (self, j->system, j->path);
      _airy_window_remember (self, j->path);
    }
  else
    {
      guint h = j->stack->height, w = j->stack->width;

      airy_stack_viewer_show_file (self->viewer, g_steal_pointer (&j->stack), j->path);
      _airy_window_viewing_file (self, j->path);
      if (j->level > 0)
        {
          g_autofree char *text = g_strdup_printf (_("%s: its full-size stack does not fit the memory budget; "
                                                     "showing level %u of the store, %u × %u pixels a plane"),
                                                   j->name, j->level, h, w);
          _airy_window_show_notice (self, text, FALSE);
        }
    }
}

void
airy_window_open_location_async (AiryWindow *self,
                                 GFile      *file,
                                 const char *fallback_preset)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *status = NULL;
  OpenJob *j;

  g_return_if_fail (AIRY_IS_WINDOW (self) && G_IS_FILE (file));

  if (!g_file_is_native (file))
    {
      /* a URI without a local path (a portal, GVfs): copied or parsed
       * from memory as it comes */
      g_autoptr(GError) error = NULL;

      if (!airy_window_open_location (self, file, &error) && fallback_preset)
        {
          g_printerr ("airy: %s\n", error->message);
          airy_window_load_preset (self, fallback_preset, NULL);
        }
      return;
    }
  j = g_new0 (OpenJob, 1);
  j->file = g_object_ref (file);
  j->path = g_file_get_path (file);
  j->name = g_file_get_parse_name (file);
  j->fallback = g_strdup (fallback_preset);
  j->status = g_strdup (self->status);
  status = g_strdup_printf (_("Opening %s…"), j->name);
  _airy_window_set_status (self, status);
  task = g_task_new (self, NULL, open_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) open_job_free);
  self->file_tasks++;
  g_task_run_in_thread (task, open_thread);
}

void
airy_window_open_path_async (AiryWindow *self,
                             const char *path,
                             const char *fallback_preset)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);

  airy_window_open_location_async (self, file, fallback_preset);
}

/* ---- saving ---- */

typedef struct
{
  AirySystem *system;    /* a copy of the window's, as it was when saved */
  char       *json;      /* the same as JSON: what the file holds */
  char       *path;
  char       *dir;       /* the folder, as named and physical: relative */
  char       *new_dir;   /* names of the system's files move to it */
  gboolean    close;     /* the window closes when the file is written */
  char       *status;    /* the window's status before: back on a failure */
} SaveJob;

static void
save_job_free (SaveJob *j)
{
  g_clear_object (&j->system);
  g_free (j->json);
  g_free (j->path);
  g_free (j->dir);
  g_free (j->new_dir);
  g_free (j->status);
  g_free (j);
}

static void
save_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  SaveJob *j = data;
  GError *error = NULL;

  j->new_dir = _airy_physical_path (j->dir);
  if (airy_system_save (j->system, j->path, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
save_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryWindow *self = AIRY_WINDOW (source);
  SaveJob *j = g_task_get_task_data (G_TASK (res));
  g_autoptr(GError) error = NULL;

  g_autofree char *now = NULL;

  self->file_tasks--;
  if (self->worker == NULL)
    return;   /* the window went away meanwhile */
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      airy_stack_viewer_show_message (self->viewer, error->message);
      _airy_window_set_status (self, j->status);
      return;
    }
  /* the window's system names its files from the new folder, as the saved
   * copy does (airy_system_save) */
  now = airy_system_to_json (self->system);
  _airy_system_rebase (self->system, j->new_dir, j->dir);
  /* an edit made while the file was written keeps the window dirty */
  _airy_window_saved (self, j->path, g_str_equal (now, j->json) ? NULL : j->json);
  _airy_window_set_status (self, j->path);
  if (j->close)
    gtk_window_destroy (GTK_WINDOW (self));
}

void
airy_window_save_async (AiryWindow *self,
                        const char *path,
                        gboolean    close)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *status = NULL;
  SaveJob *j;

  g_return_if_fail (AIRY_IS_WINDOW (self) && path != NULL && self->system != NULL);

  j = g_new0 (SaveJob, 1);
  j->system = airy_system_copy (self->system);
  j->json = airy_system_to_json (self->system);
  j->path = g_strdup (path);
  j->dir = g_path_get_dirname (path);
  j->close = close;
  j->status = g_strdup (self->status);
  status = g_strdup_printf (_("Saving %s…"), path);
  _airy_window_set_status (self, status);
  task = g_task_new (self, NULL, save_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) save_job_free);
  self->file_tasks++;
  g_task_run_in_thread (task, save_thread);
}

guint
airy_window_get_pending_files (AiryWindow *self)
{
  g_return_val_if_fail (AIRY_IS_WINDOW (self), 0);

  return self->file_tasks + airy_stack_viewer_get_pending_files (self->viewer);
}
