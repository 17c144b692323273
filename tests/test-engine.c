/* Engine skeleton: error domain, registries, backends, modules, sharding. */
#include "config.h"

#include "airy-test-util.h"
#include "airy-backend-impl.h"

static void
test_error_domain (void)
{
  g_autoptr(GError) bad = g_error_new (AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, "x");
  g_autoptr(GError) run = g_error_new (AIRY_ERROR, AIRY_ERROR_BACKEND, "x");

  g_assert_cmpstr (g_quark_to_string (AIRY_ERROR), ==, "airy-error-quark");
  g_assert_true (airy_error_is_bad_input (bad));
  g_assert_false (airy_error_is_bad_input (run));
  g_assert_cmpstr (airy_version_string (), ==, PACKAGE_VERSION);
  g_assert_null (airy_error_get_range (bad));
}

/* The result's bytes are the run's: a block-sum sensor of 2 halves a
 * microscope's image each way (the grid's figure was 4× too large). */
static void
test_result_bytes_after_sensor (void)
{
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("imaging", NULL);
  g_autoptr(AiryElement) sensor = NULL;
  g_autoptr(AiryResult) result = NULL;
  guint stacks = 0;

  g_assert_nonnull (system);
  g_assert_cmpuint (airy_system_get_result_bytes (system, &stacks), ==, (guint64) 256 * 256 * sizeof (float));
  sensor = airy_element_copy (airy_system_get_sensor (system));
  g_object_set (sensor, "resample", 1, "factor", 2, NULL);   /* block sum */
  airy_system_set_sensor (system, sensor);
  g_assert_cmpuint (airy_system_get_result_bytes (system, &stacks), ==, (guint64) 128 * 128 * sizeof (float));
  g_assert_cmpuint (stacks, ==, 1);
  result = test_run (system, &(AiryRunOptions) { .backend = "cpu" });
  g_assert_cmpuint ((guint64) result->stack->depth * airy_stack_plane_size (result->stack) * sizeof (float), ==,
                    airy_system_get_result_bytes (system, NULL));
}

/* A number out of its range: the error carries the range and the value
 * (the panel words them), through a copy as a worker's errors travel. */
static void
test_error_range (void)
{
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("widefield", NULL);
  g_autoptr(GError) error = NULL, copy = NULL;
  const AiryErrorRange *r;

  g_assert_nonnull (system);
  g_object_set (g_ptr_array_index (airy_system_get_elements (system), 0), "na", 1.5, NULL);
  g_assert_false (airy_system_check (system, NULL, &error));
  g_assert_cmpstr (error->message, ==, "elements[0].na: must be in [0.001, n=1.33], got 1.5");
  copy = g_error_copy (error);
  g_clear_error (&error);
  r = airy_error_get_range (copy);
  g_assert_nonnull (r);
  g_assert_cmpfloat (r->minimum, ==, 0.001);
  g_assert_cmpfloat (r->maximum, ==, 1.33);
  g_assert_cmpfloat (r->value, ==, 1.5);
  g_assert_cmpstr (r->maximum_name, ==, "n");
  g_assert_null (r->unit);
}

