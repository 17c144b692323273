/* OME-Zarr stores, reading (airy-zarr-private.h): an OME-NGFF image group
 * (its multiscales pick the level's array) or a bare Zarr v2 array; any
 * dtype Zarr writes for images, Blosc, zstd or raw chunks. The metadata is
 * checked first (airy-zarr-meta.c), the stack against the memory budget
 * before anything is allocated, and every chunk against the size its shape
 * and dtype give before it is decoded. The planes are decoded on all cores. */
#define G_LOG_DOMAIN "airy-zarr"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <blosc.h>
#include <zstd.h>
#include <glib/gstdio.h>

#include "airy-zarr-private.h"
#include "airy-error.h"
#include "airy-run.h"
#include "airy-stack.h"
#include "airy-atomic-private.h"

/* metadata files are small; a bigger one is not metadata */
#define META_LIMIT (16u << 20)
/* the most chunks one read opens (a 16 GiB stack in tiles of 1024²: 4096) */
#define MAX_CHUNKS (1u << 20)

/* the contents of a file in the store: NULL with *missing set when there is
 * none, NULL with error set when it cannot be read or exceeds limit */
static char *
read_store_file (const char *path, gsize limit, gsize *length, gboolean *missing, GError **error)
{
  g_autoptr(GError) local = NULL;
  struct stat st;
  char *data;
  gsize got = 0;
  int fd;

  *missing = FALSE;
  fd = _airy_input_open (path, FALSE, &local);
  if (fd < 0)
    {
      int e = errno;
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      else if (e == ENOENT)
        *missing = TRUE;
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s"), path, g_strerror (e));
      return NULL;
    }
  if (fstat (fd, &st) != 0 || (guint64) st.st_size > limit)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %llu bytes, more than the %llu it can hold"), path,
                   (unsigned long long) st.st_size, (unsigned long long) limit);
      close (fd);
      return NULL;
    }
  data = g_malloc ((gsize) st.st_size + 1);
  while (got < (gsize) st.st_size)
    {
      gssize n = read (fd, data + got, (gsize) st.st_size - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = n < 0 ? errno : EIO;
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s"), path, g_strerror (e));
          g_free (data);
          close (fd);
          return NULL;
        }
      got += (gsize) n;
    }
  close (fd);
  data[got] = '\0';
  *length = got;
  return data;
}

static char *
read_meta (const char *dir, const char *file, gsize *length, gboolean *missing, GError **error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);

  return read_store_file (path, META_LIMIT, length, missing, error);
}

/* What the reader found: the array of the level, how its axes map. */
typedef struct
{
  char         *name;        /* the store, for messages */
  char         *array_dir;   /* the level's folder */
  AiryZarrArray a;
  AiryZarrGroup g;
  int           ax[5];       /* array axis of t, c, z, y, x (−1: none) */
  guint64       sel_t, sel_c;
  guint         first, depth, height, width;
  gsize         chunk_bytes;
  float        *out;         /* depth × height × width */
} Store;

static void
store_clear (Store *s)
{
  g_free (s->name);
  g_free (s->array_dir);
  _airy_zarr_group_clear (&s->g);
}

