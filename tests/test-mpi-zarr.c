/* OME-Zarr from airy-sim (issue #32): a run into a store equals its TIFF,
 * the ranks of an MPI run write their planes' chunks into one store that
 * equals the one-process store chunk for chunk, and a rank that fails
 * leaves neither a store nor its partial folder; bad outputs refused. */
#define _GNU_SOURCE
#include "config.h"

#include <stdlib.h>
#include <sys/wait.h>

#include "airy-test-mpi.h"

/* every file of a store, relative path → contents */
static void
collect (const char *root, const char *rel, GHashTable *files)
{
  g_autofree char *dir = rel ? g_build_filename (root, rel, NULL) : g_strdup (root);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *r = rel ? g_build_filename (rel, name, NULL) : g_strdup (name);
      g_autofree char *full = g_build_filename (root, r, NULL);

      if (g_file_test (full, G_FILE_TEST_IS_DIR))
        collect (root, r, files);
      else
        g_hash_table_insert (files, g_steal_pointer (&r), file_bytes (full));
    }
}

/* two stores with the same files, byte for byte */
static void
assert_same_store (const char *a, const char *b)
{
  g_autoptr(GHashTable) fa = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  g_autoptr(GHashTable) fb = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  GHashTableIter it;
  gpointer key, value;

  collect (a, NULL, fa);
  collect (b, NULL, fb);
  g_assert_cmpuint (g_hash_table_size (fa), ==, g_hash_table_size (fb));
  g_hash_table_iter_init (&it, fa);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      GBytes *other = g_hash_table_lookup (fb, key);

      if (other == NULL || !g_bytes_equal (value, other))
        g_test_message ("%s differs", (char *) key);
      g_assert_nonnull (other);
      g_assert_true (g_bytes_equal (value, other));
    }
}

static void
remove_tree (const char *path)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", path);

  g_assert_cmpint (system (cmd), ==, 0);
}

static gboolean
has_partial (void)
{
  g_autoptr(GDir) d = g_dir_open (tmpdir, 0, NULL);
  const char *name;

  while ((name = g_dir_read_name (d)))
    if (name[0] == '.' && strstr (name, ".airy-"))
      return TRUE;
  return FALSE;
}

/* one process: the store holds the TIFF's planes; bad outputs */
static void
test_run_store (void)
{
  g_autofree char *json = psf_json (96, 5);
  g_autofree char *sys = write_json ("psf.json", json);
  g_autofree char *tif = in_tmp ("psf.tif"), *store = in_tmp ("one.ome.zarr");
  g_autofree char *folder = in_tmp ("notes.ome.zarr"), *note = NULL, *expect = NULL;
  g_autoptr(AiryStack) a = NULL, b = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Spawned) r = { 0 };
  g_auto(Spawned) t = { 0 };
  g_auto(Spawned) bad = { 0 };
  g_auto(Spawned) fmt = { 0 };

  sim (0, &r, "run", sys, "-q", "-o", store, NULL);
  g_assert_cmpint (r.status, ==, 0);
  sim (0, &t, "run", sys, "-q", "-o", tif, NULL);
  g_assert_cmpint (t.status, ==, 0);
  a = read_tiff (tif);
  b = airy_image_read (store, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (a->data, (gsize) 5 * 96 * 96 * 4, b->data, (gsize) 5 * 96 * 96 * 4);
  g_assert_cmpfloat (a->dx, ==, b->dx);
  g_assert_cmpfloat (airy_stack_get_z (a, 4), ==, airy_stack_get_z (b, 4));
  g_assert_nonnull (b->system_json);
  g_assert_cmpuint (b->n_wavelengths, ==, 1);

  /* a folder that is not a store is never replaced */
  g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
  note = g_build_filename (folder, "notes.txt", NULL);
  g_assert_true (g_file_set_contents (note, "mine", -1, NULL));
  sim (0, &bad, "run", sys, "-q", "-o", folder, NULL);
  g_assert_cmpint (bad.status, ==, 2);
  expect = g_strdup_printf ("airy-sim: -o: %s is a folder that is not an OME-Zarr store; Airy replaces only a "
                            "store\n", folder);
  g_assert_cmpstr (bad.err, ==, expect);
  g_assert_true (g_file_test (note, G_FILE_TEST_IS_REGULAR));
  sim (0, &fmt, "run", sys, "-q", "--format", "ome", "-o", store, NULL);
  g_assert_cmpint (fmt.status, ==, 2);
  g_clear_pointer (&expect, g_free);
  expect = g_strdup_printf ("airy-sim: --format: chooses the kind of TIFF, and %s is an OME-Zarr store\n", store);
  g_assert_true (g_str_has_prefix (fmt.err, expect));
  g_assert_false (has_partial ());
  remove_tree (folder);
  g_unlink (tif);
}

