#define G_LOG_DOMAIN "airy-bench"

#include "config.h"

#include <string.h>
#include <glib/gi18n.h>

#include "airy-zernike-editor.h"
#include "airy-param-editor.h"
#include "airy-physics.h"

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
  GPtrArray   *names;        /* the name label of each row */
  GtkWidget   *named;        /* "Add Named Term" and its popover */
  GtkWidget   *named_box;
  int          focus_row;    /* its coefficient gets the focus after a rebuild; -1: none */
  gulong       notify_ids[2];
  gulong       indexing_id;
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

/* The terms a microscopist names, by radial order n and azimuthal order
 * m: m > 0 is cos(mθ), m < 0 sin(|m|θ), θ from +x (airy_zernike). */
static const struct { int n, m; const char *name; } named_terms[] = {
  /* the menu's two columns, row by row: pairs side by side */
  { 2, 0, N_("defocus") },
  { 4, 0, N_("spherical") },
  { 2, 2, N_("astigmatism 0°") },
  { 2, -2, N_("astigmatism 45°") },
  { 3, 1, N_("coma x") },
  { 3, -1, N_("coma y") },
  { 3, 3, N_("trefoil x") },
  { 3, -3, N_("trefoil y") },
  { 4, 2, N_("secondary astigmatism 0°") },
  { 4, -2, N_("secondary astigmatism 45°") },
  { 4, 4, N_("tetrafoil 0°") },
  { 4, -4, N_("tetrafoil 45°") },
  { 5, 1, N_("secondary coma x") },
  { 5, -1, N_("secondary coma y") },
  { 1, 1, N_("tilt x") },
  { 1, -1, N_("tilt y") },
  { 6, 0, N_("secondary spherical") },
  /* named, not offered: it changes nothing one sees */
  { 0, 0, N_("piston") },
};

/* the mask counts its terms Noll's way (its "zernike-indexing" is "noll") */
static gboolean
noll (AiryZernikeEditor *self)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self->mask), "zernike-indexing");
  GEnumValue *v = g_enum_get_value (G_PARAM_SPEC_ENUM (pspec)->enum_class,
                                    airy_element_get_enum (self->mask, "zernike-indexing"));

  return v != NULL && g_str_equal (v->value_nick, "noll");
}

/* the index of (n, m) in the mask's indexing: ANSI (n(n+2) + m)/2, Noll by
 * its table; -1 beyond the declared range */
static int
index_of (AiryZernikeEditor *self, int n, int m)
{
  double lo = 0, hi = 230;
  int j, nn, mm;

  airy_param_spec_get_item_range (g_object_class_find_property (G_OBJECT_GET_CLASS (self->mask), "zernike-indices"),
                                  &lo, &hi);
  if (!noll (self))
    return (n * (n + 2) + m) / 2 <= hi ? (n * (n + 2) + m) / 2 : -1;
  for (j = 1; j <= (int) hi + 1; j++)
    {
      airy_zernike_noll_to_nm (j, &nn, &mm);
      if (nn == n && mm == m)
        return j;
    }
  return -1;
}

const char *
airy_zernike_name (int n, int m)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (named_terms); i++)
    if (named_terms[i].n == n && named_terms[i].m == m)
      return _(named_terms[i].name);
  return NULL;
}

/* "spherical", or "n 5, m −3" for a term without a name */
static char *
row_name (AiryZernikeEditor *self, double index)
{
  int n, m;
  const char *name;

  if (index < (noll (self) ? 1 : 0))
    return g_strdup ("");
  if (noll (self))
    airy_zernike_noll_to_nm ((int) index, &n, &m);
  else
    airy_zernike_ansi_to_nm ((int) index, &n, &m);
  name = airy_zernike_name (n, m);
  /* TRANSLATORS: a Zernike term without a name: its radial and azimuthal orders */
  return name ? g_strdup (name) : g_strdup_printf (_("n %d, m %d"), n, m);
}

