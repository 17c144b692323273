/* airy-sim against a hostile or careless user: unknown and conflicting
 * options, outputs that are FIFOs, devices, links or 255-byte names,
 * signals and file-size limits in the middle of a write, leftovers of
 * killed processes, ranks given different inputs, and the messages that
 * name the budget. The MPI cases skip (with the reason) in builds without
 * MPI or without mpirun.
 *
 * `test-cli-hostile --write-named PATH` is a helper role: it writes a
 * 256 MiB stack to PATH through a named temporary (as on a file system
 * without O_TMPFILE), with airy-sim's signal handlers, for the signal
 * tests to interrupt. */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tiffio.h>

#include "airy-test-util.h"
#include "airy-atomic-private.h"

static char *tmpdir;

static const char *
mpirun_path (void)
{
  const char *p = g_getenv ("AIRY_MPIRUN");
  return p && *p ? p : NULL;
}

static char **
test_environ (void)
{
  char **env = g_get_environ ();

  /* Open MPI refuses root (CI) without these */
  env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT", "1", TRUE);
  env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", TRUE);
  return env;
}

/* the child: no core files (SIGQUIT, SIGXCPU, SIGXFSZ dump one), and the
 * file-size limit the test asks for */
static rlim_t child_fsize = RLIM_INFINITY;
static gboolean child_ignore_xfsz;

static void
child_setup (gpointer data)
{
  /* a shell's background job ignores SIGINT and SIGQUIT, and airy-sim
   * keeps an ignored signal ignored (as nohup means it): the children start
   * from the default actions, wherever the suite is run from */
  static const int defaults[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                                  SIGPIPE, SIGXCPU, SIGXFSZ };
  struct rlimit none = { 0, 0 }, fsize = { child_fsize, child_fsize };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (defaults); i++)
    signal (defaults[i], SIG_DFL);
  setrlimit (RLIMIT_CORE, &none);
  if (child_fsize != RLIM_INFINITY)
    setrlimit (RLIMIT_FSIZE, &fsize);
  if (child_ignore_xfsz)
    signal (SIGXFSZ, SIG_IGN);
}

static void
run_argv (Run *r, const char *const *argv)
{
  g_auto(GStrv) env = test_environ ();
  g_autoptr(GError) error = NULL;
  int wait_status;

  memset (r, 0, sizeof *r);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv, env, G_SPAWN_DEFAULT, child_setup, NULL, &r->out, &r->err,
                               &wait_status, &error));
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128 + WTERMSIG (wait_status);
}

