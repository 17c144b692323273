/* Exploring values in the app as a microscopist does, under Xvfb: a warning
 * or an error that comes or goes moves no field of the bench. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-window.h"
#include "airy-zernike-editor.h"
#include "airy-physics.h"
#include "airy-test-gtk.h"
#include "airy-test-app.h"

static gboolean have_display;
static GtkApplication *app;

/* where a widget's top left is in the window, after the layout settled */
static double
window_y (AiryWindow *window, GtkWidget *widget)
{
  graphene_point_t p;

  spin_loop (150);
  g_assert_true (gtk_widget_compute_point (widget, GTK_WIDGET (window), &GRAPHENE_POINT_INIT (0, 0), &p));
  return p.y;
}

/* NA 0.95 makes the PSF undersampled, NA 1.5 is refused (n = 1.33): the
 * warning and the error appear below the form, and the focal length's
 * field, the next one down from the NA, stays where the person aims. */
static void
test_warning_keeps_layout (void)
{
  AiryWindow *window;
  AiryBenchPanel *panel;
  GtkWidget *na, *power, *f, *warning, *error;
  double y0, f0;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  panel = airy_window_get_panel (window);
  /* the objective's row and the lens's, open */
  gtk_expander_set_expanded (GTK_EXPANDER (airy_bench_panel_get_editor (panel, "elements[0]")), TRUE);
  gtk_expander_set_expanded (GTK_EXPANDER (airy_bench_panel_get_editor (panel, "elements[2]")), TRUE);
  na = airy_bench_panel_get_editor (panel, "elements[0].na");
  power = airy_bench_panel_get_editor (panel, "elements[0].power");
  f = airy_bench_panel_get_editor (panel, "elements[2].f");
  g_assert_null (test_visible_label (GTK_WIDGET (window), "undersampled: output spacing"));
  y0 = window_y (window, power);
  f0 = window_y (window, f);
  g_assert_cmpfloat (window_y (window, na), <, y0);
  g_assert_cmpfloat (y0, <, f0);

  spin_set (window, "elements[0].na", 0.95);
  wait_idle (window);
  warning = test_visible_label (GTK_WIDGET (window), "elements[2]: the PSF is undersampled: output spacing 0.1562 µm > λ/(4·NA) = 0.14 µm");
  g_assert_nonnull (warning);
  g_assert_cmpfloat (window_y (window, power), ==, y0);
  g_assert_cmpfloat (window_y (window, f), ==, f0);
  g_assert_false (gtk_widget_is_ancestor (warning, GTK_WIDGET (panel)));

  /* a refused value: marked, said below the form, nothing moves */
  gtk_editable_set_text (GTK_EDITABLE (na), "1.5");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  /* said for people; the engine's words, with the JSON path, in its tooltip */
  error = test_visible_label (GTK_WIDGET (window), "NA (Objective point source) must be at most n = 1.33, got 1.5");
  g_assert_nonnull (error);
  g_assert_true (g_str_has_prefix (gtk_widget_get_tooltip_text (error), "elements[0].na: must be in"));
  g_assert_false (gtk_widget_is_ancestor (error, GTK_WIDGET (panel)));
  g_assert_true (gtk_widget_has_css_class (na, "error"));
  g_assert_cmpfloat (window_y (window, power), ==, y0);
  g_assert_cmpfloat (window_y (window, f), ==, f0);

  /* and both go again */
  gtk_editable_set_text (GTK_EDITABLE (na), "0.8");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  wait_idle (window);
  g_assert_null (test_visible_label (GTK_WIDGET (window), "NA (Objective point source) must be at most"));
  g_assert_null (test_visible_label (GTK_WIDGET (window), "undersampled: output spacing"));
  g_assert_cmpfloat (window_y (window, power), ==, y0);
  g_assert_cmpfloat (window_y (window, f), ==, f0);
  close_window (window);
}

/* ---- best focus ---- */

/* widefield on 128² (pupil 30 px), 17 planes from −2 to +2 µm, the point
 * 0.75 µm below the objective's focus (its z) and 1.5 µm off the axis:
 * u ∝ exp(−iπ (z + z0) n r²/(λ f²)) is in focus at z = −z0 = −0.75 µm,
 * plane 5 */
