/* Microscope imaging, the sensor and noise. */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "airy-test-util.h"

static char *tmpdir;


static void
check_delta_volume (guint n)
{
  /* a single bright voxel in plane 2 at (y, x) = (20, 45) images as PSF[2]
   * centred on that pixel */
  guint planes = 5, k = 2, py = 20, px = 45, y, x;
  g_autoptr(AiryStack) volume = airy_stack_new (planes, n, n);
  g_autofree char *path = g_build_filename (tmpdir, "delta.tif", NULL);
  g_autofree char *sample = NULL, *json = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  float *psf, *img;
  gsize where = 0;
  double worst = 0.0, peak;

  airy_stack_plane (volume, k)[py * n + px] = 1.0f;
  g_assert_true (airy_tiff_write (path, volume, &error));
  sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  json = test_microscope_json (sample, "\"reduce\": \"sum\"", n, planes);
  system = test_system (json);
  result = test_run (system, &(AiryRunOptions) { .keep_psf = TRUE });
  g_assert_nonnull (result->psf);
  g_assert_cmpuint (result->stack->depth, ==, 1);
  img = result->stack->data;
  psf = airy_stack_plane (result->psf, k);
  peak = plane_max (img, n * n, &where);
  g_assert_cmpuint (where, ==, (gsize) py * n + px);
  /* image[p + d] = PSF_k[⌊N/2⌋ + d] wherever both exist */
  for (y = 0; y < n; y++)
    for (x = 0; x < n; x++)
      {
        int sy = (int) y - (int) py + (int) n / 2, sx = (int) x - (int) px + (int) n / 2;
        double expected = (sy >= 0 && sy < (int) n && sx >= 0 && sx < (int) n) ? psf[sy * n + sx] : 0.0;
        worst = MAX (worst, fabs (img[y * n + x] - expected));
      }
  g_assert_cmpfloat (worst, <=, 1e-5 * peak);
  g_assert_cmpfloat (result->stack->dx, ==, 0.1);
  g_unlink (path);
}

static void
test_delta_volume (void)
{
  /* 64, and 256 whose padded spectrum rows (257) are odd */
  check_delta_volume (64);
  check_delta_volume (256);
}

/* A sample in any format of the table (the planner reads it through it,
 * not through the TIFF reader): a one-plane PNG with one bright pixel at
 * (20, 45) images as the PSF centred there. */
static void
test_png_sample (void)
{
  guint n = 64, py = 20, px = 45;
  g_autofree float *plane = g_new0 (float, n * n);
  g_autofree char *path = g_build_filename (tmpdir, "delta.png", NULL);
  g_autofree char *sample = NULL, *json = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  gsize where = 0, psf_at = 0;

  plane[py * n + px] = 1.0f;
  g_assert_true (airy_png_write_gray16 (path, plane, n, n, 0.1, &error));
  g_assert_no_error (error);
  sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  json = test_microscope_json (sample, "\"reduce\": \"sum\"", n, 1);
  system = test_system (json);
  result = test_run (system, &(AiryRunOptions) { .keep_psf = TRUE });
  g_assert_cmpuint (result->stack->depth, ==, 1);
  g_assert_nonnull (result->psf);
  /* the PSF's peak (z = −1 µm with coma: off its centre), moved to the pixel */
  g_assert_cmpfloat (plane_max (result->psf->data, n * n, &psf_at), >, 0.0);
  g_assert_cmpfloat (plane_max (result->stack->data, n * n, &where), >, 0.0);
  g_assert_cmpuint (where / n, ==, py + psf_at / n - n / 2);
  g_assert_cmpuint (where % n, ==, px + psf_at % n - n / 2);
  g_unlink (path);
}

static void
test_uniform_volume (void)
{
  /* ones everywhere: the centre pixel sees every PSF whole: Σ_z Σ PSF_z */
  guint n = 64, planes = 4;
  g_autofree char *json = test_microscope_json ("{\"constant\": 1.0}", "\"reduce\": \"sum\"", n, planes);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) result = test_run (system, &(AiryRunOptions) { .keep_psf = TRUE });
  double total = plane_sum (result->psf->data, (gsize) planes * n * n), inside = 0.0;
  double centre = result->stack->data[(n / 2) * n + n / 2];
  guint z, y, x;

  /* for even N the centre pixel p = N/2 sees PSF offsets p − q + N/2 for
   * q in [0, N): PSF indices 1 … N, so all but row 0 and column 0 */
  for (z = 0; z < planes; z++)
    for (y = 1; y < n; y++)
      for (x = 1; x < n; x++)
        inside += airy_stack_plane (result->psf, z)[y * n + x];

  g_test_message ("centre %.6f, Σ PSF %.6f (%.6f inside)", centre, total, inside);
  g_assert_cmpfloat_with_epsilon (centre / inside, 1.0, 1e-5);
  /* each PSF plane sums to 1/du² with du = camera spacing */
  g_assert_cmpfloat_with_epsilon (total / (planes / (0.1 * 0.1)), 1.0, 1e-4);
}

