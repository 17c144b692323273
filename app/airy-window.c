#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include <glib/gi18n.h>

#include "airy-window.h"

struct _AiryWindow
{
  GtkApplicationWindow parent_instance;

  AirySystem      *system;
  char            *path;
  gboolean         dirty;
  AiryBenchPanel  *panel;
  AiryStackViewer *viewer;
  AiryWorker      *worker;
  GtkWidget       *paned;
  GtkWidget       *title;
  GtkWidget       *subtitle;
  GtkWidget       *progress;
  GMenu           *recent_menu;
  GSettings       *settings;
  guint            shown;
  guint64          shown_hash;
  char            *run_status;     /* what was run; the slice path follows it */
  gboolean         closing;
};

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

static void
update_title (AiryWindow *self)
{
  g_autofree char *name = self->path ? g_path_get_basename (self->path)
                                     : g_strdup (airy_system_get_name (self->system) ? airy_system_get_name (self->system)
                                                                                     : _("Untitled"));
  g_autofree char *title = g_strdup_printf ("%s%s — Airy", self->dirty ? "• " : "", name);

  gtk_window_set_title (GTK_WINDOW (self), title);
  gtk_label_set_text (GTK_LABEL (self->title), title);
}

static void
set_status (AiryWindow *self, const char *text)
{
  gtk_label_set_text (GTK_LABEL (self->subtitle), text);
}

/* "64 planes 512² · 41 ms · CUDA 2 threads · slices: copied on GPU 0 …" */
static void
show_run_status (AiryWindow *self)
{
  const char *path = airy_stack_view_get_slice_path (airy_stack_viewer_get_view (self->viewer));
  g_autofree char *text = path ? g_strdup_printf ("%s · %s", self->run_status, path) : NULL;

  if (self->run_status)
    set_status (self, text ? text : self->run_status);
}

static void
on_slice_path (AiryStackView *view, AiryWindow *self)
{
  show_run_status (self);
}

const char *
airy_window_get_status (AiryWindow *self)
{
  return gtk_label_get_text (GTK_LABEL (self->subtitle));
}

/* Every edit: check the system as the engine would, mark a bad field and keep
 * the last result, or hand a copy to the worker. */
static void
recompute (AiryWindow *self)
{
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  const guint *devices;
  guint n_devices;

  if (!airy_system_validate (self->system, warnings, &error))
    {
      airy_worker_cancel (self->worker);
      airy_bench_panel_show_error (self->panel, error->message);
      set_status (self, _("not computed: fix the marked field"));
      gtk_widget_set_visible (self->progress, FALSE);
      return;
    }
  airy_bench_panel_show_error (self->panel, NULL);
  airy_bench_panel_set_warnings (self->panel, warnings);
  devices = airy_bench_panel_get_devices (self->panel, &n_devices);
  airy_worker_submit (self->worker, self->system, airy_bench_panel_get_backend (self->panel),
                      airy_bench_panel_get_threads (self->panel), devices, n_devices);
}

static void
on_panel_changed (AiryBenchPanel *panel, AiryWindow *self)
{
  self->dirty = TRUE;
  update_title (self);
  recompute (self);
}

static void
on_started (AiryWorker *worker, AiryWindow *self)
{
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), 0.0);
  gtk_widget_set_visible (self->progress, TRUE);
}

static void
on_progress (AiryWorker *worker, guint done, guint total, AiryWindow *self)
{
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), total ? (double) done / total : 0.0);
}

static void
on_finished (AiryWorker *worker, AiryResult *result, guint64 hash, AiryWindow *self)
{
  g_autofree char *status = NULL;
  AiryStack *s;

  gtk_widget_set_visible (self->progress, FALSE);
  /* only a result of the parameters now in the panel is shown */
  if (hash != airy_system_hash (self->system))
    return;
  s = (AiryStack *) airy_resident_get_stack (result->resident);
  status = g_strdup_printf (_("%u plane%s %u² · %.0f ms · %s %u thread%s"), s->depth, s->depth == 1 ? "" : "s",
                            s->width, result->seconds * 1e3,
                            g_str_equal (result->backend, "cpu") ? "CPU" : "CUDA", result->threads,
                            result->threads == 1 ? "" : "s");
  g_free (self->run_status);
  self->run_status = g_steal_pointer (&status);
  airy_stack_viewer_set_resident (self->viewer, g_steal_pointer (&result->resident));
  show_run_status (self);
  self->shown++;
  self->shown_hash = hash;
}