static void
test_element_registry (void)
{
  static const char *const builtin[] = {
    "objective-point-source", "plane-wave", "point-source", "gaussian-beam", "circular-pupil",
    "square-pupil", "rectangular-pupil", "gaussian-pupil", "amplitude-mask", "phase-mask",
    "ff-lens", "df-lens", "thin-lens", "propagate", "sensor", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryElement) lens = NULL;
  guint i;

  for (i = 0; builtin[i]; i++)
    {
      GType t = airy_element_lookup (builtin[i]);
      g_autoptr(GTypeClass) klass = NULL;

      g_assert_true (t != G_TYPE_INVALID);
      klass = g_type_class_ref (t);
      g_assert_cmpstr (((AiryElementClass *) klass)->type_name, ==, builtin[i]);
    }
  g_assert_true (airy_element_lookup ("no-such-element") == G_TYPE_INVALID);
  g_assert_null (airy_element_new ("no-such-element", &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_TYPE);

  /* parameters carry range, default and unit */
  lens = airy_element_new ("ff-lens", NULL);
  {
    GParamSpec *f = g_object_class_find_property (G_OBJECT_GET_CLASS (lens), "f");
    g_autofree char *range = airy_param_spec_range_string (f);

    g_assert_cmpstr (airy_param_spec_get_unit (f), ==, "µm");
    g_assert_cmpstr (range, ==, "[1, 1e+06] µm");
    g_assert_cmpfloat (airy_element_get_double (lens, "f"), ==, 100.0);
    g_object_set (lens, "f", 42.0, NULL);
    g_assert_cmpfloat (airy_element_get_double (lens, "f"), ==, 42.0);
  }
}

static void
test_cpu_backend (void)
{
  AiryBackend *cpu = airy_backend_lookup ("cpu");
  AiryDeviceInfo info = { 0 };

  g_assert_nonnull (cpu);
  g_assert_true (cpu->available);
  g_unsetenv ("AIRY_CPU_DEVICES");
  g_assert_cmpuint (airy_backend_n_devices (cpu), ==, 1);
  g_setenv ("AIRY_CPU_DEVICES", "3", TRUE);
  g_assert_cmpuint (airy_backend_n_devices (cpu), ==, 3);
  airy_backend_device_info (cpu, 2, &info);
  g_assert_cmpstr (info.name, ==, "CPU (virtual device 2 of 3)");
  g_assert_cmpuint (info.threads, >=, 1);
  g_assert_cmpuint (info.memory, >, 0);
  airy_device_info_clear (&info);
  g_unsetenv ("AIRY_CPU_DEVICES");
  /* the GPU-less default */
  g_assert_true (airy_backend_choose ("auto", NULL) == cpu || airy_backend_lookup ("cuda")->available);
}

static void
test_cuda_module (void)
{
  AiryBackend *cuda = airy_backend_lookup ("cuda");
  g_autoptr(GError) error = NULL;

  if (g_strcmp0 (g_getenv ("AIRY_HAVE_CUDA_MODULE"), "1") != 0)
    {
      /* without the module, asking for CUDA says so */
      g_assert_null (cuda);
      g_assert_null (airy_backend_choose ("cuda", &error));
      g_assert_error (error, AIRY_ERROR, AIRY_ERROR_NO_DEVICE);
      g_assert_true (g_str_has_prefix (error->message, "backend: no CUDA device:"));
      return;
    }
  /* the module was found on the modules path and loaded without libcuda */
  g_assert_nonnull (cuda);
  g_assert_nonnull (cuda->module_path);
  g_assert_true (g_str_has_suffix (cuda->module_path, "airy-cuda.so"));
  if (cuda->available)
    {
      g_test_skip ("a CUDA device is present: the no-device path cannot be checked here");
      return;
    }
  g_assert_true (g_str_has_prefix (cuda->unavailable_reason, "no CUDA device: "));
  g_assert_null (airy_backend_choose ("cuda", &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_NO_DEVICE);
  g_assert_nonnull (strstr (error->message, "no CUDA device"));
  /* auto falls back to the CPU */
  g_assert_cmpstr (airy_backend_get_name (airy_backend_choose ("auto", NULL)), ==, "cpu");
}

static void
test_element_module (void)
{
  /* the example module in tests/modules registered "ring-mask" */
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  g_autofree GType *types = NULL;
  GPtrArray *loaded = airy_modules_loaded ();
  gboolean listed = FALSE, found = FALSE;
  guint i, n;
  float *p;

  for (i = 0; i < loaded->len; i++)
    found |= g_str_has_suffix (g_ptr_array_index (loaded, i), "airy-ring-mask.so");
  g_assert_true (found);
  types = airy_element_list_types (&n);
  for (i = 0; i < n; i++)
    listed |= types[i] == airy_element_lookup ("ring-mask");
  g_assert_true (listed);

  /* used from a system file: a ring of 20…40 µm on a plane wave */
  system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [101, 101], \"spacing\": 1.0},"
                        " \"spectrum\": {\"wavelengths\": [0.5]},"
                        " \"elements\": [{\"type\": \"plane-wave\"},"
                        "  {\"type\": \"ring-mask\", \"inner\": 20, \"outer\": 40}]}");
  result = test_run (system, NULL);
  p = result->stack->data;
  g_assert_cmpfloat (p[50 * 101 + 50], ==, 0.0f);          /* centre blocked */
  g_assert_cmpfloat (p[50 * 101 + 80], >, 0.0f);           /* r = 30 open */
  g_assert_cmpfloat (p[50 * 101 + 95], ==, 0.0f);          /* r = 45 blocked */

  /* bad values for the module's parameters get the same messages */
  g_clear_object (&system);
  system = airy_system_new_from_data ("{\"airy\": 1, \"grid\": {\"shape\": [8, 8], \"spacing\": 1},"
                                      " \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": ["
                                      "{\"type\": \"plane-wave\"}, {\"type\": \"ring-mask\", \"outer\": 0}]}",
                                      -1, NULL, "test", &error);
  g_assert_null (system);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "elements[1].outer: must be in (0, 1e+06] µm, got 0");
}

static void
test_broken_module (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-mod-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "broken.so", NULL);
  g_autoptr(GError) error = NULL;
  GPtrArray *errors;
  guint before;

  errors = airy_modules_errors ();
  before = errors->len;
  g_assert_true (g_file_set_contents (path, "not an ELF file", -1, NULL));
  g_assert_false (airy_modules_load_dir (dir, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_MODULE);
  g_assert_true (g_str_has_prefix (error->message, path));
  g_assert_cmpuint (airy_modules_errors ()->len, ==, before + 1);
  g_unlink (path);
  g_rmdir (dir);
}

static const char *sharded_psf =
  "{\"airy\": 1, \"grid\": {\"shape\": [96, 96], \"spacing\": 1.0},"
  " \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
  " \"z\": {\"start\": -3, \"stop\": 3, \"count\": 11},"
  " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
  "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5, 7],"
  "   \"zernike-coefficients\": [0.1, -0.2]}, {\"type\": \"ff-lens\", \"f\": 50}]}";

static void
compare_stacks (AiryStack *a, AiryStack *b, double tolerance)
{
  gsize n = (gsize) a->depth * airy_stack_plane_size (a), i;
  float lo, hi;
  double worst = 0.0;

  g_assert_cmpuint (a->depth, ==, b->depth);
  g_assert_cmpuint (a->height, ==, b->height);
  g_assert_cmpuint (a->width, ==, b->width);
  airy_stack_min_max (a, &lo, &hi);
  for (i = 0; i < n; i++)
    worst = MAX (worst, fabs (a->data[i] - b->data[i]));
  g_assert_cmpfloat (worst, <=, tolerance * hi);
}

/* A PSF run with one stack per wavelength: the stacks add up to the summed
 * stack, and each is that wavelength's own run times its share of the
 * weights; scalar and vectorial (two components per wavelength). No phase
 * mask: its phase is designed at the first wavelength, so a run of the
 * second alone would differ. Every wavelength has the grid's pupil
 * spacing, its focal planes summed pixel by pixel (the plan's warning). */
static const char *channel_psf =
  "{\"airy\": 1, \"grid\": {\"shape\": [96, 96], \"spacing\": %.17g},"
  " \"spectrum\": {\"wavelengths\": [%s], \"weights\": [%s]},"
  " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 5},"
  " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.7,"
  "   \"offset-x\": 0.6%s}, {\"type\": \"ff-lens\", \"f\": 50}]}";

static AirySystem *
channel_system (double spacing, const char *wavelengths, const char *weights, const char *keys)
{
  g_autofree char *json = g_strdup_printf (channel_psf, spacing, wavelengths, weights, keys);

  return test_system (json);
}

static void
check_channels (const char *keys)
{
  const double lambda[] = { 0.5, 0.62 }, weight[] = { 2.0, 1.0 };
  g_autoptr(AirySystem) system = channel_system (1.0, "0.5, 0.62", "2, 1", keys);
  g_autoptr(AiryResult) summed = test_run (system, &(AiryRunOptions) { .backend = "cpu" });
  g_autoptr(AiryResult) split = test_run (system, &(AiryRunOptions) { .backend = "cpu", .per_wavelength = TRUE });
  g_autoptr(AiryStack) total = NULL;
  gsize n = (gsize) summed->stack->depth * airy_stack_plane_size (summed->stack), k;
  guint l;

  g_assert_cmpuint (summed->n_channels, ==, 0);
  g_assert_null (summed->channels);
  g_assert_cmpuint (split->n_channels, ==, 2);
  /* the memory the panel states is what the run holds: the sum and a
   * stack per wavelength */
  {
    g_autoptr(AirySystem) on = airy_system_copy (system);
    guint64 held = (guint64) split->stack->depth * airy_stack_plane_size (split->stack) * sizeof (float);
    guint stacks = 0;

    for (l = 0; l < split->n_channels; l++)
      held += (guint64) split->channels[l]->depth * airy_stack_plane_size (split->channels[l]) * sizeof (float);
    g_assert_cmpuint (airy_system_get_result_bytes (system, &stacks), ==,
                      (guint64) split->stack->depth * airy_stack_plane_size (split->stack) * sizeof (float));
    g_assert_cmpuint (stacks, ==, 1);
    airy_system_set_channels (on, TRUE);
    g_assert_cmpuint (airy_system_get_result_bytes (on, &stacks), ==, held);
    g_assert_cmpuint (stacks, ==, 3);
  }
  /* the summed stack is today's, bit for bit in shape */
  compare_stacks (summed->stack, split->stack, 1e-6);
  total = airy_stack_copy (split->channels[0]);
  for (k = 0; k < n; k++)
    total->data[k] += split->channels[1]->data[k];
  compare_stacks (summed->stack, total, 1e-6);
  for (l = 0; l < 2; l++)
    {
      g_autofree char *wl = g_strdup_printf ("%g", lambda[l]);
      g_autoptr(AirySystem) one = channel_system (1.0, wl, "1", keys);
      g_autoptr(AiryResult) single = test_run (one, &(AiryRunOptions) { .backend = "cpu" });
      g_autoptr(AiryStack) scaled = airy_stack_copy (single->stack);
      AiryStack *c = split->channels[l];

      for (k = 0; k < n; k++)
        scaled->data[k] *= weight[l] / (weight[0] + weight[1]);
      compare_stacks (scaled, c, 1e-6);
      /* at its own spacing: an FF lens's output pixel scales with λ */
      g_assert_cmpfloat (c->dx, ==, single->stack->dx);
      g_assert_cmpfloat (c->dy, ==, single->stack->dy);
      if (l > 0)
        g_assert_cmpfloat (fabs (c->dx / split->stack->dx - lambda[l] / lambda[0]), <, 1e-12);
      g_assert_cmpuint (c->n_wavelengths, ==, 1);
      g_assert_cmpfloat (c->wavelengths[0], ==, lambda[l]);
    }
}

static void
test_channels_scalar (void)
{
  check_channels ("");
}

static void
test_channels_vectorial (void)
{
  check_channels (", \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"field\": \"vectorial\"");
}

/* The memory budget counts the stacks a run keeps: on 96² × 5 planes a
 * stack is 180 KiB beside ≈ 650 KiB of work, so 1 MiB holds the summed run
 * (0.8 MiB) but not the sum and a stack per wavelength (1.2 MiB). The
 * run's choice counts, not the system's switch. */
static void
test_channels_budget (void)
{
  g_autoptr(AirySystem) system = channel_system (1.0, "0.5, 0.62", "2, 1", "");
  g_autoptr(AirySystem) switched = airy_system_copy (system);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) summed = NULL, asked = NULL, split = NULL;

  g_setenv ("AIRY_MEMORY_BUDGET", "1M", TRUE);
  summed = airy_run (system, &(AiryRunOptions) { .backend = "cpu" }, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (summed);
  split = airy_run (system, &(AiryRunOptions) { .backend = "cpu", .per_wavelength = TRUE }, NULL, NULL, NULL,
                    &error);
  g_assert_null (split);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_assert_cmpstr (error->message, ==,
                   "grid.shape: a run of 5 planes on a 96 × 96 grid that keeps its 2 wavelengths as channels "
                   "(3 stacks: their sum and one per wavelength) needs 1.2 MiB of memory, more than the budget "
                   "of 1.0 MiB (AIRY_MEMORY_BUDGET=1M); reduce grid.shape or z.count, "
                   "or turn spectrum.channels off (--channels none)");
  g_clear_error (&error);
  /* spectrum.channels on, but a run that sums (airy-sim --channels none) */
  airy_system_set_channels (switched, TRUE);
  asked = airy_run (switched, &(AiryRunOptions) { .backend = "cpu" }, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (asked->n_channels, ==, 0);
  g_clear_pointer (&asked, airy_result_free);
  asked = airy_run (switched, &(AiryRunOptions) { .backend = "cpu", .per_wavelength = TRUE }, NULL, NULL, NULL,
                    &error);
  g_assert_null (asked);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_clear_error (&error);
  /* with room for them the same run keeps them */
  g_setenv ("AIRY_MEMORY_BUDGET", "2M", TRUE);
  asked = airy_run (switched, &(AiryRunOptions) { .backend = "cpu", .per_wavelength = TRUE }, NULL, NULL, NULL,
                    &error);
  g_assert_no_error (error);
  g_assert_cmpuint (asked->n_channels, ==, 2);
  g_unsetenv ("AIRY_MEMORY_BUDGET");
}

/* A backend without per-wavelength stacks (never reached: it refuses first). */
static gboolean
sums_only_execute (AiryBackend *backend, AiryRunState *state, const AiryChunk *chunk, GError **error)
{
  g_assert_not_reached ();
  return FALSE;
}

static const AiryBackendOps sums_only_ops = {
  .name = "sums-only",
  .execute = sums_only_execute,
};

static void
test_channels_refused (void)
{
  g_autoptr(AirySystem) system = channel_system (1.0, "0.5, 0.62", "2, 1", "");
  g_autoptr(GError) error = NULL;

  g_assert_null (airy_run (system, &(AiryRunOptions) { .backend = "cpu", .per_wavelength = TRUE, .keep_psf = TRUE },
                           NULL, NULL, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==,
                   "per-wavelength channels: cannot be combined with a kept PSF");
  g_clear_error (&error);

  /* a microscope sums its wavelengths: said so */
  {
    g_autoptr(AirySystem) microscope = test_system (
      "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1},"
      " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"channels\": true}, \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
      " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
      " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1.0}}");

    g_assert_true (airy_system_get_channels (microscope));
    g_assert_null (airy_run (microscope, &(AiryRunOptions) { .per_wavelength = TRUE }, NULL, NULL, NULL, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_assert_cmpstr (error->message, ==,
                     "per-wavelength channels: only a PSF run without a sensor keeps one stack per wavelength "
                     "(microscope runs and sensors sum the wavelengths)");
    g_clear_error (&error);
  }
  /* a backend that does not keep them (the CPU and CUDA do) refuses, by name */
  {
    g_autoptr(AiryResult) r = NULL;

    airy_backend_register (&sums_only_ops, NULL);
    r = airy_run (system, &(AiryRunOptions) { .backend = "sums-only", .per_wavelength = TRUE }, NULL, NULL, NULL,
                  &error);
    g_assert_null (r);
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND);
    g_assert_cmpstr (error->message, ==, "per-wavelength channels: backend sums-only cannot keep one stack per "
                     "wavelength, use the CPU or the CUDA backend");
  }
}

/* spectrum.channels: read, written only when on (files without it stay
 * byte for byte), part of the hash (a result with channels is another) */
static void
test_channels_json (void)
{
  g_autoptr(AirySystem) plain = channel_system (1.0, "0.5, 0.62", "2, 1", "");
  g_autoptr(AirySystem) copy = NULL;
  g_autoptr(AirySystem) copy2 = NULL;
  g_autofree char *json = airy_system_to_json (plain);
  g_autofree char *on = NULL;
  guint64 hash = airy_system_hash (plain);

  g_assert_false (airy_system_get_channels (plain));
  g_assert_null (strstr (json, "channels"));
  airy_system_set_channels (plain, TRUE);
  on = airy_system_to_json (plain);
  g_assert_nonnull (strstr (on, "\"channels\" : true"));
  g_assert_cmpuint (airy_system_hash (plain), !=, hash);
  copy = test_system (on);
  g_assert_true (airy_system_get_channels (copy));
  copy2 = airy_system_copy (copy);
  g_assert_true (airy_system_get_channels (copy2));
}

static void
test_sharding_psf (void)
{
  g_autoptr(AirySystem) system = test_system (sharded_psf);
  g_autoptr(AiryResult) one = NULL;
  guint k;

  g_setenv ("AIRY_CPU_DEVICES", "4", TRUE);
  one = test_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = (guint[]) { 0 }, .n_devices = 1 });
  for (k = 2; k <= 4; k++)
    {
      g_autoptr(AiryResult) many = NULL;
      guint devices[] = { 0, 1, 2, 3 };

      many = test_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = devices, .n_devices = k });
      g_assert_cmpuint (many->n_devices, ==, k);
      compare_stacks (one->stack, many->stack, 1e-6);
    }
  /* explicit chunks: the caller decides the split */
  {
    g_autoptr(AiryResult) explicit = test_run (system, &(AiryRunOptions) {
      .backend = "cpu", .devices = (guint[]) { 3, 1 }, .n_devices = 2, .chunks = (guint[]) { 9, 2 } });
    g_autoptr(GError) error = NULL;

    compare_stacks (one->stack, explicit->stack, 1e-6);
    g_assert_null (airy_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = (guint[]) { 0, 1 },
                                                          .n_devices = 2, .chunks = (guint[]) { 3, 3 } },
                             NULL, NULL, NULL, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_assert_cmpstr (error->message, ==, "chunks: must add up to the 11 planes, got 6");
    g_clear_error (&error);
    g_assert_null (airy_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = (guint[]) { 7 },
                                                          .n_devices = 1 }, NULL, NULL, NULL, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_assert_cmpstr (error->message, ==, "devices: device 7 does not exist; the cpu backend has 4 (0 … 3)");
  }
  g_unsetenv ("AIRY_CPU_DEVICES");
}

