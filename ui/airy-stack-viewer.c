#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer.h"
#include "airy-image-file.h"
#include "airy-histogram.h"
#include "airy-wrap-layout.h"
#include "airy-error.h"

struct _AiryStackViewer
{
  GtkBox               parent_instance;

  AiryStackView       *view;
  GActionGroup        *actions;   /* "viewer.": open and exports */
  GtkWidget           *colormap;
  GtkWidget           *invert;
  GtkWidget           *scale;
  GtkWidget           *gamma;
  GtkWidget           *auto_mode;
  GtkWidget           *auto_on;
  GtkWidget           *smooth;
  GtkWidget           *mip;
  GtkWidget           *sections;
  GtkWidget           *line_tool;
  GtkWidget           *line_width;
  GtkWidget           *rect_tool;
  GtkWidget           *roi_label;
  GtkWidget           *z_scale;
  GtkWidget           *z_label;
  GtkWidget           *play;
  GtkWidget           *lo_spin;
  GtkWidget           *hi_spin;
  AiryHistogramWidget *histogram;
  AiryPlot            *line_plot;
  AiryPlot            *axial_plot;
  GtkWidget           *readout;
  GtkWidget           *message;
  GtkWidget           *message_revealer;
  guint                play_source;
  gboolean             updating;
  char                *readout_text;
  /* a hyperstack's channel and time point (the file is read again for
   * another one) */
  char                *path;
  GtkWidget           *hyper_box;
  GtkWidget           *channel_spin;
  GtkWidget           *frame_spin;
  GtkWidget           *composite;
  guint                composite_generation;
  /* a file without a voxel size shows pixels; Properties… sets one, kept
   * for the file's other channels and time points */
  gboolean             uncalibrated;
  double               user_dx, user_dy, user_dz;
  GtkWidget           *calibration;
  /* comparison: the result (current), a pinned reference, and how they are
   * shown: side by side (ref_view, linked), or their difference; show_b
   * puts the reference where the result was (A/B) */
  AiryResident        *current;
  AiryResident        *reference;
  AiryCompare          compare;
  gboolean             show_b;
  AiryStackView       *ref_view;
  GtkWidget           *ref_box;
  GtkWidget           *ref_label;
  GtkWidget           *a_label;
  GtkWidget           *compare_dd;
  AiryColormap         colormap_before_diff;
  /* reads and writes on worker threads */
  guint                file_tasks;
  guint                open_generation;
};

G_DEFINE_FINAL_TYPE (AiryStackViewer, airy_stack_viewer, GTK_TYPE_BOX)

static void
airy_stack_viewer_dispose (GObject *object)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (object);

  g_clear_handle_id (&self->play_source, g_source_remove);
  G_OBJECT_CLASS (airy_stack_viewer_parent_class)->dispose (object);
}

static void
airy_stack_viewer_finalize (GObject *object)
{
  g_clear_pointer (&AIRY_STACK_VIEWER (object)->current, airy_resident_unref);
  g_clear_pointer (&AIRY_STACK_VIEWER (object)->reference, airy_resident_unref);
  g_free (AIRY_STACK_VIEWER (object)->readout_text);
  g_free (AIRY_STACK_VIEWER (object)->path);
  G_OBJECT_CLASS (airy_stack_viewer_parent_class)->finalize (object);
}

static void
airy_stack_viewer_class_init (AiryStackViewerClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = airy_stack_viewer_dispose;
  G_OBJECT_CLASS (klass)->finalize = airy_stack_viewer_finalize;
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

static void
update_readout (AiryStackViewer *self, guint x, guint y)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  guint z = airy_stack_view_get_z (self->view);
  g_autoptr(GError) error = NULL;
  float v;

  if (s == NULL || x >= s->width || y >= s->height)
    return;
  if (!airy_stack_view_read_value (self->view, x, y, &v, &error))
    {
      airy_stack_viewer_show_message (self, error->message);
      return;
    }
  g_free (self->readout_text);
  if (self->uncalibrated)
    self->readout_text = g_strdup_printf (_("x %u px  y %u px  z %u  value %.6g"), x, y, z, v);
  else
    self->readout_text = g_strdup_printf (_("x %+.4f µm  y %+.4f µm  z %+.4f µm  value %.6g"),
                                          airy_pixel_to_um (x, s->width, s->dx),
                                          airy_pixel_to_um (y, s->height, s->dy),
                                          airy_stack_get_z (s, z), v);
  gtk_label_set_text (GTK_LABEL (self->readout), self->readout_text);
}

/* The rectangle's statistics, from the shown plane (fetched to host). */
static void
update_roi (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryBoxStats st;
  guint x, y, w, h;
  g_autofree char *text = NULL;

  if (s == NULL || !airy_stack_view_get_roi (self->view, &x, &y, &w, &h))
    {
      gtk_widget_set_visible (self->roi_label, FALSE);
      return;
    }
  airy_box_stats (airy_stack_view_get_xy_plane (self->view), s->height, s->width, x, y, w, h, &st);
  text = g_strdup_printf (_("Rectangle %u × %u px: sum %.6g, mean %.6g, max %.6g\n"
                            "energy in it %.1f %%, in its circle (r %.3g µm) %.1f %%"),
                          w, h, st.sum, st.mean, st.max, 100 * st.ensquared, st.radius * s->dx, 100 * st.encircled);
  gtk_label_set_text (GTK_LABEL (self->roi_label), text);
  gtk_widget_set_visible (self->roi_label, TRUE);
}

const char *
airy_stack_viewer_get_roi_text (AiryStackViewer *self)
{
  return gtk_widget_get_visible (self->roi_label) ? gtk_label_get_text (GTK_LABEL (self->roi_label)) : NULL;
}

/* The other side of a comparison (B; A in a difference, where the view
 * shows A − B), or NULL. */
static AiryResident *
compared (AiryStackViewer *self, gboolean a_side)
{
  AiryResident *a = self->show_b && self->reference ? self->reference : self->current;
  AiryResident *b = a == self->current ? self->reference : self->current;
  const AiryStack *s = airy_stack_view_get_stack (self->view), *o;
  AiryResident *r = a_side ? a : b;

  if (self->reference == NULL || self->compare == AIRY_COMPARE_OFF || r == NULL || s == NULL)
    return NULL;
  o = airy_resident_get_stack (r);
  return o->depth == s->depth && o->height == s->height && o->width == s->width ? r : NULL;
}

/* The shown plane (z, or the projection) of a resident in host memory. */
static float *
plane_of (AiryStackViewer *self, AiryResident *r, guint z, GError **error)
{
  const AiryStack *s = airy_resident_get_stack (r);
  AirySlice slice = airy_stack_view_get_mip (self->view) && s->depth > 1
                    ? (AirySlice) { AIRY_SLICE_MIP, 0 } : (AirySlice) { AIRY_SLICE_XY, MIN (z, s->depth - 1) };
  float *plane = g_new (float, airy_stack_plane_size (s));

  if (!airy_resident_read_slice (r, &slice, plane, error))
    g_clear_pointer (&plane, g_free);
  return plane;
}

