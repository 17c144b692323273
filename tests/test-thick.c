/* Thick samples (engine/elements/airy-thin-sample.c, airy-multislice.c)
 * against closed forms: a thin sample's transmission e^{i 2π (Δn + iα)·d/λ},
 * a uniform slab's phase 2π Δn·d/λ through the multislice, the power
 * through clear samples, the volume from a TIFF stack against the same
 * volume as a map, the dark-field stop, and the bad input. The complex field
 * is the compiled ops' (the reference interpreter); the intensities are
 * end-to-end runs. The chromatix peer cases are in tests/peers/cases.py. */
#include "config.h"

#include <complex.h>

#include "airy-test-ops.h"
#include "airy-elements-private.h"

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g}," \
             " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [0.5, 0.5]}, \"elements\": [%s]}"

/* The field after the elements (a plane wave first), both wavelengths. */
static AiryField *
run_field (guint h, guint w, double spacing, const char *elements)
{
  g_autofree char *json = g_strdup_printf (HEAD, h, w, spacing, elements);
  g_autoptr(AiryPlan) plan = test_plan_new (json);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryOpList) list = _airy_ops_compile (plan, &error);
  AiryPlane plane = { 0, 0.0, 1 };
  AiryField *field;

  g_assert_no_error (error);
  field = test_plan_field (plan);
  g_assert_true (_airy_ops_run (list, field, &plane, &error));
  g_assert_no_error (error);
  return field;
}

/* Σ|u|²·dx·dy of wavelength l */
static double
field_power (const AiryField *f, guint l)
{
  gsize np = airy_field_plane_size (f), i;
  double s = 0;

  for (i = 0; i < np; i++)
    s += cabsf (f->data[l * np + i]) * cabsf (f->data[l * np + i]);
  return s * f->dx[l] * f->dy[l];
}

/* the largest |b/a − expected_l| over the pixels and both wavelengths */
static double
ratio_error (const AiryField *a, const AiryField *b, const double complex expected[2])
{
  gsize np = airy_field_plane_size (a), i;
  double worst = 0;
  guint l;

  g_assert_cmpuint (airy_field_plane_size (b), ==, np);
  for (l = 0; l < 2; l++)
    for (i = 0; i < np; i++)
      worst = MAX (worst, cabs ((double complex) b->data[l * np + i] / a->data[l * np + i] - expected[l]));
  return worst;
}

static void
test_thin_constant (void)
{
  /* e^{i 2π (Δn + iα)·d/λ} at λ 0.5 and 0.6 */
  g_autoptr(AiryField) a = run_field (16, 12, 0.5, "{\"type\": \"plane-wave\"}");
  g_autoptr(AiryField) b = run_field (16, 12, 0.5, "{\"type\": \"plane-wave\"},"
                                      "{\"type\": \"thin-sample\", \"dn\": 0.07, \"absorption\": 0.004, \"thickness\": 3}");
  double complex t[2];
  guint l;

  for (l = 0; l < 2; l++)
    t[l] = cexp (I * 2 * G_PI * (0.07 + I * 0.004) * 3 / (l == 0 ? 0.5 : 0.6));
  g_assert_cmpfloat (ratio_error (a, b, t), <, 1e-6);
  /* and the power falls by e^{−4πα·d/λ} */
  g_assert_cmpfloat_with_epsilon (field_power (b, 1) / field_power (a, 1), exp (-4 * G_PI * 0.004 * 3 / 0.6), 1e-6);
}

/* a map of h × w values, a − b·cos, as JSON numbers */
static char *
map_json (guint n, double a, double b)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < n; i++)
    g_string_append_printf (s, "%s%.9g", i ? ", " : "", a + b * cos (0.37 * i) * sin (0.011 * i * i));
  return g_string_free (s, FALSE);
}

static void
test_thin_power (void)
{
  /* a phase-only map scatters into the grid and the FF lens keeps the
   * power: Σ I·du² = 1 (the plane wave's power); the same map with an
   * absorption loses some */
  g_autofree char *dn = map_json (32 * 32, 0.02, 0.05);
  g_autofree char *ab = map_json (32 * 32, 0.01, 0.01);
  g_autofree char *clear = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"thin-sample\", \"source\": \"map\","
                                            " \"dn-map\": [%s], \"thickness\": 4}, {\"type\": \"ff-lens\", \"f\": 500}", dn);
  g_autofree char *dim = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"thin-sample\", \"source\": \"map\","
                                          " \"dn-map\": [%s], \"absorption-map\": [%s], \"thickness\": 4}", dn, ab);
  g_autoptr(AiryField) f = run_field (32, 32, 0.5, clear);
  g_autoptr(AiryField) g = run_field (32, 32, 0.5, dim);

  guint l;

  /* the ops' field keeps the input spacing: the FF lens's is f·λ/(N·dx) */
  for (l = 0; l < 2; l++)
    {
      double du = 500 * f->lambda[l] / (32 * 0.5);

      g_assert_cmpfloat_with_epsilon (field_power (f, l) * du * du / (0.5 * 0.5), 1.0, 1e-5);
    }
  g_assert_cmpfloat (field_power (g, 0), <, 0.9);
}

