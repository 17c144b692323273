/* Helpers shared by the tests that spawn airy-sim under mpirun
 * (test-mpi*.c): spawning with Open MPI's settings, system files, TIFFs
 * compared byte for byte, the scratch folder's listing. */
#pragma once

#include <string.h>

#include "airy-test-util.h"

static char *tmpdir;

/* ---- spawning ---- */

typedef struct
{
  char *out;
  char *err;
  int   status;   /* exit status, or −1 after a signal */
} Spawned;

static inline void
spawned_clear (Spawned *s)
{
  g_clear_pointer (&s->out, g_free);
  g_clear_pointer (&s->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Spawned, spawned_clear)

/* How often text occurs in s */
static inline guint
count_of (const char *s, const char *text)
{
  const char *p;
  guint n = 0;

  for (p = s; (p = strstr (p, text)) != NULL; p++)
    n++;
  return n;
}

/* The test wrapper's environment: Open MPI refuses root (CI) without
 * these, and more ranks than cores need --oversubscribe (below). */
static inline char **
mpi_environ (void)
{
  char **env = g_get_environ ();

  env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT", "1", TRUE);
  env = g_environ_setenv (env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", TRUE);
  /* no FFTW planning or wisdom races between the ranks' runs here */
  return env;
}

static inline const char *
mpirun_path (void)
{
  const char *p = g_getenv ("AIRY_MPIRUN");
  return p && *p ? p : NULL;
}

static inline void
spawn (const char *const *argv, Spawned *s)
{
  g_auto(GStrv) env = mpi_environ ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  int wait_status = 0;
  guint i;

  /* a hang (ranks waiting for one that left) fails in two minutes, not at
   * the test's timeout */
  g_ptr_array_add (args, (char *) argv[0]);
  if (mpirun_path () && g_str_equal (argv[0], mpirun_path ()))
    {
      g_ptr_array_add (args, "--timeout");
      g_ptr_array_add (args, "120");
    }
  for (i = 1; argv[i]; i++)
    g_ptr_array_add (args, (char *) argv[i]);
  g_ptr_array_add (args, NULL);
  memset (s, 0, sizeof *s);
  g_assert_true (g_spawn_sync (tmpdir, (char **) args->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &s->out, &s->err,
                               &wait_status, &error));
  g_assert_no_error (error);
  s->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

static inline gboolean
skip_without_mpi (void)
{
  if (!AIRY_HAVE_MPI)
    {
      g_test_skip ("built without MPI (meson option mpi disabled, or libopenmpi-dev not found)");
      return TRUE;
    }
  if (mpirun_path () == NULL)
    {
      g_test_skip ("no mpirun (openmpi-bin) found at configure time");
      return TRUE;
    }
  return FALSE;
}

/* airy-sim with args, in one process (np = 0) or under mpirun -np N;
 * NULL-terminated args */
static inline void
sim (guint np, Spawned *s, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  const char *arg;
  va_list ap;

  if (np > 0)
    {
      g_ptr_array_add (argv, g_strdup (mpirun_path ()));
      g_ptr_array_add (argv, g_strdup ("--oversubscribe"));
      g_ptr_array_add (argv, g_strdup ("-np"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", np));
    }
  g_ptr_array_add (argv, g_strdup (g_getenv ("AIRY_SIM")));
  va_start (ap, s);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  spawn ((const char *const *) argv->pdata, s);
}

static inline char *
write_json (const char *name, const char *json)
{
  char *path = g_build_filename (tmpdir, name, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, json, -1, &error));
  g_assert_no_error (error);
  return path;
}

/* A widefield PSF stack with an aberration: n² grid, `planes` planes */
static inline char *
psf_json (guint n, guint planes)
{
  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -2, \"stop\": 2, \"count\": %u},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "   {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [7], \"zernike-coefficients\": [0.1]},"
    "   {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", n, n, 160.0 / n, planes);
}

static inline GBytes *
file_bytes (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *data = NULL;
  gsize n = 0;

  g_assert_true (g_file_get_contents (path, &data, &n, &error));
  g_assert_no_error (error);
  return g_bytes_new_take (data, n);
}

/* OME-XML carries a random UUID per file: blanked before comparing */
static inline GBytes *
without_uuid (GBytes *bytes)
{
  gsize n;
  guint8 *d = g_bytes_unref_to_data (bytes, &n);
  guint8 *p = memmem (d, n, "urn:uuid:", 9);

  if (p != NULL && p + 9 + 36 <= d + n)
    memset (p + 9, '0', 36);
  return g_bytes_new_take (d, n);
}

static inline void
assert_same_bytes (const char *a, const char *b)
{
  g_autoptr(GBytes) x = without_uuid (file_bytes (a));
  g_autoptr(GBytes) y = without_uuid (file_bytes (b));

  g_assert_cmpuint (g_bytes_get_size (x), ==, g_bytes_get_size (y));
  if (!g_bytes_equal (x, y))
    {
      const guint8 *p = g_bytes_get_data (x, NULL), *q = g_bytes_get_data (y, NULL);
      gsize i = 0;

      while (p[i] == q[i])
        i++;
      g_test_message ("%s and %s differ first at byte %" G_GSIZE_FORMAT, a, b, i);
    }
  g_assert_true (g_bytes_equal (x, y));
}

static inline AiryStack *
read_tiff (const char *path)
{
  g_autoptr(GError) error = NULL;
  AiryStack *s = airy_tiff_read (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (s);
  return s;
}

/* max |a − b| over the peak of a */
static inline double
relative_difference (const AiryStack *a, const AiryStack *b)
{
  gsize n = (gsize) a->depth * a->height * a->width, i;
  double peak = 0, worst = 0;

  g_assert_cmpuint (a->depth, ==, b->depth);
  g_assert_cmpuint (a->height, ==, b->height);
  g_assert_cmpuint (a->width, ==, b->width);
  for (i = 0; i < n; i++)
    {
      peak = MAX (peak, fabs (a->data[i]));
      worst = MAX (worst, fabs ((double) a->data[i] - b->data[i]));
    }
  g_assert_cmpfloat (peak, >, 0);
  return worst / peak;
}

static inline char *
in_tmp (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static inline void
remove_files (const char *first, ...)
{
  const char *name;
  va_list ap;

  va_start (ap, first);
  for (name = first; name; name = va_arg (ap, const char *))
    {
      g_autofree char *p = in_tmp (name);
      g_unlink (p);
    }
  va_end (ap);
}

static inline int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* the names in tmpdir, sorted, space-separated */
static inline char *
listing (void)
{
  g_autoptr(GDir) dir = g_dir_open (tmpdir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *n;

  while ((n = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (n));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}
