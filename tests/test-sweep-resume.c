/* Sweeps that survive: airy-sim sweep interrupted by SIGTERM (one
 * process) and by a rank killed under mpirun, then finished with
 * --resume, against an uninterrupted sweep byte for byte; --resume's
 * checks (a file cut short or missing is run again, another system's file
 * or another sweep's index.csv is refused); --index K (a job array's
 * task); the --json summary. The MPI case skips without MPI. */
#define _GNU_SOURCE   /* memmem */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "airy-test-util.h"
#include "airy-test-mpi.h"

#define N_SYSTEMS 24
#define SET "elements[1].zernike-coefficients[0]=-0.3:0.3:24"

/* systems slow enough (≈ 0.15 s each) that a signal lands mid-sweep, with
 * small outputs: 128 planes of 512², summed into one image */
static char *
slow_system (void)
{
  return write_json ("resume.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [512, 512], \"spacing\": 0.3125},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -2, \"stop\": 2, \"count\": 128},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "   {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [7],"
    "    \"zernike-coefficients\": [0.1]},"
    "   {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}], \"sensor\": {\"reduce\": \"sum\"}}");
}

/* The reference: the same sweep, uninterrupted, in one process */
static char *
reference_sweep (const char *sys)
{
  char *dir = in_tmp ("resume-ref");
  g_auto(Spawned) s = { 0 };

  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      sim (0, &s, "sweep", sys, "--set", SET, "-o", dir, "--threads", "1", "-q", NULL);
      g_assert_cmpint (s.status, ==, 0);
    }
  return dir;
}

/* The NNNN.tif files in dir (and FALSE on anything else: a temporary,
 * a half file under another name) */
static guint
count_outputs (const char *dir, gboolean *only_outputs)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  *only_outputs = TRUE;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      if (strlen (name) == 8 && g_str_has_suffix (name, ".tif") && g_ascii_isdigit (name[0]))
        n++;
      else if (!g_str_equal (name, "index.csv"))
        {
          g_test_message ("not a sweep's output: %s", name);
          *only_outputs = FALSE;
        }
    }
  return n;
}

/* Starts argv (in tmpdir, Open MPI's settings), waits until dir holds at
 * least `want` outputs, then sends sig to the process `victim` picks
 * (the launched one, or one of its children), and reaps the launch. */
typedef GPid (*VictimFunc) (GPid launched);

static int
interrupt_at (const char *const *argv, const char *dir, guint want, VictimFunc victim, int sig)
{
  g_auto(GStrv) env = mpi_environ ();
  g_autoptr(GError) error = NULL;
  GPid pid;
  int wait_status = 0;
  gboolean only;
  guint polls = 0;

  g_assert_true (g_spawn_async (tmpdir, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  /* at most two minutes: a sweep that never writes fails here */
  while (count_outputs (dir, &only) < want && polls++ < 120000)
    g_usleep (1000);
  g_assert_cmpint (kill (victim (pid), sig), ==, 0);
  g_assert_cmpint (waitpid (pid, &wait_status, 0), ==, pid);
  g_spawn_close_pid (pid);
  return wait_status;
}

static GPid
launched_itself (GPid launched)
{
  return launched;
}

/* A rank of mpirun: a child of it named airy-sim */
static GPid
a_rank_of (GPid launched)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc", name, "stat", NULL);
      g_autofree char *stat = NULL;
      const char *close_paren;
      int ppid = 0;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &stat, NULL, NULL)
          || (close_paren = strrchr (stat, ')')) == NULL || sscanf (close_paren + 2, "%*c %d", &ppid) != 1)
        continue;
      if (ppid == launched && strstr (stat, "(airy-sim)") != NULL)
        return (GPid) atoi (name);
    }
  g_assert_not_reached ();
}

