/* TIFF stacks: the layout readers rely on (checked through libtiff, not
 * Airy's reader), OME-TIFF, exact z, the large-file layouts, what the reader
 * honours (units, hyperstack axes, OME mapping, byte order) and files that
 * must be refused without a crash or a large allocation. */
#include "config.h"

#include <sys/resource.h>
#include <tiffio.h>

#include "airy-test-util.h"

static char *tmpdir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

/* A stack whose every value is distinct: plane k, pixel i → 1000 k + i/4 − 3 */
static AiryStack *
numbered_stack (guint depth, guint height, guint width)
{
  AiryStack *s = airy_stack_new (depth, height, width);
  gsize i, n = (gsize) height * width;
  guint k;

  for (k = 0; k < depth; k++)
    for (i = 0; i < n; i++)
      airy_stack_plane (s, k)[i] = (float) (1000.0 * k + 0.25 * i - 3.0);
  s->dx = 0.0868;
  s->dy = 0.0868;
  s->dz = 0.063;
  s->z0 = -0.5;
  return s;
}

static char *
description (TIFF *tif)
{
  char *d = NULL;

  if (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &d) != 1)
    return NULL;
  return g_strdup (d);
}

/* Every page through libtiff: one strip each, contiguous from the first
 * page's offset, bit-exact. Returns the number of IFDs. */
static guint
check_with_libtiff (const char *path, const AiryStack *s, gboolean big)
{
  TIFF *tif = TIFFOpen (path, "r");
  gsize plane = airy_stack_plane_size (s) * sizeof (float);
  g_autofree float *buf = g_malloc (plane);
  guint64 first = 0;
  guint k = 0;

  g_assert_nonnull (tif);
  g_assert_cmpint (TIFFIsBigTIFF (tif), ==, big);
  do
    {
      guint32 w = 0, h = 0;
      guint16 bits = 0, format = 0;
      guint64 off = TIFFGetStrileOffset (tif, 0);

      TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
      TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
      TIFFGetField (tif, TIFFTAG_BITSPERSAMPLE, &bits);
      TIFFGetField (tif, TIFFTAG_SAMPLEFORMAT, &format);
      g_assert_cmpuint (w, ==, s->width);
      g_assert_cmpuint (h, ==, s->height);
      g_assert_cmpuint (bits, ==, 32);
      g_assert_cmpuint (format, ==, SAMPLEFORMAT_IEEEFP);
      g_assert_cmpuint (TIFFNumberOfStrips (tif), ==, 1);
      g_assert_cmpuint (TIFFGetStrileByteCount (tif, 0), ==, plane);
      if (k == 0)
        first = off;
      /* the block ImageJ reads: plane k right after plane k − 1 */
      g_assert_cmpuint (off, ==, first + k * plane);
      g_assert_cmpint (TIFFReadEncodedStrip (tif, 0, buf, (tmsize_t) plane), ==, (tmsize_t) plane);
      g_assert_cmpmem (buf, plane, airy_stack_plane (s, k), plane);
      k++;
    }
  while (TIFFReadDirectory (tif));
  TIFFClose (tif);
  return k;
}

static void
test_contiguous (void)
{
  g_autoptr(AiryStack) s = numbered_stack (7, 33, 20);
  g_autoptr(AiryStack) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = tmp_path ("contiguous.tif");
  g_autofree char *desc = NULL;
  g_autofree double *z = g_new (double, 7);
  TIFF *tif;
  guint k;

  g_assert_true (airy_tiff_write (path, s, &error));
  g_assert_cmpuint (check_with_libtiff (path, s, FALSE), ==, 7);

  tif = TIFFOpen (path, "r");
  desc = description (tif);
  TIFFClose (tif);
  /* ImageJ's keys: images, slices, micron, z step and the optical axis at
   * pixel ⌊N/2⌋, slice 1 at z0 */
  g_assert_true (g_str_has_prefix (desc, "ImageJ=1.11a\nimages=7\nslices=7\nunit=micron\nxorigin=10\nyorigin=16\n"
                                         "spacing=0.063\nzorigin=7.936507937\n"));
  g_assert_nonnull (strstr (desc, "\nmin=-3\nmax=6161.75\n"));

  r = airy_tiff_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (r->data, 7 * 33 * 20 * 4, s->data, 7 * 33 * 20 * 4);
  g_assert_cmpfloat_with_epsilon (r->dx, 0.0868, 1e-12);
  g_assert_cmpfloat_with_epsilon (r->dz, 0.063, 1e-12);
  g_assert_cmpfloat_with_epsilon (r->z0, -0.5, 1e-12);
  for (k = 0; k < 7; k++)
    z[k] = airy_stack_get_z (r, k);
  g_assert_cmpfloat_with_epsilon (z[6], -0.5 + 6 * 0.063, 1e-12);

  /* one plane and two planes (tifffile's ImageJ series read failed on two) */
  for (k = 1; k <= 2; k++)
    {
      g_autoptr(AiryStack) small = numbered_stack (k, 4, 5);
      g_autoptr(AiryStack) back = NULL;

      g_assert_true (airy_tiff_write (path, small, &error));
      g_assert_cmpuint (check_with_libtiff (path, small, FALSE), ==, k);
      back = airy_tiff_read (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (back->depth, ==, k);
      g_assert_cmpmem (back->data, k * 80, small->data, k * 80);
    }
  g_unlink (path);
}

static void
test_uneven_z (void)
{
  static const double z[5] = { -2.0, -0.5, 0.0, 0.25, 3.0 };
  g_autoptr(AiryStack) s = numbered_stack (5, 6, 8);
  g_autoptr(AiryStack) r = NULL;
  g_autoptr(AiryStack) o = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *path = tmp_path ("uneven.tif");
  g_autofree char *ome = tmp_path ("uneven.ome.tif");
  AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, warnings, 0 };
  guint k;

  airy_stack_set_z (s, z);
  g_assert_nonnull (s->z);
  g_assert_false (airy_stack_z_uniform (s));
  g_assert_true (airy_tiff_write_full (path, s, &wo, &error));
  g_assert_no_error (error);
  /* the user hears that ImageJ cannot hold them */
  g_assert_cmpuint (warnings->len, ==, 1);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (warnings, 0), path));
  g_assert_nonnull (strstr (g_ptr_array_index (warnings, 0), "not evenly spaced"));
  r = airy_tiff_read (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (r->z);
  for (k = 0; k < 5; k++)
    g_assert_cmpfloat (r->z[k], ==, z[k]);

  g_ptr_array_set_size (warnings, 0);
  g_assert_true (airy_tiff_write_full (ome, s, &wo, &error));
  /* OME holds every plane's z: nothing to warn about */
  g_assert_cmpuint (warnings->len, ==, 0);
  o = airy_tiff_read (ome, &error);
  g_assert_no_error (error);
  g_assert_nonnull (o->z);
  for (k = 0; k < 5; k++)
    g_assert_cmpfloat (o->z[k], ==, z[k]);
  g_unlink (path);
  g_unlink (ome);
}

