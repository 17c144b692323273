#define G_LOG_DOMAIN "airy-bench"

#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n.h>

#include "airy-bench-panel.h"
#include "airy-stack-viewer.h"
#include "airy-backend.h"
#include "airy-error.h"
#include "airy-run.h"

struct _AiryBenchPanel
{
  GtkBox      parent_instance;

  AirySystem *system;
  GtkWidget  *content;
  GtkWidget  *error_label;
  GtkWidget  *derived_label;
  GtkWidget  *warnings_label;
  GHashTable *editors;       /* path → widget (borrowed) */
  GHashTable *row_errors;    /* element path → error label */
  GPtrArray  *marked;        /* widgets with the error class */
  char       *error;
  char       *backend;
  guint       threads;
  GArray     *devices;       /* chosen device indices; empty: all */
  GPtrArray  *device_checks;
  gboolean    building;
};

G_DEFINE_FINAL_TYPE (AiryBenchPanel, airy_bench_panel, GTK_TYPE_BOX)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void rebuild (AiryBenchPanel *self);

static void
changed (AiryBenchPanel *self)
{
  if (!self->building)
    g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* rebuilding from a signal handler of a widget that goes away: do it idle */
static gboolean
rebuild_idle (gpointer data)
{
  AiryBenchPanel *self = data;

  rebuild (self);
  changed (self);
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

static void
rebuild_later (AiryBenchPanel *self)
{
  g_idle_add (rebuild_idle, g_object_ref (self));
}

static void
register_editor (AiryBenchPanel *self, const char *path, GtkWidget *widget)
{
  g_hash_table_replace (self->editors, g_strdup (path), widget);
}

/* ---- generic parameter editors ---- */

typedef struct
{
  AiryBenchPanel *panel;
  AiryElement    *element;
  GParamSpec     *pspec;
} Binding;

static Binding *
binding_new (AiryBenchPanel *self, AiryElement *e, GParamSpec *pspec)
{
  Binding *b = g_new0 (Binding, 1);

  b->panel = self;
  b->element = g_object_ref (e);
  b->pspec = pspec;
  return b;
}

static void
binding_free (gpointer data, GClosure *closure)
{
  Binding *b = data;

  g_object_unref (b->element);
  g_free (b);
}

static void
on_double (GtkSpinButton *spin, Binding *b)
{
  g_object_set (b->element, b->pspec->name, gtk_spin_button_get_value (spin), NULL);
  changed (b->panel);
}

static void
on_int (GtkSpinButton *spin, Binding *b)
{
  g_object_set (b->element, b->pspec->name, gtk_spin_button_get_value_as_int (spin), NULL);
  changed (b->panel);
}

static void
on_bool (GtkCheckButton *check, GParamSpec *pspec, Binding *b)
{
  g_object_set (b->element, b->pspec->name, gtk_check_button_get_active (check), NULL);
  changed (b->panel);
}

static void
on_enum (GtkDropDown *drop, GParamSpec *pspec, Binding *b)
{
  GEnumClass *klass = G_PARAM_SPEC_ENUM (b->pspec)->enum_class;
  guint i = gtk_drop_down_get_selected (drop);

  if (i >= klass->n_values)
    return;
  g_object_set (b->element, b->pspec->name, klass->values[i].value, NULL);
  /* some choices change which parameters matter (phase-mask's source) */
  if (g_str_equal (b->pspec->name, "source") || g_str_equal (b->pspec->name, "named"))
    rebuild_later (b->panel);
  else
    changed (b->panel);
}

static void
on_string (GtkEditable *entry, Binding *b)
{
  g_object_set (b->element, b->pspec->name, gtk_editable_get_text (entry), NULL);
  changed (b->panel);
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

static double
step_for (double lo, double hi, double v)
{
  double m = fabs (v) > 0 ? fabs (v) : MIN (fabs (hi - lo), 1.0);
  return pow (10.0, floor (log10 (m)) - 1);
}

static GtkWidget *
spin_for_double (GParamSpecDouble *d, double value)
{
  GtkWidget *spin = gtk_spin_button_new_with_range (d->minimum, d->maximum, step_for (d->minimum, d->maximum, value));

  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 4);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), value);
  gtk_widget_set_hexpand (spin, TRUE);
  return spin;
}

/* phase-mask: which parameters its source uses */
static gboolean
relevant (AiryElement *e, const char *name)
{
  int source;

  if (!g_str_equal (airy_element_get_type_name (e), "phase-mask"))
    return TRUE;
  source = airy_element_get_enum (e, "source");
  if (g_str_equal (name, "source") || g_str_equal (name, "wrap") || g_str_equal (name, "bits")
      || g_str_equal (name, "pupil-radius"))
    return TRUE;
  if (g_str_equal (name, "value"))
    return source == 0;
  if (g_str_equal (name, "file") || g_str_has_prefix (name, "phase-"))
    return source == 1;
  if (g_str_has_prefix (name, "zernike-"))
    return source == 2;
  return source == 3;   /* named, strength, count, defocus, period, angle */
}

/* The Zernike table: one row per term (index, coefficient), both arrays
 * written back on every edit. */
typedef struct
{
  AiryBenchPanel *panel;
  AiryElement    *element;
  GtkWidget      *rows;
  GPtrArray      *index_spins;
  GPtrArray      *coef_spins;
} ZernikeTable;

static void
zernike_store (ZernikeTable *t)
{
  g_autofree double *idx = g_new0 (double, t->index_spins->len + 1);
  g_autofree double *coef = g_new0 (double, t->index_spins->len + 1);
  guint i;

  for (i = 0; i < t->index_spins->len; i++)
    {
      idx[i] = gtk_spin_button_get_value (g_ptr_array_index (t->index_spins, i));
      coef[i] = gtk_spin_button_get_value (g_ptr_array_index (t->coef_spins, i));
    }
  g_object_set (t->element,
                "zernike-indices", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, idx, t->index_spins->len, sizeof (double)),
                "zernike-coefficients", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, coef, t->index_spins->len, sizeof (double)),
                NULL);
}

static void
zernike_table_free (gpointer data)
{
  ZernikeTable *t = data;

  g_ptr_array_unref (t->index_spins);
  g_ptr_array_unref (t->coef_spins);
  g_object_unref (t->element);
  g_free (t);
}

static void
on_zernike_value (GtkSpinButton *spin, ZernikeTable *t)
{
  zernike_store (t);
  changed (t->panel);
}

static void
on_zernike_add (GtkButton *button, ZernikeTable *t)
{
  gsize n = 0;
  const double *idx = airy_element_get_doubles (t->element, "zernike-indices", &n);
  g_autofree double *ni = g_new0 (double, n + 1);
  g_autofree double *nc = g_new0 (double, n + 1);
  gsize nc_n = 0;
  const double *coef = airy_element_get_doubles (t->element, "zernike-coefficients", &nc_n);

  if (n)
    memcpy (ni, idx, n * sizeof (double));
  if (nc_n)
    memcpy (nc, coef, MIN (n, nc_n) * sizeof (double));
  ni[n] = n ? ni[n - 1] + 1 : 4;     /* next index; defocus to start */
  g_object_set (t->element,
                "zernike-indices", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, ni, n + 1, sizeof (double)),
                "zernike-coefficients", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, nc, n + 1, sizeof (double)),
                NULL);
  rebuild_later (t->panel);
}

