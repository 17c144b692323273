/* airy-sim run: one system, its outputs written by every rank into one file (DESIGN §6). */
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
#include "airy-image-file-private.h"
#include "airy-sim-private.h"
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

/* The stack of all ranks' planes, without pixels: what the TIFF layout
 * needs (shape, voxel size, every plane's z, provenance). */
static AiryStack *
whole_stack_header (const AiryStack *part, AirySystem *system, guint n_planes)
{
  AiryStack *header = g_new0 (AiryStack, 1);
  guint nz;
  const double *z = airy_system_get_z (system, &nz);

  header->height = part->height;
  header->width = part->width;
  airy_stack_copy_metadata (header, part);
  header->depth = n_planes;
  header->bits = 32;
  g_assert (nz == n_planes);
  airy_stack_set_z (header, z);
  return header;
}

/* The bytes this rank wrote into the outputs (--json's write_bytes) */
static guint64 written_bytes;

static void
count_written (const char *path)
{
  GStatBuf st;

  if (path && g_stat (path, &st) == 0)
    written_bytes += (guint64) st.st_size;
}

/* The ranks' outcome of a step, local (NULL or this rank's error, taken):
 * the lowest failing rank's error into error, and FALSE, when one failed */
static gboolean
agree (GError *local, GError **error)
{
  if (airy_comm_agree (ranks, &local))
    return TRUE;
  g_propagate_error (error, local);
  return FALSE;
}

/* Writes the PSF stack whose planes the ranks hold into one file: rank 0
 * lays the TIFF out (header, IFDs, the pixel block) in a named temporary
 * beside `path`, every rank writes its planes at their offsets (pwrite, on
 * a file system all ranks share), then rank 0 commits it (into the
 * outputs' group, write_outputs). No rank holds the whole stack; the bytes
 * are those of a one-process run. Collective: every rank calls it, and it
 * agrees on every step. */
static gboolean
write_stack_ranks (const char                 *path,
                   const AiryStack            *part,
                   guint                       part_first,
                   guint                       part_count,
                   guint                       n_planes,
                   AirySystem                 *system,
                   const AiryTiffWriteOptions *options,
                   GError                    **error)
{
  g_autoptr(AiryStack) header = whole_stack_header (part, system, n_planes);
  g_autoptr(AiryTiffLayout) layout = NULL;
  g_autoptr(AiryAtomicFile) file = NULL;
  char tmp_name[4096] = "";
  float range[2] = { INFINITY, INFINITY };   /* min and −max: one MIN reduction */
  AiryTiffWriteOptions quiet_options;
  GError *local = NULL;
  guint64 plane_bytes;
  int fd;

  /* ImageJ's display range is the whole stack's */
  if (part_count > 0)
    {
      AiryStack view = *part;

      view.depth = part_count;
      airy_stack_min_max (&view, &range[0], &range[1]);
      range[1] = -range[1];
    }
  if (!airy_comm_all_reduce (ranks, range, 2, AIRY_COMM_MIN, error))
    return FALSE;

  /* every rank knows the layout (it needs the offsets), rank 0 writes it */
  /* the same format everywhere; the warnings are rank 0's to print */
  quiet_options = *options;
  if (!is_root ())
    quiet_options.warnings = NULL;
  layout = airy_tiff_layout_new (path, header, range[0], -range[1], &quiet_options, &local);
  if (layout && is_root ())
    {
      file = airy_atomic_file_new (path, AIRY_ATOMIC_SHARED, &local);
      if (file && airy_tiff_layout_write_frame (layout, airy_atomic_file_get_fd (file), &local)
          && g_strlcpy (tmp_name, airy_atomic_file_get_temp_path (file), sizeof tmp_name) >= sizeof tmp_name)
        g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path,
                     g_strerror (ENAMETOOLONG));
    }
  if (!agree (local, error))
    return FALSE;
  if (!airy_comm_broadcast (ranks, tmp_name, sizeof tmp_name, 0, error))
    return FALSE;

  /* each rank its own planes */
  if (part_count > 0)
    {
      fd = g_open (tmp_name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
      if (fd < 0)
        {
          int e = errno;
          g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
        }
      else
        {
          airy_tiff_layout_write_planes (layout, fd, part_first, part_count, part->data, &local);
          if (close (fd) != 0 && local == NULL)
            {
              int e = errno;
              g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
            }
        }
    }
  if (!agree (local, error))
    return FALSE;
  /* its planes; rank 0 the header and IFDs too */
  plane_bytes = (guint64) part->height * part->width * sizeof (float);
  written_bytes += part_count * plane_bytes;
  if (is_root ())
    written_bytes += airy_tiff_layout_get_size (layout) - n_planes * plane_bytes;
  /* all planes are in: the file is complete */
  if (is_root ())
    airy_atomic_file_commit (g_steal_pointer (&file), &local);
  if (!agree (local, error))
    return FALSE;
  return TRUE;
}

