#define G_LOG_DOMAIN "airy-histogram"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-histogram.h"
#include "airy-view-math.h"

#define BINS AIRY_HISTOGRAM_BINS

struct _AiryHistogramWidget
{
  GtkDrawingArea parent_instance;
  guint64        counts[BINS];
  float          min, max;
  float          lo, hi;
  int            dragging;   /* 0 none, 1 lo, 2 hi */
};

G_DEFINE_FINAL_TYPE (AiryHistogramWidget, airy_histogram_widget, GTK_TYPE_DRAWING_AREA)

enum { PROP_0, PROP_LIMIT_LOW, PROP_LIMIT_HIGH, N_PROPS };
static GParamSpec *properties[N_PROPS];

static double
value_to_x (AiryHistogramWidget *self, float v, int width)
{
  return self->max > self->min ? (v - self->min) / (self->max - self->min) * width : 0.0;
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryHistogramWidget *self = AIRY_HISTOGRAM_WIDGET (area);
  double top = 0.0;
  guint i;

  cairo_set_source_rgb (cr, 0.12, 0.12, 0.13);
  cairo_paint (cr);
  for (i = 0; i < BINS; i++)
    top = MAX (top, log1p ((double) self->counts[i]));
  if (top <= 0)
    return;
  cairo_set_source_rgb (cr, 0.55, 0.6, 0.7);
  for (i = 0; i < BINS; i++)
    {
      double h = log1p ((double) self->counts[i]) / top * (height - 2);
      cairo_rectangle (cr, (double) i * width / BINS, height - h, (double) width / BINS + 0.5, h);
    }
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1.0, 0.8, 0.2);
  cairo_set_line_width (cr, 2);
  cairo_move_to (cr, value_to_x (self, self->lo, width), 0);
  cairo_line_to (cr, value_to_x (self, self->lo, width), height);
  cairo_move_to (cr, value_to_x (self, self->hi, width), 0);
  cairo_line_to (cr, value_to_x (self, self->hi, width), height);
  cairo_stroke (cr);
}

static void
drag_begin (GtkGestureDrag *g, double x, double y, AiryHistogramWidget *self)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  double dl = fabs (x - value_to_x (self, self->lo, w)), dh = fabs (x - value_to_x (self, self->hi, w));

  self->dragging = dl <= dh ? 1 : 2;
}

static void
drag_update (GtkGestureDrag *g, double dx, double dy, AiryHistogramWidget *self)
{
  double sx, sy;
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  float v;

  gtk_gesture_drag_get_start_point (g, &sx, &sy);
  v = self->min + (float) (CLAMP ((sx + dx) / MAX (w, 1), 0.0, 1.0)) * (self->max - self->min);
  if (self->dragging == 1)
    airy_histogram_widget_set_limits (self, MIN (v, self->hi), self->hi);
  else
    airy_histogram_widget_set_limits (self, self->lo, MAX (v, self->lo));
}

static void
airy_histogram_widget_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  AiryHistogramWidget *self = AIRY_HISTOGRAM_WIDGET (object);

  if (prop_id == PROP_LIMIT_LOW || prop_id == PROP_LIMIT_HIGH)
    g_value_set_double (value, prop_id == PROP_LIMIT_LOW ? self->lo : self->hi);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
airy_histogram_widget_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  AiryHistogramWidget *self = AIRY_HISTOGRAM_WIDGET (object);
  float v = (float) g_value_get_double (value);

  if (prop_id == PROP_LIMIT_LOW)
    airy_histogram_widget_set_limits (self, v, self->hi);
  else if (prop_id == PROP_LIMIT_HIGH)
    airy_histogram_widget_set_limits (self, self->lo, v);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
airy_histogram_widget_class_init (AiryHistogramWidgetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = airy_histogram_widget_get_property;
  object_class->set_property = airy_histogram_widget_set_property;
  /* the contrast limits drawn on the histogram, in data units */
  properties[PROP_LIMIT_LOW] = g_param_spec_double ("limit-low", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT, 0.0,
                                                    G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
                                                    | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_LIMIT_HIGH] = g_param_spec_double ("limit-high", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT, 0.0,
                                                     G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
                                                     | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
airy_histogram_widget_init (AiryHistogramWidget *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();

  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self), draw, NULL, NULL);
  gtk_widget_set_size_request (GTK_WIDGET (self), 240, 70);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}

GtkWidget *
airy_histogram_widget_new (void)
{
  return g_object_new (AIRY_TYPE_HISTOGRAM, NULL);
}

void
airy_histogram_widget_set_values (AiryHistogramWidget *self,
                                  const float         *values,
                                  gsize                n)
{
  guint64 counts[BINS];
  AirySliceStats stats = { 0, 0, BINS, counts };

  airy_values_stats (values, n, &stats);
  airy_histogram_widget_set_counts (self, stats.min, airy_stats_hist_max (&stats), counts, BINS);
}

void
airy_histogram_widget_set_counts (AiryHistogramWidget *self,
                                  float                min,
                                  float                max,
                                  const guint64       *counts,
                                  guint                n_bins)
{
  g_return_if_fail (n_bins == AIRY_HISTOGRAM_BINS);

  self->min = min;
  self->max = max;
  memcpy (self->counts, counts, sizeof self->counts);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
airy_histogram_widget_set_limits (AiryHistogramWidget *self,
                                  float                lo,
                                  float                hi)
{
  g_object_freeze_notify (G_OBJECT (self));
  if (lo != self->lo)
    {
      self->lo = lo;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LIMIT_LOW]);
    }
  if (hi != self->hi)
    {
      self->hi = hi;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LIMIT_HIGH]);
    }
  g_object_thaw_notify (G_OBJECT (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
