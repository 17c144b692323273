/* The desktop app as a user drives it, under Xvfb: the ☰ menu, edits by
 * Tab, Enter and leaving a field, the panel's state kept, undo and redo, a
 * fit applied and undone (the rest of the app: test-app.c). */
#include "config.h"

#include <math.h>
#include <unistd.h>
#include <string.h>
#include <gtk/gtk.h>
#include <glib/gstdio.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-view-math.h"
#include "airy-test-gtk.h"
#include "airy-test-app.h"
#include "airy-fit-dialog.h"
#include "airy-atomic-private.h"

static gboolean have_display;
static GtkApplication *app;
static char *tmpdir;

static AiryWindow *
new_window (const char *preset)
{
  return test_new_window (app, preset);
}

/* ---- the ☰ menu ---- */

static GtkWidget *
menu_button_of (AiryWindow *window)
{
  GtkWidget *titlebar = gtk_window_get_titlebar (GTK_WINDOW (window));
  GtkWidget *button = test_find_widget (titlebar, GTK_TYPE_MENU_BUTTON, NULL);

  g_assert_nonnull (button);
  return button;
}

/* every action the menu's model names, in order */
static void
collect_actions (GMenuModel *model, GPtrArray *out)
{
  int i, n = g_menu_model_get_n_items (model);

  for (i = 0; i < n; i++)
    {
      g_autoptr(GMenuLinkIter) links = g_menu_model_iterate_item_links (model, i);
      char *action = NULL;
      GMenuModel *link;

      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &action))
        g_ptr_array_add (out, action);
      while (g_menu_link_iter_get_next (links, NULL, &link))
        {
          collect_actions (link, out);
          g_object_unref (link);
        }
    }
}

static gboolean
menu_has (AiryWindow *window, const char *action)
{
  g_autoptr(GPtrArray) actions = g_ptr_array_new_with_free_func (g_free);
  GMenuModel *model = gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (menu_button_of (window)));
  guint i;

  collect_actions (model, actions);
  for (i = 0; i < actions->len; i++)
    if (g_str_equal (g_ptr_array_index (actions, i), action))
      return TRUE;
  return FALSE;
}

/* the item of the open menu that shows text (a GtkModelButton) */
static GtkWidget *
find_menu_item (GtkWidget *root, const char *text)
{
  GtkWidget *child, *found;

  if (g_object_class_find_property (G_OBJECT_GET_CLASS (root), "text") && !GTK_IS_LABEL (root)
      && !GTK_IS_EDITABLE (root))
    {
      g_autofree char *t = NULL;

      g_object_get (root, "text", &t, NULL);
      if (g_strcmp0 (t, text) == 0)
        return root;
    }
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = find_menu_item (child, text)) != NULL)
      return found;
  return NULL;
}

/* the file chooser that an action opened (GtkFileChooserNative falls back
 * to a dialog without a portal): answers it with `path` */
static void
answer_chooser (const char *title, const char *path)
{
  GtkWidget *dialog = NULL;
  guint tries;

  for (tries = 0; dialog == NULL && tries < 100; tries++)
    {
      GListModel *tops = gtk_window_get_toplevels ();
      guint i;

      spin_loop (20);
      for (i = 0; i < g_list_model_get_n_items (tops); i++)
        {
          g_autoptr(GtkWidget) w = g_list_model_get_item (tops, i);

          if (GTK_IS_FILE_CHOOSER (w) && gtk_widget_get_visible (w))
            dialog = w;
        }
    }
  g_assert_nonnull (dialog);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (dialog)), ==, title);
  {
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autoptr(GFile) folder = g_file_get_parent (file);
    g_autofree char *base = g_path_get_basename (path);
    g_autoptr(GError) error = NULL;

    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    if (gtk_file_chooser_get_action (GTK_FILE_CHOOSER (dialog)) == GTK_FILE_CHOOSER_ACTION_SAVE)
      {
        g_assert_true (gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, &error));
        gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), base);
      }
    else
      g_assert_true (gtk_file_chooser_set_file (GTK_FILE_CHOOSER (dialog), file, &error));
    g_assert_no_error (error);
    spin_loop (100);
    g_object_ref (dialog);
    gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
    G_GNUC_END_IGNORE_DEPRECATIONS
    /* a save chooser may check the name asynchronously before it answers
     * (up to 30 s: seconds on a loaded machine) */
    for (tries = 0; tries < 1500 && gtk_widget_get_visible (dialog); tries++)
      spin_loop (20);
    g_assert_false (gtk_widget_get_visible (dialog));
    g_object_unref (dialog);
  }
}

