#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer.h"
#include "airy-image-file.h"
#include "airy-histogram.h"
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
  self->readout_text = g_strdup_printf (_("x %+.4f µm  y %+.4f µm  z %+.4f µm  value %.6g"),
                                        airy_pixel_to_um (x, s->width, s->dx),
                                        airy_pixel_to_um (y, s->height, s->dy),
                                        airy_stack_get_z (s, z), v);
  gtk_label_set_text (GTK_LABEL (self->readout), self->readout_text);
}

static void
update_plots (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  g_autoptr(GError) error = NULL;
  double x0, y0, x1, y1;
  gboolean valid;
  guint cx, cy;

  if (s == NULL)
    return;
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  airy_stack_view_get_line (self->view, &x0, &y0, &x1, &y1, &valid);
  if (valid)
    {
      /* a drawn line needs the whole plane in host memory */
      const float *plane = airy_stack_view_get_xy_plane (self->view);
      /* one sample per pixel of length along the drawn line */
      double len = hypot ((x1 - x0) * s->dx, (y1 - y0) * s->dy);
      guint n = MAX (2, (guint) ceil (hypot (x1 - x0, y1 - y0)) * 4 + 1);
      g_autofree float *p = g_new (float, n);

      airy_line_profile (plane, s->height, s->width, x0, y0, x1, y1, n, p);
      airy_plot_set_data (self->line_plot, p, n, 0.0, len / (n - 1), n / 2, TRUE);
    }
  else
    {
      /* without a line: the row through the cursor */
      g_autofree float *row = g_new (float, s->width);

      if (!airy_stack_view_read_row (self->view, cy, row, &error))
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_plot_set_data (self->line_plot, row, s->width, airy_pixel_to_um (0, s->width, s->dx), s->dx, cx, TRUE);
    }
  if (s->depth > 1)
    {
      /* the axial profile: one value per plane, wherever the planes are */
      g_autofree float *axial = g_new (float, s->depth);

      if (!airy_resident_read_box (airy_stack_view_get_resident (self->view), &(AiryBox) { 0, cy, cx, s->depth, 1, 1 },
                                   axial, &error))
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_plot_set_data (self->axial_plot, axial, s->depth, s->z0, s->dz > 0 ? s->dz : 1.0,
                          airy_stack_view_get_z (self->view), TRUE);
    }
  update_readout (self, cx, cy);
}

