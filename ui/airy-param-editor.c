#define G_LOG_DOMAIN "airy-bench"

#include "config.h"

#include <locale.h>

#include <math.h>
#include <glib/gi18n.h>

#include "airy-param-editor.h"
#include "airy-error.h"
#include "airy-param.h"
#include "airy-stack-viewer.h"

struct _AiryParamEditor
{
  GtkWidget   parent_instance;

  GObject    *object;      /* weak: the panel edits its own properties too */
  GParamSpec *pspec;
  char       *path;
  GtkWidget  *child;       /* the control, or a box around it */
  GtkWidget  *control;
  GtkWidget  *scale;       /* phases: the slider beside the spin */
  gulong      notify_id;
  gboolean    refreshing;  /* showing the object's value, not committing */
  gboolean    keep_text;   /* a spin button keeps the refused number it shows */
  gboolean    typing;      /* a spin button's typed number is the object's */
  guint       typed_id;    /* the pause after typing into a spin button */
  gboolean    refused;     /* ::invalid was the last word: a valid value clears it */
};

G_DEFINE_FINAL_TYPE (AiryParamEditor, airy_param_editor, GTK_TYPE_WIDGET)

enum { SIGNAL_COMMIT, SIGNAL_CHANGED, SIGNAL_INVALID, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- values ---- */

static void
invalid (AiryParamEditor *self, const char *message)
{
  self->refused = TRUE;
  g_signal_emit (self, signals[SIGNAL_INVALID], 0, message);
}

static void
commit (AiryParamEditor *self, const GValue *value)
{
  gboolean handled = FALSE;

  if (self->refreshing || self->object == NULL)
    return;
  self->refused = FALSE;
  g_signal_emit (self, signals[SIGNAL_COMMIT], 0, value, &handled);
  if (handled)
    return;
  g_object_set_property (self->object, self->pspec->name, value);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* Lists of numbers in the locale's form, as the spin buttons show theirs:
 * "0.5, 0.6" where the decimal sign is a point, "0,5; 0,6" where it is a
 * comma (a German locale): one decimal sign everywhere. */
static gboolean
comma_decimals (void)
{
  const struct lconv *lc = localeconv ();

  return lc && lc->decimal_point && g_str_equal (lc->decimal_point, ",");
}

/* "0.5, 0.6" (commas, semicolons or spaces between the numbers); with
 * comma decimals "0,5; 0,6" (semicolons or spaces between them, a point
 * read as a decimal sign too) */
static gboolean
parse_numbers (const char *text, GArray *out)
{
  gboolean comma = comma_decimals ();
  g_auto(GStrv) parts = g_strsplit_set (text, comma ? " ;" : ", ;", -1);
  guint i;

  for (i = 0; parts[i]; i++)
    {
      char *end = NULL;
      double v;

      if (*parts[i] == '\0')
        continue;
      if (comma)
        g_strdelimit (parts[i], ",", '.');
      v = g_ascii_strtod (parts[i], &end);
      if (end == parts[i] || *end != '\0')
        return FALSE;
      g_array_append_val (out, v);
    }
  return TRUE;
}

static char *
format_numbers (const GValue *value)
{
  GVariant *var = g_value_get_variant (value);
  GString *s = g_string_new (NULL);
  gsize n = 0, i;
  const double *d = var ? g_variant_get_fixed_array (var, &n, sizeof (double)) : NULL;

  for (i = 0; i < n; i++)
    g_string_append_printf (s, "%s%g", i ? (comma_decimals () ? "; " : ", ") : "", d[i]);
  return g_string_free (s, FALSE);
}

gboolean
airy_param_editor_read (AiryParamEditor *self,
                        GValue          *value,
                        GError         **error)
{
  GParamSpec *pspec = self->pspec;

  g_return_val_if_fail (AIRY_IS_PARAM_EDITOR (self), FALSE);
  g_value_init (value, pspec->value_type);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    g_value_set_double (value, gtk_spin_button_get_value (GTK_SPIN_BUTTON (self->control)));
  else if (G_IS_PARAM_SPEC_INT (pspec))
    g_value_set_int (value, gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->control)));
  else if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    g_value_set_boolean (value, gtk_check_button_get_active (GTK_CHECK_BUTTON (self->control)));
  else if (G_IS_PARAM_SPEC_ENUM (pspec))
    {
      GEnumClass *klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
      guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (self->control));

