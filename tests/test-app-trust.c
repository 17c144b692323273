/* The app a microscopist can trust at a glance, under Xvfb: the cursor and
 * z stay where the physics is across new results, a profile without a peak
 * gives no width, what the view shows is always named. */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <string.h>
#include <gtk/gtk.h>
#include <glib/gstdio.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-window-private.h"
#include "airy-view-math.h"
#include "airy-test-gtk.h"
#include "airy-test-app.h"
#include "airy-plan-private.h"

static gboolean have_display;
static GtkApplication *app;

static GtkWidget *test_visible_label (GtkWidget *root, const char *part);

/* the cursor and z of the window's viewer, in µm */
static void
cursor_um (AiryWindow *window, double *x, double *y, double *z)
{
  AiryStackView *view = airy_stack_viewer_get_view (airy_window_get_viewer (window));
  const AiryStack *s = airy_stack_view_get_stack (view);
  guint cx, cy;

  airy_stack_view_get_cursor (view, &cx, &cy);
  *x = airy_pixel_to_um (cx, s->width, s->dx);
  *y = airy_pixel_to_um (cy, s->height, s->dy);
  *z = airy_stack_get_z (s, airy_stack_view_get_z (view));
}

/* the plane of s nearest z (µm) */
static guint
nearest_plane (const AiryStack *s, double z)
{
  guint k, best = 0;

  for (k = 1; k < s->depth; k++)
    if (fabs (airy_stack_get_z (s, k) - z) < fabs (airy_stack_get_z (s, best) - z))
      best = k;
  return best;
}

/* The 2048², 128-plane case at a quarter of its size (2048² takes
 * minutes on two cores): the widefield preset's field of view is
 * f·λ/(n·dx) = 80 µm at any N, so going from 128² (0.625 µm pixels) to
 * 512² (0.156 µm) puts the old pixel index 64 at −30 µm, exactly as 256
 * on 2048² did. The cursor and z must stay on the axis and the plane,
 * and the profiles measure the PSF. */
static void
test_cursor_kept_by_position (void)
{
  AiryWindow *window;
  AiryStackViewer *viewer;
  AiryStackView *view;
  const AiryStack *s;
  double x, y, z, z_before;
  guint cx, cy;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  viewer = airy_window_get_viewer (window);
  view = airy_stack_viewer_get_view (viewer);
  spin_set (window, "grid.shape[0]", 128);
  spin_set (window, "grid.shape[1]", 128);
  spin_set (window, "z.count", 16);
  wait_idle (window);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpuint (s->width, ==, 128);
  g_assert_cmpuint (s->depth, ==, 16);
  /* the axis, and plane 9 of 16 (z +0.267 µm) */
  airy_stack_view_set_cursor (view, 64, 64);
  airy_stack_view_set_z (view, 8);
  cursor_um (window, &x, &y, &z_before);
  g_assert_cmpfloat_with_epsilon (z_before, 0.2667, 1e-3);

  spin_set (window, "grid.shape[0]", 512);
  spin_set (window, "grid.shape[1]", 512);
  spin_set (window, "z.count", 32);
  wait_idle (window);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpuint (s->width, ==, 512);
  g_assert_cmpuint (s->depth, ==, 32);
  airy_stack_view_get_cursor (view, &cx, &cy);
  cursor_um (window, &x, &y, &z);
  g_assert_cmpuint (cx, ==, 256);
  g_assert_cmpuint (cy, ==, 256);
  g_assert_cmpfloat (x, ==, 0.0);
  g_assert_cmpfloat (y, ==, 0.0);
  /* the nearest of the new planes: 18 of 32 at +0.387 µm */
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, nearest_plane (s, z_before));
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, 17);
  /* the profiles through the PSF: FWHM ≈ 0.51 λ/NA = 0.34 µm, slightly
   * defocused */
  g_assert_true (airy_plot_has_peak (airy_stack_viewer_get_line_plot (viewer)));
  g_assert_cmpfloat (airy_plot_get_fwhm (airy_stack_viewer_get_line_plot (viewer)), >, 0.30);
  g_assert_cmpfloat (airy_plot_get_fwhm (airy_stack_viewer_get_line_plot (viewer)), <, 0.45);
  g_assert_true (airy_plot_has_peak (airy_stack_viewer_get_axial_plot (viewer)));

  /* far from the PSF (30 µm off the axis) the row is noise: no FWHM */
  airy_stack_view_set_cursor (view, 256 - 192, 256 - 192);
  g_assert_false (airy_plot_has_peak (airy_stack_viewer_get_line_plot (viewer)));
  g_assert_cmpfloat (airy_plot_get_fwhm (airy_stack_viewer_get_line_plot (viewer)), ==, 0.0);
  g_assert_false (airy_plot_has_peak (airy_stack_viewer_get_axial_plot (viewer)));

  /* Fit PSF frames the PSF and brings the cursor to its peak */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.fit-psf", NULL));
  airy_stack_view_get_cursor (view, &cx, &cy);
  g_assert_cmpuint (cx, ==, 256);
  g_assert_cmpuint (cy, ==, 256);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpfloat (fabs (airy_stack_get_z (s, airy_stack_view_get_z (view))), <, 0.2);

  /* a place the new grid does not hold: a pupil spacing of 1 µm halves
   * the field (±20 µm), the cursor 30 µm out goes to the PSF's peak; z
   * from +1 to +3 µm misses +0.39 µm: the peak's plane, the first */
  airy_stack_view_set_cursor (view, 256 + 192, 256);
  spin_set (window, "grid.spacing", 1.0);
  spin_set (window, "z.start", 1.0);
  spin_set (window, "z.stop", 3.0);
  wait_idle (window);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpfloat_with_epsilon (s->dx, 0.078125, 1e-6);
  airy_stack_view_get_cursor (view, &cx, &cy);
  g_assert_cmpuint (cx, ==, 256);
  g_assert_cmpuint (cy, ==, 256);
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, 0);
  g_assert_true (airy_plot_has_peak (airy_stack_viewer_get_line_plot (viewer)));
  close_window (window);
}

