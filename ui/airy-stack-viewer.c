#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"

/* The stack viewer: the object, its display (limits, auto contrast, the
 * histogram of the shown slice), the main view's resident, playing
 * through z, the zoom actions, a dropped file and the layout of its
 * parts. */


G_DEFINE_FINAL_TYPE (AiryStackViewer, airy_stack_viewer, GTK_TYPE_BOX)

static void
airy_stack_viewer_dispose (GObject *object)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (object);

  g_clear_handle_id (&self->play_source, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (object), AIRY_TYPE_STACK_VIEWER);
  G_OBJECT_CLASS (airy_stack_viewer_parent_class)->dispose (object);
}

static void
airy_stack_viewer_finalize (GObject *object)
{
  g_clear_pointer (&AIRY_STACK_VIEWER (object)->current, airy_resident_unref);
  g_clear_pointer (&AIRY_STACK_VIEWER (object)->reference, airy_resident_unref);
  g_free (AIRY_STACK_VIEWER (object)->readout_text);
  g_free (AIRY_STACK_VIEWER (object)->shown_label);
  g_free (AIRY_STACK_VIEWER (object)->path);
  g_clear_pointer (&AIRY_STACK_VIEWER (object)->mem_channels, g_ptr_array_unref);
  g_clear_pointer (&AIRY_STACK_VIEWER (object)->channel_wavelengths, g_array_unref);
  G_OBJECT_CLASS (airy_stack_viewer_parent_class)->finalize (object);
}

static void
airy_stack_viewer_class_init (AiryStackViewerClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = airy_stack_viewer_dispose;
  G_OBJECT_CLASS (klass)->finalize = airy_stack_viewer_finalize;
  _airy_stack_viewer_class_init_toolbar (GTK_WIDGET_CLASS (klass));
  /* what the main view shows changed (airy_stack_viewer_get_shown_label) */
  g_signal_new ("shown-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

void
airy_stack_viewer_show_message (AiryStackViewer *self,
                                const char      *message)
{
  gtk_label_set_text (GTK_LABEL (self->message), message ? message : "");
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->message_revealer), message != NULL);
}

const char *
airy_stack_viewer_get_message (AiryStackViewer *self)
{
  return gtk_revealer_get_reveal_child (GTK_REVEALER (self->message_revealer))
         ? gtk_label_get_text (GTK_LABEL (self->message)) : NULL;
}

const char *
airy_stack_viewer_get_readout (AiryStackViewer *self)
{
  return self->readout_text;
}

/* the controls follow through their bindings to the view's properties */
void
airy_stack_viewer_set_display (AiryStackViewer   *self,
                               const AiryDisplay *d)
{
  airy_stack_view_set_display (self->view, d);
}

/* Statistics of a slice through the resident's slot (on the GPU for a
 * CUDA result); a failure leaves them empty and shows the message. */
static gboolean
slice_stats (AiryStackViewer *self, const AirySlice *slice, AirySliceStats *stats)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = slice ? airy_resident_stats (airy_stack_view_get_resident (self->view), slice, stats, &error)
                      : airy_stack_view_xy_stats (self->view, stats, &error);

  if (!ok)
    {
      stats->min = 0.0f;
      stats->max = 1.0f;
      if (stats->n_bins)
        memset (stats->counts, 0, stats->n_bins * sizeof (guint64));
      airy_stack_viewer_show_message (self, error->message);
    }
  return ok;
}

static void
set_limit_range (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AirySliceStats stats = { 0.0f, 1.0f, 0, NULL };
  float lo, hi;
  double span;

  if (s)
    slice_stats (self, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &stats);
  lo = stats.min;
  hi = stats.max;
  span = MAX (fabs (lo), fabs (hi)) * 10 + 1;
  /* a profile's peak under 1e-3 of the stack's is noise: no FWHM for it */
  airy_plot_set_peak_floor (self->line_plot, 1e-3 * MAX (fabs (lo), fabs (hi)));
  airy_plot_set_peak_floor (self->axial_plot, 1e-3 * MAX (fabs (lo), fabs (hi)));
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->lo_spin), -span, span);
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->hi_spin), -span, span);
  gtk_spin_button_set_increments (GTK_SPIN_BUTTON (self->lo_spin), (hi - lo) / 100.0 + 1e-12, (hi - lo) / 10.0 + 1e-12);
  gtk_spin_button_set_increments (GTK_SPIN_BUTTON (self->hi_spin), (hi - lo) / 100.0 + 1e-12, (hi - lo) / 10.0 + 1e-12);
}