static void
wait_files (AiryWindow *window)
{
  guint tries;

  spin_loop (50);
  for (tries = 0; tries < 500 && airy_window_get_pending_files (window) > 0; tries++)
    spin_loop (20);
  g_assert_cmpuint (airy_window_get_pending_files (window), ==, 0);
}

/* opens the ☰ menu and clicks the item of that text, which must be sensitive */
static void
click_menu (AiryWindow *window, const char *text)
{
  GtkWidget *button = menu_button_of (window);
  GtkPopover *popover;
  GtkWidget *item;

  gtk_menu_button_popup (GTK_MENU_BUTTON (button));
  spin_loop (100);
  popover = gtk_menu_button_get_popover (GTK_MENU_BUTTON (button));
  g_assert_nonnull (popover);
  item = find_menu_item (GTK_WIDGET (popover), text);
  g_assert_nonnull (item);
  g_assert_true (gtk_widget_is_sensitive (item));
  g_signal_emit_by_name (item, "clicked");
  spin_loop (50);
  gtk_menu_button_popdown (GTK_MENU_BUTTON (button));
}

static void
test_menu_actions (void)
{
  g_autofree char *png = g_build_filename (tmpdir, "menu-view.png", NULL);
  g_autofree char *tif = g_build_filename (tmpdir, "menu-stack.tif", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) back = NULL;
  static const char *const exports[] = { "viewer.export-png", "viewer.export-png-2x", "viewer.export-raw",
                                         "viewer.export-tiff", "viewer.export-section", "viewer.open",
                                         "viewer.export-sections-png", "viewer.export-line-csv",
                                         "viewer.export-axial-csv" };
  AiryWindow *window, *view;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  /* every viewer item of the menu is reachable from the menu button */
  for (i = 0; i < G_N_ELEMENTS (exports); i++)
    {
      g_assert_true (menu_has (window, exports[i]));
      g_assert_true (gtk_widget_activate_action (menu_button_of (window), exports[i], NULL));
      /* close the chooser that opened */
      {
        GListModel *tops = gtk_window_get_toplevels ();
        guint k;

        spin_loop (50);
        for (k = g_list_model_get_n_items (tops); k-- > 0;)
          {
            g_autoptr(GtkWidget) w = g_list_model_get_item (tops, k);
            if (GTK_IS_FILE_CHOOSER (w) && gtk_widget_get_visible (w))
              {
                G_GNUC_BEGIN_IGNORE_DEPRECATIONS
                gtk_dialog_response (GTK_DIALOG (w), GTK_RESPONSE_CANCEL);
                G_GNUC_END_IGNORE_DEPRECATIONS
              }
          }
        spin_loop (50);
      }
    }
  /* the comparison and the voxel size are in the menu too */
  g_assert_true (menu_has (window, "viewer.properties"));
  g_assert_true (menu_has (window, "viewer.pin"));
  g_assert_true (gtk_widget_activate_action (menu_button_of (window), "viewer.pin", NULL));
  g_assert_true (menu_has (window, "win.save"));
  g_assert_true (menu_has (window, "win.copy-command"));
  /* the menu's export writes the file the chooser names */
  click_menu (window, "Export View as PNG…");
  answer_chooser ("Export View as PNG", png);
  wait_files (window);
  g_assert_true (g_file_test (png, G_FILE_TEST_EXISTS));
  click_menu (window, "Export Stack (TIFF)…");
  answer_chooser ("Export Stack (TIFF)", tif);
  wait_files (window);
  back = airy_tiff_read (tif, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->depth, ==, 64);

  /* the viewer alone: no system items, Ctrl+O (win.open) opens a stack */
  view = new_window (NULL);
  g_assert_true (airy_window_view_file (view, tif, &error));
  wait_files (view);
  g_assert_false (menu_has (view, "win.save"));
  g_assert_false (menu_has (view, "win.new"));
  g_assert_false (menu_has (view, "win.copy-command"));
  g_assert_true (menu_has (view, "viewer.export-png"));
  /* the window's actions are its class's (GTK's convention), not entries of
   * its action map; those that need a system are off in the viewer alone */
  {
    static const char *const names[] = { "open", "open-recent", "save", "save-as", "new", "export", "export-tiff",
                                         "copy-command", "choose-folder", "cancel", "undo", "redo" };
    GtkWidgetClass *klass = GTK_WIDGET_GET_CLASS (view);
    guint i, k, found = 0;
    const char *name;
    GType owner;
    const GVariantType *type;
    const char *state;
    gboolean enabled;

    for (i = 0; i < G_N_ELEMENTS (names); i++)
      {
        g_autofree char *full = g_strconcat ("win.", names[i], NULL);

        g_assert_false (g_action_group_has_action (G_ACTION_GROUP (view), names[i]));
        for (k = 0; gtk_widget_class_query_action (klass, k, &owner, &name, &type, &state); k++)
          if (g_str_equal (name, full))
            {
              g_assert_true (owner == G_OBJECT_TYPE (view));
              found++;
            }
      }
    g_assert_cmpuint (found, ==, G_N_ELEMENTS (names));
    enabled = window_action_enabled (view, "win.save");
    g_assert_false (enabled);
    g_assert_true (window_action_enabled (view, "win.open"));
    /* the dialogs' actions, installed on the class, wait for a bench */
    g_assert_false (window_action_enabled (view, "win.fit-psf"));
    g_assert_false (window_action_enabled (view, "win.optimize"));
    g_assert_true (window_action_enabled (window, "win.fit-bead"));
    g_assert_true (window_action_enabled (window, "win.save"));
    /* the bench panel and the viewer are the window template's children */
    g_assert_true (gtk_widget_get_template_child (GTK_WIDGET (view), AIRY_TYPE_WINDOW, "viewer")
                   == (GObject *) airy_window_get_viewer (view));
    g_assert_true (gtk_widget_get_template_child (GTK_WIDGET (view), AIRY_TYPE_WINDOW, "panel")
                   == (GObject *) airy_window_get_panel (view));
  }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (view), "win.open", NULL));
  answer_chooser ("Open Stack", png);
  wait_files (view);
  /* the PNG replaced the 64-plane stack */
  g_assert_cmpuint (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (view)))->depth, ==, 1);
  click_menu (view, "Export Raw Slice (16-bit PNG)…");
  g_unlink (png);
  answer_chooser ("Export Raw Slice (16-bit PNG)", png);
  wait_files (view);
  g_assert_true (g_file_test (png, G_FILE_TEST_EXISTS));
  close_window (view);
  close_window (window);
  g_unlink (png);
  g_unlink (tif);
}

