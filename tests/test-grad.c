/* The gradient (engine/airy-grad.c) against central differences of the
 * forward, and the stored pass against the checkpointed one. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "airy-test-util.h"
#include "airy-grad-private.h"
#include "airy-image-file.h"
#include "airy-plan-private.h"

static char *tmpdir;

static char *
psf_json (double c0, double c1, const char *mask)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 4.5},"
    " \"spectrum\": {\"wavelengths\": [0.6], \"weights\": [1.0]},"
    " \"z\": {\"start\": -1.0, \"stop\": 1.0, \"count\": 3},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"power\": 1.5},"
    "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 5],"
    "   \"zernike-coefficients\": [%s, %s]}%s%s,"
    "  {\"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.33}]}",
    g_ascii_dtostr (a, sizeof a, c0), g_ascii_dtostr (b, sizeof b, c1), mask ? ", " : "", mask ? mask : "");
}

static JsonNode *
parse (const char *json)
{
  return json_from_string (json, NULL);
}

/* L at the system of root with var's number at v (a forward and the loss) */
static double
loss_at (JsonNode *root, const AiryGradVar *var, double v, const AiryLoss *loss)
{
  g_autoptr(AirySystem) s = _airy_grad_system_with (root, tmpdir, var, v, NULL);
  g_autoptr(AiryStack) out = NULL;

  g_assert_nonnull (s);
  out = _airy_grad_forward (s, 1, NULL);
  g_assert_nonnull (out);
  return _airy_loss_eval (loss, out, NULL);
}

static AiryLoss *
target_loss (const char *json, const char *name)
{
  g_autoptr(AirySystem) s = test_system (json);
  g_autoptr(AiryStack) t = _airy_grad_forward (s, 1, NULL);
  g_autofree char *path = g_build_filename (tmpdir, name, NULL);
  g_autofree char *spec = g_strconcat ("l2:", path, NULL);

  g_assert_nonnull (t);
  g_assert_true (airy_tiff_write (path, t, NULL));
  return _airy_loss_new_from_spec (spec, NULL);
}

/* the adjoint's gradient against central differences, to tolerance of them */
static void
check_numbers_to (const char *json, const char *const *paths, const double *steps, double tolerance)
{
  g_autofree char *tj = psf_json (0.25, 0.1, NULL);
  g_autoptr(AiryLoss) loss = target_loss (tj, "target.tif");
  g_autoptr(JsonNode) root = parse (json);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 1 };
  double L;
  guint i;

  for (i = 0; paths[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      AiryGradVar *var = _airy_grad_var_new (root, system, paths[i], &error);

      g_assert_no_error (error);
      g_ptr_array_add (vars, var);
    }
  g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L, NULL, NULL));
  g_assert_true (L > 0);
  for (i = 0; i < vars->len; i++)
    {
      AiryGradVar *var = g_ptr_array_index (vars, i);
      double h = steps[i];
      /* Richardson: the central differences at h and h/2, their h² terms
       * cancelled (the forward is float: h cannot go to 0) */
      double d1 = (loss_at (root, var, var->value + h, loss) - loss_at (root, var, var->value - h, loss)) / (2 * h);
      double d2 = (loss_at (root, var, var->value + h / 2, loss) - loss_at (root, var, var->value - h / 2, loss)) / h;
      double fd = (4 * d2 - d1) / 3;

      g_test_message ("%s: adjoint %.9g, central difference %.9g", var->path, var->grad, fd);
      g_assert_cmpfloat (fabs (var->grad - fd), <=, tolerance * fabs (fd));
    }
}

static void
check_numbers (const char *json, const char *const *paths, const double *steps)
{
  check_numbers_to (json, paths, steps, 1e-4);
}

static void
test_zernike_and_doubles (void)
{
  g_autofree char *json = psf_json (0.1, -0.05, NULL);
  static const char *const paths[] = { "elements[1].zernike-coefficients[0]", "elements[1].zernike-coefficients[1]",
                                       "elements[0].power", NULL };
  static const double steps[] = { 4e-3, 4e-3, 0.1 };

  check_numbers (json, paths, steps);
}

static void
test_thick_samples (void)
{
  /* a thin sample and a multislice bead (its RESIZE, FFT and MULTIPLY
   * ops) in the pupil plane: their absorptions, the thin one's thickness
   * (its constant Δn is a phase the intensity does not see) and the bead's
   * index change */
  g_autofree char *json = psf_json (0.1, -0.05,
    "{\"type\": \"thin-sample\", \"dn\": 0.02, \"absorption\": 0.003, \"thickness\": 5},"
    "{\"type\": \"multislice\", \"radius\": 40, \"slices\": 3, \"spacing\": 5, \"dn\": 0.03,"
    " \"absorption\": 0.002, \"n\": 1.33, \"pad\": 2}");
  static const char *const paths[] = { "elements[2].absorption", "elements[2].thickness", "elements[3].dn",
                                       "elements[3].absorption", NULL };
  static const double steps[] = { 2e-3, 0.2, 2e-3, 5e-4 };

  /* the float forward through the bead's eight more transforms: its
   * central differences scatter by ±4e-4 with the step (1e-2, 2e-3, 5e-4) */
  check_numbers_to (json, paths, steps, 1e-3);
}

