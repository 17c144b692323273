/* Samples larger than the memory budget (issue #32 §4): airy-sim images a
 * volume that a small AIRY_MEMORY_BUDGET cannot hold by reading it in
 * batches, and the image is the in-memory run's, byte for byte, from a
 * TIFF and from an OME-Zarr store; its peak resident memory (getrusage,
 * the --json summary) stays below the volume's size. */
#include "config.h"

#include <stdlib.h>

#include "airy-test-util.h"

static char *tmpdir;

/* 256 planes of 256² (64 MiB of float32): random voxels, the system's grid */
#define DEPTH 256
#define SIZE 256

static char *
in_tmp (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static void
write_volume (void)
{
  g_autoptr(AiryStack) v = airy_stack_new (DEPTH, SIZE, SIZE);
  g_autofree char *tif = in_tmp ("vol.tif"), *zarr = in_tmp ("vol.ome.zarr");
  g_autoptr(GError) error = NULL;
  GRand *rand = g_rand_new_with_seed (32);
  gsize i;

  for (i = 0; i < (gsize) DEPTH * SIZE * SIZE; i++)
    v->data[i] = (float) g_rand_double (rand);
  g_rand_free (rand);
  v->dx = v->dy = 0.3;
  v->z0 = -4.0;
  v->dz = 8.0 / (DEPTH - 1);
  g_assert_true (airy_tiff_write (tif, v, &error));
  g_assert_no_error (error);
  g_assert_true (airy_image_write (zarr, v, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&v, airy_stack_free);
  airy_stack_release_spare ();
}

static char *
system_json (const char *sample)
{
  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": 0.3}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"z\": {\"start\": -4.0, \"stop\": 4.0, \"count\": %u},"
    " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0},"
    " \"elements\": [{\"type\": \"phase-mask\", \"source\": \"constant\", \"value\": 0.0}],"
    " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"%s\"}}", SIZE, SIZE, DEPTH, sample);
}

/* airy-sim run SYSTEM -o OUT --json under budget (NULL: the default);
 * returns the peak RSS it reports */
static guint64
run (const char *system, const char *out, const char *budget)
{
  g_auto(GStrv) env = g_get_environ ();
  const char *argv[] = { g_getenv ("AIRY_SIM"), "run", system, "-o", out, "--json", "--threads", "2", NULL };
  g_autofree char *stdout_text = NULL, *stderr_text = NULL;
  g_autoptr(GError) error = NULL;
  const char *p;
  int status;

  env = g_environ_unsetenv (env, "AIRY_MEMORY_BUDGET");
  if (budget)
    env = g_environ_setenv (env, "AIRY_MEMORY_BUDGET", budget, TRUE);
  /* the in-memory run keeps no spectra of the sample across runs either */
  env = g_environ_setenv (env, "AIRY_NO_VOLUME_CACHE", "1", TRUE);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &stdout_text, &stderr_text,
                               &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_test_message ("%s", stderr_text);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  p = strstr (stdout_text, "\"peak_rss_bytes\": ");
  g_assert_nonnull (p);
  return g_ascii_strtoull (p + strlen ("\"peak_rss_bytes\": "), NULL, 10);
}

static void
assert_same_image (const char *a, const char *b)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) x = airy_image_read (a, &error);
  g_autoptr(AiryStack) y = airy_image_read (b, &error);
  gsize n;

  g_assert_no_error (error);
  g_assert_cmpuint (x->depth, ==, y->depth);
  n = (gsize) x->depth * x->height * x->width;
  g_assert_cmpuint (n, ==, (gsize) y->depth * y->height * y->width);
  g_assert_cmpmem (x->data, n * 4, y->data, n * 4);
  g_assert_cmpfloat (plane_max (x->data, n, NULL), >, 0);
}

static void
test_stream (gconstpointer data)
{
  const char *sample = data;
  g_autofree char *json = system_json (sample);
  g_autofree char *sys = in_tmp ("stream.json");
  g_autofree char *mem = in_tmp ("mem.tif"), *str = in_tmp ("streamed.tif");
  guint64 volume = (guint64) DEPTH * SIZE * SIZE * 4, rss_mem, rss_str;

  g_assert_true (g_file_set_contents (sys, json, -1, NULL));
  rss_mem = run (sys, mem, NULL);
  /* 16 MiB: the 64 MiB volume is more than a quarter of it, so it streams */
  rss_str = run (sys, str, "16M");
  g_test_message ("%s: peak RSS %.1f MiB in memory, %.1f MiB streamed under a 16 MiB budget (the volume: %.0f MiB)",
                  sample, rss_mem / 1048576.0, rss_str / 1048576.0, volume / 1048576.0);
  assert_same_image (mem, str);
  g_assert_cmpuint (rss_mem, >, volume);
  g_assert_cmpuint (rss_str, <, volume);
  g_unlink (mem);
  g_unlink (str);
}

/* The budget check of a run that cannot stream (a sample to resample) is
 * unchanged: it is refused, with the sizes. */
static void
test_stream_budget_refused (void)
{
  g_autofree char *tif = in_tmp ("vol.tif");
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.6}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"z\": {\"start\": -4.0, \"stop\": 4.0, \"count\": 16},"
    " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0},"
    " \"elements\": [{\"type\": \"phase-mask\", \"source\": \"constant\", \"value\": 0.0}],"
    " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"%s\", \"resample\": true}}", tif);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GError) error = NULL;

  g_setenv ("AIRY_MEMORY_BUDGET", "16M", TRUE);
  g_assert_false (airy_system_validate (system, NULL, &error));
  g_unsetenv ("AIRY_MEMORY_BUDGET");
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_assert_nonnull (strstr (error->message, "needs 64.0 MiB as float32, more than the memory budget of 16.0 MiB"));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-stream-XXXXXX", NULL);
  write_volume ();
  g_test_add_data_func ("/stream/tiff", "vol.tif", test_stream);
  g_test_add_data_func ("/stream/ome-zarr", "vol.ome.zarr", test_stream);
  g_test_add_func ("/stream/budget-refused", test_stream_budget_refused);
  status = g_test_run ();
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
    if (system (cmd) != 0)
      g_warning ("could not remove %s", tmpdir);
  }
  g_free (tmpdir);
  return status;
}