/* airy-sim with the arguments (NULL-terminated) */
static void
sim (Run *r, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  const char *arg;
  va_list ap;

  g_ptr_array_add (argv, (char *) g_getenv ("AIRY_SIM"));
  va_start (ap, first);
  for (arg = first; arg; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, (char *) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  run_argv (r, (const char *const *) argv->pdata);
}

static char *
in_tmp (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static char *
write_file (const char *name, const char *contents)
{
  char *path = in_tmp (name);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static char *
file_text (const char *path)
{
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

static void
assert_text (const char *path, const char *expected)
{
  g_autofree char *text = file_text (path);

  g_assert_cmpstr (text, ==, expected);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* the names in dir, sorted, space-separated */
static char *
listing (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *n;

  while (d && (n = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (n));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}

/* A PSF system without warnings at NA 0.8 on 48² and larger (on 32² the pupil is
 * under 8 pupil pixels or the PSF undersampled: 4·R_px/N > 1): n² grid, `planes` planes */
static char *
psf_json (guint n, guint planes, double na)
{
  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -2, \"stop\": 2, \"count\": %u},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": %g},"
    "   {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", n, n, 320.0 / n, planes, na);
}

/* ---- options ---- */

static void
expect_usage (const char *expected_line, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *expected = g_strdup_printf ("airy-sim: %s\nTry “airy-sim --help”.\n", expected_line);
  g_auto(Run) r = { 0 };
  const char *arg;
  va_list ap;

  g_ptr_array_add (argv, (char *) g_getenv ("AIRY_SIM"));
  va_start (ap, first);
  for (arg = first; arg; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, (char *) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  run_argv (&r, (const char *const *) argv->pdata);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_cmpstr (r.err, ==, expected);
  g_assert_cmpstr (r.out, ==, "");
}

/* Every command refuses an option it does not know, long or short,
 * before or after its arguments */
static void
test_unknown_options (void)
{
  static const char *const commands[] = { "run", "validate", "preset", "info", "schema", "bench", "fit", "sweep" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *line = g_strdup_printf ("%s: unknown option --bogus", commands[i]);
      g_autofree char *short_line = g_strdup_printf ("%s: unknown option -x", commands[i]);

      expect_usage (line, commands[i], "--bogus", NULL);
      expect_usage (line, commands[i], "--bogus=1", NULL);
      expect_usage (short_line, commands[i], "-x", NULL);
    }
  expect_usage ("info: unknown option --bogus", "info", "--elements", "--bogus", NULL);
  expect_usage ("validate: unknown option --bogus", "validate", "s.json", "--bogus", NULL);
  expect_usage ("info: takes no arguments, got “extra”", "info", "extra", NULL);
  /* after "--" an argument is no option */
  expect_usage ("info: takes no arguments, got “--elements”", "info", "--", "--elements", NULL);
}

/* Each pair that excludes the other, an option given twice, a value
 * missing, malformed or given to a flag */
static void
test_conflicting_options (void)
{
  expect_usage ("bench: --write-dir and --no-write exclude each other (the write is timed in --write-dir, or "
                "not at all): give one of them", "bench", "--write-dir", ".", "--no-write", NULL);
  expect_usage ("bench: --write-dir and --no-write exclude each other (the write is timed in --write-dir, or "
                "not at all): give one of them", "bench", "--no-write", "--write-dir=.", NULL);
  expect_usage ("fit: --objective least-squares and --gain exclude each other (--gain converts counts to "
                "photons for the Poisson objective): give one of them",
                "fit", "b.tif", "--system", "s.json", "-o", "f.json", "--objective", "least-squares", "--gain", "2",
                NULL);
  expect_usage ("fit: --objective least-squares and --offset exclude each other (--offset converts counts to "
                "photons for the Poisson objective): give one of them",
                "fit", "b.tif", "--offset", "3", "--objective=least-squares", NULL);
  expect_usage ("preset: --list and a preset name (“widefield”) exclude each other: give one of them",
                "preset", "--list", "widefield", NULL);
  expect_usage ("preset: give one preset name, got “widefield” and “imaging”", "preset", "widefield", "imaging",
                NULL);
  expect_usage ("run: -o given twice (a.tif, then b.tif): give it once", "run", "s.json", "-o", "a.tif", "-o",
                "b.tif", NULL);
  expect_usage ("run: --output given twice (a.tif, then b.tif): give it once", "run", "s.json", "-oa.tif",
                "--output", "b.tif", NULL);
  expect_usage ("sweep: --format given twice (ome, then imagej): give it once", "sweep", "s.json", "--format",
                "ome", "--format", "imagej", NULL);
  expect_usage ("bench: --repeat given twice (3, then 4): give it once", "bench", "--repeat", "3", "--repeat=4",
                NULL);
  expect_usage ("run: -o needs a value", "run", "s.json", "-qo", NULL);
  expect_usage ("run: --quiet takes no value, got \"--quiet=yes\"", "run", "s.json", "--quiet=yes", NULL);
  expect_usage ("--threads: must be a whole number, got \"4x\"", "run", "s.json", "-o", "a.tif", "--threads", "4x",
                NULL);
  /* a repeatable option repeats, a flag twice is the flag */
  {
    g_auto(Run) r = { 0 };

    sim (&r, "info", "--elements", "--elements", NULL);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_nonnull (strstr (r.out, "objective-point-source"));
  }
}

/* ---- outputs ---- */

static void
test_long_name (void)
{
  g_autofree char *json = psf_json (48, 2, 0.8);
  g_autofree char *sys = write_file ("long.json", json);
  g_autofree char *base = g_strnfill (251, 'n');
  g_autofree char *name = g_strconcat (base, ".tif", NULL);
  g_autofree char *out = in_tmp (name);
  g_autofree char *before = listing (tmpdir);
  g_autofree char *after = NULL, *expected = NULL;
  g_auto(Run) r = { 0 };
  g_autoptr(AiryStack) s = NULL;
  g_autoptr(GError) error = NULL;

  /* 255 bytes, the most a name may have: the temporary's name is short */
  g_assert_cmpuint (strlen (name), ==, 255);
  sim (&r, "run", sys, "-o", out, "-q", NULL);
  g_assert_cmpstr (r.err, ==, "");
  g_assert_cmpint (r.status, ==, 0);
  s = airy_tiff_read (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->depth, ==, 2);
  after = listing (tmpdir);
  expected = g_strdup_printf ("%s%s%s", before, *before ? " " : "", name);
  g_assert_cmpstr (after, ==, expected);
  g_unlink (out);
  g_unlink (sys);
}

/* -o naming a FIFO, a device (directly or through a link) is refused
 * before anything runs, and stays what it was; a link to a regular file
 * (existing or not) writes that file, the link stays */
static void
test_non_regular_outputs (void)
{
  g_autofree char *json = psf_json (48, 2, 0.8);
  g_autofree char *sys = write_file ("nonreg.json", json);
  g_autofree char *fifo = in_tmp ("fifo.tif");
  g_autofree char *null_link = in_tmp ("null.tif");
  g_autofree char *dir = in_tmp ("linked");
  g_autofree char *target = g_build_filename (dir, "target.tif", NULL);
  g_autofree char *link = in_tmp ("link.tif");
  g_autofree char *dangling = in_tmp ("dangling.tif");
  g_autofree char *nowhere = in_tmp ("nowhere.tif");
  g_autofree char *expected = NULL;
  GStatBuf st;

  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  {
    g_auto(Run) r = { 0 };

    sim (&r, "run", sys, "-o", fifo, "-q", NULL);
    g_assert_cmpint (r.status, ==, 2);
    expected = g_strdup_printf ("airy-sim: -o: %s: is a FIFO (named pipe), not a regular file: an output replaces "
                                "regular files only\n", fifo);
    g_assert_cmpstr (r.err, ==, expected);
    g_assert_cmpint (lstat (fifo, &st), ==, 0);
    g_assert_true (S_ISFIFO (st.st_mode));
    g_clear_pointer (&expected, g_free);
  }
  /* /dev/null through a link: never replaced */
  g_assert_cmpint (symlink ("/dev/null", null_link), ==, 0);
  {
    g_auto(Run) r = { 0 };

    sim (&r, "run", sys, "-o", "x.tif", "--psf-out", null_link, "-q", NULL);
    g_assert_cmpint (r.status, ==, 2);
    expected = g_strdup_printf ("airy-sim: --psf-out: %s: leads to /dev/null, which is a character device, not a "
                                "regular file: an output replaces regular files only\n", null_link);
    g_assert_cmpstr (r.err, ==, expected);
    g_assert_cmpint (stat ("/dev/null", &st), ==, 0);
    g_assert_true (S_ISCHR (st.st_mode));
    g_clear_pointer (&expected, g_free);
  }
  /* a character device node of its own (mknod needs root) */
  if (geteuid () == 0)
    {
      g_autofree char *node = in_tmp ("node.png");
      g_auto(Run) r = { 0 };
      g_autofree char *out = in_tmp ("node-out.tif");

      g_assert_cmpint (mknod (node, S_IFCHR | 0666, makedev (1, 3)), ==, 0);
      sim (&r, "run", sys, "-o", out, "--png", node, "-q", NULL);
      g_assert_cmpint (r.status, ==, 2);
      expected = g_strdup_printf ("airy-sim: --png: %s: is a character device, not a regular file: an output "
                                  "replaces regular files only\n", node);
      g_assert_cmpstr (r.err, ==, expected);
      g_assert_cmpint (lstat (node, &st), ==, 0);
      g_assert_true (S_ISCHR (st.st_mode));
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      g_clear_pointer (&expected, g_free);
      g_unlink (node);
    }
  /* links: the file they lead to is written, atomically, beside itself */
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (target, "old", -1, NULL));
  g_assert_cmpint (symlink ("linked/target.tif", link), ==, 0);
  g_assert_cmpint (symlink ("linked/new.tif", dangling), ==, 0);
  g_assert_cmpint (symlink ("missing/new.tif", nowhere), ==, 0);
  {
    g_auto(Run) r = { 0 }, d = { 0 }, n = { 0 };
    g_autofree char *created = g_build_filename (dir, "new.tif", NULL);
    g_autofree char *inside = NULL;
    g_autoptr(AiryStack) s = NULL;
    g_autoptr(GError) error = NULL;

    sim (&r, "run", sys, "-o", link, "-q", NULL);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_cmpint (lstat (link, &st), ==, 0);
    g_assert_true (S_ISLNK (st.st_mode));
    s = airy_tiff_read (target, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (s->depth, ==, 2);
    sim (&d, "run", sys, "-o", dangling, "-q", NULL);
    g_assert_cmpint (d.status, ==, 0);
    g_assert_true (g_file_test (created, G_FILE_TEST_IS_REGULAR));
    inside = listing (dir);
    g_assert_cmpstr (inside, ==, "new.tif target.tif");
    sim (&n, "run", sys, "-o", nowhere, "-q", NULL);
    g_assert_cmpint (n.status, ==, 1);
    expected = g_strdup_printf ("airy-sim: %s: cannot write: No such file or directory\n", nowhere);
    g_assert_cmpstr (n.err, ==, expected);
    g_unlink (created);
  }
  /* the writer itself refuses too (a FIFO made after the checks) */
  {
    g_autoptr(AiryStack) s = airy_stack_new (1, 4, 4);
    g_autoptr(GError) error = NULL;

    g_assert_false (airy_tiff_write (fifo, s, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_clear_pointer (&expected, g_free);
    expected = g_strdup_printf ("%s: is a FIFO (named pipe), not a regular file: an output replaces regular files "
                                "only", fifo);
    g_assert_cmpstr (error->message, ==, expected);
  }
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  g_assert_false (dir_has_prefix (dir, ".airy-"));
  g_unlink (target);
  g_rmdir (dir);
  g_unlink (fifo);
  g_unlink (null_link);
  g_unlink (link);
  g_unlink (dangling);
  g_unlink (nowhere);
  g_unlink (sys);
}

/* A run's outputs appear together or not at all: the PSF stack past the
 * file-size limit leaves the image's -o (written first) as it was */
static void
test_outputs_together (void)
{
  g_autofree char *json = test_microscope_json ("{\"beads\": {\"count\": 5, \"seed\": 2}}", "\"reduce\": \"sum\"",
                                                64, 9);
  g_autofree char *sys = write_file ("together.json", json);
  g_autofree char *out = in_tmp ("together.tif");
  g_autofree char *psf = in_tmp ("together-psf.tif");
  g_autofree char *png = in_tmp ("together.png");
  g_autofree char *expected = NULL;
  g_autofree char *before = NULL, *after = NULL;

  g_assert_true (g_file_set_contents (out, "old image", -1, NULL));
  g_assert_true (g_file_set_contents (psf, "old psf", -1, NULL));
  before = listing (tmpdir);
  /* the image (16 KiB) fits under 64 KiB, the 9 PSF planes (144 KiB) do not */
  child_fsize = 64 << 10;
  child_ignore_xfsz = TRUE;
  {
    g_auto(Run) r = { 0 };

    sim (&r, "run", sys, "-o", out, "--psf-out", psf, "--png", png, "-q", NULL);
    g_assert_cmpint (r.status, ==, 1);
    expected = g_strdup_printf ("airy-sim: %s: cannot write: File too large\n", psf);
    g_assert_cmpstr (r.err, ==, expected);
  }
  assert_text (out, "old image");
  assert_text (psf, "old psf");
  after = listing (tmpdir);
  g_assert_cmpstr (after, ==, before);
  /* SIGXFSZ not ignored: the run dies of it, nothing left either */
  child_ignore_xfsz = FALSE;
  {
    g_auto(Run) r = { 0 };

    sim (&r, "run", sys, "-o", out, "--psf-out", psf, "-q", NULL);
    g_assert_cmpint (r.status, ==, 128 + SIGXFSZ);
  }
  child_fsize = RLIM_INFINITY;
  assert_text (out, "old image");
  assert_text (psf, "old psf");
  g_clear_pointer (&after, g_free);
  after = listing (tmpdir);
  g_assert_cmpstr (after, ==, before);
  /* without the limit, all three */
  {
    g_auto(Run) r = { 0 };
    g_autoptr(AiryStack) s = NULL;
    g_autoptr(GError) error = NULL;

    sim (&r, "run", sys, "-o", out, "--psf-out", psf, "--png", png, "-q", NULL);
    g_assert_cmpint (r.status, ==, 0);
    s = airy_tiff_read (psf, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (s->depth, ==, 9);
    g_assert_true (g_file_test (png, G_FILE_TEST_IS_REGULAR));
  }
  g_unlink (out);
  g_unlink (psf);
  g_unlink (png);
  g_unlink (sys);
}

/* The engine's group: a staged output whose name became a FIFO fails the
 * commit, and the other output of the group stays as it was */
static void
test_group_commit (void)
{
  g_autofree char *a = in_tmp ("group-a.tif");
  g_autofree char *b = in_tmp ("group-b.tif");
  g_autoptr(AiryStack) s = airy_stack_new (2, 8, 8);
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  AiryAtomicGroup *group;
  GStatBuf st;

  g_assert_true (g_file_set_contents (a, "old a", -1, NULL));
  group = airy_atomic_group_begin ();
  g_assert_true (airy_tiff_write (a, s, &error));
  g_assert_true (airy_tiff_write (b, s, &error));
  g_assert_no_error (error);
  /* staged: nothing in place yet */
  assert_text (a, "old a");
  g_assert_false (g_file_test (b, G_FILE_TEST_EXISTS));
  g_assert_cmpint (mkfifo (b, 0644), ==, 0);
  g_assert_false (airy_atomic_group_commit (group, &error));
  expected = g_strdup_printf ("%s: is a FIFO (named pipe), not a regular file: an output replaces regular files only",
                              b);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  assert_text (a, "old a");
  g_assert_cmpint (lstat (b, &st), ==, 0);
  g_assert_true (S_ISFIFO (st.st_mode));
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  g_unlink (b);
  /* a group that commits: both replaced */
  group = airy_atomic_group_begin ();
  g_assert_true (airy_tiff_write (a, s, &error));
  g_assert_true (airy_tiff_write (b, s, &error));
  g_assert_true (airy_atomic_group_commit (group, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_stat (a, &st), ==, 0);
  g_assert_cmpint (st.st_size, >, 2 * 8 * 8 * 4);
  g_assert_cmpint (g_stat (b, &st), ==, 0);
  g_assert_cmpint (st.st_size, >, 2 * 8 * 8 * 4);
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  g_unlink (a);
  g_unlink (b);
}

/* fit -o and a saved system name the output when the write fails, not
 * a temporary */
static void
test_save_message (void)
{
  g_autofree char *json = psf_json (48, 2, 0.8);
  g_autoptr(AirySystem) system = test_system (json);
  g_autofree char *path = in_tmp ("saved.json");
  g_autofree char *expected = g_strdup_printf ("%s: cannot write: File too large", path);
  g_autoptr(GError) error = NULL;
  struct rlimit old, tiny = { 10, 10 };
  void (*old_handler) (int);

  getrlimit (RLIMIT_FSIZE, &old);
  old_handler = signal (SIGXFSZ, SIG_IGN);
  tiny.rlim_max = old.rlim_max;
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &tiny), ==, 0);
  g_assert_false (airy_system_save (system, path, &error));
  setrlimit (RLIMIT_FSIZE, &old);
  signal (SIGXFSZ, old_handler);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_WRITE);
  g_assert_cmpstr (error->message, ==, expected);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
}

/* ---- leftovers ---- */

static char *
temp_name_of (guint host, gint64 pid, const char *random)
{
  g_autofree char *name = g_strdup_printf (".airy-%08x-%" G_GINT64_FORMAT "-%s", host, pid, random);

  return in_tmp (name);
}

static gint64
dead_pid (void)
{
  const char *argv[] = { "/bin/true", NULL };
  g_autoptr(GError) error = NULL;
  GPid pid;
  int status;

  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_cmpint (kill (pid, 0), ==, -1);
  return pid;
}

/* A later write into the folder removes the temporaries of this host's
 * processes that are gone, and only those */
static void
test_stale_temporaries (void)
{
  g_autofree char *json = psf_json (48, 2, 0.8);
  g_autofree char *sys = write_file ("stale.json", json);
  g_autofree char *out = in_tmp ("stale.tif");
  guint host = g_str_hash (g_get_host_name ());
  gint64 dead = dead_pid ();
  g_autofree char *stale = temp_name_of (host, dead, "aB3dE6");
  g_autofree char *live = temp_name_of (host, getpid (), "aB3dE6");
  g_autofree char *other_host = temp_name_of (host ^ 1, dead, "aB3dE6");
  g_autofree char *locked = temp_name_of (host, dead, "LoCkEd");
  g_autofree char *not_ours = in_tmp (".airy-notes.txt");
  g_auto(Run) r = { 0 };
  int fd;

  g_assert_true (g_file_set_contents (stale, "stale", -1, NULL));
  g_assert_true (g_file_set_contents (live, "live", -1, NULL));
  g_assert_true (g_file_set_contents (other_host, "other", -1, NULL));
  g_assert_true (g_file_set_contents (locked, "locked", -1, NULL));
  g_assert_true (g_file_set_contents (not_ours, "notes", -1, NULL));
  /* held open and locked: a live writer of the same host name in another
   * pid namespace */
  fd = open (locked, O_RDONLY);
  g_assert_cmpint (flock (fd, LOCK_EX), ==, 0);

  sim (&r, "run", sys, "-o", out, "-q", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
  assert_text (live, "live");
  assert_text (other_host, "other");
  assert_text (locked, "locked");
  assert_text (not_ours, "notes");
  close (fd);
  g_unlink (live);
  g_unlink (other_host);
  g_unlink (locked);
  g_unlink (not_ours);
  g_unlink (out);
  g_unlink (sys);
}

/* ---- signals ---- */

static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
                                     SIGXCPU, SIGXFSZ };

/* the size of the named temporary in dir; −1: none */
static gint64
named_temp_size (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, ".airy-"))
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        GStatBuf st;

        return g_stat (path, &st) == 0 ? (gint64) st.st_size : -1;
      }
  return -1;
}

/* the size of an anonymous temporary (O_TMPFILE) in dir that process pid
 * holds open; −1: none */
static gint64
anonymous_temp_size (GPid pid, const char *dir)
{
  g_autofree char *fds = g_strdup_printf ("/proc/%d/fd", (int) pid);
  g_autofree char *prefix = g_strconcat (dir, "/#", NULL);
  g_autoptr(GDir) d = g_dir_open (fds, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *fd = g_build_filename (fds, name, NULL);
      g_autofree char *target = g_file_read_link (fd, NULL);
      GStatBuf st;

      if (target && g_str_has_prefix (target, prefix) && g_str_has_suffix (target, " (deleted)")
          && g_stat (fd, &st) == 0)
        return st.st_size;
    }
  return -1;
}

static GPid
spawn_async (const char *const *argv)
{
  g_auto(GStrv) env = test_environ ();
  g_autoptr(GError) error = NULL;
  GPid pid;

  g_assert_true (g_spawn_async (tmpdir, (char **) argv, env,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                                child_setup, NULL, &pid, &error));
  g_assert_no_error (error);
  return pid;
}

/* Signal sig to a process writing out (an airy-sim run, or the named
 * writer role) once its temporary holds data: it dies of the signal, the
 * folder is as before, the previous output whole. */
static void
interrupt_write (const char *const *argv, const char *out, gboolean named, int sig)
{
  g_autofree char *before = listing (tmpdir);
  g_autofree char *after = NULL;
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  GPid pid;
  int status;

  pid = spawn_async (argv);
  while ((named ? named_temp_size (tmpdir) : anonymous_temp_size (pid, tmpdir)) <= 0
         && g_get_monotonic_time () < deadline)
    {
      g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, 0);
      g_usleep (200);
    }
  g_assert_cmpint (kill (pid, SIGSTOP), ==, 0);
  /* an anonymous temporary has no name at all; a named one is there */
  g_assert_true (named == dir_has_prefix (tmpdir, ".airy-"));
  if (!named)
    g_assert_cmpint (anonymous_temp_size (pid, tmpdir), >, 0);
  assert_text (out, "precious");
  g_assert_cmpint (kill (pid, sig), ==, 0);
  g_assert_cmpint (kill (pid, SIGCONT), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  if (!WIFSIGNALED (status))
    g_test_message ("signal %d: the process exited with status %d instead", sig, WEXITSTATUS (status));
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, sig);
  after = listing (tmpdir);
  g_assert_cmpstr (after, ==, before);
  assert_text (out, "precious");
}

/* Every signal that ends a process, while airy-sim writes a 256 MiB
 * stack: its temporary is anonymous and goes with it */
static void
test_signals_run (void)
{
  /* 256 planes of 512² */
  g_autofree char *json = psf_json (512, 256, 0.8);
  g_autofree char *sys = write_file ("signal.json", json);
  g_autofree char *out = in_tmp ("signal.tif");
  const char *argv[] = { g_getenv ("AIRY_SIM"), "run", sys, "-o", out, "-q", "--threads", "2", NULL };
  guint i;

  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  for (i = 0; i < G_N_ELEMENTS (fatal_signals); i++)
    interrupt_write (argv, out, FALSE, fatal_signals[i]);
  g_unlink (out);
  g_unlink (sys);
}

/* The same with a named temporary (a file system without O_TMPFILE, the
 * shared file of an MPI run): the handler removes it */
static void
test_signals_named (void)
{
  g_autofree char *out = in_tmp ("named.tif");
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  const char *argv[] = { self, "--write-named", out, NULL };
  guint i;

  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  for (i = 0; i < G_N_ELEMENTS (fatal_signals); i++)
    interrupt_write (argv, out, TRUE, fatal_signals[i]);
  g_unlink (out);
}

static int
write_named (const char *path)
{
  g_autoptr(AiryStack) s = airy_stack_new (256, 512, 512);
  g_autoptr(GError) error = NULL;

  _airy_atomic_set_anonymous (FALSE);
  _airy_atomic_remove_on_signals ();
  if (!airy_tiff_write (path, s, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  return 0;
}

/* ---- threads and messages ---- */

static guint
live_threads (void)
{
  g_autoptr(GDir) d = g_dir_open ("/proc/self/task", 0, NULL);
  guint n = 0;

  while (d && g_dir_read_name (d))
    n++;
  return n;
}

/* A run leaves no thread behind: FFTW's multi-threaded transforms (the
 * imaging preset's image on 4 threads) run on threads the engine joins */
static void
test_no_threads_left (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("imaging", &error);
  guint before = live_threads ();
  guint k;

  for (k = 0; k < 2; k++)
    {
      g_autoptr(AiryResult) r = test_run (system, &(AiryRunOptions) { .backend = "cpu", .threads = 4 });

      g_assert_no_error (error);
      g_assert_cmpuint (r->stack->depth, ==, 1);
      g_assert_cmpuint (live_threads (), ==, before);
    }
  airy_shutdown ();
  g_assert_cmpuint (live_threads (), ==, before);
  /* and the engine runs again after its shutdown */
  {
    g_autoptr(AiryResult) r = test_run (system, &(AiryRunOptions) { .backend = "cpu", .threads = 4 });

    g_assert_cmpfloat (plane_max (r->stack->data, (gsize) r->stack->height * r->stack->width, NULL), >, 0);
  }
}

/* a plain TIFF of 512² float32 pages (no ImageJ description) */
static char *
write_plain_tiff (const char *name, guint pages)
{
  char *path = in_tmp (name);
  TIFF *tif = TIFFOpen (path, "w");
  static float row[512];
  guint p, y;

  g_assert_nonnull (tif);
  for (p = 0; p < pages; p++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 512);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 512);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 32);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 512);
      for (y = 0; y < 512; y++)
        g_assert_cmpint (TIFFWriteScanline (tif, row, y, 0), ==, 1);
      g_assert_true (TIFFWriteDirectory (tif));
    }
  TIFFClose (tif);
  return path;
}