/* A preset switch keeps the place too: widefield's cursor on the axis at
 * plane 40 of 64 (+1.08 µm) is astigmatic's plane nearest +1.08 µm of 96 on
 * the axis of its 256² grid. */
static void
test_cursor_kept_on_preset_switch (void)
{
  AiryWindow *window;
  AiryStackView *view;
  const AiryStack *s;
  guint cx, cy;
  double z;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  view = airy_stack_viewer_get_view (airy_window_get_viewer (window));
  airy_stack_view_set_cursor (view, 256, 256);
  airy_stack_view_set_z (view, 40);
  s = airy_stack_view_get_stack (view);
  z = airy_stack_get_z (s, 40);
  g_assert_true (airy_window_load_preset (window, "astigmatic", NULL));
  wait_idle (window);
  s = airy_stack_view_get_stack (view);
  g_assert_cmpuint (s->width, ==, 256);
  airy_stack_view_get_cursor (view, &cx, &cy);
  g_assert_cmpuint (cx, ==, 128);
  g_assert_cmpuint (cy, ==, 128);
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, nearest_plane (s, z));
  g_assert_cmpfloat (fabs (airy_stack_get_z (s, airy_stack_view_get_z (view)) - z), <, 0.5 * s->dz + 1e-9);
  close_window (window);
}

/* The FWHM of a profile with one peak, and none for noise or two peaks. */
static void
test_fwhm_no_peak (void)
{
  float one[41], two[41];
  guint i;

  for (i = 0; i < 41; i++)
    {
      one[i] = (float) exp (-0.5 * pow ((i - 20.0) / 3.0, 2));
      two[i] = one[i] + (float) (0.8 * exp (-0.5 * pow ((i - 5.0) / 2.0, 2)));
    }
  /* 2√(2 ln 2)·σ = 7.06 samples */
  g_assert_cmpfloat_with_epsilon (airy_profile_fwhm (one, 41, 1.0, 20), 7.06, 0.05);
  g_assert_cmpfloat (airy_profile_fwhm (two, 41, 1.0, 20), ==, 0.0);
  g_assert_cmpfloat (airy_profile_fwhm (two, 41, 1.0, 5), ==, 0.0);
}

/* the value of the main view at the cursor */
static float
shown_value (AiryStackViewer *viewer)
{
  AiryStackView *view = airy_stack_viewer_get_view (viewer);
  g_autoptr(GError) error = NULL;
  guint cx, cy;
  float v;

  airy_stack_view_get_cursor (view, &cx, &cy);
  g_assert_true (airy_stack_view_read_value (view, cx, cy, &v, &error));
  return v;
}

/* Pinned NA 0.8 (its pupil clipped by the 128² grid), computed NA 0.3 (a
 * lower peak): after B and Compare: off
 * the view shows the result again, and whatever it shows is named above
 * it and in the header; in the difference, B swaps the image's sign. */
static void
test_reference_always_named (void)
{
  AiryWindow *window;
  AiryStackViewer *viewer;
  float ref_peak, result_peak, d;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  viewer = airy_window_get_viewer (window);
  spin_set (window, "grid.shape[0]", 128);
  spin_set (window, "grid.shape[1]", 128);
  wait_idle (window);
  airy_stack_view_set_cursor (airy_stack_viewer_get_view (viewer), 64, 64);
  airy_stack_view_set_z (airy_stack_viewer_get_view (viewer), 32);
  ref_peak = shown_value (viewer);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "Result");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.pin", NULL));
  spin_set (window, "elements[0].na", 0.3);
  wait_idle (window);
  result_peak = shown_value (viewer);
  g_assert_cmpfloat (result_peak, <, 0.7f * ref_peak);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "A: result");
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "A: result · 64 planes 128² · "));

  /* B, then Compare: off: the result, named so */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.toggle-ab", NULL));
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "A: reference");
  g_assert_cmpfloat (shown_value (viewer), ==, ref_peak);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.compare-off", NULL));
  g_assert_false (airy_stack_viewer_get_showing_b (viewer));
  g_assert_cmpfloat (shown_value (viewer), ==, result_peak);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "Result");
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "Result · 64 planes 128² · "));
  /* B without a comparison flips to the reference: said above the view
   * and in the header */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.toggle-ab", NULL));
  g_assert_cmpfloat (shown_value (viewer), ==, ref_peak);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "Reference (pinned): not the current result");
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "Reference (pinned): not the current result · "));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.toggle-ab", NULL));

  /* the difference: result − reference, and B swaps the image */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.compare-diff", NULL));
  d = shown_value (viewer);
  g_assert_cmpfloat_with_epsilon (d, result_peak - ref_peak, 1e-6 * ref_peak);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "Difference: result − reference");
  {
    /* the scale bar on the white of zero: edged in dark */
    AiryStackView *view = airy_stack_viewer_get_view (viewer);
    graphene_rect_t xy, xz, yz;
    g_autofree guint8 *rgb = NULL;
    guint w, h, bx, by, y;
    double px;

    spin_loop (200);
    rgb = airy_stack_viewer_render_screen (viewer, &w, &h);
    g_assert_nonnull (rgb);
    airy_stack_view_get_section_rects (view, &xy, &xz, &yz);
    g_assert_cmpfloat (airy_stack_view_get_scale_bar (view, &px), >, 0);
    bx = (guint) (xy.origin.x + 10 + px / 2);
    by = (guint) (xy.origin.y + xy.size.height - 12);
    /* the background there is zero, white: the bar's dark edge shows */
    g_assert_cmpuint (rgb[((gsize) (by - 8) * w + bx) * 3], >=, 0xf0);
    for (y = by - 4; y < by + 6 && rgb[((gsize) y * w + bx) * 3] >= 0x80; y++)
      ;
    g_assert_cmpuint (y, <, by + 6);
  }
  /* the signed colormap's legend above the view */
  g_assert_nonnull (test_visible_label (GTK_WIDGET (viewer), "Difference: result − reference  ·  red: the result above the reference, blue: below it"));
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "Difference: result − reference · "));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.toggle-ab", NULL));
  g_assert_cmpfloat_with_epsilon (shown_value (viewer), ref_peak - result_peak, 1e-6 * ref_peak);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "Difference: reference − result");
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "Difference: reference − result · "));
  close_window (window);
}