static void
on_zernike_remove (GtkButton *button, ZernikeTable *t)
{
  guint row = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "row"));

  g_ptr_array_remove_index (t->index_spins, row);
  g_ptr_array_remove_index (t->coef_spins, row);
  zernike_store (t);
  rebuild_later (t->panel);
}

static GtkWidget *
zernike_editor (AiryBenchPanel *self, AiryElement *e, const char *prefix)
{
  ZernikeTable *t = g_new0 (ZernikeTable, 1);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *add = gtk_button_new_with_label (_("Add term"));
  const double *idx, *coef;
  gsize n = 0, nc = 0, i;

  t->panel = self;
  t->element = g_object_ref (e);
  t->index_spins = g_ptr_array_new ();
  t->coef_spins = g_ptr_array_new ();
  g_object_set_data_full (G_OBJECT (box), "zernike-table", t, zernike_table_free);
  idx = airy_element_get_doubles (e, "zernike-indices", &n);
  coef = airy_element_get_doubles (e, "zernike-coefficients", &nc);
  gtk_box_append (GTK_BOX (box), gtk_label_new (_("Zernike terms (index, coefficient)")));
  for (i = 0; i < n; i++)
    {
      GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
      GtkWidget *is = gtk_spin_button_new_with_range (0, 230, 1);
      GtkWidget *cs = gtk_spin_button_new_with_range (-1000, 1000, 0.01);
      GtkWidget *rm = gtk_button_new_from_icon_name ("list-remove-symbolic");
      g_autofree char *ipath = g_strdup_printf ("%s.zernike-indices[%" G_GSIZE_FORMAT "]", prefix, i);
      g_autofree char *cpath = g_strdup_printf ("%s.zernike-coefficients[%" G_GSIZE_FORMAT "]", prefix, i);

      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (cs), 4);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (is), idx[i]);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (cs), i < nc ? coef[i] : 0.0);
      gtk_widget_set_hexpand (cs, TRUE);
      g_object_set_data (G_OBJECT (rm), "row", GUINT_TO_POINTER (i));
      g_ptr_array_add (t->index_spins, is);
      g_ptr_array_add (t->coef_spins, cs);
      g_signal_connect (is, "value-changed", G_CALLBACK (on_zernike_value), t);
      g_signal_connect (cs, "value-changed", G_CALLBACK (on_zernike_value), t);
      g_signal_connect (rm, "clicked", G_CALLBACK (on_zernike_remove), t);
      register_editor (self, ipath, is);
      register_editor (self, cpath, cs);
      gtk_box_append (GTK_BOX (row), is);
      gtk_box_append (GTK_BOX (row), cs);
      gtk_box_append (GTK_BOX (row), rm);
      gtk_box_append (GTK_BOX (box), row);
    }
  g_signal_connect (add, "clicked", G_CALLBACK (on_zernike_add), t);
  gtk_box_append (GTK_BOX (box), add);
  {
    g_autofree char *p1 = g_strdup_printf ("%s.zernike-indices", prefix);
    g_autofree char *p2 = g_strdup_printf ("%s.zernike-coefficients", prefix);
    register_editor (self, p1, box);
    register_editor (self, p2, box);
  }
  return box;
}

static void
add_editors (AiryBenchPanel *self, GtkGrid *grid, AiryElement *e, const char *prefix, const char *const *skip)
{
  g_autofree GParamSpec **pspecs = NULL;
  guint n, i, row = 0;

  pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);
  for (i = 0; i < n; i++)
    {
      GParamSpec *pspec = pspecs[i];
      const char *unit = airy_param_spec_get_unit (pspec);
      AiryParamFlags flags = airy_param_spec_get_flags (pspec);
      g_autofree char *path = g_strdup_printf ("%s.%s", prefix, pspec->name);
      g_autofree char *range = airy_param_spec_range_string (pspec);
      /* the engine marks nicks and blurbs for translation in the same domain */
      g_autofree char *tip = g_strdup_printf ("%s %s", _(g_param_spec_get_blurb (pspec)), range);
      g_autofree char *text = unit ? g_strdup_printf ("%s (%s)", _(g_param_spec_get_nick (pspec)), unit)
                                   : g_strdup (_(g_param_spec_get_nick (pspec)));
      GtkWidget *label, *editor = NULL, *focus = NULL;

      if (g_str_equal (pspec->name, "enabled") || (skip && g_strv_contains (skip, pspec->name))
          || !relevant (e, pspec->name) || g_str_equal (pspec->name, "zernike-coefficients"))
        continue;
      if (g_str_equal (pspec->name, "zernike-indices"))
        {
          editor = zernike_editor (self, e, prefix);
          gtk_grid_attach (grid, editor, 0, (int) row++, 2, 1);
          continue;
        }
      if (G_IS_PARAM_SPEC_DOUBLE (pspec))
        {
          GtkWidget *spin = spin_for_double (G_PARAM_SPEC_DOUBLE (pspec), airy_element_get_double (e, pspec->name));

          g_signal_connect_data (spin, "value-changed", G_CALLBACK (on_double),
                                 binding_new (self, e, pspec), binding_free, 0);
          focus = spin;
          if (flags & AIRY_PARAM_PHASE)
            {
              /* a slider over one turn either way, the spin for the rest */
              GtkWidget *scale = gtk_scale_new (GTK_ORIENTATION_HORIZONTAL,
                                                gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (spin)));
              GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);

              gtk_scale_set_draw_value (GTK_SCALE (scale), FALSE);
              gtk_range_set_range (GTK_RANGE (scale), -2 * G_PI, 2 * G_PI);
              gtk_range_set_value (GTK_RANGE (scale), airy_element_get_double (e, pspec->name));
              gtk_widget_set_size_request (scale, 120, -1);
              gtk_box_append (GTK_BOX (box), scale);
              gtk_box_append (GTK_BOX (box), spin);
              editor = box;
            }
          else
            editor = spin;
        }
      else if (G_IS_PARAM_SPEC_INT (pspec))
        {
          GParamSpecInt *ip = G_PARAM_SPEC_INT (pspec);
          editor = gtk_spin_button_new_with_range (ip->minimum, ip->maximum, 1);
          gtk_spin_button_set_value (GTK_SPIN_BUTTON (editor), airy_element_get_int (e, pspec->name));
          g_signal_connect_data (editor, "value-changed", G_CALLBACK (on_int),
                                 binding_new (self, e, pspec), binding_free, 0);
        }
      else if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
        {
          editor = gtk_check_button_new ();
          gtk_check_button_set_active (GTK_CHECK_BUTTON (editor), airy_element_get_boolean (e, pspec->name));
          g_signal_connect_data (editor, "notify::active", G_CALLBACK (on_bool),
                                 binding_new (self, e, pspec), binding_free, 0);
        }
      else if (G_IS_PARAM_SPEC_ENUM (pspec))
        {
          GEnumClass *klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
          g_autofree const char **nicks = g_new0 (const char *, klass->n_values + 1);
          int value = airy_element_get_enum (e, pspec->name);
          guint k, selected = 0;

          for (k = 0; k < klass->n_values; k++)
            {
              nicks[k] = klass->values[k].value_nick;
              if (klass->values[k].value == value)
                selected = k;
            }
          editor = gtk_drop_down_new_from_strings (nicks);
          gtk_drop_down_set_selected (GTK_DROP_DOWN (editor), selected);
          g_signal_connect_data (editor, "notify::selected", G_CALLBACK (on_enum),
                                 binding_new (self, e, pspec), binding_free, 0);
        }
      else if (G_IS_PARAM_SPEC_STRING (pspec))
        {
          GtkWidget *entry = gtk_entry_new ();
          const char *v = airy_element_get_string (e, pspec->name);

          gtk_editable_set_text (GTK_EDITABLE (entry), v ? v : "");
          gtk_widget_set_hexpand (entry, TRUE);
          g_signal_connect_data (entry, "changed", G_CALLBACK (on_string),
                                 binding_new (self, e, pspec), binding_free, 0);
          focus = entry;
          if (flags & AIRY_PARAM_FILE)
            {
              GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 2);
              GtkWidget *browse = gtk_button_new_from_icon_name ("document-open-symbolic");

              gtk_widget_set_tooltip_text (browse, _("Choose a file"));
              g_signal_connect (browse, "clicked", G_CALLBACK (on_browse), entry);
              gtk_box_append (GTK_BOX (box), entry);
              gtk_box_append (GTK_BOX (box), browse);
              editor = box;
            }
          else
            editor = entry;
        }
      if (editor == NULL)
        continue;
      label = gtk_label_new (text);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_set_tooltip_text (label, tip);
      gtk_widget_set_tooltip_text (editor, tip);
      gtk_grid_attach (grid, label, 0, (int) row, 1, 1);
      gtk_grid_attach (grid, editor, 1, (int) row++, 1, 1);
      register_editor (self, path, focus ? focus : editor);
    }
}

