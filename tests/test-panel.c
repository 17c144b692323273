/* The bench panel: rows generated from the parameter declarations (issue 15). */
#include "config.h"

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <json-glib/json-glib.h>
#include <locale.h>

#include "airy-test-util.h"
#include "airy-test-gtk.h"
#include "airy-bench-panel.h"
#include "airy-param-editor.h"
#include "airy-options-private.h"
#include "airy-modality.h"

static gboolean have_display;

/* The widefield preset in a panel; FALSE (the test skipped) without a display. */
static gboolean
new_panel (AirySystem **system, AiryBenchPanel **panel)
{
  g_autoptr(GError) error = NULL;

  if (!have_display)
    {
      g_test_skip ("no display");
      return FALSE;
    }
  *panel = AIRY_BENCH_PANEL (g_object_ref_sink (airy_bench_panel_new ()));
  *system = airy_system_new_from_preset ("widefield", &error);
  g_assert_no_error (error);
  airy_bench_panel_set_system (*panel, *system);
  return TRUE;
}

static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static GtkSpinButton *
spin (AiryBenchPanel *panel, const char *path)
{
  GtkWidget *w = airy_bench_panel_get_editor (panel, path);

  g_assert_nonnull (w);
  g_assert_true (GTK_IS_SPIN_BUTTON (w));
  return GTK_SPIN_BUTTON (w);
}

/* what a person does: type the text, then Enter or Tab */
static void
type_into (GtkSpinButton *s, const char *text)
{
  gtk_editable_set_text (GTK_EDITABLE (s), text);
  gtk_spin_button_update (s);
}

static gboolean
editor_shown (AiryBenchPanel *panel, const char *path)
{
  GtkWidget *w = airy_bench_panel_get_editor (panel, path);
  GtkWidget *editor = w ? gtk_widget_get_ancestor (w, AIRY_TYPE_PARAM_EDITOR) : NULL;

  g_assert_nonnull (editor);
  return gtk_widget_get_visible (editor);
}

/* The grid's and the planes' limits are the system file's: 65536 and
 * 1000000, not the panel's old 16384 and 100000; beyond them the field
 * says so with the loader's message and keeps its value. */
static void
test_limits (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  GParamSpec *height;
  double lo, hi;
  guint h, w, n;

  if (!new_panel (&system, &panel))
    return;
  height = g_object_class_find_property (G_OBJECT_GET_CLASS (system), "height");
  gtk_spin_button_get_range (spin (panel, "grid.shape[0]"), &lo, &hi);
  g_assert_cmpfloat (lo, ==, G_PARAM_SPEC_INT (height)->minimum);
  g_assert_cmpfloat (hi, ==, 65536);
  type_into (spin (panel, "grid.shape[0]"), "65536");
  airy_system_get_shape (system, &h, &w);
  g_assert_cmpuint (h, ==, 65536);
  g_assert_cmpuint (w, ==, 512);
  g_assert_null (airy_bench_panel_get_error (panel));

  type_into (spin (panel, "grid.shape[0]"), "70000");
  g_assert_cmpstr (airy_bench_panel_get_error (panel), ==, "grid.shape[0]: must be in [1, 65536], got 70000");
  airy_system_get_shape (system, &h, &w);
  g_assert_cmpuint (h, ==, 65536);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "grid.shape[0]")), ==, 65536);
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (spin (panel, "grid.shape[0]")), "error"));

  type_into (spin (panel, "z.count"), "1000000");
  airy_system_get_z (system, &n);
  g_assert_cmpuint (n, ==, 1000000);
  type_into (spin (panel, "z.count"), "0");
  g_assert_cmpstr (airy_bench_panel_get_error (panel), ==, "z.count: must be in [1, 1000000], got 0");
  airy_system_get_z (system, &n);
  g_assert_cmpuint (n, ==, 1000000);
}

/* The system's fields are bound: a change made elsewhere shows. */
static void
test_bound (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;

  if (!new_panel (&system, &panel))
    return;
  airy_system_set_shape (system, 300, 200);
  airy_system_set_z_range (system, -1.0, 2.0, 7);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "grid.shape[0]")), ==, 300);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "grid.shape[1]")), ==, 200);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "z.count")), ==, 7);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "z.start")), ==, -1.0);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "z.stop")), ==, 2.0);
  /* and an edit in the panel reaches the system */
  gtk_spin_button_set_value (spin (panel, "z.stop"), 3.0);
  g_assert_cmpfloat (airy_system_get_z (system, &(guint) { 0 })[6], ==, 3.0);

  /* editors of the panel's own settings do not keep it alive */
  g_object_add_weak_pointer (G_OBJECT (panel), (gpointer *) &panel);
  g_object_unref (panel);
  g_assert_null (panel);
}

