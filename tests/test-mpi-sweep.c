/* Sweeps, benches and fits over several processes: airy-sim sweep under
 * `mpirun -np 2` and `-np 3` against one-process sweeps and single runs,
 * a rank that fails, a sweep into a folder, bench's ranks and the fit in
 * one process (the communicator and runs: test-mpi.c). The MPI cases skip
 * (with the reason) in builds without MPI or without mpirun. */
#define _GNU_SOURCE   /* memmem */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airy-test-util.h"
#include "airy-test-mpi.h"

/* A rank that cannot run a sweep's systems (its budget is too small) and a
 * rank of a bench whose system file is missing: every rank stops with its
 * message (no rank waits for it) and the sweep writes nothing. */
static void
test_mpi_sweep_fails (void)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 2.5}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 300}, \"elements\": ["
    " {\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    " {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autofree char *sys = write_json ("sweep-fail.json", json);
  g_autofree char *dir = in_tmp ("sweep-fail");
  g_autofree char *missing = in_tmp ("missing.json");
  g_autofree char *expected = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  const char *sim_path = g_getenv ("AIRY_SIM");
  const char *p;
  guint seen = 0;

  if (skip_without_mpi ())
    return;
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  {
    const char *argv[] = { mpirun_path (), "--oversubscribe",
                           "-np", "1", sim_path, "sweep", sys, "--set", "elements[0].na=0.7,0.8", "-o", dir, "-q", ":",
                           "-np", "1", "-x", "AIRY_MEMORY_BUDGET=1M", sim_path, "sweep", sys,
                           "--set", "elements[0].na=0.7,0.8", "-o", dir, "-q", NULL };
    spawn (argv, &a);
  }
  g_assert_cmpint (a.status, ==, 1);
  for (p = a.err; (p = strstr (p, "airy-sim: rank 1 of 2: sweep system 0: grid.shape: a run of 300 planes")) != NULL; p++)
    seen++;
  g_assert_cmpuint (seen, ==, 1);
  g_assert_cmpuint (count_of (a.err, "airy-sim: "), ==, 1);
  g_assert_true (g_rmdir (dir) == 0);   /* empty */

  {
    const char *argv[] = { mpirun_path (), "--oversubscribe",
                           "-np", "1", sim_path, "bench", sys, "--repeat", "1", "--no-write", ":",
                           "-np", "1", sim_path, "bench", missing, "--repeat", "1", "--no-write", NULL };
    spawn (argv, &b);
  }
  g_assert_cmpint (b.status, ==, 1);
  expected = g_strdup_printf ("airy-sim: rank 1 of 2: Failed to open file “%s”: No such file or directory\n", missing);
  seen = 0;
  for (p = b.err; (p = strstr (p, expected)) != NULL; p++)
    seen++;
  g_assert_cmpuint (seen, ==, 1);
  g_assert_cmpuint (count_of (b.err, "airy-sim: "), ==, 1);
  g_unlink (sys);
}

/* The same bad input on every rank (an output over the sample file, a
 * missing folder, a bad --chunks, a bad AIRY_MEMORY_BUDGET): said once,
 * by rank 0, and status 2 as in one process. */
/* A sweep of 10 systems (5 × 2 values) on 2 ranks, and in one process:
 * the files of 10 single runs, byte for byte, and the index naming each
 * value. */