static void
test_thin_image (void)
{
  /* an 8-bit image of the values 0 and 255: Δn 0 and dn */
  g_autofree char *dir = g_dir_make_tmp ("airy-thick-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "dn.tif", NULL);
  g_autoptr(AiryStack) img = airy_stack_new (1, 8, 8);
  g_autoptr(GError) error = NULL;
  g_autofree char *el = NULL;
  g_autoptr(AiryField) a = run_field (8, 8, 1.0, "{\"type\": \"plane-wave\"}");
  g_autoptr(AiryField) b = NULL;
  gsize i;

  for (i = 0; i < 64; i++)
    img->data[i] = i < 32 ? 0.0f : 1.0f;
  g_assert_true (airy_tiff_write (path, img, &error));
  g_assert_no_error (error);
  el = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"thin-sample\", \"source\": \"image\","
                        " \"dn-file\": \"%s\", \"dn\": 0.1, \"thickness\": 1}", path);
  b = run_field (8, 8, 1.0, el);
  for (i = 0; i < 64; i++)
    {
      double complex r = (double complex) b->data[i] / a->data[i];
      double expected = i < 32 ? 0.0 : 2 * G_PI * 0.1 / 0.5;

      g_assert_cmpfloat (cabs (r - cexp (I * expected)), <, 1e-6);
    }
  g_unlink (path);
  g_rmdir (dir);
}

static const char *
slab (double dn, double ab)
{
  static char buf[512];

  g_snprintf (buf, sizeof buf,
              "{\"type\": \"plane-wave\", \"n\": 1.33}, {\"type\": \"multislice\", \"volume\": \"slab\", \"slices\": 7,"
              " \"spacing\": 0.8, \"n\": 1.33, \"dn\": %.17g, \"absorption\": %.17g}", dn, ab);
  return buf;
}

static void
test_slab_phase (void)
{
  /* a uniform slab of n + Δn over d = 7 × 0.8 µm: phase 2π Δn·d/λ and,
   * absorbing, the amplitude e^{−2πα·d/λ}, at every pixel (a plane wave
   * stays one inside the slab; the padding is outside it) */
  g_autoptr(AiryField) a = run_field (24, 20, 0.5, slab (0.0, 0.0));
  g_autoptr(AiryField) b = run_field (24, 20, 0.5, slab (0.04, 0.0));
  g_autoptr(AiryField) c = run_field (24, 20, 0.5, slab (0.04, 0.002));
  double complex t[2], u[2];
  guint l;

  for (l = 0; l < 2; l++)
    {
      double lambda = l == 0 ? 0.5 : 0.6;

      t[l] = cexp (I * 2 * G_PI * 0.04 * 5.6 / lambda);
      u[l] = t[l] * exp (-2 * G_PI * 0.002 * 5.6 / lambda);
    }
  g_test_message ("slab: |b/a − e^{i2πΔn d/λ}| ≤ %.3g", ratio_error (a, b, t));
  g_assert_cmpfloat (ratio_error (a, b, t), <, 2e-5);
  g_assert_cmpfloat (ratio_error (a, c, u), <, 2e-5);
  /* and the plane wave's own phase: 2π n·d/2/λ to the middle (the way
   * back is half the volume) */
  for (l = 0; l < 2; l++)
    t[l] = cexp (I * 2 * G_PI * 1.33 * 5.6 / 2 / (l == 0 ? 0.5 : 0.6));
  {
    g_autoptr(AiryField) p = run_field (24, 20, 0.5, "{\"type\": \"plane-wave\", \"n\": 1.33}");
    g_assert_cmpfloat (ratio_error (p, a, t), <, 2e-5);
  }
}

