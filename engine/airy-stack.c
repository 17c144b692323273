#define G_LOG_DOMAIN "airy-stack"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <glib/gstdio.h>

#include "airy-stack.h"
#include "airy-atomic-private.h"
#include "airy-error.h"

/* One freed large mapping is kept for the next stack of the same size: a
 * fresh mapping costs a page fault per page (and, in a virtual machine, far
 * more), which repeated runs of one system (the GUI, benchmarks) would pay
 * again for every result. */
static GMutex  spare_lock;
static void   *spare_data;
static gsize   spare_bytes;

static void *
take_spare (gsize bytes)
{
  void *p = NULL;

  g_mutex_lock (&spare_lock);
  if (spare_data != NULL && spare_bytes == bytes)
    {
      p = spare_data;
      spare_data = NULL;
      spare_bytes = 0;
    }
  g_mutex_unlock (&spare_lock);
  return p;
}

static void
give_spare (void *p, gsize bytes)
{
  void *old;
  gsize old_bytes;

  g_mutex_lock (&spare_lock);
  old = spare_data;
  old_bytes = spare_bytes;
  spare_data = p;
  spare_bytes = bytes;
  g_mutex_unlock (&spare_lock);
  if (old != NULL)
    munmap (old, old_bytes);
}

static AiryStack *
stack_new (guint depth, guint height, guint width, gboolean zero)
{
  AiryStack *stack;
  gsize n = (gsize) depth * height * width;

  stack = g_new0 (AiryStack, 1);
  stack->depth = depth;
  stack->height = height;
  stack->width = width;
  stack->bits = 32;
  if (n * sizeof (float) >= (32u << 20))
    {
      /* Large stacks get their own mapping, as huge pages where the kernel
       * allows: a plane of a 1536² stack then spans 5 pages instead of
       * 2304, and writing it block by block stays in the TLB. */
      gsize bytes = n * sizeof (float);
      void *p = take_spare (bytes);

      if (p != NULL)
        {
          if (zero)
            memset (p, 0, bytes);
        }
      else
        {
          p = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          if (p == MAP_FAILED)
            p = NULL;
#ifdef MADV_HUGEPAGE
          else
            madvise (p, bytes, MADV_HUGEPAGE);
#endif
        }
      if (p != NULL)
        {
          stack->data = p;
          stack->mapped = bytes;
          return stack;
        }
    }
  stack->data = g_try_malloc0 (MAX (n, 1) * sizeof (float));
  if (stack->data == NULL)
    {
      g_free (stack);
      return NULL;
    }
  return stack;
}

/* A stack whose every value the caller writes: no zeroing. */
AiryStack *
_airy_stack_new_uninitialised (guint depth,
                               guint height,
                               guint width)
{
  return stack_new (depth, height, width, FALSE);
}

AiryStack *
airy_stack_new (guint depth,
                guint height,
                guint width)
{
  return stack_new (depth, height, width, TRUE);
}

void
airy_stack_free (AiryStack *stack)
{
  if (stack == NULL)
    return;
  if (stack->mapped)
    give_spare (stack->data, stack->mapped);
  else
    g_free (stack->data);
  g_free (stack);
}

AiryStack *
airy_stack_copy (const AiryStack *stack)
{
  AiryStack *copy = airy_stack_new (stack->depth, stack->height, stack->width);

  memcpy (copy->data, stack->data, (gsize) stack->depth * airy_stack_plane_size (stack) * sizeof (float));
  copy->dx = stack->dx;
  copy->dy = stack->dy;
  copy->dz = stack->dz;
  copy->z0 = stack->z0;
  copy->bits = stack->bits;
  return copy;
}

gsize
airy_stack_plane_size (const AiryStack *stack)
{
  return (gsize) stack->height * stack->width;
}

float *
airy_stack_plane (const AiryStack *stack,
                  guint            z)
{
  g_return_val_if_fail (z < stack->depth, NULL);
  return stack->data + z * airy_stack_plane_size (stack);
}

void
airy_stack_min_max (const AiryStack *stack,
                    float           *min,
                    float           *max)
{
  gsize n = (gsize) stack->depth * airy_stack_plane_size (stack), i;
  float lo = INFINITY, hi = -INFINITY;

  for (i = 0; i < n; i++)
    {
      lo = MIN (lo, stack->data[i]);
      hi = MAX (hi, stack->data[i]);
    }
  *min = lo;
  *max = hi;
}

/* ---- colormaps: perceptual maps as 10 evenly spaced stops (matplotlib's
 * published values), interpolated linearly; fire after ImageJ's LUT. ---- */

static const guint32 stops_inferno[] = { 0x000004, 0x1b0c41, 0x4a0c6b, 0x781c6d, 0xa52c60,
                                         0xcf4446, 0xed6925, 0xfb9b06, 0xf7d13d, 0xfcffa4 };
static const guint32 stops_magma[]   = { 0x000004, 0x180f3d, 0x440f76, 0x721f81, 0x9e2f7f,
                                         0xcd4071, 0xf1605d, 0xfd9668, 0xfeca8d, 0xfcfdbf };
static const guint32 stops_viridis[] = { 0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e,
                                         0x1f9e89, 0x35b779, 0x6ece58, 0xb5de2b, 0xfde725 };
static const guint32 stops_fire[]    = { 0x000000, 0x1f0060, 0x5a0090, 0x9a0078, 0xd4103c,
                                         0xf54a00, 0xff8c00, 0xffc000, 0xffe860, 0xffffff };