/* The same for a store (a folder format, OME-Zarr): rank 0 makes the
 * partial folder, every rank writes its planes' chunks into it (on all its
 * cores), and once all are in rank 0 writes the metadata and renames the
 * folder into place. A rank that fails leaves the partial folder, which
 * has no metadata and so never reads as a store; rank 0 removes it.
 * Collective. */
static gboolean
write_store_ranks (const char      *path,
                   const AiryStack *part,
                   guint            part_first,
                   guint            part_count,
                   guint            n_planes,
                   AirySystem      *system,
                   GError         **error)
{
  const AiryImageFormat *format = airy_image_format_for_suffix (path);
  g_autoptr(AiryStack) header = whole_stack_header (part, system, n_planes);
  g_autofree char *partial = NULL;
  char name[4096] = "";
  GError *local = NULL;

  if (is_root ())
    {
      partial = format->begin_pieces (path, header, &local);
      if (partial && g_strlcpy (name, partial, sizeof name) >= sizeof name)
        g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path,
                     g_strerror (ENAMETOOLONG));
    }
  if (!agree (local, error) || !airy_comm_broadcast (ranks, name, sizeof name, 0, error))
    {
      if (partial)
        format->abort_pieces (partial);
      return FALSE;
    }
  /* each rank its own planes: its pieces (tests make one rank fail here) */
  if (g_strcmp0 (g_getenv ("AIRY_TEST_FAIL_PIECES"), "1") == 0 && part_count > 0)
    g_set_error (&local, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: cannot write: a failure for the test", path);
  else if (part_count > 0)
    _airy_image_write_piece_range (format, name, header, part, part_first, part_count, 0, &local);
  if (!agree (local, error))
    {
      if (is_root ())
        format->abort_pieces (name);
      return FALSE;
    }
  if (is_root () && !format->commit_pieces (name, path, header, &local))
    format->abort_pieces (name);
  return agree (local, error);
}

/* The PNG of the whole stack's middle plane, written by rank 0: the rank
 * that holds the plane sends it. Collective. */
static gboolean
write_png_ranks (AiryResult *result, gboolean parts, const char *png_out, GError **error)
{
  AiryStack *s = result->stack;
  guint mid = (parts ? result->n_planes : s->depth) / 2;
  gboolean mine = parts ? mid >= result->part_first && mid < result->part_first + result->part_count : is_root ();
  float holder = mine ? (float) ranks->rank : (float) ranks->size;   /* exact below 2^24 */
  gsize n = (gsize) s->height * s->width;
  g_autofree float *copy = NULL;
  const float *plane;
  GError *local = NULL;
  AiryStack view = *s;
  float lo, hi;

  if (!airy_comm_all_reduce (ranks, &holder, 1, AIRY_COMM_MIN, error))
    return FALSE;
  if (mine)
    plane = airy_stack_plane (s, parts ? mid - result->part_first : mid);
  else
    plane = copy = g_new (float, n);
  if (!airy_comm_broadcast (ranks, (float *) plane, n * sizeof (float), (guint) holder, error))
    return FALSE;
  if (is_root ())
    {
      view.depth = 1;
      view.data = (float *) plane;
      airy_stack_min_max (&view, &lo, &hi);
      airy_png_write_colormapped (png_out, plane, s->height, s->width, s->dx, AIRY_COLORMAP_INFERNO, lo, hi, &local);
    }
  if (!agree (local, error))
    return FALSE;
  return TRUE;
}

/* The outputs of a run, in one process or over several ranks: the stack
 * (the ranks' planes in parallel) or the image (rank 0), the PSF stack,
 * the channels, the PNG. They appear together or not at all: rank 0
 * stages each in one group and commits the group once every output is
 * complete, so a failing --png or --psf-out leaves -o as it was.
 * Collective. */
