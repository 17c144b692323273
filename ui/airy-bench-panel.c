#define G_LOG_DOMAIN "airy-bench"

#include "config.h"

#include <string.h>
#include <glib/gi18n.h>

#include "airy-bench-panel-private.h"
#include "airy-options-private.h"
#include "airy-error.h"
#include "airy-param-editor.h"
#include "airy-zernike-editor.h"
#include "airy-modality.h"

/* The panel: the fixed frames of its template, the element rows with
 * editors generated from each element's parameter declarations, and the
 * marking of the field an error names. The system's rows are in
 * airy-bench-panel-system.c. */

G_DEFINE_FINAL_TYPE (AiryBenchPanel, airy_bench_panel, GTK_TYPE_BOX)

enum { SIGNAL_CHANGED, SIGNAL_INVALID, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_BACKEND, PROP_THREADS, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void rebuild       (AiryBenchPanel *self);
static void show_messages (AiryBenchPanel *self);

void
_airy_bench_panel_changed (AiryBenchPanel *self)
{
  if (self->building)
    return;
  /* the derived figures (memory of the result) follow every edit */
  _airy_bench_panel_update_derived (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

void
_airy_bench_panel_refuse (AiryBenchPanel *self,
                          const GError   *error)
{
  airy_bench_panel_show_error (self, error);
  g_signal_emit (self, signals[SIGNAL_INVALID], 0, error->message);
}

static void
set_last_edit (AiryBenchPanel *self,
               const char     *path)
{
  if (g_strcmp0 (self->last_edit, path) == 0)
    return;
  g_free (self->last_edit);
  self->last_edit = g_strdup (path);
}

/* rebuilding from a signal handler of a widget that goes away: do it idle */
static gboolean
rebuild_idle (gpointer data)
{
  AiryBenchPanel *self = data;

  rebuild (self);
  _airy_bench_panel_changed (self);
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

void
_airy_bench_panel_rebuild_later (AiryBenchPanel *self)
{
  /* a change of the rows, not of a field */
  set_last_edit (self, NULL);
  g_idle_add (rebuild_idle, g_object_ref (self));
}

/* a field by its path, and "grid.shape" for "grid.shape[0]" when nothing
 * else has that name */
void
_airy_bench_panel_register (AiryBenchPanel *self,
                            const char     *path,
                            GtkWidget      *widget)
{
  const char *bracket = strrchr (path, '[');

  g_hash_table_replace (self->editors, g_strdup (path), widget);
  if (bracket && bracket[strlen (bracket) - 1] == ']' && bracket > path)
    {
      g_autofree char *base = g_strndup (path, bracket - path);

      if (!g_hash_table_contains (self->editors, base))
        g_hash_table_insert (self->editors, g_steal_pointer (&base), widget);
    }
}

void
_airy_bench_panel_clear (GtkWidget *container)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (container)))
    gtk_widget_unparent (child);
}

/* ---- parameter rows ---- */

static gboolean
relevant (GObject *object, GParamSpec *pspec)
{
  if (AIRY_IS_ELEMENT (object))
    return airy_element_param_relevant (AIRY_ELEMENT (object), pspec);
  if (AIRY_IS_SYSTEM (object))
    return airy_system_param_relevant (AIRY_SYSTEM (object), pspec);
  return TRUE;
}

void
_airy_bench_panel_show_relevant (GtkWidget *grid)
{
  GtkWidget *child;

  for (child = gtk_widget_get_first_child (grid); child; child = gtk_widget_get_next_sibling (child))
    if (AIRY_IS_PARAM_EDITOR (child))
      {
        AiryParamEditor *editor = AIRY_PARAM_EDITOR (child);

        gtk_widget_set_visible (child, relevant (airy_param_editor_get_object (editor),
                                                 airy_param_editor_get_pspec (editor)));
      }
    else if (AIRY_IS_ZERNIKE_EDITOR (child))
      {
        AiryElement *mask = airy_zernike_editor_get_mask (AIRY_ZERNIKE_EDITOR (child));

        gtk_widget_set_visible (child, relevant (G_OBJECT (mask), g_object_class_find_property (
                                                   G_OBJECT_GET_CLASS (mask), "zernike-indices")));
      }
}

/* an edit: a parameter that selects which others apply shows and hides
 * its neighbours in place (the row stays open) */
static void
on_param_changed (AiryBenchPanel *self, AiryParamEditor *editor)
{
  set_last_edit (self, airy_param_editor_get_path (editor));
  if (airy_param_spec_get_flags (airy_param_editor_get_pspec (editor)) & AIRY_PARAM_SELECTS)
    _airy_bench_panel_show_relevant (gtk_widget_get_parent (GTK_WIDGET (editor)));
  _airy_bench_panel_changed (self);
}

static void
on_terms_changed (GtkWidget *terms, AiryBenchPanel *self)
{
  set_last_edit (self, g_object_get_data (G_OBJECT (terms), "path"));
  _airy_bench_panel_changed (self);
}

static void
on_invalid (GtkWidget *editor, const GError *error, AiryBenchPanel *self)
{
  /* an editor that goes in a rebuild reads its text one last time */
  if (self->building)
    return;
  if (AIRY_IS_PARAM_EDITOR (editor))
    set_last_edit (self, airy_param_editor_get_path (AIRY_PARAM_EDITOR (editor)));
  _airy_bench_panel_refuse (self, error);
}

GtkWidget *
_airy_bench_panel_add_param (AiryBenchPanel *self,
                             GtkGrid        *grid,
                             GObject        *object,
                             const char     *property,
                             const char     *path,
                             const char     *text)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (object), property);
  const char *where = path ? path : airy_param_spec_get_path (pspec);
  GtkWidget *editor, *label;

  g_return_val_if_fail (pspec != NULL && where != NULL, NULL);
  editor = airy_param_editor_new (object, pspec, where);
  label = airy_param_editor_new_label (AIRY_PARAM_EDITOR (editor), text);
  gtk_grid_attach_next_to (grid, label, NULL, GTK_POS_BOTTOM, 1, 1);
  gtk_grid_attach_next_to (grid, editor, label, GTK_POS_RIGHT, 1, 1);
  gtk_widget_set_hexpand (editor, TRUE);
  g_signal_connect_swapped (editor, "changed", G_CALLBACK (on_param_changed), self);
  g_signal_connect (editor, "invalid", G_CALLBACK (on_invalid), self);
  _airy_bench_panel_register (self, where, airy_param_editor_get_control (AIRY_PARAM_EDITOR (editor)));
  return editor;
}