/* ---- edits: Tab, Enter, leaving the field, typing ---- */

static GtkWidget *
editor_of (AiryWindow *window, const char *path)
{
  GtkWidget *w = airy_bench_panel_get_editor (airy_window_get_panel (window), path);

  g_assert_nonnull (w);
  return w;
}

/* focus in the field, as a click puts it there */
static void
focus_field (GtkWidget *w)
{
  guint tries;

  for (tries = 0; tries < 100 && !(gtk_widget_get_state_flags (w) & GTK_STATE_FLAG_FOCUS_WITHIN); tries++)
    {
      gtk_widget_grab_focus (w);
      spin_loop (20);
    }
  g_assert_true (gtk_widget_get_state_flags (w) & GTK_STATE_FLAG_FOCUS_WITHIN);
}

typedef enum { LEAVE_TAB, LEAVE_ENTER } Leave;

/* types text into the field of path and leaves it by Tab (the focus moves
 * on: focus-out) or presses Enter */
static void
type_field (AiryWindow *window, const char *path, const char *text, Leave how)
{
  GtkWidget *w = editor_of (window, path);

  focus_field (w);
  gtk_editable_set_text (GTK_EDITABLE (w), text);
  if (how == LEAVE_ENTER)
    {
      /* what Enter does in each kind of field */
      if (GTK_IS_SPIN_BUTTON (w))
        gtk_spin_button_update (GTK_SPIN_BUTTON (w));
      else
        g_signal_emit_by_name (w, "activate");
    }
  else
    {
      gtk_widget_child_focus (GTK_WIDGET (gtk_widget_get_root (w)), GTK_DIR_TAB_FORWARD);
      spin_loop (20);
      g_assert_false (gtk_widget_get_state_flags (w) & GTK_STATE_FLAG_FOCUS_WITHIN);
    }
  spin_loop (20);
  wait_idle (window);
}

