/* The stack viewer: display maths without a display, then the GL view
 * under Xvfb (pixels read back from the framebuffer). */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gtk/gtk.h>
#include <tiffio.h>
#include <glib/gstdio.h>
#include <glib/gi18n.h>
#include <locale.h>

#include "airy.h"
#include "airy-backend-impl.h"
#include "airy-stack-viewer.h"
#include "airy-histogram.h"
#include "airy-test-gtk.h"
#include "airy-view-math.h"

static gboolean have_display;
static char *tmpdir;

/* ---- maths ---- */

static void
test_display_index (void)
{
  AiryDisplay d;

  airy_display_init (&d);
  d.lo = 2.0f;
  d.hi = 10.0f;
  /* contrast limits map to the LUT ends and clamp beyond them */
  g_assert_cmpuint (airy_display_index (&d, 2.0f), ==, 0);
  g_assert_cmpuint (airy_display_index (&d, -5.0f), ==, 0);
  g_assert_cmpuint (airy_display_index (&d, 10.0f), ==, 255);
  g_assert_cmpuint (airy_display_index (&d, 99.0f), ==, 255);
  g_assert_cmpuint (airy_display_index (&d, 6.0f), ==, 128);   /* ⌊127.5 + ½⌋ */
  /* gamma 2: t = ½ → ¼ */
  d.gamma = 2.0f;
  g_assert_cmpuint (airy_display_index (&d, 6.0f), ==, 64);
  d.gamma = 1.0f;
  /* log: the geometric mean sits in the middle */
  d.scale = AIRY_SCALE_LOG;
  d.lo = 1e-4f;
  d.hi = 1.0f;
  g_assert_cmpuint (airy_display_index (&d, 1e-2f), ==, 128);
  g_assert_cmpuint (airy_display_index (&d, 1e-6f), ==, 0);
  /* sqrt: a quarter of the range is half way */
  d.scale = AIRY_SCALE_SQRT;
  d.lo = 0.0f;
  d.hi = 4.0f;
  g_assert_cmpuint (airy_display_index (&d, 1.0f), ==, 128);
}

static void
test_histogram_contrast (void)
{
  g_autofree float *v = g_new (float, 10000);
  guint64 counts[10];
  float lo, hi;
  guint i;

  for (i = 0; i < 10000; i++)
    v[i] = (float) i;
  airy_histogram (v, 10000, 0.0f, 9999.0f, 10, counts);
  for (i = 0; i < 10; i++)
    g_assert_cmpuint (counts[i], ==, 1000);
  airy_auto_contrast (v, 10000, 0.0, &lo, &hi);
  g_assert_cmpfloat (lo, ==, 0.0f);
  g_assert_cmpfloat (hi, ==, 9999.0f);
  airy_auto_contrast (v, 10000, 1.0, &lo, &hi);
  g_assert_cmpfloat_with_epsilon (lo, 99.0f, 1.0f);
  g_assert_cmpfloat_with_epsilon (hi, 9900.0f, 1.0f);
}

static void
test_histogram_percentiles (void)
{
  /* percentiles from the statistics slot's fine histogram: one bin's
   * precision (1/4096 of the range) */
  g_autofree float *v = g_new (float, 10000);
  guint64 counts[4096];
  AirySliceStats stats = { 0, 0, 4096, counts };
  float lo, hi;
  guint i;

  for (i = 0; i < 10000; i++)
    v[i] = (float) i;
  airy_values_stats (v, 10000, &stats);
  airy_histogram_percentiles (counts, 4096, stats.min, stats.max, 1.0, &lo, &hi);
  g_assert_cmpfloat_with_epsilon (lo, 99.0f, 9999.0f / 4096 + 0.5f);
  g_assert_cmpfloat_with_epsilon (hi, 9900.0f, 9999.0f / 4096 + 0.5f);
  airy_histogram_percentiles (counts, 4096, stats.min, stats.max, 0.0, &lo, &hi);
  g_assert_cmpfloat (lo, ==, 0.0f);
  g_assert_cmpfloat (hi, ==, 9999.0f);
}

static void
test_fwhm_gaussian (void)
{
  /* a sampled Gaussian, σ = 2.5 samples of 0.1 µm: FWHM = 2√(2 ln 2)·σ */
  guint n = 101, i;
  g_autofree float *p = g_new (float, n);
  double sigma = 2.5, expected = 2.0 * sqrt (2.0 * log (2.0)) * sigma * 0.1;

  for (i = 0; i < n; i++)
    p[i] = (float) exp (-pow (i - 50.3, 2) / (2 * sigma * sigma));
  g_assert_cmpfloat_with_epsilon (airy_profile_fwhm (p, n, 0.1, 47) / expected, 1.0, 0.01);
  /* a peak that never falls to half on one side has no FWHM */
  for (i = 0; i < n; i++)
    p[i] = (float) i;
  g_assert_cmpfloat (airy_profile_fwhm (p, n, 0.1, 50), ==, 0.0);
}

static void
test_scale_bar (void)
{
  double px, len;

  /* 10 screen pixels per µm, at most 100 pixels: 10 µm */
  len = airy_scale_bar (10.0, 100.0, &px);
  g_assert_cmpfloat (len, ==, 10.0);
  g_assert_cmpfloat (px, ==, 100.0);
  /* 10 px/µm, 99 px: 5 µm; 0.5 px/µm at 60 px: 100 µm */
  g_assert_cmpfloat (airy_scale_bar (10.0, 99.0, &px), ==, 5.0);
  g_assert_cmpfloat (airy_scale_bar (0.5, 60.0, &px), ==, 100.0);
  g_assert_cmpfloat (airy_scale_bar (300.0, 100.0, &px), ==, 0.2);
  {
    g_autofree char *a = airy_format_length (0.2);
    g_autofree char *b = airy_format_length (20);
    g_assert_cmpstr (a, ==, "200 nm");
    g_assert_cmpstr (b, ==, "20 µm");
  }
}

static void
test_pixel_to_um (void)
{
  /* pixel ⌊N/2⌋ is the optical axis, for even and odd N */
  g_assert_cmpfloat (airy_pixel_to_um (32, 64, 0.1), ==, 0.0);
  g_assert_cmpfloat_with_epsilon (airy_pixel_to_um (0, 64, 0.1), -3.2, 1e-12);
  g_assert_cmpfloat_with_epsilon (airy_pixel_to_um (40, 63, 0.5), 4.5, 1e-12);
}

/* ---- GL ---- */

static AiryStack *
gradient_stack (guint depth, guint h, guint w, double dx, double dz)
{
  AiryStack *s = airy_stack_new (depth, h, w);
  guint z, y, x;

  for (z = 0; z < depth; z++)
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        airy_stack_plane (s, z)[y * w + x] = (float) x + 100.0f * z;
  s->dx = s->dy = dx;
  s->dz = dz;
  return s;
}

typedef struct
{
  GtkWidget       *window;
  AiryStackViewer *viewer;
  AiryStackView   *view;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  if (!have_display)
    return;
  f->window = gtk_window_new ();
  f->viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  f->view = airy_stack_viewer_get_view (f->viewer);
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->viewer));
  gtk_window_set_default_size (GTK_WINDOW (f->window), 900, 700);
  gtk_window_present (GTK_WINDOW (f->window));
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->window)
    gtk_window_destroy (GTK_WINDOW (f->window));
}

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Renders a frame and returns the framebuffer (RGBA, top row first). */
static const guint8 *
read_frame (Fixture *f, int *w, int *h)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (20, timeout_cb, &timed_out);
  const guint8 *px = NULL;

  /* let the window map and lay out first */
  while (!gtk_widget_get_mapped (GTK_WIDGET (f->view)) && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  airy_stack_view_request_readback (f->view);
  while (!timed_out && (px = airy_stack_view_get_readback (f->view, w, h)) == NULL)
    {
      g_assert_null (airy_stack_view_get_gl_error (f->view));
      g_main_context_iteration (NULL, TRUE);
    }
  if (!timed_out)
    g_source_remove (id);
  g_assert_false (timed_out);
  return px;
}

/* Where the XY image lands: zoom 1 puts image pixel (x, y) at widget
 * (ox + x, oy + y). */
static void
image_origin (Fixture *f, int *ox, int *oy)
{
  double ix, iy, zoom = airy_stack_view_get_zoom (f->view);

  g_assert_true (airy_stack_view_widget_to_image (f->view, gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0,
                                                  gtk_widget_get_height (GTK_WIDGET (f->view)) / 2.0, &ix, &iy));
  *ox = (int) floor (gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0 - (ix + 0.5) * zoom + 0.5);
  *oy = (int) floor (gtk_widget_get_height (GTK_WIDGET (f->view)) / 2.0 - (iy + 0.5) * zoom + 0.5);
}

static void
test_gl_colormap (Fixture *f, gconstpointer data)
{
  AiryDisplay d;
  const guint8 *px;
  guint8 lut[256 * 3];
  int w, h, ox, oy, x;
  guint g;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (1, 64, 64, 0.1, 0.0));
  airy_stack_view_set_sections (f->view, FALSE);
  airy_stack_view_set_zoom (f->view, 1.0);
  airy_display_init (&d);

  for (g = 0; g < 4; g++)
    {
      d.colormap = g == 0 ? AIRY_COLORMAP_GRAY : AIRY_COLORMAP_INFERNO;
      d.lo = g == 2 ? 16.0f : 0.0f;
      d.hi = g == 2 ? 48.0f : 63.0f;
      d.gamma = g == 3 ? 2.0f : 1.0f;
      d.scale = AIRY_SCALE_LINEAR;
      airy_stack_viewer_set_display (f->viewer, &d);
      airy_colormap_lut (d.colormap, FALSE, lut);
      px = read_frame (f, &w, &h);
      image_origin (f, &ox, &oy);
      for (x = 0; x < 64; x++)
        {
          const guint8 *p = px + ((gsize) (oy + 20) * w + ox + x) * 4;
          guint k = airy_display_index (&d, (float) x);

          g_assert_cmpint (abs ((int) p[0] - lut[3 * k]), <=, 1);
          g_assert_cmpint (abs ((int) p[1] - lut[3 * k + 1]), <=, 1);
          g_assert_cmpint (abs ((int) p[2] - lut[3 * k + 2]), <=, 1);
        }
      /* the colormap's ends at the contrast limits */
      g_assert_cmpint (px[((gsize) (oy + 20) * w + ox) * 4], ==, lut[0]);
      g_assert_cmpint (px[((gsize) (oy + 20) * w + ox + 63) * 4], ==, lut[255 * 3]);
    }

  /* log scale on data spanning 10⁶ */
  {
    AiryStack *s = airy_stack_new (1, 64, 64);
    guint i;

    for (i = 0; i < 64 * 64; i++)
      s->data[i] = powf (10.0f, -6.0f + 6.0f * (i % 64) / 63.0f);
    s->dx = s->dy = 0.1;
    airy_stack_viewer_set_stack (f->viewer, s);
    d.colormap = AIRY_COLORMAP_GRAY;
    d.gamma = 1.0f;
    d.scale = AIRY_SCALE_LOG;
    d.lo = 1e-6f;
    d.hi = 1.0f;
    airy_stack_viewer_set_display (f->viewer, &d);
    px = read_frame (f, &w, &h);
    image_origin (f, &ox, &oy);
    for (x = 0; x < 64; x++)
      g_assert_cmpint (abs ((int) px[((gsize) (oy + 5) * w + ox + x) * 4]
                            - (int) floor (x / 63.0 * 255 + 0.5)), <=, 1);
  }
}

