#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <math.h>

#include "airy-stack-view-private.h"

/* Where the stack view shows what: the layout of XY and its sections
 * (Fiji's orthogonal views), the zoom and the pan (fitting the image or
 * the PSF, zooming about a point, a pan that keeps image in view), and
 * the geometry the viewer asks for (visible part, sections' rectangles,
 * another view's framing). */

static double
z_aspect (AiryStack *s, double d)
{
  return (s->dz > 0 && d > 0) ? s->dz / d : 1.0;
}

/* sections take at most this share of the canvas */
#define SECTION_SHARE 0.35

/* The largest zoom at which r image pixels, the gap and a section of
 * depth dz image pixels (squeezed to at most cap) fit into n widget
 * pixels: r·zoom + gap + min (dz·zoom, cap) = n. */
static double
fit_axis (double n, double r, double dz, double gap, double cap)
{
  double za;

  if (dz <= 0)
    return (n - gap) / r;
  za = (n - gap) / (r + dz);
  return dz * za <= cap ? za : (n - gap - cap) / r;
}

static AiryRect
intersect (AiryRect a, AiryRect b)
{
  double x0 = MAX (a.x, b.x), y0 = MAX (a.y, b.y);
  double x1 = MIN (a.x + a.w, b.x + b.w), y1 = MIN (a.y + a.h, b.y + b.h);

  return (AiryRect) { x0, y0, MAX (x1 - x0, 0.0), MAX (y1 - y0, 0.0) };
}

void
_airy_stack_view_compute_layout (AiryStackView  *self,
                                 AiryViewLayout *L)
{
  AiryStack *s = self->stack;
  double W = gtk_widget_get_width (GTK_WIDGET (self)), H = gtk_widget_get_height (GTK_WIDGET (self));
  double dzx, dzy, gap, cap_w, cap_h, zoom, ox, oy, t_yz, t_xz;

  memset (L, 0, sizeof *L);
  if (s == NULL)
    return;
  L->sections = self->sections && s->depth > 1;
  gap = L->sections ? AIRY_STACK_VIEW_GAP : 0.0;
  /* the sections' depth in image pixels at the true z spacing */
  dzx = L->sections ? s->depth * z_aspect (s, s->dx) : 0.0;
  dzy = L->sections ? s->depth * z_aspect (s, s->dy) : 0.0;
  cap_w = SECTION_SHARE * W;
  cap_h = SECTION_SHARE * H;
  if (self->fit)
    {
      double rx = 0, ry = 0, rw = s->width, rh = s->height;

      if (self->fit_region)
        {
          rx = self->rx;
          ry = self->ry;
          rw = self->rw;
          rh = self->rh;
        }
      zoom = MIN (fit_axis (W, rw, dzx, gap, cap_w), fit_axis (H, rh, dzy, gap, cap_h));
      zoom = MAX (zoom, 1e-3);
      t_yz = MIN (dzx * zoom, cap_w);
      t_xz = MIN (dzy * zoom, cap_h);
      /* the region and its sections in the middle of the canvas */
      ox = floor ((W - (rw * zoom + gap + t_yz)) / 2.0) - rx * zoom;
      oy = floor ((H - (rh * zoom + gap + t_xz)) / 2.0) - ry * zoom;
    }
  else
    {
      zoom = self->zoom;
      t_yz = MIN (dzx * zoom, cap_w);
      t_xz = MIN (dzy * zoom, cap_h);
      if (self->center && W > 0 && H > 0)
        {
          /* the image and its sections centred; a larger image centred
           * in its viewport */
          self->ox = floor ((W - (s->width * zoom + gap + t_yz)) / 2.0);
          self->oy = floor ((H - (s->height * zoom + gap + t_xz)) / 2.0);
          self->center = FALSE;
        }
      ox = self->ox;
      oy = self->oy;
    }
  L->zoom = zoom;
  L->xy = (AiryRect) { ox, oy, s->width * zoom, s->height * zoom };
  L->viewport = (AiryRect) { 0, 0, MAX (W - gap - t_yz, 0.0), MAX (H - gap - t_xz, 0.0) };
  L->vxy = intersect (L->xy, L->viewport);
  /* XZ under XY (z downwards), YZ right of XY (z to the right) */
  L->xz = (AiryRect) { L->vxy.x, L->vxy.y + L->vxy.h + gap, L->vxy.w, L->sections ? t_xz : 0.0 };
  L->yz = (AiryRect) { L->vxy.x + L->vxy.w + gap, L->vxy.y, L->sections ? t_yz : 0.0, L->vxy.h };
}

/* The zoom the next frame shows, without settling a pending centring. */
double
_airy_stack_view_effective_zoom (AiryStackView *self)
{
  AiryViewLayout L;

  if (!self->fit)
    return self->stack ? self->zoom : 0.0;
  _airy_stack_view_compute_layout (self, &L);
  return L.zoom;
}

/* After anything that can change the effective zoom (a zoom, a fit, a new
 * stack, the sections, the widget's size): :zoom is notified when it did. */
