/* An independent decode of a TIFF the reader accepted, for fuzz-tiff.c:
 * the IFD chain and the strip tables parsed here from the bytes (not
 * through libtiff, which pads a short StripOffsets array with zeros), the
 * pixels of uncompressed strips taken from the file at those offsets,
 * compressed strips decoded with libtiff's TIFFReadEncodedStrip after
 * checking that its strip table is the file's. The harness compares this
 * with Airy's stack and aborts on any difference.
 *
 * Only what is unambiguous is compared: a page whose tags come in types
 * or counts this parser does not take, or an OME file (whose XML maps
 * planes to IFDs), is left out (DECODE_UNKNOWN), never reported. */
#pragma once

#include <tiffio.h>

typedef enum { DECODE_SAME, DECODE_UNKNOWN, DECODE_DIFFERENT } DecodeResult;

typedef struct
{
  const uint8_t *d;
  uint64_t       n;
  gboolean       be, big;
} RawFile;

typedef struct
{
  uint64_t ifd, next;
  uint64_t width, height, rows_per_strip, bits, format, compression, fill, subfile;
  uint64_t n_offsets, n_counts;
  uint64_t offsets_at, counts_at;     /* where entry 0 of each array is */
  guint    offsets_size, counts_size; /* bytes per entry */
  gboolean imagej, ome;
} RawPage;

static gboolean
raw_uint (const RawFile *f, uint64_t at, guint size, uint64_t *out)
{
  uint64_t v = 0;
  guint i;

  if (at > f->n || size > f->n - at)
    return FALSE;
  for (i = 0; i < size; i++)
    v |= (uint64_t) f->d[at + i] << (8 * (f->be ? size - 1 - i : i));
  *out = v;
  return TRUE;
}

static guint
type_size (uint64_t type)
{
  switch (type)
    {
    case 1: return 1;    /* BYTE */
    case 3: return 2;    /* SHORT */
    case 4: return 4;    /* LONG */
    case 16: return 8;   /* LONG8 */
    default: return 0;   /* anything else: not parsed here */
    }
}

/* One IFD's tags that decide where the pixels are. FALSE: not a page this
 * parser can describe with certainty. */
static gboolean
raw_page_read (const RawFile *f, uint64_t ifd, RawPage *p)
{
  guint entry = f->big ? 20 : 12, field = f->big ? 8 : 4;
  uint64_t n, i;
  guint seen = 0;

  memset (p, 0, sizeof *p);
  p->ifd = ifd;
  p->bits = 1;
  p->format = 1;
  p->compression = 1;
  p->fill = 1;
  p->rows_per_strip = G_MAXUINT32;
  if (!raw_uint (f, ifd, f->big ? 8 : 2, &n) || n == 0 || n > 4096)
    return FALSE;
  for (i = 0; i < n; i++)
    {
      uint64_t at = ifd + (f->big ? 8 : 2) + i * entry, tag, type, count, value_at, v0 = 0;
      guint size;

      if (!raw_uint (f, at, 2, &tag) || !raw_uint (f, at + 2, 2, &type) || !raw_uint (f, at + 4, f->big ? 8 : 4, &count))
        return FALSE;
      value_at = at + (f->big ? 12 : 8);
      if (tag != 254 && tag != 256 && tag != 257 && tag != 258 && tag != 259 && tag != 266 && tag != 270
          && tag != 273 && tag != 278 && tag != 279 && tag != 339)
        continue;
      /* a tag given twice: which one libtiff keeps is not this parser's
       * business (bit: the tag's place in the list above) */
      {
        static const guint16 tags[] = { 254, 256, 257, 258, 259, 266, 270, 273, 278, 279, 339 };
        guint bit = 0;

        while (tags[bit] != tag)
          bit++;
        if (seen & (1u << bit))
          return FALSE;
        seen |= 1u << bit;
      }
      if (tag == 270)
        {
          /* the description only says which layout applies */
          uint64_t off = value_at, k;
          if (count > field && !raw_uint (f, value_at, field, &off))
            return FALSE;
          if (type != 2 || off > f->n || count > f->n - off)
            return FALSE;
          p->imagej = count >= 7 && memcmp (f->d + off, "ImageJ=", 7) == 0;
          for (k = 0; k + 4 <= count && !p->ome; k++)
            p->ome = memcmp (f->d + off + k, "<OME", 4) == 0;
          continue;
        }
      /* a type libtiff converts and this does not, or a count other than
       * one for a single value (libtiff drops such a tag) */
      size = type_size (type);
      if (size == 0 || count == 0 || count > f->n || (tag != 273 && tag != 279 && count != 1))
        return FALSE;
      if (count * size > field && (!raw_uint (f, value_at, field, &value_at)))
        return FALSE;
      if (!raw_uint (f, value_at, size, &v0))
        return FALSE;
      switch (tag)
        {
        case 254: p->subfile = v0; break;
        case 256: p->width = v0; break;
        case 257: p->height = v0; break;
        case 258: p->bits = v0; break;
        case 259: p->compression = v0; break;
        case 266: p->fill = v0; break;
        case 278: p->rows_per_strip = v0 ? v0 : G_MAXUINT32; break;   /* libtiff drops a 0 */
        case 339: p->format = v0; break;
        case 273: p->n_offsets = count; p->offsets_at = value_at; p->offsets_size = size; break;
        case 279: p->n_counts = count; p->counts_at = value_at; p->counts_size = size; break;
        default: break;
        }
    }
  return raw_uint (f, ifd + (f->big ? 8 : 2) + n * entry, field, &p->next);
}