      g_value_set_enum (value, klass->values[MIN (i, klass->n_values - 1)].value);
    }
  else if (G_IS_PARAM_SPEC_STRING (pspec))
    g_value_set_string (value, gtk_editable_get_text (GTK_EDITABLE (self->control)));
  else
    {
      g_autoptr(GArray) numbers = g_array_new (FALSE, FALSE, sizeof (double));

      if (!parse_numbers (gtk_editable_get_text (GTK_EDITABLE (self->control)), numbers))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: expected numbers separated by commas"), self->path);
          return FALSE;
        }
      g_value_set_variant (value, g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, numbers->data,
                                                             numbers->len, sizeof (double)));
      /* GObject checks numbers against their range, not the entries of arrays */
      return airy_param_check_value (pspec, value, self->path, error);
    }
  return TRUE;
}

static gboolean
focus_within (GtkWidget *widget)
{
  return (gtk_widget_get_state_flags (widget) & GTK_STATE_FLAG_FOCUS_WITHIN) != 0;
}

/* the object's value into the control */
static void
refresh (AiryParamEditor *self)
{
  g_auto(GValue) value = G_VALUE_INIT;
  GParamSpec *pspec = self->pspec;

  if (self->object == NULL)
    return;
  g_value_init (&value, pspec->value_type);
  g_object_get_property (self->object, pspec->name, &value);
  /* a number being typed was committed as typed: the text stays as it is */
  if (self->typing && (G_IS_PARAM_SPEC_DOUBLE (pspec) || G_IS_PARAM_SPEC_INT (pspec)))
    {
      if (focus_within (self->control))
        return;
      self->typing = FALSE;
    }
  self->refreshing = TRUE;
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->control), g_value_get_double (&value));
      if (self->scale)
        gtk_range_set_value (GTK_RANGE (self->scale), g_value_get_double (&value));
    }
  else if (G_IS_PARAM_SPEC_INT (pspec))
    gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->control), g_value_get_int (&value));
  else if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    gtk_check_button_set_active (GTK_CHECK_BUTTON (self->control), g_value_get_boolean (&value));
  else if (G_IS_PARAM_SPEC_ENUM (pspec))
    {
      GEnumClass *klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
      guint k;

      for (k = 0; k < klass->n_values; k++)
        if (klass->values[k].value == g_value_get_enum (&value))
          gtk_drop_down_set_selected (GTK_DROP_DOWN (self->control), k);
    }
  else
    {
      /* an entry being typed into keeps its text (and cursor) when it
       * says what the object holds */
      g_autofree char *text = G_IS_PARAM_SPEC_STRING (pspec) ? g_value_dup_string (&value)
                                                               : format_numbers (&value);
      const char *shown = gtk_editable_get_text (GTK_EDITABLE (self->control));

      if (g_strcmp0 (shown, text ? text : "") != 0)
        gtk_editable_set_text (GTK_EDITABLE (self->control), text ? text : "");
    }
  self->refreshing = FALSE;
}

static void
on_notify (GObject *object, GParamSpec *pspec, AiryParamEditor *self)
{
  refresh (self);
}

/* ---- controls ---- */

static void
on_control_changed (AiryParamEditor *self)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;

  if (self->refreshing)
    return;
  if (!airy_param_editor_read (self, &value, &error))
    {
      invalid (self, error->message);
      return;
    }
  commit (self, &value);
}

/* the spin button's text as a number */
static gboolean
typed_number (GtkSpinButton *spin,
              double        *number)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  char *end = NULL;
  double v = g_strtod (text, &end);

  while (end && g_ascii_isspace (*end))
    end++;
  if (end == text || end == NULL || *end != '\0' || !isfinite (v))
    return FALSE;
  *number = v;
  return TRUE;
}