/* 2 and 3 ranks (3 ranks: unequal parts): the same store, every file */
static void
test_ranks_store (void)
{
  g_autofree char *json = psf_json (80, 7);
  g_autofree char *sys = write_json ("ranks.json", json);
  g_autofree char *one_dir = in_tmp ("one"), *many_dir = in_tmp ("many");
  g_autofree char *one = g_build_filename (one_dir, "psf.ome.zarr", NULL);
  g_autofree char *many = g_build_filename (many_dir, "psf.ome.zarr", NULL);
  guint np;

  if (skip_without_mpi ())
    return;
  g_assert_cmpint (g_mkdir (one_dir, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (many_dir, 0755), ==, 0);
  {
    g_auto(Spawned) r = { 0 };

    sim (0, &r, "run", sys, "-q", "-o", one, NULL);
    g_assert_cmpint (r.status, ==, 0);
  }
  for (np = 2; np <= 3; np++)
    {
      g_auto(Spawned) r = { 0 };

      sim (np, &r, "run", sys, "-q", "-o", many, NULL);
      g_test_message ("%u ranks: %s", np, r.err);
      g_assert_cmpint (r.status, ==, 0);
      assert_same_store (one, many);
      remove_tree (many);
    }
  g_rmdir (many_dir);
  remove_tree (one_dir);
}

/* A rank that fails while writing its chunks: no store, no partial folder,
 * and a store that was there stays whole. */
static void
test_failed_rank (void)
{
  g_autofree char *json = psf_json (64, 4);
  g_autofree char *sys = write_json ("fail.json", json);
  g_autofree char *store = in_tmp ("fail.ome.zarr");
  g_autofree char *old_json = psf_json (64, 2);
  g_autofree char *old_sys = write_json ("old.json", old_json);
  const char *sim_path = g_getenv ("AIRY_SIM");
  g_autoptr(AiryStack) kept = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Spawned) r = { 0 };
  g_auto(Spawned) old = { 0 };

  if (skip_without_mpi ())
    return;
  sim (0, &old, "run", old_sys, "-q", "-o", store, NULL);
  g_assert_cmpint (old.status, ==, 0);
  {
    const char *argv[] = { mpirun_path (), "--oversubscribe",
                           "-np", "1", sim_path, "run", sys, "-q", "-o", store, ":",
                           "-np", "1", "-x", "AIRY_TEST_FAIL_PIECES=1", sim_path, "run", sys, "-q", "-o", store,
                           NULL };
    spawn (argv, &r);
  }
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "rank 1 of 2: "));
  g_assert_nonnull (strstr (r.err, "cannot write: a failure for the test"));
  g_assert_false (has_partial ());
  kept = airy_image_read (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (kept->depth, ==, 2);
  remove_tree (store);
}

/* A sweep into stores: NNNN.ome.zarr per system, each the store of its
 * single run, and index.csv naming them. */