/* Every parameter of an element but "enabled" (the row's check box); the
 * Zernike terms as one table. */
void
_airy_bench_panel_add_editors (AiryBenchPanel *self,
                               GtkGrid        *grid,
                               AiryElement    *element,
                               const char     *prefix)
{
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (element), NULL);
  guint i;

  for (i = 0; pspecs[i]; i++)
    {
      const char *name = pspecs[i]->name;
      g_autofree char *path = g_strdup_printf ("%s.%s", prefix, name);

      if (g_str_equal (name, "enabled") || g_str_equal (name, "zernike-coefficients"))
        continue;
      if (g_str_equal (name, "zernike-indices"))
        {
          GtkWidget *terms = airy_zernike_editor_new (element, prefix, self->editors);

          g_object_set_data_full (G_OBJECT (terms), "path", g_strdup_printf ("%s.zernike", prefix), g_free);

          g_signal_connect (terms, "changed", G_CALLBACK (on_terms_changed), self);
          g_signal_connect (terms, "invalid", G_CALLBACK (on_invalid), self);
          gtk_grid_attach_next_to (grid, terms, NULL, GTK_POS_BOTTOM, 2, 1);
          continue;
        }
      _airy_bench_panel_add_param (self, grid, G_OBJECT (element), name, path, NULL);
    }
  _airy_bench_panel_show_relevant (GTK_WIDGET (grid));
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

/* ---- element rows ---- */