/* Wavelengths and weights are entered together. */
static void
test_spectrum (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  GtkWidget *wl, *wt;

  if (!new_panel (&system, &panel))
    return;
  wl = airy_bench_panel_get_editor (panel, "spectrum.wavelengths");
  wt = airy_bench_panel_get_editor (panel, "spectrum.weights");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (wl)), ==, "0.532");
  gtk_editable_set_text (GTK_EDITABLE (wl), "0.5, 0.6");
  g_signal_emit_by_name (wl, "activate");
  g_assert_cmpstr (airy_bench_panel_get_error (panel), ==,
                   "spectrum.weights: must have one weight per wavelength (2), got 1");
  g_assert_cmpuint (airy_system_get_spectrum (system)->n, ==, 1);
  gtk_editable_set_text (GTK_EDITABLE (wt), "1, 3");
  g_signal_emit_by_name (wt, "activate");
  g_assert_cmpuint (airy_system_get_spectrum (system)->n, ==, 2);
  g_assert_cmpfloat (airy_system_get_spectrum (system)->weights[1], ==, 0.75);
  gtk_editable_set_text (GTK_EDITABLE (wl), "0.5, 200");
  g_signal_emit_by_name (wl, "activate");
  g_assert_cmpstr (airy_bench_panel_get_error (panel), ==, "spectrum.wavelengths[1]: must be in [0.01, 100] µm, got 200");
  g_assert_cmpfloat (airy_system_get_spectrum (system)->wavelengths[1], ==, 0.6);
}

/* The derived figures' label: the one whose text starts with prefix. */
static const char *
label_starting (GtkWidget *root, const char *prefix)
{
  GtkWidget *child;

  if (GTK_IS_LABEL (root) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (root)), prefix))
    return gtk_label_get_text (GTK_LABEL (root));
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    {
      const char *text = label_starting (child, prefix);

      if (text)
        return text;
    }
  return NULL;
}

/* The result's memory counts what a run holds: with spectrum.channels the
 * stack of each wavelength beside their sum (64 planes of 512² are 64 MiB
 * each), and it follows the edit at once. */
static void
test_result_memory (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  GtkWidget *wl, *wt, *channels;
  const char *text;

  if (!new_panel (&system, &panel))
    return;
  text = label_starting (GTK_WIDGET (panel), "Pupil radius");
  g_assert_nonnull (text);
  g_assert_nonnull (strstr (text, "\nResult 64.0 MiB (64 planes of 512 × 512)"));
  wl = airy_bench_panel_get_editor (panel, "spectrum.wavelengths");
  wt = airy_bench_panel_get_editor (panel, "spectrum.weights");
  gtk_editable_set_text (GTK_EDITABLE (wt), "1, 1");
  gtk_editable_set_text (GTK_EDITABLE (wl), "0.532, 0.64");
  g_signal_emit_by_name (wl, "activate");
  g_signal_emit_by_name (wt, "activate");
  g_assert_cmpuint (airy_system_get_spectrum (system)->n, ==, 2);
  /* summed over the wavelengths: one stack still */
  text = label_starting (GTK_WIDGET (panel), "Pupil radius");
  g_assert_nonnull (strstr (text, "\nResult 64.0 MiB (64 planes of 512 × 512)"));
  channels = airy_bench_panel_get_editor (panel, "spectrum.channels");
  g_assert_true (GTK_IS_CHECK_BUTTON (channels));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (channels), TRUE);
  g_assert_true (airy_system_get_channels (system));
  text = label_starting (GTK_WIDGET (panel), "Pupil radius");
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "\nResult 192.0 MiB (2 wavelengths and their sum, each 64 planes of 512 × 512)"));
  g_assert_cmpuint (airy_system_get_result_bytes (system, NULL), ==, 3 * 64 * 512 * 512 * 4);
}

/* The result's size is the run's: a block-sum sensor of 2 halves a
 * microscope's image (the panel reads the engine's geometry, not the grid). */