/* the group's multiscales (or a bare array's default axes) and the level's .zarray */
static gboolean
open_store (Store *s, const char *location, guint level, GError **error)
{
  g_autofree char *attrs = NULL, *zarray = NULL, *aname = NULL;
  gsize len = 0;
  gboolean missing;
  guint i;

  attrs = read_meta (location, ".zattrs", &len, &missing, error);
  if (attrs == NULL && !missing)
    return FALSE;
  /* a bare array at the top: its own folder */
  zarray = read_meta (location, ".zarray", &len, &missing, error);
  if (zarray == NULL && !missing)
    return FALSE;
  if (zarray == NULL)
    {
      g_autofree char *gname = g_build_filename (location, ".zattrs", NULL);

      if (attrs == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: not a complete Zarr store (no .zattrs nor .zarray; an unfinished write?)"), location);
          return FALSE;
        }
      if (!_airy_zarr_parse_group (attrs, strlen (attrs), gname, &s->g, error))
        return FALSE;
      if (level >= s->g.n_levels)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: level %u asked for, the store has %u"),
                       location, level, s->g.n_levels);
          return FALSE;
        }
      s->array_dir = g_build_filename (location, s->g.paths[level], NULL);
      g_clear_pointer (&attrs, g_free);
      zarray = read_meta (s->array_dir, ".zarray", &len, &missing, error);
      if (zarray == NULL)
        {
          if (missing)
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                         _("%s: multiscales[0].datasets[%u].path: \"%s\" has no .zarray"), gname, level,
                         s->g.paths[level]);
          return FALSE;
        }
    }
  else
    s->array_dir = g_strdup (location);
  aname = g_build_filename (s->array_dir, ".zarray", NULL);
  if (!_airy_zarr_parse_array (zarray, len, aname, &s->a, error))
    return FALSE;
  if (s->g.ndim == 0)
    {
      /* a bare array: (t, c,) z, y, x by its rank */
      static const char *names[] = { NULL, NULL, "yx", "zyx", "czyx", "tczyx" };
      if (s->a.ndim < 2)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: shape: an image needs 2 to 5 axes, got %u"),
                       aname, s->a.ndim);
          return FALSE;
        }
      s->g.ndim = s->a.ndim;
      memcpy (s->g.axes, names[s->a.ndim], s->a.ndim);
    }
  if (s->a.ndim != s->g.ndim)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: shape: %u axes, the multiscales' axes are %u (%.*s)"), aname, s->a.ndim, s->g.ndim,
                   (int) s->g.ndim, s->g.axes);
      return FALSE;
    }
  for (i = 0; i < 5; i++)
    {
      const char *p = memchr (s->g.axes, "tczyx"[i], s->g.ndim);
      s->ax[i] = p ? (int) (p - s->g.axes) : -1;
    }
  return TRUE;
}

static guint64
axis_size (const Store *s, int which)
{
  return s->ax[which] >= 0 ? s->a.shape[s->ax[which]] : 1;
}

/* the channel and time point asked for, or the only ones */
static gboolean
select_axis (Store *s, int which, int wanted, const char *what, guint64 *sel, GError **error)
{
  guint64 n = axis_size (s, which);

  if (wanted < 0 && n > 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %llu %s; choose one"), s->name,
                   (unsigned long long) n, what);
      return FALSE;
    }
  if (wanted >= 0 && (guint64) wanted >= n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s %d asked for, the store has %llu"), s->name,
                   what, wanted, (unsigned long long) n);
      return FALSE;
    }
  *sel = wanted < 0 ? 0 : (guint64) wanted;
  return TRUE;
}

static void
chunk_key (const Store *s, const guint64 *index, char *buf, gsize size)
{
  gsize at = 0;
  guint i;

  for (i = 0; i < s->a.ndim && at < size; i++)
    {
      if (i > 0)
        buf[at++] = s->a.separator;
      at += g_snprintf (buf + at, size - at, "%llu", (unsigned long long) index[i]);
    }
}

/* raw chunk bytes from the file's, exactly chunk_bytes of them */
static gboolean
decode_chunk (const Store *s, const char *path, const guint8 *src, gsize len, guint8 *dst, GError **error)
{
  gsize want = s->chunk_bytes;

  switch (s->a.codec)
    {
    case AIRY_ZARR_CODEC_NONE:
      if (len == want)
        {
          memcpy (dst, src, want);
          return TRUE;
        }
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: %llu bytes without a compressor, the chunk shape and dtype of .zarray need %llu"),
                   path, (unsigned long long) len, (unsigned long long) want);
      return FALSE;
    case AIRY_ZARR_CODEC_BLOSC:
      {
        size_t nbytes = 0;

        if (len < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate (src, len, &nbytes) != 0)
          break;
        if (nbytes != want)
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                         _("%s: holds %llu bytes, the chunk shape and dtype of .zarray need %llu"), path,
                         (unsigned long long) nbytes, (unsigned long long) want);
            return FALSE;
          }
        if (blosc_decompress_ctx (src, dst, want, 1) != (int) want)
          break;
        return TRUE;
      }
    case AIRY_ZARR_CODEC_ZSTD:
      {
        unsigned long long n = ZSTD_getFrameContentSize (src, len);
        size_t got;

        if (n != ZSTD_CONTENTSIZE_UNKNOWN && n != ZSTD_CONTENTSIZE_ERROR && n != want)
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                         _("%s: holds %llu bytes, the chunk shape and dtype of .zarray need %llu"), path, n,
                         (unsigned long long) want);
            return FALSE;
          }
        got = ZSTD_decompress (dst, want, src, len);
        if (ZSTD_isError (got) || got != want)
          break;
        return TRUE;
      }
    }
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: a corrupt chunk (%s does not decode it)"), path,
               s->a.codec == AIRY_ZARR_CODEC_BLOSC ? "Blosc" : "zstd");
  return FALSE;
}

