/* airy-sim: runs Airy system files headless (DESIGN §6). This file holds
 * the help, info, preset, schema and validate, the options and outputs
 * the commands share, the ranks and main; run, fit, sweep and bench live
 * in airy-sim-run.c, -fit.c, -sweep.c, -bench.c and -grad.c.
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
#include "airy-options-private.h"
#include "airy-sim-private.h"
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

int
fail (const GError *error)
{
  g_printerr ("airy-sim: %s\n", error->message);
  return airy_error_is_bad_input (error) ? EXIT_INPUT : EXIT_RUN;
}

int
usage_error (const char *format, ...) G_GNUC_PRINTF (1, 2);

int
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
             "  --resume                  sweep: keep the files in DIR/ that are this sweep's and\n"
             "                            complete (checked), run the rest\n"
             "  --index K                 sweep: system K alone (a job array's task)\n"
             "  --json                    run: print a JSON summary (ranks, devices, times);\n"
             "                            sweep: the systems skipped, run and failed\n"));
}

void
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
             "  --channels wavelength     PSF: one channel per wavelength (ImageJ hyperstack,\n"
             "                            channels=n; their sum is the default stack)\n"
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
                   "               [--restarts N] [--max-iterations N] [--seed N] [--threads N]\n"
                   "               [--backend cpu|cuda|auto] [--device N] [-q]\n"));
  g_print ("%s", _("\n"
                   "The gradient of a loss of the system's result (in GRAD.json; a mask's pixels as a\n"
                   "float32 TIFF next to it); without --vary, every differentiable number:\n"
                   "  airy-sim grad SYSTEM.json --loss l2:TARGET.tif|poisson:COUNTS.tif|region:MASK.tif\n"
                   "                [--vary PATH[,PATH...]] -o GRAD.json [--threads N]\n"
                   "  (PATH as in sweeps: elements[1].zernike-coefficients[0], elements[1].pixels)\n"));
  g_print ("%s", _("\n"
                   "Move the variables to minimise the loss (Adam or L-BFGS, each inside its parameter's\n"
                   "range and --bounds); Ctrl-C or SIGTERM writes the best system so far (exit 130, 143):\n"
                   "  airy-sim optimize SYSTEM.json --vary PATH[,PATH...] --loss SPEC -o OPTIMIZED.json\n"
                   "                    [--steps N] [--optimizer adam|lbfgs] [--lr X] [--bounds PATH=A:B]\n"
                   "                    [--report REPORT.json] [--log LOG.jsonl] [--threads N] [-q]\n"
                   "  airy-sim bench PRESET|SYSTEM.json --grad [--size N] [--planes N] [--json]\n"
                   "                    the forward against forward + gradient, and their memory\n"));
  g_print ("%s", _("\n"
                   "OME-Zarr stores (OME-NGFF 0.4, Zarr v2) and large samples:\n"
                   "  -o, --psf-out DIR.ome.zarr  a store: float32 chunks (a plane, or tiles of 1024²),\n"
                   "                            Blosc/zstd, 2× levels in y and x, µm and every plane's z;\n"
                   "                            over MPI each rank writes its planes' chunks\n"
                   "  sweep … --format ome-zarr  DIR/NNNN.ome.zarr\n"
                   "  a sample file (TIFF or OME-Zarr) larger than a quarter of the memory budget\n"
                   "  (AIRY_MEMORY_BUDGET) is read in batches of planes while it is imaged\n"));
  print_help_ranks ();
  g_print (_("\n"
             "Ray optics:\n"
             "  airy-sim rays SYSTEM.json      the paraxial ray transfer (ABCD) matrix of each lens\n"
             "                            and propagation, the system's, and its focal lengths\n"));
}

/* ---- info ---- */

