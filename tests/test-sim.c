/* The sim modality (engine/modalities/airy-modality-sim.c): the raw images'
 * spectra have their peaks at the pattern's frequencies, the phases of an
 * angle add up to the widefield image, a pattern beyond the detection's
 * cut-off is said to be unresolvable, the raw stack is a hyperstack of
 * phases × angles, and bad input. */
#define _GNU_SOURCE
#include "config.h"

#include "airy-test-util.h"

/* A water microscope (NA 1.2, n 1.33, emission 0.52 µm) on n × n camera
 * pixels of du µm, one plane at focus, the sample (JSON) and the
 * sim-illumination's fields. */
static char *
sim_json (const char *modality, guint n, double du, const char *sample, const char *illumination)
{
  return g_strdup_printf (
    "{\"airy\": 1, \"modality\": \"%s\", \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [0.52]}, \"z\": {\"start\": 0, \"stop\": 0, \"count\": 1},"
    " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 1.2, \"f-tube\": 100},"
    " \"elements\": [%s%s%s], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": %s}",
    modality, n, n, du, illumination ? "{\"type\": \"sim-illumination\", " : "", illumination ? illumination : "",
    illumination ? "}" : "", sample);
}

static AiryResult *
sim_run (guint n, double du, const char *sample, const char *illumination)
{
  g_autofree char *json = sim_json ("sim", n, du, sample, illumination);
  g_autoptr(AirySystem) system = test_system (json);

  return test_run (system, NULL);
}

/* |DFT|² of a plane, its DC term zeroed and the bins within r of it */
static double *
power_spectrum (const float *plane, guint n, guint r)
{
  fftwf_complex *u = fftwf_alloc_complex ((gsize) n * n);
  fftwf_plan plan = fftwf_plan_dft_2d (n, n, u, u, FFTW_FORWARD, FFTW_ESTIMATE);
  double *p = g_new (double, (gsize) n * n);
  gsize i;

  for (i = 0; i < (gsize) n * n; i++)
    u[i] = plane[i];
  fftwf_execute (plan);
  for (i = 0; i < (gsize) n * n; i++)
    {
      int ky = (int) (i / n), kx = (int) (i % n);

      ky = ky > (int) n / 2 ? ky - (int) n : ky;
      kx = kx > (int) n / 2 ? kx - (int) n : kx;
      p[i] = (guint) (ky * ky + kx * kx) <= r * r ? 0.0 : crealf (u[i]) * crealf (u[i]) + cimagf (u[i]) * cimagf (u[i]);
    }
  fftwf_destroy_plan (plan);
  fftwf_free (u);
  return p;
}

/* Two-beam fringes (zeroth 0) at 2·NA/λ = 24 cycles over the 6.4 µm field
 * (NA 0.915 at 0.488 µm: 3.75 /µm, within the cut-off 2·1.2/0.52 = 4.6 /µm)
 * on a uniform sample: in every raw image of every angle the strongest bins
 * away from DC are ±f·(cos α, sin α), the nearest bins of the pattern
 * frequency. With the zeroth order the fringes at NA/λ appear as well, and
 * stronger (4·a0 against 2 in I, and the OTF is higher there). */
