/* The stack viewer's zoom and orthogonal views, its fit in a 1280 × 800
 * window, foreign stacks and the comparison of two PSFs, under Xvfb (the
 * rest of the viewer: test-viewer.c). */
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

/* ---- zoom and the orthogonal views ---- */

static void
scroll_notch (Fixture *f, double dy)
{
  gboolean handled = FALSE;

  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_SCROLL), "scroll", 0.0, dy, &handled);
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

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  have_display = gtk_init_check ();
  tmpdir = g_dir_make_tmp ("airy-viewer-XXXXXX", NULL);

  g_test_add ("/viewer/gl/zoom-pointer", Fixture, NULL, fixture_setup, test_gl_zoom_pointer, fixture_teardown);
  g_test_add ("/viewer/gl/zoom-keys", Fixture, NULL, fixture_setup, test_gl_zoom_keys, fixture_teardown);
  g_test_add ("/viewer/gl/fit-psf", Fixture, NULL, fixture_setup, test_gl_fit_psf, fixture_teardown);
  g_test_add ("/viewer/gl/foreign", Fixture, NULL, fixture_setup, test_gl_foreign, fixture_teardown);
  g_test_add ("/viewer/gl/compare", Fixture, NULL, fixture_setup, test_gl_compare, fixture_teardown);
  g_test_add ("/viewer/gl/fits-1280", Fixture, NULL, fixture_setup, test_gl_fits_1280, fixture_teardown);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
