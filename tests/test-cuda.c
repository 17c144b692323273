/* The CUDA backend against the CPU one. Without a CUDA device the whole
 * binary is skipped (TAP "1..0 # SKIP"), as on CI; tests/device/run.sh
 * counts that as a failure on a GPU machine. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <gmodule.h>
#include <glib/gstdio.h>
#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include "airy-test-fit.h"
#include "airy-ops-private.h"

#ifndef EGL_CUDA_DEVICE_NV
#define EGL_CUDA_DEVICE_NV 0x323A
#endif

static AiryBackend *cuda;
static char *tmpdir;

static AiryResult *
run_with (AirySystem *system, const char *backend, const guint *devices, guint n_devices, gboolean resident,
          gboolean keep_psf)
{
  AiryRunOptions options = { .backend = backend, .devices = devices, .n_devices = n_devices,
                             .resident = resident, .keep_psf = keep_psf };

  return test_run (system, &options);
}

static AiryResult *
run_on (AirySystem *system, const char *backend, const guint *devices, guint n_devices)
{
  return run_with (system, backend, devices, n_devices, FALSE, FALSE);
}

/* The GPU's stack has the CPU's shape, voxel size and z, and agrees to
 * tolerance × the peak of each plane (a plane far from focus is compared
 * with its own peak, not the stack's). */
static void
assert_agree (AiryStack *gpu, AiryStack *cpu, double tolerance)
{
  gsize n = airy_stack_plane_size (cpu), i;
  double worst = 0.0;
  guint z;

  g_assert_cmpuint (gpu->depth, ==, cpu->depth);
  g_assert_cmpuint (gpu->height, ==, cpu->height);
  g_assert_cmpuint (gpu->width, ==, cpu->width);
  g_assert_cmpfloat (gpu->dx, ==, cpu->dx);
  g_assert_cmpfloat (gpu->dy, ==, cpu->dy);
  g_assert_cmpfloat (gpu->dz, ==, cpu->dz);
  g_assert_cmpfloat (gpu->z0, ==, cpu->z0);
  for (z = 0; z < cpu->depth; z++)
    {
      const float *a = airy_stack_plane (gpu, z), *b = airy_stack_plane (cpu, z);
      float peak = plane_max (b, n, NULL), plane_worst = 0.0f;

      g_assert_cmpfloat (peak, >, 0.0f);
      for (i = 0; i < n; i++)
        plane_worst = MAX (plane_worst, fabsf (a[i] - b[i]));
      worst = MAX (worst, plane_worst / peak);
    }
  g_test_message ("worst |gpu − cpu| = %.3g of a plane's peak", worst);
  g_assert_cmpfloat (worst, <=, tolerance);
}

static void
agree (const char *json, double tolerance)
{
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) cpu = run_on (system, "cpu", NULL, 0);
  g_autoptr(AiryResult) gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);

  assert_agree (gpu->stack, cpu->stack, tolerance);
}

static const char *widefield_384 =
  "{\"airy\": 1, \"grid\": {\"shape\": [384, 384], \"spacing\": 1.2}, \"spectrum\": {\"wavelengths\": [0.532]},"
  " \"z\": {\"start\": -4, \"stop\": 4, \"count\": 19},"
  " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
  "  {\"type\": \"phase-mask\", \"value\": 1.0}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}";

/* 19 planes of 256², a constant sample: a full batch of 16 and a last one of 3 */
static const char *imaging_19 =
  "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.3}, \"spectrum\": {\"wavelengths\": [0.532]},"
  " \"z\": {\"start\": -4, \"stop\": 4, \"count\": 19},"
  " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
  " \"elements\": [{\"type\": \"phase-mask\", \"value\": 0}], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1}}";

static void
test_psf_agreement (void)
{
  /* the seed widefield workload at reduced size (19 planes: a full batch
   * and a last one of 3), and one with every mask kind */
  agree (widefield_384, 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [200, 256], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [1, 2]},"
         " \"z\": {\"values\": [-2, 0.5, 3]},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 80, \"n\": 1.0, \"na\": 0.7,"
         "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"offset-x\": 0.4},"
         "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5, 7], \"zernike-coefficients\": [0.1, 0.05]},"
         "  {\"type\": \"gaussian-pupil\", \"waist\": 50}, {\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\", \"strength\": 1},"
         "  {\"type\": \"ff-lens\", \"f\": 80, \"na\": 0.65}]}", 1e-5);
}

static void
test_highna_agreement (void)
{
  /* the vectorial components as batch entries (six for unpolarized light,
   * over two wavelengths: twelve entries, 19 planes: a full batch and a
   * last one of 3) with a Gibson–Lanni pupil folded in; circular and a
   * tilted dipole */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.4}, \"spectrum\": {\"wavelengths\": [0.52, 0.6], \"weights\": [1, 2]},"
         " \"z\": {\"start\": -14, \"stop\": -10, \"count\": 19},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.518, \"na\": 1.4,"
         "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"field\": \"vectorial\"},"
         "  {\"type\": \"gibson-lanni\", \"ns\": 1.33, \"ni0\": 1.518, \"depth\": 10},"
         "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.518}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [200, 256], \"spacing\": 0.4}, \"spectrum\": {\"wavelengths\": [0.6]},"
         " \"z\": {\"values\": [-0.5, 0, 0.8]},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 1.2,"
         "   \"defocus-model\": \"nonparaxial\", \"field\": \"vectorial\", \"polarization\": \"circular\"},"
         "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.4}, \"spectrum\": {\"wavelengths\": [0.6]},"
         " \"z\": {\"values\": [-0.5, 0, 0.8]},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.518, \"na\": 1.4,"
         "   \"defocus-model\": \"nonparaxial\", \"field\": \"vectorial\", \"polarization\": \"dipole\","
         "   \"dipole-polar\": 0.6, \"dipole-azimuth\": 1.1},"
         "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.518}]}", 1e-5);
}

