/* Modalities (engine/modalities/): the registry, the "modality" key of
 * system files and a modality of several chains registered by the test
 * alone (airy-test-modality-twin.h). */
#include "airy-test-util.h"
#include "airy-modality.h"
#include "airy-test-modality-twin.h"
#include "airy-backend-impl.h"
#include "airy-ops-private.h"
#include "cpu/airy-cpu-backend.h"

#define GRID "\"grid\": {\"shape\": [32, 32], \"spacing\": 2.0}, \"spectrum\": {\"wavelengths\": [0.532]}, " \
             "\"z\": {\"start\": -1, \"stop\": 1, \"count\": 3}, "
#define CHAIN_A "{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8}, " \
                "{\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}"
#define CHAIN_B "{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.5}, " \
                "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5], " \
                "\"zernike-coefficients\": [0.1]}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}"

static void
test_registry (void)
{
  guint n;
  const AiryModality * const *list = _airy_modality_list (&n);
  g_autofree char *names = _airy_modality_names ();

  g_assert_cmpuint (n, >=, 2);
  g_assert_cmpstr (list[0]->name, ==, "psf");
  g_assert_cmpstr (list[1]->name, ==, "imaging");
  g_assert_true (_airy_modality_lookup ("imaging") == &_airy_modality_imaging);
  g_assert_true (_airy_modality_lookup ("confocal") == &_airy_modality_confocal);
  g_assert_null (_airy_modality_lookup ("no-such-modality"));
  g_assert_true (_airy_modality_lookup ("light-field") == &_airy_modality_light_field);
  g_assert_true (g_str_has_prefix (names, "psf, imaging"));
  g_assert_false (_airy_modality_register (&_airy_modality_psf));
}

/* absent: inferred as before; always written; read back the same */
static void
test_round_trip (void)
{
  g_autoptr(AirySystem) a = test_system ("{\"airy\": 1, " GRID "\"elements\": [" CHAIN_A "]}");
  g_autoptr(AirySystem) m = test_system ("{\"airy\": 1, " GRID "\"microscope\": {\"f\": 100, \"n\": 1.33, "
                                         "\"na\": 0.8, \"f-tube\": 100}, \"elements\": [], "
                                         "\"sample\": {\"constant\": 1}}");
  g_autofree char *ja = airy_system_to_json (a);
  g_autofree char *jm = airy_system_to_json (m);
  g_autoptr(AirySystem) a2 = test_system (ja);
  g_autoptr(AirySystem) m2 = test_system (jm);
  g_autofree char *ja2 = airy_system_to_json (a2);

  g_assert_cmpstr (airy_system_get_modality (a), ==, "psf");
  g_assert_cmpstr (airy_system_get_modality (m), ==, "imaging");
  g_assert_nonnull (strstr (ja, "\"modality\" : \"psf\""));
  g_assert_nonnull (strstr (jm, "\"modality\" : \"imaging\""));
  g_assert_cmpstr (airy_system_get_modality (a2), ==, "psf");
  g_assert_cmpstr (airy_system_get_modality (m2), ==, "imaging");
  g_assert_cmpstr (ja, ==, ja2);
  g_assert_cmpuint (airy_system_hash (a), ==, airy_system_hash (a2));
}

static void
test_errors (void)
{
  test_expect_error ("{\"airy\": 1, \"modality\": \"no-such\", " GRID "\"elements\": [" CHAIN_A "]}",
                     AIRY_ERROR_INVALID_VALUE, "modality: must be one of psf, imaging, confocal, two-photon, ism, sted, light-sheet, sim, light-field, twin, got no-such");
  test_expect_error ("{\"airy\": 1, \"modality\": 3, " GRID "\"elements\": [" CHAIN_A "]}",
                     AIRY_ERROR_WRONG_TYPE, "modality: expected a string, got a number");
  test_expect_error ("{\"airy\": 1, \"modality\": \"imaging\", " GRID "\"elements\": [" CHAIN_A "]}",
                     AIRY_ERROR_INVALID_VALUE,
                     "modality: imaging needs a \"microscope\" object (the objective and the tube lens)");
  test_expect_error ("{\"airy\": 1, \"modality\": \"psf\", " GRID "\"microscope\": {\"f\": 100, \"n\": 1.33, "
                     "\"na\": 0.8, \"f-tube\": 100}, \"elements\": [], \"sample\": {\"constant\": 1}}",
                     AIRY_ERROR_INVALID_VALUE,
                     "modality: psf takes no \"microscope\" object; remove it or say \"modality\": \"imaging\"");
  /* without the modality two sources stay refused as before */
  test_expect_error ("{\"airy\": 1, " GRID "\"elements\": [" CHAIN_A ", " CHAIN_B "]}",
                     AIRY_ERROR_INVALID_VALUE,
                     "elements[2]: only the first element may be a source, got \"objective-point-source\"");
}