/* Budget refusals say what would be allocated and which budget applied */
static void
test_budget_messages (void)
{
  g_autofree char *path = write_plain_tiff ("four.tif", 4);
  g_autofree char *expected = NULL, *unset = NULL, *size = NULL, *text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) s = NULL;

  /* the budget holds one page of 1 MiB: the message counts all four */
  g_setenv ("AIRY_MEMORY_BUDGET", "1.5M", TRUE);
  s = airy_tiff_read (path, &error);
  g_assert_null (s);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  expected = g_strdup_printf ("%s: a stack of 4 × 512 × 512 pixels needs 4.0 MiB as float32, more than the memory "
                              "budget of 1.5 MiB (AIRY_MEMORY_BUDGET=1.5M)", path);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  /* a budget of the reader's caller is only a size */
  {
    AiryReadOptions ro = { 0 };

    g_unsetenv ("AIRY_MEMORY_BUDGET");
    ro.budget = 3 << 20;
    s = airy_tiff_read_full (path, &ro, &error);
    g_assert_null (s);
    g_clear_pointer (&expected, g_free);
    expected = g_strdup_printf ("%s: a stack of 4 × 512 × 512 pixels needs 4.0 MiB as float32, more than the "
                                "memory budget of 3.0 MiB", path);
    g_assert_cmpstr (error->message, ==, expected);
    g_clear_error (&error);
  }
  /* without the variable: the share of available memory, said so */
  {
    /* read the budget once: available memory moves between two reads */
    guint64 budget = airy_memory_budget ();

    size = airy_format_bytes (budget);
    unset = airy_memory_budget_describe (budget, TRUE);
  }
  text = g_strdup_printf ("%s (90 %% of available memory; AIRY_MEMORY_BUDGET sets another)", size);
  g_assert_cmpstr (unset, ==, text);
  g_unlink (path);
}

