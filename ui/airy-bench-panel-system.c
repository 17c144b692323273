#define G_LOG_DOMAIN "airy-bench"

#include "config.h"

#include <glib/gi18n.h>

#include "airy-bench-panel-private.h"
#include "airy-backend.h"
#include "airy-error.h"
#include "airy-geometry.h"
#include "airy-modality.h"
#include "airy-param-editor.h"
#include "airy-run.h"

/* The system's rows: its own fields (grid, spectrum, z; the microscope's
 * tube lens and sample) as declared by the system, the run settings, the
 * mode switch and the derived figures. */

static void
grid_row (GtkGrid *grid, const char *text, GtkWidget *editor)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_grid_attach_next_to (grid, label, NULL, GTK_POS_BOTTOM, 1, 1);
  gtk_grid_attach_next_to (grid, editor, label, GTK_POS_RIGHT, 1, 1);
  gtk_widget_set_hexpand (editor, TRUE);
}

static AiryParamEditor *
editor_of (AiryBenchPanel *self, const char *path)
{
  GtkWidget *control = g_hash_table_lookup (self->editors, path);

  return AIRY_PARAM_EDITOR (gtk_widget_get_ancestor (control, AIRY_TYPE_PARAM_EDITOR));
}

/* Wavelengths and weights change together: Enter in either reads both, and
 * a count that does not match is reported instead of half a spectrum. */
static gboolean
on_spectrum_commit (AiryParamEditor *editor, const GValue *value, AiryBenchPanel *self)
{
  AiryParamEditor *wl = editor_of (self, "spectrum.wavelengths");
  AiryParamEditor *wt = editor_of (self, "spectrum.weights");
  g_auto(GValue) other = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySpectrum) spectrum = NULL;
  const double *lambdas, *weights;
  gsize n, nw;

  if (!airy_param_editor_read (editor == wl ? wt : wl, &other, &error))
    {
      _airy_bench_panel_refuse (self, error);
      return TRUE;
    }
  lambdas = g_variant_get_fixed_array (g_value_get_variant (editor == wl ? value : &other), &n, sizeof (double));
  weights = g_variant_get_fixed_array (g_value_get_variant (editor == wl ? &other : value), &nw, sizeof (double));
  if (nw != 0 && nw != n)
    {
      g_autoptr(GError) mismatch = g_error_new (AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                                                _("spectrum.weights: must have one weight per wavelength (%u), got %u"),
                                                (guint) n, (guint) nw);

      _airy_bench_panel_refuse (self, mismatch);
      return TRUE;
    }
  spectrum = airy_spectrum_new (lambdas, nw ? weights : NULL, (guint) n, &error);
  if (spectrum == NULL)
    {
      _airy_bench_panel_refuse (self, error);
      return TRUE;
    }
  airy_system_set_spectrum (self->system, spectrum);
  _airy_bench_panel_changed (self);
  return TRUE;
}

/* ---- run settings ---- */

static void
on_backend (GtkDropDown *drop, GParamSpec *pspec, AiryBenchPanel *self)
{
  GtkStringObject *item = gtk_drop_down_get_selected_item (drop);

  if (item == NULL || self->building)
    return;
  if (g_strcmp0 (self->backend, gtk_string_object_get_string (item)) == 0)
    return;
  airy_bench_panel_set_backend (self, gtk_string_object_get_string (item));
  g_array_set_size (self->devices, 0);
  _airy_bench_panel_rebuild_later (self);    /* the device list is the backend's */
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
  _airy_bench_panel_changed (self);
}

static void
backend_rows (AiryBenchPanel *self, GtkGrid *grid)
{
  g_autoptr(GtkStringList) backends = gtk_string_list_new (NULL);
  g_autoptr(GPtrArray) list = airy_backend_list ();
  AiryBackend *b = airy_backend_lookup (self->backend ? self->backend : "cpu");
  GtkWidget *drop, *dbox = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  guint i, d, selected = 0, n = b ? airy_backend_n_devices (b) : 0;

  for (i = 0; i < list->len; i++)
    {
      AiryBackend *each = g_ptr_array_index (list, i);

      if (!airy_backend_is_available (each))
        continue;
      if (g_strcmp0 (airy_backend_get_name (each), self->backend) == 0)
        selected = g_list_model_get_n_items (G_LIST_MODEL (backends));
      gtk_string_list_append (backends, airy_backend_get_name (each));
    }
  drop = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (backends)), NULL);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (drop), selected);
  g_signal_connect (drop, "notify::selected", G_CALLBACK (on_backend), self);
  grid_row (grid, _("Backend"), drop);
  _airy_bench_panel_register (self, "backend", drop);

  /* the backend's devices, as check boxes (all by default) */
  g_ptr_array_set_size (self->device_checks, 0);
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
      _airy_bench_panel_register (self, path, check);
      gtk_box_append (GTK_BOX (dbox), check);
    }
  grid_row (grid, _("Devices"), dbox);
  _airy_bench_panel_register (self, "devices", dbox);
  _airy_bench_panel_add_param (self, grid, G_OBJECT (self), "threads", "threads", NULL);
}

