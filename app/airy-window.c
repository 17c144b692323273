#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "airy-window-private.h"

/* The window: the bench and the viewer side by side (or the viewer alone),
 * the header with its status, the notice, the sandbox's files (a system's
 * files the Flatpak hides, and the folder that grants them), each edit
 * checked and handed to the worker, the system's files (open, save, the
 * command line), closing with unsaved changes, and the object. The menu and
 * actions are airy-window-actions.c, undo and redo airy-window-history.c. */

G_DEFINE_FINAL_TYPE (AiryWindow, airy_window, GTK_TYPE_APPLICATION_WINDOW)

/* GSettings only when the schema is installed (or GSETTINGS_SCHEMA_DIR
 * points at the build's): running from a bare tree still works. */
static GSettings *
settings_new (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = source ? g_settings_schema_source_lookup (source, AIRY_APP_ID, TRUE) : NULL;

  return schema ? g_settings_new (AIRY_APP_ID) : NULL;
}

void
_airy_window_update_title (AiryWindow *self)
{
  g_autofree char *name = self->path ? g_path_get_basename (self->path)
                                     : g_strdup (airy_system_get_name (self->system) ? airy_system_get_name (self->system)
                                                                                     : _("Untitled"));
  g_autofree char *title = g_strdup_printf ("%s%s — Airy", self->dirty ? "• " : "", name);

  gtk_window_set_title (GTK_WINDOW (self), title);
  gtk_label_set_text (GTK_LABEL (self->title), title);
}

/* The header's second line: what the viewer shows first while a
 * reference is pinned ("Reference (pinned): not the current result · 64
 * planes …"), so that the numbers are never taken for the result's. */
static void
show_status (AiryWindow *self)
{
  const char *shown = airy_stack_viewer_get_shown_label (self->viewer);
  g_autofree char *text = NULL;

  if (!self->view_only && shown && airy_stack_viewer_get_pinned (self->viewer))
    text = g_strdup_printf ("%s · %s", shown, self->status ? self->status : "");
  gtk_label_set_text (GTK_LABEL (self->subtitle), text ? text : self->status ? self->status : "");
}

void
_airy_window_set_status (AiryWindow *self,
                         const char *text)
{
  if (text != self->status)
    {
      g_free (self->status);
      self->status = g_strdup (text);
    }
  show_status (self);
}

/* what the viewer shows changed: the header says so; the viewer alone
 * names the file it shows (also one opened from its own Open) */
static void
on_shown_changed (AiryStackViewer *viewer,
                  AiryWindow      *self)
{
  const char *path = airy_stack_viewer_get_path (viewer);

  if (self->view_only && path)
    {
      g_autofree char *name = g_path_get_basename (path);
      g_autofree char *title = g_strdup_printf ("%s — Airy", name);

      gtk_window_set_title (GTK_WINDOW (self), title);
      gtk_label_set_text (GTK_LABEL (self->title), title);
      _airy_window_set_status (self, path);
      return;
    }
  show_status (self);
}

const char *
airy_window_get_status (AiryWindow *self)
{
  return gtk_label_get_text (GTK_LABEL (self->subtitle));
}

/* ---- the notice: messages that must outlive the next result ---- */

void
_airy_window_show_notice (AiryWindow *self,
                          const char *text,
                          gboolean    access)
{
  gtk_label_set_text (GTK_LABEL (self->notice_label), text ? text : "");
  gtk_widget_set_visible (self->notice_folder, access);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->notice), text != NULL);
  self->notice_access = text != NULL && access;
}

static void
dismiss_notice (AiryWindow *self)
{
  _airy_window_show_notice (self, NULL, FALSE);
}

void
_airy_window_report (AiryWindow   *self,
                     const GError *error)
{
  _airy_window_show_notice (self, error->message, FALSE);
}

const char *
airy_window_get_notice (AiryWindow *self,
                        gboolean   *offers_folder)
{
  gboolean shown = gtk_revealer_get_reveal_child (GTK_REVEALER (self->notice));

  if (offers_folder)
    *offers_folder = shown && gtk_widget_get_visible (self->notice_folder);
  return shown ? gtk_label_get_text (GTK_LABEL (self->notice_label)) : NULL;
}

