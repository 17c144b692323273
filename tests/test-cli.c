/* airy-sim as a user runs it: exit status, messages, files. */
#include "config.h"

#include <sys/wait.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "airy-options-private.h"
#include "airy-test-util.h"

static char *tmpdir;

static void
sim_v (Run *r, char **envp, const char *first, va_list args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  const char *arg;
  int wait_status;

  g_ptr_array_add (argv, (char *) g_getenv ("AIRY_SIM"));
  for (arg = first; arg; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (char *) arg);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &r->out, &r->err, &wait_status, &error));
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128;
}

static void
sim (Run *r, const char *first, ...)
{
  va_list args;

  va_start (args, first);
  sim_v (r, NULL, first, args);
  va_end (args);
}

/* with one more variable in the environment */
static void
sim_with (Run *r, const char *variable, const char *value, const char *first, ...)
{
  g_auto(GStrv) env = g_environ_setenv (g_get_environ (), variable, value, TRUE);
  va_list args;

  va_start (args, first);
  sim_v (r, env, first, args);
  va_end (args);
}

static char *
write_file (const char *name, const char *contents)
{
  char *path = g_build_filename (tmpdir, name, NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static void
test_help_version (void)
{
  g_auto(Run) help = { 0 }, version = { 0 }, bad = { 0 }, none = { 0 };

  sim (&help, "--help", NULL);
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "airy-sim run SYSTEM.json -o OUT.tif"));
  sim (&version, "--version", NULL);
  g_assert_cmpint (version.status, ==, 0);
  g_assert_cmpstr (version.out, ==, "airy-sim " PACKAGE_VERSION "\n");
  sim (&bad, "frobnicate", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_nonnull (strstr (bad.err, "unknown command"));
  sim (&none, NULL);
  g_assert_cmpint (none.status, ==, 2);
  /* --help or -h after a command: the help, status 0 */
  {
    static const char *const cmds[] = { "run", "sweep", "bench", "fit" };
    guint i;

    for (i = 0; i < G_N_ELEMENTS (cmds); i++)
      {
        g_auto(Run) h = { 0 }, s = { 0 };

        sim (&h, cmds[i], "--help", NULL);
        g_assert_cmpint (h.status, ==, 0);
        g_assert_cmpstr (h.out, ==, help.out);
        g_assert_cmpstr (h.err, ==, "");
        sim (&s, cmds[i], "x.json", "-h", NULL);
        g_assert_cmpint (s.status, ==, 0);
        g_assert_cmpstr (s.out, ==, help.out);
      }
  }
}

static void
test_info (void)
{
  g_auto(Run) r = { 0 };

  sim (&r, "info", "--elements", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "cpu   CPU (FFTW single precision, threads)"));
  g_assert_nonnull (strstr (r.out, "device 0: CPU"));
  g_assert_nonnull (strstr (r.out, "objective-point-source"));
  g_assert_nonnull (strstr (r.out, "ring-mask"));
  g_assert_nonnull (strstr (r.out, "Presets: astigmatic brightfield-bead confocal depth-aberration imaging ism light-field light-sheet oil-vectorial polarization-microscope seed-imaging seed-widefield sim sted two-photon widefield"));
  /* with or without the module, no GPU here means "no CUDA device" */
  g_assert_nonnull (strstr (r.out, "no CUDA device"));
}

static void
test_preset (void)
{
  g_auto(Run) r = { 0 }, list = { 0 }, bad = { 0 };

  sim (&r, "preset", "seed-widefield", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"shape\": [1536, 1536]"));
  sim (&list, "preset", "--list", NULL);
  g_assert_cmpstr (list.out, ==, "astigmatic\nbrightfield-bead\nconfocal\ndepth-aberration\nimaging\nism\nlight-field\nlight-sheet\noil-vectorial\npolarization-microscope\nseed-imaging\nseed-widefield\nsim\nsted\ntwo-photon\nwidefield\n");
  sim (&bad, "preset", "nope", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_cmpstr (bad.err, ==, "airy-sim: preset: unknown preset \"nope\" "
                   "(known: astigmatic, brightfield-bead, confocal, depth-aberration, imaging, ism, light-field, "
                   "light-sheet, oil-vectorial, polarization-microscope, seed-imaging, seed-widefield, sim, sted, "
                   "two-photon, widefield)\n");
}

/* --channels wavelength: one channel per wavelength in an ImageJ
 * hyperstack (C = 2) that Airy and tifffile read back; the channels add up
 * to the plain run's stack. */
