/* The stack view on GTK's cairo renderer (what Airy uses on a software GL):
 * its slices drawn by cairo from surfaces of their own size, with the
 * pixels the GL path draws, and no GL texture in its frame. And what a
 * frame leaves alone: a plot given the profile it shows is not redrawn. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-plot.h"
#include "airy-stack-view.h"
#include "airy-view-math.h"

static gboolean have_display;

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* neighbouring voxels 14 to 58 LUT steps apart (0 … 1016 shown over 0 …
 * 1020): a pixel drawn from the wrong voxel shows; on 0.5 µm pixels,
 * planes 2 µm apart; one NaN (a value not computed yet) at x 7, y 9 of
 * every plane */
static float
value_at (guint x, guint y, guint z)
{
  return (float) (8 * ((7 * x + 13 * y + 29 * z) % 128));
}

static AiryStack *
gradient_stack (guint depth, guint height, guint width)
{
  AiryStack *s = airy_stack_new (depth, height, width);
  guint z, y, x;

  for (z = 0; z < depth; z++)
    for (y = 0; y < height; y++)
      for (x = 0; x < width; x++)
        airy_stack_plane (s, z)[y * width + x] = x == 7 && y == 9 ? NAN : value_at (x, y, z);
  s->dx = s->dy = 0.5;
  s->dz = 2.0;
  return s;
}

static void
iterate_until (gboolean (*done) (AiryStackView *), AiryStackView *view)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (20, timeout_cb, &timed_out);

  while (!timed_out && !done (view))
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (timed_out);
  g_source_remove (id);
}

static gboolean
readback_ready (AiryStackView *view)
{
  int w, h;

  return airy_stack_view_get_readback (view, &w, &h) != NULL;
}

/* the view's own nodes: a cairo node with the slices; no GL texture */
static GskRenderNode *
find_cairo_node (GskRenderNode *node, guint *gl_textures)
{
  GskRenderNode *found = NULL;
  guint i;

  switch (gsk_render_node_get_node_type (node))
    {
    case GSK_CAIRO_NODE:
      return node;
    case GSK_TEXTURE_NODE:
      if (GDK_IS_GL_TEXTURE (gsk_texture_node_get_texture (node)))
        (*gl_textures)++;
      return NULL;
    case GSK_CONTAINER_NODE:
      for (i = 0; i < gsk_container_node_get_n_children (node) && found == NULL; i++)
        found = find_cairo_node (gsk_container_node_get_child (node, i), gl_textures);
      return found;
    case GSK_CLIP_NODE:
      return find_cairo_node (gsk_clip_node_get_child (node), gl_textures);
    case GSK_TRANSFORM_NODE:
      return find_cairo_node (gsk_transform_node_get_child (node), gl_textures);
    default:
      return NULL;
    }
}

/* The view's frame as GTK's cairo renderer draws it (B, G, R, A): its
 * slices in a cairo node, with no GL texture in it. */
static guint8 *
cairo_frame (GtkWidget *window, AiryStackView *view, int W, int H)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  GskRenderNode *image;
  guint gl_textures = 0;
  guint8 *px;

  GTK_WIDGET_GET_CLASS (view)->snapshot (GTK_WIDGET (view), snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  image = find_cairo_node (node, &gl_textures);
  g_assert_cmpuint (gl_textures, ==, 0);
  g_assert_nonnull (image);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), image,
                                         &GRAPHENE_RECT_INIT (0, 0, W, H));
  g_assert_cmpint (gdk_texture_get_width (texture), ==, W);
  px = g_malloc ((gsize) W * H * 4);
  gdk_texture_download (texture, px, (gsize) W * 4);
  return px;
}

/* the GL path's framebuffer of the same view (R, G, B, A; a readback is
 * drawn by GL) */
static const guint8 *
gl_frame (AiryStackView *view, int W, int H)
{
  const guint8 *px;
  int w, h;

  airy_stack_view_request_readback (view);
  iterate_until (readback_ready, view);
  px = airy_stack_view_get_readback (view, &w, &h);
  g_assert_null (airy_stack_view_get_gl_error (view));
  g_assert_cmpint (w, ==, W);
  g_assert_cmpint (h, ==, H);
  return px;
}

/* Pixels of the cairo frame that GL draws otherwise. The shader's float
 * arithmetic may round a value to the next LUT step, and a pixel centre on
 * (or within float rounding of) a texel edge may take the texel on either
 * side: a pixel may show what GL shows beside it (or diagonally, at a
 * corner of texels; *moved counts those). */