/* ---- the Flatpak sandbox ---- */

/* Flatpak puts /.flatpak-info in every sandbox. AIRY_TEST_FLATPAK=1 pretends
 * to be inside one: it exists for the tests only, which cannot run in a
 * sandbox. */
static gboolean
in_flatpak (void)
{
  return g_strcmp0 (g_getenv ("AIRY_TEST_FLATPAK"), "1") == 0
         || g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS);
}

typedef void (*FileFunc) (AirySystem  *system,
                          AiryElement *element,   /* NULL: the sample */
                          const char  *property,
                          const char  *field,
                          const char  *file,
                          gpointer     data);

/* Every file a system refers to: the sample volume and the file parameters
 * (AIRY_PARAM_FILE) of its enabled elements. */
static void
foreach_file (AirySystem *system,
              FileFunc    func,
              gpointer    data)
{
  const AirySample *sample = airy_system_get_sample (system);
  GPtrArray *elements = airy_system_get_elements (system);
  guint i, j, n;

  if (sample->kind == AIRY_SAMPLE_FILE && sample->file && *sample->file)
    {
      /* a copy: func may replace the sample */
      g_autofree char *file = g_strdup (sample->file);

      func (system, NULL, NULL, "sample.file", file, data);
    }
  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);
      g_autofree GParamSpec **specs = NULL;

      if (!airy_element_get_enabled (e))
        continue;
      specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);
      for (j = 0; j < n; j++)
        if (G_IS_PARAM_SPEC_STRING (specs[j]) && (airy_param_spec_get_flags (specs[j]) & AIRY_PARAM_FILE)
            && airy_element_get_string (e, specs[j]->name) && *airy_element_get_string (e, specs[j]->name))
          {
            g_autofree char *field = g_strdup_printf ("elements[%u].%s", i, specs[j]->name);
            g_autofree char *file = g_strdup (airy_element_get_string (e, specs[j]->name));
            func (system, e, specs[j]->name, field, file, data);
          }
    }
}

/* as the engine resolves it: relative to the system's folder */
static char *
resolve_file (AirySystem *system,
              const char *file)
{
  const char *base = airy_system_get_base_dir (system);

  return g_path_is_absolute (file) || base == NULL ? g_strdup (file) : g_build_filename (base, file, NULL);
}

static gboolean
readable (const char *path)
{
  return g_access (path, R_OK) == 0 && !g_file_test (path, G_FILE_TEST_IS_DIR);
}

static void
set_file (AirySystem  *system,
          AiryElement *element,
          const char  *property,
          const char  *value)
{
  if (element)
    g_object_set (element, property, value, NULL);
  else
    {
      AirySample sample = *airy_system_get_sample (system);

      sample.file = (char *) value;
      airy_system_set_sample (system, &sample);
    }
}

static void
collect_unreadable (AirySystem *system, AiryElement *element, const char *property,
                    const char *field, const char *file, gpointer data)
{
  g_autofree char *full = resolve_file (system, file);

  if (!readable (full))
    g_ptr_array_add (data, g_strdup_printf ("%s: %s", field, file));
}

static GPtrArray *
unreadable_files (AirySystem *system)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (g_free);

  foreach_file (system, collect_unreadable, list);
  return list;
}

/* A file error inside the sandbox: most likely a file next to the system that
 * the portal did not hand over. Say so, and offer to choose its folder. */
void
_airy_window_offer_folder (AiryWindow   *self,
                           const GError *error)
{
  g_autoptr(GPtrArray) missing = NULL;
  g_autofree char *list = NULL;
  g_autofree char *text = NULL;

  if (!g_error_matches (error, AIRY_ERROR, AIRY_ERROR_FILE) || !in_flatpak ())
    return;
  missing = unreadable_files (self->system);
  if (missing->len == 0)
    return;
  g_ptr_array_add (missing, NULL);
  list = g_strjoinv (", ", (char **) missing->pdata);
  text = g_strdup_printf (_("Airy cannot read %s. Inside the Flatpak sandbox it sees only the files you "
                            "choose; choose the folder that contains them to give it access."), list);
  _airy_window_show_notice (self, text, TRUE);
}

