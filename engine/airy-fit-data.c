#define G_LOG_DOMAIN "airy-fit"

/* The bead stack as the fit sees it (airy-fit-private.h, AiryFitData): on
 * the system's grid, in photons, its window around the bead, and the
 * background and noise of the window's border. The fit's driver,
 * airy-fit.c, takes it from here. */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "airy-error.h"
#include "airy-fit-private.h"
#include "airy-geometry.h"

static int
compare_floats (gconstpointer a, gconstpointer b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return x < y ? -1 : x > y;
}

/* The stack on the system's grid: resampled (with a warning) when its
 * voxels are not the system's; errors name the file's and the system's. */
static AiryStack *
beads_on_grid (const AiryStack *beads, const AiryGeometry *geom, GPtrArray *warnings, GError **error)
{
  double du = geom->psf_dx, dz_sys = 0.0, dx = beads->dx > 0 ? beads->dx : du;
  double dy = beads->dy > 0 ? beads->dy : dx, dz = beads->dz;
  guint nz = geom->n_planes, h, w;
  gboolean z_ok, xy_ok;

  if (nz > 1)
    dz_sys = (geom->z[nz - 1] - geom->z[0]) / (nz - 1);
  if (beads->dx <= 0)
    g_ptr_array_add (warnings, g_strdup_printf (_("the bead stack has no pixel size; taken as the system's (%g µm)"), du));
  if (nz > 1 && beads->depth > 1 && dz <= 0)
    {
      g_ptr_array_add (warnings, g_strdup_printf (_("the bead stack has no z spacing; taken as the system's (%g µm)"), dz_sys));
      dz = dz_sys;
    }
  xy_ok = fabs (dx - du) <= 1e-3 * du && fabs (dy - du) <= 1e-3 * du;
  z_ok = nz <= 1 ? beads->depth == 1 : beads->depth == nz && fabs (dz - dz_sys) <= 1e-3 * fabs (dz_sys);
  if (xy_ok && z_ok)
    return airy_stack_copy (beads);
  if (nz > 1 && beads->depth > 1 && (beads->depth - 1) * dz < (geom->z[nz - 1] - geom->z[0]) * (1 - 1e-6))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack spans %g µm in z (%u planes of %g µm), less than the system's planes "
                     "(%g µm, %u planes of %g µm)"),
                   (beads->depth - 1) * dz, beads->depth, dz, geom->z[nz - 1] - geom->z[0], nz, dz_sys);
      return NULL;
    }
  if (nz > 1 && beads->depth == 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack has one plane, the system %u (z.count): fit a stack or give the system one plane"), nz);
      return NULL;
    }
  if (nz == 1 && beads->depth != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack has %u planes, the system one (z.count)"), beads->depth);
      return NULL;
    }
  h = (guint) MAX (1.0, floor (beads->height * dy / du + 1e-6));
  w = (guint) MAX (1.0, floor (beads->width * dx / du + 1e-6));
  g_ptr_array_add (warnings,
                   g_strdup_printf (_("the bead stack's voxels (%g × %g × %g µm) are not the system's (%g × %g × %g µm): "
                                      "resampled to %u × %u × %u"),
                                    dx, dy, dz, du, du, dz_sys, w, h, nz));
  {
    g_autoptr(AiryStack) src = airy_stack_copy (beads);
    AiryStack *out;

    src->dx = dx;
    src->dy = dy;
    src->dz = dz;
    out = _airy_stack_resample (src, h, w, du, du, nz, geom->z, NULL);
    if (out == NULL)
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("the bead stack resampled to %u × %u × %u does not fit in memory"), w, h, nz);
    return out;
  }
}