static int
unmatched (const guint8 *cairo_px, const guint8 *gl_px, int W, int H, int *moved)
{
  int x, y, differ = 0;

  *moved = 0;
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      {
        const guint8 *c = cairo_px + ((gsize) y * W + x) * 4;
        static const int dx[9] = { 0, -1, 1, 0, 0, -1, -1, 1, 1 }, dy[9] = { 0, 0, 0, -1, 1, -1, 1, -1, 1 };
        gboolean match = FALSE;

        for (int k = 0; k < 9 && !match; k++)
          {
            int gx = CLAMP (x + dx[k], 0, W - 1), gy = CLAMP (y + dy[k], 0, H - 1);
            const guint8 *g = gl_px + ((gsize) gy * W + gx) * 4;

            match = abs (c[2] - g[0]) <= 1 && abs (c[1] - g[1]) <= 1 && abs (c[0] - g[2]) <= 1;
            *moved += match && k > 0;
          }
        differ += !match;
      }
  return differ;
}

static void
test_cairo_matches_gl (void)
{
  GtkWidget *window;
  AiryStackView *view;
  AiryDisplay d;
  g_autofree guint8 *cairo_px = NULL;
  const guint8 *gl_px;
  int W, H, x, y, moved = 0, nan_seen = 0;
  double ox, oy;
  guint ix, iy;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = gtk_window_new ();
  view = AIRY_STACK_VIEW (airy_stack_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_set_default_size (GTK_WINDOW (window), 300, 260);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (GSK_IS_CAIRO_RENDERER (gtk_native_get_renderer (GTK_NATIVE (window))));
  airy_stack_view_set_stack (view, gradient_stack (8, 48, 40));
  airy_stack_view_set_sections (view, TRUE);
  /* every other texel edge on a pixel centre */
  airy_stack_view_set_zoom (view, 2.5);
  airy_display_init (&d);
  d.colormap = AIRY_COLORMAP_GRAY;
  d.lo = 0.0f;
  d.hi = 1020.0f;
  airy_stack_view_set_display (view, &d);
  airy_stack_view_set_cursor (view, 10, 20);
  iterate_until (airy_stack_view_drew_resident, view);

  /* the frame GTK draws: the slices in a cairo node, no GL texture */
  W = gtk_widget_get_width (GTK_WIDGET (view));
  H = gtk_widget_get_height (GTK_WIDGET (view));
  cairo_px = cairo_frame (window, view, W, H);
  gl_px = gl_frame (view, W, H);
  g_assert_cmpint (unmatched (cairo_px, gl_px, W, H, &moved), ==, 0);
  g_assert_cmpint (moved, <, W * H / 10);

  /* and the values where they should be: XY's pixel (20, 30) of plane z
   * through the display's LUT index, the NaN as the canvas */
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      if (airy_stack_view_widget_to_image (view, x + 0.5, y + 0.5, &ox, &oy))
        {
          const guint8 *c = cairo_px + ((gsize) y * W + x) * 4;

          /* centred coordinates: pixel i spans i ± 0.5 */
          ix = (guint) floor (ox + 0.5);
          iy = (guint) floor (oy + 0.5);
          /* not at a texel's edge */
          if (fabs (ox - ix) > 0.45 || fabs (oy - iy) > 0.45)
            continue;
          if (ix == 7 && iy == 9)
            {
              g_assert_cmpint (c[2], ==, 31);
              g_assert_cmpint (c[0], ==, 33);
              nan_seen++;
            }
          else if (ix == 20 && iy == 30)
            g_assert_cmpint (c[2], ==, airy_display_index (&d, value_at (20, 30, airy_stack_view_get_z (view))));
        }
  g_assert_cmpint (nan_seen, >, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The composite of three channels (red, green, blue ramps from black, each
 * between its own limits, added) on the cairo renderer: drawn by cairo like
 * the rest (it needed the GL path, and so a working GL context), with the
 * pixels GL draws; and GL's own composite again after the view is
 * realized anew (its textures went with the old context: black). */
static void
test_cairo_composite (void)
{
  static const GdkRGBA colors[3] = { { 1, 0, 0, 1 }, { 0, 1, 0, 1 }, { 0, 0, 1, 1 } };
  const float lo[3] = { 0, 0, 0 }, hi[3] = { 1020, 510, 2040 };
  AiryResident *channels[3];
  GtkWidget *window;
  AiryStackView *view;
  g_autofree guint8 *cairo_px = NULL;
  g_autofree guint8 *before = NULL;
  const guint8 *gl_px;
  int W, H, x, y, moved, checked = 0;
  guint c, z;
  double ox, oy;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = gtk_window_new ();
  view = AIRY_STACK_VIEW (airy_stack_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_set_default_size (GTK_WINDOW (window), 300, 260);
  gtk_window_present (GTK_WINDOW (window));
  airy_stack_view_set_stack (view, gradient_stack (8, 48, 40));
  airy_stack_view_set_sections (view, TRUE);
  airy_stack_view_set_zoom (view, 2.5);
  airy_stack_view_set_cursor (view, 10, 20);
  for (c = 0; c < 3; c++)
    {
      AiryStack *s = gradient_stack (8, 48, 40);

      /* channel c: the gradient + 100 c (the NaN stays) */
      for (gsize i = 0; i < (gsize) 8 * 48 * 40; i++)
        s->data[i] += 100.0f * c;
      channels[c] = airy_resident_new_host (s);
    }
  airy_stack_view_set_composite (view, 3, channels, lo, hi, colors);
  iterate_until (airy_stack_view_drew_resident, view);
  W = gtk_widget_get_width (GTK_WIDGET (view));
  H = gtk_widget_get_height (GTK_WIDGET (view));
  cairo_px = cairo_frame (window, view, W, H);

  /* XY's pixel (ix, iy): each channel's value through its own limits,
   * floor (255·t + 0.5), in its colour; the NaN adds the canvas per channel */
  z = airy_stack_view_get_z (view);
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      if (airy_stack_view_widget_to_image (view, x + 0.5, y + 0.5, &ox, &oy))
        {
          const guint8 *p = cairo_px + ((gsize) y * W + x) * 4;
          guint ix = (guint) floor (ox + 0.5), iy = (guint) floor (oy + 0.5);
          int want[3];

          if (fabs (ox - ix) > 0.45 || fabs (oy - iy) > 0.45 || (ix == 7 && iy == 9))
            continue;
          for (c = 0; c < 3; c++)
            {
              float v = value_at (ix, iy, z) + 100.0f * c, t = CLAMP (v / hi[c], 0.0f, 1.0f);

              want[c] = (int) floor (255.0 * t + 0.5);
            }
          g_assert_cmpint (p[2], ==, want[0]);
          g_assert_cmpint (p[1], ==, want[1]);
          g_assert_cmpint (p[0], ==, want[2]);
          checked++;
        }
  g_assert_cmpint (checked, >, 100);
  gl_px = gl_frame (view, W, H);
  g_assert_cmpint (unmatched (cairo_px, gl_px, W, H, &moved), ==, 0);
  before = g_memdup2 (gl_px, (gsize) W * H * 4);

  /* realized anew (taken out of the window and put back): GL's composite
   * is the same, not black */
  g_object_ref (view);
  gtk_window_set_child (GTK_WINDOW (window), NULL);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  g_object_unref (view);
  iterate_until (airy_stack_view_drew_resident, view);
  gl_px = gl_frame (view, W, H);
  g_assert_cmpint (unmatched (cairo_px, gl_px, W, H, &moved), ==, 0);
  g_assert_true (memcmp (before, gl_px, (gsize) W * H * 4) == 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

static guint
plot_frames (AiryPlot *plot)
{
  double room, gap;

  return airy_plot_get_label_fit (plot, &room, &gap);
}

static void
count_paint (GdkFrameClock *clock, gpointer data)
{
  (*(guint *) data)++;
}

/* frames of the window until the plot has drawn `frames`, or (more_paints
 * > 0) until that many more frames of the window were painted */
static void
wait_frames (GtkWidget *window, AiryPlot *plot, guint frames, guint *paints, guint more_paints)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (20, timeout_cb, &timed_out);
  guint until = *paints + more_paints;

  while (!timed_out && (more_paints ? *paints < until : plot_frames (plot) < frames))
    {
      gtk_widget_queue_draw (window);
      g_main_context_iteration (NULL, TRUE);
    }
  g_assert_false (timed_out);
  g_source_remove (id);
}

static void
test_plot_same_data (void)
{
  const float a[5] = { 0, 1, 4, 1, 0 }, b[5] = { 0, 2, 4, 2, 0 };
  GtkWidget *window, *box, *other;
  AiryPlot *plot;
  guint paints = 0, drawn;
  double width;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = gtk_window_new ();
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  plot = AIRY_PLOT (airy_plot_new ("profile"));
  other = gtk_drawing_area_new ();
  gtk_widget_set_size_request (GTK_WIDGET (plot), 200, 120);
  gtk_widget_set_size_request (other, 200, 40);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (plot));
  gtk_box_append (GTK_BOX (box), other);
  gtk_window_set_child (GTK_WINDOW (window), box);
  airy_plot_set_data (plot, a, 5, -1.0, 0.5, 2, TRUE);
  airy_plot_set_reference (plot, b, 5, -1.0, 0.5, 2);
  gtk_window_present (GTK_WINDOW (window));
  wait_frames (window, plot, 1, &paints, 0);
  g_signal_connect (gtk_widget_get_frame_clock (window), "after-paint", G_CALLBACK (count_paint), &paints);
  drawn = plot_frames (plot);
  width = airy_plot_get_fwhm (plot);
  g_assert_cmpfloat (width, >, 0.0);

  /* the same profile, reference and unit, and frames of the window that
   * redraw another widget: the plot keeps its pixels */
  for (guint i = 0; i < 3; i++)
    {
      airy_plot_set_data (plot, a, 5, -1.0, 0.5, 2, TRUE);
      airy_plot_set_reference (plot, b, 5, -1.0, 0.5, 2);
      airy_plot_set_unit (plot, NULL);
      gtk_widget_queue_draw (other);
      wait_frames (window, plot, 0, &paints, 1);
    }
  g_assert_cmpuint (plot_frames (plot), ==, drawn);
  g_assert_cmpfloat (airy_plot_get_fwhm (plot), ==, width);

  /* another profile is drawn, once */
  airy_plot_set_data (plot, b, 5, -1.0, 0.5, 2, TRUE);
  wait_frames (window, plot, drawn + 1, &paints, 0);
  wait_frames (window, plot, 0, &paints, 2);
  g_assert_cmpuint (plot_frames (plot), ==, drawn + 1);
  /* a peak floor above the peak: no width, and drawn so */
  airy_plot_set_peak_floor (plot, 10.0);
  g_assert_false (airy_plot_has_peak (plot));
  wait_frames (window, plot, drawn + 2, &paints, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A profile cut off at its peak (a line profile of a zoomed view whose
 * visible row ends at the PSF) has no width: its title says "no peak"
 * beside the reference's width, never "FWHM 0" */
static void
test_plot_title_no_peak (void)
{
  const float edge[5] = { 0, 1, 2, 3, 4 }, peak[5] = { 0, 2, 4, 2, 0 };
  AiryPlot *plot = AIRY_PLOT (g_object_ref_sink (airy_plot_new ("Line profile")));
  g_autofree char *both = NULL, *mine = NULL, *theirs = NULL, *neither = NULL;

  airy_plot_set_data (plot, peak, 5, -1.0, 0.5, 2, TRUE);
  airy_plot_set_reference (plot, peak, 5, -1.0, 0.5, 2);
  both = airy_plot_dup_title (plot);
  g_assert_cmpstr (both, ==, "Line profile \xe2\x80\x94 FWHM 1, ref. 1 \xc2\xb5m");
  airy_plot_set_data (plot, edge, 5, -1.0, 0.5, 4, TRUE);
  g_assert_cmpfloat (airy_plot_get_fwhm (plot), ==, 0.0);
  mine = airy_plot_dup_title (plot);
  g_assert_cmpstr (mine, ==, "Line profile \xe2\x80\x94 no peak, ref. 1 \xc2\xb5m");
  airy_plot_set_data (plot, peak, 5, -1.0, 0.5, 2, TRUE);
  airy_plot_set_reference (plot, edge, 5, -1.0, 0.5, 4);
  theirs = airy_plot_dup_title (plot);
  g_assert_cmpstr (theirs, ==, "Line profile \xe2\x80\x94 FWHM 1 \xc2\xb5m, ref.: no peak");
  airy_plot_set_data (plot, edge, 5, -1.0, 0.5, 4, TRUE);
  neither = airy_plot_dup_title (plot);
  g_assert_cmpstr (neither, ==, "Line profile \xe2\x80\x94 no peak");
  g_object_unref (plot);
}

int
main (int argc, char **argv)
{
  /* GTK's cairo renderer, as the app picks it on a software GL */
  g_setenv ("GSK_RENDERER", "cairo", TRUE);
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  have_display = gtk_init_check ();
  g_test_add_func ("/view-cairo/matches-gl", test_cairo_matches_gl);
  g_test_add_func ("/view-cairo/composite", test_cairo_composite);
  g_test_add_func ("/view-cairo/plot-same-data", test_plot_same_data);
  g_test_add_func ("/view-cairo/plot-title-no-peak", test_plot_title_no_peak);
  return g_test_run ();
}
