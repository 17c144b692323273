#define G_LOG_DOMAIN "airy-fit-dialog"

#include "config.h"

#include <math.h>

#include <glib/gi18n-lib.h>

#include "airy-fit-dialog-private.h"
#include "airy-stack-viewer.h"
#include "airy-physics.h"

/* ---- drawing ---- */

/* a diverging map, blue (−1) – white (0) – red (+1) */
static void
diverging (double t, double *r, double *g, double *b)
{
  t = CLAMP (t, -1.0, 1.0);
  if (t < 0)
    {
      *r = 1.0 + t * (1.0 - 0.23);
      *g = 1.0 + t * (1.0 - 0.30);
      *b = 1.0 + t * (1.0 - 0.75);
    }
  else
    {
      *r = 1.0 - t * (1.0 - 0.70);
      *g = 1.0 - t * (1.0 - 0.02);
      *b = 1.0 - t * (1.0 - 0.15);
    }
}

static void
draw_text (cairo_t *cr, double x, double y, const char *text)
{
  cairo_move_to (cr, x, y);
  cairo_show_text (cr, text);
}

void
_airy_fit_dialog_draw_loss (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryFitDialog *self = data;
  guint n = self->losses->len, i;
  double lo = INFINITY, hi = -INFINITY;
  g_autofree char *label = NULL;

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_font_size (cr, 11);
  draw_text (cr, 6, 14, _("Loss per iteration (log scale)"));
  if (n < 1)
    return;
  for (i = 0; i < n; i++)
    {
      double v = log10 (MAX (g_array_index (self->losses, LossPoint, i).loss, 1e-300));
      lo = MIN (lo, v);
      hi = MAX (hi, v);
    }
  if (hi - lo < 1e-9)
    hi = lo + 1;
  cairo_set_source_rgb (cr, 0.1, 0.3, 0.8);
  cairo_set_line_width (cr, 1.5);
  /* each start its own curve: a new start is no rise of the loss */
  for (i = 0; i < n; i++)
    {
      const LossPoint *pt = &g_array_index (self->losses, LossPoint, i);
      double v = log10 (MAX (pt->loss, 1e-300));
      double x = 40 + (width - 50) * (n > 1 ? (double) i / (n - 1) : 0.5);
      double y = 22 + (height - 32) * (hi - v) / (hi - lo);
      if (i == 0 || pt->restart != g_array_index (self->losses, LossPoint, i - 1).restart)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  label = g_strdup_printf (_("%u iterations, loss %.6g"), n, g_array_index (self->losses, LossPoint, n - 1).loss);
  draw_text (cr, 40, height - 4, label);
}

/* plane z of one of the three stacks, with the shared cursor */
void
_airy_fit_dialog_draw_image (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryFitDialog *self = data;
  int which = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (area), "airy-which"));
  const AiryStack *s;
  cairo_surface_t *surface;
  guint z, w, h, x, y;
  double scale, lo = INFINITY, hi = -INFINITY, ox, oy;
  const float *plane, *ref;
  guint8 *pixels;
  int stride;

  cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
  cairo_paint (cr);
  /* before a fit: the opened stack in the measured view */
  if (self->result == NULL && (which != 0 || self->opened == NULL))
    return;
  if (self->result == NULL)
    s = self->opened;
  else
    s = which == 0 ? self->measured : which == 1 ? self->result->model : self->result->residual;
  w = s->width;
  h = s->height;
  /* the slider counts planes from 1, as the viewer */
  z = (guint) CLAMP (gtk_range_get_value (GTK_RANGE (self->z_scale)) - 1, 0, s->depth - 1);
  plane = s->data + (gsize) z * w * h;
  /* measured and model share the measured plane's range; the residual is symmetric */
  ref = which == 2 || self->result == NULL ? plane : self->measured->data + (gsize) z * w * h;
  for (x = 0; x < w * h; x++)
    {
      double v = which == 2 ? fabs (ref[x]) : ref[x];
      lo = MIN (lo, v);
      hi = MAX (hi, v);
    }
  if (which == 2)
    lo = -hi;
  /* a flat plane in mid grey (the residual: white) */
  if (hi - lo <= 0)
    {
      lo -= 1;
      hi += 1;
    }
  surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  pixels = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  cairo_surface_flush (surface);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      {
        double v = plane[(gsize) y * w + x], r, g, b;
        guint32 *px = (guint32 *) (pixels + (gsize) y * stride) + x;

        if (which == 2)
          diverging (v / hi, &r, &g, &b);
        else
          r = g = b = CLAMP ((v - lo) / (hi - lo), 0.0, 1.0);
        *px = ((guint32) (r * 255) << 16) | ((guint32) (g * 255) << 8) | (guint32) (b * 255);
      }
  cairo_surface_mark_dirty (surface);
  scale = MIN ((double) width / w, (double) (height - 16) / h);
  ox = (width - scale * w) / 2;
  oy = 16;
  cairo_save (cr);
  cairo_translate (cr, ox, oy);
  cairo_scale (cr, scale, scale);
  cairo_set_source_surface (cr, surface, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_paint (cr);
  cairo_restore (cr);
  cairo_surface_destroy (surface);
  g_object_set_data (G_OBJECT (area), "airy-scale", GINT_TO_POINTER ((int) (scale * 1000)));
  /* the cursor, the same pixel in the three */
  if (self->result != NULL)
    {
      cairo_set_source_rgb (cr, 0.0, 0.9, 0.3);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, ox + (self->cursor_x + 0.5) * scale, oy);
      cairo_line_to (cr, ox + (self->cursor_x + 0.5) * scale, oy + h * scale);
      cairo_move_to (cr, ox, oy + (self->cursor_y + 0.5) * scale);
      cairo_line_to (cr, ox + w * scale, oy + (self->cursor_y + 0.5) * scale);
      cairo_stroke (cr);
    }
  cairo_set_source_rgb (cr, 0.9, 0.9, 0.9);
  cairo_set_font_size (cr, 11);
  draw_text (cr, 4, 12, which == 0 ? _("Measured") : which == 1 ? _("Model") : _("Residual"));
}