/* The grid, the spectrum, the z planes and the run settings. */
void
_airy_bench_panel_build_system (AiryBenchPanel *self)
{
  static const char *const fields[] = { "height", "width", "spacing", "wavelengths", "weights",
                                        "z-start", "z-stop", "z-count", NULL };
  GtkGrid *grid = GTK_GRID (self->system_grid);
  const AiryModality *modality = _airy_modality_of (self->system);
  gboolean microscope = _airy_modality_has_objective (modality);
  guint i;

  for (i = 0; fields[i]; i++)
    {
      /* a microscope's grid is the camera's */
      const char *text = microscope && g_str_equal (fields[i], "spacing") ? _("Camera pixel") : NULL;
      GtkWidget *editor = _airy_bench_panel_add_param (self, grid, G_OBJECT (self->system), fields[i], NULL, text);

      if (G_IS_PARAM_SPEC_VARIANT (airy_param_editor_get_pspec (AIRY_PARAM_EDITOR (editor))))
        g_signal_connect (editor, "commit", G_CALLBACK (on_spectrum_commit), self);
    }
  /* one stack per wavelength, shown as channels: a PSF's (a microscope sums them) */
  if (!_airy_modality_one_image (modality))
    _airy_bench_panel_add_param (self, grid, G_OBJECT (self->system), "channels", NULL, NULL);
  backend_rows (self, grid);
}

/* ---- microscope and sample ---- */

static void
on_sample_kind (GtkDropDown *drop, GParamSpec *pspec, AiryBenchPanel *self)
{
  static const AirySample kinds[] = {
    { AIRY_SAMPLE_CONSTANT, 1.0 },
    { AIRY_SAMPLE_BEADS, 0.0, NULL, 40, 1, 1.0 },
    { AIRY_SAMPLE_FILE, 0.0, (char *) "" },
  };
  guint k = gtk_drop_down_get_selected (drop);

  if (self->building || k >= G_N_ELEMENTS (kinds))
    return;
  airy_system_set_sample (self->system, &kinds[k]);
  _airy_bench_panel_show_relevant (self->sample_grid);
  _airy_bench_panel_changed (self);
}

static void
sample_rows (AiryBenchPanel *self)
{
  static const char *const kinds[] = { N_("Constant"), N_("Beads"), N_("TIFF volume"), NULL };
  static const char *const fields[] = { "sample-constant", "beads-count", "beads-seed", "sample-file", NULL };
  const char *translated[G_N_ELEMENTS (kinds)] = { _(kinds[0]), _(kinds[1]), _(kinds[2]), NULL };
  const AirySample *s = airy_system_get_sample (self->system);
  GtkWidget *kind = gtk_drop_down_new_from_strings (translated);
  GtkGrid *grid = GTK_GRID (self->sample_grid);
  guint i;

  gtk_drop_down_set_selected (GTK_DROP_DOWN (kind), s->kind == AIRY_SAMPLE_BEADS ? 1 : s->kind == AIRY_SAMPLE_FILE ? 2 : 0);
  g_signal_connect (kind, "notify::selected", G_CALLBACK (on_sample_kind), self);
  grid_row (grid, _("Sample"), kind);
  _airy_bench_panel_register (self, "sample", kind);
  for (i = 0; fields[i]; i++)
    _airy_bench_panel_add_param (self, grid, G_OBJECT (self->system), fields[i], NULL, NULL);
  _airy_bench_panel_show_relevant (self->sample_grid);
}

/* The objective, the tube lens and the sample of a microscope. */
void
_airy_bench_panel_build_microscope (AiryBenchPanel *self)
{
  const AiryModality *modality = _airy_modality_of (self->system);
  gboolean microscope = _airy_modality_has_objective (modality);

  gtk_widget_set_visible (self->microscope_frame, microscope);
  if (!microscope)
    return;
  _airy_bench_panel_add_editors (self, GTK_GRID (self->microscope_grid), airy_system_get_objective (self->system),
                                 "microscope");
  _airy_bench_panel_add_param (self, GTK_GRID (self->microscope_grid), G_OBJECT (self->system), "f-tube", NULL, NULL);
  if (modality->needs_sample)
    sample_rows (self);
}

/* ---- mode ---- */

