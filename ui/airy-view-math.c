#define G_LOG_DOMAIN "airy-view"

#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "airy-view-math.h"

void
airy_display_init (AiryDisplay *d)
{
  d->lo = 0.0f;
  d->hi = 1.0f;
  d->gamma = 1.0f;
  d->scale = AIRY_SCALE_LINEAR;
  d->colormap = AIRY_COLORMAP_INFERNO;
  d->inverted = FALSE;
}

float
airy_display_log_floor (const AiryDisplay *d)
{
  return d->lo > 0.0f ? d->lo : d->hi * 1e-6f;
}

/* The shader (resources/shaders/stack.frag) computes exactly this, in the
 * same float operations. */
guint
airy_display_index (const AiryDisplay *d,
                    float              v)
{
  float t;

  switch (d->scale)
    {
    case AIRY_SCALE_LOG:
      {
        float f = airy_display_log_floor (d);
        float lf = logf (f), lh = logf (d->hi);
        t = lh > lf ? (logf (MAX (v, f)) - lf) / (lh - lf) : 0.0f;
      }
      break;
    case AIRY_SCALE_SQRT:
      {
        float sl = sqrtf (MAX (d->lo, 0.0f)), sh = sqrtf (MAX (d->hi, 0.0f));
        t = sh > sl ? (sqrtf (MAX (v, 0.0f)) - sl) / (sh - sl) : 0.0f;
      }
      break;
    case AIRY_SCALE_LINEAR:
    default:
      t = d->hi > d->lo ? (v - d->lo) / (d->hi - d->lo) : 0.0f;
      break;
    }
  t = CLAMP (t, 0.0f, 1.0f);
  if (d->gamma != 1.0f && t > 0.0f)
    t = exp2f (d->gamma * log2f (t));
  return (guint) floorf (t * 255.0f + 0.5f);
}

void
airy_display_render_rgb (const AiryDisplay *d,
                         const float       *plane,
                         guint              height,
                         guint              width,
                         guint8            *rgb)
{
  guint8 lut[256 * 3];
  gsize i, n = (gsize) height * width;

  airy_colormap_lut (d->colormap, d->inverted, lut);
  for (i = 0; i < n; i++)
    memcpy (rgb + 3 * i, lut + 3 * airy_display_index (d, plane[i]), 3);
}

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return x < y ? -1 : x > y;
}

void
airy_auto_contrast (const float *values,
                    gsize        n,
                    double       percent,
                    float       *lo,
                    float       *hi)
{
  gsize i;

  *lo = 0.0f;
  *hi = 1.0f;
  if (n == 0)
    return;
  if (percent <= 0.0)
    airy_values_min_max (values, n, lo, hi);
  else
    {
      /* a sorted sample of at most 2^20 values is plenty for a percentile */
      gsize step = MAX (1, n >> 20), m = 0;
      g_autofree float *sample = g_new (float, n / step + 1);

      for (i = 0; i < n; i += step)
        if (isfinite (values[i]))
          sample[m++] = values[i];
      if (m == 0)
        return;
      qsort (sample, m, sizeof (float), compare_floats);
      *lo = sample[(gsize) floor ((m - 1) * percent / 100.0)];
      *hi = sample[(gsize) ceil ((m - 1) * (1.0 - percent / 100.0))];
    }
  if (!(*hi > *lo))
    *hi = *lo + 1.0f;
}

void
airy_histogram_percentiles (const guint64 *counts,
                            guint          bins,
                            float          min,
                            float          max,
                            double         percent,
                            float         *lo,
                            float         *hi)
{
  double width = (max - min) / (double) bins;
  guint64 total = 0, cum = 0, cut;
  guint k, klo = 0, khi = bins - 1;

  for (k = 0; k < bins; k++)
    total += counts[k];
  *lo = min;
  *hi = max;
  if (total > 0)
    {
      cut = (guint64) floor (total * percent / 100.0);
      for (k = 0; k < bins; k++)
        if ((cum += counts[k]) > cut)
          {
            klo = k;
            break;
          }
      cum = 0;
      for (k = bins; k-- > 0;)
        if ((cum += counts[k]) > cut)
          {
            khi = k;
            break;
          }
      *lo = (float) (min + klo * width);
      *hi = (float) (min + (khi + 1) * width);
    }
  if (!(*hi > *lo))
    *hi = *lo + 1.0f;
}

/* the profile between samples: a cubic through the four nearest samples
 * (exact for cubics; ~10× closer than a straight line on a sampled Gaussian) */
static double
cubic_at (const float *p, guint n, double t)
{
  int i0 = CLAMP ((int) floor (t) - 1, 0, (int) n - 4), k, j;
  double sum = 0.0;

  for (k = 0; k < 4; k++)
    {
      double w = 1.0;
      for (j = 0; j < 4; j++)
        if (j != k)
          w *= (t - (i0 + j)) / (double) (k - j);
      sum += w * p[i0 + k];
    }
  return sum;
}

/* the crossing of `level` between samples a and b (p[a] above, p[b] below) */
static double
crossing (const float *p, guint n, guint a, guint b, double level)
{
  double hi = a, lo = b;
  int it;

  if (n < 4)
    return a + (p[a] - level) / (p[a] - p[b]) * ((double) b - a);
  for (it = 0; it < 50; it++)
    {
      double mid = 0.5 * (hi + lo);
      if (cubic_at (p, n, mid) > level)
        hi = mid;
      else
        lo = mid;
    }
  return 0.5 * (hi + lo);
}