void
_airy_fit_dialog_draw_wavefront (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryFitDialog *self = data;
  enum { N = 96 };
  double W[N * N], wmax = 0;
  int i, j;
  guint t;
  double size = MIN (width, height - 16), ox = (width - size) / 2, oy = 16, cell = size / N;
  g_autofree char *label = NULL;

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_font_size (cr, 11);
  if (self->result == NULL)
    {
      draw_text (cr, 4, 12, _("Wavefront"));
      return;
    }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      {
        double u = (j + 0.5) / N * 2 - 1, v = 1 - (i + 0.5) / N * 2, rho = sqrt (u * u + v * v), sum = 0;

        W[i * N + j] = NAN;
        if (rho > 1)
          continue;
        for (t = 0; t < self->result->n_terms; t++)
          {
            int n, m;
            airy_zernike_ansi_to_nm (self->result->indices[t], &n, &m);
            sum += self->result->coefficients[t] * airy_zernike (n, m, rho, atan2 (v, u), TRUE);
          }
        W[i * N + j] = sum;
        wmax = MAX (wmax, fabs (sum));
      }
  /* the colour scale spans at least the bars' smallest full height: a
   * wavefront of noise stays near white */
  wmax = MAX (wmax, AIRY_FIT_DIALOG_BARS_MIN_SCALE);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      {
        double r, g, b;
        if (isnan (W[i * N + j]))
          continue;
        diverging (W[i * N + j] / wmax, &r, &g, &b);
        cairo_set_source_rgb (cr, r, g, b);
        cairo_rectangle (cr, ox + j * cell, oy + i * cell, cell + 0.5, cell + 0.5);
        cairo_fill (cr);
      }
  /* the pupil's rim: a flat wavefront is white on white */
  cairo_set_source_rgb (cr, 0.6, 0.6, 0.6);
  cairo_set_line_width (cr, 1.0);
  cairo_arc (cr, ox + size / 2, oy + size / 2, size / 2, 0, 2 * G_PI);
  cairo_stroke (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  label = g_strdup_printf (_("Wavefront: colours ±%.3f waves, RMS %.3f"), wmax, self->result->rms_waves);
  draw_text (cr, 4, 12, label);
}

void
_airy_fit_dialog_draw_bars (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryFitDialog *self = data;
  const AiryFitResult *r = self->result;
  double vmax = 0, bw, y0, ys;
  guint i;

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_font_size (cr, 10);
  draw_text (cr, 4, 12, _("Coefficients (waves) ± 1 σ"));
  if (r == NULL || r->n_terms == 0)
    return;
  for (i = 0; i < r->n_terms; i++)
    vmax = MAX (vmax, fabs (r->coefficients[i]) + (isfinite (r->uncertainties[i]) ? r->uncertainties[i] : 0));
  /* full height is at least ±0.01 waves: a noise-free fit's tiny values stay tiny */
  vmax = MAX (vmax, AIRY_FIT_DIALOG_BARS_MIN_SCALE);
  bw = (width - 68.0) / r->n_terms;
  y0 = 18 + (height - 34) / 2.0;
  ys = (height - 34) / 2.0 / vmax;
  /* the value axis: ticks at ±vmax and 0, the largest |value| said */
  {
    double cmax = 0;
    char tick[32];
    int t;

    for (i = 0; i < r->n_terms; i++)
      cmax = MAX (cmax, fabs (r->coefficients[i]));
    cairo_set_line_width (cr, 1);
    cairo_move_to (cr, 56.5, y0 - vmax * ys);
    cairo_line_to (cr, 56.5, y0 + vmax * ys);
    for (t = -1; t <= 1; t++)
      {
        cairo_move_to (cr, 52, y0 - t * vmax * ys + 0.5);
        cairo_line_to (cr, 57, y0 - t * vmax * ys + 0.5);
        g_snprintf (tick, sizeof tick, "%+.3g", t * vmax + 0.0);
        draw_text (cr, 2, y0 - t * vmax * ys + (t > 0 ? 9 : t < 0 ? -2 : 3), t == 0 ? "0" : tick);
      }
    cairo_stroke (cr);
    g_snprintf (tick, sizeof tick, "%.4f", cmax);
    {
      g_autofree char *label = g_strdup_printf (_("largest |value| %s waves"), tick);
      cairo_text_extents_t ext;

      cairo_text_extents (cr, label, &ext);
      draw_text (cr, width - 6 - ext.x_advance, 12, label);
    }
  }
  cairo_move_to (cr, 58, y0);
  cairo_line_to (cr, width - 10, y0);
  cairo_stroke (cr);
  for (i = 0; i < r->n_terms; i++)
    {
      double x = 58 + i * bw, c = r->coefficients[i], s = r->uncertainties[i];
      char label[16];

      cairo_set_source_rgb (cr, c >= 0 ? 0.70 : 0.23, c >= 0 ? 0.2 : 0.3, c >= 0 ? 0.15 : 0.75);
      cairo_rectangle (cr, x + bw * 0.15, MIN (y0, y0 - c * ys), bw * 0.7, fabs (c) * ys);
      cairo_fill (cr);
      cairo_set_source_rgb (cr, 0, 0, 0);
      if (isfinite (s))
        {
          cairo_move_to (cr, x + bw / 2, y0 - (c + s) * ys);
          cairo_line_to (cr, x + bw / 2, y0 - (c - s) * ys);
          cairo_stroke (cr);
        }
      g_snprintf (label, sizeof label, "Z%d", r->indices[i]);
      draw_text (cr, x + 2, height - 3, label);
    }
}