static void
test_clear_power (void)
{
  /* a phase-only bead scatters but keeps the power (no pupil, no
   * evanescent waves on this grid: dx > λ/2n) */
  g_autoptr(AiryField) f = run_field (48, 48, 0.5,
    "{\"type\": \"plane-wave\", \"n\": 1.33}, {\"type\": \"multislice\", \"volume\": \"bead\", \"radius\": 5.2,"
    " \"slices\": 24, \"spacing\": 0.5, \"dn\": 0.06, \"n\": 1.33}");
  g_autoptr(AiryField) g = run_field (48, 48, 0.5,
    "{\"type\": \"plane-wave\", \"n\": 1.33}, {\"type\": \"multislice\", \"volume\": \"bead\", \"radius\": 5.2,"
    " \"slices\": 24, \"spacing\": 0.5, \"dn\": 0.06, \"n\": 1.33, \"na\": 0.5}");

  g_test_message ("clear bead: power %.8f, %.8f; through NA 0.5 %.6f", field_power (f, 0), field_power (f, 1),
                  field_power (g, 0));
  g_assert_cmpfloat_with_epsilon (field_power (f, 0), 1.0, 1e-5);
  g_assert_cmpfloat_with_epsilon (field_power (f, 1), 1.0, 1e-5);
  /* the pupil cuts what the bead scatters beyond NA 0.5 */
  g_assert_cmpfloat (field_power (g, 0), <, 0.999);
  g_assert_cmpfloat (field_power (g, 0), >, 0.5);
}

static void
test_dark_field (void)
{
  /* a dark-field stop blocks the unscattered plane wave: a clear slab
   * gives nothing, a bead its scattered light */
  g_autoptr(AiryField) empty = run_field (32, 32, 0.5,
    "{\"type\": \"plane-wave\", \"n\": 1.33}, {\"type\": \"multislice\", \"volume\": \"slab\", \"slices\": 4,"
    " \"dn\": 0.05, \"n\": 1.33, \"na\": 0.9, \"stop-na\": 0.1}");
  g_autoptr(AiryField) bead = run_field (32, 32, 0.5,
    "{\"type\": \"plane-wave\", \"n\": 1.33}, {\"type\": \"multislice\", \"volume\": \"bead\", \"radius\": 3.1,"
    " \"slices\": 16, \"spacing\": 0.5, \"dn\": 0.05, \"n\": 1.33, \"na\": 0.9, \"stop-na\": 0.1}");

  g_assert_cmpfloat (field_power (empty, 0), <, 1e-10);
  g_assert_cmpfloat (field_power (bead, 0), >, 1e-3);
}

static void
test_phase_contrast (void)
{
  /* one slice of a phase grating φ = φ0·sin(2πx/p) imaged where it is
   * (focus dz/2: no way back) through a π/2 phase dot on the unscattered
   * wave (ring-na 0 … below the first order's NA λ/p): the field
   * e^{iφ} + (i − 1)·J0(φ0) of intensity (cos φ − J0)² + (sin φ + J0)²
   * (φ0 at λ 0.5, scaled by 0.5/λ at 0.6), where brightfield (no ring)
   * shows nothing */
  double phi0 = 0.4, dz = 0.5, dn = phi0 * 0.5 / (2 * G_PI * dz);
  g_autofree char *map = NULL;
  g_autofree char *el = NULL, *bright = NULL;
  g_autoptr(AiryResult) r = NULL, b = NULL;
  GString *m = g_string_new (NULL);
  double i0 = 1.0 / (32 * 0.5 * 32 * 0.5), worst = 0, flat = 0;
  guint y, x;

  for (y = 0; y < 32; y++)
    for (x = 0; x < 32; x++)
      g_string_append_printf (m, "%s%.17g", y + x ? ", " : "", dn * sin (2 * G_PI * ((int) x - 16) / 8.0));
  map = g_string_free (m, FALSE);
  el = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"map\", \"slices\": 1,"
                        " \"spacing\": %g, \"n\": 1.0, \"focus\": %g, \"dn-map\": [%s], \"ring-na\": [0, 0.02]}",
                        dz, dz / 2, map);
  bright = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"map\", \"slices\": 1,"
                            " \"spacing\": %g, \"n\": 1.0, \"focus\": %g, \"dn-map\": [%s]}", dz, dz / 2, map);
  {
    g_autofree char *json = g_strdup_printf (HEAD, 32, 32, 0.5, el);
    g_autofree char *json_b = g_strdup_printf (HEAD, 32, 32, 0.5, bright);
    g_autoptr(AirySystem) s = test_system (json);
    g_autoptr(AirySystem) sb = test_system (json_b);

    r = test_run (s, NULL);
    b = test_run (sb, NULL);
  }
  for (y = 0; y < 32; y++)
    for (x = 0; x < 32; x++)
      {
        double want = 0;
        guint l;

        /* the two wavelengths of HEAD, weights ½: φ0 scales with 0.5/λ */
        for (l = 0; l < 2; l++)
          {
            double a = phi0 * 0.5 / (l == 0 ? 0.5 : 0.6), phi = a * sin (2 * G_PI * ((int) x - 16) / 8.0);
            double c = cos (phi) - j0 (a), d = sin (phi) + j0 (a);

            want += 0.5 * (c * c + d * d);
          }

        worst = MAX (worst, fabs (r->stack->data[y * 32 + x] / i0 - want));
        flat = MAX (flat, fabs (b->stack->data[y * 32 + x] / i0 - 1.0));
      }
  g_test_message ("phase contrast: largest |I/I0 − closed form| %.3g; brightfield within %.3g of I0", worst, flat);
  g_assert_cmpfloat (worst, <, 1e-5);
  g_assert_cmpfloat (flat, <, 1e-5);
}

