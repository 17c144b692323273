/* Thick plano-convex lenses (engine/elements/airy-thick-lens.c) and the ray
 * transfer matrices behind them (engine/airy-rays.c): the matrices against
 * their closed forms, a plane wave's focus found by propagating at the
 * lensmaker's back focal distance f·(1 − t(n_l − n_m)/(R·n_l)), the power
 * kept, the compiled operations against apply(), and the bad input. The
 * chromatix peer cases are in tests/peers/cases.py. */
#include "config.h"

#include "airy-test-util.h"

#define N 512

static void
test_abcd (void)
{
  double m[4], a[4], b[4];
  double r = 50.0, t = 5.0, nl = 1.5, nm = 1.33;

  airy_abcd_free_space (7.5, m);
  g_assert_cmpfloat (m[0], ==, 1.0);
  g_assert_cmpfloat (m[1], ==, 7.5);
  g_assert_cmpfloat (m[2], ==, 0.0);
  g_assert_cmpfloat (m[3], ==, 1.0);
  airy_abcd_thin_lens (200.0, FALSE, m);
  g_assert_cmpfloat_with_epsilon (airy_abcd_focal_length (m), 200.0, 1e-12);
  airy_abcd_thin_lens (200.0, TRUE, m);
  g_assert_cmpfloat_with_epsilon (airy_abcd_focal_length (m), -200.0, 1e-12);

  /* curved face first: A = 1 − t(n_l − n_m)/(R n_l), B = t n_m/n_l,
   * C = −(n_l − n_m)/(R n_m) (the lensmaker's), D = 1 */
  airy_abcd_plano_convex (r, t, nl, nm, FALSE, m);
  g_assert_cmpfloat_with_epsilon (m[0], 1.0 - t * (nl - nm) / (r * nl), 1e-14);
  g_assert_cmpfloat_with_epsilon (m[1], t * nm / nl, 1e-14);
  g_assert_cmpfloat_with_epsilon (m[2], -(nl - nm) / (r * nm), 1e-14);
  g_assert_cmpfloat_with_epsilon (m[3], 1.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (airy_abcd_focal_length (m), r * nm / (nl - nm), 1e-9);
  g_assert_cmpfloat_with_epsilon (m[0] * m[3] - m[1] * m[2], 1.0, 1e-14);
  /* backwards: A and D trade places */
  airy_abcd_plano_convex (r, t, nl, nm, TRUE, m);
  g_assert_cmpfloat_with_epsilon (m[0], 1.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (m[1], t * nm / nl, 1e-14);
  g_assert_cmpfloat_with_epsilon (m[2], -(nl - nm) / (r * nm), 1e-14);
  g_assert_cmpfloat_with_epsilon (m[3], 1.0 - t * (nl - nm) / (r * nl), 1e-14);

  /* f, a thin lens f, f: the Fourier transform {0, f, −1/f, 0} */
  airy_abcd_free_space (300.0, a);
  airy_abcd_thin_lens (300.0, FALSE, b);
  airy_abcd_multiply (b, a, m);
  airy_abcd_multiply (a, m, m);
  g_assert_cmpfloat_with_epsilon (m[0], 0.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (m[1], 300.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (m[2], -1.0 / 300.0, 1e-16);
  g_assert_cmpfloat_with_epsilon (m[3], 0.0, 1e-14);
  airy_abcd_free_space (1.0, m);
  g_assert_true (isinf (airy_abcd_focal_length (m)));
}

/* the on-axis intensity z behind the lens (a plane wave through a pupil of
 * 100 µm, 512² pixels of 0.25 µm, λ 0.5) */
static double
on_axis (const char *lens, double z, double *power)
{
  g_autofree char *prop = z > 0 ? g_strdup_printf (", {\"type\": \"propagate\", \"method\": \"transfer\","
                                                   " \"pad\": 128, \"z\": %.17g}", z)
                                 : g_strdup ("");
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%d, %d], \"spacing\": 0.25}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"circular-pupil\", \"diameter\": 100}, %s%s]}",
    N, N, lens, prop);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) result = test_run (system, NULL);
  const float *p = airy_stack_plane (result->stack, 0);

  if (power)
    {
      *power = 0;
      for (gsize i = 0; i < (gsize) N * N; i++)
        *power += p[i];
    }
  return p[(N / 2) * N + N / 2];
}

/* the brightest axial point over z in [z0, z1], refined by a parabola */
static double
focus_of (const char *lens, double z0, double z1, double step)
{
  double best = -1, zb = z0, z;

  for (z = z0; z <= z1 + 1e-9; z += step)
    {
      double v = on_axis (lens, z, NULL);
      if (v > best)
        {
          best = v;
          zb = z;
        }
    }
  {
    double a = on_axis (lens, zb - step, NULL), c = on_axis (lens, zb + step, NULL);
    return zb + 0.5 * step * (a - c) / (a - 2 * best + c);
  }
}

static void
test_focus (void)
{
  const struct { double t, nl; } cases[] = { { 5.0, 1.5 }, { 30.0, 1.5 }, { 10.0, 1.8 } };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      double r = 50.0, t = cases[i].t, nl = cases[i].nl;
      double f = r / (nl - 1.0), bfd = f * (1.0 - t * (nl - 1.0) / (r * nl));
      g_autofree char *lens = g_strdup_printf ("{\"type\": \"thick-plano-convex-lens\", \"radius\": %g,"
                                               " \"thickness\": %g, \"n-lens\": %g}", r, t, nl);
      double z = focus_of (lens, bfd - 8.0, bfd + 8.0, 1.0);

      g_test_message ("t %g, n %g: focus at %.3f µm, lensmaker's back focal distance %.3f, f %.3f", t, nl, z, bfd, f);
      g_assert_cmpfloat (fabs (z - bfd), <, 0.1);
      g_assert_cmpfloat (fabs (z - f), >, 1.0);
    }
}