/* Samples in the file's byte order → float, as a reader of them must. */
static gboolean
raw_sample (const RawFile *f, const uint8_t *src, uint64_t bits, uint64_t format, gboolean file_order, float *out)
{
  RawFile one = { src, bits / 8, file_order ? f->be : G_BYTE_ORDER == G_BIG_ENDIAN, FALSE };
  uint64_t u;

  if (!raw_uint (&one, 0, (guint) (bits / 8), &u))
    return FALSE;
  if (format == 3 && bits == 32)
    {
      guint32 w = (guint32) u;
      memcpy (out, &w, 4);
    }
  else if (format == 3 && bits == 64)
    {
      double v;
      memcpy (&v, &u, 8);
      *out = (float) v;
    }
  else if (format == 2)
    *out = bits == 8 ? (float) (gint8) u : bits == 16 ? (float) (gint16) u : (float) (gint32) u;
  else
    *out = bits == 32 ? (float) (guint32) u : (float) u;
  return TRUE;
}

/* The page's pixels into `dst` (width × height floats). */
static DecodeResult
raw_page_decode (const RawFile *f, const char *path, const RawPage *p, float *dst)
{
  uint64_t rps = MAX (MIN (p->rows_per_strip, p->height), 1), n_strips = (p->height + rps - 1) / rps;
  uint64_t scan = p->width * (p->bits / 8), s, k;

  if ((p->bits != 8 && p->bits != 16 && p->bits != 32 && p->bits != 64) || p->fill != 1)
    return DECODE_UNKNOWN;
  /* what the reader was fooled by: a strip table shorter than the strips */
  if (p->n_offsets != n_strips || p->n_counts != n_strips)
    return DECODE_DIFFERENT;
  if (p->compression == 1)
    {
      for (s = 0; s < n_strips; s++)
        {
          uint64_t off, rows = MIN (rps, p->height - s * rps);

          if (!raw_uint (f, p->offsets_at + s * p->offsets_size, p->offsets_size, &off))
            return DECODE_UNKNOWN;
          /* accepted, yet the strip is not in the file (a count short of
           * the rows is estimated by libtiff: the pixels still decide) */
          if (off < 8 || off > f->n || rows * scan > f->n - off)
            return DECODE_DIFFERENT;
          for (k = 0; k < rows * p->width; k++)
            if (!raw_sample (f, f->d + off + k * (p->bits / 8), p->bits, p->format, TRUE,
                             &dst[s * rps * p->width + k]))
              return DECODE_UNKNOWN;
        }
      return DECODE_SAME;
    }
  /* compressed: libtiff decodes, from the file's own strip table */
  {
    TIFF *tif = TIFFOpen (path, "rmc");   /* as Airy: no strip chopping */
    g_autofree uint8_t *buf = g_try_malloc (rps * scan);
    DecodeResult result = DECODE_SAME;

    if (tif == NULL || buf == NULL || !TIFFSetSubDirectory (tif, p->ifd) || TIFFNumberOfStrips (tif) != n_strips)
      result = DECODE_UNKNOWN;
    /* libtiff 4.5's libdeflate path leaves a strip whose data run past it
     * unwritten; its zlib path decodes it (Airy's reader asks for it too) */
    else if (p->compression == COMPRESSION_ADOBE_DEFLATE || p->compression == COMPRESSION_DEFLATE)
      TIFFSetField (tif, TIFFTAG_DEFLATE_SUBCODEC, DEFLATE_SUBCODEC_ZLIB);
    for (s = 0; result == DECODE_SAME && s < n_strips; s++)
      {
        uint64_t off, rows = MIN (rps, p->height - s * rps);

        if (!raw_uint (f, p->offsets_at + s * p->offsets_size, p->offsets_size, &off))
          result = DECODE_UNKNOWN;
        else if (TIFFGetStrileOffset (tif, (uint32_t) s) != off
                 || TIFFReadEncodedStrip (tif, (uint32_t) s, buf, (tmsize_t) (rows * scan)) != (tmsize_t) (rows * scan))
          result = DECODE_DIFFERENT;
        for (k = 0; result == DECODE_SAME && k < rows * p->width; k++)
          if (!raw_sample (f, buf + k * (p->bits / 8), p->bits, p->format, FALSE, &dst[s * rps * p->width + k]))
            result = DECODE_UNKNOWN;
      }
    if (tif)
      TIFFClose (tif);
    return result;
  }
}

