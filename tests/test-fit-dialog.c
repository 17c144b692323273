/* "Fit Measured PSF…": the dialog fits a stack file on its worker, plots
 * one loss per iteration, shows the result, applies it and cancels. */

#include "config.h"

#include "airy-fit-dialog.h"
#include "airy-test-gtk.h"
#include "airy-test-util.h"

static gboolean have_display;

static const char *const system_json =
  "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.1},"
  " \"spectrum\": {\"wavelengths\": [0.532], \"weights\": [1.0]},"
  " \"z\": {\"start\": -2.0, \"stop\": 2.0, \"count\": 12},"
  " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0%s},"
  " \"elements\": [%s], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1.0}}";

static void
wait_for (AiryFitDialog *dialog)
{
  while (airy_fit_dialog_is_running (dialog))
    g_main_context_iteration (NULL, TRUE);
  /* the last idle of the progress */
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* the drawing areas that drew a result image (draw_image leaves its scale) */
static guint
count_drawn_images (GtkWidget *root)
{
  GtkWidget *child;
  guint n = GTK_IS_DRAWING_AREA (root) && g_object_get_data (G_OBJECT (root), "airy-scale") != NULL;

  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    n += count_drawn_images (child);
  return n;
}

static gboolean
find_label_prefix (GtkWidget *root, const char *prefix, const char *fragment)
{
  GtkWidget *child;

  if (GTK_IS_LABEL (root) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (root)), prefix)
      && strstr (gtk_label_get_text (GTK_LABEL (root)), fragment))
    return TRUE;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if (find_label_prefix (child, prefix, fragment))
      return TRUE;
  return FALSE;
}

static void
on_apply (gpointer user_data, AirySystem *system, const char *path)
{
  AirySystem **out = user_data;

  g_assert_null (path);
  g_set_object (out, system);
}

static void
test_dialog (void)
{
  g_autofree char *truth_json = g_strdup_printf (system_json, ", \"offset-x\": 0.1",
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5, 7, 12],"
    " \"zernike-coefficients\": [0.1, -0.08, 0.05]}");
  g_autofree char *base_json = g_strdup_printf (system_json, "", "");
  g_autoptr(AirySystem) truth = test_system (truth_json);
  g_autoptr(AirySystem) base = test_system (base_json);
  AiryRunOptions options = { .keep_psf = TRUE, .threads = 2 };
  g_autoptr(AiryResult) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("airy-fit-dialog-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "beads.tif", NULL);
  g_autoptr(AiryStack) beads = NULL;
  g_autoptr(AirySystem) applied = NULL;
  AiryFitDialog *dialog;
  const AiryFitResult *res;
  gsize n, q;
  double peak = 0;
  guint i;

  if (!have_display)
    {
      g_test_skip ("no display");
      return;
    }
  run = test_run (truth, &options);
  beads = airy_stack_copy (run->psf);
  n = (gsize) beads->depth * beads->height * beads->width;
  for (q = 0; q < n; q++)
    peak = MAX (peak, beads->data[q]);
  for (q = 0; q < n; q++)
    beads->data[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
  g_assert_true (airy_tiff_write (path, beads, &error));
  g_assert_no_error (error);

  dialog = AIRY_FIT_DIALOG (airy_fit_dialog_new (NULL, base));
  airy_fit_dialog_set_apply_func (dialog, on_apply, &applied);
  gtk_window_present (GTK_WINDOW (dialog));
  airy_fit_dialog_set_file (dialog, path);
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Fit")));
  airy_fit_dialog_start (dialog);
  g_assert_true (airy_fit_dialog_is_running (dialog));
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON, "_Cancel")));
  wait_for (dialog);
  res = airy_fit_dialog_get_result (dialog);
  g_test_message ("%s", airy_fit_dialog_get_status (dialog));
  g_assert_nonnull (res);
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), "iterations"));
  /* the loss plot has one point per iteration of every start and stage */
  g_assert_cmpuint (airy_fit_dialog_get_n_losses (dialog), ==, res->iterations_total);
  g_assert_cmpuint (airy_fit_dialog_get_n_losses (dialog), >, 5);
  for (i = 0; i < res->n_terms; i++)
    {
      double t = res->indices[i] == 5 ? 0.1 : res->indices[i] == 7 ? -0.08 : res->indices[i] == 12 ? 0.05 : 0.0;
      g_assert_cmpfloat (fabs (res->coefficients[i] - t), <=, 0.01);
    }
  g_assert_cmpfloat (fabs (res->position[0] - 0.1), <=, 0.02);
  /* drawn: the three images, the wavefront and the bars after a z change */
  gtk_range_set_value (GTK_RANGE (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_SCALE, NULL)), 3);
  {
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
    while (count_drawn_images (GTK_WIDGET (dialog)) < 3 && g_get_monotonic_time () < until)
      g_main_context_iteration (NULL, FALSE);
  }
  g_assert_cmpuint (count_drawn_images (GTK_WIDGET (dialog)), ==, 3);
  /* the readout of the shared cursor (the window's centre pixel) at plane 3 */
  g_assert_true (find_label_prefix (GTK_WIDGET (dialog), "x 24, y 24, plane 3:", "residual"));

  /* Apply to System: the fitted system, with its phase mask */
  g_assert_true (gtk_widget_get_sensitive (test_find_widget (GTK_WIDGET (dialog), GTK_TYPE_BUTTON,
                                                             "_Apply to System")));
  airy_fit_dialog_apply (dialog);
  g_assert_nonnull (applied);
  g_assert_cmpuint (airy_system_get_elements (applied)->len, ==, 1);
  g_assert_cmpstr (airy_element_get_type_name (g_ptr_array_index (airy_system_get_elements (applied), 0)), ==,
                   "phase-mask");

  /* cancel: the status says so, the last result stays */
  airy_fit_dialog_start (dialog);
  airy_fit_dialog_cancel (dialog);
  wait_for (dialog);
  g_assert_cmpstr (airy_fit_dialog_get_status (dialog), ==, "Cancelled.");
  g_assert_true (airy_fit_dialog_get_result (dialog) == res);

  /* a file that is not a stack: its message */
  airy_fit_dialog_set_file (dialog, dir);
  airy_fit_dialog_start (dialog);
  wait_for (dialog);
  g_test_message ("%s", airy_fit_dialog_get_status (dialog));
  g_assert_nonnull (strstr (airy_fit_dialog_get_status (dialog), dir));

  gtk_window_destroy (GTK_WINDOW (dialog));
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("AIRY_FFTW_PLANNER", "estimate", FALSE);
  have_display = gtk_init_check ();
  airy_init ();
  g_test_add_func ("/fit-dialog/fit-apply-cancel", test_dialog);
  return g_test_run ();
}