static void
test_run_channels (void)
{
  g_autofree char *path = write_file ("channels.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [1, 3]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.6},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  g_autofree char *split = g_build_filename (tmpdir, "channels.tif", NULL);
  g_autofree char *summed = g_build_filename (tmpdir, "summed.tif", NULL);
  g_autoptr(AiryStack) sum = NULL;
  g_autoptr(AiryStack) c0 = NULL;
  g_autoptr(AiryStack) c1 = NULL;
  AiryStack **c[2] = { &c0, &c1 };
  g_autoptr(GError) error = NULL;
  g_auto(Run) r = { 0 };
  g_auto(Run) bad = { 0 };
  g_auto(Run) ome = { 0 };
  g_auto(Run) plain = { 0 };
  gsize n, k;
  float lo, hi;
  double worst = 0;
  guint l;

  sim (&r, "run", path, "-o", split, "--channels", "wavelength", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "2 channels (one per wavelength) of 3 × 64 × 64"));
  sim (&plain, "run", path, "-o", summed, "-q", NULL);
  g_assert_cmpint (plain.status, ==, 0);
  sum = airy_tiff_read (summed, &error);
  g_assert_no_error (error);
  for (l = 0; l < 2; l++)
    {
      AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

      ro.channel = (int) l;
      *c[l] = airy_tiff_read_full (split, &ro, &error);
      g_assert_no_error (error);
      g_assert_cmpuint ((*c[l])->n_channels, ==, 2);
      g_assert_cmpuint ((*c[l])->channel, ==, l);
      g_assert_cmpuint ((*c[l])->depth, ==, 3);
      g_assert_cmpfloat_with_epsilon ((*c[l])->dz, 1.0, 1e-9);
      g_assert_cmpfloat_with_epsilon ((*c[l])->z0, -1.0, 1e-9);
    }
  n = (gsize) sum->depth * airy_stack_plane_size (sum);
  airy_stack_min_max (sum, &lo, &hi);
  for (k = 0; k < n; k++)
    worst = MAX (worst, fabs (c0->data[k] + c1->data[k] - sum->data[k]));
  g_assert_cmpfloat (worst, <=, 1e-6 * hi);
  /* the second wavelength holds 3/4 of the weight: most of the light */
  {
    double s0 = 0, s1 = 0;

    for (k = 0; k < n; k++)
      {
        s0 += c0->data[k];
        s1 += c1->data[k];
      }
    g_assert_cmpfloat (s1, >, 2.0 * s0);
  }

  /* napari's reader: ZCYX, C = 2 */
  if (g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      const char *argv[] = { "/usr/bin/python3", "-c",
        "import sys, tifffile\n"
        "with tifffile.TiffFile(sys.argv[1]) as t:\n"
        "    s = t.series[0]; m = t.imagej_metadata\n"
        "    print(s.axes, list(s.shape), m['channels'], m['slices'], m.get('hyperstack'))\n",
        split, NULL };
      g_autofree char *out = NULL, *err = NULL;
      int status;

      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                                   &status, &error));
      g_assert_no_error (error);
      if (strstr (err, "No module named 'tifffile'"))
        g_test_message ("tifffile is not installed: its check is left out");
      else
        g_assert_cmpstr (out, ==, "ZCYX [3, 2, 64, 64] 2 3 True\n");
    }

  /* spectrum.channels asks for the same; --channels none overrides it */
  {
    g_autofree char *flagged = write_file ("flagged.json",
      "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0},"
      " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [1, 3], \"channels\": true},"
      " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
      " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.6},"
      "  {\"type\": \"ff-lens\", \"f\": 50}]}");
    g_autofree char *flagged_tif = g_build_filename (tmpdir, "flagged.tif", NULL);
    g_autoptr(AiryStack) probe = NULL;
    AiryReadOptions first = AIRY_READ_OPTIONS_INIT;
    g_auto(Run) r1 = { 0 };
    g_auto(Run) r2 = { 0 };
    g_auto(Run) r3 = { 0 };

    sim (&r1, "run", flagged, "-o", flagged_tif, "-q", NULL);
    g_assert_cmpint (r1.status, ==, 0);
    first.channel = 0;
    probe = airy_tiff_probe (flagged_tif, &first, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (probe->n_channels, ==, 2);
    g_clear_pointer (&probe, airy_stack_free);
    sim (&r2, "run", flagged, "-o", flagged_tif, "-q", "--channels", "none", NULL);
    g_assert_cmpint (r2.status, ==, 0);
    probe = airy_tiff_probe (flagged_tif, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (MAX (probe->n_channels, 1), ==, 1);
    sim (&r3, "run", flagged, "-o", "flagged.ome.tif", NULL);
    g_assert_cmpint (r3.status, !=, 0);
    g_assert_nonnull (strstr (r3.err, "spectrum.channels: one channel per wavelength needs an ImageJ .tif"));
  }

  sim (&bad, "run", path, "-o", split, "--channels", "colour", NULL);
  g_assert_cmpint (bad.status, !=, 0);
  g_assert_nonnull (strstr (bad.err, "--channels: must be one of wavelength, none, got \"colour\""));
  sim (&ome, "run", path, "-o", "channels.ome.tif", "--channels", "wavelength", NULL);
  g_assert_cmpint (ome.status, !=, 0);
  g_assert_nonnull (strstr (ome.err, "--channels wavelength: the channels are written as an ImageJ hyperstack"));
}

static void
test_run_and_validate (void)
{
  g_autofree char *sys = write_file ("small.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 5},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  g_autofree char *out = g_build_filename (tmpdir, "small.tif", NULL);
  g_auto(Run) r = { 0 }, v = { 0 };
  g_autoptr(AiryStack) s = NULL;
  g_autoptr(GError) error = NULL;

  sim (&v, "validate", sys, NULL);
  g_assert_cmpint (v.status, ==, 0);
  g_assert_nonnull (strstr (v.out, "valid"));
  sim (&r, "run", sys, "-o", out, "--threads", "1", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "wrote "));
  s = airy_tiff_read (out, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->depth, ==, 5);
  g_assert_cmpfloat_with_epsilon (s->dz, 1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (s->dx, 50 * 0.5 / (64 * 1.0), 1e-6);
  g_unlink (out);
}

/* Options declared once (engine/airy-options.c): the refusals name the
 * declared ranges; a module's backend is chosen by its name. */
static void
test_declared_options (void)
{
  GParamSpecInt *threads = G_PARAM_SPEC_INT (_airy_option_spec ("threads"));
  GParamSpecInt *crop = G_PARAM_SPEC_INT (_airy_option_spec ("fit-crop"));
  g_autofree char *too_many = g_strdup_printf ("%d", threads->maximum + 1);
  g_autofree char *expect = g_strdup_printf ("airy-sim: --threads: must be in [%d, %d], got %d\n",
                                             threads->minimum, threads->maximum, threads->maximum + 1);
  g_autofree char *too_wide = g_strdup_printf ("%d", crop->maximum + 1);
  g_autofree char *expect_crop = g_strdup_printf ("airy-sim: --crop: must be in [%d, %d], got %d\n",
                                                  crop->minimum, crop->maximum, crop->maximum + 1);
  g_autofree char *sys = write_file ("module-backend.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 5},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  g_autofree char *cpu_out = g_build_filename (tmpdir, "backend-cpu.tif", NULL);
  g_autofree char *module_out = g_build_filename (tmpdir, "backend-module.tif", NULL);
  g_autofree char *a = NULL, *b = NULL;
  gsize na = 0, nb = 0;
  g_auto(Run) t = { 0 }, c = { 0 }, unknown = { 0 }, cpu = { 0 }, module = { 0 }, listed = { 0 };

  sim (&t, "run", sys, "-o", cpu_out, "--threads", too_many, NULL);
  g_assert_cmpint (t.status, ==, 2);
  g_assert_true (g_str_has_prefix (t.err, expect));
  sim (&c, "fit", "beads.tif", "--system", sys, "-o", "fitted.json", "--crop", too_wide, NULL);
  g_assert_cmpint (c.status, ==, 2);
  g_assert_true (g_str_has_prefix (c.err, expect_crop));

  /* the names come from the registry: the module's backend is one */
  sim_with (&unknown, "AIRY_BACKEND_PATH", g_getenv ("AIRY_TEST_BACKEND_DIR"), "run", sys, "-o", cpu_out,
            "--backend", "nope", NULL);
  g_assert_cmpint (unknown.status, ==, 2);
  g_assert_true (g_str_has_prefix (unknown.err,
                                   "airy-sim: --backend: must be one of cpu, test-host, cuda, auto, got \"nope\"\n"));
  sim_with (&listed, "AIRY_BACKEND_PATH", g_getenv ("AIRY_TEST_BACKEND_DIR"), "info", NULL);
  g_assert_nonnull (strstr (listed.out, "test-host"));
  sim (&cpu, "run", sys, "-o", cpu_out, "--threads", "1", "-q", NULL);
  g_assert_cmpint (cpu.status, ==, 0);
  sim_with (&module, "AIRY_BACKEND_PATH", g_getenv ("AIRY_TEST_BACKEND_DIR"), "run", sys, "-o", module_out,
            "--backend", "test-host", "--threads", "1", "-q", NULL);
  g_assert_null (strstr (module.err, "backend"));
  g_assert_cmpint (module.status, ==, 0);
  /* the same slots: the same bytes */
  g_assert_true (g_file_get_contents (cpu_out, &a, &na, NULL));
  g_assert_true (g_file_get_contents (module_out, &b, &nb, NULL));
  g_assert_cmpuint (na, ==, nb);
  g_assert_true (memcmp (a, b, na) == 0);
  g_unlink (cpu_out);
  g_unlink (module_out);
}

/* Formats declared once: the outputs' suffixes, the sweep's names, the
 * file filters come from the format table; the desktop file and the
 * metainfo announce every format's MIME type, generated from the table
 * (their sources hold a placeholder, not a list typed again). */
static void
test_format_table (void)
{
  const AiryImageFormat *const *f;
  g_autofree char *desktop_in = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "resources",
                                                  "io.github.airyoptics.Airy.desktop.in", NULL);
  g_autofree char *metainfo_in = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "resources",
                                                   "io.github.airyoptics.Airy.metainfo.xml.in", NULL);
  g_autofree char *desktop_path = g_build_filename (g_getenv ("G_TEST_BUILDDIR"), "..", "resources",
                                                    "io.github.airyoptics.Airy.desktop", NULL);
  g_autofree char *metainfo_path = g_build_filename (g_getenv ("G_TEST_BUILDDIR"), "..", "resources",
                                                     "io.github.airyoptics.Airy.metainfo.xml", NULL);
  g_autofree char *desktop = NULL, *metainfo = NULL, *expect = NULL, *list = NULL, *source = NULL;
  g_auto(Run) r = { 0 };
  guint n = 0;

  g_assert_true (g_file_get_contents (desktop_in, &source, NULL, NULL));
  g_assert_nonnull (strstr (source, "\nMimeType=@MIME_TYPES@\n"));
  g_clear_pointer (&source, g_free);
  g_assert_true (g_file_get_contents (metainfo_in, &source, NULL, NULL));
  g_assert_nonnull (strstr (source, "@MEDIATYPES@"));
  g_assert_null (strstr (source, "<mediatype>"));
  /* the built files (a build without the app has none) */
  if (!g_file_get_contents (desktop_path, &desktop, NULL, NULL)
      || !g_file_get_contents (metainfo_path, &metainfo, NULL, NULL))
    g_test_message ("no desktop file built: the MIME lists not checked");
  g_assert_true (desktop == NULL || strstr (desktop, "\nMimeType=application/x-airy-system+json;") != NULL);
  for (f = airy_image_formats (); *f; f++, n++)
    {
      g_autofree char *entry = g_strdup_printf (";%s;", (*f)->mime_type);
      g_autofree char *media = g_strdup_printf ("<mediatype>%s</mediatype>", (*f)->mime_type);

      g_assert_nonnull ((*f)->mime_type);
      g_assert_true (desktop == NULL || strstr (desktop, entry) != NULL);
      g_assert_true (metainfo == NULL || strstr (metainfo, media) != NULL);
      g_assert_true (airy_image_format_lookup ((*f)->name) == *f);
      /* the file formats write one piece, the whole stack; a folder
       * format (OME-Zarr) writes in pieces */
      g_assert_true (((*f)->n_pieces != NULL) == (*f)->folder);
      g_assert_true (((*f)->begin_pieces && (*f)->write_piece && (*f)->commit_pieces && (*f)->abort_pieces)
                     == (*f)->folder);
      g_assert_true (((*f)->sniff_location != NULL) == (*f)->folder);
    }
  g_assert_cmpuint (n, ==, 3);
  /* run -o: the suffixes of the stack formats, TIFF and OME-Zarr */
  list = g_strjoinv (" or ", (char **) airy_image_format_lookup ("TIFF")->suffixes);
  expect = g_strdup_printf ("airy-sim: -o: /tmp/x.png must end in %s or .ome.zarr or .zarr\n", list);
  sim (&r, "run", "--preset", "widefield", "-o", "/tmp/x.png", NULL);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_cmpstr (r.err, ==, expect);
  g_assert_cmpstr (expect, ==, "airy-sim: -o: /tmp/x.png must end in .tif or .tiff or .ome.zarr or .zarr\n");
}

/* Bad input: a clear message, exit 2, no new file and no temporary left,
 * an existing output untouched. */
static void
expect_bad (const char *system_json, const char *expected_err)
{
  /* the message, or "@PATH:" then the start of a message about the file */
  g_autofree char *sys = write_file ("bad.json", system_json);
  g_autofree char *out = g_build_filename (tmpdir, "existing.tif", NULL);
  g_autofree char *contents = NULL;
  g_auto(Run) r = { 0 };

  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  sim (&r, "run", sys, "-o", out, NULL);
  g_assert_cmpint (r.status, ==, 2);
  if (expected_err[0] == '@')
    {
      g_autofree char *prefix = g_strdup_printf ("airy-sim: %s%s", sys, expected_err + 1);
      g_assert_true (g_str_has_prefix (r.err, prefix));
    }
  else
    g_assert_cmpstr (r.err, ==, expected_err);
  g_assert_true (g_file_get_contents (out, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "precious");
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  g_unlink (out);
}

static void
test_bad_input (void)
{
  g_autofree char *missing = g_build_filename (tmpdir, "missing.json", NULL);
  g_autofree char *new_out = g_build_filename (tmpdir, "new.tif", NULL);
  g_autofree char *expected = NULL;
  g_auto(Run) r = { 0 }, cuda = { 0 }, usage = { 0 }, dir = { 0 };

  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"elements\": [{\"type\": \"objective-point-source\", \"n\": 1.33, \"na\": 1.7}]}",
              "airy-sim: elements[0].na: must be in [0.001, n=1.33], got 1.7\n");
  /* a polariser on a scalar field names itself */
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"linear-polarizer\", \"angle\": 0.3}]}",
              "airy-sim: elements[1] (linear-polarizer): needs a vectorial field, got a scalar one: a polarisation "
              "element acts on Ex and Ey; give the source \"field\": \"vectorial\" (a plane wave, point source or "
              "Gaussian beam with a Jones vector)\n");
  /* broken JSON: file, line and column */
  expect_bad ("{\"airy\": 1,\n \"grid\": {\"shape\": [64, 64] \"spacing\": 0.5}}", "@:2:27: Parse error: ");
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"z\": {\"start\": 0, \"stop\": 1, \"count\": 0}, \"elements\": []}",
              "airy-sim: z.count: must be in [1, 1000000], got 0\n");
  /* a microscope whose sample volume is missing */
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
              " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"/nonexistent/volume.tif\"}}",
              "airy-sim: sample.file: /nonexistent/volume.tif: No such file or directory\n");

  sim (&r, "run", missing, "-o", new_out, NULL);
  g_assert_cmpint (r.status, ==, 2);
  expected = g_strdup_printf ("airy-sim: Failed to open file “%s”: No such file or directory\n", missing);
  g_assert_cmpstr (r.err, ==, expected);
  g_assert_false (g_file_test (new_out, G_FILE_TEST_EXISTS));

  sim (&usage, "run", "--preset", "widefield", NULL);
  g_assert_cmpint (usage.status, ==, 2);
  g_assert_nonnull (strstr (usage.err, "-o OUT.tif"));
  sim (&dir, "run", "--preset", "widefield", "-o", "/nonexistent/dir/x.tif", NULL);
  g_assert_cmpint (dir.status, ==, 2);
  g_assert_cmpstr (dir.err, ==, "airy-sim: -o: the folder /nonexistent/dir does not exist\n");
  /* --chunks in one process without --devices: one device */
  {
    g_auto(Run) c = { 0 };

    sim (&c, "run", "--preset", "widefield", "-o", new_out, "--chunks", "10,10", NULL);
    g_assert_cmpint (c.status, ==, 2);
    g_assert_cmpstr (c.err, ==, "airy-sim: --chunks: give one number of planes per device (--devices), got 2 for "
                                "1 device\n");
    g_assert_false (g_file_test (new_out, G_FILE_TEST_EXISTS));
  }

  /* no GPU here: a clear message, and nothing written */
  sim (&cuda, "run", "--preset", "widefield", "--backend", "cuda", "-o", new_out, NULL);
  g_assert_cmpint (cuda.status, !=, 0);
  g_assert_nonnull (strstr (cuda.err, "no CUDA device"));
  g_assert_false (g_file_test (new_out, G_FILE_TEST_EXISTS));
}