static void
test_ome (void)
{
  static const double lambda[2] = { 0.488, 0.532 }, weight[2] = { 0.25, 0.75 };
  g_autoptr(AiryStack) s = numbered_stack (4, 9, 11);
  g_autoptr(AiryStack) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = tmp_path ("stack.ome.tif");
  g_autofree char *desc = NULL;
  TIFF *tif;

  airy_stack_set_provenance (s, 2, lambda, weight, "{\"airy\": 1, \"name\": \"a <b> & c\"}");
  g_assert_cmpint (airy_tiff_format_for_path (path), ==, AIRY_TIFF_OME);
  g_assert_cmpint (airy_tiff_format_for_path ("X.OME.TIFF"), ==, AIRY_TIFF_OME);
  g_assert_cmpint (airy_tiff_format_for_path ("x.tif"), ==, AIRY_TIFF_IMAGEJ);
  g_assert_true (airy_tiff_write (path, s, &error));
  g_assert_cmpuint (check_with_libtiff (path, s, FALSE), ==, 4);
  tif = TIFFOpen (path, "r");
  desc = description (tif);
  TIFFClose (tif);
  g_assert_true (g_str_has_prefix (desc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\""));
  g_assert_true (g_str_has_suffix (desc, "</OME>\n"));
  g_assert_nonnull (strstr (desc, "DimensionOrder=\"XYZCT\" Type=\"float\""));
  g_assert_nonnull (strstr (desc, "SizeX=\"11\" SizeY=\"9\" SizeZ=\"4\" SizeC=\"1\" SizeT=\"1\""));
  g_assert_nonnull (strstr (desc, "PhysicalSizeX=\"0.0868\" PhysicalSizeXUnit=\"µm\""));
  g_assert_nonnull (strstr (desc, "PhysicalSizeZ=\"0.063\" PhysicalSizeZUnit=\"µm\""));
  g_assert_nonnull (strstr (desc, "<TiffData IFD=\"0\" PlaneCount=\"4\"/>"));
  g_assert_nonnull (strstr (desc, "<Plane TheZ=\"3\" TheC=\"0\" TheT=\"0\" PositionZ=\"-0.311\" PositionZUnit=\"µm\"/>"));
  g_assert_nonnull (strstr (desc, "Creator=\"Airy " PACKAGE_VERSION "\""));
  g_assert_nonnull (strstr (desc, "<M K=\"airy.wavelengths-um\">0.488, 0.532</M>"));
  g_assert_nonnull (strstr (desc, "<M K=\"airy.weights\">0.25, 0.75</M>"));
  /* the system's JSON, escaped */
  g_assert_nonnull (strstr (desc, "<M K=\"airy.system\">{&quot;airy&quot;: 1, &quot;name&quot;: &quot;a &lt;b&gt; &amp; c&quot;}</M>"));
  r = airy_tiff_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (r->data, 4 * 99 * 4, s->data, 4 * 99 * 4);
  g_assert_cmpfloat (r->dx, ==, 0.0868);
  g_assert_cmpfloat_with_epsilon (airy_stack_get_z (r, 3), -0.311, 1e-12);
  g_unlink (path);
}

/* Beyond 4 GB, with the limit lowered so the files stay small. */
static void
test_large_layouts (void)
{
  g_autoptr(AiryStack) s = numbered_stack (6, 10, 12);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *ij = tmp_path ("large.tif");
  g_autofree char *big = tmp_path ("big.tif");
  g_autofree char *ome = tmp_path ("large.ome.tif");
  AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, warnings, 2000 };
  const char *paths[3] = { ij, big, ome };
  guint i;
  TIFF *tif;

  /* ImageJ's own large-stack layout: one IFD, images=6, the planes after it */
  g_assert_true (airy_tiff_write_full (ij, s, &wo, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (warnings->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (warnings, 0), "ImageJ's large-stack TIFF"));
  tif = TIFFOpen (ij, "r");
  g_assert_false (TIFFIsBigTIFF (tif));
  g_assert_cmpuint (TIFFNumberOfDirectories (tif), ==, 1);
  {
    g_autofree char *desc = description (tif);
    guint64 off = TIFFGetStrileOffset (tif, 0);
    GStatBuf st;

    g_assert_true (g_str_has_prefix (desc, "ImageJ=1.11a\nimages=6\nslices=6\n"));
    g_assert_cmpint (g_stat (ij, &st), ==, 0);
    g_assert_cmpuint (off + 6 * 10 * 12 * 4, ==, (guint64) st.st_size);
  }
  TIFFClose (tif);

  /* BigTIFF on request: every page has its IFD, the block is contiguous */
  wo.format = AIRY_TIFF_BIGTIFF;
  wo.classic_limit = 0;
  g_assert_true (airy_tiff_write_full (big, s, &wo, &error));
  g_assert_cmpuint (check_with_libtiff (big, s, TRUE), ==, 6);

  /* OME-TIFF beyond the limit: BigTIFF */
  wo.format = AIRY_TIFF_AUTO;
  wo.classic_limit = 2000;
  g_assert_true (airy_tiff_write_full (ome, s, &wo, &error));
  g_assert_cmpuint (check_with_libtiff (ome, s, TRUE), ==, 6);

  for (i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autoptr(AiryStack) r = airy_tiff_read (paths[i], &error);

      g_assert_no_error (error);
      g_assert_cmpuint (r->depth, ==, 6);
      g_assert_cmpmem (r->data, 6 * 120 * 4, s->data, 6 * 120 * 4);
      g_assert_cmpfloat_with_epsilon (r->dz, 0.063, 1e-12);
      g_unlink (paths[i]);
    }
}

/* A TIFF written by hand: big-endian like ImageJ's own files, one IFD
 * whose description says images=N, the planes back to back after it. */