static GtkWidget *
editor_grid (void)
{
  GtkWidget *grid = gtk_grid_new ();

  gtk_grid_set_row_spacing (GTK_GRID (grid), 3);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 8);
  gtk_widget_set_margin_start (grid, 12);
  gtk_widget_set_margin_bottom (grid, 6);
  return grid;
}

static GtkWidget *
error_label_new (void)
{
  GtkWidget *label = gtk_label_new ("");

  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "airy-error");
  gtk_widget_set_visible (label, FALSE);
  return label;
}

/* ---- element rows ---- */

static void
on_enabled (GtkCheckButton *check, GParamSpec *pspec, AiryBenchPanel *self)
{
  AiryElement *e = g_object_get_data (G_OBJECT (check), "element");

  airy_element_set_enabled (e, gtk_check_button_get_active (check));
  changed (self);
}

static void
move_element (AiryBenchPanel *self, guint from, guint to)
{
  GPtrArray *elements = airy_system_get_elements (self->system);
  gpointer e;

  if (from >= elements->len || to >= elements->len || from == to)
    return;
  e = g_ptr_array_steal_index (elements, from);
  g_ptr_array_insert (elements, (int) to, e);
  rebuild_later (self);
}

static void
on_move (GtkButton *button, AiryBenchPanel *self)
{
  guint i = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "index"));
  int dir = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "dir"));

  if ((int) i + dir >= 0)
    move_element (self, i, (guint) ((int) i + dir));
}

static void
on_remove (GtkButton *button, AiryBenchPanel *self)
{
  guint i = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "index"));
  GPtrArray *elements = airy_system_get_elements (self->system);

  if (i < elements->len)
    g_ptr_array_remove_index (elements, i);
  rebuild_later (self);
}

static GdkContentProvider *
on_drag_prepare (GtkDragSource *source, double x, double y, gpointer data)
{
  guint i = GPOINTER_TO_UINT (data);
  return gdk_content_provider_new_typed (G_TYPE_UINT, i);
}

static gboolean
on_row_drop (GtkDropTarget *target, const GValue *value, double x, double y, AiryBenchPanel *self)
{
  guint to = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (target), "index"));

  if (!G_VALUE_HOLDS_UINT (value))
    return FALSE;
  move_element (self, g_value_get_uint (value), to);
  return TRUE;
}

static GtkWidget *
element_row (AiryBenchPanel *self, AiryElement *e, guint index, gboolean movable)
{
  AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);
  g_autofree char *prefix = g_strdup_printf ("elements[%u]", index);
  GtkWidget *expander = gtk_expander_new (NULL);
  GtkWidget *header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GtkWidget *check = gtk_check_button_new ();
  GtkWidget *title = gtk_label_new (_(klass->title));
  GtkWidget *body = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *grid = editor_grid ();
  GtkWidget *err = error_label_new ();
  GtkDragSource *drag = gtk_drag_source_new ();
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_UINT, GDK_ACTION_MOVE);
  const char *buttons[3][2] = { { "go-up-symbolic", N_("Move up") }, { "go-down-symbolic", N_("Move down") },
                                { "user-trash-symbolic", N_("Remove") } };
  guint b;

  gtk_check_button_set_active (GTK_CHECK_BUTTON (check), airy_element_get_enabled (e));
  gtk_widget_set_tooltip_text (check, _("Enabled"));
  g_object_set_data_full (G_OBJECT (check), "element", g_object_ref (e), g_object_unref);
  g_signal_connect (check, "notify::active", G_CALLBACK (on_enabled), self);
  gtk_widget_set_hexpand (title, TRUE);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_box_append (GTK_BOX (header), check);
  gtk_box_append (GTK_BOX (header), title);
  for (b = 0; movable && b < 3; b++)
    {
      GtkWidget *button = gtk_button_new_from_icon_name (buttons[b][0]);

      gtk_widget_add_css_class (button, "flat");
      gtk_widget_set_tooltip_text (button, _(buttons[b][1]));
      g_object_set_data (G_OBJECT (button), "index", GUINT_TO_POINTER (index));
      g_object_set_data (G_OBJECT (button), "dir", GINT_TO_POINTER (b == 0 ? -1 : 1));
      g_signal_connect (button, "clicked", G_CALLBACK (b < 2 ? (GCallback) on_move : (GCallback) on_remove), self);
      gtk_box_append (GTK_BOX (header), button);
    }
  gtk_expander_set_label_widget (GTK_EXPANDER (expander), header);
  add_editors (self, GTK_GRID (grid), e, prefix, NULL);
  gtk_box_append (GTK_BOX (body), err);
  gtk_box_append (GTK_BOX (body), grid);
  gtk_expander_set_child (GTK_EXPANDER (expander), body);
  g_hash_table_replace (self->row_errors, g_strdup (prefix), err);
  register_editor (self, prefix, expander);

  /* reorder by drag and drop */
  if (movable)
    {
      g_signal_connect (drag, "prepare", G_CALLBACK (on_drag_prepare), GUINT_TO_POINTER (index));
      gtk_widget_add_controller (header, GTK_EVENT_CONTROLLER (drag));
      g_object_set_data (G_OBJECT (drop), "index", GUINT_TO_POINTER (index));
      g_signal_connect (drop, "drop", G_CALLBACK (on_row_drop), self);
      gtk_widget_add_controller (expander, GTK_EVENT_CONTROLLER (drop));
    }
  else
    {
      g_object_unref (g_object_ref_sink (drag));
      g_object_unref (g_object_ref_sink (drop));
    }
  return expander;
}

