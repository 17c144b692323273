#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define AIRY_TYPE_PARAM_EDITOR (airy_param_editor_get_type ())
G_DECLARE_FINAL_TYPE (AiryParamEditor, airy_param_editor, AIRY, PARAM_EDITOR, GtkWidget)

/* The editor of one parameter of an object (an element, the system, the
 * panel), built from its declaration (airy-param.h): a spin button for a
 * number (with a slider over one turn either way for a phase), a check
 * button, a drop-down of an enumeration's nicks, an entry (with a file
 * chooser for a file name) or, for an array, an entry of numbers separated
 * by commas that takes effect on Enter. It shows the object's value as it
 * changes and writes what a person enters back to the object, then emits
 * ::changed; a handler of ::commit (GValue) that returns TRUE writes the
 * value itself instead (and no ::changed follows).
 * A number typed outside the declared range is not clamped: the editor
 * keeps the value and emits ::invalid with the declaration's GError, whose
 * message names path ("grid.shape[0]: must be in [1, 65536], got 70000")
 * and which carries the range (airy_error_get_range). */
GtkWidget  *airy_param_editor_new         (GObject         *object,
                                           GParamSpec      *pspec,
                                           const char      *path);
GObject    *airy_param_editor_get_object  (AiryParamEditor *self);
GParamSpec *airy_param_editor_get_pspec   (AiryParamEditor *self);
const char *airy_param_editor_get_path    (AiryParamEditor *self);
/* The widget that takes the focus and the error mark (a spin button, an
 * entry, …): what the panel registers under path. */
GtkWidget  *airy_param_editor_get_control (AiryParamEditor *self);
/* A label for the editor's row: text, or the nick and unit ("Height (px)");
 * it shows and hides with the editor. */
GtkWidget  *airy_param_editor_new_label   (AiryParamEditor *self,
                                           const char      *text);
/* What the editor holds now, as a commit would write it (value is
 * initialised here): a spin button's value is in its range; an array's
 * entries are parsed and checked against theirs (FALSE with the message). */
gboolean    airy_param_editor_read        (AiryParamEditor *self,
                                           GValue          *value,
                                           GError         **error);

/* For the input handler of a spin button: TRUE when its text is a number
 * outside its range (which GTK would clamp to), and that number. */
gboolean    airy_spin_button_typed_outside (GtkSpinButton *spin,
                                            double        *number);

/* The mouse wheel over widget (a spin button, a slider) scrolls the panel
 * around it unless the widget has the focus: scrolling past a field does not
 * change its value. */
void        airy_wheel_scrolls_panel       (GtkWidget     *widget);

G_END_DECLS
