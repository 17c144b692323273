/* Runs a fuzz harness without libFuzzer: every file named on the command
 * line, and every file in every directory named (in name order), goes
 * once through LLVMFuzzerTestOneInput. The meson tests run the checked-in
 * corpora this way with any compiler; a crash or abort fails the test, and
 * so does an input after which the process had reserved more than 512 MiB
 * beyond what it started with (libFuzzer's -malloc_limit_mb, roughly:
 * the harnesses set a 64 MiB budget). */
#include "fuzz-common.h"

#define STANDALONE_MAX_GROWTH_KIB (512 * 1024)

/* Peak virtual memory, KiB; 0 where /proc does not say. */
static guint64
vm_peak_kib (void)
{
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL)
      || (p = strstr (status, "VmPeak:")) == NULL)
    return 0;
  return g_ascii_strtoull (p + strlen ("VmPeak:"), NULL, 10);
}

static guint64 vm_start;

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
run_file (const char *path, guint *n)
{
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  gsize size;

  if (!g_file_get_contents (path, &data, &size, &error))
    {
      g_printerr ("%s\n", error->message);
      exit (1);
    }
  LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
  (*n)++;
  if (vm_start > 0 && vm_peak_kib () > vm_start + STANDALONE_MAX_GROWTH_KIB)
    {
      g_printerr ("%s: the process reserved %" G_GUINT64_FORMAT " MiB more than before the inputs\n",
                  path, (vm_peak_kib () - vm_start) / 1024);
      exit (1);
    }
}

int
main (int argc, char **argv)
{
  guint n = 0;
  int i;

  LLVMFuzzerInitialize (&argc, &argv);
  vm_start = vm_peak_kib ();
  for (i = 1; i < argc; i++)
    if (g_file_test (argv[i], G_FILE_TEST_IS_DIR))
      {
        g_autoptr(GDir) dir = g_dir_open (argv[i], 0, NULL);
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
        const char *name;
        guint k;

        if (dir == NULL)
          {
            g_printerr ("%s: cannot open\n", argv[i]);
            return 1;
          }
        while ((name = g_dir_read_name (dir)) != NULL)
          g_ptr_array_add (names, g_build_filename (argv[i], name, NULL));
        g_ptr_array_sort (names, compare_names);
        for (k = 0; k < names->len; k++)
          run_file (names->pdata[k], &n);
      }
    else
      run_file (argv[i], &n);
  if (n == 0)
    {
      g_printerr ("no inputs\n");
      return 1;
    }
  g_print ("%u inputs, no crash\n", n);
  return 0;
}