static void
check_fast_path (const char *json)
{
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) fast = NULL;
  g_autoptr(AiryResult) generic = NULL;

  fast = test_run (system, NULL);
  g_setenv ("AIRY_NO_FAST_PATH", "1", TRUE);
  generic = test_run (system, NULL);
  g_unsetenv ("AIRY_NO_FAST_PATH");
  compare_stacks (generic->stack, fast->stack, 1e-6);
  g_assert_cmpfloat (fast->stack->dx, ==, generic->stack->dx);
}

static void
test_fast_path (void)
{
  /* the fused, pruned PSF path gives the element chain's result: several
   * wavelengths, every mask kind, non-paraxial defocus, apodisation, offset,
   * extra z, a lens NA, evenly spaced planes (past the phase resync) … */
  check_fast_path (
    "{\"airy\": 1, \"grid\": {\"shape\": [128, 96], \"spacing\": 1.5},"
    " \"spectrum\": {\"wavelengths\": [0.5, 0.61], \"weights\": [2, 1]},"
    " \"z\": {\"start\": -3, \"stop\": 5, \"count\": 37},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.9,"
    "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"offset-x\": 0.7, \"z\": 0.3},"
    "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [3, 7, 12],"
    "   \"zernike-coefficients\": [0.1, -0.05, 0.08]},"
    "  {\"type\": \"gaussian-pupil\", \"waist\": 60},"
    "  {\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"cubic\", \"strength\": 4},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33, \"na\": 0.85}]}");
  /* … and unevenly spaced planes on an odd grid */
  check_fast_path (
    "{\"airy\": 1, \"grid\": {\"shape\": [81, 99], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [0.55]}, \"z\": {\"values\": [0, 2.5, -1, 7]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 60, \"n\": 1.0, \"na\": 0.5},"
    "  {\"type\": \"square-pupil\", \"width\": 50}, {\"type\": \"ff-lens\", \"f\": 60}]}");
}

