/* Helpers shared by the tests that drive the app's window (test-app,
 * test-app-speed): the main loop until the engine is idle, a pause, a
 * window on a preset. */
#pragma once

#include <gtk/gtk.h>

#include "airy.h"
#include "airy-window.h"

static inline gboolean
flag_timeout (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until the window's engine is idle (nothing pending or
 * running), then a little longer for the last signals. */
static inline void
wait_idle (AiryWindow *window)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (60, flag_timeout, &timed_out);

  while (!timed_out && airy_worker_is_busy (airy_window_get_worker (window)))
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  if (!timed_out)
    g_source_remove (id);
  g_assert_false (timed_out);
}

/* the main loop for ms milliseconds */
static inline void
spin_loop (guint ms)
{
  gboolean done = FALSE;

  g_timeout_add (ms, flag_timeout, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* A window of app on a preset (NULL: none), its first result in. */
static inline AiryWindow *
test_new_window (GtkApplication *app,
                 const char     *preset)
{
  AiryWindow *window = airy_window_new (app);

  airy_worker_set_debounce (airy_window_get_worker (window), 30);
  gtk_window_present (GTK_WINDOW (window));
  if (preset)
    g_assert_true (airy_window_load_preset (window, preset, NULL));
  wait_idle (window);
  return window;
}

/* A test program's start: GLib's tests, the engine, GTK when there is a
 * display (*have_display says), and a registered application of that id. */
static inline GtkApplication *
test_app_init (int               *argc,
               char            ***argv,
               const char        *id,
               GApplicationFlags  flags,
               gboolean          *have_display)
{
  GtkApplication *app;

  g_test_init (argc, argv, NULL);
  airy_init ();
  *have_display = gtk_init_check ();
  app = gtk_application_new (id, G_APPLICATION_NON_UNIQUE | flags);
  g_application_register (G_APPLICATION (app), NULL, NULL);
  return app;
}

/* a spin button of the bench set as its arrows would */
static inline void
spin_set (AiryWindow *window, const char *path, double value)
{
  GtkWidget *w = airy_bench_panel_get_editor (airy_window_get_panel (window), path);

  g_assert_nonnull (w);
  g_assert_true (GTK_IS_SPIN_BUTTON (w));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), value);
}

static inline void
close_window (AiryWindow *window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Whether the window's action (installed on its class: "win.undo") is
 * enabled, as a button of the window bound to it sees it. */
static inline gboolean
window_action_enabled (AiryWindow *window, const char *name)
{
  GtkWidget *probe = gtk_button_new ();
  GtkWidget *header = gtk_window_get_titlebar (GTK_WINDOW (window));
  gboolean enabled;

  gtk_actionable_set_action_name (GTK_ACTIONABLE (probe), name);
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header), probe);
  enabled = gtk_widget_get_sensitive (probe);
  gtk_header_bar_remove (GTK_HEADER_BAR (header), probe);
  return enabled;
}

/* the action the window's shortcut for a key names */
static inline const char *
shortcut_action (AiryWindow *window, guint keyval, GdkModifierType mods)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (window));
  guint i, k;

  for (i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GtkEventController) c = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (c))
        continue;
      for (k = 0; k < g_list_model_get_n_items (G_LIST_MODEL (c)); k++)
        {
          g_autoptr(GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), k);
          GtkShortcutTrigger *t = gtk_shortcut_get_trigger (sc);
          GtkShortcutAction *a = gtk_shortcut_get_action (sc);

          if (GTK_IS_KEYVAL_TRIGGER (t) && gtk_keyval_trigger_get_keyval (GTK_KEYVAL_TRIGGER (t)) == keyval
              && gtk_keyval_trigger_get_modifiers (GTK_KEYVAL_TRIGGER (t)) == mods && GTK_IS_NAMED_ACTION (a))
            return gtk_named_action_get_action_name (GTK_NAMED_ACTION (a));
        }
    }
  return NULL;
}