/* ---- ranks ---- */

static gboolean
skip_without_mpi (void)
{
  if (mpirun_path () == NULL)
    {
      g_test_skip ("no mpirun (openmpi-bin), or a build without MPI");
      return TRUE;
    }
  return FALSE;
}

/* mpirun of two app contexts: np_a ranks of airy-sim with the arguments a,
 * then one rank with b (each space-separated) */
static void
mpmd (Run *r, const char *np_a, const char *a, const char *b)
{
  g_autofree char *line = g_strdup_printf ("%s --oversubscribe --timeout 120 -np %s %s %s : -np 1 %s %s",
                                           mpirun_path (), np_a, g_getenv ("AIRY_SIM"), a, g_getenv ("AIRY_SIM"), b);
  g_auto(GStrv) argv = g_strsplit (line, " ", -1);

  run_argv (r, (const char *const *) argv);
}

/* such a launch refused before anything runs: status 2 and the line
 * (printf-style) among the launcher's words */
static void expect_ranks_refuse (const char *np_a, const char *a, const char *b, const char *format, ...)
  G_GNUC_PRINTF (4, 5);

static void
expect_ranks_refuse (const char *np_a, const char *a, const char *b, const char *format, ...)
{
  g_auto(Run) r = { 0 };
  g_autofree char *line = NULL, *with_newline = NULL;
  va_list ap;

  va_start (ap, format);
  line = g_strdup_vprintf (format, ap);
  va_end (ap);
  with_newline = g_strconcat ("airy-sim: ", line, "\n", NULL);
  mpmd (&r, np_a, a, b);
  if (strstr (r.err, with_newline) == NULL)
    g_test_message ("no line \"%s\" in:\n%s", line, r.err);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, with_newline));
}