static void
test_gl_mip (Fixture *f, gconstpointer data)
{
  /* the projection shows the largest value along z at every pixel */
  AiryStack *s = airy_stack_new (3, 16, 16);
  AiryDisplay d;
  const guint8 *px;
  int w, h, ox, oy, x, y;
  guint z;

  if (!have_display)
    {
      airy_stack_free (s);
      g_test_skip ("no display");
      return;
    }
  for (z = 0; z < 3; z++)
    for (y = 0; y < 16; y++)
      for (x = 0; x < 16; x++)
        airy_stack_plane (s, z)[y * 16 + x] = (float) ((x + 5 * z + 3 * y) % 17);
  s->dx = s->dy = 0.1;
  airy_stack_viewer_set_stack (f->viewer, s);
  airy_stack_view_set_sections (f->view, FALSE);
  airy_stack_view_set_zoom (f->view, 1.0);
  airy_stack_view_set_mip (f->view, TRUE);
  airy_display_init (&d);
  d.colormap = AIRY_COLORMAP_GRAY;
  d.lo = 0.0f;
  d.hi = 16.0f;
  airy_stack_viewer_set_display (f->viewer, &d);
  px = read_frame (f, &w, &h);
  image_origin (f, &ox, &oy);
  for (y = 0; y < 16; y++)
    for (x = 0; x < 16; x++)
      {
        float m = 0.0f;
        for (z = 0; z < 3; z++)
          m = MAX (m, airy_stack_plane (s, z)[y * 16 + x]);
        g_assert_cmpint (abs ((int) px[((gsize) (oy + y) * w + ox + x) * 4] - (int) airy_display_index (&d, m)), <=, 1);
      }
}

static void
test_gl_sections (Fixture *f, gconstpointer data)
{
  /* 8 planes 2 µm apart on 0.5 µm pixels: the XZ section is 8·4 = 32 image
   * pixels tall, z downwards; YZ is 32 wide, z to the right */
  AiryDisplay d;
  const guint8 *px;
  int w, h, ox, oy, y, x, xz_rows = 0, yz_cols = 0;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (8, 48, 40, 0.5, 2.0));
  airy_stack_view_set_sections (f->view, TRUE);
  airy_stack_view_set_zoom (f->view, 1.0);
  airy_display_init (&d);
  d.colormap = AIRY_COLORMAP_GRAY;
  d.lo = 0.0f;
  d.hi = 800.0f;
  airy_stack_viewer_set_display (f->viewer, &d);
  airy_stack_view_set_cursor (f->view, 10, 20);
  px = read_frame (f, &w, &h);
  image_origin (f, &ox, &oy);

  /* XZ: below XY after the 6 px gap, column 30 (value 30 + 100 z) */
  for (y = oy + 48 + 6; y < h; y++)
    {
      guint8 v = px[((gsize) y * w + ox + 30) * 4];
      int z = (y - (oy + 48 + 6)) / 4;

      if (z >= 8)
        break;
      g_assert_cmpint (abs ((int) v - (int) airy_display_index (&d, 30.0f + 100.0f * z)), <=, 1);
      xz_rows++;
    }
  g_assert_cmpint (xz_rows, ==, 32);
  /* YZ: right of XY, row 5 (x = cursor 10: value 10 + 100 z) */
  for (x = ox + 40 + 6; x < w; x++)
    {
      guint8 v = px[((gsize) (oy + 5) * w + x) * 4];
      int z = (x - (ox + 40 + 6)) / 4;

      if (z >= 8)
        break;
      g_assert_cmpint (abs ((int) v - (int) airy_display_index (&d, 10.0f + 100.0f * z)), <=, 1);
      yz_cols++;
    }
  g_assert_cmpint (yz_cols, ==, 32);
  /* the background after the section */
  g_assert_cmpint (px[((gsize) (oy + 48 + 6 + 33) * w + ox + 30) * 4], ==, 31);
}

static void
test_gl_cursor_and_readout (Fixture *f, gconstpointer data)
{
  double ix, iy, px_bar, len;
  int ox, oy, w, h;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (5, 64, 64, 0.25, 0.5));
  airy_stack_view_set_sections (f->view, FALSE);
  airy_stack_view_set_zoom (f->view, 4.0);
  read_frame (f, &w, &h);
  /* widget → image → µm at zoom 4 */
  g_assert_true (airy_stack_view_widget_to_image (f->view, gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0 + 2,
                                                  gtk_widget_get_height (GTK_WIDGET (f->view)) / 2.0 + 2, &ix, &iy));
  g_assert_cmpfloat_with_epsilon (ix, 32.0, 1.0);
  image_origin (f, &ox, &oy);
  g_assert_true (airy_stack_view_widget_to_image (f->view, ox + 4 * 40 + 1, oy + 4 * 8 + 1, &ix, &iy));
  g_assert_cmpfloat_with_epsilon (ix, 40.0 - 0.25, 1e-9);
  g_assert_cmpfloat_with_epsilon (iy, 8.0 - 0.25, 1e-9);
  airy_stack_view_set_z (f->view, 3);
  airy_stack_view_set_cursor (f->view, 40, 8);
  /* (40 − 32)·0.25 = 2 µm, (8 − 32)·0.25 = −6 µm, z = 3·0.5 µm, value 40 + 300 */
  g_assert_cmpstr (airy_stack_viewer_get_readout (f->viewer), ==,
                   "x +2.0000 µm  y -6.0000 µm  z +1.5000 µm  value 340");
  /* the scale bar at zoom 4 (16 px/µm): the largest 1-2-5 length within a
   * quarter of the 256 px view: 2 µm = 32 px */
  len = airy_stack_view_get_scale_bar (f->view, &px_bar);
  g_assert_cmpfloat (len, ==, 2.0);
  g_assert_cmpfloat (px_bar, ==, 32.0);
  airy_stack_view_set_zoom (f->view, 1.0);
  len = airy_stack_view_get_scale_bar (f->view, &px_bar);
  g_assert_cmpfloat (len, ==, 2.0);
  g_assert_cmpfloat (px_bar, ==, 8.0);
}

static void
test_gl_line_profile (Fixture *f, gconstpointer data)
{
  /* a Gaussian blob, σ = 4 px of 0.05 µm: the drawn line's FWHM is
   * 2√(2 ln 2)·0.2 µm within 1 %; the axial profile has its own */
  AiryStack *s = airy_stack_new (9, 64, 64);
  double sigma = 4.0, expected = 2.0 * sqrt (2.0 * log (2.0)) * sigma * 0.05;
  guint z, y, x;

  if (!have_display)
    {
      airy_stack_free (s);
      g_test_skip ("no display");
      return;
    }
  for (z = 0; z < 9; z++)
    for (y = 0; y < 64; y++)
      for (x = 0; x < 64; x++)
        airy_stack_plane (s, z)[y * 64 + x] =
          (float) (exp (-((x - 30.0) * (x - 30.0) + (y - 33.0) * (y - 33.0)) / (2 * sigma * sigma))
                   * exp (-pow (z - 4.0, 2) / 8.0));
  s->dx = s->dy = 0.05;
  s->dz = 0.2;
  airy_stack_viewer_set_stack (f->viewer, s);
  airy_stack_view_set_z (f->view, 4);
  airy_stack_view_set_cursor (f->view, 30, 33);
  airy_stack_view_set_line (f->view, 10, 13, 50, 53);
  g_assert_cmpfloat_with_epsilon (airy_plot_get_fwhm (airy_stack_viewer_get_line_plot (f->viewer)) / expected,
                                  1.0, 0.01);
  /* axial: exp(−(z−4)²/8) in planes of 0.2 µm: FWHM 2√(2 ln 2)·2·0.2 µm */
  g_assert_cmpfloat_with_epsilon (airy_plot_get_fwhm (airy_stack_viewer_get_axial_plot (f->viewer))
                                  / (2.0 * sqrt (2.0 * log (2.0)) * 2.0 * 0.2), 1.0, 0.03);
}

static void
test_gl_export (Fixture *f, gconstpointer data)
{
  g_autofree char *png = g_build_filename (tmpdir, "view.png", NULL);
  g_autofree char *png2 = g_build_filename (tmpdir, "view2.png", NULL);
  g_autofree char *tif = g_build_filename (tmpdir, "stack.tif", NULL);
  g_autofree char *raw = g_build_filename (tmpdir, "raw.png", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GdkTexture) texture2 = NULL;
  g_autofree guint8 *rgba = NULL;
  g_autoptr(AiryStack) back = NULL;
  g_autoptr(AiryStack) raw_back = NULL;
  AiryDisplay d;
  const guint8 *px;
  int w, h, ox, oy, x, y, differ = 0;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (3, 64, 64, 0.2, 0.4));
  airy_stack_view_set_sections (f->view, FALSE);
  airy_stack_view_set_zoom (f->view, 1.0);
  airy_display_init (&d);
  d.colormap = AIRY_COLORMAP_VIRIDIS;
  d.lo = 3.0f;
  d.hi = 150.0f;
  d.gamma = 0.7f;
  airy_stack_viewer_set_display (f->viewer, &d);
  airy_stack_view_set_z (f->view, 1);
  px = read_frame (f, &w, &h);
  image_origin (f, &ox, &oy);

  /* the PNG of the view decodes to the pixels GL drew (the scale bar aside) */
  g_assert_true (airy_stack_viewer_export_view (f->viewer, png, 1, &error));
  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, 64);
  rgba = g_malloc (64 * 64 * 4);
  gdk_texture_download (texture, rgba, 64 * 4);
  for (y = 0; y < 40; y++)      /* above the scale bar */
    for (x = 0; x < 64; x++)
      {
        const guint8 *a = px + ((gsize) (oy + y) * w + ox + x) * 4;
        /* gdk_texture_download gives B, G, R, A in memory on little endian */
        const guint8 *b = rgba + ((gsize) y * 64 + x) * 4;
        if (abs (a[0] - b[2]) > 1 || abs (a[1] - b[1]) > 1 || abs (a[2] - b[0]) > 1)
          differ++;
      }
  g_assert_cmpint (differ, ==, 0);
  g_assert_true (airy_stack_viewer_export_view (f->viewer, png2, 2, &error));
  texture2 = gdk_texture_new_from_filename (png2, &error);
  g_assert_cmpint (gdk_texture_get_width (texture2), ==, 128);

  /* raw slice: 16-bit, values back to 16-bit precision */
  g_assert_true (airy_stack_viewer_export_raw (f->viewer, raw, &error));
  raw_back = airy_png_read (raw, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (raw_back->data[10], 110.0f, 163.0f / 65535 + 1e-4);
  g_assert_cmpfloat_with_epsilon (raw_back->dx, 0.2, 1e-6);

  /* TIFF round trip keeps values and voxel size */
  g_assert_true (airy_stack_viewer_export_tiff (f->viewer, tif, FALSE, &error));
  back = airy_tiff_read (tif, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->depth, ==, 3);
  g_assert_cmpmem (back->data, 3 * 64 * 64 * 4, airy_stack_view_get_stack (f->view)->data, 3 * 64 * 64 * 4);
  g_assert_cmpfloat_with_epsilon (back->dx, 0.2, 1e-6);
  g_assert_cmpfloat_with_epsilon (back->dz, 0.4, 1e-9);
  g_unlink (png);
  g_unlink (png2);
  g_unlink (raw);
  g_unlink (tif);
}

