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
#include "airy-test-viewer.h"
#include "airy-view-math.h"

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

/* A modality's channels (confocal's excitation, detection, effective) are
 * named by what they are in the channel chooser and the composite's
 * tooltip, not by their wavelengths; unnamed ones keep the wavelength. */
static void
test_channel_names (Fixture *f, gconstpointer data)
{
  const char *names[] = { "excitation", "detection", NULL };
  const double lambdas[] = { 0.488, 0.52, 0.52 };
  GPtrArray *channels = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
  GtkWidget *spin, *composite;
  const char *tip;
  guint c;

  if (!have_display)
    {
      g_test_skip ("no display");
      g_ptr_array_unref (channels);
      return;
    }
  for (c = 0; c < 3; c++)
    {
      AiryStack *s = airy_stack_new (1, 17, 17);

      s->dx = s->dy = s->dz = 0.1;
      airy_stack_plane (s, 0)[8 * 17 + 8] = 1.0f + c;
      airy_stack_set_provenance (s, 1, &lambdas[c], NULL, NULL);
      airy_stack_set_channel_name (s, names[c]);
      g_ptr_array_add (channels, s);
    }
  airy_stack_viewer_set_stack (f->viewer, airy_stack_copy (g_ptr_array_index (channels, 0)));
  airy_stack_viewer_set_channels (f->viewer, channels);
  wait_files (f->viewer);
  spin = test_find_widget (GTK_WIDGET (f->viewer), GTK_TYPE_SPIN_BUTTON, "Channel");
  g_assert_nonnull (spin);
  g_assert_true (gtk_widget_get_visible (spin));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "1 \xc2\xb7 excitation");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 2);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "2 \xc2\xb7 detection");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 3);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (spin)), ==, "3 \xc2\xb7 520 nm");
  composite = find_check (GTK_WIDGET (f->viewer), "Composite");
  g_assert_nonnull (composite);
  tip = gtk_widget_get_tooltip_text (composite);
  g_test_message ("composite: %s", tip);
  g_assert_nonnull (strstr (tip, "1 \xc2\xb7 excitation"));
  g_assert_nonnull (strstr (tip, "2 \xc2\xb7 detection"));
  /* two of one wavelength: Fiji's colours by channel, none twice */
  g_assert_nonnull (strstr (tip, "red: 1 \xc2\xb7 excitation, green: 2 \xc2\xb7 detection, blue: 3"));
  wait_files (f->viewer);
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
  g_test_add ("/viewer/gl/profiles", Fixture, NULL, fixture_setup, test_gl_profiles, fixture_teardown);
  g_test_add ("/viewer/gl/channels-grid", Fixture, NULL, fixture_setup, test_gl_channels_grid, fixture_teardown);
  g_test_add ("/viewer/gl/channel-names", Fixture, NULL, fixture_setup, test_channel_names, fixture_teardown);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
