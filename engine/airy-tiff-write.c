/* TIFF stacks, writing (DESIGN §6): the writer lays files out itself, so
 * that all pixel data form one contiguous block (ImageJ reads `images=N`
 * planes back to back from the first strip offset; tifffile memory-maps the
 * block), and streams the block with large writes. */
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
#include "airy-atomic.h"
#include "airy-run.h"
#include "airy-tiff-private.h"
#include "airy-image-file-private.h"

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
  guint C = MAX (stack->n_channels, 1), T = MAX (stack->n_frames, 1), Z = stack->depth / (C * T);

  /* frames: a stack that says how many (SIM's angles, its slices the
   * phases), when they divide it */
  if (T > 1 && stack->depth % (C * T) != 0)
    {
      T = 1;
      Z = stack->depth / C;
    }
  g_string_append_printf (d, "ImageJ=1.11a\nimages=%u\n", stack->depth);
  if (C > 1)
    g_string_append_printf (d, "channels=%u\n", C);
  if (Z > 1)
    g_string_append_printf (d, "slices=%u\n", Z);
  if (T > 1)
    g_string_append_printf (d, "frames=%u\n", T);
  if (C > 1)
    g_string_append (d, "hyperstack=true\nmode=composite\n");
  else if (T > 1)
    g_string_append (d, "hyperstack=true\n");
  if (stack->dx > 0)
    {
      g_string_append (d, "unit=micron\n");
      g_string_append_printf (d, "xorigin=%u\nyorigin=%u\n", stack->width / 2, stack->height / 2);
    }
  if (Z > 1 && dz != 0)
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
  if (warnings && Z > 2 && (!uniform || dz < 0))
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

/* at the file's position (offset AT_POSITION), or at offset */
#define AT_POSITION G_MAXUINT64

