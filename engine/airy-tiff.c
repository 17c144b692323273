/* TIFF stacks (DESIGN §6): the writer lays files out itself, so that all
 * pixel data form one contiguous block (ImageJ reads `images=N` planes back
 * to back from the first strip offset; tifffile memory-maps the block), and
 * streams the block with large writes; the reader goes through libtiff
 * with every page checked and the memory budget applied before anything is
 * allocated. */
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
#include "airy-run.h"
#include "airy-tiff-private.h"

/* TIFF tags and types the writer uses */
enum
{
  TAG_NEW_SUBFILE_TYPE = 254, TAG_IMAGE_WIDTH = 256, TAG_IMAGE_LENGTH = 257,
  TAG_BITS_PER_SAMPLE = 258, TAG_COMPRESSION = 259, TAG_PHOTOMETRIC = 262,
  TAG_IMAGE_DESCRIPTION = 270, TAG_STRIP_OFFSETS = 273, TAG_SAMPLES_PER_PIXEL = 277,
  TAG_ROWS_PER_STRIP = 278, TAG_STRIP_BYTE_COUNTS = 279, TAG_X_RESOLUTION = 282,
  TAG_Y_RESOLUTION = 283, TAG_PLANAR_CONFIG = 284, TAG_RESOLUTION_UNIT = 296,
  TAG_SOFTWARE = 305, TAG_SAMPLE_FORMAT = 339,
  TAG_IJ_META_COUNTS = 50838, TAG_IJ_META = 50839,
  /* Airy's private tag: the exact z of every plane, µm (DOUBLE[depth]);
   * 65000–65535 is the TIFF range for private use without registration */
  TAG_AIRY_Z = 65500,
};

enum { T_BYTE = 1, T_ASCII = 2, T_SHORT = 3, T_LONG = 4, T_RATIONAL = 5, T_DOUBLE = 12, T_LONG8 = 16 };

static guint
type_size (guint16 type)
{
  switch (type)
    {
    case T_BYTE: case T_ASCII: return 1;
    case T_SHORT: return 2;
    case T_LONG: return 4;
    default: return 8;   /* RATIONAL, DOUBLE, LONG8 */
    }
}

/* ==================== writing ==================== */

/* One IFD entry; values in native byte order (the file's order). */
typedef struct
{
  guint16       tag;
  guint16       type;
  guint64       count;
  const void   *data;
  guint64       shared;   /* nonzero: the values are already in the file here */
} Entry;

typedef struct
{
  gboolean big;
  GByteArray *buf;     /* bytes of the file from `base` on */
  guint64     base;
} Out;

static void
put (Out *o, const void *p, gsize n)
{
  g_byte_array_append (o->buf, p, (guint) n);
}

static void
put16 (Out *o, guint16 v)
{
  put (o, &v, 2);
}

static void
put32 (Out *o, guint32 v)
{
  put (o, &v, 4);
}

static void
put64 (Out *o, guint64 v)
{
  put (o, &v, 8);
}

static void
put_offset (Out *o, guint64 v)
{
  if (o->big)
    put64 (o, v);
  else
    put32 (o, (guint32) v);
}

static guint64
out_pos (Out *o)
{
  return o->base + o->buf->len;
}

/* zeros up to `pos` (the start of the pixel block) */
static void
pad_until (Out *o, guint64 pos)
{
  static const guint8 zeros[4096];

  g_assert (out_pos (o) <= pos);
  while (out_pos (o) < pos)
    put (o, zeros, (gsize) MIN (sizeof zeros, pos - out_pos (o)));
}

static void
header (Out *o)
{
  put (o, G_BYTE_ORDER == G_LITTLE_ENDIAN ? "II" : "MM", 2);
  if (o->big)
    {
      put16 (o, 43);
      put16 (o, 8);
      put16 (o, 0);
      put64 (o, 16);
    }
  else
    {
      put16 (o, 42);
      put32 (o, 8);
    }
}

static int
compare_entries (gconstpointer a, gconstpointer b)
{
  return (int) ((const Entry *) a)->tag - (int) ((const Entry *) b)->tag;
}

/* Writes an IFD at the current position with its values that do not fit
 * in the entries right after it; returns the position of its next-IFD
 * pointer (relative to the buffer). The values' offsets are stored back
 * into entries[i].shared, so later IFDs can point at the same bytes. */
static guint
emit_ifd (Out *o, Entry *entries, guint n)
{
  guint inline_size = o->big ? 8 : 4, i, next_at;
  guint64 extra = out_pos (o) + (o->big ? 8 : 2) + (guint64) n * (o->big ? 20 : 12) + inline_size;
  guint64 *where = g_newa (guint64, n);

  qsort (entries, n, sizeof (Entry), compare_entries);
  /* lay out the out-of-line values after the IFD, word aligned */
  for (i = 0; i < n; i++)
    {
      guint64 size = entries[i].count * type_size (entries[i].type);

      where[i] = 0;
      if (size <= inline_size)
        continue;
      if (entries[i].shared)
        {
          where[i] = entries[i].shared;
          continue;
        }
      extra += extra & 1;
      where[i] = extra;
      extra += size;
    }
  if (o->big)
    put64 (o, n);
  else
    put16 (o, (guint16) n);
  for (i = 0; i < n; i++)
    {
      guint64 size = entries[i].count * type_size (entries[i].type);

      put16 (o, entries[i].tag);
      put16 (o, entries[i].type);
      if (o->big)
        put64 (o, entries[i].count);
      else
        put32 (o, (guint32) entries[i].count);
      if (size <= inline_size)
        {
          guint8 value[8] = { 0 };
          memcpy (value, entries[i].data, size);
          put (o, value, inline_size);
        }
      else
        put_offset (o, where[i]);
    }
  next_at = o->buf->len;
  put_offset (o, 0);
  for (i = 0; i < n; i++)
    {
      guint64 size = entries[i].count * type_size (entries[i].type);

      if (size <= inline_size || entries[i].shared)
        continue;
      if (out_pos (o) & 1)
        put (o, "", 1);
      g_assert (out_pos (o) == where[i]);
      put (o, entries[i].data, size);
      entries[i].shared = where[i];
    }
  if (out_pos (o) & 1)
    put (o, "", 1);
  return next_at;
}