static void
test_gl_bad_files (Fixture *f, gconstpointer data)
{
  g_autofree char *junk = g_build_filename (tmpdir, "junk.tif", NULL);
  g_autofree char *text = g_build_filename (tmpdir, "notes.png", NULL);
  g_autoptr(GError) error = NULL;
  AiryStack *before;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (2, 16, 16, 0.1, 0.1));
  before = airy_stack_view_get_stack (f->view);
  g_assert_true (g_file_set_contents (junk, "II*\0 not really a tiff at all", 30, NULL));
  g_assert_true (g_file_set_contents (text, "\x89PNG\r\n\x1a\n truncated", 19, NULL));
  g_assert_false (airy_stack_viewer_open (f->viewer, junk, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_true (g_str_has_prefix (airy_stack_viewer_get_message (f->viewer), "Could not open: "));
  g_assert_true (airy_stack_view_get_stack (f->view) == before);   /* the last good stack stays */
  g_clear_error (&error);
  g_assert_false (airy_stack_viewer_open (f->viewer, text, &error));
  g_clear_error (&error);
  g_assert_false (airy_stack_viewer_open (f->viewer, "/nonexistent/beads.tif", &error));
  g_assert_nonnull (strstr (airy_stack_viewer_get_message (f->viewer), "/nonexistent/beads.tif"));
  g_clear_error (&error);
  g_unlink (junk);
  g_unlink (text);
}

/* the viewer's reads and writes on worker threads, done */
static void
wait_files (AiryStackViewer *viewer)
{
  while (airy_stack_viewer_get_pending_files (viewer) > 0)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Opens off the UI thread: shown when read, the newer of two opens wins,
 * a file that cannot be read says so and leaves the shown stack. */
static void
test_gl_open_async (Fixture *f, gconstpointer data)
{
  g_autofree char *a = g_build_filename (tmpdir, "async-a.tif", NULL);
  g_autofree char *b = g_build_filename (tmpdir, "async-b.tif", NULL);
  g_autoptr(AiryStack) sa = gradient_stack (3, 16, 16, 0.1, 0.1);
  g_autoptr(AiryStack) sb = gradient_stack (5, 8, 12, 0.2, 0.2);
  g_autoptr(GError) error = NULL;
  AiryStack *shown;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_true (airy_tiff_write (a, sa, &error));
  g_assert_true (airy_tiff_write (b, sb, &error));
  airy_stack_viewer_open_async (f->viewer, a, 0, 0);
  airy_stack_viewer_open_async (f->viewer, b, 0, 0);
  g_assert_cmpuint (airy_stack_viewer_get_pending_files (f->viewer), ==, 2);
  wait_files (f->viewer);
  shown = airy_stack_view_get_stack (f->view);
  g_assert_cmpuint (shown->depth, ==, 5);
  g_assert_cmpuint (shown->width, ==, 12);
  airy_stack_viewer_open_async (f->viewer, "/nonexistent/stack.tif", 0, 0);
  wait_files (f->viewer);
  g_assert_true (airy_stack_view_get_stack (f->view) == shown);
  g_assert_cmpstr (airy_stack_viewer_get_message (f->viewer), ==, "Could not open: /nonexistent/stack.tif: No such file or directory");
  g_unlink (a);
  g_unlink (b);
}

/* 12 float pages of 10 × 8, channel fastest, then z, then time (2 × 3 × 2):
 * page c + 2 (z + 3 t) holds 100 c + 10 z + 1000 t; description on the first */
static void
write_hyper_pages (const char *path, const char *description)
{
  TIFF *tif = TIFFOpen (path, "w");
  float row[10];
  guint k, y, x;

  g_assert_nonnull (tif);
  for (k = 0; k < 12; k++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 10);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 8);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 32);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 8);
      if (k == 0)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, description);
      for (x = 0; x < 10; x++)
        row[x] = (float) (100 * (k % 2) + 10 * ((k / 2) % 3) + 1000 * (k / 6));
      for (y = 0; y < 8; y++)
        g_assert_cmpint (TIFFWriteScanline (tif, row, y, 0), ==, 1);
      TIFFWriteDirectory (tif);
    }
  TIFFClose (tif);
}

/* An ImageJ hyperstack (2 channels × 3 slices × 2 time points, written by
 * tifffile's layout rules: one page per image, channel fastest): the
 * viewer shows channel 1, time point 1 and offers the others; a choice
 * reads the file again. No axis is folded into z. */
static void
test_gl_hyperstack (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (tmpdir, "hyper.tif", NULL);
  g_autoptr(GError) error = NULL;
  AiryStack *shown;
  guint n_c, n_t, c, t, k;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  write_hyper_pages (path, "ImageJ=1.53t\nimages=12\nchannels=2\nslices=3\nframes=2\nhyperstack=true\n");
  g_assert_true (airy_stack_viewer_open (f->viewer, path, &error));
  shown = airy_stack_view_get_stack (f->view);
  airy_stack_viewer_get_hyperstack (f->viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 2);
  g_assert_cmpuint (n_t, ==, 2);
  g_assert_cmpuint (c, ==, 0);
  g_assert_cmpuint (t, ==, 0);
  g_assert_cmpuint (shown->depth, ==, 3);
  g_assert_cmpfloat (airy_stack_plane (shown, 1)[0], ==, 10.0f);
  /* channel 2, time point 2 (read again on a worker thread) */
  airy_stack_viewer_set_hyperstack_plane (f->viewer, 1, 1);
  wait_files (f->viewer);
  shown = airy_stack_view_get_stack (f->view);
  airy_stack_viewer_get_hyperstack (f->viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (c, ==, 1);
  g_assert_cmpuint (t, ==, 1);
  g_assert_cmpuint (shown->depth, ==, 3);
  for (k = 0; k < 3; k++)
    g_assert_cmpfloat (airy_stack_plane (shown, k)[0], ==, 100.0f + 10.0f * k + 1000.0f);
  /* a plain stack has no choosers */
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (2, 16, 16, 0.1, 0.1));
  airy_stack_viewer_get_hyperstack (f->viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 0);
  g_unlink (path);
}

/* An OME-TIFF TZCYX stack (DimensionOrder XYCZT: channel fastest, then z,
 * then time) opens as 3 z planes of channel 1, time point 1, with the
 * choosers for 2 channels and 2 time points: nothing folded into z. */
static void
test_gl_ome_hyperstack (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (tmpdir, "tzcyx.ome.tif", NULL);
  g_autoptr(GError) error = NULL;
  AiryStack *shown;
  guint n_c, n_t, c, t, k;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  write_hyper_pages (path,
                     "<?xml version=\"1.0\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
                     "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYCZT\" Type=\"float\" "
                     "SizeX=\"10\" SizeY=\"8\" SizeZ=\"3\" SizeC=\"2\" SizeT=\"2\" PhysicalSizeX=\"0.1\" "
                     "PhysicalSizeY=\"0.1\" PhysicalSizeZ=\"0.5\"/></Image></OME>");
  g_assert_true (airy_stack_viewer_open (f->viewer, path, &error));
  shown = airy_stack_view_get_stack (f->view);
  airy_stack_viewer_get_hyperstack (f->viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 2);
  g_assert_cmpuint (n_t, ==, 2);
  g_assert_cmpuint (shown->depth, ==, 3);
  g_assert_cmpfloat_with_epsilon (shown->dz, 0.5, 1e-9);
  for (k = 0; k < 3; k++)
    g_assert_cmpfloat (airy_stack_plane (shown, k)[0], ==, 10.0f * k);
  g_assert_false (airy_stack_viewer_get_uncalibrated (f->viewer));
  airy_stack_viewer_set_hyperstack_plane (f->viewer, 1, 1);
  wait_files (f->viewer);
  shown = airy_stack_view_get_stack (f->view);
  g_assert_cmpuint (shown->depth, ==, 3);
  for (k = 0; k < 3; k++)
    g_assert_cmpfloat (airy_stack_plane (shown, k)[0], ==, 100.0f + 10.0f * k + 1000.0f);
  g_unlink (path);
}

/* ---- the slot path ---- */

/* A result "on a device": no host stack, values x + 100 z served only
 * through the resident's slots, which count what they are asked. */
typedef struct
{
  guint to_texture, read_slice, read_box, stats;
  gsize largest_box;
  gboolean host_path;
} FakeDevice;

static FakeDevice fake;

static float
fake_value (guint z, guint y, guint x)
{
  return (float) x + 100.0f * z;
}

static void
fake_slice (AiryResident *r, const AirySlice *slice, float *out)
{
  const AiryStack *s = r->stack;
  guint z, y, x;

  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
      for (y = 0; y < s->height; y++)
        for (x = 0; x < s->width; x++)
          out[y * s->width + x] = fake_value (slice->index, y, x);
      break;
    case AIRY_SLICE_MIP:
      for (y = 0; y < s->height; y++)
        for (x = 0; x < s->width; x++)
          out[y * s->width + x] = fake_value (s->depth - 1, y, x);
      break;
    case AIRY_SLICE_XZ:
      for (z = 0; z < s->depth; z++)
        for (x = 0; x < s->width; x++)
          out[z * s->width + x] = fake_value (z, slice->index, x);
      break;
    case AIRY_SLICE_YZ:
      for (z = 0; z < s->depth; z++)
        for (y = 0; y < s->height; y++)
          out[z * s->height + y] = fake_value (z, y, slice->index);
      break;
    default:
      for (z = 0; z < s->depth; z++)
        for (y = 0; y < s->height; y++)
          for (x = 0; x < s->width; x++)
            out[((gsize) z * s->height + y) * s->width + x] = fake_value (z, y, x);
      break;
    }
}

static gboolean
fake_read_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  fake.read_slice++;
  fake_slice (r, slice, out);
  return TRUE;
}

static gboolean
fake_read_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  guint z, y, x;

  fake.read_box++;
  fake.largest_box = MAX (fake.largest_box, (gsize) box->depth * box->height * box->width);
  for (z = 0; z < box->depth; z++)
    for (y = 0; y < box->height; y++)
      for (x = 0; x < box->width; x++)
        out[((gsize) z * box->height + y) * box->width + x] = fake_value (box->z + z, box->y + y, box->x + x);
  return TRUE;
}

static gboolean
fake_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  const AiryStack *s = r->stack;
  gsize n = slice->kind == AIRY_SLICE_STACK ? (gsize) s->depth * s->height * s->width
                                            : (gsize) MAX (s->depth, s->height) * MAX (s->height, s->width);
  g_autofree float *v = g_new (float, n);
  guint w, h;

  fake.stats++;
  fake_slice (r, slice, v);
  airy_slice_size (s, slice, &w, &h);
  airy_values_stats (v, slice->kind == AIRY_SLICE_STACK ? n : (gsize) w * h, stats);
  return TRUE;
}

static gboolean
fake_to_texture (AiryResident *r, const AirySlice *slice, AiryTexture *texture, GError **error)
{
  guint w, h;
  g_autofree float *v = NULL;

  fake.to_texture++;
  airy_slice_size (r->stack, slice, &w, &h);
  v = g_new (float, (gsize) w * h);
  fake_slice (r, slice, v);
  /* the pixels have to get there somehow; the path is what a GPU reports */
  texture->upload (v, w, h, texture->user_data);
  texture->path = fake.host_path ? AIRY_TEXTURE_HOST : AIRY_TEXTURE_DEVICE;
  texture->device = 0;
  texture->note = fake.host_path ? "the GL context is not on a CUDA device" : NULL;
  return TRUE;
}

static const AiryResidentOps fake_ops = {
  .read_slice = fake_read_slice, .read_box = fake_read_box, .stats = fake_stats, .to_texture = fake_to_texture,
};

static const AiryBackendOps fake_backend_ops = { .name = "test-device" };

static AiryResident *
fake_resident (guint depth, guint h, guint w)
{
  AiryStack *geometry = g_new0 (AiryStack, 1);

  geometry->depth = depth;
  geometry->height = h;
  geometry->width = w;
  geometry->dx = geometry->dy = 0.5;
  geometry->dz = 2.0;
  geometry->bits = 32;
  return airy_resident_new (airy_backend_register (&fake_backend_ops, NULL), &fake_ops, geometry, NULL);
}

