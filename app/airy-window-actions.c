#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include <glib/gi18n.h>

#include "airy-window-private.h"
#include "airy-fit-dialog.h"
#include "airy-optimize-dialog.h"

/* The window's menu and actions: the ☰ menu of the bench and of the
 * viewer alone, what needs a system, and the "win." actions (open,
 * save, presets, exports, the folder of a system's files, cancel,
 * the command line). */

static void
action_open (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);

  /* the viewer alone opens stacks */
  if (self->view_only)
    g_action_group_activate_action (airy_stack_viewer_get_actions (self->viewer), "open", NULL);
  else
    _airy_window_choose (self, CHOOSE_OPEN);
}

static void
action_open_recent (GtkWidget *widget, const char *name, GVariant *p)
{
  airy_window_open_path_async (AIRY_WINDOW (widget), g_variant_get_string (p, NULL), NULL);
}

static void
action_save (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);

  if (self->path == NULL)
    _airy_window_choose (self, CHOOSE_SAVE);
  else
    airy_window_save_async (self, self->path, FALSE);
}

static void
action_save_as (GtkWidget *widget, const char *name, GVariant *p)
{
  _airy_window_choose (AIRY_WINDOW (widget), CHOOSE_SAVE);
}

static void
action_new (GtkWidget *widget, const char *name, GVariant *p)
{
  airy_window_load_preset (AIRY_WINDOW (widget), g_variant_get_string (p, NULL), NULL);
}

static void
action_export (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);

  gtk_widget_activate_action (GTK_WIDGET (self->viewer), "viewer.export-png", NULL);
}

static void
action_export_tiff (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);

  gtk_widget_activate_action (GTK_WIDGET (self->viewer), "viewer.export-tiff", NULL);
}

/* The folder of a system's files, through the file chooser portal in the
 * sandbox: choosing a folder there grants access to all of it. */
static void
folder_chosen (AiryWindow *self,
               GFile      *folder)
{
  g_autofree char *path = g_file_get_path (folder);
  g_autoptr(GError) error = NULL;

  if (path == NULL)
    {
      g_autofree char *name = g_file_get_parse_name (folder);
      g_autofree char *text = g_strdup_printf (_("%s: not a local folder"), name);

      _airy_window_show_notice (self, text, TRUE);
    }
  else if (!airy_window_grant_folder (self, path, &error))
    _airy_window_show_notice (self, error->message, TRUE);
}

/* A folder chosen in a dialog (the system's files, a store), then given
 * to `chosen`. */
typedef void (*FolderChosen) (AiryWindow *self, GFile *folder);

typedef struct
{
  AiryWindow  *self;
  FolderChosen chosen;
} FolderJob;

static void
folder_job_free (gpointer data)
{
  FolderJob *j = data;

  g_object_unref (j->self);
  g_free (j);
}

#if GTK_CHECK_VERSION (4, 10, 0)
static void
on_folder_dialog (GObject *source, GAsyncResult *result, gpointer data)
{
  FolderJob *j = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) folder = gtk_file_dialog_select_folder_finish (GTK_FILE_DIALOG (source), result, &error);

  if (folder)
    j->chosen (j->self, folder);
  else if (!g_error_matches (error, GTK_DIALOG_ERROR, GTK_DIALOG_ERROR_DISMISSED)
           && !g_error_matches (error, GTK_DIALOG_ERROR, GTK_DIALOG_ERROR_CANCELLED))
    _airy_window_show_notice (j->self, error->message, TRUE);
  folder_job_free (j);
}
#else
static void
on_folder_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  FolderJob *j = data;
  g_autoptr(GFile) folder = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;

  if (folder)
    j->chosen (j->self, folder);
  g_object_unref (dialog);
}
#endif

static void
select_folder (AiryWindow *self, const char *title, const char *accept, FolderChosen chosen)
{
  FolderJob *j = g_new0 (FolderJob, 1);

  j->self = g_object_ref (self);
  j->chosen = chosen;
#if GTK_CHECK_VERSION (4, 10, 0)
  {
    g_autoptr(GtkFileDialog) dialog = gtk_file_dialog_new ();

    gtk_file_dialog_set_title (dialog, title);
    gtk_file_dialog_set_accept_label (dialog, accept);
    gtk_file_dialog_select_folder (dialog, GTK_WINDOW (self), NULL, on_folder_dialog, j);
  }
#else
  {
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new (title, GTK_WINDOW (self),
                                                                GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                                                                accept, _("_Cancel"));

    g_signal_connect_data (dialog, "response", G_CALLBACK (on_folder_response), j,
                           (GClosureNotify) (void (*) (void)) folder_job_free, 0);
    gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
  }
#endif
}