static void
test_peaks (void)
{
  guint n = 128, a, q, k;
  double du = 0.05, f = 24.0 / (n * du), na = f * 0.488 / 2.0;
  g_autofree char *two = g_strdup_printf ("\"wavelength\": 0.488, \"na\": %.17g, \"zeroth\": 0", na);
  g_autofree char *three = g_strdup_printf ("\"wavelength\": 0.488, \"na\": %.17g, \"angles\": 1", na);
  g_autoptr(AiryResult) r = sim_run (n, du, "{\"constant\": 1}", two);
  g_autoptr(AiryResult) r3 = sim_run (n, du, "{\"constant\": 1}", three);
  g_autofree double *p3 = NULL;

  g_assert_cmpuint (r->stack->depth, ==, 9);
  for (a = 0; a < 3; a++)
    for (q = 0; q < 3; q++)
      {
        g_autofree double *p = power_spectrum (airy_stack_plane (r->stack, a * 3 + q), n, 3);
        double alpha = G_PI * a / 3.0, first = 0.0;
        int ex = (int) lround (24.0 * cos (alpha)), ey = (int) lround (24.0 * sin (alpha));
        int sign;

        for (sign = -1; sign <= 1; sign += 2)
          {
            gsize at = 0, i;
            int ky, kx;

            /* the strongest bin in the half plane of the expected peak */
            for (i = 0; i < (gsize) n * n; i++)
              {
                ky = (int) (i / n) > (int) n / 2 ? (int) (i / n) - (int) n : (int) (i / n);
                kx = (int) (i % n) > (int) n / 2 ? (int) (i % n) - (int) n : (int) (i % n);
                if ((kx * ex + ky * ey) * sign > 0 && p[i] > p[at])
                  at = i;
              }
            ky = (int) (at / n) > (int) n / 2 ? (int) (at / n) - (int) n : (int) (at / n);
            kx = (int) (at % n) > (int) n / 2 ? (int) (at % n) - (int) n : (int) (at % n);
            g_test_message ("angle %u phase %u: peak at (%d, %d), expected (%d, %d)", a, q, kx, ky, sign * ex,
                            sign * ey);
            g_assert_cmpint (abs (kx - sign * ex), <=, 1);
            g_assert_cmpint (abs (ky - sign * ey), <=, 1);
            if (sign < 0)
              first = p[at];
            else
              g_assert_cmpfloat_with_epsilon (p[at] / first, 1.0, 1e-3);
          }
      }
  /* the zeroth order's fringes: at 12 bins, above the 24-bin ones */
  p3 = power_spectrum (airy_stack_plane (r3->stack, 0), n, 3);
  g_assert_cmpuint (r3->stack->depth, ==, 3);
  g_assert_cmpfloat (p3[12], >, p3[24]);
  /* peaks ten times their neighbours (the field's edges leak a little) */
  for (k = 12; k <= 24; k += 12)
    {
      g_assert_cmpfloat (p3[k], >, 10.0 * p3[k - 1]);
      g_assert_cmpfloat (p3[k], >, 10.0 * p3[k + 1]);
    }
}

/* Σ over the phases of each angle = the widefield image (the imaging
 * modality's run of the same microscope and beads), to 1e-5 of its
 * maximum, for 3 and 5 phases. */
static void
test_sum_widefield (void)
{
  static const char *beads = "{\"beads\": {\"count\": 40, \"seed\": 3, \"intensity\": 1.0}}";
  g_autofree char *wf_json = sim_json ("imaging", 96, 0.06, beads, NULL);
  g_autoptr(AirySystem) wf_system = test_system (wf_json);
  g_autoptr(AiryResult) wf = test_run (wf_system, NULL);
  gsize np = (gsize) 96 * 96, i;
  float lo, hi;
  guint phases;

  airy_stack_min_max (wf->stack, &lo, &hi);
  for (phases = 3; phases <= 5; phases += 2)
    {
      g_autofree char *ill = g_strdup_printf ("\"na\": 0.8, \"phases\": %u, \"angle\": 0.3", phases);
      g_autoptr(AiryResult) r = sim_run (96, 0.06, beads, ill);
      guint a, q;

      g_assert_cmpuint (r->stack->depth, ==, 3 * phases);
      for (a = 0; a < 3; a++)
        {
          double worst = 0.0;

          for (i = 0; i < np; i++)
            {
              double sum = 0.0;

              for (q = 0; q < phases; q++)
                sum += airy_stack_plane (r->stack, a * phases + q)[i];
              worst = MAX (worst, fabs (sum - wf->stack->data[i]));
            }
          g_test_message ("%u phases, angle %u: |Σ − widefield| ≤ %.2g of the maximum", phases, a, worst / hi);
          g_assert_cmpfloat (worst / hi, <, 1e-5);
        }
    }
}

/* A sample file (one plane of ones, the image's pixel) gives what the
 * constant sample gives; one of another pixel is refused. */
static void
test_file_sample (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-sim-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "ones.tif", NULL);
  g_autofree char *other = g_build_filename (dir, "coarse.tif", NULL);
  g_autofree char *sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  g_autofree char *coarse = g_strdup_printf ("{\"file\": \"%s\"}", other);
  g_autoptr(AiryStack) ones = airy_stack_new (1, 48, 48);
  g_autoptr(AiryResult) constant = sim_run (48, 0.05, "{\"constant\": 1}", "\"angles\": 2");
  g_autoptr(AiryResult) file = NULL;
  g_autofree char *bad = NULL;
  gsize i;

  for (i = 0; i < (gsize) 48 * 48; i++)
    ones->data[i] = 1.0f;
  ones->dx = ones->dy = 0.05;
  g_assert_true (airy_tiff_write (path, ones, NULL));
  ones->dx = ones->dy = 0.1;
  g_assert_true (airy_tiff_write (other, ones, NULL));
  file = sim_run (48, 0.05, sample, "\"angles\": 2");
  for (i = 0; i < (gsize) 6 * 48 * 48; i++)
    g_assert_cmpfloat_with_epsilon (file->stack->data[i], constant->stack->data[i], 1e-6);
  bad = sim_json ("sim", 48, 0.05, coarse, "\"angles\": 2");
  {
    g_autoptr(AirySystem) system = test_system (bad);
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryResult) r = airy_run (system, NULL, NULL, NULL, NULL, &error);

    g_assert_null (r);
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    /* the widefield run's own check of the sample */
    g_assert_true (g_str_has_prefix (error->message, "sample.file: "));
    g_assert_nonnull (strstr (error->message, "has voxels of 0.1 × 0.1"));
  }
  g_unlink (path);
  g_unlink (other);
  g_rmdir (dir);
}