static void
write_be_single_ifd (const char *path, guint images, const char *desc, guint w, guint h, const float *planes)
{
  GByteArray *b = g_byte_array_new ();
  guint16 n_entries = 9;
  guint32 desc_off = 8 + 2 + 9 * 12 + 4, desc_len = (guint32) strlen (desc) + 1;
  guint32 data_off = desc_off + desc_len + ((desc_len) & 1);
  guint i;

#define BE16(v) do { guint16 _v = GUINT16_TO_BE (v); g_byte_array_append (b, (guint8 *) &_v, 2); } while (0)
#define BE32(v) do { guint32 _v = GUINT32_TO_BE (v); g_byte_array_append (b, (guint8 *) &_v, 4); } while (0)
#define ENTRY(tag, type, count, value) do { BE16 (tag); BE16 (type); BE32 (count); \
    if ((type) == 3 && (count) == 1) { BE16 (value); BE16 (0); } else BE32 (value); } while (0)
  g_byte_array_append (b, (guint8 *) "MM", 2);
  BE16 (42);
  BE32 (8);
  BE16 (n_entries);
  ENTRY (256, 4, 1, w);
  ENTRY (257, 4, 1, h);
  ENTRY (258, 3, 1, 32);
  ENTRY (262, 3, 1, 1);
  ENTRY (270, 2, desc_len, desc_off);
  ENTRY (273, 4, 1, data_off);
  ENTRY (278, 4, 1, h);
  ENTRY (279, 4, 1, w * h * 4);
  ENTRY (339, 3, 1, 3);
  BE32 (0);
  g_byte_array_append (b, (const guint8 *) desc, desc_len);
  if (desc_len & 1)
    g_byte_array_append (b, (const guint8 *) "", 1);
  g_assert_cmpuint (b->len, ==, data_off);
  for (i = 0; i < images * w * h; i++)
    {
      guint32 u;
      memcpy (&u, &planes[i], 4);
      BE32 (u);
    }
#undef ENTRY
#undef BE32
#undef BE16
  g_assert_true (g_file_set_contents (path, (char *) b->data, b->len, NULL));
  g_byte_array_unref (b);
}

static void
test_imagej_files (void)
{
  /* ImageJ's byte order and layout beyond 4 GB, with a hyperstack's axes
   * and units: 2 channels × 3 slices × 2 frames, slice step 250 nm */
  guint C = 2, Z = 3, T = 2, w = 5, h = 4, c, z, t, i;
  g_autofree float *planes = g_new (float, C * Z * T * w * h);
  g_autofree char *path = tmp_path ("imagej-be.tif");
  g_autoptr(GError) error = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

  for (t = 0; t < T; t++)
    for (z = 0; z < Z; z++)
      for (c = 0; c < C; c++)
        for (i = 0; i < w * h; i++)
          /* ImageJ's order: channel fastest, then slice, then frame */
          planes[(((t * Z + z) * C + c) * w * h) + i] = 100.0f * c + 10.0f * z + 1000.0f * t + 0.5f * i;
  write_be_single_ifd (path, C * Z * T,
                       "ImageJ=1.53t\nimages=12\nchannels=2\nslices=3\nframes=2\nhyperstack=true\n"
                       "unit=nm\nspacing=250\nloop=false\n", w, h, planes);

  /* no axis is flattened into z: the message names them */
  g_assert_null (airy_tiff_read (path, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, g_strdup_printf ("%s: an ImageJ hyperstack of channels × slices × frames = 2 × 3 × 2; "
                   "Airy reads one z stack: choose a channel and a frame (0-based: \"channel\" and \"frame\" of the "
                   "sample, or the viewer's choice), a channel in [0, 1]", path));
  g_clear_error (&error);
  ro.channel = 1;
  g_assert_null (airy_tiff_read_full (path, &ro, &error));
  g_assert_nonnull (strstr (error->message, "a frame in [0, 1]"));
  g_clear_error (&error);
  ro.frame = 2;
  g_assert_null (airy_tiff_read_full (path, &ro, &error));
  g_assert_nonnull (strstr (error->message, "frame 2 does not exist"));
  g_clear_error (&error);
  ro.frame = 1;
  {
    g_autoptr(AiryStack) s = airy_tiff_read_full (path, &ro, &error);
    g_autoptr(AiryStack) head = airy_tiff_probe (path, &ro, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (s->depth, ==, 3);
    for (z = 0; z < 3; z++)
      for (i = 0; i < w * h; i++)
        g_assert_cmpfloat (airy_stack_plane (s, z)[i], ==, 100.0f + 10.0f * z + 1000.0f + 0.5f * i);
    /* nm: 250 nm slices; no resolution tags, so the pixel size is unknown */
    g_assert_cmpfloat_with_epsilon (s->dz, 0.25, 1e-12);
    g_assert_cmpfloat (s->dx, ==, 0.0);
    g_assert_null (head->data);
    g_assert_cmpuint (head->depth, ==, 3);
    g_assert_cmpfloat_with_epsilon (head->dz, 0.25, 1e-12);
  }

  /* the same layout claiming more images than the file holds */
  write_be_single_ifd (path, 2, "ImageJ=1.53t\nimages=5\nslices=5\n", w, h, planes);
  g_assert_null (airy_tiff_read (path, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_nonnull (strstr (error->message, "truncated: the ImageJ description says 5 images of 5 × 4"));
  g_clear_error (&error);
  g_unlink (path);
}

/* libtiff-written files with the given description, resolution and unit;
 * page p holds 1000 p + index, in `bits` samples. */
static void
write_pages (const char *path, guint pages, guint w, guint h, int bits, int format, const int *spp_per_page,
             const char *desc, float res, int resunit)
{
  TIFF *tif = TIFFOpen (path, "w");
  guint p, y, x;

  g_assert_nonnull (tif);
  for (p = 0; p < pages; p++)
    {
      int spp = spp_per_page ? spp_per_page[p] : 1;
      gsize row = (gsize) w * spp * (bits / 8);
      g_autofree guint8 *buf = g_malloc0 (row);

      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, w);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, h);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, bits);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, format);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, spp);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
      if (spp == 4)
        {
          guint16 extra = EXTRASAMPLE_UNASSALPHA;
          TIFFSetField (tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
        }
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 3);
      if (res > 0)
        {
          TIFFSetField (tif, TIFFTAG_XRESOLUTION, res);
          TIFFSetField (tif, TIFFTAG_YRESOLUTION, res);
          TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, resunit);
        }
      if (p == 0 && desc)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, desc);
      for (y = 0; y < h; y++)
        {
          for (x = 0; x < w * spp; x++)
            {
              double v = 1000.0 * p + (double) (y * w + x / spp);
              if (bits == 16 && format == SAMPLEFORMAT_INT)
                ((gint16 *) buf)[x] = (gint16) (v - 3000);
              else if (bits == 16)
                ((guint16 *) buf)[x] = (guint16) v;
              else if (bits == 8)
                buf[x] = (guint8) ((int) v % 256);
              else if (bits == 64)
                ((double *) buf)[x] = v + 0.125;
              else if (format == SAMPLEFORMAT_IEEEFP)
                ((float *) buf)[x] = (float) v;
              else
                ((guint32 *) buf)[x] = (guint32) v;
            }
          g_assert_cmpint (TIFFWriteScanline (tif, buf, y, 0), ==, 1);
        }
      TIFFWriteDirectory (tif);
    }
  TIFFClose (tif);
}