static void
patch_offset (Out *o, guint at, guint64 value)
{
  if (o->big)
    memcpy (o->buf->data + at, &value, 8);
  else
    {
      guint32 v = (guint32) value;
      memcpy (o->buf->data + at, &v, 4);
    }
}

/* p/q ≈ x with p, q < 2^32 (continued fractions), for resolution tags. */
static void
rational (double x, guint32 out[2])
{
  double a = x, p0 = 0, q0 = 1, p1 = 1, q1 = 0;
  int i;

  if (!(x > 0) || !isfinite (x))
    {
      out[0] = 0;
      out[1] = 1;
      return;
    }
  for (i = 0; i < 64; i++)
    {
      double k = floor (a), p2 = k * p1 + p0, q2 = k * q1 + q0;

      if (p2 > 4294967295.0 || q2 > 4294967295.0)
        break;
      p0 = p1; q0 = q1; p1 = p2; q1 = q2;
      if (fabs (p1 / q1 - x) <= 1e-15 * x || a - k < 1e-12)
        break;
      a = 1.0 / (a - k);
    }
  if (q1 == 0)   /* x ≥ 2^32 */
    {
      p1 = 4294967295.0;
      q1 = 1;
    }
  out[0] = (guint32) p1;
  out[1] = (guint32) q1;
}

/* ImageJ's extra metadata (tags 50838/50839): the Info property and one
 * label per slice, UTF-16 in the file's byte order after an "IJIJ" header. */
static void
ij_metadata (const char *info, char **labels, guint n_labels, GByteArray *bytes, GArray *counts)
{
  const guint32 magic = 0x494a494a, info_type = 0x696e666f, label_type = 0x6c61626c;
  guint n_types = (info ? 1 : 0) + (n_labels ? 1 : 0), i;
  guint32 v;

  v = magic;
  g_byte_array_append (bytes, (guint8 *) &v, 4);
  if (info)
    {
      v = info_type; g_byte_array_append (bytes, (guint8 *) &v, 4);
      v = 1; g_byte_array_append (bytes, (guint8 *) &v, 4);
    }
  if (n_labels)
    {
      v = label_type; g_byte_array_append (bytes, (guint8 *) &v, 4);
      v = n_labels; g_byte_array_append (bytes, (guint8 *) &v, 4);
    }
  v = 4 + 8 * n_types;
  g_array_append_val (counts, v);
  for (i = 0; i < (info ? 1u : 0u) + n_labels; i++)
    {
      const char *text = i == 0 && info ? info : labels[i - (info ? 1 : 0)];
      glong n16 = 0;
      g_autofree gunichar2 *u16 = g_utf8_to_utf16 (text, -1, NULL, &n16, NULL);

      if (u16 == NULL)
        n16 = 0;
      g_byte_array_append (bytes, (guint8 *) u16, (guint) (n16 * 2));
      v = (guint32) (n16 * 2);
      g_array_append_val (counts, v);
    }
}

static char *
imagej_description (const char *path, const AiryStack *stack, float lo, float hi, gboolean uniform,
                    GPtrArray *warnings)
{
  GString *d = g_string_new (NULL);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  double dz = stack->dz;

  /* ImageJ's hyperstack description: Fiji and napari read the voxel size,
   * the origin (pixel ⌊N/2⌋ is the optical axis) and the z of slice 1 */
  g_string_append_printf (d, "ImageJ=1.11a\nimages=%u\n", stack->depth);
  if (stack->depth > 1)
    g_string_append_printf (d, "slices=%u\n", stack->depth);
  if (stack->dx > 0)
    {
      g_string_append (d, "unit=micron\n");
      g_string_append_printf (d, "xorigin=%u\nyorigin=%u\n", stack->width / 2, stack->height / 2);
    }
  if (stack->depth > 1 && dz != 0)
    {
      g_string_append_printf (d, "spacing=%s\n", g_ascii_formatd (buf, sizeof buf, "%.10g", fabs (dz)));
      g_string_append_printf (d, "zorigin=%s\n", g_ascii_formatd (buf, sizeof buf, "%.10g", -stack->z0 / fabs (dz)));
    }
  g_string_append (d, "loop=false\n");
  if (isfinite (lo) && isfinite (hi))
    {
      g_string_append_printf (d, "min=%s\n", g_ascii_formatd (buf, sizeof buf, "%.9g", lo));
      g_string_append_printf (d, "max=%s\n", g_ascii_formatd (buf, sizeof buf, "%.9g", hi));
    }
  if (warnings && stack->depth > 2 && (!uniform || dz < 0))
    g_ptr_array_add (warnings, g_strdup_printf (!uniform
        ? _("%s: the z planes are not evenly spaced: ImageJ and Fiji show them with their mean spacing "
            "(the exact z of each plane is in its slice label and in Airy's own tag, which Airy reads "
            "back); save as .ome.tif to give every reader the exact z")
        : _("%s: z decreases from plane to plane: ImageJ and Fiji show increasing z (the exact z of each "
            "plane is in its slice label and in Airy's own tag); save as .ome.tif to give every "
            "reader the exact z"), path));
  return g_string_free (d, FALSE);
}

static char *
imagej_info (const AiryStack *stack)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "Written by Airy %s\n", PACKAGE_VERSION);
  if (stack->system_json)
    g_string_append_printf (s, "System:\n%s\n", stack->system_json);
  return g_string_free (s, FALSE);
}

static gboolean
write_all (int fd, const void *data, guint64 n, const char *path, GError **error)
{
  const guint8 *p = data;

  while (n > 0)
    {
      /* large writes, in pieces the kernel takes whole */
      gsize chunk = (gsize) MIN (n, (guint64) 1 << 28);
      gssize w = write (fd, p, chunk);

      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          int e = w < 0 ? errno : ENOSPC;
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
          return FALSE;
        }
      p += w;
      n -= (guint64) w;
    }
  return TRUE;
}

AiryTiffFormat
airy_tiff_format_for_path (const char *path)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);

  if (g_str_has_suffix (lower, ".ome.tif") || g_str_has_suffix (lower, ".ome.tiff"))
    return AIRY_TIFF_OME;
  return AIRY_TIFF_IMAGEJ;
}

/* What every page's IFD says, and the first page's extra metadata. */
typedef struct
{
  const AiryStack *stack;
  const char      *desc;
  const guint8    *ij_bytes;     /* ImageJ metadata (NULL for OME-TIFF) */
  guint            n_ij_bytes;
  const guint32   *ij_counts;
  guint            n_ij_counts;
  const double    *zs;           /* every plane's z */
  guint32          width, height, xres[2], yres[2];
} PageTags;

