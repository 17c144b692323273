/* Runs over several processes (MPI, DESIGN §4 "Processes"): the engine's
 * communicator interface, the TIFF layout written in parts, a run's part
 * of the planes, and airy-sim under `mpirun -np 2` and `-np 3` against
 * one-process runs. The MPI cases skip (with the reason) in builds
 * without MPI or without mpirun.
 *
 * `test-mpi --comm-worker` is the other role: one rank of an `mpirun` that
 * checks app/airy-mpi.c itself (all-reduce split below the count limit,
 * broadcast, error agreement) and prints one line per rank. */
#define _GNU_SOURCE   /* memmem */
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airy-test-util.h"
#include "airy-test-mpi.h"
#include "airy-plan-private.h"
#include "cuda/airy-cuda-private.h"
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

/* ---- the communicator of one process ---- */

static void
test_comm_self (void)
{
  AiryComm *self = airy_comm_self ();
  g_autoptr(GError) error = NULL;
  float v[3] = { 1, -2, 3 };

  g_assert_cmpuint (self->rank, ==, 0);
  g_assert_cmpuint (self->size, ==, 1);
  g_assert_true (airy_comm_all_reduce (self, v, 3, AIRY_COMM_SUM, &error));
  g_assert_cmpfloat (v[1], ==, -2);
  g_assert_true (airy_comm_barrier (self, &error));
  {
    guint64 v = 99;

    g_assert_true (airy_comm_counter_reset (self, &error));
    g_assert_true (airy_comm_counter_next (self, &v, &error) && v == 0);
    g_assert_true (airy_comm_counter_next (self, &v, &error) && v == 1);
  }
  g_assert_true (airy_comm_agree (self, &error));
  g_assert_no_error (error);
  /* one process: its own error, unchanged */
  g_set_error (&error, AIRY_ERROR, AIRY_ERROR_FILE, "x.tif: no such file");
  g_assert_false (airy_comm_agree (self, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_cmpstr (error->message, ==, "x.tif: no such file");
}

static void
test_comm_split (void)
{
  guint first, count, r, next = 0;

  /* 128 planes on 3 ranks: 43, 43, 42, contiguous */
  for (r = 0; r < 3; r++)
    {
      airy_comm_split (128, 3, r, &first, &count);
      g_assert_cmpuint (first, ==, next);
      g_assert_cmpuint (count, ==, r < 2 ? 43 : 42);
      next += count;
    }
  g_assert_cmpuint (next, ==, 128);
  /* fewer planes than ranks: the last has none */
  airy_comm_split (2, 3, 2, &first, &count);
  g_assert_cmpuint (count, ==, 0);
  g_assert_cmpuint (first, ==, 2);
}

/* ---- a run's part of the planes, without MPI ----
 * A communicator of three ranks whose collectives do nothing: the run of
 * rank r computes its planes only, the same bits as the one-process run. */

static gboolean
fake_all_reduce (AiryComm *comm, float *buf, gsize count, AiryCommOp op, GError **error)
{
  return TRUE;
}

static gboolean
fake_broadcast (AiryComm *comm, void *buf, gsize n, guint root, GError **error)
{
  return TRUE;
}

static gboolean
fake_barrier (AiryComm *comm, GError **error)
{
  return TRUE;
}

static void
fake_abort (AiryComm *comm, int status)
{
  g_assert_not_reached ();
}

static const AiryCommVTable fake_vtable = {
  .name = "fake",
  .all_reduce = fake_all_reduce,
  .broadcast = fake_broadcast,
  .barrier = fake_barrier,
  .abort = fake_abort,
};

static void
test_run_part (void)
{
  g_autofree char *json = psf_json (32, 10);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) whole = test_run (system, &(AiryRunOptions) { .threads = 1 });
  const guint rank_planes[3] = { 6, 0, 4 };
  guint r;

  for (r = 0; r < 3; r++)
    {
      AiryComm fake = { &fake_vtable, r, 3, NULL, 0 };
      g_autoptr(AiryResult) part = NULL;
      g_autoptr(AiryResult) given = NULL;
      gsize plane = airy_stack_plane_size (whole->stack);
      guint expect_first = r == 0 ? 0 : r == 1 ? 4 : 7;

      /* even split: 4, 3, 3 */
      part = test_run (system, &(AiryRunOptions) { .threads = 1, .comm = &fake });
      g_assert_cmpuint (part->ranks, ==, 3);
      g_assert_cmpuint (part->n_planes, ==, 10);
      g_assert_true (part->stack_is_part);
      g_assert_cmpuint (part->part_first, ==, expect_first);
      g_assert_cmpuint (part->part_count, ==, r == 0 ? 4 : 3);
      g_assert_cmpuint (part->stack->depth, ==, part->part_count);
      g_assert_cmpint (memcmp (part->stack->data, airy_stack_plane (whole->stack, part->part_first),
                               part->part_count * plane * sizeof (float)), ==, 0);
      g_assert_cmpfloat_with_epsilon (part->stack->z0, airy_stack_get_z (whole->stack, part->part_first), 1e-12);

      /* explicit planes per rank, one rank without planes */
      given = test_run (system, &(AiryRunOptions) { .threads = 1, .comm = &fake, .rank_planes = rank_planes });
      g_assert_cmpuint (given->part_count, ==, rank_planes[r]);
      g_assert_cmpuint (given->part_first, ==, r == 0 ? 0 : 6);
      if (rank_planes[r] > 0)
        g_assert_cmpint (memcmp (given->stack->data, airy_stack_plane (whole->stack, given->part_first),
                                 given->part_count * plane * sizeof (float)), ==, 0);
    }

  /* planes per rank that do not add up: the error names them */
  {
    AiryComm fake = { &fake_vtable, 0, 3, NULL, 0 };
    const guint wrong[3] = { 6, 0, 5 };
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryResult) r2 = airy_run (system, &(AiryRunOptions) { .comm = &fake, .rank_planes = wrong },
                                         NULL, NULL, NULL, &error);

    g_assert_null (r2);
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    /* agreed: the fake collectives make this rank the lowest failing one */
    g_assert_cmpstr (error->message, ==, "rank 0 of 3: chunks: the planes per rank must add up to the 10 planes, got 11");
  }
}