/* Airy's stack against the file's pages: plain files page by page (the
 * reduced-resolution ones left out), ImageJ files by their channel,
 * frame and slice, ImageJ's single-IFD stacks from the first strip on. */
static DecodeResult
tiff_decode_compare (const uint8_t *data, size_t size, const char *path, const AiryStack *stack)
{
  RawFile f = { data, size, FALSE, FALSE };
  g_autoptr(GArray) pages = g_array_new (FALSE, FALSE, sizeof (RawPage));
  g_autofree float *plane = NULL;
  gsize plane_n = (gsize) stack->height * stack->width;
  uint64_t magic, ifd, k;
  const RawPage *first;
  gboolean complete;

  if (size < 8 || (memcmp (data, "II", 2) != 0 && memcmp (data, "MM", 2) != 0))
    return DECODE_UNKNOWN;
  f.be = data[0] == 'M';
  if (!raw_uint (&f, 2, 2, &magic) || (magic != 42 && magic != 43))
    return DECODE_UNKNOWN;
  f.big = magic == 43;
  if (!raw_uint (&f, f.big ? 8 : 4, f.big ? 8 : 4, &ifd))
    return DECODE_UNKNOWN;
  /* the chain as libtiff walks it: each IFD once; `complete`: to its end */
  while (ifd != 0 && pages->len < 100000)
    {
      RawPage p;
      guint i;

      for (i = 0; i < pages->len; i++)
        if (g_array_index (pages, RawPage, i).ifd == ifd)
          break;
      if (i < pages->len || !raw_page_read (&f, ifd, &p))
        break;
      g_array_append_val (pages, p);
      ifd = p.next;
    }
  complete = ifd == 0;
  if (pages->len == 0)
    return DECODE_UNKNOWN;
  first = &g_array_index (pages, RawPage, 0);
  if (first->ome || first->width != stack->width || first->height != stack->height)
    return DECODE_UNKNOWN;
  plane = g_new (float, plane_n);

  if (first->imagej && complete && pages->len == 1
      && (uint64_t) stack->depth * MAX (stack->n_channels, 1) * MAX (stack->n_frames, 1) > 1)
    {
      /* planes back to back from the first strip, channel fastest */
      uint64_t off, plane_bytes = plane_n * (first->bits / 8), i;

      if (first->compression != 1 || first->n_offsets < 1 || (first->bits != 8 && first->bits != 16
                                                               && first->bits != 32 && first->bits != 64)
          || !raw_uint (&f, first->offsets_at, first->offsets_size, &off))
        return DECODE_UNKNOWN;
      for (k = 0; k < stack->depth; k++)
        {
          uint64_t at = off + (((uint64_t) stack->frame * stack->depth + k) * MAX (stack->n_channels, 1)
                               + stack->channel) * plane_bytes;

          if (at > size || plane_bytes > size - at)
            return DECODE_DIFFERENT;
          for (i = 0; i < plane_n; i++)
            if (!raw_sample (&f, data + at + i * (first->bits / 8), first->bits, first->format, TRUE, &plane[i]))
              return DECODE_UNKNOWN;
          if (memcmp (plane, airy_stack_plane ((AiryStack *) stack, (guint) k), plane_n * 4) != 0)
            return DECODE_DIFFERENT;
        }
      return DECODE_SAME;
    }

  for (k = 0; k < stack->depth; k++)
    {
      const RawPage *p = NULL;
      DecodeResult r;

      if (first->imagej)
        {
          uint64_t index = ((uint64_t) stack->frame * stack->depth + k) * MAX (stack->n_channels, 1) + stack->channel;
          if (index < pages->len)
            p = &g_array_index (pages, RawPage, index);
        }
      else
        {
          uint64_t i, full = 0;
          for (i = 0; i < pages->len && p == NULL; i++)
            if (!(g_array_index (pages, RawPage, i).subfile & FILETYPE_REDUCEDIMAGE) && full++ == k)
              p = &g_array_index (pages, RawPage, i);
        }
      if (p == NULL)
        return DECODE_UNKNOWN;   /* a page this parser could not follow */
      if (p->width != stack->width || p->height != stack->height)
        return DECODE_DIFFERENT;
      r = raw_page_decode (&f, path, p, plane);
      if (r != DECODE_SAME)
        return r;
      if (memcmp (plane, airy_stack_plane ((AiryStack *) stack, (guint) k), plane_n * 4) != 0)
        return DECODE_DIFFERENT;
    }
  return DECODE_SAME;
}
