/* airy-sim: runs Airy system files headless (DESIGN §6).
 * Exit status: 0 success, 1 run failure, 2 bad input or usage. */
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
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

enum { EXIT_OK = 0, EXIT_RUN = 1, EXIT_INPUT = 2 };

static int
fail (const GError *error)
{
  g_printerr ("airy-sim: %s\n", error->message);
  return airy_error_is_bad_input (error) ? EXIT_INPUT : EXIT_RUN;
}

static int
usage_error (const char *format, ...) G_GNUC_PRINTF (1, 2);

static int
usage_error (const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("airy-sim: %s\n", msg);
  g_printerr (_("Try “airy-sim --help”.\n"));
  return EXIT_INPUT;
}

/* sweeps and MPI runs: their own block, after the general help */
static void
print_help_ranks (void)
{
  g_print (_("\n"
             "Sweeps and runs over MPI ranks:\n"
             "  airy-sim sweep SYSTEM.json --set PATH=START:STOP:COUNT [--set …] -o DIR/\n"
             "                            one system per combination of values (PATH like\n"
             "                            elements[1].zernike-coefficients[0]; or PATH=V1,V2,…):\n"
             "                            DIR/NNNN.tif and DIR/index.csv naming each value\n"
             "  mpirun -np N airy-sim run|sweep …   the same over N ranks: a run splits its z planes\n"
             "                            (--chunks A,B,…: planes per rank), a sweep hands out systems\n"
             "  --json                    run: print a JSON summary (ranks, devices, times)\n"));
}

static void
print_help (void)
{
  g_print (_("Usage:\n"
             "  airy-sim run SYSTEM.json -o OUT.tif [OPTIONS]   compute a PSF stack or an image\n"
             "  airy-sim run --preset NAME -o OUT.tif [OPTIONS]\n"
             "  airy-sim validate SYSTEM.json                  check a system file, print warnings\n"
             "  airy-sim preset NAME                           print a preset's JSON (--list: names)\n"
             "  airy-sim info [--elements]                     backends, devices, modules, elements\n"
             "  airy-sim schema [--builtin]                    print the JSON Schema of system files\n"
             "  airy-sim bench [PRESET|SYSTEM.json] [--repeat N] [--warmup N] [--threads N]\n"
             "                 [--devices N|LIST] [--planes N] [--size N] [--backend B] [--json]\n"
             "                 [--write-dir DIR | --no-write]\n"
             "                                                 time runs against the bare FFT floor,\n"
             "                                                 and the TIFF write against a plain write\n"
             "  airy-sim --version | --help\n"
             "\n"
             "Run options:\n"
             "  -o, --output FILE.tif     output: float32 TIFF stack with voxel size (ImageJ);\n"
             "                            FILE.ome.tif: OME-TIFF with physical sizes and every plane's z\n"
             "  --format imagej|ome|bigtiff  TIFF flavour (default: by the name; bigtiff: ImageJ\n"
             "                            metadata in a BigTIFF with one IFD per plane)\n"
             "  --psf-out FILE.tif        imaging: also write the PSF stack\n"
             "  --png FILE.png            also write the middle plane as a colormapped PNG\n"
             "  --backend cpu|cuda|auto   compute backend (default auto: CUDA if usable, else CPU)\n"
             "  --devices N|LIST          use N devices, or the listed ones (e.g. 0,2)\n"
             "  --threads N               host threads in all (default: all cores)\n"
             "  -q, --quiet               no progress line or summary\n"
             "\n"
             "Exit status: 0 success, 1 run failure, 2 bad input or usage.\n"));
  g_print ("%s", _("\n"
                   "Fit a measured bead stack with the system's PSF (Zernike terms in waves, ANSI 3 … N\n"
                   "without 4; bead position, amplitude, background):\n"
                   "  airy-sim fit BEADS.tif --system SYSTEM.json -o FITTED.json [--zernike N] [--crop PX]\n"
                   "               [--report REPORT.json] [--residual RES.tif]\n"
                   "               [--objective auto|poisson|least-squares] [--gain G] [--offset O]\n"
                   "               [--restarts N] [--max-iterations N] [--seed N] [--threads N] [-q]\n"));
  print_help_ranks ();
}

/* ---- info ---- */

static int
cmd_info (int argc, char **argv)
{
  g_autoptr(GPtrArray) backends = airy_backend_list ();
  GPtrArray *errors = airy_modules_errors ();
  GPtrArray *loaded = airy_modules_loaded ();
  g_auto(GStrv) presets = airy_presets_list ();
  g_auto(GStrv) path = airy_modules_path ();
  gboolean elements = argc > 1 && g_str_equal (argv[1], "--elements");
  guint i, d;

  g_print ("Airy %s\n", airy_version_string ());
  g_print (_("Backends:\n"));
  for (i = 0; i < backends->len; i++)
    {
      AiryBackend *b = g_ptr_array_index (backends, i);

      g_print ("  %-5s %s\n", airy_backend_get_name (b), _(airy_backend_get_description (b)));
      if (airy_backend_get_module_path (b))
        g_print (_("        module: %s\n"), airy_backend_get_module_path (b));
      if (!airy_backend_is_available (b))
        {
          g_print (_("        unavailable: %s\n"), airy_backend_get_unavailable_reason (b));
          continue;
        }
      for (d = 0; d < airy_backend_n_devices (b); d++)
        {
          AiryDeviceInfo info = { 0 };
          g_autofree char *mem = NULL;

          airy_backend_device_info (b, d, &info);
          mem = airy_format_bytes (info.memory);
          g_print ("        device %u: %s — %s, %s\n", d, info.name, info.detail, mem);
          airy_device_info_clear (&info);
        }
    }
  if (airy_backend_lookup ("cuda") == NULL)
    g_print (_("  cuda  not installed: no CUDA device: the CUDA backend module was not found on the modules path\n"));
  g_print (_("Modules path: %s\n"), path[0] ? "" : "(empty)");
  for (i = 0; path[i]; i++)
    g_print ("  %s\n", path[i]);
  for (i = 0; i < loaded->len; i++)
    g_print (_("Module loaded: %s\n"), (char *) g_ptr_array_index (loaded, i));
  for (i = 0; i < errors->len; i++)
    g_print (_("Module failed: %s\n"), (char *) g_ptr_array_index (errors, i));
  g_print (_("Presets:"));
  for (i = 0; presets[i]; i++)
    g_print (" %s", presets[i]);
  g_print ("\n");
  if (elements)
    {
      g_autofree GType *types = NULL;
      guint n;

      types = airy_element_list_types (&n);
      g_print (_("Element types:\n"));
      for (i = 0; i < n; i++)
        {
          g_autoptr(GTypeClass) klass = g_type_class_ref (types[i]);
          AiryElementClass *ec = (AiryElementClass *) klass;
          g_autofree GParamSpec **pspecs = NULL;
          guint np, k;

          g_print ("  %-24s %s\n", ec->type_name, _(ec->title));
          pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &np);
          for (k = 0; k < np; k++)
            {
              g_autofree char *range = airy_param_spec_range_string (pspecs[k]);
              g_print ("      %-22s %s %s\n", pspecs[k]->name, _(g_param_spec_get_blurb (pspecs[k])), range);
            }
        }
    }
  return EXIT_OK;
}

/* ---- preset ---- */

static int
cmd_preset (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;

  if (argc < 2)
    return usage_error (_("preset: give a preset name, or --list"));
  if (g_str_equal (argv[1], "--list"))
    {
      g_auto(GStrv) names = airy_presets_list ();
      guint i;

      for (i = 0; names[i]; i++)
        g_print ("%s\n", names[i]);
      return EXIT_OK;
    }
  json = airy_preset_get_json (argv[1], &error);
  if (json == NULL)
    return fail (error);
  g_print ("%s", json);
  return EXIT_OK;
}