static int
cmd_info (int argc, char **argv)
{
  g_autoptr(GPtrArray) backends = NULL;
  GPtrArray *errors = airy_modules_errors ();
  GPtrArray *loaded = airy_modules_loaded ();
  g_auto(GStrv) presets = airy_presets_list ();
  g_auto(GStrv) path = airy_modules_path ();
  gboolean elements = FALSE;
  const SimOption options[] = { { "elements", 0, SIM_OPTION_FLAG, &elements }, { NULL } };
  guint i, d;
  int status;

  if ((status = parse_command_line ("info", options, &argc, &argv)) != EXIT_OK)
    return status;
  if (argc > 1)
    return usage_error (_("info: takes no arguments, got “%s”"), argv[1]);
  backends = airy_backend_list ();

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
  gboolean list = FALSE;
  const SimOption options[] = { { "list", 0, SIM_OPTION_FLAG, &list }, { NULL } };
  int status;

  if ((status = parse_command_line ("preset", options, &argc, &argv)) != EXIT_OK)
    return status;
  if (list && argc > 1)
    return usage_error (_("preset: --list and a preset name (“%s”) exclude each other: give one of them"), argv[1]);
  if (argc > 2)
    return usage_error (_("preset: give one preset name, got “%s” and “%s”"), argv[1], argv[2]);
  if (!list && argc < 2)
    return usage_error (_("preset: give a preset name, or --list"));
  if (list)
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
  gboolean builtin = FALSE;
  const SimOption options[] = { { "builtin", 0, SIM_OPTION_FLAG, &builtin }, { NULL } };
  int status;

  if ((status = parse_command_line ("schema", options, &argc, &argv)) != EXIT_OK)
    return status;
  if (argc > 1)
    return usage_error (_("schema: the only option is --builtin (leave out the modules' element types)"));
  schema = airy_system_schema (!builtin);
  /* bytes as they are (UTF-8), whatever the locale's charset */
  fputs (schema, stdout);
  fputc ('\n', stdout);
  return EXIT_OK;
}

/* ---- environment ---- */

/* Variables the engine reads: a wrong value is bad input, found before
 * anything runs. */
gboolean
check_environment (GError **error)
{
  return airy_memory_budget_get (NULL, error) && airy_cpu_devices_from_env (NULL, error);
}

/* ---- validate ---- */

void
print_warnings (GPtrArray *warnings)
{
  guint i;

  for (i = 0; warnings && i < warnings->len; i++)
    g_printerr (_("airy-sim: warning: %s\n"), (char *) g_ptr_array_index (warnings, i));
}

AirySystem *
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
  const SimOption options[] = { { NULL } };
  int status;

  if ((status = parse_command_line ("validate", options, &argc, &argv)) != EXIT_OK)
    return status;
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

/* ---- rays ---- */

static int
cmd_rays (int argc, char **argv)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  const SimOption options[] = { { NULL } };
  GPtrArray *elements;
  double m[4];
  int status;
  guint i;

  if ((status = parse_command_line ("rays", options, &argc, &argv)) != EXIT_OK)
    return status;
  if (argc != 2)
    return usage_error (_("rays: give one system file"));
  system = load_system (argv[1], NULL, &error);
  if (system == NULL || !airy_system_validate (system, warnings, &error))
    return fail (error);
  elements = airy_system_get_elements (system);
  for (i = 0; i < elements->len; i++)
    if (airy_element_get_abcd (g_ptr_array_index (elements, i), m))
      g_print (_("elements[%u] %s: A %.10g  B %.10g µm  C %.10g /µm  D %.10g\n"), i,
               airy_element_get_type_name (g_ptr_array_index (elements, i)), m[0], m[1], m[2], m[3]);
  if (airy_system_get_abcd (system, m) == 0)
    {
      g_printerr (_("airy-sim: %s: no lens or propagation has a ray transfer matrix\n"), argv[1]);
      return EXIT_INPUT;
    }
  g_print (_("system: A %.10g  B %.10g µm  C %.10g /µm  D %.10g\n"), m[0], m[1], m[2], m[3]);
  if (m[2] == 0.0)
    g_print (_("afocal (C = 0)\n"));
  else
    g_print (_("effective focal length %.10g µm, back focal distance %.10g µm\n"),
             airy_abcd_focal_length (m), -m[0] / m[2]);
  return EXIT_OK;
}

/* ---- run ---- */

void
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