/* a float mask image base + t·v with its min 0 and max 1 in corners
 * outside the pupil: the mapping onto [0, 1] stays the identity */
static float
mask_base (guint k)
{
  return 0.5f + 0.3f * sinf (0.37f * k);
}

/* the direction: the adjoint's gradient itself, scaled (the largest
 * change of L, far above the float forward's noise) */
static float direction[32 * 32];

static float
mask_dir (guint k)
{
  return direction[k];
}

static char *
mask_file (const char *name, double t)
{
  g_autoptr(AiryStack) m = airy_stack_new (1, 32, 32);
  char *path = g_build_filename (tmpdir, name, NULL);
  guint k;

  for (k = 0; k < 32 * 32; k++)
    m->data[k] = (float) (mask_base (k) + t * mask_dir (k));
  m->data[0] = 0.0f;
  m->data[1] = 1.0f;
  g_assert_true (airy_tiff_write (path, m, NULL));
  return path;
}

static char *
mask_json (const char *type, const char *file)
{
  g_autofree char *mask = g_strdup_printf ("{\"type\": \"%s\", \"file\": \"%s\"%s}", type, file,
                                           g_str_equal (type, "phase-mask")
                                             ? ", \"source\": \"image\", \"phase-min\": 0, \"phase-max\": 1" : "");

  return psf_json (0.1, -0.05, mask);
}

static double
pixel_loss (const char *type, double t, const AiryLoss *loss)
{
  g_autofree char *file = mask_file ("mask-fd.tif", t);
  g_autofree char *json = mask_json (type, file);
  g_autoptr(AirySystem) s = test_system (json);
  g_autoptr(AiryStack) out = _airy_grad_forward (s, 1, NULL);

  return _airy_loss_eval (loss, out, NULL);
}

/* the pixels' gradient along a direction v against the central
 * differences of L(base + t·v) */
static void
check_pixels (const char *type)
{
  g_autofree char *tj = psf_json (0.25, 0.1, NULL);
  g_autoptr(AiryLoss) loss = target_loss (tj, "target-px.tif");
  g_autofree char *file = mask_file ("mask.tif", 0.0);
  g_autofree char *json = mask_json (type, file);
  g_autoptr(JsonNode) root = parse (json);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  g_autoptr(GError) error = NULL;
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 1 };
  AiryGradVar *var;
  double L, h = 0.2, fd, g = 0.0, d1, d2;
  guint k;

  var = _airy_grad_var_new (root, system, "elements[2].pixels", &error);
  g_assert_no_error (error);
  g_ptr_array_add (vars, var);
  g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (var->grad_pixels->height, ==, 32);
  for (k = 2; k < 32 * 32; k++)
    g = MAX (g, fabs (var->grad_pixels->data[k]));
  for (k = 2; k < 32 * 32; k++)
    direction[k] = (float) (0.2 * var->grad_pixels->data[k] / g);
  g = 0.0;
  for (k = 2; k < 32 * 32; k++)
    g += (double) var->grad_pixels->data[k] * mask_dir (k);
  d1 = (pixel_loss (type, h, loss) - pixel_loss (type, -h, loss)) / (2 * h);
  d2 = (pixel_loss (type, h / 2, loss) - pixel_loss (type, -h / 2, loss)) / h;
  fd = (4 * d2 - d1) / 3;
  g_test_message ("%s pixels along v: adjoint %.9g, central difference %.9g", type, g, fd);
  g_assert_cmpfloat (fabs (fd), >, 0);
  g_assert_cmpfloat (fabs (g - fd), <=, 1e-4 * fabs (fd));
}

static void
test_phase_pixels (void)
{
  check_pixels ("phase-mask");
}

static void
test_amplitude_pixels (void)
{
  check_pixels ("amplitude-mask");
}

/* an imaging system: the fused PSF's planes through CONVOLVE (beads) and
 * a block-summing sensor with gain and offset */
static void
test_imaging (void)
{
  g_autofree char *json = test_microscope_json ("{\"beads\": {\"count\": 12, \"seed\": 5, \"intensity\": 3}}",
                                                "\"reduce\": \"sum\", \"resample\": \"block-sum\", \"factor\": 2,"
                                                " \"gain\": 2, \"exposure\": 5, \"offset\": 9", 32, 3);
  g_autoptr(JsonNode) root = parse (json);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AirySystem) at = NULL;
  g_autoptr(AiryStack) t = NULL;
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "target-im.tif", NULL);
  g_autofree char *spec = g_strconcat ("l2:", path, NULL);
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 1 };
  AiryGradVar *var = _airy_grad_var_new (root, system, "elements[0].zernike-coefficients[0]", &error);
  double L, h = 4e-3, d1, d2, fd;

  g_assert_no_error (error);
  g_ptr_array_add (vars, var);
  at = _airy_grad_system_with (root, tmpdir, var, 0.3, NULL);
  t = _airy_grad_forward (at, 1, NULL);
  g_assert_true (airy_tiff_write (path, t, NULL));
  loss = _airy_loss_new_from_spec (spec, NULL);
  g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L, NULL, &error));
  g_assert_no_error (error);
  d1 = (loss_at (root, var, 0.15 + h, loss) - loss_at (root, var, 0.15 - h, loss)) / (2 * h);
  d2 = (loss_at (root, var, 0.15 + h / 2, loss) - loss_at (root, var, 0.15 - h / 2, loss)) / h;
  fd = (4 * d2 - d1) / 3;
  g_test_message ("imaging %s: adjoint %.9g, central difference %.9g", var->path, var->grad, fd);
  g_assert_cmpfloat (fabs (fd), >, 0);
  g_assert_cmpfloat (fabs (var->grad - fd), <=, 1e-4 * fabs (fd));
}

