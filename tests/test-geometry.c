#include "config.h"

#include "airy-test-util.h"
#include "airy-geometry.h"
#include "airy-plan-private.h"

/* The geometry step (engine/airy-geometry.c): DESIGN §3's figures as
 * numbers, the result's shape after a resampling sensor, and the same
 * values the planner uses (every field compared with the plan's). */

#define PSF "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g}," \
            " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3}," \
            " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8}," \
            "   {\"type\": \"ff-lens\", \"f\": %g, \"n\": 1.33}]%s}"

static AiryGeometry *
geometry_of (AirySystem *system)
{
  g_autoptr(GError) error = NULL;
  AiryGeometry *geom = _airy_geometry_new (system, FALSE, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (geom);
  return geom;
}

/* Every field the geometry and a plan of the same system share, equal. */
static void
assert_same_as_plan (AiryGeometry *geom, AirySystem *system, const AiryRunOptions *options)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryPlan) plan = _airy_plan_new (system, options, NULL, &error);
  guint64 memory;
  guint i;

  g_assert_no_error (error);
  g_assert_cmpuint (plan->n_planes, ==, geom->n_planes);
  g_assert_cmpuint (plan->chain->len, ==, geom->chain->len);
  for (i = 0; i < geom->chain->len; i++)
    {
      g_assert_cmpuint (plan->contexts[i].height, ==, geom->contexts[i].height);
      g_assert_cmpuint (plan->contexts[i].width, ==, geom->contexts[i].width);
      g_assert_cmpfloat (plan->contexts[i].dx[0], ==, geom->contexts[i].dx[0]);
    }
  g_assert_cmpuint (plan->in_height, ==, geom->in_height);
  g_assert_cmpuint (plan->in_width, ==, geom->in_width);
  g_assert_cmpfloat (plan->in_dx[0], ==, geom->in_dx[0]);
  g_assert_cmpfloat (plan->in_dy[0], ==, geom->in_dy[0]);
  g_assert_cmpuint (plan->psf_height, ==, geom->psf_height);
  g_assert_cmpuint (plan->psf_width, ==, geom->psf_width);
  g_assert_cmpfloat (plan->psf_dx, ==, geom->psf_dx);
  g_assert_cmpfloat (plan->psf_dy, ==, geom->psf_dy);
  g_assert_cmpint (plan->imaging, ==, geom->imaging);
  g_assert_cmpint (plan->reduce, ==, geom->reduce);
  g_assert_cmpuint (plan->out_depth, ==, geom->out_depth);
  g_assert_cmpuint (plan->out_height, ==, geom->out_height);
  g_assert_cmpuint (plan->out_width, ==, geom->out_width);
  g_assert_cmpfloat (plan->out_dx, ==, geom->out_dx);
  g_assert_cmpfloat (plan->out_dy, ==, geom->out_dy);
  g_assert_cmpuint (plan->pad_height, ==, geom->pad_height);
  g_assert_cmpuint (plan->pad_width, ==, geom->pad_width);
  g_assert_true (_airy_geometry_memory (geom, options, 0, &memory, NULL, &error));
  g_assert_cmpuint (plan->memory, ==, memory);
  g_assert_cmpuint (_airy_plan_bytes_per_slot (plan), ==, _airy_geometry_bytes_per_slot (geom));
}

/* A PSF system: the pupil f·NA/n = 100·0.8/1.33 µm on the 0.5 µm grid,
 * the FF lens's output spacing f·λ/(n·N·dx) and Nyquist λ/(4·NA). */