/* ---- schema ---- */

static int
cmd_schema (int argc, char **argv)
{
  g_autofree char *schema = NULL;

  if (argc > 2 || (argc == 2 && !g_str_equal (argv[1], "--builtin")))
    return usage_error (_("schema: the only option is --builtin (leave out the modules' element types)"));
  schema = airy_system_schema (argc == 1);
  /* bytes as they are (UTF-8), whatever the locale's charset */
  fputs (schema, stdout);
  fputc ('\n', stdout);
  return EXIT_OK;
}

/* ---- environment ---- */

/* Variables the engine reads: a wrong value is bad input, found before
 * anything runs. */
static gboolean
check_environment (GError **error)
{
  return airy_memory_budget_get (NULL, error) && airy_cpu_devices_from_env (NULL, error);
}

/* ---- validate ---- */

static void
print_warnings (GPtrArray *warnings)
{
  guint i;

  for (i = 0; warnings && i < warnings->len; i++)
    g_printerr (_("airy-sim: warning: %s\n"), (char *) g_ptr_array_index (warnings, i));
}

static AirySystem *
load_system (const char *file, const char *preset, GError **error)
{
  if (preset != NULL)
    return airy_system_new_from_preset (preset, error);
  return airy_system_new_from_file (file, error);
}

static int
cmd_validate (int argc, char **argv)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;

  if (argc != 2)
    return usage_error (_("validate: give one system file"));
  if (!check_environment (&error))
    return fail (error);
  system = load_system (argv[1], NULL, &error);
  if (system == NULL || !airy_system_validate (system, warnings, &error))
    return fail (error);
  print_warnings (warnings);
  g_print (_("%s: valid\n"), argv[1]);
  return EXIT_OK;
}

/* ---- run ---- */

typedef struct
{
  gboolean tty;
  gint64   start;
  gboolean shown;
} Progress;

static void
on_progress (guint done, guint total, gpointer user_data)
{
  Progress *p = user_data;
  gint64 now = g_get_monotonic_time ();

  /* a progress line only on a terminal, and only for runs longer than 1 s */
  if (!p->tty || now - p->start < G_USEC_PER_SEC)
    return;
  fputc ('\r', stderr);
  fprintf (stderr, _("plane %u of %u (%.0f %%)"), done, total, 100.0 * done / total);
  fflush (stderr);
  p->shown = TRUE;
}

static gboolean
parse_devices (const char *arg, GArray *devices, GError **error)
{
  g_auto(GStrv) parts = NULL;
  guint i;

  if (strchr (arg, ',') == NULL)
    {
      guint64 n;

      if (!g_ascii_string_to_unsigned (arg, 10, 1, 1024, &n, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       "--devices: must be a count in [1, 1024] or a list like 0,2, got \"%s\"", arg);
          return FALSE;
        }
      for (i = 0; i < n; i++)
        g_array_append_val (devices, i);
      return TRUE;
    }
  parts = g_strsplit (arg, ",", -1);
  for (i = 0; parts[i]; i++)
    {
      guint64 d;

      if (*parts[i] == '\0')
        continue;
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, 1023, &d, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       "--devices: \"%s\" is not a device index in [0, 1023]", parts[i]);
          return FALSE;
        }
      g_array_append_val (devices, (guint) { d });
    }
  return TRUE;
}

static gboolean
check_output_path (const char *option, const char *path, const char *const *suffixes, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *lower = g_ascii_strdown (path, -1);
  gboolean suffix_ok = FALSE;
  guint i;

  for (i = 0; suffixes[i]; i++)
    suffix_ok |= g_str_has_suffix (lower, suffixes[i]);
  if (!suffix_ok)
    {
      g_autofree char *list = g_strjoinv (" or ", (char **) suffixes);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   "%s: %s must end in %s", option, path, list);
      return FALSE;
    }
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   "%s: the folder %s does not exist", option, dir);
      return FALSE;
    }
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   "%s: %s is a folder", option, path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_tiff_format (const char *arg, AiryTiffFormat *format)
{
  static const struct { const char *name; AiryTiffFormat format; } names[] = {
    { "imagej", AIRY_TIFF_IMAGEJ }, { "ome", AIRY_TIFF_OME }, { "bigtiff", AIRY_TIFF_BIGTIFF },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (arg, names[i].name))
      {
        *format = names[i].format;
        return TRUE;
      }
  return FALSE;
}

/* ---- outputs and inputs ---- */

/* A name with its folder's symbolic links and ./.. resolved: two names of a
 * file that does not exist yet compare equal. */
static char *
canonical_name (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  char *real = realpath (dir, NULL);
  g_autofree char *canon = real ? g_strdup (real) : g_canonicalize_filename (dir, NULL);

  free (real);
  return g_build_filename (canon, base, NULL);
}

/* The same file: the same device and inode when both exist (hard and
 * symbolic links included), else the same canonical name. */
static gboolean
same_file (const char *a, const char *b)
{
  g_autofree char *ca = NULL, *cb = NULL;
  GStatBuf sa, sb;
  gboolean ea = g_stat (a, &sa) == 0, eb = g_stat (b, &sb) == 0;

  if (ea && eb)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  ca = canonical_name (a);
  cb = canonical_name (b);
  return g_str_equal (ca, cb);
}

typedef struct
{
  const char *role;
  const char *path;
} NamedFile;

/* Every output its own file, and none of them an input (a NULL path: an
 * option not given). */
static gboolean
check_outputs (const NamedFile *outputs, guint n_outputs, const NamedFile *inputs, guint n_inputs,
               GError **error)
{
  guint i, j;

  for (i = 0; i < n_outputs; i++)
    {
      if (outputs[i].path == NULL)
        continue;
      for (j = i + 1; j < n_outputs; j++)
        if (outputs[j].path && same_file (outputs[i].path, outputs[j].path))
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("%s and %s name the same file %s: give each output its own file"),
                         outputs[i].role, outputs[j].role, outputs[j].path);
            return FALSE;
          }
      for (j = 0; j < n_inputs; j++)
        if (inputs[j].path && same_file (outputs[i].path, inputs[j].path))
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("%s and %s name the same file %s: an output must not overwrite an input"),
                         outputs[i].role, inputs[j].role, outputs[i].path);
            return FALSE;
          }
    }
  return TRUE;
}

static gboolean
check_outputs_against_system (const NamedFile *outputs, guint n_outputs, AirySystem *system,
                              GError **error)
{
  g_autoptr(GPtrArray) files = airy_system_list_input_files (system);
  g_autofree NamedFile *inputs = g_new0 (NamedFile, MAX (files->len, 1));
  guint i;

  for (i = 0; i < files->len; i++)
    {
      AiryInputFile *f = g_ptr_array_index (files, i);
      inputs[i] = (NamedFile) { f->role, f->path };
    }
  return check_outputs (outputs, n_outputs, inputs, files->len, error);
}

/* ---- signals ---- */

/* SIGINT, SIGTERM or SIGHUP while a TIFF or PNG is being written: remove its
 * temporary, then die of the signal as without a handler. The main thread
 * may be inside write (), so this runs in the handler itself, with
 * async-signal-safe calls only (unlink, signal, raise). */
static void
on_fatal_signal (int sig)
{
  _airy_atomic_remove_live ();
  signal (sig, SIG_DFL);
  raise (sig);
}

static void
remove_temporaries_on_signals (void)
{
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  struct sigaction sa;
  guint i;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  sigemptyset (&sa.sa_mask);
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    sigaddset (&sa.sa_mask, sigs[i]);
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      struct sigaction old;

      /* nohup and friends ignore a signal on purpose: keep it ignored */
      if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
      sigaction (sigs[i], &sa, NULL);
    }
}

