/* airy-sim: runs Airy system files headless (DESIGN §6).
 * Exit status: 0 success, 1 run failure, 2 bad input or usage. */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "airy.h"

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

static void
print_help (void)
{
  g_print (_("Usage:\n"
             "  airy-sim run SYSTEM.json -o OUT.tif [OPTIONS]   compute a PSF stack or an image\n"
             "  airy-sim run --preset NAME -o OUT.tif [OPTIONS]\n"
             "  airy-sim validate SYSTEM.json                  check a system file, print warnings\n"
             "  airy-sim preset NAME                           print a preset's JSON (--list: names)\n"
             "  airy-sim info [--elements]                     backends, devices, modules, elements\n"
             "  airy-sim --version | --help\n"
             "\n"
             "Run options:\n"
             "  -o, --output FILE.tif     output: float32 TIFF stack with voxel size (ImageJ)\n"
             "  --psf-out FILE.tif        imaging: also write the PSF stack\n"
             "  --png FILE.png            also write the middle plane as a colormapped PNG\n"
             "  --backend cpu|cuda|auto   compute backend (default auto: CUDA if usable, else CPU)\n"
             "  --devices N|LIST          use N devices, or the listed ones (e.g. 0,2)\n"
             "  --threads N               host threads in all (default: all cores)\n"
             "  -q, --quiet               no progress line or summary\n"
             "\n"
             "Exit status: 0 success, 1 run failure, 2 bad input or usage.\n"));
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

      g_print ("  %-5s %s\n", b->ops->name, b->ops->description);
      if (b->module_path)
        g_print (_("        module: %s\n"), b->module_path);
      if (!b->available)
        {
          g_print (_("        unavailable: %s\n"), b->unavailable_reason);
          continue;
        }
      for (d = 0; d < b->ops->n_devices (b); d++)
        {
          AiryDeviceInfo info = { 0 };
          g_autofree char *mem = NULL;

          b->ops->device_info (b, d, &info);
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

          g_print ("  %-24s %s\n", ec->type_name, ec->title);
          pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &np);
          for (k = 0; k < np; k++)
            {
              g_autofree char *range = airy_param_spec_range_string (pspecs[k]);
              g_print ("      %-22s %s %s\n", pspecs[k]->name, g_param_spec_get_blurb (pspecs[k]), range);
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
  fprintf (stderr, "\r%s", "");
  fprintf (stderr, _("\rplane %u of %u (%.0f %%)"), done, total, 100.0 * done / total);
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

static int
cmd_run (int argc, char **argv)
{
  g_autofree char *output = NULL, *psf_out = NULL, *png_out = NULL, *backend = NULL;
  g_autofree char *devices_arg = NULL, *preset = NULL;
  int threads = 0;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, NULL, NULL },
    { "psf-out", 0, 0, G_OPTION_ARG_FILENAME, &psf_out, NULL, NULL },
    { "png", 0, 0, G_OPTION_ARG_FILENAME, &png_out, NULL, NULL },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend, NULL, NULL },
    { "devices", 0, 0, G_OPTION_ARG_STRING, &devices_arg, NULL, NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, NULL, NULL },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &preset, NULL, NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, NULL, NULL },
    { NULL }
  };
  static const char *const tif[] = { ".tif", ".tiff", NULL };
  static const char *const png[] = { ".png", NULL };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  g_autoptr(GArray) devices = g_array_new (FALSE, FALSE, sizeof (guint));
  AiryRunOptions options = { 0 };
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
  if (!check_output_path ("-o", output, tif, &error)
      || (psf_out && !check_output_path ("--psf-out", psf_out, tif, &error))
      || (png_out && !check_output_path ("--png", png_out, png, &error))
      || (devices_arg && !parse_devices (devices_arg, devices, &error)))
    return fail (error);

  system = load_system (preset ? NULL : argv[1], preset, &error);
  if (system == NULL)
    return fail (error);

  options.backend = backend;
  options.devices = devices->len ? (guint *) devices->data : NULL;
  options.n_devices = devices->len;
  options.threads = (guint) threads;
  options.keep_psf = psf_out != NULL;
  result = airy_run (system, &options, quiet ? NULL : on_progress, &progress, NULL, &error);
  if (progress.shown)
    fprintf (stderr, "\n");
  if (result == NULL)
    return fail (error);
  print_warnings (result->warnings);

  if (!airy_tiff_write (output, result->stack, &error))
    return fail (error);
  if (psf_out && result->psf && !airy_tiff_write (psf_out, result->psf, &error))
    return fail (error);
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
  if (!quiet)
    g_print (_("wrote %s: %u × %u × %u float32, voxel %.4g × %.4g × %.4g µm — %.2f s on %s (%u device%s, %u threads)\n"),
             output, result->stack->depth, result->stack->height, result->stack->width,
             result->stack->dx, result->stack->dy, result->stack->dz, result->seconds,
             result->backend, result->n_devices, result->n_devices == 1 ? "" : "s", result->threads);
  return EXIT_OK;
}

int
main (int argc, char **argv)
{
  const char *cmd;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
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
  if (g_str_equal (cmd, "info"))
    return cmd_info (argc - 1, argv + 1);
  if (g_str_equal (cmd, "preset"))
    return cmd_preset (argc - 1, argv + 1);
  if (g_str_equal (cmd, "validate"))
    return cmd_validate (argc - 1, argv + 1);
  if (g_str_equal (cmd, "run"))
    return cmd_run (argc - 1, argv + 1);
  return usage_error (_("unknown command “%s”"), cmd);
}