static void
action_choose_folder (GtkWidget *widget, const char *name, GVariant *p)
{
  select_folder (AIRY_WINDOW (widget), _("Choose the Folder of the System's Files"), _("_Choose"), folder_chosen);
}

/* a store is a folder: the file chooser of Open does not take one */
static void
store_chosen (AiryWindow *self, GFile *folder)
{
  airy_window_open_location_async (self, folder, NULL);
}

static void
action_open_store (GtkWidget *widget, const char *name, GVariant *p)
{
  select_folder (AIRY_WINDOW (widget), _("Open an OME-Zarr Store"), _("_Open"), store_chosen);
}

static void
action_cancel (GtkWidget *widget, const char *name, GVariant *p)
{
  _airy_window_cancel_run (AIRY_WINDOW (widget));
}

static void
action_copy_command (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);
  g_autofree char *cmd = airy_window_command_line (self);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), cmd);
  _airy_window_set_status (self, _("command line copied"));
}

/* what needs a system: nothing to save or run in the viewer alone */
static void
enable_system_actions (AiryWindow *self,
                       gboolean    enabled)
{
  static const char *const names[] = { "win.save", "win.save-as", "win.new", "win.copy-command", "win.choose-folder",
                                       "win.fit-psf", "win.fit-bead", "win.optimize" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (names); i++)
    gtk_widget_action_set_enabled (GTK_WIDGET (self), names[i], enabled);
}

/* The viewer's items (its "viewer." actions, which the window inserts too):
 * the same in the bench and in the viewer alone. */
static const struct { const char *label; const char *action; } viewer_items[] = {
  { N_("Export View as PNG…"), "viewer.export-png" },
  { N_("Export Full Slice as PNG…"), "viewer.export-slice-png" },
  { N_("Export Full Slice as PNG (2×)…"), "viewer.export-png-2x" },
  { N_("Export Raw Slice (16-bit PNG)…"), "viewer.export-raw" },
  { N_("Export Stack (TIFF)…"), "viewer.export-tiff" },
  { N_("Export XZ Section (TIFF)…"), "viewer.export-section" },
  { N_("Export XY, XZ and YZ as One PNG…"), "viewer.export-sections-png" },
  { N_("Export Line Profile (CSV)…"), "viewer.export-line-csv" },
  { N_("Export Axial Profile (CSV)…"), "viewer.export-axial-csv" },
  { N_("Pin as Reference"), "viewer.pin" },
  { N_("Voxel Size (Properties)…"), "viewer.properties" },
};

/* The ☰ menu, one section per kind of item: the bench's files (systems),
 * the viewer's exports, the bench's tools, the application. The viewer
 * alone has no system: there Open (Ctrl+O) opens a stack, and nothing that
 * needs a system is offered. A new tool goes into its section here. */
/* What a preset is, short enough for a menu (its submenu is as wide as
 * the whole menu): the description up to its colon, or its first words. */
static char *
preset_gist (const char *description)
{
  const char *colon = strchr (description, ':');
  glong n = g_utf8_strlen (description, -1), cut;
  g_autofree char *head = NULL;
  char *space;

  if (colon && g_utf8_pointer_to_offset (description, colon) <= 48)
    return g_strndup (description, colon - description);
  if (n <= 48)
    return g_strdup (description);
  cut = 44;
  head = g_utf8_substring (description, 0, cut);
  if ((space = strrchr (head, ' ')) != NULL && space > head)
    *space = '\0';
  return g_strdup_printf ("%s…", head);
}