static void
test_jones_agreement (void)
{
  /* vectorial polarisation chains on the device: the polarisation
   * microscope preset's chain at 128² (its matrices fold into the source),
   * and one whose JONES ops run as kernels between propagations (a
   * polariser, a quarter-wave plate, a birefringent sample, a circular
   * polariser, crossed analyser), over two wavelengths */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.55]},"
         " \"elements\": [{\"type\": \"plane-wave\", \"field\": \"vectorial\", \"jones-angle\": 0.0},"
         "  {\"type\": \"linear-polarizer\", \"angle\": 0.0},"
         "  {\"type\": \"jones-sample\", \"pattern\": \"spherulite\", \"retardance\": 3.141592653589793, \"radius\": 24.0},"
         "  {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [96, 128], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [1, 2]},"
         " \"elements\": [{\"type\": \"plane-wave\", \"field\": \"vectorial\", \"jones-angle\": 0.3},"
         "  {\"type\": \"linear-polarizer\", \"angle\": 0.2}, {\"type\": \"propagate\", \"z\": 20},"
         "  {\"type\": \"quarter-wave-plate\", \"angle\": 0.7853981633974483},"
         "  {\"type\": \"jones-sample\", \"pattern\": \"spherulite\", \"retardance\": 3.14159, \"radius\": 10},"
         "  {\"type\": \"propagate\", \"z\": 20}, {\"type\": \"circular-polarizer\"},"
         "  {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}]}", 1e-5);
}

static void
test_modality_agreement (void)
{
  /* the combining modalities' presets at three planes: every chain on the
   * GPU (the result says cuda, no fallback warning), the combination as
   * the CPU's to 1e-5 of each plane's peak */
  static const char *presets[] = { "confocal", "two-photon", "ism", "sted", "light-sheet", "sim" };
  const double z[] = { -0.4, 0.0, 0.4 };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (presets); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) system = airy_system_new_from_preset (presets[i], &error);
      g_autoptr(AiryResult) cpu = NULL, gpu = NULL;

      g_assert_no_error (error);
      airy_system_set_z_values (system, z, 3);
      cpu = run_on (system, "cpu", NULL, 0);
      gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);
      g_test_message ("%s: backend %s, %u warnings", presets[i], gpu->backend, gpu->warnings ? gpu->warnings->len : 0);
      g_assert_cmpstr (gpu->backend, ==, "cuda");
      assert_agree (gpu->stack, cpu->stack, 1e-5);
    }
}

static void
test_defocus_far (void)
{
  /* planes far from focus: a defocus phase of thousands of radians, which
   * the device computes in double as the CPU does (each plane against its
   * own peak) */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 1.2}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"values\": [-1000, -250, 40, 600]},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
         "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", 2e-5);
}

static void
test_ops_agreement (void)
{
  /* chains without the fused path run as device operation lists: a plane
   * wave through propagations with padding and an inverse lens; a point
   * source with single-FFT Fresnel and a DF lens; a Gaussian beam */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [96, 80], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
         " \"z\": {\"values\": [0]},"
         " \"elements\": [{\"type\": \"plane-wave\", \"angle-x\": 0.01}, {\"type\": \"square-pupil\", \"width\": 60},"
         "  {\"type\": \"thin-lens\", \"f\": 4000}, {\"type\": \"propagate\", \"z\": 300, \"pad\": 16},"
         "  {\"type\": \"propagate\", \"z\": 150, \"method\": \"angular-spectrum\", \"band-limit\": true, \"pad\": 8, \"output\": \"full\"},"
         "  {\"type\": \"ff-lens\", \"f\": 500, \"inverse\": true}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -50, \"stop\": 50, \"count\": 5},"
         " \"elements\": [{\"type\": \"point-source\", \"z\": 400}, {\"type\": \"gaussian-pupil\", \"waist\": 40},"
         "  {\"type\": \"propagate\", \"z\": 1000, \"method\": \"single-fft\"}, {\"type\": \"df-lens\", \"f\": 800, \"d\": 300}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.25}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": 0, \"stop\": 20, \"count\": 4},"
         " \"elements\": [{\"type\": \"gaussian-beam\", \"waist\": 2},"
         "  {\"type\": \"propagate\", \"z\": 5, \"method\": \"angular-spectrum\", \"remove-evanescent\": false}]}", 1e-5);
}

static void
test_imaging_agreement (void)
{
  /* the seed imaging workload at reduced size with its last, smaller
   * batch; a bead sample with block sums; linear resampling */
  agree (imaging_19, 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 12},"
         " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
         " \"sensor\": {\"reduce\": \"sum\", \"resample\": \"block-sum\", \"factor\": 2},"
         " \"sample\": {\"beads\": {\"count\": 30, \"seed\": 4}}}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 5},"
         " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
         " \"sensor\": {\"reduce\": \"sum\", \"resample\": \"linear\", \"spacing\": 0.15},"
         " \"sample\": {\"beads\": {\"count\": 30, \"seed\": 4}}}", 1e-5);
  /* and a PSF stack resampled linearly per plane */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
         " \"z\": {\"values\": [-1, 0, 1.5]}, \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0, \"na\": 0.4},"
         "  {\"type\": \"ff-lens\", \"f\": 100}, {\"type\": \"sensor\", \"resample\": \"linear\", \"spacing\": 0.61}]}", 1e-5);
}

static void
test_file_sample (void)
{
  /* a sample volume from a TIFF file: uploaded plane by plane through the
   * pinned staging */
  g_autofree char *path = g_build_filename (tmpdir, "volume.tif", NULL);
  g_autofree char *json = NULL;
  g_autoptr(AiryStack) volume = airy_stack_new (7, 96, 96);
  g_autoptr(GError) error = NULL;
  guint z, i;

  for (z = 0; z < 7; z++)
    for (i = 0; i < 96 * 96; i++)
      airy_stack_plane (volume, z)[i] = (float) ((i * 7 + z * 13) % 29) / 29.0f;
  volume->dx = volume->dy = 0.1;
  volume->dz = 0.5;
  g_assert_true (airy_tiff_write (path, volume, &error));
  g_assert_no_error (error);
  json = g_strdup_printf ("{\"airy\": 1, \"grid\": {\"shape\": [96, 96], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.532]},"
                          " \"z\": {\"start\": -1.5, \"stop\": 1.5, \"count\": 7},"
                          " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
                          " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"%s\"}}", path);
  agree (json, 1e-5);
  g_unlink (path);
}

static void
test_keep_psf (void)
{
  g_autoptr(AirySystem) system = test_system (imaging_19);
  g_autoptr(AiryResult) cpu = run_with (system, "cpu", NULL, 0, FALSE, TRUE);
  g_autoptr(AiryResult) gpu = run_with (system, "cuda", (guint[]) { 0 }, 1, FALSE, TRUE);

  g_assert_nonnull (gpu->psf);
  assert_agree (gpu->psf, cpu->psf, 1e-5);
  assert_agree (gpu->stack, cpu->stack, 1e-5);
}