/* ---- ranks: one run over several processes (MPI) ----
 *
 * Under mpirun or srun every rank runs the same command; ranks is then
 * the MPI communicator (app/airy-mpi.c), else airy_comm_self (). Every
 * failure is agreed once (airy_comm_agree) so that all ranks stop with
 * the failing rank's message; the success path's next collective is an
 * agreement too, so a rank that failed early meets the others there. */

static AiryComm *ranks;

static gboolean
is_root (void)
{
  return ranks->rank == 0;
}

/* A failure before or after the run: agreed with the other ranks, then
 * reported by every rank; exit status 1 over several ranks. */
static int
ranks_fail (GError *error)
{
  g_autoptr(GError) agreed = error ? g_error_copy (error) : NULL;

  if (ranks->size == 1)
    return fail (error);
  airy_comm_agree (ranks, &agreed);
  g_printerr ("airy-sim: %s\n", agreed->message);
  return EXIT_RUN;
}

/* The same as ranks_fail for an error already agreed (airy_run's). */
static int
ranks_failed (const GError *error)
{
  if (ranks->size == 1)
    return fail (error);
  g_printerr ("airy-sim: %s\n", error->message);
  return EXIT_RUN;
}

/* --chunks A,B,…: planes per rank under MPI, per device in one process */
static gboolean
parse_chunks (const char *arg, GArray *chunks, GError **error)
{
  g_auto(GStrv) parts = g_strsplit (arg, ",", -1);
  guint i;

  for (i = 0; parts[i]; i++)
    {
      guint64 n;

      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, G_MAXUINT32, &n, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--chunks: \"%s\" is not a number of planes (a list like 40,40,48)"), parts[i]);
          return FALSE;
        }
      g_array_append_val (chunks, (guint) { n });
    }
  return TRUE;
}

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

