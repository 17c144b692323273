/* airy-sim against a hostile or careless user, and the engine's leftovers
 * at exit: no thread left alive after a run, and budget refusals that say
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

static char *
in_tmp (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
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
  g_test_add_func ("/hostile/threads", test_no_threads_left);
  g_test_add_func ("/hostile/budget-messages", test_budget_messages);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