static void
test_units_and_samples (void)
{
  g_autofree char *path = tmp_path ("units.tif");
  g_autoptr(GError) error = NULL;
  static const struct { const char *desc; float res; int unit; double dx, dz; } cases[] = {
    /* ImageJ: resolution in pixels per unit, spacing in the z unit */
    { "ImageJ=1.53t\nimages=2\nslices=2\nunit=nm\nspacing=300\n", 1.0f / 100.0f, RESUNIT_NONE, 0.1, 0.3 },
    { "ImageJ=1.53t\nimages=2\nslices=2\nunit=mm\nspacing=0.002\n", 500.0f, RESUNIT_NONE, 2.0, 2.0 },
    { "ImageJ=1.53t\nimages=2\nslices=2\nunit=\xc2\xb5m\nspacing=0.5\n", 4.0f, RESUNIT_NONE, 0.25, 0.5 },
    { "ImageJ=1.53t\nimages=2\nslices=2\nunit=um\nzunit=nm\nspacing=150\n", 4.0f, RESUNIT_NONE, 0.25, 0.15 },
    { "ImageJ=1.53t\nimages=2\nslices=2\nunit=micron\nspacing=0.75\n", 4.0f, RESUNIT_NONE, 0.25, 0.75 },
    /* not a length: unknown */
    { "ImageJ=1.53t\nimages=2\nslices=2\nunit=pixel\nspacing=1\n", 1.0f, RESUNIT_NONE, 0.0, 0.0 },
    /* plain TIFF: centimetres and inches count, 72 "dpi" of no unit does not */
    { NULL, 10000.0f, RESUNIT_CENTIMETER, 1.0, 0.0 },
    { NULL, 254.0f, RESUNIT_INCH, 100.0, 0.0 },
    { NULL, 72.0f, RESUNIT_NONE, 0.0, 0.0 },
  };
  static const struct { int bits, format; float v; } samples[] = {
    { 8, SAMPLEFORMAT_UINT, (1000 + 13) % 256 }, { 16, SAMPLEFORMAT_UINT, 1013 },
    { 16, SAMPLEFORMAT_INT, 1013 - 3000 }, { 32, SAMPLEFORMAT_UINT, 1013 },
    { 32, SAMPLEFORMAT_IEEEFP, 1013 }, { 64, SAMPLEFORMAT_IEEEFP, 1013.125f },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(AiryStack) s = NULL;

      write_pages (path, 2, 6, 5, 16, SAMPLEFORMAT_UINT, NULL, cases[i].desc, cases[i].res, cases[i].unit);
      s = airy_tiff_read (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->depth, ==, 2);
      g_assert_cmpfloat_with_epsilon (s->dx, cases[i].dx, 1e-6 * MAX (cases[i].dx, 1e-6));
      g_assert_cmpfloat_with_epsilon (s->dy, cases[i].dx, 1e-6 * MAX (cases[i].dx, 1e-6));
      g_assert_cmpfloat_with_epsilon (s->dz, cases[i].dz, 1e-9);
    }
  for (i = 0; i < G_N_ELEMENTS (samples); i++)
    {
      g_autoptr(AiryStack) s = NULL;

      write_pages (path, 2, 6, 5, samples[i].bits, samples[i].format, NULL, NULL, 0, 0);
      s = airy_tiff_read (path, &error);
      g_assert_no_error (error);
      g_assert_cmpint (s->bits, ==, samples[i].bits);
      /* page 1, row 2, column 1 */
      g_assert_cmpfloat (airy_stack_plane (s, 1)[2 * 6 + 1], ==, samples[i].v);
    }
  g_unlink (path);
}

/* OME-TIFF from another writer: channels interleaved (XYCZT), sizes in nm,
 * no TiffData (IFD i holds plane i), positions in nm. */
static void
test_ome_read (void)
{
  g_autofree char *path = tmp_path ("other.ome.tif");
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) xml = g_string_new ("<?xml version=\"1.0\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
    "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYCZT\" Type=\"uint16\" SizeX=\"6\" SizeY=\"5\" "
    "SizeZ=\"3\" SizeC=\"2\" SizeT=\"1\" PhysicalSizeX=\"65\" PhysicalSizeXUnit=\"nm\" PhysicalSizeY=\"65\" "
    "PhysicalSizeYUnit=\"nm\" PhysicalSizeZ=\"0.2\">");
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  guint z, c;

  for (z = 0; z < 3; z++)
    for (c = 0; c < 2; c++)
      g_string_append_printf (xml, "<Plane TheZ=\"%u\" TheC=\"%u\" TheT=\"0\" PositionZ=\"%u\" PositionZUnit=\"nm\"/>",
                              z, c, 1000 + 200 * z * z);
  g_string_append (xml, "</Pixels></Image></OME>");
  write_pages (path, 6, 6, 5, 16, SAMPLEFORMAT_UINT, NULL, xml->str, 0, 0);
  g_assert_null (airy_tiff_read (path, &error));
  g_assert_nonnull (strstr (error->message, "an OME-TIFF image of channels × z planes × time points = 2 × 3 × 1"));
  g_clear_error (&error);
  ro.channel = 1;
  {
    g_autoptr(AiryStack) s = airy_tiff_read_full (path, &ro, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (s->depth, ==, 3);
    /* plane (z, c) is IFD 2z + c */
    for (z = 0; z < 3; z++)
      g_assert_cmpfloat (airy_stack_plane (s, z)[7], ==, 1000.0f * (2 * z + 1) + 7);
    g_assert_cmpfloat_with_epsilon (s->dx, 0.065, 1e-12);
    /* the positions are exact and uneven */
    g_assert_nonnull (s->z);
    g_assert_cmpfloat_with_epsilon (s->z[2], 1.8, 1e-12);
  }

  /* a multi-file set and a mapping beyond the file are refused */
  g_string_assign (xml, "<?xml version=\"1.0\"?><OME><Image ID=\"Image:0\"><Pixels DimensionOrder=\"XYZCT\" Type=\"uint16\" "
                   "SizeX=\"6\" SizeY=\"5\" SizeZ=\"2\" SizeC=\"1\" SizeT=\"1\"><TiffData IFD=\"0\" PlaneCount=\"2\">"
                   "<UUID FileName=\"other.ome.tif\">urn:uuid:1</UUID></TiffData></Pixels></Image></OME>");
  write_pages (path, 2, 6, 5, 16, SAMPLEFORMAT_UINT, NULL, xml->str, 0, 0);
  g_assert_null (airy_tiff_read (path, &error));
  g_assert_nonnull (strstr (error->message, "a multi-file OME-TIFF set"));
  g_clear_error (&error);
  g_string_assign (xml, "<?xml version=\"1.0\"?><OME><Image ID=\"Image:0\"><Pixels DimensionOrder=\"XYZCT\" Type=\"uint16\" "
                   "SizeX=\"6\" SizeY=\"5\" SizeZ=\"4\" SizeC=\"1\" SizeT=\"1\"><TiffData IFD=\"7\" PlaneCount=\"4\"/>"
                   "</Pixels></Image></OME>");
  write_pages (path, 2, 6, 5, 16, SAMPLEFORMAT_UINT, NULL, xml->str, 0, 0);
  g_assert_null (airy_tiff_read (path, &error));
  g_assert_nonnull (strstr (error->message, "OME-XML puts plane z=0 in IFD 7, but the file has 2"));
  g_clear_error (&error);
  g_unlink (path);
}