gboolean
write_outputs (AiryResult                 *result,
               AirySystem                 *system,
               const char                 *output,
               const char                 *psf_out,
               const char                 *png_out,
               const AiryTiffWriteOptions *wo,
               double                     *write_s,
               GError                    **error)
{
  g_autoptr(AiryAtomicGroup) group = is_root () ? airy_atomic_group_begin () : NULL;
  /* a stack of planes over several ranks; in one process it is whole */
  gboolean parts = result->stack_is_part && ranks->size > 1;
  gint64 t0 = g_get_monotonic_time ();
  GError *local = NULL;

  if (parts && is_store_output (output))
    {
      if (!write_store_ranks (output, result->stack, result->part_first, result->part_count, result->n_planes,
                              system, error))
        return FALSE;
    }
  else if (parts)
    {
      if (!write_stack_ranks (output, result->stack, result->part_first, result->part_count, result->n_planes,
                              system, wo, error))
        return FALSE;
    }
  else
    {
      if (is_root ())
        {
          if (result->n_channels > 0)
            airy_tiff_write_channels (output, result->channels, result->n_channels, wo, &local);
          else
            airy_image_write_full (output, result->stack, wo, &local);
        }
      if (!agree (local, error))
        return FALSE;
    }
  /* the PSF stack: always the ranks' planes (an image is summed) */
  if (psf_out && ranks->size > 1
      && !(is_store_output (psf_out)
           ? write_store_ranks (psf_out, result->psf, result->part_first, result->part_count, result->n_planes,
                                system, error)
           : write_stack_ranks (psf_out, result->psf, result->part_first, result->part_count, result->n_planes,
                                system, wo, error)))
    return FALSE;
  if (psf_out && ranks->size == 1 && result->psf)
    {
      if (is_root ())
        airy_image_write_full (psf_out, result->psf, wo, &local);
      if (!agree (local, error))
        return FALSE;
    }
  if (png_out && !write_png_ranks (result, parts, png_out, error))
    return FALSE;
  if (is_root ())
    airy_atomic_group_commit (g_steal_pointer (&group), &local);
  if (!agree (local, error))
    return FALSE;
  /* what rank 0 wrote alone */
  if (is_root ())
    {
      if (!parts)
        count_written (output);
      if (psf_out && ranks->size == 1)
        count_written (psf_out);
      count_written (png_out);
    }
  *write_s = (g_get_monotonic_time () - t0) / 1e6;
  return TRUE;
}

/* Each rank's figures, on every rank: [0, size) of `values` holds this
 * rank's in its slot; exact for whole numbers below 2^48 (two floats of
 * 24 bits each, summed). Collective. */
static gboolean
gather_per_rank (guint64 mine, guint64 *all, GError **error)
{
  g_autofree float *parts = g_new0 (float, 2 * ranks->size);
  guint r;

  parts[2 * ranks->rank] = (float) (mine >> 24);
  parts[2 * ranks->rank + 1] = (float) (mine & 0xffffff);
  if (!airy_comm_all_reduce (ranks, parts, 2 * ranks->size, AIRY_COMM_SUM, error))
    return FALSE;
  for (r = 0; r < ranks->size; r++)
    all[r] = ((guint64) parts[2 * r] << 24) + (guint64) parts[2 * r + 1];
  return TRUE;
}

static void
append_list (GString *s, const char *name, const guint64 *v, double scale, const char *format)
{
  guint r;

  g_string_append_printf (s, ", \"%s\": [", name);
  for (r = 0; r < ranks->size; r++)
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];

      g_string_append_printf (s, "%s%s", r ? ", " : "", g_ascii_formatd (buf, sizeof buf, format, v[r] * scale));
    }
  g_string_append_c (s, ']');
}

/* --json: one line on stdout (rank 0) that says what the run used, and
 * per rank what it moved through the communicator (the reductions, the
 * broadcasts and agreements: comm_bytes), what it wrote (write_bytes) and
 * its time in those calls (mpi_s). Collective. */