static void
test_memory_limited (void)
{
  /* a forced budget of 40 MiB: the 384² planes go in batches of a few,
   * the imaging planes too; both with a last, smaller batch */
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) big = NULL;

  g_setenv ("AIRY_DEVICE_MEMORY_BUDGET", "40M", TRUE);
  agree (widefield_384, 1e-5);
  agree (imaging_19, 1e-5);
  /* what cannot fit at all says so, naming what it needs */
  g_setenv ("AIRY_DEVICE_MEMORY_BUDGET", "2M", TRUE);
  big = test_system (widefield_384);
  g_assert_null (airy_run (big, &(AiryRunOptions) { .backend = "cuda" }, NULL, NULL, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_assert_true (g_str_has_prefix (error->message, "grid.shape: device 0 needs at least "));
  g_clear_error (&error);
  g_setenv ("AIRY_DEVICE_MEMORY_BUDGET", "lots", TRUE);
  g_assert_null (airy_run (big, &(AiryRunOptions) { .backend = "cuda" }, NULL, NULL, NULL, &error));
  g_assert_cmpstr (error->message, ==, "AIRY_DEVICE_MEMORY_BUDGET: must be a size such as 512M or 2G, got \"lots\"");
  g_unsetenv ("AIRY_DEVICE_MEMORY_BUDGET");
  /* and a failed run leaves nothing behind for the next one */
  agree (widefield_384, 1e-5);
}

static void
test_second_run (void)
{
  /* the second identical run uses the kept pupil data and pooled plans:
   * the same numbers, no more memory */
  g_autoptr(AirySystem) system = test_system (widefield_384);
  g_autoptr(AirySystem) imaging = test_system (imaging_19);
  g_autoptr(AiryResult) cpu = run_on (system, "cpu", NULL, 0);
  g_autoptr(AiryResult) first = run_on (system, "cuda", (guint[]) { 0 }, 1);
  guint64 peak = airy_backend_peak_memory (cuda, 0), free_before = airy_backend_free_memory (cuda, 0);
  guint64 allocations = airy_backend_get_counter (cuda, "buffers-allocated");
  g_autoptr(AiryResult) second = run_on (system, "cuda", (guint[]) { 0 }, 1);
  guint64 allocations_second = airy_backend_get_counter (cuda, "buffers-allocated");
  g_autoptr(AiryResult) other = run_on (imaging, "cuda", (guint[]) { 0 }, 1);
  g_autoptr(AiryResult) third = run_on (system, "cuda", (guint[]) { 0 }, 1);

  /* the second run's buffers were the first run's, kept: none allocated */
  g_assert_cmpuint (allocations_second, ==, allocations);

  g_assert_cmpmem (second->stack->data, 19 * 384 * 384 * sizeof (float), first->stack->data,
                   19 * 384 * 384 * sizeof (float));
  g_assert_cmpmem (third->stack->data, 19 * 384 * 384 * sizeof (float), first->stack->data,
                   19 * 384 * 384 * sizeof (float));
  assert_agree (third->stack, cpu->stack, 1e-5);
  g_assert_cmpuint (airy_backend_peak_memory (cuda, 0), >=, peak);
  /* nothing of the runs stays on the device but the caches of the last */
  g_test_message ("free before %" G_GUINT64_FORMAT " MiB, after %" G_GUINT64_FORMAT " MiB", free_before >> 20,
                  airy_backend_free_memory (cuda, 0) >> 20);
  g_assert_cmpuint (airy_backend_free_memory (cuda, 0) + (64u << 20), >=, free_before);
}

static void
test_channels (void)
{
  /* several wavelengths kept as channels on the GPU, a vectorial field's
   * components summed into their wavelength's: each wavelength's stack and
   * the sum as the CPU's; kept on the device, the sum stays there and the
   * channels come home */
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [128, 96], \"spacing\": 3.6},"
    " \"spectrum\": {\"wavelengths\": [0.55, 0.65], \"weights\": [2, 1]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 19},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.518, \"na\": 1.4,"
    "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"field\": \"vectorial\","
    "   \"polarization\": \"unpolarized\"}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.518}]}");
  AiryRunOptions options = { .backend = "cpu", .per_wavelength = TRUE };
  g_autoptr(AiryResult) cpu = test_run (system, &options);
  guint pass, l;

  for (pass = 0; pass < 2; pass++)
    {
      g_autoptr(AiryResult) gpu = NULL;
      g_autoptr(AiryStack) sum = NULL;
      g_autoptr(GError) error = NULL;

      options = (AiryRunOptions) { .backend = "cuda", .devices = (guint[]) { 0 }, .n_devices = 1,
                                   .per_wavelength = TRUE, .resident = pass == 1 };
      gpu = test_run (system, &options);
      g_assert_cmpuint (gpu->n_channels, ==, 2);
      for (l = 0; l < 2; l++)
        assert_agree (gpu->channels[l], cpu->channels[l], 1e-5);
      sum = pass == 1 ? airy_resident_to_stack (gpu->resident, &error) : airy_stack_copy (gpu->stack);
      g_assert_no_error (error);
      assert_agree (sum, cpu->stack, 1e-5);
    }
}

static void
test_constant_sums_first (void)
{
  /* a sample constant in z: (Σ_z P_z) ⊛ V, one padded transform for the
   * 19 planes (one per plane for a sample that varies), the CPU's image */
  g_autoptr(AirySystem) system = test_system (imaging_19);
  g_autoptr(AiryResult) cpu = run_on (system, "cpu", NULL, 0);
  guint64 before = airy_backend_get_counter (cuda, "convolutions");
  g_autoptr(AiryResult) gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);

  g_assert_cmpuint (airy_backend_get_counter (cuda, "convolutions") - before, ==, 1);
  assert_agree (gpu->stack, cpu->stack, 1e-5);
  /* on every device, the sums meet in the all-reduce */
  if (airy_backend_n_devices (cuda) >= 2)
    {
      g_autoptr(AiryResult) two = run_on (system, "cuda", (guint[]) { 0, 1 }, 2);
      assert_agree (two->stack, cpu->stack, 1e-5);
    }
}

