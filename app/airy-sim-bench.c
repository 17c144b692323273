/* airy-sim bench: repeated runs, the FFT floor, the writes and the end-to-end time, over ranks too. */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy.h"
#include "airy-atomic-private.h"
#include "airy-modality.h"
#include "airy-sim-private.h"
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

/* ---- bench ---- */

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

typedef struct
{
  double write_s;     /* median TIFF write of one result */
  double plain_s;     /* median plain write of as many bytes (dd's floor) */
  double e2e_s;       /* median run + TIFF write */
  char   dir[256];
} BenchWrite;

static double
median_of (GArray *t)
{
  g_array_sort (t, compare_doubles);
  return t->len % 2 ? g_array_index (t, double, t->len / 2)
                    : 0.5 * (g_array_index (t, double, t->len / 2 - 1) + g_array_index (t, double, t->len / 2));
}

/* A plain write(2) of n bytes at offset in 16 MiB pieces, as `dd bs=16M`
 * does. */
static gboolean
plain_write_at (int fd, const char *path, const void *data, guint64 n, guint64 offset, GError **error)
{
  const guint8 *p = data;

  while (n > 0)
    {
      gssize w = pwrite (fd, p, (gsize) MIN (n, (guint64) 16 << 20), (off_t) offset);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          int e = w < 0 ? errno : ENOSPC;
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: %s", path, g_strerror (e));
          return FALSE;
        }
      p += w;
      n -= (guint64) w;
      offset += (guint64) w;
    }
  return TRUE;
}

/* The result's bytes into a new file that is then removed. */
static gboolean
plain_write (const char *path, const void *data, guint64 n, GError **error)
{
  int fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  gboolean ok;

  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: %s", path, g_strerror (e));
      return FALSE;
    }
  ok = plain_write_at (fd, path, data, n, 0, error);
  close (fd);
  if (!ok)
    g_unlink (path);
  return ok;
}

static gboolean
bench_write (AirySystem *system, const AiryRunOptions *options, const char *dir, guint n,
             BenchWrite *out, GError **error)
{
  g_autoptr(GArray) tw = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) tp = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) te = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *name = g_strdup_printf ("airy-bench-%d%s", (int) getpid (),
                                          airy_image_format_lookup ("TIFF")->suffixes[0]);
  g_autofree char *raw_name = g_strdup_printf ("airy-bench-%d.raw", (int) getpid ());
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *raw = g_build_filename (dir, raw_name, NULL);
  guint i;

  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, "--write-dir: %s is not a folder", dir);
      return FALSE;
    }
  g_strlcpy (out->dir, dir, sizeof out->dir);
  /* each right after a run as often as the other: a write into fresh
   * page-cache memory costs more than one into memory a deleted file just
   * gave back */
  for (i = 0; i < 2 * n; i++)
    {
      g_autoptr(AiryResult) r = NULL;
      guint64 bytes;
      gint64 t0, t1, t2, t3;
      guint pass;

      t0 = g_get_monotonic_time ();
      r = airy_run (system, options, NULL, NULL, NULL, error);
      if (r == NULL)
        return FALSE;
      t1 = g_get_monotonic_time ();
      bytes = (guint64) r->stack->depth * airy_stack_plane_size (r->stack) * 4;
      for (pass = 0; pass < 2; pass++)
        {
          gboolean tiff = (pass == 0) == (i % 2 == 0);

          t2 = g_get_monotonic_time ();
          if (tiff ? !airy_image_write_full (path, r->stack, NULL, error)
                   : !plain_write (raw, r->stack->data, bytes, error))
            return FALSE;
          t3 = g_get_monotonic_time ();
          g_unlink (tiff ? path : raw);
          g_array_append_val (tiff ? tw : tp, (double) { (t3 - t2) / 1e6 });
          /* end to end: the run and its TIFF, as `airy-sim run` does */
          if (tiff && pass == 0)
            g_array_append_val (te, (double) { (t3 - t0) / 1e6 });
        }
      (void) t1;
    }
  out->write_s = median_of (tw);
  out->plain_s = median_of (tp);
  out->e2e_s = median_of (te);
  return TRUE;
}

