/* airy: the desktop program — an optical bench panel beside the stack
 * viewer, recomputing in the background on every edit.
 *   airy [FILE…]       one window per file, by content: a TIFF or PNG stack
 *                      in the viewer, a system (JSON) in the bench; paths or
 *                      URIs (the desktop file passes %U)
 *   airy --preset NAME   (default: the widefield preset)
 *   airy --view FILE   the viewer alone on a TIFF or PNG */
#define G_LOG_DOMAIN "airy"

#include "config.h"

#include <locale.h>
#include <string.h>
#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <epoxy/gl.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-bench-ui.h"

typedef struct
{
  char *view_file;
  char *preset;
  int   bench_ui;     /* --bench-ui N: N edits; -1: no benchmark */
  int   bench_size;
} Options;

static Options options = { .bench_ui = -1 };

static void
about (GSimpleAction *action, GVariant *param, gpointer data)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (data));
  const char *authors[] = { _("The Airy developers"), NULL };

  gtk_show_about_dialog (window, "program-name", "Airy", "version", PACKAGE_VERSION,
                         "comments", _("Simulates light microscopes: PSFs and images of 3-D samples"),
                         "license-type", GTK_LICENSE_GPL_3_0, "authors", authors,
                         "logo-icon-name", AIRY_APP_ID, NULL);
}

static void
quit (GSimpleAction *action, GVariant *param, gpointer data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (data));

  /* through close-request, so unsaved changes are asked about */
  for (; windows; windows = windows->next)
    gtk_window_close (windows->data);
}

static void
activate (GApplication *application, gpointer data)
{
  AiryWindow *window = airy_window_new (GTK_APPLICATION (application));
  g_autoptr(GError) error = NULL;

  gtk_window_present (GTK_WINDOW (window));
  if (options.bench_ui >= 0)
    {
      airy_bench_ui_start (window, (guint) options.bench_ui, (guint) MAX (options.bench_size, 0));
      return;
    }
  if (options.view_file)
    {
      /* read on a worker; a file that cannot be opened is reported in the
       * window, which opens on the preset */
      airy_window_open_path_async (window, options.view_file, options.preset ? options.preset : "widefield");
      return;
    }
  if (!airy_window_load_preset (window, options.preset ? options.preset : "widefield", &error))
    {
      g_printerr ("airy: %s\n", error->message);
      airy_window_load_preset (window, "widefield", NULL);
    }
}

/* GTK's GL renderer redraws the whole window for every frame; on a
 * software rasteriser (Mesa's llvmpipe: a machine without a GPU, a VM, a
 * remote display) that costs 100–300 ms a frame, where its cairo renderer
 * redraws only what changed (10–40 ms). The viewer's GtkGLArea renders with
 * GL either way. GSK_RENDERER set by the user is left alone; the choice is
 * made before the first window exists (GTK reads the variable once). */
static void
choose_renderer (void)
{
  g_autoptr(GdkGLContext) context = NULL;
  const char *renderer;
  gboolean software;

  if (g_getenv ("GSK_RENDERER") != NULL)
    return;
  context = gdk_display_create_gl_context (gdk_display_get_default (), NULL);
  if (context == NULL || !gdk_gl_context_realize (context, NULL))
    return;
  gdk_gl_context_make_current (context);
  renderer = (const char *) glGetString (GL_RENDERER);
  software = renderer && (strstr (renderer, "llvmpipe") || strstr (renderer, "softpipe")
                          || strstr (renderer, "Software Rasterizer") || strstr (renderer, "SWR"));
  gdk_gl_context_clear_current ();
  if (software)
    {
      g_info ("GL renderer %s is a software rasteriser: the window is drawn with GTK's cairo renderer", renderer);
      g_setenv ("GSK_RENDERER", "cairo", TRUE);
    }
}