/* The profiles of what is shown, or in a comparison of A (the line) and B
 * (the dashed line): along the drawn line, or the cursor's row as far as
 * XY shows it, and along z through the cursor. */
static void
update_plots (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryResident *a_diff = self->compare == AIRY_COMPARE_DIFF ? compared (self, TRUE) : NULL;
  AiryResident *b = compared (self, FALSE);
  g_autoptr(GError) error = NULL;
  double x0, y0, x1, y1;
  gboolean valid;
  guint cx, cy, bx, by, bz, z = airy_stack_view_get_z (self->view);

  if (s == NULL)
    return;
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  airy_stack_view_get_line (self->view, &x0, &y0, &x1, &y1, &valid);
  /* B's cursor: the same point of the specimen, beside; else the same */
  bx = cx;
  by = cy;
  bz = z;
  if (b && gtk_widget_get_visible (self->ref_box))
    {
      airy_stack_view_get_cursor (self->ref_view, &bx, &by);
      bz = airy_stack_view_get_z (self->ref_view);
    }
  if (valid)
    {
      /* a drawn line needs the whole plane in host memory */
      g_autofree float *own = a_diff ? plane_of (self, a_diff, z, &error) : NULL;
      const float *plane = a_diff ? own : airy_stack_view_get_xy_plane (self->view);
      /* one sample per pixel of length along the drawn line */
      double len = hypot ((x1 - x0) * s->dx, (y1 - y0) * s->dy);
      guint n = MAX (2, (guint) ceil (hypot (x1 - x0, y1 - y0)) * 4 + 1);
      g_autofree float *p = g_new (float, n);
      g_autofree float *bplane = b ? plane_of (self, b, bz, &error) : NULL;
      guint lw = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->line_width));

      if (plane == NULL)
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_line_profile_wide (plane, s->height, s->width, x0, y0, x1, y1, n, lw, p);
      airy_plot_set_data (self->line_plot, p, n, 0.0, len / (n - 1), n / 2, TRUE);
      if (bplane)
        {
          const AiryStack *bs = airy_resident_get_stack (b);

          airy_line_profile_wide (bplane, s->height, s->width, x0, y0, x1, y1, n, lw, p);
          /* B's samples at B's voxel size */
          len = hypot ((x1 - x0) * bs->dx, (y1 - y0) * bs->dy);
        }
      airy_plot_set_reference (self->line_plot, bplane ? p : NULL, n, 0.0, len / (n - 1), n / 2);
    }
  else
    {
      /* without a line: the row through the cursor, as far as XY shows it */
      g_autofree float *row = g_new (float, s->width);
      double vx, vy, vw, vh;
      guint a = 0, e = s->width, mark;

      if (a_diff)
        {
          g_autofree float *plane = plane_of (self, a_diff, z, &error);

          if (plane)
            memcpy (row, plane + (gsize) cy * s->width, s->width * sizeof (float));
          else
            {
              airy_stack_viewer_show_message (self, error->message);
              return;
            }
        }
      else if (!airy_stack_view_read_row (self->view, cy, row, &error))
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_stack_view_get_visible (self->view, &vx, &vy, &vw, &vh);
      if (vw > 0)
        {
          a = (guint) CLAMP (floor (vx), 0, s->width - 1);
          e = (guint) CLAMP (ceil (vx + vw), a + 1, s->width);
          if (e - a < 2 && e < s->width)
            e++;
          else if (e - a < 2 && a > 0)
            a--;
        }
      mark = cx >= a && cx < e ? cx - a : (e - a) / 2;
      /* in µm from the axis; uncalibrated, in pixels as the readout */
      airy_plot_set_data (self->line_plot, row + a, e - a, self->uncalibrated ? a : airy_pixel_to_um (a, s->width, s->dx),
                          s->dx, mark, TRUE);
      if (b)
        {
          /* B's whole row at B's pixel size: the plot shows what falls on
           * A's axis */
          const AiryStack *bs = airy_resident_get_stack (b);
          g_autofree float *plane = plane_of (self, b, bz, &error);

          if (plane)
            memcpy (row, plane + (gsize) by * s->width, s->width * sizeof (float));
          airy_plot_set_reference (self->line_plot, plane ? row : NULL, s->width,
                                   airy_pixel_to_um (0, s->width, bs->dx), bs->dx, bx);
        }
      else
        airy_plot_set_reference (self->line_plot, NULL, 0, 0, 0, 0);
    }
  if (s->depth > 1)
    {
      /* the axial profile: one value per plane, wherever the planes are */
      g_autofree float *axial = g_new (float, s->depth);
      AiryBox box = { 0, cy, cx, s->depth, 1, 1 };
      double step = s->dz > 0 ? s->dz : 1.0;
      guint z = airy_stack_view_get_z (self->view);

      if (!airy_resident_read_box (a_diff ? a_diff : airy_stack_view_get_resident (self->view), &box, axial, &error))
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_plot_set_data (self->axial_plot, axial, s->depth, s->z0, step, z, TRUE);
      if (b && airy_resident_read_box (b, &(AiryBox) { 0, by, bx, s->depth, 1, 1 }, axial, NULL))
        {
          const AiryStack *bs = airy_resident_get_stack (b);

          airy_plot_set_reference (self->axial_plot, axial, s->depth, bs->z0, bs->dz > 0 ? bs->dz : 1.0, z);
        }
      else
        airy_plot_set_reference (self->axial_plot, NULL, 0, 0, 0, 0);
    }
  update_readout (self, cx, cy);
  update_roi (self);
}

static void
on_view_changed (AiryStackView *view, AiryStackViewer *self)
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

      gtk_label_set_text (GTK_LABEL (self->z_label), label);
      /* the histogram of the shown slice, computed where its values are */
      slice_stats (self, NULL, &stats);
      airy_histogram_widget_set_counts (self->histogram, stats.min, airy_stats_hist_max (&stats), counts,
                                        AIRY_HISTOGRAM_BINS);
    }
  update_plots (self);
}

static void
on_hover (AiryStackView *view, double x, double y, AiryStackViewer *self)
{
  update_readout (self, (guint) x, (guint) y);
}

static void set_uncalibrated (AiryStackViewer *self, gboolean uncalibrated);
static void update_composite (AiryStackViewer *self);

void
airy_stack_viewer_set_stack (AiryStackViewer *self,
                             AiryStack       *stack)
{
  airy_stack_viewer_set_resident (self, stack ? airy_resident_new_host (stack) : NULL);
}

/* Shows a resident in the main view (transfer full). */
static void
show_resident (AiryStackViewer *self,
               AiryResident    *resident)
{
  gboolean first = airy_stack_view_get_stack (self->view) == NULL;
  const AiryStack *stack = resident ? airy_resident_get_stack (resident) : NULL;

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
          /* the first look frames the PSF, not its empty field */
          if (airy_stack_view_get_fit (self->view))
            airy_stack_view_fit_psf (self->view);
        }
      set_limit_range (self);
      if (first || gtk_check_button_get_active (GTK_CHECK_BUTTON (self->auto_on)))
        airy_stack_viewer_auto_contrast (self, gtk_drop_down_get_selected (GTK_DROP_DOWN (self->auto_mode)));
    }
  on_view_changed (self->view, self);
}