static gboolean
write_all (int fd, const void *data, guint64 n, guint64 offset, const char *path, GError **error)
{
  const guint8 *p = data;

  while (n > 0)
    {
      /* large writes, in pieces the kernel takes whole */
      gsize chunk = (gsize) MIN (n, (guint64) 1 << 28);
      gssize w = offset == AT_POSITION ? write (fd, p, chunk) : pwrite (fd, p, chunk, (off_t) offset);

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
      if (offset != AT_POSITION)
        offset += (guint64) w;
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
  const double    *wavelengths;  /* each channel's (a hyperstack's), or NULL */
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
  if (first && t->wavelengths)
    e[n++] = (Entry) { TAG_AIRY_WAVELENGTHS, T_DOUBLE, t->stack->n_channels, t->wavelengths, 0 };
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

struct _AiryTiffLayout
{
  char       *path;
  GByteArray *head;         /* header, first IFD and its values, padding */
  GByteArray *tail;         /* the other pages' IFDs */
  guint64     data_offset;  /* the pixel block */
  guint64     plane_bytes;
  guint64     size;
  guint       depth;
};

void
airy_tiff_layout_free (AiryTiffLayout *layout)
{
  if (layout == NULL)
    return;
  g_free (layout->path);
  g_byte_array_unref (layout->head);
  g_byte_array_unref (layout->tail);
  g_free (layout);
}

/* a hyperstack's channel c's name, or NULL for none */
static const char *
channel_name (const AiryStack *stack, guint c)
{
  guint n = stack->channel_names ? g_strv_length (stack->channel_names) : 0;

  return c < n && stack->channel_names[c][0] ? stack->channel_names[c] : NULL;
}

AiryTiffLayout *
airy_tiff_layout_new (const char                 *path,
                      const AiryStack            *stack,
                      float                       lo,
                      float                       hi,
                      const AiryTiffWriteOptions *options,
                      GError                    **error)
{
  static const AiryTiffWriteOptions defaults = { AIRY_TIFF_AUTO, NULL, 0 };
  g_autoptr(GByteArray) ij_bytes = g_byte_array_new ();
  g_autoptr(GArray) ij_counts = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *desc = NULL, *info = NULL, *base = g_path_get_basename (path);
  g_autofree double *zs = NULL;
  AiryTiffLayout *layout;
  AiryTiffFormat format;
  guint64 plane_bytes, data_bytes, classic_limit;
  gboolean ome, big, single_ifd = FALSE;
  PageTags tags;
  guint k;

  g_return_val_if_fail (stack != NULL && stack->depth > 0, NULL);
  options = options ? options : &defaults;

  format = options->format == AIRY_TIFF_AUTO ? airy_tiff_format_for_path (path) : options->format;
  ome = format == AIRY_TIFF_OME;
  plane_bytes = (guint64) stack->width * stack->height * 4;
  data_bytes = plane_bytes * stack->depth;
  classic_limit = options->classic_limit ? options->classic_limit : G_GUINT64_CONSTANT (0xffffffff);

  if (stack->n_channels > 1 && (ome || stack->depth % stack->n_channels != 0 || stack->z != NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE,
                   ome ? _("%s: channels are written as an ImageJ hyperstack (.tif), not as OME-TIFF")
                       : _("%s: channels need evenly spaced planes, the same number in each channel"),
                   path);
      return NULL;
    }
  if (ome)
    desc = _airy_ome_xml_new (stack, base);
  else
    desc = imagej_description (path, stack, lo, hi, airy_stack_z_uniform (stack), options->warnings);
  zs = g_new (double, stack->depth);
  /* a hyperstack's planes: channel fastest, then z (ImageJ's order) */
  for (k = 0; k < stack->depth; k++)
    zs[k] = stack->n_channels > 1 ? stack->z0 + (k / stack->n_channels) * stack->dz : airy_stack_get_z (stack, k);
  if (!ome)
    {
      for (k = 0; k < stack->depth && stack->depth > 1; k++)
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE], wl[G_ASCII_DTOSTR_BUF_SIZE];
          guint c = stack->n_channels > 1 ? k % stack->n_channels : 0;

          const char *name = stack->n_channels > 1 ? channel_name (stack, c) : NULL;
          g_autofree char *prefix = name ? g_strconcat (name, ", ", NULL) : NULL;

          /* "excitation, λ = 0.488 µm, z = 0.1 µm": the channel's name
           * (a modality's), its wavelength, the plane */
          if (stack->n_channels > 1 && c < stack->n_wavelengths && stack->wavelengths[c] > 0)
            g_ptr_array_add (labels, g_strdup_printf ("%s\xce\xbb = %s \xc2\xb5m, z = %s \xc2\xb5m", prefix ? prefix : "",
                                                      g_ascii_formatd (wl, sizeof wl, "%.6g", stack->wavelengths[c]),
                                                      g_ascii_formatd (buf, sizeof buf, "%.6g", zs[k])));
          else
            g_ptr_array_add (labels, g_strdup_printf ("%sz = %s \xc2\xb5m", prefix ? prefix : "",
                                                      g_ascii_formatd (buf, sizeof buf, "%.6g", zs[k])));
        }
      info = imagej_info (stack);
      ij_metadata (info, (char **) labels->pdata, labels->len, ij_bytes, ij_counts);
    }
  /* a hyperstack's channel wavelengths also in Airy's own tag, which the
   * reader takes back (the slice labels are for people, and ImageJ users
   * edit them) */
  tags = (PageTags) { stack, desc, ome ? NULL : ij_bytes->data, ij_bytes->len,
                      (const guint32 *) ij_counts->data, ij_counts->len, zs,
                      !ome && stack->n_channels > 1 && stack->n_wavelengths == stack->n_channels
                      ? stack->wavelengths : NULL,
                      stack->width, stack->height };
  rational (stack->dx > 0 ? 1.0 / stack->dx : 0, tags.xres);
  rational (stack->dy > 0 ? 1.0 / stack->dy : 0, tags.yres);

  layout = g_new0 (AiryTiffLayout, 1);
  layout->path = g_strdup (path);
  layout->head = g_byte_array_new ();
  layout->tail = g_byte_array_new ();
  layout->plane_bytes = plane_bytes;
  layout->depth = stack->depth;

  /* Classic TIFF while every offset fits in 32 bits. Beyond: ImageJ's own
   * large-stack layout for ImageJ files (one IFD, the block after it) and
   * BigTIFF for OME-TIFF or on request. A plane of 4 GB or more needs
   * BigTIFF whatever the format. */
  big = format == AIRY_TIFF_BIGTIFF || plane_bytes > classic_limit;
  layout->size = lay_out (&tags, big, FALSE, layout->head, layout->tail, &layout->data_offset);
  if (!big && layout->size > classic_limit)
    {
      if (ome)
        big = TRUE;
      else
        single_ifd = TRUE;
      layout->size = lay_out (&tags, big, single_ifd, layout->head, layout->tail, &layout->data_offset);
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
  g_assert (layout->data_offset + data_bytes + layout->tail->len == layout->size);
  return layout;
}

guint64
airy_tiff_layout_get_size (const AiryTiffLayout *layout)
{
  return layout->size;
}

guint64
airy_tiff_layout_plane_offset (const AiryTiffLayout *layout,
                               guint                 z)
{
  g_return_val_if_fail (z <= layout->depth, 0);
  return layout->data_offset + (guint64) z * layout->plane_bytes;
}

gboolean
airy_tiff_layout_write_frame (const AiryTiffLayout *layout,
                              int                   fd,
                              GError              **error)
{
  if (ftruncate (fd, (off_t) layout->size) != 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), layout->path, g_strerror (e));
      return FALSE;
    }
  return write_all (fd, layout->head->data, layout->head->len, 0, layout->path, error)
         && write_all (fd, layout->tail->data, layout->tail->len, layout->size - layout->tail->len,
                        layout->path, error);
}

