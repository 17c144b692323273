/* airy-sim grad: its gradient against central differences of the loss of
 * two `airy-sim run`s, and its bad input. */
#include "config.h"

#include <math.h>
#include <sys/wait.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy-test-util.h"
#include "airy-image-file.h"
#include "airy-grad-private.h"

static char *tmpdir;

#define sim(r, ...) test_sim (tmpdir, r, __VA_ARGS__)

/* a PSF through a Zernike phase mask, written as name */
static void
write_system_with (const char *name, double c0, guint n, const char *mask)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *path = g_build_filename (tmpdir, name, NULL);
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": 4.5},"
    " \"spectrum\": {\"wavelengths\": [0.6], \"weights\": [1.0]},"
    " \"z\": {\"start\": -1.0, \"stop\": 1.0, \"count\": 3},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"power\": 1.5},"
    "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 5],"
    "   \"zernike-coefficients\": [%s, -0.05]},%s"
    "  {\"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.33}]}",
    n, n, g_ascii_dtostr (a, sizeof a, c0), mask ? mask : "");

  g_assert_true (g_file_set_contents (path, json, -1, NULL));
}

static void
write_system (const char *name, double c0, guint n)
{
  write_system_with (name, c0, n, NULL);
}

static void
run_to (const char *system, const char *out)
{
  g_auto(Run) r = { 0 };

  sim (&r, "run", system, "-o", out, "-q", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
}

/* mean (I − T)² of the stack `airy-sim run` writes for c0, computed here */
static double
l2_at (double c0, const AiryStack *t)
{
  g_autofree char *out = g_build_filename (tmpdir, "fd.tif", NULL);
  g_autoptr(AiryStack) s = NULL;
  double sum = 0;
  gsize i, n;

  write_system ("fd.json", c0, 32);
  run_to ("fd.json", "fd.tif");
  s = airy_image_read (out, NULL);
  g_assert_nonnull (s);
  n = (gsize) s->depth * s->height * s->width;
  g_assert_cmpuint (n, ==, (gsize) t->depth * t->height * t->width);
  for (i = 0; i < n; i++)
    sum += ((double) s->data[i] - t->data[i]) * ((double) s->data[i] - t->data[i]);
  return sum / n;
}

static void
test_zernike (void)
{
  g_auto(Run) r = { 0 };
  g_autofree char *target_path = g_build_filename (tmpdir, "target.tif", NULL);
  g_autofree char *grad_path = g_build_filename (tmpdir, "grad.json", NULL);
  g_autoptr(AiryStack) target = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *o, *g;
  double c0 = 0.1, h = 4e-3, grad, loss, d1, d2, fd;

  write_system ("target.json", 0.25, 32);
  run_to ("target.json", "target.tif");
  target = airy_image_read (target_path, NULL);
  g_assert_nonnull (target);
  write_system ("sys.json", c0, 32);
  sim (&r, "grad", "sys.json", "--loss", "l2:target.tif", "--vary", "elements[1].zernike-coefficients[0]",
       "-o", "grad.json", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (json_parser_load_from_file (parser, grad_path, NULL));
  o = json_node_get_object (json_parser_get_root (parser));
  loss = json_object_get_double_member (o, "loss");
  g = json_object_get_object_member (o, "gradient");
  grad = json_object_get_double_member (g, "elements[1].zernike-coefficients[0]");
  /* Richardson of the central differences at h and h/2 (float forwards) */
  d1 = (l2_at (c0 + h, target) - l2_at (c0 - h, target)) / (2 * h);
  d2 = (l2_at (c0 + h / 2, target) - l2_at (c0 - h / 2, target)) / h;
  fd = (4 * d2 - d1) / 3;
  g_test_message ("loss %.9g (run: %.9g); gradient %.9g, central difference %.9g", loss, l2_at (c0, target), grad,
                  fd);
  g_assert_cmpfloat (fabs (loss - l2_at (c0, target)), <=, 1e-5 * loss);
  g_assert_cmpfloat (fabs (grad), >, 0);
  g_assert_cmpfloat (fabs (grad - fd), <=, 1e-3 * fabs (fd));
}

/* an amplitude mask's pixels and a coefficient (one --vary, comma
 * separated): the TIFF and the number the CLI writes are the engine's */
static void
test_pixels (void)
{
  g_auto(Run) r = { 0 };
  g_autofree char *sys_path = g_build_filename (tmpdir, "mask-sys.json", NULL);
  g_autofree char *grad_path = g_build_filename (tmpdir, "mask-grad.json", NULL);
  g_autofree char *mask_path = g_build_filename (tmpdir, "mask.tif", NULL);
  g_autofree char *target_path = g_build_filename (tmpdir, "target.tif", NULL);
  g_autofree char *text = NULL, *spec = g_strconcat ("l2:", target_path, NULL), *px_path = NULL;
  g_autoptr(AiryStack) mask = airy_stack_new (1, 32, 32);
  g_autoptr(AiryStack) px = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func (_airy_grad_var_free);
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, 1 };
  AiryGradVar *vp, *vc;
  JsonObject *g;
  double L, gmax = 0, dmax = 0;
  guint k;

  for (k = 0; k < 32 * 32; k++)
    mask->data[k] = 0.5f + 0.3f * sinf (0.37f * k);
  g_assert_true (airy_tiff_write (mask_path, mask, NULL));
  write_system ("target.json", 0.25, 32);
  run_to ("target.json", "target.tif");
  write_system_with ("mask-sys.json", 0.1, 32, "  {\"type\": \"amplitude-mask\", \"file\": \"mask.tif\"},");
  sim (&r, "grad", "mask-sys.json", "--loss", "l2:target.tif", "--vary",
       "elements[2].pixels,elements[1].zernike-coefficients[1]", "-o", "mask-grad.json", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (json_parser_load_from_file (parser, grad_path, NULL));
  g = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "gradient");
  px_path = g_build_filename (tmpdir, json_object_get_string_member (json_object_get_object_member (
                                g, "elements[2].pixels"), "file"), NULL);
  px = airy_image_read (px_path, NULL);
  g_assert_nonnull (px);

  g_assert_true (g_file_get_contents (sys_path, &text, NULL, NULL));
  root = json_from_string (text, NULL);
  system = airy_system_new_from_file (sys_path, NULL);
  g_assert_nonnull (system);
  loss = _airy_loss_new_from_spec (spec, NULL);
  vp = _airy_grad_var_new (root, system, "elements[2].pixels", NULL);
  vc = _airy_grad_var_new (root, system, "elements[1].zernike-coefficients[1]", NULL);
  g_assert_nonnull (vp);
  g_assert_nonnull (vc);
  g_ptr_array_add (vars, vp);
  g_ptr_array_add (vars, vc);
  g_assert_true (_airy_grad_compute (system, root, tmpdir, loss, vars, &options, &L, NULL, NULL));
  g_assert_cmpuint (px->depth, ==, 1);
  g_assert_cmpuint (px->height, ==, vp->grad_pixels->height);
  g_assert_cmpuint (px->width, ==, vp->grad_pixels->width);
  for (k = 0; k < px->height * px->width; k++)
    {
      gmax = MAX (gmax, fabs (vp->grad_pixels->data[k]));
      dmax = MAX (dmax, fabs (px->data[k] - vp->grad_pixels->data[k]));
    }
  g_test_message ("pixels: largest |gradient| %.6g, largest difference CLI − engine %.3g; Z5: %.9g, %.9g", gmax,
                  dmax, json_object_get_double_member (g, "elements[1].zernike-coefficients[1]"), vc->grad);
  g_assert_cmpfloat (gmax, >, 0);
  g_assert_cmpfloat (dmax, <=, 1e-5 * gmax);
  g_assert_cmpfloat (fabs (json_object_get_double_member (g, "elements[1].zernike-coefficients[1]") - vc->grad), <=,
                     1e-6 * fabs (vc->grad));
}

/* without --vary: every differentiable number; the ff-lens's f and n,
 * which the pass cannot follow here, left out with a warning */
static void
test_all (void)
{
  g_auto(Run) one = { 0 }, all = { 0 };
  g_autofree char *one_path = g_build_filename (tmpdir, "one.json", NULL);
  g_autofree char *all_path = g_build_filename (tmpdir, "all.json", NULL);
  g_autoptr(JsonParser) p1 = json_parser_new ();
  g_autoptr(JsonParser) p2 = json_parser_new ();
  JsonObject *g1, *g2;

  write_system ("target.json", 0.25, 32);
  run_to ("target.json", "target.tif");
  write_system ("sys.json", 0.1, 32);
  sim (&one, "grad", "sys.json", "--loss", "l2:target.tif", "--vary", "elements[0].na", "-o", "one.json", NULL);
  sim (&all, "grad", "sys.json", "--loss", "l2:target.tif", "-o", "all.json", NULL);
  g_test_message ("%s", all.err);
  g_assert_cmpint (one.status, ==, 0);
  g_assert_cmpint (all.status, ==, 0);
  g_assert_nonnull (strstr (all.err, "left out elements[2].f: not differentiable here"));
  g_assert_true (json_parser_load_from_file (p1, one_path, NULL));
  g_assert_true (json_parser_load_from_file (p2, all_path, NULL));
  g1 = json_object_get_object_member (json_node_get_object (json_parser_get_root (p1)), "gradient");
  g2 = json_object_get_object_member (json_node_get_object (json_parser_get_root (p2)), "gradient");
  g_assert_false (json_object_has_member (g2, "elements[2].f"));
  g_assert_true (json_object_has_member (g2, "elements[1].zernike-coefficients[1]"));
  g_assert_cmpfloat (fabs (json_object_get_double_member (g2, "elements[0].na")
                           - json_object_get_double_member (g1, "elements[0].na")), <=,
                     1e-6 * fabs (json_object_get_double_member (g1, "elements[0].na")));
}

static void
test_help (void)
{
  g_auto(Run) r = { 0 };

  sim (&r, "--help", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "airy-sim grad SYSTEM.json --loss"));
}

