/* The crlb loss (engine/airy-grad-crlb.c): its bound against the Fisher
 * information of a Gaussian spot in closed form, its scaling with the
 * photons, its gradient through the reverse pass against central
 * differences, and its bad specs. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "airy-test-util.h"
#include "airy-grad-private.h"

static char *tmpdir;

static AiryLoss *
crlb (const char *spec)
{
  g_autoptr(GError) error = NULL;
  AiryLoss *loss = _airy_loss_new_from_spec (spec, &error);

  g_assert_no_error (error);
  g_assert_nonnull (loss);
  return loss;
}

/* three planes z = −h, 0, h of a normalised Gaussian spot of width
 * σ(z) = σ0 + a·z (µm) on n² pixels of 0.1 µm, total 1 */
static AiryStack *
gaussian_stack (guint n, double s0, double a, double h)
{
  AiryStack *s = airy_stack_new (3, n, n);
  guint p, x, y;

  s->dx = s->dy = 0.1;
  s->z = g_new (double, 3);
  for (p = 0; p < 3; p++)
    {
      double z = (p - 1.0) * h, sigma = s0 + a * z;

      s->z[p] = z;
      for (y = 0; y < n; y++)
        for (x = 0; x < n; x++)
          {
            double u = (x - n / 2.0) * 0.1, v = (y - n / 2.0) * 0.1;

            s->data[(p * n + y) * n + x] = (float) (exp (-(u * u + v * v) / (2 * sigma * sigma))
                                                     / (2 * G_PI * sigma * sigma) * 0.01);
          }
    }
  return s;
}

/* No background: the Fisher information of N photons from a 2-D Gaussian
 * is N/σ² in x and y and 4N/σ²·(dσ/dz)² in z (∂ log p/∂σ = r²/σ³ − 2/σ,
 * r²/σ² ~ χ²₂ of variance 4), so √CRLB is σ/√N, σ/√N and σ/(2a√N). */
static void
test_gaussian (void)
{
  const double s0 = 1.0, a = 0.2, N = 1e4;
  g_autoptr(AiryStack) s = gaussian_stack (128, s0, a, 0.002);
  g_autoptr(AiryLoss) lx = crlb ("crlb:-0.001:0.001:10000:0:x");
  g_autoptr(AiryLoss) ly = crlb ("crlb:-0.001:0.001:10000:0:y");
  g_autoptr(AiryLoss) lz = crlb ("crlb:-0.001:0.001:10000:0:z");
  g_autoptr(AiryLoss) all = crlb ("crlb:-0.001:0.001:10000:0");
  double x = _airy_loss_eval (lx, s, NULL), y = _airy_loss_eval (ly, s, NULL), z = _airy_loss_eval (lz, s, NULL);

  g_test_message ("√CRLB x %.6g (%.6g), y %.6g, z %.6g (%.6g)", x, s0 / sqrt (N), y, z, s0 / (2 * a * sqrt (N)));
  g_assert_cmpfloat (fabs (x - s0 / sqrt (N)), <=, 5e-3 * s0 / sqrt (N));
  g_assert_cmpfloat (fabs (y - x), <=, 1e-6 * x);
  g_assert_cmpfloat (fabs (z - s0 / (2 * a * sqrt (N))), <=, 5e-3 * s0 / (2 * a * sqrt (N)));
  g_assert_cmpfloat (fabs (_airy_loss_eval (all, s, NULL) - (x + y + z) / 3), <=, 1e-9);
}

/* a NA 1.4 oil PSF, 0.67 µm, 0.1 µm pixels on 64², 13 planes over ±1.2 µm,
 * with ANSI 5 and 6 terms */
static char *
oil_json (double c5, double c6)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 6.897},"
    " \"spectrum\": {\"wavelengths\": [0.67], \"weights\": [1.0]},"
    " \"z\": {\"start\": -1.2, \"stop\": 1.2, \"count\": 13},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.518, \"na\": 1.4,"
    "   \"defocus-model\": \"nonparaxial\"},"
    "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5, 6],"
    "   \"zernike-coefficients\": [%s, %s]},"
    "  {\"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.518}]}",
    g_ascii_dtostr (a, sizeof a, c5), g_ascii_dtostr (b, sizeof b, c6));
}