void
_airy_stack_view_update_zoom (AiryStackView *self)
{
  double zoom = _airy_stack_view_effective_zoom (self);

  _airy_stack_view_emit_moved (self);
  if (zoom == self->shown_zoom)
    return;
  self->shown_zoom = zoom;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_ZOOM);
}

void
_airy_stack_view_set_fit (AiryStackView *self,
         gboolean       fit)
{
  if (fit == self->fit)
    return;
  self->fit = fit;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_FIT);
}

void
_airy_stack_view_freeze_layout (AiryStackView *self)
{
  AiryViewLayout L;

  if (!self->fit)
    {
      _airy_stack_view_compute_layout (self, &L);   /* settles a pending centring */
      return;
    }
  _airy_stack_view_compute_layout (self, &L);
  self->zoom = L.zoom;
  self->ox = L.xy.x;
  self->oy = L.xy.y;
  _airy_stack_view_set_fit (self, FALSE);
}

/* A pan or a zoom never leaves the viewport without image: at least 32
 * widget pixels of it (or all of it, when smaller) stay in view. */
void
_airy_stack_view_clamp_pan (AiryStackView *self)
{
  AiryViewLayout L;
  double kx, ky;

  if (self->fit || self->stack == NULL)
    return;
  _airy_stack_view_compute_layout (self, &L);
  if (L.viewport.w <= 0 || L.viewport.h <= 0)
    return;
  kx = MIN (32.0, MIN (L.xy.w, L.viewport.w));
  ky = MIN (32.0, MIN (L.xy.h, L.viewport.h));
  self->ox = CLAMP (self->ox, kx - L.xy.w, L.viewport.w - kx);
  self->oy = CLAMP (self->oy, ky - L.xy.h, L.viewport.h - ky);
  _airy_stack_view_emit_moved (self);
}