static void
startup (GApplication *application, gpointer data)
{
  static const GActionEntry entries[] = { { "about", about }, { "quit", quit } };
  static const struct { const char *action; const char *accels[3]; } accels[] = {
    { "app.quit", { "<Control>q", NULL } },
    { "win.open", { "<Control>o", NULL } },
    { "win.save", { "<Control>s", NULL } },
    { "win.save-as", { "<Control><Shift>s", NULL } },
    { "win.export", { "<Control>e", NULL } },
    { "win.show-help-overlay", { "F1", "<Control>question", NULL } },
  };
  g_autoptr(GtkCssProvider) css = gtk_css_provider_new ();
  guint i;

  choose_renderer ();
  g_action_map_add_action_entries (G_ACTION_MAP (application), entries, G_N_ELEMENTS (entries), application);
  for (i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (application), accels[i].action, accels[i].accels);
  gtk_css_provider_load_from_resource (css, "/io/github/airyoptics/Airy/ui/airy-style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
}

/* Where the translations are: AIRY_LOCALEDIR (the tests), the build's po/
 * when the program runs from a Meson build folder (./dev.sh run: app/airy
 * beside meson-private/), else the installed LOCALEDIR. */
static char *
locale_dir (void)
{
  const char *env = g_getenv ("AIRY_LOCALEDIR");
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = exe ? g_path_get_dirname (exe) : NULL;
  g_autofree char *marker = dir ? g_build_filename (dir, "..", "meson-private", NULL) : NULL;

  if (env && *env)
    return g_strdup (env);
  if (marker && g_file_test (marker, G_FILE_TEST_IS_DIR))
    return g_build_filename (dir, "..", "po", NULL);
  return g_strdup (LOCALEDIR);
}

/* LANGUAGE=de alone, in a session whose locale is C (a container, a
 * minimal system, Xvfb): gettext ignores LANGUAGE in the C locale, so take
 * C.UTF-8, which honours it and keeps C's formats. Through LANG, before
 * any thread, so that GLib's own messages follow too. */
static void
set_locale (void)
{
  const char *language = g_getenv ("LANGUAGE");
  const char *l = setlocale (LC_ALL, "");

  if (language && *language && (l == NULL || g_str_equal (l, "C") || g_str_equal (l, "POSIX"))
      && !g_getenv ("LC_ALL") && !g_getenv ("LC_MESSAGES"))
    {
      g_setenv ("LANG", "C.UTF-8", TRUE);
      setlocale (LC_ALL, "");
    }
}

int
main (int argc, char **argv)
{
  g_autoptr(GtkApplication) app = NULL;
  GOptionEntry entries[] = {
    { "view", 0, 0, G_OPTION_ARG_FILENAME, &options.view_file, N_("Show a TIFF or PNG stack in the viewer"), N_("FILE") },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &options.preset, N_("Start from a preset (default: widefield)"), N_("NAME") },
    { "bench-ui", 0, 0, G_OPTION_ARG_INT, &options.bench_ui,
      N_("Time N edits of the NA from the edit to the first frame of its result, print the figures and quit"), N_("N") },
    { "bench-size", 0, 0, G_OPTION_ARG_INT, &options.bench_size,
      N_("With --bench-ui: an N × N grid over the widefield preset's pupil field"), N_("N") },
    { NULL }
  };
  g_autofree char *locales = NULL;
  int status;

  set_locale ();
  locales = locale_dir ();
  bindtextdomain (GETTEXT_PACKAGE, locales);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  airy_init ();

  app = gtk_application_new (AIRY_APP_ID, G_APPLICATION_NON_UNIQUE | G_APPLICATION_HANDLES_OPEN);
  g_application_add_main_option_entries (G_APPLICATION (app), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (app), _("[FILE…]"));
  g_signal_connect (app, "startup", G_CALLBACK (startup), NULL);
  g_signal_connect (app, "activate", G_CALLBACK (activate), NULL);
  g_signal_connect (app, "open", G_CALLBACK (airy_window_open_files), NULL);
  status = g_application_run (G_APPLICATION (app), argc, argv);
  if (status == 0 && options.bench_ui >= 0)
    status = airy_bench_ui_status ();
  g_free (options.view_file);
  g_free (options.preset);
  return status;
}