/* a number as the parameter's value */
static void
number_value (AiryParamEditor *self, double v, GValue *value)
{
  g_value_init (value, self->pspec->value_type);
  if (G_IS_PARAM_SPEC_INT (self->pspec))
    g_value_set_int (value, (int) v);
  else
    g_value_set_double (value, v);
}

gboolean
airy_spin_button_typed_outside (GtkSpinButton *spin,
                                double        *number)
{
  GtkAdjustment *adjustment = gtk_spin_button_get_adjustment (spin);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  char *end = NULL;
  double v = g_strtod (text, &end);

  while (end && g_ascii_isspace (*end))
    end++;
  if (end == text || end == NULL || *end != '\0')
    return FALSE;
  *number = v;
  return v < gtk_adjustment_get_lower (adjustment) || v > gtk_adjustment_get_upper (adjustment);
}

/* Typed text: a number outside the declared range is refused with the
 * declaration's message; the spin button keeps its value instead of
 * silently clamping. Anything else is GTK's to read. */
static int
on_spin_input (GtkSpinButton *spin, double *new_value, AiryParamEditor *self)
{
  g_autoptr(GError) error = NULL;
  double v;

  g_clear_handle_id (&self->typed_id, g_source_remove);
  self->typing = FALSE;
  if (!airy_spin_button_typed_outside (spin, &v))
    {
      /* a valid number after a refused one: it takes effect even when it is
       * what the object holds (GTK then sees no change), which clears the mark */
      if (self->refused && typed_number (spin, &v))
        {
          g_auto(GValue) value = G_VALUE_INIT;

          number_value (self, v, &value);
          commit (self, &value);
        }
      return FALSE;
    }
  if (!airy_param_check_number (self->pspec, v, self->path, &error))
    invalid (self, error->message);
  /* the refused number stays in the field, marked, until it is corrected */
  self->keep_text = TRUE;
  *new_value = gtk_spin_button_get_value (spin);
  return TRUE;
}

static gboolean
on_spin_output (GtkSpinButton *spin, AiryParamEditor *self)
{
  gboolean keep = self->keep_text;

  self->keep_text = FALSE;
  return keep;
}

/* A pause in typing a number: it takes effect as typed (the text and the
 * cursor stay), as the arrows and the scroll wheel do at every step; Enter,
 * Tab and leaving the field then read it as GTK does. Out of range: marked
 * at once. */
#define TYPING_PAUSE_MS 400

static gboolean
on_typed (gpointer data)
{
  AiryParamEditor *self = data;
  GtkSpinButton *spin = GTK_SPIN_BUTTON (self->control);
  g_autoptr(GError) error = NULL;
  g_auto(GValue) value = G_VALUE_INIT;
  g_auto(GValue) held = G_VALUE_INIT;
  double v;

  self->typed_id = 0;
  if (self->object == NULL || !typed_number (spin, &v) || (G_IS_PARAM_SPEC_INT (self->pspec) && v != floor (v)))
    return G_SOURCE_REMOVE;
  if (!airy_param_check_number (self->pspec, v, self->path, &error))
    {
      invalid (self, error->message);
      return G_SOURCE_REMOVE;
    }
  number_value (self, v, &value);
  g_value_init (&held, self->pspec->value_type);
  g_object_get_property (self->object, self->pspec->name, &held);
  /* what the object holds already (the arrows' steps reformat the text) */
  if (!self->refused && g_param_values_cmp (self->pspec, &value, &held) == 0)
    return G_SOURCE_REMOVE;
  /* the spin button holds it too (its arrows step from there), its text
   * and cursor untouched */
  self->keep_text = TRUE;
  self->refreshing = TRUE;
  gtk_spin_button_set_value (spin, v);
  self->refreshing = FALSE;
  self->keep_text = FALSE;
  self->typing = TRUE;
  commit (self, &value);
  return G_SOURCE_REMOVE;
}