static void
test_gl_slot_path (Fixture *f, gconstpointer data)
{
  /* the viewer on a result whose values are not in host memory: slices,
   * sections, histogram, readout and profiles all come through the slots,
   * the z slider moves one plane, and the view says which path it uses */
  AiryDisplay d;
  const guint8 *px;
  guint to_texture, read_slice;
  int w, h, ox, oy, x, y;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  memset (&fake, 0, sizeof fake);
  airy_stack_viewer_set_resident (f->viewer, fake_resident (8, 48, 40));
  g_assert_null (airy_stack_view_get_stack (f->view)->data);
  /* the first look reads the projection once, to frame the PSF */
  g_assert_cmpuint (fake.read_slice, ==, 1);
  fake.read_slice = 0;
  airy_stack_view_set_sections (f->view, TRUE);
  airy_stack_view_set_zoom (f->view, 1.0);
  airy_display_init (&d);
  d.colormap = AIRY_COLORMAP_GRAY;
  d.lo = 0.0f;
  d.hi = 800.0f;
  airy_stack_viewer_set_display (f->viewer, &d);
  airy_stack_view_set_cursor (f->view, 10, 20);
  airy_stack_view_set_z (f->view, 3);
  px = read_frame (f, &w, &h);
  image_origin (f, &ox, &oy);
  g_assert_null (airy_stack_view_get_gl_error (f->view));
  g_assert_cmpuint (fake.to_texture, >=, 3);
  g_assert_cmpstr (airy_stack_view_get_slice_path (f->view), ==, "slices: copied on GPU 0 (CUDA–GL interop)");
  /* XY shows plane 3, XZ below it the row y = 20, YZ beside it x = 10 */
  for (x = 0; x < 40; x++)
    g_assert_cmpint (abs ((int) px[((gsize) (oy + 5) * w + ox + x) * 4] - (int) airy_display_index (&d, x + 300.0f)), <=, 1);
  for (y = 0; y < 32; y++)
    g_assert_cmpint (abs ((int) px[((gsize) (oy + 48 + 6 + y) * w + ox + 30) * 4]
                          - (int) airy_display_index (&d, 30.0f + 100.0f * (y / 4))), <=, 1);
  for (x = 0; x < 32; x++)
    g_assert_cmpint (abs ((int) px[((gsize) (oy + 5) * w + ox + 40 + 6 + x) * 4]
                          - (int) airy_display_index (&d, 10.0f + 100.0f * (x / 4))), <=, 1);
  /* the readout and the profiles read values, never a whole plane */
  g_assert_cmpstr (airy_stack_viewer_get_readout (f->viewer), ==,
                   "x -5.0000 µm  y -2.0000 µm  z +6.0000 µm  value 310");
  g_assert_cmpuint (fake.largest_box, <=, 40);
  g_assert_cmpuint (fake.read_slice, ==, 0);
  g_assert_cmpuint (fake.stats, >=, 2);    /* the limits (stack), the histogram (slice) */

  /* the z slider: one plane to GL, nothing else big */
  to_texture = fake.to_texture;
  airy_stack_view_set_z (f->view, 6);
  read_frame (f, &w, &h);
  g_assert_cmpuint (fake.to_texture, ==, to_texture + 1);
  g_assert_cmpuint (fake.largest_box, <=, 40);
  g_assert_cmpuint (fake.read_slice, ==, 0);

  /* a drawn line needs the plane itself: fetched once, then reused */
  read_slice = fake.read_slice;
  airy_stack_view_set_line (f->view, 2, 2, 30, 2);
  airy_stack_view_set_cursor (f->view, 12, 20);
  g_assert_cmpuint (fake.read_slice, ==, read_slice + 1);

  /* a fallback to host memory is said too */
  fake.host_path = TRUE;
  airy_stack_view_set_z (f->view, 1);
  read_frame (f, &w, &h);
  g_assert_true (g_str_has_prefix (airy_stack_view_get_slice_path (f->view), "slices: uploaded from host memory (GL renderer "));
  g_assert_true (g_str_has_suffix (airy_stack_view_get_slice_path (f->view), " is not an NVIDIA GPU)"));
}

static void
test_gl_cpu_slot (Fixture *f, gconstpointer data)
{
  /* a stack in host memory goes through the CPU backend's slot */
  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (4, 32, 32, 0.1, 0.2));
  {
    int w, h;
    read_frame (f, &w, &h);
  }
  g_assert_cmpstr (airy_resident_get_backend_name (airy_stack_view_get_resident (f->view)), ==, "cpu");
  g_assert_cmpstr (airy_stack_view_get_slice_path (f->view), ==, "slices: uploaded from host memory (a CPU result)");
}

/* ---- zoom and the orthogonal views ---- */

/* The view's controller of a type (scroll, motion, key). */
static GtkEventController *
view_controller (Fixture *f, GType type)
{
  g_autoptr(GListModel) list = gtk_widget_observe_controllers (GTK_WIDGET (f->view));
  guint i;

  for (i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr(GObject) c = g_list_model_get_item (list, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return GTK_EVENT_CONTROLLER (c);
    }
  g_assert_not_reached ();
}

static void
scroll_notch (Fixture *f, double dy)
{
  gboolean handled = FALSE;

  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_SCROLL), "scroll", 0.0, dy, &handled);
  g_assert_true (handled);
}

static void
press_key (Fixture *f, guint keyval)
{
  gboolean handled = FALSE;

  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_KEY), "key-pressed", keyval, 0, 0, &handled);
  g_assert_true (handled);
}

/* The whole widget as GTK draws it (GL frame and overlays), as cairo
 * ARGB32: B, G, R, A in memory. */
static guint8 *
snapshot_view (Fixture *f, int *w, int *h)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  GdkTexture *texture;
  guint8 *out;

  read_frame (f, w, h);
  *w = gtk_widget_get_width (GTK_WIDGET (f->view));
  *h = gtk_widget_get_height (GTK_WIDGET (f->view));
  /* what the view draws itself: the GL frame's texture and the overlays */
  GTK_WIDGET_GET_CLASS (f->view)->snapshot (GTK_WIDGET (f->view), snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (GTK_WIDGET (f->view))),
                                         node, &GRAPHENE_RECT_INIT (0, 0, *w, *h));
  out = g_malloc ((gsize) *w * *h * 4);
  gdk_texture_download (texture, out, (gsize) *w * 4);
  g_object_unref (texture);
  gsk_render_node_unref (node);
  return out;
}

static void
test_gl_zoom_pointer (Fixture *f, gconstpointer data)
{
  /* five notches of the wheel keep the image point under the pointer
   * within one widget pixel; the sections follow XY's x and y range and
   * stay on the canvas, the scale bar inside the visible XY */
  graphene_rect_t xy, xz, yz;
  double ix0, iy0, ix, iy, zoom0, px, py, bar, vx, vy, vw, vh;
  int w, h, i, W, H;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (16, 200, 240, 0.1, 0.4));
  airy_stack_view_fit (f->view);
  read_frame (f, &w, &h);
  W = gtk_widget_get_width (GTK_WIDGET (f->view));
  H = gtk_widget_get_height (GTK_WIDGET (f->view));
  zoom0 = airy_stack_view_get_zoom (f->view);
  airy_stack_view_get_section_rects (f->view, &xy, &xz, &yz);
  /* a point off the middle of XY, where the pointer comes */
  px = xy.origin.x + 0.7 * xy.size.width;
  py = xy.origin.y + 0.3 * xy.size.height;
  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_MOTION), "enter", px, py);
  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_MOTION), "motion", px, py);
  g_assert_true (airy_stack_view_widget_to_image (f->view, px, py, &ix0, &iy0));
  for (i = 0; i < 5; i++)
    {
      double zoom;

      scroll_notch (f, -1.0);
      zoom = airy_stack_view_get_zoom (f->view);
      g_assert_true (airy_stack_view_widget_to_image (f->view, px, py, &ix, &iy));
      g_assert_cmpfloat (fabs (ix - ix0) * zoom, <=, 1.0);
      g_assert_cmpfloat (fabs (iy - iy0) * zoom, <=, 1.0);
    }
  g_assert_cmpfloat_with_epsilon (airy_stack_view_get_zoom (f->view) / zoom0, pow (1.25, 5), 1e-9);
  read_frame (f, &w, &h);
  /* zoomed in: XY shows part of the image, the sections the same part */
  airy_stack_view_get_visible (f->view, &vx, &vy, &vw, &vh);
  g_assert_cmpfloat (vw, <, 240.0 * 0.5);
  airy_stack_view_get_section_rects (f->view, &xy, &xz, &yz);
  g_assert_cmpfloat (xz.size.height, >, 20.0);
  g_assert_cmpfloat (yz.size.width, >, 20.0);
  g_assert_cmpfloat (xz.origin.x, ==, xy.origin.x);
  g_assert_cmpfloat (xz.size.width, ==, xy.size.width);
  g_assert_cmpfloat (yz.origin.y, ==, xy.origin.y);
  g_assert_cmpfloat (yz.size.height, ==, xy.size.height);
  g_assert_cmpfloat (xz.origin.y + xz.size.height, <=, H);
  g_assert_cmpfloat (yz.origin.x + yz.size.width, <=, W);
  g_assert_cmpfloat (xy.origin.x, >=, 0.0);
  g_assert_cmpfloat (xy.origin.y, >=, 0.0);
  /* the XZ section's pixels show XY's columns: gradient x + 100 z */
  {
    AiryDisplay d = *airy_stack_view_get_display (f->view);
    const guint8 *fb;
    double zoom = airy_stack_view_get_zoom (f->view), sx, sy;
    guint col = (guint) floor (vx + vw / 2);
    guint plane = 5;

    d.colormap = AIRY_COLORMAP_GRAY;
    d.lo = 0.0f;
    d.hi = 1800.0f;
    d.gamma = 1.0f;
    d.scale = AIRY_SCALE_LINEAR;
    airy_stack_viewer_set_display (f->viewer, &d);
    fb = read_frame (f, &w, &h);
    sx = xy.origin.x + (col + 0.5 - vx) * zoom;
    sy = xz.origin.y + (plane + 0.5) * xz.size.height / 16.0;
    g_assert_cmpint (abs ((int) fb[((gsize) sy * w + (gsize) sx) * 4]
                          - (int) airy_display_index (&d, col + 100.0f * plane)), <=, 1);
  }
  /* the row profile covers what XY shows, not the whole row */
  {
    AiryPlot *plot = airy_stack_viewer_get_line_plot (f->viewer);

    g_assert_cmpuint (airy_plot_get_n_samples (plot), <=, (guint) ceil (vw) + 2);
    g_assert_cmpuint (airy_plot_get_n_samples (plot), >=, (guint) floor (vw));
  }
  /* the scale bar fits a quarter of what XY shows */
  bar = airy_stack_view_get_scale_bar (f->view, &px);
  g_assert_cmpfloat (bar, >, 0.0);
  g_assert_cmpfloat (px, <=, xy.size.width / 4.0);
}

static void
test_gl_zoom_keys (Fixture *f, gconstpointer data)
{
  /* deep sections put the widget's middle beside XY: `+` zooms about the
   * middle of what XY shows, so that XY is never empty; the canvas takes
   * the keyboard from a field when the pointer comes over it */
  graphene_rect_t xy, xz, yz;
  GtkWidget *gamma;
  const guint8 *fb;
  double zoom0;
  int w, h, i;
  AiryStack *s = airy_stack_new (32, 8, 256);
  AiryDisplay d;

  if (!have_display)
    {
      airy_stack_free (s);
      g_test_skip ("no display");
      return;
    }
  /* a wide, low image with deep sections: the widget's middle is in XZ */
  for (i = 0; i < 32 * 8 * 256; i++)
    s->data[i] = 1.0f;
  s->dx = s->dy = 0.1;
  s->dz = 0.4;
  airy_stack_viewer_set_stack (f->viewer, s);
  airy_display_init (&d);
  d.colormap = AIRY_COLORMAP_GRAY;
  d.lo = 0.0f;
  d.hi = 1.0f;
  airy_stack_viewer_set_display (f->viewer, &d);
  airy_stack_view_fit (f->view);
  read_frame (f, &w, &h);
  zoom0 = airy_stack_view_get_zoom (f->view);
  airy_stack_view_get_section_rects (f->view, &xy, &xz, &yz);
  g_assert_false (graphene_rect_contains_point (&xy, &GRAPHENE_POINT_INIT (gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0,
                                                                           gtk_widget_get_height (GTK_WIDGET (f->view)) / 2.0)));

  gamma = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_SPIN_BUTTON, "Gamma");
  gtk_widget_grab_focus (gamma);
  g_assert_false (gtk_widget_has_focus (GTK_WIDGET (f->view)));
  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_MOTION), "enter", 5.0, 5.0);
  g_assert_true (gtk_widget_has_focus (GTK_WIDGET (f->view)));
  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_MOTION), "leave");

  for (i = 0; i < 12; i++)
    press_key (f, GDK_KEY_plus);
  g_assert_cmpfloat_with_epsilon (airy_stack_view_get_zoom (f->view) / zoom0, pow (1.25, 12), 1e-9);
  fb = read_frame (f, &w, &h);
  airy_stack_view_get_section_rects (f->view, &xy, &xz, &yz);
  g_assert_cmpfloat (xy.size.width, >, 32.0);
  g_assert_cmpfloat (xy.size.height, >, 32.0);
  /* white image in the middle of XY, not the background */
  g_assert_cmpint (fb[((gsize) (xy.origin.y + xy.size.height / 2) * w + (gsize) (xy.origin.x + xy.size.width / 2)) * 4],
                   ==, 255);
  /* the cursor lines end at the edge of their views */
  {
    g_autofree guint8 *shot = NULL;
    double vx, vy, vw, vh, zoom = airy_stack_view_get_zoom (f->view);
    guint cx;
    int sx;

    airy_stack_view_get_visible (f->view, &vx, &vy, &vw, &vh);
    cx = (guint) (vx + vw / 2);
    airy_stack_view_set_cursor (f->view, cx, (guint) (vy + vh / 2));
    shot = snapshot_view (f, &w, &h);
    sx = (int) floor (xy.origin.x + (cx + 0.5 - vx) * zoom + 0.5);   /* the 1 px line's pixel */
    /* inside XY: the tinted line over white (blue stays, red drops) */
    {
      const guint8 *p = shot + ((gsize) (xy.origin.y + 3) * w + sx) * 4;
      g_assert_cmpint (p[2], <, 200);
      g_assert_cmpint (p[0], >, 200);
    }
    /* in the gap under XY: nothing but the background */
    {
      const guint8 *p = shot + ((gsize) (xy.origin.y + xy.size.height + 3) * w + sx) * 4;
      g_assert_cmpint (abs ((int) p[0] - 33), <=, 3);
      g_assert_cmpint (abs ((int) p[2] - 31), <=, 3);
    }
  }  /* panning far away keeps some image in view */
  for (i = 0; i < 100; i++)
    press_key (f, GDK_KEY_Left);
  airy_stack_view_get_section_rects (f->view, &xy, &xz, &yz);
  g_assert_cmpfloat (xy.size.width, >=, 32.0);
}