/* The value offset and the count field of tag `tag` in the first IFD of a
 * classic little-endian TIFF (what Airy writes on this machine). */
static void
find_tag (const guint8 *b, gsize size, guint16 tag, gsize *count_at, gsize *value_at)
{
  guint32 ifd;
  guint16 n, i;

  g_assert_true (size > 8 && memcmp (b, "II*\0", 4) == 0);
  memcpy (&ifd, b + 4, 4);
  memcpy (&n, b + ifd, 2);
  for (i = 0; i < n; i++)
    {
      const guint8 *e = b + ifd + 2 + 12 * i;
      guint16 t;
      guint32 off;

      memcpy (&t, e, 2);
      if (t != tag)
        continue;
      memcpy (&off, e + 8, 4);
      *count_at = (gsize) (e + 4 - b);
      *value_at = off;
      return;
    }
  g_assert_not_reached ();
}

/* Airy's tag 65501 as a crafted file says: count and two values */
static AiryStack *
read_with_wavelength_tag (const char *path, const guint8 *file, gsize size, guint32 count, double a, double b,
                          int channel)
{
  g_autofree guint8 *copy = g_memdup2 (file, size);
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  g_autoptr(GError) error = NULL;
  gsize count_at = 0, value_at = 0;
  AiryStack *s;

  find_tag (copy, size, 65501, &count_at, &value_at);
  memcpy (copy + count_at, &count, 4);
  memcpy (copy + value_at, &a, 8);
  memcpy (copy + value_at + 8, &b, 8);
  g_assert_true (g_file_set_contents (path, (const char *) copy, (gssize) size, NULL));
  ro.channel = channel;
  s = airy_tiff_read_full (path, &ro, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
  g_assert_cmpuint (s->n_channels, ==, 2);
  return s;
}

static void
test_channel_names (void)
{
  /* a modality's channels, named: the names travel in ImageJ's slice
   * labels ("detection, λ = 0.52 µm, z = 0 µm") and come back as the
   * stack's channel names, with or without a wavelength; unnamed
   * channels come back as "" */
  static const char *names[3] = { "excitation", "detection", "effective" };
  g_autofree char *path = tmp_path ("named.tif");
  g_autofree char *plain = tmp_path ("unnamed.tif");
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) back = NULL, unnamed = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  const double lambda[2] = { 0.488, 0.52 }, one = 1.0;
  AiryStack *channels[3];
  guint c;

  for (c = 0; c < 3; c++)
    {
      channels[c] = numbered_stack (2, 4, 5);
      if (c < 2)
        airy_stack_set_provenance (channels[c], 1, &lambda[c], &one, NULL);
      airy_stack_set_channel_name (channels[c], names[c]);
    }
  g_assert_true (airy_tiff_write_channels (path, channels, 3, NULL, &error));
  g_assert_no_error (error);
  ro.channel = 2;
  back = airy_tiff_read_full (path, &ro, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->n_channels, ==, 3);
  g_assert_nonnull (back->channel_names);
  g_assert_cmpuint (g_strv_length (back->channel_names), ==, 3);
  for (c = 0; c < 3; c++)
    g_assert_cmpstr (back->channel_names[c], ==, names[c]);
  for (c = 0; c < 3; c++)
    airy_stack_set_channel_name (channels[c], c == 1 ? "detection" : NULL);
  g_assert_true (airy_tiff_write_channels (plain, channels, 3, NULL, &error));
  unnamed = airy_tiff_read_full (plain, &ro, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (unnamed->channel_names[0], ==, "");
  g_assert_cmpstr (unnamed->channel_names[1], ==, "detection");
  g_assert_cmpstr (unnamed->channel_names[2], ==, "");
  for (c = 0; c < 3; c++)
    airy_stack_free (channels[c]);
  g_unlink (path);
  g_unlink (plain);
}

static void
test_channel_wavelengths (void)
{
  /* 0.532 and 0.64 µm kept as channels: the hyperstack file carries each
   * channel's wavelength (Airy's tag 65501), the reader gives them back
   * exactly, for either channel read and for a probe; bad values in a
   * crafted file are dropped, never an error */
  g_autofree char *path = tmp_path ("channels.tif");
  g_autofree char *bad = tmp_path ("channels-bad.tif");
  g_autofree char *ome = tmp_path ("channels.ome.tif");
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) xml = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  const double lambda[2] = { 0.532, 0.64 }, one = 1.0;
  AiryStack *channels[2];
  gsize size = 0;
  guint c;

  for (c = 0; c < 2; c++)
    {
      channels[c] = numbered_stack (3, 5, 6);
      airy_stack_set_provenance (channels[c], 1, &lambda[c], &one, NULL);
    }
  g_assert_true (airy_tiff_write_channels (path, channels, 2, NULL, &error));
  g_assert_no_error (error);
  /* channels at different pixel sizes (an FF lens's spacing scales with
   * λ): written with the first's, and said */
  {
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
    AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, warnings, 0 };
    g_autofree char *scaled = tmp_path ("channels-scaled.tif");
    g_autofree char *want = NULL;
    g_autoptr(AiryStack) back = NULL;
    AiryReadOptions second = AIRY_READ_OPTIONS_INIT;
    double dx0 = channels[0]->dx, dx1 = channels[1]->dx;

    channels[0]->dx = channels[0]->dy = 0.1;
    channels[1]->dx = channels[1]->dy = 0.1 * 0.64 / 0.532;
    g_assert_true (airy_tiff_write_channels (scaled, channels, 2, &wo, &error));
    g_assert_no_error (error);
    want = g_strdup_printf ("%s: channel 2 is sampled at 0.1203 µm, channel 1 at 0.1 µm; the file has one pixel "
                            "size for all its channels, channel 1's", scaled);
    g_assert_cmpuint (warnings->len, ==, 1);
    g_assert_cmpstr (g_ptr_array_index (warnings, 0), ==, want);
    second.channel = 1;
    back = airy_tiff_read_full (scaled, &second, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (fabs (back->dx - 0.1), <, 1e-6);
    g_unlink (scaled);
    channels[0]->dx = channels[0]->dy = dx0;
    channels[1]->dx = channels[1]->dy = dx1;
  }
  for (c = 0; c < 2; c++)
    {
      g_autoptr(AiryStack) s = NULL;

      ro.channel = (int) c;
      s = airy_tiff_read_full (path, &ro, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->n_channels, ==, 2);
      g_assert_cmpuint (s->channel, ==, c);
      g_assert_cmpfloat (airy_stack_plane (s, 2)[7], ==, airy_stack_plane (channels[c], 2)[7]);
      g_assert_cmpuint (s->n_wavelengths, ==, 2);
      g_assert_cmpfloat (s->wavelengths[0], ==, 0.532);
      g_assert_cmpfloat (s->wavelengths[1], ==, 0.64);
    }
  {
    g_autoptr(AiryStack) probe = NULL;

    ro.channel = 0;
    probe = airy_tiff_probe (path, &ro, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (probe->n_wavelengths, ==, 2);
    g_assert_cmpfloat (probe->wavelengths[1], ==, 0.64);
  }
  /* a plain stack (one channel) has no such tag and reads no wavelengths */
  {
    g_autoptr(AiryStack) plain = NULL;
    TIFF *tif;
    guint32 n = 0;
    double *v = NULL;

    tif = TIFFOpen (path, "r");
    g_assert_nonnull (tif);
    g_assert_cmpint (TIFFGetField (tif, 65501, &n, &v), ==, 1);
    g_assert_cmpuint (n, ==, 2);
    TIFFClose (tif);
    g_assert_true (airy_tiff_write (bad, channels[0], &error));
    g_assert_no_error (error);
    tif = TIFFOpen (bad, "r");
    g_assert_cmpint (TIFFGetField (tif, 65501, &n, &v), ==, 0);
    TIFFClose (tif);
    plain = airy_tiff_read (bad, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (plain->n_wavelengths, ==, 0);
  }

  /* crafted: NaN, negative, ∞, a count that is not the channels' */
  g_assert_true (g_file_get_contents (path, &contents, &size, NULL));
  {
    g_autoptr(AiryStack) s = read_with_wavelength_tag (bad, (guint8 *) contents, size, 2, NAN, -0.64, 1);
    g_assert_cmpuint (s->n_wavelengths, ==, 0);
    g_assert_null (s->wavelengths);
  }
  {
    /* one bad value: that channel's is not known (0), the other's stays */
    g_autoptr(AiryStack) s = read_with_wavelength_tag (bad, (guint8 *) contents, size, 2, 0.532, INFINITY, 0);
    g_assert_cmpuint (s->n_wavelengths, ==, 2);
    g_assert_cmpfloat (s->wavelengths[0], ==, 0.532);
    g_assert_cmpfloat (s->wavelengths[1], ==, 0.0);
  }
  {
    g_autoptr(AiryStack) s = read_with_wavelength_tag (bad, (guint8 *) contents, size, 1, 0.532, 0.64, 0);
    g_assert_cmpuint (s->n_wavelengths, ==, 0);
  }
  {
    g_autoptr(AiryStack) s = read_with_wavelength_tag (bad, (guint8 *) contents, size, 3, 0.532, 0.64, 0);
    g_assert_cmpuint (s->n_wavelengths, ==, 0);
  }
  {
    /* a count beyond the file: libtiff drops the tag, the pixels still read */
    g_autoptr(AiryStack) s = read_with_wavelength_tag (bad, (guint8 *) contents, size, 0x7fffffff, 0.532, 0.64, 0);
    g_assert_cmpuint (s->n_wavelengths, ==, 0);
    g_assert_cmpfloat (airy_stack_plane (s, 1)[3], ==, airy_stack_plane (channels[0], 1)[3]);
  }

  /* OME-TIFF: each Channel's EmissionWavelength (nm unless its unit says
   * otherwise); a bad one is not known; a count that is not SizeC, none */
  xml = g_string_new (NULL);
  for (c = 0; c < 4; c++)
    {
      static const char *const ch[4] = {
        "<Channel ID=\"Channel:0:0\" EmissionWavelength=\"532\"/>"
        "<Channel ID=\"Channel:0:1\" EmissionWavelength=\"0.64\" EmissionWavelengthUnit=\"\xc2\xb5m\"><LightPath/></Channel>",
        "<Channel ID=\"Channel:0:0\" EmissionWavelength=\"NaN\"/><Channel ID=\"Channel:0:1\" EmissionWavelength=\"-640\"/>",
        "<Channel ID=\"Channel:0:0\" EmissionWavelength=\"1e999\"/>"
        "<Channel ID=\"Channel:0:1\" EmissionWavelength=\"640\" EmissionWavelengthUnit=\"parsec\"/>",
        "<Channel ID=\"Channel:0:0\" EmissionWavelength=\"532\"/>",
      };
      g_autoptr(AiryStack) s = NULL;

      g_string_printf (xml, "<?xml version=\"1.0\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
                       "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYCZT\" Type=\"uint16\" "
                       "SizeX=\"6\" SizeY=\"5\" SizeZ=\"2\" SizeC=\"2\" SizeT=\"1\">%s</Pixels></Image></OME>", ch[c]);
      write_pages (ome, 4, 6, 5, 16, SAMPLEFORMAT_UINT, NULL, xml->str, 0, 0);
      ro.channel = 1;
      s = airy_tiff_read_full (ome, &ro, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (s->n_channels, ==, 2);
      g_assert_cmpfloat (airy_stack_plane (s, 1)[4], ==, 3004.0f);
      if (c == 0)
        {
          g_assert_cmpuint (s->n_wavelengths, ==, 2);
          g_assert_cmpfloat_with_epsilon (s->wavelengths[0], 0.532, 1e-15);
          g_assert_cmpfloat (s->wavelengths[1], ==, 0.64);
        }
      else
        g_assert_cmpuint (s->n_wavelengths, ==, 0);
    }
  /* Airy's own OME-TIFF of one wavelength: its EmissionWavelength */
  {
    g_autoptr(AiryStack) s = NULL;

    g_assert_true (airy_tiff_write (ome, channels[1], &error));
    g_assert_no_error (error);
    s = airy_tiff_read (ome, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (s->n_wavelengths, ==, 1);
    g_assert_cmpfloat_with_epsilon (s->wavelengths[0], 0.64, 1e-15);
  }
  airy_stack_free (channels[0]);
  airy_stack_free (channels[1]);
  g_unlink (path);
  g_unlink (bad);
  g_unlink (ome);
}

/* A classic TIFF header and one IFD, written by hand. */
static void
write_crafted (const char *path, guint32 w, guint32 h, guint16 bits, guint16 compression,
               guint32 strip_offset, guint32 strip_count, gsize file_size)
{
  g_autofree guint8 *b = g_malloc0 (MAX (file_size, 200));
  guint8 *p = b;
  guint16 n = 9;

#define LE16(v) do { guint16 _v = GUINT16_TO_LE (v); memcpy (p, &_v, 2); p += 2; } while (0)
#define LE32(v) do { guint32 _v = GUINT32_TO_LE (v); memcpy (p, &_v, 4); p += 4; } while (0)
#define ENTRY(tag, type, value) do { LE16 (tag); LE16 (type); LE32 (1); \
    if ((type) == 3) { LE16 (value); LE16 (0); } else LE32 (value); } while (0)
  memcpy (p, "II", 2);
  p += 2;
  LE16 (42);
  LE32 (8);
  LE16 (n);
  ENTRY (256, 4, w);
  ENTRY (257, 4, h);
  ENTRY (258, 3, bits);
  ENTRY (259, 3, compression);
  ENTRY (262, 3, 1);
  ENTRY (273, 4, strip_offset);
  ENTRY (278, 4, h);
  ENTRY (279, 4, strip_count);
  ENTRY (339, 3, bits == 32 ? 3 : 1);
  LE32 (0);
#undef ENTRY
#undef LE32
#undef LE16
  g_assert_true (g_file_set_contents (path, (char *) b, (gssize) file_size, NULL));
}

static void
assert_refused (const char *path, const AiryReadOptions *ro, int code, const char *part)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) s = airy_tiff_read_full (path, ro, &error);

  g_assert_null (s);
  g_assert_error (error, AIRY_ERROR, code);
  if (strstr (error->message, part) == NULL)
    g_error ("expected “%s” in “%s”", part, error->message);
  g_assert_true (g_str_has_prefix (error->message, path));
}

static void
test_bad_files (void)
{
  g_autofree char *path = tmp_path ("bad.tif");
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  struct rlimit old, low;
  static const int spp[3] = { 1, 1, 4 };

  /* nothing below may allocate much: run it under a 2 GB address-space
   * limit (the stacks involved claim 3 GB and 16 GB) */
  g_assert_cmpint (getrlimit (RLIMIT_AS, &old), ==, 0);
  low = old;
  low.rlim_cur = MIN (old.rlim_max, (rlim_t) 2 << 30);
#ifndef __SANITIZE_ADDRESS__
  /* (AddressSanitizer maps terabytes of shadow memory: no limit there) */
  g_assert_cmpint (setrlimit (RLIMIT_AS, &low), ==, 0);
#endif
  /* a generous budget: the file's own content must stop it */
  ro.budget = G_GUINT64_CONSTANT (1) << 40;

  /* a later page with 4 samples per pixel (once a heap overflow) */
  write_pages (path, 3, 6, 5, 8, SAMPLEFORMAT_UINT, spp, NULL, 0, 0);
  assert_refused (path, &ro, AIRY_ERROR_FILE, "page 2: unsupported TIFF (8-bit, sample format 1, 4 samples per pixel)");
  /* a 392-byte file whose IFD claims a 3.2 GB plane */
  write_crafted (path, 40000, 20000, 32, 1, 200, 3200000000u, 392);
  assert_refused (path, &ro, AIRY_ERROR_FILE, "plane 0: strip 0 lies beyond the end of the file (392 bytes)");
  /* claims consistent with a 392-byte file but not with the plane (libtiff
   * then estimates the strip from the image size: beyond the end again) */
  write_crafted (path, 40000, 20000, 32, 1, 200, 192, 392);
  assert_refused (path, &ro, AIRY_ERROR_FILE, "plane 0: strip 0 lies beyond the end of the file (392 bytes)");
  /* compressed beyond any codec's ratio */
  write_crafted (path, 40000, 20000, 8, COMPRESSION_ADOBE_DEFLATE, 200, 192, 392);
  assert_refused (path, &ro, AIRY_ERROR_FILE, "192 bytes of image data for a 800000000-byte plane");
  /* 4 MB for 65536²: refused by the budget before anything is decoded */
  ro.budget = 256 << 20;
  write_crafted (path, 65536, 65536, 8, COMPRESSION_ADOBE_DEFLATE, 200, 4 << 20, (4 << 20) + 200);
  assert_refused (path, &ro, AIRY_ERROR_BUDGET, "a stack of 1 × 65536 × 65536 pixels needs 16.00 GiB as float32, more than the memory budget of 256.0 MiB");
  ro.budget = G_GUINT64_CONSTANT (1) << 40;
  g_assert_cmpint (setrlimit (RLIMIT_AS, &old), ==, 0);

  /* only reduced-resolution copies (a thumbnail-only file), and a stack
   * whose second page is its thumbnail: that page is not a plane */
  {
    TIFF *tif = TIFFOpen (path, "w");
    guint8 row[6] = { 1, 2, 3, 4, 5, 6 };
    guint p, y;

    for (p = 0; p < 2; p++)
      {
        TIFFSetField (tif, TIFFTAG_SUBFILETYPE, FILETYPE_REDUCEDIMAGE);
        TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 6);
        TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 2);
        TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
        TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        for (y = 0; y < 2; y++)
          TIFFWriteScanline (tif, row, y, 0);
        TIFFWriteDirectory (tif);
      }
    TIFFClose (tif);
    assert_refused (path, &ro, AIRY_ERROR_FILE, "no full-resolution page");
  }
  {
    g_autoptr(AiryStack) one = NULL;
    g_autoptr(GError) error = NULL;
    TIFF *tif = TIFFOpen (path, "w");
    guint8 row[6] = { 1, 2, 3, 4, 5, 6 };
    guint p, y;

    for (p = 0; p < 2; p++)
      {
        TIFFSetField (tif, TIFFTAG_SUBFILETYPE, p ? FILETYPE_REDUCEDIMAGE : 0);
        TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, p ? 3 : 6);
        TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 2);
        TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
        TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        for (y = 0; y < 2; y++)
          TIFFWriteScanline (tif, row, y, 0);
        TIFFWriteDirectory (tif);
      }
    TIFFClose (tif);
    one = airy_tiff_read (path, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (one->depth, ==, 1);
    g_assert_cmpuint (one->width, ==, 6);
    g_assert_cmpfloat (one->data[11], ==, 6.0f);
  }

  /* a header and nothing else */
  g_assert_true (g_file_set_contents (path, "II*\0\x08\0\0\0", 8, NULL));
  assert_refused (path, &ro, AIRY_ERROR_FILE, "");
  /* not a regular file */
  {
    g_autoptr(GError) error = NULL;
    g_assert_null (airy_tiff_read ("/dev/zero", &error));
    g_assert_cmpstr (error->message, ==, "/dev/zero: is a character device, not a regular file");
  }
  g_unlink (path);
}