static const guint16 bits32 = 32, one16 = 1, float_format = SAMPLEFORMAT_IEEEFP, unit_none = RESUNIT_NONE;
static const guint32 zero32;
static const char software[] = "Airy " PACKAGE_VERSION;

/* The entries of one page's IFD; the first page also gets the description,
 * ImageJ's metadata and the z tag. `shared` holds the offsets of the first
 * page's out-of-line values (resolutions, software) for the others. */
static guint
page_entries (const PageTags *t, gboolean big, gboolean first, const guint64 *strip, const guint64 *count,
              const guint64 shared[3], Entry *e)
{
  guint n = 0;

  e[n++] = (Entry) { TAG_NEW_SUBFILE_TYPE, T_LONG, 1, &zero32, 0 };
  e[n++] = (Entry) { TAG_IMAGE_WIDTH, T_LONG, 1, &t->width, 0 };
  e[n++] = (Entry) { TAG_IMAGE_LENGTH, T_LONG, 1, &t->height, 0 };
  e[n++] = (Entry) { TAG_BITS_PER_SAMPLE, T_SHORT, 1, &bits32, 0 };
  e[n++] = (Entry) { TAG_COMPRESSION, T_SHORT, 1, &one16, 0 };
  e[n++] = (Entry) { TAG_PHOTOMETRIC, T_SHORT, 1, &one16, 0 };
  if (first)
    e[n++] = (Entry) { TAG_IMAGE_DESCRIPTION, T_ASCII, strlen (t->desc) + 1, t->desc, 0 };
  e[n++] = (Entry) { TAG_STRIP_OFFSETS, big ? T_LONG8 : T_LONG, 1, strip, 0 };
  e[n++] = (Entry) { TAG_SAMPLES_PER_PIXEL, T_SHORT, 1, &one16, 0 };
  e[n++] = (Entry) { TAG_ROWS_PER_STRIP, T_LONG, 1, &t->height, 0 };
  e[n++] = (Entry) { TAG_STRIP_BYTE_COUNTS, big ? T_LONG8 : T_LONG, 1, count, 0 };
  if (t->stack->dx > 0 && t->stack->dy > 0)
    {
      e[n++] = (Entry) { TAG_X_RESOLUTION, T_RATIONAL, 1, t->xres, shared[0] };
      e[n++] = (Entry) { TAG_Y_RESOLUTION, T_RATIONAL, 1, t->yres, shared[1] };
      e[n++] = (Entry) { TAG_RESOLUTION_UNIT, T_SHORT, 1, &unit_none, 0 };
    }
  e[n++] = (Entry) { TAG_PLANAR_CONFIG, T_SHORT, 1, &one16, 0 };
  e[n++] = (Entry) { TAG_SOFTWARE, T_ASCII, sizeof software, software, shared[2] };
  e[n++] = (Entry) { TAG_SAMPLE_FORMAT, T_SHORT, 1, &float_format, 0 };
  if (first && t->ij_bytes)
    {
      e[n++] = (Entry) { TAG_IJ_META_COUNTS, T_LONG, t->n_ij_counts, t->ij_counts, 0 };
      e[n++] = (Entry) { TAG_IJ_META, T_BYTE, t->n_ij_bytes, t->ij_bytes, 0 };
    }
  if (first)
    e[n++] = (Entry) { TAG_AIRY_Z, T_DOUBLE, t->stack->depth, t->zs, 0 };
  return n;
}

/* Lays a file out: `head` (header, the first IFD and its values, padded to
 * a 4 KiB boundary where the pixel block starts) and `tail` (the other
 * pages' IFDs, after the block; empty with single_ifd). Returns the file's
 * size; *data_offset is where the block starts. */
static guint64
lay_out (const PageTags *t, gboolean big, gboolean single_ifd, GByteArray *head_buf, GByteArray *tail_buf,
         guint64 *data_offset)
{
  const AiryStack *stack = t->stack;
  guint64 plane_bytes = (guint64) t->width * t->height * 4, data_bytes = plane_bytes * stack->depth;
  guint64 strip0 = 0, count0 = plane_bytes, shared[3] = { 0, 0, 0 };
  Entry entries[24];
  Out head, tail;
  guint n, i, k, next_at;

  g_byte_array_set_size (head_buf, 0);
  g_byte_array_set_size (tail_buf, 0);
  head = (Out) { big, head_buf, 0 };
  header (&head);
  /* the block's offset depends on the IFD's size: lay it out once to learn it */
  {
    g_autoptr(GByteArray) probe = g_byte_array_new ();
    Out p = { big, probe, head_buf->len };

    n = page_entries (t, big, TRUE, &strip0, &count0, shared, entries);
    emit_ifd (&p, entries, n);
    *data_offset = (head_buf->len + probe->len + 4095) & ~(guint64) 4095;
  }
  strip0 = *data_offset;
  n = page_entries (t, big, TRUE, &strip0, &count0, shared, entries);
  next_at = emit_ifd (&head, entries, n);
  pad_until (&head, *data_offset);
  for (i = 0; i < n; i++)
    if (entries[i].tag == TAG_X_RESOLUTION)
      shared[0] = entries[i].shared;
    else if (entries[i].tag == TAG_Y_RESOLUTION)
      shared[1] = entries[i].shared;
    else if (entries[i].tag == TAG_SOFTWARE)
      shared[2] = entries[i].shared;

  tail = (Out) { big, tail_buf, *data_offset + data_bytes };
  if (!single_ifd && stack->depth > 1)
    {
      patch_offset (&head, next_at, out_pos (&tail));
      for (k = 1; k < stack->depth; k++)
        {
          guint64 strip = *data_offset + k * plane_bytes, count = plane_bytes;
          guint at;

          n = page_entries (t, big, FALSE, &strip, &count, shared, entries);
          at = emit_ifd (&tail, entries, n);
          if (k + 1 < stack->depth)
            patch_offset (&tail, at, out_pos (&tail));
        }
    }
  return *data_offset + data_bytes + tail_buf->len;
}

