/* airy-sim against a hostile or careless user, and the engine's leftovers
 * at exit: no thread left alive after a run. */
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

/* ---- threads ---- */

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
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