/* ---- results kept by the backend (--resident) ---- */

/* The run's result brought home from the device, timed (the download that
 * a run without --resident does while it computes); nothing for a backend
 * whose results are in host memory. */
static gboolean
bench_download (AiryResult *r, GArray *seconds, GError **error)
{
  AiryBackend *b = r->resident ? airy_backend_lookup (airy_resident_get_backend_name (r->resident)) : NULL;
  gint64 t0;
  AiryStack *home;

  if (b == NULL || !airy_backend_has_download_floor (b))
    return TRUE;
  t0 = g_get_monotonic_time ();
  home = airy_resident_to_stack (r->resident, error);
  if (home == NULL)
    return FALSE;
  g_array_append_val (seconds, (double) { (g_get_monotonic_time () - t0) / 1e6 });
  airy_stack_free (home);
  return TRUE;
}

/* The download's line and JSON fields: its median against the PCIe floor
 * (a bare copy of as many bytes into pinned memory), or none at all. */
static gboolean
bench_download_report (const char *backend_name, guint device, guint64 bytes, GArray *seconds, gboolean json,
                       GString *json_out, GError **error)
{
  AiryBackend *b = airy_backend_lookup (backend_name);
  g_autoptr(GArray) floors = g_array_new (FALSE, FALSE, sizeof (double));
  double dl, floor_s;
  guint i;

  if (b == NULL || !airy_backend_has_download_floor (b) || seconds->len == 0)
    {
      if (json)
        g_string_append (json_out, ", \"resident\": true");
      else
        g_print ("download    none: the %s backend's result is in host memory (a resident run copies nothing)\n",
                 backend_name);
      return TRUE;
    }
  for (i = 0; i < 3; i++)
    {
      double f = airy_backend_download_floor (b, device, bytes, error);

      if (f < 0)
        return FALSE;
      g_array_append_val (floors, f);
    }
  dl = median_of (seconds);
  floor_s = median_of (floors);
  if (json)
    g_string_append_printf (json_out, ", \"resident\": true, \"download_s\": %.6f, \"download_floor_s\": %.6f, "
                            "\"download_ratio\": %.4f", dl, floor_s, dl / floor_s);
  else
    g_print ("download    median %.1f ms to host memory, %.3f × the PCIe floor %.1f ms (a bare copy of the "
             "same bytes into pinned memory; the run above kept its result on the device)\n",
             dl * 1e3, dl / floor_s, floor_s * 1e3);
  return TRUE;
}

/* ---- bench over ranks ---- */

/* One run timed over all ranks: from a barrier to the end of the last
 * rank's part (a barrier), on rank 0's clock; a run's own time in one
 * process. */
static AiryResult *
bench_run (AirySystem *system, const AiryRunOptions *options, double *seconds, GError **error)
{
  AiryResult *r;
  gint64 t0;

  /* an agreement, not a bare barrier: a rank that failed before the
   * first run meets the others here */
  if (ranks->size > 1 && !airy_comm_agree (ranks, error))
    return NULL;
  t0 = g_get_monotonic_time ();
  r = airy_run (system, options, NULL, NULL, NULL, error);
  if (r == NULL)
    return NULL;
  if (ranks->size > 1 && !airy_comm_barrier (ranks, error))
    {
      airy_result_free (r);
      return NULL;
    }
  *seconds = ranks->size > 1 ? (g_get_monotonic_time () - t0) / 1e6 : r->seconds;
  return r;
}

/* The plain write over the ranks, as the TIFF's: rank 0 makes the file,
 * each rank writes its planes' bytes at their place in it (a reduction's
 * image: rank 0 alone), in parallel; from a barrier to the last rank's
 * end, on rank 0's clock. Collective. */