/* current − reference on the host, when their grids agree */
static AiryStack *
difference (AiryResident *a, AiryResident *b, GError **error)
{
  const AiryStack *sa = airy_resident_get_stack (a), *sb = airy_resident_get_stack (b);
  g_autoptr(AiryStack) ha = NULL, hb = NULL;
  AiryStack *d;
  gsize i, n;

  if (sa->depth != sb->depth || sa->height != sb->height || sa->width != sb->width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("no difference: the result is %u × %u × %u, the reference %u × %u × %u"),
                   sa->depth, sa->height, sa->width, sb->depth, sb->height, sb->width);
      return NULL;
    }
  if (fabs (sa->dx - sb->dx) > 1e-6 * sa->dx || fabs (sa->dy - sb->dy) > 1e-6 * sa->dy
      || fabs (sa->dz - sb->dz) > 1e-6 * MAX (sa->dz, 1e-12))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("no difference: the result's voxel is %.4g × %.4g × %.4g µm, the reference's %.4g × %.4g × %.4g µm"),
                   sa->dx, sa->dy, sa->dz, sb->dx, sb->dy, sb->dz);
      return NULL;
    }
  /* values on a GPU come to host memory for this */
  if (sa->data == NULL && (ha = airy_resident_to_stack (a, error)) == NULL)
    return NULL;
  if (sb->data == NULL && (hb = airy_resident_to_stack (b, error)) == NULL)
    return NULL;
  d = airy_stack_new (sa->depth, sa->height, sa->width);
  airy_stack_copy_metadata (d, sa);
  n = (gsize) sa->depth * sa->height * sa->width;
  for (i = 0; i < n; i++)
    d->data[i] = (ha ? ha : sa)->data[i] - (hb ? hb : sb)->data[i];
  return d;
}

/* What the comparison shows now: A (the result, or the reference after
 * A/B) in the main view; B beside it, or A − B in a signed colormap. */
static void
show_compare (AiryStackViewer *self)
{
  AiryResident *a = self->show_b && self->reference ? self->reference : self->current;
  AiryResident *b = a == self->current ? self->reference : self->current;
  AiryCompare mode = self->reference ? self->compare : AIRY_COMPARE_OFF;
  AiryDisplay d = *airy_stack_view_get_display (self->view);
  gboolean was_diff = d.colormap == AIRY_COLORMAP_DIVERGING && self->colormap_before_diff != AIRY_COLORMAP_DIVERGING;

  gtk_widget_set_visible (self->ref_box, mode == AIRY_COMPARE_SIDE && b != NULL);
  gtk_widget_set_visible (self->a_label, mode == AIRY_COMPARE_SIDE && b != NULL);
  gtk_label_set_text (GTK_LABEL (self->a_label), a == self->reference ? _("A: reference") : _("A: result"));
  if (mode == AIRY_COMPARE_DIFF && a && b)
    {
      g_autoptr(GError) error = NULL;
      AiryStack *diff = difference (self->current, self->reference, &error);

      if (diff != NULL)
        {
          float lo, hi, m;

          show_resident (self, airy_resident_new_host (diff));
          /* symmetric limits: zero in the colormap's middle */
          airy_stack_min_max (diff, &lo, &hi);
          m = MAX (fabsf (lo), fabsf (hi));
          d = *airy_stack_view_get_display (self->view);
          if (!was_diff)
            self->colormap_before_diff = d.colormap;
          d.colormap = AIRY_COLORMAP_DIVERGING;
          d.scale = AIRY_SCALE_LINEAR;
          d.lo = m > 0 ? -m : -1.0f;
          d.hi = m > 0 ? m : 1.0f;
          airy_stack_view_set_display (self->view, &d);
          return;
        }
      airy_stack_viewer_show_message (self, error->message);
    }
  if (was_diff)
    {
      d.colormap = self->colormap_before_diff;
      airy_stack_view_set_display (self->view, &d);
      self->colormap_before_diff = AIRY_COLORMAP_DIVERGING;
    }
  show_resident (self, a ? airy_resident_ref (a) : NULL);
  if (mode == AIRY_COMPARE_SIDE && b != NULL)
    {
      airy_stack_view_set_resident (self->ref_view, airy_resident_ref (b));
      airy_stack_view_link_cursor (self->ref_view, self->view);
      airy_stack_view_copy_view (self->ref_view, self->view);
      gtk_label_set_text (GTK_LABEL (self->ref_label), b == self->reference ? _("B: reference") : _("B: result"));
    }
  else
    airy_stack_view_set_resident (self->ref_view, NULL);
  update_plots (self);
}

void
airy_stack_viewer_set_resident (AiryStackViewer *self,
                                AiryResident    *resident)
{
  /* a new stack is not a file's channel or time point until open says so */
  g_clear_pointer (&self->path, g_free);
  gtk_widget_set_visible (self->hyper_box, FALSE);
  if (self->uncalibrated)
    set_uncalibrated (self, FALSE);
  airy_stack_viewer_show_message (self, NULL);
  g_clear_pointer (&self->current, airy_resident_unref);
  self->current = resident;
  show_compare (self);
}

void
airy_stack_viewer_pin_reference (AiryStackViewer *self)
{
  AiryResident *r = self->current;

  g_clear_pointer (&self->reference, airy_resident_unref);
  self->reference = r ? airy_resident_ref (r) : NULL;
  self->show_b = FALSE;
  gtk_widget_set_sensitive (self->compare_dd, self->reference != NULL);
  if (self->reference && self->compare == AIRY_COMPARE_OFF)
    gtk_drop_down_set_selected (GTK_DROP_DOWN (self->compare_dd), AIRY_COMPARE_SIDE);
  else
    show_compare (self);
}

void
airy_stack_viewer_set_compare (AiryStackViewer *self,
                               AiryCompare      mode)
{
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->compare_dd), mode);
}

AiryCompare
airy_stack_viewer_get_compare (AiryStackViewer *self)
{
  return self->reference ? self->compare : AIRY_COMPARE_OFF;
}

void
airy_stack_viewer_toggle_ab (AiryStackViewer *self)
{
  if (self->reference == NULL)
    return;
  self->show_b = !self->show_b;
  show_compare (self);
}

gboolean
airy_stack_viewer_get_showing_b (AiryStackViewer *self)
{
  return self->show_b;
}

AiryStackView *
airy_stack_viewer_get_reference_view (AiryStackViewer *self)
{
  return self->ref_view;
}

static void
on_compare_selected (GtkDropDown *dd, GParamSpec *pspec, AiryStackViewer *self)
{
  self->compare = (AiryCompare) gtk_drop_down_get_selected (dd);
  show_compare (self);
}

/* viewer.pin, viewer.unpin, viewer.toggle-ab, viewer.compare-side,
 * viewer.compare-diff, viewer.compare-off */