/* Auto contrast from the slot's statistics (computed where the values
 * are): the extremes, or the 0.1 % percentiles to one bin of a fine
 * histogram (1/4096 of the range). */
#define PERCENTILE_BINS 4096

void
airy_stack_viewer_auto_contrast (AiryStackViewer *self,
                                 AiryAutoContrast mode)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryDisplay d = *airy_stack_view_get_display (self->view);
  gboolean stack = mode == AIRY_AUTO_MINMAX_STACK || mode == AIRY_AUTO_PERCENTILE_STACK;
  double percent = mode == AIRY_AUTO_PERCENTILE_SLICE || mode == AIRY_AUTO_PERCENTILE_STACK ? 0.1 : 0.0;
  g_autofree guint64 *counts = percent > 0 ? g_new (guint64, PERCENTILE_BINS) : NULL;
  AirySliceStats stats = { 0.0f, 1.0f, percent > 0 ? PERCENTILE_BINS : 0, counts };

  if (s == NULL)
    return;
  if (!slice_stats (self, stack ? &(AirySlice) { AIRY_SLICE_STACK, 0 } : NULL, &stats))
    return;
  if (percent > 0)
    airy_histogram_percentiles (counts, PERCENTILE_BINS, stats.min, airy_stats_hist_max (&stats), percent,
                                &d.lo, &d.hi);
  else
    {
      d.lo = stats.min;
      d.hi = stats.max > stats.min ? stats.max : stats.min + 1.0f;
    }
  airy_stack_viewer_set_display (self, &d);
}

void
_airy_stack_viewer_on_view_changed (AiryStackView *view, AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (view);
  guint z = airy_stack_view_get_z (view);

  /* side by side: B follows A's cursor and plane */
  if (self->ref_view && gtk_widget_get_visible (self->ref_box) && airy_stack_view_get_stack (self->ref_view))
    airy_stack_view_link_cursor (self->ref_view, view);

  if (s)
    {
      g_autofree char *label = self->uncalibrated ? g_strdup_printf (_("z %u/%u"), z + 1, s->depth)
                                                  : g_strdup_printf (_("z %u/%u  %+.3f µm"), z + 1, s->depth,
                                                                     airy_stack_get_z (s, z));
      guint64 counts[AIRY_HISTOGRAM_BINS];
      AirySliceStats stats = { 0.0f, 1.0f, AIRY_HISTOGRAM_BINS, counts };
      guint known;

      if (airy_resident_is_partial (airy_stack_view_get_resident (view), &known))
        {
          /* a run's first plane: the others are still being computed */
          char *more = g_strdup_printf (_("%s · computing (plane %u known)"), label, known + 1);

          g_free (label);
          label = more;
        }
      gtk_label_set_text (GTK_LABEL (self->z_label), label);
      /* the histogram of the shown slice, computed where its values are */
      slice_stats (self, NULL, &stats);
      airy_histogram_widget_set_counts (self->histogram, stats.min, airy_stats_hist_max (&stats), counts,
                                        AIRY_HISTOGRAM_BINS);
    }
  _airy_stack_viewer_update_plots (self);
}

static void
on_hover (AiryStackView *view, double x, double y, AiryStackViewer *self)
{
  _airy_stack_viewer_update_readout (self, (guint) x, (guint) y);
}

void
airy_stack_viewer_set_stack (AiryStackViewer *self,
                             AiryStack       *stack)
{
  airy_stack_viewer_set_resident (self, stack ? airy_resident_new_host (stack) : NULL);
}