typedef struct
{
  guint         calls;
  guint         last;
  guint         total;
  GCancellable *cancel_at_3;
} ProgressLog;

static void
on_progress (guint done, guint total, gpointer user_data)
{
  ProgressLog *log = user_data;

  log->calls++;
  g_assert_cmpuint (done, >, log->last);
  log->last = done;
  log->total = total;
  if (log->cancel_at_3 && done == 3)
    g_cancellable_cancel (log->cancel_at_3);
}

static void
test_progress_and_cancel (void)
{
  g_autoptr(AirySystem) system = test_system (sharded_psf);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = NULL;
  ProgressLog log = { 0 };

  result = airy_run (system, NULL, on_progress, &log, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log.calls, ==, 11);
  g_assert_cmpuint (log.last, ==, 11);
  g_assert_cmpuint (log.total, ==, 11);

  log = (ProgressLog) { 0, 0, 0, cancellable };
  g_assert_null (airy_run (system, NULL, on_progress, &log, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (log.last, <, 11);
}

static void
test_warnings (void)
{
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) clipped = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autoptr(AirySystem) fine = NULL;

  /* pupil radius 60.2 µm > 64 · 0.5 µm: clipped; du = 0.624 µm > λ/(4 NA): undersampled */
  g_assert_true (airy_system_validate (clipped, warnings, &error));
  g_assert_cmpuint (warnings->len, ==, 2);
  g_test_message ("%s | %s", (char *) g_ptr_array_index (warnings, 0), (char *) g_ptr_array_index (warnings, 1));
  g_assert_true (g_str_has_prefix (g_ptr_array_index (warnings, 0),
                                   "elements[0]: the objective pupil (radius 60.15 µm) is clipped by the grid"));
  g_assert_true (g_str_has_prefix (g_ptr_array_index (warnings, 1),
                                   "elements[1]: the PSF is undersampled: output spacing 0.625 µm > λ/(4·NA) = 0.1663 µm"));
  g_ptr_array_set_size (warnings, 0);
  fine = airy_system_new_from_preset ("widefield", &error);
  g_assert_no_error (error);
  g_assert_true (airy_system_validate (fine, warnings, &error));
  g_assert_cmpuint (warnings->len, ==, 0);
}

/* The warnings of one system (asserted to be `n`), joined by " | " */
static char *
warnings_of (AirySystem *system, guint n)
{
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;

  g_assert_true (airy_system_validate (system, warnings, &error));
  g_assert_no_error (error);
  g_ptr_array_add (warnings, NULL);
  g_test_message ("%s", warnings->len > 1 ? (char *) warnings->pdata[0] : "(none)");
  g_assert_cmpuint (warnings->len - 1, ==, n);
  return g_strjoinv (" | ", (char **) warnings->pdata);
}

/* A pupil too small to sample (f = 1 µm, the smallest allowed: 1.20 pupil pixels of 0.5 µm),
 * a defocus and a Zernike phase that change by more than π from one pupil
 * pixel to the next: each warned with the grid that would sample it, and
 * that grid warns no more. */
static void
test_sampling_warnings (void)
{
  g_autoptr(AirySystem) small = airy_system_new_from_preset ("widefield", NULL);
  g_autoptr(AirySystem) deep = airy_system_new_from_preset ("widefield", NULL);
  g_autoptr(AirySystem) spherical = airy_system_new_from_preset ("widefield", NULL);
  g_autoptr(AirySystem) scope = airy_system_new_from_preset ("imaging", NULL);
  AiryElement *mask = g_ptr_array_index (airy_system_get_elements (spherical), 1);
  double index = 12, three = 3.0, two = 2.0;
  g_autofree char *w = NULL;

  /* R = f·NA/n = 1 · 0.8/1.33 = 0.6015 µm over pupil pixels of 0.5 µm */
  g_object_set (g_ptr_array_index (airy_system_get_elements (small), 0), "f", 1.0, NULL);
  g_object_set (g_ptr_array_index (airy_system_get_elements (small), 2), "f", 1.0, NULL);
  w = warnings_of (small, 1);
  g_assert_cmpstr (w, ==, "elements[0]: the objective pupil is only 1.2 pupil pixels in radius (f·NA/n = 0.6015 µm, "
                          "pupil pixels of 0.5 µm): at least 8 are needed to sample it; use grid.spacing ≤ 0.07518 µm "
                          "on this 512² grid");
  g_clear_pointer (&w, g_free);
  /* the spacing it names: 8.0 pupil pixels */
  airy_system_set_spacing (small, 0.07518);
  w = warnings_of (small, 0);
  g_clear_pointer (&w, g_free);

  /* paraxial defocus at the rim, per pupil pixel: 2π·z·NA·dx/(λ·f) =
   * 2π · 150 · 0.8 · 0.5/(0.532 · 100) = 7.09 rad (7.06 between the last
   * two pixels of the discrete pupil) */
  airy_system_set_z_range (deep, -150.0, 150.0, 64);
  w = warnings_of (deep, 1);
  g_assert_cmpstr (w, ==, "elements[0]: the defocus phase at |z| = 150 µm changes by 7.06 rad between neighbouring pupil "
                          "pixels, more than π: the grid cannot sample it (the PSF wraps around); use grid.spacing ≤ "
                          "0.2023 µm and grid.shape ≥ 595² (to hold the pupil)");
  g_clear_pointer (&w, g_free);
  airy_system_set_shape (deep, 600, 600);
  airy_system_set_spacing (deep, 0.2023);
  w = warnings_of (deep, 1);
  /* sampled now; only the PSF pixel f·λ/(n·N·dx) = 0.3295 µm is coarse */
  g_assert_true (g_str_has_prefix (w, "elements[2]: the PSF is undersampled: output spacing 0.3295 µm"));
  g_clear_pointer (&w, g_free);

  /* 3 waves of spherical (ANSI 12, unit RMS: √5 (6ρ⁴ − 6ρ² + 1), slope 12√5
   * at the rim): 2π · 3 · 12√5 · 0.5/60.15 = 4.20 rad per pupil pixel */
  g_object_set (mask, "zernike-indices", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, &index, 1, sizeof (double)),
                "zernike-coefficients", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, &three, 1, sizeof (double)),
                NULL);
  w = warnings_of (spherical, 1);
  g_assert_cmpstr (w, ==, "elements[1]: the Zernike phase changes by 4.2 rad between neighbouring pupil pixels, more "
                          "than π: the grid cannot sample it (the PSF wraps around); use grid.spacing ≤ 0.3399 µm on this "
                          "512² grid");
  g_clear_pointer (&w, g_free);
  /* 2 waves: 2.80 rad, sampled */
  g_object_set (mask, "zernike-coefficients", g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, &two, 1, sizeof (double)),
                NULL);
  w = warnings_of (spherical, 0);
  g_clear_pointer (&w, g_free);

  /* a microscope's pupil pixel is f_tube·λ/(n·N·s) = 8.33 µm on 48² of
   * 0.1 µm: 7.22 pixels in radius; the grid's side is what changes it */
  airy_system_set_shape (scope, 48, 48);
  w = warnings_of (scope, 1);
  g_assert_cmpstr (w, ==, "microscope: the objective pupil is only 7.22 pupil pixels in radius (f·NA/n = 60.15 µm, "
                          "pupil pixels of 8.333 µm): at least 8 are needed to sample it; use grid.shape ≥ 54²");
  g_clear_pointer (&w, g_free);
  airy_system_set_shape (scope, 54, 54);
  w = warnings_of (scope, 0);
}

