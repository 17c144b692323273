#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-stack-view-private.h"

/* The stack viewer's canvas: XY, and beside it the XZ and YZ sections with
 * the true z spacing, drawn through the colormap in a shader. The view
 * shows a result kept by its backend (AiryResident) and fills its textures
 * through the resident's slot: a CPU result (or a stack from a file) is
 * uploaded from host memory (glTexSubImage2D), a CUDA result is copied on
 * the GPU when the GL context runs on one (CUDA–GL interop), and only the
 * visible slices move: the z slider copies one plane, the cursor one
 * section. Overlays (cursor, scale bar, profile line) are drawn with
 * GtkSnapshot on top of the GL frame.
 *
 * This file: the object and its properties, layout, zoom and input; the GL
 * side is airy-stack-view-gl.c, the overlays airy-stack-view-overlays.c. */

G_DEFINE_FINAL_TYPE (AiryStackView, airy_stack_view, GTK_TYPE_GL_AREA)

G_DEFINE_ENUM_TYPE (AiryViewTool, airy_view_tool,
                    G_DEFINE_ENUM_VALUE (AIRY_TOOL_CURSOR, "cursor"),
                    G_DEFINE_ENUM_VALUE (AIRY_TOOL_LINE, "line"),
                    G_DEFINE_ENUM_VALUE (AIRY_TOOL_RECT, "rectangle"))

G_DEFINE_ENUM_TYPE (AiryDisplayScale, airy_display_scale,
                    G_DEFINE_ENUM_VALUE (AIRY_SCALE_LINEAR, "linear"),
                    G_DEFINE_ENUM_VALUE (AIRY_SCALE_LOG, "log"),
                    G_DEFINE_ENUM_VALUE (AIRY_SCALE_SQRT, "sqrt"))

enum { SIGNAL_CHANGED, SIGNAL_HOVER, SIGNAL_READBACK, SIGNAL_MOVED, N_SIGNALS };
static guint signals[N_SIGNALS];

static GParamSpec *properties[AIRY_STACK_VIEW_N_PROPS];

void
_airy_stack_view_notify (AiryStackView *self,
                         guint          prop_id)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop_id]);
}

void
_airy_stack_view_emit_readback (AiryStackView *self)
{
  g_signal_emit (self, signals[SIGNAL_READBACK], 0);
}

/* ---- layout ---- */

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
static double
effective_zoom (AiryStackView *self)
{
  AiryViewLayout L;

  if (!self->fit)
    return self->stack ? self->zoom : 0.0;
  _airy_stack_view_compute_layout (self, &L);
  return L.zoom;
}

/* After anything that can change the effective zoom (a zoom, a fit, a new
 * stack, the sections, the widget's size): :zoom is notified when it did. */
static void
update_zoom (AiryStackView *self)
{
  double zoom = effective_zoom (self);

  g_signal_emit (self, signals[SIGNAL_MOVED], 0);
  if (zoom == self->shown_zoom)
    return;
  self->shown_zoom = zoom;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_ZOOM);
}

static void
set_fit (AiryStackView *self,
         gboolean       fit)
{
  if (fit == self->fit)
    return;
  self->fit = fit;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_FIT);
}

/* ---- the shown plane, through the resident's slots ---- */

AirySlice
_airy_stack_view_xy_slice (AiryStackView *self)
{
  return self->show_mip && self->stack->depth > 1 ? (AirySlice) { AIRY_SLICE_MIP, 0 }
                                                   : (AirySlice) { AIRY_SLICE_XY, self->z };
}

/* The shown plane in host memory, for what reads a whole plane (a drawn
 * line's profile, exports): fetched once per plane, never on the z slider's
 * way. */
const float *
airy_stack_view_get_xy_plane (AiryStackView *self)
{
  AirySlice slice;
  g_autoptr(GError) error = NULL;

  if (self->stack == NULL)
    return NULL;
  slice = _airy_stack_view_xy_slice (self);
  if (slice.kind == AIRY_SLICE_XY && self->stack->data != NULL)
    return airy_stack_plane (self->stack, self->z);
  if (!self->xy_host_valid)
    {
      if (self->xy_host == NULL)
        self->xy_host = g_new0 (float, airy_stack_plane_size (self->stack));
      if (!airy_resident_read_slice (self->resident, &slice, self->xy_host, &error))
        g_warning ("%s", error->message);
      self->xy_host_valid = TRUE;
    }
  return self->xy_host;
}

