#include "config.h"

#include "airy-test-util.h"
#include "airy-ops-private.h"

/* The device operation lists (what the CUDA backend runs for chains
 * without a fused path) against the element-by-element CPU path, on small
 * grids with two wavelengths, for every built-in element type. */

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g}," \
             " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [0.4, 0.6]}," \
             " \"z\": {\"start\": -2, \"stop\": 3, \"count\": 3}, \"elements\": [%s]}"

static AiryPlan *
plan_for (guint h, guint w, double spacing, const char *elements)
{
  g_autofree char *json = g_strdup_printf (HEAD, h, w, spacing, elements);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirySystem) system = test_system (json);
  AiryRunOptions options = { .backend = "cpu" };
  AiryPlan *plan;

  plan = _airy_plan_new (system, &options, NULL, &error);
  g_assert_no_error (error);
  return plan;
}

static AiryField *
field_for (AiryPlan *plan)
{
  AiryField *field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      field->dy[l] = plan->in_dy[l];
      field->dx[l] = plan->in_dx[l];
    }
  return field;
}

/* Compiles the chain, checks the op kinds, then every plane's intensity
 * both ways; returns the largest relative difference. */
static double
compare (guint h, guint w, double spacing, const char *elements, const char *kinds)
{
  g_autoptr (AiryPlan) plan = plan_for (h, w, spacing, elements);
  g_autoptr (GError) error = NULL;
  AiryOpList *list = _airy_ops_compile (plan, &error);
  g_autoptr (GString) got = g_string_new (NULL);
  gsize n = (gsize) plan->psf_height * plan->psf_width, k;
  g_autofree float *a = g_new (float, n);
  g_autofree float *b = g_new (float, n);
  double worst = 0.0;
  guint i, p;

  g_assert_no_error (error);
  for (i = 0; i < list->ops->len; i++)
    {
      static const char letters[] = "SOPGMFR";
      g_string_append_c (got, letters[((AiryOp *) g_ptr_array_index (list->ops, i))->kind]);
    }
  g_assert_cmpstr (got->str, ==, kinds);

  for (p = 0; p < plan->n_planes; p++)
    {
      AiryPlane plane = { p, plan->z[p], 1 };
      g_autoptr (AiryField) fa = field_for (plan);
      g_autoptr (AiryField) fb = field_for (plan);
      double peak = 0.0, diff = 0.0;

      for (i = 0; i < plan->chain->len; i++)
        {
          AiryElement *e = g_ptr_array_index (plan->chain, i);
          g_assert_true (AIRY_ELEMENT_GET_CLASS (e)->apply (e, list->states[i], fa, &plane, &error));
          g_assert_no_error (error);
        }
      g_assert_true (_airy_ops_run (list, fb, &plane, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (fb->height, ==, fa->height);
      g_assert_cmpuint (fb->width, ==, fa->width);
      airy_field_intensity (fa, a, FALSE);
      airy_field_intensity (fb, b, FALSE);
      for (k = 0; k < n; k++)
        {
          peak = MAX (peak, a[k]);
          diff = MAX (diff, fabs (a[k] - b[k]));
        }
      g_assert_cmpfloat (peak, >, 0.0);
      worst = MAX (worst, diff / peak);
    }
  _airy_ops_unref (list);
  g_test_message ("%s: largest difference %.3g of the peak", kinds, worst);
  return worst;
}

static void
test_objective_chain (void)
{
  /* objective (non-paraxial, aplanatic, off axis), pixelwise masks, an FF lens with an NA */
  double d = compare (64, 64, 0.5,
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.33, \"na\": 0.9, \"defocus-model\": \"nonparaxial\","
    " \"apodisation\": \"aplanatic\", \"offset-x\": 0.4, \"z\": 0.5},"
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 7], \"zernike-coefficients\": [0.1, 0.05]},"
    "{\"type\": \"circular-pupil\", \"diameter\": 20},"
    "{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\", \"wrap\": true, \"bits\": 4},"
    "{\"type\": \"ff-lens\", \"f\": 20, \"n\": 1.33, \"na\": 0.95}",
    "OMMMMF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_propagation_chain (void)
{
  /* plane wave through pupils and a thin lens, three propagations with
   * padding (same and full), then an inverse FF lens */
  double d = compare (48, 40, 1.0,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.01},"
    "{\"type\": \"square-pupil\", \"width\": 30},"
    "{\"type\": \"thin-lens\", \"f\": 2000},"
    "{\"type\": \"propagate\", \"z\": 300, \"pad\": 8},"
    "{\"type\": \"rectangular-pupil\", \"width\": 36, \"height\": 40},"
    "{\"type\": \"propagate\", \"z\": 150, \"method\": \"angular-spectrum\", \"band-limit\": true, \"pad\": 4, \"output\": \"full\"},"
    "{\"type\": \"ff-lens\", \"f\": 500, \"inverse\": true}",
    "SMMRFMFRMRFMFF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_generated_sources (void)
{
  /* a point source through a Gaussian pupil, single-FFT Fresnel, a DF lens */
  double d = compare (64, 64, 1.0,
    "{\"type\": \"point-source\", \"z\": 400},"
    "{\"type\": \"gaussian-pupil\", \"waist\": 20},"
    "{\"type\": \"propagate\", \"z\": 1000, \"method\": \"single-fft\"},"
    "{\"type\": \"df-lens\", \"f\": 800, \"d\": 300}",
    "PMMFMFM");
  g_assert_cmpfloat (d, <, 1e-6);

  /* a Gaussian beam, evanescent waves kept, an inverse DF lens with an NA */
  d = compare (32, 32, 0.25,
    "{\"type\": \"gaussian-beam\", \"waist\": 2, \"z\": 10},"
    "{\"type\": \"propagate\", \"z\": 5, \"method\": \"angular-spectrum\", \"remove-evanescent\": false},"
    "{\"type\": \"df-lens\", \"f\": 100, \"d\": 50, \"na\": 0.05, \"inverse\": true}",
    "GFMFMF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_point_source_at_zero (void)
{
  /* the planes reach z = 0 for the point source: the device path says so as the CPU does */
  g_autoptr (AiryPlan) plan = plan_for (16, 16, 1.0, "{\"type\": \"point-source\", \"z\": 2}");
  g_autoptr (GError) error = NULL;
  AiryOpList *list = _airy_ops_compile (plan, &error);
  g_autoptr (AiryField) field = field_for (plan);
  AiryPlane plane = { 0, plan->z[0], 1 };

  g_assert_no_error (error);
  g_assert_false (_airy_ops_run (list, field, &plane, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "point-source: distance z must not be 0 (plane 0 has z = 0 µm)");
  _airy_ops_unref (list);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/ops/objective-chain", test_objective_chain);
  g_test_add_func ("/ops/propagation-chain", test_propagation_chain);
  g_test_add_func ("/ops/generated-sources", test_generated_sources);
  g_test_add_func ("/ops/point-source-at-zero", test_point_source_at_zero);
  return g_test_run ();
}