static void
on_failed (AiryWorker *worker, GError *error, AiryWindow *self)
{
  gtk_widget_set_visible (self->progress, FALSE);
  /* the last good result stays on screen */
  airy_bench_panel_show_error (self->panel, error->message);
  set_status (self, _("failed"));
}

static void
set_system (AiryWindow *self, AirySystem *system, const char *path)
{
  g_set_object (&self->system, system);
  g_free (self->path);
  self->path = g_strdup (path);
  self->dirty = FALSE;
  airy_bench_panel_set_system (self->panel, system);
  update_title (self);
  recompute (self);
}

/* ---- recent files ---- */

static void
rebuild_recent (AiryWindow *self)
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

static void
remember (AiryWindow *self, const char *path)
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
  rebuild_recent (self);
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
      airy_stack_viewer_show_message (self->viewer, local->message);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  set_system (self, system, path);
  remember (self, path);
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
  set_system (self, system, NULL);
  return TRUE;
}

gboolean
airy_window_save (AiryWindow *self,
                  const char *path,
                  GError    **error)
{
  if (!airy_system_save (self->system, path, error))
    return FALSE;
  g_free (self->path);
  self->path = g_strdup (path);
  self->dirty = FALSE;
  update_title (self);
  remember (self, path);
  return TRUE;
}

typedef enum { CHOOSE_OPEN, CHOOSE_SAVE, CHOOSE_SAVE_CLOSE } Choose;

static void
on_chosen (GtkNativeDialog *dialog, int response, gpointer data)
{
  AiryWindow *self = g_object_get_data (G_OBJECT (dialog), "window");
  Choose what = GPOINTER_TO_INT (data);
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;

  if (response == GTK_RESPONSE_ACCEPT && (file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)))
      && (path = g_file_get_path (file)))
    {
      if (what == CHOOSE_OPEN)
        airy_window_open_file (self, path, NULL);
      else if (!airy_window_save (self, path, &error))
        airy_stack_viewer_show_message (self->viewer, error->message);
      else if (what == CHOOSE_SAVE_CLOSE)
        gtk_window_destroy (GTK_WINDOW (self));
    }
  g_object_unref (dialog);
}

static void
choose (AiryWindow *self, Choose what)
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
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), "system.json");
  g_object_set_data (G_OBJECT (dialog), "window", self);
  g_signal_connect (dialog, "response", G_CALLBACK (on_chosen), GINT_TO_POINTER (what));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

char *
airy_window_command_line (AiryWindow *self)
{
  g_autofree char *json = NULL;
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
  if (self->path && !self->dirty)
    {
      g_autofree char *quoted = g_shell_quote (self->path);
      return g_strdup_printf ("airy-sim run %s -o airy-result.tif %s", quoted, opts);
    }
  /* unsaved: the system travels in a here-document */
  json = airy_system_to_json (self->system);
  return g_strdup_printf ("airy-sim run /dev/stdin -o airy-result.tif %s <<'AIRY'\n%s\nAIRY\n", opts, json);
}

/* ---- actions ---- */

static void
action_open (GSimpleAction *a, GVariant *p, gpointer data)
{
  choose (data, CHOOSE_OPEN);
}

static void
action_open_recent (GSimpleAction *a, GVariant *p, gpointer data)
{
  airy_window_open_file (data, g_variant_get_string (p, NULL), NULL);
}

static void
action_save (GSimpleAction *a, GVariant *p, gpointer data)
{
  AiryWindow *self = data;
  g_autoptr(GError) error = NULL;

  if (self->path == NULL)
    choose (self, CHOOSE_SAVE);
  else if (!airy_window_save (self, self->path, &error))
    airy_stack_viewer_show_message (self->viewer, error->message);
}