static gboolean
has_warning (AiryResult *r, const char *text)
{
  guint i;

  for (i = 0; r->warnings && i < r->warnings->len; i++)
    if (strstr (g_ptr_array_index (r->warnings, i), text))
      return TRUE;
  return FALSE;
}

/* NA 1.3 at 0.488 µm: 5.33 /µm, beyond 2·1.2/0.52 = 4.62 /µm */
static void
test_not_resolvable (void)
{
  g_autoptr(AiryResult) bad = sim_run (64, 0.05, "{\"constant\": 1}", "\"na\": 1.3, \"angles\": 1");
  g_autoptr(AiryResult) good = sim_run (64, 0.05, "{\"constant\": 1}", "\"na\": 1.0, \"angles\": 1");

  g_assert_true (has_warning (bad, "elements[0].na: the pattern's frequency 2·NA/λ = 5.328 /µm is beyond the "
                                   "detection cut-off 2·NA/λ = 4.615 /µm: not resolvable"));
  g_assert_false (has_warning (good, "not resolvable"));
}

/* The raw stack as an ImageJ hyperstack: slices = phases, frames = angles. */
static void
test_hyperstack (void)
{
  g_autoptr(AiryResult) r = sim_run (32, 0.05, "{\"constant\": 1}", "\"angles\": 3, \"phases\": 5");
  g_autofree char *dir = g_dir_make_tmp ("airy-sim-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "raw.tif", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) back = NULL;
  g_autofree char *tags = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  gsize len;

  g_assert_true (airy_tiff_write (path, r->stack, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &tags, &len, NULL));
  {
    const char *want = "images=15\nslices=5\nframes=3\nhyperstack=true\n";

    g_assert_nonnull (memmem (tags, len, want, strlen (want)));
  }
  /* frame 2: the third angle's five phases */
  ro.frame = 2;
  back = airy_image_read_full (path, &ro, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->depth, ==, 5);
  g_assert_cmpuint (back->n_frames, ==, 3);
  g_assert_cmpmem (back->data, airy_stack_plane_size (back) * 5 * sizeof (float), airy_stack_plane (r->stack, 10),
                   airy_stack_plane_size (back) * 5 * sizeof (float));
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_bad_input (void)
{
  g_autofree char *none = sim_json ("sim", 32, 0.05, "{\"constant\": 1}", NULL);
  g_autofree char *over = sim_json ("sim", 32, 0.05, "{\"constant\": 1}", "\"na\": 1.4");
  g_autofree char *plain = sim_json ("sim", 32, 0.05, "{\"constant\": 1}", "\"na\": 1.0");
  g_autoptr(GString) noisy = g_string_new (plain);

  test_expect_error (none, AIRY_ERROR_INVALID_VALUE, "elements: sim needs a \"sim-illumination\" element (the pattern)");
  test_expect_error (over, AIRY_ERROR_INVALID_VALUE,
                     "elements[0].na: must be in (0, n=1.33], got 1.4 (an illumination NA above the medium's index)");
  g_string_replace (noisy, "{\"reduce\": \"sum\"}", "{\"reduce\": \"sum\", \"noise\": \"poisson\"}", 1);
  test_expect_error (noisy->str, AIRY_ERROR_INVALID_VALUE,
                     "sensor: sim writes the raw images as the optics make them: no resampling or noise");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/sim/peaks", test_peaks);
  g_test_add_func ("/sim/sum-widefield", test_sum_widefield);
  g_test_add_func ("/sim/file-sample", test_file_sample);
  g_test_add_func ("/sim/not-resolvable", test_not_resolvable);
  g_test_add_func ("/sim/hyperstack", test_hyperstack);
  g_test_add_func ("/sim/bad-input", test_bad_input);
  return g_test_run ();
}