/* The mode list: the registered modalities' labels, in the registry's order. */
void
_airy_bench_panel_modality_list (AiryBenchPanel *self)
{
  g_autoptr(GtkStringList) labels = gtk_string_list_new (NULL);
  guint n, i;
  const AiryModality * const *list = _airy_modality_list (&n);

  for (i = 0; i < n; i++)
    gtk_string_list_append (labels, _(list[i]->label));
  gtk_drop_down_set_model (GTK_DROP_DOWN (self->mode), G_LIST_MODEL (labels));
}

guint
_airy_bench_panel_modality_index (AirySystem *system)
{
  guint n, i;
  const AiryModality * const *list = _airy_modality_list (&n);

  for (i = 0; i < n; i++)
    if (g_str_equal (list[i]->name, airy_system_get_modality (system)))
      return i;
  return 0;
}

static GParamSpec *
system_spec (AiryBenchPanel *self, const char *name)
{
  GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS (self->system), name);

  g_assert (spec != NULL);
  return spec;
}

/* f·λ/(n·N·d): the camera's spacing of a pupil spacing d (Optical4F), and
 * the pupil's of a camera spacing d (λ the first wavelength, N the width) */
static double
pupil_to_camera (AirySystem *system, double f, double n)
{
  guint h, w;

  airy_system_get_shape (system, &h, &w);
  return f * airy_system_get_spectrum (system)->wavelengths[0] / (n * w * airy_system_get_spacing (system));
}

/* a modality's part (AiryModality.parts) as an element */
static AiryElement *
part_new (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();

  if (!json_parser_load_from_data (parser, json, -1, NULL) || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  return airy_element_new_from_json (json_node_get_object (json_parser_get_root (parser)), "parts", G_TYPE_INVALID,
                                     NULL, NULL);
}

static gboolean
reads_part (const AiryModality *m, const char *type)
{
  guint i;

  for (i = 0; m && m->parts && m->parts[i]; i++)
    {
      g_autoptr(AiryElement) e = part_new (m->parts[i]);

      if (e && g_str_equal (airy_element_get_type_name (e), type))
        return TRUE;
    }
  return FALSE;
}

/* the parts the old mode reads and the new one does not go; those the new
 * one reads and the system lacks come: a sensor's (a pinhole, a detector
 * array) after the chain, another (STED's depletion mask, a light sheet,
 * a SIM pattern) after the source, or at the end of a microscope's */
static void
swap_parts (AirySystem *system, const AiryModality *from, const AiryModality *to)
{
  gboolean microscope = airy_system_is_microscope (system);
  GPtrArray *elements = airy_system_get_elements (system);
  guint i, k;

  for (i = elements->len; i-- > 0;)
    {
      const char *type = airy_element_get_type_name (g_ptr_array_index (elements, i));

      if (reads_part (from, type) && !reads_part (to, type))
        g_ptr_array_remove_index (elements, i);
    }
  for (k = 0; to->parts && to->parts[k]; k++)
    {
      g_autoptr(AiryElement) e = part_new (to->parts[k]);
      gboolean have = FALSE;

      for (i = 0; e && i < elements->len; i++)
        have |= g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, i)),
                             airy_element_get_type_name (e));
      if (e && !have && (microscope || AIRY_ELEMENT_GET_CLASS (e)->category == AIRY_CATEGORY_SENSOR))
        g_ptr_array_add (elements, g_steal_pointer (&e));
      else if (e && !have)
        g_ptr_array_insert (elements, (int) MIN (elements->len, 1), g_steal_pointer (&e));
    }
}

