/* airy-sim against a hostile or careless user: unknown and conflicting
 * options; no thread left alive after a run; budget refusals that say
 * what they would allocate and which budget applied. */
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
  struct rlimit none = { 0, 0 }, fsize = { child_fsize, child_fsize };

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
  size = airy_format_bytes (airy_memory_budget ());
  unset = airy_memory_budget_describe (airy_memory_budget (), TRUE);
  text = g_strdup_printf ("%s (90 %% of available memory; AIRY_MEMORY_BUDGET sets another)", size);
  g_assert_cmpstr (unset, ==, text);
  g_unlink (path);
}

/* such a launch refused before anything runs: status 2 and the line
 * (printf-style) among the launcher's words */
int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-hostile-XXXXXX", NULL);
  g_test_add_func ("/hostile/options/unknown", test_unknown_options);
  g_test_add_func ("/hostile/options/conflicts", test_conflicting_options);
  g_test_add_func ("/hostile/threads", test_no_threads_left);
  g_test_add_func ("/hostile/budget-messages", test_budget_messages);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