static gboolean
print_run_summary (AiryResult *result, const char *output, guint n_devices_all, double write_s, GError **error)
{
  g_autofree char *out_json = g_strescape (output, NULL);
  /* taken before the gathering, which moves bytes too */
  guint64 mine[3] = { ranks->moved_bytes, written_bytes, (guint64) ranks->comm_us };
  g_autofree guint64 *all = g_new0 (guint64, 3 * ranks->size);
  g_autoptr(GString) s = g_string_new (NULL);
  guint i;

  for (i = 0; i < 3; i++)
    if (!gather_per_rank (mine[i], all + i * ranks->size, error))
      return FALSE;
  if (!is_root ())
    return TRUE;
  g_string_printf (s, "{\"output\": \"%s\", \"planes\": %u, \"height\": %u, \"width\": %u, \"backend\": \"%s\", "
                   "\"ranks\": %u, \"devices\": %u, \"devices_per_rank\": %u, \"threads\": %u, \"seconds\": %.6f, "
                   "\"reduce_s\": %.6f, \"write_s\": %.6f, \"peak_rss_bytes\": %" G_GUINT64_FORMAT,
                   out_json, result->n_planes, result->stack->height, result->stack->width, result->backend,
                   result->ranks, n_devices_all, result->n_devices, result->threads, result->seconds,
                   result->reduce_s, write_s, peak_rss_bytes ());
  append_list (s, "comm_bytes", all, 1, "%.0f");
  append_list (s, "write_bytes", all + ranks->size, 1, "%.0f");
  append_list (s, "mpi_s", all + 2 * ranks->size, 1e-6, "%.6f");
  g_print ("%s}\n", s->str);
  return TRUE;
}

/* More ranks than planes (a job asking for more tasks than the run
 * splits into): the last ranks idle; said once, by rank 0 */
static void
warn_idle_ranks (AirySystem *system, gboolean chunks_given)
{
  guint nz = 0;

  airy_system_get_z (system, &nz);
  if (ranks->size > nz && !chunks_given && is_root ())
    g_printerr (_("airy-sim: warning: %u ranks for a run of %u planes: %u rank(s) have no plane to compute; a run "
                  "splits its z planes over the ranks, so give at most %u (mpirun -np, or the job's --ntasks)\n"),
                ranks->size, nz, ranks->size - nz, nz);
}

static gboolean
agree_on_run (AirySystem *system, GArray *chunks, const char *output, const char *psf_out, const char *png_out,
              const char *format_arg, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  guint i;

  json_builder_begin_object (b);
  describe_system (b, system);
  json_builder_set_member_name (b, "planes");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "--chunks");
  if (chunks->len == 0)
    json_builder_add_null_value (b);
  else
    {
      json_builder_begin_array (b);
      for (i = 0; i < chunks->len; i++)
        json_builder_add_int_value (b, g_array_index (chunks, guint, i));
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "outputs");
  json_builder_begin_object (b);
  describe_output (b, "-o", output);
  describe_output (b, "--psf-out", psf_out);
  describe_output (b, "--png", png_out);
  describe_option (b, "--format", format_arg);
  json_builder_end_object (b);
  return ranks_agree_on (b, error);
}

