#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-stack-view-private.h"

/* The stack view on GTK's cairo renderer (what Airy picks on a software
 * GL such as llvmpipe): each slice is colormapped once, at its own size,
 * into a cairo image surface kept until its values or the display change,
 * and cairo scales it into the frame. A GtkGLArea there renders with
 * llvmpipe, reads the whole area back and converts it pixel by pixel
 * through floats into cairo's format in every frame it shows: measured,
 * that was about half of the paint of the frame a person waits for after
 * an edit. The colours are the shader's (airy_display_index, the same
 * LUT, NaN as the canvas). AIRY_VIEW_CAIRO=0 keeps the GL path, for
 * comparisons. */

/* the canvas behind the image, in the bytes the GL path's clear to
 * (0.12, 0.12, 0.13) gives */
#define CANVAS_R 31
#define CANVAS_G 31
#define CANVAS_B 33

gboolean
_airy_stack_view_uses_cairo (AiryStackView *self)
{
  GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
  GskRenderer *renderer = native ? gtk_native_get_renderer (native) : NULL;

  /* a readback (Export View) stays with GL; a composite is drawn here too,
   * so that it does not depend on a GL context on a software renderer */
  return renderer != NULL && GSK_IS_CAIRO_RENDERER (renderer) && !self->want_readback
         && g_strcmp0 (g_getenv ("AIRY_VIEW_CAIRO"), "0") != 0;
}

void
_airy_stack_view_cairo_clear (AiryStackView *self)
{
  for (guint i = 0; i < 3; i++)
    g_clear_pointer (&self->sw_surface[i], cairo_surface_destroy);
}

static gboolean
same_display (const AiryDisplay *a, const AiryDisplay *b)
{
  return a->lo == b->lo && a->hi == b->hi && a->gamma == b->gamma && a->scale == b->scale
         && a->colormap == b->colormap && a->inverted == b->inverted;
}

/* The composite's pixels: each channel between its own limits through its
 * ramp from black, added and clamped, as the GL path's additive blend of
 * one pass per channel (a NaN adds the canvas, as its pass draws it). */
static gboolean
fill_composite (AiryStackView *self, const AirySlice *slice, guint w, guint h, guchar *data, int stride,
                GError **error)
{
  g_autofree float *values = g_new (float, (gsize) w * h);
  g_autofree guint16 *sum = g_new0 (guint16, (gsize) w * h * 3);
  guint c, x, y;

  for (c = 0; c < self->n_composite; c++)
    {
      AiryDisplay d;
      guint8 ramp[256 * 3];
      gsize i;

      if (!airy_resident_read_slice (self->composite[c], slice, values, error))
        return FALSE;
      airy_display_init (&d);
      d.lo = self->comp_lo[c];
      d.hi = self->comp_hi[c];
      for (i = 0; i < 256; i++)
        {
          ramp[3 * i] = (guint8) (self->comp_color[c].red * i + 0.5);
          ramp[3 * i + 1] = (guint8) (self->comp_color[c].green * i + 0.5);
          ramp[3 * i + 2] = (guint8) (self->comp_color[c].blue * i + 0.5);
        }
      for (i = 0; i < (gsize) w * h; i++)
        {
          static const guint8 canvas[3] = { CANVAS_R, CANVAS_G, CANVAS_B };
          const guint8 *rgb = isnan (values[i]) ? canvas : ramp + 3 * airy_display_index (&d, values[i]);

          sum[3 * i] += rgb[0];
          sum[3 * i + 1] += rgb[1];
          sum[3 * i + 2] += rgb[2];
        }
    }
  for (y = 0; y < h; y++)
    {
      guint32 *row = (guint32 *) (data + (gsize) y * stride);
      const guint16 *v = sum + (gsize) y * w * 3;

      for (x = 0; x < w; x++)
        row[x] = 0xff000000u | (guint32) MIN (v[3 * x], 255) << 16 | (guint32) MIN (v[3 * x + 1], 255) << 8
                 | MIN (v[3 * x + 2], 255);
    }
  return TRUE;
}

/* Surface i (xy, xz, yz) holds the slice through the display's colours, or
 * the composite's. */
