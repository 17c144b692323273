/* TIFF stacks, reading: the reader's pages, below both the stack reader
 * (airy-tiff-read.c) and its layout finder (airy-tiff-layout.c), which
 * call these and never each other back: raw bytes at an offset, an IFD's
 * entries as the file has them, a page's fields and their checks, the
 * memory budget of a stack. */
#define G_LOG_DOMAIN "airy-tiff"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <tiffio.h>

#include "airy-stack.h"
#include "airy-error.h"
#include "airy-run.h"
#include "airy-tiff-private.h"

/* Raw bytes at an offset (ImageJ's single-IFD stacks keep planes libtiff
 * does not know about). */
gboolean
_airy_tiff_reader_pread (Reader *r, guint64 offset, void *buf, gsize n)
{
  if (offset > r->size || n > r->size - offset)
    return FALSE;
  if (r->fd < 0)
    {
      memcpy (buf, r->mem + offset, n);
      return TRUE;
    }
  while (n > 0)
    {
      gssize got = pread (r->fd, buf, n, (off_t) offset);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return FALSE;
      buf = (guint8 *) buf + got;
      offset += (guint64) got;
      n -= (gsize) got;
    }
  return TRUE;
}

/* unaligned reads in the file's byte order */
guint64
_airy_tiff_file_uint (const Reader *r, const guint8 *p, guint size)
{
  guint16 v16;
  guint32 v32;
  guint64 v64;

  switch (size)
    {
    case 2:
      memcpy (&v16, p, 2);
      return r->swap ? GUINT16_SWAP_LE_BE (v16) : v16;
    case 4:
      memcpy (&v32, p, 4);
      return r->swap ? GUINT32_SWAP_LE_BE (v32) : v32;
    default:
      memcpy (&v64, p, 8);
      return r->swap ? GUINT64_SWAP_LE_BE (v64) : v64;
    }
}
#define U16(p) ((guint16) _airy_tiff_file_uint (r, (p), 2))
#define U32(p) ((guint32) _airy_tiff_file_uint (r, (p), 4))
#define U64(p) _airy_tiff_file_uint (r, (p), 8)

/* The entry of `tag` in the IFD at `ifd`, as the file has it (libtiff
 * pads or estimates some arrays, which hides what the file really holds):
 * its type, its count, and its value-or-offset field (raw, in the file's
 * byte order). FALSE when the IFD has no such entry. */
static gboolean
ifd_entry (Reader *r, guint64 ifd, guint16 tag, guint16 *type, guint64 *count, guint8 value[8])
{
  gboolean big = TIFFIsBigTIFF (r->tif);
  guint entry = big ? 20 : 12;
  guint64 n, i;
  guint8 buf[20];

  if (!_airy_tiff_reader_pread (r, ifd, buf, big ? 8 : 2))
    return FALSE;
  n = big ? U64 (buf) : U16 (buf);
  for (i = 0; i < MIN (n, 4096); i++)
    {
      guint64 at = ifd + (big ? 8 : 2) + i * entry;

      if (!_airy_tiff_reader_pread (r, at, buf, entry))
        return FALSE;
      if (U16 (buf) != tag)
        continue;
      *type = U16 (buf + 2);
      *count = big ? U64 (buf + 4) : U32 (buf + 4);
      memset (value, 0, 8);
      memcpy (value, buf + (big ? 12 : 8), big ? 8 : 4);
      return TRUE;
    }
  return FALSE;
}

/* The value of a RATIONAL tag of the IFD at `ifd`, read from the file:
 * libtiff hands resolutions out as float, which loses the 8th digit of a
 * pixel size. */
gboolean
_airy_tiff_read_rational (Reader *r, guint64 ifd, guint16 tag, double *out)
{
  guint16 type;
  guint64 count;
  guint8 value[8];
  guint32 pq[2];

  if (!ifd_entry (r, ifd, tag, &type, &count, value) || type != T_RATIONAL || count < 1)
    return FALSE;
  /* BigTIFF holds the 8 bytes in the entry */
  if (TIFFIsBigTIFF (r->tif))
    memcpy (pq, value, 8);
  else if (!_airy_tiff_reader_pread (r, U32 (value), pq, 8))
    return FALSE;
  pq[0] = r->swap ? GUINT32_SWAP_LE_BE (pq[0]) : pq[0];
  pq[1] = r->swap ? GUINT32_SWAP_LE_BE (pq[1]) : pq[1];
  if (pq[1] == 0)
    return FALSE;
  *out = (double) pq[0] / pq[1];
  return TRUE;
}
#undef U64
#undef U32
#undef U16