/* keys pressed as a person does, through the X server (xdotool's XTEST,
 * the pointer over the bench so that the window has the focus and the
 * viewer does not take it) */
static void
press_keys (const char *keys)
{
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  g_autofree char *move = NULL, *press = NULL;
  int status;

  g_assert_nonnull (xdotool);   /* dev.sh installs it with the test packages */
  move = g_strdup_printf ("%s mousemove 150 760", xdotool);
  press = g_strdup_printf ("%s key --clearmodifiers %s", xdotool, keys);
  g_assert_true (g_spawn_command_line_sync (move, NULL, NULL, &status, NULL));
  spin_loop (100);
  g_assert_true (g_spawn_command_line_sync (press, NULL, NULL, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  spin_loop (300);
}

/* Ctrl+Z with the focus in the NA field undoes the NA edit (0.5 → 0.8)
 * and the field shows 0.8, not a blank text; Ctrl+Shift+Z redoes it. */
static void
test_undo_from_field (void)
{
  AiryWindow *window;
  GtkWidget *na;
  AiryElement *objective;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  spin_set (window, "grid.shape[0]", 128);
  spin_set (window, "grid.shape[1]", 128);
  wait_idle (window);
  gtk_expander_set_expanded (GTK_EXPANDER (airy_bench_panel_get_editor (airy_window_get_panel (window),
                                                                        "elements[0]")), TRUE);
  na = airy_bench_panel_get_editor (airy_window_get_panel (window), "elements[0].na");
  /* typed into the field and committed with Tab, as a person edits: the
   * focus goes on to the next field (Power) */
  gtk_widget_grab_focus (na);
  spin_loop (100);
  press_keys ("ctrl+a 0 period 5 Tab");
  wait_idle (window);
  objective = g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 0);
  g_assert_cmpfloat (airy_element_get_double (objective, "na"), ==, 0.5);
  g_assert_true (GTK_IS_EDITABLE (gtk_root_get_focus (GTK_ROOT (window))));

  press_keys ("ctrl+z");
  wait_idle (window);
  /* no field blanked */
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (airy_bench_panel_get_editor (airy_window_get_panel (window),
                                                                                     "elements[0].power"))), !=, "");
  objective = g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 0);
  g_assert_cmpfloat (airy_element_get_double (objective, "na"), ==, 0.8);
  na = airy_bench_panel_get_editor (airy_window_get_panel (window), "elements[0].na");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (na)), ==, "0.8000");

  press_keys ("ctrl+shift+z");
  wait_idle (window);
  objective = g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 0);
  g_assert_cmpfloat (airy_element_get_double (objective, "na"), ==, 0.5);
  close_window (window);
}

/* ---- stale panels ---- */

/* a 64² stack of `depth` planes with a Gaussian on the axis */
static AiryStack *
blob (guint depth)
{
  AiryStack *s = airy_stack_new (depth, 64, 64);
  guint z, y, x;

  for (z = 0; z < depth; z++)
    for (y = 0; y < 64; y++)
      for (x = 0; x < 64; x++)
        s->data[((gsize) z * 64 + y) * 64 + x] = (float) exp (-((x - 32.0) * (x - 32.0) + (y - 32.0) * (y - 32.0)) / 18.0
                                                            - (z - depth / 2.0) * (z - depth / 2.0) / 8.0);
  s->dx = s->dy = 0.1;
  s->dz = 0.2;
  s->z0 = -0.2 * (depth / 2);
  return s;
}

/* a window of width × height (0: GTK's default) holding a new viewer, shown */
static GtkWidget *
viewer_window_new (int width, int height, AiryStackViewer **viewer)
{
  GtkWidget *window = gtk_window_new ();

  if (width > 0)
    gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  *viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (*viewer));
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