static void
on_enabled (GtkCheckButton *check, GParamSpec *pspec, AiryBenchPanel *self)
{
  AiryElement *e = g_object_get_data (G_OBJECT (check), "element");

  airy_element_set_enabled (e, gtk_check_button_get_active (check));
  set_last_edit (self, NULL);
  _airy_bench_panel_changed (self);
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
  _airy_bench_panel_rebuild_later (self);
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
  _airy_bench_panel_rebuild_later (self);
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
  _airy_bench_panel_add_editors (self, GTK_GRID (grid), e, prefix);
  gtk_box_append (GTK_BOX (body), grid);
  gtk_expander_set_child (GTK_EXPANDER (expander), body);
  _airy_bench_panel_register (self, prefix, expander);
  /* which element the row shows, to keep it open over a rebuild */
  g_object_set_data (G_OBJECT (expander), "element", e);
  g_object_set_data_full (G_OBJECT (expander), "place",
                          g_strdup_printf ("%u %s", index, airy_element_get_type_name (e)), g_free);

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
  if (!_airy_modality_has_objective (_airy_modality_of (self->system)) && at > 1
      && AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (elements, at - 1))->category == AIRY_CATEGORY_LENS
      && AIRY_ELEMENT_GET_CLASS (e)->category == AIRY_CATEGORY_MASK)
    at--;
  g_ptr_array_insert (elements, (int) at, g_object_ref (e));
  _airy_bench_panel_rebuild_later (self);
}

static GMenuModel *
add_menu (gboolean microscope)
{
  static const char *titles[] = { N_("Sources"), N_("Masks"), N_("Lenses"), N_("Propagation"), N_("Polarisation"),
                                  N_("Sensor") };
  GMenu *menu = g_menu_new ();
  g_autofree GType *types = NULL;
  guint n, c, i;

  types = airy_element_list_types (&n);
  for (c = AIRY_CATEGORY_SOURCE; c < AIRY_CATEGORY_SENSOR; c++)
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

/* ---- building ---- */

static GtkAdjustment *
scroll_adjustment (AiryBenchPanel *self)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (self), GTK_TYPE_SCROLLED_WINDOW);

  return scroller ? gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller)) : NULL;
}

static void
stop_keeping_scroll (AiryBenchPanel *self)
{
  if (self->scroll_adj)
    g_signal_handlers_disconnect_by_data (self->scroll_adj, self);
  g_clear_object (&self->scroll_adj);
  g_clear_handle_id (&self->scroll_timeout, g_source_remove);
}

/* the new rows get their size at the next layout, and the focus that went
 * with the old rows lands elsewhere and scrolls there: for a moment the
 * scroll goes back where it was whenever either moves it */
static void
on_scroll_moved (GtkAdjustment *adj, AiryBenchPanel *self)
{
  if (gtk_adjustment_get_value (adj) != self->scroll_wanted)
    gtk_adjustment_set_value (adj, self->scroll_wanted);
}

static gboolean
scroll_timeout (gpointer data)
{
  AiryBenchPanel *self = data;

  self->scroll_timeout = 0;
  stop_keeping_scroll (self);
  return G_SOURCE_REMOVE;
}

#define KEEP_SCROLL_MS 300

static void
keep_scroll (AiryBenchPanel *self, double value)
{
  GtkAdjustment *adj = scroll_adjustment (self);

  stop_keeping_scroll (self);
  if (adj == NULL || value <= 0)
    return;
  self->scroll_wanted = value;
  self->scroll_adj = g_object_ref (adj);
  g_signal_connect (adj, "changed", G_CALLBACK (on_scroll_moved), self);
  g_signal_connect (adj, "value-changed", G_CALLBACK (on_scroll_moved), self);
  self->scroll_timeout = g_timeout_add (KEEP_SCROLL_MS, scroll_timeout, self);
  gtk_adjustment_set_value (adj, value);
}