/* the bead's volume as a TIFF stack of Δn with voxels dx × dx × dz */
static char *
write_volume (const char *dir, guint n, guint depth, double dx, double dz, double r, double dn)
{
  g_autofree char *path = g_build_filename (dir, "volume.tif", NULL);
  g_autoptr(AiryStack) v = airy_stack_new (depth, n, n);
  g_autoptr(GError) error = NULL;
  guint k, y, x;

  v->dx = v->dy = dx;
  v->dz = dz;
  for (k = 0; k < depth; k++)
    for (y = 0; y < n; y++)
      for (x = 0; x < n; x++)
        {
          double zz = (k + 0.5 - depth / 2.0) * dz, yy = ((int) y - (int) n / 2) * dx, xx = ((int) x - (int) n / 2) * dx;

          airy_stack_plane (v, k)[y * n + x] = xx * xx + yy * yy + zz * zz <= r * r ? (float) dn : 0.0f;
        }
  g_assert_true (airy_tiff_write (path, v, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

static void
test_volume_file (void)
{
  /* the bead from a file equals the generated bead; a file of other voxels
   * is refused, or resampled on request */
  g_autofree char *dir = g_dir_make_tmp ("airy-thick-XXXXXX", NULL);
  g_autofree char *path = write_volume (dir, 32, 12, 0.5, 0.5, 2.6, 0.05);
  g_autofree char *el = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"file\","
                                         " \"dn-file\": \"%s\", \"spacing\": 0.5, \"na\": 0.8, \"pad\": 4}", path);
  g_autofree char *el2 = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"file\","
                                          " \"dn-file\": \"%s\", \"spacing\": 0.25}", path);
  g_autofree char *el3 = g_strdup_printf ("{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"file\","
                                          " \"dn-file\": \"%s\", \"spacing\": 0.25, \"resample\": true}", path);
  g_autofree char *json = g_strdup_printf (HEAD, 32, 32, 0.5, el2);
  g_autofree char *message = g_strdup_printf ("elements[1].dn-file: %s has 32 × 32 voxels of 0.5 × 0.5 × 0.5 µm, the grid "
                                              "is 32 × 32 of 0.5 × 0.5 µm with slices of 0.25 µm; resample the volume, "
                                              "or add \"resample\": true", path);
  g_autoptr(AiryField) a = run_field (32, 32, 0.5, el);
  g_autoptr(AiryField) b = run_field (32, 32, 0.5,
    "{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"bead\", \"radius\": 2.6, \"slices\": 12,"
    " \"spacing\": 0.5, \"dn\": 0.05, \"na\": 0.8, \"pad\": 4}");
  double complex one[2] = { 1, 1 };
  g_autoptr(AiryField) c = NULL;

  g_assert_cmpfloat (ratio_error (a, b, one), <, 1e-6);
  test_expect_error (json, AIRY_ERROR_INVALID_VALUE, message);
  c = run_field (32, 32, 0.5, el3);
  g_assert_cmpuint (c->height, ==, 32);
  /* 24 slices of a quarter µm: the same bead, so nearly the same field */
  g_assert_cmpfloat (fabs (field_power (c, 0) - 1.0), <, 1e-4);
  g_unlink (path);
  g_rmdir (dir);
}

/* the mean of I/I0 over the annulus r0 ≤ r < r1 pixels about the centre */
static double
annulus_mean (const AiryStack *s, double r0, double r1, double i0)
{
  double sum = 0;
  guint y, x, n = 0;

  for (y = 0; y < s->height; y++)
    for (x = 0; x < s->width; x++)
      {
        double r = hypot ((int) x - (int) s->width / 2, (int) y - (int) s->height / 2);

        if (r >= r0 && r < r1)
          {
            sum += s->data[(gsize) y * s->width + x] / i0;
            n++;
          }
      }
  return sum / n;
}

static void
test_brightfield_preset (void)
{
  /* the 20 µm bead (40 pixels of radius): around it the plane wave's
   * intensity I0 = 1/(N²·dx²), and with a dark-field stop nearly nothing
   * there while the bead shines */
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("brightfield-bead", &error);
  g_autoptr(AiryResult) bright = NULL, dark = NULL;
  double i0 = 1.0 / (256.0 * 256.0 * 0.25 * 0.25), bg, in, dbg, din;

  g_assert_no_error (error);
  bright = test_run (system, NULL);
  g_object_set (g_ptr_array_index (airy_system_get_elements (system), 1), "stop-na", 0.1, NULL);
  dark = test_run (system, NULL);
  bg = annulus_mean (bright->stack, 50, 70, i0);
  in = annulus_mean (bright->stack, 0, 36, i0);
  dbg = annulus_mean (dark->stack, 50, 70, i0);
  din = annulus_mean (dark->stack, 0, 36, i0);
  g_test_message ("brightfield: background %.4f, bead %.4f of I0; dark field %.5f, %.4f", bg, in, dbg, din);
  g_assert_cmpfloat (fabs (bg - 1.0), <, 0.01);
  g_assert_cmpfloat (dbg, <, 0.01);
  g_assert_cmpfloat (din, >, 0.1);
}

static void
test_budget (void)
{
  /* 200 slices of 256²: their factors (two wavelengths) and the volume
   * count in the budget (306 MiB; a plane per element was 2 MiB), so
   * 64 MiB refuses the run before anything is allocated */
  g_autofree char *json = g_strdup_printf (HEAD, 256, 256, 0.5,
    "{\"type\": \"plane-wave\"}, {\"type\": \"multislice\", \"volume\": \"slab\", \"slices\": 200, \"dn\": 0.01}");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GError) error = NULL;

  g_setenv ("AIRY_MEMORY_BUDGET", "64M", TRUE);
  g_assert_false (airy_system_validate (system, NULL, &error));
  g_unsetenv ("AIRY_MEMORY_BUDGET");
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "needs 305.8 MiB"));
}