typedef struct
{
  const char *folder;
  const char *old_base;
  guint       missing;   /* still unreadable */
  gboolean    moved;     /* a file name had to change */
} Regrant;

static void
regrant_file (AirySystem *system, AiryElement *element, const char *property,
              const char *field, const char *file, gpointer data)
{
  Regrant *r = data;
  g_autofree char *full = resolve_file (system, file);
  g_autofree char *before = NULL;
  g_autofree char *base = NULL;
  g_autofree char *there = NULL;

  if (readable (full))
    return;
  /* it was readable where it was: keep it there */
  before = g_path_is_absolute (file) || r->old_base == NULL ? g_strdup (file)
                                                             : g_build_filename (r->old_base, file, NULL);
  base = g_path_get_basename (file);
  there = g_build_filename (r->folder, base, NULL);
  if (readable (before))
    set_file (system, element, property, before);
  else if (readable (there))
    set_file (system, element, property, there);
  else
    {
      r->missing++;
      return;
    }
  r->moved = TRUE;
}

/* Every edit: check the system as far as the UI thread may (no file is
 * read here: the sample and the mask images are the worker's), mark a bad
 * field and keep the last result, or hand a copy to the worker, whose
 * failures are marked at their fields too. */
void
_airy_window_recompute (AiryWindow *self)
{
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *settings = NULL;
  const guint *devices;
  guint n_devices;

  if (!airy_system_check (self->system, warnings, &error))
    {
      airy_worker_cancel (self->worker);
      /* the warnings of this system, as far as its check went: not those
       * of the last good one, which would contradict the panel's figures */
      airy_bench_panel_set_warnings (self->panel, warnings);
      airy_bench_panel_show_error (self->panel, error);
      _airy_window_set_status (self, _("not computed: fix the marked field"));
      _airy_window_offer_folder (self, error);
      return;
    }
  airy_bench_panel_show_error (self->panel, NULL);
  if (self->notice_access)
    _airy_window_show_notice (self, NULL, FALSE);
  airy_bench_panel_set_warnings (self->panel, warnings);
  /* back to what is shown (a value typed and then committed again, an
   * undo): nothing to run */
  settings = _airy_window_run_settings (self);
  if (self->shown > 0 && !self->previewing && airy_system_hash (self->system) == self->shown_hash
      && g_strcmp0 (settings, self->shown_settings) == 0)
    {
      airy_worker_cancel (self->worker);
      _airy_window_drop_partial (self);
      _airy_window_show_run_status (self);
      return;
    }
  _airy_window_make_room (self);
  /* a header that said "cancelled" or "not computed" is stale once a run
   * starts: it says so until the run shows something */
  if (self->run_status == NULL || self->status == NULL || !g_str_has_prefix (self->status, self->run_status))
    _airy_window_set_status (self, self->shown ? _("computing… (the view shows the last result)") : _("computing…"));
  devices = airy_bench_panel_get_devices (self->panel, &n_devices);
  airy_worker_submit (self->worker, self->system, airy_bench_panel_get_backend (self->panel),
                      airy_bench_panel_get_threads (self->panel), devices, n_devices,
                      _airy_window_preview_plane (self));
}

/* an edit the panel refused: the system keeps its last good value, the
 * result on screen is not the fields' */
static void
on_panel_invalid (AiryBenchPanel *panel, const char *message, AiryWindow *self)
{
  if (self->worker == NULL)
    return;
  airy_worker_cancel (self->worker);
  _airy_window_set_status (self, _("not computed: fix the marked field"));
}

static void
on_panel_changed (AiryBenchPanel *panel, AiryWindow *self)
{
  /* a field left while the window goes */
  if (self->worker == NULL)
    return;
  /* a preset's or a file's description says what the system was: an edit
   * makes it untrue, so it goes (an undo brings it back with the system) */
  if (airy_system_get_description (self->system) != NULL)
    {
      g_autofree char *json = airy_system_to_json (self->system);

      if (g_strcmp0 (json, self->current_json) != 0)
        airy_system_set_description (self->system, NULL);
    }
  _airy_window_record_edit (self);
  self->dirty = g_strcmp0 (self->current_json, self->saved_json) != 0;
  _airy_window_update_title (self);
  _airy_window_recompute (self);
}