static void
test_gl_fit_psf (Fixture *f, gconstpointer data)
{
  /* a small spot off the middle of a wide black field: the first look
   * frames where it exceeds 1e-3 of its peak, with a margin; Fit shows
   * the whole image, Fit PSF (button) the spot again */
  AiryStack *s = airy_stack_new (9, 256, 256);
  double sigma = 2.0, rx, ry, rw, rh, vx, vy, vw, vh, zoom_psf, r3;
  GtkWidget *button;
  guint z, y, x;
  int w, h;

  if (!have_display)
    {
      airy_stack_free (s);
      g_test_skip ("no display");
      return;
    }
  for (z = 0; z < 9; z++)
    for (y = 0; y < 256; y++)
      for (x = 0; x < 256; x++)
        airy_stack_plane (s, z)[y * 256 + x] =
          (float) exp (-((x - 90.0) * (x - 90.0) + (y - 150.0) * (y - 150.0)) / (2 * sigma * sigma)
                       - pow (z - 4.0, 2) / 4.0);
  s->dx = s->dy = 0.1;
  s->dz = 0.2;
  airy_stack_viewer_set_stack (f->viewer, s);
  read_frame (f, &w, &h);
  g_assert_true (airy_stack_view_get_fit_psf (f->view));
  /* exp (−r²/2σ²) = 1e-3 at r = σ√(2 ln 1000) = 3.72σ */
  r3 = sigma * sqrt (2 * log (1000.0));
  g_assert_true (airy_stack_view_get_psf_region (f->view, &rx, &ry, &rw, &rh));
  g_assert_cmpfloat (rx, <=, 90 - r3);
  g_assert_cmpfloat (rx + rw, >=, 90 + r3);
  g_assert_cmpfloat (ry, <=, 150 - r3);
  g_assert_cmpfloat (rw, <, 40.0);
  airy_stack_view_get_visible (f->view, &vx, &vy, &vw, &vh);
  g_assert_cmpfloat (vx, <=, rx);
  g_assert_cmpfloat (vx + vw, >=, rx + rw);
  g_assert_cmpfloat (vy, <=, ry);
  g_assert_cmpfloat (vy + vh, >=, ry + rh);
  g_assert_cmpfloat (vw, <, 128.0);
  zoom_psf = airy_stack_view_get_zoom (f->view);
  button = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_BUTTON, "Fit");
  g_signal_emit_by_name (button, "clicked");
  airy_stack_view_get_visible (f->view, &vx, &vy, &vw, &vh);
  g_assert_cmpfloat_with_epsilon (vw, 256.0, 1e-9);
  g_assert_false (airy_stack_view_get_fit_psf (f->view));
  g_assert_cmpfloat (airy_stack_view_get_zoom (f->view), <, zoom_psf / 3);
  button = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_BUTTON, "Fit PSF");
  g_assert_nonnull (button);
  g_signal_emit_by_name (button, "clicked");
  g_assert_cmpfloat (airy_stack_view_get_zoom (f->view), ==, zoom_psf);
  g_assert_true (airy_stack_view_get_fit_psf (f->view));
}

static void
assert_inside (GtkWidget *widget, GtkWidget *root, double width)
{
  GtkWidget *child;
  graphene_rect_t b;

  if (!gtk_widget_get_visible (widget))
    return;
  g_assert_true (gtk_widget_compute_bounds (widget, root, &b));
  if (b.origin.x + b.size.width > width + 0.5 || b.origin.x < -0.5)
    g_error ("%s %s at %g…%g, outside 0…%g", G_OBJECT_TYPE_NAME (widget),
             GTK_IS_BUTTON (widget) ? gtk_button_get_label (GTK_BUTTON (widget)) : "",
             b.origin.x, b.origin.x + b.size.width, width);
  for (child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    assert_inside (child, root, width);
}

static void
test_gl_fits_1280 (Fixture *f, gconstpointer data)
{
  /* in the bench window at 1280×800 the viewer gets about 880×700: every
   * control of its toolbar in English and German is inside it (the last
   * ones are Max and 1:1), and the profiles' titles and tick labels fit */
  static const char *langs[] = { "C", "de" };
  guint l;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  for (l = 0; l < G_N_ELEMENTS (langs); l++)
    {
      GtkWidget *window = gtk_window_new ();
      AiryStackViewer *viewer;
      AiryStack *s = airy_stack_new (9, 128, 128);
      GtkWidget *one, *max, *fit;
      double room, gap;
      gboolean timed_out = FALSE;
      guint id, k, y, x;
      AiryPlot *plots[2];

      test_use_language (langs[l]);
      if (l == 1)
        g_assert_cmpstr (_("Fit"), ==, "Einpassen");
      viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
      for (k = 0; k < 9; k++)
        for (y = 0; y < 128; y++)
          for (x = 0; x < 128; x++)
            airy_stack_plane (s, k)[y * 128 + x] = (float) (1234.5 * exp (-((x - 64.0) * (x - 64.0) + (y - 64.0) * (y - 64.0)) / 18.0
                                                                           - pow (k - 4.0, 2) / 6.0));
      s->dx = s->dy = 0.0625;
      s->dz = 0.3;
      airy_stack_viewer_set_stack (viewer, s);
      gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (viewer));
      gtk_window_set_default_size (GTK_WINDOW (window), 880, 700);
      gtk_window_present (GTK_WINDOW (window));
      plots[0] = airy_stack_viewer_get_line_plot (viewer);
      plots[1] = airy_stack_viewer_get_axial_plot (viewer);
      id = g_timeout_add_seconds (20, timeout_cb, &timed_out);
      while (!timed_out && (airy_plot_get_label_fit (plots[0], &room, &gap) == 0
                            || airy_plot_get_label_fit (plots[1], &room, &gap) == 0))
        g_main_context_iteration (NULL, TRUE);
      g_assert_false (timed_out);
      g_source_remove (id);
      g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (viewer)), <=, 880);
      assert_inside (gtk_widget_get_first_child (GTK_WIDGET (viewer)), GTK_WIDGET (viewer),
                     gtk_widget_get_width (GTK_WIDGET (viewer)));
      one = test_find_widget (GTK_WIDGET (viewer), GTK_TYPE_BUTTON, "1:1");
      fit = test_find_widget (GTK_WIDGET (viewer), GTK_TYPE_BUTTON, l == 1 ? "PSF einpassen" : "Fit PSF");
      max = test_find_widget (GTK_WIDGET (viewer), GTK_TYPE_SPIN_BUTTON, l == 1 ? "Max." : "Max");
      g_assert_true (gtk_widget_get_mapped (one));
      g_assert_true (gtk_widget_get_mapped (fit));
      g_assert_true (gtk_widget_get_mapped (max));
      for (k = 0; k < 2; k++)
        {
          airy_plot_get_label_fit (plots[k], &room, &gap);
          g_assert_cmpfloat (airy_plot_get_fwhm (plots[k]), >, 0.0);
          g_assert_cmpfloat (room, >=, 0.0);
          g_assert_cmpfloat (gap, >=, 2.0);
        }
      gtk_window_destroy (GTK_WINDOW (window));
    }
  test_use_language ("C");
}

/* ---- foreign stacks ---- */

static GtkWidget *
find_dialog (const char *title)
{
  GListModel *tops = gtk_window_get_toplevels ();   /* transfer none */
  guint i;

  for (i = 0; i < g_list_model_get_n_items (tops); i++)
    {
      g_autoptr(GtkWindow) w = g_list_model_get_item (tops, i);
      if (GTK_IS_DIALOG (w) && g_strcmp0 (gtk_window_get_title (w), title) == 0)
        return GTK_WIDGET (w);
    }
  return NULL;
}

static GtkWidget *
find_check (GtkWidget *root, const char *label)
{
  GtkWidget *child, *found;

  if (GTK_IS_CHECK_BUTTON (root) && g_strcmp0 (gtk_check_button_get_label (GTK_CHECK_BUTTON (root)), label) == 0)
    return root;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = find_check (child, label)) != NULL)
      return found;
  return NULL;
}