static void
action_add (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryBenchPanel *self = data;
  g_autoptr(AiryElement) e = airy_element_new (g_variant_get_string (param, NULL), NULL);
  GPtrArray *elements = airy_system_get_elements (self->system);
  guint at = elements->len;

  if (e == NULL)
    return;
  /* before a final lens in a PSF system, so the mask sits in the pupil */
  if (!airy_system_is_microscope (self->system) && at > 1
      && AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (elements, at - 1))->category == AIRY_CATEGORY_LENS
      && AIRY_ELEMENT_GET_CLASS (e)->category == AIRY_CATEGORY_MASK)
    at--;
  g_ptr_array_insert (elements, (int) at, g_object_ref (e));
  rebuild_later (self);
}

static GMenuModel *
add_menu (gboolean microscope)
{
  static const char *titles[] = { N_("Sources"), N_("Masks"), N_("Lenses"), N_("Propagation"), N_("Sensor") };
  GMenu *menu = g_menu_new ();
  g_autofree GType *types = NULL;
  guint n, c, i;

  types = airy_element_list_types (&n);
  for (c = AIRY_CATEGORY_SOURCE; c <= AIRY_CATEGORY_PROPAGATION; c++)
    {
      g_autoptr(GMenu) section = g_menu_new ();

      if (microscope && c != AIRY_CATEGORY_MASK)
        continue;
      for (i = 0; i < n; i++)
        {
          g_autoptr(GTypeClass) klass = g_type_class_ref (types[i]);
          AiryElementClass *ec = (AiryElementClass *) klass;
          g_autoptr(GMenuItem) item = NULL;

          if (ec->category != c)
            continue;
          item = g_menu_item_new (_(ec->title), NULL);
          g_menu_item_set_action_and_target_value (item, "bench.add", g_variant_new_string (ec->type_name));
          g_menu_append_item (section, item);
        }
      g_menu_append_section (menu, _(titles[c]), G_MENU_MODEL (section));
    }
  return G_MENU_MODEL (menu);
}

/* ---- grid, spectrum, z, run ---- */

static GtkWidget *
frame (const char *title, GtkWidget *child)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *label = gtk_label_new (NULL);
  g_autofree char *markup = g_markup_printf_escaped ("<b>%s</b>", title);

  gtk_label_set_markup (GTK_LABEL (label), markup);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), child);
  gtk_widget_set_margin_bottom (box, 8);
  return box;
}

static void
grid_row (GtkGrid *grid, guint row, const char *text, GtkWidget *editor)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_grid_attach (grid, label, 0, (int) row, 1, 1);
  gtk_grid_attach (grid, editor, 1, (int) row, 1, 1);
  gtk_widget_set_hexpand (editor, TRUE);
}

static void
on_shape (GtkSpinButton *spin, AiryBenchPanel *self)
{
  guint h, w;

  airy_system_get_shape (self->system, &h, &w);
  if (g_str_equal (g_object_get_data (G_OBJECT (spin), "which"), "h"))
    h = (guint) gtk_spin_button_get_value_as_int (spin);
  else
    w = (guint) gtk_spin_button_get_value_as_int (spin);
  airy_system_set_shape (self->system, h, w);
  changed (self);
}

static void
on_spacing (GtkSpinButton *spin, AiryBenchPanel *self)
{
  airy_system_set_spacing (self->system, gtk_spin_button_get_value (spin));
  changed (self);
}

static gboolean
parse_list (const char *text, GArray *out)
{
  g_auto(GStrv) parts = g_strsplit_set (text, ", ;", -1);
  guint i;

  for (i = 0; parts[i]; i++)
    {
      char *end = NULL;
      double v;

      if (*parts[i] == '\0')
        continue;
      v = g_ascii_strtod (parts[i], &end);
      if (end == parts[i] || *end != '\0')
        return FALSE;
      g_array_append_val (out, v);
    }
  return TRUE;
}

static void
on_spectrum (GtkEditable *entry, AiryBenchPanel *self)
{
  GtkEditable *wl = g_hash_table_lookup (self->editors, "spectrum.wavelengths");
  GtkEditable *wt = g_hash_table_lookup (self->editors, "spectrum.weights");
  g_autoptr(GArray) lambdas = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) weights = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(AirySpectrum) spectrum = NULL;
  g_autoptr(GError) error = NULL;

  if (!parse_list (gtk_editable_get_text (wl), lambdas))
    {
      airy_bench_panel_show_error (self, _("spectrum.wavelengths: expected numbers separated by commas"));
      return;
    }
  if (!parse_list (gtk_editable_get_text (wt), weights))
    {
      airy_bench_panel_show_error (self, _("spectrum.weights: expected numbers separated by commas"));
      return;
    }
  if (weights->len != 0 && weights->len != lambdas->len)
    {
      g_autofree char *msg = g_strdup_printf (_("spectrum.weights: must have one weight per wavelength (%u), got %u"),
                                              lambdas->len, weights->len);
      airy_bench_panel_show_error (self, msg);
      return;
    }
  spectrum = airy_spectrum_new ((double *) lambdas->data, weights->len ? (double *) weights->data : NULL,
                                lambdas->len, &error);
  if (spectrum == NULL)
    {
      airy_bench_panel_show_error (self, error->message);
      return;
    }
  airy_system_set_spectrum (self->system, spectrum);
  changed (self);
}

static void
on_z (GtkSpinButton *spin, AiryBenchPanel *self)
{
  double start = gtk_spin_button_get_value (g_hash_table_lookup (self->editors, "z.start"));
  double stop = gtk_spin_button_get_value (g_hash_table_lookup (self->editors, "z.stop"));
  guint count = (guint) gtk_spin_button_get_value_as_int (g_hash_table_lookup (self->editors, "z.count"));

  airy_system_set_z_range (self->system, start, stop, count);
  changed (self);
}

static void
on_f_tube (GtkSpinButton *spin, AiryBenchPanel *self)
{
  airy_system_set_f_tube (self->system, gtk_spin_button_get_value (spin));
  changed (self);
}