static float
element (const Store *s, const guint8 *p)
{
  guint8 b[8];
  guint i, n = s->a.itemsize;
  gboolean swap = n > 1 && (s->a.big_endian != (G_BYTE_ORDER == G_BIG_ENDIAN));

  for (i = 0; i < n; i++)
    b[i] = swap ? p[n - 1 - i] : p[i];
  switch (s->a.kind)
    {
    case 'f':
      if (n == 4)
        {
          float f;
          memcpy (&f, b, 4);
          return f;
        }
      else
        {
          double d;
          memcpy (&d, b, 8);
          return (float) d;
        }
    case 'u':
      if (n == 1) return b[0];
      if (n == 2) { guint16 v; memcpy (&v, b, 2); return v; }
      { guint32 v; memcpy (&v, b, 4); return (float) v; }
    default:
      if (n == 1) return (gint8) b[0];
      if (n == 2) { gint16 v; memcpy (&v, b, 2); return v; }
      { gint32 v; memcpy (&v, b, 4); return (float) v; }
    }
}

/* Whether a chunk is exactly one output plane of native float32: it is
 * decoded in place, without a chunk buffer */
static gboolean
chunk_is_plane (const Store *s)
{
  return s->a.kind == 'f' && s->a.itemsize == 4 && s->a.big_endian == (G_BYTE_ORDER == G_BIG_ENDIAN)
         && s->a.chunks[s->ax[3]] == s->height && s->a.chunks[s->ax[4]] == s->width
         && s->chunk_bytes == (gsize) s->height * s->width * 4;
}

/* One chunk (z index cz, tile cy, cx) into the output planes it covers;
 * *buf is the worker's chunk buffer, made when first needed. */
static gboolean
read_chunk (const Store *s, guint64 cz, guint64 cy, guint64 cx, guint8 **pbuf, GError **error)
{
  const AiryZarrArray *a = &s->a;
  guint64 index[AIRY_ZARR_MAX_DIMS] = { 0 }, stride[AIRY_ZARR_MAX_DIMS], base = 0;
  guint64 ch_z = s->ax[2] >= 0 ? a->chunks[s->ax[2]] : 1;
  guint64 ch_y = a->chunks[s->ax[3]], ch_x = a->chunks[s->ax[4]];
  guint64 z, y, x, z_end, y_end, x_end;
  g_autofree char *path = NULL, *data = NULL;
  char key[160];
  gsize len = 0;
  gboolean missing;
  int i;

  for (i = (int) a->ndim - 1, stride[a->ndim - 1] = 1; i > 0; i--)
    stride[i - 1] = stride[i] * a->chunks[i];
  if (s->ax[0] >= 0)
    {
      index[s->ax[0]] = s->sel_t / a->chunks[s->ax[0]];
      base += (s->sel_t % a->chunks[s->ax[0]]) * stride[s->ax[0]];
    }
  if (s->ax[1] >= 0)
    {
      index[s->ax[1]] = s->sel_c / a->chunks[s->ax[1]];
      base += (s->sel_c % a->chunks[s->ax[1]]) * stride[s->ax[1]];
    }
  if (s->ax[2] >= 0)
    index[s->ax[2]] = cz;
  index[s->ax[3]] = cy;
  index[s->ax[4]] = cx;
  chunk_key (s, index, key, sizeof key);
  path = g_build_filename (s->array_dir, key, NULL);
  data = read_store_file (path, s->chunk_bytes + s->chunk_bytes / 8 + 65536, &len, &missing, error);
  if (data == NULL && !missing)
    return FALSE;
  if (data == NULL && (!a->has_fill || s->g.airy))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s: %s", path,
                   !a->has_fill ? _("chunk missing, and .zarray's fill_value is null")
                                : _("chunk missing from a store Airy wrote (it writes every chunk)"));
      return FALSE;
    }
  if (data != NULL && chunk_is_plane (s))
    return decode_chunk (s, path, (const guint8 *) data, len,
                         (guint8 *) (s->out + (cz - s->first) * s->height * s->width), error);
  if (data != NULL && *pbuf == NULL && (*pbuf = g_try_malloc (s->chunk_bytes)) == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for a chunk"), s->name);
      return FALSE;
    }
  if (data != NULL && !decode_chunk (s, path, (const guint8 *) data, len, *pbuf, error))
    return FALSE;
  /* the planes and pixels of the output this chunk holds */
  z = MAX (cz * ch_z, s->first);
  z_end = MIN ((cz + 1) * ch_z, (guint64) s->first + s->depth);
  y_end = MIN ((cy + 1) * ch_y, s->height);
  x_end = MIN ((cx + 1) * ch_x, s->width);
  for (; z < z_end; z++)
    for (y = cy * ch_y; y < y_end; y++)
      {
        float *row = s->out + ((z - s->first) * s->height + y) * s->width;
        guint64 off = base + (s->ax[2] >= 0 ? (z - cz * ch_z) * stride[s->ax[2]] : 0)
                      + (y - cy * ch_y) * stride[s->ax[3]];

        for (x = cx * ch_x; x < x_end; x++)
          row[x] = data ? element (s, *pbuf + (off + (x - cx * ch_x) * stride[s->ax[4]]) * a->itemsize)
                        : (float) a->fill;
      }
  return TRUE;
}