static void
test_resident_download (void)
{
  /* `bench --resident`: the run keeps its stack on the device, the
   * download comes after, with the PCIe floor beside it */
  g_autoptr(AirySystem) system = test_system (widefield_384);
  g_autoptr(AiryResult) host = run_on (system, "cuda", (guint[]) { 0 }, 1);
  g_autoptr(AiryResult) kept = run_with (system, "cuda", (guint[]) { 0 }, 1, TRUE, FALSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) home = airy_resident_to_stack (kept->resident, &error);
  double floor_s;

  g_assert_no_error (error);
  g_assert_null (airy_resident_get_stack (kept->resident)->data);
  g_assert_cmpmem (home->data, 19 * 384 * 384 * sizeof (float), host->stack->data, 19 * 384 * 384 * sizeof (float));
  g_assert_true (airy_backend_has_download_floor (cuda));
  floor_s = airy_backend_download_floor (cuda, 0, 19 * 384 * 384 * sizeof (float), &error);
  g_assert_no_error (error);
  g_test_message ("PCIe floor of %u MiB: %.3f ms", 19 * 384 * 384 * 4 >> 20, floor_s * 1e3);
  g_assert_cmpfloat (floor_s, >, 0.0);
  g_assert_cmpfloat (floor_s, <, 1.0);
}

/* The plan's program, as the backends get it (a CPU-side check). */
static char *
program_of (AirySystem *system)
{
  AiryRunOptions options = { .backend = "cpu" };
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryPlan) plan = _airy_plan_new (system, &options, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (_airy_plan_compile (plan, &error));
  return _airy_plan_describe (plan);
}

static const char *widefield_z =
  "{\"airy\": 1, \"grid\": {\"shape\": [384, 384], \"spacing\": 1.2}, \"spectrum\": {\"wavelengths\": [0.532]},"
  " \"z\": {\"start\": %g, \"stop\": %g, \"count\": %u},"
  " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": %g},"
  "  {\"type\": \"phase-mask\", \"value\": 1.0}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}";

static void
test_pupil_cache (void)
{
  /* the pupil's device copies key on the optics, z left out: a run of
   * other planes builds and uploads nothing, other optics build anew */
  g_autofree char *ja = g_strdup_printf (widefield_z, -4.0, 4.0, 19, 0.8);
  g_autofree char *jb = g_strdup_printf (widefield_z, -1.5, 6.5, 7, 0.8);
  g_autofree char *jc = g_strdup_printf (widefield_z, -4.0, 4.0, 19, 0.7);
  g_autoptr(AirySystem) a = test_system (ja);
  g_autoptr(AirySystem) b = test_system (jb);
  g_autoptr(AirySystem) c = test_system (jc);
  g_autoptr(AiryResult) ra = NULL, rb = NULL, rc = NULL, cpu = NULL;
  guint64 builds, uploads;

  ra = run_on (a, "cuda", (guint[]) { 0 }, 1);
  builds = airy_backend_get_counter (cuda, "pupil-builds");
  uploads = airy_backend_get_counter (cuda, "pupil-uploads");
  g_assert_cmpuint (builds, >=, 1);
  rb = run_on (b, "cuda", (guint[]) { 0 }, 1);
  g_assert_cmpuint (airy_backend_get_counter (cuda, "pupil-builds"), ==, builds);
  g_assert_cmpuint (airy_backend_get_counter (cuda, "pupil-uploads"), ==, uploads);
  cpu = run_on (b, "cpu", NULL, 0);
  assert_agree (rb->stack, cpu->stack, 1e-5);
  rc = run_on (c, "cuda", (guint[]) { 0 }, 1);
  g_assert_cmpuint (airy_backend_get_counter (cuda, "pupil-builds"), ==, builds + 1);
  g_assert_cmpuint (airy_backend_get_counter (cuda, "pupil-uploads"), ==, uploads + 1);
}

static void
test_module_element_fuses (void)
{
  /* an element type from a module (tests/modules: pixelwise, no compile())
   * is folded into the source by the engine, so the GPU runs the chain as
   * FUSED_PSF, as the CPU does */
  static const char *json =
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
    " \"z\": {\"start\": -3, \"stop\": 3, \"count\": 9},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0, \"na\": 0.6},"
    "  {\"type\": \"ring-mask\", \"inner\": 20, \"outer\": 55}, {\"type\": \"ff-lens\", \"f\": 100}]}";
  g_autoptr(AirySystem) system = NULL;
  g_autofree char *program = NULL;
  guint64 builds = airy_backend_get_counter (cuda, "pupil-builds");

  if (airy_element_lookup ("ring-mask") == G_TYPE_INVALID)
    {
      g_test_skip ("the example module is not on the modules path");
      return;
    }
  system = test_system (json);
  program = program_of (system);
  g_assert_cmpstr (program, ==, "fused-psf");
  agree (json, 1e-5);
  g_assert_cmpuint (airy_backend_get_counter (cuda, "pupil-builds"), ==, builds + 1);
}

static void
test_seed_presets (void)
{
  /* both seed workloads at the CPU's own shape (128 planes of 1536²) */
  static const char *presets[] = { "seed-widefield", "seed-imaging" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (presets); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) system = airy_system_new_from_preset (presets[i], &error);
      g_autoptr(AiryResult) cpu = NULL, gpu = NULL;

      g_assert_no_error (error);
      cpu = run_on (system, "cpu", NULL, 0);
      gpu = run_on (system, "cuda", NULL, 0);
      g_test_message ("%s", presets[i]);
      assert_agree (gpu->stack, cpu->stack, 2e-5);
    }
}

static void
test_noise (void)
{
  /* Poisson on the device: mean ≈ variance, with the CPU's generator */
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"values\": [0]}, \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0, \"na\": 0.2},"
    "  {\"type\": \"ff-lens\", \"f\": 100}, {\"type\": \"sensor\", \"noise\": \"poisson\", \"exposure\": 1e6, \"seed\": 3}]}");
  g_autoptr(AiryResult) cpu = run_on (system, "cpu", NULL, 0);
  g_autoptr(AiryResult) gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);
  gsize n = airy_stack_plane_size (gpu->stack), i, same = 0;

  for (i = 0; i < n; i++)
    {
      g_assert_cmpfloat (gpu->stack->data[i], ==, floorf (gpu->stack->data[i]));
      same += gpu->stack->data[i] == cpu->stack->data[i];
    }
  /* the same counter-based draws: equal counts but for rounding at the edges */
  g_assert_cmpfloat ((double) same / n, >=, 0.999);
}

static const char *beads_24 =
  "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.3}, \"spectrum\": {\"wavelengths\": [0.532]},"
  " \"z\": {\"start\": -4, \"stop\": 4, \"count\": 24},"
  " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
  " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"beads\": {\"count\": 50, \"seed\": 1}}}";