/* A one-plane image after a stack: no axial curve is left of the stack. */
static void
test_axial_one_plane (void)
{
  GtkWidget *window;
  AiryStackViewer *viewer;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = viewer_window_new (0, 0, &viewer);
  airy_stack_viewer_set_stack (viewer, blob (9));
  g_assert_cmpuint (airy_plot_get_n_samples (airy_stack_viewer_get_axial_plot (viewer)), ==, 9);
  g_assert_true (airy_plot_has_peak (airy_stack_viewer_get_axial_plot (viewer)));
  airy_stack_viewer_set_stack (viewer, blob (1));
  g_assert_cmpuint (airy_plot_get_n_samples (airy_stack_viewer_get_axial_plot (viewer)), ==, 0);
  g_assert_false (airy_plot_has_peak (airy_stack_viewer_get_axial_plot (viewer)));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The viewer alone (airy --view) names the file it shows, also one opened
 * later from its own Open; reopening a stack keeps the plane. */
static void
test_view_title_follows_open (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-trust-XXXXXX", NULL);
  g_autofree char *one = g_build_filename (dir, "one.tif", NULL);
  g_autofree char *two = g_build_filename (dir, "two.tif", NULL);
  g_autoptr(AiryStack) a = blob (9), b = blob (9);
  AiryWindow *window;
  AiryStackViewer *viewer;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  g_assert_true (airy_tiff_write (one, a, NULL));
  g_assert_true (airy_tiff_write (two, b, NULL));
  window = test_new_window (app, NULL);
  viewer = airy_window_get_viewer (window);
  g_assert_true (airy_window_view_file (window, one, NULL));
  g_assert_cmpstr (airy_window_get_status (window), ==, one);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "one.tif — Airy");
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "one.tif");
  airy_stack_view_set_z (airy_stack_viewer_get_view (viewer), 6);
  /* the viewer's own Open (what viewer.open's chooser does) */
  g_assert_true (airy_stack_viewer_open (viewer, two, NULL));
  g_assert_cmpstr (airy_window_get_status (window), ==, two);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "two.tif — Airy");
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "two.tif");
  /* the same plane of the same geometry */
  g_assert_cmpuint (airy_stack_view_get_z (airy_stack_viewer_get_view (viewer)), ==, 6);
  g_assert_true (airy_stack_viewer_open (viewer, two, NULL));
  g_assert_cmpuint (airy_stack_view_get_z (airy_stack_viewer_get_view (viewer)), ==, 6);
  close_window (window);
  g_unlink (one);
  g_unlink (two);
  g_rmdir (dir);
}

/* A run cancelled, then an edit: the header says "computing", not
 * "cancelled"; a refused NA takes the last good NA's warning with it (the
 * panel's figures are the refused system's); a microscope → PSF round
 * trip keeps the pupil spacing. */
static void
test_header_warning_mode (void)
{
  AiryWindow *window;
  GtkWidget *na, *mode;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  spin_set (window, "elements[0].na", 0.7);
  g_assert_true (airy_worker_is_busy (airy_window_get_worker (window)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel", NULL));
  g_assert_cmpstr (airy_window_get_status (window), ==, "cancelled: the view shows the last result");
  spin_set (window, "elements[0].na", 0.75);
  g_assert_cmpstr (airy_window_get_status (window), ==, "computing… (the view shows the last result)");
  wait_idle (window);
  g_assert_true (g_str_has_prefix (airy_window_get_status (window), "64 planes 512² · "));

  spin_set (window, "elements[0].na", 0.95);
  wait_idle (window);
  g_assert_nonnull (test_visible_label (GTK_WIDGET (window), "NA = 0.95)"));
  na = airy_bench_panel_get_editor (airy_window_get_panel (window), "elements[0].na");
  gtk_editable_set_text (GTK_EDITABLE (na), "1.5");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  spin_loop (50);
  g_assert_nonnull (test_visible_label (GTK_WIDGET (window), "NA (Objective point source) must be at most n = 1.33, got 1.5"));
  g_assert_null (test_visible_label (GTK_WIDGET (window), "NA = 0.95)"));
  gtk_editable_set_text (GTK_EDITABLE (na), "0.8");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  wait_idle (window);
  /* a value below its range, with its unit: said for people too */
  {
    GtkWidget *wl = airy_bench_panel_get_editor (airy_window_get_panel (window), "spectrum.wavelengths");

    g_assert_nonnull (wl);
    gtk_editable_set_text (GTK_EDITABLE (wl), "0.001");
    g_signal_emit_by_name (wl, "activate");
    spin_loop (50);
    g_assert_nonnull (test_visible_label (GTK_WIDGET (window), "Wavelengths (µm) must be at least 0.01 µm, got 0.001"));
    gtk_editable_set_text (GTK_EDITABLE (wl), "0.532");
    g_signal_emit_by_name (wl, "activate");
    wait_idle (window);
  }

  spin_set (window, "grid.shape[0]", 128);
  spin_set (window, "grid.shape[1]", 128);
  spin_set (window, "grid.spacing", 0.9);
  wait_idle (window);
  mode = airy_bench_panel_get_editor (airy_window_get_panel (window), "mode");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (mode), 1);
  wait_idle (window);
  g_assert_true (airy_system_is_microscope (airy_window_get_system (window)));
  /* the camera keeps the PSF's pixels: 100·0.532/(1.33·128·0.9) µm */
  g_assert_cmpfloat_with_epsilon (airy_system_get_spacing (airy_window_get_system (window)),
                                  100 * 0.532 / (1.33 * 128 * 0.9), 1e-9);
  mode = airy_bench_panel_get_editor (airy_window_get_panel (window), "mode");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (mode), 0);
  wait_idle (window);
  g_assert_false (airy_system_is_microscope (airy_window_get_system (window)));
  g_assert_cmpfloat_with_epsilon (airy_system_get_spacing (airy_window_get_system (window)), 0.9, 1e-12);
  close_window (window);
}

/* ---- exports ---- */