static void
rebuild (AiryBenchPanel *self)
{
  GtkWidget *frame, *row;
  GPtrArray *elements;
  gboolean microscope;
  guint i;
  g_autoptr(GPtrArray) open_elements = g_ptr_array_new ();
  g_autoptr(GPtrArray) open_places = g_ptr_array_new_with_free_func (g_free);
  GtkAdjustment *adj = scroll_adjustment (self);
  double scroll = adj && !self->fresh ? gtk_adjustment_get_value (adj) : 0.0;

  for (row = self->fresh ? NULL : gtk_widget_get_first_child (self->elements_box); row;
       row = gtk_widget_get_next_sibling (row))
    if (GTK_IS_EXPANDER (row) && gtk_expander_get_expanded (GTK_EXPANDER (row)))
      {
        g_ptr_array_add (open_elements, g_object_get_data (G_OBJECT (row), "element"));
        g_ptr_array_add (open_places, g_strdup (g_object_get_data (G_OBJECT (row), "place")));
      }
  self->building = TRUE;
  g_hash_table_remove_all (self->editors);
  g_ptr_array_set_size (self->marked, 0);
  _airy_bench_panel_clear (self->system_grid);
  _airy_bench_panel_clear (self->microscope_grid);
  _airy_bench_panel_clear (self->sample_grid);
  _airy_bench_panel_clear (self->elements_box);
  _airy_bench_panel_clear (self->sensor_grid);
  for (frame = gtk_widget_get_first_child (GTK_WIDGET (self)); frame; frame = gtk_widget_get_next_sibling (frame))
    gtk_widget_set_visible (frame, self->system != NULL);
  if (self->system == NULL)
    {
      self->building = FALSE;
      return;
    }
  microscope = _airy_modality_has_objective (_airy_modality_of (self->system));
  elements = airy_system_get_elements (self->system);

  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->mode), _airy_bench_panel_modality_index (self->system));
  _airy_bench_panel_register (self, "mode", self->mode);
  _airy_bench_panel_build_system (self);
  gtk_widget_set_visible (self->warnings_label, FALSE);
  gtk_widget_set_visible (self->error_label, FALSE);
  show_messages (self);
  _airy_bench_panel_build_microscope (self);

  {
    g_autoptr(GMenuModel) menu = add_menu (microscope);

    gtk_label_set_text (GTK_LABEL (self->elements_title),
                        microscope ? _("Pupil-plane elements") : _("Elements (source first)"));
    for (i = 0; i < elements->len; i++)
      {
        AiryElement *e = g_ptr_array_index (elements, i);
        GtkWidget *expander = element_row (self, e, i, TRUE);
        const char *place = g_object_get_data (G_OBJECT (expander), "place");

        /* open as before: the same element, or (a replaced system) the
         * element of the same type in the same place */
        if (g_ptr_array_find (open_elements, e, NULL)
            || (self->keep_rows_by_place && g_ptr_array_find_with_equal_func (open_places, place, g_str_equal, NULL)))
          gtk_expander_set_expanded (GTK_EXPANDER (expander), TRUE);
        gtk_box_append (GTK_BOX (self->elements_box), expander);
      }
    gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (self->add_button), menu);
  }

  gtk_widget_set_visible (self->sensor_frame, airy_system_get_sensor (self->system) != NULL);
  if (airy_system_get_sensor (self->system))
    {
      _airy_bench_panel_add_editors (self, GTK_GRID (self->sensor_grid), airy_system_get_sensor (self->system), "sensor");
    }
  _airy_bench_panel_update_derived (self);
  self->building = FALSE;
  keep_scroll (self, scroll);
  if (self->error)
    airy_bench_panel_show_error (self, self->error);
}

/* ---- public ---- */

static gboolean
path_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_' || c == '.' || c == '[';
}

/* the message names path (or its array, "grid.shape" for "grid.shape[0]")
 * as a whole word */
static gboolean
mentions (const char *message,
          const char *path)
{
  const char *bracket = strrchr (path, '[');
  g_autofree char *base = bracket && bracket > path ? g_strndup (path, bracket - path) : g_strdup (path);
  const char *names[] = { path, base };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (names); k++)
    {
      gsize len = strlen (names[k]);
      const char *at;

      for (at = strstr (message, names[k]); at; at = strstr (at + 1, names[k]))
        if ((at == message || !path_char (at[-1]))
            && !(path_char (at[len]) && (at[len] != '.' || g_ascii_isalnum (at[len + 1]))))
          return TRUE;
    }
  return FALSE;
}

