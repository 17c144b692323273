#define G_LOG_DOMAIN "airy-bench"

#include "config.h"

#include <string.h>
#include <glib/gi18n.h>

#include "airy-zernike-editor.h"
#include "airy-param-editor.h"

struct _AiryZernikeEditor
{
  GtkWidget    parent_instance;

  AiryElement *mask;
  char        *prefix;
  GHashTable  *editors;
  GtkWidget   *box;
  GtkWidget   *rows;
  GPtrArray   *index_spins;
  GPtrArray   *coef_spins;
  gulong       notify_ids[2];
  guint        rebuild_id;
  gboolean     storing;
};

G_DEFINE_FINAL_TYPE (AiryZernikeEditor, airy_zernike_editor, GTK_TYPE_WIDGET)

enum { SIGNAL_CHANGED, SIGNAL_INVALID, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *const arrays[] = { "zernike-indices", "zernike-coefficients" };

static GParamSpec *
array_spec (AiryZernikeEditor *self, guint which)
{
  return g_object_class_find_property (G_OBJECT_GET_CLASS (self->mask), arrays[which]);
}

static GVariant *
spins_variant (GPtrArray *spins, int row, double typed)
{
  g_autofree double *v = g_new0 (double, spins->len + 1);
  guint i;

  for (i = 0; i < spins->len; i++)
    v[i] = (int) i == row ? typed : gtk_spin_button_get_value (g_ptr_array_index (spins, i));
  return g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, v, spins->len, sizeof (double));
}

/* the terms as the spin buttons show them, into the element */
static void
store (AiryZernikeEditor *self)
{
  self->storing = TRUE;
  g_object_set (self->mask,
                arrays[0], spins_variant (self->index_spins, -1, 0),
                arrays[1], spins_variant (self->coef_spins, -1, 0),
                NULL);
  self->storing = FALSE;
}

static void
on_value (GtkSpinButton *spin, AiryZernikeEditor *self)
{
  if (self->storing)
    return;
  store (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* an index typed outside the declared range: the declaration's message for
 * the array it would make */
static int
on_index_input (GtkSpinButton *spin, double *new_value, AiryZernikeEditor *self)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_strdup_printf ("%s.%s", self->prefix, arrays[0]);
  guint row;
  double v;

  if (!airy_spin_button_typed_outside (spin, &v))
    return FALSE;
  g_ptr_array_find (self->index_spins, spin, &row);
  g_value_init (&value, G_TYPE_VARIANT);
  g_value_set_variant (&value, spins_variant (self->index_spins, (int) row, v));
  if (!airy_param_check_value (array_spec (self, 0), &value, path, &error))
    g_signal_emit (self, signals[SIGNAL_INVALID], 0, error->message);
  *new_value = gtk_spin_button_get_value (spin);
  return TRUE;
}

static void
set_terms (AiryZernikeEditor *self, const double *idx, const double *coef, gsize n)
{
  g_object_set (self->mask,
                arrays[0], g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, idx, n, sizeof (double)),
                arrays[1], g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, coef, n, sizeof (double)),
                NULL);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

static void
on_add (GtkButton *button, AiryZernikeEditor *self)
{
  gsize n = 0, nc = 0;
  const double *idx = airy_element_get_doubles (self->mask, arrays[0], &n);
  const double *coef = airy_element_get_doubles (self->mask, arrays[1], &nc);
  g_autofree double *ni = g_new0 (double, n + 1);
  g_autofree double *ncoef = g_new0 (double, n + 1);
  double lo = 0, hi = G_MAXDOUBLE;

  airy_param_spec_get_item_range (array_spec (self, 0), &lo, &hi);
  if (n)
    memcpy (ni, idx, n * sizeof (double));
  if (nc)
    memcpy (ncoef, coef, MIN (n, nc) * sizeof (double));
  /* the next index; defocus to start */
  ni[n] = n ? MIN (ni[n - 1] + 1, hi) : 4;
  set_terms (self, ni, ncoef, n + 1);
}