static gboolean
plain_write_ranks (const char *path, AiryResult *r, double *seconds, GError **error)
{
  guint64 plane = airy_stack_plane_size (r->stack) * sizeof (float);
  guint64 first = r->stack_is_part ? r->part_first : 0;
  guint64 count = r->stack_is_part ? r->part_count : is_root () ? r->stack->depth : 0;
  GError *local = NULL;
  gint64 t0;
  int fd;

  if (!airy_comm_barrier (ranks, error))
    return FALSE;
  t0 = g_get_monotonic_time ();
  if (is_root ())
    {
      fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          int e = errno;
          g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: %s", path, g_strerror (e));
        }
      else
        close (fd);
    }
  if (!airy_comm_agree (ranks, &local))
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (count > 0)
    {
      fd = g_open (path, O_WRONLY | O_CLOEXEC, 0);
      if (fd < 0)
        {
          int e = errno;
          g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: %s", path, g_strerror (e));
        }
      else
        {
          plain_write_at (fd, path, r->stack->data, count * plane, first * plane, &local);
          close (fd);
        }
    }
  if (!airy_comm_agree (ranks, &local))
    {
      if (is_root ())
        g_unlink (path);
      g_propagate_error (error, local);
      return FALSE;
    }
  *seconds = (g_get_monotonic_time () - t0) / 1e6;
  if (is_root ())
    g_unlink (path);
  return TRUE;
}

/* The parallel write of a run's result over the ranks (the stack, each
 * rank its planes; a reduction's image by rank 0), n times, median; and
 * the plain write of the same bytes the same way (plain_write_ranks),
 * right after a run as often as the TIFF's. */
static gboolean
bench_write_ranks (AirySystem *system, const AiryRunOptions *options, const char *dir, guint n,
                   BenchWrite *out, GError **error)
{
  g_autoptr(GArray) tw = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) tp = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) te = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *name = NULL, *path = NULL, *raw_name = NULL, *raw = NULL;
  guint32 pid = (guint32) getpid ();
  guint i;

  /* one name for all ranks: rank 0's */
  if (!airy_comm_broadcast (ranks, &pid, sizeof pid, 0, error))
    return FALSE;
  name = g_strdup_printf ("airy-bench-%u%s", pid, airy_image_format_lookup ("TIFF")->suffixes[0]);
  path = g_build_filename (dir, name, NULL);
  raw_name = g_strdup_printf ("airy-bench-%u.raw", pid);
  raw = g_build_filename (dir, raw_name, NULL);
  g_strlcpy (out->dir, dir, sizeof out->dir);
  for (i = 0; i < 2 * n; i++)
    {
      g_autoptr(AiryResult) r = NULL;
      AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, NULL, 0 };
      double run_s = 0, write_s = 0, plain_s = 0;
      guint pass;

      r = bench_run (system, options, &run_s, error);
      if (r == NULL)
        return FALSE;
      for (pass = 0; pass < 2; pass++)
        {
          gboolean tiff = (pass == 0) == (i % 2 == 0);

          if (tiff)
            {
              if (!write_outputs (r, system, path, NULL, NULL, &wo, &write_s, error))
                return FALSE;
              if (is_root ())
                g_unlink (path);
              g_array_append_val (tw, write_s);
              /* end to end: the run and its TIFF, as `airy-sim run` does */
              if (pass == 0)
                g_array_append_val (te, (double) { run_s + write_s });
            }
          else
            {
              if (!plain_write_ranks (raw, r, &plain_s, error))
                return FALSE;
              g_array_append_val (tp, plain_s);
            }
        }
    }
  out->write_s = median_of (tw);
  out->plain_s = median_of (tp);
  out->e2e_s = median_of (te);
  return TRUE;
}

static gboolean
agree_on_bench (AirySystem *system, int repeat, int warmup, gboolean no_write, const char *write_dir,
                GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  describe_system (b, system);
  json_builder_set_member_name (b, "bench");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "--repeat");
  json_builder_add_int_value (b, repeat);
  json_builder_set_member_name (b, "--warmup");
  json_builder_add_int_value (b, warmup);
  json_builder_set_member_name (b, "--no-write");
  json_builder_add_boolean_value (b, no_write);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "outputs");
  json_builder_begin_object (b);
  describe_output (b, "--write-dir", write_dir ? write_dir : g_get_tmp_dir ());
  json_builder_end_object (b);
  return ranks_agree_on (b, error);
}