static void
action_save_as (GSimpleAction *a, GVariant *p, gpointer data)
{
  choose (data, CHOOSE_SAVE);
}

static void
action_new (GSimpleAction *a, GVariant *p, gpointer data)
{
  airy_window_load_preset (data, g_variant_get_string (p, NULL), NULL);
}

static void
action_export (GSimpleAction *a, GVariant *p, gpointer data)
{
  AiryWindow *self = data;

  gtk_widget_activate_action (GTK_WIDGET (self->viewer), "viewer.export-png", NULL);
}

static void
action_export_tiff (GSimpleAction *a, GVariant *p, gpointer data)
{
  AiryWindow *self = data;

  gtk_widget_activate_action (GTK_WIDGET (self->viewer), "viewer.export-tiff", NULL);
}

static void
action_copy_command (GSimpleAction *a, GVariant *p, gpointer data)
{
  AiryWindow *self = data;
  g_autofree char *cmd = airy_window_command_line (self);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), cmd);
  set_status (self, _("command line copied"));
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
      g_autoptr(GError) error = NULL;

      if (self->path == NULL)
        choose (self, CHOOSE_SAVE_CLOSE);
      else if (airy_window_save (self, self->path, &error))
        gtk_window_destroy (GTK_WINDOW (self));
      else
        airy_stack_viewer_show_message (self->viewer, error->message);
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

  if (self->worker)
    {
      airy_worker_cancel (self->worker);
      g_signal_handlers_disconnect_by_data (self->worker, self);
    }
  g_clear_object (&self->worker);
  G_OBJECT_CLASS (airy_window_parent_class)->dispose (object);
}

static void
airy_window_finalize (GObject *object)
{
  AiryWindow *self = AIRY_WINDOW (object);

  g_clear_object (&self->system);
  g_clear_object (&self->settings);
  g_clear_object (&self->recent_menu);
  g_free (self->path);
  g_free (self->run_status);
  G_OBJECT_CLASS (airy_window_parent_class)->finalize (object);
}

static void
airy_window_class_init (AiryWindowClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = airy_window_dispose;
  G_OBJECT_CLASS (klass)->finalize = airy_window_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = airy_window_close_request;
}

static GMenuModel *
primary_menu (AiryWindow *self)
{
  GMenu *menu = g_menu_new ();
  g_autoptr(GMenu) files = g_menu_new ();
  g_autoptr(GMenu) presets = g_menu_new ();
  g_autoptr(GMenu) exports = g_menu_new ();
  g_autoptr(GMenu) other = g_menu_new ();
  g_auto(GStrv) names = airy_presets_list ();
  guint i;

  for (i = 0; names[i]; i++)
    {
      g_autoptr(GMenuItem) item = g_menu_item_new (names[i], NULL);
      g_menu_item_set_action_and_target_value (item, "win.new", g_variant_new_string (names[i]));
      g_menu_append_item (presets, item);
    }
  g_menu_append_submenu (files, _("_New from Preset"), G_MENU_MODEL (presets));
  g_menu_append (files, _("_Open…"), "win.open");
  g_menu_append_submenu (files, _("Open _Recent"), G_MENU_MODEL (self->recent_menu));
  g_menu_append (files, _("_Save"), "win.save");
  g_menu_append (files, _("Save _As…"), "win.save-as");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (files));
  g_menu_append (exports, _("Export View as PNG…"), "viewer.export-png");
  g_menu_append (exports, _("Export View as PNG (2×)…"), "viewer.export-png-2x");
  g_menu_append (exports, _("Export Raw Slice (16-bit PNG)…"), "viewer.export-raw");
  g_menu_append (exports, _("Export Stack (TIFF)…"), "viewer.export-tiff");
  g_menu_append (exports, _("Export XZ Section (TIFF)…"), "viewer.export-section");
  g_menu_append (exports, _("Open Stack in Viewer…"), "viewer.open");
  g_menu_append (exports, _("_Copy Command Line"), "win.copy-command");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (exports));
  g_menu_append (other, _("_Keyboard Shortcuts"), "win.show-help-overlay");
  g_menu_append (other, _("_About Airy"), "app.about");
  g_menu_append (other, _("_Quit"), "app.quit");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (other));
  return G_MENU_MODEL (menu);
}

