#define G_LOG_DOMAIN "airy-plot"

#include "config.h"

#include <string.h>

#include <math.h>
#include <glib/gi18n.h>

#include "airy-plot.h"
#include "airy-view-math.h"

struct _AiryPlot
{
  GtkDrawingArea parent_instance;
  char          *title;
  char          *unit;
  float         *samples;
  guint          n;
  double         x0, step;
  double         fwhm;
  gboolean       fwhm_asked;  /* a width was asked for: none found says "no peak" */
  double         peak_floor;  /* a peak at or below it is none (noise) */
  guint          mark;
  /* how the labels of the last frame fitted */
  double         title_room, min_gap;
  guint          frames;
  /* a second curve, the reference of a comparison (same x axis) */
  float         *ref;
  guint          ref_n;
  double         ref_x0, ref_step, ref_fwhm;
  guint          ref_mark;
};

G_DEFINE_FINAL_TYPE (AiryPlot, airy_plot, GTK_TYPE_DRAWING_AREA)

/* The largest 1-2-5 × 10^k step that gives at most `max_ticks` intervals
 * over span. */
static double
nice_step (double span, int max_ticks)
{
  double raw = span / MAX (max_ticks, 1), p = pow (10.0, floor (log10 (raw))), m = raw / p;

  return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

static double
text_width (cairo_t *cr, const char *text)
{
  cairo_text_extents_t e;

  cairo_text_extents (cr, text, &e);
  return e.x_advance;
}

static void
format_tick (char *label, gsize size, double v, double step)
{
  /* as many decimals as the step needs, and never "-0" */
  int decimals = step >= 1 ? 0 : (int) ceil (-log10 (step) - 1e-9);

  if (fabs (v) < step * 1e-6)
    v = 0.0;
  if (fabs (v) >= 1e5 || (v != 0 && fabs (v) < 1e-3))
    g_snprintf (label, size, "%.2g", v);
  else
    g_snprintf (label, size, "%.*f", MIN (decimals, 6), v);
}

/* Ticks on [a, b] at a nice step whose labels do not collide, placed by
 * pos (fraction along the axis); returns the widest label. */
static double
axis_labels (cairo_t *cr, double a, double b, double length, gboolean vertical, double *step_out)
{
  double step = nice_step (b - a, 6), widest = 0;
  int tries;

  for (tries = 0; tries < 6; tries++)
    {
      double v, room;
      char label[32];

      widest = 0;
      for (v = ceil (a / step) * step; v <= b + step * 1e-9; v += step)
        {
          format_tick (label, sizeof label, v, step);
          widest = MAX (widest, text_width (cr, label));
        }
      /* room per tick along the axis: a label's width (x) or height (y) */
      room = length * step / (b - a);
      if (room >= (vertical ? 16.0 : widest + 8.0))
        break;
      step = nice_step (b - a, (int) floor ((b - a) / step) - 1);
    }
  *step_out = step;
  return widest;
}

/* The title with the widths: never a width of 0 for a profile without a
 * peak (it read "FWHM 0, ref. 0.4194 µm" for a line cut off at the peak) */
char *
airy_plot_dup_title (AiryPlot *self)
{
  const char *unit = self->unit ? self->unit : "µm";

  if (self->ref != NULL && (self->fwhm > 0 || self->ref_fwhm > 0))
    {
      /* a comparison: both widths, the reference's in its colour below */
      if (self->fwhm > 0 && self->ref_fwhm > 0)
        return g_strdup_printf (_("%s — FWHM %.4g, ref. %.4g %s"), self->title, self->fwhm, self->ref_fwhm, unit);
      if (self->fwhm > 0)
        /* TRANSLATORS: a comparison whose reference profile has no single peak */
        return g_strdup_printf (_("%s — FWHM %.4g %s, ref.: no peak"), self->title, self->fwhm, unit);
      /* TRANSLATORS: a comparison whose profile has no single peak, its reference's width */
      return g_strdup_printf (_("%s — no peak, ref. %.4g %s"), self->title, self->ref_fwhm, unit);
    }
  if (self->fwhm > 0)
    return self->unit ? g_strdup_printf (_("%s — FWHM %.4g %s"), self->title, self->fwhm, self->unit)
                      : g_strdup_printf (_("%s — FWHM %.4g µm"), self->title, self->fwhm);
  if (self->fwhm_asked || self->ref != NULL)
    /* TRANSLATORS: a profile without a single peak: no width is given */
    return g_strdup_printf (_("%s — no peak"), self->title);
  return g_strdup (self->title);
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryPlot *self = AIRY_PLOT (area);
  double left, right = 10, top = 18, bottom = 28, pw, ph, xa, xb, xstep, ystep, v, size, last_end = -G_MAXDOUBLE;
  float lo = 0.0f, hi = 0.0f;
  g_autofree char *title = NULL;
  char label[32];
  guint i;

  cairo_set_source_rgb (cr, 0.12, 0.12, 0.13);
  cairo_paint (cr);
  cairo_set_source_rgb (cr, 0.85, 0.85, 0.85);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  /* the title in one line: smaller type where it is long (German) */
  title = airy_plot_dup_title (self);
  cairo_set_font_size (cr, 10);
  size = 10.0 * MIN (1.0, (width - 8.0) / MAX (text_width (cr, title), 1.0));
  cairo_set_font_size (cr, MAX (size, 6.0));
  cairo_move_to (cr, 4, 12);
  cairo_show_text (cr, title);
  self->title_room = width - 4.0 - text_width (cr, title) - 4.0;
  self->min_gap = G_MAXDOUBLE;
  self->frames++;
  cairo_set_font_size (cr, 10);
  if (self->n < 2)
    return;
  for (i = 0; i < self->n; i++)
    hi = MAX (hi, self->samples[i]);
  for (i = 0; i < self->n; i++)
    lo = MIN (lo, self->samples[i]);
  for (i = 0; i < self->ref_n; i++)
    {
      hi = MAX (hi, self->ref[i]);
      lo = MIN (lo, self->ref[i]);
    }
  if (!(hi > lo))
    hi = lo + 1;

  /* y labels decide the left margin */
  ph = height - top - bottom;
  left = 8 + axis_labels (cr, lo, hi, ph, TRUE, &ystep);
  pw = width - left - right;
  if (pw < 10 || ph < 10)
    return;
  xa = self->x0;
  xb = self->x0 + self->step * (self->n - 1);
  if (!(xb > xa))
    xb = xa + 1;
  axis_labels (cr, xa, xb, pw, FALSE, &xstep);

  /* axes: x in µm, y in data units */
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, left + 0.5, top + 0.5, pw, ph);
  cairo_stroke (cr);
  for (v = ceil (lo / ystep) * ystep; v <= hi + ystep * 1e-9; v += ystep)
    {
      double y = top + ph * (1.0 - (v - lo) / (hi - lo));

      format_tick (label, sizeof label, v, ystep);
      /* the rows of y labels, 10 px type: their gap */
      if (v > ceil (lo / ystep) * ystep)
        self->min_gap = MIN (self->min_gap, ph * ystep / (hi - lo) - 10.0);
      cairo_move_to (cr, left - 4 - text_width (cr, label), y + 3.5);
      cairo_show_text (cr, label);
      cairo_move_to (cr, left - 2, y + 0.5);
      cairo_line_to (cr, left + 0.5, y + 0.5);
      cairo_stroke (cr);
    }
  for (v = ceil (xa / xstep) * xstep; v <= xb + xstep * 1e-9; v += xstep)
    {
      double x = left + pw * (v - xa) / (xb - xa), tw, x0;

      format_tick (label, sizeof label, v, xstep);
      tw = text_width (cr, label);
      /* labels stay inside the widget */
      x0 = CLAMP (x - tw / 2, 1.0, width - tw - 1);
      self->min_gap = MIN (self->min_gap, x0 - last_end);
      last_end = x0 + tw;
      cairo_move_to (cr, x0, top + ph + 12);
      cairo_show_text (cr, label);
      cairo_move_to (cr, x + 0.5, top + ph + 0.5);
      cairo_line_to (cr, x + 0.5, top + ph + 3);
      cairo_stroke (cr);
    }
  cairo_move_to (cr, left + pw / 2 - 6, height - 3);
  cairo_show_text (cr, self->unit ? self->unit : "µm");

  if (self->ref_n >= 2)
    {
      /* the reference, dashed in cyan, on the same x axis */
      static const double dash[] = { 4.0, 3.0 };

      cairo_save (cr);
      cairo_rectangle (cr, left, top, pw + 1, ph + 1);
      cairo_clip (cr);
      cairo_set_source_rgb (cr, 0.3, 0.8, 1.0);
      cairo_set_dash (cr, dash, 2, 0);
      for (i = 0; i < self->ref_n; i++)
        {
          double xv = self->ref_x0 + self->ref_step * i;
          double x = left + pw * (xv - xa) / (xb - xa), y = top + ph * (1.0 - (self->ref[i] - lo) / (hi - lo));
          if (i == 0)
            cairo_move_to (cr, x, y);
          else
            cairo_line_to (cr, x, y);
        }
      cairo_stroke (cr);
      cairo_restore (cr);
    }
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
  g_free (self->unit);
  g_free (self->samples);
  g_free (self->ref);
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
  gtk_widget_set_size_request (GTK_WIDGET (self), 240, 80);
}

