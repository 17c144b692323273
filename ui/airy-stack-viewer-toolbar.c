#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>

#include "airy-stack-viewer-private.h"
#include "airy-wrap-layout.h"

/* The viewer's toolbar: its controls, built in rows that wrap, and
 * bound to the view's properties (each shows what the view has,
 * whoever set it). */

/* the band the profile averages, drawn on the view */
static void
on_line_width (GtkSpinButton *spin, AiryStackViewer *self)
{
  airy_stack_view_set_line_width (self->view, (guint) gtk_spin_button_get_value_as_int (spin));
}

/* toolbar.auto-contrast: the Auto contrast button, by the chosen mode */
static void
auto_contrast_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (widget);

  airy_stack_viewer_auto_contrast (self, gtk_drop_down_get_selected (GTK_DROP_DOWN (self->auto_mode)));
}

/* A drag or a scroll on the z slider lands on the plane below the pointer:
 * the knob snaps to it, and the binding hands it to the view. */
static gboolean
on_z_change (GtkRange *range, GtkScrollType scroll, double value, AiryStackViewer *self)
{
  gtk_range_set_value (range, floor (value));
  return TRUE;
}

/* transforms for the bindings of the controls to the view */
static gboolean
enum_to_selected (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  g_value_set_uint (to, (guint) g_value_get_enum (from));
  return TRUE;
}

static gboolean
selected_to_enum (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  if (g_value_get_uint (from) == GTK_INVALID_LIST_POSITION)
    return FALSE;
  g_value_set_enum (to, (int) g_value_get_uint (from));
  return TRUE;
}

/* A tool's toggle: on when the view has that tool (data); turning it on
 * picks it, turning it off goes back to the cursor unless another tool
 * was picked meanwhile. */
static gboolean
tool_to_active (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  g_value_set_boolean (to, g_value_get_enum (from) == GPOINTER_TO_INT (data));
  return TRUE;
}

static gboolean
active_to_tool (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  g_autoptr(GObject) view = g_binding_dup_source (binding);
  AiryViewTool tool = GPOINTER_TO_INT (data);

  if (g_value_get_boolean (from))
    g_value_set_enum (to, tool);
  else if (view && airy_stack_view_get_tool (AIRY_STACK_VIEW (view)) == tool)
    g_value_set_enum (to, AIRY_TOOL_CURSOR);
  else
    return FALSE;
  return TRUE;
}

/* Every display control, the toggles and the z slider edit the view's
 * properties and show them, whoever sets them. */
void
_airy_stack_viewer_bind_controls (AiryStackViewer *self)
{
  const GBindingFlags both = G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE;
  const struct { const char *property; gpointer widget; const char *target; } plain[] = {
    { "colormap", self->colormap, "selected" },
    { "inverted", self->invert, "active" },
    { "gamma", self->gamma, "value" },
    { "limit-low", self->lo_spin, "value" },
    { "limit-high", self->hi_spin, "value" },
    { "limit-low", self->histogram, "limit-low" },
    { "limit-high", self->histogram, "limit-high" },
    { "linear", self->smooth, "active" },
    { "mip", self->mip, "active" },
    { "sections", self->sections, "active" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (plain); i++)
    g_object_bind_property (self->view, plain[i].property, plain[i].widget, plain[i].target, both);
  g_object_bind_property_full (self->view, "scale", self->scale, "selected", both,
                               enum_to_selected, selected_to_enum, NULL, NULL);
  g_object_bind_property_full (self->view, "tool", self->line_tool, "active", both,
                               tool_to_active, active_to_tool, GINT_TO_POINTER (AIRY_TOOL_LINE), NULL);
  g_object_bind_property_full (self->view, "tool", self->rect_tool, "active", both,
                               tool_to_active, active_to_tool, GINT_TO_POINTER (AIRY_TOOL_RECT), NULL);
  g_object_bind_property (self->view, "z", gtk_range_get_adjustment (GTK_RANGE (self->z_scale)), "value", both);
  g_signal_connect (self->z_scale, "change-value", G_CALLBACK (on_z_change), self);
}

/* The viewer's template: the toolbar (resources/ui/airy-stack-viewer.ui)
 * and its action */
void
_airy_stack_viewer_class_init_toolbar (GtkWidgetClass *widget_class)
{
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/airyoptics/Airy/ui/airy-stack-viewer.ui");
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, colormap);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, invert);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, scale);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, gamma);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, lo_spin);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, hi_spin);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, auto_mode);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, auto_on);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, smooth);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, mip);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, sections);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, line_tool);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, line_width);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, rect_tool);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, compare_dd);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, hyper_box);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, channel_spin);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, frame_spin);
  gtk_widget_class_bind_template_child (widget_class, AiryStackViewer, composite);
  gtk_widget_class_install_action (widget_class, "toolbar.auto-contrast", NULL, auto_contrast_activated);
}

/* The toolbar of the template: rows that wrap when the window is narrower
 * than they are, never cut; its controls' signals */
GtkWidget *
_airy_stack_viewer_build_toolbar (AiryStackViewer *self)
{
  GtkWidget *toolbar = gtk_widget_get_first_child (GTK_WIDGET (self));

  gtk_widget_set_layout_manager (toolbar, airy_wrap_layout_new (6));
  g_signal_connect_swapped (self->line_width, "value-changed", G_CALLBACK (_airy_stack_viewer_update_plots), self);
  g_signal_connect (self->line_width, "value-changed", G_CALLBACK (on_line_width), self);
  g_signal_connect (self->compare_dd, "notify::selected", G_CALLBACK (_airy_stack_viewer_on_compare_selected), self);
  g_signal_connect (self->composite, "toggled", G_CALLBACK (_airy_stack_viewer_on_composite), self);
  g_signal_connect (self->channel_spin, "value-changed", G_CALLBACK (_airy_stack_viewer_on_hyper_axis), self);
  /* "1 · 532 nm": the channel's wavelength where it is known (the spin
   * button is not numeric: that would refuse the text) */
  g_signal_connect (self->channel_spin, "input", G_CALLBACK (_airy_stack_viewer_on_channel_input), self);
  g_signal_connect (self->channel_spin, "output", G_CALLBACK (_airy_stack_viewer_on_channel_output), self);
  g_signal_connect (self->frame_spin, "value-changed", G_CALLBACK (_airy_stack_viewer_on_hyper_axis), self);
  return toolbar;
}