static void
fill_surface (AiryStackView *self, guint i, const AirySlice *slice)
{
  const guint32 canvas = 0xff000000u | CANVAS_R << 16 | CANVAS_G << 8 | CANVAS_B;
  g_autoptr(GError) error = NULL;
  g_autofree float *values = NULL;
  guint8 lut[256 * 3];
  guint w, h, x, y;
  guchar *data;
  int stride;
  gboolean ok;

  if (!self->sw_dirty[i] && self->sw_surface[i] && same_display (&self->sw_display[i], &self->display))
    return;
  airy_slice_size (self->stack, slice, &w, &h);
  if (self->sw_surface[i] == NULL || cairo_image_surface_get_width (self->sw_surface[i]) != (int) w
      || cairo_image_surface_get_height (self->sw_surface[i]) != (int) h)
    {
      g_clear_pointer (&self->sw_surface[i], cairo_surface_destroy);
      self->sw_surface[i] = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
    }
  cairo_surface_flush (self->sw_surface[i]);
  data = cairo_image_surface_get_data (self->sw_surface[i]);
  stride = cairo_image_surface_get_stride (self->sw_surface[i]);
  if (self->n_composite > 0)
    ok = fill_composite (self, slice, w, h, data, stride, &error);
  else
    {
      values = g_new (float, (gsize) w * h);
      ok = airy_resident_read_slice (self->resident, slice, values, &error);
    }
  if (!ok)
    {
      g_free (self->gl_error);
      self->gl_error = g_strdup (error->message);
      return;
    }
  airy_colormap_lut (self->display.colormap, self->display.inverted, lut);
  for (y = 0; values != NULL && y < h; y++)
    {
      guint32 *row = (guint32 *) (data + (gsize) y * stride);
      const float *v = values + (gsize) y * w;

      for (x = 0; x < w; x++)
        {
          const guint8 *c;

          if (isnan (v[x]))
            {
              row[x] = canvas;
              continue;
            }
          c = lut + 3 * airy_display_index (&self->display, v[x]);
          row[x] = 0xff000000u | (guint32) c[0] << 16 | (guint32) c[1] << 8 | c[2];
        }
    }
  cairo_surface_mark_dirty (self->sw_surface[i]);
  self->sw_display[i] = self->display;
  self->sw_dirty[i] = FALSE;
}

/* surface i drawn through the matrix (surface pixels → widget pixels),
 * clipped to r */
static void
paint_surface (AiryStackView *self, cairo_t *cr, guint i, AiryRect r, const cairo_matrix_t *m)
{
  if (self->sw_surface[i] == NULL || r.w <= 0 || r.h <= 0)
    return;
  cairo_save (cr);
  /* edges at fractional pixels fall on whole pixels, as GL rasterises a quad */
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  cairo_rectangle (cr, r.x, r.y, r.w, r.h);
  cairo_clip (cr);
  cairo_transform (cr, m);
  cairo_set_source_surface (cr, self->sw_surface[i], 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), self->linear ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_NEAREST);
  cairo_pattern_set_extend (cairo_get_source (cr), CAIRO_EXTEND_PAD);
  cairo_paint (cr);
  cairo_restore (cr);
}

void
_airy_stack_view_cairo_snapshot (AiryStackView *self, GtkSnapshot *snapshot)
{
  double W = gtk_widget_get_width (GTK_WIDGET (self)), H = gtk_widget_get_height (GTK_WIDGET (self));
  AiryStack *s = self->stack;
  AiryViewLayout L;
  cairo_t *cr;

  if (W <= 0 || H <= 0)
    return;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, W, H));
  cairo_set_source_rgb (cr, CANVAS_R / 255.0, CANVAS_G / 255.0, CANVAS_B / 255.0);
  cairo_paint (cr);
  if (s != NULL && self->resident != NULL)
    {
      AirySlice xy = _airy_stack_view_xy_slice (self);
      gboolean sections = s->depth > 1 && self->sections;
      cairo_matrix_t m;

      _airy_stack_view_compute_layout (self, &L);
      fill_surface (self, 0, &xy);
      if (sections)
        {
          fill_surface (self, 1, &(AirySlice) { AIRY_SLICE_XZ, self->cy });
          fill_surface (self, 2, &(AirySlice) { AIRY_SLICE_YZ, self->cx });
        }
      /* XY: the whole image's place, clipped to what is visible */
      cairo_matrix_init (&m, L.xy.w / s->width, 0, 0, L.xy.h / s->height, L.xy.x, L.xy.y);
      paint_surface (self, cr, 0, L.vxy, &m);
      if (L.sections && sections)
        {
          /* XZ: x as in XY, z top to bottom over the section's height */
          cairo_matrix_init (&m, L.xy.w / s->width, 0, 0, L.xz.h / s->depth, L.xy.x, L.xz.y);
          paint_surface (self, cr, 1, L.xz, &m);
          /* YZ: its rows are z (left to right), its columns y (as in XY) */
          cairo_matrix_init (&m, 0, L.xy.h / s->height, L.yz.w / s->depth, 0, L.yz.x, L.xy.y);
          paint_surface (self, cr, 2, L.yz, &m);
        }
      self->drawn_serial = self->resident_serial;
      _airy_stack_view_set_slice_path (self, &(AiryTexture) { .path = AIRY_TEXTURE_HOST, .device = -1 });
    }
  cairo_destroy (cr);
}
