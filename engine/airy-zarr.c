/* OME-Zarr stores, writing (airy-zarr-private.h): level 0 and its 2×
 * averages in y and x, float32 chunks of a plane (or of tiles of a large
 * plane) compressed with Blosc/zstd, written plane by plane into a hidden
 * partial folder (from threads or MPI ranks); the metadata last, then the
 * folder renamed into place. */
#define _GNU_SOURCE   /* renameat2 */
#define G_LOG_DOMAIN "airy-zarr"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <blosc.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>

#include "airy-zarr-private.h"
#include "airy-error.h"
#include "airy-json-private.h"
#include "airy-atomic-private.h"
#include "airy-image-file-private.h"

/* levels stop when a plane fits in this many pixels a side */
#define LEVEL_MIN 64
#define MAX_LEVELS 16
/* Blosc's zstd at level 3 with byte shuffle: a float32 widefield PSF
 * shrinks 1.19× (level 5 or bit shuffle gain nothing there, at half the
 * speed) */
#define CLEVEL 3

static gsize plane_limit = 16u << 20;
static guint tile_size = 1024;

void
_airy_zarr_set_chunking (gsize plane_limit_bytes,
                         guint tile)
{
  plane_limit = plane_limit_bytes ? plane_limit_bytes : 16u << 20;
  tile_size = tile ? tile : 1024;
}

/* The levels of a stack's shape and their chunks. */
typedef struct
{
  guint n_levels;
  guint h[MAX_LEVELS], w[MAX_LEVELS];     /* plane size */
  guint ch[MAX_LEVELS], cw[MAX_LEVELS];   /* chunk size */
} Layout;

static void
layout_of (const AiryStack *shape, Layout *l)
{
  guint h = shape->height, w = shape->width, k;

  for (k = 0; k < MAX_LEVELS; k++)
    {
      l->h[k] = h;
      l->w[k] = w;
      if ((gsize) h * w * 4 <= plane_limit)
        {
          l->ch[k] = h;
          l->cw[k] = w;
        }
      else
        {
          l->ch[k] = MIN (h, tile_size);
          l->cw[k] = MIN (w, tile_size);
        }
      l->n_levels = k + 1;
      if (MAX (h, w) <= LEVEL_MIN)
        break;
      h = (h + 1) / 2;
      w = (w + 1) / 2;
    }
}

/* the mean of each 2 × 2 block (of the pixels there are, at an odd edge) */
static void
downsample (const float *src, guint h, guint w, float *dst)
{
  guint H = (h + 1) / 2, W = (w + 1) / 2, y, x;

  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      {
        guint y1 = MIN (2 * y + 1, h - 1), x1 = MIN (2 * x + 1, w - 1);
        guint n = (1 + (y1 != 2 * y)) * (1 + (x1 != 2 * x));
        double sum = (double) src[2 * y * w + 2 * x] + (x1 != 2 * x ? src[2 * y * w + x1] : 0)
                     + (y1 != 2 * y ? src[y1 * w + 2 * x] : 0)
                     + (x1 != 2 * x && y1 != 2 * y ? src[y1 * w + x1] : 0);

        dst[y * W + x] = (float) (sum / n);
      }
}

static gboolean
write_whole (const char *path, const void *data, gsize length, GError **error)
{
  const guint8 *p = data;
  int fd;

  _airy_file_io_note_write (path);
  fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    goto fail;
  while (length > 0)
    {
      gssize n = write (fd, p, length);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = n < 0 ? errno : EIO;
          close (fd);
          errno = e;
          goto fail;
        }
      p += n;
      length -= (gsize) n;
    }
  if (close (fd) == 0)
    return TRUE;
fail:
  {
    int e = errno;
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
    return FALSE;
  }
}