static void
test_multi_device (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) one = NULL;
  guint n = airy_backend_n_devices (cuda), k;

  if (n < 2)
    {
      g_test_skip ("one CUDA device: nothing to compare across devices");
      return;
    }
  system = test_system (beads_24);
  one = run_on (system, "cuda", (guint[]) { 0 }, 1);
  for (k = 2; k <= MIN (n, 4); k++)
    {
      guint devices[4] = { 0, 1, 2, 3 };
      g_autoptr(AiryResult) many = run_on (system, "cuda", devices, k);

      assert_agree (many->stack, one->stack, 1e-6);
    }
}

static void
test_fewer_planes_than_devices (void)
{
  /* slots without planes: left out of the NCCL communicator, no image on
   * an empty root; one plane per device set, and explicit chunks with 0 */
  guint n = airy_backend_n_devices (cuda);
  guint devices[] = { 0, 1 };
  g_autoptr(AirySystem) psf = NULL, image = NULL;
  g_autoptr(AiryResult) psf_one = NULL, image_one = NULL;

  if (n < 2)
    {
      g_test_skip ("one CUDA device: no slot can be empty (tests/test-backend covers the logic on CPU devices)");
      return;
    }
  psf = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
                     " \"z\": {\"values\": [0.5]}, \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
                     "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  image = test_system (beads_24);
  psf_one = run_on (psf, "cuda", devices, 1);
  image_one = run_on (image, "cuda", devices, 1);
  {
    g_autoptr(AiryResult) psf_two = run_on (psf, "cuda", devices, 2);
    g_autoptr(AiryResult) image_two = test_run (image, &(AiryRunOptions) {
      .backend = "cuda", .devices = devices, .n_devices = 2, .chunks = (guint[]) { 0, 24 } });
    g_autoptr(AiryResult) image_three = test_run (image, &(AiryRunOptions) {
      .backend = "cuda", .devices = devices, .n_devices = 2, .chunks = (guint[]) { 24, 0 } });

    assert_agree (psf_two->stack, psf_one->stack, 1e-6);
    assert_agree (image_two->stack, image_one->stack, 1e-6);
    assert_agree (image_three->stack, image_one->stack, 1e-6);
  }
}

/* ---- results kept on the device, for the viewer ---- */

typedef struct
{
  guint calls;
  float *data;
  guint width, height;
} HostUpload;

static void
host_upload (const float *data, guint width, guint height, gpointer user_data)
{
  HostUpload *u = user_data;

  u->calls++;
  g_free (u->data);
  u->data = g_memdup2 (data, (gsize) width * height * sizeof (float));
  u->width = width;
  u->height = height;
}

/* Every slot of a device result against the same slot of the CPU's. */
static void
compare_slots (AiryResident *gpu, AiryResident *cpu)
{
  const AiryStack *s = airy_resident_get_stack (cpu);
  AirySlice slices[] = { { AIRY_SLICE_XY, 0 }, { AIRY_SLICE_XY, s->depth - 1 }, { AIRY_SLICE_XZ, s->height / 2 },
                         { AIRY_SLICE_YZ, s->width / 3 }, { AIRY_SLICE_MIP, 0 } };
  gsize big = (gsize) MAX (s->height, s->depth) * MAX (s->width, s->height);
  g_autofree float *a = g_new (float, big), *b = g_new (float, big);
  g_autofree float *axial_a = g_new (float, s->depth), *axial_b = g_new (float, s->depth);
  g_autoptr(GError) error = NULL;
  guint64 ca[64], cb[64];
  AirySliceStats sa = { 0, 0, 64, ca }, sb = { 0, 0, 64, cb };
  guint i, w, h, k;

  g_assert_null (airy_resident_get_stack (gpu)->data);
  for (i = 0; i < G_N_ELEMENTS (slices); i++)
    {
      float peak, worst = 0.0f;
      guint64 moved = 0;

      airy_slice_size (s, &slices[i], &w, &h);
      g_assert_true (airy_resident_read_slice (gpu, &slices[i], a, &error));
      g_assert_no_error (error);
      g_assert_true (airy_resident_read_slice (cpu, &slices[i], b, &error));
      peak = plane_max (b, (gsize) w * h, NULL);
      for (k = 0; k < w * h; k++)
        worst = MAX (worst, fabsf (a[k] - b[k]));
      g_assert_cmpfloat (worst, <=, 1e-5 * peak);
      /* statistics on the device: the extremes, and the histogram up to the
       * few values at bin edges that rounding moves */
      g_assert_true (airy_resident_stats (gpu, &slices[i], &sa, &error));
      g_assert_true (airy_resident_stats (cpu, &slices[i], &sb, &error));
      g_assert_cmpfloat_with_epsilon (sa.max, sb.max, 1e-5 * peak);
      for (k = 0; k < 64; k++)
        moved += ca[k] > cb[k] ? ca[k] - cb[k] : cb[k] - ca[k];
      g_assert_cmpuint (moved, <=, w * h / 100 + 2);
    }
  g_assert_true (airy_resident_stats (gpu, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &sa, &error));
  g_assert_true (airy_resident_stats (cpu, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &sb, &error));
  g_assert_cmpfloat_with_epsilon (sa.max, sb.max, 1e-5 * sb.max);
  /* the axial profile through the centre, across the device's parts */
  g_assert_true (airy_resident_read_box (gpu, &(AiryBox) { 0, s->height / 2, s->width / 2, s->depth, 1, 1 }, axial_a, &error));
  g_assert_true (airy_resident_read_box (cpu, &(AiryBox) { 0, s->height / 2, s->width / 2, s->depth, 1, 1 }, axial_b, &error));
  for (k = 0; k < s->depth; k++)
    g_assert_cmpfloat_with_epsilon (axial_a[k], axial_b[k], 1e-5 * sb.max);
}