typedef struct
{
  const Store *s;
  GMutex       lock;
  GError      *error;      /* the failure of the lowest z chunk (the same */
  guint64      error_cz;   /*   message whatever the threads' order) */
} Job;

/* every chunk of one z chunk index (a worker of the pool) */
static void
read_z_chunk (gpointer data, gpointer user_data)
{
  Job *job = user_data;
  const Store *s = job->s;
  guint64 cz = GPOINTER_TO_SIZE (data) - 1, cy, cx;
  guint64 ch_y = s->a.chunks[s->ax[3]], ch_x = s->a.chunks[s->ax[4]];
  g_autofree guint8 *buf = NULL;
  GError *local = NULL;

  for (cy = 0; local == NULL && cy * ch_y < s->height; cy++)
    for (cx = 0; local == NULL && cx * ch_x < s->width; cx++)
      {
        gboolean later;

        g_mutex_lock (&job->lock);
        later = job->error != NULL && job->error_cz < cz;
        g_mutex_unlock (&job->lock);
        if (later)
          return;
        read_chunk (s, cz, cy, cx, &buf, &local);
      }
  if (local == NULL)
    return;
  g_mutex_lock (&job->lock);
  if (job->error == NULL || cz < job->error_cz)
    {
      g_clear_error (&job->error);
      job->error = local;
      job->error_cz = cz;
    }
  else
    g_error_free (local);
  g_mutex_unlock (&job->lock);
}