static gboolean
flag_readback (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* the view's GL frame (RGBA, top row first): the canvas without the
 * overlays that GTK draws on top */
static const guint8 *
gl_frame (AiryStackView *view, int *w, int *h)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (20, flag_readback, &timed_out);
  const guint8 *px = NULL;

  while (!gtk_widget_get_mapped (GTK_WIDGET (view)) && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  airy_stack_view_request_readback (view);
  while (!timed_out && (px = airy_stack_view_get_readback (view, w, h)) == NULL)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (id);
  g_assert_false (timed_out);
  return px;
}

/* Export View as PNG writes what the screen shows: zoomed in 4× with the
 * sections, the file is the view's size, its pixels are the GL frame's
 * wherever no overlay is drawn, and the scale bar drawn over it is white
 * (95 % opaque) in the file; the full slice stays its own action (64² pixels). */
static void
test_export_is_screen (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-trust-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "view.png", NULL);
  g_autofree char *slice = g_build_filename (dir, "slice.png", NULL);
  g_autoptr(GdkTexture) file = NULL, full = NULL;
  g_autofree guint8 *bgra = NULL;
  GtkWidget *window;
  AiryStackViewer *viewer;
  AiryStackView *view;
  const guint8 *gl;
  double len, px, vx, vy, vw, vh;
  graphene_rect_t xy, xz, yz;
  int w, h, fw, fh, x, y, same = 0, bx, by;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = viewer_window_new (1000, 700, &viewer);
  view = airy_stack_viewer_get_view (viewer);
  airy_stack_viewer_set_stack (viewer, blob (9));
  airy_stack_view_set_sections (view, TRUE);
  airy_stack_view_set_zoom (view, 4.0);
  spin_loop (200);
  gl = gl_frame (view, &w, &h);
  g_assert_cmpint (w, ==, gtk_widget_get_width (GTK_WIDGET (view)));
  g_assert_true (airy_stack_viewer_export_screen (viewer, path, NULL));
  file = gdk_texture_new_from_filename (path, NULL);
  g_assert_nonnull (file);
  fw = gdk_texture_get_width (file);
  fh = gdk_texture_get_height (file);
  g_assert_cmpint (fw, ==, w);
  g_assert_cmpint (fh, ==, h);
  bgra = g_malloc ((gsize) fw * fh * 4);
  gdk_texture_download (file, bgra, fw * 4);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      {
        guint32 v = *(guint32 *) (bgra + ((gsize) y * w + x) * 4);
        const guint8 *g = gl + ((gsize) y * w + x) * 4;

        same += ((v >> 16) & 0xff) == g[0] && ((v >> 8) & 0xff) == g[1] && (v & 0xff) == g[2];
      }
  /* all but the overlays: the cursor's lines, the bar and its label */
  g_test_message ("%d of %d pixels as in the GL frame", same, w * h);
  g_assert_cmpint (same, >=, (int) (0.97 * w * h));
  g_assert_cmpint (same, <, w * h);
  /* the scale bar: white in the file, not in the GL frame */
  airy_stack_view_get_section_rects (view, &xy, &xz, &yz);
  g_assert_cmpfloat (xz.size.height, >, 0);
  len = airy_stack_view_get_scale_bar (view, &px);
  g_assert_cmpfloat (len, >, 0);
  bx = (int) (xy.origin.x + 10 + px / 2);
  by = (int) (xy.origin.y + xy.size.height - 12 + 1);
  g_assert_cmpuint ((*(guint32 *) (bgra + ((gsize) by * w + bx) * 4) >> 8) & 0xff, >=, 0xf0);
  g_assert_cmpuint (gl[((gsize) by * w + bx) * 4 + 1], <, 0xc0);
  /* zoomed: the screen shows a part of the slice */
  airy_stack_view_get_visible (view, &vx, &vy, &vw, &vh);
  g_assert_cmpfloat (vw, <=, 64.0);

  /* the whole slice, its own action */
  g_assert_true (airy_stack_viewer_export_view (viewer, slice, 1, NULL));
  full = gdk_texture_new_from_filename (slice, NULL);
  g_assert_cmpint (gdk_texture_get_width (full), ==, 64);
  g_assert_true (g_action_group_has_action (airy_stack_viewer_get_actions (viewer), "export-slice-png"));
  gtk_window_destroy (GTK_WINDOW (window));
  g_unlink (path);
  g_unlink (slice);
  g_rmdir (dir);
}

/* ---- the composite of a result's wavelength channels ---- */

/* a Gaussian of σ = sigma µm on the axis, 64² pixels of dx µm, 9 planes */
static AiryStack *
channel_stack (double dx, double sigma, float peak, double wavelength)
{
  AiryStack *s = airy_stack_new (9, 64, 64);
  double w = wavelength;
  guint z, y, x;

  for (z = 0; z < 9; z++)
    for (y = 0; y < 64; y++)
      for (x = 0; x < 64; x++)
        {
          double rx = (x - 32.0) * dx, ry = (y - 32.0) * dx;

          s->data[((gsize) z * 64 + y) * 64 + x] = peak * (float) exp (-(rx * rx + ry * ry) / (2 * sigma * sigma)
                                                                      - (z - 4.0) * (z - 4.0) / 8.0);
        }
  s->dx = s->dy = dx;
  s->dz = 0.2;
  s->z0 = -0.8;
  airy_stack_set_provenance (s, 1, &w, &(double) { 1.0 }, NULL);
  return s;
}

/* Three wavelengths (FF-lens pixels and widths ∝ λ), their composite: on
 * the axis in focus each channel at its own maximum, so the XY pixel there
 * is red, green and blue at full scale each (white); off the axis each
 * channel its own share of its peak (the wider the brighter), in the
 * colour of its wavelength; another channel shown keeps the µm on screen;
 * Pin labels A the result (it was "A: reference" beside "B: reference")
 * and keeps the composite. */