static void
test_resident (void)
{
  g_autoptr(AirySystem) system = test_system (widefield_384);
  g_autoptr(AiryResult) cpu = run_with (system, "cpu", NULL, 0, TRUE, FALSE);
  g_autoptr(AiryResult) gpu = run_with (system, "cuda", (guint[]) { 0 }, 1, TRUE, FALSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) copy = NULL;
  HostUpload up = { 0 };
  AiryTexture texture = { .texture = 7, .interop = FALSE, .upload = host_upload, .user_data = &up };
  g_autofree float *plane = g_new (float, 384 * 384);

  /* no host copy of the stack: its geometry only */
  g_assert_null (gpu->stack);
  g_assert_cmpstr (airy_resident_get_backend_name (gpu->resident), ==, "cuda");
  g_assert_cmpfloat (airy_resident_get_stack (gpu->resident)->dz, ==, airy_resident_get_stack (cpu->resident)->dz);
  compare_slots (gpu->resident, cpu->resident);
  /* a GL context not on an NVIDIA GPU: through host memory, saying why */
  g_assert_true (airy_resident_to_texture (gpu->resident, &(AirySlice) { AIRY_SLICE_XY, 5 }, &texture, &error));
  g_assert_no_error (error);
  g_assert_cmpint (texture.path, ==, AIRY_TEXTURE_HOST);
  g_assert_nonnull (texture.note);
  g_assert_cmpuint (up.calls, ==, 1);
  g_assert_true (airy_resident_read_slice (gpu->resident, &(AirySlice) { AIRY_SLICE_XY, 5 }, plane, &error));
  g_assert_cmpmem (up.data, 384 * 384 * sizeof (float), plane, 384 * 384 * sizeof (float));
  /* saving brings it home, once */
  copy = airy_resident_to_stack (gpu->resident, &error);
  g_assert_no_error (error);
  assert_agree (copy, (AiryStack *) airy_resident_get_stack (cpu->resident), 1e-5);
  g_free (up.data);

  /* an image (one plane, made on the root) stays on the device too */
  {
    g_autoptr(AirySystem) imaging = test_system (imaging_19);
    g_autoptr(AiryResult) icpu = run_with (imaging, "cpu", NULL, 0, TRUE, FALSE);
    g_autoptr(AiryResult) igpu = run_with (imaging, "cuda", (guint[]) { 0 }, 1, TRUE, FALSE);
    g_autofree float *a = g_new (float, 256 * 256), *b = g_new (float, 256 * 256);
    float peak, worst = 0.0f;
    guint k;

    g_assert_true (airy_resident_read_slice (igpu->resident, &(AirySlice) { AIRY_SLICE_XY, 0 }, a, &error));
    g_assert_true (airy_resident_read_slice (icpu->resident, &(AirySlice) { AIRY_SLICE_XY, 0 }, b, &error));
    peak = plane_max (b, 256 * 256, NULL);
    for (k = 0; k < 256 * 256; k++)
      worst = MAX (worst, fabsf (a[k] - b[k]));
    g_assert_cmpfloat (worst, <=, 1e-5 * peak);
  }
}

static void
test_resident_makes_room (void)
{
  /* the result the viewer shows is held on the device; a later run that
   * needs the room moves it to host memory (no false "needs X, Y free",
   * no smaller batches), and the viewer still reads the same values */
  g_autoptr(AirySystem) system = test_system (widefield_384);
  g_autoptr(AiryResult) cpu = run_with (system, "cpu", NULL, 0, TRUE, FALSE);
  g_autoptr(AiryResult) held = run_with (system, "cuda", (guint[]) { 0 }, 1, TRUE, FALSE);
  g_autoptr(AiryResult) next = NULL;
  g_autoptr(GError) error = NULL;
  HostUpload up = { 0 };
  AiryTexture texture = { .texture = 7, .interop = TRUE, .upload = host_upload, .user_data = &up };

  /* 19 × 384² floats are 10.7 MiB held; the next run's full batches of 16
   * planes (≈ 77 MiB) do not fit within 64 MiB: the held result moves to
   * host memory first, then the run takes what is there */
  g_setenv ("AIRY_DEVICE_MEMORY_BUDGET", "64M", TRUE);
  next = run_on (system, "cuda", (guint[]) { 0 }, 1);
  g_unsetenv ("AIRY_DEVICE_MEMORY_BUDGET");
  assert_agree (next->stack, (AiryStack *) airy_resident_get_stack (cpu->resident), 1e-5);
  compare_slots (held->resident, cpu->resident);
  g_assert_true (airy_resident_to_texture (held->resident, &(AirySlice) { AIRY_SLICE_XZ, 100 }, &texture, &error));
  g_assert_cmpint (texture.path, ==, AIRY_TEXTURE_HOST);
  g_assert_cmpstr (texture.note, ==, "the result was moved to host memory to make room for a later run");
  g_free (up.data);
}

/* ---- GL interop through an EGL context on the device ---- */

static gboolean
have_library (const char *name, char **why)
{
  GModule *m = g_module_open (name, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);

  if (m == NULL)
    {
      *why = g_strdup_printf ("no %s here (libepoxy would abort without it): %s", name, g_module_error ());
      return FALSE;
    }
  g_module_close (m);
  return TRUE;
}

typedef struct
{
  EGLDisplay display;
  EGLContext context;
  int        cuda_device;   /* the CUDA device of the EGL device, -1 unknown */
} Egl;

/* An OpenGL context on the EGL device that is a CUDA device; FALSE with
 * the reason when there is none. Probes the libraries first: libepoxy
 * aborts when libEGL.so.1 or the GL library is missing. */
static gboolean
egl_open (Egl *egl, char **why)
{
  static const EGLint config_attribs[] = { EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE };
  EGLDeviceEXT devices[16];
  EGLint n_devices = 0, major, minor, n_config = 0, i;
  EGLConfig config;
  EGLDeviceEXT chosen = NULL;

  egl->cuda_device = -1;
  if (!have_library ("libEGL.so.1", why))
    return FALSE;
  if (!have_library ("libOpenGL.so.0", why) && !have_library ("libGL.so.1", why))
    return FALSE;
  g_clear_pointer (why, g_free);
  if (!epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_EXT_device_enumeration")
      || !eglQueryDevicesEXT (G_N_ELEMENTS (devices), devices, &n_devices) || n_devices == 0)
    {
      *why = g_strdup ("no EGL device enumeration here (no NVIDIA EGL vendor library?)");
      return FALSE;
    }
  /* the device that is a CUDA device (Mesa's software device may come first) */
  for (i = 0; i < n_devices && chosen == NULL; i++)
    {
      const char *ext = eglQueryDeviceStringEXT (devices[i], EGL_EXTENSIONS);
      EGLAttrib attrib = -1;

      if (ext && strstr (ext, "EGL_NV_device_cuda") && eglQueryDeviceAttribEXT (devices[i], EGL_CUDA_DEVICE_NV, &attrib))
        {
          chosen = devices[i];
          egl->cuda_device = (int) attrib;
        }
    }
  if (chosen == NULL)
    {
      *why = g_strdup_printf ("none of the %d EGL devices is a CUDA device", n_devices);
      return FALSE;
    }
  egl->display = eglGetPlatformDisplayEXT (EGL_PLATFORM_DEVICE_EXT, chosen, NULL);
  if (egl->display == EGL_NO_DISPLAY || !eglInitialize (egl->display, &major, &minor) || !eglBindAPI (EGL_OPENGL_API)
      || !eglChooseConfig (egl->display, config_attribs, &config, 1, &n_config) || n_config == 0)
    {
      *why = g_strdup ("no EGL OpenGL display on the device");
      return FALSE;
    }
  egl->context = eglCreateContext (egl->display, config, EGL_NO_CONTEXT, NULL);
  if (egl->context == EGL_NO_CONTEXT || !eglMakeCurrent (egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl->context))
    {
      *why = g_strdup_printf ("no surfaceless EGL context (0x%x)", eglGetError ());
      return FALSE;
    }
  return TRUE;
}