/* 10⁵ pages: a caller that expects 64 planes stops at the 65th page, and
 * reading them all walks the chain once (it took 280 s when every page
 * was found from the first). */
static void
test_many_pages (void)
{
  g_autofree char *path = tmp_path ("many.tif");
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  TIFF *tif = TIFFOpen (path, "w");
  g_autoptr(AiryStack) all = NULL;
  g_autoptr(GError) error = NULL;
  guint8 v;
  guint k;

  for (k = 0; k < 100000; k++)
    {
      v = (guint8) k;
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 1);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 1);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 1);
      TIFFWriteEncodedStrip (tif, 0, &v, 1);
      TIFFWriteDirectory (tif);
    }
  TIFFClose (tif);
  ro.max_planes = 64;
  assert_refused (path, &ro, AIRY_ERROR_INVALID_VALUE, "has more than the 64 pages (z planes) expected");
  all = airy_tiff_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->depth, ==, 100000);
  g_assert_cmpfloat (all->data[99999], ==, (float) (99999 % 256));
  g_unlink (path);
}

/* ImageJ's display range (min=, max= in the description) is the stack's
 * exact range, taken while the pixels are written: NaN is skipped, the
 * numbers' length does not move the pixel block. */
static void
test_display_range (void)
{
  static const float values[4][3] = { { 0.5f, -2.25f, 7.0f }, { 1e-30f, 3e38f, -1e-5f },
                                      { NAN, 4.0f, 1.0f }, { 0.0f, 0.0f, 0.0f } };
  static const char *const expected[4] = { "\nmin=-2.25\nmax=7\n", "\nmin=-9.99999975e-06\nmax=3.00000001e+38\n",
                                           "\nmin=1\nmax=4\n", "\nmin=0\nmax=0\n" };
  g_autofree char *path = tmp_path ("range.tif");
  g_autoptr(GError) error = NULL;
  guint i;

  for (i = 0; i < 4; i++)
    {
      g_autoptr(AiryStack) s = numbered_stack (3, 40, 30);
      g_autofree char *desc = NULL;
      TIFF *tif;
      guint k;

      for (k = 0; k < 3 * 1200; k++)
        s->data[k] = values[i][k % 3];
      g_assert_true (airy_tiff_write (path, s, &error));
      tif = TIFFOpen (path, "r");
      desc = description (tif);
      TIFFClose (tif);
      if (strstr (desc, expected[i]) == NULL)
        g_error ("expected “%s” in “%s”", expected[i], desc);
      g_assert_cmpuint (check_with_libtiff (path, s, FALSE), ==, 3);
    }
  g_unlink (path);
}