void
_airy_window_set_system (AiryWindow *self,
                         AirySystem *system,
                         const char *path)
{
  char *copy = g_strdup (path);   /* path may be self->path */

  /* a system is edited in the bench, also in a window that was the viewer's */
  _airy_window_set_view_only (self, FALSE);
  g_set_object (&self->system, system);
  g_free (self->path);
  self->path = copy;
  self->dirty = FALSE;
  airy_bench_panel_set_system (self->panel, system);
  _airy_window_reset_history (self);
  _airy_window_update_title (self);
  _airy_window_recompute (self);
}

/* ---- files ---- */

gboolean
airy_window_open_file (AiryWindow *self,
                       const char *path,
                       GError    **error)
{
  g_autoptr(GError) local = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_file (path, &local);

  if (system == NULL)
    {
      /* in the window until dismissed: the bench keeps what it had */
      _airy_window_report (self, local);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  _airy_window_show_notice (self, NULL, FALSE);
  _airy_window_set_system (self, system, path);
  _airy_window_remember (self, path);
  return TRUE;
}

gboolean
airy_window_view_file (AiryWindow *self,
                       const char *path,
                       GError    **error)
{
  g_autoptr(GError) local = NULL;

  if (!airy_stack_viewer_open (self->viewer, path, &local))
    {
      _airy_window_report (self, local);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  _airy_window_viewing_file (self, path);
  return TRUE;
}

/* The viewer shows the stack of path: the window becomes the viewer's */
void
_airy_window_viewing_file (AiryWindow *self,
                           const char *path)
{
  /* the viewer on its own: no system, no bench */
  airy_worker_cancel (self->worker);
  _airy_window_show_notice (self, NULL, FALSE);
  _airy_window_set_view_only (self, TRUE);
  /* what is shown is the file's, no run's */
  self->shown_hash = 0;
  self->displayed_hash = 0;
  self->partial = FALSE;
  g_clear_pointer (&self->last_full, airy_resident_unref);
  g_clear_pointer (&self->shown_settings, g_free);
  on_shown_changed (self->viewer, self);
}

gboolean
airy_window_grant_folder (AiryWindow *self,
                          const char *folder,
                          GError    **error)
{
  g_autofree char *json = airy_system_to_json (self->system);
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GPtrArray) before = unreadable_files (self->system);
  Regrant r = { folder, airy_system_get_base_dir (self->system), 0, FALSE };
  gboolean dirty = self->dirty;

  g_return_val_if_fail (folder != NULL, FALSE);

  /* the same system, its relative file names now resolved in the folder */
  system = airy_system_new_from_data (json, -1, folder, self->path, error);
  if (system == NULL)
    return FALSE;
  foreach_file (system, regrant_file, &r);
  if (before->len > 0 && r.missing >= before->len)
    {
      g_autofree char *list = NULL;

      g_ptr_array_add (before, NULL);
      list = g_strjoinv (", ", (char **) before->pdata);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s holds none of the files Airy is missing (%s)"), folder, list);
      return FALSE;
    }
  _airy_window_set_system (self, system, self->path);
  self->dirty = dirty || r.moved;
  if (self->dirty)
    g_clear_pointer (&self->saved_json, g_free);   /* dirty until saved */
  _airy_window_update_title (self);
  return TRUE;
}

gboolean
airy_window_load_preset (AiryWindow *self,
                         const char *name,
                         GError    **error)
{
  g_autoptr(AirySystem) system = airy_system_new_from_preset (name, error);

  if (system == NULL)
    return FALSE;
  _airy_window_set_system (self, system, NULL);
  return TRUE;
}

gboolean
airy_window_save (AiryWindow *self,
                  const char *path,
                  GError    **error)
{
  if (!airy_system_save (self->system, path, error))
    return FALSE;
  _airy_window_saved (self, path, NULL);
  return TRUE;
}

/* The system went to path (as saved_json, or as it is now for NULL): its
 * file, not dirty unless edited since */
void
_airy_window_saved (AiryWindow *self,
                    const char *path,
                    const char *saved_json)
{
  g_autofree char *now = airy_system_to_json (self->system);

  g_free (self->path);
  self->path = g_strdup (path);
  g_free (self->saved_json);
  self->saved_json = g_strdup (saved_json ? saved_json : now);
  self->dirty = !g_str_equal (self->saved_json, now);
  _airy_window_update_title (self);
  _airy_window_remember (self, path);
}

static void
on_chosen (GtkNativeDialog *dialog, int response, gpointer data)
{
  AiryWindow *self = g_object_get_data (G_OBJECT (dialog), "window");
  AiryWindowChoose what = GPOINTER_TO_INT (data);
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;

  /* read or written on a worker (airy-window-io.c) */
  if (response == GTK_RESPONSE_ACCEPT && (file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)))
      && (path = g_file_get_path (file)))
    {
      if (what == CHOOSE_OPEN)
        airy_window_open_path_async (self, path, NULL);
      else
        airy_window_save_async (self, path, what == CHOOSE_SAVE_CLOSE);
    }
  g_object_unref (dialog);
}