static void
test_gl_foreign (Fixture *f, gconstpointer data)
{
  /* an RGB PNG without pHYs: three channels (R, G, B), not one gray; in
   * pixels, said so; Properties… sets the voxel size, which stays for the
   * file's other channels */
  g_autofree char *path = g_build_filename (tmpdir, "rgb.png", NULL);
  guint8 rgb[10 * 12 * 3];
  g_autoptr(GError) error = NULL;
  guint n_c, n_t, c, t, y, x;
  AiryStack *shown, *gray;
  GtkWidget *dialog, *button;
  GtkSpinButton *spins[3];

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  for (y = 0; y < 10; y++)
    for (x = 0; x < 12; x++)
      {
        rgb[(y * 12 + x) * 3] = (guint8) (10 * x);
        rgb[(y * 12 + x) * 3 + 1] = (guint8) (20 * y);
        rgb[(y * 12 + x) * 3 + 2] = 200;
      }
  g_assert_true (airy_png_write_rgb (path, rgb, 10, 12, 0.0, &error));
  g_assert_true (airy_stack_viewer_open (f->viewer, path, &error));
  airy_stack_viewer_get_hyperstack (f->viewer, &n_c, &n_t, &c, &t);
  g_assert_cmpuint (n_c, ==, 3);
  g_assert_cmpuint (c, ==, 0);
  shown = airy_stack_view_get_stack (f->view);
  g_assert_cmpuint (shown->depth, ==, 1);
  g_assert_cmpfloat (shown->data[3 * 12 + 7], ==, 70.0f);
  /* the engine's own reads keep luminance (a sample image) */
  gray = airy_png_read (path, &error);
  g_assert_nonnull (gray);
  g_assert_cmpuint (gray->n_channels, <=, 1);
  g_assert_cmpfloat (fabs (gray->data[3 * 12 + 7] - (0.2126 * 70 + 0.7152 * 60 + 0.0722 * 200)), <, 1.0);
  airy_stack_free (gray);
  /* uncalibrated: pixels, and the viewer says so */
  g_assert_true (airy_stack_viewer_get_uncalibrated (f->viewer));
  button = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_BUTTON, "uncalibrated (pixels)");
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_get_visible (button));
  airy_stack_view_set_cursor (f->view, 7, 3);
  g_assert_cmpstr (airy_stack_viewer_get_readout (f->viewer), ==, "x 7 px  y 3 px  z 0  value 70");
  /* the profile's axis in the readout's pixels */
  {
    g_autofree char *csv = NULL;
    g_autofree char *csv_path = g_build_filename (tmpdir, "uncal.csv", NULL);

    g_assert_true (airy_stack_viewer_export_profile (f->viewer, csv_path, FALSE, &error));
    g_assert_true (g_file_get_contents (csv_path, &csv, NULL, &error));
    g_assert_nonnull (strstr (csv, "\n# plane: 1 of 1 (1-based); cursor x 7 px, y 3 px\n"));
    g_assert_nonnull (strstr (csv, "\n# units: x in pixels; "));
    g_assert_nonnull (strstr (csv, "\nx_px,value\n0,0\n1,10\n"));
    g_unlink (csv_path);
  }
  /* channel G */
  airy_stack_viewer_set_hyperstack_plane (f->viewer, 1, 0);
  wait_files (f->viewer);
  g_assert_cmpfloat (airy_stack_view_get_stack (f->view)->data[3 * 12 + 7], ==, 60.0f);

  /* composite: R, G and B over each other, each between 0 and its maximum */
  {
    GtkWidget *composite = find_check (GTK_WIDGET (f->viewer), "Composite");
    const guint8 *fb;
    double zoom;
    int w, h, ox, oy;

    g_assert_nonnull (composite);
    g_assert_true (gtk_widget_get_visible (composite));
    gtk_check_button_set_active (GTK_CHECK_BUTTON (composite), TRUE);
    wait_files (f->viewer);
    g_assert_cmpuint (airy_stack_view_get_composite (f->view), ==, 3);
    fb = read_frame (f, &w, &h);
    image_origin (f, &ox, &oy);
    zoom = airy_stack_view_get_zoom (f->view);
    for (y = 0; y < 10; y += 3)
      for (x = 0; x < 12; x += 5)
        {
          const guint8 *p = fb + ((gsize) (oy + (y + 0.5) * zoom) * w + (gsize) (ox + (x + 0.5) * zoom)) * 4;

          g_assert_cmpint (abs (p[0] - (int) floor (255.0 * 10 * x / 110 + 0.5)), <=, 1);
          g_assert_cmpint (abs (p[1] - (int) floor (255.0 * 20 * y / 180 + 0.5)), <=, 1);
          g_assert_cmpint (p[2], ==, 255);
        }
    gtk_check_button_set_active (GTK_CHECK_BUTTON (composite), FALSE);
    wait_files (f->viewer);
    g_assert_cmpuint (airy_stack_view_get_composite (f->view), ==, 0);
  }

  /* Properties…: 65 nm pixels, planes 0.2 µm apart */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->viewer), "viewer.properties", NULL));
  dialog = find_dialog ("Properties");
  g_assert_nonnull (dialog);
  spins[0] = GTK_SPIN_BUTTON (test_find_widget (dialog, GTK_TYPE_SPIN_BUTTON, "Pixel width (µm)"));
  spins[1] = GTK_SPIN_BUTTON (test_find_widget (dialog, GTK_TYPE_SPIN_BUTTON, "Pixel height (µm)"));
  spins[2] = GTK_SPIN_BUTTON (test_find_widget (dialog, GTK_TYPE_SPIN_BUTTON, "Voxel depth (µm)"));
  g_assert_cmpfloat (gtk_spin_button_get_value (spins[0]), ==, 1.0);
  gtk_spin_button_set_value (spins[0], 0.065);
  gtk_spin_button_set_value (spins[1], 0.065);
  gtk_spin_button_set_value (spins[2], 0.2);
  gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_OK);
  shown = airy_stack_view_get_stack (f->view);
  g_assert_cmpfloat (shown->dx, ==, 0.065);
  g_assert_cmpfloat (shown->dz, ==, 0.2);
  g_assert_false (airy_stack_viewer_get_uncalibrated (f->viewer));
  g_assert_false (gtk_widget_get_visible (button));
  airy_stack_view_set_cursor (f->view, 8, 3);
  /* (8 − 6)·0.065 µm */
  g_assert_cmpstr (airy_stack_viewer_get_readout (f->viewer), ==, "x +0.1300 µm  y -0.1300 µm  z +0.0000 µm  value 60");
  /* another channel of the same file keeps it */
  airy_stack_viewer_set_hyperstack_plane (f->viewer, 2, 0);
  wait_files (f->viewer);
  shown = airy_stack_view_get_stack (f->view);
  g_assert_cmpfloat (shown->data[0], ==, 200.0f);
  g_assert_cmpfloat (shown->dx, ==, 0.065);
  g_assert_false (airy_stack_viewer_get_uncalibrated (f->viewer));
  /* out of range is an error that names the value */
  g_assert_false (airy_stack_viewer_set_voxel_size (f->viewer, -1.0, 0.1, 0.1, &error));
  g_assert_cmpstr (error->message, ==, "pixel width: must be in (0, 1e6] µm, got -1");
  g_unlink (path);
}

/* ---- comparing two PSFs ---- */

static AiryStack *
blob_stack (double sigma, float peak, double dx)
{
  AiryStack *s = airy_stack_new (9, 64, 64);
  guint z, y, x;

  for (z = 0; z < 9; z++)
    for (y = 0; y < 64; y++)
      for (x = 0; x < 64; x++)
        airy_stack_plane (s, z)[y * 64 + x] =
          (float) (peak * exp (-((x - 32.0) * (x - 32.0) + (y - 32.0) * (y - 32.0)) / (2 * sigma * sigma)
                               - pow (z - 4.0, 2) / (2 * sigma * sigma / 4)));
  s->dx = s->dy = dx;
  s->dz = 0.1;
  return s;
}

static void
test_gl_compare (Fixture *f, gconstpointer data)
{
  /* pin a PSF (σ = 2 px) as the reference, compute another (σ = 3 px):
   * side by side with linked cursor, z and zoom and both FWHMs in the
   * profiles; the difference in a signed colormap with symmetric limits;
   * A/B with the key B */
  const double k = 2.0 * sqrt (2.0 * log (2.0)) * 0.05;
  AiryStackView *ref = airy_stack_viewer_get_reference_view (f->viewer);
  AiryPlot *line = airy_stack_viewer_get_line_plot (f->viewer);
  AiryPlot *axial = airy_stack_viewer_get_axial_plot (f->viewer);
  const AiryDisplay *d;
  gboolean handled = FALSE;
  guint cx, cy;
  int w, h;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, blob_stack (2.0, 1.0f, 0.05));
  g_assert_cmpint (airy_stack_viewer_get_compare (f->viewer), ==, AIRY_COMPARE_OFF);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->viewer), "viewer.pin", NULL));
  airy_stack_viewer_set_stack (f->viewer, blob_stack (3.0, 0.5f, 0.05));
  /* pinning turns side by side on */
  g_assert_cmpint (airy_stack_viewer_get_compare (f->viewer), ==, AIRY_COMPARE_SIDE);
  g_assert_true (gtk_widget_is_visible (GTK_WIDGET (ref)));
  g_assert_cmpfloat (airy_stack_view_get_stack (ref)->data[4 * 64 * 64 + 32 * 64 + 32], ==, 1.0f);
  g_assert_cmpfloat (airy_stack_view_get_stack (f->view)->data[4 * 64 * 64 + 32 * 64 + 32], ==, 0.5f);
  read_frame (f, &w, &h);
  /* the two canvases line up */
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (ref)), ==, gtk_widget_get_height (GTK_WIDGET (f->view)));
  /* linked: z, cursor, zoom */
  airy_stack_view_set_z (f->view, 4);
  airy_stack_view_set_cursor (f->view, 32, 32);
  g_assert_cmpuint (airy_stack_view_get_z (ref), ==, 4);
  airy_stack_view_get_cursor (ref, &cx, &cy);
  g_assert_cmpuint (cx, ==, 32);
  g_assert_cmpuint (cy, ==, 32);
  press_key (f, GDK_KEY_plus);
  press_key (f, GDK_KEY_plus);
  g_assert_cmpfloat (airy_stack_view_get_zoom (ref), ==, airy_stack_view_get_zoom (f->view));
  {
    double ax, ay, aw, ah, bx, by, bw, bh, zoom = airy_stack_view_get_zoom (f->view);

    airy_stack_view_get_visible (f->view, &ax, &ay, &aw, &ah);
    airy_stack_view_get_visible (ref, &bx, &by, &bw, &bh);

    /* the same part, to a pixel (the two halves may differ by one) */
    g_assert_cmpfloat (fabs (ax - bx) * zoom, <=, 1.0);
    g_assert_cmpfloat (fabs (aw - bw) * zoom, <=, 1.5);
    g_assert_cmpfloat (fabs (ay - by) * zoom, <=, 1.0);
  }
  /* both FWHMs: A 2.355·3·0.05 µm, the reference 2.355·2·0.05 µm */
  g_assert_cmpfloat_with_epsilon (airy_plot_get_fwhm (line) / (k * 3.0), 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon (airy_plot_get_reference_fwhm (line) / (k * 2.0), 1.0, 0.02);
  g_assert_cmpfloat (airy_plot_get_reference_fwhm (axial), >, 0.0);
  g_assert_cmpfloat (airy_plot_get_reference_fwhm (axial), <, airy_plot_get_fwhm (axial));

  /* A/B: the key B shows the reference as A, and back */
  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_KEY), "key-pressed", GDK_KEY_b, 0, 0, &handled);
  g_assert_false (handled);   /* the view leaves it to the viewer */
  {
    GtkEventController *keys = NULL;
    g_autoptr(GListModel) list = gtk_widget_observe_controllers (GTK_WIDGET (f->viewer));
    guint i;

    for (i = 0; i < g_list_model_get_n_items (list) && keys == NULL; i++)
      {
        g_autoptr(GObject) c = g_list_model_get_item (list, i);
        if (GTK_IS_EVENT_CONTROLLER_KEY (c))
          keys = GTK_EVENT_CONTROLLER (c);
      }
    g_assert_nonnull (keys);
    g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_b, 0, 0, &handled);
    g_assert_true (handled);
    g_assert_true (airy_stack_viewer_get_showing_b (f->viewer));
    g_assert_cmpfloat (airy_stack_view_get_stack (f->view)->data[4 * 64 * 64 + 32 * 64 + 32], ==, 1.0f);
    g_assert_cmpfloat (airy_stack_view_get_stack (ref)->data[4 * 64 * 64 + 32 * 64 + 32], ==, 0.5f);
    g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_b, 0, 0, &handled);
    g_assert_false (airy_stack_viewer_get_showing_b (f->viewer));
    g_assert_cmpfloat (airy_stack_view_get_stack (f->view)->data[4 * 64 * 64 + 32 * 64 + 32], ==, 0.5f);
  }

  /* the difference: result − reference, zero in the middle of a diverging map */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->viewer), "viewer.compare-diff", NULL));
  g_assert_cmpint (airy_stack_viewer_get_compare (f->viewer), ==, AIRY_COMPARE_DIFF);
  g_assert_false (gtk_widget_is_visible (GTK_WIDGET (ref)));
  g_assert_cmpfloat (airy_stack_view_get_stack (f->view)->data[4 * 64 * 64 + 32 * 64 + 32], ==, -0.5f);
  d = airy_stack_view_get_display (f->view);
  g_assert_cmpint (d->colormap, ==, AIRY_COLORMAP_DIVERGING);
  g_assert_cmpfloat (d->lo, ==, -d->hi);
  g_assert_cmpfloat (d->hi, >=, 0.5f);
  {
    guint8 lut[256 * 3];
    AiryDisplay dd = *d;

    /* zero maps to the middle: white */
    airy_colormap_lut (AIRY_COLORMAP_DIVERGING, FALSE, lut);
    g_assert_cmpuint (airy_display_index (&dd, 0.0f), ==, 128);
    g_assert_cmpuint (lut[3 * 128], >=, 240);
    g_assert_cmpuint (lut[3 * 0 + 2], >, lut[3 * 0]);       /* negative: blue */
    g_assert_cmpuint (lut[3 * 255], >, lut[3 * 255 + 2]);   /* positive: red */
  }
  /* the profiles still show A and B, not the difference */
  g_assert_cmpfloat_with_epsilon (airy_plot_get_fwhm (line) / (k * 3.0), 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon (airy_plot_get_reference_fwhm (line) / (k * 2.0), 1.0, 0.02);
  /* a new result of another size: the reference is resampled onto its
   * grid, said, and the difference shown on the result's grid */
  {
    AiryStack *other = gradient_stack (3, 16, 16, 0.1, 0.1);

    airy_stack_viewer_set_stack (f->viewer, other);
    g_assert_cmpstr (airy_stack_viewer_get_message (f->viewer), ==,
                     "difference on the result's grid: the reference (64 × 64 × 9, voxel 0.05 × 0.05 µm) "
                     "resampled onto 16 × 16 × 3, voxel 0.1 × 0.1 µm");
    g_assert_cmpuint (airy_stack_view_get_stack (f->view)->depth, ==, 3);
    g_assert_cmpint (airy_stack_view_get_display (f->view)->colormap, ==, AIRY_COLORMAP_DIVERGING);
  }
  /* a result on twice the pixel size: the difference against the
   * reference resampled onto it, value for value */
  airy_stack_viewer_set_stack (f->viewer, blob_stack (2.0, 1.0f, 0.1));
  g_assert_cmpstr (airy_stack_viewer_get_message (f->viewer), ==,
                   "difference on the result's grid: the reference (64 × 64 × 9, voxel 0.05 × 0.05 µm) "
                   "resampled onto 64 × 64 × 9, voxel 0.1 × 0.1 µm");
  {
    g_autoptr(AiryStack) a = blob_stack (2.0, 1.0f, 0.1), b = blob_stack (2.0, 1.0f, 0.05);
    g_autoptr(AiryStack) rb = NULL;
    const AiryStack *shown = airy_stack_view_get_stack (f->view);
    double z[9];
    guint k, i;

    for (k = 0; k < 9; k++)
      z[k] = 0.1 * k;
    rb = _airy_stack_resample (b, 64, 64, 0.1, 0.1, 9, z, z);
    g_assert_nonnull (rb);
    for (i = 0; i < 64 * 64 * 9; i += 97)
      g_assert_cmpfloat (shown->data[i], ==, a->data[i] - rb->data[i]);
    /* on the axis the result is wider than the box mean of the narrower
     * reference, which is 1 there less what it loses over the coarse pixel */
    i = 4 * 64 * 64 + 32 * 64 + 32;
    g_assert_cmpfloat (shown->data[i], >, 0.0f);
    g_assert_cmpfloat (shown->data[i], <, 0.2f);
    g_assert_cmpfloat (fabs (shown->data[4 * 64 * 64 + 32 * 64 + 40]), <, 1e-3);
  }
  airy_stack_viewer_set_compare (f->viewer, AIRY_COMPARE_SIDE);
  airy_stack_view_set_cursor (f->view, 32, 32);
  g_assert_cmpfloat_with_epsilon (airy_plot_get_fwhm (line) / (k * 4.0), 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon (airy_plot_get_reference_fwhm (line) / (k * 2.0), 1.0, 0.02);
  /* linked in µm: B's pixels are half as large, so half the zoom, and the
   * cursor 8 px right of the axis in A is 16 px right in B */
  g_assert_cmpfloat_with_epsilon (airy_stack_view_get_zoom (ref), airy_stack_view_get_zoom (f->view) / 2, 1e-9);
  airy_stack_view_set_cursor (f->view, 40, 32);
  airy_stack_view_get_cursor (ref, &cx, &cy);
  g_assert_cmpuint (cx, ==, 48);
  g_assert_cmpuint (cy, ==, 32);
  {
    /* the same widget point shows the same point of the specimen */
    double ia, ja, ib, jb, wx = gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0, wy = 40.0;

    g_assert_true (airy_stack_view_widget_to_image (f->view, wx, wy, &ia, &ja));
    g_assert_true (airy_stack_view_widget_to_image (ref, wx, wy, &ib, &jb));
    g_assert_cmpfloat_with_epsilon (((ia + 0.5) - 32) * 0.1, ((ib + 0.5) - 32) * 0.05, 0.05);
    g_assert_cmpfloat_with_epsilon (((ja + 0.5) - 32) * 0.1, ((jb + 0.5) - 32) * 0.05, 0.05);
  }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->viewer), "viewer.unpin", NULL));
  g_assert_cmpint (airy_stack_viewer_get_compare (f->viewer), ==, AIRY_COMPARE_OFF);
  g_assert_false (gtk_widget_is_visible (GTK_WIDGET (ref)));
}