/* Ranks given different inputs refuse to run, before anything is
 * written, naming the first rank that differs and how */
static void
test_ranks_differ (void)
{
  g_autofree char *j1 = psf_json (48, 4, 0.8), *j2 = psf_json (48, 4, 1.2), *j3 = psf_json (16, 4, 0.8);
  g_autofree char *s1 = write_file ("r1.json", j1), *s2 = write_file ("r2.json", j2), *s3 = write_file ("r3.json", j3);
  g_autofree char *out = in_tmp ("ranks.tif"), *out2 = in_tmp ("ranks2.tif");
  g_autofree char *before = listing (tmpdir);
  g_autofree char *a = g_strdup_printf ("run %s -o %s -q", s1, out);
  g_autofree char *b_na = g_strdup_printf ("run %s -o %s -q", s2, out);
  g_autofree char *b_grid = g_strdup_printf ("run %s -o %s -q", s3, out);
  g_autofree char *b_out = g_strdup_printf ("run %s -o %s -q", s1, out2);
  g_autofree char *a_chunks = g_strdup_printf ("run %s -o %s --chunks 2,2 -q", s1, out);
  g_autofree char *b_chunks = g_strdup_printf ("run %s -o %s --chunks 3,1 -q", s1, out);
  g_autofree char *b_png = g_strdup_printf ("run %s -o %s --png ranks.png -q", s1, out);
  g_autofree char *after = NULL;

  if (skip_without_mpi ())
    return;
  expect_ranks_refuse ("1", a, b_na, "rank 1 of 2: the system differs from rank 0's (elements[0].na: 1.2 here, 0.8 "
                       "on rank 0)");
  expect_ranks_refuse ("2", a, b_grid, "rank 2 of 3: the system differs from rank 0's (grid.shape[0]: 16 here, 48 "
                       "on rank 0)");
  expect_ranks_refuse ("1", a, b_out, "rank 1 of 2: the outputs differ from rank 0's (-o: \"%s\" here, \"%s\" on "
                       "rank 0)", out2, out);
  expect_ranks_refuse ("1", a_chunks, b_chunks, "rank 1 of 2: the plane split differs from rank 0's (--chunks[0]: "
                       "3 here, 2 on rank 0)");
  expect_ranks_refuse ("1", a, b_png, "rank 1 of 2: the outputs differ from rank 0's (--png: \"%s/ranks.png\" "
                       "here, none on rank 0)", tmpdir);
  /* nothing written by any of them */
  after = listing (tmpdir);
  g_assert_cmpstr (after, ==, before);
  /* the same inputs: a run */
  {
    g_auto(Run) r = { 0 };

    mpmd (&r, "1", a, a);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  }
  g_unlink (out);
  g_unlink (s1);
  g_unlink (s2);
  g_unlink (s3);
}