static void
action_compare (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryStackViewer *self = data;
  const char *name = g_action_get_name (G_ACTION (action));

  if (g_str_equal (name, "pin"))
    airy_stack_viewer_pin_reference (self);
  else if (g_str_equal (name, "unpin"))
    {
      g_clear_pointer (&self->reference, airy_resident_unref);
      self->show_b = FALSE;
      gtk_widget_set_sensitive (self->compare_dd, FALSE);
      show_compare (self);
    }
  else if (g_str_equal (name, "toggle-ab"))
    airy_stack_viewer_toggle_ab (self);
  else
    airy_stack_viewer_set_compare (self, g_str_equal (name, "compare-side") ? AIRY_COMPARE_SIDE
                                         : g_str_equal (name, "compare-diff") ? AIRY_COMPARE_DIFF
                                         : AIRY_COMPARE_OFF);
}

/* the key B swaps A and B while a reference is pinned */
static gboolean
on_viewer_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state, AiryStackViewer *self)
{
  if ((keyval == GDK_KEY_b || keyval == GDK_KEY_B) && self->reference != NULL
      && !(state & (GDK_CONTROL_MASK | GDK_ALT_MASK)))
    {
      airy_stack_viewer_toggle_ab (self);
      return TRUE;
    }
  return FALSE;
}

static void
on_main_moved (AiryStackView *view, AiryStackViewer *self)
{
  if (gtk_widget_get_visible (self->ref_box))
    airy_stack_view_copy_view (self->ref_view, view);
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

static void
set_uncalibrated (AiryStackViewer *self, gboolean uncalibrated)
{
  self->uncalibrated = uncalibrated;
  gtk_widget_set_visible (self->calibration, uncalibrated);
  airy_stack_view_set_pixel_units (self->view, uncalibrated);
  airy_plot_set_unit (self->line_plot, uncalibrated ? "px" : NULL);
  airy_plot_set_unit (self->axial_plot, uncalibrated ? _("planes") : NULL);
  on_view_changed (self->view, self);
}

gboolean
airy_stack_viewer_get_uncalibrated (AiryStackViewer *self)
{
  return self->uncalibrated;
}

/* Fiji's Image ▸ Properties: the voxel size of what is shown. */
gboolean
airy_stack_viewer_set_voxel_size (AiryStackViewer *self,
                                  double           dx,
                                  double           dy,
                                  double           dz,
                                  GError         **error)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  const struct { const char *name; double v; } sizes[] = {
    { N_("pixel width"), dx }, { N_("pixel height"), dy }, { N_("voxel depth"), dz },
  };
  guint i;

  if (s == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("no stack is shown"));
      return FALSE;
    }
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    if (!(sizes[i].v > 0 && sizes[i].v <= 1e6))
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: must be in (0, 1e6] µm, got %g"),
                     _(sizes[i].name), sizes[i].v);
        return FALSE;
      }
  s->dx = self->user_dx = dx;
  s->dy = self->user_dy = dy;
  s->dz = self->user_dz = dz;
  airy_stack_view_voxel_size_changed (self->view);
  set_uncalibrated (self, FALSE);
  return TRUE;
}

static void
on_properties_response (GtkDialog *dialog, int response, AiryStackViewer *self)
{
  if (response == GTK_RESPONSE_OK)
    {
      GtkWidget **spins = g_object_get_data (G_OBJECT (dialog), "spins");
      g_autoptr(GError) error = NULL;

      if (!airy_stack_viewer_set_voxel_size (self, gtk_spin_button_get_value (GTK_SPIN_BUTTON (spins[0])),
                                             gtk_spin_button_get_value (GTK_SPIN_BUTTON (spins[1])),
                                             gtk_spin_button_get_value (GTK_SPIN_BUTTON (spins[2])), &error))
        airy_stack_viewer_show_message (self, error->message);
    }
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* viewer.properties: a dialog with the voxel size in µm */
static void
action_properties (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryStackViewer *self = data;
  AiryStack *s = airy_stack_view_get_stack (self->view);
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  const char *labels[] = { N_("Pixel width (µm)"), N_("Pixel height (µm)"), N_("Voxel depth (µm)") };
  GtkWidget **spins = g_new0 (GtkWidget *, 3);
  GtkWidget *dialog, *grid;
  guint i;

  if (s == NULL)
    {
      g_free (spins);
      return;
    }
  dialog = gtk_dialog_new_with_buttons (_("Properties"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                        _("_Cancel"), GTK_RESPONSE_CANCEL, _("_Apply"), GTK_RESPONSE_OK, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (dialog), GTK_RESPONSE_OK);
  grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  gtk_widget_set_margin_start (grid, 12);
  gtk_widget_set_margin_end (grid, 12);
  gtk_widget_set_margin_top (grid, 12);
  gtk_widget_set_margin_bottom (grid, 12);
  for (i = 0; i < 3; i++)
    {
      GtkWidget *label = gtk_label_new (_(labels[i]));
      double v = i == 0 ? s->dx : i == 1 ? s->dy : s->dz;

      gtk_label_set_xalign (GTK_LABEL (label), 0);
      spins[i] = gtk_spin_button_new_with_range (1e-4, 1e6, 0.001);
      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spins[i]), 4);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (spins[i]), v > 0 ? v : 1.0);
      gtk_grid_attach (GTK_GRID (grid), label, 0, (int) i, 1, 1);
      gtk_grid_attach (GTK_GRID (grid), spins[i], 1, (int) i, 1, 1);
    }
  if (self->uncalibrated)
    gtk_grid_attach (GTK_GRID (grid), gtk_label_new (_("The file gives no voxel size: it is shown in pixels.")),
                     0, 3, 2, 1);
  gtk_box_append (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dialog))), grid);
  g_object_set_data_full (G_OBJECT (dialog), "spins", spins, g_free);
  g_signal_connect (dialog, "response", G_CALLBACK (on_properties_response), self);
  gtk_window_present (GTK_WINDOW (dialog));
}

/* Shows a stack read from a file: of a hyperstack, with the choosers for
 * its channels and time points. */
static void
show_opened (AiryStackViewer *self, AiryStack *stack, const char *path)
{
  gboolean same_file = g_strcmp0 (path, self->path) == 0, uncalibrated = FALSE;

  if (!same_file)
    self->user_dx = self->user_dy = self->user_dz = 0.0;
  if (self->user_dx > 0)
    {
      stack->dx = self->user_dx;
      stack->dy = self->user_dy;
      stack->dz = self->user_dz;
    }
  else if (stack->dx <= 0)
    {
      /* unknown: pixels, and planes one pixel apart */
      stack->dx = stack->dy = 1.0;
      if (stack->dz <= 0)
        stack->dz = 1.0;
      uncalibrated = TRUE;
    }
  airy_stack_viewer_set_stack (self, stack);
  set_uncalibrated (self, uncalibrated);
  /* after set_stack, which forgets the file */
  self->path = g_strdup (path);
  self->updating = TRUE;
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->channel_spin), 1, MAX (stack->n_channels, 1));
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->frame_spin), 1, MAX (stack->n_frames, 1));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->channel_spin), stack->channel + 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->frame_spin), stack->frame + 1);
  gtk_widget_set_visible (gtk_widget_get_parent (self->channel_spin), stack->n_channels > 1);
  gtk_widget_set_visible (gtk_widget_get_parent (self->frame_spin), stack->n_frames > 1);
  gtk_widget_set_visible (self->hyper_box, stack->n_channels > 1 || stack->n_frames > 1);
  gtk_widget_set_visible (self->composite, stack->n_channels > 1);
  self->updating = FALSE;
  /* a composite follows the time point */
  if (stack->n_channels > 1 && gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    update_composite (self);
}

