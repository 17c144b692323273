/* OME-Zarr stores: round trips (levels, tiles, metadata), atomic writes,
 * lying metadata refused with the key and the value, and python3-zarr
 * (Debian) reading every chunk of every level bit for bit. */
#include "config.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "airy-test-util.h"
#include "airy-zarr-private.h"
#include "airy-image-file-private.h"

static char *tmpdir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

/* depth × height × width of values that differ in every bit position */
static AiryStack *
make_stack (guint depth, guint height, guint width)
{
  AiryStack *s = airy_stack_new (depth, height, width);
  const double wl[2] = { 0.5, 0.6 }, w[2] = { 0.25, 0.75 };
  double z[8];
  gsize i, n = (gsize) depth * height * width;
  guint k;

  for (i = 0; i < n; i++)
    s->data[i] = (float) (sin (0.37 * i) * exp (-1e-4 * i) + 1e-3 * (i % 7));
  s->dx = s->dy = 0.125;
  g_assert_cmpuint (depth, <=, G_N_ELEMENTS (z));
  for (k = 0; k < depth; k++)
    z[k] = -1.0 + 0.5 * k + (k == 2 ? 0.1 : 0);   /* uneven: the exact list is kept */
  airy_stack_set_z (s, z);
  airy_stack_set_provenance (s, 2, wl, w, "{\"airy\": 1, \"name\": \"tést\"}");
  return s;
}

static void
write_ok (const char *path, const AiryStack *s)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (airy_image_write (path, s, NULL, &error));
  g_assert_no_error (error);
}