/* A sample of 6 planes of 16 × 16 for test_microscope_json (…, 16, 6): planes
 * [nonzero_from, 6) carry a pattern of their own, the others are 0. */
static char *
write_sample (const char *name, guint nonzero_from)
{
  g_autoptr(AiryStack) volume = airy_stack_new (6, 16, 16);
  g_autoptr(GError) error = NULL;
  char *path = in_tmp (name);
  guint z, i;

  volume->dx = volume->dy = 0.1;
  volume->dz = 0.4;
  for (z = nonzero_from; z < 6; z++)
    for (i = 0; i < 16 * 16; i++)
      airy_stack_plane (volume, z)[i] = (float) ((i * 7 + z * 13) % 17) / 17.0f;
  g_assert_true (airy_tiff_write (path, volume, &error));
  g_assert_no_error (error);
  return path;
}

/* A rank reads only the sample planes of its part (the TIFF reader's
 * plane range), at their place in the volume; its partial image is that
 * of its planes: with the other rank's planes all 0, the whole image. */
static void
test_run_part_sample (void)
{
  g_autofree char *path = write_sample ("part-sample.tif", 3);
  g_autofree char *sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  g_autofree char *json = test_microscope_json (sample, "\"reduce\": \"sum\"", 16, 6);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) whole = test_run (system, &(AiryRunOptions) { .threads = 1 });
  g_autoptr(AiryStack) file = read_tiff (path);
  const guint rank_planes[2] = { 4, 2 };
  gsize plane = 16 * 16, i;
  guint r, k;

  for (r = 0; r < 2; r++)
    {
      AiryComm fake = { &fake_vtable, r, 2, NULL, 0 };
      g_autoptr(GError) error = NULL;
      g_autoptr(AiryPlan) plan = _airy_plan_new (system, &(AiryRunOptions) { .threads = 1, .comm = &fake }, NULL,
                                                 &error);
      g_autoptr(AiryPlan) given = _airy_plan_new (system, &(AiryRunOptions) { .threads = 1, .comm = &fake,
                                                                             .rank_planes = rank_planes },
                                                  NULL, &error);
      g_autoptr(AiryResult) part = NULL;

      g_assert_no_error (error);
      /* evenly: planes 0–2 and 3–5 */
      g_assert_cmpuint (plan->volume->depth, ==, 3);
      g_assert_cmpuint (plan->volume_first, ==, 3 * r);
      for (k = 0; k < 3; k++)
        g_assert_cmpint (memcmp (_airy_plan_volume_data (plan, 3 * r + k), airy_stack_plane (file, 3 * r + k),
                                 plane * sizeof (float)), ==, 0);
      /* --chunks 4,2 */
      g_assert_cmpuint (given->volume->depth, ==, rank_planes[r]);
      g_assert_cmpuint (given->volume_first, ==, r == 0 ? 0 : 4);
      g_assert_cmpint (memcmp (_airy_plan_volume_data (given, r == 0 ? 3 : 5), airy_stack_plane (file, r == 0 ? 3 : 5),
                               plane * sizeof (float)), ==, 0);

      /* the fake all-reduce leaves each rank its own sum */
      part = test_run (system, &(AiryRunOptions) { .threads = 1, .comm = &fake });
      g_assert_cmpuint (part->stack->depth, ==, 1);
      if (r == 1)
        g_assert_cmpint (memcmp (part->stack->data, whole->stack->data, plane * sizeof (float)), ==, 0);
      else
        for (i = 0; i < plane; i++)
          g_assert_cmpfloat (part->stack->data[i], ==, 0);
    }
  g_unlink (path);
}

/* The TIFF reader's plane range: those planes with their z; a range past
 * the file's planes is an error naming both. */