/* Shows a resident in the main view (transfer full). */
void
_airy_stack_viewer_show_resident (AiryStackViewer *self,
                                  AiryResident    *resident)
{
  gboolean first = airy_stack_view_get_stack (self->view) == NULL;
  const AiryStack *stack = resident ? airy_resident_get_stack (resident) : NULL;
  /* the first look framed a run's first plane: the full stack frames again */
  gboolean refit = self->fit_after_partial && resident && !airy_resident_is_partial (resident, NULL);

  airy_stack_view_set_resident (self->view, resident);
  if (stack)
    {
      gtk_range_set_range (GTK_RANGE (self->z_scale), 0, MAX (stack->depth - 1, 1));
      gtk_widget_set_sensitive (self->z_scale, stack->depth > 1);
      gtk_widget_set_sensitive (self->play, stack->depth > 1);
      if (first)
        {
          airy_stack_view_set_cursor (self->view, stack->width / 2, stack->height / 2);
          airy_stack_view_set_z (self->view, stack->depth / 2);
        }
      /* the first look frames the PSF, not its empty field */
      if ((first || refit) && airy_stack_view_get_fit (self->view))
        airy_stack_view_fit_psf (self->view);
      self->fit_after_partial = (first || self->fit_after_partial) && airy_resident_is_partial (resident, NULL);
      set_limit_range (self);
      if (first || gtk_check_button_get_active (GTK_CHECK_BUTTON (self->auto_on)))
        airy_stack_viewer_auto_contrast (self, gtk_drop_down_get_selected (GTK_DROP_DOWN (self->auto_mode)));
    }
  _airy_stack_viewer_on_view_changed (self->view, self);
}

void
airy_stack_viewer_set_resident (AiryStackViewer *self,
                                AiryResident    *resident)
{
  /* a new stack is not a file's channel or time point until open says so */
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->mem_channels, g_ptr_array_unref);
  g_clear_pointer (&self->channel_wavelengths, g_array_unref);
  gtk_widget_set_visible (self->hyper_box, FALSE);
  if (self->uncalibrated)
    _airy_stack_viewer_set_uncalibrated (self, FALSE);
  airy_stack_viewer_show_message (self, NULL);
  g_clear_pointer (&self->current, airy_resident_unref);
  self->current = resident;
  _airy_stack_viewer_show_compare (self);
}

AiryStackView *
airy_stack_viewer_get_view (AiryStackViewer *self)
{
  return self->view;
}

AiryPlot *
airy_stack_viewer_get_line_plot (AiryStackViewer *self)
{
  return self->line_plot;
}

AiryPlot *
airy_stack_viewer_get_axial_plot (AiryStackViewer *self)
{
  return self->axial_plot;
}

/* ---- controls ---- */

static gboolean
play_tick (gpointer data)
{
  AiryStackViewer *self = data;
  AiryStack *s = airy_stack_view_get_stack (self->view);

  if (s && s->depth > 1)
    airy_stack_view_set_z (self->view, (airy_stack_view_get_z (self->view) + 1) % s->depth);
  return G_SOURCE_CONTINUE;
}

static void
on_play (GtkToggleButton *button, AiryStackViewer *self)
{
  g_clear_handle_id (&self->play_source, g_source_remove);
  if (gtk_toggle_button_get_active (button))
    self->play_source = g_timeout_add (80, play_tick, self);
}

/* the view's zoom, as actions: viewer.fit, viewer.fit-psf, viewer.zoom-1,
 * viewer.zoom-in, viewer.zoom-out */
static void
action_zoom (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryStackViewer *self = data;
  const char *name = g_action_get_name (G_ACTION (action));
  double zoom = airy_stack_view_get_zoom (self->view);

  if (g_str_equal (name, "fit"))
    airy_stack_view_fit (self->view);
  else if (g_str_equal (name, "fit-psf"))
    {
      double x, y, w, h;
      guint cx, cy, px, py, pz;

      airy_stack_view_fit_psf (self->view);
      /* a cursor outside the framed PSF goes to its peak: the sections and
       * profiles show the PSF, not its empty field */
      airy_stack_view_get_cursor (self->view, &cx, &cy);
      if (airy_stack_view_get_psf_region (self->view, &x, &y, &w, &h)
          && (cx < x || cx >= x + w || cy < y || cy >= y + h)
          && airy_stack_view_find_peak (self->view, &px, &py, &pz))
        {
          airy_stack_view_set_z (self->view, pz);
          airy_stack_view_set_cursor (self->view, px, py);
        }
    }
  else if (g_str_equal (name, "zoom-1"))
    airy_stack_view_set_zoom (self->view, 1.0);
  else if (zoom > 0)
    airy_stack_view_set_zoom (self->view, CLAMP (zoom * (g_str_equal (name, "zoom-in") ? 1.25 : 0.8), 1.0 / 64, 256.0));
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, AiryStackViewer *self)
{
  GSList *files;
  g_autofree char *path = NULL;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = gdk_file_list_get_files (g_value_get_boxed (value));
  if (files == NULL)
    return FALSE;
  path = g_file_get_path (files->data);
  g_slist_free (files);
  if (path == NULL)
    return FALSE;
  airy_stack_viewer_open_async (self, path, 0, 0);
  return TRUE;
}