/* Reads one z stack of the file here and now: of a hyperstack, the channel
 * and time point asked for (0-based). */
static gboolean
open_stack (AiryStackViewer *self, const char *path, guint channel, guint frame, GError **error)
{
  g_autoptr(GError) local = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  AiryStack *stack;

  ro.channel = (int) channel;
  ro.frame = (int) frame;
  self->open_generation++;
  stack = airy_image_read_full (path, &ro, &local);
  if (stack == NULL)
    {
      g_autofree char *msg = g_strdup_printf (_("Could not open: %s"), local->message);
      airy_stack_viewer_show_message (self, msg);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  show_opened (self, stack, path);
  return TRUE;
}

gboolean
airy_stack_viewer_open (AiryStackViewer *self,
                        const char      *path,
                        GError         **error)
{
  return open_stack (self, path, 0, 0, error);
}

void
airy_stack_viewer_get_hyperstack (AiryStackViewer *self,
                                  guint           *n_channels,
                                  guint           *n_frames,
                                  guint           *channel,
                                  guint           *frame)
{
  gboolean shown = gtk_widget_get_visible (self->hyper_box);
  GtkAdjustment *c = gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (self->channel_spin));
  GtkAdjustment *t = gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (self->frame_spin));

  *n_channels = shown ? (guint) gtk_adjustment_get_upper (c) : 0;
  *n_frames = shown ? (guint) gtk_adjustment_get_upper (t) : 0;
  *channel = shown ? (guint) gtk_adjustment_get_value (c) - 1 : 0;
  *frame = shown ? (guint) gtk_adjustment_get_value (t) - 1 : 0;
}

/* as a person would: through the spin buttons */
void
airy_stack_viewer_set_hyperstack_plane (AiryStackViewer *self,
                                        guint            channel,
                                        guint            frame)
{
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->channel_spin), channel + 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->frame_spin), frame + 1);
}

/* ---- composite: every channel of the time point, over each other ---- */

typedef struct
{
  char      *path;
  guint      frame, n;
  AiryStack *stacks[AIRY_STACK_VIEW_MAX_CHANNELS];
  guint      generation;
} CompositeTask;

static void
composite_task_free (CompositeTask *t)
{
  guint c;

  for (c = 0; c < t->n; c++)
    airy_stack_free (t->stacks[c]);
  g_free (t->path);
  g_free (t);
}

static void
composite_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CompositeTask *t = data;
  GError *error = NULL;
  guint c;

  for (c = 0; c < t->n; c++)
    {
      AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

      ro.channel = (int) c;
      ro.frame = (int) t->frame;
      if ((t->stacks[c] = airy_image_read_full (t->path, &ro, &error)) == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  g_task_return_boolean (task, TRUE);
}

/* Fiji's composite colours: red, green, blue, gray */
static const GdkRGBA composite_colors[AIRY_STACK_VIEW_MAX_CHANNELS] = {
  { 1, 0, 0, 1 }, { 0, 1, 0, 1 }, { 0, 0, 1, 1 }, { 1, 1, 1, 1 },
};

static void
composite_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (source);
  CompositeTask *t = g_task_get_task_data (G_TASK (res));
  AiryStack *shown = airy_stack_view_get_stack (self->view);
  g_autoptr(GError) error = NULL;
  AiryResident *residents[AIRY_STACK_VIEW_MAX_CHANNELS];
  float lo[AIRY_STACK_VIEW_MAX_CHANNELS], hi[AIRY_STACK_VIEW_MAX_CHANNELS];
  guint c;

  self->file_tasks--;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      if (t->generation == self->composite_generation)
        airy_stack_viewer_show_message (self, error->message);
      return;
    }
  /* still the file and the composite asked for */
  if (t->generation != self->composite_generation || shown == NULL || g_strcmp0 (t->path, self->path) != 0
      || !gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    return;
  for (c = 0; c < t->n; c++)
    {
      AiryStack *s = t->stacks[c];

      /* each channel between 0 (or its minimum) and its maximum */
      airy_stack_min_max (s, &lo[c], &hi[c]);
      lo[c] = MIN (lo[c], 0.0f);
      if (!(hi[c] > lo[c]))
        hi[c] = lo[c] + 1.0f;
      s->dx = shown->dx;
      s->dy = shown->dy;
      s->dz = shown->dz;
      residents[c] = airy_resident_new_host (g_steal_pointer (&t->stacks[c]));
    }
  airy_stack_view_set_composite (self->view, t->n, residents, lo, hi, composite_colors);
  t->n = 0;
}

static void
update_composite (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  g_autoptr(GTask) task = NULL;
  CompositeTask *t;

  self->composite_generation++;
  if (s == NULL || self->path == NULL || s->n_channels < 2
      || !gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    {
      airy_stack_view_set_composite (self->view, 0, NULL, NULL, NULL, NULL);
      return;
    }
  t = g_new0 (CompositeTask, 1);
  t->path = g_strdup (self->path);
  t->frame = s->frame;
  t->n = MIN (s->n_channels, AIRY_STACK_VIEW_MAX_CHANNELS);
  t->generation = self->composite_generation;
  task = g_task_new (self, NULL, composite_done, NULL);
  g_task_set_task_data (task, t, (GDestroyNotify) composite_task_free);
  self->file_tasks++;
  g_task_run_in_thread (task, composite_thread);
}

static void
on_composite (GtkCheckButton *button, AiryStackViewer *self)
{
  update_composite (self);
}

static void
on_hyper_axis (GtkSpinButton *spin, AiryStackViewer *self)
{
  g_autofree char *path = g_strdup (self->path);

  if (self->updating || path == NULL)
    return;
  airy_stack_viewer_open_async (self, path,
                                (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->channel_spin)) - 1,
                                (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->frame_spin)) - 1);
}