/* Writes the PSF stack whose planes the ranks hold into one file: rank 0
 * lays the TIFF out (header, IFDs, the pixel block) in a temporary file
 * beside `path`, every rank writes its planes at their offsets (pwrite, on
 * a file system all ranks share), then rank 0 renames it into place. No
 * rank holds the whole stack; the bytes are those of a one-process run.
 * Collective: every rank calls it, and it agrees on every step. */
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
  g_autofree char *tmp = NULL;
  char tmp_name[4096] = "";
  float range[2] = { INFINITY, INFINITY };   /* min and −max: one MIN reduction */
  AiryTiffWriteOptions quiet_options;
  GError *local = NULL;
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
      fd = airy_atomic_begin (path, &tmp, &local);
      if (fd >= 0)
        {
          if (!airy_tiff_layout_write_frame (layout, fd, &local))
            airy_atomic_abort (tmp);
          close (fd);
          if (local == NULL && strlen (tmp) < sizeof tmp_name)
            g_strlcpy (tmp_name, tmp, sizeof tmp_name);
        }
    }
  if (!airy_comm_agree (ranks, &local))
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (!airy_comm_broadcast (ranks, tmp_name, sizeof tmp_name, 0, error))
    return FALSE;

  /* each rank its own planes */
  if (part_count > 0)
    {
      fd = g_open (tmp_name, O_WRONLY, 0);
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
  if (!airy_comm_agree (ranks, &local))
    {
      if (is_root ())
        airy_atomic_abort (tmp);
      g_propagate_error (error, local);
      return FALSE;
    }
  /* all planes are in: the file appears under its name */
  if (is_root ())
    airy_atomic_commit (tmp, path, &local);
  if (!airy_comm_agree (ranks, &local))
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

/* The outputs of a run over several ranks: the stack (in parallel) or
 * the image (rank 0), the PSF stack (in parallel), the PNG (the rank
 * holding the middle plane). Collective. */
static gboolean
write_outputs_ranks (AiryResult                 *result,
                     AirySystem                 *system,
                     const char                 *output,
                     const char                 *psf_out,
                     const char                 *png_out,
                     const AiryTiffWriteOptions *wo,
                     double                     *write_s,
                     GError                    **error)
{
  gint64 t0 = g_get_monotonic_time ();
  GError *local = NULL;
  AiryStack *png_stack = result->stack;
  guint png_plane = 0;

  if (result->stack_is_part)
    {
      if (!write_stack_ranks (output, result->stack, result->part_first, result->part_count, result->n_planes,
                              system, wo, error))
        return FALSE;
    }
  else
    {
      if (is_root ())
        airy_tiff_write_full (output, result->stack, wo, &local);
      if (!airy_comm_agree (ranks, &local))
        {
          g_propagate_error (error, local);
          return FALSE;
        }
    }
  if (psf_out && !write_stack_ranks (psf_out, result->psf, result->part_first, result->part_count,
                                     result->n_planes, system, wo, error))
    return FALSE;
  *write_s = (g_get_monotonic_time () - t0) / 1e6;

  if (png_out)
    {
      /* the middle plane of the whole stack, where it is */
      gboolean mine = is_root ();

      if (result->stack_is_part)
        {
          guint mid = result->n_planes / 2;

          mine = mid >= result->part_first && mid < result->part_first + result->part_count;
          png_plane = mid - result->part_first;
        }
      if (mine)
        {
          float *plane = airy_stack_plane (png_stack, png_plane);
          AiryStack view = *png_stack;
          float lo, hi;

          view.depth = 1;
          view.data = plane;
          airy_stack_min_max (&view, &lo, &hi);
          airy_png_write_colormapped (png_out, plane, png_stack->height, png_stack->width, png_stack->dx,
                                      AIRY_COLORMAP_INFERNO, lo, hi, &local);
        }
      if (!airy_comm_agree (ranks, &local))
        {
          g_propagate_error (error, local);
          return FALSE;
        }
    }
  return TRUE;
}

/* --json: one line on stdout (rank 0) that says what the run used. */
static void
print_run_summary (AiryResult *result, const char *output, guint n_devices_all, double write_s)
{
  g_autofree char *out_json = g_strescape (output, NULL);

  g_print ("{\"output\": \"%s\", \"planes\": %u, \"height\": %u, \"width\": %u, \"backend\": \"%s\", "
           "\"ranks\": %u, \"devices\": %u, \"devices_per_rank\": %u, \"threads\": %u, \"seconds\": %.6f, "
           "\"reduce_s\": %.6f, \"write_s\": %.6f}\n",
           out_json, result->n_planes, result->stack->height, result->stack->width, result->backend,
           result->ranks, n_devices_all, result->n_devices, result->threads, result->seconds,
           result->reduce_s, write_s);
}

static int
cmd_run (int argc, char **argv)
{
  g_autofree char *output = NULL, *psf_out = NULL, *png_out = NULL, *backend = NULL;
  g_autofree char *devices_arg = NULL, *preset = NULL, *format_arg = NULL, *chunks_arg = NULL;
  AiryTiffFormat tiff_format = AIRY_TIFF_AUTO;
  int threads = 0;
  gboolean quiet = FALSE, json = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, NULL, NULL },
    { "psf-out", 0, 0, G_OPTION_ARG_FILENAME, &psf_out, NULL, NULL },
    { "png", 0, 0, G_OPTION_ARG_FILENAME, &png_out, NULL, NULL },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend, NULL, NULL },
    { "devices", 0, 0, G_OPTION_ARG_STRING, &devices_arg, NULL, NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, NULL, NULL },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &preset, NULL, NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, NULL, NULL },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_arg, NULL, NULL },
    { "chunks", 0, 0, G_OPTION_ARG_STRING, &chunks_arg, NULL, NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, NULL, NULL },
    { NULL }
  };
  static const char *const tif[] = { ".tif", ".tiff", NULL };
  static const char *const png[] = { ".png", NULL };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  g_autoptr(GArray) devices = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) chunks = g_array_new (FALSE, FALSE, sizeof (guint));
  AiryRunOptions options = { 0 };
  double write_s = 0;
  gint64 t_write;
  Progress progress = { isatty (STDERR_FILENO), g_get_monotonic_time (), FALSE };

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_help_enabled (ctx, FALSE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error ("run: %s", error->message);
  if ((argc != 2 && preset == NULL) || (argc != 1 && preset != NULL))
    return usage_error (_("run: give one system file (or --preset NAME)"));
  if (output == NULL)
    return usage_error (_("run: give the output file with -o OUT.tif"));
  if (threads < 0 || threads > 4096)
    return usage_error ("--threads: must be in [0, 4096], got %d", threads);
  if (backend && !g_strv_contains ((const char *const[]) { "cpu", "cuda", "auto", NULL }, backend))
    return usage_error ("--backend: must be one of cpu, cuda, auto, got \"%s\"", backend);
  if (format_arg && !parse_tiff_format (format_arg, &tiff_format))
    return usage_error ("--format: must be one of imagej, ome, bigtiff, got \"%s\"", format_arg);
  if (!check_output_path ("-o", output, tif, &error)
      || (psf_out && !check_output_path ("--psf-out", psf_out, tif, &error))
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
  remove_temporaries_on_signals ();

  options.backend = backend;
  options.devices = devices->len ? (guint *) devices->data : NULL;
  options.n_devices = devices->len;
  options.threads = (guint) threads;
  options.keep_psf = psf_out != NULL;
  options.comm = ranks;
  if (chunks->len > 0 && ranks->size > 1)
    options.rank_planes = (guint *) chunks->data;
  else if (chunks->len > 0)
    {
      options.chunks = (guint *) chunks->data;
      if (devices->len == 0 || devices->len != chunks->len)
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
  if (ranks->size > 1)
    {
      g_autoptr(GPtrArray) write_warnings = g_ptr_array_new_with_free_func (g_free);
      AiryTiffWriteOptions wo = { tiff_format, write_warnings, 0 };
      float n_devices_all = result->n_devices;

      if (!write_outputs_ranks (result, system, output, psf_out, png_out, &wo, &write_s, &error))
        return ranks_failed (error);
      print_warnings (write_warnings);
      /* the devices of all ranks (exact in a float) */
      if (!airy_comm_all_reduce (ranks, &n_devices_all, 1, AIRY_COMM_SUM, &error))
        return ranks_failed (error);
      if (is_root () && json)
        print_run_summary (result, output, (guint) n_devices_all, write_s);
      else if (is_root () && !quiet)
        g_print (_("wrote %s: %u planes of %u × %u float32 — %.2f s on %u ranks (%s, %u devices in all)\n"),
                 output, result->stack_is_part ? result->n_planes : 1, result->stack->height,
                 result->stack->width, result->seconds, result->ranks, result->backend, (guint) n_devices_all);
      return EXIT_OK;
    }

  {
    g_autoptr(GPtrArray) write_warnings = g_ptr_array_new_with_free_func (g_free);
    AiryTiffWriteOptions wo = { tiff_format, write_warnings, 0 };

    t_write = g_get_monotonic_time ();
    if (!airy_tiff_write_full (output, result->stack, &wo, &error)
        || (psf_out && result->psf && !airy_tiff_write_full (psf_out, result->psf, &wo, &error)))
      return fail (error);
    write_s = (g_get_monotonic_time () - t_write) / 1e6;
    print_warnings (write_warnings);
  }
  if (png_out)
    {
      AiryStack *s = result->stack;
      float *plane = airy_stack_plane (s, s->depth / 2);
      AiryStack view = *s;
      float lo, hi;

      view.depth = 1;
      view.data = plane;
      airy_stack_min_max (&view, &lo, &hi);
      if (!airy_png_write_colormapped (png_out, plane, s->height, s->width, s->dx,
                                       AIRY_COLORMAP_INFERNO, lo, hi, &error))
        return fail (error);
    }
  if (json)
    print_run_summary (result, output, result->n_devices, write_s);
  else if (!quiet)
    g_print (_("wrote %s: %u × %u × %u float32, voxel %.4g × %.4g × %.4g µm — %.2f s on %s (%u device%s, %u threads)\n"),
             output, result->stack->depth, result->stack->height, result->stack->width,
             result->stack->dx, result->stack->dy, result->stack->dz, result->seconds,
             result->backend, result->n_devices, result->n_devices == 1 ? "" : "s", result->threads);
  return EXIT_OK;
}


/* ---- fit ---- */

static void
on_fit_progress (guint restart, guint iteration, double loss, gpointer user_data)
{
  Progress *p = user_data;

  if (!p->tty)
    return;
  fprintf (stderr, "\r");
  fprintf (stderr, _("fit: start %u, iteration %u, loss %.6g   "), restart + 1, iteration, loss);
  p->shown = TRUE;
}

static gboolean
write_text_file (const char *path, const char *text, GError **error)
{
  g_autoptr(GError) local = NULL;

  /* g_file_set_contents writes a temporary file and renames it */
  if (!g_file_set_contents (path, text, -1, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, "%s", local->message);
      return FALSE;
    }
  return TRUE;
}

static int
cmd_fit (int argc, char **argv)
{
  g_autofree char *system_file = NULL, *output = NULL, *report_out = NULL, *residual_out = NULL;
  g_autofree char *objective_arg = NULL, *gain_arg = NULL, *offset_arg = NULL;
  int zernike = 14, crop = 0, restarts = 0, threads = 0, seed = 0, max_iterations = 0;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "system", 0, 0, G_OPTION_ARG_FILENAME, &system_file, NULL, NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, NULL, NULL },
    { "report", 0, 0, G_OPTION_ARG_FILENAME, &report_out, NULL, NULL },
    { "residual", 0, 0, G_OPTION_ARG_FILENAME, &residual_out, NULL, NULL },
    { "zernike", 0, 0, G_OPTION_ARG_INT, &zernike, NULL, NULL },
    { "crop", 0, 0, G_OPTION_ARG_INT, &crop, NULL, NULL },
    { "objective", 0, 0, G_OPTION_ARG_STRING, &objective_arg, NULL, NULL },
    { "gain", 0, 0, G_OPTION_ARG_STRING, &gain_arg, NULL, NULL },
    { "offset", 0, 0, G_OPTION_ARG_STRING, &offset_arg, NULL, NULL },
    { "restarts", 0, 0, G_OPTION_ARG_INT, &restarts, NULL, NULL },
    { "max-iterations", 0, 0, G_OPTION_ARG_INT, &max_iterations, NULL, NULL },
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed, NULL, NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, NULL, NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, NULL, NULL },
    { NULL }
  };
  static const char *const json[] = { ".json", NULL };
  static const char *const tif[] = { ".tif", ".tiff", NULL };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AirySystem) fitted = NULL;
  g_autoptr(AiryStack) beads = NULL;
  g_autoptr(AiryFitResult) res = NULL;
  g_autofree char *report = NULL;
  AiryFitOptions options;
  Progress progress = { isatty (STDERR_FILENO), g_get_monotonic_time (), FALSE };
  guint i;

  airy_fit_options_init (&options);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_help_enabled (ctx, FALSE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error ("fit: %s", error->message);
  if (argc != 2)
    return usage_error (_("fit: give one bead stack (TIFF)"));
  if (system_file == NULL)
    return usage_error (_("fit: give the system with --system SYSTEM.json"));
  if (output == NULL)
    return usage_error (_("fit: give the fitted system's file with -o FITTED.json"));
  if (zernike < 3 || zernike > 65)
    return usage_error ("--zernike: must be in [3, 65], got %d", zernike);
  if (crop < 0 || crop > 65536)
    return usage_error ("--crop: must be in [0, 65536], got %d", crop);
  if (restarts < 0 || restarts > 100)
    return usage_error ("--restarts: must be in [0, 100], got %d", restarts);
  if (max_iterations < 0 || max_iterations > 100000)
    return usage_error ("--max-iterations: must be in [0, 100000], got %d", max_iterations);
  if (threads < 0 || threads > 4096)
    return usage_error ("--threads: must be in [0, 4096], got %d", threads);
  if (seed < 0)
    return usage_error ("--seed: must be ≥ 0, got %d", seed);
  if (objective_arg && g_str_equal (objective_arg, "poisson"))
    options.objective = AIRY_FIT_OBJECTIVE_POISSON;
  else if (objective_arg && g_str_equal (objective_arg, "least-squares"))
    options.objective = AIRY_FIT_OBJECTIVE_LEAST_SQUARES;
  else if (objective_arg && !g_str_equal (objective_arg, "auto"))
    return usage_error ("--objective: must be one of auto, poisson, least-squares, got \"%s\"", objective_arg);
  if (gain_arg)
    {
      char *end = NULL;
      options.gain = g_ascii_strtod (gain_arg, &end);
      if (end == gain_arg || *end != '\0' || !(options.gain > 0) || !isfinite (options.gain))
        return usage_error ("--gain: must be a number > 0 (ADU per photon), got \"%s\"", gain_arg);
    }
  if (offset_arg)
    {
      char *end = NULL;
      options.offset = g_ascii_strtod (offset_arg, &end);
      if (end == offset_arg || *end != '\0' || !isfinite (options.offset))
        return usage_error ("--offset: must be a number (ADU), got \"%s\"", offset_arg);
    }
  if (!check_output_path ("-o", output, json, &error)
      || (report_out && !check_output_path ("--report", report_out, json, &error))
      || (residual_out && !check_output_path ("--residual", residual_out, tif, &error))
      || !check_environment (&error))
    return fail (error);
  {
    const NamedFile outputs[] = { { "-o", output }, { "--report", report_out }, { "--residual", residual_out } };
    const NamedFile inputs[] = { { _("the bead stack"), argv[1] }, { "--system", system_file } };

    if (!check_outputs (outputs, G_N_ELEMENTS (outputs), inputs, G_N_ELEMENTS (inputs), &error))
      return fail (error);
  }
  system = load_system (system_file, NULL, &error);
  if (system == NULL)
    return fail (error);
  beads = airy_image_read (argv[1], &error);
  if (beads == NULL)
    return fail (error);

  options.zernike_max = (guint) zernike;
  options.crop = (guint) crop;
  options.restarts = (guint) restarts;
  options.max_iterations = (guint) max_iterations;
  options.threads = (guint) threads;
  options.seed = (guint) seed;
  options.progress = quiet ? NULL : on_fit_progress;
  options.user_data = &progress;
  res = airy_fit_stack (system, beads, &options, NULL, &error);
  if (progress.shown)
    fprintf (stderr, "\n");
  if (res == NULL)
    return fail (error);
  print_warnings (res->warnings);

  fitted = airy_fit_result_apply (res, system, &error);
  report = airy_fit_result_to_json (res);
  if (fitted == NULL
      || (residual_out && !airy_tiff_write (residual_out, res->residual, &error))
      || (report_out && !write_text_file (report_out, report, &error))
      || !airy_system_save (fitted, output, &error))
    return fail (error);
  if (quiet)
    return EXIT_OK;
  g_print (_("fitted %s (%s, %u × %u pixels at x %u, y %u): %u iterations in %.2f s (%.1f ms each), loss %.6g\n"),
           argv[1], res->objective == AIRY_FIT_OBJECTIVE_POISSON ? "Poisson" : _("least squares"),
           res->window[2], res->window[3], res->window[0], res->window[1], res->iterations_total,
           res->seconds, 1e3 * res->seconds_per_iteration, res->loss);
  for (i = 0; i < res->n_terms; i++)
    g_print ("  Z%-3d %+.4f ± %.1e %s\n", res->indices[i], res->coefficients[i], res->uncertainties[i],
             _("waves"));
  g_print (_("  RMS %.4f waves, Strehl %.3f; bead at x %.4f, y %.4f, z %.4f µm; amplitude %.6g, background %.4g\n"),
           res->rms_waves, res->strehl, res->position[0], res->position[1], res->position[2],
           res->amplitude, res->background);
  g_print (_("wrote %s\n"), output);
  return EXIT_OK;
}