/* the stored pass and the checkpointed one: the same numbers */
static void
test_stored_checkpointed (void)
{
  g_autofree char *json = psf_json (0.1, -0.05, NULL);
  g_autofree char *tj = psf_json (0.25, 0.1, NULL);
  g_autoptr(AiryLoss) loss = target_loss (tj, "target-sc.tif");
  g_autoptr(JsonNode) root = parse (json);
  g_autoptr(AirySystem) system = test_system (json);
  double g[2][3], L[2];
  guint m, i;

  for (m = 0; m < 2; m++)
    {
      g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
      AiryGradOptions options = { m == 0 ? AIRY_GRAD_STORE : AIRY_GRAD_CHECKPOINT, 0, 1 };

      g_ptr_array_add (vars, _airy_grad_var_new (root, system, "elements[1].zernike-coefficients[0]", NULL));
      g_ptr_array_add (vars, _airy_grad_var_new (root, system, "elements[1].zernike-coefficients[1]", NULL));
      g_ptr_array_add (vars, _airy_grad_var_new (root, system, "elements[0].power", NULL));
      g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L[m], NULL, NULL));
      g_assert_true (options.stored == (m == 0));
      for (i = 0; i < 3; i++)
        g[m][i] = ((AiryGradVar *) g_ptr_array_index (vars, i))->grad;
    }
  g_assert_cmpfloat (L[0], ==, L[1]);
  for (i = 0; i < 3; i++)
    g_assert_cmpfloat (fabs (g[0][i] - g[1][i]), <=, 1e-6 * fabs (g[0][i]));
}

/* The gradient's program is compiled once, unfused: no fused field stage
 * is made (or kept, in the place of the forward's) for it or for its
 * numbers' steps; the forward of the same system still compiles its own. */
static void
test_one_compile (void)
{
  g_autofree char *json = psf_json (0.0375, -0.0125, NULL);
  g_autofree char *tj = psf_json (0.25, 0.1, NULL);
  g_autoptr(AiryLoss) loss = target_loss (tj, "target-oc.tif");
  g_autoptr(JsonNode) root = parse (json);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  g_autoptr(AiryResult) r = NULL;
  AiryGradOptions options = { AIRY_GRAD_STORE, 0, 1 };
  AiryRunOptions ro = { 0 };
  guint compiles;
  double L;

  g_ptr_array_add (vars, _airy_grad_var_new (root, system, "elements[1].zernike-coefficients[0]", NULL));
  g_ptr_array_add (vars, _airy_grad_var_new (root, system, "elements[0].na", NULL));
  compiles = _airy_plan_compiles ();
  g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L, NULL, NULL));
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles);
  g_assert_cmpfloat (fabs (((AiryGradVar *) g_ptr_array_index (vars, 1))->grad), >, 0.0);
  ro.threads = 1;
  r = airy_run (system, &ro, NULL, NULL, NULL, NULL);
  g_assert_nonnull (r);
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles + 1);
}

/* differentiability is declared on the pspec */
static void
test_declared (void)
{
  g_autofree char *json = psf_json (0.1, -0.05, NULL);
  g_autoptr(JsonNode) root = parse (json);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GError) error = NULL;

  g_assert_null (_airy_grad_var_new (root, system, "elements[1].zernike-indices[0]", &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "zernike-indices[0]: not differentiable"));
  g_clear_error (&error);
  g_assert_null (_airy_grad_var_new (root, system, "elements[1].source", &error));
  g_assert_nonnull (strstr (error->message, "not differentiable"));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-grad-XXXXXX", NULL);
  g_test_add_func ("/grad/zernike-and-doubles", test_zernike_and_doubles);
  g_test_add_func ("/grad/thick-samples", test_thick_samples);
  g_test_add_func ("/grad/phase-pixels", test_phase_pixels);
  g_test_add_func ("/grad/amplitude-pixels", test_amplitude_pixels);
  g_test_add_func ("/grad/imaging", test_imaging);
  g_test_add_func ("/grad/stored-checkpointed", test_stored_checkpointed);
  g_test_add_func ("/grad/declared", test_declared);
  g_test_add_func ("/grad/one-compile", test_one_compile);
  status = g_test_run ();
  return status;
}