static void
on_backend (GtkDropDown *drop, GParamSpec *pspec, AiryBenchPanel *self)
{
  GtkStringObject *item = gtk_drop_down_get_selected_item (drop);

  if (item == NULL)
    return;
  if (g_strcmp0 (self->backend, gtk_string_object_get_string (item)) == 0)
    return;
  g_free (self->backend);
  self->backend = g_strdup (gtk_string_object_get_string (item));
  g_array_set_size (self->devices, 0);
  rebuild_later (self);    /* the device list is the backend's */
}

static void
on_device (GtkCheckButton *check, GParamSpec *pspec, AiryBenchPanel *self)
{
  guint i, chosen = 0;

  if (self->building)
    return;
  g_array_set_size (self->devices, 0);
  for (i = 0; i < self->device_checks->len; i++)
    if (gtk_check_button_get_active (g_ptr_array_index (self->device_checks, i)))
      {
        g_array_append_val (self->devices, i);
        chosen++;
      }
  if (chosen == 0)
    {
      /* a run needs a device: keep this one */
      self->building = TRUE;
      gtk_check_button_set_active (check, TRUE);
      self->building = FALSE;
      on_device (check, pspec, self);
      return;
    }
  if (chosen == self->device_checks->len)
    g_array_set_size (self->devices, 0);
  changed (self);
}

static void
on_threads (GtkSpinButton *spin, AiryBenchPanel *self)
{
  self->threads = (guint) gtk_spin_button_get_value_as_int (spin);
  changed (self);
}

/* ---- sample ---- */

static void
on_sample_kind (GtkDropDown *drop, GParamSpec *pspec, AiryBenchPanel *self)
{
  AirySample s = *airy_system_get_sample (self->system);
  guint k = gtk_drop_down_get_selected (drop);

  s.file = NULL;
  if (k == 0)
    s = (AirySample) { AIRY_SAMPLE_CONSTANT, 1.0 };
  else if (k == 1)
    s = (AirySample) { AIRY_SAMPLE_BEADS, 0.0, NULL, 40, 1, 1.0 };
  else
    s = (AirySample) { AIRY_SAMPLE_FILE, 0.0, (char *) "" };
  airy_system_set_sample (self->system, &s);
  rebuild_later (self);
}

static void
on_sample_value (GtkWidget *widget, AiryBenchPanel *self)
{
  AirySample s = *airy_system_get_sample (self->system);
  const char *which = g_object_get_data (G_OBJECT (widget), "which");
  g_autofree char *file = NULL;

  if (g_str_equal (which, "constant"))
    s.value = gtk_spin_button_get_value (GTK_SPIN_BUTTON (widget));
  else if (g_str_equal (which, "count"))
    s.count = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (widget));
  else if (g_str_equal (which, "seed"))
    s.seed = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (widget));
  else
    s.file = file = g_strdup (gtk_editable_get_text (GTK_EDITABLE (widget)));
  airy_system_set_sample (self->system, &s);
  changed (self);
}

static GtkWidget *
sample_editor (AiryBenchPanel *self)
{
  static const char *kinds[] = { N_("Constant"), N_("Beads"), N_("TIFF volume"), NULL };
  const AirySample *s = airy_system_get_sample (self->system);
  GtkWidget *grid = editor_grid ();
  const char *translated[4] = { _(kinds[0]), _(kinds[1]), _(kinds[2]), NULL };
  GtkWidget *kind = gtk_drop_down_new_from_strings (translated);
  guint row = 0;

  gtk_drop_down_set_selected (GTK_DROP_DOWN (kind), s->kind == AIRY_SAMPLE_BEADS ? 1 : s->kind == AIRY_SAMPLE_FILE ? 2 : 0);
  g_signal_connect (kind, "notify::selected", G_CALLBACK (on_sample_kind), self);
  grid_row (GTK_GRID (grid), row++, _("Sample"), kind);
  if (s->kind == AIRY_SAMPLE_BEADS)
    {
      GtkWidget *count = gtk_spin_button_new_with_range (0, 1e6, 1);
      GtkWidget *seed = gtk_spin_button_new_with_range (0, G_MAXINT, 1);

      gtk_spin_button_set_value (GTK_SPIN_BUTTON (count), s->count);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (seed), s->seed);
      g_object_set_data (G_OBJECT (count), "which", (gpointer) "count");
      g_object_set_data (G_OBJECT (seed), "which", (gpointer) "seed");
      g_signal_connect (count, "value-changed", G_CALLBACK (on_sample_value), self);
      g_signal_connect (seed, "value-changed", G_CALLBACK (on_sample_value), self);
      grid_row (GTK_GRID (grid), row++, _("Beads"), count);
      grid_row (GTK_GRID (grid), row++, _("Seed"), seed);
      register_editor (self, "sample.beads.count", count);
      register_editor (self, "sample.beads.seed", seed);
    }
  else if (s->kind == AIRY_SAMPLE_FILE)
    {
      GtkWidget *entry = gtk_entry_new ();
      GtkWidget *browse = gtk_button_new_from_icon_name ("document-open-symbolic");
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 2);

      gtk_editable_set_text (GTK_EDITABLE (entry), s->file ? s->file : "");
      gtk_widget_set_hexpand (entry, TRUE);
      g_object_set_data (G_OBJECT (entry), "which", (gpointer) "file");
      g_signal_connect (entry, "changed", G_CALLBACK (on_sample_value), self);
      g_signal_connect (browse, "clicked", G_CALLBACK (on_browse), entry);
      gtk_box_append (GTK_BOX (box), entry);
      gtk_box_append (GTK_BOX (box), browse);
      grid_row (GTK_GRID (grid), row++, _("Volume"), box);
      register_editor (self, "sample.file", entry);
    }
  else
    {
      GtkWidget *value = gtk_spin_button_new_with_range (0, 1e12, 0.1);

      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (value), 3);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (value), s->value);
      g_object_set_data (G_OBJECT (value), "which", (gpointer) "constant");
      g_signal_connect (value, "value-changed", G_CALLBACK (on_sample_value), self);
      grid_row (GTK_GRID (grid), row++, _("Value"), value);
      register_editor (self, "sample.constant", value);
    }
  register_editor (self, "sample", kind);
  return grid;
}

/* ---- mode ---- */