static void
on_spin_text (GtkEditable *editable, AiryParamEditor *self)
{
  if (self->refreshing || !focus_within (GTK_WIDGET (editable)))
    return;
  g_clear_handle_id (&self->typed_id, g_source_remove);
  self->typed_id = g_timeout_add (TYPING_PAUSE_MS, on_typed, self);
}

static void
on_scale (GtkRange *scale, AiryParamEditor *self)
{
  if (!self->refreshing)
    gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->control), gtk_range_get_value (scale));
}

static void
on_file_chosen (GtkNativeDialog *dialog, int response, gpointer data)
{
  GtkEditable *entry = data;

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path)
        gtk_editable_set_text (entry, path);
    }
  g_object_unref (dialog);
  g_object_unref (entry);
}

static void
on_browse (GtkButton *button, GtkEditable *entry)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (button));
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (_("Choose an Image"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                 GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  airy_file_chooser_add_image_filter (GTK_FILE_CHOOSER (dialog));
  g_signal_connect (dialog, "response", G_CALLBACK (on_file_chosen), g_object_ref (entry));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* a tenth of the value's order of magnitude (or of the range's) */
static double
step_for (double lo, double hi, double v)
{
  double m = fabs (v) > 0 ? fabs (v) : MIN (fabs (hi - lo), 1.0);
  return pow (10.0, floor (log10 (m)) - 1);
}

/* The wheel over a field that does not have the focus scrolls the panel
 * instead of changing the value: scrolling down a long panel must not turn
 * "64 planes" into 65 on the way. Focused, the field takes the wheel. */
static gboolean
on_wheel (GtkEventControllerScroll *controller, double dx, double dy, gpointer data)
{
  GtkWidget *widget = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  GtkWidget *scroller;
  GtkAdjustment *adj;
  double page;

  if (focus_within (widget))
    return FALSE;
  scroller = gtk_widget_get_ancestor (widget, GTK_TYPE_SCROLLED_WINDOW);
  if (scroller == NULL)
    return TRUE;
  adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  page = gtk_adjustment_get_page_size (adj);
  /* GtkScrolledWindow's own step for a wheel notch */
  gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) + dy * pow (MAX (page, 1.0), 2.0 / 3.0));
  return TRUE;
}

void
airy_wheel_scrolls_panel (GtkWidget *widget)
{
  GtkEventController *wheel = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);

  gtk_event_controller_set_propagation_phase (wheel, GTK_PHASE_CAPTURE);
  g_signal_connect (wheel, "scroll", G_CALLBACK (on_wheel), NULL);
  gtk_widget_add_controller (widget, wheel);
}

static GtkWidget *
spin_new (AiryParamEditor *self, double lo, double hi, double step, guint digits)
{
  GtkWidget *spin = gtk_spin_button_new_with_range (lo, hi, step);

  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), digits);
  gtk_widget_set_hexpand (spin, TRUE);
  g_signal_connect (spin, "input", G_CALLBACK (on_spin_input), self);
  g_signal_connect (spin, "output", G_CALLBACK (on_spin_output), self);
  g_signal_connect (spin, "changed", G_CALLBACK (on_spin_text), self);
  g_signal_connect_swapped (spin, "value-changed", G_CALLBACK (on_control_changed), self);
  airy_wheel_scrolls_panel (spin);
  return spin;
}

static GtkWidget *
double_control (AiryParamEditor *self, GParamSpecDouble *d)
{
  double v;
  GtkWidget *box;

  g_object_get (self->object, self->pspec->name, &v, NULL);   /* for the step */
  self->control = spin_new (self, d->minimum, d->maximum, step_for (d->minimum, d->maximum, v), 4);
  if (!(airy_param_spec_get_flags (self->pspec) & AIRY_PARAM_PHASE))
    return self->control;
  /* a slider over one turn either way; the spin button for the rest */
  self->scale = gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, -2 * G_PI, 2 * G_PI, 0.01);
  gtk_scale_set_draw_value (GTK_SCALE (self->scale), FALSE);
  gtk_widget_set_size_request (self->scale, 120, -1);
  g_signal_connect (self->scale, "value-changed", G_CALLBACK (on_scale), self);
  airy_wheel_scrolls_panel (self->scale);
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (box), self->scale);
  gtk_box_append (GTK_BOX (box), self->control);
  return box;
}