static AiryResident *
defocused_stack_with (double z0, double index, double coefficient)
{
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("widefield", NULL);
  AiryElement *objective = g_ptr_array_index (airy_system_get_elements (system), 0);
  AiryElement *mask = g_ptr_array_index (airy_system_get_elements (system), 1);
  AiryRunOptions options = { .backend = "cpu", .resident = TRUE };
  g_autoptr(GError) error = NULL;
  AiryResult *result;
  AiryResident *r;

  airy_system_set_shape (system, 128, 128);
  airy_system_set_spacing (system, 2.0);
  airy_system_set_z_range (system, -2.0, 2.0, 17);
  g_object_set (objective, "z", z0, "offset-x", 1.5, NULL);
  g_object_set (mask, "zernike-indices", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, &index, 1, sizeof (double)),
                "zernike-coefficients", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, &coefficient, 1, sizeof (double)),
                NULL);
  result = airy_run (system, &options, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  r = airy_resident_ref (result->resident);
  airy_result_free (result);
  return r;
}

static AiryResident *
defocused_stack (double z0, double spherical)
{
  return defocused_stack_with (z0, 12, spherical);
}

static void
test_best_focus_defocused (void)
{
  g_autoptr(AiryResident) r = defocused_stack (0.75, 0.0);
  g_autoptr(AiryResident) other = defocused_stack (-1.25, 0.0);
  g_autoptr(GError) error = NULL;
  AiryFocusCriterion c;
  double score;
  guint plane;

  for (c = AIRY_FOCUS_PEAK; c <= AIRY_FOCUS_ENERGY; c++)
    {
      g_assert_true (airy_focus_best_plane (r, c, &plane, &score, &error));
      g_assert_no_error (error);
      g_test_message ("criterion %d: plane %u (z %+.2f µm), %g", c, plane,
                      airy_stack_get_z (airy_resident_get_stack (r), plane), score);
      g_assert_cmpuint (plane, ==, 5);
      g_assert_true (airy_focus_best_plane (other, c, &plane, NULL, &error));
      /* z0 = −1.25 µm: in focus at +1.25 µm, plane 13 */
      g_assert_cmpuint (plane, ==, 13);
    }
  /* at best focus the FWHM is the Airy disk's: 0.5145 λ/NA = 0.342 µm */
  g_assert_true (airy_focus_best_plane (r, AIRY_FOCUS_FWHM, &plane, &score, &error));
  g_assert_cmpfloat_with_epsilon (score, 0.5145 * 0.532 / 0.8, 0.03);
}

/* In the viewer: the action (the button, the key G) goes to the plane and
 * names it; a stack still being computed is refused with the reason. */
static void
test_best_focus_viewer (void)
{
  GtkWidget *window;
  AiryStackViewer *viewer;
  AiryStackView *view;
  AiryStack *geometry = g_new0 (AiryStack, 1);
  g_autoptr(GError) error = NULL;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = gtk_window_new ();
  viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (viewer));
  gtk_window_present (GTK_WINDOW (window));
  view = airy_stack_viewer_get_view (viewer);
  airy_stack_viewer_set_resident (viewer, defocused_stack (0.75, 0.0));
  airy_stack_view_set_z (view, 12);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (viewer), "viewer.best-focus", NULL));
  g_assert_cmpuint (airy_stack_view_get_z (view), ==, 5);
  g_assert_nonnull (test_visible_label (GTK_WIDGET (viewer), "plane 6: peak "));
  g_assert_true (airy_stack_viewer_go_to_best_focus (viewer, AIRY_FOCUS_ENERGY, &error));
  g_assert_nonnull (test_visible_label (GTK_WIDGET (viewer), "plane 6: "));
  g_assert_nonnull (test_visible_label (GTK_WIDGET (viewer), " % of the energy in one FWHM"));

  *geometry = (AiryStack) { .depth = 9, .height = 8, .width = 8, .dx = 0.1, .dy = 0.1, .dz = 0.5, .bits = 32 };
  airy_stack_viewer_set_resident (viewer, airy_resident_new_partial (geometry, airy_stack_new (1, 8, 8), 6));
  g_assert_false (airy_stack_viewer_go_to_best_focus (viewer, AIRY_FOCUS_PEAK, &error));
  g_assert_cmpstr (error->message, ==, "best focus: the stack is still being computed (plane 7 of 9 known)");
  gtk_window_destroy (GTK_WINDOW (window));
  spin_loop (20);
}