static void
test_tiff_plane_range (void)
{
  g_autofree char *path = write_sample ("range.tif", 0);
  g_autoptr(AiryStack) all = read_tiff (path);
  g_autoptr(AiryStack) some = NULL;
  g_autoptr(AiryStack) none = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

  ro.first_plane = 2;
  ro.n_planes = 3;
  some = airy_tiff_read_full (path, &ro, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (some->depth, ==, 3);
  g_assert_cmpint (memcmp (some->data, airy_stack_plane (all, 2), 3 * 16 * 16 * sizeof (float)), ==, 0);
  g_assert_cmpfloat_with_epsilon (airy_stack_get_z (some, 0), airy_stack_get_z (all, 2), 1e-12);
  g_assert_cmpfloat_with_epsilon (airy_stack_get_z (some, 2), airy_stack_get_z (all, 4), 1e-12);
  ro.first_plane = 4;
  none = airy_tiff_read_full (path, &ro, &error);
  g_assert_null (none);
  expected = g_strdup_printf ("%s: planes 4 to 6 asked for, the file has 6", path);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_cmpstr (error->message, ==, expected);
  g_unlink (path);
}

/* ---- the TIFF written in parts ---- */

static void
check_layout_parts (const char *name, AiryTiffFormat format)
{
  g_autoptr(AiryStack) stack = airy_stack_new (7, 24, 20);
  g_autofree char *whole = in_tmp (name);
  g_autofree char *sub = in_tmp ("parts");
  /* the same name in another folder: OME-XML names the file */
  g_autofree char *parts = g_build_filename (sub, name, NULL);
  g_autoptr(AiryTiffLayout) layout = NULL;
  g_autoptr(GError) error = NULL;
  AiryTiffWriteOptions wo = { format, NULL, 0 };
  AiryStack header;
  double z[7] = { -1, -0.5, 0, 0.25, 0.5, 1, 2 };
  gsize i, plane = airy_stack_plane_size (stack);
  float lo, hi;
  int fd;

  g_mkdir (sub, 0755);
  for (i = 0; i < (gsize) stack->depth * plane; i++)
    stack->data[i] = (float) sin (0.37 * i) * (1 + i % 5);
  stack->dx = stack->dy = 0.1;
  airy_stack_set_z (stack, z);
  airy_stack_set_provenance (stack, 1, (double[]) { 0.532 }, (double[]) { 1.0 }, "{\"airy\": 1}");
  g_assert_true (airy_tiff_write_full (whole, stack, &wo, &error));
  g_assert_no_error (error);

  /* the layout from a header without pixels, then the planes in two parts,
   * the second first */
  header = *stack;
  header.data = NULL;
  airy_stack_min_max (stack, &lo, &hi);
  layout = airy_tiff_layout_new (parts, &header, lo, hi, &wo, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (airy_tiff_layout_plane_offset (layout, 1) - airy_tiff_layout_plane_offset (layout, 0), ==,
                    plane * 4);
  fd = g_open (parts, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_true (airy_tiff_layout_write_frame (layout, fd, &error));
  g_assert_true (airy_tiff_layout_write_planes (layout, fd, 4, 3, airy_stack_plane (stack, 4), &error));
  g_assert_true (airy_tiff_layout_write_planes (layout, fd, 0, 4, stack->data, &error));
  g_assert_no_error (error);
  close (fd);
  g_assert_cmpuint (airy_tiff_layout_get_size (layout), ==, g_bytes_get_size (file_bytes (whole)));
  assert_same_bytes (whole, parts);
  g_unlink (whole);
  g_unlink (parts);
  g_rmdir (sub);
}

static void
test_layout_parts (void)
{
  check_layout_parts ("parts.tif", AIRY_TIFF_AUTO);
  check_layout_parts ("parts.ome.tif", AIRY_TIFF_AUTO);
  check_layout_parts ("parts-big.tif", AIRY_TIFF_BIGTIFF);
}

/* ---- airy-sim under mpirun ---- */

/* `test-mpi --comm-worker` on each rank, checked by its printed line */
static void
test_mpi_comm (void)
{
  g_auto(Spawned) s = { 0 };
  g_autofree char *self = NULL;
  guint np;

  if (skip_without_mpi ())
    return;
  self = g_build_filename (g_getenv ("G_TEST_BUILDDIR"), "test-mpi", NULL);
  for (np = 2; np <= 3; np++)
    {
      g_autofree char *nps = g_strdup_printf ("%u", np);
      const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", nps, self, "--comm-worker", NULL };
      guint r;

      spawn (argv, &s);
      g_assert_cmpint (s.status, ==, 0);
      for (r = 0; r < np; r++)
        {
          g_autofree char *line = g_strdup_printf ("rank %u of %u: ok\n", r, np);
          g_assert_nonnull (strstr (s.out, line));
        }
      spawned_clear (&s);
    }
}

static void
test_mpi_stack (void)
{
  g_autofree char *json = psf_json (32, 128);
  g_autofree char *sys = write_json ("psf.json", json);
  g_autofree char *one = in_tmp ("one.tif"), *two = in_tmp ("two.tif"), *three = in_tmp ("three.tif");
  g_autofree char *png1 = in_tmp ("one.png"), *png3 = in_tmp ("three.png");
  /* the same name in two folders: OME-XML names the file */
  g_autofree char *d1 = in_tmp ("p1"), *d3 = in_tmp ("p3");
  g_autofree char *ome1 = g_build_filename (d1, "psf.ome.tif", NULL), *ome3 = g_build_filename (d3, "psf.ome.tif", NULL);
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };

  if (skip_without_mpi ())
    return;
  sim (0, &a, "run", sys, "-o", one, "--png", png1, "--threads", "1", "-q", NULL);
  g_assert_cmpint (a.status, ==, 0);
  /* 128 planes on 2 ranks, and unevenly on 3 (43, 43, 42): the same bytes */
  sim (2, &b, "run", sys, "-o", two, "--threads", "1", "--json", NULL);
  g_assert_cmpint (b.status, ==, 0);
  g_assert_nonnull (strstr (b.out, "\"ranks\": 2, \"devices\": 2, \"devices_per_rank\": 1"));
  /* rank 0 alone says so */
  g_assert_null (strstr (strstr (b.out, "\"ranks\"") + 1, "\"ranks\""));
  assert_same_bytes (one, two);
  /* per rank: what it wrote (rank 1 its 64 planes of 32² float32, rank 0
   * the rest of the file), the same bytes moved through the communicator
   * on both (every call is collective), and a time in those calls */
  {
    g_autoptr(GBytes) file = file_bytes (two);
    g_autofree char *writes = g_strdup_printf ("\"write_bytes\": [%" G_GSIZE_FORMAT ", 262144]",
                                               g_bytes_get_size (file) - 262144);
    guint64 m0 = 0, m1 = 0;
    const char *p = strstr (b.out, "\"comm_bytes\": [");

    g_assert_nonnull (strstr (b.out, writes));
    g_assert_nonnull (p);
    g_assert_cmpint (sscanf (p, "\"comm_bytes\": [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]", &m0, &m1), ==, 2);
    g_assert_cmpuint (m0, >, 0);
    g_assert_cmpuint (m0, ==, m1);
    g_assert_nonnull (strstr (b.out, "\"mpi_s\": ["));
  }
  sim (3, &c, "run", sys, "-o", three, "--png", png3, "--threads", "1", "-q", NULL);
  g_assert_cmpint (c.status, ==, 0);
  assert_same_bytes (one, three);
  /* the middle plane's PNG, from the rank that holds it (rank 1) */
  assert_same_bytes (png1, png3);
  g_unlink (png1);
  g_unlink (png3);
  spawned_clear (&a);
  spawned_clear (&c);
  /* OME-TIFF too */
  g_mkdir (d1, 0755);
  g_mkdir (d3, 0755);
  sim (0, &a, "run", sys, "-o", ome1, "--threads", "1", "-q", NULL);
  sim (3, &c, "run", sys, "-o", ome3, "--threads", "1", "-q", NULL);
  g_assert_cmpint (c.status, ==, 0);
  assert_same_bytes (ome1, ome3);
  spawned_clear (&a);
  spawned_clear (&c);
  /* two virtual CPU devices per rank: the rank's part split over them as
   * in one process, four devices in all */
  {
    const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", "2", "-x", "AIRY_CPU_DEVICES=2",
                           g_getenv ("AIRY_SIM"), "run", sys, "-o", two, "--devices", "2", "--threads", "2",
                           "--json", NULL };
    g_auto(Spawned) d = { 0 };

    spawn (argv, &d);
    g_assert_cmpint (d.status, ==, 0);
    g_assert_nonnull (strstr (d.out, "\"ranks\": 2, \"devices\": 4, \"devices_per_rank\": 2"));
    assert_same_bytes (one, two);
  }
  /* BigTIFF (one IFD per plane after the block): every rank lays out the
   * same format */
  sim (0, &a, "run", sys, "-o", one, "--format", "bigtiff", "--threads", "1", "-q", NULL);
  sim (3, &c, "run", sys, "-o", three, "--format", "bigtiff", "--threads", "1", "-q", NULL);
  g_assert_cmpint (c.status, ==, 0);
  assert_same_bytes (one, three);
  g_unlink (ome1);
  g_unlink (ome3);
  g_rmdir (d1);
  g_rmdir (d3);
  remove_files ("one.tif", "two.tif", "three.tif", "psf.json", NULL);
}

static void
test_mpi_no_planes (void)
{
  g_autofree char *json = psf_json (32, 4);
  g_autofree char *sys = write_json ("psf4.json", json);
  g_autofree char *one = in_tmp ("one.tif"), *given = in_tmp ("given.tif"), *few = in_tmp ("few.tif");
  g_autofree char *few_json = psf_json (32, 2);
  g_autofree char *sys2 = write_json ("psf2.json", few_json);
  g_autofree char *one2 = in_tmp ("one2.tif");
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };
  g_auto(Spawned) d = { 0 };
  g_auto(Spawned) e = { 0 };

  if (skip_without_mpi ())
    return;
  sim (0, &a, "run", sys, "-o", one, "--threads", "1", "-q", NULL);
  g_assert_cmpint (a.status, ==, 0);
  /* rank 0 and rank 2 without planes: rank 0 still lays the file out */
  sim (3, &b, "run", sys, "-o", given, "--threads", "1", "-q", "--chunks", "0,4,0", NULL);
  g_assert_cmpint (b.status, ==, 0);
  /* the system's warning (undersampled) once, from rank 0 */
  g_assert_nonnull (strstr (b.err, "airy-sim: warning: elements[2]: the PSF is undersampled"));
  g_assert_null (strstr (strstr (b.err, "warning") + 1, "warning"));
  assert_same_bytes (one, given);
  /* 2 planes on 3 ranks: the last has none */
  sim (0, &c, "run", sys2, "-o", one2, "--threads", "1", "-q", NULL);
  sim (3, &d, "run", sys2, "-o", few, "--threads", "1", "-q", NULL);
  g_assert_cmpint (d.status, ==, 0);
  /* and is told so, once */
  g_assert_cmpuint (count_of (d.err, "airy-sim: warning: 3 ranks for a run of 2 planes: 1 rank(s) have no plane to "
                                     "compute; a run splits its z planes over the ranks, so give at most 2 (mpirun "
                                     "-np, or the job's --ntasks)\n"), ==, 1);
  assert_same_bytes (one2, few);
  /* planes per rank must add up, and one per rank */
  sim (3, &e, "run", sys, "-o", given, "--threads", "1", "-q", "--chunks", "1,2", NULL);
  /* the same bad input on every rank: status 2, said once */
  g_assert_cmpint (e.status, ==, 2);
  g_assert_nonnull (strstr (e.err, "airy-sim: rank 0 of 3: --chunks: give one number of planes per rank (3), got 2\n"));
  g_assert_cmpuint (count_of (e.err, "airy-sim: "), ==, 1);
  remove_files ("one.tif", "given.tif", "few.tif", "one2.tif", "psf4.json", "psf2.json", NULL);
}

