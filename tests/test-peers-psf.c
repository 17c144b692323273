/* Airy's scanning modalities against Gohlke's psf package (tests/peers/):
 * tests/peers/psf-cases.py wrote psf's (z, r) half plane of each case
 * (<case>.npy, normalised to the origin) and the same microscope as an Airy
 * system file (<case>.json) into $AIRY_PEERS_RESULTS; Airy computes it, its
 * row through the axis normalised to its origin, and the two agree to psf's
 * own accuracy (1e-3 of the peak for one PSF, psf-cases.py). */
#include "config.h"

#include "airy-test-npy.h"

typedef struct
{
  char *dir;
  char *name;
  guint columns;     /* the r samples compared */
  double tolerance;  /* of the peak: psf's own accuracy (psf-cases.py) */
} PsfCase;

static void
test_case (gconstpointer data)
{
  const PsfCase *c = data;
  g_autofree char *npy = g_strconcat (c->dir, G_DIR_SEPARATOR_S, c->name, ".npy", NULL);
  g_autofree char *json = g_strconcat (c->dir, G_DIR_SEPARATOR_S, c->name, ".json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_file (json, &error);
  g_autoptr(AiryResult) result = NULL;
  g_autofree float *peer = NULL;
  guint shape[3], z, j, h, w;
  double origin, worst = 0.0;
  AiryStack *s;

  g_assert_no_error (error);
  result = test_run (system, NULL);
  s = result->stack;
  peer = read_npy (npy, shape);
  g_assert_cmpuint (s->depth, ==, shape[0]);
  g_assert_cmpuint (shape[1], ==, 1);
  h = s->height;
  w = s->width;
  g_assert_cmpuint (w / 2 + shape[2], <=, w);
  origin = airy_stack_plane (s, 0)[(gsize) (h / 2) * w + w / 2];
  g_assert_cmpfloat (origin, >, 0.0);
  for (z = 0; z < shape[0]; z++)
    {
      const float *row = airy_stack_plane (s, z) + (gsize) (h / 2) * w + w / 2;

      for (j = 0; j < c->columns; j++)
        worst = MAX (worst, fabs (row[j] / origin - peer[(gsize) z * shape[2] + j]));
    }
  g_test_message ("%s: max |Airy − psf| = %.3g of the peak (tolerance %.3g)", c->name, worst, c->tolerance);
  g_assert_cmpfloat (worst, <=, c->tolerance);
}

static void
test_skip (gconstpointer reason)
{
  g_test_skip (reason);
}

int
main (int argc, char **argv)
{
  const char *dir = g_getenv ("AIRY_PEERS_RESULTS");
  g_autofree char *list = NULL, *path = NULL;
  g_auto(GStrv) lines = NULL;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  if (dir != NULL)
    path = g_build_filename (dir, "cases.txt", NULL);
  if (path == NULL || !g_file_get_contents (path, &list, NULL, NULL))
    {
      g_test_add_data_func ("/peers/psf", "no psf results (AIRY_PEERS_RESULTS): run through "
                            "tests/peers/run-peers-psf.sh", test_skip);
      return g_test_run ();
    }
  lines = g_strsplit (list, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      PsfCase *c;
      char name[128];
      guint columns;
      double tolerance;
      g_autofree char *test = NULL;

      if (sscanf (lines[i], "%127s %u %lf", name, &columns, &tolerance) != 3)
        continue;
      c = g_new0 (PsfCase, 1);
      c->dir = g_strdup (dir);
      c->name = g_strdup (name);
      c->columns = columns;
      c->tolerance = tolerance;
      test = g_strconcat ("/peers/psf/", name, NULL);
      g_test_add_data_func (test, c, test_case);
    }
  return g_test_run ();
}