/* The engine's message as the panel says it, for people: the field by its
 * label (and its element's title), and a number out of its range from the
 * range the error carries (airy_error_get_range), worded here in the
 * panel's language: "NA (Objective point source) must be at most
 * n = 1.33, got 1.5". The CLI keeps the JSON path. */
static char *
humane_message (const GError *error, GtkWidget *editor, GtkWidget *expander)
{
  const char *colon = strstr (error->message, ": ");
  const AiryErrorRange *r = airy_error_get_range (error);
  GtkWidget *row = editor, *label = NULL, *title = NULL;
  g_autofree char *field = NULL, *bound = NULL, *got = NULL;
  const char *unit;

  /* the control's row in its grid: the label is beside it */
  while (row && gtk_widget_get_parent (row) && !GTK_IS_GRID (gtk_widget_get_parent (row)))
    row = gtk_widget_get_parent (row);
  label = row ? gtk_widget_get_prev_sibling (row) : NULL;
  if (colon == NULL || label == NULL || !GTK_IS_LABEL (label) || editor == expander)
    return g_strdup (error->message);
  if (expander)
    {
      GtkWidget *child;

      for (child = gtk_widget_get_first_child (gtk_expander_get_label_widget (GTK_EXPANDER (expander))); child;
           child = gtk_widget_get_next_sibling (child))
        if (GTK_IS_LABEL (child) && title == NULL)
          title = child;
    }
  /* TRANSLATORS: a field's label and its element's title, "NA (Objective point source)" */
  field = title ? g_strdup_printf (_("%s (%s)"), gtk_label_get_text (GTK_LABEL (label)), gtk_label_get_text (GTK_LABEL (title)))
                : g_strdup (gtk_label_get_text (GTK_LABEL (label)));
  if (r == NULL)
    return g_strdup_printf ("%s: %s", field, colon + 2);
  unit = r->unit ? r->unit : "";
  got = g_strdup_printf ("%g", r->value);
  if (r->value > r->maximum)
    {
      bound = r->maximum_name ? g_strdup_printf ("%s = %g", r->maximum_name, r->maximum)
                              : g_strdup_printf ("%g%s%s", r->maximum, *unit ? " " : "", unit);
      /* TRANSLATORS: a field, its largest value, the value given */
      return g_strdup_printf (_("%s must be at most %s, got %s"), field, bound, got);
    }
  bound = g_strdup_printf ("%g%s%s", r->minimum, *unit ? " " : "", unit);
  if (r->value < r->minimum)
    /* TRANSLATORS: a field, its smallest value, the value given */
    return g_strdup_printf (_("%s must be at least %s, got %s"), field, bound, got);
  if (r->exclusive_minimum && r->value <= r->minimum)
    /* TRANSLATORS: a field, the value it must exceed, the value given */
    return g_strdup_printf (_("%s must be more than %s, got %s"), field, bound, got);
  return g_strdup_printf ("%s: %s", field, colon + 2);
}

/* the messages' box only while it has something to say */
static void
show_messages (AiryBenchPanel *self)
{
  gtk_widget_set_visible (self->messages, gtk_widget_get_visible (self->warnings_label)
                                          || gtk_widget_get_visible (self->error_label));
}