/* A stale copy of a sample on one node: the same system file, another
 * file's contents under the same name */
static void
test_ranks_differ_sample (void)
{
  g_autofree char *d1 = in_tmp ("node1"), *d2 = in_tmp ("node2");
  g_autofree char *json = test_microscope_json ("{\"file\": \"sample.tif\"}", "\"reduce\": \"sum\"", 16, 3);
  g_autofree char *s1 = g_build_filename (d1, "s.json", NULL), *s2 = g_build_filename (d2, "s.json", NULL);
  g_autofree char *t1 = g_build_filename (d1, "sample.tif", NULL), *t2 = g_build_filename (d2, "sample.tif", NULL);
  g_autofree char *out = in_tmp ("sample-ranks.tif");
  g_autofree char *a = g_strdup_printf ("run %s -o %s -q", s1, out), *b = g_strdup_printf ("run %s -o %s -q", s2, out);
  g_autofree char *sum1 = NULL, *sum2 = NULL;
  g_autoptr(AiryStack) v = airy_stack_new (3, 16, 16);
  g_autoptr(GError) error = NULL;
  gchar *data;
  gsize n;

  if (skip_without_mpi ())
    return;
  g_mkdir (d1, 0755);
  g_mkdir (d2, 0755);
  g_assert_true (g_file_set_contents (s1, json, -1, NULL));
  g_assert_true (g_file_set_contents (s2, json, -1, NULL));
  v->dx = v->dy = 0.1;
  v->dz = 1.0;
  v->data[5] = 1.0f;
  g_assert_true (airy_tiff_write (t1, v, &error));
  v->data[6] = 2.0f;
  g_assert_true (airy_tiff_write (t2, v, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (t1, &data, &n, NULL));
  sum1 = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (guchar *) data, n);
  g_free (data);
  g_assert_true (g_file_get_contents (t2, &data, &n, NULL));
  sum2 = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (guchar *) data, n);
  g_free (data);

  expect_ranks_refuse ("1", a, b, "rank 1 of 2: the system differs from rank 0's (sample.file (%s): other contents "
                       "here (%.16s…) than on rank 0 (%.16s…))", t2, sum2, sum1);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (t1);
  g_unlink (t2);
  g_unlink (s1);
  g_unlink (s2);
  g_rmdir (d1);
  g_rmdir (d2);
}