static void
egl_close (Egl *egl)
{
  eglMakeCurrent (egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext (egl->display, egl->context);
  eglTerminate (egl->display);
}

static void
gl_upload (const float *data, guint width, guint height, gpointer user_data)
{
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, (GLsizei) width, (GLsizei) height, GL_RED, GL_FLOAT, data);
}

/* The bound texture specified as the viewer's (GL_R32F, w × h) and complete:
 * without GL_TEXTURE_MIN_FILTER a texture without mipmaps is incomplete
 * (the default filter wants them), and R32F filters only with NEAREST. */
static void
texture_spec (guint w, guint h)
{
  glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, (GLsizei) w, (GLsizei) h, 0, GL_RED, GL_FLOAT, NULL);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
}

/* The slice through the slot into a texture of its size, read back. */
static float *
through_texture (AiryResident *r, GLuint texture, guint generation, const AirySlice *slice, gboolean interop,
                 AiryTexture *out)
{
  g_autoptr(GError) error = NULL;
  guint w, h;
  float *back;

  airy_slice_size (airy_resident_get_stack (r), slice, &w, &h);
  *out = (AiryTexture) { .texture = texture, .generation = generation, .context = eglGetCurrentContext (),
                         .interop = interop, .upload = gl_upload };
  glBindTexture (GL_TEXTURE_2D, texture);
  g_assert_true (airy_resident_to_texture (r, slice, out, &error));
  g_assert_no_error (error);
  back = g_new (float, (gsize) w * h);
  glBindTexture (GL_TEXTURE_2D, texture);
  glPixelStorei (GL_PACK_ALIGNMENT, 4);
  glGetTexImage (GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, back);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
  return back;
}

static void
test_gl_interop (void)
{
  /* the viewer's slot: slices of a result on the device go device to
   * device into GL textures (the section gathered by a kernel), exactly
   * the values the host path gives; re-specified textures and a context
   * going away drop their registrations */
  g_autofree char *why = NULL;
  Egl egl = { 0 };
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) gpu = NULL;
  AirySlice slices[] = { { AIRY_SLICE_XY, 2 }, { AIRY_SLICE_XZ, 64 }, { AIRY_SLICE_YZ, 40 }, { AIRY_SLICE_MIP, 0 } };
  GLuint textures[G_N_ELEMENTS (slices)];
  guint i;

  if (!egl_open (&egl, &why))
    {
      g_test_skip (why);
      return;
    }
  if (egl.cuda_device >= (int) airy_backend_n_devices (cuda))
    {
      g_test_skip ("the EGL device's CUDA index is not among this process's CUDA devices");
      egl_close (&egl);
      return;
    }
  system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [128, 96], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
                        " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 5},"
                        " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
                        "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  gpu = run_with (system, "cuda", (guint[]) { egl.cuda_device }, 1, TRUE, FALSE);
  glGenTextures (G_N_ELEMENTS (slices), textures);
  for (i = 0; i < G_N_ELEMENTS (slices); i++)
    {
      g_autofree float *device = NULL, *host = NULL, *again = NULL;
      AiryTexture t;
      guint w, h;

      airy_slice_size (airy_resident_get_stack (gpu->resident), &slices[i], &w, &h);
      glBindTexture (GL_TEXTURE_2D, textures[i]);
      texture_spec (w, h);
      device = through_texture (gpu->resident, textures[i], 1, &slices[i], TRUE, &t);
      g_assert_cmpint (t.path, ==, AIRY_TEXTURE_DEVICE);
      g_assert_cmpint (t.device, ==, egl.cuda_device);
      host = through_texture (gpu->resident, textures[i], 1, &slices[i], FALSE, &t);
      g_assert_cmpint (t.path, ==, AIRY_TEXTURE_HOST);
      g_assert_cmpmem (device, (gsize) w * h * sizeof (float), host, (gsize) w * h * sizeof (float));
      /* the texture re-specified (the viewer bumps its generation): the
       * registration is made anew, the copy still lands */
      texture_spec (w, h);
      again = through_texture (gpu->resident, textures[i], 2, &slices[i], TRUE, &t);
      g_assert_cmpmem (again, (gsize) w * h * sizeof (float), host, (gsize) w * h * sizeof (float));
    }
  /* deleted textures, a new one under a recycled name after the context's
   * registrations were dropped */
  airy_backends_gl_release (eglGetCurrentContext ());
  glDeleteTextures (G_N_ELEMENTS (slices), textures);
  glGenTextures (1, textures);
  glBindTexture (GL_TEXTURE_2D, textures[0]);
  texture_spec (96, 128);
  {
    g_autofree float *back = NULL, *ref = g_new (float, 96 * 128);
    g_autoptr(GError) error = NULL;
    AiryTexture t;

    back = through_texture (gpu->resident, textures[0], 1, &slices[0], TRUE, &t);
    g_assert_true (airy_resident_read_slice (gpu->resident, &slices[0], ref, &error));
    g_assert_cmpmem (back, 96 * 128 * sizeof (float), ref, 96 * 128 * sizeof (float));
  }
  airy_backends_gl_release (eglGetCurrentContext ());
  glDeleteTextures (1, textures);
  egl_close (&egl);
}

static void
test_versions (void)
{
  /* the libraries loaded here, as `airy-sim info` prints them */
  AiryDeviceInfo info = { 0 };

  airy_backend_device_info (cuda, 0, &info);
  g_test_message ("%s: %s", info.name, info.detail);
  g_assert_nonnull (strstr (info.detail, "cuFFT "));
  g_assert_nonnull (strstr (info.detail, "NCCL 2."));
  g_assert_nonnull (strstr (info.detail, "driver "));
  airy_device_info_clear (&info);
}