/* ---- sweep: many systems, one per combination of parameter values ---- */

typedef struct
{
  char    *path;      /* e.g. elements[1].zernike-coefficients[0] */
  double  *values;
  guint    n;
} SweepParam;

static void
sweep_param_clear (gpointer data)
{
  SweepParam *p = data;

  g_free (p->path);
  g_free (p->values);
}

/* PATH=START:STOP:COUNT (COUNT evenly spaced values, the ends included) or
 * PATH=V1,V2,… */
static gboolean
parse_set (const char *arg, SweepParam *p, GError **error)
{
  const char *eq = strrchr (arg, '=');
  g_auto(GStrv) range = NULL;
  g_auto(GStrv) list = NULL;
  guint i;

  memset (p, 0, sizeof *p);
  if (eq == NULL || eq == arg || eq[1] == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--set: must be PATH=START:STOP:COUNT or PATH=V1,V2,…, got \"%s\""), arg);
      return FALSE;
    }
  p->path = g_strndup (arg, eq - arg);
  range = g_strsplit (eq + 1, ":", -1);
  if (g_strv_length (range) == 3)
    {
      double a, b;
      guint64 n;
      char *end_a, *end_b;

      a = g_ascii_strtod (range[0], &end_a);
      b = g_ascii_strtod (range[1], &end_b);
      if (end_a == range[0] || *end_a || end_b == range[1] || *end_b || !isfinite (a) || !isfinite (b)
          || !g_ascii_string_to_unsigned (range[2], 10, 1, 1000000, &n, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--set %s: START:STOP:COUNT needs two finite numbers and a count in [1, 1000000], "
                         "got \"%s\""), p->path, eq + 1);
          return FALSE;
        }
      p->n = (guint) n;
      p->values = g_new (double, p->n);
      for (i = 0; i < p->n; i++)
        /* weighted ends: exact at both, symmetric in between */
        p->values[i] = p->n == 1 ? a : ((p->n - 1 - i) * a + i * b) / (p->n - 1);
      return TRUE;
    }
  list = g_strsplit (eq + 1, ",", -1);
  p->n = g_strv_length (list);
  p->values = g_new (double, p->n);
  for (i = 0; i < p->n; i++)
    {
      char *end;

      p->values[i] = g_ascii_strtod (list[i], &end);
      if (end == list[i] || *end || !isfinite (p->values[i]))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--set %s: \"%s\" is not a finite number"), p->path, list[i]);
          return FALSE;
        }
    }
  return TRUE;
}

/* The node at a path like elements[1].zernike-coefficients[0] in the
 * system file's JSON: a number that is there (a sweep changes values, it
 * adds no keys). */
static JsonNode *
json_find_number (JsonNode *root, const char *path, const char *file, GError **error)
{
  g_auto(GStrv) keys = g_strsplit (path, ".", -1);
  JsonNode *node = root;
  guint i;

  for (i = 0; keys[i] && node; i++)
    {
      char *key = keys[i], *bracket = strchr (key, '[');
      g_autofree char *name = g_strndup (key, bracket ? (gsize) (bracket - key) : strlen (key));

      if (*name)
        node = JSON_NODE_HOLDS_OBJECT (node) ? json_object_get_member (json_node_get_object (node), name) : NULL;
      while (node && bracket)
        {
          char *end;
          guint64 k = g_ascii_strtoull (bracket + 1, &end, 10);

          if (end == bracket + 1 || *end != ']' || !JSON_NODE_HOLDS_ARRAY (node)
              || k >= json_array_get_length (json_node_get_array (node)))
            node = NULL;
          else
            node = json_array_get_element (json_node_get_array (node), (guint) k);
          bracket = node && end[1] == '[' ? end + 1 : NULL;
          if (node && end[1] != '\0' && end[1] != '[')
            node = NULL;
        }
    }
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || (json_node_get_value_type (node) != G_TYPE_DOUBLE && json_node_get_value_type (node) != G_TYPE_INT64))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--set %s: %s has no number there (a sweep sets numbers the file gives)"), path, file);
      return NULL;
    }
  return node;
}