static void
test_sweep_stores (void)
{
  g_autofree char *json = psf_json (48, 3);
  g_autofree char *sys = write_json ("sweep.json", json);
  g_autofree char *dir = in_tmp ("sweep"), *index = NULL, *csv = NULL;
  g_autofree char *one = in_tmp ("single.ome.zarr");
  g_autofree char *single_json = NULL, *single = NULL;
  g_auto(Spawned) r = { 0 };
  g_auto(Spawned) s = { 0 };

  sim (0, &r, "sweep", sys, "--set", "elements[0].na=0.6,0.7", "--format", "ome-zarr", "-o", dir, "-q", NULL);
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  index = g_build_filename (dir, "index.csv", NULL);
  g_assert_true (g_file_get_contents (index, &csv, NULL, NULL));
  g_assert_nonnull (strstr (csv, "0,0000.ome.zarr,0.6"));
  g_assert_nonnull (strstr (csv, "1,0001.ome.zarr,0.7"));
  /* system 1 is the system with na 0.7, run alone */
  {
    GString *t = g_string_new (json);

    g_string_replace (t, "\"na\": 0.8", "\"na\": 0.7", 1);
    single_json = g_string_free (t, FALSE);
  }
  single = write_json ("single.json", single_json);
  sim (0, &s, "run", single, "-q", "-o", one, NULL);
  g_assert_cmpint (s.status, ==, 0);
  {
    g_autofree char *swept = g_build_filename (dir, "0001.ome.zarr", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryStack) a = airy_image_read (swept, &error);
    g_autoptr(AiryStack) b = airy_image_read (one, &error);

    g_assert_no_error (error);
    g_assert_cmpmem (a->data, (gsize) 3 * 48 * 48 * 4, b->data, (gsize) 3 * 48 * 48 * 4);
  }
  remove_tree (dir);
  remove_tree (one);
}

/* A sample streamed by each rank (its own planes, in batches, under a
 * budget that cannot hold them): the image of the same ranks in memory,
 * byte for byte. */
static void
test_ranks_stream (void)
{
  g_autoptr(AiryStack) v = airy_stack_new (64, 256, 256);
  g_autofree char *vol = in_tmp ("vol.ome.zarr"), *sys = NULL, *json = NULL;
  g_autofree char *mem = in_tmp ("ranks-mem.tif"), *str = in_tmp ("ranks-str.tif");
  const char *sim_path = g_getenv ("AIRY_SIM");
  g_autoptr(GError) error = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  gsize i;

  if (skip_without_mpi ())
    return;
  for (i = 0; i < (gsize) 64 * 256 * 256; i++)
    v->data[i] = (float) ((i * 2654435761u) % 1000) / 1000.0f;
  v->dx = v->dy = 0.3;
  v->z0 = -4.0;
  v->dz = 8.0 / 63;
  g_assert_true (airy_image_write (vol, v, NULL, &error));
  g_assert_no_error (error);
  json = g_strdup_printf ("{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.3},"
                          " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -4.0, \"stop\": 4.0, \"count\": 64},"
                          " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0},"
                          " \"elements\": [{\"type\": \"phase-mask\", \"source\": \"constant\", \"value\": 0.0}],"
                          " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"%s\"}}", vol);
  sys = write_json ("ranks-stream.json", json);
  {
    const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", "2", "-x", "AIRY_NO_VOLUME_CACHE=1", sim_path,
                           "run", sys, "-q", "--threads", "1", "-o", mem, NULL };
    spawn (argv, &a);
  }
  g_assert_cmpint (a.status, ==, 0);
  {
    /* 16 MiB of sample, 8 MiB of budget: each rank streams its 32 planes */
    const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", "2", "-x", "AIRY_NO_VOLUME_CACHE=1",
                           "-x", "AIRY_MEMORY_BUDGET=8M", sim_path, "run", sys, "-q", "--threads", "1", "-o", str,
                           NULL };
    spawn (argv, &b);
  }
  g_test_message ("%s", b.err);
  g_assert_cmpint (b.status, ==, 0);
  assert_same_bytes (mem, str);
  remove_tree (vol);
  g_unlink (mem);
  g_unlink (str);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  /* byte-for-byte comparisons of runs whose plans are made apart (a
   * streamed sample plans other transforms than one in memory): FFTW's
   * estimate picks the same algorithm every time, where measuring picks by
   * the timings of a loaded machine */
  g_setenv ("AIRY_FFTW_PLANNER", "estimate", TRUE);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-mpi-zarr-XXXXXX", NULL);
  g_test_add_func ("/mpi-zarr/run", test_run_store);
  g_test_add_func ("/mpi-zarr/ranks", test_ranks_store);
  g_test_add_func ("/mpi-zarr/failed-rank", test_failed_rank);
  g_test_add_func ("/mpi-zarr/sweep", test_sweep_stores);
  g_test_add_func ("/mpi-zarr/ranks-stream", test_ranks_stream);
  status = g_test_run ();
  remove_tree (tmpdir);
  g_free (tmpdir);
  return status;
}