/* every rank's median own time of a run (rank_s) from own (repeat × the
 * ranks' own times of each run); returns the median longest wait of a
 * run: its time less the quickest rank's own */
static double
bench_rank_times (const float *own, int repeat, GArray *times, double *rank_s)
{
  g_autoptr(GArray) waits = g_array_new (FALSE, FALSE, sizeof (double));
  guint i;
  int k;

  for (i = 0; i < ranks->size; i++)
    {
      g_autoptr(GArray) t = g_array_new (FALSE, FALSE, sizeof (double));

      for (k = 0; k < repeat; k++)
        g_array_append_val (t, (double) { own[(gsize) k * ranks->size + i] });
      rank_s[i] = median_of (t);
    }
  for (k = 0; k < repeat; k++)
    {
      double quickest = G_MAXDOUBLE;

      for (i = 0; i < ranks->size; i++)
        quickest = MIN (quickest, own[(gsize) k * ranks->size + i]);
      g_array_append_val (waits, (double) { MAX (0.0, g_array_index (times, double, k) - quickest) });
    }
  return median_of (waits);
}

/* the floor: bare 2-D complex transforms of the same stack, same threads
 * (FFTW), or on the device with the backend's own FFT (cuFFT); the median
 * of 3 to 5, or < 0 with error set */
static double
bench_fft_floor (const char *backend, guint device, guint h, guint w, guint nz, guint n_threads, int repeat,
                 const char **floor_kind, GError **error)
{
  g_autoptr(GArray) floors = g_array_new (FALSE, FALSE, sizeof (double));
  AiryBackend *b = airy_backend_lookup (backend);
  gboolean device_floor = b && airy_backend_has_fft_floor (b) && !g_str_equal (backend, "cpu");
  guint i;

  *floor_kind = device_floor ? "cuFFT" : "FFTW";
  for (i = 0; i < (guint) MAX (3, MIN (repeat, 5)); i++)
    {
      double f = device_floor ? airy_backend_fft_floor (b, device, h, w, nz, error)
                              : airy_bench_fft_floor (h, w, nz, n_threads);
      if (f < 0)
        return f;
      g_array_append_val (floors, f);
    }
  g_array_sort (floors, compare_doubles);
  return g_array_index (floors, double, floors->len / 2);
}

/* the preset or system file, on an N × N grid for --size N (spacing
 * scaled to keep the same field of view) and with --planes planes */
static AirySystem *
bench_system (const char *what, int size, int planes, GError **error)
{
  g_autoptr(AirySystem) system = NULL;
  guint nz;

  if (g_str_has_suffix (what, ".json"))
    system = airy_system_new_from_file (what, error);
  else
    system = airy_system_new_from_preset (what, error);
  if (system == NULL)
    return NULL;
  /* --size N: an N × N grid, spacing scaled to keep the same field of view */
  if (size > 0)
    {
      guint oh, ow;

      airy_system_get_shape (system, &oh, &ow);
      airy_system_set_shape (system, (guint) size, (guint) size);
      airy_system_set_spacing (system, airy_system_get_spacing (system) * ow / size);
    }
  if (planes > 0)
    {
      const double *z = airy_system_get_z (system, &nz);
      double z0 = z[0], z1 = z[nz - 1];
      airy_system_set_z_range (system, z0, planes > 1 ? z1 : z0, (guint) planes);
    }
  return g_steal_pointer (&system);
}

/* the devices of all ranks and the bytes of the first run's stack */
static gboolean
bench_cold_counts (const AiryResult *cold, guint *cold_devices, guint64 *out_bytes, GError **error)
{
  const AiryStack *st = cold->stack ? cold->stack : airy_resident_get_stack (cold->resident);
  float all = cold->n_devices;

  if (!airy_comm_all_reduce (ranks, &all, 1, AIRY_COMM_SUM, error))
    return FALSE;
  *cold_devices = (guint) all;
  *out_bytes = (guint64) (cold->stack_is_part ? cold->n_planes : st->depth) * st->height * st->width * 4;
  return TRUE;
}