/* Combination k: the value index of each parameter, the last fastest. */
static void
sweep_combination (GArray *params, guint k, guint *index)
{
  guint i;

  for (i = params->len; i-- > 0;)
    {
      SweepParam *p = &g_array_index (params, SweepParam, i);

      index[i] = k % p->n;
      k /= p->n;
    }
}

/* The system of combination k: the file's JSON with the values set. */
static AirySystem *
sweep_system (JsonNode *root, GArray *params, guint k, const char *file, GError **error)
{
  g_autoptr(JsonNode) copy = json_node_copy (root);
  g_autofree guint *index = g_new (guint, params->len);
  g_autofree char *dir = g_path_get_dirname (file);
  g_autofree char *json = NULL;
  guint i;

  sweep_combination (params, k, index);
  for (i = 0; i < params->len; i++)
    {
      SweepParam *p = &g_array_index (params, SweepParam, i);
      JsonNode *node = json_find_number (copy, p->path, file, error);
      double v = p->values[index[i]];

      if (node == NULL)
        return NULL;
      /* a whole number stays one where the file has one (indices, counts) */
      if (json_node_get_value_type (node) == G_TYPE_INT64 && v == floor (v) && fabs (v) < 9e15)
        json_node_set_int (node, (gint64) v);
      else
        json_node_set_double (node, v);
    }
  json = json_to_string (copy, FALSE);
  return airy_system_new_from_data (json, -1, dir, file, error);
}

static char *
csv_field (const char *s)
{
  g_autofree char *q = NULL;
  g_auto(GStrv) parts = NULL;

  if (strpbrk (s, ",\"\n") == NULL)
    return g_strdup (s);
  parts = g_strsplit (s, "\"", -1);
  q = g_strjoinv ("\"\"", parts);
  return g_strdup_printf ("\"%s\"", q);
}

/* index.csv: one row per system, its file and each parameter's value */
static gboolean
write_sweep_index (const char *dir, GArray *params, guint total, guint digits, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "index.csv", NULL);
  g_autofree guint *index = g_new (guint, params->len);
  g_autoptr(GString) csv = g_string_new ("index,file");
  g_autofree char *tmp = NULL;
  guint k, i;
  int fd;
  gboolean ok;

  for (i = 0; i < params->len; i++)
    {
      g_autofree char *f = csv_field (g_array_index (params, SweepParam, i).path);
      g_string_append_printf (csv, ",%s", f);
    }
  g_string_append_c (csv, '\n');
  for (k = 0; k < total; k++)
    {
      sweep_combination (params, k, index);
      g_string_append_printf (csv, "%u,%0*u.tif", k, (int) digits, k);
      for (i = 0; i < params->len; i++)
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          SweepParam *p = &g_array_index (params, SweepParam, i);
          double v = p->values[index[i]];

          /* the shortest form that reads back as the same double */
          g_ascii_formatd (buf, sizeof buf, "%.15g", v);
          if (g_ascii_strtod (buf, NULL) != v)
            g_ascii_formatd (buf, sizeof buf, "%.17g", v);
          g_string_append_printf (csv, ",%s", buf);
        }
      g_string_append_c (csv, '\n');
    }
  fd = airy_atomic_begin (path, &tmp, error);
  if (fd < 0)
    return FALSE;
  ok = write (fd, csv->str, csv->len) == (gssize) csv->len;
  if (close (fd) != 0 || !ok)
    {
      airy_atomic_abort (tmp);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (ENOSPC));
      return FALSE;
    }
  return airy_atomic_commit (tmp, path, error);
}

/* Every combination of the --set values as its own system, each in one
 * process, handed out one at a time from a counter all ranks share (the
 * next free rank takes the next system: dynamic load balancing); DIR gets
 * NNNN.tif per system and index.csv. Without MPI the same, in one
 * process. */
static int
cmd_sweep (int argc, char **argv)
{
  g_autofree char *output = NULL, *backend = NULL, *format_arg = NULL;
  g_auto(GStrv) sets = NULL;
  int threads = 0;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, NULL, NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, NULL, NULL },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend, NULL, NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, NULL, NULL },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_arg, NULL, NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, NULL, NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) params = g_array_new (FALSE, TRUE, sizeof (SweepParam));
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree float *done_by = NULL;
  AiryTiffFormat tiff_format = AIRY_TIFF_AUTO;
  AiryRunOptions options = { 0 };
  guint64 total = 1, k;
  guint i, digits, mine = 0;
  gint64 t0 = g_get_monotonic_time ();

  g_array_set_clear_func (params, sweep_param_clear);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_help_enabled (ctx, FALSE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error ("sweep: %s", error->message);
  if (argc != 2)
    return usage_error (_("sweep: give one system file"));
  if (output == NULL || sets == NULL)
    return usage_error (_("sweep: give the parameters with --set PATH=START:STOP:COUNT and the folder with -o DIR/"));
  if (threads < 0 || threads > 4096)
    return usage_error ("--threads: must be in [0, 4096], got %d", threads);
  if (backend && !g_strv_contains ((const char *const[]) { "cpu", "cuda", "auto", NULL }, backend))
    return usage_error ("--backend: must be one of cpu, cuda, auto, got \"%s\"", backend);
  if (format_arg && !parse_tiff_format (format_arg, &tiff_format))
    return usage_error ("--format: must be one of imagej, ome, bigtiff, got \"%s\"", format_arg);
  for (i = 0; sets[i]; i++)
    {
      SweepParam p;

      if (!parse_set (sets[i], &p, &error))
        {
          sweep_param_clear (&p);
          return ranks_fail (error);
        }
      g_array_append_val (params, p);
      total *= p.n;
      if (total > 1000000)
        {
          g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--set: at most 1000000 combinations in all, these give more"));
          return ranks_fail (error);
        }
    }
  if (!g_file_test (output, G_FILE_TEST_IS_DIR))
    {
      g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("-o: %s is not a folder"), output);
      return ranks_fail (error);
    }
  if (!check_environment (&error) || !json_parser_load_from_file (parser, argv[1], &error))
    return ranks_fail (error);
  for (i = 0; i < params->len; i++)
    if (!json_find_number (json_parser_get_root (parser), g_array_index (params, SweepParam, i).path, argv[1],
                           &error))
      return ranks_fail (error);
  /* every combination checked before any runs: a value out of its range
   * stops the sweep with the field's message and that combination */
  for (k = 0; k < total; k++)
    {
      g_autoptr(AirySystem) system = sweep_system (json_parser_get_root (parser), params, (guint) k, argv[1], &error);

      if (system == NULL || !airy_system_validate (system, NULL, &error))
        {
          g_prefix_error (&error, _("sweep system %u: "), (guint) k);
          return ranks_fail (error);
        }
    }
  for (digits = 4; total > 1 && pow (10, digits) < total; digits++)
    ;
  /* a rank that failed above meets the others here, before the counter */
  if (ranks->size > 1 && !airy_comm_agree (ranks, &error))
    return ranks_failed (error);
  if (!airy_comm_counter_reset (ranks, &error))
    return ranks_failed (error);

  options.backend = backend;
  options.threads = (guint) threads;
  while (TRUE)
    {
      g_autoptr(AirySystem) system = NULL;
      g_autoptr(AiryResult) result = NULL;
      g_autofree char *name = NULL, *path = NULL;
      AiryTiffWriteOptions wo = { tiff_format, NULL, 0 };

      if (!airy_comm_counter_next (ranks, &k, &error) || k >= total)
        break;
      system = sweep_system (json_parser_get_root (parser), params, (guint) k, argv[1], &error);
      if (system == NULL)
        break;
      result = airy_run (system, &options, NULL, NULL, NULL, &error);
      if (result == NULL)
        {
          g_prefix_error (&error, _("sweep system %u: "), (guint) k);
          break;
        }
      name = g_strdup_printf ("%0*u.tif", (int) digits, (guint) k);
      path = g_build_filename (output, name, NULL);
      if (!airy_tiff_write_full (path, result->stack, &wo, &error))
        break;
      mine++;
      if (!quiet && is_root () && isatty (STDERR_FILENO))
        {
          fputc ('\r', stderr);
          fprintf (stderr, _("system %u of %u"), (guint) k + 1, (guint) total);
        }
    }
  /* a failed rank stops taking systems; the others finish theirs and
   * every rank reports the lowest failing rank's message */
  if (error != NULL || ranks->size > 1)
    {
      if (ranks->size > 1 && !airy_comm_agree (ranks, &error))
        return ranks_failed (error);
      if (error != NULL)
        return fail (error);
    }
  done_by = g_new0 (float, ranks->size);
  done_by[ranks->rank] = mine;
  if (!airy_comm_all_reduce (ranks, done_by, ranks->size, AIRY_COMM_SUM, &error))
    return ranks_failed (error);
  if (is_root () && !write_sweep_index (output, params, (guint) total, digits, &error))
    return fail (error);
  if (!quiet && is_root ())
    {
      g_autoptr(GString) per = g_string_new (NULL);

      for (i = 0; i < ranks->size; i++)
        g_string_append_printf (per, "%s%u", i ? ", " : "", (guint) done_by[i]);
      if (isatty (STDERR_FILENO))
        fprintf (stderr, "\n");
      g_print (_("wrote %u systems and index.csv to %s in %.2f s on %u rank(s) (systems per rank: %s)\n"),
               (guint) total, output, (g_get_monotonic_time () - t0) / 1e6, ranks->size, per->str);
    }
  return EXIT_OK;
}