gboolean
airy_tiff_write_full (const char                 *path,
                      const AiryStack            *stack,
                      const AiryTiffWriteOptions *options,
                      GError                    **error)
{
  static const AiryTiffWriteOptions defaults = { AIRY_TIFF_AUTO, NULL, 0 };
  g_autoptr(GByteArray) head_buf = g_byte_array_new ();
  g_autoptr(GByteArray) tail_buf = g_byte_array_new ();
  g_autoptr(GByteArray) ij_bytes = g_byte_array_new ();
  g_autoptr(GArray) ij_counts = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *tmp = NULL, *desc = NULL, *info = NULL, *base = g_path_get_basename (path);
  g_autofree double *zs = NULL;
  AiryTiffFormat format;
  guint64 plane_bytes, data_bytes, classic_limit, data_offset, size;
  gboolean ome, big, single_ifd = FALSE;
  PageTags tags;
  float lo = 0, hi = 0;
  gboolean ok;
  guint k;
  int fd;

  g_return_val_if_fail (stack != NULL && stack->depth > 0 && stack->data != NULL, FALSE);
  options = options ? options : &defaults;

  format = options->format == AIRY_TIFF_AUTO ? airy_tiff_format_for_path (path) : options->format;
  ome = format == AIRY_TIFF_OME;
  plane_bytes = (guint64) stack->width * stack->height * 4;
  data_bytes = plane_bytes * stack->depth;
  classic_limit = options->classic_limit ? options->classic_limit : G_GUINT64_CONSTANT (0xffffffff);

  /* ImageJ's display range: the stack's min and max, on all cores (a pass
   * over the stack costs less here than in the workers, where every run
   * would pay it, and less than beside the write, which it slows) */
  if (ome)
    desc = _airy_ome_xml_new (stack, base);
  else
    {
      airy_stack_min_max (stack, &lo, &hi);
      desc = imagej_description (path, stack, lo, hi, airy_stack_z_uniform (stack), options->warnings);
    }
  zs = g_new (double, stack->depth);
  for (k = 0; k < stack->depth; k++)
    zs[k] = airy_stack_get_z (stack, k);
  if (!ome)
    {
      for (k = 0; k < stack->depth && stack->depth > 1; k++)
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          g_ptr_array_add (labels, g_strdup_printf ("z = %s \xc2\xb5m",
                                                    g_ascii_formatd (buf, sizeof buf, "%.6g", zs[k])));
        }
      info = imagej_info (stack);
      ij_metadata (info, (char **) labels->pdata, labels->len, ij_bytes, ij_counts);
    }
  tags = (PageTags) { stack, desc, ome ? NULL : ij_bytes->data, ij_bytes->len,
                      (const guint32 *) ij_counts->data, ij_counts->len, zs, stack->width, stack->height };
  rational (stack->dx > 0 ? 1.0 / stack->dx : 0, tags.xres);
  rational (stack->dy > 0 ? 1.0 / stack->dy : 0, tags.yres);

  /* Classic TIFF while every offset fits in 32 bits. Beyond: ImageJ's own
   * large-stack layout for ImageJ files (one IFD, the block after it) and
   * BigTIFF for OME-TIFF or on request. A plane of 4 GB or more needs
   * BigTIFF whatever the format. */
  big = format == AIRY_TIFF_BIGTIFF || plane_bytes > classic_limit;
  size = lay_out (&tags, big, FALSE, head_buf, tail_buf, &data_offset);
  if (!big && size > classic_limit)
    {
      if (ome)
        big = TRUE;
      else
        single_ifd = TRUE;
      size = lay_out (&tags, big, single_ifd, head_buf, tail_buf, &data_offset);
    }
  if (options->warnings && single_ifd)
    {
      g_autofree char *bytes = airy_format_bytes (data_bytes);
      g_ptr_array_add (options->warnings,
                       g_strdup_printf (_("%s: %s of pixels, beyond classic TIFF's 4 GB: written as ImageJ's "
                                          "large-stack TIFF (one IFD describing all %u planes), which "
                                          "ImageJ, Fiji and tifffile/napari read; tools that read TIFF "
                                          "page by page see the first plane only (save as .ome.tif for "
                                          "Bio-Formats, or with the BigTIFF format)"),
                                        path, bytes, stack->depth));
    }
  if (options->warnings && big && format == AIRY_TIFF_IMAGEJ)
    g_ptr_array_add (options->warnings,
                     g_strdup_printf (_("%s: a plane of 4 GB or more needs BigTIFF, which ImageJ 1.x cannot "
                                        "open (tifffile/napari and Fiji's Bio-Formats can)"), path));

  fd = airy_atomic_begin (path, &tmp, error);
  if (fd < 0)
    return FALSE;
  ok = write_all (fd, head_buf->data, head_buf->len, path, error)
       && write_all (fd, stack->data, data_bytes, path, error)
       && write_all (fd, tail_buf->data, tail_buf->len, path, error);
  if (!ok)
    {
      close (fd);
      airy_atomic_abort (tmp);
      return FALSE;
    }
  if (close (fd) != 0)
    {
      int e = errno;
      airy_atomic_abort (tmp);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
      return FALSE;
    }
  g_assert (data_offset + data_bytes + tail_buf->len == size);
  return airy_atomic_commit (tmp, path, error);
}

gboolean
airy_tiff_write (const char      *path,
                 const AiryStack *stack,
                 GError         **error)
{
  return airy_tiff_write_full (path, stack, NULL, error);
}

/* ==================== reading ==================== */

typedef struct
{
  const char   *name;
  TIFF         *tif;
  char         *message;     /* libtiff's first error */
  int           fd;          /* −1 when reading from memory */
  const guint8 *mem;
  guint64       size;        /* file size */
  guint64       pos;         /* memory reads */
  gboolean      swap;        /* file byte order is not the host's */
} Reader;

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

static const char *
reader_message (Reader *r)
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
static gboolean
reader_pread (Reader *r, guint64 offset, void *buf, gsize n)
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

/* The value of a RATIONAL tag of the IFD at `ifd`, read from the file:
 * libtiff hands resolutions out as float, which loses the 8th digit of a
 * pixel size. */