static void
check_sweep (guint np)
{
  g_autofree char *json = psf_json (32, 4);
  g_autofree char *sys = write_json ("sweep.json", json);
  g_autofree char *d2 = in_tmp ("sweep2"), *d1 = in_tmp ("sweep1");
  g_autofree char *csv_path = g_build_filename (d2, "index.csv", NULL);
  g_autofree char *csv = NULL, *csv1 = NULL;
  g_autofree char *csv1_path = g_build_filename (d1, "index.csv", NULL);
  const char *coef[5] = { "-0.2", "-0.10000000000000002", "0", "0.10000000000000002", "0.2" };
  const char *na[2] = { "0.7", "0.8" };
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_autoptr(GError) error = NULL;
  guint k, done = 0;
  const char *p;

  g_assert_cmpint (g_mkdir (d2, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (d1, 0755), ==, 0);
  sim (np, &a, "sweep", sys, "--set", "elements[1].zernike-coefficients[0]=-0.2:0.2:5",
       "--set", "elements[0].na=0.7,0.8", "-o", d2, "--threads", "1", NULL);
  g_assert_cmpint (a.status, ==, 0);
  /* both ranks took systems, 10 in all */
  p = strstr (a.out, "systems per rank: ");
  g_assert_nonnull (p);
  if (np == 2)
    {
      guint r0 = 0, r1 = 0;
      g_assert_cmpint (sscanf (p, "systems per rank: %u, %u", &r0, &r1), ==, 2);
      g_assert_cmpuint (r0 + r1, ==, 10);
    }
  else
    g_assert_true (g_str_has_prefix (p, "systems per rank: 10)\n"));
  sim (0, &b, "sweep", sys, "--set", "elements[1].zernike-coefficients[0]=-0.2:0.2:5",
       "--set", "elements[0].na=0.7,0.8", "-o", d1, "--threads", "1", "-q", NULL);
  g_assert_cmpint (b.status, ==, 0);

  g_assert_true (g_file_get_contents (csv_path, &csv, NULL, &error));
  g_assert_true (g_str_has_prefix (csv, "index,file,elements[1].zernike-coefficients[0],elements[0].na\n"
                                        "0,0000.tif,-0.2,0.7\n1,0001.tif,-0.2,0.8\n"));
  g_assert_true (g_file_get_contents (csv1_path, &csv1, NULL, &error));
  g_assert_cmpstr (csv, ==, csv1);
  for (k = 0; k < 10; k++)
    {
      g_autofree char *single = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 5},"
        " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -2, \"stop\": 2, \"count\": 4},"
        " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": %s},"
        "   {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [7], \"zernike-coefficients\": [%s]},"
        "   {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", na[k % 2], coef[k / 2]);
      g_autofree char *line = g_strdup_printf ("\n%u,%04u.tif,%s,%s\n", k, k, coef[k / 2], na[k % 2]);
      g_autofree char *name = g_strdup_printf ("%04u.tif", k);
      g_autofree char *one_sys = write_json ("single.json", single);
      g_autofree char *one = in_tmp ("single.tif");
      g_autofree char *swept = g_build_filename (d2, name, NULL);
      g_autofree char *swept1 = g_build_filename (d1, name, NULL);
      g_auto(Spawned) c = { 0 };

      g_assert_nonnull (strstr (csv, line));
      sim (0, &c, "run", one_sys, "-o", one, "--threads", "1", "-q", NULL);
      g_assert_cmpint (c.status, ==, 0);
      assert_same_bytes (one, swept);
      assert_same_bytes (one, swept1);
      g_unlink (one);
      g_unlink (one_sys);
      g_unlink (swept);
      g_unlink (swept1);
      done++;
    }
  g_assert_cmpuint (done, ==, 10);
  g_unlink (csv_path);
  g_unlink (csv1_path);
  g_rmdir (d2);
  g_rmdir (d1);
  g_unlink (sys);
}

static void
test_mpi_sweep (void)
{
  if (skip_without_mpi ())
    return;
  check_sweep (2);
}

/* the same sweep without MPI, twice in one process */
static void
test_sweep_one_process (void)
{
  check_sweep (0);
}

/* stderr holds line once, and no other message (one process, or rank 0
 * of np saying what every rank found) */
static void
assert_said (const Spawned *s, guint np, const char *line)
{
  if (count_of (s->err, line) != 1 || count_of (s->err, "airy-sim: ") != 1)
    g_printerr ("stderr: %s\n", s->err);
  g_assert_cmpuint (count_of (s->err, line), ==, 1);
  g_assert_cmpuint (count_of (s->err, "airy-sim: "), ==, 1);
}

