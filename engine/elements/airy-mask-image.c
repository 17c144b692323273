/* Mask images (amplitude and phase masks from a file): read row by row
 * and sampled onto the field's grid on the way. */
#define G_LOG_DOMAIN "airy-masks"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-image-file.h"
#include "airy-image-file-private.h"
#include "airy-stack.h"

/* A mask image may be far larger than the grid: it is read row by row and
 * sampled on the way (two image rows held, never the image), up to this
 * many pixels. */
#define MASK_MAX_PIXELS (G_GUINT64_CONSTANT (1) << 30)

typedef struct
{
  guint    height, width;     /* the grid */
  guint    ih, iw;            /* the image */
  gboolean is_float;          /* values mapped by their own min … max */
  float    lo, hi;
  double  *v;                 /* the grid's values before the mapping */
  float   *prev, *cur;        /* image rows k − 1 and k */
  int     *x0, *x1;           /* per grid column: its two image columns */
  double  *fx;
  guint    next;              /* the next grid row to sample */
  const char *path;
} MaskSampler;

/* Pixel centres of the target grid mapped onto the image's extent. */
static double
mask_source (guint i, guint image_n, guint n)
{
  return ((i + 0.5) * image_n / n) - 0.5;
}

static gboolean
mask_begin (const AiryStack *head, gpointer user_data, GError **error)
{
  MaskSampler *m = user_data;
  guint x;

  if ((guint64) head->height * head->width > MASK_MAX_PIXELS)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: %u × %u pixels, more than the %u (32768²) a mask image may have"),
                   m->path, head->width, head->height, (guint) MASK_MAX_PIXELS);
      return FALSE;
    }
  m->ih = head->height;
  m->iw = head->width;
  /* integer images map their type's range to [0, 1]; float images their
   * own min … max */
  m->is_float = head->bits >= 32;
  m->lo = 0.0f;
  m->hi = m->is_float ? 0.0f : (float) ((1u << head->bits) - 1);
  m->prev = g_new (float, m->iw);
  m->cur = g_new (float, m->iw);
  m->x0 = g_new (int, m->width);
  m->x1 = g_new (int, m->width);
  m->fx = g_new (double, m->width);
  for (x = 0; x < m->width; x++)
    {
      double sx = mask_source (x, m->iw, m->width);
      int x0 = (int) floor (sx);

      m->fx[x] = sx - x0;
      m->x1[x] = MIN (x0 + 1, (int) m->iw - 1);
      m->x0[x] = CLAMP (x0, 0, (int) m->iw - 1);
    }
  return TRUE;
}

/* Image row k arrives: every grid row whose lower source row is k is
 * sampled (bilinear, between rows k − 1 or k and k). */
static void
mask_row (guint k, const float *values, gpointer user_data)
{
  MaskSampler *m = user_data;
  float *t;
  guint x;

  if (m->is_float)
    {
      if (k == 0)
        m->lo = m->hi = values[0];
      for (x = 0; x < m->iw; x++)
        {
          m->lo = MIN (m->lo, values[x]);
          m->hi = MAX (m->hi, values[x]);
        }
    }
  t = m->prev;
  m->prev = m->cur;
  m->cur = t;
  memcpy (m->cur, values, (gsize) m->iw * sizeof (float));
  while (m->next < m->height)
    {
      double sy = mask_source (m->next, m->ih, m->height);
      int y0 = (int) floor (sy);
      double fy = sy - y0;
      int y1 = MIN (y0 + 1, (int) m->ih - 1);
      const float *a, *b = m->cur;

      if ((guint) y1 > k)
        break;
      y0 = CLAMP (y0, 0, (int) m->ih - 1);
      a = (guint) y0 == k ? m->cur : m->prev;
      for (x = 0; x < m->width; x++)
        {
          double fx = m->fx[x];
          int x0 = m->x0[x], x1 = m->x1[x];

          m->v[(gsize) m->next * m->width + x] = (1 - fy) * ((1 - fx) * a[x0] + fx * a[x1])
                                                 + fy * ((1 - fx) * b[x0] + fx * b[x1]);
        }
      m->next++;
    }
}

float *
_airy_load_mask_image (AiryElement *self,
                       const char  *property,
                       const char  *path,
                       guint        height,
                       guint        width,
                       GError     **error)
{
  g_autofree char *full = NULL;
  g_autoptr(GError) local = NULL;
  const char *base = _airy_element_get_base_dir (self);
  MaskSampler m = { height, width };
  AiryRowSink sink = { mask_begin, mask_row, &m };
  float *out = NULL;
  gsize i, n = (gsize) height * width;

  if (path == NULL || *path == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: no file given"), property);
      return NULL;
    }
  full = g_path_is_absolute (path) || base == NULL ? g_strdup (path)
                                                   : g_build_filename (base, path, NULL);
  m.path = full;
  m.v = g_new (double, n);
  if (!_airy_image_read_rows (full, &sink, &local) || m.next != height)
    {
      if (local == NULL)
        g_set_error (&local, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: fewer rows than its size"), full);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s"), property, local->message);
    }
  else
    {
      out = g_new (float, n);
      for (i = 0; i < n; i++)
        out[i] = m.hi > m.lo ? (float) ((m.v[i] - m.lo) / (m.hi - m.lo)) : 0.0f;
    }
  g_free (m.v);
  g_free (m.prev);
  g_free (m.cur);
  g_free (m.x0);
  g_free (m.x1);
  g_free (m.fx);
  return out;
}