/* exit 2, the message naming the value, no GRAD.json */
static void
check_bad (const char *loss, const char *vary, const char *needle)
{
  g_auto(Run) r = { 0 };
  g_autofree char *out = g_build_filename (tmpdir, "bad-grad.json", NULL);

  sim (&r, "grad", "sys.json", "--loss", loss, "--vary", vary, "-o", "bad-grad.json", NULL);
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, needle));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_bad_input (void)
{
  write_system ("sys.json", 0.1, 32);
  write_system ("small.json", 0.1, 16);
  run_to ("small.json", "small.tif");
  check_bad ("l3:small.tif", "elements[1].zernike-coefficients[0]", "\"l3:small.tif\"");
  check_bad ("l2:small.tif", "elements[1].zernike-coefficients[0]", "small.tif is 3 × 16 × 16");
  check_bad ("l2:missing.tif", "elements[1].zernike-coefficients[0]", "missing.tif");
  check_bad ("l2:small.tif", "elements[1].zernike-indices[0]", "elements[1].zernike-indices[0]: not differentiable");
}

/* bench --grad: every figure there (no time compared: they are measured),
 * and the peaks in the order they are taken */
static void
test_bench (void)
{
  g_auto(Run) r = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *o;

  sim (&r, "bench", "seed-widefield", "--grad", "--size", "32", "--planes", "2", "--repeat", "1", "--threads", "1",
       "--json", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, r.out, -1, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  g_test_message ("%s", r.out);
  g_assert_cmpint (json_object_get_int_member (o, "planes"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (o, "variables"), >=, 3);
  g_assert_cmpfloat (json_object_get_double_member (o, "forward_fused_s"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "pass_s"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "forward_reference_s"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "grad_stored_s"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "grad_checkpointed_s"), >, 0);
  g_assert_cmpint (json_object_get_int_member (o, "peak_rss_stored"), >=,
                   json_object_get_int_member (o, "peak_rss_checkpointed"));
  g_assert_cmpint (json_object_get_int_member (o, "peak_rss_checkpointed"), >=,
                   json_object_get_int_member (o, "peak_rss_forward"));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("AIRY_SIM") == NULL)
    {
      g_print ("1..0 # SKIP AIRY_SIM is not set (run through meson test)\n");
      return 0;
    }
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-cli-grad-XXXXXX", NULL);
  g_test_add_func ("/cli-grad/zernike", test_zernike);
  g_test_add_func ("/cli-grad/pixels", test_pixels);
  g_test_add_func ("/cli-grad/all", test_all);
  g_test_add_func ("/cli-grad/help", test_help);
  g_test_add_func ("/cli-grad/bad-input", test_bad_input);
  g_test_add_func ("/cli-grad/bench", test_bench);
  status = g_test_run ();
  test_remove_flat_dir (tmpdir);
  g_free (tmpdir);
  return status;
}
