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
                    G_DEFINE_ENUM_VALUE (AIRY_TOOL_LINE, "line"))

G_DEFINE_ENUM_TYPE (AiryDisplayScale, airy_display_scale,
                    G_DEFINE_ENUM_VALUE (AIRY_SCALE_LINEAR, "linear"),
                    G_DEFINE_ENUM_VALUE (AIRY_SCALE_LOG, "log"),
                    G_DEFINE_ENUM_VALUE (AIRY_SCALE_SQRT, "sqrt"))

enum { SIGNAL_CHANGED, SIGNAL_HOVER, SIGNAL_READBACK, N_SIGNALS };
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

void
_airy_stack_view_compute_layout (AiryStackView  *self,
                                 AiryViewLayout *L)
{
  AiryStack *s = self->stack;
  double W = gtk_widget_get_width (GTK_WIDGET (self)), H = gtk_widget_get_height (GTK_WIDGET (self));
  double zx, zy, D, zoom, ox, oy, tw, th;

  memset (L, 0, sizeof *L);
  if (s == NULL)
    return;
  L->sections = self->sections && s->depth > 1;
  D = L->sections ? s->depth : 0;
  zx = z_aspect (s, s->dx);
  zy = z_aspect (s, s->dy);
  if (self->fit)
    {
      double gw = L->sections ? AIRY_STACK_VIEW_GAP : 0.0;
      zoom = MIN ((W - gw) / (s->width + D * zx), (H - gw) / (s->height + D * zy));
      zoom = MAX (zoom, 1e-3);
      tw = s->width * zoom + (L->sections ? AIRY_STACK_VIEW_GAP + D * zx * zoom : 0.0);
      th = s->height * zoom + (L->sections ? AIRY_STACK_VIEW_GAP + D * zy * zoom : 0.0);
      ox = floor ((W - tw) / 2.0);
      oy = floor ((H - th) / 2.0);
    }
  else
    {
      zoom = self->zoom;
      if (self->center && W > 0 && H > 0)
        {
          self->ox = floor ((W - s->width * zoom) / 2.0);
          self->oy = floor ((H - s->height * zoom) / 2.0);
          self->center = FALSE;
        }
      ox = self->ox;
      oy = self->oy;
    }
  L->zoom = zoom;
  L->xy = (AiryRect) { ox, oy, s->width * zoom, s->height * zoom };
  /* XZ under XY (z downwards), YZ right of XY (z to the right) */
  L->xz = (AiryRect) { ox, oy + L->xy.h + AIRY_STACK_VIEW_GAP, L->xy.w, D * zy * zoom };
  L->yz = (AiryRect) { ox + L->xy.w + AIRY_STACK_VIEW_GAP, oy, D * zx * zoom, L->xy.h };
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
  return wx >= L.xy.x && wx < L.xy.x + L.xy.w && wy >= L.xy.y && wy < L.xy.y + L.xy.h;
}

static void
set_cursor_from_point (AiryStackView *self, double wx, double wy)
{
  AiryStack *s = self->stack;
  AiryViewLayout L;

  _airy_stack_view_compute_layout (self, &L);
  if (wx >= L.xy.x && wx < L.xy.x + L.xy.w && wy >= L.xy.y && wy < L.xy.y + L.xy.h)
    airy_stack_view_set_cursor (self, (guint) ((wx - L.xy.x) / L.zoom), (guint) ((wy - L.xy.y) / L.zoom));
  else if (L.sections && wx >= L.xz.x && wx < L.xz.x + L.xz.w && wy >= L.xz.y && wy < L.xz.y + L.xz.h)
    {
      airy_stack_view_set_z (self, (guint) ((wy - L.xz.y) / L.xz.h * s->depth));
      airy_stack_view_set_cursor (self, (guint) ((wx - L.xz.x) / L.zoom), self->cy);
    }
  else if (L.sections && wx >= L.yz.x && wx < L.yz.x + L.yz.w && wy >= L.yz.y && wy < L.yz.y + L.yz.h)
    {
      airy_stack_view_set_z (self, (guint) ((wx - L.yz.x) / L.yz.w * s->depth));
      airy_stack_view_set_cursor (self, self->cx, (guint) ((wy - L.yz.y) / L.zoom));
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

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, AiryStackView *self)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (gesture));
  double ix, iy;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  self->drag_x = x;
  self->drag_y = y;
  self->dragging_line = button == GDK_BUTTON_PRIMARY && self->tool == AIRY_TOOL_LINE
                        && airy_stack_view_widget_to_image (self, x, y, &ix, &iy);
  if (self->dragging_line)
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
  if (self->dragging_line)
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
  self->dragging_line = FALSE;
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
  gtk_widget_queue_draw (GTK_WIDGET (self));
  update_zoom (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *scroll, double dx, double dy, AiryStackView *self)
{
  double x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
  GdkEvent *event = gtk_event_controller_get_current_event (GTK_EVENT_CONTROLLER (scroll));

  if (event)
    {
      double ex, ey;
      if (gdk_event_get_position (event, &ex, &ey))
        {
          graphene_point_t p;
          GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
          double nx, ny;

          gtk_native_get_surface_transform (native, &nx, &ny);
          if (gtk_widget_compute_point (GTK_WIDGET (native), GTK_WIDGET (self),
                                        &GRAPHENE_POINT_INIT (ex - nx, ey - ny), &p))
            {
              x = p.x;
              y = p.y;
            }
        }
    }
  zoom_at (self, dy < 0 ? 1.25 : 0.8, x, y);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, AiryStackView *self)
{
  double ix, iy;

  if (airy_stack_view_widget_to_image (self, x, y, &ix, &iy))
    g_signal_emit (self, signals[SIGNAL_HOVER], 0, floor (ix + 0.5), floor (iy + 0.5));
}

static gboolean
on_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state, AiryStackView *self)
{
  double cx = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, cy = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;

  if (self->stack == NULL)
    return FALSE;
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
    case GDK_KEY_1:
      airy_stack_view_set_zoom (self, 1.0);
      return TRUE;
    case GDK_KEY_Left: case GDK_KEY_Right: case GDK_KEY_Up: case GDK_KEY_Down:
      freeze_layout (self);
      self->ox += keyval == GDK_KEY_Left ? 40 : keyval == GDK_KEY_Right ? -40 : 0;
      self->oy += keyval == GDK_KEY_Up ? 40 : keyval == GDK_KEY_Down ? -40 : 0;
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
  guint z = self->z;

  g_return_if_fail (AIRY_IS_STACK_VIEW (self));

  self->resident = resident;
  self->stack = stack;
  airy_resident_unref (old);
  if (stack == NULL || airy_stack_plane_size (stack) != old_n)
    g_clear_pointer (&self->xy_host, g_free);
  self->xy_host_valid = FALSE;
  self->line_valid = FALSE;
  if (stack)
    {
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

void
airy_stack_view_set_zoom (AiryStackView *self,
                          double         zoom)
{
  if (self->stack == NULL)
    return;
  self->zoom = zoom;
  self->center = TRUE;      /* at the next layout, when the size is known */
  set_fit (self, FALSE);
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