static void
test_bench (void)
{
  /* bench runs and reports its fields; its numbers are never asserted */
  static const char *const fields[] = { "system", "planes", "height", "width", "backend", "threads",
                                        "cold_s", "median_s", "min_s", "max_s", "floor_s", "ratio",
                                        "planes_per_s", "peak_rss_bytes", "peak_device_bytes", NULL };
  g_auto(Run) r = { 0 }, text = { 0 }, bad = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *o;
  guint i;

  sim (&r, "bench", "widefield", "--repeat", "2", "--warmup", "0", "--planes", "3", "--size", "64",
       "--threads", "1", "--json", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, r.out, -1, &error));
  o = json_node_get_object (json_parser_get_root (parser));
  for (i = 0; fields[i]; i++)
    g_assert_true (json_object_has_member (o, fields[i]));
  g_assert_cmpint (json_object_get_int_member (o, "planes"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (o, "width"), ==, 64);
  g_assert_cmpfloat (json_object_get_double_member (o, "median_s"), >, 0.0);
  g_assert_cmpfloat (json_object_get_double_member (o, "floor_s"), >, 0.0);
  /* the CPU backend allocates no device memory */
  g_assert_cmpint (json_object_get_int_member (o, "peak_device_bytes"), ==, 0);

  sim (&text, "bench", "imaging", "--repeat", "1", "--warmup", "0", "--planes", "2", "--size", "64", NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_nonnull (strstr (text.out, "ratio "));
  g_assert_nonnull (strstr (text.out, "floor "));
  g_assert_nonnull (strstr (text.out, "peak RSS"));
  sim (&bad, "bench", "widefield", "--repeat", "0", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_nonnull (strstr (bad.err, "--repeat: must be in [1, 1000], got 0"));
}

static void
test_bench_resident (void)
{
  /* --resident keeps each run's result where its backend computed it: on
   * the CPU that is host memory already, so there is no download to time
   * and none is reported as if there were */
  g_auto(Run) text = { 0 }, json = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *o;

  sim (&text, "bench", "widefield", "--repeat", "2", "--warmup", "0", "--planes", "3", "--size", "64",
       "--resident", "--no-write", NULL);
  g_assert_cmpint (text.status, ==, 0);
  g_assert_nonnull (strstr (text.out, "download    none: the cpu backend's result is in host memory "
                                      "(a resident run copies nothing)\n"));
  sim (&json, "bench", "widefield", "--repeat", "2", "--warmup", "0", "--planes", "3", "--size", "64",
       "--resident", "--no-write", "--json", NULL);
  g_assert_cmpint (json.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, json.out, -1, &error));
  o = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_get_boolean_member (o, "resident"));
  g_assert_false (json_object_has_member (o, "download_s"));
  g_assert_cmpint (json_object_get_int_member (o, "output_bytes"), ==, 3 * 64 * 64 * 4);
  g_assert_cmpfloat (json_object_get_double_member (o, "median_s"), >, 0.0);
}

