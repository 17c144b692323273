/* airy-sim as a user runs it: exit status, messages, files. */
#include "config.h"

#include "airy-test-util.h"

static char *tmpdir;

typedef struct
{
  int   status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static void
sim (Run *r, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  const char *arg;
  va_list args;
  int wait_status;

  g_ptr_array_add (argv, (char *) g_getenv ("AIRY_SIM"));
  va_start (args, first);
  for (arg = first; arg; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (char *) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r->out, &r->err, &wait_status, &error));
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128;
}

static char *
write_file (const char *name, const char *contents)
{
  char *path = g_build_filename (tmpdir, name, NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static void
test_help_version (void)
{
  g_auto(Run) help = { 0 }, version = { 0 }, bad = { 0 }, none = { 0 };

  sim (&help, "--help", NULL);
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "airy-sim run SYSTEM.json -o OUT.tif"));
  sim (&version, "--version", NULL);
  g_assert_cmpint (version.status, ==, 0);
  g_assert_cmpstr (version.out, ==, "airy-sim " PACKAGE_VERSION "\n");
  sim (&bad, "frobnicate", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_nonnull (strstr (bad.err, "unknown command"));
  sim (&none, NULL);
  g_assert_cmpint (none.status, ==, 2);
}

static void
test_info (void)
{
  g_auto(Run) r = { 0 };

  sim (&r, "info", "--elements", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "cpu   CPU (FFTW single precision, threads)"));
  g_assert_nonnull (strstr (r.out, "device 0: CPU"));
  g_assert_nonnull (strstr (r.out, "objective-point-source"));
  g_assert_nonnull (strstr (r.out, "ring-mask"));
  g_assert_nonnull (strstr (r.out, "Presets: imaging seed-imaging seed-widefield widefield"));
  /* with or without the module, no GPU here means "no CUDA device" */
  g_assert_nonnull (strstr (r.out, "no CUDA device"));
}

static void
test_preset (void)
{
  g_auto(Run) r = { 0 }, list = { 0 }, bad = { 0 };

  sim (&r, "preset", "seed-widefield", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"shape\": [1536, 1536]"));
  sim (&list, "preset", "--list", NULL);
  g_assert_cmpstr (list.out, ==, "imaging\nseed-imaging\nseed-widefield\nwidefield\n");
  sim (&bad, "preset", "nope", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_cmpstr (bad.err, ==, "airy-sim: preset: unknown preset \"nope\" "
                   "(known: imaging, seed-imaging, seed-widefield, widefield)\n");
}

static void
test_run_and_validate (void)
{
  g_autofree char *sys = write_file ("small.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 5},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  g_autofree char *out = g_build_filename (tmpdir, "small.tif", NULL);
  g_auto(Run) r = { 0 }, v = { 0 };
  g_autoptr(AiryStack) s = NULL;
  g_autoptr(GError) error = NULL;

  sim (&v, "validate", sys, NULL);
  g_assert_cmpint (v.status, ==, 0);
  g_assert_nonnull (strstr (v.out, "valid"));
  sim (&r, "run", sys, "-o", out, "--threads", "1", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "wrote "));
  s = airy_tiff_read (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->depth, ==, 5);
  g_assert_cmpfloat_with_epsilon (s->dz, 1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (s->dx, 50 * 0.5 / (64 * 1.0), 1e-6);
  g_unlink (out);
}

/* Bad input: a clear message, exit 2, no new file and no temporary left,
 * an existing output untouched. */
static void
expect_bad (const char *system_json, const char *expected_err)
{
  /* the message, or "@PATH:" then the start of a message about the file */
  g_autofree char *sys = write_file ("bad.json", system_json);
  g_autofree char *out = g_build_filename (tmpdir, "existing.tif", NULL);
  g_autofree char *contents = NULL;
  g_auto(Run) r = { 0 };

  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  sim (&r, "run", sys, "-o", out, NULL);
  g_assert_cmpint (r.status, ==, 2);
  if (expected_err[0] == '@')
    {
      g_autofree char *prefix = g_strdup_printf ("airy-sim: %s%s", sys, expected_err + 1);
      g_assert_true (g_str_has_prefix (r.err, prefix));
    }
  else
    g_assert_cmpstr (r.err, ==, expected_err);
  g_assert_true (g_file_get_contents (out, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "precious");
  g_assert_false (dir_has_prefix (tmpdir, ".existing.tif."));
  g_unlink (out);
}

static void
test_bad_input (void)
{
  g_autofree char *missing = g_build_filename (tmpdir, "missing.json", NULL);
  g_autofree char *new_out = g_build_filename (tmpdir, "new.tif", NULL);
  g_autofree char *expected = NULL;
  g_auto(Run) r = { 0 }, cuda = { 0 }, usage = { 0 }, dir = { 0 };

  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"elements\": [{\"type\": \"objective-point-source\", \"n\": 1.33, \"na\": 1.7}]}",
              "airy-sim: elements[0].na: must be in (0, n=1.33], got 1.7\n");
  /* broken JSON: file, line and column */
  expect_bad ("{\"airy\": 1,\n \"grid\": {\"shape\": [64, 64] \"spacing\": 0.5}}", "@:2:27: Parse error: ");
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"z\": {\"start\": 0, \"stop\": 1, \"count\": 0}, \"elements\": []}",
              "airy-sim: z.count: must be in [1, 1000000], got 0\n");
  /* a microscope whose sample volume is missing */
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
              " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"/nonexistent/volume.tif\"}}",
              "airy-sim: sample.file: /nonexistent/volume.tif: no such file\n");

  sim (&r, "run", missing, "-o", new_out, NULL);
  g_assert_cmpint (r.status, ==, 2);
  expected = g_strdup_printf ("airy-sim: Failed to open file “%s”: No such file or directory\n", missing);
  g_assert_cmpstr (r.err, ==, expected);
  g_assert_false (g_file_test (new_out, G_FILE_TEST_EXISTS));

  sim (&usage, "run", "--preset", "widefield", NULL);
  g_assert_cmpint (usage.status, ==, 2);
  g_assert_nonnull (strstr (usage.err, "-o OUT.tif"));
  sim (&dir, "run", "--preset", "widefield", "-o", "/nonexistent/dir/x.tif", NULL);
  g_assert_cmpint (dir.status, ==, 2);
  g_assert_cmpstr (dir.err, ==, "airy-sim: -o: the folder /nonexistent/dir does not exist\n");

  /* no GPU here: a clear message, and nothing written */
  sim (&cuda, "run", "--preset", "widefield", "--backend", "cuda", "-o", new_out, NULL);
  g_assert_cmpint (cuda.status, !=, 0);
  g_assert_nonnull (strstr (cuda.err, "no CUDA device"));
  g_assert_false (g_file_test (new_out, G_FILE_TEST_EXISTS));
}