static void
test_result_after_sensor (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryElement) sensor = NULL;
  const char *text;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  panel = AIRY_BENCH_PANEL (g_object_ref_sink (airy_bench_panel_new ()));
  system = airy_system_new_from_preset ("imaging", &error);
  g_assert_no_error (error);
  airy_bench_panel_set_system (panel, system);
  text = label_starting (GTK_WIDGET (panel), "Pupil radius");
  g_assert_nonnull (text);
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "\nResult 0.2 MiB (1 plane of 256 × 256)"));
  sensor = airy_element_copy (airy_system_get_sensor (system));
  g_object_set (sensor, "resample", 1, "factor", 2, NULL);   /* block sum */
  airy_system_set_sensor (system, sensor);
  airy_bench_panel_set_system (panel, system);
  drain ();
  text = label_starting (GTK_WIDGET (panel), "Pupil radius");
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "\nResult 0.1 MiB (1 plane of 128 × 128)"));
  /* the pupil of f·NA/n = 60.2 µm on the pupil grid of f_tube·λ/(n·N·s) */
  g_assert_true (g_str_has_prefix (text, "Pupil radius 38.5 px of 128\nOutput pixel 0.1 µm; Nyquist λ/(4·NA) = 0.1663 µm: sampled"));
}

/* A phase mask shows the parameters of its source, in place: the row stays
 * open when the source changes. */
static void
test_relevant_rows (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  GtkWidget *row, *source;

  if (!new_panel (&system, &panel))
    return;
  row = airy_bench_panel_get_editor (panel, "elements[1]");
  g_assert_true (GTK_IS_EXPANDER (row));
  gtk_expander_set_expanded (GTK_EXPANDER (row), TRUE);
  g_assert_false (editor_shown (panel, "elements[1].value"));
  g_assert_false (editor_shown (panel, "elements[1].strength"));
  g_assert_true (editor_shown (panel, "elements[1].zernike-indexing"));
  g_assert_true (editor_shown (panel, "elements[1].wrap"));
  g_assert_true (gtk_widget_get_visible (airy_bench_panel_get_editor (panel, "elements[1].zernike-indices")));

  source = airy_bench_panel_get_editor (panel, "elements[1].source");
  g_assert_true (GTK_IS_DROP_DOWN (source));
  gtk_drop_down_set_selected (GTK_DROP_DOWN (source), 3);   /* named */
  drain ();
  g_assert_cmpint (airy_element_get_enum (g_ptr_array_index (airy_system_get_elements (system), 1), "source"), ==, 3);
  g_assert_true (editor_shown (panel, "elements[1].strength"));
  g_assert_true (editor_shown (panel, "elements[1].named"));
  g_assert_false (editor_shown (panel, "elements[1].zernike-indexing"));
  g_assert_false (gtk_widget_get_visible (airy_bench_panel_get_editor (panel, "elements[1].zernike-indices")));
  g_assert_true (editor_shown (panel, "elements[1].wrap"));
  /* the same row, still open */
  g_assert_true (airy_bench_panel_get_editor (panel, "elements[1]") == row);
  g_assert_true (gtk_expander_get_expanded (GTK_EXPANDER (row)));
}

/* The Zernike table: index limit from the declaration, terms added and
 * removed in place. */
static void
test_zernike (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  AiryElement *mask;
  GtkWidget *table, *add;
  const double *idx;
  double lo, hi, decl_lo, decl_hi;
  gsize n;

  if (!new_panel (&system, &panel))
    return;
  mask = g_ptr_array_index (airy_system_get_elements (system), 1);
  g_assert_true (airy_param_spec_get_item_range (g_object_class_find_property (G_OBJECT_GET_CLASS (mask),
                                                                                "zernike-indices"),
                                                 &decl_lo, &decl_hi));
  gtk_spin_button_get_range (spin (panel, "elements[1].zernike-indices[0]"), &lo, &hi);
  g_assert_cmpfloat (lo, ==, decl_lo);
  g_assert_cmpfloat (hi, ==, decl_hi);
  g_assert_cmpfloat (hi, ==, 230);

  /* "Add term": the next index, in a new row */
  table = airy_bench_panel_get_editor (panel, "elements[1].zernike-indices");
  add = test_find_widget (table, GTK_TYPE_BUTTON, "Add term");
  g_assert_nonnull (add);
  g_signal_emit_by_name (add, "clicked");
  drain ();
  idx = airy_element_get_doubles (mask, "zernike-indices", &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpfloat (idx[1], ==, 5);
  gtk_spin_button_set_value (spin (panel, "elements[1].zernike-coefficients[1]"), 0.1);
  g_assert_cmpfloat (airy_element_get_doubles (mask, "zernike-coefficients", &n)[1], ==, 0.1);

  type_into (spin (panel, "elements[1].zernike-indices[1]"), "300");
  g_assert_cmpstr (airy_bench_panel_get_error (panel), ==,
                   "elements[1].zernike-indices[1]: must be an integer in [0, 230], got 300");
  g_assert_cmpfloat (airy_element_get_doubles (mask, "zernike-indices", &n)[1], ==, 5);
}

static const char *
drop_down_item (GtkWidget *w, guint i)
{
  g_assert_true (GTK_IS_DROP_DOWN (w));
  return gtk_string_list_get_string (GTK_STRING_LIST (gtk_drop_down_get_model (GTK_DROP_DOWN (w))), i);
}

/* the nick elements[0].defocus-model has in the system's JSON (NULL when
 * left out: the default) */
static char *
json_defocus_model (AirySystem *system)
{
  g_autofree char *text = airy_system_to_json (system);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = json_from_string (text, &error);
  JsonObject *objective;

  g_assert_no_error (error);
  objective = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "elements"), 0);
  return g_strdup (json_object_get_string_member_with_default (objective, "defocus-model", NULL));
}

