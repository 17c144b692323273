#define G_LOG_DOMAIN "airy-tiff"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>
#include <unistd.h>
#include <tiffio.h>

#include "airy-stack.h"
#include "airy-error.h"

/* libtiff reports through global handlers: collect the first message of the
 * current thread so it can go into the GError instead of stderr. */
static GPrivate tiff_message = G_PRIVATE_INIT (g_free);

static void
tiff_error_handler (const char *module, const char *fmt, va_list ap)
{
  if (g_private_get (&tiff_message) == NULL)
    g_private_replace (&tiff_message, g_strdup_vprintf (fmt, ap));
}

static void
tiff_warning_handler (const char *module, const char *fmt, va_list ap)
{
}

static void
tiff_handlers_install (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      TIFFSetErrorHandler (tiff_error_handler);
      TIFFSetWarningHandler (tiff_warning_handler);
      g_once_init_leave (&once, 1);
    }
  g_private_replace (&tiff_message, NULL);
}

static const char *
tiff_last_message (void)
{
  const char *m = g_private_get (&tiff_message);
  return m ? m : "unknown libtiff error";
}

gboolean
airy_tiff_write (const char      *path,
                 const AiryStack *stack,
                 GError         **error)
{
  g_autofree char *tmp = NULL;
  g_autofree char *desc = NULL;
  g_autoptr(GString) d = g_string_new (NULL);
  gsize bytes = (gsize) stack->depth * airy_stack_plane_size (stack) * sizeof (float);
  float lo, hi;
  TIFF *tif;
  guint z;
  int fd;

  g_return_val_if_fail (stack != NULL && stack->depth > 0, FALSE);

  tiff_handlers_install ();
  fd = airy_atomic_begin (path, &tmp, error);
  if (fd < 0)
    return FALSE;
  /* classic TIFF up to 4 GB, BigTIFF beyond */
  tif = TIFFFdOpen (fd, tmp, bytes > G_GUINT64_CONSTANT (4000000000) ? "w8" : "w");
  if (tif == NULL)
    {
      close (fd);
      airy_atomic_abort (tmp);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, tiff_last_message ());
      return FALSE;
    }

  airy_stack_min_max (stack, &lo, &hi);
  /* ImageJ's hyperstack description: Fiji and napari read the voxel size from it */
  g_string_append_printf (d, "ImageJ=1.11a\nimages=%u\n", stack->depth);
  if (stack->depth > 1)
    g_string_append_printf (d, "slices=%u\n", stack->depth);
  g_string_append (d, "unit=micron\n");
  if (stack->depth > 1 && stack->dz > 0)
    g_string_append_printf (d, "spacing=%.9g\n", stack->dz);
  if (stack->z0 != 0.0)
    g_string_append_printf (d, "zorigin=%.9g\n", stack->dz > 0 ? -stack->z0 / stack->dz : 0.0);
  g_string_append_printf (d, "loop=false\nmin=%.9g\nmax=%.9g\n", lo, hi);
  desc = g_string_free (g_steal_pointer (&d), FALSE);

  for (z = 0; z < stack->depth; z++)
    {
      TIFFSetField (tif, TIFFTAG_SUBFILETYPE, 0);
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, stack->width);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, stack->height);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 32);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, stack->height);
      TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
      if (stack->dx > 0 && stack->dy > 0)
        {
          TIFFSetField (tif, TIFFTAG_XRESOLUTION, (float) (1.0 / stack->dx));
          TIFFSetField (tif, TIFFTAG_YRESOLUTION, (float) (1.0 / stack->dy));
          TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
        }
      if (z == 0)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, desc);
      TIFFSetField (tif, TIFFTAG_SOFTWARE, "Airy " PACKAGE_VERSION);
      if (TIFFWriteEncodedStrip (tif, 0, airy_stack_plane (stack, z),
                                 (tmsize_t) (airy_stack_plane_size (stack) * sizeof (float))) < 0
          || !TIFFWriteDirectory (tif))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, tiff_last_message ());
          TIFFClose (tif);
          airy_atomic_abort (tmp);
          return FALSE;
        }
    }
  TIFFClose (tif);
  return airy_atomic_commit (tmp, path, error);
}

static double
desc_number (const char *desc, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\n%s=", key);
  const char *p;

  if (desc == NULL)
    return 0.0;
  if (g_str_has_prefix (desc, needle + 1))
    p = desc + strlen (needle + 1);
  else if ((p = strstr (desc, needle)) != NULL)
    p += strlen (needle);
  else
    return 0.0;
  return g_ascii_strtod (p, NULL);
}

