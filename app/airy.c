/* airy: the desktop program. Today it shows stacks: a system computed in
 * the background (the widefield preset by default, or --preset NAME) or a
 * TIFF/PNG given with --view FILE. The optical bench panel comes with the
 * desktop-app issue. */
#define G_LOG_DOMAIN "airy"

#include "config.h"

#include <locale.h>
#include <glib/gi18n.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-stack-viewer.h"

typedef struct
{
  GtkApplication *app;
  char           *view_file;
  char           *preset;
} AiryApp;

static void
set_subtitle (GtkWindow *window, const char *text)
{
  GtkWidget *label = g_object_get_data (G_OBJECT (window), "subtitle");

  gtk_label_set_text (GTK_LABEL (label), text);
}

static void
run_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  AirySystem *system = data;
  GError *error = NULL;
  AiryResult *result = airy_run (system, NULL, NULL, NULL, cancellable, &error);

  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, (GDestroyNotify) airy_result_free);
}

static void
run_done (GObject *source, GAsyncResult *res, gpointer data)
{
  GtkWindow *window = GTK_WINDOW (source);
  AiryStackViewer *viewer = g_object_get_data (G_OBJECT (window), "viewer");
  g_autoptr(GError) error = NULL;
  AiryResult *result = g_task_propagate_pointer (G_TASK (res), &error);

  if (result == NULL)
    {
      airy_stack_viewer_show_message (viewer, error->message);
      set_subtitle (window, _("failed"));
      return;
    }
  {
    AiryStack *s = g_steal_pointer (&result->stack);
    g_autofree char *text = g_strdup_printf (_("%u planes %u² · %.0f ms · %s %u threads"), s->depth,
                                             s->width, result->seconds * 1e3, result->backend,
                                             result->threads);
    set_subtitle (window, text);
    airy_stack_viewer_set_stack (viewer, s);
  }
  airy_result_free (result);
}

static void
compute (GtkWindow *window, const char *preset)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_preset (preset, &error);
  AiryStackViewer *viewer = g_object_get_data (G_OBJECT (window), "viewer");
  g_autoptr(GTask) task = NULL;

  if (system == NULL)
    {
      airy_stack_viewer_show_message (viewer, error->message);
      return;
    }
  set_subtitle (window, _("computing…"));
  task = g_task_new (window, NULL, run_done, NULL);
  g_task_set_task_data (task, g_object_ref (system), g_object_unref);
  g_task_run_in_thread (task, run_thread);
}

static void
about (GSimpleAction *action, GVariant *param, gpointer data)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (data));
  const char *authors[] = { "The Airy developers", NULL };

  gtk_show_about_dialog (window, "program-name", "Airy", "version", PACKAGE_VERSION,
                         "comments", _("Simulates light microscopes: PSFs and images of 3-D samples"),
                         "license-type", GTK_LICENSE_GPL_3_0, "authors", authors,
                         "logo-icon-name", AIRY_APP_ID, NULL);
}

static void
quit (GSimpleAction *action, GVariant *param, gpointer data)
{
  g_application_quit (G_APPLICATION (data));
}

static GtkWidget *
build_window (GtkApplication *app)
{
  GtkWidget *window = gtk_application_window_new (app);
  GtkWidget *header = gtk_header_bar_new ();
  GtkWidget *titles = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *title = gtk_label_new ("Airy");
  GtkWidget *subtitle = gtk_label_new ("");
  GtkWidget *viewer = airy_stack_viewer_new ();
  GtkWidget *menu_button = gtk_menu_button_new ();
  GMenu *menu = g_menu_new ();
  GMenu *exports = g_menu_new ();

  gtk_widget_add_css_class (title, "title");
  gtk_widget_add_css_class (subtitle, "subtitle");
  gtk_box_append (GTK_BOX (titles), title);
  gtk_box_append (GTK_BOX (titles), subtitle);
  gtk_header_bar_set_title_widget (GTK_HEADER_BAR (header), titles);
  g_menu_append (menu, _("_Open Stack…"), "viewer.open");
  g_menu_append (exports, _("Export View as PNG…"), "viewer.export-png");
  g_menu_append (exports, _("Export View as PNG (2×)…"), "viewer.export-png-2x");
  g_menu_append (exports, _("Export Raw Slice (16-bit PNG)…"), "viewer.export-raw");
  g_menu_append (exports, _("Export Stack (TIFF)…"), "viewer.export-tiff");
  g_menu_append (exports, _("Export XZ Section (TIFF)…"), "viewer.export-section");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (exports));
  g_menu_append (menu, _("_About Airy"), "app.about");
  g_menu_append (menu, _("_Quit"), "app.quit");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (menu_button), G_MENU_MODEL (menu));
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (menu_button), "open-menu-symbolic");
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header), menu_button);
  gtk_window_set_titlebar (GTK_WINDOW (window), header);
  gtk_window_set_title (GTK_WINDOW (window), "Airy");
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_set_child (GTK_WINDOW (window), viewer);
  g_object_set_data (G_OBJECT (window), "viewer", viewer);
  g_object_set_data (G_OBJECT (window), "subtitle", subtitle);
  g_object_unref (menu);
  g_object_unref (exports);
  return window;
}

static void
activate (GApplication *application, AiryApp *self)
{
  GtkWidget *window = build_window (GTK_APPLICATION (application));
  AiryStackViewer *viewer = g_object_get_data (G_OBJECT (window), "viewer");

  gtk_window_present (GTK_WINDOW (window));
  if (self->view_file)
    {
      if (airy_stack_viewer_open (viewer, self->view_file, NULL))
        set_subtitle (GTK_WINDOW (window), self->view_file);
    }
  else
    compute (GTK_WINDOW (window), self->preset ? self->preset : "widefield");
}

static void
startup (GApplication *application, AiryApp *self)
{
  static const GActionEntry entries[] = { { "about", about }, { "quit", quit } };
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *open_accels[] = { "<Control>o", NULL };
  static const char *export_accels[] = { "<Control>e", NULL };
  g_autoptr(GtkCssProvider) css = gtk_css_provider_new ();

  g_action_map_add_action_entries (G_ACTION_MAP (application), entries, G_N_ELEMENTS (entries), application);
  gtk_application_set_accels_for_action (GTK_APPLICATION (application), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (application), "viewer.open", open_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (application), "viewer.export-png", export_accels);
  gtk_css_provider_load_from_resource (css, "/io/github/airyoptics/Airy/ui/airy-style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
}

int
main (int argc, char **argv)
{
  AiryApp self = { 0 };
  g_autoptr(GtkApplication) app = NULL;
  GOptionEntry options[] = {
    { "view", 0, 0, G_OPTION_ARG_FILENAME, &self.view_file, N_("Show a TIFF or PNG stack"), N_("FILE") },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &self.preset, N_("Compute a preset (default: widefield)"), N_("NAME") },
    { NULL }
  };
  int status;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  airy_init ();

  app = gtk_application_new (AIRY_APP_ID, G_APPLICATION_NON_UNIQUE);
  g_application_add_main_option_entries (G_APPLICATION (app), options);
  g_signal_connect (app, "startup", G_CALLBACK (startup), &self);
  g_signal_connect (app, "activate", G_CALLBACK (activate), &self);
  status = g_application_run (G_APPLICATION (app), argc, argv);
  g_free (self.view_file);
  g_free (self.preset);
  return status;
}