static gboolean
marked (AiryWindow *window, const char *path)
{
  return gtk_widget_has_css_class (editor_of (window, path), "error");
}

static void
test_edits_commit (void)
{
  static const char *const fields[] = { "grid.shape[0]", "grid.shape[1]", "z.count", "spectrum.wavelengths",
                                        "grid.spacing" };
  AiryWindow *window;
  AirySystem *system;
  guint shown, started, h, w, nz, i;
  const char *error;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  system = airy_window_get_system (window);
  shown = airy_window_get_shown (window);
  started = airy_worker_get_started (airy_window_get_worker (window));

  /* a wavelength of -0.5, then Tab: an error at that field, no run */
  type_field (window, "spectrum.wavelengths", "-0.5", LEAVE_TAB);
  g_assert_cmpstr (airy_bench_panel_get_error (airy_window_get_panel (window)), ==,
                   "spectrum.wavelengths[0]: must be in [0.01, 100] µm, got -0.5");
  g_assert_true (marked (window, "spectrum.wavelengths"));
  g_assert_cmpstr (airy_window_get_status (window), ==, "not computed: fix the marked field");
  g_assert_cmpuint (airy_worker_get_started (airy_window_get_worker (window)), ==, started);
  g_assert_cmpfloat (airy_system_get_spectrum (system)->wavelengths[0], ==, 0.532);
  /* a good one, by Enter: computed, the mark gone */
  type_field (window, "spectrum.wavelengths", "0.6", LEAVE_ENTER);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_false (marked (window, "spectrum.wavelengths"));
  g_assert_cmpfloat (airy_system_get_spectrum (system)->wavelengths[0], ==, 0.6);
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 1);
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 512² · "));
  /* and by Tab */
  type_field (window, "spectrum.wavelengths", "0.532", LEAVE_TAB);
  g_assert_cmpfloat (airy_system_get_spectrum (system)->wavelengths[0], ==, 0.532);
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 2);

  /* too many planes for the memory: marked at z.count, not at Height */
  type_field (window, "z.count", "100000", LEAVE_TAB);
  error = airy_bench_panel_get_error (airy_window_get_panel (window));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error, "reduce grid.shape or z.count"));
  for (i = 0; i < G_N_ELEMENTS (fields); i++)
    g_assert_true (marked (window, fields[i]) == g_str_equal (fields[i], "z.count"));
  g_assert_cmpstr (airy_window_get_status (window), ==, "not computed: fix the marked field");
  type_field (window, "z.count", "64", LEAVE_ENTER);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 512² · "));

  /* Height 0 and 100000: errors at Height, the typed number stays, the
   * header does not claim a run; the system keeps 512 */
  type_field (window, "grid.shape[0]", "0", LEAVE_TAB);
  g_assert_cmpstr (airy_bench_panel_get_error (airy_window_get_panel (window)), ==,
                   "grid.shape[0]: must be in [1, 65536], got 0");
  g_assert_true (marked (window, "grid.shape[0]"));
  g_assert_false (marked (window, "grid.shape[1]"));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (editor_of (window, "grid.shape[0]"))), ==, "0");
  g_assert_cmpstr (airy_window_get_status (window), ==, "not computed: fix the marked field");
  type_field (window, "grid.shape[0]", "100000", LEAVE_ENTER);
  g_assert_cmpstr (airy_bench_panel_get_error (airy_window_get_panel (window)), ==,
                   "grid.shape[0]: must be in [1, 65536], got 100000");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (editor_of (window, "grid.shape[0]"))), ==, "100000");
  airy_system_get_shape (system, &h, &w);
  g_assert_cmpuint (h, ==, 512);
  /* the same value as before, typed again: the mark goes, nothing to run */
  shown = airy_window_get_shown (window);
  type_field (window, "grid.shape[0]", "512", LEAVE_TAB);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_false (marked (window, "grid.shape[0]"));
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown);
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 512² · "));
  /* a shape that is not square: the header says what ran */
  type_field (window, "grid.shape[0]", "256", LEAVE_TAB);
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 256 × 512 · "));

  /* typing into a spin button computes after a pause, the focus and the
   * text staying in the field */
  shown = airy_window_get_shown (window);
  focus_field (editor_of (window, "z.count"));
  gtk_editable_set_text (GTK_EDITABLE (editor_of (window, "z.count")), "9");
  spin_loop (700);
  wait_idle (window);
  airy_system_get_z (system, &nz);
  g_assert_cmpuint (nz, ==, 9);
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 1);
  g_assert_cmpuint (airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)))->depth, ==, 9);
  g_assert_true (gtk_widget_get_state_flags (editor_of (window, "z.count")) & GTK_STATE_FLAG_FOCUS_WITHIN);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (editor_of (window, "z.count"))), ==, "9");
  /* the arrows step from the typed number */
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (editor_of (window, "z.count"))), ==, 9);
  /* leaving it then runs nothing more */
  type_field (window, "z.count", "9", LEAVE_TAB);
  g_assert_cmpuint (airy_window_get_shown (window), ==, shown + 1);
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "9 planes 256 × 512 · "));
  close_window (window);
}