static void
on_remove (GtkButton *button, AiryZernikeEditor *self)
{
  guint row = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "row"));
  g_autoptr(GVariant) idx = g_variant_ref_sink (spins_variant (self->index_spins, -1, 0));
  g_autoptr(GVariant) coef = g_variant_ref_sink (spins_variant (self->coef_spins, -1, 0));
  gsize n;
  g_autofree double *ni = g_memdup2 (g_variant_get_fixed_array (idx, &n, sizeof (double)), sizeof (double) * (n + 1));
  g_autofree double *nc = g_memdup2 (g_variant_get_fixed_array (coef, &n, sizeof (double)), sizeof (double) * (n + 1));

  if (row >= n)
    return;
  memmove (ni + row, ni + row + 1, (n - row - 1) * sizeof (double));
  memmove (nc + row, nc + row + 1, (n - row - 1) * sizeof (double));
  set_terms (self, ni, nc, n - 1);
}

static gboolean
has_prefix (gpointer key, gpointer value, gpointer prefix)
{
  return g_str_has_prefix (key, prefix);
}

/* a spin button over the declared range of an array's entries */
static GtkWidget *
spin_for (AiryZernikeEditor *self, guint which, guint row, double value)
{
  double lo = -G_MAXDOUBLE, hi = G_MAXDOUBLE;
  gboolean integer = airy_param_spec_get_flags (array_spec (self, which)) & AIRY_PARAM_INTEGER;
  GtkWidget *spin;
  g_autofree char *path = g_strdup_printf ("%s.%s[%u]", self->prefix, arrays[which], row);

  airy_param_spec_get_item_range (array_spec (self, which), &lo, &hi);
  spin = gtk_spin_button_new_with_range (lo, hi, integer ? 1 : 0.01);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), integer ? 0 : 4);
  /* an unbounded range would make it as wide as 1.8e308 */
  if (hi >= G_MAXDOUBLE)
    gtk_editable_set_width_chars (GTK_EDITABLE (spin), 9);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), value);
  if (which == 0)
    g_signal_connect (spin, "input", G_CALLBACK (on_index_input), self);
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_value), self);
  airy_wheel_scrolls_panel (spin);
  g_ptr_array_add (which == 0 ? self->index_spins : self->coef_spins, spin);
  g_hash_table_replace (self->editors, g_strdup (path), spin);
  return spin;
}

static void
rebuild (AiryZernikeEditor *self)
{
  g_autofree char *indices = g_strdup_printf ("%s.%s[", self->prefix, arrays[0]);
  g_autofree char *coefficients = g_strdup_printf ("%s.%s[", self->prefix, arrays[1]);
  gsize n = 0, nc = 0, i;
  const double *idx = airy_element_get_doubles (self->mask, arrays[0], &n);
  const double *coef = airy_element_get_doubles (self->mask, arrays[1], &nc);
  GtkWidget *child;

  g_hash_table_foreach_remove (self->editors, has_prefix, indices);
  g_hash_table_foreach_remove (self->editors, has_prefix, coefficients);
  g_ptr_array_set_size (self->index_spins, 0);
  g_ptr_array_set_size (self->coef_spins, 0);
  while ((child = gtk_widget_get_first_child (self->rows)))
    gtk_box_remove (GTK_BOX (self->rows), child);
  self->storing = TRUE;
  for (i = 0; i < n; i++)
    {
      GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
      GtkWidget *cs, *rm = gtk_button_new_from_icon_name ("list-remove-symbolic");

      gtk_box_append (GTK_BOX (row), spin_for (self, 0, i, idx[i]));
      cs = spin_for (self, 1, i, i < nc ? coef[i] : 0.0);
      gtk_widget_set_hexpand (cs, TRUE);
      gtk_box_append (GTK_BOX (row), cs);
      g_object_set_data (G_OBJECT (rm), "row", GUINT_TO_POINTER (i));
      g_signal_connect (rm, "clicked", G_CALLBACK (on_remove), self);
      gtk_box_append (GTK_BOX (row), rm);
      gtk_box_append (GTK_BOX (self->rows), row);
    }
  self->storing = FALSE;
}