gboolean
parse_devices (const char *arg, GArray *devices, GError **error)
{
  GParamSpecInt *count = G_PARAM_SPEC_INT (_airy_option_spec ("devices"));
  GParamSpecInt *index = G_PARAM_SPEC_INT (_airy_option_spec ("device"));
  g_auto(GStrv) parts = NULL;
  guint i;

  if (strchr (arg, ',') == NULL)
    {
      guint64 n;

      if (!g_ascii_string_to_unsigned (arg, 10, count->minimum, count->maximum, &n, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       "--devices: must be a count in [%d, %d] or a list like 0,2, got \"%s\"", count->minimum,
                       count->maximum, arg);
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
      if (!g_ascii_string_to_unsigned (parts[i], 10, index->minimum, index->maximum, &d, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       "--devices: \"%s\" is not a device index in [%d, %d]", parts[i], index->minimum,
                       index->maximum);
          return FALSE;
        }
      g_array_append_val (devices, (guint) { d });
    }
  return TRUE;
}

gboolean
check_output_path (const char *option, const char *path, const char *const *suffixes, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *lower = g_ascii_strdown (path, -1);
  g_autofree char *target = NULL;
  const AiryImageFormat *format;
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
  format = airy_image_format_for_suffix (path);
  if (format && format->folder)
    {
      /* a store (a folder): nothing there yet, an empty folder or a store */
      g_autoptr(GDir) d = g_file_test (path, G_FILE_TEST_IS_DIR) ? g_dir_open (path, 0, NULL) : NULL;

      if (g_file_test (path, G_FILE_TEST_EXISTS) && !g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: %s exists and is not a folder; an %s store is a folder"), option, path, format->name);
          return FALSE;
        }
      if (d && g_dir_read_name (d) != NULL && !format->sniff_location (path))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: %s is a folder that is not an %s store; Airy replaces only a store"), option, path,
                       format->name);
          return FALSE;
        }
      return TRUE;
    }
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   "%s: %s is a folder", option, path);
      return FALSE;
    }
  /* a FIFO, a device …: refused before anything is computed (the writer
   * refuses it too); a symbolic link writes the file it leads to */
  target = _airy_atomic_resolve_output (path, error);
  if (target == NULL)
    {
      g_prefix_error (error, "%s: ", option);
      return FALSE;
    }
  return TRUE;
}

int
check_threads_backend (int threads, const char *backend)
{
  g_autoptr(GError) error = NULL;

  if (!_airy_option_check_int ("threads", threads, "--threads", &error)
      || (backend && !_airy_option_check_backend (backend, "--backend", &error)))
    return usage_error ("%s", error->message);
  return EXIT_OK;
}

/* The suffixes of a stack output (-o, --psf-out): those of the formats
 * that write stacks, from the format table (TIFF, OME-Zarr; not PNG). */
const char *const *
stack_suffixes (void)
{
  static gsize done;
  static const char **list;

  if (g_once_init_enter (&done))
    {
      g_autoptr(GPtrArray) all = g_ptr_array_new ();
      const char *names[] = { "TIFF", "OME-Zarr" };
      guint i, j;

      for (i = 0; i < G_N_ELEMENTS (names); i++)
        for (j = 0; airy_image_format_lookup (names[i])->suffixes[j]; j++)
          g_ptr_array_add (all, (gpointer) airy_image_format_lookup (names[i])->suffixes[j]);
      g_ptr_array_add (all, NULL);
      list = (const char **) g_ptr_array_free (g_steal_pointer (&all), FALSE);
      g_once_init_leave (&done, 1);
    }
  return list;
}

/* The process's peak resident memory, bytes: Linux's VmHWM of this
 * program's memory, else getrusage's ru_maxrss (which on Linux also
 * counts the process before its exec: a test that spawned it). */
guint64
peak_rss_bytes (void)
{
  g_autofree char *status = NULL;
  struct rusage ru;
  const char *p;

  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL) && (p = strstr (status, "VmHWM:")) != NULL)
    return g_ascii_strtoull (p + strlen ("VmHWM:"), NULL, 10) * 1024;
  getrusage (RUSAGE_SELF, &ru);
  return (guint64) ru.ru_maxrss * 1024;
}

/* Whether path names a store (a folder format: OME-Zarr). */
gboolean
is_store_output (const char *path)
{
  const AiryImageFormat *format = airy_image_format_for_suffix (path);

  return format != NULL && format->folder;
}

