/* Airy against chromatix running beside it (tests/peers/): for each case
 * tests/peers/cases.py wrote chromatix's intensity (<case>.npy) and the same
 * system as an Airy system file (<case>.json) into $AIRY_PEERS_RESULTS; Airy
 * computes the system in-process and the two agree to 1e-4 of the peak (or
 * to a case's own tolerance: the thick samples' 1e-5). */
#include "config.h"

#include "airy-test-util.h"
#include "airy-test-npy.h"

typedef struct
{
  char *dir;
  char *name;
  int   dy, dx;  /* Airy's I[y][x] is chromatix's I[y + dy][x + dx] */
  double tolerance;  /* of the peak: 1e-4, or the case's own (cases.txt's fourth column) */
} PeerCase;

static void
test_peer (gconstpointer data)
{
  const PeerCase *c = data;
  g_autofree char *npy = g_strconcat (c->dir, G_DIR_SEPARATOR_S, c->name, ".npy", NULL);
  g_autofree char *json = g_strconcat (c->dir, G_DIR_SEPARATOR_S, c->name, ".json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_file (json, &error);
  g_autoptr(AiryResult) result = NULL;
  guint shape[3], z, y, x;
  g_autofree float *peer = NULL;
  AiryStack *s;
  double peak = 0, worst = 0;

  g_assert_no_error (error);
  result = test_run (system, NULL);
  s = result->stack;
  peer = read_npy (npy, shape);
  g_assert_cmpuint (s->depth, ==, shape[0]);
  g_assert_cmpuint (s->height, ==, shape[1]);
  g_assert_cmpuint (s->width, ==, shape[2]);
  for (gsize i = 0; i < (gsize) shape[0] * shape[1] * shape[2]; i++)
    peak = MAX (peak, fabs (peer[i]));
  g_assert_cmpfloat (peak, >, 0);
  for (z = 0; z < shape[0]; z++)
    {
      const float *a = airy_stack_plane (s, z), *p = peer + (gsize) z * shape[1] * shape[2];

      for (y = MAX (0, -c->dy); y < shape[1] && (int) y + c->dy < (int) shape[1]; y++)
        for (x = MAX (0, -c->dx); x < shape[2] && (int) x + c->dx < (int) shape[2]; x++)
          {
            double d = fabs ((double) a[(gsize) y * shape[2] + x]
                             - p[(gsize) (y + c->dy) * shape[2] + x + c->dx]);
            worst = MAX (worst, d);
          }
    }
  g_test_message ("%s: max |Airy − chromatix| = %.3g of the peak %.6g", c->name, worst / peak, peak);
  g_assert_cmpfloat (worst / peak, <=, c->tolerance);
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
      g_test_add_data_func ("/peers/chromatix", "no chromatix results (AIRY_PEERS_RESULTS): "
                            "run through tests/peers/run-peers.sh", test_skip);
      return g_test_run ();
    }
  lines = g_strsplit (list, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      PeerCase *c;
      char name[128];
      int dy, dx;
      double tolerance = 1e-4;
      g_autofree char *test = NULL;

      if (sscanf (lines[i], "%127s %d %d %lf", name, &dy, &dx, &tolerance) < 3)
        continue;
      c = g_new0 (PeerCase, 1);
      c->dir = g_strdup (dir);
      c->name = g_strdup (name);
      c->dy = dy;
      c->dx = dx;
      c->tolerance = tolerance;
      test = g_strconcat ("/peers/", name, NULL);
      g_test_add_data_func (test, c, test_peer);
    }
  return g_test_run ();
}