/* between focal planes f = the back focal distance the output plane is the
 * focus; the transfer is unitary (no pupil after it) */
static void
test_ff_and_power (void)
{
  double p0, p1, p2, bfd = 100.0 * (1.0 - 20.0 / 150.0);
  double peak_at = on_axis ("{\"type\": \"thick-plano-convex-ff-lens\", \"radius\": 50, \"thickness\": 20,"
                            " \"f\": 86.6666666667}", 0, &p1);
  double peak_off = on_axis ("{\"type\": \"thick-plano-convex-ff-lens\", \"radius\": 50, \"thickness\": 20,"
                             " \"f\": 92}", 0, NULL);
  double peak_prop = on_axis ("{\"type\": \"thick-plano-convex-lens\", \"radius\": 50, \"thickness\": 20}",
                              bfd, NULL);

  on_axis ("{\"type\": \"thin-lens\", \"f\": 1e6}", 0, &p0);
  on_axis ("{\"type\": \"thick-plano-convex-lens\", \"radius\": 50, \"thickness\": 20}", 0, &p2);
  g_test_message ("power: %.7g in, %.7g after the FF lens, %.7g after the lens; focus %.5g, off %.5g, "
                  "lens then propagate %.5g", p0, p1, p2, peak_at, peak_off, peak_prop);
  g_assert_cmpfloat (fabs (p1 - p0), <, 1e-5 * p0);
  g_assert_cmpfloat (fabs (p2 - p0), <, 1e-5 * p0);
  g_assert_cmpfloat (peak_at, >, 1.5 * peak_off);
  g_assert_cmpfloat (fabs (peak_at - peak_prop), <, 0.02 * peak_prop);
}

static void
test_bad_input (void)
{
  const struct { const char *lens, *message; } cases[] = {
    { "\"type\": \"thick-plano-convex-lens\", \"radius\": 0", "elements[1].radius: the curved face's radius must be > 0 µm, got 0" },
    { "\"type\": \"thick-plano-convex-lens\", \"radius\": -5", "elements[1].radius: must be in [0, 1e+09] µm, got -5" },
    { "\"type\": \"thick-plano-convex-lens\", \"thickness\": -1", "elements[1].thickness: must be in [0, 1e+06] µm, got -1" },
    { "\"type\": \"thick-plano-convex-lens\", \"na\": 1.2", "elements[1].na: must be in [0, n=1] (0: no pupil), got 1.2" },
    { "\"type\": \"thick-plano-convex-ff-lens\", \"radius\": 50, \"thickness\": 0, \"f\": 200",
      "elements[1]: the system images its input plane (B = 0, A = -1); change f or thickness" },
    { "\"type\": \"propagate\", \"z\": 0, \"method\": \"sas\"",
      "elements[1].z: must not be 0 for the scalable angular spectrum" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
        " \"elements\": [{\"type\": \"plane-wave\"}, {%s}]}", cases[i].lens);

      test_expect_error (json, AIRY_ERROR_INVALID_VALUE, cases[i].message);
    }
}

/* a system's matrix: two thin lenses d apart have 1/f = 1/f1 + 1/f2 − d/(f1 f2)
 * (pupils and sources pass rays unchanged); an FF lens is {0, f, −1/f, 0};
 * `airy-sim rays` prints the same */