static void
test_psf (void)
{
  g_autofree char *json = g_strdup_printf (PSF, 64, 128, 0.5, 100.0, "");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryGeometry) geom = geometry_of (system);
  AiryRunOptions options = { .backend = "cpu" };
  double du = 100.0 * 0.532 / (1.33 * 128 * 0.5);

  g_assert_cmpfloat_with_epsilon (geom->pupil_radius, 100.0 * 0.8 / 1.33, 1e-12);
  g_assert_cmpfloat (geom->pupil_spacing, ==, 0.5);
  g_assert_cmpfloat_with_epsilon (geom->pupil_radius_px, 100.0 * 0.8 / 1.33 / 0.5, 1e-12);
  g_assert_cmpfloat (geom->na, ==, 0.8);
  g_assert_cmpfloat_with_epsilon (geom->nyquist, 0.532 / 3.2, 1e-15);
  g_assert_cmpfloat_with_epsilon (geom->psf_dx, du, 1e-12);
  g_assert_cmpfloat_with_epsilon (geom->psf_dy, 100.0 * 0.532 / (1.33 * 64 * 0.5), 1e-12);
  g_assert_cmpfloat (geom->output_pixel, ==, geom->psf_dx);
  g_assert_cmpuint (geom->out_depth, ==, 3);
  g_assert_cmpuint (geom->out_height, ==, 64);
  g_assert_cmpuint (geom->out_width, ==, 128);
  g_assert_cmpuint (geom->n_stacks, ==, 1);
  g_assert_cmpuint (_airy_geometry_result_bytes (geom), ==, 3 * 64 * 128 * 4);
  /* one slot: the field and its scratch (2·8 bytes a pixel), one mask
   * plane per element (2 × 8 bytes), the intensity plane (8 bytes) and the
   * 3 planes of the result (4 bytes) */
  {
    guint64 n = 64 * 128, memory;
    g_autoptr(GError) error = NULL;

    g_assert_cmpuint (_airy_geometry_bytes_per_slot (geom), ==, 16 * n + 16 * n + 8 * n);
    g_assert_true (_airy_geometry_memory (geom, &options, 0, &memory, NULL, &error));
    g_assert_cmpuint (memory, ==, 16 * n + 16 * n + 8 * n + 3 * n * 4);
    options.n_devices = 2;
    options.keep_psf = TRUE;
    g_assert_true (_airy_geometry_memory (geom, &options, 0, &memory, NULL, &error));
    g_assert_cmpuint (memory, ==, 2 * (16 * n + 16 * n + 8 * n) + 3 * n * 4 + 3 * n * 4);
  }
  assert_same_as_plan (geom, system, &options);
}

/* An undersampled PSF: a 0.25 µm pupil grid gives du = 100·0.532/(1.33·64·0.25)
 * = 2.5 µm, far above λ/(4·NA). */
static void
test_nyquist (void)
{
  g_autofree char *json = g_strdup_printf (PSF, 64, 64, 0.25, 100.0, "");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryGeometry) geom = geometry_of (system);

  g_assert_cmpfloat_with_epsilon (geom->output_pixel, 2.5, 1e-12);
  g_assert_cmpfloat (geom->output_pixel, >, geom->nyquist);
}

/* A microscope: the pupil spacing f_tube·λ/(n·N·s) = 100·0.532/(1.33·64·0.1)
 * = 6.25 µm, the camera pixel s out of the tube lens, and a block sum of 2
 * halves the image (32 × 32 of 0.2 µm), as the run's stack is. */
static void
test_microscope_block_sum (void)
{
  g_autofree char *json = test_microscope_json ("{\"beads\": {\"count\": 3, \"seed\": 1}}",
                                                "\"reduce\": \"sum\", \"resample\": \"block-sum\", \"factor\": 2", 64, 5);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryGeometry) geom = geometry_of (system);
  AiryRunOptions options = { .backend = "cpu", .threads = 1 };
  g_autoptr(AiryResult) result = NULL;

  g_assert_true (geom->imaging);
  g_assert_cmpfloat_with_epsilon (geom->pupil_spacing, 6.25, 1e-12);
  g_assert_cmpfloat_with_epsilon (geom->pupil_radius_px, 100.0 * 0.8 / 1.33 / 6.25, 1e-12);
  g_assert_cmpfloat_with_epsilon (geom->output_pixel, 0.1, 1e-12);
  g_assert_cmpuint (geom->out_depth, ==, 1);
  g_assert_cmpuint (geom->out_height, ==, 32);
  g_assert_cmpuint (geom->out_width, ==, 32);
  g_assert_cmpfloat_with_epsilon (geom->out_dx, 0.2, 1e-12);
  g_assert_cmpuint (_airy_geometry_result_bytes (geom), ==, 32 * 32 * 4);
  assert_same_as_plan (geom, system, &options);

  result = test_run (system, &options);
  g_assert_cmpuint (result->stack->depth, ==, geom->out_depth);
  g_assert_cmpuint (result->stack->height, ==, geom->out_height);
  g_assert_cmpuint (result->stack->width, ==, geom->out_width);
}

