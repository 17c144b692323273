/* airy-sim optimize: known parameters recovered from a synthetic target by
 * both optimizers, a phase mask's pixels, bounds, Ctrl-C and SIGTERM (the
 * best system written and valid), and bad input. */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy-test-util.h"
#include "airy-image-file.h"

static char *tmpdir;

#define sim(r, ...) test_sim (tmpdir, r, __VA_ARGS__)

/* A PSF (32², 3 planes) through a Zernike mask: the objective's z, the
 * astigmatism coefficient (ANSI 5), or an image phase mask (mask: its
 * element) in place of the Zernike one. */
static void
write_system (const char *name, double z, double astig, const char *mask)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *path = g_build_filename (tmpdir, name, NULL);
  g_autofree char *zernike = g_strdup_printf ("{\"type\": \"phase-mask\", \"source\": \"zernike\","
                                              " \"zernike-indices\": [4, 5], \"zernike-coefficients\": [0.1, %s]}",
                                              g_ascii_dtostr (a, sizeof a, astig));
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 4.5},"
    " \"spectrum\": {\"wavelengths\": [0.6], \"weights\": [1.0]},"
    " \"z\": {\"start\": -1.0, \"stop\": 1.0, \"count\": 3},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"power\": 1.5, \"z\": %s},"
    "  %s, {\"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.33}]}",
    g_ascii_dtostr (b, sizeof b, z), mask ? mask : zernike);

  g_assert_true (g_file_set_contents (path, json, -1, NULL));
}

static void
make_target (void)
{
  g_auto(Run) r = { 0 };

  write_system ("target.json", 0.3, 0.15, NULL);
  sim (&r, "run", "target.json", "-o", "target.tif", "-q", NULL);
  g_assert_cmpint (r.status, ==, 0);
}