/* ---- issue 12: system files that no one can break, outputs that are not inputs ---- */

static void
test_schema_command (void)
{
  g_auto(Run) r = { 0 }, builtin = { 0 }, bad = { 0 };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *installed = g_test_build_filename (G_TEST_DIST, "..", "resources", "airy-system.schema.json", NULL);
  g_autofree char *installed_text = NULL;
  JsonObject *root, *na;
  JsonArray *types;
  guint i;
  gboolean ring = FALSE;

  sim (&r, "schema", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (json_parser_load_from_data (parser, r.out, -1, &error));
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "$schema"), ==, "https://json-schema.org/draft/2020-12/schema");
  types = json_object_get_array_member (json_object_get_object_member (json_object_get_object_member (
            json_object_get_object_member (root, "properties"), "elements"), "items"), "oneOf");
  for (i = 0; i < json_array_get_length (types); i++)
    {
      JsonObject *t = json_array_get_object_element (types, i);
      const char *name = json_object_get_string_member (json_object_get_object_member (
                           json_object_get_object_member (t, "properties"), "type"), "const");

      ring |= g_str_equal (name, "ring-mask");
      if (!g_str_equal (name, "objective-point-source"))
        continue;
      /* the parameter spec: [0.001, 4], default 0.8 */
      na = json_object_get_object_member (json_object_get_object_member (t, "properties"), "na");
      g_assert_cmpstr (json_object_get_string_member (na, "type"), ==, "number");
      g_assert_cmpfloat (json_object_get_double_member (na, "minimum"), ==, 0.001);
      g_assert_cmpfloat (json_object_get_double_member (na, "maximum"), ==, 4.0);
      g_assert_cmpfloat (json_object_get_double_member (na, "default"), ==, 0.8);
      g_assert_false (json_object_has_member (na, "exclusiveMinimum"));
    }
  g_assert_cmpuint (json_array_get_length (types), >=, 16);
  /* the modules' element types are in, --builtin leaves them out: the installed file */
  g_assert_true (ring);
  sim (&builtin, "schema", "--builtin", NULL);
  g_assert_cmpint (builtin.status, ==, 0);
  g_assert_null (strstr (builtin.out, "ring-mask"));
  g_assert_true (g_file_get_contents (installed, &installed_text, NULL, NULL));
  g_assert_cmpstr (builtin.out, ==, installed_text);
  sim (&bad, "schema", "--all", NULL);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_cmpstr (bad.err, ==, "airy-sim: schema: unknown option --all\nTry “airy-sim --help”.\n");
}