guint8 *
airy_stack_viewer_render_view (AiryStackViewer *self,
                               guint            scale,
                               gboolean         bar,
                               guint           *width,
                               guint           *height)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  const AiryDisplay *d = airy_stack_view_get_display (self->view);
  g_autofree guint8 *rgb = NULL;
  guint8 *out;
  guint W, H, y, x;

  if (s == NULL)
    return NULL;
  scale = CLAMP (scale, 1, 8);
  rgb = g_malloc (airy_stack_plane_size (s) * 3);
  airy_display_render_rgb (d, airy_stack_view_get_xy_plane (self->view), s->height, s->width, rgb);
  W = s->width * scale;
  H = s->height * scale;
  out = g_malloc ((gsize) W * H * 3);
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      memcpy (out + ((gsize) y * W + x) * 3, rgb + ((gsize) (y / scale) * s->width + x / scale) * 3, 3);

  if (bar && s->dx > 0)
    {
      /* the same bar as on screen: at most a quarter of the width */
      double px, len = airy_scale_bar (scale / s->dx, W / 4.0, &px);
      cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) W, (int) H);
      unsigned char *data;
      int stride;
      cairo_t *cr;

      cairo_surface_flush (surface);
      data = cairo_image_surface_get_data (surface);
      stride = cairo_image_surface_get_stride (surface);
      for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
          {
            guint8 *p = out + ((gsize) y * W + x) * 3;
            *(guint32 *) (data + (gsize) y * stride + x * 4) = ((guint32) p[0] << 16) | ((guint32) p[1] << 8) | p[2];
          }
      cairo_surface_mark_dirty (surface);
      if (len > 0 && px >= 4)
        {
          g_autofree char *label = airy_format_length (len);
          double bx = 10 * scale, by = H - 12.0 * scale;

          cr = cairo_create (surface);
          cairo_set_source_rgb (cr, 1, 1, 1);
          cairo_rectangle (cr, bx, by, px, 3 * scale);
          cairo_fill (cr);
          cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
          cairo_set_font_size (cr, 11 * scale);
          cairo_move_to (cr, bx, by - 3 * scale);
          cairo_show_text (cr, label);
          cairo_destroy (cr);
        }
      cairo_surface_flush (surface);
      for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
          {
            guint32 v = *(guint32 *) (data + (gsize) y * stride + x * 4);
            guint8 *p = out + ((gsize) y * W + x) * 3;
            p[0] = (v >> 16) & 0xff;
            p[1] = (v >> 8) & 0xff;
            p[2] = v & 0xff;
          }
      cairo_surface_destroy (surface);
    }
  *width = W;
  *height = H;
  return out;
}

static gboolean
need_stack (AiryStackViewer *self, GError **error)
{
  if (airy_stack_view_get_stack (self->view) != NULL)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("nothing to export: no stack is shown"));
  return FALSE;
}

/* An export in two steps: what is on screen, taken on the main thread (the
 * GL view, the shown plane, the stack, a section), then the file, which the
 * file chooser's exports write on a worker thread: the UI thread touches
 * no file. */
typedef enum { EXPORT_PNG_RGB, EXPORT_PNG_GRAY16, EXPORT_TIFF, EXPORT_TEXT } ExportKind;

typedef struct
{
  ExportKind    kind;
  guint8       *rgb;        /* PNG_RGB */
  char         *text;       /* TEXT */
  AiryStack    *stack;      /* GRAY16 (one plane), TIFF */
  AiryResident *resident;   /* keeps a borrowed stack alive */
  gboolean      borrowed;
  guint         height, width;
  double        dx;
} Export;

static void
export_free (Export *e)
{
  g_free (e->rgb);
  g_free (e->text);
  if (!e->borrowed)
    airy_stack_free (e->stack);
  g_clear_pointer (&e->resident, airy_resident_unref);
  g_free (e);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Export, export_free)

static Export *
export_view (AiryStackViewer *self, guint scale, GError **error)
{
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_RGB;
  e->rgb = airy_stack_viewer_render_view (self, scale, TRUE, &e->width, &e->height);
  e->dx = airy_stack_view_get_stack (self->view)->dx / scale;
  return e;
}

static gboolean export_write (const char *path, const Export *e, GError **error);

/* XY with its scale bar, XZ below and YZ beside it at the true z spacing,
 * as on screen (one image). */
guint8 *
airy_stack_viewer_render_sections (AiryStackViewer *self,
                                   guint           *width,
                                   guint           *height)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryResident *r = airy_stack_view_get_resident (self->view);
  const AiryDisplay *d = airy_stack_view_get_display (self->view);
  g_autofree guint8 *xy = NULL;
  g_autofree float *xz = NULL, *yz = NULL;
  g_autofree guint8 *xz_rgb = NULL, *yz_rgb = NULL;
  guint W, H, xw, xh, zx = 0, zy = 0, gap = 0, y, x, cx, cy;
  guint8 *out;
  gsize k;

  if (s == NULL)
    return NULL;
  xy = airy_stack_viewer_render_view (self, 1, TRUE, &xw, &xh);
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  if (s->depth > 1)
    {
      double az = s->dz > 0 ? s->dz : s->dx;

      xz = g_new (float, (gsize) s->depth * s->width);
      yz = g_new (float, (gsize) s->depth * s->height);
      if (!airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_XZ, cy }, xz, NULL)
          || !airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_YZ, cx }, yz, NULL))
        g_clear_pointer (&xz, g_free);
      else
        {
          xz_rgb = g_malloc ((gsize) s->depth * s->width * 3);
          yz_rgb = g_malloc ((gsize) s->depth * s->height * 3);
          airy_display_render_rgb (d, xz, s->depth, s->width, xz_rgb);
          airy_display_render_rgb (d, yz, s->depth, s->height, yz_rgb);
          zy = MAX (1, (guint) floor (s->depth * az / s->dy + 0.5));
          zx = MAX (1, (guint) floor (s->depth * az / s->dx + 0.5));
          gap = 6;   /* the canvas' gap */
        }
    }
  W = xw + (zx ? gap + zx : 0);
  H = xh + (zy ? gap + zy : 0);
  out = g_malloc ((gsize) W * H * 3);
  /* the canvas' background */
  for (k = 0; k < (gsize) W * H; k++)
    {
      out[3 * k] = out[3 * k + 1] = 31;
      out[3 * k + 2] = 33;
    }
  for (y = 0; y < xh; y++)
    memcpy (out + (gsize) y * W * 3, xy + (gsize) y * xw * 3, (gsize) xw * 3);
  if (xz_rgb)
    {
      /* XZ: z downwards; YZ: z to the right (nearest plane) */
      for (y = 0; y < zy; y++)
        memcpy (out + ((gsize) (xh + gap + y) * W) * 3,
                xz_rgb + (gsize) MIN (y * s->depth / zy, s->depth - 1) * s->width * 3, (gsize) s->width * 3);
      for (y = 0; y < s->height; y++)
        for (x = 0; x < zx; x++)
          memcpy (out + ((gsize) y * W + xw + gap + x) * 3,
                  yz_rgb + ((gsize) MIN (x * s->depth / zx, s->depth - 1) * s->height + y) * 3, 3);
    }
  *width = W;
  *height = H;
  return out;
}

static Export *
export_sections (AiryStackViewer *self, GError **error)
{
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_RGB;
  e->rgb = airy_stack_viewer_render_sections (self, &e->width, &e->height);
  e->dx = airy_stack_view_get_stack (self->view)->dx;
  return e;
}

static Export *
export_csv (AiryStackViewer *self, gboolean axial, GError **error)
{
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_TEXT;
  e->text = airy_plot_to_csv (axial ? self->axial_plot : self->line_plot);
  return e;
}