/* ---- the panel keeps its state ---- */

static GtkAdjustment *
panel_scroll (AiryWindow *window)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (airy_window_get_panel (window)), GTK_TYPE_SCROLLED_WINDOW);

  g_assert_nonnull (scroller);
  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
}

/* the mouse wheel, one notch down, over widget (through its capture-phase
 * scroll controller, where a wheel event reaches it first) */
static gboolean
wheel_over (GtkWidget *widget)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);
  guint i;

  for (i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GtkEventController) c = g_list_model_get_item (controllers, i);
      gboolean handled = FALSE;

      if (GTK_IS_EVENT_CONTROLLER_SCROLL (c) && gtk_event_controller_get_propagation_phase (c) == GTK_PHASE_CAPTURE)
        {
          g_signal_emit_by_name (c, "scroll", 0.0, 1.0, &handled);
          return handled;
        }
    }
  return FALSE;
}

static void
test_panel_keeps_state (void)
{
  AiryWindow *window;
  AiryBenchPanel *panel;
  GtkAdjustment *adj;
  GtkWidget *add, *mode;
  AiryElement *mask;
  double where;
  gsize n = 0;
  guint nz;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  panel = airy_window_get_panel (window);
  adj = panel_scroll (window);
  mask = g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 1);
  gtk_expander_set_expanded (GTK_EXPANDER (editor_of (window, "elements[1]")), TRUE);
  spin_loop (100);
  g_assert_cmpfloat (gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj), >, 100);
  where = gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj) - 20;
  gtk_adjustment_set_value (adj, where);
  spin_loop (50);

  /* a Zernike term: the row stays open, the panel where it was */
  add = test_find_widget (GTK_WIDGET (panel), GTK_TYPE_BUTTON, "Add term");
  g_assert_nonnull (add);
  g_signal_emit_by_name (add, "clicked");
  spin_loop (200);
  wait_idle (window);
  airy_element_get_doubles (mask, "zernike-indices", &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_true (gtk_expander_get_expanded (GTK_EXPANDER (editor_of (window, "elements[1]"))));
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (adj) - where), <=, 1.0);

  /* a new element rebuilds the rows: the same */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (panel), "bench.add", "s", "circular-pupil"));
  spin_loop (600);
  wait_idle (window);
  g_assert_cmpuint (airy_system_get_elements (airy_window_get_system (window))->len, ==, 4);
  g_assert_true (g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 1) == mask);
  g_assert_true (gtk_expander_get_expanded (GTK_EXPANDER (editor_of (window, "elements[1]"))));
  g_assert_false (gtk_expander_get_expanded (GTK_EXPANDER (editor_of (window, "elements[2]"))));
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (adj) - where), <=, 1.0);

  /* the wheel over a field without the focus scrolls the panel, it does
   * not change the field: 64 planes stay 64 */
  gtk_adjustment_set_value (adj, 0);
  spin_loop (50);
  g_assert_true (wheel_over (editor_of (window, "z.count")));
  spin_loop (50);
  airy_system_get_z (airy_window_get_system (window), &nz);
  g_assert_cmpuint (nz, ==, 64);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), >, 10);
  /* focused, the field takes the wheel */
  focus_field (editor_of (window, "z.count"));
  g_assert_false (wheel_over (editor_of (window, "z.count")));

  /* to the microscope and back: the planes stay 64 */
  mode = editor_of (window, "mode");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (mode), 1);
  spin_loop (100);
  wait_idle (window);
  g_assert_true (airy_system_is_microscope (airy_window_get_system (window)));
  airy_system_get_z (airy_window_get_system (window), &nz);
  g_assert_cmpuint (nz, ==, 64);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (editor_of (window, "z.count"))), ==, "64");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (editor_of (window, "mode")), 0);
  spin_loop (100);
  wait_idle (window);
  airy_system_get_z (airy_window_get_system (window), &nz);
  g_assert_cmpuint (nz, ==, 64);
  close_window (window);
}