static void
on_mode (GtkDropDown *drop, GParamSpec *pspec, AiryBenchPanel *self)
{
  gboolean microscope = gtk_drop_down_get_selected (drop) == 1;
  GPtrArray *elements = airy_system_get_elements (self->system);
  guint i;

  if (microscope == airy_system_is_microscope (self->system))
    return;
  if (microscope)
    {
      /* the source becomes the objective, the final lens the tube lens;
       * masks stay in the pupil */
      g_autoptr(AiryElement) objective = NULL;
      double f_tube = 100.0;
      AirySample beads = { AIRY_SAMPLE_BEADS, 0.0, NULL, 40, 1, 1.0 };
      g_autoptr(AiryElement) sensor = airy_element_new ("sensor", NULL);

      if (elements->len && g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, 0)),
                                        "objective-point-source"))
        objective = g_object_ref (g_ptr_array_index (elements, 0));
      else
        objective = airy_element_new ("objective-point-source", NULL);
      f_tube = airy_element_get_double (objective, "f");
      for (i = elements->len; i-- > 0;)
        {
          AiryElement *e = g_ptr_array_index (elements, i);
          AiryCategory c = AIRY_ELEMENT_GET_CLASS (e)->category;

          if (c == AIRY_CATEGORY_LENS && g_str_equal (airy_element_get_type_name (e), "ff-lens"))
            f_tube = airy_element_get_double (e, "f");
          if (c != AIRY_CATEGORY_MASK)
            g_ptr_array_remove_index (elements, i);
        }
      airy_system_make_microscope (self->system, objective, f_tube);
      g_object_set (sensor, "reduce", 1, NULL);
      airy_system_set_sensor (self->system, sensor);
      airy_system_set_sample (self->system, &beads);
      airy_system_set_spacing (self->system, 0.1);
    }
  else
    {
      AiryElement *objective = airy_system_get_objective (self->system);
      AiryElement *lens = airy_element_new ("ff-lens", NULL);
      AirySample none = { AIRY_SAMPLE_NONE };

      g_object_set (lens, "f", airy_system_get_f_tube (self->system),
                    "n", airy_element_get_double (objective, "n"), NULL);
      g_ptr_array_insert (elements, 0, g_object_ref (objective));
      g_ptr_array_add (elements, lens);
      airy_system_make_microscope (self->system, NULL, 0.0);
      airy_system_set_sensor (self->system, NULL);
      airy_system_set_sample (self->system, &none);
      airy_system_set_spacing (self->system, 0.5);
    }
  rebuild_later (self);
}

/* ---- derived figures ---- */

static void
update_derived (AiryBenchPanel *self)
{
  const AirySpectrum *sp = airy_system_get_spectrum (self->system);
  GPtrArray *elements = airy_system_get_elements (self->system);
  AiryElement *objective = airy_system_is_microscope (self->system) ? airy_system_get_objective (self->system)
                           : (elements->len && g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, 0)),
                                                            "objective-point-source")
                              ? g_ptr_array_index (elements, 0) : NULL);
  g_autoptr(GString) s = g_string_new (NULL);
  double lambda = sp->wavelengths[0], spacing = airy_system_get_spacing (self->system);
  guint h, w, nz;
  g_autofree char *mem = NULL;

  airy_system_get_shape (self->system, &h, &w);
  airy_system_get_z (self->system, &nz);
  if (objective)
    {
      double f = airy_element_get_double (objective, "f"), n = airy_element_get_double (objective, "n");
      double na = airy_element_get_double (objective, "na");
      double dx = spacing, du = 0.0;

      if (airy_system_is_microscope (self->system))
        {
          dx = airy_system_get_f_tube (self->system) * lambda / (n * w * spacing);
          du = spacing;
        }
      else if (elements->len > 1 && g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, elements->len - 1)), "ff-lens"))
        {
          AiryElement *lens = g_ptr_array_index (elements, elements->len - 1);
          du = airy_element_get_double (lens, "f") * lambda / (airy_element_get_double (lens, "n") * w * spacing);
        }
      g_string_append_printf (s, _("Pupil radius %.1f px of %u"), f * na / n / dx, w / 2);
      if (du > 0)
        g_string_append_printf (s, _("\nOutput pixel %.4g µm; Nyquist λ/(4·NA) = %.4g µm: %s"), du,
                                lambda / (4 * na), du <= lambda / (4 * na) ? _("sampled") : _("undersampled"));
    }
  mem = airy_format_bytes ((guint64) (airy_system_is_microscope (self->system) ? 1 : nz) * h * w * 4);
  g_string_append_printf (s, _("\nResult %s (%u plane%s of %u × %u)"), mem,
                          airy_system_is_microscope (self->system) ? 1 : nz,
                          (airy_system_is_microscope (self->system) ? 1 : nz) == 1 ? "" : "s", h, w);
  gtk_label_set_text (GTK_LABEL (self->derived_label), s->str);
}

/* ---- building ---- */