/* ---- parameters declared once (issue 15) ---- */

/* Every element class's parameters get their ids from the install call:
 * distinct within the class, inherited ones included. */
static void
test_param_ids (void)
{
  g_autofree GType *types = NULL;
  guint n, t;

  types = airy_element_list_types (&n);
  g_assert_cmpuint (n, >=, 16);
  for (t = 0; t < n; t++)
    {
      g_autoptr(GTypeClass) klass = g_type_class_ref (types[t]);
      g_autofree GParamSpec **pspecs = NULL;
      g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
      guint np, k;

      pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &np);
      for (k = 0; k < np; k++)
        {
          g_assert_cmpuint (pspecs[k]->param_id, >, 0);
          g_assert_false (g_hash_table_contains (seen, GUINT_TO_POINTER (pspecs[k]->param_id)));
          g_hash_table_add (seen, GUINT_TO_POINTER (pspecs[k]->param_id));
        }
    }
}

/* Which parameters apply is the element's to say (the phase mask's source
 * selects them), not the panel's. */
static void
test_param_relevant (void)
{
  g_autoptr(AiryElement) mask = airy_element_new ("phase-mask", NULL);
  g_autoptr(AiryElement) lens = airy_element_new ("ff-lens", NULL);
  GParamSpec *source = g_object_class_find_property (G_OBJECT_GET_CLASS (mask), "source");
  GParamSpec *named = g_object_class_find_property (G_OBJECT_GET_CLASS (mask), "named");
  static const struct { const char *name; gboolean by_source[4]; } table[] = {
    /*                      constant image  zernike named */
    { "value",            { TRUE,    FALSE, FALSE,  FALSE } },
    { "file",             { FALSE,   TRUE,  FALSE,  FALSE } },
    { "phase-max",        { FALSE,   TRUE,  FALSE,  FALSE } },
    { "zernike-indices",  { FALSE,   FALSE, TRUE,   FALSE } },
    { "zernike-unit",     { FALSE,   FALSE, TRUE,   FALSE } },
    { "named",            { FALSE,   FALSE, FALSE,  TRUE } },
    { "period",           { FALSE,   FALSE, FALSE,  TRUE } },
    { "pupil-radius",     { TRUE,    TRUE,  TRUE,   TRUE } },
    { "bits",             { TRUE,    TRUE,  TRUE,   TRUE } },
  };
  guint i, k;

  g_assert_true (airy_param_spec_get_flags (source) & AIRY_PARAM_SELECTS);
  g_assert_false (airy_param_spec_get_flags (named) & AIRY_PARAM_SELECTS);
  for (k = 0; k < 4; k++)
    {
      g_object_set (mask, "source", k, NULL);
      for (i = 0; i < G_N_ELEMENTS (table); i++)
        {
          g_test_message ("source %u, %s", k, table[i].name);
          g_assert_cmpint (test_param_relevant_of (mask, table[i].name), ==, table[i].by_source[k]);
        }
    }
  /* without a hook, everything applies */
  g_assert_null (AIRY_ELEMENT_GET_CLASS (lens)->param_relevant);
  g_assert_true (test_param_relevant_of (lens, "na"));
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer data)
{
  g_hash_table_replace (data, (gpointer) pspec->name,
                        GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (data, pspec->name)) + 1));
}