double
airy_profile_fwhm (const float *p,
                   guint        n,
                   double       step,
                   guint        near)
{
  guint c = MIN (near, n - 1), i, a, k;
  double half, left, right;

  if (n < 3)
    return 0.0;
  /* climb to the local maximum */
  while (c + 1 < n && p[c + 1] > p[c])
    c++;
  while (c > 0 && p[c - 1] > p[c])
    c--;
  half = p[c] / 2.0;
  if (!(p[c] > 0) || !isfinite (p[c]))
    return 0.0;
  for (i = c; i > 0 && p[i - 1] > half; i--)
    ;
  if (i == 0)
    return 0.0;
  a = i;
  left = crossing (p, n, i, i - 1, half);
  for (i = c; i + 1 < n && p[i + 1] > half; i++)
    ;
  if (i + 1 >= n)
    return 0.0;
  right = crossing (p, n, i, i + 1, half);
  /* one peak: nothing else of the profile reaches half of it (noise, a
   * ring or a second bead would) */
  for (k = 0; k < n; k++)
    if ((k < a || k > i) && p[k] > half)
      return 0.0;
  return (right - left) * step;
}

void
airy_line_profile (const float *plane,
                   guint        height,
                   guint        width,
                   double       x0,
                   double       y0,
                   double       x1,
                   double       y1,
                   guint        n,
                   float       *out)
{
  guint k;

  for (k = 0; k < n; k++)
    {
      double t = n > 1 ? (double) k / (n - 1) : 0.0;
      double x = x0 + t * (x1 - x0), y = y0 + t * (y1 - y0);
      int xi = (int) floor (x), yi = (int) floor (y);
      double fx = x - xi, fy = y - yi, v = 0.0;
      int j, i;

      for (j = 0; j < 2; j++)
        for (i = 0; i < 2; i++)
          {
            int xx = CLAMP (xi + i, 0, (int) width - 1), yy = CLAMP (yi + j, 0, (int) height - 1);
            v += (i ? fx : 1 - fx) * (j ? fy : 1 - fy) * plane[(gsize) yy * width + xx];
          }
      out[k] = (float) v;
    }
}

void
airy_line_profile_wide (const float *plane,
                        guint        height,
                        guint        width,
                        double       x0,
                        double       y0,
                        double       x1,
                        double       y1,
                        guint        n,
                        guint        line_width,
                        float       *out)
{
  double len = hypot (x1 - x0, y1 - y0), nx, ny;
  g_autofree float *one = NULL;
  guint k, w;

  if (line_width <= 1 || len <= 0)
    {
      airy_line_profile (plane, height, width, x0, y0, x1, y1, n, out);
      return;
    }
  /* parallel lines one pixel apart, centred on the drawn one, averaged
   * (ImageJ's wide line profile) */
  nx = -(y1 - y0) / len;
  ny = (x1 - x0) / len;
  one = g_new (float, n);
  memset (out, 0, n * sizeof (float));
  for (w = 0; w < line_width; w++)
    {
      double o = w - (line_width - 1) / 2.0;

      airy_line_profile (plane, height, width, x0 + o * nx, y0 + o * ny, x1 + o * nx, y1 + o * ny, n, one);
      for (k = 0; k < n; k++)
        out[k] += one[k] / line_width;
    }
}

void
airy_box_stats (const float *plane,
                guint        height,
                guint        width,
                guint        x,
                guint        y,
                guint        w,
                guint        h,
                AiryBoxStats *stats)
{
  double total = 0.0, circle = 0.0, cx, cy, r2;
  guint i, j;

  memset (stats, 0, sizeof *stats);
  x = MIN (x, width - 1);
  y = MIN (y, height - 1);
  w = MAX (1, MIN (w, width - x));
  h = MAX (1, MIN (h, height - y));
  stats->max = -G_MAXFLOAT;
  /* the circle inscribed in the rectangle, pixel centres inside it */
  cx = x + (w - 1) / 2.0;
  cy = y + (h - 1) / 2.0;
  r2 = (MIN (w, h) / 2.0) * (MIN (w, h) / 2.0);
  for (j = 0; j < height; j++)
    for (i = 0; i < width; i++)
      {
        float v = plane[(gsize) j * width + i];

        total += v;
        if (i >= x && i < x + w && j >= y && j < y + h)
          {
            stats->sum += v;
            stats->max = MAX (stats->max, v);
            if ((i - cx) * (i - cx) + (j - cy) * (j - cy) <= r2)
              circle += v;
          }
      }
  stats->n = (gsize) w * h;
  stats->mean = stats->sum / stats->n;
  stats->ensquared = total != 0 ? stats->sum / total : 0.0;
  stats->encircled = total != 0 ? circle / total : 0.0;
  stats->radius = MIN (w, h) / 2.0;
}

double
airy_scale_bar (double  pixels_per_um,
                double  max_pixels,
                double *pixels)
{
  double best = 0.0, k;
  static const double steps[] = { 1.0, 2.0, 5.0 };
  guint i;

  for (k = -4; k <= 6; k++)
    for (i = 0; i < G_N_ELEMENTS (steps); i++)
      {
        double len = steps[i] * pow (10.0, k);
        if (len * pixels_per_um <= max_pixels)
          best = len;
      }
  *pixels = best * pixels_per_um;
  return best;
}

char *
airy_format_length (double um)
{
  if (um >= 1000.0)
    return g_strdup_printf ("%g mm", um / 1000.0);
  if (um < 1.0)
    return g_strdup_printf ("%g nm", um * 1000.0);
  return g_strdup_printf ("%g µm", um);
}

double
airy_pixel_to_um (double pixel,
                  guint  n,
                  double spacing)
{
  return (pixel - (double) (n / 2)) * spacing;
}