static gboolean
rebuild_idle (gpointer data)
{
  AiryZernikeEditor *self = data;

  self->rebuild_id = 0;
  rebuild (self);
  return G_SOURCE_REMOVE;
}

/* The element changed: new values in place, new rows later (the button
 * that asked for them may be one that goes). */
static void
on_notify (GObject *mask, GParamSpec *pspec, AiryZernikeEditor *self)
{
  gsize n = 0, i;
  const double *v;

  if (self->storing)
    return;
  v = airy_element_get_doubles (self->mask, pspec->name, &n);
  if (n != self->index_spins->len)
    {
      if (self->rebuild_id == 0)
        self->rebuild_id = g_idle_add (rebuild_idle, self);
      return;
    }
  self->storing = TRUE;
  for (i = 0; i < n; i++)
    gtk_spin_button_set_value (g_ptr_array_index (g_str_equal (pspec->name, arrays[0]) ? self->index_spins
                                                                                         : self->coef_spins, i),
                               v[i]);
  self->storing = FALSE;
}

GtkWidget *
airy_zernike_editor_new (AiryElement *mask,
                         const char  *prefix,
                         GHashTable  *editors)
{
  AiryZernikeEditor *self;
  GtkWidget *add;
  guint k;

  g_return_val_if_fail (AIRY_IS_ELEMENT (mask), NULL);
  self = g_object_new (AIRY_TYPE_ZERNIKE_EDITOR, NULL);
  self->mask = g_object_ref (mask);
  self->prefix = g_strdup (prefix);
  self->editors = g_hash_table_ref (editors);
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  self->rows = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  add = gtk_button_new_with_label (_("Add term"));
  g_signal_connect (add, "clicked", G_CALLBACK (on_add), self);
  gtk_box_append (GTK_BOX (self->box), gtk_label_new (_("Zernike terms (index, coefficient)")));
  gtk_box_append (GTK_BOX (self->box), self->rows);
  gtk_box_append (GTK_BOX (self->box), add);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  for (k = 0; k < G_N_ELEMENTS (arrays); k++)
    {
      g_autofree char *signal = g_strdup_printf ("notify::%s", arrays[k]);
      g_autofree char *path = g_strdup_printf ("%s.%s", prefix, arrays[k]);

      self->notify_ids[k] = g_signal_connect (mask, signal, G_CALLBACK (on_notify), self);
      g_hash_table_replace (editors, g_steal_pointer (&path), self);
    }
  rebuild (self);
  return GTK_WIDGET (self);
}

AiryElement *
airy_zernike_editor_get_mask (AiryZernikeEditor *self)
{
  return self->mask;
}

static void
airy_zernike_editor_dispose (GObject *object)
{
  AiryZernikeEditor *self = AIRY_ZERNIKE_EDITOR (object);
  guint k;

  for (k = 0; k < G_N_ELEMENTS (self->notify_ids); k++)
    if (self->notify_ids[k])
      g_clear_signal_handler (&self->notify_ids[k], self->mask);
  g_clear_handle_id (&self->rebuild_id, g_source_remove);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (airy_zernike_editor_parent_class)->dispose (object);
}

static void
airy_zernike_editor_finalize (GObject *object)
{
  AiryZernikeEditor *self = AIRY_ZERNIKE_EDITOR (object);

  g_clear_object (&self->mask);
  g_clear_pointer (&self->editors, g_hash_table_unref);
  g_ptr_array_unref (self->index_spins);
  g_ptr_array_unref (self->coef_spins);
  g_free (self->prefix);
  G_OBJECT_CLASS (airy_zernike_editor_parent_class)->finalize (object);
}

static void
airy_zernike_editor_class_init (AiryZernikeEditorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = airy_zernike_editor_dispose;
  object_class->finalize = airy_zernike_editor_finalize;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_INVALID] = g_signal_new ("invalid", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
airy_zernike_editor_init (AiryZernikeEditor *self)
{
  self->index_spins = g_ptr_array_new ();
  self->coef_spins = g_ptr_array_new ();
}