/* ---- profiles, rectangles, exports ---- */

static void
test_box_stats (void)
{
  /* a Gaussian (σ = 3 px) centred on a 12 × 12 rectangle: all of it in
   * the whole plane, 1 − exp (−r²/2σ²) in the circle of r = 6 px */
  g_autofree float *p = g_new (float, 64 * 64);
  AiryBoxStats st;
  guint y, x;

  for (y = 0; y < 64; y++)
    for (x = 0; x < 64; x++)
      p[y * 64 + x] = (float) exp (-((x - 31.5) * (x - 31.5) + (y - 31.5) * (y - 31.5)) / 18.0);
  airy_box_stats (p, 64, 64, 0, 0, 64, 64, &st);
  g_assert_cmpfloat_with_epsilon (st.ensquared, 1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (st.sum, 2 * G_PI * 9, 0.01);
  airy_box_stats (p, 64, 64, 26, 26, 12, 12, &st);
  g_assert_cmpuint (st.n, ==, 144);
  g_assert_cmpfloat_with_epsilon (st.mean, st.sum / 144, 1e-9);
  g_assert_cmpfloat_with_epsilon (st.max, exp (-0.5 / 18.0), 1e-6);
  g_assert_cmpfloat_with_epsilon (st.encircled, 1 - exp (-36.0 / 18.0), 0.01);
  g_assert_cmpfloat (st.ensquared, >, st.encircled);
  g_assert_cmpfloat (st.radius, ==, 6.0);
}

static void
test_gl_profiles (Fixture *f, gconstpointer data)
{
  /* a line 5 px wide averages across: (y − 20)² on y = 20 gives
   * (4 + 1 + 0 + 1 + 4)/5 = 2; exported as CSV; a rectangle tells its
   * statistics; XY, XZ and YZ export as one PNG */
  g_autofree char *csv_path = g_build_filename (tmpdir, "line.csv", NULL);
  g_autofree char *png_path = g_build_filename (tmpdir, "sections.png", NULL);
  g_autofree char *csv = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;
  AiryStack *s = airy_stack_new (8, 48, 40);
  GtkWidget *width_spin, *rect, *line;
  guint z, y, x, i;

  if (!have_display)
    {
      airy_stack_free (s);
      g_test_skip ("no display");
      return;
    }
  for (z = 0; z < 8; z++)
    for (y = 0; y < 48; y++)
      for (x = 0; x < 40; x++)
        airy_stack_plane (s, z)[y * 40 + x] = (float) ((y - 20.0) * (y - 20.0)) + 1000.0f * z;
  s->dx = s->dy = 0.5;
  s->dz = 2.0;
  airy_stack_viewer_set_stack (f->viewer, s);
  airy_stack_view_set_z (f->view, 0);
  width_spin = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_SPIN_BUTTON, "Width");
  g_assert_nonnull (width_spin);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (width_spin), 5);
  airy_stack_view_set_line (f->view, 5, 20, 35, 20);
  g_assert_true (airy_stack_viewer_export_profile (f->viewer, csv_path, FALSE, &error));
  g_assert_true (g_file_get_contents (csv_path, &csv, NULL, &error));
  lines = g_strsplit (csv, "\n", -1);
  /* the metadata first, as "# " lines */
  g_assert_cmpstr (lines[0], ==, "# Airy line profile");
  g_assert_cmpstr (lines[2], ==, "# plane: 1 of 8 (1-based), z 0.0000 µm; cursor x 0.0000 µm, y 0.0000 µm");
  g_assert_cmpstr (lines[3], ==, "# units: x in µm; value: intensity as computed (a PSF plane sums to 1/(dx dy))");
  g_assert_cmpstr (lines[4], ==, "x_µm,value");
  g_assert_cmpuint (g_strv_length (lines), >, 100);
  for (i = 5; lines[i] && lines[i][0]; i++)
    {
      const char *comma = strchr (lines[i], ',');

      g_assert_nonnull (comma);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (comma + 1, NULL), 2.0, 1e-5);
    }
  /* 1 px: the line alone */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (width_spin), 1);
  g_assert_true (airy_stack_viewer_export_profile (f->viewer, csv_path, FALSE, &error));
  g_clear_pointer (&csv, g_free);
  g_assert_true (g_file_get_contents (csv_path, &csv, NULL, &error));
  g_assert_nonnull (strstr (csv, "\n0,0\n"));

  /* the tools: one at a time, off goes back to the cursor */
  rect = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_TOGGLE_BUTTON, "Rectangle");
  line = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_TOGGLE_BUTTON, "Line profile");
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (rect), TRUE);
  g_assert_cmpint (airy_stack_view_get_tool (f->view), ==, AIRY_TOOL_RECT);
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (line), TRUE);
  g_assert_cmpint (airy_stack_view_get_tool (f->view), ==, AIRY_TOOL_LINE);
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (rect)));
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (line), FALSE);
  g_assert_cmpint (airy_stack_view_get_tool (f->view), ==, AIRY_TOOL_CURSOR);
  /* a rectangle on rows 18…21 of plane 0: (y − 20)² = 4, 1, 0, 1 */
  g_assert_null (airy_stack_viewer_get_roi_text (f->viewer));
  airy_stack_view_set_roi (f->view, 10, 18, 10, 4);
  g_assert_nonnull (airy_stack_viewer_get_roi_text (f->viewer));
  g_assert_true (g_str_has_prefix (airy_stack_viewer_get_roi_text (f->viewer),
                                   "Rectangle 10 × 4 px\nsum 60\nmean 1.5\nmax 4\n"));

  /* XY, XZ, YZ in one PNG: 40 + 6 + 8·4 wide, 48 + 6 + 32 tall */
  {
    AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
    AiryDisplay d;
    g_autoptr(AiryStack) back = NULL;
    guint8 lut[256 * 3];

    airy_display_init (&d);
    d.colormap = AIRY_COLORMAP_GRAY;
    d.lo = 0.0f;
    d.hi = 8000.0f;
    airy_stack_viewer_set_display (f->viewer, &d);
    airy_stack_view_set_cursor (f->view, 7, 30);
    g_assert_true (airy_stack_viewer_export_sections (f->viewer, png_path, &error));
    ro.channel = 0;
    back = airy_image_read_full (png_path, &ro, &error);
    g_assert_nonnull (back);
    g_assert_cmpuint (back->width, ==, 40 + 6 + 32);
    g_assert_cmpuint (back->height, ==, 48 + 6 + 32);
    airy_colormap_lut (AIRY_COLORMAP_GRAY, FALSE, lut);
    /* XZ at row y = 30: (30 − 20)² + 1000 z, plane z = 5 at rows 20…23 */
    g_assert_cmpfloat (back->data[(48 + 6 + 21) * back->width + 3], ==,
                       lut[3 * airy_display_index (&d, 100.0f + 5000.0f)]);
    /* YZ at x = 7, row y = 10: (10 − 20)² + 1000 z, z = 2 at columns 8…11 */
    g_assert_cmpfloat (back->data[10 * back->width + 40 + 6 + 9], ==,
                       lut[3 * airy_display_index (&d, 100.0f + 2000.0f)]);
    /* the gap is the canvas' background */
    g_assert_cmpfloat (back->data[(48 + 2) * back->width + 3], ==, 31.0f);
  }
  g_unlink (csv_path);
  g_unlink (png_path);
}

/* ---- properties ---- */

#define NOTIFIED(name) test_notified (counts, name)