static void
on_view_changed (AiryStackView *view, AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (view);
  guint z = airy_stack_view_get_z (view);

  if (s)
    {
      g_autofree char *label = g_strdup_printf (_("z %u/%u  %+.3f µm"), z + 1, s->depth, airy_stack_get_z (s, z));
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

void
airy_stack_viewer_set_stack (AiryStackViewer *self,
                             AiryStack       *stack)
{
  airy_stack_viewer_set_resident (self, stack ? airy_resident_new_host (stack) : NULL);
}

void
airy_stack_viewer_set_resident (AiryStackViewer *self,
                                AiryResident    *resident)
{
  gboolean first = airy_stack_view_get_stack (self->view) == NULL;
  const AiryStack *stack = resident ? airy_resident_get_stack (resident) : NULL;

  /* a new stack is not a file's channel or time point until open says so */
  g_clear_pointer (&self->path, g_free);
  gtk_widget_set_visible (self->hyper_box, FALSE);
  airy_stack_viewer_show_message (self, NULL);
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
      set_limit_range (self);
      if (first || gtk_check_button_get_active (GTK_CHECK_BUTTON (self->auto_on)))
        airy_stack_viewer_auto_contrast (self, gtk_drop_down_get_selected (GTK_DROP_DOWN (self->auto_mode)));
    }
  on_view_changed (self->view, self);
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

/* Shows a stack read from a file: of a hyperstack, with the choosers for
 * its channels and time points. */
static void
show_opened (AiryStackViewer *self, AiryStack *stack, const char *path)
{
  if (stack->dx <= 0)
    stack->dx = stack->dy = 1.0;   /* unknown: pixels */
  airy_stack_viewer_set_stack (self, stack);
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
  self->updating = FALSE;
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
typedef enum { EXPORT_PNG_RGB, EXPORT_PNG_GRAY16, EXPORT_TIFF } ExportKind;

typedef struct
{
  ExportKind    kind;
  guint8       *rgb;        /* PNG_RGB */
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

static gboolean
tool_to_active (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  g_value_set_boolean (to, g_value_get_enum (from) == AIRY_TOOL_LINE);
  return TRUE;
}

static gboolean
active_to_tool (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  g_value_set_enum (to, g_value_get_boolean (from) ? AIRY_TOOL_LINE : AIRY_TOOL_CURSOR);
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
                               tool_to_active, active_to_tool, NULL, NULL);
  g_object_bind_property (self->view, "z", gtk_range_get_adjustment (GTK_RANGE (self->z_scale)), "value", both);
  g_signal_connect (self->z_scale, "change-value", G_CALLBACK (on_z_change), self);
}

static void
on_fit (GtkButton *button, AiryStackViewer *self)
{
  airy_stack_view_fit (self->view);
}

static void
on_one (GtkButton *button, AiryStackViewer *self)
{
  airy_stack_view_set_zoom (self->view, 1.0);
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

typedef enum { FILE_OPEN, FILE_VIEW_1X, FILE_VIEW_2X, FILE_RAW, FILE_TIFF, FILE_SECTION } FileJob;

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
                                  N_("Export XZ Section (TIFF)") };
  static const char *names[] = { NULL, "view.png", "view@2x.png", "slice-16bit.png", "stack.tif", "section-xz.tif" };
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
              : g_str_equal (name, "export-tiff") ? FILE_TIFF : FILE_SECTION;
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
  static const char *colormaps[] = { N_("Gray"), N_("Inferno"), N_("Magma"), N_("Viridis"), N_("Fire"), NULL };
  static const char *scales[] = { N_("Linear"), N_("Log"), N_("Sqrt"), NULL };
  static const char *autos[] = { N_("Min–max, slice"), N_("Min–max, stack"), N_("0.1 %, slice"),
                                 N_("0.1 %, stack"), NULL };
  static const GActionEntry entries[] = {
    { "open", action_file }, { "export-png", action_file }, { "export-png-2x", action_file },
    { "export-raw", action_file }, { "export-tiff", action_file }, { "export-section", action_file },
  };
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();
  GtkWidget *toolbar, *toolbar2, *paned, *side, *bottom, *button;
  GtkDropTarget *drop;
  const char *translated[6];
  guint i;

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing (GTK_BOX (self), 4);

  g_action_map_add_action_entries (G_ACTION_MAP (group), entries, G_N_ELEMENTS (entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "viewer", G_ACTION_GROUP (group));
  self->actions = G_ACTION_GROUP (group);   /* kept alive by the widget's muxer */

  /* display controls: two rows that scroll sideways when the window is
   * narrower than they are */
  toolbar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (toolbar, 6);
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
  gtk_editable_set_width_chars (GTK_EDITABLE (self->lo_spin), 8);
  gtk_editable_set_width_chars (GTK_EDITABLE (self->hi_spin), 8);
  gtk_editable_set_width_chars (GTK_EDITABLE (self->gamma), 4);
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Min"), self->lo_spin));
  gtk_box_append (GTK_BOX (toolbar), labelled (_("Max"), self->hi_spin));

  toolbar2 = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (toolbar2, 6);
  for (i = 0; autos[i]; i++)
    translated[i] = _(autos[i]);
  translated[i] = NULL;
  self->auto_mode = gtk_drop_down_new_from_strings (translated);
  button = gtk_button_new_with_label (_("Auto contrast"));
  g_signal_connect (button, "clicked", G_CALLBACK (on_auto), self);
  gtk_box_append (GTK_BOX (toolbar2), button);
  gtk_box_append (GTK_BOX (toolbar2), self->auto_mode);
  self->auto_on = gtk_check_button_new_with_label (_("on new data"));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (self->auto_on), TRUE);
  gtk_box_append (GTK_BOX (toolbar2), self->auto_on);
  self->smooth = gtk_toggle_button_new_with_label (_("Smooth"));
  self->mip = gtk_toggle_button_new_with_label (_("MIP"));
  self->sections = gtk_toggle_button_new_with_label (_("Sections"));
  self->line_tool = gtk_toggle_button_new_with_label (_("Line profile"));
  gtk_box_append (GTK_BOX (toolbar2), self->smooth);
  gtk_box_append (GTK_BOX (toolbar2), self->mip);
  gtk_box_append (GTK_BOX (toolbar2), self->sections);
  gtk_box_append (GTK_BOX (toolbar2), self->line_tool);
  button = gtk_button_new_with_label (_("Fit"));
  g_signal_connect (button, "clicked", G_CALLBACK (on_fit), self);
  gtk_box_append (GTK_BOX (toolbar2), button);
  button = gtk_button_new_with_label ("1:1");
  g_signal_connect (button, "clicked", G_CALLBACK (on_one), self);
  gtk_box_append (GTK_BOX (toolbar2), button);
  /* shown for hyperstacks only: which channel and time point is on screen */
  self->hyper_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->channel_spin = gtk_spin_button_new_with_range (1, 1, 1);
  self->frame_spin = gtk_spin_button_new_with_range (1, 1, 1);
  gtk_box_append (GTK_BOX (self->hyper_box), labelled (_("Channel"), self->channel_spin));
  gtk_box_append (GTK_BOX (self->hyper_box), labelled (_("Time point"), self->frame_spin));
  g_signal_connect (self->channel_spin, "value-changed", G_CALLBACK (on_hyper_axis), self);
  g_signal_connect (self->frame_spin, "value-changed", G_CALLBACK (on_hyper_axis), self);
  gtk_widget_set_visible (self->hyper_box, FALSE);
  gtk_box_append (GTK_BOX (toolbar2), self->hyper_box);

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
  gtk_paned_set_start_child (GTK_PANED (paned), GTK_WIDGET (self->view));
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

  for (i = 0; i < 2; i++)
    {
      GtkWidget *scroller = gtk_scrolled_window_new ();

      gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_EXTERNAL, GTK_POLICY_NEVER);
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), i == 0 ? toolbar : toolbar2);
      gtk_box_append (GTK_BOX (self), scroller);
    }
  gtk_box_append (GTK_BOX (self), self->message_revealer);
  gtk_box_append (GTK_BOX (self), paned);
  gtk_box_append (GTK_BOX (self), bottom);
  gtk_box_append (GTK_BOX (self), self->readout);

  bind_controls (self);
  g_signal_connect (self->play, "toggled", G_CALLBACK (on_play), self);
  g_signal_connect (self->view, "changed", G_CALLBACK (on_view_changed), self);
  g_signal_connect (self->view, "hover", G_CALLBACK (on_hover), self);

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