void
_airy_window_choose (AiryWindow *self, AiryWindowChoose what)
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (what == CHOOSE_OPEN ? _("Open System") : _("Save System"), GTK_WINDOW (self),
                                 what == CHOOSE_OPEN ? GTK_FILE_CHOOSER_ACTION_OPEN : GTK_FILE_CHOOSER_ACTION_SAVE,
                                 what == CHOOSE_OPEN ? _("_Open") : _("_Save"), _("_Cancel"));
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("Airy systems (JSON)"));
  gtk_file_filter_add_suffix (filter, "json");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
  g_object_unref (filter);
  if (what != CHOOSE_OPEN)
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), "system.airy.json");
  g_object_set_data (G_OBJECT (dialog), "window", self);
  g_signal_connect (dialog, "response", G_CALLBACK (on_chosen), GINT_TO_POINTER (what));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
make_absolute (AirySystem *system, AiryElement *element, const char *property,
               const char *field, const char *file, gpointer data)
{
  const char *base = airy_system_get_base_dir (system);
  g_autofree char *full = NULL;

  if (g_path_is_absolute (file) || base == NULL)
    return;
  full = g_canonicalize_filename (file, base);
  set_file (system, element, property, full);
}

/* How to call airy-sim from a shell: by name when PATH finds the one
 * beside the running program (or finds one and none is beside it), by its
 * absolute path when only the one beside it exists (a build tree, a
 * prefix not on PATH); *note says when neither was found. */
char *
_airy_window_sim_command (const char *program_dir,
                          char      **note)
{
  g_autofree char *beside = program_dir ? g_build_filename (program_dir, "airy-sim", NULL) : NULL;
  g_autofree char *on_path = g_find_program_in_path ("airy-sim");
  gboolean have_beside = beside && g_file_test (beside, G_FILE_TEST_IS_EXECUTABLE);

  *note = NULL;
  if (on_path && have_beside)
    {
      g_autofree char *a = g_canonicalize_filename (on_path, NULL), *b = g_canonicalize_filename (beside, NULL);

      return g_str_equal (a, b) ? g_strdup ("airy-sim") : g_shell_quote (beside);
    }
  if (have_beside)
    return g_shell_quote (beside);
  if (on_path == NULL)
    *note = g_strdup (_("# airy-sim was found neither beside airy nor on PATH: install Airy's command-line tool "
                        "(it comes with the app) or give its path instead of airy-sim"));
  return g_strdup ("airy-sim");
}