/* A sample file of more than 64 MiB: the ranks agree on a sample of its
 * bytes (its size, first and last MiB, 4 KiB of every MiB), not on the
 * whole file that no rank of the run reads whole. A byte changed in a
 * sampled block is found; one between the blocks is left to the run. */
static void
write_big (const char *path, guint64 at)
{
  int fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char one = 1;

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) (65 << 20) + 123), ==, 0);
  if (at > 0)
    g_assert_cmpint (pwrite (fd, &one, 1, (off_t) at), ==, 1);
  g_assert_cmpint (close (fd), ==, 0);
}

static void
test_ranks_big_sample (void)
{
  g_autofree char *d1 = in_tmp ("big1"), *d2 = in_tmp ("big2");
  g_autofree char *json = test_microscope_json ("{\"file\": \"big.tif\"}", "\"reduce\": \"sum\"", 16, 3);
  g_autofree char *s1 = g_build_filename (d1, "s.json", NULL), *s2 = g_build_filename (d2, "s.json", NULL);
  g_autofree char *t1 = g_build_filename (d1, "big.tif", NULL), *t2 = g_build_filename (d2, "big.tif", NULL);
  g_autofree char *out = in_tmp ("big-ranks.tif");
  g_autofree char *a = g_strdup_printf ("run %s -o %s -q", s1, out), *b = g_strdup_printf ("run %s -o %s -q", s2, out);
  g_autofree char *line = g_strdup_printf ("airy-sim: rank 1 of 2: the system differs from rank 0's (sample.file (%s): "
                                           "other contents here (", t2);
  g_auto(Run) r = { 0 };
  g_auto(Run) q = { 0 };

  if (skip_without_mpi ())
    return;
  g_mkdir (d1, 0755);
  g_mkdir (d2, 0755);
  g_assert_true (g_file_set_contents (s1, json, -1, NULL));
  g_assert_true (g_file_set_contents (s2, json, -1, NULL));
  write_big (t1, 0);
  /* 40 MiB + 8 KiB: between the sampled blocks; the ranks agree and the
   * run finds the file is no TIFF */
  write_big (t2, (G_GUINT64_CONSTANT (40) << 20) + 8192);
  mpmd (&r, "1", a, b);
  g_assert_cmpint (r.status, !=, 0);
  g_assert_null (strstr (r.err, "other contents"));
  /* 40 MiB + 100: in the block sampled at 40 MiB */
  write_big (t2, (G_GUINT64_CONSTANT (40) << 20) + 100);
  mpmd (&q, "1", a, b);
  g_assert_cmpint (q.status, ==, 2);
  g_assert_nonnull (strstr (q.err, line));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (t1);
  g_unlink (t2);
  g_unlink (s1);
  g_unlink (s2);
  g_rmdir (d1);
  g_rmdir (d2);
}

/* sweep and bench agree too */
static void
test_ranks_differ_sweep_bench (void)
{
  g_autofree char *json = psf_json (48, 2, 0.8);
  g_autofree char *sys = write_file ("sw.json", json);
  g_autofree char *dir = in_tmp ("sw");
  g_autofree char *a = g_strdup_printf ("sweep %s --set elements[0].na=0.5:0.9:3 -o %s -q", sys, dir);
  g_autofree char *b = g_strdup_printf ("sweep %s --set elements[0].na=0.5:0.9:4 -o %s -q", sys, dir);
  g_autofree char *c = g_strdup_printf ("bench %s --repeat 1 --warmup 0 --no-write", sys);
  g_autofree char *d = g_strdup_printf ("bench %s --repeat 2 --warmup 0 --no-write", sys);

  if (skip_without_mpi ())
    return;
  expect_ranks_refuse ("1", a, b, "rank 1 of 2: the sweep's values differ from rank 0's (--set elements[0].na[1]: "
                       "0.6333333333333333 here, 0.7 on rank 0)");
  /* not even the folder */
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  expect_ranks_refuse ("1", c, d, "rank 1 of 2: the bench options differ from rank 0's (--repeat: 2 here, 1 on "
                       "rank 0)");
  g_unlink (sys);
}

/* the pids whose parent is pid */
static GArray *
children_of (GPid parent)
{
  g_autoptr(GDir) d = g_dir_open ("/proc", 0, NULL);
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (GPid));
  const char *name;

  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *stat_path = g_strdup_printf ("/proc/%s/stat", name);
      g_autofree char *text = NULL;
      const char *close_paren;
      int ppid = 0;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (stat_path, &text, NULL, NULL))
        continue;
      /* pid (comm) state ppid … */
      close_paren = strrchr (text, ')');
      if (close_paren && sscanf (close_paren + 1, " %*c %d", &ppid) == 1 && ppid == parent)
        g_array_append_val (pids, (GPid) { atoi (name) });
    }
  return pids;
}