static gboolean
read_rational (Reader *r, guint64 ifd, guint16 tag, double *out)
{
  gboolean big = TIFFIsBigTIFF (r->tif);
  guint entry = big ? 20 : 12;
  guint64 n, i;
  guint8 buf[20];

#define U16(p) (r->swap ? GUINT16_SWAP_LE_BE (*(guint16 *) (p)) : *(guint16 *) (p))
#define U32(p) (r->swap ? GUINT32_SWAP_LE_BE (*(guint32 *) (p)) : *(guint32 *) (p))
#define U64(p) (r->swap ? GUINT64_SWAP_LE_BE (*(guint64 *) (p)) : *(guint64 *) (p))
  if (!reader_pread (r, ifd, buf, big ? 8 : 2))
    return FALSE;
  n = big ? U64 (buf) : U16 (buf);
  for (i = 0; i < MIN (n, 4096); i++)
    {
      guint64 at = ifd + (big ? 8 : 2) + i * entry, off;
      guint32 pq[2];

      if (!reader_pread (r, at, buf, entry))
        return FALSE;
      if (U16 (buf) != tag)
        continue;
      if (U16 (buf + 2) != T_RATIONAL)
        return FALSE;
      /* BigTIFF holds the 8 bytes in the entry */
      if (big)
        memcpy (pq, buf + 12, 8);
      else
        {
          off = U32 (buf + 8);
          if (!reader_pread (r, off, pq, 8))
            return FALSE;
        }
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
  return FALSE;
}

/* One page as libtiff describes it, checked before anything is read. */
typedef struct
{
  guint64  offset;         /* of its IFD */
  guint32  width, height;
  guint16  bits, format, spp, compression, planar, photometric;
  guint32  subfile;
  gboolean tiled;
} Page;

static void
page_read (TIFF *tif, Page *p)
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

static gboolean
page_check (Reader *r, const Page *p, guint index, const Page *first, GError **error)
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

/* ---- descriptions ---- */

static gboolean
desc_value (const char *desc, const char *key, char **value)
{
  g_auto(GStrv) lines = NULL;
  gsize key_len = strlen (key);
  guint i;

  if (desc == NULL)
    return FALSE;
  lines = g_strsplit (desc, "\n", -1);
  for (i = 0; lines[i]; i++)
    if (strncmp (lines[i], key, key_len) == 0 && lines[i][key_len] == '=')
      {
        *value = g_strstrip (g_strdup (lines[i] + key_len + 1));
        return TRUE;
      }
  return FALSE;
}

static double
desc_double (const char *desc, const char *key, double fallback)
{
  g_autofree char *v = NULL;
  char *end;
  double x;

  if (!desc_value (desc, key, &v))
    return fallback;
  x = g_ascii_strtod (v, &end);
  return end != v && isfinite (x) ? x : fallback;
}

static gboolean
desc_count (Reader *r, const char *desc, const char *key, guint *out, GError **error)
{
  g_autofree char *v = NULL;
  guint64 n;

  *out = 1;
  if (!desc_value (desc, key, &v))
    return TRUE;
  if (!g_ascii_string_to_unsigned (v, 10, 1, G_MAXINT32, &n, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: ImageJ description: %s=%s must be a count in [1, %d]"), r->name, key, v, G_MAXINT32);
      return FALSE;
    }
  *out = (guint) n;
  return TRUE;
}

/* The logical stack a file holds and where each of the chosen planes is. */
typedef struct
{
  guint     depth;
  guint     n_channels, n_frames, channel, frame;
  guint     height, width;
  guint16   bits, format;
  double    dx, dy, dz, z0;
  double   *z;                 /* exact positions or NULL */
  guint64  *ifd;               /* per plane: IFD offset, or 0 for contiguous */
  guint64   contiguous_offset; /* ImageJ single-IFD stacks: first plane's bytes */
  gboolean  contiguous;
} Layout;

static void
layout_clear (Layout *l)
{
  g_clear_pointer (&l->z, g_free);
  g_clear_pointer (&l->ifd, g_free);
}

static gboolean
pick_axis (Reader *r, const char *what, const char *axes, int wanted, guint n, guint *out,
           GError **error)
{
  if (n <= 1)
    {
      *out = 0;
      if (wanted > 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: %s %d asked for, but the file has one (%s)"), r->name, what, wanted, axes);
          return FALSE;
        }
      return TRUE;
    }
  if (wanted < 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: %s; Airy reads one z stack: choose a channel and a frame (0-based: \"channel\" "
                     "and \"frame\" of the sample, or the viewer's choice), a %s in [0, %u]"),
                   r->name, axes, what, n - 1);
      return FALSE;
    }
  if ((guint) wanted >= n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: %s %d does not exist; %s: must be in [0, %u]"), r->name, what, wanted, axes, n - 1);
      return FALSE;
    }
  *out = (guint) wanted;
  return TRUE;
}

/* Checks that a page's data are in the file before reading them: a tiny
 * file must not claim gigabytes. */
static gboolean
page_data_check (Reader *r, guint z, guint64 need, GError **error)
{
  guint32 n = TIFFNumberOfStrips (r->tif), s;
  guint16 compression = COMPRESSION_NONE;
  guint64 total = 0;

  TIFFGetFieldDefaulted (r->tif, TIFFTAG_COMPRESSION, &compression);
  for (s = 0; s < n; s++)
    {
      int err = 0;
      guint64 off = TIFFGetStrileOffsetWithErr (r->tif, s, &err);
      guint64 count = TIFFGetStrileByteCountWithErr (r->tif, s, &err);

      if (err || off > r->size || count > r->size - off)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: plane %u: strip %u lies beyond the end of the file (%llu bytes)"),
                       r->name, z, s, (unsigned long long) r->size);
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
static gboolean
walk_pages (Reader *r, guint limit, gboolean skip_reduced, const Page *first, GArray *pages,
            gboolean *more, GError **error)
{
  Page p;

  *more = FALSE;
  g_array_set_size (pages, 0);
  if (!TIFFSetDirectory (r->tif, 0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: corrupt TIFF (%s)"), r->name, reader_message (r));
      return FALSE;
    }
  for (;;)
    {
      page_read (r->tif, &p);
      /* reduced-resolution copies (pyramids, thumbnails) are not planes */
      if (!skip_reduced || !(p.subfile & FILETYPE_REDUCEDIMAGE))
        {
          if (pages->len == limit)
            {
              *more = TRUE;
              return TRUE;
            }
          /* the page and its data, before anything is allocated for them */
          if (!page_check (r, &p, pages->len, pages->len ? &g_array_index (pages, Page, 0) : first, error)
              || !page_data_check (r, pages->len, (guint64) p.width * p.height * (p.bits / 8), error))
            return FALSE;
          g_array_append_val (pages, p);
        }
      if (!TIFFReadDirectory (r->tif))
        break;
    }
  if (r->message != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: corrupt TIFF after page %u (%s)"),
                   r->name, pages->len, reader_message (r));
      return FALSE;
    }
  return TRUE;
}

static gboolean
budget_check (Reader *r, const AiryReadOptions *o, guint64 planes, guint h, guint w, GError **error)
{
  guint64 budget = o->budget ? o->budget : airy_memory_budget ();
  guint64 need = planes * h * w * 4;

  if (need > budget)
    {
      g_autofree char *need_s = airy_format_bytes (need);
      g_autofree char *budget_s = airy_format_bytes (budget);

      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("%s: a stack of %llu × %u × %u pixels needs %s as float32, more than "
                     "the memory budget of %s (90 %% of available memory, or AIRY_MEMORY_BUDGET)"),
                   r->name, (unsigned long long) planes, h, w, need_s, budget_s);
      return FALSE;
    }
  return TRUE;
}

static gboolean
layout_find (Reader *r, const AiryReadOptions *o, Layout *l, GError **error)
{
  g_autoptr(GArray) pages = g_array_new (FALSE, FALSE, sizeof (Page));
  char *desc_raw = NULL;
  g_autofree char *desc = NULL;
  float xres_f = 0, yres_f = 0;
  double xres, yres;
  guint16 resunit = RESUNIT_INCH;
  guint32 z_count = 0;
  double *z_tag_raw = NULL;
  g_autofree double *z_tag = NULL;
  Page first;
  guint C = 1, Z = 1, T = 1, c = 0, t = 0, k, limit;
  gboolean more, imagej, ome;
  AiryOmeInfo om = { 0 };

  memset (l, 0, sizeof *l);
  page_read (r->tif, &first);
  if (!page_check (r, &first, 0, NULL, error))
    return FALSE;
  if (TIFFGetField (r->tif, TIFFTAG_IMAGEDESCRIPTION, &desc_raw) == 1 && desc_raw != NULL)
    desc = g_strdup (desc_raw);
  TIFFGetField (r->tif, TIFFTAG_XRESOLUTION, &xres_f);
  TIFFGetField (r->tif, TIFFTAG_YRESOLUTION, &yres_f);
  xres = xres_f;
  yres = yres_f;
  if (xres_f > 0 && !read_rational (r, first.offset, TIFFTAG_XRESOLUTION, &xres))
    xres = xres_f;
  if (yres_f > 0 && !read_rational (r, first.offset, TIFFTAG_YRESOLUTION, &yres))
    yres = yres_f;
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_RESOLUTIONUNIT, &resunit);
  /* tag values belong to the current directory: copy them now */
  if (TIFFGetField (r->tif, TAG_AIRY_Z, &z_count, &z_tag_raw) == 1 && z_tag_raw != NULL && z_count > 0)
    z_tag = g_memdup2 (z_tag_raw, (gsize) z_count * sizeof (double));
  else
    z_count = 0;
  l->height = first.height;
  l->width = first.width;
  l->bits = first.bits;
  l->format = first.format;

  imagej = desc && g_str_has_prefix (desc, "ImageJ=");
  ome = !imagej && desc && strstr (desc, "<OME") != NULL && g_str_has_suffix (g_strchomp (desc), "OME>");

  if (ome)
    {
      g_autofree char *axes = NULL;
      guint zi;

      if (!_airy_ome_parse (desc, r->name, &om, error))
        return FALSE;
      if (om.other_files)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: a multi-file OME-TIFF set (its planes are in other files); Airy reads "
                         "single-file OME-TIFF"), r->name);
          goto ome_fail;
        }
      if (om.size_x != first.width || om.size_y != first.height)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: OME-XML says %u × %u pixels, the first page is %u × %u"),
                       r->name, om.size_x, om.size_y, first.width, first.height);
          goto ome_fail;
        }
      C = om.size_c;
      Z = om.size_z;
      T = om.size_t;
      axes = g_strdup_printf (_("an OME-TIFF image of channels × z planes × time points = %u × %u × %u"), C, Z, T);
      if (!pick_axis (r, _("channel"), axes, o->channel, C, &c, error)
          || !pick_axis (r, _("frame"), axes, o->frame, T, &t, error))
        goto ome_fail;
      if (o->max_planes && Z > o->max_planes)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: has %u z planes, more than the %u expected"), r->name, Z, o->max_planes);
          goto ome_fail;
        }
      if (!budget_check (r, o, Z, first.height, first.width, error))
        goto ome_fail;
      /* the IFDs the chosen planes live in, then the chain up to the last */
      l->depth = Z;
      l->ifd = g_new0 (guint64, Z);
      limit = 0;
      {
        g_autofree gint64 *index = g_new (gint64, Z);
        for (zi = 0; zi < Z; zi++)
          {
            index[zi] = _airy_ome_ifd_of (&om, zi, c, t);
            if (index[zi] < 0 || index[zi] >= G_MAXINT32)
              {
                g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                             _("%s: OME-XML maps no IFD to plane z=%u c=%u t=%u"), r->name, zi, c, t);
                goto ome_fail;
              }
            limit = MAX (limit, (guint) index[zi] + 1);
          }
        if (!walk_pages (r, limit, FALSE, &first, pages, &more, error))
          goto ome_fail;
        for (zi = 0; zi < Z; zi++)
          {
            if ((guint) index[zi] >= pages->len)
              {
                g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                             _("%s: OME-XML puts plane z=%u in IFD %lld, but the file has %u"),
                             r->name, zi, (long long) index[zi], pages->len);
                goto ome_fail;
              }
            l->ifd[zi] = g_array_index (pages, Page, index[zi]).offset;
          }
      }
      l->dx = om.physical_x;
      l->dy = om.physical_y;
      l->dz = om.physical_z;
      /* exact z: the chosen planes' PositionZ when all of them have one */
      {
        g_autofree double *zz = g_new (double, Z);
        guint found = 0, i;

        for (zi = 0; zi < Z; zi++)
          zz[zi] = NAN;
        for (i = 0; i < om.planes->len; i++)
          {
            AiryOmePlane *p = &g_array_index (om.planes, AiryOmePlane, i);
            if (p->has_z && p->the_c == c && p->the_t == t && isnan (zz[p->the_z]))
              {
                zz[p->the_z] = p->position_z;
                found++;
              }
          }
        if (found == Z && Z > 0)
          l->z = g_steal_pointer (&zz);
      }
      _airy_ome_info_clear (&om);
    }
  else
    {
      if (imagej)
        {
          g_autofree char *axes = NULL;
          guint images;

          if (!desc_count (r, desc, "channels", &C, error) || !desc_count (r, desc, "slices", &Z, error)
              || !desc_count (r, desc, "frames", &T, error) || !desc_count (r, desc, "images", &images, error))
            return FALSE;
          if ((guint64) C * Z * T > G_MAXINT32)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                           _("%s: ImageJ description claims %u × %u × %u images"), r->name, C, Z, T);
              return FALSE;
            }
          /* a plain stack written with images=N and no slices key */
          if (C * Z * T == 1 && images > 1)
            Z = images;
          axes = g_strdup_printf (_("an ImageJ hyperstack of channels × slices × frames = %u × %u × %u"), C, Z, T);
          if (!pick_axis (r, _("channel"), axes, o->channel, C, &c, error)
              || !pick_axis (r, _("frame"), axes, o->frame, T, &t, error))
            return FALSE;
        }
      else
        {
          if (o->channel > 0 || o->frame > 0)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("%s: a plain TIFF has no channels or frames to choose from"), r->name);
              return FALSE;
            }
          Z = 0;   /* as many as there are pages */
        }
      if (o->max_planes && Z > o->max_planes)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: has %u z planes, more than the %u expected"), r->name, Z, o->max_planes);
          return FALSE;
        }
      if (Z > 0 && !budget_check (r, o, Z, first.height, first.width, error))
        return FALSE;

      if (Z > 0)
        limit = C * Z * T;
      else
        {
          /* plain files: pages up to what the budget and the caller allow */
          guint64 budget = o->budget ? o->budget : airy_memory_budget ();
          guint64 by_budget = budget / ((guint64) first.height * first.width * 4);
          limit = (guint) MIN ((guint64) (o->max_planes ? o->max_planes : 1000000), MAX (by_budget, 1));
        }
      if (!walk_pages (r, limit, !imagej, &first, pages, &more, error))
        return FALSE;
      if (Z == 0 && more)
        {
          /* stopped before the end: too many planes for the caller or the budget */
          if (o->max_planes && limit == o->max_planes)
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("%s: has more than the %u pages (z planes) expected"), r->name, o->max_planes);
          else if (budget_check (r, o, (guint64) limit + 1, first.height, first.width, error))
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: more than %u pages"), r->name, limit);
          return FALSE;
        }
      if (Z == 0)
        Z = pages->len;
      if (Z == 0)
        {
          /* every page a reduced-resolution copy */
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: no full-resolution page"), r->name);
          return FALSE;
        }

      l->depth = Z;
      l->ifd = g_new0 (guint64, Z);
      if (pages->len == 1 && C * Z * T > 1)
        {
          /* ImageJ's single-IFD stack (what ImageJ writes beyond 4 GB, and
           * tifffile's "virtual" files): planes back to back from the first
           * strip, in ImageJ's order (channel fastest, then slice, frame) */
          guint64 off = 0, plane_bytes = (guint64) first.width * first.height * (first.bits / 8);

          if (first.compression != COMPRESSION_NONE || TIFFNumberOfStrips (r->tif) < 1)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                           _("%s: the ImageJ description says %u images but the file has one compressed page"),
                           r->name, C * Z * T);
              return FALSE;
            }
          TIFFSetDirectory (r->tif, 0);
          off = TIFFGetStrileOffset (r->tif, 0);
          if (off == 0 || off > r->size || (guint64) C * Z * T * plane_bytes > r->size - off)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                           _("%s: truncated: the ImageJ description says %u images of %u × %u (%llu bytes "
                             "from offset %llu), the file has %llu bytes"),
                           r->name, C * Z * T, first.width, first.height,
                           (unsigned long long) ((guint64) C * Z * T * plane_bytes), (unsigned long long) off,
                           (unsigned long long) r->size);
              return FALSE;
            }
          l->contiguous = TRUE;
          l->contiguous_offset = off;
          for (k = 0; k < Z; k++)
            l->ifd[k] = off + (((guint64) t * Z + k) * C + c) * plane_bytes;
        }
      else
        {
          if (pages->len < C * Z * T)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                           _("%s: the ImageJ description says %u images, the file has %u pages"),
                           r->name, C * Z * T, pages->len);
              return FALSE;
            }
          for (k = 0; k < Z; k++)
            l->ifd[k] = g_array_index (pages, Page, ((gsize) t * Z + k) * C + c).offset;
        }

      /* voxel size: ImageJ's units, else the resolution unit */
      if (imagej)
        {
          g_autofree char *unit = NULL, *yunit = NULL, *zunit = NULL;
          double sx = 0, sy, sz;

          if (desc_value (desc, "unit", &unit) && _airy_length_unit_to_um (unit, &sx))
            {
              sy = sz = sx;
              if (desc_value (desc, "yunit", &yunit) && !_airy_length_unit_to_um (yunit, &sy))
                sy = 0;
              if (desc_value (desc, "zunit", &zunit) && !_airy_length_unit_to_um (zunit, &sz))
                sz = 0;
              if (xres > 0 && isfinite (xres))
                l->dx = sx / xres;
              if (yres > 0 && isfinite (yres))
                l->dy = sy / yres;
              l->dz = sz * desc_double (desc, "spacing", 0.0);
              l->z0 = -desc_double (desc, "zorigin", 0.0) * l->dz;
            }
        }
      else if (xres > 0 && yres > 0 && isfinite (xres) && isfinite (yres)
               && (resunit == RESUNIT_CENTIMETER || resunit == RESUNIT_INCH))
        {
          /* 72 dpi from a drawing program is no microscope; only real
           * units count (ImageJ writes no unit and says micron above) */
          double scale = resunit == RESUNIT_CENTIMETER ? 1e4 : 25400.0;
          l->dx = scale / xres;
          l->dy = scale / yres;
        }
    }
  l->n_channels = C;
  l->n_frames = T;
  l->channel = c;
  l->frame = t;
  if (!(l->dx > 0 && isfinite (l->dx)) || !(l->dy > 0 && isfinite (l->dy)))
    l->dx = l->dy = 0;
  if (!isfinite (l->dz) || !isfinite (l->z0))
    l->dz = l->z0 = 0;
  /* Airy's own tag: the exact z of every plane (ImageJ-layout files only:
   * for a hyperstack it lists the slices) */
  if (z_count == l->depth && z_tag != NULL && l->z == NULL && C * T == 1)
    {
      gboolean finite = TRUE;
      for (k = 0; k < l->depth; k++)
        finite &= isfinite (z_tag[k]);
      if (finite)
        l->z = g_memdup2 (z_tag, l->depth * sizeof (double));
    }
  return TRUE;