static void
test_bench (void)
{
  /* bench runs and reports its fields; its numbers are never asserted */
  static const char *const fields[] = { "system", "planes", "height", "width", "backend", "threads",
                                        "cold_s", "median_s", "min_s", "max_s", "floor_s", "ratio",
                                        "planes_per_s", "peak_rss_bytes", "peak_device_bytes", NULL };
  g_auto(Run) r = { 0 }, text = { 0 }, bad = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *o;
  guint i;

  sim (&r, "bench", "widefield", "--repeat", "2", "--warmup", "0", "--planes", "3", "--size", "64",
       "--threads", "1", "--json", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, r.out, -1, &error));
  o = json_node_get_object (json_parser_get_root (parser));
  for (i = 0; fields[i]; i++)
    g_assert_true (json_object_has_member (o, fields[i]));
  g_assert_cmpint (json_object_get_int_member (o, "planes"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (o, "width"), ==, 64);
  g_assert_cmpfloat (json_object_get_double_member (o, "median_s"), >, 0.0);
  g_assert_cmpfloat (json_object_get_double_member (o, "floor_s"), >, 0.0);
  /* the CPU backend allocates no device memory */
  g_assert_cmpint (json_object_get_int_member (o, "peak_device_bytes"), ==, 0);

  sim (&text, "bench", "imaging", "--repeat", "1", "--warmup", "0", "--planes", "2", "--size", "64", NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_nonnull (strstr (text.out, "ratio "));
  g_assert_nonnull (strstr (text.out, "floor "));
  g_assert_nonnull (strstr (text.out, "peak RSS"));
  sim (&bad, "bench", "widefield", "--repeat", "0", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_nonnull (strstr (bad.err, "--repeat: must be in [1, 1000], got 0"));
}

static void
test_german (void)
{
  /* LANGUAGE=de: airy-sim and the engine speak German */
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  const char *argv[] = { g_getenv ("AIRY_SIM"), "run", "--preset", "nope", "-o", "x.tif", NULL };
  const char *argv2[] = { g_getenv ("AIRY_SIM"), "frobnicate", NULL };
  int status;

  env = g_environ_setenv (env, "LANGUAGE", "de", TRUE);
  env = g_environ_setenv (env, "LANG", "C.UTF-8", TRUE);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv2, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_cmpstr (err, ==, "airy-sim: unbekannter Befehl „frobnicate“\nSiehe „airy-sim --help“.\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_cmpstr (err, ==, "airy-sim: preset: unbekannte Vorlage „nope“ "
                   "(bekannt: imaging, seed-imaging, seed-widefield, widefield)\n");
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
  tmpdir = g_dir_make_tmp ("airy-cli-XXXXXX", NULL);
  g_test_add_func ("/cli/help-version", test_help_version);
  g_test_add_func ("/cli/info", test_info);
  g_test_add_func ("/cli/preset", test_preset);
  g_test_add_func ("/cli/run-validate", test_run_and_validate);
  g_test_add_func ("/cli/bad-input", test_bad_input);
  g_test_add_func ("/cli/bench", test_bench);
  g_test_add_func ("/cli/german", test_german);
  status = g_test_run ();
  {
    g_autofree char *bad = g_build_filename (tmpdir, "bad.json", NULL);
    g_autofree char *small = g_build_filename (tmpdir, "small.json", NULL);
    g_unlink (bad);
    g_unlink (small);
    g_rmdir (tmpdir);
  }
  return status;
}
