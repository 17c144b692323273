/* The app a microscopist can trust at a glance, under Xvfb: the cursor and
 * z stay where the physics is across new results, a profile without a peak
 * gives no width, what the view shows is always named. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-view-math.h"
#include "airy-test-gtk.h"
#include "airy-test-app.h"

static gboolean have_display;
static GtkApplication *app;

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
  status = g_test_run ();
  g_object_unref (app);
  return status;
}