/* One level of one plane: its tiles, each padded to the chunk shape. */
static gboolean
write_level (const char *partial, guint level, guint z, const float *plane, const Layout *l, GError **error)
{
  guint h = l->h[level], w = l->w[level], ch = l->ch[level], cw = l->cw[level];
  gsize chunk_bytes = (gsize) ch * cw * 4;
  g_autofree float *tile = g_try_malloc (chunk_bytes);
  g_autofree guint8 *packed = g_try_malloc (chunk_bytes + BLOSC_MAX_OVERHEAD);
  guint ty, tx, y;

  if (tile == NULL || packed == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for a chunk"), partial);
      return FALSE;
    }
  for (ty = 0; ty * ch < h; ty++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/%u/%u/%u", partial, level, z, ty);

      if (g_mkdir_with_parents (dir, 0755) != 0)
        {
          int e = errno;
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), dir, g_strerror (e));
          return FALSE;
        }
      for (tx = 0; tx * cw < w; tx++)
        {
          g_autofree char *path = g_strdup_printf ("%s/%u", dir, tx);
          guint rows = MIN (ch, h - ty * ch), cols = MIN (cw, w - tx * cw);
          int n;

          if (rows < ch || cols < cw)
            memset (tile, 0, chunk_bytes);   /* the edge: fill_value beyond the array */
          for (y = 0; y < rows; y++)
            memcpy (tile + (gsize) y * cw, plane + (gsize) (ty * ch + y) * w + tx * cw, cols * sizeof (float));
          n = blosc_compress_ctx (CLEVEL, BLOSC_SHUFFLE, 4, chunk_bytes, tile, packed,
                                  chunk_bytes + BLOSC_MAX_OVERHEAD, "zstd", 0, 1);
          if (n <= 0)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: Blosc failed (%d)"), path, n);
              return FALSE;
            }
          if (!write_whole (path, packed, (gsize) n, error))
            return FALSE;
        }
    }
  return TRUE;
}

static guint
zarr_n_pieces (const AiryStack *shape)
{
  return shape->depth;
}

static gboolean
zarr_write_piece (const char      *partial,
                  const AiryStack *shape,
                  guint            piece,
                  const float     *data,
                  GError         **error)
{
  g_autofree float *level = NULL;
  const float *plane = data;
  Layout l;
  guint k;

  layout_of (shape, &l);
  for (k = 0; k < l.n_levels; k++)
    {
      if (k > 0)
        {
          float *next = g_try_new (float, (gsize) l.h[k] * l.w[k]);

          if (next == NULL)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for a level"), partial);
              return FALSE;
            }
          downsample (plane, l.h[k - 1], l.w[k - 1], next);
          g_free (level);
          plane = level = next;
        }
      if (!write_level (partial, k, piece, plane, &l, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- the store's folder ---- */

/* Removes a folder Airy made (a partial store, a replaced one): files and
 * folders, never following a link. */
static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      GStatBuf st;

      if (g_lstat (child, &st) == 0 && S_ISDIR (st.st_mode))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static gboolean
is_store (const char *path)
{
  static const char *const marks[] = { ".zgroup", ".zattrs", ".zarray" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (marks); i++)
    {
      g_autofree char *m = g_build_filename (path, marks[i], NULL);
      if (g_file_test (m, G_FILE_TEST_IS_REGULAR))
        return TRUE;
    }
  return FALSE;
}

/* What may stand at the location: nothing, an empty folder or a store. */
static gboolean
check_location (const char *location, GError **error)
{
  GStatBuf st;
  g_autoptr(GDir) dir = NULL;

  if (g_lstat (location, &st) != 0)
    return TRUE;
  if (!S_ISDIR (st.st_mode))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: exists and is not a folder; an OME-Zarr store is a folder"), location);
      return FALSE;
    }
  dir = g_dir_open (location, 0, NULL);
  if (!is_store (location) && dir && g_dir_read_name (dir) != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: a folder that is not a Zarr store; Airy replaces only a store"), location);
      return FALSE;
    }
  return TRUE;
}

/* A partial folder's name: .NAME.airy-HOST-PID-XXXXXX (the host's name
 * hashed), beside the store. */
static char *
partial_template (const char *dir, const char *base)
{
  return g_strdup_printf ("%s/.%.64s.airy-%08x-%d-XXXXXX", dir, base, g_str_hash (g_get_host_name ()),
                          (int) getpid ());
}

/* The partial folders of this store left by processes of this host that
 * are gone (killed while writing): removed. One of a live process is never
 * touched: its pid answers, and a folder written in the last 10 minutes
 * (a process of the same host name in another pid namespace) is kept. */
static void
remove_stale_partials (const char *dir, const char *base)
{
  g_autofree char *prefix = g_strdup_printf (".%.64s.airy-%08x-", base, g_str_hash (g_get_host_name ()));
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = NULL, *level = NULL;
      GStatBuf st, lst;
      char *end;
      gint64 pid;

      if (!g_str_has_prefix (name, prefix))
        continue;
      pid = g_ascii_strtoll (name + strlen (prefix), &end, 10);
      if (pid <= 0 || pid > G_MAXINT || *end != '-' || pid == getpid ()
          || kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
        continue;
      path = g_build_filename (dir, name, NULL);
      level = g_build_filename (path, "0", NULL);
      if (g_lstat (path, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
          || (g_lstat (level, &lst) == 0 && now - (gint64) lst.st_mtime < 600) || now - (gint64) st.st_mtime < 600)
        continue;
      remove_tree (path);
    }
}

static char *
zarr_begin_pieces (const char      *location,
                   const AiryStack *shape,
                   GError         **error)
{
  g_autofree char *dir = g_path_get_dirname (location);
  g_autofree char *base = g_path_get_basename (location);
  g_autofree char *tmpl = NULL;
  Layout l;
  guint k;

  if (!check_location (location, error))
    return NULL;
  _airy_file_io_note_write (location);
  remove_stale_partials (dir, base);
  tmpl = partial_template (dir, base);
  if (g_mkdtemp_full (tmpl, 0755) == NULL)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), location, g_strerror (e));
      return NULL;
    }
  layout_of (shape, &l);
  for (k = 0; k < l.n_levels; k++)
    {
      g_autofree char *level = g_strdup_printf ("%s/%u", tmpl, k);

      if (g_mkdir (level, 0755) != 0)
        {
          int e = errno;
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), location, g_strerror (e));
          remove_tree (tmpl);
          return NULL;
        }
    }
  return g_steal_pointer (&tmpl);
}