/* warm-up runs, then the timed ones: their times, reduction times and
 * (resident) downloads, and each one's own time in this rank's slot of own */
static int
bench_runs (AirySystem *system, const AiryRunOptions *options, int warmup, int repeat, GArray *times,
            GArray *reduce_times, GArray *downloads, float *own)
{
  g_autoptr(GError) error = NULL;
  int k;

  for (k = 0; k < warmup; k++)
    {
      double t;
      g_autoptr(AiryResult) r = bench_run (system, options, &t, &error);
      if (r == NULL)
        return ranks_failed (error);
    }
  for (k = 0; k < repeat; k++)
    {
      double t;
      g_autoptr(AiryResult) r = bench_run (system, options, &t, &error);
      if (r == NULL)
        return ranks_failed (error);
      g_array_append_val (times, t);
      g_array_append_val (reduce_times, r->reduce_s);
      if (options->resident && !bench_download (r, downloads, &error))
        return fail (error);
      /* one process: its run is its own work */
      own[(gsize) k * ranks->size + ranks->rank] = ranks->size > 1 ? r->own_s : t;
    }
  return EXIT_OK;
}

int
cmd_bench (int argc, char **argv)
{
  int status;
  g_autofree char *backend = NULL, *devices_arg = NULL, *write_dir = NULL;
  int repeat = 5, warmup = 1, threads = 0, planes = 0, size = 0;
  gboolean json = FALSE, no_write = FALSE, resident = FALSE, grad = FALSE;
  const SimOption options_table[] = {
    { "repeat", 0, SIM_OPTION_INT, &repeat },
    { "warmup", 0, SIM_OPTION_INT, &warmup },
    { "threads", 0, SIM_OPTION_INT, &threads },
    { "devices", 0, SIM_OPTION_STRING, &devices_arg },
    { "backend", 0, SIM_OPTION_STRING, &backend },
    { "planes", 0, SIM_OPTION_INT, &planes },
    { "size", 0, SIM_OPTION_INT, &size },
    { "json", 0, SIM_OPTION_FLAG, &json },
    { "write-dir", 0, SIM_OPTION_STRING, &write_dir },
    { "no-write", 0, SIM_OPTION_FLAG, &no_write },
    { "resident", 0, SIM_OPTION_FLAG, &resident },
    { "grad", 0, SIM_OPTION_FLAG, &grad },
    { NULL }
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GArray) devices = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) reduce_times = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) downloads = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GString) extra = g_string_new (NULL);
  AiryRunOptions write_options;
  BenchWrite wr = { 0 };
  g_autofree float *own = NULL;
  g_autofree double *rank_s = NULL;
  g_autoptr(GString) rank_list = g_string_new (NULL);
  double wait_s;
  g_autoptr(AiryResult) cold = NULL;
  g_autofree char *cold_backend = NULL;
  const char *floor_kind = "FFTW";
  guint cold_devices;
  guint64 out_bytes;
  const char *what = "widefield";
  AiryRunOptions options = { 0 };
  double t_cold, floor_s, median, tmin, tmax;
  guint h, w, nz, n_threads, i;
  guint64 peak, peak_device = 0;

  if ((status = parse_command_line ("bench", options_table, &argc, &argv)) != EXIT_OK)
    return status;
  if (argc > 2)
    return usage_error (_("bench: give at most one preset or system file"));
  if (repeat < 1 || repeat > 1000)
    return usage_error ("--repeat: must be in [1, 1000], got %d", repeat);
  if (warmup < 0 || warmup > 100)
    return usage_error ("--warmup: must be in [0, 100], got %d", warmup);
  if ((status = check_threads_backend (threads, backend)) != EXIT_OK)
    return status;
  if (planes < 0 || planes > 1000000)
    return usage_error ("--planes: must be in [1, 1000000], got %d", planes);
  if (size < 0 || size > 65536)
    return usage_error ("--size: must be in [1, 65536], got %d", size);
  if (devices_arg && !parse_devices (devices_arg, devices, &error))
    return ranks_fail (error);
  if (resident && ranks->size > 1)
    return usage_error ("--resident: a result kept by its backend needs one process, got %u ranks", ranks->size);
  if (argc == 2)
    what = argv[1];
  system = bench_system (what, size, planes, &error);
  if (system == NULL)
    return ranks_fail (error);
  airy_system_get_shape (system, &h, &w);
  airy_system_get_z (system, &nz);
  n_threads = threads > 0 ? (guint) threads : g_get_num_processors ();
  if (grad)
    return bench_grad (system, what, repeat, n_threads, json);

  options.backend = backend;
  options.devices = devices->len ? (guint *) devices->data : NULL;
  options.n_devices = devices->len;
  options.threads = n_threads;
  options.comm = ranks;
  /* every rank times the same system the same way */
  if (ranks->size > 1 && !agree_on_bench (system, repeat, warmup, no_write, write_dir, &error))
    return ranks_failed (error);
  /* --resident: the result stays where it was computed (on the device,
   * freed with the result after each run); the writes below always time a
   * run for the host, as `airy-sim run` does */
  options.resident = resident;
  write_options = options;
  write_options.resident = FALSE;

  /* cold: the first run in this process, FFTW planning included */
  cold = bench_run (system, &options, &t_cold, &error);
  if (cold == NULL)
    return ranks_failed (error);
  cold_backend = g_strdup (cold->backend);
  /* the devices of all ranks, as run --json counts them (exact in a float) */
  if (!bench_cold_counts (cold, &cold_devices, &out_bytes, &error))
    return ranks_failed (error);
  /* one result alive at a time, as in use */
  g_clear_pointer (&cold, airy_result_free);
  own = g_new0 (float, (gsize) repeat * ranks->size);
  if ((status = bench_runs (system, &options, warmup, repeat, times, reduce_times, downloads, own)) != EXIT_OK)
    return status;
  /* every rank's own time of every run, in its slots, to every rank */
  if (!airy_comm_all_reduce (ranks, own, (gsize) repeat * ranks->size, AIRY_COMM_SUM, &error))
    return ranks_failed (error);
  rank_s = g_new0 (double, ranks->size);
  wait_s = bench_rank_times (own, repeat, times, rank_s);
  /* files: the TIFF write of one result, a plain write of as many bytes
   * to the same folder (the dd floor), and compute + write together */
  if (!no_write && ranks->size > 1)
    {
      if (!bench_write_ranks (system, &write_options, write_dir ? write_dir : g_get_tmp_dir (), MAX (3, MIN (repeat, 5)),
                              &wr, &error))
        return ranks_failed (error);
    }
  else if (!no_write && !bench_write (system, &write_options, write_dir ? write_dir : g_get_tmp_dir (),
                                      MAX (3, MIN (repeat, 5)), &wr, &error))
    return fail (error);
  /* the floor and the report: rank 0's, alone on the machine */
  if (ranks->size > 1 && !is_root ())
    return airy_comm_barrier (ranks, &error) ? EXIT_OK : ranks_failed (error);
  peak = peak_rss_bytes ();
  {
    AiryBackend *b = airy_backend_lookup (cold_backend);
    guint d;

    /* the device memory a run took, on the busiest device */
    for (d = 0; b && d < airy_backend_n_devices (b); d++)
      peak_device = MAX (peak_device, airy_backend_peak_memory (b, d));
  }
  median = median_of (times); /* sorts them: the least and the most next */
  tmin = g_array_index (times, double, 0);
  tmax = g_array_index (times, double, times->len - 1);

  floor_s = bench_fft_floor (cold_backend, devices->len ? g_array_index (devices, guint, 0) : 0, h, w, nz, n_threads,
                             repeat, &floor_kind, &error);
  if (floor_s < 0)
    return fail (error);
  if (ranks->size > 1 && !airy_comm_barrier (ranks, &error))
    return ranks_failed (error);
  if (resident && json
      && !bench_download_report (cold_backend, devices->len ? g_array_index (devices, guint, 0) : 0, out_bytes,
                                 downloads, TRUE, extra, &error))
    return fail (error);

  for (i = 0; i < ranks->size; i++)
    g_string_append_printf (rank_list, json ? "%s%.6f" : "%s%.1f", i ? ", " : "", json ? rank_s[i] : rank_s[i] * 1e3);
  if (json)
    g_print ("{\"system\": \"%s\", \"planes\": %u, \"height\": %u, \"width\": %u, "
             "\"backend\": \"%s\", \"devices\": %u, \"threads\": %u, \"repeat\": %d, "
             "\"warmup\": %d, \"cold_s\": %.6f, \"median_s\": %.6f, \"min_s\": %.6f, "
             "\"max_s\": %.6f, \"floor_s\": %.6f, \"floor\": \"%s\", \"ratio\": %.4f, \"planes_per_s\": %.2f, "
             "\"peak_rss_bytes\": %" G_GUINT64_FORMAT ", \"peak_device_bytes\": %" G_GUINT64_FORMAT ", "
             "\"output_bytes\": %" G_GUINT64_FORMAT ", \"write_s\": %.6f, \"plain_write_s\": %.6f, "
             "\"end_to_end_s\": %.6f, \"end_to_end_ratio\": %.4f, \"ranks\": %u, \"reduce_s\": %.6f, "
             "\"rank_s\": [%s], \"wait_s\": %.6f%s}\n",
             what, nz, h, w, cold_backend, cold_devices, n_threads, repeat, warmup, t_cold,
             median, tmin, tmax, floor_s, floor_kind, median / floor_s, nz / median, peak, peak_device, out_bytes,
             wr.write_s, wr.plain_s, wr.e2e_s, wr.e2e_s > 0 ? wr.e2e_s / (median + wr.plain_s) : 0.0,
             ranks->size, median_of (reduce_times), rank_list->str, wait_s, extra->str);
  else
    {
      g_autofree char *peak_s = airy_format_bytes (peak);
      g_autofree char *out_s = airy_format_bytes (out_bytes);

      g_print ("system      %s: %u planes of %u × %u%s\n", what, nz, h, w,
               _airy_modality_one_image (_airy_modality_of (system)) ? " (microscope, one image)" : "");
      g_print ("backend     %s, %u device%s, %u threads\n", cold_backend, cold_devices,
               cold_devices == 1 ? "" : "s", n_threads);
      g_print ("cold        %.1f ms (first run, planning included)\n", t_cold * 1e3);
      g_print ("run         median %.1f ms, min %.1f ms, max %.1f ms (%d runs after %d warm-up)\n",
               median * 1e3, tmin * 1e3, tmax * 1e3, repeat, warmup);
      g_print ("floor       %.1f ms (%u bare %s 2-D complex transforms of %u × %u, in place)\n",
               floor_s * 1e3, nz, floor_kind, h, w);
      g_print ("ratio       %.3f (run / floor)\n", median / floor_s);
      if (resident
          && !bench_download_report (cold_backend, devices->len ? g_array_index (devices, guint, 0) : 0, out_bytes,
                                     downloads, FALSE, NULL, &error))
        return fail (error);
      g_print ("throughput  %.1f planes/s\n", nz / median);
      if (ranks->size > 1)
        g_print ("ranks       %u: own work median %s ms; longest wait %.1f ms (median; the reduction's "
                 "%.1f ms included)\n", ranks->size, rank_list->str, wait_s * 1e3, median_of (reduce_times) * 1e3);
      g_print ("memory      peak RSS %s (output %s)\n", peak_s, out_s);
      if (wr.e2e_s > 0)
        {
          g_print ("write       %.1f ms TIFF, %.1f ms plain write of the same bytes (%s)\n",
                   wr.write_s * 1e3, wr.plain_s * 1e3, wr.dir);
          g_print ("end to end  %.1f ms run + write, %.3f × (run + plain write)\n",
                   wr.e2e_s * 1e3, wr.e2e_s / (median + wr.plain_s));
        }
      if (peak_device > 0)
        {
          g_autofree char *dev_s = airy_format_bytes (peak_device);
          g_print ("device      %s allocated by one run on the busiest device\n", dev_s);
        }
    }
  return EXIT_OK;
}