static void
test_composite_colours (void)
{
  const double lambda[3] = { 0.45, 0.53, 0.61 }, sigma = 0.4;
  GtkWidget *window, *composite;
  AiryStackViewer *viewer;
  AiryStackView *view;
  GPtrArray *channels;
  const guint8 *px;
  double zoom, ix, iy, wx, wy;
  int w, h, c;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = viewer_window_new (900, 700, &viewer);
  view = airy_stack_viewer_get_view (viewer);
  airy_stack_viewer_set_stack (viewer, channel_stack (0.53 * 0.1, sigma, 3.0f, 0.53));
  channels = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
  for (c = 0; c < 3; c++)
    g_ptr_array_add (channels, channel_stack (lambda[c] * 0.1, sigma * lambda[c] / 0.53, 1.0f + c, lambda[c]));
  airy_stack_viewer_set_channels (viewer, channels);
  airy_stack_view_set_z (view, 4);
  gl_frame (view, &w, &h);
  zoom = airy_stack_view_get_zoom (view);
  composite = test_find_widget (GTK_WIDGET (viewer), GTK_TYPE_CHECK_BUTTON, NULL);
  while (composite && g_strcmp0 (gtk_check_button_get_label (GTK_CHECK_BUTTON (composite)), "Composite") != 0)
    composite = NULL;
  {
    /* the check labelled Composite */
    GtkWidget *root = GTK_WIDGET (viewer), *stack[64];
    int top = 0;

    stack[top++] = root;
    composite = NULL;
    while (top > 0 && composite == NULL)
      {
        GtkWidget *wdg = stack[--top], *child;

        if (GTK_IS_CHECK_BUTTON (wdg) && g_strcmp0 (gtk_check_button_get_label (GTK_CHECK_BUTTON (wdg)), "Composite") == 0)
          composite = wdg;
        for (child = gtk_widget_get_first_child (wdg); child && top < 63; child = gtk_widget_get_next_sibling (child))
          stack[top++] = child;
      }
  }
  g_assert_nonnull (composite);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (composite), TRUE);
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 3);
  px = gl_frame (view, &w, &h);
  g_assert_cmpfloat (airy_stack_view_get_zoom (view), ==, zoom);
  /* the axis: widget point of image pixel 32, 32 (its centre) */
  for (wy = 0; wy < h; wy++)
    {
      if (airy_stack_view_widget_to_image (view, w / 2.0, wy, &ix, &iy) && floor (iy) == 32)
        break;
    }
  for (wx = 0; wx < w; wx++)
    if (airy_stack_view_widget_to_image (view, wx + 0.5, wy + 0.5, &ix, &iy) && floor (ix) == 32 && floor (iy) == 32)
      break;
  {
    const guint8 *p = px + ((gsize) wy * w + (gsize) wx) * 4;

    g_test_message ("axis at %g, %g: %u %u %u", wx, wy, p[0], p[1], p[2]);
    g_assert_cmpuint (p[0], >=, 250);
    g_assert_cmpuint (p[1], >=, 250);
    g_assert_cmpuint (p[2], >=, 250);
    /* 0.4 µm to the right: the wider, redder channels brighter there,
     * each in its wavelength's colour (450 nm blue, 610 nm red; none black) */
    p = px + ((gsize) wy * w + (gsize) (wx + 0.4 / (0.045 / zoom))) * 4;
    g_test_message ("0.4 µm off the axis: %u %u %u", p[0], p[1], p[2]);
    g_assert_cmpuint (p[2], >, 20);
    g_assert_cmpuint (p[2], <, p[1]);
    g_assert_cmpuint (p[1], <, p[0]);
  }
  /* channel 3 (pixels of 0.061 µm, channel 1 0.045 µm): the same µm on screen */
  airy_stack_viewer_set_hyperstack_plane (viewer, 2, 0);
  gl_frame (view, &w, &h);
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 3);
  g_assert_cmpfloat_with_epsilon (0.061 / airy_stack_view_get_zoom (view), 0.045 / zoom, 0.02 * 0.045 / zoom);
  /* pinned: A is the result, still the composite; B the reference */
  airy_stack_viewer_pin_reference (viewer);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "A: result");
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 3);
  g_assert_true (gtk_widget_get_sensitive (composite));
  /* B swaps: the reference has no channels to put over each other */
  airy_stack_viewer_toggle_ab (viewer);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "A: reference");
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 0);
  g_assert_false (gtk_widget_get_sensitive (composite));
  airy_stack_viewer_toggle_ab (viewer);
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 3);
  airy_stack_viewer_set_compare (viewer, AIRY_COMPARE_OFF);
  g_assert_cmpstr (airy_stack_viewer_get_shown_label (viewer), ==, "Result");
  g_assert_cmpuint (airy_stack_view_get_composite (view), ==, 3);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---- the minor list ---- */

/* Copy Command Line's airy-sim: its path where PATH does not find it,
 * the name where it does, and a note where there is none */
static void
test_sim_command (void)
{
  g_autofree char *dir = g_path_get_dirname (g_getenv ("AIRY_SIM"));
  g_autofree char *path = g_strdup (g_getenv ("PATH"));
  g_autofree char *quoted = g_shell_quote (g_getenv ("AIRY_SIM"));
  g_autofree char *with = g_strdup_printf ("%s:/usr/bin:/bin", dir);
  g_autofree char *a = NULL, *b = NULL, *c = NULL, *note = NULL;

  g_setenv ("PATH", "/usr/bin:/bin", TRUE);
  a = _airy_window_sim_command (dir, &note);
  g_assert_cmpstr (a, ==, quoted);
  g_assert_null (note);
  g_setenv ("PATH", with, TRUE);
  b = _airy_window_sim_command (dir, &note);
  g_assert_cmpstr (b, ==, "airy-sim");
  g_assert_null (note);
  g_setenv ("PATH", "/usr/bin:/bin", TRUE);
  c = _airy_window_sim_command ("/nonexistent", &note);
  g_assert_cmpstr (c, ==, "airy-sim");
  g_assert_true (g_str_has_prefix (note, "# airy-sim was found neither beside airy nor on PATH"));
  g_setenv ("PATH", path, TRUE);
}

/* The preset's description goes with the first edit (it no longer says
 * what the system is), and comes back with an undo. */
