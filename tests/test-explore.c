/* Exploring values in the app as a microscopist does, under Xvfb: a warning
 * or an error that comes or goes moves no field of the bench. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-window.h"
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

/* the visible label under root whose text contains `part` */
static GtkWidget *
visible_label (GtkWidget *root, const char *part)
{
  GtkWidget *child, *found;

  if (GTK_IS_LABEL (root) && gtk_widget_is_visible (root) && strstr (gtk_label_get_text (GTK_LABEL (root)), part))
    return root;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = visible_label (child, part)) != NULL)
      return found;
  return NULL;
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
  g_assert_null (visible_label (GTK_WIDGET (window), "undersampled: output spacing"));
  y0 = window_y (window, power);
  f0 = window_y (window, f);
  g_assert_cmpfloat (window_y (window, na), <, y0);
  g_assert_cmpfloat (y0, <, f0);

  spin_set (window, "elements[0].na", 0.95);
  wait_idle (window);
  warning = visible_label (GTK_WIDGET (window), "elements[2]: the PSF is undersampled: output spacing 0.1562 µm > λ/(4·NA) = 0.14 µm");
  g_assert_nonnull (warning);
  g_assert_cmpfloat (window_y (window, power), ==, y0);
  g_assert_cmpfloat (window_y (window, f), ==, f0);
  g_assert_false (gtk_widget_is_ancestor (warning, GTK_WIDGET (panel)));

  /* a refused value: marked, said below the form, nothing moves */
  gtk_editable_set_text (GTK_EDITABLE (na), "1.5");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  error = visible_label (GTK_WIDGET (window), "elements[0].na: must be in");
  g_assert_nonnull (error);
  g_assert_false (gtk_widget_is_ancestor (error, GTK_WIDGET (panel)));
  g_assert_true (gtk_widget_has_css_class (na, "error"));
  g_assert_cmpfloat (window_y (window, power), ==, y0);
  g_assert_cmpfloat (window_y (window, f), ==, f0);

  /* and both go again */
  gtk_editable_set_text (GTK_EDITABLE (na), "0.8");
  gtk_spin_button_update (GTK_SPIN_BUTTON (na));
  wait_idle (window);
  g_assert_null (visible_label (GTK_WIDGET (window), "elements[0].na: must be in"));
  g_assert_null (visible_label (GTK_WIDGET (window), "undersampled: output spacing"));
  g_assert_cmpfloat (window_y (window, power), ==, y0);
  g_assert_cmpfloat (window_y (window, f), ==, f0);
  close_window (window);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  have_display = gtk_init_check ();
  app = gtk_application_new ("io.github.airyoptics.Airy.TestExplore", G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, NULL);

  g_test_add_func ("/explore/warning-keeps-layout", test_warning_keeps_layout);
  status = g_test_run ();
  g_object_unref (app);
  return status;
}