static guint
notified (GHashTable *counts, const char *name)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (counts, name));
}

/* The system's own fields are properties declared like parameters, with
 * their place in the file, and the setters notify them. */
static void
test_system_fields (void)
{
  g_autoptr(AirySystem) system = airy_system_new ();
  g_autoptr(GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  GObjectClass *klass = G_OBJECT_GET_CLASS (system);
  static const char *const fields[][3] = {
    { "height", "grid.shape[0]", "[1, 65536]" },
    { "width", "grid.shape[1]", "[1, 65536]" },
    { "spacing", "grid.spacing", "[0.0001, 10000] µm" },
    { "wavelengths", "spectrum.wavelengths", "[0.01, 100] µm" },
    { "weights", "spectrum.weights", "[0, 1e+12]" },
    { "z-start", "z.start", "[-1e+06, 1e+06] µm" },
    { "z-count", "z.count", "[1, 1000000]" },
    { "z-values", "z.values", "[-1e+06, 1e+06] µm" },
    { "f-tube", "microscope.f-tube", "[1, 1e+06] µm" },
    { "sample-constant", "sample.constant", "[0, 1e+12]" },
    { "beads-count", "sample.beads.count", "[0, 10000000]" },
    { "beads-intensity", "sample.beads.intensity", "(0, 1e+12]" },
    { "sample-channel", "sample.channel", "[0, 1000000]" },
  };
  AirySample beads = { AIRY_SAMPLE_BEADS, 0.0, NULL, 5, 1, 1.0 };
  g_autoptr(AiryElement) objective = airy_element_new ("objective-point-source", NULL);
  const AirySpectrum *spectrum;
  const double *z;
  guint i, n, h, w;

  for (i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (klass, fields[i][0]);
      g_autofree char *range = NULL;

      g_assert_nonnull (pspec);
      range = airy_param_spec_range_string (pspec);
      g_assert_cmpstr (airy_param_spec_get_path (pspec), ==, fields[i][1]);
      g_assert_cmpstr (range, ==, fields[i][2]);
    }

  g_signal_connect (system, "notify", G_CALLBACK (count_notify), counts);
  airy_system_set_shape (system, 300, 256);
  g_assert_cmpuint (notified (counts, "height"), ==, 1);
  g_assert_cmpuint (notified (counts, "width"), ==, 0);
  airy_system_set_z_range (system, -1.0, 1.0, 5);
  g_assert_cmpuint (notified (counts, "z-count"), ==, 1);
  g_assert_cmpuint (notified (counts, "z-start"), ==, 1);
  airy_system_set_spacing (system, 0.5);   /* the same value */
  g_assert_cmpuint (notified (counts, "spacing"), ==, 0);

  /* setting the properties: z stays a range, the planes follow */
  g_object_set (system, "z-count", 3, "z-stop", 2.0, NULL);
  z = airy_system_get_z (system, &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpfloat (z[0], ==, -1.0);
  g_assert_cmpfloat (z[1], ==, 0.5);
  g_assert_cmpfloat (z[2], ==, 2.0);
  g_object_set (system, "width", 65536, NULL);
  airy_system_get_shape (system, &h, &w);
  g_assert_cmpuint (w, ==, 65536);
  /* more wavelengths weigh the same, until weights are given */
  g_object_set (system, "wavelengths",
                g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, (double[]) { 0.5, 0.6 }, 2, sizeof (double)), NULL);
  spectrum = airy_system_get_spectrum (system);
  g_assert_cmpuint (spectrum->n, ==, 2);
  g_assert_cmpfloat (spectrum->weights[0], ==, 0.5);
  g_object_set (system, "weights",
                g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, (double[]) { 1.0, 3.0 }, 2, sizeof (double)), NULL);
  g_assert_cmpfloat (airy_system_get_spectrum (system)->weights[1], ==, 0.75);

  /* the tube lens and the sample apply to a microscope, the sample's fields
   * to its kind */
  g_assert_false (airy_system_param_relevant (system, g_object_class_find_property (klass, "f-tube")));
  g_assert_true (airy_system_param_relevant (system, g_object_class_find_property (klass, "z-count")));
  airy_system_make_microscope (system, objective, 100.0);
  airy_system_set_sample (system, &beads);
  g_assert_true (airy_system_param_relevant (system, g_object_class_find_property (klass, "f-tube")));
  g_assert_true (airy_system_param_relevant (system, g_object_class_find_property (klass, "beads-count")));
  g_assert_false (airy_system_param_relevant (system, g_object_class_find_property (klass, "sample-constant")));
  g_assert_false (airy_system_param_relevant (system, g_object_class_find_property (klass, "sample-file")));
}