void
airy_bench_panel_show_error (AiryBenchPanel *self,
                             const GError   *error)
{
  const char *message;
  guint i;

  for (i = 0; i < self->marked->len; i++)
    gtk_widget_remove_css_class (g_ptr_array_index (self->marked, i), "error");
  g_ptr_array_set_size (self->marked, 0);
  gtk_widget_set_visible (self->error_label, FALSE);
  show_messages (self);
  if (error != self->error)
    {
      GError *copy = error ? g_error_copy (error) : NULL;

      g_clear_error (&self->error);
      self->error = copy;
    }
  if (error == NULL || self->system == NULL)
    return;
  message = error->message;

  {
    /* "elements[1].na: …" → mark that editor (or its row) and open its row */
    const char *colon = strstr (message, ": ");
    g_autofree char *path = colon ? g_strndup (message, colon - message) : NULL;
    GtkWidget *editor = NULL, *expander = NULL;

    /* the longest part of the path with an editor; its row (an element's
     * expander, registered under "elements[i]") */
    while (path && *path)
      {
        GtkWidget *w = g_hash_table_lookup (self->editors, path);
        char *cut;

        if (editor == NULL)
          editor = w;
        if (expander == NULL && GTK_IS_EXPANDER (w))
          expander = w;
        cut = MAX (strrchr (path, '.'), strrchr (path, '['));
        if (cut == NULL)
          break;
        *cut = '\0';
      }
    /* a message about several fields ("… reduce grid.shape or z.count")
     * marks the one just edited when it names it */
    if (self->last_edit && mentions (message, self->last_edit))
      editor = g_hash_table_lookup (self->editors, self->last_edit) ? g_hash_table_lookup (self->editors, self->last_edit)
                                                                    : editor;
    if (editor)
      {
        gtk_widget_add_css_class (editor, "error");
        g_ptr_array_add (self->marked, editor);
      }
    if (expander)
      gtk_expander_set_expanded (GTK_EXPANDER (expander), TRUE);
    /* the message below the form, where it moves no field, in words;
     * the engine's text (with the JSON path) in its tooltip */
    {
      g_autofree char *text = humane_message (error, editor, expander);

      gtk_label_set_text (GTK_LABEL (self->error_label), text);
      gtk_widget_set_tooltip_text (self->error_label, message);
    }
    gtk_widget_set_visible (self->error_label, TRUE);
  }
  show_messages (self);
}

const char *
airy_bench_panel_get_last_edit (AiryBenchPanel *self)
{
  return self->last_edit;
}

const char *
airy_bench_panel_get_error (AiryBenchPanel *self)
{
  return self->error ? self->error->message : NULL;
}

void
airy_bench_panel_set_warnings (AiryBenchPanel *self,
                               GPtrArray      *warnings)
{
  g_autoptr(GString) s = g_string_new (NULL);
  guint i;

  for (i = 0; warnings && i < warnings->len; i++)
    g_string_append_printf (s, "%s⚠ %s", i ? "\n" : "", (char *) g_ptr_array_index (warnings, i));
  gtk_label_set_text (GTK_LABEL (self->warnings_label), s->str);
  gtk_widget_set_visible (self->warnings_label, s->len > 0);
  show_messages (self);
  if (self->system)
    _airy_bench_panel_update_derived (self);
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
  g_clear_error (&self->error);
  set_last_edit (self, NULL);
  self->fresh = TRUE;
  rebuild (self);
  self->fresh = FALSE;
  if (scroll_adjustment (self))
    gtk_adjustment_set_value (scroll_adjustment (self), 0.0);
}