void
_airy_bench_panel_on_mode (GtkDropDown    *drop,
                           GParamSpec     *pspec,
                           AiryBenchPanel *self)
{
  guint n, i, selected = gtk_drop_down_get_selected (drop);
  const AiryModality * const *list = _airy_modality_list (&n), *from;
  gboolean microscope;
  GPtrArray *elements;

  if (self->building || self->system == NULL || selected >= n
      || g_str_equal (list[selected]->name, airy_system_get_modality (self->system)))
    return;
  from = _airy_modality_of (self->system);
  microscope = list[selected]->needs_microscope;
  elements = airy_system_get_elements (self->system);
  if (microscope == airy_system_is_microscope (self->system))
    ;  /* the same elements in another modality */
  else if (microscope)
    {
      /* the source becomes the objective, the final lens the tube lens;
       * masks stay in the pupil */
      g_autoptr(AiryElement) objective = NULL;
      /* the tube lens is the chain's last FF lens; without one, and the
       * beads, take the system's declared defaults */
      double f_tube = G_PARAM_SPEC_DOUBLE (system_spec (self, "f-tube"))->default_value;
      AirySample beads = { AIRY_SAMPLE_BEADS, 0.0, NULL,
                           G_PARAM_SPEC_INT (system_spec (self, "beads-count"))->default_value,
                           G_PARAM_SPEC_INT (system_spec (self, "beads-seed"))->default_value,
                           G_PARAM_SPEC_DOUBLE (system_spec (self, "beads-intensity"))->default_value };
      g_autoptr(AiryElement) sensor = airy_element_new ("sensor", NULL);

      if (elements->len && g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, 0)),
                                        "objective-point-source"))
        objective = g_object_ref (g_ptr_array_index (elements, 0));
      else
        objective = airy_element_new ("objective-point-source", NULL);
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
      /* the camera keeps the PSF's pixels: s = f_tube·λ/(n·N·dx) */
      airy_system_set_spacing (self->system, pupil_to_camera (self->system, f_tube,
                                                              airy_element_get_double (objective, "n")));
    }
  else
    {
      AiryElement *objective = airy_system_get_objective (self->system);
      AiryElement *lens = airy_element_new ("ff-lens", NULL);
      AirySample none = { AIRY_SAMPLE_NONE };
      double f_tube = airy_system_get_f_tube (self->system), n = airy_element_get_double (objective, "n");
      /* the pupil spacing that gives the camera's pixels (the same
       * formula, which is its own inverse): a round trip keeps it */
      double dx = pupil_to_camera (self->system, f_tube, n);

      g_object_set (lens, "f", f_tube, "n", n, NULL);
      g_ptr_array_insert (elements, 0, g_object_ref (objective));
      g_ptr_array_add (elements, lens);

      airy_system_make_microscope (self->system, NULL, 0.0);
      airy_system_set_sensor (self->system, NULL);
      airy_system_set_sample (self->system, &none);
      airy_system_set_spacing (self->system, dx);
    }
  swap_parts (self->system, from, list[selected]);
  airy_system_set_modality (self->system, list[selected]->name);
  _airy_bench_panel_rebuild_later (self);
}

/* ---- derived figures ---- */

void
_airy_bench_panel_update_derived (AiryBenchPanel *self)
{
  /* the engine's own figures (airy-geometry.h): what the run computes, the
   * sensor's resampling included */
  g_autoptr(AiryGeometry) geom = _airy_geometry_new (self->system, FALSE, NULL, NULL);
  g_autoptr(GString) s = g_string_new (NULL);
  g_autofree char *mem = NULL;
  guint planes, h, w;

  /* a refused value: the check marks its field, and the figures of the
   * last system that runs stay (the form below does not move) */
  if (geom == NULL)
    return;
  if (geom->pupil_radius > 0)
    {
      g_string_append_printf (s, _("Pupil radius %.1f px of %u"), geom->pupil_radius_px, geom->in_width / 2);
      if (geom->output_pixel > 0)
        g_string_append_printf (s, _("\nOutput pixel %.4g µm; Nyquist λ/(4·NA) = %.4g µm: %s"), geom->output_pixel,
                                geom->nyquist, geom->output_pixel <= geom->nyquist ? _("sampled") : _("undersampled"));
    }
  planes = geom->out_depth;
  h = geom->out_height;
  w = geom->out_width;
  mem = airy_format_bytes (_airy_geometry_result_bytes (geom));
  if (geom->n_stacks > 1 && _airy_modality_of (self->system) && _airy_modality_of (self->system)->result_stacks)
    {
      /* a combining modality: its chains, the result and its channels */
      g_autofree char *each = g_strdup_printf (ngettext ("%u plane of %u × %u", "%u planes of %u × %u", planes),
                                               planes, h, w);

      /* TRANSLATORS: the memory, the number of stacks, "64 planes of 512 × 512" */
      g_string_append_printf (s, ngettext ("\nResult %s (%u stack of the modality's chains and channels, each %s)",
                                           "\nResult %s (%u stacks of the modality's chains and channels, each %s)",
                                           geom->n_stacks),
                              mem, geom->n_stacks, each);
    }
  else if (geom->n_stacks > 1)
    {
      /* spectrum.channels: a stack per wavelength beside their sum */
      g_autofree char *each = g_strdup_printf (ngettext ("%u plane of %u × %u", "%u planes of %u × %u", planes),
                                               planes, h, w);

      /* TRANSLATORS: the memory, the number of wavelengths, "64 planes of 512 × 512" */
      g_string_append_printf (s, ngettext ("\nResult %s (%u wavelength and their sum, each %s)",
                                           "\nResult %s (%u wavelengths and their sum, each %s)", geom->n_stacks - 1),
                              mem, geom->n_stacks - 1, each);
    }
  else
    g_string_append_printf (s, ngettext ("\nResult %s (%u plane of %u × %u)", "\nResult %s (%u planes of %u × %u)", planes),
                            mem, planes, h, w);
  gtk_label_set_text (GTK_LABEL (self->derived_label), s->str);
}