static double
loss_of (double c5, const AiryLoss *loss)
{
  g_autofree char *json = oil_json (c5, 0.05);
  g_autoptr(AirySystem) s = test_system (json);
  g_autoptr(AiryStack) out = _airy_grad_forward (s, 1, NULL);

  g_assert_nonnull (out);
  return _airy_loss_eval (loss, out, NULL);
}

/* without background the bound falls as 1/√N: four times the photons,
 * half the bound */
static void
test_photons (void)
{
  g_autoptr(AiryLoss) a = crlb ("crlb:-1:1:1000:0");
  g_autoptr(AiryLoss) b = crlb ("crlb:-1:1:4000:0");
  double la = loss_of (0.2, a), lb = loss_of (0.2, b);

  g_test_message ("mean √CRLB %.6g µm at 1000 photons, %.6g at 4000", la, lb);
  g_assert_cmpfloat (la, >, 0);
  g_assert_cmpfloat (fabs (lb - la / 2), <=, 1e-5 * la);
}

/* the reverse pass's gradient of the bound (5000 photons, 10 background)
 * with respect to the astigmatism against Richardson's central differences */
static void
test_gradient (void)
{
  g_autoptr(AiryLoss) loss = crlb ("crlb:-1:1:5000:10");
  g_autofree char *json = oil_json (0.2, 0.05);
  g_autoptr(JsonNode) root = json_from_string (json, NULL);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 1 };
  AiryGradVar *var = _airy_grad_var_new (root, system, "elements[1].zernike-coefficients[0]", NULL);
  double L, h = 4e-3, d1, d2, fd;

  g_assert_nonnull (var);
  g_ptr_array_add (vars, var);
  g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L, NULL, NULL));
  d1 = (loss_of (0.2 + h, loss) - loss_of (0.2 - h, loss)) / (2 * h);
  d2 = (loss_of (0.2 + h / 2, loss) - loss_of (0.2 - h / 2, loss)) / h;
  fd = (4 * d2 - d1) / 3;
  g_test_message ("crlb %.9g (forward %.9g); gradient %.9g, central difference %.9g", L, loss_of (0.2, loss),
                  var->grad, fd);
  g_assert_cmpfloat (fabs (L - loss_of (0.2, loss)), <=, 1e-6 * L);
  g_assert_cmpfloat (fabs (var->grad), >, 0);
  g_assert_cmpfloat (fabs (var->grad - fd), <=, 2e-3 * fabs (fd));
}

static void
check_bad (const char *spec, const char *needle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryLoss) loss = _airy_loss_new_from_spec (spec, &error);

  g_assert_null (loss);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, needle));
}

static void
test_bad (void)
{
  g_autofree char *json = oil_json (0.2, 0.0);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryStack) out = _airy_grad_forward (system, 1, NULL);
  g_autoptr(AiryLoss) outside = crlb ("crlb:5:6:5000:10");
  g_autoptr(GError) error = NULL;

  check_bad ("crlb:1:-1:5000:10", "crlb:1:-1:5000:10: must be crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND");
  check_bad ("crlb:-1:1:0:10", "photons > 0");
  check_bad ("crlb:-1:1:5000", "crlb:-1:1:5000: must be");
  check_bad ("crlb:-1:1:5000:10:w", "AXES of x, y, z");
  g_assert_false (_airy_loss_check_shape (outside, out, &error));
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "no plane of the system lies in [5, 6] µm"));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-grad-crlb-XXXXXX", NULL);
  g_test_add_func ("/grad-crlb/gaussian", test_gaussian);
  g_test_add_func ("/grad-crlb/photons", test_photons);
  g_test_add_func ("/grad-crlb/gradient", test_gradient);
  g_test_add_func ("/grad-crlb/bad", test_bad);
  status = g_test_run ();
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return status;
}