static void
test_sharding_image (void)
{
  guint n = 64, k;
  g_autofree char *json = test_microscope_json ("{\"beads\": {\"count\": 40, \"seed\": 7}}",
                                           "\"reduce\": \"sum\"", n, 9);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) one = NULL;
  guint devices[] = { 0, 1, 2, 3 };
  float peak;

  g_setenv ("AIRY_CPU_DEVICES", "4", TRUE);
  one = test_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = devices, .n_devices = 1 });
  peak = plane_max (one->stack->data, n * n, NULL);
  g_assert_cmpfloat (peak, >, 0.0f);
  for (k = 2; k <= 4; k++)
    {
      g_autoptr(AiryResult) many = test_run (system, &(AiryRunOptions) { .backend = "cpu",
                                                                          .devices = devices,
                                                                          .n_devices = k });
      double worst = 0.0;
      gsize i;

      for (i = 0; i < (gsize) n * n; i++)
        worst = MAX (worst, fabs (one->stack->data[i] - many->stack->data[i]));
      g_assert_cmpfloat (worst, <=, 1e-6 * peak);
    }
  g_unsetenv ("AIRY_CPU_DEVICES");
}

static void
check_volume_cache (const char *sample)
{
  /* the optics change, the sample stays: the second run reuses the
   * sample's spectra and must give what a run without the cache gives */
  g_autofree char *json1 = NULL, *json2 = NULL;
  g_autoptr(AirySystem) first = NULL, second = NULL;
  g_autoptr(AiryResult) a = NULL, b = NULL, fresh = NULL;
  double worst = 0.0;
  float peak;
  gsize i;

  json1 = test_microscope_json (sample, "\"reduce\": \"sum\"", 64, 6);
  first = test_system (json1);
  a = test_run (first, NULL);
  json2 = g_strdup (json1);
  memcpy (strstr (json2, "[0.15]"), "[0.35]", 6);
  second = test_system (json2);
  b = test_run (second, NULL);
  g_setenv ("AIRY_NO_VOLUME_CACHE", "1", TRUE);
  fresh = test_run (second, NULL);
  g_unsetenv ("AIRY_NO_VOLUME_CACHE");
  peak = plane_max (fresh->stack->data, 64 * 64, NULL);
  for (i = 0; i < 64 * 64; i++)
    worst = MAX (worst, fabs (b->stack->data[i] - fresh->stack->data[i]));
  g_assert_cmpfloat (worst, <=, 1e-6 * peak);
  /* and the optics change did change the image */
  g_assert_true (memcmp (a->stack->data, b->stack->data, 64 * 64 * 4) != 0);
}

static void
test_volume_cache (void)
{
  check_volume_cache ("{\"beads\": {\"count\": 25, \"seed\": 3}}");
  check_volume_cache ("{\"constant\": 2.0}");
}

/* A sample file rewritten with other voxels, its size and modification
 * time put back as they were: the cached spectra of the old contents must
 * not be used (the cache's key is the file's inode and change time too). */