static JsonObject *
load_object (JsonParser *parser, const char *name)
{
  g_autofree char *path = g_build_filename (tmpdir, name, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static double
after (JsonObject *report, const char *path)
{
  JsonObject *params = json_object_get_object_member (report, "parameters");

  return json_object_get_double_member (json_object_get_object_member (params, path), "after");
}

/* mean (I − T)² of the written system's own run: the best system is what
 * the report says */
static double
l2_of (const char *system)
{
  g_auto(Run) r = { 0 };
  g_autofree char *out = g_build_filename (tmpdir, "check.tif", NULL);
  g_autofree char *tpath = g_build_filename (tmpdir, "target.tif", NULL);
  g_autoptr(AiryStack) s = NULL, t = NULL;
  double sum = 0;
  gsize i, n;

  sim (&r, "run", system, "-o", "check.tif", "-q", NULL);
  g_assert_cmpint (r.status, ==, 0);
  s = airy_image_read (out, NULL);
  t = airy_image_read (tpath, NULL);
  g_assert_nonnull (s);
  g_assert_nonnull (t);
  n = (gsize) s->depth * airy_stack_plane_size (s);
  for (i = 0; i < n; i++)
    sum += ((double) s->data[i] - t->data[i]) * ((double) s->data[i] - t->data[i]);
  return sum / n;
}

/* z = 0.3 µm and ANSI 5 = 0.15 waves from z = 0, 0 */
static void
check_recovery (const char *optimizer, const char *steps, const char *lr, double tolerance)
{
  g_auto(Run) r = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *report;
  double z, c, before, best;

  make_target ();
  write_system ("start.json", 0.0, 0.0, NULL);
  sim (&r, "optimize", "start.json", "--vary", "elements[1].zernike-coefficients[1],elements[0].z", "--loss",
       "l2:target.tif", "--optimizer", optimizer, "--steps", steps, "--lr", lr, "-o", "opt.json", "--report",
       "report.json", "--log", "log.jsonl", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  report = load_object (parser, "report.json");
  z = after (report, "elements[0].z");
  c = after (report, "elements[1].zernike-coefficients[1]");
  before = json_object_get_double_member (report, "loss-before");
  best = json_object_get_double_member (report, "loss-after");
  g_test_message ("%s: z %.6f (0.3), ANSI 5 %.6f (0.15), loss %.4g → %.4g in %" G_GINT64_FORMAT " steps", optimizer,
                  z, c, before, best, json_object_get_int_member (report, "steps"));
  g_assert_cmpfloat (fabs (z - 0.3), <=, tolerance);
  g_assert_cmpfloat (fabs (c - 0.15), <=, tolerance);
  g_assert_cmpfloat (best, <, 1e-4 * before);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (report, "loss-curve")), ==,
                    json_object_get_int_member (report, "steps") + 1);
  /* OPTIMIZED.json gives the loss the report names */
  g_assert_cmpfloat (fabs (l2_of ("opt.json") - best), <=, 1e-6 * before + 1e-2 * best);
}

static void
test_lbfgs (void)
{
  check_recovery ("lbfgs", "40", "0.05", 1e-4);
}

static void
test_adam (void)
{
  check_recovery ("adam", "150", "0.02", 5e-3);
}

/* a phase mask's pixels from a flat image: the loss falls by 1000 in 20
 * L-BFGS steps and the pixels are written beside OPTIMIZED.json */
static void
test_pixels (void)
{
  g_auto(Run) r = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(AiryStack) flat = airy_stack_new (1, 32, 32);
  g_autofree char *flat_path = g_build_filename (tmpdir, "flat.tif", NULL);
  g_autofree char *px_path = g_build_filename (tmpdir, "popt-elements_1__pixels.tif", NULL);
  JsonObject *report;
  double before, best;

  make_target ();
  g_assert_true (airy_tiff_write (flat_path, flat, NULL));
  write_system ("pix.json", 0.0, 0.0, "{\"type\": \"phase-mask\", \"source\": \"image\", \"file\": \"flat.tif\"}");
  sim (&r, "optimize", "pix.json", "--vary", "elements[1].pixels", "--loss", "l2:target.tif", "--optimizer", "lbfgs",
       "--steps", "20", "--lr", "0.1", "-o", "popt.json", "--report", "preport.json", "-q", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  report = load_object (parser, "preport.json");
  before = json_object_get_double_member (report, "loss-before");
  best = json_object_get_double_member (report, "loss-after");
  g_test_message ("pixels: loss %.4g → %.4g", before, best);
  g_assert_cmpfloat (best, <, 1e-3 * before);
  g_assert_true (g_file_test (px_path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpfloat (fabs (l2_of ("popt.json") - best), <=, 1e-3 * best);
}

/* the upper bound below the target's z: z ends on it, never above */
static void
test_bounds (void)
{
  g_auto(Run) r = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonParser) log = json_parser_new ();
  g_autofree char *log_path = g_build_filename (tmpdir, "blog.jsonl", NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  double z;
  guint i;

  make_target ();
  write_system ("start.json", 0.0, 0.0, NULL);
  sim (&r, "optimize", "start.json", "--vary", "elements[0].z,elements[1].zernike-coefficients[1]", "--bounds",
       "elements[0].z=-0.1:0.2", "--loss", "l2:target.tif", "--optimizer", "lbfgs", "--steps", "30", "--lr", "0.05",
       "-o", "bopt.json", "--report", "breport.json", "--log", "blog.jsonl", "-q", NULL);
  if (r.status != 0)
    g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  z = after (load_object (parser, "breport.json"), "elements[0].z");
  g_test_message ("bounded z: %.9f", z);
  g_assert_cmpfloat (z, <=, 0.2);
  g_assert_cmpfloat (z, >=, 0.2 - 1e-5);
  /* every point evaluated lies inside the bounds */
  g_assert_true (g_file_get_contents (log_path, &text, NULL, NULL));
  lines = g_strsplit (g_strstrip (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >, 2);
  for (i = 0; lines[i]; i++)
    {
      JsonObject *values;

      g_assert_true (json_parser_load_from_data (log, lines[i], -1, NULL));
      values = json_object_get_object_member (json_node_get_object (json_parser_get_root (log)), "values");
      g_assert_cmpfloat (json_object_get_double_member (values, "elements[0].z"), <=, 0.2);
      g_assert_cmpfloat (json_object_get_double_member (values, "elements[0].z"), >=, -0.1);
    }
}

/* sig sent once the log shows three steps: the best system so far is
 * written, loads, and the report says "interrupted" */
static void
check_signal (int sig, const char *output)
{
  g_autofree char *log_path = g_build_filename (tmpdir, "slog.jsonl", NULL);
  g_autofree char *out_path = g_build_filename (tmpdir, output, NULL);
  g_autofree char *report_path = g_build_filename (tmpdir, "sreport.json", NULL);
  const char *argv[] = { g_getenv ("AIRY_SIM"), "optimize", "start.json", "--vary", "elements[0].z", "--loss",
                         "l2:target.tif", "--steps", "1000000", "--lr", "0.001", "-o", output, "--report",
                         "sreport.json", "--log", "slog.jsonl", "-q", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *report;
  GPid pid;
  int wait_status, i;

  make_target ();
  write_system ("start.json", 0.0, 0.15, NULL);
  g_unlink (log_path);
  g_unlink (out_path);
  g_assert_true (g_spawn_async (tmpdir, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                                | G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  for (i = 0; i < 6000; i++)
    {
      g_autofree char *text = NULL;
      g_auto(GStrv) lines = NULL;

      if (g_file_get_contents (log_path, &text, NULL, NULL) && g_strv_length (lines = g_strsplit (text, "\n", -1)) > 3)
        break;
      g_usleep (10000);
    }
  g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));
  kill (pid, sig);
  g_assert_cmpint (waitpid (pid, &wait_status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 128 + sig);
  system = airy_system_new_from_file (out_path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (system);
  report = load_object (parser, "sreport.json");
  g_assert_cmpstr (json_object_get_string_member (report, "end"), ==, "interrupted");
  g_assert_cmpint (json_object_get_int_member (report, "steps"), >=, 3);
  g_assert_cmpfloat (json_object_get_double_member (report, "loss-after"), <,
                     json_object_get_double_member (report, "loss-before"));
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
}

static void
test_sigint (void)
{
  check_signal (SIGINT, "int.json");
}

static void
test_sigterm (void)
{
  check_signal (SIGTERM, "term.json");
}

/* exit 2, the message naming the value, nothing written */
static void
check_bad (const char *vary, const char *bounds, const char *optimizer, const char *needle)
{
  g_auto(Run) r = { 0 };
  g_autofree char *out = g_build_filename (tmpdir, "bad.json", NULL);

  sim (&r, "optimize", "start.json", "--vary", vary, "--bounds", bounds, "--optimizer", optimizer, "--loss",
       "l2:target.tif", "-o", "bad.json", NULL);
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, needle));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

static void
test_bad_input (void)
{
  make_target ();
  write_system ("start.json", 0.0, 0.0, NULL);
  check_bad ("elements[0].nope", "elements[0].nope=0:1", "adam", "elements[0].nope: objective-point-source has no parameter nope");
  check_bad ("elements[7].z", "elements[7].z=0:1", "adam", "--vary elements[7].z: not a parameter");
  check_bad ("elements[0].na", "elements[0].na=0.5:9", "adam", "0.5:9 must lie in elements[0].na's range [0.001, 4]");
  check_bad ("elements[0].na", "elements[0].na=0:0.9", "adam", "0:0.9 must lie in elements[0].na's range [0.001, 4]");
  check_bad ("elements[0].z", "elements[0].z=1:-1", "adam", "the lower bound 1 is above the upper bound -1");
  check_bad ("elements[0].z", "elements[0].na=0.5:0.9", "adam", "elements[0].na is not a variable of --vary");
  check_bad ("elements[0].z", "elements[0].z=a:b", "adam", "must be PATH=A:B");
  check_bad ("elements[0].z", "elements[0].z=0:1", "sgd", "--optimizer: must be one of adam, lbfgs, got \"sgd\"");
  check_bad ("elements[1].zernike-indices[0]", "elements[0].z=0:1", "adam",
             "elements[1].zernike-indices[0]: not differentiable");
  {
    /* a target of another shape: nothing is written */
    g_auto(Run) r = { 0 };
    g_autoptr(AiryStack) small = airy_stack_new (3, 16, 16);
    g_autofree char *small_path = g_build_filename (tmpdir, "small.tif", NULL);
    g_autofree char *out = g_build_filename (tmpdir, "bad.json", NULL);

    g_assert_true (airy_tiff_write (small_path, small, NULL));
    sim (&r, "optimize", "start.json", "--vary", "elements[0].z", "--loss", "l2:small.tif", "-o", "bad.json",
         "--report", "bad-report.json", NULL);
    g_test_message ("%s", r.err);
    g_assert_cmpint (r.status, ==, 2);
    g_assert_nonnull (strstr (r.err, "small.tif is 3 × 16 × 16 (planes × rows × columns), the system gives 3 × 32 × 32"));
    g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  }
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
  tmpdir = g_dir_make_tmp ("airy-cli-optimize-XXXXXX", NULL);
  g_test_add_func ("/cli-optimize/lbfgs", test_lbfgs);
  g_test_add_func ("/cli-optimize/adam", test_adam);
  g_test_add_func ("/cli-optimize/pixels", test_pixels);
  g_test_add_func ("/cli-optimize/bounds", test_bounds);
  g_test_add_func ("/cli-optimize/sigint", test_sigint);
  g_test_add_func ("/cli-optimize/sigterm", test_sigterm);
  g_test_add_func ("/cli-optimize/bad-input", test_bad_input);
  status = g_test_run ();
  test_remove_flat_dir (tmpdir);
  g_free (tmpdir);
  return status;
}