int
cmd_run (int argc, char **argv)
{
  int status;
  g_autofree char *output = NULL, *psf_out = NULL, *png_out = NULL, *backend = NULL;
  g_autofree char *devices_arg = NULL, *preset = NULL, *format_arg = NULL, *chunks_arg = NULL;
  g_autofree char *channels_arg = NULL;
  gboolean per_wavelength = FALSE;
  AiryTiffFormat tiff_format = AIRY_TIFF_AUTO;
  int threads = 0;
  gboolean quiet = FALSE, json = FALSE;
  const SimOption options_table[] = {
    { "output", 'o', SIM_OPTION_STRING, &output },
    { "psf-out", 0, SIM_OPTION_STRING, &psf_out },
    { "png", 0, SIM_OPTION_STRING, &png_out },
    { "backend", 0, SIM_OPTION_STRING, &backend },
    { "devices", 0, SIM_OPTION_STRING, &devices_arg },
    { "threads", 0, SIM_OPTION_INT, &threads },
    { "preset", 0, SIM_OPTION_STRING, &preset },
    { "quiet", 'q', SIM_OPTION_FLAG, &quiet },
    { "format", 0, SIM_OPTION_STRING, &format_arg },
    { "chunks", 0, SIM_OPTION_STRING, &chunks_arg },
    { "json", 0, SIM_OPTION_FLAG, &json },
    { "channels", 0, SIM_OPTION_STRING, &channels_arg },
    { NULL }
  };
  /* the outputs' suffixes: the format table's */
  const char *const *stacks = stack_suffixes ();
  const char *const *png = airy_image_format_lookup ("PNG")->suffixes;
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  g_autoptr(GArray) devices = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) chunks = g_array_new (FALSE, FALSE, sizeof (guint));
  AiryRunOptions options = { 0 };
  double write_s = 0;
  Progress progress = { isatty (STDERR_FILENO), g_get_monotonic_time (), FALSE };

  if ((status = parse_command_line ("run", options_table, &argc, &argv)) != EXIT_OK)
    return status;
  if ((argc != 2 && preset == NULL) || (argc != 1 && preset != NULL))
    return usage_error (_("run: give one system file (or --preset NAME)"));
  if (output == NULL)
    return usage_error (_("run: give the output file with -o OUT.tif (or OUT.ome.zarr)"));
  if ((status = check_threads_backend (threads, backend)) != EXIT_OK)
    return status;
  if (format_arg && !parse_tiff_format (format_arg, &tiff_format))
    return usage_error ("--format: must be one of imagej, ome, bigtiff, got \"%s\"", format_arg);
  if (channels_arg && g_strcmp0 (channels_arg, "wavelength") != 0 && g_strcmp0 (channels_arg, "none") != 0)
    return usage_error ("--channels: must be one of wavelength, none, got \"%s\"", channels_arg);
  per_wavelength = g_strcmp0 (channels_arg, "wavelength") == 0;
  if (per_wavelength && (tiff_format == AIRY_TIFF_OME
                         || (tiff_format == AIRY_TIFF_AUTO && airy_tiff_format_for_path (output) == AIRY_TIFF_OME)))
    return usage_error (_("--channels wavelength: the channels are written as an ImageJ hyperstack (.tif), "
                          "not as OME-TIFF"));
  if (per_wavelength && ranks->size > 1)
    return usage_error (_("--channels wavelength: needs a run in one process, got %u ranks"), ranks->size);
  if (format_arg && (is_store_output (output) || (psf_out && is_store_output (psf_out))))
    return usage_error (_("--format: chooses the kind of TIFF, and %s is an OME-Zarr store"),
                        is_store_output (output) ? output : psf_out);
  if (per_wavelength && is_store_output (output))
    return usage_error (_("--channels wavelength: the channels are written as an ImageJ hyperstack (.tif), "
                          "not as OME-Zarr"));
  if (!check_output_path ("-o", output, stacks, &error)
      || (psf_out && !check_output_path ("--psf-out", psf_out, stacks, &error))
      || (png_out && !check_output_path ("--png", png_out, png, &error))
      || (devices_arg && !parse_devices (devices_arg, devices, &error))
      || (chunks_arg && !parse_chunks (chunks_arg, chunks, &error))
      || !check_environment (&error))
    return ranks_fail (error);
  if (chunks_arg && ranks->size > 1 && chunks->len != ranks->size)
    {
      g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--chunks: give one number of planes per rank (%u), got %u"), ranks->size, chunks->len);
      return ranks_fail (error);
    }
  {
    const NamedFile outputs[] = { { "-o", output }, { "--psf-out", psf_out }, { "--png", png_out } };
    const NamedFile system_file = { _("the system file"), preset ? NULL : argv[1] };

    if (!check_outputs (outputs, G_N_ELEMENTS (outputs), &system_file, 1, &error))
      return ranks_fail (error);

    system = load_system (preset ? NULL : argv[1], preset, &error);
    if (system == NULL || !check_outputs_against_system (outputs, G_N_ELEMENTS (outputs), system, &error))
      return ranks_fail (error);
  }
  /* spectrum.channels asks for them too, unless --channels none */
  if (channels_arg == NULL && airy_system_get_channels (system))
    {
      if (ranks->size > 1 || tiff_format == AIRY_TIFF_OME || is_store_output (output)
          || (tiff_format == AIRY_TIFF_AUTO && airy_tiff_format_for_path (output) == AIRY_TIFF_OME))
        {
          g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("spectrum.channels: one channel per wavelength needs an ImageJ .tif and one process "
                         "(or give --channels none)"));
          return ranks_fail (error);
        }
      per_wavelength = TRUE;
    }
  /* every rank runs this system into these files, split the same way */
  if (ranks->size > 1 && !agree_on_run (system, chunks, output, psf_out, png_out, format_arg, &error))
    return ranks_failed (error);
  warn_idle_ranks (system, chunks->len > 0);
  options.backend = backend;
  options.devices = devices->len ? (guint *) devices->data : NULL;
  options.n_devices = devices->len;
  options.threads = (guint) threads;
  options.keep_psf = psf_out != NULL;
  options.per_wavelength = per_wavelength;
  options.comm = ranks;
  if (chunks->len > 0 && ranks->size > 1)
    options.rank_planes = (guint *) chunks->data;
  else if (chunks->len > 0)
    {
      options.chunks = (guint *) chunks->data;
      if (devices->len == 0)
        {
          /* without --devices a run has one device */
          g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--chunks: give one number of planes per device (--devices), got %u for 1 device"),
                       chunks->len);
          return fail (error);
        }
      if (devices->len != chunks->len)
        {
          g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--chunks: give one number of planes per device (--devices), got %u for %u"),
                       chunks->len, devices->len);
          return fail (error);
        }
    }
  /* progress from rank 0 only */
  result = airy_run (system, &options, quiet || !is_root () ? NULL : on_progress, &progress, NULL, &error);
  if (progress.shown)
    fprintf (stderr, "\n");
  if (result == NULL)
    return ranks_failed (error);
  if (is_root ())
    print_warnings (result->warnings);
  {
    g_autoptr(GPtrArray) write_warnings = g_ptr_array_new_with_free_func (g_free);
    AiryTiffWriteOptions wo = { tiff_format, write_warnings, 0 };

    if (!write_outputs (result, system, output, psf_out, png_out, &wo, &write_s, &error))
      return ranks_failed (error);
    print_warnings (write_warnings);
  }
  if (ranks->size > 1)
    {
      float n_devices_all = result->n_devices;

      /* the devices of all ranks (exact in a float) */
      if (!airy_comm_all_reduce (ranks, &n_devices_all, 1, AIRY_COMM_SUM, &error))
        return ranks_failed (error);
      if (json && !print_run_summary (result, output, (guint) n_devices_all, write_s, &error))
        return ranks_failed (error);
      if (is_root () && !quiet && !json)
        g_print (_("wrote %s: %u planes of %u × %u float32 — %.2f s on %u ranks (%s, %u devices in all)\n"),
                 output, result->stack_is_part ? result->n_planes : 1, result->stack->height,
                 result->stack->width, result->seconds, result->ranks, result->backend, (guint) n_devices_all);
      return EXIT_OK;
    }
  if (json)
    {
      if (!print_run_summary (result, output, result->n_devices, write_s, &error))
        return fail (error);
    }
  else if (!quiet && result->n_channels > 0 && result->n_channels != airy_system_get_spectrum (system)->n)
    /* a modality's parts: a confocal's excitation, detection and effective
     * PSF, an image scanning array's elements and their sum, STED's
     * effective, excitation and depletion PSFs */
    g_print (_("wrote %s: %u channels (the %s modality's parts) of %u × %u × %u float32, voxel %.4g × %.4g × %.4g µm "
               "— %.2f s on %s (%u device%s, %u threads)\n"),
             output, result->n_channels, airy_system_get_modality (system), result->stack->depth,
             result->stack->height, result->stack->width, result->stack->dx, result->stack->dy, result->stack->dz,
             result->seconds, result->backend, result->n_devices, result->n_devices == 1 ? "" : "s", result->threads);
  else if (!quiet && result->n_channels > 0)
    g_print (_("wrote %s: %u channels (one per wavelength) of %u × %u × %u float32, voxel %.4g × %.4g × %.4g µm "
               "— %.2f s on %s (%u device%s, %u threads)\n"),
             output, result->n_channels, result->stack->depth, result->stack->height, result->stack->width,
             result->stack->dx, result->stack->dy, result->stack->dz, result->seconds,
             result->backend, result->n_devices, result->n_devices == 1 ? "" : "s", result->threads);
  else if (!quiet)
    g_print (_("wrote %s: %u × %u × %u float32, voxel %.4g × %.4g × %.4g µm — %.2f s on %s (%u device%s, %u threads)\n"),
             output, result->stack->depth, result->stack->height, result->stack->width,
             result->stack->dx, result->stack->dy, result->stack->dz, result->seconds,
             result->backend, result->n_devices, result->n_devices == 1 ? "" : "s", result->threads);
  return EXIT_OK;
}

