#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"
#include "airy-wrap-layout.h"

/* The viewer's toolbar: its controls, built in rows that wrap, and
 * bound to the view's properties (each shows what the view has,
 * whoever set it). */

static GtkWidget *
labelled (const char *text, GtkWidget *child)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);

  gtk_box_append (GTK_BOX (box), gtk_label_new (text));
  gtk_box_append (GTK_BOX (box), child);
  return box;
}

/* the band the profile averages, drawn on the view */
static void
on_line_width (GtkSpinButton *spin, AiryStackViewer *self)
{
  airy_stack_view_set_line_width (self->view, (guint) gtk_spin_button_get_value_as_int (spin));
}

static void
on_auto (GtkButton *button, AiryStackViewer *self)
{
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

/* The display controls, the tools, zoom, comparison and the hyperstack's
 * choosers: rows that wrap. */
GtkWidget *
_airy_stack_viewer_build_toolbar (AiryStackViewer *self)
{
  static const char *colormaps[] = { N_("Gray"), N_("Inferno"), N_("Magma"), N_("Viridis"), N_("Fire"),
                                     N_("Diverging"), NULL };
  static const char *scales[] = { N_("Linear"), N_("Log"), N_("Sqrt"), NULL };
  static const char *autos[] = { N_("Min–max, slice"), N_("Min–max, stack"), N_("0.1 %, slice"),
                                 N_("0.1 %, stack"), NULL };
  GtkWidget *toolbar, *button;
  const char *translated[8];
  guint i;

  /* display controls: rows that wrap when the window is narrower than
   * they are, never cut */
  toolbar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_layout_manager (toolbar, airy_wrap_layout_new (6));
  gtk_widget_set_margin_start (toolbar, 6);
  gtk_widget_set_margin_end (toolbar, 6);
  gtk_widget_set_margin_top (toolbar, 4);
  for (i = 0; colormaps[i]; i++)
    translated[i] = _(colormaps[i]);
  translated[i] = NULL;
  self->colormap = gtk_drop_down_new_from_strings (translated);
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Colormap"), self->colormap));
  self->invert = gtk_check_button_new_with_label (_("Invert"));
  gtk_box_append (GTK_BOX (toolbar), self->invert);
  for (i = 0; scales[i]; i++)
    translated[i] = _(scales[i]);
  translated[i] = NULL;
  self->scale = gtk_drop_down_new_from_strings (translated);
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Scale"), self->scale));
  self->gamma = gtk_spin_button_new_with_range (0.1, 5.0, 0.05);
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Gamma"), self->gamma));
  self->lo_spin = gtk_spin_button_new_with_range (-1e12, 1e12, 0.01);
  self->hi_spin = gtk_spin_button_new_with_range (-1e12, 1e12, 0.01);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (self->lo_spin), 4);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (self->hi_spin), 4);
  gtk_editable_set_width_chars (GTK_EDITABLE (self->lo_spin), 7);
  gtk_editable_set_width_chars (GTK_EDITABLE (self->hi_spin), 7);
  gtk_editable_set_width_chars (GTK_EDITABLE (self->gamma), 4);
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Min"), self->lo_spin));
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Max"), self->hi_spin));

  for (i = 0; autos[i]; i++)
    translated[i] = _(autos[i]);
  translated[i] = NULL;
  self->auto_mode = gtk_drop_down_new_from_strings (translated);
  button = gtk_button_new_with_label (_("Auto contrast"));
  g_signal_connect (button, "clicked", G_CALLBACK (on_auto), self);
  gtk_box_append (GTK_BOX (toolbar), button);
  gtk_box_append (GTK_BOX (toolbar), self->auto_mode);
  self->auto_on = gtk_check_button_new_with_label (_("on new data"));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (self->auto_on), TRUE);
  gtk_box_append (GTK_BOX (toolbar), self->auto_on);
  self->smooth = gtk_toggle_button_new_with_label (_("Smooth"));
  self->mip = gtk_toggle_button_new_with_label (_("MIP"));
  self->sections = gtk_toggle_button_new_with_label (_("Sections"));
  self->line_tool = gtk_toggle_button_new_with_label (_("Line profile"));
  gtk_box_append (GTK_BOX (toolbar), self->smooth);
  gtk_box_append (GTK_BOX (toolbar), self->mip);
  gtk_box_append (GTK_BOX (toolbar), self->sections);
  {
    GtkWidget *line_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);

    gtk_box_append (GTK_BOX (line_box), self->line_tool);
    self->line_width = gtk_spin_button_new_with_range (1, 64, 1);
    gtk_widget_set_tooltip_text (self->line_width, _("Line width in pixels: the profile is averaged across it"));
    g_signal_connect_swapped (self->line_width, "value-changed", G_CALLBACK (_airy_stack_viewer_update_plots), self);
    g_signal_connect (self->line_width, "value-changed", G_CALLBACK (on_line_width), self);
    gtk_box_append (GTK_BOX (line_box), labelled (_("Width"), self->line_width));
    gtk_box_append (GTK_BOX (toolbar), line_box);
  }
  self->rect_tool = gtk_toggle_button_new_with_label (_("Rectangle"));
  gtk_widget_set_tooltip_text (self->rect_tool, _("Drag a rectangle: its sum, mean, maximum and encircled energy"));
  gtk_box_append (GTK_BOX (toolbar), self->rect_tool);
  {
    /* the zoom buttons stay together */
    GtkWidget *zoom_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);

    gtk_widget_add_css_class (zoom_box, "linked");
    button = gtk_button_new_with_label (_("Fit"));
    gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "viewer.fit");
    gtk_widget_set_tooltip_text (button, _("Show the whole image (0)"));
    gtk_box_append (GTK_BOX (zoom_box), button);
    button = gtk_button_new_with_label (_("Fit PSF"));
    gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "viewer.fit-psf");
    gtk_widget_set_tooltip_text (button, _("Show where the stack exceeds 1/1000 of its peak (P)"));
    gtk_box_append (GTK_BOX (zoom_box), button);
    button = gtk_button_new_with_label ("1:1");
    gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "viewer.zoom-1");
    gtk_box_append (GTK_BOX (zoom_box), button);
    gtk_box_append (GTK_BOX (toolbar), zoom_box);
  }
  {
    /* comparing with a pinned reference */
    static const char *modes[] = { N_("Compare: off"), N_("Side by side"), N_("Difference"), NULL };
    const char *names[4];
    GtkWidget *compare_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);

    gtk_widget_add_css_class (compare_box, "linked");
    button = gtk_button_new_with_label (_("Pin"));
    gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "viewer.pin");
    gtk_widget_set_tooltip_text (button, _("Keep the shown result as the reference to compare with (B swaps)"));
    gtk_box_append (GTK_BOX (compare_box), button);
    for (i = 0; modes[i]; i++)
      names[i] = _(modes[i]);
    names[i] = NULL;
    self->compare_dd = gtk_drop_down_new_from_strings (names);
    gtk_widget_set_sensitive (self->compare_dd, FALSE);
    g_signal_connect (self->compare_dd, "notify::selected", G_CALLBACK (_airy_stack_viewer_on_compare_selected), self);
    gtk_box_append (GTK_BOX (compare_box), self->compare_dd);
    gtk_box_append (GTK_BOX (toolbar), compare_box);
  }
  /* shown for hyperstacks only: which channel and time point is on screen */
  self->hyper_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->channel_spin = gtk_spin_button_new_with_range (1, 1, 1);
  self->frame_spin = gtk_spin_button_new_with_range (1, 1, 1);
  gtk_box_append (GTK_BOX (self->hyper_box), labelled (_("Channel"), self->channel_spin));
  gtk_box_append (GTK_BOX (self->hyper_box), labelled (_("Time point"), self->frame_spin));
  self->composite = gtk_check_button_new_with_label (_("Composite"));
  gtk_widget_set_tooltip_text (self->composite, _("All channels over each other: red, green, blue, gray"));
  gtk_box_append (GTK_BOX (self->hyper_box), self->composite);
  g_signal_connect (self->composite, "toggled", G_CALLBACK (_airy_stack_viewer_on_composite), self);
  g_signal_connect (self->channel_spin, "value-changed", G_CALLBACK (_airy_stack_viewer_on_hyper_axis), self);
  /* "1 · 532 nm": the channel's wavelength where it is known (a numeric
   * spin button, as new_with_range makes it, would refuse that text) */
  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (self->channel_spin), FALSE);
  g_signal_connect (self->channel_spin, "input", G_CALLBACK (_airy_stack_viewer_on_channel_input), self);
  g_signal_connect (self->channel_spin, "output", G_CALLBACK (_airy_stack_viewer_on_channel_output), self);
  g_signal_connect (self->frame_spin, "value-changed", G_CALLBACK (_airy_stack_viewer_on_hyper_axis), self);
  gtk_widget_set_visible (self->hyper_box, FALSE);
  gtk_box_append (GTK_BOX (toolbar), self->hyper_box);

  return toolbar;
}