static void
zarr_abort_pieces (const char *partial)
{
  if (partial)
    remove_tree (partial);
}

static void
add_numbers (JsonBuilder *b, const char *key, const double *v, guint n)
{
  guint i;

  json_builder_set_member_name (b, key);
  json_builder_begin_array (b);
  for (i = 0; i < n; i++)
    json_builder_add_double_value (b, v[i]);
  json_builder_end_array (b);
}

static void
add_axis (JsonBuilder *b, const char *name)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, name);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "space");
  json_builder_set_member_name (b, "unit");
  json_builder_add_string_value (b, "micrometer");
  json_builder_end_object (b);
}

/* Airy's attributes: its version, every plane's z, the spectrum, the system */
static void
add_provenance (JsonBuilder *b, const AiryStack *shape)
{
  g_autofree double *z = g_new (double, shape->depth);
  guint k;

  json_builder_set_member_name (b, "airy");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, PACKAGE_VERSION);
  for (k = 0; k < shape->depth; k++)
    z[k] = airy_stack_get_z (shape, k);
  add_numbers (b, "z", z, shape->depth);
  if (shape->n_wavelengths > 0)
    {
      add_numbers (b, "wavelengths", shape->wavelengths, shape->n_wavelengths);
      add_numbers (b, "weights", shape->weights, shape->n_wavelengths);
    }
  if (shape->system_json)
    {
      JsonNode *system = json_from_string (shape->system_json, NULL);

      if (system && JSON_NODE_HOLDS_OBJECT (system))
        {
          json_builder_set_member_name (b, "system");
          json_builder_add_value (b, system);
        }
      else if (system)
        json_node_unref (system);
    }
  json_builder_end_object (b);
}

/* JSON text with every character beyond ASCII as \uXXXX (zarr-python
 * decodes .zattrs as ASCII) */
static char *
ascii_json (const char *text)
{
  GString *out = g_string_sized_new (strlen (text) + 16);
  const char *p;

  for (p = text; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c < 0x80)
        g_string_append_c (out, (char) c);
      else if (c < 0x10000)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_printf (out, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
    }
  return g_string_free (out, FALSE);
}

/* .zattrs: NGFF 0.4 multiscales, z y x in µm; pixel ⌊N/2⌋ on the axis
 * (DESIGN §3), so level k's pixel i is at (i + (2^k − 1)/2 − ⌊N/2⌋)·dx */
static char *
group_attributes (const AiryStack *shape, const char *location, const Layout *l, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *base = g_path_get_basename (location), *text = NULL;
  double dz = shape->depth > 1 && shape->dz != 0 ? fabs (shape->dz) : 1;
  double dy = shape->dy > 0 ? shape->dy : 1, dx = shape->dx > 0 ? shape->dx : 1;
  guint k;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "multiscales");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, "0.4");
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, base);
  json_builder_set_member_name (b, "axes");
  json_builder_begin_array (b);
  add_axis (b, "z");
  add_axis (b, "y");
  add_axis (b, "x");
  json_builder_end_array (b);
  json_builder_set_member_name (b, "datasets");
  json_builder_begin_array (b);
  for (k = 0; k < l->n_levels; k++)
    {
      double f = (double) (1u << k), half = (f - 1) / 2;
      double scale[3] = { dz, dy * f, dx * f };
      double shift[3] = { airy_stack_get_z (shape, 0), (half - shape->height / 2) * dy,
                          (half - shape->width / 2) * dx };
      g_autofree char *path = g_strdup_printf ("%u", k);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "path");
      json_builder_add_string_value (b, path);
      json_builder_set_member_name (b, "coordinateTransformations");
      json_builder_begin_array (b);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "scale");
      add_numbers (b, "scale", scale, 3);
      json_builder_end_object (b);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "translation");
      add_numbers (b, "translation", shift, 3);
      json_builder_end_object (b);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "mean");
  json_builder_set_member_name (b, "metadata");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "description");
  json_builder_add_string_value (b, "each level the mean of 2 × 2 pixels of the one before, in y and x");
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  add_provenance (b, shape);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = _airy_json_to_string (root, error);
  return text ? ascii_json (text) : NULL;
}