gboolean
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
char *
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

/* Every output its own file, and none of them an input (a NULL path: an
 * option not given). */
gboolean
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

gboolean
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

/* ---- ranks: one run over several processes (MPI) ----
 *
 * Under mpirun or srun every rank runs the same command; ranks is then
 * the MPI communicator (app/airy-mpi.c), else airy_comm_self (). Every
 * failure is agreed once (airy_comm_agree) so that all ranks stop with
 * the failing rank's message; the success path's next collective is an
 * agreement too, so a rank that failed early meets the others there. */

AiryComm *ranks;

gboolean
is_root (void)
{
  return ranks->rank == 0;
}

/* An error of several ranks, after an agreement: an agreed one (every
 * rank holds the failing rank's message) is printed once, by rank 0; one
 * the ranks could not agree on (the transport failed) by each rank. Exit
 * status 2 when every rank found bad input (the same input, found the
 * same way on each), else 1. */
static int
ranks_report (const GError *error)
{
  if (!ranks->agreed)
    {
      g_printerr ("airy-sim: %s\n", error->message);
      return EXIT_RUN;
    }
  if (is_root ())
    g_printerr ("airy-sim: %s\n", error->message);
  /* the others leave after it is out: a launcher ends the whole job when
   * one rank exits with a failure */
  airy_comm_barrier (ranks, NULL);
  return ranks->agreed_bad_input ? EXIT_INPUT : EXIT_RUN;
}

/* A failure before or after the run: agreed with the other ranks, then
 * reported once. */
int
ranks_fail (GError *error)
{
  g_autoptr(GError) agreed = error ? g_error_copy (error) : NULL;

  if (ranks->size == 1)
    return fail (error);
  airy_comm_agree (ranks, &agreed);
  return ranks_report (agreed);
}

/* The same as ranks_fail for an error already agreed (airy_run's), or one
 * of a collective that failed. */
int
ranks_failed (const GError *error)
{
  if (ranks->size == 1)
    return fail (error);
  return ranks_report (error);
}

/* --chunks A,B,…: planes per rank under MPI, per device in one process */
gboolean
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
    /* a fatal signal removes the temporaries of the outputs being written */
    _airy_atomic_remove_on_signals ();
    status = run_command (cmd, argc, argv);
    airy_comm_free (ranks);
    airy_shutdown ();
    return status;
  }
}

/* --help or -h among a command's arguments (before a "--") */
static gboolean
asks_for_help (int argc, char **argv)
{
  int i;

  for (i = 1; i < argc && !g_str_equal (argv[i], "--"); i++)
    if (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h"))
      return TRUE;
  return FALSE;
}

static int
run_command (const char *cmd, int argc, char **argv)
{
  /* airy-sim COMMAND --help: the help, once over ranks */
  if (asks_for_help (argc - 1, argv + 1))
    {
      if (is_root ())
        print_help ();
      return EXIT_OK;
    }
  if (g_str_equal (cmd, "info"))
    return cmd_info (argc - 1, argv + 1);
  if (g_str_equal (cmd, "preset"))
    return cmd_preset (argc - 1, argv + 1);
  if (g_str_equal (cmd, "validate"))
    return cmd_validate (argc - 1, argv + 1);
  if (g_str_equal (cmd, "rays"))
    return cmd_rays (argc - 1, argv + 1);
  if (g_str_equal (cmd, "schema"))
    return cmd_schema (argc - 1, argv + 1);
  if (g_str_equal (cmd, "run"))
    return cmd_run (argc - 1, argv + 1);
  if (g_str_equal (cmd, "bench"))
    return cmd_bench (argc - 1, argv + 1);
  if (g_str_equal (cmd, "grad"))
    return cmd_grad (argc - 1, argv + 1);
  if (g_str_equal (cmd, "optimize"))
    return cmd_optimize (argc - 1, argv + 1);
  if (g_str_equal (cmd, "fit"))
    return cmd_fit (argc - 1, argv + 1);
  if (g_str_equal (cmd, "sweep"))
    return cmd_sweep (argc - 1, argv + 1);
  return usage_error (_("unknown command “%s”"), cmd);
}
