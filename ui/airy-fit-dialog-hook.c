#define G_LOG_DOMAIN "airy-fit-dialog"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-fit-dialog-private.h"
#include "airy-stack-viewer.h"

/* The app's hook of the fit dialog: the menu's "Fit Measured PSF…" and
 * "Fit Bead at Cursor…", one dialog per window, on the bench of that
 * window (its system as it is when Fit is pressed). */

/* ---- the app's hook ---- */

/* What the class installed: the apply function, called with the window as
 * its user data (a class's qdata, so each window class says its own). */
static GQuark
apply_quark (void)
{
  return g_quark_from_static_string ("airy-fit-apply");
}

AiryFitApplyFunc
_airy_ui_class_apply_func (GtkWidget *window)
{
  GType type;

  for (type = G_OBJECT_TYPE (window); type != 0; type = g_type_parent (type))
    {
      gpointer apply = g_type_get_qdata (type, apply_quark ());

      if (apply)
        return (AiryFitApplyFunc) apply;
    }
  return NULL;
}

void
_airy_ui_class_set_apply_func (GtkWidgetClass *widget_class, AiryFitApplyFunc apply)
{
  g_type_set_qdata (G_TYPE_FROM_CLASS (widget_class), apply_quark (), (gpointer) apply);
}

AiryBenchPanel *
_airy_ui_find_bench_panel (GtkWidget *widget)
{
  GtkWidget *child;
  AiryBenchPanel *found;

  if (AIRY_IS_BENCH_PANEL (widget))
    return AIRY_BENCH_PANEL (widget);
  for (child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    if ((found = _airy_ui_find_bench_panel (child)) != NULL)
      return found;
  return NULL;
}

AiryStackViewer *
_airy_ui_find_stack_viewer (GtkWidget *widget)
{
  GtkWidget *child;
  AiryStackViewer *found;

  if (AIRY_IS_STACK_VIEWER (widget))
    return AIRY_STACK_VIEWER (widget);
  for (child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    if ((found = _airy_ui_find_stack_viewer (child)) != NULL)
      return found;
  return NULL;
}

static void
on_stack_chosen (GtkNativeDialog *native, int response, gpointer data)
{
  AiryUiStackChosen chosen = (AiryUiStackChosen) g_object_get_data (G_OBJECT (native), "airy-chosen");

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (native));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;

      if (path)
        chosen (GTK_WINDOW (data), path);
    }
  g_object_unref (native);
}

void
_airy_ui_choose_tiff_stack (GtkWindow *dialog, const char *title, AiryUiStackChosen chosen)
{
  GtkFileChooserNative *native = gtk_file_chooser_native_new (title, dialog, GTK_FILE_CHOOSER_ACTION_OPEN,
                                                              _("_Open"), _("_Cancel"));
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("TIFF stacks"));
  gtk_file_filter_add_suffix (filter, "tif");
  gtk_file_filter_add_suffix (filter, "tiff");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), filter);
  g_object_set_data (G_OBJECT (native), "airy-chosen", (gpointer) chosen);
  g_signal_connect (native, "response", G_CALLBACK (on_stack_chosen), dialog);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
}

GtkWidget *
airy_fit_dialog_find (GtkWindow *window)
{
  g_autoptr(GList) list = gtk_window_list_toplevels ();
  GList *l;

  for (l = list; l; l = l->next)
    if (AIRY_IS_FIT_DIALOG (l->data) && gtk_widget_get_visible (l->data)
        && gtk_window_get_transient_for (l->data) == window)
      return l->data;
  return NULL;
}

/* The fit dialog of window for system (the bench's of now): the open one
 * reused, or a new one; presented. */
static GtkWidget *
dialog_for (GtkWidget *window, AirySystem *system)
{
  GtkWidget *dialog = airy_fit_dialog_find (GTK_WINDOW (window));

  if (dialog != NULL)
    {
      /* a fit running keeps its own copy */
      g_clear_object (&AIRY_FIT_DIALOG (dialog)->system);
      AIRY_FIT_DIALOG (dialog)->system = airy_system_copy (system);
    }
  else
    dialog = airy_fit_dialog_new (GTK_WINDOW (window), system);
  airy_fit_dialog_set_bench (AIRY_FIT_DIALOG (dialog), _airy_ui_find_bench_panel (window));
  airy_fit_dialog_set_apply_func (AIRY_FIT_DIALOG (dialog), _airy_ui_class_apply_func (window), window);
  gtk_window_present (GTK_WINDOW (dialog));
  return dialog;
}

/* "Fit Bead at Cursor…": the stack the viewer shows (a result or a file),
 * a window around its cursor, fitted at once */
static void
action_fit_bead (GtkWidget *window, const char *name, GVariant *parameter)
{
  AiryBenchPanel *panel = _airy_ui_find_bench_panel (window);
  AirySystem *system = panel ? airy_bench_panel_get_system (panel) : NULL;
  AiryStackViewer *viewer = _airy_ui_find_stack_viewer (window);
  AiryStackView *view = viewer ? airy_stack_viewer_get_view (viewer) : NULL;
  AiryResident *resident = view ? airy_stack_view_get_resident (view) : NULL;
  GtkWidget *dialog;
  guint x, y;

  if (system == NULL)
    return;
  /* an open fit dialog of this window is reused, with the bench's system of now */
  dialog = dialog_for (window, system);
  if (resident == NULL)
    {
      airy_fit_dialog_set_file (AIRY_FIT_DIALOG (dialog), NULL);
      airy_fit_dialog_set_message (AIRY_FIT_DIALOG (dialog),
                                   _("The viewer shows no stack: compute a result or open a bead stack, "
                                     "put the cursor on a bead, then fit it."));
      return;
    }
  airy_stack_view_get_cursor (view, &x, &y);
  airy_fit_dialog_set_resident (AIRY_FIT_DIALOG (dialog), resident, x, y, airy_stack_view_get_z (view));
  airy_fit_dialog_start (AIRY_FIT_DIALOG (dialog));
}

static void
action_fit_psf (GtkWidget *window, const char *name, GVariant *parameter)
{
  AiryBenchPanel *panel = _airy_ui_find_bench_panel (window);
  AirySystem *system = panel ? airy_bench_panel_get_system (panel) : NULL;

  if (system == NULL)
    return;
  /* one dialog per window: an open one comes to the front, with the bench's
   * system of now and its stack kept */
  dialog_for (window, system);
}

void
airy_fit_dialog_class_install_actions (GtkWidgetClass *widget_class, AiryFitApplyFunc apply)
{
  _airy_ui_class_set_apply_func (widget_class, apply);
  gtk_widget_class_install_action (widget_class, "win.fit-psf", NULL, action_fit_psf);
  gtk_widget_class_install_action (widget_class, "win.fit-bead", NULL, action_fit_bead);
}

void
airy_fit_dialog_append_menu (GMenu *menu)
{
  g_menu_append (menu, _("Fit _Measured PSF…"), "win.fit-psf");
  g_menu_append (menu, _("Fit _Bead at Cursor…"), "win.fit-bead");
}