static const guint32 stops_gray[]    = { 0x000000, 0xffffff };

static const char *colormap_names[AIRY_N_COLORMAPS] = { "gray", "inferno", "magma", "viridis", "fire" };

const char *
airy_colormap_name (AiryColormap colormap)
{
  g_return_val_if_fail (colormap < AIRY_N_COLORMAPS, NULL);
  return colormap_names[colormap];
}

gboolean
airy_colormap_from_name (const char   *name,
                         AiryColormap *colormap)
{
  guint i;

  for (i = 0; i < AIRY_N_COLORMAPS; i++)
    if (g_strcmp0 (name, colormap_names[i]) == 0)
      {
        *colormap = i;
        return TRUE;
      }
  return FALSE;
}

void
airy_colormap_lut (AiryColormap colormap,
                   gboolean     inverted,
                   guint8       lut[256 * 3])
{
  const guint32 *stops;
  guint n, i, c;

  switch (colormap)
    {
    case AIRY_COLORMAP_INFERNO: stops = stops_inferno; n = G_N_ELEMENTS (stops_inferno); break;
    case AIRY_COLORMAP_MAGMA:   stops = stops_magma;   n = G_N_ELEMENTS (stops_magma); break;
    case AIRY_COLORMAP_VIRIDIS: stops = stops_viridis; n = G_N_ELEMENTS (stops_viridis); break;
    case AIRY_COLORMAP_FIRE:    stops = stops_fire;    n = G_N_ELEMENTS (stops_fire); break;
    case AIRY_COLORMAP_GRAY:
    default:                    stops = stops_gray;    n = G_N_ELEMENTS (stops_gray); break;
    }
  for (i = 0; i < 256; i++)
    {
      double t = (inverted ? 255 - i : i) / 255.0 * (n - 1);
      guint k = MIN ((guint) t, n - 2);
      double f = t - k;

      for (c = 0; c < 3; c++)
        {
          int shift = 16 - 8 * c;
          double a = (stops[k] >> shift) & 0xff, b = (stops[k + 1] >> shift) & 0xff;
          lut[3 * i + c] = (guint8) floor (a + f * (b - a) + 0.5);
        }
    }
}

/* ---- atomic files ---- */

int
airy_atomic_begin (const char *path,
                   char      **tmp_path,
                   GError    **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmpl = g_strdup_printf ("%s%c.%s.XXXXXX", dir, G_DIR_SEPARATOR, base);
  int fd = g_mkstemp (tmpl);

  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE,
                   _("%s: cannot write: %s"), path, g_strerror (e));
      return -1;
    }
  _airy_atomic_register (tmpl);
  *tmp_path = g_steal_pointer (&tmpl);
  return fd;
}

gboolean
airy_atomic_commit (const char *tmp_path,
                    const char *path,
                    GError    **error)
{
  /* mkstemp makes 0600; outputs are ordinary files */
  g_chmod (tmp_path, 0644);
  if (g_rename (tmp_path, path) != 0)
    {
      int e = errno;
      g_unlink (tmp_path);
      _airy_atomic_unregister (tmp_path);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE,
                   _("%s: cannot write: %s"), path, g_strerror (e));
      return FALSE;
    }
  _airy_atomic_unregister (tmp_path);
  return TRUE;
}

void
airy_atomic_abort (const char *tmp_path)
{
  if (tmp_path != NULL)
    {
      g_unlink (tmp_path);
      _airy_atomic_unregister (tmp_path);
    }
}

/* The temporaries being written, for a fatal signal's handler to remove
 * (airy-sim): fixed slots that it reads without locks or allocation. A slot
 * is 0 (free), 1 (being filled) or 2 (live). */
#define LIVE_SLOTS 16
static char live_paths[LIVE_SLOTS][4096];
static gint live_state[LIVE_SLOTS];

void
_airy_atomic_register (const char *tmp_path)
{
  guint i;

  if (strlen (tmp_path) >= sizeof live_paths[0])
    return;
  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&live_state[i], 0, 1))
      {
        strcpy (live_paths[i], tmp_path);
        g_atomic_int_set (&live_state[i], 2);
        return;
      }
}

void
_airy_atomic_unregister (const char *tmp_path)
{
  guint i;

  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_get (&live_state[i]) == 2 && strcmp (live_paths[i], tmp_path) == 0)
      {
        g_atomic_int_set (&live_state[i], 0);
        return;
      }
}

/* Async-signal-safe: lock-free atomics and unlink () only. */
void
_airy_atomic_remove_live (void)
{
  guint i;

  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_get (&live_state[i]) == 2)
      unlink (live_paths[i]);
}

AiryStack *
airy_image_read (const char *path,
                 GError    **error)
{
  guint8 magic[8] = { 0 };
  FILE *f = g_fopen (path, "rb");
  size_t got;

  if (f == NULL)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s"), path, g_strerror (e));
      return NULL;
    }
  got = fread (magic, 1, sizeof magic, f);
  fclose (f);
  if (got >= 8 && memcmp (magic, "\x89PNG\r\n\x1a\n", 8) == 0)
    return airy_png_read (path, error);
  if (got >= 4 && (memcmp (magic, "II*\0", 4) == 0 || memcmp (magic, "MM\0*", 4) == 0
                   || memcmp (magic, "II+\0", 4) == 0 || memcmp (magic, "MM\0+", 4) == 0))
    return airy_tiff_read (path, error);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
               _("%s: not a TIFF or PNG image"), path);
  return NULL;
}