/* ---- bench ---- */

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static guint64
peak_rss_bytes (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (guint64) ru.ru_maxrss * 1024;
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

/* A plain write(2) of the result's bytes in 16 MiB pieces, as
 * `dd bs=16M` does, into a new file that is then removed. */
static gboolean
plain_write (const char *path, const void *data, guint64 n, GError **error)
{
  const guint8 *p = data;
  int fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: %s", path, g_strerror (e));
      return FALSE;
    }
  while (n > 0)
    {
      gssize w = write (fd, p, (gsize) MIN (n, (guint64) 16 << 20));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          int e = w < 0 ? errno : ENOSPC;
          close (fd);
          g_unlink (path);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, "%s: %s", path, g_strerror (e));
          return FALSE;
        }
      p += w;
      n -= (guint64) w;
    }
  close (fd);
  return TRUE;
}

static gboolean
bench_write (AirySystem *system, const AiryRunOptions *options, const char *dir, guint n,
             BenchWrite *out, GError **error)
{
  g_autoptr(GArray) tw = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) tp = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) te = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *name = g_strdup_printf ("airy-bench-%d.tif", (int) getpid ());
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
          if (tiff ? !airy_tiff_write (path, r->stack, error) : !plain_write (raw, r->stack->data, bytes, error))
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

/* The parallel write of a run's result over the ranks (the stack, each
 * rank its planes; a reduction's image by rank 0), n times, median. */
static gboolean
bench_write_ranks (AirySystem *system, const AiryRunOptions *options, const char *dir, guint n,
                   BenchWrite *out, GError **error)
{
  g_autoptr(GArray) tw = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) te = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *name = NULL, *path = NULL;
  guint32 pid = (guint32) getpid ();
  guint i;

  /* one name for all ranks: rank 0's */
  if (!airy_comm_broadcast (ranks, &pid, sizeof pid, 0, error))
    return FALSE;
  name = g_strdup_printf ("airy-bench-%u.tif", pid);
  path = g_build_filename (dir, name, NULL);
  g_strlcpy (out->dir, dir, sizeof out->dir);
  for (i = 0; i < n; i++)
    {
      g_autoptr(AiryResult) r = NULL;
      AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, NULL, 0 };
      double run_s = 0, write_s = 0;

      r = bench_run (system, options, &run_s, error);
      if (r == NULL || !write_outputs_ranks (r, system, path, NULL, NULL, &wo, &write_s, error))
        return FALSE;
      if (is_root ())
        g_unlink (path);
      g_array_append_val (tw, write_s);
      g_array_append_val (te, (double) { run_s + write_s });
    }
  out->write_s = median_of (tw);
  out->plain_s = 0;
  out->e2e_s = median_of (te);
  return TRUE;
}