void
airy_bench_panel_replace_system (AiryBenchPanel *self,
                                 AirySystem     *system)
{
  g_return_if_fail (AIRY_IS_BENCH_PANEL (self) && AIRY_IS_SYSTEM (system));

  g_set_object (&self->system, system);
  g_clear_error (&self->error);
  set_last_edit (self, NULL);
  self->keep_rows_by_place = TRUE;
  rebuild (self);
  self->keep_rows_by_place = FALSE;
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
  if (g_strcmp0 (self->backend, backend) == 0)
    return;
  g_free (self->backend);
  self->backend = g_strdup (backend);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BACKEND]);
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
airy_bench_panel_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  AiryBenchPanel *self = AIRY_BENCH_PANEL (object);

  switch (prop_id)
    {
    case PROP_BACKEND: g_value_set_string (value, self->backend); break;
    case PROP_THREADS: g_value_set_int (value, (int) self->threads); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
airy_bench_panel_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  AiryBenchPanel *self = AIRY_BENCH_PANEL (object);

  switch (prop_id)
    {
    case PROP_BACKEND:
      airy_bench_panel_set_backend (self, g_value_get_string (value));
      break;
    case PROP_THREADS:
      if (self->threads != (guint) g_value_get_int (value))
        {
          self->threads = (guint) g_value_get_int (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
airy_bench_panel_dispose (GObject *object)
{
  stop_keeping_scroll (AIRY_BENCH_PANEL (object));
  g_clear_object (&AIRY_BENCH_PANEL (object)->messages);
  gtk_widget_dispose_template (GTK_WIDGET (object), AIRY_TYPE_BENCH_PANEL);
  G_OBJECT_CLASS (airy_bench_panel_parent_class)->dispose (object);
}

static void
airy_bench_panel_finalize (GObject *object)
{
  AiryBenchPanel *self = AIRY_BENCH_PANEL (object);

  g_clear_object (&self->system);
  g_hash_table_unref (self->editors);
  g_ptr_array_unref (self->marked);
  g_ptr_array_unref (self->device_checks);
  g_array_unref (self->devices);
  g_clear_error (&self->error);
  g_free (self->last_edit);
  g_free (self->backend);
  G_OBJECT_CLASS (airy_bench_panel_parent_class)->finalize (object);
}

/* warnings above, the error below, both wrapped; the box shows only what
 * there is */
static GtkWidget *
message_label (const char *style)
{
  GtkWidget *label = gtk_label_new ("");

  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_widget_add_css_class (label, style);
  gtk_widget_set_visible (label, FALSE);
  return label;
}

static void
messages_new (AiryBenchPanel *self)
{
  self->messages = g_object_ref_sink (gtk_box_new (GTK_ORIENTATION_VERTICAL, 4));
  gtk_widget_add_css_class (self->messages, "airy-messages");
  gtk_widget_set_margin_start (self->messages, 8);
  gtk_widget_set_margin_end (self->messages, 8);
  gtk_widget_set_margin_top (self->messages, 4);
  gtk_widget_set_margin_bottom (self->messages, 6);
  self->warnings_label = message_label ("airy-warning");
  self->error_label = message_label ("airy-error");
  gtk_box_append (GTK_BOX (self->messages), self->warnings_label);
  gtk_box_append (GTK_BOX (self->messages), self->error_label);
  gtk_widget_set_visible (self->messages, FALSE);
}

GtkWidget *
airy_bench_panel_get_messages (AiryBenchPanel *self)
{
  g_return_val_if_fail (AIRY_IS_BENCH_PANEL (self), NULL);

  return self->messages;
}

static void
airy_bench_panel_class_init (AiryBenchPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = airy_bench_panel_get_property;
  object_class->set_property = airy_bench_panel_set_property;
  object_class->dispose = airy_bench_panel_dispose;
  object_class->finalize = airy_bench_panel_finalize;

  /* the run settings chosen in the panel */
  properties[PROP_BACKEND] =
    airy_param_spec_string ("backend", N_("Backend"), N_("Where the run is computed"), 0);
  properties[PROP_THREADS] =
    _airy_option_spec_new ("threads", NULL);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* (const char *message): an edit was refused before it reached the
   * system (a number out of range, numbers that do not parse); the field is
   * marked and the system holds its last good value */
  signals[SIGNAL_INVALID] = g_signal_new ("invalid", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/airyoptics/Airy/ui/airy-bench-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, mode);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, system_grid);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, derived_label);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, microscope_frame);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, microscope_grid);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, sample_grid);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, elements_frame);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, elements_title);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, elements_box);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, add_button);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, sensor_frame);
  gtk_widget_class_bind_template_child (widget_class, AiryBenchPanel, sensor_grid);
}

static void
airy_bench_panel_init (AiryBenchPanel *self)
{
  static const GActionEntry entries[] = { { "add", action_add, "s" } };
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();

  self->editors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->marked = g_ptr_array_new ();
  self->devices = g_array_new (FALSE, FALSE, sizeof (guint));
  self->device_checks = g_ptr_array_new ();
  self->backend = g_strdup ("cpu");
  messages_new (self);
  self->building = TRUE;
  gtk_widget_init_template (GTK_WIDGET (self));
  _airy_bench_panel_modality_list (self);
  self->building = FALSE;
  g_signal_connect (self->mode, "notify::selected", G_CALLBACK (_airy_bench_panel_on_mode), self);
  g_action_map_add_action_entries (G_ACTION_MAP (group), entries, G_N_ELEMENTS (entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "bench", G_ACTION_GROUP (group));
  rebuild (self);
}

GtkWidget *
airy_bench_panel_new (void)
{
  return g_object_new (AIRY_TYPE_BENCH_PANEL, NULL);
}