GtkWidget *
airy_plot_new (const char *title)
{
  AiryPlot *self = g_object_new (AIRY_TYPE_PLOT, NULL);

  self->title = g_strdup (title);
  return GTK_WIDGET (self);
}

/* the FWHM of the peak nearest mark, 0 for none or one at the floor */
static double
profile_fwhm (AiryPlot *self, const float *samples, guint n, double step, guint mark)
{
  guint c = MIN (mark, n - 1);

  /* the peak the width is measured on: climbed to from the mark */
  while (c + 1 < n && samples[c + 1] > samples[c])
    c++;
  while (c > 0 && samples[c - 1] > samples[c])
    c--;
  if (!(samples[c] > self->peak_floor))
    return 0.0;
  return airy_profile_fwhm (samples, n, step, c);
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
  /* the same profile again (a frame of the view that moved, a full stack
   * whose shown plane the preview had): no redraw */
  if (n == self->n && x0 == self->x0 && step == self->step && mark == self->mark
      && (fwhm && n > 2) == self->fwhm_asked && (n == 0 || memcmp (samples, self->samples, n * sizeof (float)) == 0))
    return;
  g_free (self->samples);
  self->samples = g_memdup2 (samples, n * sizeof (float));
  self->n = n;
  self->x0 = x0;
  self->step = step;
  self->mark = mark;
  self->fwhm_asked = fwhm && n > 2;
  self->fwhm = self->fwhm_asked ? profile_fwhm (self, samples, n, step, mark) : 0.0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* A peak below the floor (e.g. 1e-3 of the stack's maximum, set by the
 * viewer) is noise: no FWHM is given for it. */
void
airy_plot_set_peak_floor (AiryPlot *self,
                          double    floor)
{
  if (floor == self->peak_floor)
    return;
  self->peak_floor = floor;
  /* the widths of the profiles shown follow (set_data may not come again) */
  self->fwhm = self->fwhm_asked ? profile_fwhm (self, self->samples, self->n, self->step, self->mark) : 0.0;
  if (self->ref_n > 2)
    self->ref_fwhm = profile_fwhm (self, self->ref, self->ref_n, self->ref_step, self->ref_mark);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
airy_plot_has_peak (AiryPlot *self)
{
  return self->fwhm > 0;
}

double
airy_plot_get_fwhm (AiryPlot *self)
{
  return self->fwhm;
}

/* For tests: the room left beside the title of the last frame (negative:
 * cut), the smallest gap between two tick labels, the frames drawn. */
guint
airy_plot_get_label_fit (AiryPlot *self,
                         double   *title_room,
                         double   *min_gap)
{
  *title_room = self->title_room;
  *min_gap = self->min_gap;
  return self->frames;
}

guint
airy_plot_get_n_samples (AiryPlot *self)
{
  return self->n;
}

/* The x axis' unit (NULL: µm). */
void
airy_plot_set_unit (AiryPlot   *self,
                    const char *unit)
{
  if (g_strcmp0 (unit, self->unit) == 0)
    return;
  g_free (self->unit);
  self->unit = g_strdup (unit);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
airy_plot_set_reference (AiryPlot    *self,
                         const float *samples,
                         guint        n,
                         double       x0,
                         double       step,
                         guint        mark)
{
  if (samples == NULL || n < 2 ? self->ref_n == 0
      : n == self->ref_n && x0 == self->ref_x0 && step == self->ref_step && mark == self->ref_mark
        && memcmp (samples, self->ref, n * sizeof (float)) == 0)
    return;
  g_clear_pointer (&self->ref, g_free);
  self->ref_n = 0;
  self->ref_fwhm = 0.0;
  if (samples != NULL && n >= 2)
    {
      self->ref = g_memdup2 (samples, n * sizeof (float));
      self->ref_n = n;
      self->ref_x0 = x0;
      self->ref_step = step;
      self->ref_mark = mark;
      self->ref_fwhm = n > 2 ? profile_fwhm (self, samples, n, step, mark) : 0.0;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
airy_plot_get_reference_fwhm (AiryPlot *self)
{
  return self->ref_fwhm;
}

/* The curve as CSV: x (µm or the unit) and value, one sample a line;
 * with a reference, its values in a third column. */
char *
airy_plot_to_csv (AiryPlot *self)
{
  GString *csv = g_string_new (NULL);
  const char *unit = self->unit ? self->unit : "µm";
  guint i;

  if (self->ref_n == self->n && self->ref != NULL)
    g_string_append_printf (csv, "x_%s,value,reference\n", unit);
  else
    g_string_append_printf (csv, "x_%s,value\n", unit);
  for (i = 0; i < self->n; i++)
    {
      char x[G_ASCII_DTOSTR_BUF_SIZE], v[G_ASCII_DTOSTR_BUF_SIZE], r[G_ASCII_DTOSTR_BUF_SIZE];

      g_ascii_formatd (x, sizeof x, "%.6g", self->x0 + self->step * i);
      g_ascii_formatd (v, sizeof v, "%.7g", self->samples[i]);
      if (self->ref_n == self->n && self->ref != NULL)
        {
          g_ascii_formatd (r, sizeof r, "%.7g", self->ref[i]);
          g_string_append_printf (csv, "%s,%s,%s\n", x, v, r);
        }
      else
        g_string_append_printf (csv, "%s,%s\n", x, v);
    }
  return g_string_free (csv, FALSE);
}