ome_fail:
  _airy_ome_info_clear (&om);
  return FALSE;
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

static gboolean
read_plane_strips (Reader *r, const Layout *l, guint z, float *dst, Scratch *scratch, GError **error)
{
  guint32 rows_per_strip = l->height, n, s;
  gsize scan = (gsize) l->width * (l->bits / 8);

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
      float *out = dst + (gsize) y0 * l->width;
      /* float32 goes straight to its place; libtiff swaps to host order */
      guint8 *buf = native_float (l) ? (guint8 *) out : scratch_get (scratch, want);
      tmsize_t got;

      if (buf == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory to read plane %u"), r->name, z);
          return FALSE;
        }
      got = TIFFReadEncodedStrip (r->tif, s, buf, (tmsize_t) want);
      if (got < 0 || (gsize) got < want)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: plane %u: corrupt or truncated TIFF (%s)"),
                       r->name, z, got < 0 ? reader_message (r) : _("short strip"));
          return FALSE;
        }
      if (!native_float (l))
        convert_samples (buf, out, (gsize) rows * l->width, l->bits, l->format, FALSE);
    }
  return TRUE;
}

/* A plane of a single-IFD ImageJ stack: raw bytes in the file's order. */
static gboolean
read_plane_raw (Reader *r, const Layout *l, guint z, float *dst, Scratch *scratch, GError **error)
{
  gsize scan = (gsize) l->width * (l->bits / 8);
  guint rows = (guint) MAX (1, MIN (l->height, (16u << 20) / scan)), y;

  for (y = 0; y < l->height; y += rows)
    {
      guint n = MIN (rows, l->height - y);
      float *out = dst + (gsize) y * l->width;
      guint8 *buf = native_float (l) ? (guint8 *) out : scratch_get (scratch, n * scan);

      if (buf == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory to read plane %u"), r->name, z);
          return FALSE;
        }
      if (!reader_pread (r, l->ifd[z] + (guint64) y * scan, buf, n * scan))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: plane %u: truncated"), r->name, z);
          return FALSE;
        }
      convert_samples (buf, out, (gsize) n * l->width, l->bits, l->format, r->swap);
    }
  return TRUE;
}