static void
test_gl_properties (Fixture *f, gconstpointer data)
{
  /* each property of the view is notified once per change, never for a value
   * it already has; the viewer's controls follow the view, and it them */
  g_autoptr(GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  GtkWidget *mip, *tool, *gamma, *scale, *colormap, *histogram;
  AiryDisplay d;
  double v;
  int w, h, i;
  gboolean handled;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (8, 16, 16, 0.1, 0.2));
  g_signal_connect (f->view, "notify", G_CALLBACK (test_count_notify), counts);
  g_object_set (f->view, "z", 2, "mip", TRUE, "gamma", 2.0, "tool", AIRY_TOOL_LINE, NULL);
  g_object_set (f->view, "z", 2, "mip", TRUE, "gamma", 2.0, "tool", AIRY_TOOL_LINE, NULL);
  g_assert_cmpuint (NOTIFIED ("z"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("mip"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("gamma"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("tool"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("colormap"), ==, 0);
  /* z is clamped to the stack, and a shallower stack clamps it again */
  g_object_set (f->view, "z", 99, NULL);
  g_assert_cmpuint (airy_stack_view_get_z (f->view), ==, 7);
  airy_stack_viewer_set_stack (f->viewer, gradient_stack (4, 16, 16, 0.1, 0.2));
  g_assert_cmpuint (airy_stack_view_get_z (f->view), ==, 3);
  g_assert_cmpuint (NOTIFIED ("z"), ==, 3);
  /* a zoom leaves the fit, once; fitting again comes back */
  g_object_set (f->view, "zoom", 2.0, NULL);
  g_object_set (f->view, "zoom", 2.0, NULL);
  g_object_get (f->view, "zoom", &v, NULL);
  g_assert_cmpfloat (v, ==, 2.0);
  g_assert_cmpuint (NOTIFIED ("fit"), ==, 1);
  g_assert_false (airy_stack_view_get_fit (f->view));
  airy_stack_view_fit (f->view);
  g_assert_cmpuint (NOTIFIED ("fit"), ==, 2);
  /* a whole display: only what differs is told */
  g_hash_table_remove_all (counts);
  d = *airy_stack_view_get_display (f->view);
  d.colormap = AIRY_COLORMAP_VIRIDIS;
  d.hi = 250.0f;
  airy_stack_viewer_set_display (f->viewer, &d);
  g_assert_cmpuint (NOTIFIED ("colormap"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("limit-high"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("gamma"), ==, 0);
  g_assert_cmpuint (NOTIFIED ("limit-low"), ==, 0);

  /* the controls show what was set on the view ... */
  mip = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_TOGGLE_BUTTON, "MIP");
  tool = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_TOGGLE_BUTTON, "Line profile");
  gamma = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_SPIN_BUTTON, "Gamma");
  colormap = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_DROP_DOWN, "Colormap");
  scale = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_SCALE, NULL);
  histogram = test_find_widget (GTK_WIDGET (f->viewer), AIRY_TYPE_HISTOGRAM, NULL);
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (mip)));
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (tool)));
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (gamma)), ==, 2.0);
  g_assert_cmpuint (gtk_drop_down_get_selected (GTK_DROP_DOWN (colormap)), ==, AIRY_COLORMAP_VIRIDIS);
  g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (scale)), ==, 3.0);
  g_object_get (histogram, "limit-high", &v, NULL);
  g_assert_cmpfloat (v, ==, 250.0);
  /* ... and the view takes what a person sets there, once */
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (mip), FALSE);
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (tool), FALSE);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (gamma), 0.5);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (colormap), AIRY_COLORMAP_GRAY);
  gtk_range_set_value (GTK_RANGE (scale), 1.0);
  g_object_set (histogram, "limit-low", 40.0, NULL);
  g_assert_false (airy_stack_view_get_mip (f->view));
  g_assert_cmpint (airy_stack_view_get_tool (f->view), ==, AIRY_TOOL_CURSOR);
  g_assert_cmpfloat (airy_stack_view_get_display (f->view)->gamma, ==, 0.5f);
  g_assert_cmpint (airy_stack_view_get_display (f->view)->colormap, ==, AIRY_COLORMAP_GRAY);
  g_assert_cmpuint (airy_stack_view_get_z (f->view), ==, 1);
  g_assert_cmpfloat (airy_stack_view_get_display (f->view)->lo, ==, 40.0f);
  g_assert_cmpuint (NOTIFIED ("mip"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("gamma"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("limit-low"), ==, 1);
  g_assert_cmpuint (NOTIFIED ("z"), ==, 1);
  /* a drag on the slider lands on the plane below it, knob included */
  g_signal_emit_by_name (scale, "change-value", GTK_SCROLL_JUMP, 2.7, &handled);
  g_assert_true (handled);
  g_assert_cmpuint (airy_stack_view_get_z (f->view), ==, 2);
  g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (scale)), ==, 2.0);
  /* how slices reach GL is told after the first frame, and not again */
  for (i = 0; i < 2; i++)
    {
      read_frame (f, &w, &h);
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_assert_cmpuint (NOTIFIED ("slice-path"), ==, 1);
    }
  g_signal_handlers_disconnect_by_data (f->view, counts);
}

/* On the screen, the image pixels 0 … width − 1 of row y: where red and
 * green peak, and their values (the view may frame the PSF, zoomed in:
 * only the pixels on the screen). */
static void
row_peaks (Fixture *f, int y, int width, int *red_x, int *red, int *green_x, int *green)
{
  int w, h, ox, oy, x;
  const guint8 *fb = read_frame (f, &w, &h);
  double zoom;

  image_origin (f, &ox, &oy);
  zoom = airy_stack_view_get_zoom (f->view);
  *red = *green = *red_x = *green_x = -1;
  g_assert_true (oy + (y + 0.5) * zoom >= 0 && oy + (y + 0.5) * zoom < h);
  for (x = 0; x < width; x++)
    {
      double sx = ox + (x + 0.5) * zoom;
      const guint8 *p;

      if (sx < 0 || sx >= w)
        continue;
      p = fb + ((gsize) (oy + (y + 0.5) * zoom) * w + (gsize) sx) * 4;
      if (p[0] > *red)
        *red = p[0], *red_x = x;
      if (p[1] > *green)
        *green = p[1], *green_x = x;
    }
}

/* Several wavelengths kept as channels (a computed result): an FF lens's
 * pixel scales with λ, so the channels' pixel sizes differ; the composite
 * overlays them where they are in µm. A point 0.4 µm right of the axis in
 * both channels (pixel 20 of 33 at 0.1 µm, pixel 18 at 0.2 µm) is red and
 * green at the same screen pixel. */
static void
test_gl_channels_grid (Fixture *f, gconstpointer data)
{
  GPtrArray *channels = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
  GtkWidget *composite;
  int red_x, green_x, red, green;
  guint c;

  if (!have_display)
    {
      g_test_skip ("no display");
      g_ptr_array_unref (channels);
      return;
    }
  for (c = 0; c < 2; c++)
    {
      AiryStack *s = airy_stack_new (1, 33, 33);
      const double lambda = c ? 0.64 : 0.32;

      s->dx = s->dy = c ? 0.2 : 0.1;
      s->dz = 0.1;
      airy_stack_plane (s, 0)[16 * 33 + 16 + (c ? 2 : 4)] = 1.0f;
      airy_stack_set_provenance (s, 1, &lambda, NULL, NULL);
      g_ptr_array_add (channels, s);
    }
  airy_stack_viewer_set_stack (f->viewer, airy_stack_copy (g_ptr_array_index (channels, 0)));
  airy_stack_viewer_set_channels (f->viewer, channels);
  composite = find_check (GTK_WIDGET (f->viewer), "Composite");
  g_assert_nonnull (composite);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (composite), TRUE);
  wait_files (f->viewer);
  g_assert_cmpuint (airy_stack_view_get_composite (f->view), ==, 2);
  row_peaks (f, 16, 33, &red_x, &red, &green_x, &green);
  g_test_message ("row 16: red peak at x %d (%d), green peak at x %d (%d)", red_x, red, green_x, green);
  g_assert_cmpint (red_x, ==, 20);
  g_assert_cmpint (green_x, ==, 20);
  g_assert_cmpint (green, >, 200);

  /* the second channel shown: the composite on its pixels (0.2 µm, the
   * point at pixel 18), under its scale bar */
  airy_stack_viewer_set_hyperstack_plane (f->viewer, 1, 0);
  wait_files (f->viewer);
  g_assert_cmpfloat (airy_stack_view_get_stack (f->view)->dx, ==, 0.2);
  g_assert_cmpuint (airy_stack_view_get_composite (f->view), ==, 2);
  row_peaks (f, 16, 33, &red_x, &red, &green_x, &green);
  g_test_message ("channel 2 shown: red peak at x %d (%d), green peak at x %d (%d)", red_x, red, green_x, green);
  g_assert_cmpint (red_x, ==, 18);
  g_assert_cmpint (green_x, ==, 18);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  have_display = gtk_init_check ();
  tmpdir = g_dir_make_tmp ("airy-viewer-XXXXXX", NULL);

  g_test_add_func ("/viewer/math/display-index", test_display_index);
  g_test_add_func ("/viewer/math/histogram-contrast", test_histogram_contrast);
  g_test_add_func ("/viewer/math/histogram-percentiles", test_histogram_percentiles);
  g_test_add_func ("/viewer/math/fwhm-gaussian", test_fwhm_gaussian);
  g_test_add_func ("/viewer/math/scale-bar", test_scale_bar);
  g_test_add_func ("/viewer/math/pixel-to-um", test_pixel_to_um);
  g_test_add_func ("/viewer/math/box-stats", test_box_stats);
  g_test_add ("/viewer/gl/colormap-contrast-gamma-log", Fixture, NULL, fixture_setup, test_gl_colormap, fixture_teardown);
  g_test_add ("/viewer/gl/sections", Fixture, NULL, fixture_setup, test_gl_sections, fixture_teardown);
  g_test_add ("/viewer/gl/mip", Fixture, NULL, fixture_setup, test_gl_mip, fixture_teardown);
  g_test_add ("/viewer/gl/cursor-readout-scale-bar", Fixture, NULL, fixture_setup, test_gl_cursor_and_readout, fixture_teardown);
  g_test_add ("/viewer/gl/line-profile", Fixture, NULL, fixture_setup, test_gl_line_profile, fixture_teardown);
  g_test_add ("/viewer/gl/export", Fixture, NULL, fixture_setup, test_gl_export, fixture_teardown);
  g_test_add ("/viewer/gl/bad-files", Fixture, NULL, fixture_setup, test_gl_bad_files, fixture_teardown);
  g_test_add ("/viewer/gl/hyperstack", Fixture, NULL, fixture_setup, test_gl_hyperstack, fixture_teardown);
  g_test_add ("/viewer/gl/ome-hyperstack", Fixture, NULL, fixture_setup, test_gl_ome_hyperstack, fixture_teardown);
  g_test_add ("/viewer/gl/open-async", Fixture, NULL, fixture_setup, test_gl_open_async, fixture_teardown);
  g_test_add ("/viewer/gl/slot-path", Fixture, NULL, fixture_setup, test_gl_slot_path, fixture_teardown);
  g_test_add ("/viewer/gl/cpu-slot", Fixture, NULL, fixture_setup, test_gl_cpu_slot, fixture_teardown);
  g_test_add ("/viewer/gl/properties", Fixture, NULL, fixture_setup, test_gl_properties, fixture_teardown);
  g_test_add ("/viewer/gl/zoom-pointer", Fixture, NULL, fixture_setup, test_gl_zoom_pointer, fixture_teardown);
  g_test_add ("/viewer/gl/zoom-keys", Fixture, NULL, fixture_setup, test_gl_zoom_keys, fixture_teardown);
  g_test_add ("/viewer/gl/fit-psf", Fixture, NULL, fixture_setup, test_gl_fit_psf, fixture_teardown);
  g_test_add ("/viewer/gl/foreign", Fixture, NULL, fixture_setup, test_gl_foreign, fixture_teardown);
  g_test_add ("/viewer/gl/compare", Fixture, NULL, fixture_setup, test_gl_compare, fixture_teardown);
  g_test_add ("/viewer/gl/profiles", Fixture, NULL, fixture_setup, test_gl_profiles, fixture_teardown);
  g_test_add ("/viewer/gl/fits-1280", Fixture, NULL, fixture_setup, test_gl_fits_1280, fixture_teardown);
  g_test_add ("/viewer/gl/channels-grid", Fixture, NULL, fixture_setup, test_gl_channels_grid, fixture_teardown);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