/* counts: photons = (ADU − offset)/gain; least squares fits the ADU */
static gboolean
fit_counts (AiryFitData *d, AirySystem *system, const AiryStack *beads, const AiryFitOptions *options, GError **error)
{
  AiryElement *sensor = airy_system_get_sensor (system);
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;

  d->poisson = options->objective == AIRY_FIT_OBJECTIVE_POISSON
               || (options->objective == AIRY_FIT_OBJECTIVE_AUTO && (beads->bits == 8 || beads->bits == 16));
  d->gain = options->gain > 0 ? options->gain : sensor ? airy_element_get_double (sensor, "gain") : 1.0;
  d->offset = !isnan (options->offset) ? options->offset : sensor ? airy_element_get_double (sensor, "offset") : 0.0;
  if (!(d->gain > 0) || !isfinite (d->gain) || !isfinite (d->offset))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("gain: must be a finite number > 0, got %g (offset %g)"), d->gain, d->offset);
      return FALSE;
    }
  if (!d->poisson)
    {
      d->gain = 1.0;
      d->offset = 0.0;
    }
  else
    {
      /* an offset at or above the brightest voxel leaves no counts: every
       * voxel would be background (the bead check below would then blame
       * the bead, not the offset) */
      float raw_max = -INFINITY;

      for (q = 0; q < n; q++)
        raw_max = MAX (raw_max, beads->data[q]);
      if (d->offset >= raw_max)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       !isnan (options->offset)
                         ? _("offset: must be below the bead stack's brightest voxel (%g ADU), got %g: no counts "
                             "are left above it")
                         : _("offset: the sensor's offset must be below the bead stack's brightest voxel (%g ADU), "
                             "got %g: no counts are left above it (give the camera's baseline as the offset)"),
                       (double) raw_max, d->offset);
          return FALSE;
        }
    }
  return TRUE;
}

/* the brightest pixel of proj in rows y0 … y1 − 1, columns x0 … x1 − 1,
 * if brighter than *vmax */
static void
brightest_pixel (const float *proj, guint width, guint y0, guint y1, guint x0, guint x1, float *vmax, guint *bx,
                 guint *by)
{
  guint i, j;

  for (i = y0; i < y1; i++)
    for (j = x0; j < x1; j++)
      if (proj[(gsize) i * width + j] > *vmax)
        {
          *vmax = proj[(gsize) i * width + j];
          *by = i;
          *bx = j;
        }
}

/* the window: the whole stack, or crop² around the brightest pixel of the
 * projection over z (or around the pixel asked for, the bead then the
 * brightest pixel in the window); its voxels in photons */
static gboolean
fit_window (AiryFitData *d, const AiryStack *grid, const AiryGeometry *geom, const AiryStack *beads,
            const AiryFitOptions *options, GPtrArray *warnings, GError **error)
{
  g_autofree float *proj = g_new0 (float, (gsize) grid->height * grid->width);
  float vmax = -INFINITY;
  guint i, j, k;
  gsize q;

  for (k = 0; k < grid->depth; k++)
    for (q = 0; q < (gsize) grid->height * grid->width; q++)
      proj[q] += grid->data[(gsize) k * grid->height * grid->width + q];
  if (options->crop_at)
    {
      if (options->crop_x >= beads->width || options->crop_y >= beads->height)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("crop: the centre pixel must be inside the stack (%u × %u pixels), got x %u, y %u"),
                       beads->width, beads->height, options->crop_x, options->crop_y);
          return FALSE;
        }
      /* the pixel on the (maybe resampled) grid */
      d->bx = MIN ((guint) floor ((options->crop_x + 0.5) * grid->width / beads->width), grid->width - 1);
      d->by = MIN ((guint) floor ((options->crop_y + 0.5) * grid->height / beads->height), grid->height - 1);
    }
  else
    brightest_pixel (proj, grid->width, 0, grid->height, 0, grid->width, &vmax, &d->bx, &d->by);
  if (options->crop > 0)
    {
      int x0, y0;

      if (options->crop > grid->width || options->crop > grid->height)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("crop: must be at most the stack's size (%u × %u pixels), got %u"),
                       grid->width, grid->height, options->crop);
          return FALSE;
        }
      d->ww = d->wh = options->crop;
      x0 = (int) d->bx - (int) (d->ww / 2);
      y0 = (int) d->by - (int) (d->wh / 2);
      d->cx = (guint) CLAMP (x0, 0, (int) (grid->width - d->ww));
      d->cy = (guint) CLAMP (y0, 0, (int) (grid->height - d->wh));
      if (options->crop_at && ((int) d->cx != x0 || (int) d->cy != y0))
        g_ptr_array_add (warnings,
                         g_strdup_printf (_("the %u × %u window around x %u, y %u does not fit in the stack "
                                            "(%u × %u pixels): moved to x %u … %u, y %u … %u"),
                                          d->ww, d->wh, d->bx, d->by, grid->width, grid->height, d->cx,
                                          d->cx + d->ww - 1, d->cy, d->cy + d->wh - 1));
    }
  else
    {
      d->ww = grid->width;
      d->wh = grid->height;
      d->cx = d->cy = 0;
    }
  /* the bead: the brightest pixel of the window */
  if (options->crop_at)
    brightest_pixel (proj, grid->width, d->cy, d->cy + d->wh, d->cx, d->cx + d->ww, &vmax, &d->bx, &d->by);
  if (d->wh > geom->psf_height || d->ww > geom->psf_width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack is %u × %u pixels, larger than the system's PSF plane (%u × %u): "
                     "crop it (--crop) or enlarge grid.shape"),
                   d->ww, d->wh, geom->psf_width, geom->psf_height);
      return FALSE;
    }
  d->win = (gsize) d->wh * d->ww;
  d->data = g_new (float, d->win * grid->depth);
  for (k = 0; k < grid->depth; k++)
    for (i = 0; i < d->wh; i++)
      for (j = 0; j < d->ww; j++)
        {
          float v = grid->data[((gsize) k * grid->height + d->cy + i) * grid->width + d->cx + j];
          d->data[(gsize) k * d->win + (gsize) i * d->ww + j] = (float) ((v - d->offset) / d->gain);
        }
  return TRUE;
}