static GtkWidget *
enum_control (AiryParamEditor *self, GEnumClass *klass)
{
  g_autofree const char **labels = g_new0 (const char *, klass->n_values + 1);
  guint k;

  /* the value_name is the human label (marked N_() where the enum is
   * defined), the nick stays the JSON's; the selection is the index. A
   * module's enum named the GLib way (MYLAB_MODE_FAST: an underscore, no
   * lower case) shows its nick. */
  for (k = 0; k < klass->n_values; k++)
    {
      const char *name = klass->values[k].value_name;
      gboolean identifier = name != NULL && strchr (name, '_') != NULL;
      const char *c;

      for (c = name; identifier && *c; c++)
        if (g_ascii_islower (*c))
          identifier = FALSE;
      labels[k] = identifier ? klass->values[k].value_nick : _(name);
    }
  self->control = gtk_drop_down_new_from_strings (labels);
  g_signal_connect_swapped (self->control, "notify::selected", G_CALLBACK (on_control_changed), self);
  return self->control;
}

static GtkWidget *
string_control (AiryParamEditor *self)
{
  GtkWidget *box, *browse;

  self->control = gtk_entry_new ();
  gtk_widget_set_hexpand (self->control, TRUE);
  g_signal_connect_swapped (self->control, "changed", G_CALLBACK (on_control_changed), self);
  if (!(airy_param_spec_get_flags (self->pspec) & AIRY_PARAM_FILE))
    return self->control;
  box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 2);
  browse = gtk_button_new_from_icon_name ("document-open-symbolic");
  gtk_widget_set_tooltip_text (browse, _("Choose a file"));
  g_signal_connect (browse, "clicked", G_CALLBACK (on_browse), self->control);
  gtk_box_append (GTK_BOX (box), self->control);
  gtk_box_append (GTK_BOX (box), browse);
  return box;
}

/* left with other numbers than the object's: they take effect (or are
 * marked) as on Enter */
static void
on_array_left (AiryParamEditor *self)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autofree char *shown = NULL;

  if (self->object == NULL || gtk_widget_get_root (self->control) == NULL)
    return;
  g_value_init (&value, self->pspec->value_type);
  g_object_get_property (self->object, self->pspec->name, &value);
  shown = format_numbers (&value);
  if (g_strcmp0 (shown, gtk_editable_get_text (GTK_EDITABLE (self->control))) != 0)
    on_control_changed (self);
}

static GtkWidget *
build (AiryParamEditor *self)
{
  GParamSpec *pspec = self->pspec;
  GtkEventController *focus;

  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    return double_control (self, G_PARAM_SPEC_DOUBLE (pspec));
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *i = G_PARAM_SPEC_INT (pspec);
      return self->control = spin_new (self, i->minimum, i->maximum, 1, 0);
    }
  if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    {
      self->control = gtk_check_button_new ();
      g_signal_connect_swapped (self->control, "notify::active", G_CALLBACK (on_control_changed), self);
      return self->control;
    }
  if (G_IS_PARAM_SPEC_ENUM (pspec))
    return enum_control (self, G_PARAM_SPEC_ENUM (pspec)->enum_class);
  if (G_IS_PARAM_SPEC_STRING (pspec))
    return string_control (self);
  g_return_val_if_fail (G_IS_PARAM_SPEC_VARIANT (pspec), NULL);
  /* an array: the numbers take effect on Enter and when the field is left
   * (Tab, a click elsewhere) */
  self->control = gtk_entry_new ();
  gtk_widget_set_hexpand (self->control, TRUE);
  g_signal_connect_swapped (self->control, "activate", G_CALLBACK (on_control_changed), self);
  focus = gtk_event_controller_focus_new ();
  g_signal_connect_swapped (focus, "leave", G_CALLBACK (on_array_left), self);
  gtk_widget_add_controller (self->control, focus);
  return self->control;
}