static void
check_image (const char *sensor, const char *name, double tolerance)
{
  g_autofree char *json = test_microscope_json ("{\"beads\": {\"count\": 30, \"seed\": 5}}", sensor, 64, 9);
  g_autofree char *sysname = g_strconcat (name, ".json", NULL);
  g_autofree char *sys = write_json (sysname, json);
  g_autofree char *one = in_tmp ("img1.tif"), *two = in_tmp ("img2.tif"), *three = in_tmp ("img3.tif");
  g_autofree char *psf1 = in_tmp ("psf1.tif"), *psf3 = in_tmp ("psf3.tif");
  g_autoptr(AiryStack) s1 = NULL;
  g_autoptr(AiryStack) s2 = NULL;
  g_autoptr(AiryStack) s3 = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };

  sim (0, &a, "run", sys, "-o", one, "--psf-out", psf1, "--threads", "1", "-q", NULL);
  g_assert_cmpint (a.status, ==, 0);
  sim (2, &b, "run", sys, "-o", two, "--threads", "1", "--json", NULL);
  g_assert_cmpint (b.status, ==, 0);
  g_assert_nonnull (strstr (b.out, "\"ranks\": 2,"));
  sim (3, &c, "run", sys, "-o", three, "--psf-out", psf3, "--threads", "1", "-q", NULL);
  g_assert_cmpint (c.status, ==, 0);
  s1 = read_tiff (one);
  s2 = read_tiff (two);
  s3 = read_tiff (three);
  g_assert_cmpuint (s1->depth, ==, 1);
  g_assert_cmpfloat (relative_difference (s1, s2), <=, tolerance);
  g_assert_cmpfloat (relative_difference (s1, s3), <=, tolerance);
  /* the PSF stack of an imaging run, written in parallel */
  assert_same_bytes (psf1, psf3);
  remove_files ("img1.tif", "img2.tif", "img3.tif", "psf1.tif", "psf3.tif", sysname, NULL);
}

