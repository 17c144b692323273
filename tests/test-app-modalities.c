/* The window with the STED, light-sheet and SIM modalities: their presets
 * run and show, and the panel's mode list switches a system into each,
 * adding the modality's own element where it is missing. */
#include "config.h"

#include "airy-test-app.h"
#include "airy-test-util.h"

static GtkApplication *app;
static gboolean have_display;

static gboolean
holds (AirySystem *system, const char *type, guint *at)
{
  GPtrArray *elements = airy_system_get_elements (system);
  guint i;

  for (i = 0; i < elements->len; i++)
    if (g_str_equal (airy_element_get_type_name (g_ptr_array_index (elements, i)), type))
      {
        if (at)
          *at = i;
        return TRUE;
      }
  return FALSE;
}

static void
select_mode (AiryWindow *window, const char *name)
{
  GtkWidget *mode = airy_bench_panel_get_editor (airy_window_get_panel (window), "mode");
  GListModel *labels = gtk_drop_down_get_model (GTK_DROP_DOWN (mode));
  guint i, n = g_list_model_get_n_items (labels);

  for (i = 0; i < n; i++)
    {
      if (g_str_equal (gtk_string_list_get_string (GTK_STRING_LIST (labels), i),
                       g_str_equal (name, "sted") ? "STED"
                       : g_str_equal (name, "light-sheet") ? "Light sheet" : "SIM raw images"))
        break;
    }
  g_assert_cmpuint (i, <, n);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (mode), i);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  wait_idle (window);
}

static AiryStack *
shown (AiryWindow *window)
{
  return (AiryStack *) airy_stack_view_get_stack (airy_stack_viewer_get_view (airy_window_get_viewer (window)));
}

/* The presets: STED's and the light sheet's three channels (the viewer's
 * channel chooser), SIM's 15 raw images. */
static void
test_presets (void)
{
  static const char *const presets[] = { "sted", "light-sheet", "sim" };
  guint k;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  for (k = 0; k < G_N_ELEMENTS (presets); k++)
    {
      AiryWindow *window = test_new_window (app, presets[k]);
      AiryStack *s = shown (window);

      g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
      g_assert_nonnull (s);
      g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (airy_window_get_system (window)));
      if (k < 2)
        g_assert_cmpuint (s->depth, ==, k == 0 ? 16 : 64);
      else
        g_assert_cmpuint (s->depth, ==, 15);
      close_window (window);
    }
}

/* widefield → STED: a depletion mask after the source; → light sheet: a
 * light-sheet element (the mask gone); → SIM: a microscope with a SIM
 * pattern (the sheet gone). Each computes without an error. */
static void
test_switch (void)
{
  AiryWindow *window;
  AirySystem *system;
  guint at;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  window = test_new_window (app, "widefield");
  spin_set (window, "z.count", 4);
  wait_idle (window);
  system = airy_window_get_system (window);

  select_mode (window, "sted");
  g_assert_cmpstr (airy_system_get_modality (system), ==, "sted");
  g_assert_true (holds (system, "depletion-mask", &at));
  g_assert_cmpuint (at, ==, 1);
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (system));

  select_mode (window, "light-sheet");
  g_assert_true (holds (system, "light-sheet", NULL));
  /* the modalities' elements are their parts: STED's mask leaves with it */
  g_assert_false (holds (system, "depletion-mask", NULL));
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (system));

  select_mode (window, "sim");
  g_assert_true (airy_system_is_microscope (system));
  g_assert_true (holds (system, "sim-illumination", NULL));
  g_assert_false (holds (system, "light-sheet", NULL));
  g_assert_null (airy_bench_panel_get_error (airy_window_get_panel (window)));
  g_assert_cmpuint (airy_window_get_shown_hash (window), ==, airy_system_hash (system));
  g_assert_cmpuint (shown (window)->depth, ==, 9);
  close_window (window);
}

int
main (int argc, char **argv)
{
  app = test_app_init (&argc, &argv, "io.github.airyoptics.Airy.TestModalities", 0, &have_display);
  g_test_add_func ("/app-modalities/presets", test_presets);
  g_test_add_func ("/app-modalities/switch", test_switch);
  return g_test_run ();
}