static void
rebuild (AiryBenchPanel *self)
{
  static const char *modes[] = { N_("Point spread function"), N_("Microscope image"), NULL };
  GtkWidget *box, *grid, *spin, *entry, *mode, *add, *drop;
  g_autoptr(GtkStringList) backends = gtk_string_list_new (NULL);
  g_autoptr(GPtrArray) list = airy_backend_list ();
  GPtrArray *elements;
  const AirySpectrum *sp;
  const double *z;
  guint h, w, nz, i, row = 0, selected = 0;
  g_autoptr(GString) wl = g_string_new (NULL);
  g_autoptr(GString) wt = g_string_new (NULL);
  const char *translated[3];
  gboolean microscope;

  self->building = TRUE;
  if (self->content)
    gtk_box_remove (GTK_BOX (self), self->content);
  g_hash_table_remove_all (self->editors);
  g_hash_table_remove_all (self->row_errors);
  g_ptr_array_set_size (self->marked, 0);
  self->content = box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  gtk_box_append (GTK_BOX (self), box);
  if (self->system == NULL)
    {
      self->building = FALSE;
      return;
    }
  microscope = airy_system_is_microscope (self->system);
  elements = airy_system_get_elements (self->system);

  translated[0] = _(modes[0]);
  translated[1] = _(modes[1]);
  translated[2] = NULL;
  mode = gtk_drop_down_new_from_strings (translated);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (mode), microscope ? 1 : 0);
  g_signal_connect (mode, "notify::selected", G_CALLBACK (on_mode), self);
  register_editor (self, "mode", mode);
  gtk_box_append (GTK_BOX (box), frame (_("Mode"), mode));

  /* grid, spectrum, z */
  grid = editor_grid ();
  airy_system_get_shape (self->system, &h, &w);
  spin = gtk_spin_button_new_with_range (1, 16384, 16);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), h);
  g_object_set_data (G_OBJECT (spin), "which", (gpointer) "h");
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_shape), self);
  grid_row (GTK_GRID (grid), row++, _("Height (px)"), spin);
  register_editor (self, "grid.shape", spin);
  register_editor (self, "grid.shape[0]", spin);
  spin = gtk_spin_button_new_with_range (1, 16384, 16);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), w);
  g_object_set_data (G_OBJECT (spin), "which", (gpointer) "w");
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_shape), self);
  grid_row (GTK_GRID (grid), row++, _("Width (px)"), spin);
  register_editor (self, "grid.shape[1]", spin);
  spin = gtk_spin_button_new_with_range (0, 10000, 0.01);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 4);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), airy_system_get_spacing (self->system));
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_spacing), self);
  grid_row (GTK_GRID (grid), row++, microscope ? _("Camera pixel (µm)") : _("Pupil spacing (µm)"), spin);
  register_editor (self, "grid.spacing", spin);

  sp = airy_system_get_spectrum (self->system);
  for (i = 0; i < sp->n; i++)
    {
      g_string_append_printf (wl, "%s%g", i ? ", " : "", sp->wavelengths[i]);
      g_string_append_printf (wt, "%s%g", i ? ", " : "", sp->weights[i]);
    }
  entry = gtk_entry_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), wl->str);
  g_signal_connect (entry, "activate", G_CALLBACK (on_spectrum), self);
  gtk_widget_set_tooltip_text (entry, _("Vacuum wavelengths in µm, separated by commas; press Enter"));
  grid_row (GTK_GRID (grid), row++, _("Wavelengths (µm)"), entry);
  register_editor (self, "spectrum.wavelengths", entry);
  entry = gtk_entry_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), wt->str);
  g_signal_connect (entry, "activate", G_CALLBACK (on_spectrum), self);
  gtk_widget_set_tooltip_text (entry, _("One weight per wavelength (normalised); press Enter"));
  grid_row (GTK_GRID (grid), row++, _("Weights"), entry);
  register_editor (self, "spectrum.weights", entry);

  z = airy_system_get_z (self->system, &nz);
  spin = gtk_spin_button_new_with_range (-1e6, 1e6, 0.1);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 3);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), z[0]);
  register_editor (self, "z.start", spin);
  grid_row (GTK_GRID (grid), row++, _("z from (µm)"), spin);
  spin = gtk_spin_button_new_with_range (-1e6, 1e6, 0.1);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 3);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), z[nz - 1]);
  register_editor (self, "z.stop", spin);
  grid_row (GTK_GRID (grid), row++, _("z to (µm)"), spin);
  spin = gtk_spin_button_new_with_range (0, 100000, 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), nz);
  register_editor (self, "z.count", spin);
  grid_row (GTK_GRID (grid), row++, _("z planes"), spin);
  g_signal_connect (g_hash_table_lookup (self->editors, "z.start"), "value-changed", G_CALLBACK (on_z), self);
  g_signal_connect (g_hash_table_lookup (self->editors, "z.stop"), "value-changed", G_CALLBACK (on_z), self);
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_z), self);

  /* backend and threads */
  for (i = 0; i < list->len; i++)
    {
      AiryBackend *b = g_ptr_array_index (list, i);
      if (!b->available)
        continue;
      if (g_strcmp0 (airy_backend_get_name (b), self->backend) == 0)
        selected = g_list_model_get_n_items (G_LIST_MODEL (backends));
      gtk_string_list_append (backends, airy_backend_get_name (b));
    }
  drop = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (backends)), NULL);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (drop), selected);
  g_signal_connect (drop, "notify::selected", G_CALLBACK (on_backend), self);
  grid_row (GTK_GRID (grid), row++, _("Backend"), drop);
  register_editor (self, "backend", drop);
  /* the backend's devices, as check boxes (all by default) */
  g_ptr_array_set_size (self->device_checks, 0);
  {
    AiryBackend *b = airy_backend_lookup (self->backend ? self->backend : "cpu");
    GtkWidget *dbox = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
    guint d, n = b ? airy_backend_n_devices (b) : 0;

    for (d = 0; d < n; d++)
      {
        AiryDeviceInfo info = { 0 };
        g_autofree char *label = NULL;
        g_autofree char *path = g_strdup_printf ("devices[%u]", d);
        GtkWidget *check;
        gboolean on = self->devices->len == 0;
        guint k;

        airy_backend_device_info (b, d, &info);
        label = g_strdup_printf ("%u: %s", d, info.name);
        airy_device_info_clear (&info);
        for (k = 0; k < self->devices->len; k++)
          on |= g_array_index (self->devices, guint, k) == d;
        check = gtk_check_button_new_with_label (label);
        gtk_check_button_set_active (GTK_CHECK_BUTTON (check), on);
        g_signal_connect (check, "notify::active", G_CALLBACK (on_device), self);
        g_ptr_array_add (self->device_checks, check);
        register_editor (self, path, check);
        gtk_box_append (GTK_BOX (dbox), check);
      }
    grid_row (GTK_GRID (grid), row++, _("Devices"), dbox);
    register_editor (self, "devices", dbox);
  }
  spin = gtk_spin_button_new_with_range (0, 256, 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), self->threads);
  gtk_widget_set_tooltip_text (spin, _("Host threads (0: all cores)"));
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_threads), self);
  grid_row (GTK_GRID (grid), row++, _("Threads"), spin);
  register_editor (self, "threads", spin);
  gtk_box_append (GTK_BOX (box), frame (_("Grid and run"), grid));

  self->derived_label = gtk_label_new ("");
  gtk_label_set_xalign (GTK_LABEL (self->derived_label), 0);
  gtk_label_set_wrap (GTK_LABEL (self->derived_label), TRUE);
  gtk_widget_add_css_class (self->derived_label, "dim-label");
  gtk_box_append (GTK_BOX (box), self->derived_label);
  self->warnings_label = gtk_label_new ("");
  gtk_label_set_xalign (GTK_LABEL (self->warnings_label), 0);
  gtk_label_set_wrap (GTK_LABEL (self->warnings_label), TRUE);
  gtk_widget_add_css_class (self->warnings_label, "airy-warning");
  gtk_box_append (GTK_BOX (box), self->warnings_label);
  self->error_label = error_label_new ();
  gtk_box_append (GTK_BOX (box), self->error_label);

  if (microscope)
    {
      GtkWidget *mgrid = editor_grid ();
      GtkWidget *err = error_label_new ();
      GtkWidget *mbox = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      static const char *const none[] = { NULL };

      add_editors (self, GTK_GRID (mgrid), airy_system_get_objective (self->system), "microscope", none);
      spin = gtk_spin_button_new_with_range (0, 1e6, 1);
      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 2);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), airy_system_get_f_tube (self->system));
      g_signal_connect (spin, "value-changed", G_CALLBACK (on_f_tube), self);
      gtk_grid_attach (GTK_GRID (mgrid), gtk_label_new (_("Tube lens f (µm)")), 0, 100, 1, 1);
      gtk_grid_attach (GTK_GRID (mgrid), spin, 1, 100, 1, 1);
      register_editor (self, "microscope.f-tube", spin);
      gtk_box_append (GTK_BOX (mbox), err);
      gtk_box_append (GTK_BOX (mbox), mgrid);
      gtk_box_append (GTK_BOX (mbox), sample_editor (self));
      g_hash_table_replace (self->row_errors, g_strdup ("microscope"), err);
      g_hash_table_replace (self->row_errors, g_strdup ("sample"), err);
      gtk_box_append (GTK_BOX (box), frame (_("Microscope and sample"), mbox));
    }

  {
    GtkWidget *ebox = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
    g_autoptr(GMenuModel) menu = add_menu (microscope);

    for (i = 0; i < elements->len; i++)
      gtk_box_append (GTK_BOX (ebox), element_row (self, g_ptr_array_index (elements, i), i, TRUE));
    add = gtk_menu_button_new ();
    gtk_menu_button_set_label (GTK_MENU_BUTTON (add), _("Add element"));
    gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (add), menu);
    gtk_box_append (GTK_BOX (ebox), add);
    gtk_box_append (GTK_BOX (box), frame (microscope ? _("Pupil-plane elements") : _("Elements (source first)"), ebox));
  }

  if (airy_system_get_sensor (self->system))
    {
      GtkWidget *sgrid = editor_grid ();
      GtkWidget *err = error_label_new ();
      GtkWidget *sbox = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);

      add_editors (self, GTK_GRID (sgrid), airy_system_get_sensor (self->system), "sensor", NULL);
      gtk_box_append (GTK_BOX (sbox), err);
      gtk_box_append (GTK_BOX (sbox), sgrid);
      g_hash_table_replace (self->row_errors, g_strdup ("sensor"), err);
      gtk_box_append (GTK_BOX (box), frame (_("Sensor"), sbox));
    }
  update_derived (self);
  self->building = FALSE;
  if (self->error)
    {
      g_autofree char *again = g_strdup (self->error);
      airy_bench_panel_show_error (self, again);
    }
}