static void
airy_window_init (AiryWindow *self)
{
  static const GActionEntry entries[] = {
    { "open", action_open }, { "open-recent", action_open_recent, "s" }, { "save", action_save },
    { "save-as", action_save_as }, { "new", action_new, "s" }, { "export", action_export },
    { "export-tiff", action_export_tiff }, { "copy-command", action_copy_command },
  };
  GtkWidget *header = gtk_header_bar_new ();
  GtkWidget *titles = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *menu_button = gtk_menu_button_new ();
  GtkWidget *scroller = gtk_scrolled_window_new ();
  g_autoptr(GMenuModel) menu = NULL;
  int w = 1280, h = 800;

  self->settings = settings_new ();
  self->recent_menu = g_menu_new ();
  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);

  self->title = gtk_label_new ("Airy");
  self->subtitle = gtk_label_new ("");
  gtk_widget_add_css_class (self->title, "title");
  gtk_widget_add_css_class (self->subtitle, "subtitle");
  gtk_label_set_ellipsize (GTK_LABEL (self->subtitle), PANGO_ELLIPSIZE_END);
  gtk_box_append (GTK_BOX (titles), self->title);
  gtk_box_append (GTK_BOX (titles), self->subtitle);
  gtk_header_bar_set_title_widget (GTK_HEADER_BAR (header), titles);
  self->progress = gtk_progress_bar_new ();
  gtk_widget_set_valign (self->progress, GTK_ALIGN_CENTER);
  gtk_widget_set_size_request (self->progress, 120, -1);
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (header), self->progress);
  menu = primary_menu (self);
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (menu_button), menu);
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (menu_button), "open-menu-symbolic");
  gtk_widget_set_tooltip_text (menu_button, _("Main menu"));
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header), menu_button);
  gtk_window_set_titlebar (GTK_WINDOW (self), header);

  self->panel = AIRY_BENCH_PANEL (airy_bench_panel_new ());
  self->viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  g_signal_connect_object (airy_stack_viewer_get_view (self->viewer), "slice-path-changed", G_CALLBACK (on_slice_path),
                          self, 0);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), GTK_WIDGET (self->panel));
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  self->paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_start_child (GTK_PANED (self->paned), scroller);
  gtk_paned_set_end_child (GTK_PANED (self->paned), GTK_WIDGET (self->viewer));
  gtk_paned_set_shrink_start_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_resize_start_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_position (GTK_PANED (self->paned), 380);
  gtk_window_set_child (GTK_WINDOW (self), self->paned);

  self->worker = airy_worker_new ();
  g_signal_connect (self->worker, "started", G_CALLBACK (on_started), self);
  g_signal_connect (self->worker, "progress", G_CALLBACK (on_progress), self);
  g_signal_connect (self->worker, "finished", G_CALLBACK (on_finished), self);
  g_signal_connect (self->worker, "failed", G_CALLBACK (on_failed), self);
  g_signal_connect (self->panel, "changed", G_CALLBACK (on_panel_changed), self);

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
      if (airy_backend_lookup (backend) && airy_backend_lookup (backend)->available)
        airy_bench_panel_set_backend (self->panel, backend);
      rebuild_recent (self);
    }
  gtk_window_set_default_size (GTK_WINDOW (self), MAX (w, 640), MAX (h, 480));
}

void
airy_window_view_file (AiryWindow *self,
                       const char *path)
{
  /* the viewer on its own: no system, no bench */
  gtk_widget_set_visible (gtk_paned_get_start_child (GTK_PANED (self->paned)), FALSE);
  if (airy_stack_viewer_open (self->viewer, path, NULL))
    set_status (self, path);
  gtk_label_set_text (GTK_LABEL (self->title), "Airy");
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
