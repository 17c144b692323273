#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"
#include "airy-error.h"

/* Go to Best Focus: a button and its criterion beside the z slider, the
 * key G and the action viewer.best-focus. The plane it finds is shown and
 * named with the criterion's value beside the button. */

gboolean
airy_stack_viewer_go_to_best_focus (AiryStackViewer    *self,
                                    AiryFocusCriterion  criterion,
                                    GError            **error)
{
  AiryResident *r = airy_stack_view_get_resident (self->view);
  g_autofree char *text = NULL;
  double score;
  guint plane;

  g_return_val_if_fail (AIRY_IS_STACK_VIEWER (self), FALSE);

  if (r == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("best focus: no stack is shown"));
      return FALSE;
    }
  if (!airy_focus_best_plane (r, criterion, &plane, &score, error))
    return FALSE;
  airy_stack_view_set_z (self->view, plane);
  switch (criterion)
    {
    case AIRY_FOCUS_FWHM:
      /* TRANSLATORS: the plane (1-based) and its FWHM */
      text = g_strdup_printf (_("plane %u: FWHM %.4g µm"), plane + 1, score);
      break;
    case AIRY_FOCUS_ENERGY:
      /* TRANSLATORS: the plane (1-based) and the share of its energy near the peak */
      text = g_strdup_printf (_("plane %u: %.1f %% of the energy in one FWHM"), plane + 1, 100 * score);
      break;
    case AIRY_FOCUS_PEAK:
    default:
      /* TRANSLATORS: the plane (1-based) and its peak value */
      text = g_strdup_printf (_("plane %u: peak %.6g"), plane + 1, score);
      break;
    }
  gtk_label_set_text (GTK_LABEL (self->focus_label), text);
  gtk_widget_set_tooltip_text (self->focus_label, text);
  self->focus_for = r;
  return TRUE;
}

static void
action_best_focus (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryStackViewer *self = data;
  g_autoptr(GError) error = NULL;

  if (!airy_stack_viewer_go_to_best_focus (self, gtk_drop_down_get_selected (GTK_DROP_DOWN (self->focus_criterion)),
                                           &error))
    airy_stack_viewer_show_message (self, error->message);
}

static gboolean
on_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state, AiryStackViewer *self)
{
  if ((keyval != GDK_KEY_g && keyval != GDK_KEY_G) || (state & (GDK_CONTROL_MASK | GDK_ALT_MASK)))
    return FALSE;
  return gtk_widget_activate_action (GTK_WIDGET (self), "viewer.best-focus", NULL);
}

/* a new stack: the plane found was another stack's (compared, never
 * dereferenced) */
static void
on_view_changed (AiryStackView *view, AiryStackViewer *self)
{
  if (self->focus_for != NULL && self->focus_for != airy_stack_view_get_resident (view))
    {
      self->focus_for = NULL;
      gtk_label_set_text (GTK_LABEL (self->focus_label), "");
    }
}

void
_airy_stack_viewer_add_focus (AiryStackViewer *self,
                              GActionMap      *actions,
                              GtkWidget       *bar)
{
  static const GActionEntry entries[] = { { "best-focus", action_best_focus } };
  /* short: the bar beside the z slider is narrow */
  static const char *criteria[] = { N_("peak"), N_("min. FWHM"), N_("max. encircled energy"), NULL };
  const char *translated[G_N_ELEMENTS (criteria)];
  GtkWidget *button = gtk_button_new_with_mnemonic (_("Best _Focus"));
  GtkEventController *keys = gtk_event_controller_key_new ();
  guint i;

  g_action_map_add_action_entries (actions, entries, G_N_ELEMENTS (entries), self);
  for (i = 0; criteria[i]; i++)
    translated[i] = _(criteria[i]);
  translated[i] = NULL;
  self->focus_criterion = gtk_drop_down_new_from_strings (translated);
  gtk_widget_set_tooltip_text (self->focus_criterion, _("What best focus means: the plane of the stack's peak, of the "
                                                         "smallest FWHM, or of the most energy within one FWHM of "
                                                         "the peak"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "viewer.best-focus");
  gtk_widget_set_tooltip_text (button, _("Go to the plane of best focus by the chosen criterion (G)"));
  self->focus_label = gtk_label_new ("");
  gtk_widget_add_css_class (self->focus_label, "dim-label");
  /* it gives way to the z slider, never widens the window */
  gtk_label_set_ellipsize (GTK_LABEL (self->focus_label), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars (GTK_LABEL (self->focus_label), 30);
  gtk_box_append (GTK_BOX (bar), button);
  gtk_box_append (GTK_BOX (bar), self->focus_criterion);
  gtk_box_append (GTK_BOX (bar), self->focus_label);
  g_signal_connect (keys, "key-pressed", G_CALLBACK (on_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  g_signal_connect_object (self->view, "changed", G_CALLBACK (on_view_changed), self, 0);
}