/* The provenance stored with results writes every parameter, defaults
 * too (it states the optics whatever a later version's defaults are), and
 * reads back to the same system: every preset, and what a run stores. */
static void
test_full_json (void)
{
  g_auto(GStrv) names = airy_presets_list ();
  guint i;

  g_assert_nonnull (names);
  for (i = 0; names[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *json = airy_preset_get_json (names[i], &error);
      g_autoptr(AirySystem) system = NULL, back = NULL;
      g_autofree char *full = NULL, *again = NULL, *shorter = NULL;

      g_assert_no_error (error);
      system = test_system (json);
      full = airy_system_to_json_full (system);
      shorter = airy_system_to_json (system);
      g_assert_cmpuint (strlen (full), >, strlen (shorter));
      back = airy_system_new_from_data (full, -1, NULL, "full", &error);
      g_assert_no_error (error);
      again = airy_system_to_json (back);
      g_test_message ("%s: %zu bytes in full, %zu short", names[i], strlen (full), strlen (shorter));
      g_assert_cmpstr (again, ==, shorter);
    }
  {
    g_autoptr(AirySystem) system = test_system (
      "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
      " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
      " {\"type\": \"ff-lens\", \"f\": 50}]}");
    g_autoptr(AiryResult) r = test_run (system, &(AiryRunOptions) { .backend = "cpu" });

    /* the objective's defaults are stated: its defocus model and apodisation */
    g_assert_nonnull (r->stack->system_json);
    g_assert_nonnull (strstr (r->stack->system_json, "\"defocus-model\""));
    g_assert_nonnull (strstr (r->stack->system_json, "\"apodisation\""));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();

  g_test_add_func ("/engine/error/domain", test_error_domain);
  g_test_add_func ("/engine/error/range", test_error_range);
  g_test_add_func ("/engine/result-bytes/sensor", test_result_bytes_after_sensor);
  g_test_add_func ("/engine/registry/elements", test_element_registry);
  g_test_add_func ("/engine/backend/cpu-devices", test_cpu_backend);
  g_test_add_func ("/engine/backend/cuda-module", test_cuda_module);
  g_test_add_func ("/engine/modules/element-module", test_element_module);
  g_test_add_func ("/engine/modules/broken-module", test_broken_module);
  g_test_add_func ("/engine/run/sharding-psf", test_sharding_psf);
  g_test_add_func ("/engine/run/progress-cancel", test_progress_and_cancel);
  g_test_add_func ("/engine/run/fast-path-matches-elements", test_fast_path);
  g_test_add_func ("/engine/run/channels-scalar", test_channels_scalar);
  g_test_add_func ("/engine/run/channels-vectorial", test_channels_vectorial);
  g_test_add_func ("/engine/run/channels-refused", test_channels_refused);
  g_test_add_func ("/engine/run/channels-budget", test_channels_budget);
  g_test_add_func ("/engine/system/channels-json", test_channels_json);
  g_test_add_func ("/engine/system/warnings", test_warnings);
  g_test_add_func ("/engine/system/sampling-warnings", test_sampling_warnings);
  g_test_add_func ("/engine/system/full-json", test_full_json);
  g_test_add_func ("/engine/params/ids", test_param_ids);
  g_test_add_func ("/engine/params/relevant", test_param_relevant);
  g_test_add_func ("/engine/params/system-fields", test_system_fields);
  return g_test_run ();
}