static void
test_volume_cache_rewrite (void)
{
  guint n = 64, planes = 5;
  g_autoptr(AiryStack) volume = airy_stack_new (planes, n, n);
  g_autofree char *path = g_build_filename (tmpdir, "rewritten.tif", NULL);
  g_autofree char *sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  g_autofree char *json = test_microscope_json (sample, "\"reduce\": \"sum\"", n, planes);
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) a = NULL, b = NULL, fresh = NULL;
  g_autoptr(GError) error = NULL;
  struct stat before;
  struct timespec times[2];
  gsize where = 0;

  airy_stack_plane (volume, 2)[20 * n + 45] = 1.0f;
  g_assert_true (airy_tiff_write (path, volume, &error));
  g_assert_cmpint (stat (path, &before), ==, 0);
  system = test_system (json);
  a = test_run (system, NULL);
  plane_max (a->stack->data, n * n, &where);
  g_assert_cmpuint (where, ==, 20 * n + 45);

  /* past the file system's clock tick, then the bead elsewhere */
  g_usleep (50000);
  airy_stack_plane (volume, 2)[20 * n + 45] = 0.0f;
  airy_stack_plane (volume, 2)[30 * n + 10] = 1.0f;
  g_assert_true (airy_tiff_write (path, volume, &error));
  times[0] = before.st_atim;
  times[1] = before.st_mtim;
  g_assert_cmpint (utimensat (AT_FDCWD, path, times, 0), ==, 0);
  g_clear_object (&system);
  system = test_system (json);
  b = test_run (system, NULL);
  g_setenv ("AIRY_NO_VOLUME_CACHE", "1", TRUE);
  fresh = test_run (system, NULL);
  g_unsetenv ("AIRY_NO_VOLUME_CACHE");
  plane_max (b->stack->data, n * n, &where);
  g_assert_cmpuint (where, ==, 30 * n + 10);
  g_assert_cmpmem (b->stack->data, n * n * sizeof (float), fresh->stack->data, n * n * sizeof (float));
  g_unlink (path);
}

/* A sample constant in z: Σ_z (P_z ⊛ V) = (Σ_z P_z) ⊛ V, so its image is
 * made from one transform of the planes' sum; it equals the per-plane
 * path (the same values given as a sample file) on one device and on
 * three, and the counter says one padded transform, not one per plane. */
static void
check_sum_first (guint n, guint planes, guint n_devices)
{
  AiryBackend *cpu = airy_backend_lookup ("cpu");
  g_autoptr(AiryStack) volume = airy_stack_new (planes, n, n);
  g_autofree char *path = g_build_filename (tmpdir, "constant.tif", NULL);
  g_autofree char *file_sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  g_autofree char *json_const = test_microscope_json ("{\"constant\": 2.5}", "\"reduce\": \"sum\"", n, planes);
  g_autofree char *json_file = test_microscope_json (file_sample, "\"reduce\": \"sum\"", n, planes);
  g_autoptr(AirySystem) constant = test_system (json_const);
  g_autoptr(AirySystem) file = NULL;
  g_autoptr(AiryResult) a = NULL, b = NULL;
  g_autoptr(GError) error = NULL;
  guint devices[] = { 0, 1, 2 };
  AiryRunOptions options = { .backend = "cpu", .devices = devices, .n_devices = n_devices };
  guint64 before;
  double worst = 0.0;
  float peak;
  gsize i;

  for (i = 0; i < (gsize) planes * n * n; i++)
    volume->data[i] = 2.5f;
  volume->dx = volume->dy = 0.1;
  g_assert_true (airy_tiff_write (path, volume, &error));
  g_assert_no_error (error);
  file = test_system (json_file);
  before = airy_backend_get_counter (cpu, "convolutions");
  a = test_run (constant, &options);
  g_assert_cmpuint (airy_backend_get_counter (cpu, "convolutions") - before, ==, 1);
  before = airy_backend_get_counter (cpu, "convolutions");
  b = test_run (file, &options);
  g_assert_cmpuint (airy_backend_get_counter (cpu, "convolutions") - before, ==, planes);
  peak = plane_max (b->stack->data, (gsize) n * n, NULL);
  g_assert_cmpfloat (peak, >, 0.0f);
  for (i = 0; i < (gsize) n * n; i++)
    worst = MAX (worst, fabs (a->stack->data[i] - b->stack->data[i]));
  g_test_message ("%u², %u planes, %u devices: |sum first − per plane| ≤ %.3g of the peak", n, planes, n_devices,
                  worst / peak);
  g_assert_cmpfloat (worst, <=, 1e-6 * peak);
  g_unlink (path);
}

static void
test_constant_sums_first (void)
{
  g_setenv ("AIRY_CPU_DEVICES", "3", TRUE);
  /* 64², and 256² whose padded spectrum rows (257) are odd; three devices
   * sum their planes before the one transform */
  check_sum_first (64, 6, 1);
  check_sum_first (256, 5, 1);
  check_sum_first (64, 7, 3);
  g_unsetenv ("AIRY_CPU_DEVICES");
}