static GMenuModel *
primary_menu (AiryWindow *self,
              gboolean    view_only)
{
  GMenu *menu = g_menu_new ();
  g_autoptr(GMenu) files = g_menu_new ();
  g_autoptr(GMenu) exports = g_menu_new ();
  g_autoptr(GMenu) tools = g_menu_new ();
  g_autoptr(GMenu) other = g_menu_new ();
  guint i;

  if (view_only)
    {
      g_menu_append (files, _("_Open Stack…"), "win.open");
      g_menu_append (files, _("Open OME-Zarr S_tore…"), "win.open-store");
    }
  else
    {
      g_autoptr(GMenu) presets = g_menu_new ();
      g_auto(GStrv) names = airy_presets_list ();

      for (i = 0; names[i]; i++)
        {
          /* the name and what it is: "widefield — Interactive default: …" */
          g_autoptr(AirySystem) preset = airy_system_new_from_preset (names[i], NULL);
          const char *about = preset ? airy_system_get_description (preset) : NULL;
          g_autofree char *gist = about ? preset_gist (about) : NULL;
          g_autofree char *label = gist ? g_strdup_printf ("%s — %s", names[i], gist) : g_strdup (names[i]);
          g_autoptr(GMenuItem) item = g_menu_item_new (label, NULL);
          g_menu_item_set_action_and_target_value (item, "win.new", g_variant_new_string (names[i]));
          g_menu_append_item (presets, item);
        }
      g_menu_append_submenu (files, _("_New from Preset"), G_MENU_MODEL (presets));
      g_menu_append (files, _("_Open…"), "win.open");
      g_menu_append (files, _("Open OME-Zarr S_tore…"), "win.open-store");
      g_menu_append_submenu (files, _("Open _Recent"), G_MENU_MODEL (self->recent_menu));
      g_menu_append (files, _("_Save"), "win.save");
      g_menu_append (files, _("Save _As…"), "win.save-as");
    }
  g_menu_append_section (menu, NULL, G_MENU_MODEL (files));
  {
    /* the exports in a submenu: the menu fits an 800-pixel screen with
     * Quit at its end */
    g_autoptr(GMenu) viewer = g_menu_new ();

    for (i = 0; i < G_N_ELEMENTS (viewer_items); i++)
      g_menu_append (g_str_has_prefix (viewer_items[i].action, "viewer.export") ? exports : viewer,
                     _(viewer_items[i].label), viewer_items[i].action);
    g_menu_append_submenu (viewer, _("_Export"), G_MENU_MODEL (exports));
    g_menu_append_section (menu, NULL, G_MENU_MODEL (viewer));
  }
  if (!view_only)
    {
      g_menu_append (tools, _("_Undo"), "win.undo");
      g_menu_append (tools, _("_Redo"), "win.redo");
      g_menu_append (tools, _("Open Stack in Viewer…"), "viewer.open");
      g_menu_append (tools, _("_Copy Command Line"), "win.copy-command");
      airy_fit_dialog_append_menu (tools);
      airy_optimize_dialog_append_menu (tools);
      g_menu_append_section (menu, NULL, G_MENU_MODEL (tools));
    }
  g_menu_append (other, _("_Keyboard Shortcuts"), "win.show-help-overlay");
  g_menu_append (other, _("_About Airy"), "app.about");
  g_menu_append (other, _("_Quit"), "app.quit");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (other));
  return G_MENU_MODEL (menu);
}

/* the bench with a system, or the viewer alone */
void
_airy_window_set_view_only (AiryWindow *self,
               gboolean    view_only)
{
  g_autoptr(GMenuModel) menu = NULL;
  gboolean same = view_only == self->view_only && gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (self->menu_button));

  self->view_only = view_only;
  enable_system_actions (self, !view_only);
  _airy_window_update_undo_actions (self);
  gtk_widget_set_visible (gtk_paned_get_start_child (GTK_PANED (self->paned)), !view_only);
  if (same)
    return;
  menu = primary_menu (self, view_only);
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (self->menu_button), menu);
}

/* the window's actions ("win."), installed on its class, as the menu and
 * the keys name them */
void
_airy_window_class_add_actions (GtkWidgetClass *widget_class)
{
  static const struct { const char *name; const char *type; GtkWidgetActionActivateFunc activate; } actions[] = {
    { "win.open", NULL, action_open }, { "win.open-recent", "s", action_open_recent },
    { "win.save", NULL, action_save }, { "win.save-as", NULL, action_save_as },
    { "win.new", "s", action_new }, { "win.export", NULL, action_export },
    { "win.export-tiff", NULL, action_export_tiff }, { "win.copy-command", NULL, action_copy_command },
    { "win.choose-folder", NULL, action_choose_folder }, { "win.open-store", NULL, action_open_store },
    { "win.cancel", NULL, action_cancel },
    { "win.undo", NULL, _airy_window_action_undo }, { "win.redo", NULL, _airy_window_action_redo },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (actions); i++)
    gtk_widget_class_install_action (widget_class, actions[i].name, actions[i].type, actions[i].activate);
  /* the fit's and the optimizer's win.fit-psf, win.fit-bead, win.optimize */
  airy_fit_dialog_class_install_actions (widget_class, (AiryFitApplyFunc) _airy_window_apply_system);
  airy_optimize_dialog_class_install_actions (widget_class, (AiryFitApplyFunc) _airy_window_apply_system);
}