/* The current page's StripOffsets and StripByteCounts hold one entry per
 * strip: libtiff pads a short array with zeros (and then estimates the
 * counts), so a file with one offset for 16 strips would be read with 15
 * strips from the header. */
gboolean
_airy_tiff_strip_entries_check (Reader *r, guint z, guint32 n_strips, GError **error)
{
  guint64 ifd = TIFFCurrentDirOffset (r->tif), n_off = 0, n_count = 0;
  guint16 type;
  guint8 value[8];
  guint32 rows = 0, height = 0;

  if (!ifd_entry (r, ifd, TAG_STRIP_OFFSETS, &type, &n_off, value))
    n_off = 0;
  if (!ifd_entry (r, ifd, TAG_STRIP_BYTE_COUNTS, &type, &n_count, value))
    n_count = 0;
  if (n_off == n_strips && n_count == n_strips)
    return TRUE;
  TIFFGetField (r->tif, TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_ROWSPERSTRIP, &rows);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
               _("%s: page %u: %llu StripOffsets and %llu StripByteCounts entries for %u strips "
                 "(%u rows, %u per strip): one of each per strip expected"),
               r->name, z, (unsigned long long) n_off, (unsigned long long) n_count, n_strips, height,
               MIN (rows, height));
  return FALSE;
}

void
_airy_tiff_page_read (TIFF *tif, Page *p)
{
  guint16 v16;

  memset (p, 0, sizeof *p);
  p->offset = TIFFCurrentDirOffset (tif);
  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &p->width);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &p->height);
  TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &p->bits);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &p->format);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &p->spp);
  TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &p->compression);
  TIFFGetFieldDefaulted (tif, TIFFTAG_PLANARCONFIG, &p->planar);
  if (TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &v16))
    p->photometric = v16;
  else
    p->photometric = PHOTOMETRIC_MINISBLACK;
  TIFFGetFieldDefaulted (tif, TIFFTAG_SUBFILETYPE, &p->subfile);
  p->tiled = TIFFIsTiled (tif);
}

static const char *
format_name (guint16 format)
{
  switch (format)
    {
    case SAMPLEFORMAT_UINT: return "unsigned";
    case SAMPLEFORMAT_INT: return "signed";
    case SAMPLEFORMAT_IEEEFP: return "float";
    default: return "other";
    }
}

static gboolean
sample_supported (guint16 bits, guint16 format)
{
  if (format == SAMPLEFORMAT_UINT || format == SAMPLEFORMAT_INT)
    return bits == 8 || bits == 16 || bits == 32;
  if (format == SAMPLEFORMAT_IEEEFP)
    return bits == 32 || bits == 64;
  return FALSE;
}

gboolean
_airy_tiff_page_check (Reader *r, const Page *p, guint index, const Page *first, GError **error)
{
  if (p->width == 0 || p->height == 0 || p->width > 65536 || p->height > 65536)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: page %u is %u × %u pixels; Airy reads images of 1 to 65536 pixels a side"),
                   r->name, index, p->width, p->height);
      return FALSE;
    }
  if (p->spp != 1 || p->tiled || !sample_supported (p->bits, p->format)
      || p->photometric == PHOTOMETRIC_PALETTE)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: page %u: unsupported TIFF (%u-bit, sample format %u, %u samples per pixel%s%s); "
                     "Airy reads one sample per pixel, 8/16/32-bit integers or 32/64-bit floats, in strips"),
                   r->name, index, p->bits, p->format, p->spp,
                   p->tiled ? _(", tiled") : "",
                   p->photometric == PHOTOMETRIC_PALETTE ? _(", palette colour") : "");
      return FALSE;
    }
  if (p->compression != COMPRESSION_NONE && !TIFFIsCODECConfigured (p->compression))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: page %u uses compression %u, which this libtiff cannot decode"),
                   r->name, index, p->compression);
      return FALSE;
    }
  if (first != NULL && (p->width != first->width || p->height != first->height
                        || p->bits != first->bits || p->format != first->format))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: page %u is %u × %u, %u-bit %s; page 0 is %u × %u, %u-bit %s: a stack's "
                     "pages must agree"),
                   r->name, index, p->width, p->height, p->bits, format_name (p->format),
                   first->width, first->height, first->bits, format_name (first->format));
      return FALSE;
    }
  return TRUE;
}