/* ---- undo ---- */

static char *
system_json (AiryWindow *window)
{
  return airy_system_to_json (airy_window_get_system (window));
}

/* the shown result is the system's */
static void
assert_shown_follows (AiryWindow *window)
{
  AiryStack *s = airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
  guint nz;

  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));
  airy_system_get_z (airy_window_get_system (window), &nz);
  g_assert_cmpuint (s->depth, ==, nz);
}

static void
press (AiryWindow *window, guint keyval, GdkModifierType mods)
{
  const char *action = shortcut_action (window, keyval, mods);

  g_assert_nonnull (action);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), action, NULL));
  spin_loop (20);
  wait_idle (window);
}

static void
test_undo_redo (void)
{
  AiryWindow *window;
  char *states[5];
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = new_window ("widefield");
  g_assert_cmpstr (shortcut_action (window, GDK_KEY_z, GDK_CONTROL_MASK), ==, "win.undo");
  g_assert_cmpstr (shortcut_action (window, GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK), ==, "win.redo");
  g_assert_false (window_action_enabled (window, "win.undo"));
  g_assert_true (menu_has (window, "win.undo"));
  states[0] = system_json (window);
  /* four edits: a field, another field, an element, the same field three
   * times in a row (one step) */
  spin_set (window, "elements[0].na", 0.6);
  wait_idle (window);
  states[1] = system_json (window);
  spin_set (window, "z.count", 9);
  wait_idle (window);
  states[2] = system_json (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (airy_window_get_panel (window)), "bench.add", "s",
                                             "circular-pupil"));
  spin_loop (50);
  wait_idle (window);
  states[3] = system_json (window);
  g_assert_cmpuint (airy_system_get_elements (airy_window_get_system (window))->len, ==, 4);
  for (i = 0; i < 3; i++)
    {
      spin_set (window, "elements[0].na", 0.5 - 0.05 * i);
      wait_idle (window);
    }
  states[4] = system_json (window);
  g_assert_true (airy_window_get_dirty (window));

  /* Ctrl+Z back to each state, exactly, the shown result following */
  for (i = 4; i-- > 0;)
    {
      g_assert_true (window_action_enabled (window, "win.undo"));
      press (window, GDK_KEY_z, GDK_CONTROL_MASK);
      {
        g_autofree char *now = system_json (window);
        g_assert_cmpstr (now, ==, states[i]);
      }
      assert_shown_follows (window);
    }
  g_assert_false (window_action_enabled (window, "win.undo"));
  g_assert_false (airy_window_get_dirty (window));
  /* the panel's editors are the restored system's */
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (editor_of (window, "elements[0].na"))), ==, 0.8);
  g_assert_cmpuint (airy_system_get_elements (airy_window_get_system (window))->len, ==, 3);

  /* Ctrl+Shift+Z forward again */
  for (i = 1; i <= 4; i++)
    {
      press (window, GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK);
      {
        g_autofree char *now = system_json (window);
        g_assert_cmpstr (now, ==, states[i]);
      }
      assert_shown_follows (window);
    }
  g_assert_false (window_action_enabled (window, "win.redo"));
  g_assert_true (airy_window_get_dirty (window));

  /* an edit after an undo: the redo steps are gone */
  press (window, GDK_KEY_z, GDK_CONTROL_MASK);
  spin_set (window, "z.count", 5);
  wait_idle (window);
  g_assert_false (window_action_enabled (window, "win.redo"));
  press (window, GDK_KEY_z, GDK_CONTROL_MASK);
  {
    g_autofree char *now = system_json (window);
    g_assert_cmpstr (now, ==, states[3]);
  }
  for (i = 0; i < 5; i++)
    g_free (states[i]);
  close_window (window);
}