/* background and noise from the window's border: the median and 1.4826 ×
 * the median absolute deviation (Poisson's √B at least); a bead must
 * stand 10 σ above it */
static gboolean
fit_background (AiryFitData *d, GError **error)
{
  g_autoptr(GArray) border = g_array_new (FALSE, FALSE, sizeof (float));
  float dmax = -INFINITY;
  guint i, j, k;
  gsize q;

  for (k = 0; k < d->depth; k++)
    for (i = 0; i < d->wh; i++)
      for (j = 0; j < d->ww; j++)
        if (i == 0 || j == 0 || i + 1 == d->wh || j + 1 == d->ww)
          g_array_append_val (border, d->data[(gsize) k * d->win + (gsize) i * d->ww + j]);
  g_array_sort (border, compare_floats);
  d->B0 = g_array_index (border, float, border->len / 2);
  for (q = 0; q < border->len; q++)
    g_array_index (border, float, q) = fabsf (g_array_index (border, float, q) - (float) d->B0);
  g_array_sort (border, compare_floats);
  d->sigma = 1.4826 * g_array_index (border, float, border->len / 2);
  if (d->poisson)
    d->sigma = MAX (d->sigma, sqrt (MAX (d->B0, 1.0)));
  for (q = 0; q < d->win * d->depth; q++)
    dmax = MAX (dmax, d->data[q]);
  if (!(dmax - d->B0 > 10.0 * d->sigma) || dmax <= 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the bead stack holds no bead: its brightest voxel (%g) is within 10 σ (σ = %g) of the "
                     "background (%g)"), dmax * d->gain + d->offset, d->sigma * d->gain, d->B0 * d->gain + d->offset);
      return FALSE;
    }
  return TRUE;
}

gboolean
_airy_fit_data_prepare (AiryFitData          *d,
                        AirySystem           *system,
                        const AiryStack      *beads,
                        const AiryFitOptions *options,
                        GPtrArray            *warnings,
                        GError              **error)
{
  g_autoptr(AiryGeometry) geom = NULL;
  g_autoptr(AiryStack) grid = NULL;
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;

  memset (d, 0, sizeof *d);
  /* the stack: finite, on the system's grid */
  for (q = 0; q < n; q++)
    if (!isfinite (beads->data[q]))
      {
        gsize plane = (gsize) beads->height * beads->width;
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the bead stack has a non-finite value (%g) at x %u, y %u, z %u; every voxel must be finite"),
                     (double) beads->data[q], (guint) (q % beads->width), (guint) (q % plane / beads->width),
                     (guint) (q / plane));
        return FALSE;
      }
  geom = _airy_geometry_new (system, FALSE, warnings, error);
  if (geom == NULL)
    return FALSE;
  grid = beads_on_grid (beads, geom, warnings, error);
  if (grid == NULL)
    return FALSE;
  d->grid_w = grid->width;
  d->grid_h = grid->height;
  d->depth = grid->depth;
  return fit_counts (d, system, beads, options, error)
         && fit_window (d, grid, geom, beads, options, warnings, error)
         && fit_background (d, error);
}

void
_airy_fit_data_clear (AiryFitData *d)
{
  g_clear_pointer (&d->data, g_free);
}