static AiryStack *
read_stack (Reader *r, const AiryReadOptions *options, gboolean pixels, GError **error)
{
  static const AiryReadOptions defaults = AIRY_READ_OPTIONS_INIT;
  g_autoptr(AiryStack) stack = NULL;
  TIFFOpenOptions *topts;
  Layout l;
  guint z;

  options = options ? options : &defaults;
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
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a readable TIFF (%s)"), r->name, reader_message (r));
      return NULL;
    }
  r->swap = TIFFIsByteSwapped (r->tif);

  if (!layout_find (r, options, &l, error))
    {
      layout_clear (&l);
      return NULL;
    }
  if (!pixels)
    {
      stack = g_new0 (AiryStack, 1);
      stack->depth = l.depth;
      stack->height = l.height;
      stack->width = l.width;
    }
  else
    {
      if (!budget_check (r, options, l.depth, l.height, l.width, error))
        {
          layout_clear (&l);
          return NULL;
        }
      stack = _airy_stack_new_uninitialised (l.depth, l.height, l.width);
      if (stack == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for %u × %u × %u"),
                       r->name, l.depth, l.height, l.width);
          layout_clear (&l);
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
  stack->z0 = l.z0;
  if (l.z)
    airy_stack_set_z (stack, l.z);

  if (pixels)
    {
      Scratch scratch = { NULL, 0 };
      gboolean ok = TRUE;

      for (z = 0; ok && z < l.depth; z++)
        {
          float *dst = airy_stack_plane (stack, z);

          if (l.contiguous)
            ok = read_plane_raw (r, &l, z, dst, &scratch, error);
          else if (!TIFFSetSubDirectory (r->tif, l.ifd[z]))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: plane %u: corrupt TIFF (%s)"),
                           r->name, z, reader_message (r));
              ok = FALSE;
            }
          else
            ok = read_plane_strips (r, &l, z, dst, &scratch, error);
        }
      g_free (scratch.data);
      if (!ok)
        {
          layout_clear (&l);
          return NULL;
        }
    }
  layout_clear (&l);
  return g_steal_pointer (&stack);
}