/* A uniform intensity `mean` (plane wave) through a sensor. */
static AiryResult *
uniform_sensor (double mean, const char *sensor)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"power\": %.17g}, {\"type\": \"sensor\", %s}]}",
    mean * 65536.0, sensor);
  g_autoptr(AirySystem) system = test_system (json);
  return test_run (system, NULL);
}

static void
moments (const float *v, gsize n, double *mean, double *var)
{
  double s = 0.0, s2 = 0.0;
  gsize i;

  for (i = 0; i < n; i++)
    s += v[i];
  *mean = s / n;
  for (i = 0; i < n; i++)
    s2 += (v[i] - *mean) * (v[i] - *mean);
  *var = s2 / (n - 1);
}

static void
test_poisson (void)
{
  const double means[] = { 3.0, 50.0, 2000.0 };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (means); k++)
    {
      g_autoptr(AiryResult) r = uniform_sensor (means[k], "\"noise\": \"poisson\", \"seed\": 11");
      double mean, var;
      gsize i;

      moments (r->stack->data, 65536, &mean, &var);
      g_test_message ("Poisson(%g): mean %.4f, variance %.4f", means[k], mean, var);
      g_assert_cmpfloat_with_epsilon (mean / means[k], 1.0, 0.01);
      g_assert_cmpfloat_with_epsilon (var / means[k], 1.0, 0.03);
      for (i = 0; i < 65536; i++)
        g_assert_cmpfloat (r->stack->data[i], ==, floorf (r->stack->data[i]));   /* counts */
    }
}

static void
test_noise_model (void)
{
  /* read noise σ_r, gain g, offset o: mean g·μ + o, variance g²(μ + σ_r²) */
  g_autoptr(AiryResult) r = uniform_sensor (40.0, "\"noise\": \"gaussian\", \"read-noise\": 3,"
                                                  " \"gain\": 2, \"offset\": 100, \"seed\": 5");
  g_autoptr(AiryResult) same = uniform_sensor (40.0, "\"noise\": \"gaussian\", \"read-noise\": 3,"
                                                     " \"gain\": 2, \"offset\": 100, \"seed\": 5");
  g_autoptr(AiryResult) other = uniform_sensor (40.0, "\"noise\": \"gaussian\", \"read-noise\": 3,"
                                                      " \"gain\": 2, \"offset\": 100, \"seed\": 6");
  g_autoptr(AiryResult) clipped = uniform_sensor (5000.0, "\"bit-depth\": 12");
  g_autoptr(AiryResult) full = uniform_sensor (5000.0, "\"full-well\": 1000");
  double mean, var;

  moments (r->stack->data, 65536, &mean, &var);
  g_assert_cmpfloat_with_epsilon (mean / 180.0, 1.0, 0.01);
  g_assert_cmpfloat_with_epsilon (var / (4.0 * (40.0 + 9.0)), 1.0, 0.03);
  g_assert_cmpmem (r->stack->data, 65536 * 4, same->stack->data, 65536 * 4);
  g_assert_true (memcmp (r->stack->data, other->stack->data, 65536 * 4) != 0);
  g_assert_cmpfloat (clipped->stack->data[0], ==, 4095.0f);
  g_assert_cmpfloat (full->stack->data[100], ==, 1000.0f);
}

static void
test_resampling (void)
{
  /* block sum by 4 keeps the total; bilinear to a 2× pixel keeps it too */
  g_autoptr(AiryResult) plain = uniform_sensor (1.5, "\"reduce\": \"none\"");
  g_autoptr(AiryResult) block = uniform_sensor (1.5, "\"resample\": \"block-sum\", \"factor\": 4");
  g_autoptr(AiryResult) linear = uniform_sensor (1.5, "\"resample\": \"linear\", \"spacing\": 2.0");
  double total = plane_sum (plain->stack->data, 65536);

  g_assert_cmpuint (block->stack->width, ==, 64);
  g_assert_cmpfloat (block->stack->dx, ==, 4.0);
  g_assert_cmpfloat_with_epsilon (plane_sum (block->stack->data, 64 * 64) / total, 1.0, 1e-6);
  g_assert_cmpuint (linear->stack->width, ==, 128);
  g_assert_cmpfloat_with_epsilon (linear->stack->data[64 * 128 + 64], 6.0, 1e-4);
}

/* A sample volume's voxel size against the system's camera pixel (0.1 µm)
 * and z step (0.5 µm for 5 planes over [−1, 1]). */