gboolean
airy_tiff_layout_write_planes (const AiryTiffLayout *layout,
                               int                   fd,
                               guint                 first,
                               guint                 count,
                               const float          *data,
                               GError              **error)
{
  g_return_val_if_fail (first + count <= layout->depth && (data != NULL || count == 0), FALSE);

  return write_all (fd, data, (guint64) count * layout->plane_bytes, airy_tiff_layout_plane_offset (layout, first),
                     layout->path, error);
}

gboolean
airy_tiff_write_full (const char                 *path,
                      const AiryStack            *stack,
                      const AiryTiffWriteOptions *options,
                      GError                    **error)
{
  g_autoptr(AiryTiffLayout) layout = NULL;
  AiryAtomicFile *file;
  float lo = 0, hi = 0;
  gboolean ok;
  int fd;

  g_return_val_if_fail (stack != NULL && stack->depth > 0 && stack->data != NULL, FALSE);

  /* ImageJ's display range: the stack's min and max, on all cores (a pass
   * over the stack costs less here than in the workers, where every run
   * would pay it, and less than beside the write, which it slows) */
  if ((options ? options->format : AIRY_TIFF_AUTO) == AIRY_TIFF_AUTO
      ? airy_tiff_format_for_path (path) != AIRY_TIFF_OME
      : options->format != AIRY_TIFF_OME)
    airy_stack_min_max (stack, &lo, &hi);
  layout = airy_tiff_layout_new (path, stack, lo, hi, options, error);
  if (layout == NULL)
    return FALSE;

  /* one pass, large sequential writes: the head, the block, the tail */
  file = airy_atomic_file_new (path, AIRY_ATOMIC_DEFAULT, error);
  if (file == NULL)
    return FALSE;
  fd = airy_atomic_file_get_fd (file);
  ok = write_all (fd, layout->head->data, layout->head->len, AT_POSITION, path, error)
       && write_all (fd, stack->data, layout->plane_bytes * stack->depth, AT_POSITION, path, error)
       && write_all (fd, layout->tail->data, layout->tail->len, AT_POSITION, path, error);
  if (!ok)
    {
      airy_atomic_file_abort (file);
      return FALSE;
    }
  return airy_atomic_file_commit (file, error);
}