/* A bilinear sensor to 0.3 µm pixels: ⌊64·0.1/0.3⌋ = 21 a side. */
static void
test_microscope_bilinear (void)
{
  g_autofree char *json = test_microscope_json ("{\"constant\": 1}",
                                                "\"reduce\": \"sum\", \"resample\": \"linear\", \"spacing\": 0.3", 64, 3);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryGeometry) geom = geometry_of (system);
  AiryRunOptions options = { .backend = "cpu", .threads = 1 };

  g_assert_cmpuint (geom->out_height, ==, 21);
  g_assert_cmpuint (geom->out_width, ==, 21);
  g_assert_cmpfloat (geom->out_dx, ==, 0.3);
  assert_same_as_plan (geom, system, &options);
}

/* A PSF stack with a block-sum sensor keeps its planes: 3 of 32 × 16. */
static void
test_psf_block_sum (void)
{
  g_autofree char *json = g_strdup_printf (PSF, 64, 32, 0.5, 100.0,
                                           ", \"sensor\": {\"resample\": \"block-sum\", \"factor\": 2}");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryGeometry) geom = geometry_of (system);
  AiryRunOptions options = { .backend = "cpu", .threads = 1 };

  g_assert_false (geom->reduce);
  g_assert_cmpuint (geom->out_depth, ==, 3);
  g_assert_cmpuint (geom->out_height, ==, 32);
  g_assert_cmpuint (geom->out_width, ==, 16);
  g_assert_cmpfloat_with_epsilon (geom->out_dx, 2 * geom->psf_dx, 1e-15);
  assert_same_as_plan (geom, system, &options);
}

/* The UI thread's check is the geometry alone (no plan), and a run plans
 * once: the edit's check and its run make one plan between them. */
static void
test_plans_once (void)
{
  g_autofree char *json = g_strdup_printf (PSF, 32, 32, 0.5, 100.0, "");
  g_autoptr(AirySystem) system = test_system (json);
  AiryRunOptions options = { .backend = "cpu", .threads = 1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = NULL;
  guint plans = _airy_plan_count (), geometries = _airy_geometry_count ();

  g_assert_true (airy_system_check (system, NULL, &error));
  g_assert_cmpuint (_airy_plan_count (), ==, plans);
  g_assert_cmpuint (_airy_geometry_count (), ==, geometries + 1);
  result = test_run (system, &options);
  g_assert_cmpuint (_airy_plan_count (), ==, plans + 1);
  g_assert_cmpuint (_airy_geometry_count (), ==, geometries + 2);
  /* validation reads the files and the budget: the planner, once */
  g_assert_true (airy_system_validate (system, NULL, &error));
  g_assert_cmpuint (_airy_plan_count (), ==, plans + 2);
}

/* The check names what is wrong at its path, as the planner does. */
static void
test_errors (void)
{
  g_autofree char *json = g_strdup_printf (PSF, 32, 32, 0.5, 100.0, "");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryElement) source = airy_element_new ("objective-point-source", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryGeometry) geom = NULL;

  airy_system_add_element (system, source);
  geom = _airy_geometry_new (system, FALSE, NULL, &error);
  g_assert_null (geom);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==,
                   "elements[2]: only the first element may be a source, got \"objective-point-source\"");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/geometry/psf", test_psf);
  g_test_add_func ("/geometry/nyquist", test_nyquist);
  g_test_add_func ("/geometry/microscope-block-sum", test_microscope_block_sum);
  g_test_add_func ("/geometry/microscope-bilinear", test_microscope_bilinear);
  g_test_add_func ("/geometry/psf-block-sum", test_psf_block_sum);
  g_test_add_func ("/geometry/plans-once", test_plans_once);
  g_test_add_func ("/geometry/errors", test_errors);
  return g_test_run ();
}