static gboolean
read_pixels (Store *s, GError **error)
{
  guint64 ch_z = s->ax[2] >= 0 ? s->a.chunks[s->ax[2]] : 1;
  guint64 cz, cz_end = ((guint64) s->first + s->depth + ch_z - 1) / ch_z;
  Job job = { s };
  GThreadPool *pool;

  guint64 ch_y = s->a.chunks[s->ax[3]], ch_x = s->a.chunks[s->ax[4]];
  guint64 n_chunks = (cz_end - s->first / ch_z) * ((s->height + ch_y - 1) / ch_y) * ((s->width + ch_x - 1) / ch_x);

  /* a file per chunk: tiny chunks over a large array are millions of files */
  if (n_chunks > MAX_CHUNKS)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s/.zarray: chunks: %llu chunks to read, more than the %u Airy reads at once"),
                   s->array_dir, (unsigned long long) n_chunks, MAX_CHUNKS);
      return FALSE;
    }
  s->chunk_bytes = s->a.itemsize;
  for (guint i = 0; i < s->a.ndim; i++)
    s->chunk_bytes *= s->a.chunks[i];
  pool = g_thread_pool_new (read_z_chunk, &job, MIN ((int) g_get_num_processors (), 16), FALSE, NULL);
  for (cz = s->first / ch_z; cz < cz_end; cz++)
    g_thread_pool_push (pool, GSIZE_TO_POINTER (cz + 1), NULL);
  g_thread_pool_free (pool, FALSE, TRUE);
  if (job.error)
    {
      g_propagate_error (error, job.error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
budget_check (const Store *s, const AiryReadOptions *o, GError **error)
{
  guint64 budget = o->budget ? o->budget : airy_memory_budget ();
  guint64 need = (guint64) s->depth * s->height * s->width * 4;

  if (need > budget)
    {
      g_autofree char *need_s = airy_format_bytes (need);
      g_autofree char *budget_s = airy_memory_budget_describe (budget, o->budget == 0);

      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("%s: a stack of %u × %u × %u pixels needs %s as float32, more than "
                     "the memory budget of %s"), s->name, s->depth, s->height, s->width, need_s, budget_s);
      return FALSE;
    }
  return TRUE;
}

/* voxel size, z and provenance from the group's attributes */
static void
set_metadata (const Store *s, guint level, AiryStack *stack)
{
  const double *scale = s->g.scales ? s->g.scales + level * s->g.ndim : NULL;
  const double *shift = s->g.translations ? s->g.translations + level * s->g.ndim : NULL;
  guint k;

  stack->bits = s->a.kind == 'f' ? 32 : (int) s->a.itemsize * 8;
  stack->n_channels = (guint) axis_size (s, 1);
  stack->n_frames = (guint) axis_size (s, 0);
  stack->channel = (guint) s->sel_c;
  stack->frame = (guint) s->sel_t;
  if (scale == NULL)
    return;
  stack->dx = scale[s->ax[4]];
  stack->dy = scale[s->ax[3]];
  if (s->ax[2] >= 0)
    {
      stack->dz = scale[s->ax[2]];
      stack->z0 = shift[s->ax[2]] + s->first * stack->dz;
    }
  if (s->g.n_z == axis_size (s, 2) && s->g.n_z > 0)
    {
      g_autofree double *z = g_new (double, stack->depth);

      for (k = 0; k < stack->depth; k++)
        z[k] = s->g.z[s->first + k];
      airy_stack_set_z (stack, z);
    }
  if (s->g.n_wavelengths > 0 || s->g.system_json)
    airy_stack_set_provenance (stack, s->g.n_wavelengths, s->g.wavelengths, s->g.weights, s->g.system_json);
}

static AiryStack *
read_store (const char *location, const AiryReadOptions *options, gboolean pixels, GError **error)
{
  static const AiryReadOptions defaults = AIRY_READ_OPTIONS_INIT;
  Store s = { 0 };
  AiryStack *stack = NULL;
  guint64 nz;

  options = options ? options : &defaults;
  s.name = g_strdup (location);
  _airy_file_io_note (location);
  if (!open_store (&s, location, options->level, error)
      || !select_axis (&s, 0, options->frame, _("time points"), &s.sel_t, error)
      || !select_axis (&s, 1, options->channel, _("channels"), &s.sel_c, error))
    goto out;
  nz = axis_size (&s, 2);
  s.height = (guint) axis_size (&s, 3);
  s.width = (guint) axis_size (&s, 4);
  if (options->max_planes && nz > options->max_planes)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %llu planes, more than the %u expected"), location,
                   (unsigned long long) nz, options->max_planes);
      goto out;
    }
  s.first = options->n_planes ? options->first_plane : 0;
  s.depth = options->n_planes ? options->n_planes : (guint) nz;
  if ((guint64) s.first + s.depth > nz)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: planes %u to %u asked for, the store has %llu"),
                   location, s.first, s.first + s.depth - 1, (unsigned long long) nz);
      goto out;
    }
  if (!pixels)
    {
      stack = g_new0 (AiryStack, 1);
      stack->depth = (guint) nz;
      stack->height = s.height;
      stack->width = s.width;
      s.first = 0;
    }
  else
    {
      if (!budget_check (&s, options, error))
        goto out;
      stack = _airy_stack_new_uninitialised (s.depth, s.height, s.width);
      if (stack == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s: not enough memory for %u × %u × %u"),
                       location, s.depth, s.height, s.width);
          goto out;
        }
      s.out = stack->data;
      if (!read_pixels (&s, error))
        g_clear_pointer (&stack, airy_stack_free);
    }
  if (stack)
    set_metadata (&s, options->level, stack);
out:
  store_clear (&s);
  return stack;
}

AiryStack *
_airy_zarr_read (const char            *location,
                 const AiryReadOptions *options,
                 GError               **error)
{
  return read_store (location, options, TRUE, error);
}

AiryStack *
_airy_zarr_probe (const char            *location,
                  const AiryReadOptions *options,
                  GError               **error)
{
  return read_store (location, options, FALSE, error);
}