static void
test_mpi_image (void)
{
  if (skip_without_mpi ())
    return;
  /* the ranks' partial spectra summed in another order: 1e-6 of the peak */
  check_image ("\"reduce\": \"sum\"", "image", 1e-6);
}

/* An image of a sample file over 2 and 3 ranks, each reading its planes:
 * within 1e-6 of one process; with the sample's planes all in the last
 * rank's part the sums have the same order, and the bytes are the same. */
static void
test_mpi_image_sample (void)
{
  g_autofree char *full = write_sample ("sample-full.tif", 0);
  g_autofree char *late = write_sample ("sample-late.tif", 3);
  g_autofree char *late3 = write_sample ("sample-late3.tif", 4);
  const char *samples[3] = { full, late, late3 };
  const guint np[3] = { 2, 2, 3 };
  guint i;

  if (skip_without_mpi ())
    return;
  for (i = 0; i < 3; i++)
    {
      g_autofree char *sample = g_strdup_printf ("{\"file\": \"%s\"}", samples[i]);
      g_autofree char *json = test_microscope_json (sample, "\"reduce\": \"sum\"", 16, 6);
      g_autofree char *sys = write_json ("sample-image.json", json);
      g_autofree char *one = in_tmp ("sample1.tif"), *many = in_tmp ("sample-n.tif");
      g_autoptr(AiryStack) s1 = NULL;
      g_autoptr(AiryStack) sn = NULL;
      g_auto(Spawned) a = { 0 };
      g_auto(Spawned) b = { 0 };

      sim (0, &a, "run", sys, "-o", one, "--threads", "1", "-q", NULL);
      g_assert_cmpint (a.status, ==, 0);
      sim (np[i], &b, "run", sys, "-o", many, "--threads", "1", "-q", NULL);
      g_assert_cmpint (b.status, ==, 0);
      s1 = read_tiff (one);
      sn = read_tiff (many);
      g_assert_cmpfloat (relative_difference (s1, sn), <=, 1e-6);
      if (i > 0)
        assert_same_bytes (one, many);
      remove_files ("sample1.tif", "sample-n.tif", "sample-image.json", NULL);
    }
  g_unlink (full);
  g_unlink (late);
  g_unlink (late3);
}

static void
test_mpi_image_noise (void)
{
  if (skip_without_mpi ())
    return;
  /* every rank makes the image from the same sum with the counter-based
   * generator: the noise is the same */
  check_image ("\"reduce\": \"sum\", \"noise\": \"gaussian\", \"exposure\": 1000, \"read-noise\": 2, \"seed\": 9",
               "noise", 1e-6);
}

/* Rank 1's system names a sample file that is missing where it runs (an
 * MPMD launch: each rank its own copy of the system): every rank stops
 * with rank 1's message, status 1, and nothing is written. */