static void
test_bad_system_files (void)
{
  GString *deep = g_string_new (NULL);
  g_autofree char *new_out = g_build_filename (tmpdir, "new.tif", NULL);
  g_auto(Run) zero = { 0 };
  guint i;

  for (i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  for (i = 0; i < 100000; i++)
    g_string_append_c (deep, ']');
  expect_bad (deep->str, "@: arrays and objects nested 100000 levels deep, more than the limit of 64\n");
  g_string_free (deep, TRUE);
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
              " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"beads\": {\"count\": 3, \"intensity\": 1e999}}}",
              "airy-sim: sample.beads.intensity: must be a finite number, got 1e999\n");
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"z\": {\"values\": [0, 1], \"count\": 2}, \"elements\": [{\"type\": \"objective-point-source\"}]}",
              "airy-sim: z: give either values or start, stop and count, got values and count\n");
  /* what json-glib reads without a word: the last of two keys, the first of two objects */
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"elements\": [{\"type\": \"objective-point-source\", \"na\": 0.8, \"na\": 1.2}, {\"type\": \"ff-lens\"}]}",
              "@:1:153: elements[0].na: the key is given twice in one object (first at 1:142); give it once\n");
  expect_bad ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
              " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"ff-lens\"}]}\n{\"airy\": 1}",
              "@:2:1: text after the end of the JSON value (at byte 164); a system file holds one object\n");
  /* a file that never ends */
  sim (&zero, "run", "/dev/zero", "-o", new_out, NULL);
  g_assert_cmpint (zero.status, ==, 2);
  g_assert_cmpstr (zero.err, ==, "airy-sim: /dev/zero: larger than 16 MiB, the limit for a system file\n");
  g_assert_false (g_file_test (new_out, G_FILE_TEST_EXISTS));
}