static char *
array_metadata (const AiryStack *shape, const Layout *l, guint k)
{
  return g_strdup_printf ("{\n  \"zarr_format\": 2,\n  \"shape\": [%u, %u, %u],\n  \"chunks\": [1, %u, %u],\n"
                          "  \"dtype\": \"%sf4\",\n"
                          "  \"compressor\": {\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": %d, "
                          "\"shuffle\": 1, \"blocksize\": 0},\n"
                          "  \"fill_value\": 0.0,\n  \"order\": \"C\",\n  \"filters\": null,\n"
                          "  \"dimension_separator\": \"/\"\n}\n",
                          shape->depth, l->h[k], l->w[k], l->ch[k], l->cw[k],
                          G_BYTE_ORDER == G_LITTLE_ENDIAN ? "<" : ">", CLEVEL);
}

static gboolean
write_text (const char *dir, const char *file, const char *text, GError **error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);

  return write_whole (path, text, strlen (text), error);
}

/* the old store at location exchanged with the new one in one step
 * (renameat2), or renamed away first where the file system cannot */
static gboolean
rename_into_place (const char *partial, const char *location, GError **error)
{
  g_autofree char *old = NULL;
  GStatBuf st;

  if (g_lstat (location, &st) != 0)
    {
      if (g_rename (partial, location) == 0)
        return TRUE;
    }
  else if (renameat2 (AT_FDCWD, partial, AT_FDCWD, location, RENAME_EXCHANGE) == 0)
    {
      remove_tree (partial);   /* now the old store */
      return TRUE;
    }
  else
    {
      old = g_strdup_printf ("%s.old", partial);
      if (g_rename (location, old) == 0)
        {
          if (g_rename (partial, location) == 0)
            {
              remove_tree (old);
              return TRUE;
            }
          g_rename (old, location);   /* the earlier store stays */
        }
    }
  {
    int e = errno;
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), location, g_strerror (e));
    return FALSE;
  }
}

static gboolean
zarr_commit_pieces (const char      *partial,
                    const char      *location,
                    const AiryStack *shape,
                    GError         **error)
{
  g_autofree char *attrs = NULL;
  Layout l;
  guint k;

  layout_of (shape, &l);
  for (k = 0; k < l.n_levels; k++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/%u", partial, k);
      g_autofree char *meta = array_metadata (shape, &l, k);

      if (!write_text (dir, ".zarray", meta, error))
        return FALSE;
    }
  attrs = group_attributes (shape, location, &l, error);
  if (attrs == NULL || !write_text (partial, ".zattrs", attrs, error)
      || !write_text (partial, ".zgroup", "{\n  \"zarr_format\": 2\n}\n", error))
    return FALSE;
  /* a store that was there stays whole until the new one is */
  if (!check_location (location, error))
    return FALSE;
  return rename_into_place (partial, location, error);
}

static gboolean
zarr_write (const char      *location,
            const AiryStack *stack,
            GPtrArray       *warnings,
            GError         **error)
{
  return _airy_image_write_pieces_with (&_airy_zarr_format, location, stack, 0, error);
}

static gboolean
zarr_sniff (const guint8 *head,
            gsize         n)
{
  return FALSE;   /* a folder, never a file */
}

static gboolean
zarr_sniff_location (const char *location)
{
  return is_store (location);
}

static const char *const zarr_suffixes[] = { ".ome.zarr", ".zarr", NULL };

const AiryImageFormat _airy_zarr_format = {
  .name = "OME-Zarr",
  .suffixes = zarr_suffixes,
  .sniff = zarr_sniff,
  .read = _airy_zarr_read,
  .write = zarr_write,
  .mime_type = "application/x-ome-zarr",
  .folder = TRUE,
  .sniff_location = zarr_sniff_location,
  .n_pieces = zarr_n_pieces,
  .begin_pieces = zarr_begin_pieces,
  .write_piece = zarr_write_piece,
  .commit_pieces = zarr_commit_pieces,
  .abort_pieces = zarr_abort_pieces,
  .probe = _airy_zarr_probe,
};
