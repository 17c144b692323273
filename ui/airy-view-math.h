/* airy-view-math.h: what the stack viewer shows, as plain functions.
 *
 * The GL shader and the PNG export both map values to colours with these
 * definitions (the shader repeats them in GLSL), and the tests check them
 * without a display. */
#pragma once

#include <glib.h>

#include "airy-colormap.h"
#include "airy-stack.h"
#include "airy-resident.h"

G_BEGIN_DECLS

typedef enum
{
  AIRY_SCALE_LINEAR,
  AIRY_SCALE_LOG,
  AIRY_SCALE_SQRT,
} AiryDisplayScale;

typedef struct
{
  float            lo;        /* contrast limits, in data units */
  float            hi;
  float            gamma;     /* t ↦ t^gamma after scaling */
  AiryDisplayScale scale;
  AiryColormap     colormap;
  gboolean         inverted;
} AiryDisplay;

void   airy_display_init          (AiryDisplay       *display);
/* The LUT index (0…255) of a value: t = scaled position of v between lo
 * and hi, clamped to [0, 1], raised to gamma, index = ⌊255·t + ½⌋. */
guint  airy_display_index         (const AiryDisplay *display,
                                   float              value);
/* Log scale: the lowest value shown (lo, or hi·1e-6 when lo ≤ 0). */
float  airy_display_log_floor     (const AiryDisplay *display);
void   airy_display_render_rgb    (const AiryDisplay *display,
                                   const float       *plane,
                                   guint              height,
                                   guint              width,
                                   guint8            *rgb);

/* airy_histogram(), airy_stack_section_xz/yz() and airy_stack_mip() are the
 * engine's (airy-resident.h): the CPU backend serves the viewer with them. */

/* Contrast limits that leave `percent` % of the values below lo and above
 * hi (0: the minimum and maximum). */
void   airy_auto_contrast         (const float *values,
                                   gsize        n,
                                   double       percent,
                                   float       *lo,
                                   float       *hi);

/* The same from a histogram of counts over [min, max] (what a backend's
 * statistics slot gives): lo at the lower edge of the bin where `percent` %
 * of the counts lie below it, hi at the upper edge of the one where they
 * lie above (one bin's precision); hi > lo. */
void   airy_histogram_percentiles (const guint64 *counts,
                                   guint          bins,
                                   float          min,
                                   float          max,
                                   double         percent,
                                   float         *lo,
                                   float         *hi);

/* Full width at half maximum of the peak nearest to `near` in a profile of
 * n samples spaced `step` apart (linear interpolation of the crossings);
 * 0 ("no peak") when the peak is not positive, does not fall to half on
 * both sides, or is not the only region above its half (noise, rings or a
 * second peak reach it). */
double airy_profile_fwhm          (const float *profile,
                                   guint        n,
                                   double       step,
                                   guint        near);
/* Samples the plane along a line (bilinear) at `n` points from (x0, y0) to
 * (x1, y1), in pixel coordinates (pixel centres at integers). */
void   airy_line_profile          (const float *plane,
                                   guint        height,
                                   guint        width,
                                   double       x0,
                                   double       y0,
                                   double       x1,
                                   double       y1,
                                   guint        n,
                                   float       *out);

/* The same, averaged over line_width parallel lines one pixel apart across
 * it (ImageJ's wide lines); line_width ≤ 1 is the line alone. */
void   airy_line_profile_wide     (const float *plane,
                                   guint        height,
                                   guint        width,
                                   double       x0,
                                   double       y0,
                                   double       x1,
                                   double       y1,
                                   guint        n,
                                   guint        line_width,
                                   float       *out);

/* A rectangle of the plane (clamped to it): its sum, mean and maximum, and
 * the share of the plane's total inside it (ensquared energy) and inside
 * the circle inscribed in it, radius min (w, h)/2 pixels around its middle
 * (encircled energy). */
typedef struct
{
  double sum, mean, max;
  double ensquared, encircled, radius;
  gsize  n;
} AiryBoxStats;

void   airy_box_stats             (const float  *plane,
                                   guint         height,
                                   guint         width,
                                   guint         x,
                                   guint         y,
                                   guint         w,
                                   guint         h,
                                   AiryBoxStats *stats);

/* A scale bar: the largest 1-2-5 × 10^k length in µm that spans at most
 * `max_pixels` screen pixels at `pixels_per_um`; returns its length in µm
 * and sets *pixels. */
double airy_scale_bar             (double       pixels_per_um,
                                   double       max_pixels,
                                   double      *pixels);
char  *airy_format_length         (double       um);

/* Pixel index → µm on the optical-axis grid: (i − ⌊N/2⌋)·d. */
double airy_pixel_to_um           (double       pixel,
                                   guint        n,
                                   double       spacing);

G_END_DECLS
