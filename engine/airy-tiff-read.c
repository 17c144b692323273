/* TIFF stacks, reading: through libtiff, with every page checked and the
 * memory budget applied before anything is allocated; the file's own
 * layout (ImageJ, OME, plain pages) is airy-tiff-layout.c's, the pages'
 * fields and checks airy-tiff-page.c's. */
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
      big = _airy_tiff_file_uint (r, h + 2, 2) == 43;
      if (!big)
        ifd = _airy_tiff_file_uint (r, h + 4, 4);
      else if (_airy_tiff_reader_pread (r, 0, h, 16))
        ifd = _airy_tiff_file_uint (r, h + 8, 8);
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
  if (l.channel_names)
    {
      g_strfreev (stack->channel_names);
      stack->channel_names = g_strdupv (l.channel_names);
    }

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