/* A rank of a sweep killed (SIGKILL, no handler runs) while it writes:
 * its temporary is anonymous and nothing is left in the folder */
static void
test_killed_sweep_rank (void)
{
  g_autofree char *json = psf_json (512, 64, 0.8);
  g_autofree char *sys = write_file ("killed.json", json);
  g_autofree char *dir = in_tmp ("killed");
  g_autofree char *sim_path = g_strdup (g_getenv ("AIRY_SIM"));
  const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", "2", sim_path, "sweep", sys, "--set",
                         "elements[0].na=0.5:0.9:6", "-o", dir, "-q", "--threads", "1", NULL };
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  GPid pid, victim = 0;
  int status;

  if (skip_without_mpi ())
    return;
  pid = spawn_async (argv);
  while (victim == 0 && g_get_monotonic_time () < deadline)
    {
      g_autoptr(GArray) kids = children_of (pid);
      guint i;

      g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, 0);
      for (i = 0; i < kids->len && victim == 0; i++)
        if (anonymous_temp_size (g_array_index (kids, GPid, i), dir) > 0)
          victim = g_array_index (kids, GPid, i);
      g_usleep (200);
    }
  g_assert_cmpint (victim, >, 0);
  g_assert_cmpint (kill (victim, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_false (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  /* the complete systems only, no temporary, no index */
  {
    g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;

    while ((name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        g_autoptr(AiryStack) s = NULL;
        g_autoptr(GError) error = NULL;

        g_assert_false (name[0] == '.');
        g_assert_cmpstr (name, !=, "index.csv");
        s = airy_tiff_read (path, &error);
        g_assert_no_error (error);
        g_assert_cmpuint (s->depth, ==, 64);
        g_unlink (path);
      }
  }
  g_rmdir (dir);
  g_unlink (sys);
}

/* Rank 0 of a run killed while the ranks write their shared (named)
 * temporary: it stays, as nothing ran to remove it; the next write into
 * the folder does */
static void
test_killed_rank_cleanup (void)
{
  g_autofree char *json = psf_json (512, 128, 0.8);
  g_autofree char *sys = write_file ("killed-run.json", json);
  g_autofree char *dir = in_tmp ("killed-run");
  g_autofree char *out = g_build_filename (dir, "stack.tif", NULL);
  g_autofree char *next = g_build_filename (dir, "next.tif", NULL);
  g_autofree char *small = psf_json (48, 2, 0.8);
  g_autofree char *small_sys = write_file ("killed-small.json", small);
  g_autofree char *sim_path = g_strdup (g_getenv ("AIRY_SIM"));
  const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", "2", sim_path, "run", sys, "-o", out, "-q",
                         "--threads", "1", NULL };
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  g_autofree char *temp = NULL;
  GPid pid;
  int status;

  if (skip_without_mpi ())
    return;
  g_mkdir (dir, 0755);
  pid = spawn_async (argv);
  while (named_temp_size (dir) <= 0 && g_get_monotonic_time () < deadline)
    {
      g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, 0);
      g_usleep (200);
    }
  /* the owner's pid is in the name */
  {
    g_autofree char *names = listing (dir);
    g_auto(GStrv) parts = g_strsplit (names, "-", -1);

    g_assert_true (g_str_has_prefix (names, ".airy-"));
    g_assert_cmpuint (g_strv_length (parts), ==, 4);
    g_assert_cmpint (kill (atoi (parts[2]), SIGKILL), ==, 0);
    temp = g_build_filename (dir, names, NULL);
  }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (g_file_test (temp, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  {
    g_auto(Run) r = { 0 };

    sim (&r, "run", small_sys, "-o", next, "-q", NULL);
    g_assert_cmpint (r.status, ==, 0);
  }
  g_assert_false (g_file_test (temp, G_FILE_TEST_EXISTS));
  {
    g_autofree char *names = listing (dir);

    g_assert_cmpstr (names, ==, "next.tif");
  }
  g_unlink (next);
  g_rmdir (dir);
  g_unlink (sys);
  g_unlink (small_sys);
}

int
main (int argc, char **argv)
{
  int status;

  if (argc == 3 && g_str_equal (argv[1], "--write-named"))
    return write_named (argv[2]);
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-hostile-XXXXXX", NULL);
  g_test_add_func ("/hostile/options/unknown", test_unknown_options);
  g_test_add_func ("/hostile/options/conflicts", test_conflicting_options);
  g_test_add_func ("/hostile/outputs/long-name", test_long_name);
  g_test_add_func ("/hostile/outputs/non-regular", test_non_regular_outputs);
  g_test_add_func ("/hostile/outputs/together", test_outputs_together);
  g_test_add_func ("/hostile/outputs/group-commit", test_group_commit);
  g_test_add_func ("/hostile/outputs/save-message", test_save_message);
  g_test_add_func ("/hostile/leftovers/stale", test_stale_temporaries);
  g_test_add_func ("/hostile/signals/run", test_signals_run);
  g_test_add_func ("/hostile/signals/named", test_signals_named);
  g_test_add_func ("/hostile/threads", test_no_threads_left);
  g_test_add_func ("/hostile/budget-messages", test_budget_messages);
  g_test_add_func ("/hostile/ranks/differ", test_ranks_differ);
  g_test_add_func ("/hostile/ranks/differ-sample", test_ranks_differ_sample);
  g_test_add_func ("/hostile/ranks/big-sample", test_ranks_big_sample);
  g_test_add_func ("/hostile/ranks/differ-sweep-bench", test_ranks_differ_sweep_bench);
  g_test_add_func ("/hostile/ranks/killed-sweep", test_killed_sweep_rank);
  g_test_add_func ("/hostile/ranks/killed-cleanup", test_killed_rank_cleanup);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