/* twin's result is the sum of its chains run apart, to 1e-6 */
static void
test_twin_sum (void)
{
  g_autoptr(AirySystem) twin = test_system ("{\"airy\": 1, \"modality\": \"twin\", " GRID
                                            "\"elements\": [" CHAIN_A ", " CHAIN_B "]}");
  g_autoptr(AirySystem) a = test_system ("{\"airy\": 1, " GRID "\"elements\": [" CHAIN_A "]}");
  g_autoptr(AirySystem) b = test_system ("{\"airy\": 1, " GRID "\"elements\": [" CHAIN_B "]}");
  g_autoptr(AiryResult) rt = test_run (twin, NULL);
  g_autoptr(AiryResult) ra = test_run (a, NULL);
  g_autoptr(AiryResult) rb = test_run (b, NULL);
  g_autofree char *json = airy_system_to_json (twin);
  g_autoptr(AirySystem) back = test_system (json);
  gsize n = (gsize) 3 * 32 * 32, i;
  double worst = 0, peak = 0, diff_ab = 0;

  g_assert_true (airy_system_check (twin, NULL, NULL));
  g_assert_cmpuint (twin_n_chains (twin), ==, 2);
  g_assert_cmpstr (airy_system_get_modality (back), ==, "twin");
  g_assert_cmpuint (rt->stack->depth * rt->stack->height * rt->stack->width, ==, n);
  for (i = 0; i < n; i++)
    {
      double sum = (double) ra->stack->data[i] + rb->stack->data[i];

      worst = MAX (worst, fabs (rt->stack->data[i] - sum));
      peak = MAX (peak, sum);
      diff_ab = MAX (diff_ab, fabs (ra->stack->data[i] - rb->stack->data[i]));
    }
  g_test_message ("twin: max |twin - (a + b)| = %g of peak %g; max |a - b| = %g", worst, peak, diff_ab);
  g_assert_cmpfloat (peak, >, 0);
  g_assert_cmpfloat (diff_ab, >, 1e-3 * peak);   /* the two chains differ */
  g_assert_cmpfloat (worst, <=, 1e-6 * peak);
}

/* What the program asks of a system comes from its modality, not from
 * whether it holds a "microscope" object: a modality with the objective
 * and the tube lens but no sample (as a scanning one would be) reads
 * without a sample, refuses one, and its system's sample fields are not
 * shown; imaging's are. */
static void
test_declared (void)
{
  static AiryModality bare;
  const char *microscope = "\"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100}, "
                           "\"elements\": []";
  g_autofree char *with = g_strconcat ("{\"airy\": 1, \"modality\": \"bare\", " GRID, microscope,
                                       ", \"sample\": {\"constant\": 1}}", NULL);
  g_autofree char *without = g_strconcat ("{\"airy\": 1, \"modality\": \"bare\", " GRID, microscope, "}", NULL);
  g_autofree char *imaging = g_strconcat ("{\"airy\": 1, " GRID, microscope, ", \"sample\": {\"constant\": 1}}", NULL);
  g_autoptr(AirySystem) b = NULL;
  g_autoptr(AirySystem) m = test_system (imaging);
  GObjectClass *klass;

  bare = _airy_modality_imaging;
  bare.name = "bare";
  bare.needs_sample = FALSE;
  bare.combine = AIRY_MODALITY_COMBINE_ONE;
  g_assert_true (_airy_modality_register (&bare));
  b = test_system (without);
  klass = G_OBJECT_GET_CLASS (b);
  test_expect_error (with, AIRY_ERROR_INVALID_VALUE,
                     "sample: only a microscope (with a \"microscope\" object) images a sample");
  g_assert_true (airy_system_param_relevant (b, g_object_class_find_property (klass, "f-tube")));
  g_assert_false (airy_system_param_relevant (b, g_object_class_find_property (klass, "sample-constant")));
  g_assert_true (airy_system_param_relevant (m, g_object_class_find_property (klass, "sample-constant")));
  g_assert_true (_airy_modality_has_objective (_airy_modality_of (b)));
  g_assert_false (_airy_modality_one_image (_airy_modality_of (b)));
  g_assert_true (_airy_modality_one_image (_airy_modality_of (m)));
  g_assert_false (_airy_modality_one_image (&_airy_modality_psf));
  g_assert_false (_airy_modality_has_objective (&_airy_modality_psf));
  test_expect_error ("{\"airy\": 1, " GRID "\"elements\": []}", AIRY_ERROR_INVALID_VALUE,
                     "elements: an optical system needs at least a source");
}

/* The result's memory counts what a combining modality holds at once: its
 * chains, the result and, with channels, its channels (confocal: 2 chains
 * + excitation, detection, effective; ism: + 25 elements and their sum;
 * sted: the result and 3 channels; SIM: the widefield image and its 3 × 5
 * raw images); a run beyond the budget is refused before any chain. */