/* the fit dialog over window, or NULL */
static AiryFitDialog *
fit_dialog_of (AiryWindow *window)
{
  GtkWidget *dialog = airy_fit_dialog_find (GTK_WINDOW (window));

  return dialog ? AIRY_FIT_DIALOG (dialog) : NULL;
}

/* "Apply to System" of the fit dialog is an edit of the bench: the file
 * name stays, the window is modified, Ctrl+Z brings the system before the
 * fit back; "Fit Bead at Cursor…" and "Fit Measured PSF…" reuse the open
 * dialog */
static void
test_fit_apply_undo (void)
{
  static const char *const json =
    "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.1},"
    " \"spectrum\": {\"wavelengths\": [0.532], \"weights\": [1.0]},"
    " \"z\": {\"start\": -2.0, \"stop\": 2.0, \"count\": 12},"
    " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0},"
    " \"elements\": [], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1.0}}";
  g_autofree char *dir = g_dir_make_tmp ("airy-app-fit-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "system.json", NULL);
  g_autofree char *beads_path = g_build_filename (dir, "beads.tif", NULL);
  g_autofree char *before = NULL, *after = NULL;
  g_autoptr(GError) error = NULL;
  AiryWindow *window;
  AiryFitDialog *dialog;
  AiryStack *psf;
  gsize n, q;
  double peak = 0;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_true (g_file_set_contents (path, json, -1, NULL));
  window = new_window (NULL);
  g_assert_true (airy_window_open_file (window, path, &error));
  g_assert_no_error (error);
  wait_idle (window);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "system.json — Airy");
  before = system_json (window);
  /* beads of the system, astigmatic, from its own PSF with a mask added */
  {
    g_autofree char *truth_json = g_strdup_printf ("%.*s{\"type\": \"phase-mask\", \"source\": \"zernike\", "
                                                   "\"zernike-indices\": [5], \"zernike-coefficients\": [0.08]}%s",
                                                   (int) (strstr (json, "[]") - json + 1), json,
                                                   strstr (json, "[]") + 1);
    g_autoptr(AirySystem) truth = airy_system_new_from_data (truth_json, -1, dir, NULL, &error);
    AiryRunOptions options = { .keep_psf = TRUE, .threads = 2 };
    g_autoptr(AiryResult) run = NULL;

    g_assert_no_error (error);
    run = airy_run (truth, &options, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    psf = airy_stack_copy (run->psf);
  }
  n = (gsize) psf->depth * psf->height * psf->width;
  for (q = 0; q < n; q++)
    peak = MAX (peak, psf->data[q]);
  for (q = 0; q < n; q++)
    psf->data[q] = (float) (1e4 * psf->data[q] / peak + 10.0);
  g_assert_true (airy_tiff_write (beads_path, psf, &error));
  g_assert_no_error (error);
  airy_stack_free (psf);

  g_assert_true (window_action_enabled (window, "win.fit-psf"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-psf", NULL));
  dialog = fit_dialog_of (window);
  g_assert_nonnull (dialog);
  airy_fit_dialog_set_file (dialog, beads_path);
  airy_fit_dialog_start (dialog);
  while (airy_fit_dialog_is_running (dialog))
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (airy_fit_dialog_get_result (dialog));
  g_assert_false (window_action_enabled (window, "win.undo"));
  airy_fit_dialog_apply (dialog);
  wait_idle (window);
  after = system_json (window);
  g_assert_nonnull (strstr (after, "phase-mask"));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "• system.json — Airy");
  g_assert_true (airy_window_get_dirty (window));
  g_assert_true (window_action_enabled (window, "win.undo"));
  /* computed again: the shown result is the fitted system's */
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));

  /* Ctrl+Z: the system before the fit, not modified; Ctrl+Shift+Z: the fit's again */
  press (window, GDK_KEY_z, GDK_CONTROL_MASK);
  {
    g_autofree char *now = system_json (window);
    g_assert_cmpstr (now, ==, before);
  }
  g_assert_false (airy_window_get_dirty (window));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "system.json — Airy");
  press (window, GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK);
  {
    g_autofree char *now = system_json (window);
    g_assert_cmpstr (now, ==, after);
  }

  /* Fit Bead at Cursor…: the open dialog, not a second one */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-bead", NULL));
  g_assert_true (fit_dialog_of (window) == dialog);
  {
    g_autoptr(GList) list = gtk_window_list_toplevels ();
    GList *l;
    guint count = 0;

    for (l = list; l; l = l->next)
      count += AIRY_IS_FIT_DIALOG (l->data) && gtk_widget_get_visible (l->data);
    g_assert_cmpuint (count, ==, 1);
  }
  airy_fit_dialog_cancel (dialog);
  while (airy_fit_dialog_is_running (dialog))
    g_main_context_iteration (NULL, TRUE);
  /* Fit Measured PSF… again: the same dialog to the front */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.fit-psf", NULL));
  g_assert_true (fit_dialog_of (window) == dialog);
  {
    g_autoptr(GList) list = gtk_window_list_toplevels ();
    GList *l;
    guint count = 0;

    for (l = list; l; l = l->next)
      count += AIRY_IS_FIT_DIALOG (l->data) && gtk_widget_get_visible (l->data);
    g_assert_cmpuint (count, ==, 1);
  }
  /* Escape closes it */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "window.close", NULL));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_null (fit_dialog_of (window));
  close_window (window);
  g_unlink (beads_path);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  int status;

  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestEdits", G_APPLICATION_HANDLES_OPEN,
                       &have_display);
  tmpdir = g_dir_make_tmp ("airy-app-XXXXXX", NULL);
  /* the program's own "open" handler, as in airy.c */
  g_signal_connect (app, "open", G_CALLBACK (airy_window_open_files), NULL);

  g_test_add_func ("/app/menu-actions", test_menu_actions);
  g_test_add_func ("/app/edits-commit", test_edits_commit);
  g_test_add_func ("/app/panel-keeps-state", test_panel_keeps_state);
  g_test_add_func ("/app/undo-redo", test_undo_redo);
  g_test_add_func ("/app/fit-apply-undo", test_fit_apply_undo);
  status = g_test_run ();
  g_rmdir (tmpdir);
  g_object_unref (app);
  return status;
}