/* -o DIR/ of a sweep: made when missing (with its parents, 0755), a clear
 * error when it cannot be; an earlier sweep's files of the same names
 * replaced and the others reported; an input of such a name untouched. */
static void
check_sweep_folder (guint np)
{
  g_autofree char *json = psf_json (16, 2);
  g_autofree char *sys = write_json ("sweep-dir.json", json);
  g_autofree char *top = in_tmp ("made"), *mid = g_build_filename (top, "a", NULL);
  g_autofree char *dir = g_build_filename (mid, "sweep", NULL);
  g_autofree char *file = in_tmp ("plain-file"), *under_file = g_build_filename (file, "sweep", NULL);
  g_autofree char *in_dir = in_tmp ("with-input"), *sample = g_build_filename (in_dir, "0001.tif", NULL);
  g_autofree char *in_sys = g_build_filename (in_dir, "sys.json", NULL);
  g_autofree char *img = test_microscope_json ("{\"file\": \"0001.tif\"}", "\"reduce\": \"sum\"", 16, 2);
  g_autofree char *prefix = np > 1 ? g_strdup_printf ("rank 0 of %u: ", np) : g_strdup ("");
  g_autofree char *expected = NULL, *csv = NULL, *before = NULL;
  g_autoptr(AiryStack) volume = airy_stack_new (2, 16, 16);
  g_autoptr(GBytes) sample_bytes = NULL, sample_after = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };
  g_auto(Spawned) d = { 0 };
  const char *names[] = { "0000.tif", "0001.tif", "0002.tif", "index.csv" };
  mode_t mask = umask (0);
  GStatBuf st;
  guint i;

  umask (mask);
  /* two folders made, 0755 (less the umask) */
  sim (np, &a, "sweep", sys, "--set", "elements[0].na=0.7,0.8,0.9", "-o", dir, "--threads", "1", "-q", NULL);
  g_assert_cmpint (a.status, ==, 0);
  g_assert_cmpstr (a.err, ==, "");
  g_assert_cmpint (g_stat (mid, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0755 & ~mask);
  g_assert_cmpint (g_stat (dir, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 0777, ==, 0755 & ~mask);
  for (i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *f = g_build_filename (dir, names[i], NULL);
      g_assert_true (g_file_test (f, G_FILE_TEST_IS_REGULAR));
    }

  /* again with two systems: 0000, 0001 and index.csv replaced, 0002 an
   * earlier sweep's, reported */
  sim (np, &b, "sweep", sys, "--set", "elements[0].na=0.6,0.7", "-o", dir, "--threads", "1", "-q", NULL);
  g_assert_cmpint (b.status, ==, 0);
  expected = g_strdup_printf ("airy-sim: warning: %s holds 1 more file(s) named like a sweep's that this sweep did "
                              "not write (an earlier sweep's?); index.csv lists this sweep's 2\n", dir);
  g_assert_cmpstr (b.err, ==, expected);
  {
    g_autofree char *csv_path = g_build_filename (dir, "index.csv", NULL);
    g_assert_true (g_file_get_contents (csv_path, &csv, NULL, &error));
    g_assert_cmpstr (csv, ==, "index,file,elements[0].na\n0,0000.tif,0.6\n1,0001.tif,0.7\n");
  }
  for (i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *f = g_build_filename (dir, names[i], NULL);
      g_assert_cmpint (g_unlink (f), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
  g_assert_cmpint (g_rmdir (mid), ==, 0);
  g_assert_cmpint (g_rmdir (top), ==, 0);

  /* a parent that is a file: named, nothing made */
  g_assert_true (g_file_set_contents (file, "x", -1, &error));
  before = listing ();
  sim (np, &c, "sweep", sys, "--set", "elements[0].na=0.7,0.8", "-o", under_file, "-q", NULL);
  g_assert_cmpint (c.status, ==, 2);
  g_free (expected);
  expected = g_strdup_printf ("airy-sim: %s-o: cannot make the folder %s: %s is a file, not a folder\n", prefix,
                              under_file, file);
  assert_said (&c, np, expected);
  {
    g_autofree char *after = listing ();
    g_assert_cmpstr (after, ==, before);
  }
  g_unlink (file);

  /* a sample named like an output in DIR: refused before anything is
   * written, the sample's bytes as they were */
  g_assert_cmpint (g_mkdir (in_dir, 0755), ==, 0);
  volume->dx = volume->dy = 0.1;
  volume->dz = 2;
  airy_stack_plane (volume, 1)[8 * 16 + 8] = 1;
  g_assert_true (airy_tiff_write (sample, volume, &error));
  g_assert_true (g_file_set_contents (in_sys, img, -1, &error));
  g_assert_no_error (error);
  sample_bytes = file_bytes (sample);
  sim (np, &d, "sweep", in_sys, "--set", "microscope.na=0.7,0.8", "-o", in_dir, "-q", NULL);
  /* the same bad input on every rank: status 2 over ranks too */
  g_assert_cmpint (d.status, ==, 2);
  g_free (expected);
  expected = g_strdup_printf ("airy-sim: %s-o and sample.file name the same file %s: an output must not overwrite "
                              "an input\n", prefix, sample);
  assert_said (&d, np, expected);
  sample_after = file_bytes (sample);
  g_assert_true (g_bytes_equal (sample_bytes, sample_after));
  {
    g_autoptr(GDir) listing_in = g_dir_open (in_dir, 0, NULL);
    guint n = 0;

    while (g_dir_read_name (listing_in) != NULL)
      n++;
    g_assert_cmpuint (n, ==, 2);   /* the sample and the system file */
  }
  g_unlink (sample);
  g_unlink (in_sys);
  g_rmdir (in_dir);
  g_unlink (sys);
}

static void
test_sweep_folder (void)
{
  check_sweep_folder (0);
}

static void
test_mpi_sweep_folder (void)
{
  if (skip_without_mpi ())
    return;
  check_sweep_folder (2);
}

/* bench --json: each rank's own work (median) and the longest wait; in
 * one process its run is all its own */
static void
check_bench_ranks (guint np)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_auto(Spawned) a = { 0 };
  JsonObject *o;
  JsonArray *rank_s;
  double median, max_s, wait;
  guint i;

  sim (np, &a, "bench", "seed-imaging", "--planes", "4", "--size", "64", "--threads", "1", "--repeat", "3",
       "--no-write", "--json", NULL);
  g_assert_cmpint (a.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, a.out, -1, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (o, "ranks"), ==, MAX (np, 1));
  rank_s = json_object_get_array_member (o, "rank_s");
  g_assert_nonnull (rank_s);
  g_assert_cmpuint (json_array_get_length (rank_s), ==, MAX (np, 1));
  median = json_object_get_double_member (o, "median_s");
  max_s = json_object_get_double_member (o, "max_s");
  wait = json_object_get_double_member (o, "wait_s");
  g_assert_cmpfloat (wait, >=, 0);
  g_assert_cmpfloat (wait, <=, max_s);
  for (i = 0; i < json_array_get_length (rank_s); i++)
    {
      double t = json_array_get_double_element (rank_s, i);

      g_assert_cmpfloat (t, >, 0);
      /* a rank's own work is part of the run rank 0 timed */
      g_assert_cmpfloat (t, <=, max_s + 1e-3);
    }
  if (np == 0)
    {
      g_assert_cmpfloat (json_array_get_double_element (rank_s, 0), ==, median);
      g_assert_cmpfloat (wait, ==, 0);
    }
}

/* The writes of a bench: the TIFF's and the plain write of as many bytes
 * (over ranks: each rank its planes, in parallel), both measured; the
 * devices of all ranks, as run --json counts them */
static void
check_bench_write (guint np)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonParser) run_parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = psf_json (64, 8);
  g_autofree char *sys = write_json ("bench-write.json", json);
  g_autofree char *out = in_tmp ("bench-run.tif");
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_autofree char *before = listing (), *after = NULL;
  JsonObject *o, *r;
  double plain, e2e, median, ratio;

  sim (np, &a, "bench", sys, "--threads", "1", "--repeat", "3", "--warmup", "0", "--write-dir", tmpdir, "--json",
       NULL);
  g_assert_cmpint (a.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, a.out, -1, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  plain = json_object_get_double_member (o, "plain_write_s");
  e2e = json_object_get_double_member (o, "end_to_end_s");
  median = json_object_get_double_member (o, "median_s");
  ratio = json_object_get_double_member (o, "end_to_end_ratio");
  g_assert_cmpfloat (plain, >, 0);
  g_assert_cmpfloat (json_object_get_double_member (o, "write_s"), >, 0);
  g_assert_cmpfloat (fabs (ratio - e2e / (median + plain)), <=, 1e-3 * ratio);
  g_assert_cmpint (json_object_get_int_member (o, "output_bytes"), ==, 8 * 64 * 64 * 4);
  /* no file of the bench left behind */
  after = listing ();
  g_assert_cmpstr (after, ==, before);

  sim (np, &b, "run", sys, "-o", out, "--threads", "1", "--json", NULL);
  g_assert_cmpint (b.status, ==, 0);
  g_assert_true (json_parser_load_from_data (run_parser, b.out, -1, &error));
  g_assert_no_error (error);
  r = json_node_get_object (json_parser_get_root (run_parser));
  g_assert_cmpint (json_object_get_int_member (o, "devices"), ==, json_object_get_int_member (r, "devices"));
  g_assert_cmpint (json_object_get_int_member (o, "devices"), ==, MAX (np, 1));
  g_unlink (out);
  g_unlink (sys);
}

static void
test_bench_ranks (void)
{
  check_bench_ranks (0);
  check_bench_write (0);
}

static void
test_mpi_bench_ranks (void)
{
  if (skip_without_mpi ())
    return;
  check_bench_ranks (2);
  check_bench_write (2);
}

/* fit is a one-process command: under mpirun -np 2 it refuses (exit 2,
 * rank 0's message once) before reading anything, instead of every rank
 * running the whole fit and writing the same files. */
static void
test_mpi_fit_one_process (void)
{
  g_autofree char *fitted = g_build_filename (tmpdir, "fit-ranks.json", NULL);
  g_auto(Spawned) s = { 0 };

  if (skip_without_mpi ())
    return;
  sim (2, &s, "fit", "beads.tif", "--system", "system.json", "-o", fitted, NULL);
  g_test_message ("%s%s", s.out, s.err);
  g_assert_cmpint (s.status, ==, 2);
  g_assert_nonnull (strstr (s.err, "airy-sim: fit: runs in one process, started as 2 ranks (mpirun -np 1 or "
                                   "without mpirun)"));
  /* once: rank 1 says nothing */
  g_assert_null (strstr (strstr (s.err, "fit: runs in one process") + 1, "fit: runs in one process"));
  g_assert_false (g_file_test (fitted, G_FILE_TEST_EXISTS));
}

/* sweeps without MPI: what is wrong with --set, named */
static void
test_sweep_errors (void)
{
  g_autofree char *json = psf_json (32, 2);
  g_autofree char *sys = write_json ("sweep-bad.json", json);
  g_autofree char *expected = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };

  sim (0, &a, "sweep", sys, "--set", "elements[0].na=0.7:1.5:3", "-o", tmpdir, NULL);
  g_assert_cmpint (a.status, ==, 2);
  g_assert_cmpstr (a.err, ==, "airy-sim: sweep system 2: elements[0].na: must be in [0.001, n=1.33], got 1.5\n");
  sim (0, &b, "sweep", sys, "--set", "elements[5].na=1", "-o", tmpdir, NULL);
  g_assert_cmpint (b.status, ==, 2);
  expected = g_strdup_printf ("airy-sim: --set elements[5].na: %s has no number there (a sweep sets numbers the "
                              "file gives)\n", sys);
  g_assert_cmpstr (b.err, ==, expected);
  sim (0, &c, "sweep", sys, "--set", "elements[0].na=0.7:0.8:x", "-o", tmpdir, NULL);
  g_assert_cmpint (c.status, ==, 2);
  g_assert_cmpstr (c.err, ==, "airy-sim: --set elements[0].na: START:STOP:COUNT needs two finite numbers and a "
                              "count in [1, 1000000], got \"0.7:0.8:x\"\n");
  /* a number given twice, or under two names: one column per number */
  {
    g_autofree char *dir = in_tmp ("sweep-twice");
    g_autofree char *afile = write_json ("afile", "x");
    g_autofree char *sub = g_build_filename (afile, "sub/", NULL);
    g_autofree char *missing = in_tmp ("nope.json");
    g_auto(Spawned) d = { 0 };
    g_auto(Spawned) e = { 0 };
    g_auto(Spawned) f = { 0 };
    g_auto(Spawned) g = { 0 };
    g_auto(Spawned) h = { 0 };
    g_auto(Spawned) i = { 0 };

    sim (0, &d, "sweep", sys, "--set", "elements[0].na=0.7,0.8", "--set", "elements[0].na=0.5,0.6", "-o", dir, NULL);
    g_assert_cmpint (d.status, ==, 2);
    g_assert_cmpstr (d.err, ==, "airy-sim: --set: elements[0].na is given twice\n");
    g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
    sim (0, &e, "sweep", sys, "--set", "elements[0].na=0.7,0.8", "--set", "elements[00].na=0.5", "-o", dir, NULL);
    g_assert_cmpint (e.status, ==, 2);
    g_assert_cmpstr (e.err, ==, "airy-sim: --set: elements[0].na and elements[00].na name the same number: give it "
                                "once\n");
    g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
    /* a missing system file is bad input, as for run and fit */
    sim (0, &f, "sweep", missing, "--set", "elements[0].na=0.7", "-o", dir, NULL);
    g_assert_cmpint (f.status, ==, 2);
    g_assert_nonnull (strstr (f.err, "nope.json"));
    /* -o through a file, -o a file, -o empty */
    sim (0, &g, "sweep", sys, "--set", "elements[0].na=0.7", "-o", sub, NULL);
    g_assert_cmpint (g.status, ==, 2);
    expected = g_strdup_printf ("airy-sim: -o: cannot make the folder %s: %s is a file, not a folder\n", sub, afile);
    g_assert_cmpstr (g.err, ==, expected);
    sim (0, &h, "sweep", sys, "--set", "elements[0].na=0.7", "-o", afile, NULL);
    g_assert_cmpint (h.status, ==, 2);
    g_clear_pointer (&expected, g_free);
    expected = g_strdup_printf ("airy-sim: -o: %s exists and is not a folder\n", afile);
    g_assert_cmpstr (h.err, ==, expected);
    sim (0, &i, "sweep", sys, "--set", "elements[0].na=0.7", "-o", "", NULL);
    g_assert_cmpint (i.status, ==, 2);
    g_assert_nonnull (strstr (i.err, "airy-sim: sweep: -o is empty: give the folder of the files with -o DIR/\n"));
    g_unlink (afile);
  }
  g_unlink (sys);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-test-mpi-XXXXXX", NULL);

  g_test_add_func ("/mpi/sweep", test_mpi_sweep);
  g_test_add_func ("/mpi/sweep-fails", test_mpi_sweep_fails);
  g_test_add_func ("/sweep/one-process", test_sweep_one_process);
  g_test_add_func ("/sweep/errors", test_sweep_errors);
  g_test_add_func ("/sweep/folder", test_sweep_folder);
  g_test_add_func ("/mpi/sweep-folder", test_mpi_sweep_folder);
  g_test_add_func ("/bench/ranks", test_bench_ranks);
  g_test_add_func ("/mpi/bench-ranks", test_mpi_bench_ranks);
  g_test_add_func ("/mpi/fit-one-process", test_mpi_fit_one_process);

  status = g_test_run ();
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return status;
}
