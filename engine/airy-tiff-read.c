/* TIFF stacks, reading: through libtiff, with every page checked and the
 * memory budget applied before anything is allocated; the file's own
 * layout (ImageJ, OME, plain pages) is airy-tiff-layout.c's. */
#define G_LOG_DOMAIN "airy-tiff"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <glib/gstdio.h>

#include "airy-stack.h"
#include "airy-error.h"
#include "airy-atomic-private.h"
#include "airy-run.h"
#include "airy-tiff-private.h"



static int
tiff_error_cb (TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap)
{
  Reader *r = user_data;

  if (r->message == NULL)
    r->message = g_strdup_vprintf (fmt, ap);
  return 1;
}

static int
tiff_warning_cb (TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap)
{
  return 1;
}

const char *
_airy_tiff_reader_message (Reader *r)
{
  return r->message ? r->message : _("unknown libtiff error");
}

/* client procs for memory and for a file descriptor */
static tmsize_t
mem_read (thandle_t h, void *buf, tmsize_t n)
{
  Reader *r = (Reader *) h;
  guint64 avail = r->pos < r->size ? r->size - r->pos : 0;
  tmsize_t got = (tmsize_t) MIN ((guint64) n, avail);

  memcpy (buf, r->mem + r->pos, got);
  r->pos += got;
  return got;
}

static tmsize_t
mem_write (thandle_t h, void *buf, tmsize_t n)
{
  return -1;
}

static toff_t
mem_seek (thandle_t h, toff_t off, int whence)
{
  Reader *r = (Reader *) h;
  guint64 base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? r->pos : r->size;

  r->pos = base + off;
  return r->pos;
}

static int
mem_close (thandle_t h)
{
  return 0;
}

static toff_t
mem_size (thandle_t h)
{
  return ((Reader *) h)->size;
}

static int
no_map (thandle_t h, void **base, toff_t *size)
{
  return 0;
}

static void
no_unmap (thandle_t h, void *base, toff_t size)
{
}