static void
test_description_follows_edits (void)
{
  AiryWindow *window;
  g_autofree char *json = NULL;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  g_assert_cmpstr (airy_system_get_description (airy_window_get_system (window)), ==,
                   "Interactive default: widefield PSF, 512², pupil spacing 0.5 µm, 64 planes over ±4 µm");
  spin_set (window, "grid.shape[0]", 256);
  wait_idle (window);
  g_assert_null (airy_system_get_description (airy_window_get_system (window)));
  json = airy_system_to_json (airy_window_get_system (window));
  g_assert_null (strstr (json, "Interactive default"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  wait_idle (window);
  g_assert_cmpstr (airy_system_get_description (airy_window_get_system (window)), ==,
                   "Interactive default: widefield PSF, 512², pupil spacing 0.5 µm, 64 planes over ±4 µm");
  close_window (window);
}

/* runs of the profile's yellow down column x of an RGB image */
static guint
yellow_runs (const guint8 *rgb, guint w, guint h, guint x)
{
  guint y, runs = 0;
  gboolean in = FALSE;

  for (y = 0; y < h; y++)
    {
      const guint8 *p = rgb + ((gsize) y * w + x) * 3;
      gboolean yellow = p[0] > 120 && p[1] > 90 && p[2] < 90 && p[0] > p[2] + 60;

      runs += yellow && !in;
      in = yellow;
    }
  return runs;
}

/* A profile 9 pixels wide is drawn with the edges of its band: three
 * yellow lines across the column, where a 1-pixel profile has one. */
static void
test_line_width_drawn (void)
{
  GtkWidget *window, *width;
  AiryStackViewer *viewer;
  AiryStackView *view;
  g_autofree guint8 *one = NULL, *nine = NULL;
  double ix, iy;
  guint w, h, wx = 0, wy;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = viewer_window_new (900, 700, &viewer);
  view = airy_stack_viewer_get_view (viewer);
  airy_stack_viewer_set_stack (viewer, blob (9));
  airy_stack_view_set_sections (view, FALSE);
  airy_stack_view_set_line (view, 4, 30, 60, 30);
  gl_frame (view, (int *) &w, (int *) &h);
  /* a column near the left edge of what XY shows (dark there) */
  {
    double vx, vy, vw, vh;

    airy_stack_view_get_visible (view, &vx, &vy, &vw, &vh);
    wy = h / 2;
    for (wx = 0; wx < w; wx++)
      if (airy_stack_view_widget_to_image (view, wx + 0.5, wy, &ix, &iy) && floor (ix) == ceil (vx) + 1)
        break;
  }
  g_assert_cmpuint (wx, <, w);
  one = airy_stack_viewer_render_screen (viewer, &w, &h);
  g_assert_cmpuint (yellow_runs (one, w, h, wx + 2), ==, 1);
  width = test_find_widget (GTK_WIDGET (viewer), GTK_TYPE_SPIN_BUTTON, "Width");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (width), 9);
  g_assert_cmpuint (airy_stack_view_get_line_width (view), ==, 9);
  spin_loop (100);
  nine = airy_stack_viewer_render_screen (viewer, &w, &h);
  g_assert_cmpuint (yellow_runs (nine, w, h, wx + 2), ==, 3);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Under a German locale one decimal sign, the locale's: the spin buttons'
 * "0,5000" and the lists' "0,45; 0,53; 0,61", which read back as typed. */
static void
test_german_decimals (void)
{
  AiryWindow *window;
  GtkWidget *list;
  const AirySpectrum *sp;
  g_autofree char *old = g_strdup (setlocale (LC_ALL, NULL));

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  /* dev.sh makes the locale (localedef) with the test packages */
  g_assert_nonnull (setlocale (LC_ALL, "de_DE.UTF-8"));
  window = test_new_window (app, "widefield");
  spin_set (window, "grid.shape[0]", 64);
  spin_set (window, "grid.shape[1]", 64);
  wait_idle (window);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (airy_bench_panel_get_editor (airy_window_get_panel (window),
                                                                                     "grid.spacing"))), ==, "0,5000");
  list = airy_bench_panel_get_editor (airy_window_get_panel (window), "spectrum.wavelengths");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (list)), ==, "0,532");
  gtk_editable_set_text (GTK_EDITABLE (airy_bench_panel_get_editor (airy_window_get_panel (window), "spectrum.weights")),
                         "1; 1; 2");
  gtk_editable_set_text (GTK_EDITABLE (list), "0,45; 0,53; 0,61");
  g_signal_emit_by_name (list, "activate");
  wait_idle (window);
  sp = airy_system_get_spectrum (airy_window_get_system (window));
  g_assert_cmpuint (sp->n, ==, 3);
  g_assert_cmpfloat (sp->wavelengths[0], ==, 0.45);
  g_assert_cmpfloat (sp->wavelengths[2], ==, 0.61);
  list = airy_bench_panel_get_editor (airy_window_get_panel (window), "spectrum.wavelengths");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (list)), ==, "0,45; 0,53; 0,61");
  close_window (window);
  setlocale (LC_ALL, old);
}

/* Under German the refused NA is said in German, worded by the panel from
 * the range the engine's error carries (not by reading its English or
 * German text); the tooltip keeps the engine's words with the JSON path. */