void
_airy_stack_view_zoom_at (AiryStackView *self, double factor, double px, double py)
{
  double z1;

  _airy_stack_view_freeze_layout (self);
  z1 = CLAMP (self->zoom * factor, 1.0 / 64, 256.0);
  self->ox = px - (px - self->ox) * z1 / self->zoom;
  self->oy = py - (py - self->oy) * z1 / self->zoom;
  self->zoom = z1;
  _airy_stack_view_clamp_pan (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  _airy_stack_view_update_zoom (self);
}

/* The middle of what XY shows: the view keys zoom about it, so that the
 * image never leaves the view (the widget's middle may lie beside it). */
void
_airy_stack_view_visible_centre (AiryStackView *self, double *x, double *y)
{
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  *x = L.vxy.x + L.vxy.w / 2.0;
  *y = L.vxy.y + L.vxy.h / 2.0;
}

/* Before the view has a size the image is centred at the next layout;
 * after, the zoom keeps the middle of what XY shows, and an image that
 * fits is centred. */
void
airy_stack_view_set_zoom (AiryStackView *self,
                          double         zoom)
{
  AiryViewLayout L;

  if (self->stack == NULL)
    return;
  if (gtk_widget_get_width (GTK_WIDGET (self)) <= 0 || self->center)
    {
      self->zoom = zoom;
      self->center = TRUE;      /* at the next layout, when the size is known */
      _airy_stack_view_set_fit (self, FALSE);
    }
  else
    {
      double cx, cy;

      _airy_stack_view_visible_centre (self, &cx, &cy);
      _airy_stack_view_zoom_at (self, zoom / (self->fit ? _airy_stack_view_effective_zoom (self) : self->zoom), cx, cy);
      self->zoom = zoom;        /* exactly, not through the factor */
      _airy_stack_view_compute_layout (self, &L);
      if (L.xy.w + L.yz.w + (L.sections ? AIRY_STACK_VIEW_GAP : 0) <= gtk_widget_get_width (GTK_WIDGET (self))
          && L.xy.h + L.xz.h + (L.sections ? AIRY_STACK_VIEW_GAP : 0) <= gtk_widget_get_height (GTK_WIDGET (self)))
        self->center = TRUE;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  _airy_stack_view_update_zoom (self);
}

double
airy_stack_view_get_zoom (AiryStackView *self)
{
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  return L.zoom;
}

void
airy_stack_view_fit (AiryStackView *self)
{
  self->fit_region = FALSE;
  _airy_stack_view_set_fit (self, TRUE);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  _airy_stack_view_update_zoom (self);
}

/* Fitting, or not: then the zoom and the position stay as shown. */
void
airy_stack_view_set_fit (AiryStackView *self,
                         gboolean       fit)
{
  if (fit)
    airy_stack_view_fit (self);
  else
    _airy_stack_view_freeze_layout (self);
}

gboolean
airy_stack_view_get_fit (AiryStackView *self)
{
  return self->fit;
}

void
airy_stack_view_fit_region (AiryStackView *self,
                            double         x,
                            double         y,
                            double         width,
                            double         height)
{
  if (self->stack == NULL || width <= 0 || height <= 0)
    return;
  self->fit_region = TRUE;
  self->rx = x;
  self->ry = y;
  self->rw = width;
  self->rh = height;
  /* a fit already on notifies nothing, but its frame changed */
  if (self->fit)
    {
      gtk_widget_queue_draw (GTK_WIDGET (self));
      _airy_stack_view_update_zoom (self);
    }
  else
    airy_stack_view_set_fit (self, TRUE);
  self->fit_region = TRUE;
}

gboolean
airy_stack_view_get_psf_region (AiryStackView *self,
                                double        *x,
                                double        *y,
                                double        *width,
                                double        *height)
{
  AiryStack *s = self->stack;
  g_autofree float *mip = NULL;
  g_autoptr(GError) error = NULL;
  AirySlice slice = { s && s->depth > 1 ? AIRY_SLICE_MIP : AIRY_SLICE_XY, 0 };
  float peak = -G_MAXFLOAT, level;
  guint x0, y0, x1 = 0, y1 = 0, i, j;
  double mx, my;

  if (s == NULL)
    return FALSE;
  mip = g_new (float, airy_stack_plane_size (s));
  if (!airy_resident_read_slice (self->resident, &slice, mip, &error))
    {
      g_warning ("%s", error->message);
      return FALSE;
    }
  for (i = 0; i < airy_stack_plane_size (s); i++)
    if (mip[i] > peak)
      peak = mip[i];
  if (!(peak > 0))
    return FALSE;
  level = 1e-3f * peak;
  x0 = s->width;
  y0 = s->height;
  for (j = 0; j < s->height; j++)
    for (i = 0; i < s->width; i++)
      if (mip[(gsize) j * s->width + i] > level)
        {
          x0 = MIN (x0, i);
          x1 = MAX (x1, i);
          y0 = MIN (y0, j);
          y1 = MAX (y1, j);
        }
  /* a quarter of its size around it, at least 4 pixels, square pixels
   * kept square: the larger side for both */
  mx = MAX (4.0, 0.25 * MAX (x1 - x0 + 1, y1 - y0 + 1));
  my = mx;
  *x = MAX (0.0, x0 - mx);
  *y = MAX (0.0, y0 - my);
  *width = MIN ((double) s->width, x1 + 1 + mx) - *x;
  *height = MIN ((double) s->height, y1 + 1 + my) - *y;
  return TRUE;
}

/* Frames where the stack exceeds 1e-3 of its peak (in the projection
 * along z), with a margin; the whole image when nothing stands out. */
void
airy_stack_view_fit_psf (AiryStackView *self)
{
  double x, y, w, h;

  if (self->stack == NULL)
    return;
  if (airy_stack_view_get_psf_region (self, &x, &y, &w, &h))
    airy_stack_view_fit_region (self, x, y, w, h);
  else
    airy_stack_view_fit (self);
}

gboolean
airy_stack_view_get_fit_psf (AiryStackView *self)
{
  return self->fit && self->fit_region;
}

void
airy_stack_view_get_visible (AiryStackView *self,
                             double        *x,
                             double        *y,
                             double        *width,
                             double        *height)
{
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  *x = *y = *width = *height = 0.0;
  if (self->stack == NULL || L.zoom <= 0)
    return;
  *x = (L.vxy.x - L.xy.x) / L.zoom;
  *y = (L.vxy.y - L.xy.y) / L.zoom;
  *width = L.vxy.w / L.zoom;
  *height = L.vxy.h / L.zoom;
}

void
airy_stack_view_get_section_rects (AiryStackView   *self,
                                   graphene_rect_t *xy,
                                   graphene_rect_t *xz,
                                   graphene_rect_t *yz)
{
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  graphene_rect_init (xy, L.vxy.x, L.vxy.y, L.vxy.w, L.vxy.h);
  graphene_rect_init (xz, L.xz.x, L.xz.y, L.xz.w, L.xz.h);
  graphene_rect_init (yz, L.yz.x, L.yz.y, L.yz.w, L.yz.h);
}

/* Another view shows what this one shows: the same part of the specimen at
 * the same scale (the side-by-side comparison). Stacks of other voxel
 * sizes are matched in µm about their optical axes (pixel ⌊N/2⌋). */
void
airy_stack_view_copy_view (AiryStackView *self,
                           AiryStackView *source)
{
  AiryViewLayout L;
  double r;

  if (self->stack == NULL || source->stack == NULL)
    return;
  _airy_stack_view_compute_layout (source, &L);
  if (L.zoom <= 0)
    return;
  r = self->stack->dx > 0 && source->stack->dx > 0 ? source->stack->dx / self->stack->dx : 1.0;
  _airy_stack_view_set_fit (self, FALSE);
  self->fit_region = FALSE;
  self->center = FALSE;
  self->zoom = L.zoom / r;
  self->ox = L.xy.x + (source->stack->width / 2 + 0.5) * L.zoom - (self->stack->width / 2 + 0.5) * self->zoom;
  self->oy = L.xy.y + (source->stack->height / 2 + 0.5) * L.zoom - (self->stack->height / 2 + 0.5) * self->zoom;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  _airy_stack_view_update_zoom (self);
}
