#define G_LOG_DOMAIN "airy-focus"

#include "config.h"

#include <math.h>
#include <glib/gi18n.h>

#include "airy-focus.h"
#include "airy-error.h"
#include "airy-view-math.h"

/* Best focus, as Fiji and PSF Generator users read a stack: where its
 * FWHMs mean something. Two passes over the planes at most, one plane in
 * host memory at a time. */

typedef struct
{
  float peak;
  guint x, y;      /* where the plane's peak is */
  double fwhm;     /* along x through it, µm (0: none) */
} PlaneStats;

static void
plane_stats (const float *p, guint h, guint w, double dx, PlaneStats *st)
{
  gsize n = (gsize) h * w, i, best = 0;
  float peak = -INFINITY;

  for (i = 0; i < n; i++)
    if (p[i] > peak)
      {
        peak = p[i];
        best = i;
      }
  st->peak = peak;
  st->x = (guint) (best % w);
  st->y = (guint) (best / w);
  st->fwhm = isfinite (peak) && peak > 0 ? airy_profile_fwhm (p + (gsize) st->y * w, w, dx, st->x) : 0.0;
}

/* the share of the plane's energy within `radius` pixels of (cx, cy) */
static double
encircled (const float *p, guint h, guint w, guint cx, guint cy, double radius)
{
  double inside = 0.0, all = 0.0;
  guint x, y;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      {
        double v = p[(gsize) y * w + x], ddx = (double) x - cx, ddy = (double) y - cy;

        all += v;
        if (ddx * ddx + ddy * ddy <= radius * radius)
          inside += v;
      }
  return all > 0 ? inside / all : 0.0;
}

gboolean
airy_focus_best_plane (AiryResident       *resident,
                       AiryFocusCriterion  criterion,
                       guint              *plane,
                       double             *score,
                       GError            **error)
{
  const AiryStack *s;
  g_autofree PlaneStats *st = NULL;
  g_autofree float *buf = NULL;
  guint z, best = 0, known;
  double value = 0.0;

  g_return_val_if_fail (resident != NULL && plane != NULL, FALSE);

  s = airy_resident_get_stack (resident);
  if (airy_resident_is_partial (resident, &known))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("best focus: the stack is still being computed (plane %u of %u known)"), known + 1, s->depth);
      return FALSE;
    }
  st = g_new0 (PlaneStats, s->depth);
  buf = g_new (float, airy_stack_plane_size (s));
  for (z = 0; z < s->depth; z++)
    {
      if (!airy_resident_read_slice (resident, &(AirySlice) { AIRY_SLICE_XY, z }, buf, error))
        return FALSE;
      plane_stats (buf, s->height, s->width, s->dx > 0 ? s->dx : 1.0, &st[z]);
      if (st[z].peak > st[best].peak)
        best = z;
    }
  if (!(st[best].peak > 0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("best focus: the stack has no positive value"));
      return FALSE;
    }
  value = st[best].peak;
  if (criterion == AIRY_FOCUS_FWHM)
    {
      guint narrowest = best;

      /* planes that hold a peak worth the name */
      for (z = 0; z < s->depth; z++)
        if (st[z].peak >= 0.1 * st[best].peak && st[z].fwhm > 0
            && (st[narrowest].fwhm <= 0 || st[z].fwhm < st[narrowest].fwhm))
          narrowest = z;
      best = narrowest;
      value = st[best].fwhm;
    }
  else if (criterion == AIRY_FOCUS_ENERGY)
    {
      /* one FWHM of the brightest plane about the stack's peak */
      double radius = MAX (st[best].fwhm / (s->dx > 0 ? s->dx : 1.0), 1.0), most = -1.0;
      guint cx = st[best].x, cy = st[best].y, top = best;

      for (z = 0; z < s->depth; z++)
        {
          double e;

          if (!airy_resident_read_slice (resident, &(AirySlice) { AIRY_SLICE_XY, z }, buf, error))
            return FALSE;
          e = encircled (buf, s->height, s->width, cx, cy, radius);
          if (e > most)
            {
              most = e;
              top = z;
            }
        }
      best = top;
      value = most;
    }
  *plane = best;
  if (score)
    *score = value;
  return TRUE;
}