static void
test_german_refusal (void)
{
  AiryWindow *window;
  GtkWidget *na, *said;
  g_autofree char *old = g_strdup (setlocale (LC_ALL, NULL));

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  test_use_language ("de");
  g_assert_nonnull (setlocale (LC_ALL, "de_DE.UTF-8"));
  window = test_new_window (app, "widefield");
  gtk_expander_set_expanded (GTK_EXPANDER (airy_bench_panel_get_editor (airy_window_get_panel (window), "elements[0]")), TRUE);
  na = airy_bench_panel_get_editor (airy_window_get_panel (window), "elements[0].na");
  gtk_editable_set_text (GTK_EDITABLE (na), "1,5");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  spin_loop (50);
  said = test_visible_label (GTK_WIDGET (window), "NA (Objektiv-Punktquelle) darf höchstens n = 1,33 sein, angegeben: 1,5");
  g_assert_nonnull (said);
  g_assert_cmpstr (gtk_widget_get_tooltip_text (said), ==, "elements[0].na: muss in [0,001, n=1,33] liegen, ist aber 1,5");
  g_assert_true (gtk_widget_has_css_class (na, "error"));
  close_window (window);
  test_use_language ("C");
  setlocale (LC_ALL, old);
}

/* every (label, action) of a menu model and its sections and submenus */
static void
menu_items (GMenuModel *model, GPtrArray *out)
{
  int i, n = g_menu_model_get_n_items (model);

  for (i = 0; i < n; i++)
    {
      g_autofree char *label = NULL, *action = NULL;
      g_autoptr(GMenuModel) section = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);
      g_autoptr(GMenuModel) sub = g_menu_model_get_item_link (model, i, G_MENU_LINK_SUBMENU);

      g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_LABEL, "s", &label);
      g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &action);
      if (label)
        g_ptr_array_add (out, g_strdup_printf ("%s|%s", label, action ? action : ""));
      if (section)
        menu_items (section, out);
      if (sub)
        menu_items (sub, out);
    }
}

/* the rows a menu shows at once: its items and its sections', not what
 * its submenus hold (about 30 pixels each) */
static guint
menu_rows (GMenuModel *model)
{
  int i, n = g_menu_model_get_n_items (model);
  guint rows = 0;

  for (i = 0; i < n; i++)
    {
      g_autoptr(GMenuModel) section = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);

      rows += section ? menu_rows (section) : 1;
    }
  return rows;
}

static GtkWidget *
find_menu_button (GtkWidget *root)
{
  GtkWidget *child, *found;

  if (GTK_IS_MENU_BUTTON (root) && gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (root)))
    return root;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = find_menu_button (child)) != NULL)
      return found;
  return NULL;
}

/* The bench's menu: presets with what they are, Quit within an 800-pixel
 * screen (the exports in a submenu); Export View and Export Full Slice
 * apart. */
static void
test_bench_menu (void)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  AiryWindow *window;
  GtkWidget *button;
  gboolean quit = FALSE, preset = FALSE, view = FALSE, slice = FALSE, export = FALSE;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  button = find_menu_button (gtk_window_get_titlebar (GTK_WINDOW (window)));
  g_assert_nonnull (button);
  menu_items (gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (button)), items);
  for (i = 0; i < items->len; i++)
    {
      const char *item = g_ptr_array_index (items, i);

      quit |= g_str_equal (item, "_Quit|app.quit");
      preset |= g_str_equal (item, "widefield — Interactive default|win.new");
      export |= g_str_equal (item, "_Export|");
      view |= g_str_equal (item, "Export View as PNG…|viewer.export-png");
      slice |= g_str_equal (item, "Export Full Slice as PNG…|viewer.export-slice-png");
    }
  g_assert_true (quit);
  g_assert_true (preset);
  g_assert_true (view);
  g_assert_true (slice);
  g_assert_true (export);
  /* the whole menu fits an 800-pixel screen: Quit is on it */
  g_assert_cmpuint (menu_rows (gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (button))), <=, 20);
  close_window (window);
}

/* An edit is planned once: the window's check on the UI thread is the
 * engine's geometry (no plan, no file read), and the worker's run makes
 * the one plan (it used to plan for the check and again for the run). */
static void
test_plans_once_per_edit (void)
{
  AiryWindow *window;
  guint plans;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  plans = _airy_plan_count ();
  spin_set (window, "elements[0].na", 0.5);
  wait_idle (window);
  g_assert_cmpuint (airy_window_get_shown (window), ==, 2);
  g_assert_cmpuint (_airy_plan_count (), ==, plans + 1);
  close_window (window);
}

int
main (int argc, char **argv)
{
  int status;

  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestTrust", 0, &have_display);

  g_test_add_func ("/trust/fwhm/no-peak", test_fwhm_no_peak);
  g_test_add_func ("/trust/cursor/kept-by-position", test_cursor_kept_by_position);
  g_test_add_func ("/trust/cursor/preset-switch", test_cursor_kept_on_preset_switch);
  g_test_add_func ("/trust/compare/always-named", test_reference_always_named);
  g_test_add_func ("/trust/undo/from-field", test_undo_from_field);
  g_test_add_func ("/trust/stale/axial-one-plane", test_axial_one_plane);
  g_test_add_func ("/trust/stale/view-title", test_view_title_follows_open);
  g_test_add_func ("/trust/stale/header-warning-mode", test_header_warning_mode);
  g_test_add_func ("/trust/export/screen", test_export_is_screen);
  g_test_add_func ("/trust/composite/colours", test_composite_colours);
  g_test_add_func ("/trust/minor/sim-command", test_sim_command);
  g_test_add_func ("/trust/minor/description", test_description_follows_edits);
  g_test_add_func ("/trust/minor/line-width", test_line_width_drawn);
  g_test_add_func ("/trust/minor/german-decimals", test_german_decimals);
  g_test_add_func ("/trust/minor/german-refusal", test_german_refusal);
  g_test_add_func ("/trust/minor/bench-menu", test_bench_menu);
  g_test_add_func ("/trust/plans-once-per-edit", test_plans_once_per_edit);
  status = g_test_run ();
  g_object_unref (app);
  return status;
}