static AiryResult *
run_sample (const char *sample_json, GError **error)
{
  g_autofree char *json = test_microscope_json (sample_json, "\"reduce\": \"sum\"", 32, 5);
  g_autoptr(AirySystem) system = test_system (json);

  return airy_run (system, NULL, NULL, NULL, NULL, error);
}

static void
test_sample_voxels (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "vol.tif", NULL);
  g_autofree char *sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  g_autofree char *resampled = g_strdup_printf ("{\"file\": \"%s\", \"resample\": true}", path);
  g_autofree char *expected = NULL;
  g_autoptr(AiryStack) v = airy_stack_new (5, 64, 64);
  g_autoptr(GError) error = NULL;
  guint i, k;

  for (i = 0; i < 5 * 64 * 64; i++)
    v->data[i] = 2.0f;
  /* the case: 0.05 µm / 0.25 µm voxels on a 0.1 µm / 0.5 µm system */
  v->dx = v->dy = 0.05;
  v->dz = 0.25;
  g_assert_true (airy_tiff_write (path, v, &error));
  g_assert_null (run_sample (sample, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  expected = g_strdup_printf ("sample.file: %s has voxels of 0.05 × 0.05 × 0.25 µm, the system images 0.1 × 0.1 × 0.5 µm "
                              "(grid.spacing and the z step); resample the volume to the system's grid, or add "
                              "\"resample\": true to the sample", path);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);

  /* resampled: 32 × 32 pixels of 0.1 µm, the five system planes; the
   * values are densities, so a uniform 2 stays 2 */
  {
    g_autoptr(AiryResult) r = run_sample (resampled, &error);
    g_autoptr(AiryResult) direct = NULL;
    g_autoptr(AiryStack) same = airy_stack_new (5, 32, 32);
    static const float expect[5] = { 0.0f, 1.5f, 2.0f, 1.5f, 0.0f };
    gboolean said = FALSE;

    g_assert_no_error (error);
    for (i = 0; i < r->warnings->len; i++)
      said |= strstr (g_ptr_array_index (r->warnings, i),
                      "resampled from 5 × 64 × 64 voxels of 0.05 × 0.05 × 0.25 µm to 5 × 32 × 32 of 0.1 × 0.1 × 0.5 µm")
              != NULL;
    g_assert_true (said);
    /* the same image as a volume already on the system's grid: the file's
     * five 0.25 µm planes, centred on the system's z range, fill
     * [−0.625, 0.625]; each system plane takes the mean over its 0.5 µm:
     * 0 at ±1, (2·0.25 + 2·0.125)/0.5 = 1.5 at ±0.5, 2 at 0 */
    /* and laterally: column (row) 0 of 0.1 µm at −1.6 µm has the file's
     * 0.05 µm pixels only from −1.625 µm on, 3/4 of its width */
    for (k = 0; k < 5; k++)
      for (i = 0; i < 32 * 32; i++)
        airy_stack_plane (same, k)[i] = expect[k] * (i % 32 == 0 ? 0.75f : 1.0f) * (i / 32 == 0 ? 0.75f : 1.0f);
    same->dx = same->dy = 0.1;
    same->dz = 0.5;
    g_assert_true (airy_tiff_write (path, same, &error));
    direct = run_sample (sample, &error);
    g_assert_no_error (error);
    for (i = 0; i < 32 * 32; i++)
      g_assert_cmpfloat_with_epsilon (r->stack->data[i], direct->stack->data[i], 1e-4 * direct->stack->data[32 * 16 + 16]);
  }

  /* the plane count: more planes than z planes stop the read early */
  {
    g_autoptr(AiryStack) deep = airy_stack_new (7, 32, 32);

    deep->dx = deep->dy = 0.1;
    deep->dz = 0.5;
    g_assert_true (airy_tiff_write (path, deep, &error));
    g_assert_null (run_sample (sample, &error));
    g_free (expected);
    expected = g_strdup_printf ("sample.file: %s: has 7 z planes, more than the 5 expected", path);
    g_assert_cmpstr (error->message, ==, expected);
    g_clear_error (&error);
  }
  /* no voxel size: the system's, said in a warning */
  {
    g_autoptr(AiryStack) plain = airy_stack_new (5, 32, 32);
    g_autoptr(AiryResult) r = NULL;
    gboolean said = FALSE;

    g_assert_true (airy_tiff_write (path, plain, &error));
    r = run_sample (sample, &error);
    g_assert_no_error (error);
    for (i = 0; i < r->warnings->len; i++)
      said |= g_str_has_suffix (g_ptr_array_index (r->warnings, i),
                                "has no pixel size; it is taken to have the camera's 0.1 µm pixels");
    g_assert_true (said);
    g_assert_null (run_sample (resampled, &error));
    g_assert_nonnull (strstr (error->message, "does not say its voxel size (no pixel size), so it cannot be resampled"));
    g_clear_error (&error);
  }
  g_unlink (path);
}