AiryStack *
airy_tiff_read (const char *path,
                GError    **error)
{
  g_autoptr(AiryStack) stack = NULL;
  TIFF *tif;
  guint32 width = 0, height = 0;
  guint16 bits = 0, format = SAMPLEFORMAT_UINT, spp = 1;
  guint depth = 0, z, y;
  char *desc = NULL;
  float xres = 0, yres = 0;
  guint16 resunit = RESUNIT_NONE;
  g_autofree guint8 *row = NULL;

  tiff_handlers_install ();
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: no such file"), path);
      return NULL;
    }
  tif = TIFFOpen (path, "r");
  if (tif == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a readable TIFF (%s)"),
                   path, tiff_last_message ());
      return NULL;
    }

  do
    depth++;
  while (TIFFReadDirectory (tif));
  if (g_private_get (&tiff_message) != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: corrupt TIFF (%s)"), path, tiff_last_message ());
      TIFFClose (tif);
      return NULL;
    }
  TIFFSetDirectory (tif, 0);
  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  if (width == 0 || height == 0 || width > 65536 || height > 65536)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: unsupported image size %u × %u"),
                   path, width, height);
      TIFFClose (tif);
      return NULL;
    }
  if (spp != 1 || TIFFIsTiled (tif)
      || !((bits == 8 && format == SAMPLEFORMAT_UINT) || (bits == 16 && format == SAMPLEFORMAT_UINT)
           || (bits == 32 && format == SAMPLEFORMAT_IEEEFP)))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: unsupported TIFF (%u-bit, sample format %u, %u samples per pixel%s); "
                   "Airy reads single-channel 8/16-bit unsigned and 32-bit float strips"),
                   path, bits, format, spp, TIFFIsTiled (tif) ? ", tiled" : "");
      TIFFClose (tif);
      return NULL;
    }
  if (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc) != 1)
    desc = NULL;
  TIFFGetField (tif, TIFFTAG_XRESOLUTION, &xres);
  TIFFGetField (tif, TIFFTAG_YRESOLUTION, &yres);
  TIFFGetFieldDefaulted (tif, TIFFTAG_RESOLUTIONUNIT, &resunit);

  stack = airy_stack_new (depth, height, width);
  if (stack == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for %u × %u × %u"),
                   path, depth, height, width);
      TIFFClose (tif);
      return NULL;
    }
  stack->bits = bits;
  if (desc != NULL && strstr (desc, "ImageJ=") != NULL)
    {
      stack->dz = desc_number (desc, "spacing");
      if (desc_number (desc, "zorigin") != 0.0 && stack->dz > 0)
        stack->z0 = -desc_number (desc, "zorigin") * stack->dz;
    }
  /* ImageJ writes unit=micron and resolution in pixels per µm with no unit */
  if (xres > 0 && yres > 0)
    {
      double scale = resunit == RESUNIT_CENTIMETER ? 1e4 : resunit == RESUNIT_INCH ? 25400.0 : 1.0;
      stack->dx = scale / xres;
      stack->dy = scale / yres;
    }

  row = g_malloc (TIFFScanlineSize (tif));
  for (z = 0; z < depth; z++)
    {
      guint32 w = 0, h = 0;
      guint16 b = 0;

      if (!TIFFSetDirectory (tif, z))
        goto corrupt;
      TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
      TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
      TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &b);
      if (w != width || h != height || b != bits)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: page %u is %u × %u × %u-bit, page 0 is %u × %u × %u-bit"), path, z,
                       w, h, b, width, height, bits);
          TIFFClose (tif);
          return NULL;
        }
      for (y = 0; y < height; y++)
        {
          float *dst = airy_stack_plane (stack, z) + (gsize) y * width;
          guint x;

          if (TIFFReadScanline (tif, row, y, 0) < 0)
            goto corrupt;
          if (bits == 8)
            for (x = 0; x < width; x++)
              dst[x] = row[x];
          else if (bits == 16)
            for (x = 0; x < width; x++)
              dst[x] = ((guint16 *) row)[x];
          else
            memcpy (dst, row, width * sizeof (float));
        }
    }
  TIFFClose (tif);
  return g_steal_pointer (&stack);

corrupt:
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: corrupt or truncated TIFF (%s)"),
               path, tiff_last_message ());
  TIFFClose (tif);
  return NULL;
}