static void
test_bad_input (void)
{
  static const struct { const char *element, *message; int code; } cases[] = {
    { "{\"type\": \"multislice\", \"na\": 1.5}", "elements[1].na: must be in [0, n=1.33], got 1.5", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"multislice\", \"na\": 0.5, \"stop-na\": 0.6}", "elements[1].stop-na: must be below na=0.5, got 0.6", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"multislice\", \"spacing\": 0}", "elements[1].spacing: must be in [0.001, 10000] µm, got 0", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"multislice\", \"volume\": \"map\", \"slices\": 2, \"dn-map\": [1, 2]}",
      "elements[1].dn-map: needs slices × height × width = 2 × 8 × 8 = 128 values (row by row), got 2", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"multislice\", \"ring-na\": [0.3, 0.2]}",
      "elements[1].ring-na: the inner NA must be below the outer, got 0.3 and 0.2", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"multislice\", \"volume\": \"file\"}", "elements[1].dn-file: no file given", AIRY_ERROR_FILE },
    { "{\"type\": \"thin-sample\", \"source\": \"map\", \"absorption-map\": [0.1]}",
      "elements[1].absorption-map: needs 8 × 8 = 64 values (row by row), got 1", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"thin-sample\", \"source\": \"image\"}", "elements[1].dn-file: no file given", AIRY_ERROR_FILE },
    { "{\"type\": \"thin-sample\", \"absorption\": -1}", "elements[1].absorption: must be in [0, 10], got -1", AIRY_ERROR_INVALID_VALUE },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *el = g_strdup_printf ("{\"type\": \"plane-wave\"}, %s", cases[i].element);
      g_autofree char *json = g_strdup_printf (HEAD, 8, 8, 0.5, el);

      test_expect_error (json, cases[i].code, cases[i].message);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/thick/thin-sample/constant", test_thin_constant);
  g_test_add_func ("/thick/thin-sample/power", test_thin_power);
  g_test_add_func ("/thick/thin-sample/image", test_thin_image);
  g_test_add_func ("/thick/multislice/slab-phase", test_slab_phase);
  g_test_add_func ("/thick/multislice/clear-power", test_clear_power);
  g_test_add_func ("/thick/multislice/dark-field", test_dark_field);
  g_test_add_func ("/thick/multislice/file", test_volume_file);
  g_test_add_func ("/thick/multislice/phase-contrast", test_phase_contrast);
  g_test_add_func ("/thick/brightfield-preset", test_brightfield_preset);
  g_test_add_func ("/thick/bad-input", test_bad_input);
  g_test_add_func ("/thick/multislice/budget", test_budget);
  return g_test_run ();
}