/* ---- named aberrations ---- */

/* the best plane by the peak of a stack with one Zernike term */
static double
best_z_with (double index, double coefficient)
{
  g_autoptr(AiryResident) r = defocused_stack_with (0.0, index, coefficient);
  guint plane;

  g_assert_true (airy_focus_best_plane (r, AIRY_FOCUS_PEAK, &plane, NULL, NULL));
  return airy_stack_get_z (airy_resident_get_stack (r), plane);
}

/* The names beside the indices, in both indexings; and the signs the hint
 * states, from runs: +0.1 wave of defocus (√3(2ρ² − 1)) is the defocus
 * of z = 4√3·c·λ·n/NA² = +0.766 µm (the plane of +0.75 µm of 0.25-µm
 * planes), −0.1 wave the mirror image; balanced spherical keeps the best
 * focus at 0 either way. */
static void
test_zernike_names_and_signs (void)
{
  static const struct { int j; gboolean noll; const char *name; } names[] = {
    { 4, FALSE, "defocus" }, { 3, FALSE, "astigmatism 45°" }, { 5, FALSE, "astigmatism 0°" },
    { 7, FALSE, "coma y" }, { 8, FALSE, "coma x" }, { 12, FALSE, "spherical" }, { 6, FALSE, "trefoil y" },
    { 9, FALSE, "trefoil x" }, { 24, FALSE, "secondary spherical" },
    { 4, TRUE, "defocus" }, { 5, TRUE, "astigmatism 45°" }, { 6, TRUE, "astigmatism 0°" }, { 7, TRUE, "coma y" },
    { 8, TRUE, "coma x" }, { 11, TRUE, "spherical" }, { 9, TRUE, "trefoil y" }, { 10, TRUE, "trefoil x" },
    { 22, TRUE, "secondary spherical" },
  };
  guint i;
  int n, m;

  for (i = 0; i < G_N_ELEMENTS (names); i++)
    {
      if (names[i].noll)
        airy_zernike_noll_to_nm (names[i].j, &n, &m);
      else
        airy_zernike_ansi_to_nm (names[i].j, &n, &m);
      g_assert_cmpstr (airy_zernike_name (n, m), ==, names[i].name);
    }
  g_assert_null (airy_zernike_name (7, 3));
  g_assert_cmpfloat_with_epsilon (4 * sqrt (3) * 0.1 * 0.532 * 1.33 / (0.8 * 0.8), 0.766, 1e-3);
  g_assert_cmpfloat_with_epsilon (best_z_with (4, 0.1), 0.75, 1e-9);
  g_assert_cmpfloat_with_epsilon (best_z_with (4, -0.1), -0.75, 1e-9);
  g_assert_cmpfloat_with_epsilon (best_z_with (12, 0.1), 0.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (best_z_with (12, -0.1), 0.0, 1e-9);
}

/* "Add spherical 0.1 waves" in two steps: pick it in Add Named Term (its
 * row comes with the focus in its coefficient), type 0.1 and Enter. Picked
 * again, it is not added twice. The rows name their terms and follow the
 * indexing. */
static void
test_zernike_two_steps (void)
{
  AiryWindow *window;
  AiryBenchPanel *panel;
  AiryElement *mask;
  GtkWidget *table, *named, *item, *focus;
  const double *idx, *coef;
  gsize n;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  panel = airy_window_get_panel (window);
  mask = g_ptr_array_index (airy_system_get_elements (airy_window_get_system (window)), 1);
  gtk_expander_set_expanded (GTK_EXPANDER (airy_bench_panel_get_editor (panel, "elements[1]")), TRUE);
  table = airy_bench_panel_get_editor (panel, "elements[1].zernike-indices");
  g_assert_nonnull (test_visible_label (table, "defocus"));
  named = test_find_widget (table, GTK_TYPE_MENU_BUTTON, NULL);
  g_assert_nonnull (named);
  /* Xvfb's pointer rests over the viewer, which takes the focus when the
   * pointer enters it (as a popover closes); a person's is on the menu */
  gtk_widget_set_focusable (GTK_WIDGET (airy_stack_viewer_get_view (airy_window_get_viewer (window))), FALSE);
  /* shown where the person clicks: the panel scrolled down to it first */
  {
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (
      GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (GTK_WIDGET (panel), GTK_TYPE_SCROLLED_WINDOW)));

    spin_loop (150);
    gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj));
  }
  g_assert_cmpfloat (window_y (window, named), <, gtk_widget_get_height (GTK_WIDGET (window)) - 40);
  gtk_menu_button_popup (GTK_MENU_BUTTON (named));
  spin_loop (100);

  /* step 1 */
  item = test_find_widget (GTK_WIDGET (gtk_menu_button_get_popover (GTK_MENU_BUTTON (named))), GTK_TYPE_BUTTON,
                           "spherical (ANSI 12)");
  g_assert_nonnull (item);
  g_signal_emit_by_name (item, "clicked");
  spin_loop (50);
  idx = airy_element_get_doubles (mask, "zernike-indices", &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpfloat (idx[1], ==, 12);
  focus = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_true (focus == airy_bench_panel_get_editor (panel, "elements[1].zernike-coefficients[1]")
                 || gtk_widget_is_ancestor (focus, airy_bench_panel_get_editor (panel, "elements[1].zernike-coefficients[1]")));
  g_assert_nonnull (test_visible_label (table, "spherical"));

  /* step 2 */
  gtk_editable_set_text (GTK_EDITABLE (airy_bench_panel_get_editor (panel, "elements[1].zernike-coefficients[1]")), "0.1");
  /* Enter */
  gtk_spin_button_update (GTK_SPIN_BUTTON (airy_bench_panel_get_editor (panel, "elements[1].zernike-coefficients[1]")));
  wait_idle (window);
  coef = airy_element_get_doubles (mask, "zernike-coefficients", &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpfloat (coef[1], ==, 0.1);
  g_assert_true (airy_window_get_shown_hash (window) == airy_system_hash (airy_window_get_system (window)));

  /* again: found, not added */
  gtk_menu_button_popup (GTK_MENU_BUTTON (named));
  spin_loop (50);
  g_signal_emit_by_name (test_find_widget (GTK_WIDGET (gtk_menu_button_get_popover (GTK_MENU_BUTTON (named))),
                                           GTK_TYPE_BUTTON, "spherical (ANSI 12)"), "clicked");
  spin_loop (50);
  airy_element_get_doubles (mask, "zernike-indices", &n);
  g_assert_cmpuint (n, ==, 2);

  /* Noll: the same terms under their Noll numbers (4 stays defocus, 12 is
   * secondary astigmatism 0°) and a menu that says Noll */
  g_object_set (mask, "zernike-indexing", 1, NULL);
  spin_loop (50);
  g_assert_nonnull (test_visible_label (table, "secondary astigmatism 0°"));
  g_assert_nonnull (test_find_widget (GTK_WIDGET (gtk_menu_button_get_popover (GTK_MENU_BUTTON (named))),
                                      GTK_TYPE_BUTTON, "spherical (Noll 11)"));
  close_window (window);
}

int
main (int argc, char **argv)
{
  int status;

  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestExplore", 0, &have_display);

  g_test_add_func ("/explore/warning-keeps-layout", test_warning_keeps_layout);
  g_test_add_func ("/explore/best-focus/defocused", test_best_focus_defocused);
  g_test_add_func ("/explore/best-focus/viewer", test_best_focus_viewer);
  g_test_add_func ("/explore/zernike/names-and-signs", test_zernike_names_and_signs);
  g_test_add_func ("/explore/zernike/two-steps", test_zernike_two_steps);
  status = g_test_run ();
  g_object_unref (app);
  return status;
}