/* The format table: by content, by name, and the writers through it. */
static void
test_format_table (void)
{
  g_autoptr(AiryStack) three = numbered_stack (3, 4, 5);
  g_autoptr(AiryStack) one = numbered_stack (1, 4, 5);
  g_autoptr(GError) error = NULL;
  g_autofree char *tif = tmp_path ("table.tif");
  g_autofree char *png = tmp_path ("table.png");
  g_autofree char *other = tmp_path ("table.xyz");
  const AiryImageFormat *const *all = airy_image_formats ();

  g_assert_cmpstr (all[0]->name, ==, "TIFF");
  g_assert_cmpstr (all[1]->name, ==, "PNG");
  g_assert_cmpstr (all[2]->name, ==, "OME-Zarr");
  g_assert_null (all[3]);
  g_assert_true (airy_image_format_for_suffix ("psf.OME.ZARR") == all[2]);
  g_assert_true (airy_image_format_for_suffix ("A.OME.TIF") == all[0]);
  g_assert_true (airy_image_format_for_suffix ("x.png") == all[1]);
  g_assert_null (airy_image_format_for_suffix ("x.jpg"));

  g_assert_true (airy_image_write (tif, three, NULL, &error));
  g_assert_true (airy_image_format_sniff (tif, &error) == all[0]);
  g_assert_true (airy_image_write (png, one, NULL, &error));
  g_assert_true (airy_image_format_sniff (png, &error) == all[1]);
  {
    g_autoptr(AiryStack) back = airy_image_read (png, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (back->width, ==, 5);
  }
  g_assert_false (airy_image_write (png, three, NULL, &error));
  g_assert_nonnull (strstr (error->message, "a PNG holds one plane, the stack has 3: save it as .tif"));
  g_clear_error (&error);
  g_assert_false (airy_image_write (other, one, NULL, &error));
  g_assert_nonnull (strstr (error->message, "the name must end in .tif, .tiff, .ome.tif, .png or .ome.zarr"));
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (other, "neither", 7, NULL));
  g_assert_null (airy_image_format_sniff (other, &error));
  g_assert_nonnull (strstr (error->message, "not a TIFF or PNG image"));
  g_unlink (tif);
  g_unlink (png);
  g_unlink (other);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-tiff-XXXXXX", NULL);

  g_test_add_func ("/tiff/contiguous", test_contiguous);
  g_test_add_func ("/tiff/uneven-z", test_uneven_z);
  g_test_add_func ("/tiff/ome", test_ome);
  g_test_add_func ("/tiff/large-layouts", test_large_layouts);
  g_test_add_func ("/tiff/imagej-files", test_imagej_files);
  g_test_add_func ("/tiff/units-and-samples", test_units_and_samples);
  g_test_add_func ("/tiff/ome-read", test_ome_read);
  g_test_add_func ("/tiff/channel-wavelengths", test_channel_wavelengths);
  g_test_add_func ("/tiff/bad-files", test_bad_files);
  g_test_add_func ("/tiff/many-pages", test_many_pages);
  g_test_add_func ("/tiff/display-range", test_display_range);
  g_test_add_func ("/tiff/format-table", test_format_table);
  g_test_add_func ("/tiff/channel-names", test_channel_names);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}