static void
test_system_abcd (void)
{
  const char *json =
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"thin-lens\", \"f\": 300},"
    " {\"type\": \"circular-pupil\", \"diameter\": 40}, {\"type\": \"propagate\", \"z\": 50},"
    " {\"type\": \"thin-lens\", \"f\": 200}]}";
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AirySystem) ff = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"ff-lens\", \"f\": 400}]}");
  g_autofree char *dir = g_dir_make_tmp ("airy-rays-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "sys.json", NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *argv[] = { g_getenv ("AIRY_SIM"), "rays", file, NULL };
  double m[4], f = 1.0 / (1.0 / 300 + 1.0 / 200 - 50.0 / (300.0 * 200.0));
  int status;

  g_assert_cmpuint (airy_system_get_abcd (system, m), ==, 3);
  g_assert_cmpfloat_with_epsilon (airy_abcd_focal_length (m), f, 1e-9);
  g_assert_cmpfloat_with_epsilon (m[0], 1.0 - 50.0 / 300.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (m[1], 50.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (m[3], 1.0 - 50.0 / 200.0, 1e-14);
  g_assert_cmpuint (airy_system_get_abcd (ff, m), ==, 1);
  g_assert_cmpfloat_with_epsilon (m[0], 0.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (m[1], 400.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (m[2], -1.0 / 400.0, 1e-16);
  g_assert_cmpfloat_with_epsilon (m[3], 0.0, 1e-14);

  g_assert_true (g_file_set_contents (file, json, -1, NULL));
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "elements[3] propagate: A 1  B 50 µm  C 0 /µm  D 1\n"));
  g_assert_nonnull (strstr (out, "system: A 0.8333333333  B 50 µm  C -0.0075 /µm  D 0.75\n"));
  g_assert_nonnull (strstr (out, "effective focal length 133.3333333 µm, back focal distance 111.1111111 µm\n"));
  g_unlink (file);
  g_rmdir (dir);
}

/* propagate's "auto-pad": chromatix's rules give 336 pixels a side for the
 * transfer function (64² of 1 µm, λ 0.5, z 400: N_F 2.56, Q 6.25) and 836
 * for the angular spectrum (64² of 0.5 µm, λ 0.6, z 150: N_F 0.11, over
 * √(1 − 0.6²)); "full" output keeps them */
static void
test_auto_pad (void)
{
  const struct { double dx, lambda, z; const char *method; guint side; } cases[] = {
    { 1.0, 0.5, 400.0, "transfer", 64 + 2 * 336 },
    { 0.5, 0.6, 150.0, "angular-spectrum", 64 + 2 * 836 },
    { 1.0, 0.5, 10.0, "transfer", 64 + 2 * 64 },  /* N_F ≥ M/4: Q = 2 */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": %g}, \"spectrum\": {\"wavelengths\": [%g]},"
        " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"gaussian-pupil\", \"waist\": 6},"
        " {\"type\": \"propagate\", \"z\": %g, \"method\": \"%s\", \"auto-pad\": true, \"output\": \"full\"}]}",
        cases[i].dx, cases[i].lambda, cases[i].z, cases[i].method);
      g_autoptr(AirySystem) system = test_system (json);
      g_autoptr(AiryResult) result = test_run (system, NULL);

      g_assert_cmpuint (result->stack->width, ==, cases[i].side);
      g_assert_cmpuint (result->stack->height, ==, cases[i].side);
    }
}

/* kernel-propagate: a kernel file of the Fresnel transfer function gives
 * what propagate's transfer method gives (no padding); a linear phase
 * exp(−2πi f_x a) moves the beam by a; a kernel of another shape is refused */
static AiryResult *
beam_then (const char *dir, const char *element, double spacing)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": %g}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"gaussian-pupil\", \"waist\": 5}, %s]}",
    spacing, element);
  g_autofree char *file = g_build_filename (dir, "sys.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;

  g_assert_true (g_file_set_contents (file, json, -1, NULL));
  system = airy_system_new_from_file (file, &error);
  g_assert_no_error (error);
  g_unlink (file);
  return test_run (system, NULL);
}

static void
write_kernel (const char *path, guint h, guint w, double spacing, double z, double shift)
{
  g_autoptr(GError) error = NULL;
  AiryStack *k = airy_stack_new (2, h, w);
  guint y, x;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      {
        double fy = ((int) y - (int) h / 2) / (h * spacing), fx = ((int) x - (int) w / 2) / (w * spacing);
        /* e^{ikz} exp(−iπλz f²) */
        double phi = 2 * G_PI * z / 0.5 - G_PI * 0.5 * z * (fx * fx + fy * fy)
                     - 2 * G_PI * fx * shift;

        k->data[(gsize) y * w + x] = cos (phi);
        k->data[(gsize) h * w + (gsize) y * w + x] = sin (phi);
      }
  g_assert_true (airy_image_write (path, k, NULL, &error));
  g_assert_no_error (error);
  airy_stack_free (k);
}