/* Airy's z tag is known to libtiff so that it comes back typed */
static TIFFExtendProc parent_extender;

static void
tag_extender (TIFF *tif)
{
  static const TIFFFieldInfo fields[] = {
    { TAG_AIRY_Z, TIFF_VARIABLE2, TIFF_VARIABLE2, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *) "AiryZPositions" },
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
read_file (const char *path, const AiryReadOptions *options, gboolean pixels, GError **error)
{
  Reader r = { path, NULL, NULL, -1, NULL, 0, 0, FALSE };
  GStatBuf st;
  AiryStack *stack;

  tiff_init ();
  r.fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (r.fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: no such file"), path);
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", path, g_strerror (e));
      return NULL;
    }
  if (fstat (r.fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a regular file"), path);
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
  return read_file (path, options, TRUE, error);
}

AiryStack *
airy_tiff_read (const char *path,
                GError    **error)
{
  return airy_tiff_read_full (path, NULL, error);
}

AiryStack *
airy_tiff_probe (const char            *path,
                 const AiryReadOptions *options,
                 GError               **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return read_file (path, options, FALSE, error);
}

AiryStack *
_airy_tiff_read_memory (const guint8          *data,
                        gsize                  length,
                        const char            *name,
                        const AiryReadOptions *options,
                        GError               **error)
{
  Reader r = { name, NULL, NULL, -1, data, length, 0, FALSE };
  AiryStack *stack;

  tiff_init ();
  stack = read_stack (&r, options, TRUE, error);
  reader_close (&r);
  return stack;
}