gboolean
airy_stack_view_read_row (AiryStackView *self,
                          guint          y,
                          float         *out,
                          GError       **error)
{
  AirySlice slice = _airy_stack_view_xy_slice (self);

  if (slice.kind == AIRY_SLICE_MIP || self->xy_host_valid)
    {
      memcpy (out, airy_stack_view_get_xy_plane (self) + (gsize) y * self->stack->width,
              self->stack->width * sizeof (float));
      return TRUE;
    }
  return airy_resident_read_box (self->resident, &(AiryBox) { self->z, y, 0, 1, 1, self->stack->width }, out, error);
}

gboolean
airy_stack_view_read_value (AiryStackView *self,
                            guint          x,
                            guint          y,
                            float         *value,
                            GError       **error)
{
  AirySlice slice = _airy_stack_view_xy_slice (self);

  if (slice.kind == AIRY_SLICE_MIP || self->xy_host_valid)
    {
      *value = airy_stack_view_get_xy_plane (self)[(gsize) y * self->stack->width + x];
      return TRUE;
    }
  return airy_resident_read_box (self->resident, &(AiryBox) { self->z, y, x, 1, 1, 1 }, value, error);
}

gboolean
airy_stack_view_xy_stats (AiryStackView  *self,
                          AirySliceStats *stats,
                          GError        **error)
{
  AirySlice slice = _airy_stack_view_xy_slice (self);

  return airy_resident_stats (self->resident, &slice, stats, error);
}

/* ---- input ---- */

static gboolean
inside (const AiryRect *r, double x, double y)
{
  return x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

gboolean
airy_stack_view_widget_to_image (AiryStackView *self,
                                 double         wx,
                                 double         wy,
                                 double        *ix,
                                 double        *iy)
{
  AiryViewLayout L;

  if (self->stack == NULL)
    return FALSE;
  _airy_stack_view_compute_layout (self, &L);
  *ix = (wx - L.xy.x) / L.zoom - 0.5;
  *iy = (wy - L.xy.y) / L.zoom - 0.5;
  return inside (&L.vxy, wx, wy);
}

static void
set_cursor_from_point (AiryStackView *self, double wx, double wy)
{
  AiryStack *s = self->stack;
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  /* the sections share XY's x and y mapping */
  if (inside (&L.vxy, wx, wy))
    airy_stack_view_set_cursor (self, (guint) ((wx - L.xy.x) / L.zoom), (guint) ((wy - L.xy.y) / L.zoom));
  else if (L.sections && inside (&L.xz, wx, wy))
    {
      airy_stack_view_set_z (self, (guint) ((wy - L.xz.y) / L.xz.h * s->depth));
      airy_stack_view_set_cursor (self, (guint) ((wx - L.xy.x) / L.zoom), self->cy);
    }
  else if (L.sections && inside (&L.yz, wx, wy))
    {
      airy_stack_view_set_z (self, (guint) ((wx - L.yz.x) / L.yz.w * s->depth));
      airy_stack_view_set_cursor (self, self->cx, (guint) ((wy - L.xy.y) / L.zoom));
    }
}

static void
freeze_layout (AiryStackView *self)
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
  set_fit (self, FALSE);
}

/* A pan or a zoom never leaves the viewport without image: at least 32
 * widget pixels of it (or all of it, when smaller) stay in view. */
static void
clamp_pan (AiryStackView *self)
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
  g_signal_emit (self, signals[SIGNAL_MOVED], 0);
}

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, AiryStackView *self)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (gesture));
  double ix, iy;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  self->drag_x = x;
  self->drag_y = y;
  self->dragging_line = button == GDK_BUTTON_PRIMARY && self->tool != AIRY_TOOL_CURSOR
                        && airy_stack_view_widget_to_image (self, x, y, &ix, &iy);
  self->dragging_roi = self->dragging_line && self->tool == AIRY_TOOL_RECT;
  if (self->dragging_roi)
    {
      self->qx0 = self->qx1 = CLAMP (floor (ix + 0.5), 0, self->stack->width - 1);
      self->qy0 = self->qy1 = CLAMP (floor (iy + 0.5), 0, self->stack->height - 1);
      self->roi_valid = FALSE;
    }
  else if (self->dragging_line)
    {
      self->lx0 = self->lx1 = ix;
      self->ly0 = self->ly1 = iy;
      self->line_valid = FALSE;
    }
  else
    {
      self->drag_was_fit = self->fit;
      freeze_layout (self);
      self->drag_ox = self->ox;
      self->drag_oy = self->oy;
    }
}