/* A result with NaN or inf is a failed run (exit 1) that writes nothing:
 * a sample of values float32 holds, whose image it does not; and a sweep
 * reads its system file as run does. */
static void
test_non_finite_result (void)
{
  g_autoptr(AiryStack) huge = airy_stack_new (1, 32, 32);
  g_autofree char *sample = g_build_filename (tmpdir, "huge.tif", NULL);
  g_autofree char *json = test_microscope_json ("{\"file\": \"huge.tif\"}", "\"reduce\": \"sum\"", 32, 1);
  g_autofree char *sys = write_file ("huge.json", json);
  g_autofree char *out = g_build_filename (tmpdir, "existing.tif", NULL);
  g_autofree char *dup = write_file ("dup.json", "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5},"
                                     " \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
                                     " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"ff-lens\"}]}");
  g_autofree char *sweep_dir = g_build_filename (tmpdir, "sweep-dup", NULL);
  g_autofree char *expected = g_strdup_printf ("airy-sim: %s:1:58: grid: the key is given twice in one object "
                                               "(first at 1:13); give it once\n", dup);
  g_autofree char *contents = NULL;
  g_auto(Run) r = { 0 };
  g_auto(Run) sweep = { 0 };
  gsize i;

  for (i = 0; i < 32 * 32; i++)
    huge->data[i] = 3e38f;
  huge->dx = huge->dy = 0.1;
  g_assert_true (airy_tiff_write_full (sample, huge, NULL, NULL));
  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  sim (&r, "run", sys, "-o", out, NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_cmpstr (r.err, ==, "airy-sim: the result has 1024 non-finite values (the first at plane 0, y 0, x 0): "
                              "the sample's values (up to 3e+38) overflow float32 (at most 3.4e+38) when imaged; "
                              "scale the sample down\n");
  g_assert_true (g_file_get_contents (out, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "precious");
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  g_unlink (out);

  sim (&sweep, "sweep", dup, "--set", "elements[0].na=0.5:0.8:2", "-o", sweep_dir, NULL);
  g_assert_cmpint (sweep.status, ==, 2);
  g_assert_cmpstr (sweep.err, ==, expected);
  g_assert_false (g_file_test (sweep_dir, G_FILE_TEST_EXISTS));
  g_unlink (sample);
}

/* refused before anything runs: a clear message, exit 2, every file as it was */
static void
expect_same_file (const char *message, ...)
{
  const char *ls[] = { "sh", "-c", "ls -lAR --time-style=+%s.%N | sort", NULL };
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *listing = NULL, *listing_after = NULL;
  const char *arg;
  va_list ap;
  int wait_status;

  g_ptr_array_add (args, (char *) g_getenv ("AIRY_SIM"));
  va_start (ap, message);
  for (arg = va_arg (ap, const char *); arg; arg = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  g_assert_true (g_spawn_sync (tmpdir, (char **) ls, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &listing, NULL, NULL, NULL));
  g_assert_true (g_spawn_sync (tmpdir, (char **) args->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &wait_status, NULL));
  g_assert_true (g_spawn_sync (tmpdir, (char **) ls, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &listing_after, NULL, NULL, NULL));
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 2);
  g_assert_cmpstr (err, ==, message);
  /* nothing written, nothing touched */
  g_assert_cmpstr (listing_after, ==, listing);
}

/* pupil pixels of f_tube·λ/(n·N·s) = 5.9 µm: 10 in the pupil's radius */
#define MICROSCOPE_WITH(sample) \
  "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]}," \
  " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 50}, \"sensor\": {\"reduce\": \"sum\"}," \
  " \"sample\": " sample "}"

static void
test_output_is_input (void)
{
  g_autofree char *dir = g_build_filename (tmpdir, "same", NULL);
  g_autofree char *sub = g_build_filename (dir, "sub", NULL);
  g_autofree char *vol = g_build_filename (dir, "vol.tif", NULL);
  g_autofree char *mask = g_build_filename (dir, "mask.tif", NULL);
  g_autofree char *link = g_build_filename (dir, "link.tif", NULL);
  g_autofree char *png_link = g_build_filename (dir, "mid.png", NULL);
  g_autofree char *sys_link = g_build_filename (dir, "sys-alias.tif", NULL);
  g_autofree char *imaging = NULL, *psf = NULL;
  g_autoptr(AiryStack) volume = airy_stack_new (1, 32, 32);
  g_autoptr(GError) error = NULL;
  g_auto(Run) ok = { 0 };

  g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);
  volume->dx = volume->dy = 0.1;
  g_assert_true (airy_tiff_write (vol, volume, &error));
  g_assert_true (airy_tiff_write (mask, volume, &error));
  g_assert_cmpint (symlink ("vol.tif", link), ==, 0);
  g_assert_cmpint (symlink ("vol.tif", png_link), ==, 0);
  g_assert_cmpint (symlink ("imaging.json", sys_link), ==, 0);
  imaging = g_build_filename (dir, "imaging.json", NULL);
  g_assert_true (g_file_set_contents (imaging, MICROSCOPE_WITH ("{\"file\": \"vol.tif\"}"), -1, NULL));
  psf = g_build_filename (dir, "psf.json", NULL);
  g_assert_true (g_file_set_contents (psf,
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"amplitude-mask\", \"file\": \"mask.tif\"},"
    " {\"type\": \"phase-mask\", \"source\": \"image\", \"file\": \"sub/../vol.tif\"}, {\"type\": \"ff-lens\"}]}", -1, NULL));

  /* the sample, under its own name, through ./.. and through a symbolic link */
  expect_same_file ("airy-sim: -o and sample.file name the same file same/vol.tif: an output must not overwrite an input\n",
                    "run", "same/imaging.json", "-o", "same/vol.tif", NULL);
  expect_same_file ("airy-sim: -o and sample.file name the same file ./same/sub/../vol.tif: an output must not overwrite an input\n",
                    "run", "same/imaging.json", "-o", "./same/sub/../vol.tif", NULL);
  expect_same_file ("airy-sim: --psf-out and sample.file name the same file same/link.tif: an output must not overwrite an input\n",
                    "run", "same/imaging.json", "-o", "same/image.tif", "--psf-out", "same/link.tif", NULL);
  /* two outputs, also when neither exists yet, and --png */
  expect_same_file ("airy-sim: -o and --psf-out name the same file ./same/a.tif: give each output its own file\n",
                    "run", "same/imaging.json", "-o", "same/a.tif", "--psf-out", "./same/a.tif", NULL);
  expect_same_file ("airy-sim: --png and sample.file name the same file same/mid.png: an output must not overwrite an input\n",
                    "run", "same/imaging.json", "-o", "same/image.tif", "--png", "same/mid.png", NULL);
  expect_same_file ("airy-sim: -o and --png name the same file same/mid.png: give each output its own file\n",
                    "run", "same/psf.json", "-o", "same/link.tif", "--png", "same/mid.png", NULL);
  /* the system file itself */
  expect_same_file ("airy-sim: -o and the system file name the same file same/sys-alias.tif: an output must not overwrite an input\n",
                    "run", "same/imaging.json", "-o", "same/sys-alias.tif", NULL);
  /* the images of masks */
  expect_same_file ("airy-sim: -o and elements[1].file name the same file same/mask.tif: an output must not overwrite an input\n",
                    "run", "same/psf.json", "-o", "same/mask.tif", NULL);
  expect_same_file ("airy-sim: -o and elements[2].file name the same file same/vol.tif: an output must not overwrite an input\n",
                    "run", "same/psf.json", "-o", "same/vol.tif", NULL);
  /* and a run with its own outputs goes ahead */
  sim (&ok, "run", "same/imaging.json", "-o", "same/image.tif", "-q", NULL);
  g_assert_cmpint (ok.status, ==, 0);
  g_assert_cmpstr (ok.err, ==, "");

  g_unlink (psf);
  g_unlink (imaging);
  g_unlink (sys_link);
  g_unlink (png_link);
  g_unlink (link);
  g_unlink (mask);
  g_unlink (vol);
  {
    g_autofree char *image = g_build_filename (dir, "image.tif", NULL);
    g_unlink (image);
  }
  g_rmdir (sub);
  g_rmdir (dir);
}

static void
test_environment (void)
{
  static const char *const budgets[] = { "lots", "-5G", "0", "1e999", "8 G", NULL };
  static const char *const devices[] = { "zero", "0", "100000", "-1", "2.5", NULL };
  g_autofree char *out = g_build_filename (tmpdir, "env.tif", NULL);
  g_autofree char *sys = write_file ("env.json",
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"ff-lens\"}]}");
  guint i;

  for (i = 0; budgets[i]; i++)
    {
      g_auto(Run) r = { 0 }, v = { 0 };
      g_autofree char *expected = g_strdup_printf (
        "airy-sim: AIRY_MEMORY_BUDGET: must be a size from 1 byte to 8 EiB, a number with an optional "
        "K, M, G or T suffix (powers of 1024) such as 8G, got \"%s\"\n", budgets[i]);

      sim_with (&r, "AIRY_MEMORY_BUDGET", budgets[i], "run", sys, "-o", out, NULL);
      g_assert_cmpint (r.status, ==, 2);
      g_assert_cmpstr (r.err, ==, expected);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      sim_with (&v, "AIRY_MEMORY_BUDGET", budgets[i], "validate", sys, NULL);
      g_assert_cmpint (v.status, ==, 2);
      g_assert_cmpstr (v.err, ==, expected);
    }
  for (i = 0; devices[i]; i++)
    {
      g_auto(Run) r = { 0 };
      g_autofree char *expected = g_strdup_printf (
        "airy-sim: AIRY_CPU_DEVICES: must be a whole number of virtual CPU devices in [1, 64], got \"%s\"\n",
        devices[i]);

      sim_with (&r, "AIRY_CPU_DEVICES", devices[i], "run", sys, "-o", out, NULL);
      g_assert_cmpint (r.status, ==, 2);
      g_assert_cmpstr (r.err, ==, expected);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  /* in German too */
  {
    g_auto(Run) de = { 0 };

    sim_with (&de, "LANGUAGE", "de", "run", "--preset", "widefield", "-o", "env.tif", "--psf-out", "./env.tif", NULL);
    g_assert_cmpint (de.status, ==, 2);
    g_assert_cmpstr (de.err, ==, "airy-sim: -o und --psf-out bezeichnen dieselbe Datei ./env.tif: "
                     "jede Ausgabe braucht eine eigene Datei\n");
  }
  /* good values still work */
  {
    g_auto(Run) r = { 0 }, d = { 0 };

    sim_with (&r, "AIRY_MEMORY_BUDGET", "1.5G", "run", sys, "-o", out, "-q", NULL);
    g_assert_cmpint (r.status, ==, 0);
    sim_with (&d, "AIRY_CPU_DEVICES", "3", "run", sys, "-o", out, "--devices", "2", "-q", NULL);
    g_assert_cmpint (d.status, ==, 0);
  }
  g_unlink (out);
  g_unlink (sys);
}

static void
test_german (void)
{
  /* LANGUAGE=de: airy-sim and the engine speak German */
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  const char *argv[] = { g_getenv ("AIRY_SIM"), "run", "--preset", "nope", "-o", "x.tif", NULL };
  const char *argv2[] = { g_getenv ("AIRY_SIM"), "frobnicate", NULL };
  int status;

  env = g_environ_setenv (env, "LANGUAGE", "de", TRUE);
  env = g_environ_setenv (env, "LANG", "C.UTF-8", TRUE);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv2, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_cmpstr (err, ==, "airy-sim: unbekannter Befehl „frobnicate“\nSiehe „airy-sim --help“.\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_cmpstr (err, ==, "airy-sim: preset: unbekannte Vorlage „nope“ "
                   "(bekannt: astigmatic, brightfield-bead, confocal, depth-aberration, imaging, ism, light-field, light-sheet, oil-vectorial, polarization-microscope, seed-imaging, seed-widefield, sim, sted, two-photon, widefield)\n");
}

/* the thick samples' and the microlens array's bad input: the message
 * with the value and the range, exit status 2 */
static void
test_thick_bad_input (void)
{
  static const struct { const char *element, *message; } cases[] = {
    { "{\"type\": \"microlens-array\", \"pitch\": 0.9}",
      "elements[1].pitch: must be at least two pixels (2 × 0.5 µm), got 0.9 µm" },
    { "{\"type\": \"multislice\", \"na\": 0.5, \"stop-na\": 0.7}", "elements[1].stop-na: must be below na=0.5, got 0.7" },
    { "{\"type\": \"thin-sample\", \"dn\": 5}", "elements[1].dn: must be in [-4, 4], got 5" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
        " \"elements\": [{\"type\": \"plane-wave\"}, %s]}", cases[i].element);
      g_autofree char *sys = write_file ("thick-bad.json", json);
      g_auto(Run) r = { 0 };

      sim (&r, "run", sys, "-o", "thick-bad.tif", NULL);
      g_assert_cmpint (r.status, ==, 2);
      g_assert_nonnull (strstr (r.err, cases[i].message));
    }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("AIRY_SIM") == NULL)
    {
      g_print ("1..0 # SKIP AIRY_SIM is not set (run through meson test)\n");
      return 0;
    }
  tmpdir = g_dir_make_tmp ("airy-cli-XXXXXX", NULL);
  g_test_add_func ("/cli/help-version", test_help_version);
  g_test_add_func ("/cli/info", test_info);
  g_test_add_func ("/cli/preset", test_preset);
  g_test_add_func ("/cli/run-validate", test_run_and_validate);
  g_test_add_func ("/cli/declared-options", test_declared_options);
  g_test_add_func ("/cli/format-table", test_format_table);
  g_test_add_func ("/cli/run-channels", test_run_channels);
  g_test_add_func ("/cli/bad-input", test_bad_input);
  g_test_add_func ("/cli/bench", test_bench);
  g_test_add_func ("/cli/bench/resident", test_bench_resident);
  g_test_add_func ("/cli/german", test_german);
  g_test_add_func ("/cli/schema", test_schema_command);
  g_test_add_func ("/cli/bad-system-files", test_bad_system_files);
  g_test_add_func ("/cli/non-finite-result", test_non_finite_result);
  g_test_add_func ("/cli/output-is-input", test_output_is_input);
  g_test_add_func ("/cli/environment", test_environment);
  g_test_add_func ("/cli/thick-bad-input", test_thick_bad_input);
  status = g_test_run ();
  {
    g_autofree char *bad = g_build_filename (tmpdir, "bad.json", NULL);
    g_autofree char *small = g_build_filename (tmpdir, "small.json", NULL);
    g_unlink (bad);
    g_unlink (small);
    g_rmdir (tmpdir);
  }
  return status;
}
