#define G_LOG_DOMAIN "airy-plot"

#include "config.h"

#include <math.h>
#include <glib/gi18n.h>

#include "airy-plot.h"
#include "airy-view-math.h"

struct _AiryPlot
{
  GtkDrawingArea parent_instance;
  char          *title;
  float         *samples;
  guint          n;
  double         x0, step;
  double         fwhm;
  guint          mark;
};

G_DEFINE_FINAL_TYPE (AiryPlot, airy_plot, GTK_TYPE_DRAWING_AREA)

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryPlot *self = AIRY_PLOT (area);
  double left = 46, right = 8, top = 18, bottom = 30;
  double pw = width - left - right, ph = height - top - bottom;
  float lo = 0.0f, hi = 0.0f;
  g_autofree char *title = NULL;
  guint i;

  cairo_set_source_rgb (cr, 0.12, 0.12, 0.13);
  cairo_paint (cr);
  cairo_set_source_rgb (cr, 0.85, 0.85, 0.85);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10);
  title = self->fwhm > 0 ? g_strdup_printf (_("%s — FWHM %.4g µm"), self->title, self->fwhm)
                         : g_strdup (self->title);
  cairo_move_to (cr, left, 12);
  cairo_show_text (cr, title);
  if (self->n < 2 || pw < 10 || ph < 10)
    return;
  for (i = 0; i < self->n; i++)
    hi = MAX (hi, self->samples[i]);
  for (i = 0; i < self->n; i++)
    lo = MIN (lo, self->samples[i]);
  if (!(hi > lo))
    hi = lo + 1;

  /* axes: x in µm, y in data units */
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, left + 0.5, top + 0.5, pw, ph);
  cairo_stroke (cr);
  for (i = 0; i <= 4; i++)
    {
      double x = self->x0 + self->step * (self->n - 1) * i / 4.0;
      double y = lo + (hi - lo) * i / 4.0;
      char label[32];

      g_snprintf (label, sizeof label, "%.3g", x);
      cairo_move_to (cr, left + pw * i / 4.0 - 8, top + ph + 12);
      cairo_show_text (cr, label);
      g_snprintf (label, sizeof label, "%.3g", y);
      cairo_move_to (cr, 2, top + ph - ph * i / 4.0 + 3);
      cairo_show_text (cr, label);
    }
  cairo_move_to (cr, left + pw / 2 - 8, height - 4);
  cairo_show_text (cr, "µm");

  cairo_set_source_rgb (cr, 1.0, 0.75, 0.2);
  for (i = 0; i < self->n; i++)
    {
      double x = left + pw * i / (self->n - 1), y = top + ph * (1.0 - (self->samples[i] - lo) / (hi - lo));
      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);
}

static void
airy_plot_finalize (GObject *object)
{
  AiryPlot *self = AIRY_PLOT (object);

  g_free (self->title);
  g_free (self->samples);
  G_OBJECT_CLASS (airy_plot_parent_class)->finalize (object);
}

static void
airy_plot_class_init (AiryPlotClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = airy_plot_finalize;
}

static void
airy_plot_init (AiryPlot *self)
{
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self), draw, NULL, NULL);
  gtk_widget_set_size_request (GTK_WIDGET (self), 240, 130);
}

GtkWidget *
airy_plot_new (const char *title)
{
  AiryPlot *self = g_object_new (AIRY_TYPE_PLOT, NULL);

  self->title = g_strdup (title);
  return GTK_WIDGET (self);
}

void
airy_plot_set_data (AiryPlot    *self,
                    const float *samples,
                    guint        n,
                    double       x0,
                    double       step,
                    guint        mark,
                    gboolean     fwhm)
{
  g_free (self->samples);
  self->samples = g_memdup2 (samples, n * sizeof (float));
  self->n = n;
  self->x0 = x0;
  self->step = step;
  self->mark = mark;
  self->fwhm = fwhm && n > 2 ? airy_profile_fwhm (samples, n, step, mark) : 0.0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
airy_plot_get_fwhm (AiryPlot *self)
{
  return self->fwhm;
}