static void
drag_update (GtkGestureDrag *gesture, double dx, double dy, AiryStackView *self)
{
  if (self->dragging_roi)
    {
      double ix, iy;

      airy_stack_view_widget_to_image (self, self->drag_x + dx, self->drag_y + dy, &ix, &iy);
      self->qx1 = CLAMP (floor (ix + 0.5), 0, self->stack->width - 1);
      self->qy1 = CLAMP (floor (iy + 0.5), 0, self->stack->height - 1);
      self->roi_valid = self->qx1 != self->qx0 || self->qy1 != self->qy0;
      if (self->roi_valid)
        g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  else if (self->dragging_line)
    {
      double ix, iy;

      airy_stack_view_widget_to_image (self, self->drag_x + dx, self->drag_y + dy, &ix, &iy);
      self->lx1 = CLAMP (ix, 0, self->stack->width - 1);
      self->ly1 = CLAMP (iy, 0, self->stack->height - 1);
      self->line_valid = hypot (self->lx1 - self->lx0, self->ly1 - self->ly0) >= 1.0;
      if (self->line_valid)
        g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  else if (hypot (dx, dy) > 3)
    {
      self->ox = self->drag_ox + dx;
      self->oy = self->drag_oy + dy;
      clamp_pan (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
drag_end (GtkGestureDrag *gesture, double dx, double dy, AiryStackView *self)
{
  /* a press without movement is a click: it sets the cursor */
  if (hypot (dx, dy) <= 3 && self->stack)
    {
      if (!self->dragging_line)
        {
          self->ox = self->drag_ox;
          self->oy = self->drag_oy;
          set_fit (self, self->drag_was_fit);
        }
      set_cursor_from_point (self, self->drag_x, self->drag_y);
    }
  self->dragging_line = self->dragging_roi = FALSE;
}

static void
zoom_at (AiryStackView *self, double factor, double px, double py)
{
  double z1;

  freeze_layout (self);
  z1 = CLAMP (self->zoom * factor, 1.0 / 64, 256.0);
  self->ox = px - (px - self->ox) * z1 / self->zoom;
  self->oy = py - (py - self->oy) * z1 / self->zoom;
  self->zoom = z1;
  clamp_pan (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  update_zoom (self);
}

/* The middle of what XY shows: the view keys zoom about it, so that the
 * image never leaves the view (the widget's middle may lie beside it). */
static void
visible_centre (AiryStackView *self, double *x, double *y)
{
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  *x = L.vxy.x + L.vxy.w / 2.0;
  *y = L.vxy.y + L.vxy.h / 2.0;
}

/* A notch zooms by 1.25 about the point under the pointer, which the
 * motion controller follows (a scroll event's own position is in surface
 * coordinates, and smooth scrolling may carry none). */
static gboolean
on_scroll (GtkEventControllerScroll *scroll, double dx, double dy, AiryStackView *self)
{
  double x, y;

  if (self->stack == NULL || dy == 0)
    return FALSE;
  if (self->pointer_in)
    {
      x = self->pointer_x;
      y = self->pointer_y;
    }
  else
    visible_centre (self, &x, &y);
  zoom_at (self, pow (1.25, -CLAMP (dy, -4.0, 4.0)), x, y);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, AiryStackView *self)
{
  double ix, iy;

  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_in = TRUE;
  if (airy_stack_view_widget_to_image (self, x, y, &ix, &iy))
    g_signal_emit (self, signals[SIGNAL_HOVER], 0, floor (ix + 0.5), floor (iy + 0.5));
}

/* The canvas takes the keyboard when the pointer comes over it: the view
 * keys then zoom and pan it instead of typing into a field elsewhere. */
static void
on_enter (GtkEventControllerMotion *motion, double x, double y, AiryStackView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_in = TRUE;
  if (gtk_widget_get_focusable (GTK_WIDGET (self)))
    gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
on_leave (GtkEventControllerMotion *motion, AiryStackView *self)
{
  self->pointer_in = FALSE;
}

static gboolean
on_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state, AiryStackView *self)
{
  double cx, cy;

  if (self->stack == NULL)
    return FALSE;
  visible_centre (self, &cx, &cy);
  switch (keyval)
    {
    case GDK_KEY_plus: case GDK_KEY_equal: case GDK_KEY_KP_Add:
      zoom_at (self, 1.25, cx, cy);
      return TRUE;
    case GDK_KEY_minus: case GDK_KEY_KP_Subtract:
      zoom_at (self, 0.8, cx, cy);
      return TRUE;
    case GDK_KEY_0: case GDK_KEY_f:
      airy_stack_view_fit (self);
      return TRUE;
    case GDK_KEY_p:
      airy_stack_view_fit_psf (self);
      return TRUE;
    case GDK_KEY_1:
      airy_stack_view_set_zoom (self, 1.0);
      return TRUE;
    case GDK_KEY_Left: case GDK_KEY_Right: case GDK_KEY_Up: case GDK_KEY_Down:
      freeze_layout (self);
      self->ox += keyval == GDK_KEY_Left ? 40 : keyval == GDK_KEY_Right ? -40 : 0;
      self->oy += keyval == GDK_KEY_Up ? 40 : keyval == GDK_KEY_Down ? -40 : 0;
      clamp_pan (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return TRUE;
    case GDK_KEY_Page_Up:
      airy_stack_view_set_z (self, self->z > 0 ? self->z - 1 : 0);
      return TRUE;
    case GDK_KEY_Page_Down:
      airy_stack_view_set_z (self, self->z + 1);
      return TRUE;
    default:
      return FALSE;
    }
}
/* ---- object ---- */

static void
airy_stack_view_realize (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->realize (widget);
  _airy_stack_view_gl_realize (AIRY_STACK_VIEW (widget));
}

static void
airy_stack_view_unrealize (GtkWidget *widget)
{
  _airy_stack_view_gl_unrealize (AIRY_STACK_VIEW (widget));
  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->unrealize (widget);
}

static void
airy_stack_view_snapshot (GtkWidget   *widget,
                          GtkSnapshot *snapshot)
{
  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->snapshot (widget, snapshot);
  _airy_stack_view_draw_overlays (AIRY_STACK_VIEW (widget), snapshot);
}

static void
airy_stack_view_size_allocate (GtkWidget *widget,
                               int        width,
                               int        height,
                               int        baseline)
{
  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->size_allocate (widget, width, height, baseline);
  /* a fitted view zooms with its size */
  update_zoom (AIRY_STACK_VIEW (widget));
}

static void
airy_stack_view_finalize (GObject *object)
{
  AiryStackView *self = AIRY_STACK_VIEW (object);

  g_clear_handle_id (&self->slice_path_idle, g_source_remove);
  for (guint c = 0; c < self->n_composite; c++)
    airy_resident_unref (self->composite[c]);
  airy_resident_unref (self->resident);
  g_free (self->xy_host);
  g_free (self->readback);
  g_free (self->gl_error);
  g_free (self->renderer);
  g_free (self->slice_path);
  G_OBJECT_CLASS (airy_stack_view_parent_class)->finalize (object);
}

static void
airy_stack_view_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  AiryStackView *self = AIRY_STACK_VIEW (object);

  switch (prop_id)
    {
    case AIRY_STACK_VIEW_PROP_Z: g_value_set_uint (value, self->z); break;
    case AIRY_STACK_VIEW_PROP_ZOOM: g_value_set_double (value, effective_zoom (self)); break;
    case AIRY_STACK_VIEW_PROP_FIT: g_value_set_boolean (value, self->fit); break;
    case AIRY_STACK_VIEW_PROP_MIP: g_value_set_boolean (value, self->show_mip); break;
    case AIRY_STACK_VIEW_PROP_SECTIONS: g_value_set_boolean (value, self->sections); break;
    case AIRY_STACK_VIEW_PROP_LINEAR: g_value_set_boolean (value, self->linear); break;
    case AIRY_STACK_VIEW_PROP_TOOL: g_value_set_enum (value, self->tool); break;
    case AIRY_STACK_VIEW_PROP_COLORMAP: g_value_set_uint (value, self->display.colormap); break;
    case AIRY_STACK_VIEW_PROP_INVERTED: g_value_set_boolean (value, self->display.inverted); break;
    case AIRY_STACK_VIEW_PROP_SCALE: g_value_set_enum (value, self->display.scale); break;
    case AIRY_STACK_VIEW_PROP_GAMMA: g_value_set_double (value, self->display.gamma); break;
    case AIRY_STACK_VIEW_PROP_LIMIT_LOW: g_value_set_double (value, self->display.lo); break;
    case AIRY_STACK_VIEW_PROP_LIMIT_HIGH: g_value_set_double (value, self->display.hi); break;
    case AIRY_STACK_VIEW_PROP_SLICE_PATH: g_value_set_string (value, self->slice_path); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
airy_stack_view_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  AiryStackView *self = AIRY_STACK_VIEW (object);
  AiryDisplay d = self->display;

  switch (prop_id)
    {
    case AIRY_STACK_VIEW_PROP_Z: airy_stack_view_set_z (self, g_value_get_uint (value)); return;
    case AIRY_STACK_VIEW_PROP_ZOOM: airy_stack_view_set_zoom (self, MAX (g_value_get_double (value), 1.0 / 64)); return;
    case AIRY_STACK_VIEW_PROP_FIT: airy_stack_view_set_fit (self, g_value_get_boolean (value)); return;
    case AIRY_STACK_VIEW_PROP_MIP: airy_stack_view_set_mip (self, g_value_get_boolean (value)); return;
    case AIRY_STACK_VIEW_PROP_SECTIONS: airy_stack_view_set_sections (self, g_value_get_boolean (value)); return;
    case AIRY_STACK_VIEW_PROP_LINEAR: airy_stack_view_set_linear (self, g_value_get_boolean (value)); return;
    case AIRY_STACK_VIEW_PROP_TOOL: airy_stack_view_set_tool (self, g_value_get_enum (value)); return;
    case AIRY_STACK_VIEW_PROP_COLORMAP: d.colormap = g_value_get_uint (value); break;
    case AIRY_STACK_VIEW_PROP_INVERTED: d.inverted = g_value_get_boolean (value); break;
    case AIRY_STACK_VIEW_PROP_SCALE: d.scale = g_value_get_enum (value); break;
    case AIRY_STACK_VIEW_PROP_GAMMA: d.gamma = (float) g_value_get_double (value); break;
    case AIRY_STACK_VIEW_PROP_LIMIT_LOW: d.lo = (float) g_value_get_double (value); break;
    case AIRY_STACK_VIEW_PROP_LIMIT_HIGH: d.hi = (float) g_value_get_double (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); return;
    }
  airy_stack_view_set_display (self, &d);
}

static void
airy_stack_view_class_init (AiryStackViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkGLAreaClass *area_class = GTK_GL_AREA_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;

  object_class->finalize = airy_stack_view_finalize;
  object_class->get_property = airy_stack_view_get_property;
  object_class->set_property = airy_stack_view_set_property;
  widget_class->realize = airy_stack_view_realize;
  widget_class->unrealize = airy_stack_view_unrealize;
  widget_class->snapshot = airy_stack_view_snapshot;
  widget_class->size_allocate = airy_stack_view_size_allocate;
  area_class->render = _airy_stack_view_render;

  /* the plane shown in XY (clamped to the stack's depth) */
  properties[AIRY_STACK_VIEW_PROP_Z] = g_param_spec_uint ("z", NULL, NULL, 0, G_MAXUINT, 0, rw);
  /* screen pixels per image pixel as shown (0 without a stack); setting it
   * stops fitting */
  properties[AIRY_STACK_VIEW_PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, 0.0, 256.0, 1.0, rw);
  /* the zoom follows the widget's size */
  properties[AIRY_STACK_VIEW_PROP_FIT] = g_param_spec_boolean ("fit", NULL, NULL, TRUE, rw);
  properties[AIRY_STACK_VIEW_PROP_MIP] = g_param_spec_boolean ("mip", NULL, NULL, FALSE, rw);
  properties[AIRY_STACK_VIEW_PROP_SECTIONS] = g_param_spec_boolean ("sections", NULL, NULL, TRUE, rw);
  /* linear interpolation of the textures (not in GLES: R32F is not filterable) */
  properties[AIRY_STACK_VIEW_PROP_LINEAR] = g_param_spec_boolean ("linear", NULL, NULL, FALSE, rw);
  properties[AIRY_STACK_VIEW_PROP_TOOL] = g_param_spec_enum ("tool", NULL, NULL, AIRY_TYPE_VIEW_TOOL,
                                                             AIRY_TOOL_CURSOR, rw);
  /* an AiryColormap */
  properties[AIRY_STACK_VIEW_PROP_COLORMAP] = g_param_spec_uint ("colormap", NULL, NULL, 0, AIRY_N_COLORMAPS - 1,
                                                                 AIRY_COLORMAP_INFERNO, rw);
  properties[AIRY_STACK_VIEW_PROP_INVERTED] = g_param_spec_boolean ("inverted", NULL, NULL, FALSE, rw);
  properties[AIRY_STACK_VIEW_PROP_SCALE] = g_param_spec_enum ("scale", NULL, NULL, AIRY_TYPE_DISPLAY_SCALE,
                                                              AIRY_SCALE_LINEAR, rw);
  properties[AIRY_STACK_VIEW_PROP_GAMMA] = g_param_spec_double ("gamma", NULL, NULL, 0.01, 100.0, 1.0, rw);
  /* the contrast limits, in data units */
  properties[AIRY_STACK_VIEW_PROP_LIMIT_LOW] = g_param_spec_double ("limit-low", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT,
                                                                    0.0, rw);
  properties[AIRY_STACK_VIEW_PROP_LIMIT_HIGH] = g_param_spec_double ("limit-high", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT,
                                                                     1.0, rw);
  /* how the last slice reached GL; notified after the frame */
  properties[AIRY_STACK_VIEW_PROP_SLICE_PATH] = g_param_spec_string ("slice-path", NULL, NULL, NULL,
                                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS
                                                                     | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, AIRY_STACK_VIEW_N_PROPS, properties);

  /* the stack, the cursor, the z plane, the projection or the profile line
   * changed */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* the pointer is over image pixel (x, y) */
  signals[SIGNAL_HOVER] = g_signal_new ("hover", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  /* what XY shows moved (a zoom, a pan, a fit) */
  signals[SIGNAL_MOVED] = g_signal_new ("moved", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_READBACK] = g_signal_new ("readback", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
airy_stack_view_init (AiryStackView *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkEventController *key = gtk_event_controller_key_new ();

  airy_display_init (&self->display);
  self->fit = TRUE;
  self->zoom = 1.0;
  self->sections = TRUE;
  gtk_gl_area_set_required_version (GTK_GL_AREA (self), 3, 3);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);

  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), 0);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "enter", G_CALLBACK (on_enter), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  g_signal_connect (key, "key-pressed", G_CALLBACK (on_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);
}

GtkWidget *
airy_stack_view_new (void)
{
  return g_object_new (AIRY_TYPE_STACK_VIEW, NULL);
}

static void
invalidate (AiryStackView *self, gboolean xy, gboolean xz, gboolean yz)
{
  self->dirty[0] |= xy;
  self->dirty[1] |= xz;
  self->dirty[2] |= yz;
  self->comp_dirty |= self->n_composite > 0 && (xy || xz || yz);
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
airy_stack_view_set_stack (AiryStackView *self,
                           AiryStack     *stack)
{
  g_return_if_fail (AIRY_IS_STACK_VIEW (self));

  /* a stack in host memory is the CPU backend's resident: one path */
  airy_stack_view_set_resident (self, stack ? airy_resident_new_host (stack) : NULL);
}

void
airy_stack_view_set_resident (AiryStackView *self,
                              AiryResident  *resident)
{
  AiryStack *stack = resident ? resident->stack : NULL;
  AiryResident *old = self->resident;
  gsize old_n = self->stack ? airy_stack_plane_size (self->stack) : 0;
  guint old_w = self->stack ? self->stack->width : 0, old_h = self->stack ? self->stack->height : 0;
  guint z = self->z;

  g_return_if_fail (AIRY_IS_STACK_VIEW (self));

  self->resident = resident;
  self->stack = stack;
  airy_resident_unref (old);
  if (self->n_composite > 0)
    airy_stack_view_set_composite (self, 0, NULL, NULL, NULL, NULL);
  if (stack == NULL || airy_stack_plane_size (stack) != old_n)
    g_clear_pointer (&self->xy_host, g_free);
  self->xy_host_valid = FALSE;
  self->line_valid = FALSE;
  if (stack == NULL || stack->width != old_w || stack->height != old_h)
    self->roi_valid = FALSE;
  if (stack)
    {
      /* a frame on the PSF is found again on a new geometry */
      if (self->fit_region && airy_stack_plane_size (stack) != old_n)
        {
          self->fit_region = FALSE;
          if (self->fit)
            airy_stack_view_fit_psf (self);
        }
      self->z = MIN (self->z, stack->depth - 1);
      self->cx = MIN (self->cx, stack->width - 1);
      self->cy = MIN (self->cy, stack->height - 1);
    }
  invalidate (self, TRUE, TRUE, TRUE);
  if (self->z != z)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_Z);
  update_zoom (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

AiryStack *
airy_stack_view_get_stack (AiryStackView *self)
{
  return self->stack;
}

AiryResident *
airy_stack_view_get_resident (AiryStackView *self)
{
  return self->resident;
}

const char *
airy_stack_view_get_slice_path (AiryStackView *self)
{
  return self->slice_path;
}

void
airy_stack_view_set_z (AiryStackView *self,
                       guint          z)
{
  if (self->stack == NULL)
    return;
  z = MIN (z, self->stack->depth - 1);
  if (z == self->z)
    return;
  self->z = z;
  if (!self->show_mip)
    self->xy_host_valid = FALSE;
  invalidate (self, !self->show_mip, FALSE, FALSE);
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_Z);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

guint
airy_stack_view_get_z (AiryStackView *self)
{
  return self->z;
}

/* Each display property that changes is notified once. */
void
airy_stack_view_set_display (AiryStackView     *self,
                             const AiryDisplay *display)
{
  AiryDisplay old = self->display;

  self->lut_dirty |= display->colormap != old.colormap || display->inverted != old.inverted;
  self->display = *display;
  invalidate (self, FALSE, FALSE, FALSE);
  g_object_freeze_notify (G_OBJECT (self));
  if (display->colormap != old.colormap)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_COLORMAP);
  if (display->inverted != old.inverted)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_INVERTED);
  if (display->scale != old.scale)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_SCALE);
  if (display->gamma != old.gamma)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_GAMMA);
  if (display->lo != old.lo)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_LIMIT_LOW);
  if (display->hi != old.hi)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_LIMIT_HIGH);
  g_object_thaw_notify (G_OBJECT (self));
}

const AiryDisplay *
airy_stack_view_get_display (AiryStackView *self)
{
  return &self->display;
}

void
airy_stack_view_set_linear (AiryStackView *self,
                            gboolean       linear)
{
  linear = !!linear;
  invalidate (self, TRUE, TRUE, TRUE);
  if (linear == self->linear)
    return;
  self->linear = linear;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_LINEAR);
}

gboolean
airy_stack_view_get_linear (AiryStackView *self)
{
  return self->linear;
}

void
airy_stack_view_set_mip (AiryStackView *self,
                         gboolean       mip)
{
  gboolean changed = !!mip != self->show_mip;

  if (changed)
    self->xy_host_valid = FALSE;
  self->show_mip = !!mip;
  invalidate (self, TRUE, FALSE, FALSE);
  if (changed)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_MIP);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

gboolean
airy_stack_view_get_mip (AiryStackView *self)
{
  return self->show_mip;
}

void
airy_stack_view_set_sections (AiryStackView *self,
                              gboolean       sections)
{
  sections = !!sections;
  invalidate (self, FALSE, TRUE, TRUE);
  if (sections == self->sections)
    return;
  self->sections = sections;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_SECTIONS);
  update_zoom (self);
}

gboolean
airy_stack_view_get_sections (AiryStackView *self)
{
  return self->sections;
}

void
airy_stack_view_set_tool (AiryStackView *self,
                          AiryViewTool   tool)
{
  if (tool == self->tool)
    return;
  self->tool = tool;
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_TOOL);
}

AiryViewTool
airy_stack_view_get_tool (AiryStackView *self)
{
  return self->tool;
}

void
airy_stack_view_set_cursor (AiryStackView *self,
                            guint          x,
                            guint          y)
{
  if (self->stack == NULL)
    return;
  x = MIN (x, self->stack->width - 1);
  y = MIN (y, self->stack->height - 1);
  invalidate (self, FALSE, y != self->cy, x != self->cx);
  self->cx = x;
  self->cy = y;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

void
airy_stack_view_get_cursor (AiryStackView *self,
                            guint         *x,
                            guint         *y)
{
  *x = self->cx;
  *y = self->cy;
}

void
airy_stack_view_get_line (AiryStackView *self,
                          double *x0, double *y0, double *x1, double *y1, gboolean *valid)
{
  *x0 = self->lx0;
  *y0 = self->ly0;
  *x1 = self->lx1;
  *y1 = self->ly1;
  *valid = self->line_valid;
}

void
airy_stack_view_set_line (AiryStackView *self,
                          double x0, double y0, double x1, double y1)
{
  self->lx0 = x0;
  self->ly0 = y0;
  self->lx1 = x1;
  self->ly1 = y1;
  self->line_valid = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
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
      set_fit (self, FALSE);
    }
  else
    {
      double cx, cy;

      visible_centre (self, &cx, &cy);
      zoom_at (self, zoom / (self->fit ? effective_zoom (self) : self->zoom), cx, cy);
      self->zoom = zoom;        /* exactly, not through the factor */
      _airy_stack_view_compute_layout (self, &L);
      if (L.xy.w + L.yz.w + (L.sections ? AIRY_STACK_VIEW_GAP : 0) <= gtk_widget_get_width (GTK_WIDGET (self))
          && L.xy.h + L.xz.h + (L.sections ? AIRY_STACK_VIEW_GAP : 0) <= gtk_widget_get_height (GTK_WIDGET (self)))
        self->center = TRUE;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  update_zoom (self);
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
  set_fit (self, TRUE);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  update_zoom (self);
}

/* Fitting, or not: then the zoom and the position stay as shown. */
void
airy_stack_view_set_fit (AiryStackView *self,
                         gboolean       fit)
{
  if (fit)
    airy_stack_view_fit (self);
  else
    freeze_layout (self);
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
      update_zoom (self);
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
airy_stack_view_request_readback (AiryStackView *self)
{
  self->want_readback = TRUE;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const guint8 *
airy_stack_view_get_readback (AiryStackView *self,
                              int           *width,
                              int           *height)
{
  *width = self->readback_w;
  *height = self->readback_h;
  return self->want_readback ? NULL : self->readback;
}

const char *
airy_stack_view_get_gl_error (AiryStackView *self)
{
  return self->gl_error;
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

/* The stack's voxel size was changed in place (Properties…): the layout,
 * the sections' aspect and the scale bar follow. */
void
airy_stack_view_voxel_size_changed (AiryStackView *self)
{
  invalidate (self, TRUE, TRUE, TRUE);
  update_zoom (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* An uncalibrated image: lengths in pixels (its dx is 1). */
void
airy_stack_view_set_pixel_units (AiryStackView *self,
                                 gboolean       pixels)
{
  self->pixel_units = pixels;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
airy_stack_view_set_composite (AiryStackView *self,
                               guint          n,
                               AiryResident **channels,
                               const float   *lo,
                               const float   *hi,
                               const GdkRGBA *colors)
{
  guint c;

  g_return_if_fail (n <= AIRY_STACK_VIEW_MAX_CHANNELS);
  for (c = 0; c < self->n_composite; c++)
    g_clear_pointer (&self->composite[c], airy_resident_unref);
  for (c = 0; c < n; c++)
    {
      self->composite[c] = channels[c];
      self->comp_lo[c] = lo[c];
      self->comp_hi[c] = hi[c];
      self->comp_color[c] = colors[c];
    }
  self->n_composite = n;
  self->comp_dirty = TRUE;
  invalidate (self, TRUE, TRUE, TRUE);
}

guint
airy_stack_view_get_composite (AiryStackView *self)
{
  return self->n_composite;
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
  set_fit (self, FALSE);
  self->fit_region = FALSE;
  self->center = FALSE;
  self->zoom = L.zoom / r;
  self->ox = L.xy.x + (source->stack->width / 2 + 0.5) * L.zoom - (self->stack->width / 2 + 0.5) * self->zoom;
  self->oy = L.xy.y + (source->stack->height / 2 + 0.5) * L.zoom - (self->stack->height / 2 + 0.5) * self->zoom;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  update_zoom (self);
}

/* The same point of the specimen in another stack: pixels matched in µm
 * about the optical axes, the plane nearest in z. */
void
airy_stack_view_link_cursor (AiryStackView *self,
                             AiryStackView *source)
{
  const AiryStack *a = source->stack, *b = self->stack;
  double rx, ry, zpos;
  int x, y, z;

  if (a == NULL || b == NULL)
    return;
  rx = a->dx > 0 && b->dx > 0 ? a->dx / b->dx : 1.0;
  ry = a->dy > 0 && b->dy > 0 ? a->dy / b->dy : 1.0;
  x = (int) floor (((double) source->cx - a->width / 2) * rx + b->width / 2 + 0.5);
  y = (int) floor (((double) source->cy - a->height / 2) * ry + b->height / 2 + 0.5);
  zpos = airy_stack_get_z (a, source->z);
  z = b->dz > 0 && b->depth > 1 ? (int) floor ((zpos - b->z0) / b->dz + 0.5) : (int) source->z;
  airy_stack_view_set_z (self, (guint) CLAMP (z, 0, (int) b->depth - 1));
  airy_stack_view_set_cursor (self, (guint) CLAMP (x, 0, (int) b->width - 1), (guint) CLAMP (y, 0, (int) b->height - 1));
}

/* The rectangle drawn with the rectangle tool, image pixels (inclusive
 * corners sorted into x, y, width, height). */
gboolean
airy_stack_view_get_roi (AiryStackView *self,
                         guint         *x,
                         guint         *y,
                         guint         *width,
                         guint         *height)
{
  *x = MIN (self->qx0, self->qx1);
  *y = MIN (self->qy0, self->qy1);
  *width = MAX (self->qx0, self->qx1) - *x + 1;
  *height = MAX (self->qy0, self->qy1) - *y + 1;
  return self->roi_valid && self->stack != NULL;
}

void
airy_stack_view_set_roi (AiryStackView *self,
                         guint          x,
                         guint          y,
                         guint          width,
                         guint          height)
{
  if (self->stack == NULL)
    return;
  self->qx0 = MIN (x, self->stack->width - 1);
  self->qy0 = MIN (y, self->stack->height - 1);
  self->qx1 = MIN (x + MAX (width, 1) - 1, self->stack->width - 1);
  self->qy1 = MIN (y + MAX (height, 1) - 1, self->stack->height - 1);
  self->roi_valid = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}