static AiryStack *
read_level (const char *path, guint level)
{
  g_autoptr(GError) error = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  AiryStack *s;

  ro.level = level;
  s = airy_image_read_full (path, &ro, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
  return s;
}

/* the mean of 2 × 2 blocks (of the pixels there are at an odd edge),
 * written out here apart from the engine's */
static float *
halve (const float *p, guint h, guint w)
{
  guint H = (h + 1) / 2, W = (w + 1) / 2, y, x, dy, dx;
  float *out = g_new (float, (gsize) H * W);

  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      {
        double sum = 0;
        guint n = 0;

        for (dy = 0; dy < 2; dy++)
          for (dx = 0; dx < 2; dx++)
            if (2 * y + dy < h && 2 * x + dx < w)
              {
                sum += p[(2 * y + dy) * w + 2 * x + dx];
                n++;
              }
        out[y * W + x] = (float) (sum / n);
      }
  return out;
}

static void
test_round_trip (void)
{
  g_autoptr(AiryStack) s = make_stack (5, 150, 97);
  g_autofree char *path = tmp_path ("round.ome.zarr");
  g_autoptr(AiryStack) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) head = NULL;
  guint k;

  write_ok (path, s);
  g_assert_true (airy_image_format_sniff (path, NULL) == &_airy_zarr_format);
  r = read_level (path, 0);
  g_assert_cmpmem (r->data, 5 * 150 * 97 * 4, s->data, 5 * 150 * 97 * 4);
  g_assert_cmpfloat (r->dx, ==, 0.125);
  g_assert_cmpfloat (r->dy, ==, 0.125);
  for (k = 0; k < 5; k++)
    g_assert_cmpfloat (airy_stack_get_z (r, k), ==, airy_stack_get_z (s, k));
  g_assert_false (airy_stack_z_uniform (r));
  g_assert_cmpuint (r->n_wavelengths, ==, 2);
  g_assert_cmpfloat (r->wavelengths[1], ==, 0.6);
  g_assert_cmpfloat (r->weights[0], ==, 0.25);
  g_assert_nonnull (strstr (r->system_json, "\"tést\""));
  g_assert_cmpint (r->bits, ==, 32);

  /* 150 × 97: levels 150 × 97, 75 × 49 (> 64 a side), 38 × 25 */
  for (k = 0; k < 3; k++)
    {
      g_autoptr(AiryStack) l = read_level (path, k);
      guint h = 150, w = 97, j, z;

      for (j = 0; j < k; j++)
        {
          h = (h + 1) / 2;
          w = (w + 1) / 2;
        }
      g_assert_cmpuint (l->height, ==, h);
      g_assert_cmpuint (l->width, ==, w);
      g_assert_cmpfloat_with_epsilon (l->dx, 0.125 * (1u << k), 1e-12);
      for (z = 0; z < 5; z++)
        {
          g_autofree float *ref = g_memdup2 (airy_stack_plane (s, z), 150 * 97 * 4);
          guint hh = 150, ww = 97;
          gsize i;

          for (j = 0; j < k; j++)
            {
              float *next = halve (ref, hh, ww);
              g_free (ref);
              ref = next;
              hh = (hh + 1) / 2;
              ww = (ww + 1) / 2;
            }
          for (i = 0; i < (gsize) h * w; i++)
            g_assert_cmpfloat_with_epsilon (airy_stack_plane (l, z)[i], ref[i], 1e-6);
        }
    }
  {
    AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

    ro.level = 3;
    g_assert_null (airy_image_read_full (path, &ro, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
    g_clear_error (&error);
  }
  /* a range of planes, and the header alone */
  {
    AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
    g_autoptr(AiryStack) part = NULL;

    ro.first_plane = 2;
    ro.n_planes = 2;
    part = airy_image_read_full (path, &ro, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (part->depth, ==, 2);
    g_assert_cmpmem (part->data, 2 * 150 * 97 * 4, airy_stack_plane (s, 2), 2 * 150 * 97 * 4);
    g_assert_cmpfloat (airy_stack_get_z (part, 0), ==, airy_stack_get_z (s, 2));
  }
  head = airy_image_probe (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (head->data);
  g_assert_cmpuint (head->depth, ==, 5);
  g_assert_cmpuint (head->height, ==, 150);
  /* the budget is checked before anything is read */
  {
    AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

    ro.budget = 1000;
    g_assert_null (airy_image_read_full (path, &ro, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  }
}

static char *
read_text (const char *dir, const char *file)
{
  g_autofree char *p = g_build_filename (dir, file, NULL);
  char *text = NULL;

  g_assert_true (g_file_get_contents (p, &text, NULL, NULL));
  return text;
}

static void
test_tiles (void)
{
  g_autoptr(AiryStack) s = make_stack (3, 70, 45);
  g_autofree char *path = tmp_path ("tiles.ome.zarr");
  g_autofree char *zarray = NULL, *level0 = g_build_filename (path, "0", NULL);
  g_autofree char *edge = g_build_filename (path, "0", "2", "2", "1", NULL);
  g_autoptr(AiryStack) r = NULL;

  /* planes above 4 kB: tiles of 32 × 32 */
  _airy_zarr_set_chunking (4096, 32);
  write_ok (path, s);
  _airy_zarr_set_chunking (0, 0);
  zarray = read_text (level0, ".zarray");
  g_assert_nonnull (strstr (zarray, "\"chunks\": [1, 32, 32]"));
  g_assert_nonnull (strstr (zarray, "\"shape\": [3, 70, 45]"));
  g_assert_true (g_file_test (edge, G_FILE_TEST_IS_REGULAR));   /* 3 × 2 tiles a plane */
  r = read_level (path, 0);
  g_assert_cmpmem (r->data, 3 * 70 * 45 * 4, s->data, 3 * 70 * 45 * 4);
}

static guint
count_entries (const char *dir, const char *prefix)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  while (d && (name = g_dir_read_name (d)))
    n += g_str_has_prefix (name, prefix);
  return n;
}

/* A store appears whole or not at all: the partial folder has no
 * metadata, an abort removes it, a store that was there stays whole. */
static void
test_atomic (void)
{
  g_autoptr(AiryStack) old = make_stack (2, 20, 20);
  g_autoptr(AiryStack) s = make_stack (4, 30, 30);
  g_autofree char *path = tmp_path ("atomic.ome.zarr");
  g_autofree char *partial = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) r = NULL;
  const AiryImageFormat *f = &_airy_zarr_format;

  write_ok (path, old);
  partial = f->begin_pieces (path, s, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (strrchr (partial, '/'), "/.atomic.ome.zarr.airy-"));
  g_assert_true (f->write_piece (partial, s, 0, airy_stack_plane (s, 0), &error));
  g_assert_true (f->write_piece (partial, s, 3, airy_stack_plane (s, 3), &error));
  /* a rank stopped here: the partial store does not read */
  g_assert_null (airy_image_read (partial, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_clear_error (&error);
  f->abort_pieces (partial);
  g_assert_false (g_file_test (partial, G_FILE_TEST_EXISTS));
  r = read_level (path, 0);
  g_assert_cmpuint (r->depth, ==, 2);
  g_clear_pointer (&r, airy_stack_free);

  /* replaced whole, nothing left beside it */
  write_ok (path, s);
  r = read_level (path, 0);
  g_assert_cmpuint (r->depth, ==, 4);
  g_assert_cmpmem (r->data, 4 * 30 * 30 * 4, s->data, 4 * 30 * 30 * 4);
  g_assert_cmpuint (count_entries (tmpdir, ".atomic.ome.zarr"), ==, 0);

  /* a partial folder of a process of this host that is gone, written to
   * long ago, goes at the next write; one of a live process stays */
  {
    pid_t child = fork ();
    g_autofree char *stale = NULL, *live = NULL, *stale_level = NULL;
    struct utimbuf old_times = { time (NULL) - 3600, time (NULL) - 3600 };

    if (child == 0)
      _exit (0);
    g_assert_cmpint (waitpid (child, NULL, 0), ==, child);
    stale = g_strdup_printf ("%s/.atomic.ome.zarr.airy-%08x-%d-abcdef", tmpdir, g_str_hash (g_get_host_name ()),
                             (int) child);
    live = g_strdup_printf ("%s/.atomic.ome.zarr.airy-%08x-%d-ghijkl", tmpdir, g_str_hash (g_get_host_name ()),
                            (int) getppid ());
    stale_level = g_build_filename (stale, "0", NULL);
    g_assert_cmpint (g_mkdir_with_parents (stale_level, 0755), ==, 0);
    g_assert_cmpint (g_mkdir (live, 0755), ==, 0);
    g_assert_cmpint (utime (stale_level, &old_times), ==, 0);
    g_assert_cmpint (utime (stale, &old_times), ==, 0);
    write_ok (path, s);
    g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (live, G_FILE_TEST_IS_DIR));
    g_rmdir (live);
  }

  /* never a folder that is not a store, nor a file */
  {
    g_autofree char *other = tmp_path ("other.ome.zarr");
    g_autofree char *keep = g_build_filename (other, "notes.txt", NULL);
    g_autofree char *expect = g_strdup_printf ("%s: a folder that is not a Zarr store; Airy replaces only a store",
                                               other);

    g_assert_cmpint (g_mkdir (other, 0755), ==, 0);
    g_assert_true (g_file_set_contents (keep, "mine", -1, NULL));
    g_assert_false (airy_image_write (other, s, NULL, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_assert_cmpstr (error->message, ==, expect);
    g_assert_true (g_file_test (keep, G_FILE_TEST_IS_REGULAR));
  }
}

/* A store larger than the budget opens at the finest level that fits
 * (what the viewer shows of a stack larger than memory). */
static void
test_level_fitting (void)
{
  g_autoptr(AiryStack) s = make_stack (4, 300, 300);
  g_autofree char *path = tmp_path ("big.ome.zarr");
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  g_autoptr(AiryStack) r = NULL, l1 = NULL;
  g_autoptr(GError) error = NULL;
  guint level = 99;

  write_ok (path, s);
  /* 4 × 300² float32 is 1.4 MB, level 1 (150²) 360 kB, level 2 (75²) 90 kB */
  ro.budget = 500000;
  r = airy_image_read_level (path, &ro, &level, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (level, ==, 1);
  g_assert_cmpuint (r->height, ==, 150);
  g_assert_cmpfloat (r->dx, ==, 0.25);
  l1 = read_level (path, 1);
  g_assert_cmpmem (r->data, 4 * 150 * 150 * 4, l1->data, 4 * 150 * 150 * 4);
  g_clear_pointer (&r, airy_stack_free);
  ro.budget = 100000;
  r = airy_image_read_level (path, &ro, &level, &error);
  g_assert_cmpuint (level, ==, 2);
  g_clear_pointer (&r, airy_stack_free);
  /* below the coarsest level: the budget error of the last one tried */
  ro.budget = 1000;
  g_assert_null (airy_image_read_level (path, &ro, &level, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
}

/* ---- lying metadata ---- */

static void
rewrite (const char *dir, const char *file, const char *from, const char *to)
{
  g_autofree char *text = read_text (dir, file);
  g_autofree char *p = g_build_filename (dir, file, NULL);
  g_autoptr(GString) s = g_string_new (text);

  g_assert_nonnull (strstr (text, from));
  g_string_replace (s, from, to, 1);
  g_assert_true (g_file_set_contents (p, s->str, -1, NULL));
}

/* a fresh small store, one edit, then the read's message */
static void
expect_refused (const char *file, const char *from, const char *to, const char *message)
{
  g_autoptr(AiryStack) s = make_stack (2, 16, 16);
  g_autofree char *path = tmp_path ("lie.ome.zarr");
  g_autofree char *level0 = g_build_filename (path, "0", NULL);
  g_autofree char *expect = NULL;
  g_autoptr(GError) error = NULL;

  write_ok (path, s);
  rewrite (g_str_equal (file, ".zattrs") ? path : level0, file, from, to);
  g_assert_null (airy_image_read (path, &error));
  g_assert_nonnull (error);
  if (message[0] == '*')   /* the end of the message (a size that depends on Blosc) */
    {
      g_test_message ("%s", error->message);
      g_assert_true (g_str_has_suffix (error->message, message + 1));
      return;
    }
  expect = g_strdup_printf (message, path);
  g_assert_cmpstr (error->message, ==, expect);
}

static void
test_lying_metadata (void)
{
  g_autofree char *path = tmp_path ("lie.ome.zarr");
  g_autofree char *chunk = g_build_filename (path, "0", "1", "0", "0", NULL);
  g_autoptr(AiryStack) s = make_stack (2, 16, 16);
  g_autoptr(GError) error = NULL;
  g_autofree char *expect = NULL;

  expect_refused (".zarray", "\"chunks\": [1, 16, 16]", "\"chunks\": [1, 8, 16]",
                  "%s/0/0/0/0: holds 1024 bytes, the chunk shape and dtype of .zarray need 512");
  expect_refused (".zarray", "\"chunks\": [1, 16, 16]", "\"chunks\": [1, 16]",
                  "%s/0/.zarray: chunks: must have 3 sizes (the shape's), got [1,16]");
  expect_refused (".zarray", "\"chunks\": [1, 16, 16]", "\"chunks\": [1, 0, 16]",
                  "%s/0/.zarray: chunks[1]: must be a whole number from 1 to 2147483648, got 0");
  expect_refused (".zarray", "\"<f4\"", "\"<f8\"",
                  "%s/0/0/0/0: holds 1024 bytes, the chunk shape and dtype of .zarray need 2048");
  expect_refused (".zarray", "\"<f4\"", "\"<c8\"",
                  "%s/0/.zarray: dtype: must be one of \"<f4\", \"<f8\", \"|u1\", \"<u2\", \"<u4\", \"|i1\", "
                  "\"<i2\", \"<i4\" (or \">\" for big-endian), got \"<c8\"");
  expect_refused (".zarray", "\"id\": \"blosc\"", "\"id\": \"lz4\"",
                  "%s/0/.zarray: compressor.id: Airy decodes \"blosc\", \"zstd\" or no compressor (null), "
                  "got \"lz4\"");
  expect_refused (".zarray", "\"cname\": \"zstd\"", "\"cname\": \"brotli\"",
                  "%s/0/.zarray: compressor.cname: must be a Blosc compressor this Airy decodes, got \"brotli\"");
  expect_refused (".zarray", "\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 3, \"shuffle\": 1, \"blocksize\": 0",
                  "\"id\": \"zstd\", \"level\": 3",
                  "%s/0/0/0/0: a corrupt chunk (zstd does not decode it)");
  expect_refused (".zarray", "\"compressor\": {", "\"compressor\": null, \"x\": {",
                  "*bytes without a compressor, the chunk shape and dtype of .zarray need 1024");
  expect_refused (".zarray", "\"order\": \"C\"", "\"order\": \"F\"",
                  "%s/0/.zarray: order: Airy reads \"C\" order, got \"F\"");
  expect_refused (".zarray", "\"filters\": null", "\"filters\": [{\"id\": \"delta\"}]",
                  "%s/0/.zarray: filters: Airy reads arrays without filters (null), got [{\"id\":\"delta\"}]");
  expect_refused (".zarray", "\"zarr_format\": 2", "\"zarr_format\": 3",
                  "%s/0/.zarray: zarr_format: must be 2 (Zarr v2, what OME-NGFF 0.4 uses), got 3");
  expect_refused (".zarray", "\"shape\": [2, 16, 16]", "\"shape\": [2, 16]",
                  "%s/0/.zarray: chunks: must have 2 sizes (the shape's), got [1,16,16]");
  expect_refused (".zattrs", "\"path\" : \"0\"", "\"path\" : \"../0\"",
                  "%s/.zattrs: multiscales[0].datasets[0].path: must be a relative path inside the store, "
                  "got \"../0\"");
  expect_refused (".zattrs", "\"unit\" : \"micrometer\"", "\"unit\" : \"parsec\"",
                  "%s/.zattrs: multiscales[0].axes[0].unit: must be a length unit (nanometer, micrometer, "
                  "millimeter, …), got \"parsec\"");
  expect_refused (".zattrs", "\"version\" : \"0.4\"", "\"version\" : \"0.5\"",
                  "%s/.zattrs: multiscales[0].version: Airy reads OME-NGFF 0.1 to 0.4 (Zarr v2), got \"0.5\"");

  /* a missing chunk: refused in a store Airy wrote (it writes them all) */
  write_ok (path, s);
  g_assert_cmpint (g_unlink (chunk), ==, 0);
  g_assert_null (airy_image_read (path, &error));
  expect = g_strdup_printf ("%s: chunk missing from a store Airy wrote (it writes every chunk)", chunk);
  g_assert_cmpstr (error->message, ==, expect);
  g_clear_error (&error);
  g_clear_pointer (&expect, g_free);
  /* … read as fill_value in another program's store, where Zarr says so */
  {
    g_autofree char *attrs = g_build_filename (path, ".zattrs", NULL);
    g_autofree char *text = read_text (path, ".zattrs");
    char *cut = strstr (text, ",\n  \"airy\"");
    g_autoptr(AiryStack) r = NULL;
    gsize i;

    g_assert_nonnull (cut);
    strcpy (cut, "\n}\n");
    g_assert_true (g_file_set_contents (attrs, text, -1, NULL));
    rewrite (path, "0/.zarray", "\"fill_value\": 0.0", "\"fill_value\": -2.5");
    r = airy_image_read (path, &error);
    g_assert_no_error (error);
    g_assert_cmpmem (r->data, 16 * 16 * 4, s->data, 16 * 16 * 4);
    for (i = 0; i < 16 * 16; i++)
      g_assert_cmpfloat (airy_stack_plane (r, 1)[i], ==, -2.5f);
    /* … and refused where fill_value is null */
    rewrite (path, "0/.zarray", "\"fill_value\": -2.5", "\"fill_value\": null");
    g_assert_null (airy_image_read (path, &error));
    expect = g_strdup_printf ("%s: chunk missing, and .zarray's fill_value is null", chunk);
    g_assert_cmpstr (error->message, ==, expect);
  }
}

/* A second reader: python3-zarr (Debian's, Zarr v2) reads every chunk of
 * every level, and the test compares them with Airy's, bit for bit. */
static void
test_python_zarr (void)
{
  const char *script =
    "import os, sys, zarr, numpy as np\n"
    "g = zarr.open_group(sys.argv[1], mode='r')\n"
    "ms = g.attrs['multiscales'][0]\n"
    "assert ms['version'] == '0.4', ms['version']\n"
    "assert [a['name'] for a in ms['axes']] == ['z', 'y', 'x']\n"
    "for k, d in enumerate(ms['datasets']):\n"
    "    a = g[d['path']]\n"
    "    files = sum(len([f for f in fs if not f.startswith('.')])\n"
    "                for _, _, fs in os.walk(os.path.join(sys.argv[1], d['path'])))\n"
    "    assert a.dtype == np.float32 and files == a.nchunks, (files, a.nchunks)\n"
    "    a[:].tofile(sys.argv[2] + '.%d' % k)\n"
    "    print(k, a.shape, a.chunks, d['coordinateTransformations'][0]['scale'])\n"
    "print('system', ascii(g.attrs['airy']['system']['name']))\n";
  g_autofree char *path = tmp_path ("py.ome.zarr");
  g_autofree char *raw = tmp_path ("py.raw");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(AiryStack) s = make_stack (4, 90, 70);
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "/usr/bin/python3", "-c", script, path, raw, NULL };
  const char *probe[] = { "/usr/bin/python3", "-c", "import zarr", NULL };
  int status = 0;
  guint k;

  if (!g_spawn_sync (NULL, (char **) probe, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                     NULL, NULL, NULL, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    {
      g_test_skip ("no python3-zarr (Debian: apt-get install python3-zarr)");
      return;
    }
  /* tiles of 32 with edges: the chunk grid is read as zarr reads it */
  _airy_zarr_set_chunking (4096, 32);
  write_ok (path, s);
  _airy_zarr_set_chunking (0, 0);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  g_test_message ("python3-zarr: %s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "0 (4, 90, 70) (1, 32, 32) [0.5, 0.125, 0.125]"));
  g_assert_nonnull (strstr (out, "1 (4, 45, 35) (1, 32, 32) [0.5, 0.25, 0.25]"));
  g_assert_nonnull (strstr (out, "system 't\\xe9st'"));
  for (k = 0; k < 2; k++)
    {
      g_autofree char *file = g_strdup_printf ("%s.%u", raw, k);
      g_autofree char *bytes = NULL;
      g_autoptr(AiryStack) mine = read_level (path, k);
      gsize len = 0;

      g_assert_true (g_file_get_contents (file, &bytes, &len, NULL));
      g_assert_cmpmem (bytes, len, mine->data, (gsize) mine->depth * mine->height * mine->width * 4);
    }
}

/* A store python3-zarr wrote (another program: no Airy attributes), in
 * other dtypes and compressors, reads as zarr reads it. */
static void
test_python_written (void)
{
  const char *script =
    "import sys, zarr, numpy as np, numcodecs\n"
    "cases = [('u2', numcodecs.Blosc('lz4', 5, 2), '.'), ('>f8', numcodecs.Zstd(3), '/'), ('i1', None, '.')]\n"
    "for i, (dt, comp, sep) in enumerate(cases):\n"
    "    v = (np.arange(3 * 20 * 30) % 251 - (0 if dt == 'u2' else 100)).reshape(3, 20, 30).astype(dt)\n"
    "    st = zarr.DirectoryStore(sys.argv[1] + '/s%d.zarr' % i, dimension_separator=sep)\n"
    "    a = zarr.create(v.shape, chunks=(2, 7, 11), dtype=dt, compressor=comp, store=st, fill_value=0)\n"
    "    a[:] = v\n"
    "    v.astype('float32').tofile(sys.argv[1] + '/s%d.raw' % i)\n";
  const char *argv[] = { "/usr/bin/python3", "-c", script, tmpdir, NULL };
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;
  guint i;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, NULL, &err, &status, &error)
      || !g_spawn_check_wait_status (status, NULL))
    {
      g_test_skip ("python3-zarr could not write the stores (no python3-zarr?)");
      return;
    }
  for (i = 0; i < 3; i++)
    {
      g_autofree char *store = g_strdup_printf ("%s/s%u.zarr", tmpdir, i);
      g_autofree char *raw = g_strdup_printf ("%s/s%u.raw", tmpdir, i);
      g_autofree char *bytes = NULL;
      g_autoptr(AiryStack) r = airy_image_read (store, &error);
      gsize len;

      g_assert_no_error (error);
      g_assert_true (g_file_get_contents (raw, &bytes, &len, NULL));
      g_assert_cmpuint (r->depth, ==, 3);
      g_assert_cmpmem (r->data, (gsize) 3 * 20 * 30 * 4, bytes, len);
      g_assert_cmpint (r->bits, ==, i == 0 ? 16 : i == 1 ? 32 : 8);
    }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-zarr-XXXXXX", NULL);
  g_test_add_func ("/zarr/round-trip", test_round_trip);
  g_test_add_func ("/zarr/tiles", test_tiles);
  g_test_add_func ("/zarr/atomic", test_atomic);
  g_test_add_func ("/zarr/lying-metadata", test_lying_metadata);
  g_test_add_func ("/zarr/level-fitting", test_level_fitting);
  g_test_add_func ("/zarr/python-zarr-reads", test_python_zarr);
  g_test_add_func ("/zarr/python-zarr-written", test_python_written);
  status = g_test_run ();
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
    if (system (cmd) != 0)
      g_warning ("could not remove %s", tmpdir);
  }
  g_free (tmpdir);
  return status;
}