static void
update_name (AiryZernikeEditor *self, guint row)
{
  g_autofree char *name = row_name (self, gtk_spin_button_get_value (g_ptr_array_index (self->index_spins, row)));

  gtk_label_set_text (g_ptr_array_index (self->names, row), name);
  gtk_widget_set_tooltip_text (g_ptr_array_index (self->names, row), name);
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
  guint row;

  if (g_ptr_array_find (self->index_spins, spin, &row) && row < self->names->len)
    update_name (self, row);
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
    g_signal_emit (self, signals[SIGNAL_INVALID], 0, error);
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

/* A named term: added with coefficient 0, or found where it is; either way
 * its coefficient field gets the focus, for the value to be typed. */
static void rebuild (AiryZernikeEditor *self);

static void
on_named (GtkButton *button, AiryZernikeEditor *self)
{
  guint which = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "term"));
  int j = index_of (self, named_terms[which].n, named_terms[which].m);
  gsize n = 0, nc = 0, i;
  const double *idx = airy_element_get_doubles (self->mask, arrays[0], &n);
  const double *coef = airy_element_get_doubles (self->mask, arrays[1], &nc);
  g_autofree double *ni = g_new0 (double, n + 1);
  g_autofree double *ncoef = g_new0 (double, n + 1);

  if (j < 0)
    return;
  /* the focus goes to the coefficient once the menu is closed (closing it
   * gives the focus back to its button) */
  for (i = 0; i < n; i++)
    if (idx[i] == j && i < self->coef_spins->len)
      {
        self->focus_row = (int) i;
        gtk_menu_button_popdown (GTK_MENU_BUTTON (self->named));
        return;
      }
  if (n)
    memcpy (ni, idx, n * sizeof (double));
  if (nc)
    memcpy (ncoef, coef, MIN (n, nc) * sizeof (double));
  ni[n] = j;
  self->focus_row = (int) n;
  set_terms (self, ni, ncoef, n + 1);
  /* the row now, not later: this button is not one of the rows */
  if (self->rebuild_id)
    {
      g_clear_handle_id (&self->rebuild_id, g_source_remove);
      rebuild (self);
    }
  gtk_menu_button_popdown (GTK_MENU_BUTTON (self->named));
}

static void
on_named_closed (GtkPopover *popover, AiryZernikeEditor *self)
{
  if (self->focus_row >= 0 && (guint) self->focus_row < self->coef_spins->len)
    gtk_widget_grab_focus (g_ptr_array_index (self->coef_spins, self->focus_row));
  self->focus_row = -1;
}

/* the popover's list: each named term with its index in the mask's
 * indexing, which it follows */
static void
fill_named (AiryZernikeEditor *self)
{
  GtkWidget *child;
  guint i, k;

  while ((child = gtk_widget_get_first_child (self->named_box)))
    gtk_grid_remove (GTK_GRID (self->named_box), child);
  for (i = 0, k = 0; i < G_N_ELEMENTS (named_terms); i++)
    {
      int j = index_of (self, named_terms[i].n, named_terms[i].m);
      g_autofree char *text = NULL;
      GtkWidget *item;

      if (j < 0 || (named_terms[i].n == 0))
        continue;
      /* TRANSLATORS: a Zernike term and its index: "spherical (ANSI 12)" */
      text = g_strdup_printf (_("%s (%s %d)"), _(named_terms[i].name), noll (self) ? "Noll" : "ANSI", j);
      item = gtk_button_new_with_label (text);
      gtk_widget_add_css_class (item, "flat");
      gtk_label_set_xalign (GTK_LABEL (gtk_button_get_child (GTK_BUTTON (item))), 0);
      g_object_set_data (G_OBJECT (item), "term", GUINT_TO_POINTER (i));
      g_signal_connect (item, "clicked", G_CALLBACK (on_named), self);
      gtk_grid_attach (GTK_GRID (self->named_box), item, k % 2, k / 2, 1, 1);
      k++;
    }
}