/* ---- public ---- */

void
airy_bench_panel_show_error (AiryBenchPanel *self,
                             const char     *message)
{
  GHashTableIter iter;
  gpointer key, value;
  guint i;

  for (i = 0; i < self->marked->len; i++)
    gtk_widget_remove_css_class (g_ptr_array_index (self->marked, i), "error");
  g_ptr_array_set_size (self->marked, 0);
  g_hash_table_iter_init (&iter, self->row_errors);
  while (g_hash_table_iter_next (&iter, &key, &value))
    gtk_widget_set_visible (value, FALSE);
  if (self->error_label)
    gtk_widget_set_visible (self->error_label, FALSE);
  if (message != self->error)
    {
      g_free (self->error);
      self->error = g_strdup (message);
    }
  if (message == NULL || self->error_label == NULL)
    return;

  {
    /* "elements[1].na: …" → mark that editor and tell its row */
    const char *colon = strstr (message, ": ");
    g_autofree char *path = colon ? g_strndup (message, colon - message) : NULL;
    GtkWidget *editor = NULL, *row_label = NULL;

    while (path && *path)
      {
        char *cut;

        if (editor == NULL)
          editor = g_hash_table_lookup (self->editors, path);
        if (row_label == NULL)
          row_label = g_hash_table_lookup (self->row_errors, path);
        if (editor && row_label)
          break;
        cut = MAX (strrchr (path, '.'), strrchr (path, '['));
        if (cut == NULL)
          break;
        *cut = '\0';
      }
    if (editor)
      {
        gtk_widget_add_css_class (editor, "error");
        g_ptr_array_add (self->marked, editor);
      }
    if (row_label)
      {
        GtkWidget *expander = gtk_widget_get_ancestor (row_label, GTK_TYPE_EXPANDER);

        gtk_label_set_text (GTK_LABEL (row_label), message);
        gtk_widget_set_visible (row_label, TRUE);
        if (expander)
          gtk_expander_set_expanded (GTK_EXPANDER (expander), TRUE);
      }
    else
      {
        gtk_label_set_text (GTK_LABEL (self->error_label), message);
        gtk_widget_set_visible (self->error_label, TRUE);
      }
  }
}

const char *
airy_bench_panel_get_error (AiryBenchPanel *self)
{
  return self->error;
}

void
airy_bench_panel_set_warnings (AiryBenchPanel *self,
                               GPtrArray      *warnings)
{
  g_autoptr(GString) s = g_string_new (NULL);
  guint i;

  for (i = 0; warnings && i < warnings->len; i++)
    g_string_append_printf (s, "%s⚠ %s", i ? "\n" : "", (char *) g_ptr_array_index (warnings, i));
  if (self->warnings_label)
    {
      gtk_label_set_text (GTK_LABEL (self->warnings_label), s->str);
      gtk_widget_set_visible (self->warnings_label, s->len > 0);
    }
  if (self->derived_label && self->system)
    update_derived (self);
}

GtkWidget *
airy_bench_panel_get_editor (AiryBenchPanel *self,
                             const char     *path)
{
  return g_hash_table_lookup (self->editors, path);
}

void
airy_bench_panel_set_system (AiryBenchPanel *self,
                             AirySystem     *system)
{
  g_set_object (&self->system, system);
  g_clear_pointer (&self->error, g_free);
  rebuild (self);
}

AirySystem *
airy_bench_panel_get_system (AiryBenchPanel *self)
{
  return self->system;
}

const char *
airy_bench_panel_get_backend (AiryBenchPanel *self)
{
  return self->backend;
}

void
airy_bench_panel_set_backend (AiryBenchPanel *self,
                              const char     *backend)
{
  g_free (self->backend);
  self->backend = g_strdup (backend);
}

guint
airy_bench_panel_get_threads (AiryBenchPanel *self)
{
  return self->threads;
}

const guint *
airy_bench_panel_get_devices (AiryBenchPanel *self,
                              guint          *n)
{
  *n = self->devices->len;
  return self->devices->len ? (const guint *) self->devices->data : NULL;
}

static void
airy_bench_panel_finalize (GObject *object)
{
  AiryBenchPanel *self = AIRY_BENCH_PANEL (object);

  g_clear_object (&self->system);
  g_hash_table_unref (self->editors);
  g_hash_table_unref (self->row_errors);
  g_ptr_array_unref (self->marked);
  g_ptr_array_unref (self->device_checks);
  g_array_unref (self->devices);
  g_free (self->error);
  g_free (self->backend);
  G_OBJECT_CLASS (airy_bench_panel_parent_class)->finalize (object);
}

static void
airy_bench_panel_class_init (AiryBenchPanelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = airy_bench_panel_finalize;
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
airy_bench_panel_init (AiryBenchPanel *self)
{
  static const GActionEntry entries[] = { { "add", action_add, "s" } };
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
  gtk_widget_set_margin_start (GTK_WIDGET (self), 8);
  gtk_widget_set_margin_end (GTK_WIDGET (self), 8);
  gtk_widget_set_margin_top (GTK_WIDGET (self), 6);
  self->editors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->row_errors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->marked = g_ptr_array_new ();
  self->devices = g_array_new (FALSE, FALSE, sizeof (guint));
  self->device_checks = g_ptr_array_new ();
  self->backend = g_strdup ("cpu");
  g_action_map_add_action_entries (G_ACTION_MAP (group), entries, G_N_ELEMENTS (entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "bench", G_ACTION_GROUP (group));
}

GtkWidget *
airy_bench_panel_new (void)
{
  return g_object_new (AIRY_TYPE_BENCH_PANEL, NULL);
}