static void
airy_stack_viewer_init (AiryStackViewer *self)
{
  static const GActionEntry entries[] = {
    { "open", _airy_stack_viewer_action_file }, { "export-png", _airy_stack_viewer_action_file },
    { "export-png-2x", _airy_stack_viewer_action_file }, { "export-raw", _airy_stack_viewer_action_file },
    { "export-tiff", _airy_stack_viewer_action_file }, { "export-section", _airy_stack_viewer_action_file },
    { "export-sections-png", _airy_stack_viewer_action_file }, { "export-slice-png", _airy_stack_viewer_action_file },
    { "export-line-csv", _airy_stack_viewer_action_file }, { "export-axial-csv", _airy_stack_viewer_action_file },
    { "fit", action_zoom }, { "fit-psf", action_zoom }, { "zoom-1", action_zoom },
    { "zoom-in", action_zoom }, { "zoom-out", action_zoom }, { "properties", _airy_stack_viewer_action_properties },
    { "pin", _airy_stack_viewer_action_compare }, { "unpin", _airy_stack_viewer_action_compare },
    { "toggle-ab", _airy_stack_viewer_action_compare }, { "compare-side", _airy_stack_viewer_action_compare },
    { "compare-diff", _airy_stack_viewer_action_compare }, { "compare-off", _airy_stack_viewer_action_compare },
  };
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();
  GtkWidget *paned, *side, *bottom;
  GtkDropTarget *drop;
  guint i;

  gtk_widget_init_template (GTK_WIDGET (self));

  g_action_map_add_action_entries (G_ACTION_MAP (group), entries, G_N_ELEMENTS (entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "viewer", G_ACTION_GROUP (group));
  self->actions = G_ACTION_GROUP (group);   /* kept alive by the widget's muxer */

  _airy_stack_viewer_build_toolbar (self);


  self->message = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->message), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->message), 0);
  gtk_widget_add_css_class (self->message, "airy-error");
  self->message_revealer = gtk_revealer_new ();
  gtk_revealer_set_child (GTK_REVEALER (self->message_revealer), self->message);

  /* canvas and side panel */
  paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_widget_set_vexpand (paned, TRUE);
  self->view = AIRY_STACK_VIEW (airy_stack_view_new ());
  {
    /* A, and beside it B of a side-by-side comparison */
    GtkWidget *views = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);

    GtkWidget *a_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);

    gtk_box_set_homogeneous (GTK_BOX (views), TRUE);
    /* both titled while side by side, so that their canvases line up */
    self->a_label = gtk_label_new ("");
    gtk_widget_add_css_class (self->a_label, "dim-label");
    gtk_widget_set_visible (self->a_label, FALSE);
    gtk_box_append (GTK_BOX (a_box), self->a_label);
    gtk_box_append (GTK_BOX (a_box), GTK_WIDGET (self->view));
    gtk_box_append (GTK_BOX (views), a_box);
    self->ref_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
    self->ref_label = gtk_label_new ("");
    gtk_widget_add_css_class (self->ref_label, "dim-label");
    self->ref_view = AIRY_STACK_VIEW (airy_stack_view_new ());
    gtk_widget_set_focusable (GTK_WIDGET (self->ref_view), FALSE);
    gtk_box_append (GTK_BOX (self->ref_box), self->ref_label);
    gtk_box_append (GTK_BOX (self->ref_box), GTK_WIDGET (self->ref_view));
    gtk_widget_set_visible (self->ref_box, FALSE);
    gtk_box_append (GTK_BOX (views), self->ref_box);
    gtk_paned_set_start_child (GTK_PANED (paned), views);
  }
  gtk_paned_set_resize_start_child (GTK_PANED (paned), TRUE);
  side = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_add_css_class (side, "airy-sidebar");
  self->histogram = AIRY_HISTOGRAM_WIDGET (airy_histogram_widget_new ());
  self->line_plot = AIRY_PLOT (airy_plot_new (_("Line profile")));
  self->axial_plot = AIRY_PLOT (airy_plot_new (_("Axial profile")));
  gtk_widget_set_vexpand (GTK_WIDGET (self->line_plot), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->axial_plot), TRUE);
  gtk_box_append (GTK_BOX (side), gtk_label_new (_("Histogram (log counts)")));
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->histogram));
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->line_plot));
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->axial_plot));
  self->roi_label = gtk_label_new ("");
  gtk_label_set_xalign (GTK_LABEL (self->roi_label), 0);
  /* one short figure a line: no wrapping (a wrapped label in the paned
   * trips GTK 4.8's height-for-width check) */
  gtk_widget_add_css_class (self->roi_label, "airy-readout");
  gtk_widget_add_css_class (self->roi_label, "airy-roi");
  gtk_widget_set_margin_start (self->roi_label, 6);
  gtk_widget_set_margin_end (self->roi_label, 6);
  gtk_widget_set_visible (self->roi_label, FALSE);
  gtk_box_append (GTK_BOX (side), self->roi_label);
  gtk_paned_set_end_child (GTK_PANED (paned), side);
  gtk_paned_set_resize_end_child (GTK_PANED (paned), FALSE);
  gtk_paned_set_shrink_end_child (GTK_PANED (paned), FALSE);

  /* z and readout */
  bottom = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_margin_start (bottom, 6);
  gtk_widget_set_margin_end (bottom, 6);
  gtk_widget_set_margin_bottom (bottom, 4);
  self->play = gtk_toggle_button_new ();
  gtk_button_set_icon_name (GTK_BUTTON (self->play), "media-playback-start-symbolic");
  gtk_widget_set_tooltip_text (self->play, _("Play through z"));
  self->z_scale = gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0, 1, 1);
  gtk_scale_set_draw_value (GTK_SCALE (self->z_scale), FALSE);
  gtk_widget_set_hexpand (self->z_scale, TRUE);
  self->z_label = gtk_label_new ("");
  self->readout = gtk_label_new ("");
  gtk_widget_add_css_class (self->readout, "airy-readout");
  gtk_box_append (GTK_BOX (bottom), self->play);
  gtk_box_append (GTK_BOX (bottom), self->z_scale);
  gtk_box_append (GTK_BOX (bottom), self->z_label);
  /* an image without a voxel size says so, and offers one */
  self->calibration = gtk_button_new_with_label (_("uncalibrated (pixels)"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->calibration), "viewer.properties");
  gtk_widget_set_tooltip_text (self->calibration, _("Set the voxel size (Properties…)"));
  gtk_widget_add_css_class (self->calibration, "flat");
  gtk_widget_set_visible (self->calibration, FALSE);
  gtk_box_append (GTK_BOX (bottom), self->calibration);
  _airy_stack_viewer_add_focus (self, G_ACTION_MAP (group), bottom);

  gtk_box_append (GTK_BOX (self), self->message_revealer);
  gtk_box_append (GTK_BOX (self), paned);
  gtk_box_append (GTK_BOX (self), bottom);
  gtk_box_append (GTK_BOX (self), self->readout);

  _airy_stack_viewer_bind_controls (self);
  g_signal_connect (self->play, "toggled", G_CALLBACK (on_play), self);
  g_signal_connect (self->view, "changed", G_CALLBACK (_airy_stack_viewer_on_view_changed), self);
  g_signal_connect (self->view, "hover", G_CALLBACK (on_hover), self);
  g_signal_connect_swapped (self->view, "moved", G_CALLBACK (_airy_stack_viewer_update_plots), self);
  g_signal_connect (self->view, "moved", G_CALLBACK (_airy_stack_viewer_on_main_moved), self);
  {
    GtkEventController *keys = gtk_event_controller_key_new ();

    g_signal_connect (keys, "key-pressed", G_CALLBACK (_airy_stack_viewer_on_viewer_key), self);
    gtk_widget_add_controller (GTK_WIDGET (self), keys);
  }
  /* the reference view shows with the main view's display */
  {
    static const char *shared[] = { "colormap", "inverted", "scale", "gamma", "limit-low", "limit-high",
                                    "linear", "mip", "sections" };
    for (i = 0; i < G_N_ELEMENTS (shared); i++)
      g_object_bind_property (self->view, shared[i], self->ref_view, shared[i], G_BINDING_SYNC_CREATE);
  }

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}


GtkWidget *
airy_stack_viewer_new (void)
{
  return g_object_new (AIRY_TYPE_STACK_VIEWER, NULL);
}

GActionGroup *
airy_stack_viewer_get_actions (AiryStackViewer *self)
{
  g_return_val_if_fail (AIRY_IS_STACK_VIEWER (self), NULL);

  return self->actions;
}