/* The fit's passes on the GPU (airy-cuda-fit.c) equal the CPU model's:
 * loss, gradient and μ, full and every 4th plane (batches and a rest),
 * scalar and vectorial, Poisson and least squares; then a whole fit on the
 * GPU recovers the CPU fit's terms. */
static void
test_fit_agreement (void)
{
  static const int idx[] = { 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
  static const int tidx[] = { 5, 7, 12 };
  static const double tc[] = { 0.08, -0.06, 0.05 };
  g_autofree char *mask = mask_json (tidx, tc, G_N_ELEMENTS (tidx));
  AiryFitOptions options;
  guint v, poisson, i;

  for (v = 0; v < 2; v++)
    for (poisson = 0; poisson < 2; poisson++)
      {
        g_autoptr(AirySystem) base = v ? oil_system (64, 24, TRUE, NULL, NULL) : micro_system (64, 24, NULL, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(AiryFitModel) cpu = _airy_fit_model_new (base, idx, G_N_ELEMENTS (idx), 48, 40, 2, NULL, &error);
        g_autoptr(AiryFitModel) gpu = _airy_fit_model_new (base, idx, G_N_ELEMENTS (idx), 48, 40, 2, NULL, &error);
        double loss_rel, grad_rel, mu_rel;

        g_assert_no_error (error);
        g_assert_true (_airy_fit_model_set_device (gpu, cuda, 0, &error));
        g_assert_no_error (error);
        test_fit_compare_device (cpu, gpu, poisson, 4, &loss_rel, &grad_rel, &mu_rel);
        g_test_message ("%s, %s: loss %.2g, gradient %.2g, μ %.2g", v ? "vectorial" : "scalar",
                        poisson ? "Poisson" : "least squares", loss_rel, grad_rel, mu_rel);
        g_assert_true (_airy_fit_model_check (gpu, &error));
        g_assert_cmpfloat (loss_rel, <=, 1e-6);
        g_assert_cmpfloat (grad_rel, <=, 1e-4);
        g_assert_cmpfloat (mu_rel, <=, 1e-5);
      }
  {
    g_autoptr(AirySystem) truth = micro_system (64, 24, ", \"offset-x\": 0.1, \"z\": -0.2", mask);
    g_autoptr(AirySystem) base = micro_system (64, 24, NULL, NULL);
    AiryRunOptions run = { .backend = "cpu", .keep_psf = TRUE };
    g_autoptr(AiryResult) r = test_run (truth, &run);
    g_autoptr(AiryStack) beads = airy_stack_copy (r->psf);
    g_autoptr(AiryFitResult) on_cpu = NULL, on_gpu = NULL;
    g_autoptr(GError) error = NULL;
    gsize n = (gsize) beads->depth * beads->height * beads->width, q;
    g_autofree float *mu = g_new (float, n);
    double peak = 0, worst = 0;

    for (q = 0; q < n; q++)
      peak = MAX (peak, beads->data[q]);
    for (q = 0; q < n; q++)
      mu[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
    poisson_sample (mu, beads->data, n, 5);
    airy_fit_options_init (&options);
    options.objective = AIRY_FIT_OBJECTIVE_POISSON;
    options.backend = "cpu";
    on_cpu = airy_fit_stack (base, beads, &options, NULL, &error);
    g_assert_no_error (error);
    options.backend = "cuda";
    on_gpu = airy_fit_stack (base, beads, &options, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (on_gpu->backend, ==, "cuda");
    for (i = 0; i < on_gpu->n_terms; i++)
      worst = MAX (worst, fabs (on_gpu->coefficients[i] - on_cpu->coefficients[i]));
    g_test_message ("GPU fit %.3f s (%u iterations), CPU fit %.3f s (%u): terms differ by %.2g waves at most",
                    on_gpu->seconds, on_gpu->iterations_total, on_cpu->seconds, on_cpu->iterations_total, worst);
    g_assert_cmpfloat (worst, <=, 1e-3);
  }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  cuda = airy_backend_lookup ("cuda");
  if (cuda == NULL || !cuda->available)
    {
      const char *why = cuda ? cuda->unavailable_reason : "the CUDA module is not on the modules path";

      g_print ("1..0 # SKIP %s%s\n", g_str_has_prefix (why, "no CUDA device") ? "" : "no CUDA device: ", why);
      return 0;
    }
  tmpdir = g_dir_make_tmp ("airy-cuda-XXXXXX", NULL);
  /* the GL interop first: it is what the viewer needs, and it must not
   * depend on what ran before */
  g_test_add_func ("/cuda/gl-interop", test_gl_interop);
  g_test_add_func ("/cuda/versions", test_versions);
  g_test_add_func ("/cuda/psf-agreement", test_psf_agreement);
  g_test_add_func ("/cuda/highna-agreement", test_highna_agreement);
  g_test_add_func ("/cuda/fit-agreement", test_fit_agreement);
  g_test_add_func ("/cuda/defocus-far", test_defocus_far);
  g_test_add_func ("/cuda/ops-agreement", test_ops_agreement);
  g_test_add_func ("/cuda/jones-agreement", test_jones_agreement);
  g_test_add_func ("/cuda/modality-agreement", test_modality_agreement);
  g_test_add_func ("/cuda/imaging-agreement", test_imaging_agreement);
  g_test_add_func ("/cuda/file-sample", test_file_sample);
  g_test_add_func ("/cuda/keep-psf", test_keep_psf);
  g_test_add_func ("/cuda/memory-limited", test_memory_limited);
  g_test_add_func ("/cuda/second-run", test_second_run);
  g_test_add_func ("/cuda/channels", test_channels);
  g_test_add_func ("/cuda/constant-sums-first", test_constant_sums_first);
  g_test_add_func ("/cuda/resident-download", test_resident_download);
  g_test_add_func ("/cuda/pupil-cache", test_pupil_cache);
  g_test_add_func ("/cuda/module-element-fuses", test_module_element_fuses);
  g_test_add_func ("/cuda/resident", test_resident);
  g_test_add_func ("/cuda/resident-makes-room", test_resident_makes_room);
  g_test_add_func ("/cuda/noise", test_noise);
  g_test_add_func ("/cuda/multi-device", test_multi_device);
  g_test_add_func ("/cuda/fewer-planes-than-devices", test_fewer_planes_than_devices);
  g_test_add_func ("/cuda/seed-presets", test_seed_presets);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