char *
airy_window_command_line (AiryWindow *self)
{
  g_autofree char *json = NULL;
  g_autofree char *dir = NULL;
  g_autoptr(AirySystem) copy = NULL;
  g_autofree char *sim = NULL;
  g_autofree char *note = NULL;
  guint threads = airy_bench_panel_get_threads (self->panel);
  const char *backend = airy_bench_panel_get_backend (self->panel);
  guint n_devices, i;
  const guint *devices = airy_bench_panel_get_devices (self->panel, &n_devices);
  g_autoptr(GString) o = g_string_new (NULL);
  g_autofree char *opts = NULL;

  g_string_append_printf (o, "--backend %s", backend);
  if (threads)
    g_string_append_printf (o, " --threads %u", threads);
  for (i = 0; i < n_devices; i++)
    g_string_append_printf (o, "%s%u", i ? "," : " --devices ", devices[i]);
  /* one device is written "0," so that airy-sim reads a list, not a count */
  if (n_devices == 1)
    g_string_append_c (o, ',');
  opts = g_string_free (g_steal_pointer (&o), FALSE);
  /* in the sandbox airy-sim is the Flatpak's; the result goes where the
   * command runs, which the sandbox sees only when told */
  if (in_flatpak ())
    sim = g_strdup ("flatpak run --command=airy-sim --filesystem=\"$PWD\" " AIRY_APP_ID);
  else
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *exe_dir = exe ? g_path_get_dirname (exe) : NULL;

      sim = _airy_window_sim_command (exe_dir, &note);
    }
  dir = self->path ? g_path_get_dirname (self->path) : NULL;
  if (self->path && !self->dirty && g_strcmp0 (dir, airy_system_get_base_dir (self->system)) == 0)
    {
      g_autofree char *quoted = g_shell_quote (self->path);
      return g_strdup_printf ("%s run %s -o airy-result.tif %s%s%s", sim, quoted, opts, note ? "\n" : "",
                              note ? note : "");
    }
  /* unsaved, or its files found in another folder: the system travels in a
   * here-document, its file names absolute (/dev/stdin has no folder) */
  copy = airy_system_copy (self->system);
  foreach_file (copy, make_absolute, NULL);
  json = airy_system_to_json (copy);
  return g_strdup_printf ("%s run /dev/stdin -o airy-result.tif %s <<'AIRY'\n%s\nAIRY\n%s%s", sim, opts, json,
                          note ? note : "", note ? "\n" : "");
}

/* ---- closing ---- */

static void
on_close_answer (GtkDialog *dialog, int response, AiryWindow *self)
{
  gtk_window_destroy (GTK_WINDOW (dialog));
  if (response == GTK_RESPONSE_REJECT)
    {
      self->dirty = FALSE;
      gtk_window_destroy (GTK_WINDOW (self));
    }
  else if (response == GTK_RESPONSE_ACCEPT)
    {
      if (self->path == NULL)
        _airy_window_choose (self, CHOOSE_SAVE_CLOSE);
      else
        airy_window_save_async (self, self->path, TRUE);
    }
}

static void
store_settings (AiryWindow *self)
{
  int w, h;

  if (self->settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &w, &h);
  g_settings_set (self->settings, "window-size", "(ii)", w, h);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (GTK_WINDOW (self)));
  g_settings_set_int (self->settings, "panel-width", gtk_paned_get_position (GTK_PANED (self->paned)));
  g_settings_set_string (self->settings, "colormap",
                         airy_colormap_name (airy_stack_view_get_display (airy_stack_viewer_get_view (self->viewer))->colormap));
  g_settings_set_string (self->settings, "backend", airy_bench_panel_get_backend (self->panel));
}

static gboolean
airy_window_close_request (GtkWindow *window)
{
  AiryWindow *self = AIRY_WINDOW (window);
  GtkWidget *dialog;

  store_settings (self);
  if (!self->dirty)
    return GTK_WINDOW_CLASS (airy_window_parent_class)->close_request (window);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  dialog = gtk_message_dialog_new (window, GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                   GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                   _("Save changes to the system before closing?"));
  gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                            _("Unsaved changes are lost if you don't save them."));
  gtk_dialog_add_buttons (GTK_DIALOG (dialog), _("_Cancel"), GTK_RESPONSE_CANCEL,
                          _("_Discard"), GTK_RESPONSE_REJECT, _("_Save"), GTK_RESPONSE_ACCEPT, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_signal_connect (dialog, "response", G_CALLBACK (on_close_answer), self);
  gtk_window_present (GTK_WINDOW (dialog));
  return TRUE;
}