static int
cmd_bench (int argc, char **argv)
{
  g_autofree char *backend = NULL, *devices_arg = NULL;
  int repeat = 5, warmup = 1, threads = 0, planes = 0, size = 0;
  gboolean json = FALSE, no_write = FALSE;
  g_autofree char *write_dir = NULL;
  GOptionEntry entries[] = {
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, NULL, NULL },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, NULL, NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, NULL, NULL },
    { "devices", 0, 0, G_OPTION_ARG_STRING, &devices_arg, NULL, NULL },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend, NULL, NULL },
    { "planes", 0, 0, G_OPTION_ARG_INT, &planes, NULL, NULL },
    { "size", 0, 0, G_OPTION_ARG_INT, &size, NULL, NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, NULL, NULL },
    { "write-dir", 0, 0, G_OPTION_ARG_FILENAME, &write_dir, NULL, NULL },
    { "no-write", 0, 0, G_OPTION_ARG_NONE, &no_write, NULL, NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GArray) devices = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) reduce_times = g_array_new (FALSE, FALSE, sizeof (double));
  BenchWrite wr = { 0 };
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
  int k;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_help_enabled (ctx, FALSE);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error ("bench: %s", error->message);
  if (argc > 2)
    return usage_error (_("bench: give at most one preset or system file"));
  if (repeat < 1 || repeat > 1000)
    return usage_error ("--repeat: must be in [1, 1000], got %d", repeat);
  if (warmup < 0 || warmup > 100)
    return usage_error ("--warmup: must be in [0, 100], got %d", warmup);
  if (threads < 0 || threads > 4096)
    return usage_error ("--threads: must be in [0, 4096], got %d", threads);
  if (planes < 0 || planes > 1000000)
    return usage_error ("--planes: must be in [1, 1000000], got %d", planes);
  if (size < 0 || size > 65536)
    return usage_error ("--size: must be in [1, 65536], got %d", size);
  if (backend && !g_strv_contains ((const char *const[]) { "cpu", "cuda", "auto", NULL }, backend))
    return usage_error ("--backend: must be one of cpu, cuda, auto, got \"%s\"", backend);
  if (devices_arg && !parse_devices (devices_arg, devices, &error))
    return ranks_fail (error);
  if (argc == 2)
    what = argv[1];
  if (g_str_has_suffix (what, ".json"))
    system = airy_system_new_from_file (what, &error);
  else
    system = airy_system_new_from_preset (what, &error);
  if (system == NULL)
    return ranks_fail (error);

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
  airy_system_get_shape (system, &h, &w);
  airy_system_get_z (system, &nz);
  n_threads = threads > 0 ? (guint) threads : g_get_num_processors ();

  options.backend = backend;
  options.devices = devices->len ? (guint *) devices->data : NULL;
  options.n_devices = devices->len;
  options.threads = n_threads;
  options.comm = ranks;

  /* cold: the first run in this process, FFTW planning included */
  cold = bench_run (system, &options, &t_cold, &error);
  if (cold == NULL)
    return ranks_failed (error);
  cold_backend = g_strdup (cold->backend);
  cold_devices = cold->n_devices;
  out_bytes = (guint64) (cold->stack_is_part ? cold->n_planes : cold->stack->depth) * cold->stack->height
              * cold->stack->width * 4;
  /* one result alive at a time, as in use */
  g_clear_pointer (&cold, airy_result_free);
  for (k = 0; k < warmup; k++)
    {
      double t;
      g_autoptr(AiryResult) r = bench_run (system, &options, &t, &error);
      if (r == NULL)
        return ranks_failed (error);
    }
  for (k = 0; k < repeat; k++)
    {
      double t;
      g_autoptr(AiryResult) r = bench_run (system, &options, &t, &error);
      if (r == NULL)
        return ranks_failed (error);
      g_array_append_val (times, t);
      g_array_append_val (reduce_times, r->reduce_s);
    }
  /* files: the TIFF write of one result, a plain write of as many bytes
   * to the same folder (the dd floor), and compute + write together */
  if (!no_write && ranks->size > 1)
    {
      if (!bench_write_ranks (system, &options, write_dir ? write_dir : g_get_tmp_dir (), MAX (3, MIN (repeat, 5)),
                              &wr, &error))
        return ranks_failed (error);
    }
  else if (!no_write && !bench_write (system, &options, write_dir ? write_dir : g_get_tmp_dir (),
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
  g_array_sort (times, compare_doubles);
  median = times->len % 2 ? g_array_index (times, double, times->len / 2)
                          : 0.5 * (g_array_index (times, double, times->len / 2 - 1)
                                   + g_array_index (times, double, times->len / 2));
  tmin = g_array_index (times, double, 0);
  tmax = g_array_index (times, double, times->len - 1);

  /* the floor: bare 2-D complex transforms of the same stack, same threads
   * (FFTW), or on the device with the backend's own FFT (cuFFT) */
  {
    g_autoptr(GArray) floors = g_array_new (FALSE, FALSE, sizeof (double));
    AiryBackend *b = airy_backend_lookup (cold_backend);
    gboolean device_floor = b && airy_backend_has_fft_floor (b) && !g_str_equal (cold_backend, "cpu");

    floor_kind = device_floor ? "cuFFT" : "FFTW";
    for (i = 0; i < (guint) MAX (3, MIN (repeat, 5)); i++)
      {
        double f = device_floor ? airy_backend_fft_floor (b, devices->len ? g_array_index (devices, guint, 0) : 0,
                                                   h, w, nz, &error)
                                : airy_bench_fft_floor (h, w, nz, n_threads);
        if (f < 0)
          return fail (error);
        g_array_append_val (floors, f);
      }
    g_array_sort (floors, compare_doubles);
    floor_s = g_array_index (floors, double, floors->len / 2);
  }
  if (ranks->size > 1 && !airy_comm_barrier (ranks, &error))
    return ranks_failed (error);

  if (json)
    g_print ("{\"system\": \"%s\", \"planes\": %u, \"height\": %u, \"width\": %u, "
             "\"backend\": \"%s\", \"devices\": %u, \"threads\": %u, \"repeat\": %d, "
             "\"warmup\": %d, \"cold_s\": %.6f, \"median_s\": %.6f, \"min_s\": %.6f, "
             "\"max_s\": %.6f, \"floor_s\": %.6f, \"floor\": \"%s\", \"ratio\": %.4f, \"planes_per_s\": %.2f, "
             "\"peak_rss_bytes\": %" G_GUINT64_FORMAT ", \"peak_device_bytes\": %" G_GUINT64_FORMAT ", "
             "\"output_bytes\": %" G_GUINT64_FORMAT ", \"write_s\": %.6f, \"plain_write_s\": %.6f, "
             "\"end_to_end_s\": %.6f, \"end_to_end_ratio\": %.4f, \"ranks\": %u, \"reduce_s\": %.6f}\n",
             what, nz, h, w, cold_backend, cold_devices, n_threads, repeat, warmup, t_cold,
             median, tmin, tmax, floor_s, floor_kind, median / floor_s, nz / median, peak, peak_device, out_bytes,
             wr.write_s, wr.plain_s, wr.e2e_s, wr.e2e_s > 0 ? wr.e2e_s / (median + wr.plain_s) : 0.0,
             ranks->size, median_of (reduce_times));
  else
    {
      g_autofree char *peak_s = airy_format_bytes (peak);
      g_autofree char *out_s = airy_format_bytes (out_bytes);

      g_print ("system      %s: %u planes of %u × %u%s\n", what, nz, h, w,
               airy_system_is_microscope (system) ? " (microscope, one image)" : "");
      g_print ("backend     %s, %u device%s, %u threads\n", cold_backend, cold_devices,
               cold_devices == 1 ? "" : "s", n_threads);
      g_print ("cold        %.1f ms (first run, planning included)\n", t_cold * 1e3);
      g_print ("run         median %.1f ms, min %.1f ms, max %.1f ms (%d runs after %d warm-up)\n",
               median * 1e3, tmin * 1e3, tmax * 1e3, repeat, warmup);
      g_print ("floor       %.1f ms (%u bare %s 2-D complex transforms of %u × %u, in place)\n",
               floor_s * 1e3, nz, floor_kind, h, w);
      g_print ("ratio       %.3f (run / floor)\n", median / floor_s);
      g_print ("throughput  %.1f planes/s\n", nz / median);
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

static int run_command (const char *cmd, int argc, char **argv);

int
main (int argc, char **argv)
{
  const char *cmd;

  setlocale (LC_ALL, "");
  /* AIRY_LOCALEDIR: the build tree's translations, for tests and development */
  bindtextdomain (GETTEXT_PACKAGE, g_getenv ("AIRY_LOCALEDIR") ? g_getenv ("AIRY_LOCALEDIR") : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  if (argc < 2)
    {
      print_help ();
      return EXIT_INPUT;
    }
  cmd = argv[1];
  if (g_str_equal (cmd, "--help") || g_str_equal (cmd, "-h") || g_str_equal (cmd, "help"))
    {
      print_help ();
      return EXIT_OK;
    }
  if (g_str_equal (cmd, "--version"))
    {
      g_print ("airy-sim %s\n", PACKAGE_VERSION);
      return EXIT_OK;
    }

  airy_init ();
  {
    int status;

    ranks = airy_comm_self ();
#if AIRY_HAVE_MPI
    if (airy_mpi_launched ())
      {
        g_autoptr(GError) error = NULL;

        ranks = airy_mpi_comm_new (&argc, &argv, &error);
        if (ranks == NULL)
          return fail (error);
        cmd = argv[1];
      }
#endif
    status = run_command (cmd, argc, argv);
    airy_comm_free (ranks);
    return status;
  }
}

static int
run_command (const char *cmd, int argc, char **argv)
{
  if (g_str_equal (cmd, "info"))
    return cmd_info (argc - 1, argv + 1);
  if (g_str_equal (cmd, "preset"))
    return cmd_preset (argc - 1, argv + 1);
  if (g_str_equal (cmd, "validate"))
    return cmd_validate (argc - 1, argv + 1);
  if (g_str_equal (cmd, "schema"))
    return cmd_schema (argc - 1, argv + 1);
  if (g_str_equal (cmd, "run"))
    return cmd_run (argc - 1, argv + 1);
  if (g_str_equal (cmd, "bench"))
    return cmd_bench (argc - 1, argv + 1);
  if (g_str_equal (cmd, "fit"))
    return cmd_fit (argc - 1, argv + 1);
  if (g_str_equal (cmd, "sweep"))
    return cmd_sweep (argc - 1, argv + 1);
  return usage_error (_("unknown command “%s”"), cmd);
}