gboolean
airy_stack_viewer_export_sections (AiryStackViewer *self,
                                   const char      *path,
                                   GError         **error)
{
  g_autoptr(Export) e = export_sections (self, error);

  return e != NULL && export_write (path, e, error);
}

gboolean
airy_stack_viewer_export_profile (AiryStackViewer *self,
                                  const char      *path,
                                  gboolean         axial,
                                  GError         **error)
{
  g_autoptr(Export) e = export_csv (self, axial, error);

  return e != NULL && export_write (path, e, error);
}

static Export *
export_raw (AiryStackViewer *self, GError **error)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_GRAY16;
  e->stack = airy_stack_new (1, s->height, s->width);
  memcpy (e->stack->data, airy_stack_view_get_xy_plane (self->view), airy_stack_plane_size (s) * sizeof (float));
  e->stack->dx = e->stack->dy = s->dx;
  return e;
}

static Export *
export_tiff (AiryStackViewer *self, gboolean section, GError **error)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryResident *r = airy_stack_view_get_resident (self->view);
  g_autoptr(Export) e = NULL;
  guint cx, cy;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_TIFF;
  if (!section)
    {
      /* a host stack is written where it is, a result on a GPU comes to
       * host memory for this only */
      if (s->data)
        {
          e->stack = s;
          e->borrowed = TRUE;
          e->resident = airy_resident_ref (r);
        }
      else if ((e->stack = airy_resident_to_stack (r, error)) == NULL)
        return NULL;
      return g_steal_pointer (&e);
    }
  /* the XZ section through the cursor: one image, rows are z */
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  e->stack = airy_stack_new (1, s->depth, s->width);
  if (!airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_XZ, cy }, e->stack->data, error))
    return NULL;
  e->stack->dx = s->dx;
  e->stack->dy = s->dz > 0 ? s->dz : s->dy;
  return g_steal_pointer (&e);
}

static gboolean
export_write (const char *path, const Export *e, GError **error)
{
  switch (e->kind)
    {
    case EXPORT_PNG_RGB:
      return airy_png_write_rgb (path, e->rgb, e->height, e->width, e->dx, error);
    case EXPORT_PNG_GRAY16:
      return airy_png_write_gray16 (path, e->stack->data, e->stack->height, e->stack->width, e->stack->dx, error);
    case EXPORT_TEXT:
      return g_file_set_contents (path, e->text, -1, error);
    case EXPORT_TIFF:
    default:
      return airy_tiff_write (path, e->stack, error);
    }
}

gboolean
airy_stack_viewer_export_view (AiryStackViewer *self,
                               const char      *path,
                               guint            scale,
                               GError         **error)
{
  g_autoptr(Export) e = export_view (self, scale, error);

  return e != NULL && export_write (path, e, error);
}

gboolean
airy_stack_viewer_export_raw (AiryStackViewer *self,
                              const char      *path,
                              GError         **error)
{
  g_autoptr(Export) e = export_raw (self, error);

  return e != NULL && export_write (path, e, error);
}

gboolean
airy_stack_viewer_export_tiff (AiryStackViewer *self,
                               const char      *path,
                               gboolean         section,
                               GError         **error)
{
  g_autoptr(Export) e = export_tiff (self, section, error);

  return e != NULL && export_write (path, e, error);
}

/* ---- file I/O off the UI thread ---- */

typedef struct
{
  char            *path;
  Export          *export;     /* a write; NULL for a read */
  AiryReadOptions  read;
  AiryStack       *stack;      /* what a read gave */
  guint            generation;
} FileTask;

static void
file_task_free (FileTask *t)
{
  g_free (t->path);
  g_clear_pointer (&t->export, export_free);
  airy_stack_free (t->stack);
  g_free (t);
}

static void
file_task_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  FileTask *t = data;
  GError *error = NULL;

  if (t->export ? export_write (t->path, t->export, &error)
                : (t->stack = airy_image_read_full (t->path, &t->read, &error)) != NULL)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void show_opened (AiryStackViewer *self, AiryStack *stack, const char *path);

static void
file_task_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (source);
  FileTask *t = g_task_get_task_data (G_TASK (res));
  g_autoptr(GError) error = NULL;

  self->file_tasks--;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      g_autofree char *msg = t->export ? g_strdup (error->message)
                                       : g_strdup_printf (_("Could not open: %s"), error->message);
      /* an open overtaken by a newer one says nothing */
      if (t->export || t->generation == self->open_generation)
        airy_stack_viewer_show_message (self, msg);
      return;
    }
  if (!t->export && t->generation == self->open_generation)
    show_opened (self, g_steal_pointer (&t->stack), t->path);
}

static void
run_file_task (AiryStackViewer *self, FileTask *t)
{
  g_autoptr(GTask) task = g_task_new (self, NULL, file_task_done, NULL);

  g_task_set_task_data (task, t, (GDestroyNotify) file_task_free);
  self->file_tasks++;
  g_task_run_in_thread (task, file_task_thread);
}

/* Opens a file on a worker thread; shown when it is read (a newer open
 * wins). The viewer's own opens (chooser, drop, another channel) go here. */
void
airy_stack_viewer_open_async (AiryStackViewer *self,
                              const char      *path,
                              guint            channel,
                              guint            frame)
{
  FileTask *t = g_new0 (FileTask, 1);

  t->path = g_strdup (path);
  t->read = (AiryReadOptions) AIRY_READ_OPTIONS_INIT;
  t->read.channel = (int) channel;
  t->read.frame = (int) frame;
  t->generation = ++self->open_generation;
  run_file_task (self, t);
}

guint
airy_stack_viewer_get_pending_files (AiryStackViewer *self)
{
  return self->file_tasks;
}

static void
export_async (AiryStackViewer *self, const char *path, Export *e)
{
  FileTask *t = g_new0 (FileTask, 1);

  t->path = g_strdup (path);
  t->export = e;
  run_file_task (self, t);
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
static void
bind_controls (AiryStackViewer *self)
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
    airy_stack_view_fit_psf (self->view);
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

/* file choosers (portal-friendly native dialogs on GTK 4.8) */

void
airy_file_chooser_add_image_filter (GtkFileChooser *chooser)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("TIFF and PNG images"));
  gtk_file_filter_add_suffix (filter, "tif");
  gtk_file_filter_add_suffix (filter, "tiff");
  gtk_file_filter_add_suffix (filter, "png");
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

typedef enum { FILE_OPEN, FILE_VIEW_1X, FILE_VIEW_2X, FILE_RAW, FILE_TIFF, FILE_SECTION, FILE_SECTIONS_PNG,
               FILE_LINE_CSV, FILE_AXIAL_CSV } FileJob;