static void
test_kernel_propagate (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-kernel-XXXXXX", NULL);
  g_autofree char *fresnel = g_build_filename (dir, "fresnel.tif", NULL);
  g_autofree char *shift = g_build_filename (dir, "shift.tif", NULL);
  g_autofree char *small = g_build_filename (dir, "small.tif", NULL);
  g_autoptr(AiryResult) a = NULL, b = NULL, c = NULL, d = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) bad = NULL;
  g_autofree char *bad_json = NULL;
  double worst = 0, peak = 0, worst_shift = 0;
  guint y, x;

  write_kernel (fresnel, 64, 64, 1.0, 300.0, 0.0);
  write_kernel (shift, 64, 64, 1.0, 0.0, 8.0);
  write_kernel (small, 32, 64, 1.0, 0.0, 0.0);
  a = beam_then (dir, "{\"type\": \"kernel-propagate\", \"file\": \"fresnel.tif\"}", 1.0);
  b = beam_then (dir, "{\"type\": \"propagate\", \"z\": 300, \"method\": \"transfer\"}", 1.0);
  c = beam_then (dir, "{\"type\": \"kernel-propagate\", \"file\": \"shift.tif\"}", 1.0);
  d = beam_then (dir, "{\"type\": \"thin-lens\", \"f\": 1e6}", 1.0);
  for (y = 0; y < 64; y++)
    for (x = 0; x < 64; x++)
      {
        peak = MAX (peak, b->stack->data[y * 64 + x]);
        worst = MAX (worst, fabs (a->stack->data[y * 64 + x] - b->stack->data[y * 64 + x]));
        if (x >= 8)
          worst_shift = MAX (worst_shift, fabs (c->stack->data[y * 64 + x] - d->stack->data[y * 64 + x - 8]));
      }
  g_test_message ("kernel against transfer: %.3g of the peak; shifted by 8 px: %.3g", worst / peak,
                  worst_shift / plane_max (d->stack->data, 64 * 64, NULL));
  g_assert_cmpfloat (worst / peak, <, 1e-5);
  g_assert_cmpfloat (worst_shift / plane_max (d->stack->data, 64 * 64, NULL), <, 1e-5);

  bad_json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"kernel-propagate\", \"file\": \"%s\"}]}", small);
  bad = airy_system_new_from_data (bad_json, -1, NULL, "sys.json", &error);
  g_assert_no_error (error);
  g_assert_false (airy_system_validate (bad, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "elements[1].file: the kernel "));
  g_assert_nonnull (strstr (error->message, "small.tif is 2 × 32 × 64; it must be 2 × 64 × 64"));
  g_unlink (fresnel);
  g_unlink (shift);
  g_unlink (small);
  g_rmdir (dir);
}

/* propagate's "sas" (scalable angular spectrum) against the angular
 * spectrum where both hold: at z = 2N·dx²·n/λ SAS's output spacing
 * λz/(n·2N·dx) is the input's; a Gaussian beam (waist 4 µm, NA ≈ 0.04 of a
 * 128² grid of 1 µm) spreads to about 22 µm, well inside both grids; and
 * one of waist 1.5 µm (NA 0.1), where the precompensation matters */
static void
test_sas (void)
{
  const double waists[] = { 4.0, 1.5 };

  for (guint i = 0; i < G_N_ELEMENTS (waists); i++)
    {
      double worst = 0, peak = 0;
      AiryResult *r[2] = { NULL, NULL };
      const char *methods[] = { "\"method\": \"sas\"", "\"method\": \"angular-spectrum\", \"pad\": 192" };

      for (guint m = 0; m < 2; m++)
        {
          g_autofree char *json = g_strdup_printf (
            "{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
            " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"gaussian-pupil\", \"waist\": %g},"
            " {\"type\": \"propagate\", \"z\": 512, %s}]}", waists[i], methods[m]);
          g_autoptr(AirySystem) system = test_system (json);

          r[m] = test_run (system, NULL);
        }
      for (gsize k = 0; k < 128 * 128; k++)
        {
          peak = MAX (peak, r[1]->stack->data[k]);
          worst = MAX (worst, fabs (r[0]->stack->data[k] - r[1]->stack->data[k]));
        }
      g_test_message ("waist %g: max |SAS − ASM| = %.3g of the peak", waists[i], worst / peak);
      airy_result_free (r[0]);
      airy_result_free (r[1]);
      g_assert_cmpfloat (worst / peak, <=, 1e-3);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/thick-lens/abcd", test_abcd);
  g_test_add_func ("/thick-lens/focus", test_focus);
  g_test_add_func ("/thick-lens/ff-and-power", test_ff_and_power);
  g_test_add_func ("/thick-lens/system-abcd", test_system_abcd);
  g_test_add_func ("/thick-lens/auto-pad", test_auto_pad);
  g_test_add_func ("/thick-lens/kernel-propagate", test_kernel_propagate);
  g_test_add_func ("/thick-lens/sas", test_sas);
  g_test_add_func ("/thick-lens/bad-input", test_bad_input);
  return g_test_run ();
}