static void
on_indexing (GObject *mask, GParamSpec *pspec, AiryZernikeEditor *self)
{
  guint i;

  fill_named (self);
  for (i = 0; i < self->names->len; i++)
    update_name (self, i);
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
    gtk_editable_set_width_chars (GTK_EDITABLE (spin), 7);
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
  g_ptr_array_set_size (self->names, 0);
  while ((child = gtk_widget_get_first_child (self->rows)))
    gtk_box_remove (GTK_BOX (self->rows), child);
  self->storing = TRUE;
  for (i = 0; i < n; i++)
    {
      GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
      GtkWidget *cs, *rm = gtk_button_new_from_icon_name ("list-remove-symbolic");
      GtkWidget *name = gtk_label_new ("");

      gtk_box_append (GTK_BOX (row), spin_for (self, 0, i, idx[i]));
      /* the term's name beside its index, as wide for every row and narrow
       * enough for the panel (the whole name in its tooltip) */
      gtk_label_set_xalign (GTK_LABEL (name), 0);
      gtk_label_set_width_chars (GTK_LABEL (name), 8);
      gtk_label_set_max_width_chars (GTK_LABEL (name), 9);
      gtk_label_set_ellipsize (GTK_LABEL (name), PANGO_ELLIPSIZE_END);
      gtk_widget_add_css_class (name, "dim-label");
      g_ptr_array_add (self->names, name);
      update_name (self, i);
      gtk_box_append (GTK_BOX (row), name);
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
  GtkWidget *add, *buttons, *hint;
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
  gtk_widget_set_tooltip_text (add, _("The next index"));
  self->named = gtk_menu_button_new ();
  gtk_menu_button_set_label (GTK_MENU_BUTTON (self->named), _("Add _Named Term"));
  gtk_menu_button_set_use_underline (GTK_MENU_BUTTON (self->named), TRUE);
  gtk_widget_set_tooltip_text (self->named, _("Defocus, astigmatism, coma, spherical …: the term is added and "
                                              "its coefficient is ready to be typed"));
  /* two columns: the pairs (x and y, 0° and 45°) side by side */
  self->named_box = gtk_grid_new ();
  {
    GtkWidget *popover = gtk_popover_new ();

    gtk_popover_set_child (GTK_POPOVER (popover), self->named_box);
    gtk_menu_button_set_popover (GTK_MENU_BUTTON (self->named), popover);
    g_signal_connect (popover, "closed", G_CALLBACK (on_named_closed), self);
  }
  buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  gtk_box_append (GTK_BOX (buttons), add);
  gtk_box_append (GTK_BOX (buttons), self->named);
  hint = gtk_label_new (_("A positive coefficient c adds 2π·c·Z to the pupil's phase (c in waves). +defocus moves "
                          "the focus to +z; +spherical puts the marginal rays' focus at +z and the paraxial rays' "
                          "at −z, its best focus stays at z = 0 (the term is balanced)."));
  gtk_label_set_wrap (GTK_LABEL (hint), TRUE);
  gtk_label_set_xalign (GTK_LABEL (hint), 0);
  gtk_widget_add_css_class (hint, "dim-label");
  gtk_widget_add_css_class (hint, "caption");
  gtk_box_append (GTK_BOX (self->box), gtk_label_new (_("Zernike terms (index, name, coefficient)")));
  gtk_box_append (GTK_BOX (self->box), self->rows);
  gtk_box_append (GTK_BOX (self->box), buttons);
  gtk_box_append (GTK_BOX (self->box), hint);
  fill_named (self);
  self->indexing_id = g_signal_connect (mask, "notify::zernike-indexing", G_CALLBACK (on_indexing), self);
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
  if (self->indexing_id)
    g_clear_signal_handler (&self->indexing_id, self->mask);
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
  g_ptr_array_unref (self->names);
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
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
airy_zernike_editor_init (AiryZernikeEditor *self)
{
  self->index_spins = g_ptr_array_new ();
  self->coef_spins = g_ptr_array_new ();
  self->names = g_ptr_array_new ();
  self->focus_row = -1;
}