/* Enum parameters show a translated label (the enum's value_name), not the
 * JSON's nick; choosing one still writes the nick. */
static void
test_enum_labels (void)
{
  static const char *const langs[] = { "C", "de" };
  static const char *const nonparaxial[] = { "non-paraxial", "nicht-paraxial" };
  static const char *const paraxial[] = { "paraxial", "paraxial" };
  static const char *const microns[] = { "µm", "µm" };
  static const char *const zernike[] = { "Zernike terms", "Zernike-Terme" };
  static const char *const circular[] = { "circular", "zirkular" };
  guint l;

  for (l = 0; l < G_N_ELEMENTS (langs); l++)
    {
      g_autoptr(AirySystem) system = NULL;
      g_autoptr(AiryBenchPanel) panel = NULL;
      g_autofree char *nick = NULL;
      GtkWidget *model, *w;

      test_use_language (langs[l]);
      if (!new_panel (&system, &panel))
        break;
      model = airy_bench_panel_get_editor (panel, "elements[0].defocus-model");
      g_assert_cmpstr (drop_down_item (model, 0), ==, paraxial[l]);
      g_assert_cmpstr (drop_down_item (model, 1), ==, nonparaxial[l]);
      g_assert_cmpstr (drop_down_item (airy_bench_panel_get_editor (panel, "elements[1].source"), 2), ==, zernike[l]);
      g_assert_cmpstr (drop_down_item (airy_bench_panel_get_editor (panel, "elements[1].zernike-unit"), 1), ==,
                       microns[l]);
      w = airy_bench_panel_get_editor (panel, "elements[0].polarization");
      g_assert_cmpstr (drop_down_item (w, 3), ==, circular[l]);

      nick = json_defocus_model (system);
      g_assert_null (nick);   /* the default, paraxial */
      g_clear_pointer (&nick, g_free);
      gtk_drop_down_set_selected (GTK_DROP_DOWN (model), 1);
      drain ();
      g_assert_cmpint (airy_element_get_enum (g_ptr_array_index (airy_system_get_elements (system), 0),
                                              "defocus-model"), ==, 1);
      nick = json_defocus_model (system);
      g_assert_cmpstr (nick, ==, "nonparaxial");
      g_assert_cmpstr (gtk_string_object_get_string (GTK_STRING_OBJECT (gtk_drop_down_get_selected_item (
                         GTK_DROP_DOWN (model)))), ==, nonparaxial[l]);
    }
  test_use_language ("C");
}

/* The run settings and the mode switch take the declarations: the
 * Threads field's bounds are the option table's (airy-sim's --threads),
 * and a switch to the microscope without a tube lens in the chain gives
 * the system's declared f-tube and bead defaults (not 100 and seed 1). */