/* The --json line's array `member` */
static char *
summary_list (const char *out, const char *member)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) s = g_string_new (NULL);
  JsonArray *a;
  guint i;

  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  a = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), member);
  g_assert_nonnull (a);
  for (i = 0; i < json_array_get_length (a); i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "," : "", json_array_get_int_element (a, i));
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* The outputs dir held before --resume: "0,1,…" */
static char *
present (const char *dir)
{
  g_autoptr(GString) s = g_string_new (NULL);
  guint k;

  for (k = 0; k < N_SYSTEMS; k++)
    {
      g_autofree char *path = g_strdup_printf ("%s/%04u.tif", dir, k);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        g_string_append_printf (s, "%s%u", s->len ? "," : "", k);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
assert_same_sweep (const char *dir, const char *ref)
{
  guint k;

  for (k = 0; k < N_SYSTEMS; k++)
    {
      g_autofree char *a = g_strdup_printf ("%s/%04u.tif", dir, k);
      g_autofree char *b = g_strdup_printf ("%s/%04u.tif", ref, k);

      assert_same_bytes (a, b);
    }
  {
    g_autofree char *a = g_build_filename (dir, "index.csv", NULL);
    g_autofree char *b = g_build_filename (ref, "index.csv", NULL);
    assert_same_bytes (a, b);
  }
}

/* After the interruption: only whole outputs, fewer than all; --resume
 * (np ranks) runs exactly the missing ones and ends the same as the
 * uninterrupted sweep. */
static void
check_resumed (const char *sys, const char *dir, guint np)
{
  g_autofree char *ref = reference_sweep (sys);
  g_autofree char *before = present (dir);
  g_autofree char *skipped = NULL, *run = NULL, *failed = NULL, *not_run = NULL;
  g_autoptr(GString) missing = g_string_new (NULL);
  g_auto(Spawned) s = { 0 };
  gboolean only;
  guint n = count_outputs (dir, &only), k;

  g_assert_true (only);
  g_assert_cmpuint (n, >=, 1);
  g_assert_cmpuint (n, <, N_SYSTEMS);
  g_test_message ("%u of %u systems were complete when the sweep was stopped", n, N_SYSTEMS);
  for (k = 0; k < N_SYSTEMS; k++)
    {
      g_autofree char *path = g_strdup_printf ("%s/%04u.tif", dir, k);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        g_string_append_printf (missing, "%s%u", missing->len ? "," : "", k);
    }
  sim (np, &s, "sweep", sys, "--set", SET, "-o", dir, "--threads", "1", "--resume", "--json", NULL);
  g_assert_cmpint (s.status, ==, 0);
  skipped = summary_list (s.out, "skipped");
  run = summary_list (s.out, "run");
  failed = summary_list (s.out, "failed");
  not_run = summary_list (s.out, "not_run");
  g_assert_cmpstr (skipped, ==, before);
  g_assert_cmpstr (run, ==, missing->str);
  g_assert_cmpstr (failed, ==, "");
  g_assert_cmpstr (not_run, ==, "");
  assert_same_sweep (dir, ref);
}

static void
test_resume_sigterm (void)
{
  g_autofree char *sys = slow_system ();
  g_autofree char *dir = in_tmp ("resume-term");
  const char *argv[] = { g_getenv ("AIRY_SIM"), "sweep", sys, "--set", SET, "-o", dir, "--threads", "1", "-q", NULL };
  int st;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  st = interrupt_at (argv, dir, 2, launched_itself, SIGTERM);
  /* it died of the signal (after removing its temporary) */
  g_assert_true (WIFSIGNALED (st));
  g_assert_cmpint (WTERMSIG (st), ==, SIGTERM);
  check_resumed (sys, dir, 0);
}

static void
test_resume_killed_rank (void)
{
  g_autofree char *sys = slow_system ();
  g_autofree char *dir = in_tmp ("resume-kill");
  const char *argv[] = { mpirun_path (), "--oversubscribe", "--timeout", "120", "-np", "2", g_getenv ("AIRY_SIM"),
                         "sweep", sys, "--set", SET, "-o", dir, "--threads", "1", "-q", NULL };
  int st;

  if (skip_without_mpi ())
    return;
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  st = interrupt_at (argv, dir, 2, a_rank_of, SIGKILL);
  /* mpirun ends the job and fails */
  g_assert_false (WIFEXITED (st) && WEXITSTATUS (st) == 0);
  check_resumed (sys, dir, 2);
}

/* What --resume checks: a missing file and one cut short are run again
 * (and end the same); a whole file of another system of the sweep, a
 * TIFF that carries no system and another sweep's index.csv are refused
 * with exit 2, and nothing is written. */
static void
test_resume_checks (void)
{
  g_autofree char *sys = slow_system ();
  g_autofree char *ref = reference_sweep (sys);
  g_autofree char *dir = in_tmp ("resume-checks");
  g_autofree char *f3 = g_build_filename (dir, "0003.tif", NULL), *f5 = g_build_filename (dir, "0005.tif", NULL);
  g_autofree char *f7 = g_build_filename (dir, "0007.tif", NULL), *csv = g_build_filename (dir, "index.csv", NULL);
  g_autofree char *expected = NULL, *data = NULL, *run = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };
  g_auto(Spawned) d = { 0 };
  g_auto(Spawned) e = { 0 };
  g_autoptr(GError) error = NULL;
  gsize n;
  guint k;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  for (k = 0; k < N_SYSTEMS; k++)
    {
      g_autofree char *from = g_strdup_printf ("%s/%04u.tif", ref, k);
      g_autofree char *to = g_strdup_printf ("%s/%04u.tif", dir, k);
      g_autofree char *bytes = NULL;

      g_assert_true (g_file_get_contents (from, &bytes, &n, &error));
      g_assert_true (g_file_set_contents (to, bytes, (gssize) n, &error));
    }
  g_unlink (f3);
  /* 0005.tif cut short, in its pixels and before its metadata */
  g_assert_true (g_file_get_contents (f5, &data, &n, &error));
  g_assert_true (g_file_set_contents (f5, data, (gssize) (n / 2), &error));
  sim (0, &a, "sweep", sys, "--set", SET, "-o", dir, "--threads", "1", "--resume", "--json", NULL);
  g_assert_cmpint (a.status, ==, 0);
  run = summary_list (a.out, "run");
  g_assert_cmpstr (run, ==, "3,5");
  assert_same_sweep (dir, ref);

  /* system 5's file as system 7's: another system */
  g_assert_true (g_file_set_contents (f7, data, (gssize) n, &error));
  sim (0, &b, "sweep", sys, "--set", SET, "-o", dir, "--resume", NULL);
  g_assert_cmpint (b.status, ==, 2);
  expected = g_strdup_printf ("airy-sim: --resume: %s holds the result of another system, not of system 7 of this "
                              "sweep (another sweep's folder?): remove it or sweep into another folder\n", f7);
  g_assert_cmpstr (b.err, ==, expected);
  /* nothing was written: system 7's file is still system 5's */
  {
    g_autoptr(GBytes) now = file_bytes (f7);
    g_assert_cmpuint (g_bytes_get_size (now), ==, n);
    g_assert_true (memcmp (g_bytes_get_data (now, NULL), data, n) == 0);
  }

  /* a TIFF Airy did not write as a sweep's (no system in it) */
  {
    g_autoptr(AiryStack) plain = airy_stack_new (2, 8, 8);
    g_assert_true (airy_tiff_write (f7, plain, &error));
    g_assert_no_error (error);
  }
  sim (0, &c, "sweep", sys, "--set", SET, "-o", dir, "--resume", NULL);
  g_assert_cmpint (c.status, ==, 2);
  g_clear_pointer (&expected, g_free);
  expected = g_strdup_printf ("airy-sim: --resume: %s was not written by Airy's sweep (it carries no system), not "
                              "system 7 of this sweep: remove it or sweep into another folder\n", f7);
  g_assert_cmpstr (c.err, ==, expected);

  /* other --set values over this sweep's folder: its index.csv says so */
  sim (0, &d, "sweep", sys, "--set", "elements[1].zernike-coefficients[0]=-0.3:0.3:12", "-o", dir, "--resume", NULL);
  g_assert_cmpint (d.status, ==, 2);
  g_clear_pointer (&expected, g_free);
  expected = g_strdup_printf ("airy-sim: --resume: %s lists another sweep's systems than these --set values give: "
                              "remove it or sweep into another folder\n", csv);
  g_assert_cmpstr (d.err, ==, expected);
  /* without index.csv, its first file says so */
  g_unlink (csv);
  sim (0, &e, "sweep", sys, "--set", "elements[1].zernike-coefficients[0]=-0.2:0.3:12", "-o", dir, "--resume", NULL);
  g_assert_cmpint (e.status, ==, 2);
  g_assert_nonnull (strstr (e.err, "0000.tif holds the result of another system, not of system 0 of this sweep"));
}

/* --index K: system K alone (a job array's task), the file of the whole
 * sweep byte for byte; out of range: exit 2 with the range */
static void
test_sweep_index (void)
{
  g_autofree char *sys = slow_system ();
  g_autofree char *ref = reference_sweep (sys);
  g_autofree char *dir = in_tmp ("resume-index");
  g_autofree char *mine = g_build_filename (dir, "0006.tif", NULL), *theirs = g_build_filename (ref, "0006.tif", NULL);
  g_autofree char *csv = g_build_filename (dir, "index.csv", NULL), *csv_ref = g_build_filename (ref, "index.csv", NULL);
  g_autofree char *run = NULL, *not_run = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  gboolean only;

  sim (0, &a, "sweep", sys, "--set", SET, "-o", dir, "--threads", "1", "--index", "6", "--json", NULL);
  g_assert_cmpint (a.status, ==, 0);
  g_assert_cmpuint (count_outputs (dir, &only), ==, 1);
  assert_same_bytes (mine, theirs);
  assert_same_bytes (csv, csv_ref);
  run = summary_list (a.out, "run");
  g_assert_cmpstr (run, ==, "6");
  not_run = summary_list (a.out, "not_run");
  g_assert_cmpstr (not_run, ==, "0,1,2,3,4,5,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23");
  sim (0, &b, "sweep", sys, "--set", SET, "-o", dir, "--index", "24", NULL);
  g_assert_cmpint (b.status, ==, 2);
  g_assert_cmpstr (b.err, ==, "airy-sim: --index: must be in [0, 23] (this sweep has 24 systems), got 24\n");
}

/* --resume over OME-Zarr stores (--format ome-zarr): whole stores of
 * this sweep are kept, a removed one is run again, and one of another
 * system is refused */
static void
test_resume_stores (void)
{
  g_autofree char *sys = write_json ("stores.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.3125},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -1, \"stop\": 1, \"count\": 4},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "   {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autofree char *dir = in_tmp ("resume-stores");
  g_autofree char *gone = g_build_filename (dir, "0001.ome.zarr", NULL);
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", gone);
  g_autofree char *skipped = NULL, *run = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };

  sim (0, &a, "sweep", sys, "--set", "elements[0].na=0.6:0.9:3", "-o", dir, "--format", "ome-zarr", "-q", NULL);
  g_assert_cmpint (a.status, ==, 0);
  g_assert_cmpint (system (rm), ==, 0);
  sim (0, &b, "sweep", sys, "--set", "elements[0].na=0.6:0.9:3", "-o", dir, "--format", "ome-zarr", "--resume",
       "--json", NULL);
  g_assert_cmpint (b.status, ==, 0);
  skipped = summary_list (b.out, "skipped");
  run = summary_list (b.out, "run");
  g_assert_cmpstr (skipped, ==, "0,2");
  g_assert_cmpstr (run, ==, "1");
  g_assert_true (g_file_test (gone, G_FILE_TEST_IS_DIR));
  /* another NA range: this folder is another sweep's */
  sim (0, &c, "sweep", sys, "--set", "elements[0].na=0.5:0.7:3", "-o", dir, "--format", "ome-zarr", "--resume", NULL);
  g_assert_cmpint (c.status, ==, 2);
  g_assert_true (g_str_has_prefix (c.err, "airy-sim: --resume: "));   /* index.csv or the stores: another sweep's */
  /* without its index.csv, the store itself says whose it is */
  {
    g_autofree char *csv = g_build_filename (dir, "index.csv", NULL);
    g_auto(Spawned) d = { 0 };

    g_assert_cmpint (g_unlink (csv), ==, 0);
    sim (0, &d, "sweep", sys, "--set", "elements[0].na=0.5:0.7:3", "-o", dir, "--format", "ome-zarr", "--resume",
         NULL);
    g_assert_cmpint (d.status, ==, 2);
    g_assert_nonnull (strstr (d.err, "0000.ome.zarr holds the result of another system"));
  }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-test-resume-XXXXXX", NULL);

  g_test_add_func ("/sweep-resume/sigterm", test_resume_sigterm);
  g_test_add_func ("/sweep-resume/killed-rank", test_resume_killed_rank);
  g_test_add_func ("/sweep-resume/checks", test_resume_checks);
  g_test_add_func ("/sweep-resume/index", test_sweep_index);
  g_test_add_func ("/sweep-resume/stores", test_resume_stores);

  status = g_test_run ();
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
    if (system (cmd) != 0)
      g_test_message ("could not remove %s", tmpdir);
  }
  g_free (tmpdir);
  return status;
}