static tmsize_t
fd_read (thandle_t h, void *buf, tmsize_t n)
{
  Reader *r = (Reader *) h;
  tmsize_t done = 0;

  while (done < n)
    {
      gssize got = read (r->fd, (guint8 *) buf + done, (gsize) (n - done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      done += got;
    }
  return done;
}

static toff_t
fd_seek (thandle_t h, toff_t off, int whence)
{
  Reader *r = (Reader *) h;
  off_t got = lseek (r->fd, (off_t) off, whence);
  return got < 0 ? (toff_t) -1 : (toff_t) got;
}

static toff_t
fd_size (thandle_t h)
{
  return ((Reader *) h)->size;
}

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

static void
reader_close (Reader *r)
{
  if (r->tif)
    TIFFClose (r->tif);
  r->tif = NULL;
  if (r->fd >= 0)
    close (r->fd);
  r->fd = -1;
  g_clear_pointer (&r->message, g_free);
}

/* unaligned reads in the file's byte order */
static guint64
file_uint (const Reader *r, const guint8 *p, guint size)
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
#define U16(p) ((guint16) file_uint (r, (p), 2))
#define U32(p) ((guint32) file_uint (r, (p), 4))
#define U64(p) file_uint (r, (p), 8)

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
static gboolean
strip_entries_check (Reader *r, guint z, guint32 n_strips, GError **error)
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

/* Samples → float32. `swap`: the bytes are in the other byte order. */
static void
convert_samples (const guint8 *src, float *dst, gsize n, guint16 bits, guint16 format, gboolean swap)
{
  gsize i;

#define CONVERT(type, swapfn)                                   \
  for (i = 0; i < n; i++)                                       \
    {                                                           \
      type v;                                                   \
      memcpy (&v, src + i * sizeof (type), sizeof (type));      \
      if (swap)                                                 \
        swapfn;                                                 \
      dst[i] = (float) v;                                       \
    }

  if (bits == 8)
    {
      if (format == SAMPLEFORMAT_INT)
        for (i = 0; i < n; i++)
          dst[i] = (gint8) src[i];
      else
        for (i = 0; i < n; i++)
          dst[i] = src[i];
    }
  else if (bits == 16 && format == SAMPLEFORMAT_INT)
    {
      CONVERT (gint16, v = (gint16) GUINT16_SWAP_LE_BE ((guint16) v));
    }
  else if (bits == 16)
    {
      CONVERT (guint16, v = GUINT16_SWAP_LE_BE (v));
    }
  else if (bits == 32 && format == SAMPLEFORMAT_INT)
    {
      CONVERT (gint32, v = (gint32) GUINT32_SWAP_LE_BE ((guint32) v));
    }
  else if (bits == 32 && format == SAMPLEFORMAT_UINT)
    {
      CONVERT (guint32, v = GUINT32_SWAP_LE_BE (v));
    }
  else if (bits == 32)
    {
      if (!swap && (const void *) src != (const void *) dst)
        memcpy (dst, src, n * 4);
      else if (swap)
        for (i = 0; i < n; i++)
          {
            guint32 v;
            memcpy (&v, src + 4 * i, 4);
            v = GUINT32_SWAP_LE_BE (v);
            memcpy (&dst[i], &v, 4);
          }
    }
  else
    {
      for (i = 0; i < n; i++)
        {
          guint64 u;
          double v;
          memcpy (&u, src + 8 * i, 8);
          if (swap)
            u = GUINT64_SWAP_LE_BE (u);
          memcpy (&v, &u, 8);
          dst[i] = (float) v;
        }
    }
#undef CONVERT
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
  if (!strip_entries_check (r, z, n, error))
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

/* A scratch buffer that grows to what a strip needs. */
typedef struct
{
  guint8 *data;
  gsize   size;
} Scratch;

static guint8 *
scratch_get (Scratch *s, gsize n)
{
  if (n > s->size)
    {
      g_free (s->data);
      s->data = g_try_malloc (n);
      s->size = s->data ? n : 0;
    }
  return s->data;
}

static gboolean
native_float (const Layout *l)
{
  return l->bits == 32 && l->format == SAMPLEFORMAT_IEEEFP;
}

/* rows read for a sink go to it */
static void
emit_rows (Reader *r, guint y0, guint rows, guint width, const float *values)
{
  guint i;

  if (r->sink != NULL)
    for (i = 0; i < rows; i++)
      r->sink->row (y0 + i, values + (gsize) i * width, r->sink->user_data);
}

static gboolean
read_plane_strips (Reader *r, const Layout *l, guint z, float *dst, Scratch *scratch, Scratch *window,
                   GError **error)
{
  guint32 rows_per_strip = l->height, n, s;
  gsize scan = (gsize) l->width * (l->bits / 8);
  guint16 compression = COMPRESSION_NONE;

  /* libtiff 4.5's libdeflate path reports a deflate strip whose data run
   * past the strip as read, with the strip left unwritten (uninitialised
   * pixels, exit 0); its zlib path decodes it */
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_COMPRESSION, &compression);
  if (compression == COMPRESSION_ADOBE_DEFLATE || compression == COMPRESSION_DEFLATE)
    TIFFSetField (r->tif, TIFFTAG_DEFLATE_SUBCODEC, DEFLATE_SUBCODEC_ZLIB);
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
  rows_per_strip = MIN (MAX (rows_per_strip, 1), l->height);
  n = TIFFNumberOfStrips (r->tif);
  if (n != (l->height + rows_per_strip - 1) / rows_per_strip)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: plane %u has %u strips, %u expected"), r->name, z, n,
                   (l->height + rows_per_strip - 1) / rows_per_strip);
      return FALSE;
    }
  for (s = 0; s < n; s++)
    {
      guint32 y0 = s * rows_per_strip, rows = MIN (rows_per_strip, l->height - y0);
      gsize want = rows * scan;
      /* row by row: a strip's rows in `window` */
      float *out = r->sink ? (float *) scratch_get (window, (gsize) rows * l->width * 4) : dst + (gsize) y0 * l->width;
      /* float32 goes straight to its place; libtiff swaps to host order */
      guint8 *buf = native_float (l) ? (guint8 *) out : scratch_get (scratch, want);
      tmsize_t got;

      if (buf == NULL || out == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory to read plane %u"), r->name, z);
          return FALSE;
        }
      got = TIFFReadEncodedStrip (r->tif, s, buf, (tmsize_t) want);
      if (got < 0 || (gsize) got < want)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: plane %u: corrupt or truncated TIFF (%s)"),
                       r->name, z, got < 0 ? _airy_tiff_reader_message (r) : _("short strip"));
          return FALSE;
        }
      if (!native_float (l))
        convert_samples (buf, out, (gsize) rows * l->width, l->bits, l->format, FALSE);
      emit_rows (r, y0, rows, l->width, out);
    }
  return TRUE;
}

/* A plane of a single-IFD ImageJ stack: raw bytes in the file's order. */
static gboolean
read_plane_raw (Reader *r, const Layout *l, guint z, float *dst, Scratch *scratch, Scratch *window,
                GError **error)
{
  gsize scan = (gsize) l->width * (l->bits / 8);
  guint rows = (guint) MAX (1, MIN (l->height, (r->sink ? 1u << 20 : 16u << 20) / scan)), y;

  for (y = 0; y < l->height; y += rows)
    {
      guint n = MIN (rows, l->height - y);
      float *out = r->sink ? (float *) scratch_get (window, (gsize) n * l->width * 4) : dst + (gsize) y * l->width;
      guint8 *buf = native_float (l) ? (guint8 *) out : scratch_get (scratch, n * scan);

      if (buf == NULL || out == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory to read plane %u"), r->name, z);
          return FALSE;
        }
      if (!_airy_tiff_reader_pread (r, l->ifd[z] + (guint64) y * scan, buf, n * scan))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: plane %u: truncated"), r->name, z);
          return FALSE;
        }
      convert_samples (buf, out, (gsize) n * l->width, l->bits, l->format, r->swap);
      emit_rows (r, y, n, l->width, out);
    }
  return TRUE;
}