static void
test_mpi_missing_sample (void)
{
  g_autoptr(AiryStack) volume = airy_stack_new (5, 32, 32);
  g_autofree char *a_dir = in_tmp ("a"), *b_dir = in_tmp ("b");
  g_autofree char *json = test_microscope_json ("{\"file\": \"volume.tif\"}", "\"reduce\": \"sum\"", 32, 5);
  g_autofree char *sys_a = g_build_filename (a_dir, "sys.json", NULL);
  g_autofree char *sys_b = g_build_filename (b_dir, "sys.json", NULL);
  g_autofree char *vol = g_build_filename (a_dir, "volume.tif", NULL);
  g_autofree char *missing = g_build_filename (b_dir, "volume.tif", NULL);
  g_autofree char *out = in_tmp ("out.tif"), *psf = in_tmp ("outpsf.tif");
  g_autofree char *before = NULL, *after = NULL, *expected = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Spawned) s = { 0 };
  const char *argv[] = { mpirun_path (), "--oversubscribe",
                         "-np", "1", g_getenv ("AIRY_SIM"), "run", sys_a, "-o", out, "--psf-out", psf, "-q", ":",
                         "-np", "1", g_getenv ("AIRY_SIM"), "run", sys_b, "-o", out, "--psf-out", psf, "-q", NULL };
  const char *p;
  guint seen = 0;

  if (skip_without_mpi ())
    return;
  g_assert_cmpint (g_mkdir (a_dir, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (b_dir, 0755), ==, 0);
  volume->dx = volume->dy = 0.1;
  volume->dz = 0.5;
  airy_stack_plane (volume, 2)[16 * 32 + 16] = 1;
  g_assert_true (airy_tiff_write (vol, volume, &error));
  g_assert_true (g_file_set_contents (sys_a, json, -1, &error));
  g_assert_true (g_file_set_contents (sys_b, json, -1, &error));
  g_assert_no_error (error);
  before = listing ();
  spawn (argv, &s);
  g_assert_cmpint (s.status, ==, 1);
  /* said once (by rank 0), with rank 1's number and message; status 1:
   * bad input on one rank only is a fault of the launch */
  expected = g_strdup_printf ("airy-sim: rank 1 of 2: sample.file: %s: No such file or directory\n", missing);
  for (p = s.err; (p = strstr (p, expected)) != NULL; p++)
    seen++;
  if (seen != 1)
    g_printerr ("stderr: %s\n", s.err);
  g_assert_cmpuint (seen, ==, 1);
  g_assert_cmpuint (count_of (s.err, "airy-sim: "), ==, 1);
  /* no output, no temporary file */
  after = listing ();
  g_assert_cmpstr (after, ==, before);
  g_unlink (vol);
  g_unlink (sys_a);
  g_unlink (sys_b);
  g_rmdir (a_dir);
  g_rmdir (b_dir);
}

/* The memory budget is a rank's: a stack too large for one process fits
 * on three; a rank whose budget is too small stops them all (out of
 * memory, found before anything is allocated). */
static void
test_mpi_budget (void)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 2.5}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 300}, \"elements\": ["
    " {\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    " {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autofree char *sys = write_json ("budget.json", json);
  g_autofree char *out = in_tmp ("budget.tif"), *before = NULL, *after = NULL;
  g_auto(Spawned) a = { 0 };
  g_auto(Spawned) b = { 0 };
  g_auto(Spawned) c = { 0 };
  const char *p;
  guint seen = 0;

  if (skip_without_mpi ())
    return;
  {
    g_autofree char *argv0 = g_strdup (g_getenv ("AIRY_SIM"));
    const char *argv[] = { "/usr/bin/env", "AIRY_MEMORY_BUDGET=3M", argv0, "run", sys, "-o", out, "-q", NULL };

    spawn (argv, &a);
    g_assert_cmpint (a.status, ==, 2);
    g_assert_nonnull (strstr (a.err, "a run of 300 planes on a 64 × 64 grid needs 4.8 MiB of memory, more than "
                                     "the budget of 3.0 MiB"));
  }
  {
    const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", "3", "-x", "AIRY_MEMORY_BUDGET=3M",
                           g_getenv ("AIRY_SIM"), "run", sys, "-o", out, "-q", NULL };

    spawn (argv, &b);
    g_assert_cmpint (b.status, ==, 0);
    g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
    g_unlink (out);
  }
  before = listing ();
  {
    const char *argv[] = { mpirun_path (), "--oversubscribe",
                           "-np", "2", "-x", "AIRY_MEMORY_BUDGET=3M", g_getenv ("AIRY_SIM"), "run", sys, "-o", out, "-q", ":",
                           "-np", "1", "-x", "AIRY_MEMORY_BUDGET=1M", g_getenv ("AIRY_SIM"), "run", sys, "-o", out, "-q",
                           NULL };

    spawn (argv, &c);
  }
  g_assert_cmpint (c.status, ==, 1);
  for (p = c.err; (p = strstr (p, "airy-sim: rank 2 of 3: grid.shape: a run of 100 planes on a 64 × 64 grid "
                                   "needs 1.7 MiB of memory, more than the budget of 1.0 MiB")) != NULL; p++)
    seen++;
  g_assert_cmpuint (seen, ==, 1);
  g_assert_cmpuint (count_of (c.err, "airy-sim: "), ==, 1);
  after = listing ();
  g_assert_cmpstr (after, ==, before);
  g_unlink (sys);
}