gboolean
airy_tiff_write_channels (const char                 *path,
                          AiryStack *const           *channels,
                          guint                       n_channels,
                          const AiryTiffWriteOptions *options,
                          GError                    **error)
{
  g_autoptr(AiryStack) hyper = NULL;
  g_autofree double *wavelengths = NULL, *weights = NULL;
  const AiryStack *first;
  gsize plane;
  guint c, k;

  g_return_val_if_fail (channels != NULL && n_channels > 0, FALSE);
  first = channels[0];
  if (n_channels == 1)
    return airy_tiff_write_full (path, first, options, error);
  for (c = 1; c < n_channels; c++)
    g_return_val_if_fail (channels[c]->depth == first->depth && channels[c]->height == first->height
                          && channels[c]->width == first->width, FALSE);
  if (!airy_stack_z_uniform (first))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE,
                   _("%s: channels need evenly spaced planes, the same number in each channel"), path);
      return FALSE;
    }
  hyper = _airy_stack_new_uninitialised ((guint) MIN ((guint64) first->depth * n_channels, G_MAXUINT),
                                         first->height, first->width);
  if (hyper == NULL || (guint64) first->depth * n_channels > G_MAXUINT)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for the hyperstack"), path);
      return FALSE;
    }
  plane = airy_stack_plane_size (first);
  for (k = 0; k < first->depth; k++)
    for (c = 0; c < n_channels; c++)
      memcpy (airy_stack_plane (hyper, k * n_channels + c), airy_stack_plane (channels[c], k),
              plane * sizeof (float));
  /* one pixel size for all channels: the first's, and said when they differ */
  for (c = 1; c < n_channels && options && options->warnings; c++)
    if (fabs (channels[c]->dx - first->dx) > 1e-9 * first->dx)
      g_ptr_array_add (options->warnings,
                       g_strdup_printf (_("%s: channel %u is sampled at %.4g µm, channel 1 at %.4g µm; the file "
                                          "has one pixel size for all its channels, channel 1's"),
                                        path, c + 1, channels[c]->dx, first->dx));
  hyper->dx = first->dx;
  hyper->dy = first->dy;
  hyper->dz = first->dz;
  hyper->z0 = first->z0;
  hyper->n_channels = n_channels;
  /* each channel's wavelength and weight (the channels' own provenance) */
  wavelengths = g_new0 (double, n_channels);
  weights = g_new0 (double, n_channels);
  for (c = 0; c < n_channels; c++)
    if (channels[c]->n_wavelengths == 1)
      {
        wavelengths[c] = channels[c]->wavelengths[0];
        weights[c] = channels[c]->weights ? channels[c]->weights[0] : 1.0;
      }
  airy_stack_set_provenance (hyper, n_channels, wavelengths, weights, first->system_json);
  /* and its name (a modality's channels: "excitation", "effective") */
  hyper->channel_names = g_new0 (char *, n_channels + 1);
  for (c = 0; c < n_channels; c++)
    hyper->channel_names[c] = g_strdup (channels[c]->channel_names ? channels[c]->channel_names[0] : "");
  return airy_tiff_write_full (path, hyper, options, error);
}

gboolean
airy_tiff_write (const char      *path,
                 const AiryStack *stack,
                 GError         **error)
{
  return airy_tiff_write_full (path, stack, NULL, error);
}

/* ---- the format table's entry ---- */

static gboolean
tiff_sniff (const guint8 *head, gsize n)
{
  return n >= 4 && (memcmp (head, "II*\0", 4) == 0 || memcmp (head, "MM\0*", 4) == 0
                    || memcmp (head, "II+\0", 4) == 0 || memcmp (head, "MM\0+", 4) == 0);
}

static gboolean
tiff_write (const char *path, const AiryStack *stack, GPtrArray *warnings, GError **error)
{
  AiryTiffWriteOptions options = { AIRY_TIFF_AUTO, warnings, 0 };

  return airy_tiff_write_full (path, stack, &options, error);
}

static const char *const tiff_suffixes[] = { ".tif", ".tiff", NULL };

const AiryImageFormat _airy_tiff_format = {
  .name = "TIFF",
  .suffixes = tiff_suffixes,
  .sniff = tiff_sniff,
  .read = airy_tiff_read_full,
  .write = tiff_write,
  .mime_type = "image/tiff",
  .write_full = airy_tiff_write_full,
  .probe = airy_tiff_probe,
};