/* Why libtiff opened nothing, where its words would be vague: a header whose first
 * IFD offset is 0 or lies beyond the end (a file cut after its header). */
static void
header_error (Reader *r, GError **error)
{
  guint8 h[16];
  guint64 ifd = 0;
  gboolean big;

  if (_airy_tiff_reader_pread (r, 0, h, 8)
      && (memcmp (h, "II", 2) == 0 || memcmp (h, "MM", 2) == 0))
    {
      r->swap = (h[0] == 'I') != (G_BYTE_ORDER == G_LITTLE_ENDIAN);
      big = file_uint (r, h + 2, 2) == 43;
      if (!big)
        ifd = file_uint (r, h + 4, 4);
      else if (_airy_tiff_reader_pread (r, 0, h, 16))
        ifd = file_uint (r, h + 8, 8);
      else
        ifd = G_MAXUINT64;
      if (ifd == 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: a TIFF header with no image: its first IFD offset is 0"), r->name);
          return;
        }
      if (ifd != G_MAXUINT64 && ifd >= r->size)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: truncated TIFF: the first IFD is at byte %llu, the file has %llu bytes"),
                       r->name, (unsigned long long) ifd, (unsigned long long) r->size);
          return;
        }
    }
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a readable TIFF (%s)"), r->name,
               _airy_tiff_reader_message (r));
}

static AiryStack *
read_stack (Reader *r, const AiryReadOptions *options, gboolean pixels, GError **error)
{
  static const AiryReadOptions defaults = AIRY_READ_OPTIONS_INIT;
  g_autoptr(AiryStack) stack = NULL;
  TIFFOpenOptions *topts;
  Layout l;
  guint z, first, depth;

  options = options ? options : &defaults;
  first = options->n_planes ? options->first_plane : 0;
  topts = TIFFOpenOptionsAlloc ();
  TIFFOpenOptionsSetErrorHandlerExtR (topts, tiff_error_cb, r);
  TIFFOpenOptionsSetWarningHandlerExtR (topts, tiff_warning_cb, r);
  /* no tag or strip array may make libtiff allocate more than this */
  TIFFOpenOptionsSetMaxSingleMemAlloc (topts, 256 << 20);
  r->pos = 0;
  if (r->fd >= 0)
    r->tif = TIFFClientOpenExt (r->name, "rmc", (thandle_t) r, fd_read, mem_write, fd_seek, mem_close,
                                fd_size, no_map, no_unmap, topts);
  else
    r->tif = TIFFClientOpenExt (r->name, "rmc", (thandle_t) r, mem_read, mem_write, mem_seek, mem_close,
                                mem_size, no_map, no_unmap, topts);
  TIFFOpenOptionsFree (topts);
  if (r->tif == NULL)
    {
      header_error (r, error);
      return NULL;
    }
  r->swap = TIFFIsByteSwapped (r->tif);

  if (!_airy_tiff_layout_find (r, options, &l, error))
    {
      _airy_tiff_layout_clear (&l);
      return NULL;
    }
  /* a range of planes: those only, with their z */
  depth = options->n_planes && pixels ? options->n_planes : l.depth;
  /* to a sink: the first plane, never held whole */
  if (r->sink != NULL)
    depth = 1;
  if (pixels && options->n_planes && ((guint64) first + depth > l.depth))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: planes %u to %u asked for, the file has %u"),
                   r->name, first, first + depth - 1, l.depth);
      _airy_tiff_layout_clear (&l);
      return NULL;
    }
  if (!pixels || r->sink != NULL)
    {
      stack = g_new0 (AiryStack, 1);
      stack->depth = r->sink != NULL ? depth : l.depth;
      stack->height = l.height;
      stack->width = l.width;
    }
  else
    {
      if (!_airy_tiff_budget_check (r, options, depth, l.height, l.width, error))
        {
          _airy_tiff_layout_clear (&l);
          return NULL;
        }
      stack = _airy_stack_new_uninitialised (depth, l.height, l.width);
      if (stack == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for %u × %u × %u"),
                       r->name, depth, l.height, l.width);
          _airy_tiff_layout_clear (&l);
          return NULL;
        }
    }
  stack->bits = l.bits;
  stack->n_channels = l.n_channels;
  stack->n_frames = l.n_frames;
  stack->channel = l.channel;
  stack->frame = l.frame;
  stack->dx = l.dx;
  stack->dy = l.dy;
  stack->dz = l.dz;
  stack->z0 = l.z0 + (pixels ? first : 0) * l.dz;
  if (l.z)
    airy_stack_set_z (stack, l.z + (pixels ? first : 0));
  /* every channel's wavelength, as the viewer names channels by them */
  if (l.wavelengths)
    airy_stack_set_provenance (stack, l.n_channels, l.wavelengths, NULL, NULL);

  if (r->sink != NULL && !r->sink->begin (stack, r->sink->user_data, error))
    {
      _airy_tiff_layout_clear (&l);
      return NULL;
    }
  if (pixels)
    {
      Scratch scratch = { NULL, 0 }, window = { NULL, 0 };
      gboolean ok = TRUE;

      for (z = first; ok && z < first + depth; z++)
        {
          float *dst = r->sink ? NULL : airy_stack_plane (stack, z - first);

          if (l.contiguous)
            ok = read_plane_raw (r, &l, z, dst, &scratch, &window, error);
          else if (!TIFFSetSubDirectory (r->tif, l.ifd[z]))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: plane %u: corrupt TIFF (%s)"),
                           r->name, z, _airy_tiff_reader_message (r));
              ok = FALSE;
            }
          else
            ok = read_plane_strips (r, &l, z, dst, &scratch, &window, error);
        }
      g_free (scratch.data);
      g_free (window.data);
      if (!ok)
        {
          _airy_tiff_layout_clear (&l);
          return NULL;
        }
    }
  _airy_tiff_layout_clear (&l);
  return g_steal_pointer (&stack);
}