static void
test_mpi_input_errors (void)
{
  g_autofree char *sample = write_sample ("vol.tif", 0);
  g_autofree char *sample_json = g_strdup_printf ("{\"file\": \"%s\"}", sample);
  g_autofree char *json = test_microscope_json (sample_json, "\"reduce\": \"sum\"", 16, 6);
  g_autofree char *sys = write_json ("im.json", json);
  g_autofree char *out = in_tmp ("in-err.tif"), *nodir = in_tmp ("no-such-folder/x.tif");
  g_autofree char *expected = NULL;
  guint np;

  if (skip_without_mpi ())
    return;
  for (np = 0; np <= 3; np++)
    {
      g_auto(Spawned) a = { 0 };
      g_auto(Spawned) b = { 0 };
      g_auto(Spawned) c = { 0 };
      g_auto(Spawned) d = { 0 };
      g_autofree char *prefix = np > 0 ? g_strdup_printf ("airy-sim: rank 0 of %u: ", np) : g_strdup ("airy-sim: ");

      if (np == 1)
        continue;
      sim (np, &a, "run", sys, "-o", sample, "-q", NULL);
      g_assert_cmpint (a.status, ==, 2);
      expected = g_strdup_printf ("%s-o and sample.file name the same file %s: an output must not overwrite an "
                                  "input\n", prefix, sample);
      g_assert_cmpuint (count_of (a.err, expected), ==, 1);
      g_assert_cmpuint (count_of (a.err, "airy-sim: "), ==, 1);
      g_clear_pointer (&expected, g_free);

      sim (np, &b, "run", sys, "-o", nodir, "-q", NULL);
      g_assert_cmpint (b.status, ==, 2);
      g_assert_cmpuint (count_of (b.err, "the folder"), ==, 1);
      g_assert_cmpuint (count_of (b.err, "airy-sim: "), ==, 1);

      sim (np, &c, "run", sys, "-o", out, "-q", "--chunks", "x", NULL);
      g_assert_cmpint (c.status, ==, 2);
      g_assert_cmpuint (count_of (c.err, "--chunks: \"x\" is not a number of planes"), ==, 1);
      g_assert_cmpuint (count_of (c.err, "airy-sim: "), ==, 1);

      if (np > 0)
        {
          g_autofree char *n = g_strdup_printf ("%u", np);
          const char *argv[] = { mpirun_path (), "--oversubscribe", "-np", n, "-x", "AIRY_MEMORY_BUDGET=lots",
                                 g_getenv ("AIRY_SIM"), "run", sys, "-o", out, "-q", NULL };
          spawn (argv, &d);
        }
      else
        {
          const char *argv[] = { "/usr/bin/env", "AIRY_MEMORY_BUDGET=lots", g_getenv ("AIRY_SIM"), "run", sys, "-o",
                                 out, "-q", NULL };
          spawn (argv, &d);
        }
      g_assert_cmpint (d.status, ==, 2);
      g_assert_cmpuint (count_of (d.err, "AIRY_MEMORY_BUDGET: "), ==, 1);
      g_assert_cmpuint (count_of (d.err, "airy-sim: "), ==, 1);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  remove_files ("vol.tif", "im.json", NULL);
}

/* ---- the other role: one rank checking app/airy-mpi.c ---- */

#if AIRY_HAVE_MPI
/* The CUDA backend's NCCL bootstrap across ranks (airy-cuda-private.h)
 * with fake NCCL calls: what each device was told. */
typedef struct
{
  guint8 id[AIRY_NCCL_ID_BYTES];
  int    nranks[4], rank[4], device[4];
  int    joined, groups, fail_init;
} FakeNccl;

static int
fake_unique_id (guint8 *id, gpointer data)
{
  guint i;

  for (i = 0; i < AIRY_NCCL_ID_BYTES; i++)
    id[i] = (guint8) (i * 13 + 1);
  return 0;
}

static int
fake_group (gboolean start, gpointer data)
{
  ((FakeNccl *) data)->groups += start ? 1 : 10;
  return 0;
}

static int
fake_init_rank (gpointer *comm, int nranks, const guint8 *id, int rank, int device, gpointer data)
{
  FakeNccl *f = data;

  if (f->fail_init)
    return 5;   /* ncclInvalidUsage */
  memcpy (f->id, id, AIRY_NCCL_ID_BYTES);
  f->nranks[f->joined] = nranks;
  f->rank[f->joined] = rank;
  f->device[f->joined] = device;
  f->joined++;
  *comm = GINT_TO_POINTER (rank + 1);
  return 0;
}

static void
fake_destroy (gpointer comm, gpointer data)
{
}

static const char *
fake_error_string (AiryGpuApi api, int status)
{
  return "invalid usage";
}

static int
fake_clear (void)
{
  return 0;
}

/* rank r has r + 1 devices (ids 10 r + i): NCCL ranks are contiguous in
 * rank order, everyone has rank 0's id and the total */
static gboolean
check_nccl_bootstrap (AiryComm *comm)
{
  static const AiryRankCommOps ops = { fake_unique_id, fake_group, fake_init_rank, fake_destroy };
  static const AiryGpuHooks hooks = { fake_error_string, fake_clear };
  FakeNccl f = { 0 };
  g_autoptr(GError) error = NULL;
  gpointer comms[4] = { 0 };
  int devices[4], n = (int) comm->rank + 1, i, first = 0, total = 0;
  gboolean ok = TRUE;
  guint r;

  for (i = 0; i < n; i++)
    devices[i] = 10 * (int) comm->rank + i;
  for (r = 0; r < comm->size; r++)
    {
      if (r < comm->rank)
        first += (int) r + 1;
      total += (int) r + 1;
    }
  ok &= _airy_rank_comms_init (comm, devices, n, comms, &ops, &hooks, &f, &error);
  ok &= f.joined == n && f.groups == 11;
  for (i = 0; i < n; i++)
    ok &= f.nranks[i] == total && f.rank[i] == first + i && f.device[i] == devices[i]
          && comms[i] == GINT_TO_POINTER (first + i + 1);
  for (i = 0; i < AIRY_NCCL_ID_BYTES; i++)
    ok &= f.id[i] == (guint8) (i * 13 + 1);
  /* a failing init: an error naming the call, the group closed */
  memset (&f, 0, sizeof f);
  f.fail_init = 1;
  ok &= !_airy_rank_comms_init (comm, devices, n, comms, &ops, &hooks, &f, &error);
  ok &= error != NULL && strstr (error->message, "ncclCommInitRank") != NULL
        && strstr (error->message, "invalid usage (5)") != NULL && f.groups == 11;
  return ok;
}
#endif

static int
comm_worker (int argc, char **argv)
{
#if AIRY_HAVE_MPI
  g_autoptr(GError) error = NULL;
  AiryComm *comm = airy_mpi_comm_new (&argc, &argv, &error);
  float sum[100], mn[100], mx[100];
  char bytes[1000];
  guint i, ok = 1, size;
  double expect;

  if (comm == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  size = comm->size;
  /* pieces of 7 floats: 100 is 14 full pieces and one of 2 */
  airy_mpi_set_max_count (7);
  for (i = 0; i < 100; i++)
    sum[i] = mn[i] = mx[i] = (float) (i + 1) * (comm->rank + 1);
  ok &= airy_comm_all_reduce (comm, sum, 100, AIRY_COMM_SUM, &error);
  ok &= airy_comm_all_reduce (comm, mn, 100, AIRY_COMM_MIN, &error);
  ok &= airy_comm_all_reduce (comm, mx, 100, AIRY_COMM_MAX, &error);
  for (i = 0; i < 100; i++)
    {
      expect = (i + 1) * (size * (size + 1) / 2.0);
      ok &= sum[i] == (float) expect && mn[i] == (float) (i + 1) && mx[i] == (float) ((i + 1) * size);
    }
  /* a broadcast of 1000 bytes from the last rank, in pieces of 7 */
  for (i = 0; i < sizeof bytes; i++)
    bytes[i] = comm->rank == size - 1 ? (char) (i * 7) : 0;
  ok &= airy_comm_broadcast (comm, bytes, sizeof bytes, size - 1, &error);
  for (i = 0; i < sizeof bytes; i++)
    ok &= bytes[i] == (char) (i * 7);
  /* agreement: none failed, then ranks 1 and 2 failed: the lowest wins */
  ok &= airy_comm_agree (comm, &error);
  if (comm->rank >= 1)
    g_set_error (&error, AIRY_ERROR, AIRY_ERROR_FILE, "failure of rank %u", comm->rank);
  ok &= !airy_comm_agree (comm, &error);
  ok &= error != NULL && g_error_matches (error, AIRY_ERROR, AIRY_ERROR_FILE)
        && g_str_equal (error->message, g_strdup_printf ("rank 1 of %u: failure of rank 1", size));
  /* agreed, and not bad input of every rank: rank 0 had none */
  ok &= comm->agreed && !comm->agreed_bad_input;
  g_clear_error (&error);
  /* every rank with bad input: agreed as such; one with a run failure: not */
  g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, "bad input of rank %u", comm->rank);
  ok &= !airy_comm_agree (comm, &error) && comm->agreed && comm->agreed_bad_input;
  g_clear_error (&error);
  g_set_error (&error, AIRY_ERROR, comm->rank == size - 1 ? AIRY_ERROR_BACKEND : AIRY_ERROR_INVALID_VALUE,
               "failure of rank %u", comm->rank);
  ok &= !airy_comm_agree (comm, &error) && comm->agreed && !comm->agreed_bad_input;
  ok &= g_str_equal (error->message, g_strdup_printf ("rank 0 of %u: failure of rank 0", size));
  g_clear_error (&error);
  ok &= airy_comm_agree (comm, &error) && !comm->agreed;
  ok &= airy_comm_barrier (comm, &error);
  /* the shared counter: 30 numbers taken by all ranks, each once */
  {
    float seen[31] = { 0 };
    guint64 v;

    ok &= airy_comm_counter_reset (comm, &error);
    while (ok && airy_comm_counter_next (comm, &v, &error) && v < 30)
      seen[v] += 1;
    ok &= airy_comm_all_reduce (comm, seen, 30, AIRY_COMM_SUM, &error);
    for (i = 0; i < 30; i++)
      ok &= seen[i] == 1;
    /* and again from 0 after a reset */
    ok &= airy_comm_counter_reset (comm, &error);
    ok &= airy_comm_barrier (comm, &error);
    if (comm->rank == 0)
      ok &= airy_comm_counter_next (comm, &v, &error) && v == 0;
  }
  ok &= check_nccl_bootstrap (comm);
  g_print ("rank %u of %u: %s\n", comm->rank, size, ok ? "ok" : "FAILED");
  airy_comm_free (comm);
  return ok ? 0 : 1;
#else
  return 1;
#endif
}

int
main (int argc, char **argv)
{
  int status;

  if (argc > 1 && g_str_equal (argv[1], "--comm-worker"))
    return comm_worker (argc, argv);

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-test-mpi-XXXXXX", NULL);

  g_test_add_func ("/comm/self", test_comm_self);
  g_test_add_func ("/comm/split", test_comm_split);
  g_test_add_func ("/run/part", test_run_part);
  g_test_add_func ("/run/part-sample", test_run_part_sample);
  g_test_add_func ("/tiff/plane-range", test_tiff_plane_range);
  g_test_add_func ("/tiff/layout-parts", test_layout_parts);
  g_test_add_func ("/mpi/comm", test_mpi_comm);
  g_test_add_func ("/mpi/stack", test_mpi_stack);
  g_test_add_func ("/mpi/no-planes", test_mpi_no_planes);
  g_test_add_func ("/mpi/image", test_mpi_image);
  g_test_add_func ("/mpi/image-noise", test_mpi_image_noise);
  g_test_add_func ("/mpi/image-sample", test_mpi_image_sample);
  g_test_add_func ("/mpi/missing-sample", test_mpi_missing_sample);
  g_test_add_func ("/mpi/budget", test_mpi_budget);
  g_test_add_func ("/mpi/input-errors", test_mpi_input_errors);

  status = g_test_run ();
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return status;
}