static void
on_file_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  AiryStackViewer *self = g_object_get_data (G_OBJECT (dialog), "viewer");
  FileJob job = GPOINTER_TO_INT (data);
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  gboolean ok = TRUE;

  if (response == GTK_RESPONSE_ACCEPT
      && (file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog))) != NULL
      && (path = g_file_get_path (file)) != NULL)
    {
      /* what is on screen is taken now; the file is read or written on a
       * worker thread */
      Export *e = NULL;

      switch (job)
        {
        case FILE_OPEN:    airy_stack_viewer_open_async (self, path, 0, 0); break;
        case FILE_VIEW_1X: e = export_view (self, 1, &error); break;
        case FILE_VIEW_2X: e = export_view (self, 2, &error); break;
        case FILE_RAW:     e = export_raw (self, &error); break;
        case FILE_TIFF:    e = export_tiff (self, FALSE, &error); break;
        case FILE_SECTION: e = export_tiff (self, TRUE, &error); break;
        case FILE_SECTIONS_PNG: e = export_sections (self, &error); break;
        case FILE_LINE_CSV: e = export_csv (self, FALSE, &error); break;
        case FILE_AXIAL_CSV: e = export_csv (self, TRUE, &error); break;
        default: break;
        }
      if (e != NULL)
        export_async (self, path, e);
      else if (job != FILE_OPEN)
        ok = FALSE;
      if (!ok)
        airy_stack_viewer_show_message (self, error->message);
    }
  g_object_unref (dialog);
}

static void
choose_file (AiryStackViewer *self, FileJob job)
{
  static const char *titles[] = { N_("Open Stack"), N_("Export View as PNG"), N_("Export View as PNG (2×)"),
                                  N_("Export Raw Slice (16-bit PNG)"), N_("Export Stack (TIFF)"),
                                  N_("Export XZ Section (TIFF)"), N_("Export XY, XZ and YZ as PNG"),
                                  N_("Export Line Profile (CSV)"), N_("Export Axial Profile (CSV)") };
  static const char *names[] = { NULL, "view.png", "view@2x.png", "slice-16bit.png", "stack.tif", "section-xz.tif",
                                 "sections.png", "line-profile.csv", "axial-profile.csv" };
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileChooserNative *dialog;

  dialog = gtk_file_chooser_native_new (_(titles[job]), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        job == FILE_OPEN ? GTK_FILE_CHOOSER_ACTION_OPEN : GTK_FILE_CHOOSER_ACTION_SAVE,
                                        job == FILE_OPEN ? _("_Open") : _("_Export"), _("_Cancel"));
  if (names[job])
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), names[job]);
  else
    airy_file_chooser_add_image_filter (GTK_FILE_CHOOSER (dialog));
  g_object_set_data (G_OBJECT (dialog), "viewer", self);
  g_signal_connect (dialog, "response", G_CALLBACK (on_file_response), GINT_TO_POINTER (job));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
action_file (GSimpleAction *action, GVariant *param, gpointer data)
{
  const char *name = g_action_get_name (G_ACTION (action));
  FileJob job = g_str_equal (name, "open") ? FILE_OPEN
              : g_str_equal (name, "export-png") ? FILE_VIEW_1X
              : g_str_equal (name, "export-png-2x") ? FILE_VIEW_2X
              : g_str_equal (name, "export-raw") ? FILE_RAW
              : g_str_equal (name, "export-tiff") ? FILE_TIFF
              : g_str_equal (name, "export-sections-png") ? FILE_SECTIONS_PNG
              : g_str_equal (name, "export-line-csv") ? FILE_LINE_CSV
              : g_str_equal (name, "export-axial-csv") ? FILE_AXIAL_CSV : FILE_SECTION;
  choose_file (data, job);
}

static GtkWidget *
labelled (const char *text, GtkWidget *child)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);

  gtk_box_append (GTK_BOX (box), gtk_label_new (text));
  gtk_box_append (GTK_BOX (box), child);
  return box;
}

static void
airy_stack_viewer_init (AiryStackViewer *self)
{
  static const char *colormaps[] = { N_("Gray"), N_("Inferno"), N_("Magma"), N_("Viridis"), N_("Fire"),
                                     N_("Diverging"), NULL };
  static const char *scales[] = { N_("Linear"), N_("Log"), N_("Sqrt"), NULL };
  static const char *autos[] = { N_("Min–max, slice"), N_("Min–max, stack"), N_("0.1 %, slice"),
                                 N_("0.1 %, stack"), NULL };
  static const GActionEntry entries[] = {
    { "open", action_file }, { "export-png", action_file }, { "export-png-2x", action_file },
    { "export-raw", action_file }, { "export-tiff", action_file }, { "export-section", action_file },
    { "export-sections-png", action_file }, { "export-line-csv", action_file }, { "export-axial-csv", action_file },
    { "fit", action_zoom }, { "fit-psf", action_zoom }, { "zoom-1", action_zoom },
    { "zoom-in", action_zoom }, { "zoom-out", action_zoom }, { "properties", action_properties },
    { "pin", action_compare }, { "unpin", action_compare }, { "toggle-ab", action_compare },
    { "compare-side", action_compare }, { "compare-diff", action_compare }, { "compare-off", action_compare },
  };
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();
  GtkWidget *toolbar, *paned, *side, *bottom, *button;
  GtkDropTarget *drop;
  const char *translated[8];
  guint i;

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing (GTK_BOX (self), 4);

  g_action_map_add_action_entries (G_ACTION_MAP (group), entries, G_N_ELEMENTS (entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "viewer", G_ACTION_GROUP (group));
  self->actions = G_ACTION_GROUP (group);   /* kept alive by the widget's muxer */

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
    g_signal_connect_swapped (self->line_width, "value-changed", G_CALLBACK (update_plots), self);
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
    g_signal_connect (self->compare_dd, "notify::selected", G_CALLBACK (on_compare_selected), self);
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
  g_signal_connect (self->composite, "toggled", G_CALLBACK (on_composite), self);
  g_signal_connect (self->channel_spin, "value-changed", G_CALLBACK (on_hyper_axis), self);
  g_signal_connect (self->frame_spin, "value-changed", G_CALLBACK (on_hyper_axis), self);
  gtk_widget_set_visible (self->hyper_box, FALSE);
  gtk_box_append (GTK_BOX (toolbar), self->hyper_box);

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
  gtk_label_set_wrap (GTK_LABEL (self->roi_label), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (self->roi_label), 36);
  gtk_widget_add_css_class (self->roi_label, "airy-readout");
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

  gtk_box_append (GTK_BOX (self), toolbar);
  gtk_box_append (GTK_BOX (self), self->message_revealer);
  gtk_box_append (GTK_BOX (self), paned);
  gtk_box_append (GTK_BOX (self), bottom);
  gtk_box_append (GTK_BOX (self), self->readout);

  bind_controls (self);
  g_signal_connect (self->play, "toggled", G_CALLBACK (on_play), self);
  g_signal_connect (self->view, "changed", G_CALLBACK (on_view_changed), self);
  g_signal_connect (self->view, "hover", G_CALLBACK (on_hover), self);
  g_signal_connect_swapped (self->view, "moved", G_CALLBACK (update_plots), self);
  g_signal_connect (self->view, "moved", G_CALLBACK (on_main_moved), self);
  {
    GtkEventController *keys = gtk_event_controller_key_new ();

    g_signal_connect (keys, "key-pressed", G_CALLBACK (on_viewer_key), self);
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