static void
test_result_bytes (void)
{
  const struct { const char *preset; guint plain, channels; } cases[] = {
    { "confocal", 2, 5 }, { "ism", 2, 28 }, { "sted", 2, 4 }, { "light-sheet", 2, 4 }, { "sim", 16, 16 },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) system = airy_system_new_from_preset (cases[i].preset, &error);
      g_autoptr(AiryGeometry) geom = NULL;
      guint64 one, bytes;
      guint n = 0;

      g_assert_no_error (error);
      airy_system_set_channels (system, FALSE);
      geom = _airy_geometry_new (system, FALSE, NULL, NULL);
      g_assert_nonnull (geom);
      one = (guint64) geom->out_depth * geom->out_height * geom->out_width * sizeof (float);
      bytes = airy_system_get_result_bytes (system, &n);
      g_test_message ("%s: %u stacks of %" G_GUINT64_FORMAT " bytes", cases[i].preset, n, one);
      g_assert_cmpuint (n, ==, cases[i].plain);
      g_assert_cmpuint (bytes, ==, cases[i].plain * one);
      airy_system_set_channels (system, TRUE);
      bytes = airy_system_get_result_bytes (system, &n);
      g_assert_cmpuint (n, ==, cases[i].channels);
      g_assert_cmpuint (bytes, ==, cases[i].channels * one);
    }
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(AirySystem) system = airy_system_new_from_preset ("confocal", &error);
    g_autoptr(AiryResult) result = NULL;
    guint64 bytes;
    g_autofree char *budget = NULL;

    g_assert_no_error (error);
    airy_system_set_channels (system, TRUE);
    bytes = airy_system_get_result_bytes (system, NULL);
    /* room for one chain's run, not for the five stacks */
    budget = g_strdup_printf ("%" G_GUINT64_FORMAT, bytes / 5 * 3);
    g_setenv ("AIRY_MEMORY_BUDGET", budget, TRUE);
    result = airy_run (system, &(AiryRunOptions) { .per_wavelength = TRUE }, NULL, NULL, NULL, &error);
    g_unsetenv ("AIRY_MEMORY_BUDGET");
    g_assert_null (result);
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "grid.shape: confocal holds 5 stacks at once"));
  }
}

/* Backends registered by the test: the CPU's slots under other names,
 * one of them refusing the fused PSF (as a backend without its kernel). */
static gboolean
refuse_fused (AiryBackend *backend, const AiryOp *op)
{
  return op->kind != AIRY_OP_FUSED_PSF;
}

static void
register_test_backends (void)
{
  static AiryBackendOps all, refuse;

  all = *_airy_cpu_backend_ops ();
  all.name = "test-chains";
  all.supports_op = NULL;
  refuse = all;
  refuse.name = "test-refuse";
  refuse.supports_op = refuse_fused;
  airy_backend_register (&all, NULL);
  airy_backend_register (&refuse, NULL);
}

static void
test_chains_backend (void)
{
  /* each combining modality runs its chains on the backend chosen (nothing
   * forces the CPU), and the result names it; a backend that cannot run a
   * chain's op leaves that chain to the CPU, which the warning and the
   * result's backend say */
  static const char *presets[] = { "confocal", "two-photon", "ism", "sted", "light-sheet", "sim" };
  const double z[] = { -0.4, 0.0, 0.4 };
  guint i, k;

  for (i = 0; i < G_N_ELEMENTS (presets); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) system = airy_system_new_from_preset (presets[i], &error);
      g_autoptr(AiryResult) on = NULL, refused = NULL;
      gboolean warned = FALSE;

      g_assert_no_error (error);
      airy_system_set_z_values (system, z, 3);
      on = airy_run (system, &(AiryRunOptions) { .backend = "test-chains", .threads = 1 }, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      g_test_message ("%s: %s", presets[i], on->backend);
      g_assert_cmpstr (on->backend, ==, "test-chains");
      refused = airy_run (system, &(AiryRunOptions) { .backend = "test-refuse", .threads = 1 }, NULL, NULL, NULL,
                          &error);
      g_assert_no_error (error);
      g_assert_cmpstr (refused->backend, ==, "cpu");
      for (k = 0; k < refused->warnings->len; k++)
        warned = warned || strstr (g_ptr_array_index (refused->warnings, k),
                                   "backend test-refuse does not run the operation “fused-psf”") != NULL;
      g_assert_true (warned);
    }
}

static void
test_backends_join (void)
{
  g_autofree char *one = _airy_modality_backends_join ((const char *[]) { "cuda", "cuda", "cuda" }, 3);
  g_autofree char *mixed = _airy_modality_backends_join ((const char *[]) { "cuda", "cpu" }, 2);

  g_assert_cmpstr (one, ==, "cuda");
  g_assert_cmpstr (mixed, ==, "chain 0: cuda, chain 1: cpu");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_assert_true (_airy_modality_register (&test_modality_twin));
  g_test_add_func ("/modality/registry", test_registry);
  g_test_add_func ("/modality/round-trip", test_round_trip);
  g_test_add_func ("/modality/errors", test_errors);
  g_test_add_func ("/modality/twin-sum", test_twin_sum);
  g_test_add_func ("/modality/result-bytes", test_result_bytes);
  register_test_backends ();
  g_test_add_func ("/modality/chains-backend", test_chains_backend);
  g_test_add_func ("/modality/backends-join", test_backends_join);
  /* last: it registers one more modality */
  g_test_add_func ("/modality/declared", test_declared);
  return g_test_run ();
}