/* ---- object ---- */

static void
airy_window_dispose (GObject *object)
{
  AiryWindow *self = AIRY_WINDOW (object);

  g_clear_handle_id (&self->progress_tick, g_source_remove);
  if (self->preview_paint && gtk_widget_get_frame_clock (GTK_WIDGET (self)))
    g_clear_signal_handler (&self->preview_paint, gtk_widget_get_frame_clock (GTK_WIDGET (self)));
  if (self->worker)
    {
      g_signal_handlers_disconnect_by_data (self->worker, self);
      airy_worker_cancel (self->worker);
    }
  g_clear_object (&self->worker);
  G_OBJECT_CLASS (airy_window_parent_class)->dispose (object);
}

static void
airy_window_finalize (GObject *object)
{
  AiryWindow *self = AIRY_WINDOW (object);

  g_clear_object (&self->system);
  g_signal_handlers_disconnect_by_data (self->viewer, self);
  g_clear_object (&self->viewer);
  g_clear_pointer (&self->last_full, airy_resident_unref);
  g_clear_object (&self->settings);
  g_clear_object (&self->recent_menu);
  g_free (self->path);
  g_free (self->run_status);
  g_free (self->status);
  _airy_window_set_remote_copy (self, NULL);
  g_free (self->shown_settings);
  g_ptr_array_unref (self->undo);
  g_ptr_array_unref (self->redo);
  g_free (self->current_json);
  g_free (self->saved_json);
  g_free (self->last_edit);
  G_OBJECT_CLASS (airy_window_parent_class)->finalize (object);
}

/* notice.dismiss: the notice's close button */
static void
dismiss_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  dismiss_notice (AIRY_WINDOW (widget));
}

static void
airy_window_class_init (AiryWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = airy_window_dispose;
  G_OBJECT_CLASS (klass)->finalize = airy_window_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = airy_window_close_request;
  g_type_ensure (AIRY_TYPE_BENCH_PANEL);
  g_type_ensure (AIRY_TYPE_STACK_VIEWER);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/airyoptics/Airy/ui/airy-window.ui");
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, title);
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, subtitle);
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, menu_button);
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, notice);
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, notice_label);
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, notice_folder);
  gtk_widget_class_bind_template_child (widget_class, AiryWindow, paned);
  /* named, not bound to the fields: GTK clears bound fields at dispose, and
   * the viewer is held until finalize */
  gtk_widget_class_bind_template_child_full (widget_class, "panel", FALSE, 0);
  gtk_widget_class_bind_template_child_full (widget_class, "viewer", FALSE, 0);
  gtk_widget_class_install_action (widget_class, "notice.dismiss", NULL, dismiss_activated);
  _airy_window_class_add_actions (widget_class);
}