/* Airy's tags are known to libtiff so that they come back typed */
static TIFFExtendProc parent_extender;

static void
tag_extender (TIFF *tif)
{
  static const TIFFFieldInfo fields[] = {
    { TAG_AIRY_Z, TIFF_VARIABLE2, TIFF_VARIABLE2, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *) "AiryZPositions" },
    { TAG_AIRY_WAVELENGTHS, TIFF_VARIABLE2, TIFF_VARIABLE2, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1,
      (char *) "AiryChannelWavelengths" },
  };

  TIFFMergeFieldInfo (tif, fields, G_N_ELEMENTS (fields));
  if (parent_extender)
    parent_extender (tif);
}

static void
tiff_init (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      parent_extender = TIFFSetTagExtender (tag_extender);
      /* the global handlers stay quiet: every call here has its own */
      TIFFSetErrorHandler (NULL);
      TIFFSetWarningHandler (NULL);
      g_once_init_leave (&once, 1);
    }
}

static AiryStack *
read_file (const char *path, const AiryReadOptions *options, gboolean pixels, const AiryRowSink *sink,
           GError **error)
{
  Reader r = { path, NULL, NULL, -1, NULL, 0, 0, FALSE, sink };
  g_autoptr(GError) local = NULL;
  GStatBuf st;
  AiryStack *stack;

  tiff_init ();
  r.fd = _airy_input_open (path, FALSE, &local);
  if (r.fd < 0)
    {
      int e = errno;
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      else if (e == ENOENT)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: no such file"), path);
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", path, g_strerror (e));
      return NULL;
    }
  if (fstat (r.fd, &st) != 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", path, g_strerror (e));
      close (r.fd);
      return NULL;
    }
  r.size = (guint64) st.st_size;
  stack = read_stack (&r, options, pixels, error);
  reader_close (&r);
  return stack;
}

AiryStack *
airy_tiff_read_full (const char            *path,
                     const AiryReadOptions *options,
                     GError               **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return read_file (path, options, TRUE, NULL, error);
}

AiryStack *
airy_tiff_read (const char *path,
                GError    **error)
{
  return airy_tiff_read_full (path, NULL, error);
}

gboolean
_airy_tiff_read_rows (const char        *path,
                      const AiryRowSink *sink,
                      GError           **error)
{
  g_autoptr(AiryStack) head = read_file (path, NULL, TRUE, sink, error);

  return head != NULL;
}

AiryStack *
airy_tiff_probe (const char            *path,
                 const AiryReadOptions *options,
                 GError               **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return read_file (path, options, FALSE, NULL, error);
}

AiryStack *
_airy_tiff_read_memory (const guint8          *data,
                        gsize                  length,
                        const char            *name,
                        const AiryReadOptions *options,
                        GError               **error)
{
  Reader r = { name, NULL, NULL, -1, data, length, 0, FALSE, NULL };
  AiryStack *stack;

  tiff_init ();
  stack = read_stack (&r, options, TRUE, error);
  reader_close (&r);
  return stack;
}