/* The resampler itself: a density keeps its integral when the grid gets
 * coarser, a linear ramp is reproduced when it gets finer, and the optical
 * axis (pixel ⌊N/2⌋) stays put. */
static void
test_resampler (void)
{
  g_autoptr(AiryStack) src = airy_stack_new (3, 40, 40);
  g_autoptr(AiryStack) coarse = NULL;
  g_autoptr(AiryStack) fine = NULL;
  static const double z3[3] = { -1, 0, 1 }, z5[5] = { -1, -0.5, 0, 0.5, 1 };
  double before = 0, after = 0;
  guint y, x, k;

  src->dx = src->dy = 0.05;
  src->dz = 1.0;
  src->z0 = -1.0;
  /* one bright voxel on the axis of plane 1, and a ramp in x in plane 2 */
  airy_stack_plane (src, 1)[20 * 40 + 20] = 8.0f;
  for (y = 0; y < 40; y++)
    for (x = 0; x < 40; x++)
      airy_stack_plane (src, 2)[y * 40 + x] = (float) (0.5 * ((double) x - 20.0));
  before = 8.0 * 0.05 * 0.05;

  coarse = _airy_stack_resample (src, 20, 20, 0.1, 0.1, 3, z3, NULL);
  for (y = 0; y < 20; y++)
    for (x = 0; x < 20; x++)
      after += airy_stack_plane (coarse, 1)[y * 20 + x] * 0.1 * 0.1;
  g_assert_cmpfloat_with_epsilon (after, before, 1e-9);
  /* the bright voxel stays on the axis: pixel (10, 10) holds its largest share */
  g_assert_cmpfloat_with_epsilon (airy_stack_plane (coarse, 1)[10 * 20 + 10], 8.0 * 0.25, 1e-6);

  fine = _airy_stack_resample (src, 80, 80, 0.025, 0.025, 5, z5, NULL);
  /* x = (j − 40)·0.025 µm, the ramp is 0.5 per 0.05 µm = 10 per µm */
  for (x = 2; x < 78; x++)
    g_assert_cmpfloat_with_epsilon (airy_stack_plane (fine, 4)[40 * 80 + x], 10.0 * ((double) x - 40.0) * 0.025, 1e-5);
  /* z = 0.5 lies half way between plane 1 and plane 2 */
  g_assert_cmpfloat_with_epsilon (airy_stack_plane (fine, 3)[40 * 80 + 60], 0.5 * 10.0 * 20 * 0.025, 1e-5);
  for (k = 0; k < 5; k++)
    g_assert_cmpfloat (airy_stack_get_z (fine, k), ==, z5[k]);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-imaging-XXXXXX", NULL);

  g_test_add_func ("/engine/imaging/delta-volume", test_delta_volume);
  g_test_add_func ("/engine/imaging/uniform-volume", test_uniform_volume);
  g_test_add_func ("/engine/imaging/png-sample", test_png_sample);
  g_test_add_func ("/engine/imaging/sharding", test_sharding_image);
  g_test_add_func ("/engine/imaging/volume-cache", test_volume_cache);
  g_test_add_func ("/engine/imaging/volume-cache-rewrite", test_volume_cache_rewrite);
  g_test_add_func ("/engine/imaging/constant-sums-first", test_constant_sums_first);
  g_test_add_func ("/engine/imaging/sample-voxels", test_sample_voxels);
  g_test_add_func ("/engine/imaging/resampler", test_resampler);
  g_test_add_func ("/engine/sensor/poisson", test_poisson);
  g_test_add_func ("/engine/sensor/noise-model", test_noise_model);
  g_test_add_func ("/engine/sensor/resampling", test_resampling);
  status = g_test_run ();
  {
    g_autofree char *delta = g_build_filename (tmpdir, "delta.tif", NULL);
    g_unlink (delta);
    g_rmdir (tmpdir);
  }
  return status;
}