static void
test_declared_defaults (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryBenchPanel) panel = NULL;
  g_autoptr(GError) error = NULL;
  GParamSpecInt *threads = G_PARAM_SPEC_INT (_airy_option_spec ("threads"));
  GObjectClass *klass;
  const AirySample *sample;
  double lo, hi;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  panel = AIRY_BENCH_PANEL (g_object_ref_sink (airy_bench_panel_new ()));
  system = airy_system_new_from_data (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5}]}", -1, NULL, "test", &error);
  g_assert_no_error (error);
  airy_bench_panel_set_system (panel, system);
  gtk_spin_button_get_range (spin (panel, "threads"), &lo, &hi);
  g_assert_cmpfloat (lo, ==, threads->minimum);
  g_assert_cmpfloat (hi, ==, threads->maximum);
  g_assert_cmpfloat (gtk_spin_button_get_value (spin (panel, "threads")), ==, threads->default_value);

  gtk_drop_down_set_selected (GTK_DROP_DOWN (airy_bench_panel_get_editor (panel, "mode")), 1);
  drain ();
  g_assert_true (airy_system_is_microscope (system));
  klass = G_OBJECT_GET_CLASS (system);
  g_assert_cmpfloat (airy_system_get_f_tube (system), ==,
                     G_PARAM_SPEC_DOUBLE (g_object_class_find_property (klass, "f-tube"))->default_value);
  g_assert_cmpfloat (airy_system_get_f_tube (system), ==, 200.0);
  sample = airy_system_get_sample (system);
  g_assert_cmpint (sample->kind, ==, AIRY_SAMPLE_BEADS);
  g_assert_cmpuint (sample->seed, ==, G_PARAM_SPEC_INT (g_object_class_find_property (klass, "beads-seed"))->default_value);
  g_assert_cmpuint (sample->seed, ==, 0);
  g_assert_cmpuint (sample->count, ==,
                    G_PARAM_SPEC_INT (g_object_class_find_property (klass, "beads-count"))->default_value);
}

static guint
mode_index (const char *name)
{
  guint n, i;
  const AiryModality * const *list = _airy_modality_list (&n);

  for (i = 0; i < n; i++)
    if (g_str_equal (list[i]->name, name))
      return i;
  g_assert_not_reached ();
}

static guint
count_type (AirySystem *system, const char *type)
{
  GPtrArray *elements = airy_system_get_elements (system);
  guint i, count = 0;

  for (i = 0; i < elements->len; i++)
    count += g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, i)), type);
  return count;
}

/* A scanning mode brings the parts it reads (its declared JSON), another
 * mode takes away those it does not read */
static void
test_scan_parts (void)
{
  g_autoptr(AiryBenchPanel) panel = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GError) error = NULL;
  GtkDropDown *mode;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  panel = AIRY_BENCH_PANEL (g_object_ref_sink (airy_bench_panel_new ()));
  system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 7.6}, \"spectrum\": "
                        "{\"wavelengths\": [0.52]}, \"elements\": [{\"type\": \"objective-point-source\", "
                        "\"f\": 100, \"n\": 1.33, \"na\": 1.2}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  airy_bench_panel_set_system (panel, system);
  mode = GTK_DROP_DOWN (airy_bench_panel_get_editor (panel, "mode"));
  gtk_drop_down_set_selected (mode, mode_index ("confocal"));
  drain ();
  g_assert_cmpstr (airy_system_get_modality (system), ==, "confocal");
  g_assert_cmpuint (count_type (system, "excitation"), ==, 1);
  g_assert_cmpuint (count_type (system, "pinhole"), ==, 1);
  g_assert_true (airy_system_check (system, NULL, &error));
  gtk_drop_down_set_selected (mode, mode_index ("two-photon"));
  drain ();
  g_assert_cmpuint (count_type (system, "pinhole"), ==, 0);
  g_assert_cmpuint (count_type (system, "excitation"), ==, 1);
  gtk_drop_down_set_selected (mode, mode_index ("ism"));
  drain ();
  g_assert_cmpuint (count_type (system, "detector-array"), ==, 1);
  g_assert_true (airy_system_check (system, NULL, &error));
  gtk_drop_down_set_selected (mode, mode_index ("psf"));
  drain ();
  g_assert_cmpuint (airy_system_get_elements (system)->len, ==, 2);
  g_assert_true (airy_system_check (system, NULL, &error));
  g_assert_no_error (error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  have_display = gtk_init_check ();

  g_test_add_func ("/panel/limits", test_limits);
  g_test_add_func ("/panel/bound", test_bound);
  g_test_add_func ("/panel/spectrum", test_spectrum);
  g_test_add_func ("/panel/result-memory", test_result_memory);
  g_test_add_func ("/panel/result-after-sensor", test_result_after_sensor);
  g_test_add_func ("/panel/relevant-rows", test_relevant_rows);
  g_test_add_func ("/panel/zernike", test_zernike);
  g_test_add_func ("/panel/enum-labels", test_enum_labels);
  g_test_add_func ("/panel/declared-defaults", test_declared_defaults);
  g_test_add_func ("/panel/scan-parts", test_scan_parts);
  return g_test_run ();
}