gboolean
_airy_tiff_budget_check (Reader *r, const AiryReadOptions *o, guint64 planes, guint h, guint w, GError **error)
{
  guint64 budget = o->budget ? o->budget : airy_memory_budget ();
  guint64 need = planes * h * w * 4;

  if (need > budget)
    {
      g_autofree char *need_s = airy_format_bytes (need);
      g_autofree char *budget_s = airy_memory_budget_describe (budget, o->budget == 0);

      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("%s: a stack of %llu × %u × %u pixels needs %s as float32, more than "
                     "the memory budget of %s"),
                   r->name, (unsigned long long) planes, h, w, need_s, budget_s);
      return FALSE;
    }
  return TRUE;
}

const char *
_airy_tiff_reader_message (Reader *r)
{
  return r->message ? r->message : _("unknown libtiff error");
}

/* Checks that a page's data are in the file before reading them: a tiny
 * file must not claim gigabytes. */
gboolean
_airy_tiff_page_data_check (Reader *r, guint z, guint64 need, GError **error)
{
  guint32 n = TIFFNumberOfStrips (r->tif), s, width = 0, height = 0, rows = 0;
  guint16 compression = COMPRESSION_NONE, bits = 1;
  guint64 total = 0, header = TIFFIsBigTIFF (r->tif) ? 16 : 8, scan;

  TIFFGetFieldDefaulted (r->tif, TIFFTAG_COMPRESSION, &compression);
  TIFFGetField (r->tif, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField (r->tif, TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_ROWSPERSTRIP, &rows);
  rows = MIN (MAX (rows, 1), MAX (height, 1));
  scan = (guint64) width * (bits / 8);
  if (!_airy_tiff_strip_entries_check (r, z, n, error))
    return FALSE;
  for (s = 0; s < n; s++)
    {
      int err = 0;
      guint64 off = TIFFGetStrileOffsetWithErr (r->tif, s, &err);
      guint64 count = TIFFGetStrileByteCountWithErr (r->tif, s, &err);
      guint64 y0 = (guint64) s * rows;
      guint64 strip_rows = y0 < height ? MIN (rows, height - y0) : 0;

      if (err || off > r->size || count > r->size - off)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: plane %u: strip %u lies beyond the end of the file (%llu bytes)"),
                       r->name, z, s, (unsigned long long) r->size);
          return FALSE;
        }
      /* image data never start inside the file's header (a zero offset
       * is a missing one) */
      if (off < header)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: page %u: strip %u starts at byte %llu, inside the file's header"),
                       r->name, z, s, (unsigned long long) off);
          return FALSE;
        }
      if (compression == COMPRESSION_NONE && count < strip_rows * scan)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: page %u: strip %u holds %llu bytes, its %llu rows need %llu: truncated or corrupt"),
                       r->name, z, s, (unsigned long long) count, (unsigned long long) strip_rows,
                       (unsigned long long) (strip_rows * scan));
          return FALSE;
        }
      total += count;
    }
  /* uncompressed data are all there; compressed ones within deflate's
   * largest ratio (≈ 1032:1) */
  if ((compression == COMPRESSION_NONE && total < need)
      || (compression != COMPRESSION_NONE && total * 1100 < need))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: plane %u: %llu bytes of image data for a %llu-byte plane: truncated or corrupt"),
                   r->name, z, (unsigned long long) total, (unsigned long long) need);
      return FALSE;
    }
  return TRUE;
}

/* Walks the IFD chain (in order, each once) up to `limit` pages,
 * checking each page. */
gboolean
_airy_tiff_walk_pages (Reader *r, guint limit, gboolean skip_reduced, const Page *first, GArray *pages,
            gboolean *more, GError **error)
{
  Page p;

  *more = FALSE;
  g_array_set_size (pages, 0);
  if (!TIFFSetDirectory (r->tif, 0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: corrupt TIFF (%s)"), r->name, _airy_tiff_reader_message (r));
      return FALSE;
    }
  for (;;)
    {
      _airy_tiff_page_read (r->tif, &p);
      /* reduced-resolution copies (pyramids, thumbnails) are not planes */
      if (!skip_reduced || !(p.subfile & FILETYPE_REDUCEDIMAGE))
        {
          if (pages->len == limit)
            {
              *more = TRUE;
              return TRUE;
            }
          /* the page and its data, before anything is allocated for them */
          if (!_airy_tiff_page_check (r, &p, pages->len, pages->len ? &g_array_index (pages, Page, 0) : first, error)
              || !_airy_tiff_page_data_check (r, pages->len, (guint64) p.width * p.height * (p.bits / 8), error))
            return FALSE;
          g_array_append_val (pages, p);
        }
      if (!TIFFReadDirectory (r->tif))
        break;
    }
  if (r->message != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: corrupt TIFF after page %u (%s)"),
                   r->name, pages->len, _airy_tiff_reader_message (r));
      return FALSE;
    }
  return TRUE;
}