static char *
tooltip (AiryParamEditor *self)
{
  g_autofree char *range = airy_param_spec_range_string (self->pspec);
  /* the engine marks nicks and blurbs for translation in the same domain */
  const char *blurb = _(g_param_spec_get_blurb (self->pspec));

  if (G_IS_PARAM_SPEC_VARIANT (self->pspec))
    return comma_decimals () ? g_strdup_printf (_("%s %s; numbers separated by semicolons, then Enter"), blurb, range)
                             : g_strdup_printf (_("%s %s; numbers separated by commas, then Enter"), blurb, range);
  return g_strdup_printf ("%s %s", blurb, range);
}

GtkWidget *
airy_param_editor_new (GObject    *object,
                       GParamSpec *pspec,
                       const char *path)
{
  AiryParamEditor *self;
  g_autofree char *signal = NULL;
  g_autofree char *tip = NULL;

  g_return_val_if_fail (G_IS_OBJECT (object) && G_IS_PARAM_SPEC (pspec) && path != NULL, NULL);

  self = g_object_new (AIRY_TYPE_PARAM_EDITOR, NULL);
  g_set_weak_pointer (&self->object, object);
  self->pspec = g_param_spec_ref (pspec);
  self->path = g_strdup (path);
  self->child = build (self);
  gtk_widget_set_parent (self->child, GTK_WIDGET (self));
  tip = tooltip (self);
  gtk_widget_set_tooltip_text (self->child, tip);
  refresh (self);
  signal = g_strdup_printf ("notify::%s", pspec->name);
  self->notify_id = g_signal_connect (object, signal, G_CALLBACK (on_notify), self);
  return GTK_WIDGET (self);
}

GtkWidget *
airy_param_editor_new_label (AiryParamEditor *self,
                             const char      *text)
{
  const char *unit = airy_param_spec_get_unit (self->pspec);
  const char *nick = text ? text : _(g_param_spec_get_nick (self->pspec));
  g_autofree char *full = unit ? g_strdup_printf ("%s (%s)", nick, unit) : g_strdup (nick);
  g_autofree char *tip = tooltip (self);
  GtkWidget *label = gtk_label_new (full);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_set_tooltip_text (label, tip);
  g_object_bind_property (self, "visible", label, "visible", G_BINDING_SYNC_CREATE);
  return label;
}

GObject *
airy_param_editor_get_object (AiryParamEditor *self)
{
  return self->object;
}

GParamSpec *
airy_param_editor_get_pspec (AiryParamEditor *self)
{
  return self->pspec;
}

const char *
airy_param_editor_get_path (AiryParamEditor *self)
{
  return self->path;
}

GtkWidget *
airy_param_editor_get_control (AiryParamEditor *self)
{
  return self->control;
}

static void
airy_param_editor_dispose (GObject *object)
{
  AiryParamEditor *self = AIRY_PARAM_EDITOR (object);

  g_clear_handle_id (&self->typed_id, g_source_remove);
  if (self->notify_id && self->object)
    g_clear_signal_handler (&self->notify_id, self->object);
  g_clear_weak_pointer (&self->object);
  g_clear_pointer (&self->child, gtk_widget_unparent);
  G_OBJECT_CLASS (airy_param_editor_parent_class)->dispose (object);
}

static void
airy_param_editor_finalize (GObject *object)
{
  AiryParamEditor *self = AIRY_PARAM_EDITOR (object);

  g_clear_pointer (&self->pspec, g_param_spec_unref);
  g_free (self->path);
  G_OBJECT_CLASS (airy_param_editor_parent_class)->finalize (object);
}

static void
airy_param_editor_class_init (AiryParamEditorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = airy_param_editor_dispose;
  object_class->finalize = airy_param_editor_finalize;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  signals[SIGNAL_COMMIT] = g_signal_new ("commit", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, g_signal_accumulator_true_handled, NULL, NULL,
                                         G_TYPE_BOOLEAN, 1, G_TYPE_VALUE | G_SIGNAL_TYPE_STATIC_SCOPE);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_INVALID] = g_signal_new ("invalid", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
airy_param_editor_init (AiryParamEditor *self)
{
}