static void
airy_window_init (AiryWindow *self)
{
  static const struct { guint key; GdkModifierType mods; const char *action; } shortcuts[] = {
    { GDK_KEY_Escape, 0, "win.cancel" },
    /* the rest before the focus sees them (capture): a text field's own
     * undo would blank it instead of undoing the system's edit */
    { GDK_KEY_z, GDK_CONTROL_MASK, "win.undo" },
    { GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.redo" },
    { GDK_KEY_Z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.redo" },
    { GDK_KEY_y, GDK_CONTROL_MASK, "win.redo" },
  };
  GtkEventController *keys, *undo_keys;
  GtkWidget *bench;
  guint i;
  int w = 1280, h = 800;

  self->settings = settings_new ();
  self->recent_menu = g_menu_new ();
  self->undo = g_ptr_array_new_with_free_func (g_free);
  self->redo = g_ptr_array_new_with_free_func (g_free);
  gtk_widget_init_template (GTK_WIDGET (self));

  gtk_header_bar_pack_start (GTK_HEADER_BAR (gtk_window_get_titlebar (GTK_WINDOW (self))),
                             _airy_window_progress_new (self));
  self->panel = AIRY_BENCH_PANEL (gtk_widget_get_template_child (GTK_WIDGET (self), AIRY_TYPE_WINDOW, "panel"));
  /* the template's viewer, kept until finalize: the header asks it what it
   * shows, also while the window's children go */
  self->viewer = g_object_ref (AIRY_STACK_VIEWER (gtk_widget_get_template_child (GTK_WIDGET (self), AIRY_TYPE_WINDOW,
                                                                                 "viewer")));
  bench = gtk_paned_get_start_child (GTK_PANED (self->paned));
  gtk_box_append (GTK_BOX (bench), airy_bench_panel_get_messages (self->panel));
  /* the menu (in the header, outside the viewer) reaches the viewer's
   * actions, also those it adds later */
  gtk_widget_insert_action_group (GTK_WIDGET (self), "viewer", airy_stack_viewer_get_actions (self->viewer));
  _airy_window_set_view_only (self, TRUE);

  _airy_window_wire_run (self);
  /* the window's keys, taken when nothing under the focus wants them (a
   * popover closes on Escape): Escape cancels a run (win.cancel is disabled
   * while nothing runs); Ctrl+Z and Ctrl+Shift+Z (or Ctrl+Y) undo and redo
   * edits of the bench, also with the focus in one of its fields */
  keys = gtk_shortcut_controller_new ();
  undo_keys = gtk_shortcut_controller_new ();
  gtk_event_controller_set_propagation_phase (undo_keys, GTK_PHASE_CAPTURE);
  for (i = 0; i < G_N_ELEMENTS (shortcuts); i++)
    gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (i == 0 ? keys : undo_keys),
                                          gtk_shortcut_new (gtk_keyval_trigger_new (shortcuts[i].key, shortcuts[i].mods),
                                                            gtk_named_action_new (shortcuts[i].action)));
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  gtk_widget_add_controller (GTK_WIDGET (self), undo_keys);
  g_signal_connect (self->panel, "changed", G_CALLBACK (on_panel_changed), self);
  g_signal_connect_object (self->viewer, "shown-changed", G_CALLBACK (on_shown_changed), self, 0);
  g_signal_connect (self->panel, "invalid", G_CALLBACK (on_panel_invalid), self);

  if (self->settings)
    {
      g_autofree char *cmap = g_settings_get_string (self->settings, "colormap");
      g_autofree char *backend = g_settings_get_string (self->settings, "backend");
      AiryDisplay d = *airy_stack_view_get_display (airy_stack_viewer_get_view (self->viewer));

      g_settings_get (self->settings, "window-size", "(ii)", &w, &h);
      if (g_settings_get_boolean (self->settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
      gtk_paned_set_position (GTK_PANED (self->paned), g_settings_get_int (self->settings, "panel-width"));
      if (airy_colormap_from_name (cmap, &d.colormap))
        airy_stack_viewer_set_display (self->viewer, &d);
      if (airy_backend_lookup (backend) && airy_backend_is_available (airy_backend_lookup (backend)))
        airy_bench_panel_set_backend (self->panel, backend);
      _airy_window_rebuild_recent (self);
    }
  gtk_window_set_default_size (GTK_WINDOW (self), MAX (w, 640), MAX (h, 480));
}

AiryWindow *
airy_window_new (GtkApplication *app)
{
  return g_object_new (AIRY_TYPE_WINDOW, "application", app, NULL);
}

AirySystem *
airy_window_get_system (AiryWindow *self)
{
  return self->system;
}

AiryBenchPanel *
airy_window_get_panel (AiryWindow *self)
{
  return self->panel;
}

AiryStackViewer *
airy_window_get_viewer (AiryWindow *self)
{
  return self->viewer;
}

AiryWorker *
airy_window_get_worker (AiryWindow *self)
{
  return self->worker;
}

gboolean
airy_window_get_dirty (AiryWindow *self)
{
  return self->dirty;
}

guint
airy_window_get_shown (AiryWindow *self)
{
  return self->shown;
}

guint64
airy_window_get_shown_hash (AiryWindow *self)
{
  return self->shown_hash;
}
