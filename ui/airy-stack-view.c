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
 * This file: the object, its properties and signals, the shown plane; the
 * layout and zoom are airy-stack-view-zoom.c, the input
 * airy-stack-view-input.c, the GL side airy-stack-view-gl.c, the overlays
 * airy-stack-view-overlays.c. */

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

void
_airy_stack_view_emit_changed (AiryStackView *self)
{
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

void
_airy_stack_view_emit_moved (AiryStackView *self)
{
  g_signal_emit (self, signals[SIGNAL_MOVED], 0);
}

void
_airy_stack_view_emit_hover (AiryStackView *self,
                             double         x,
                             double         y)
{
  g_signal_emit (self, signals[SIGNAL_HOVER], 0, x, y);
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
  if (_airy_stack_view_uses_cairo (AIRY_STACK_VIEW (widget)))
    _airy_stack_view_cairo_snapshot (AIRY_STACK_VIEW (widget), snapshot);
  else
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
  _airy_stack_view_update_zoom (AIRY_STACK_VIEW (widget));
}

static void
airy_stack_view_finalize (GObject *object)
{
  AiryStackView *self = AIRY_STACK_VIEW (object);

  g_clear_handle_id (&self->slice_path_idle, g_source_remove);
  _airy_stack_view_cairo_clear (self);
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
    case AIRY_STACK_VIEW_PROP_ZOOM: g_value_set_double (value, _airy_stack_view_effective_zoom (self)); break;
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
  airy_display_init (&self->display);
  self->fit = TRUE;
  self->zoom = 1.0;
  self->sections = TRUE;
  gtk_gl_area_set_required_version (GTK_GL_AREA (self), 3, 3);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  _airy_stack_view_add_controllers (self);
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
  self->sw_dirty[0] |= xy;
  self->sw_dirty[1] |= xz;
  self->sw_dirty[2] |= yz;
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

/* The brightest voxel of the resident's stack: in the projection along z
 * (one plane read), then along z through it (one column read); a run's
 * first plane (a partial resident) in that plane. FALSE without a finite
 * positive value. */
gboolean
airy_stack_view_find_peak (AiryStackView *self,
                           guint         *x,
                           guint         *y,
                           guint         *z)
{
  const AiryStack *s = self->stack;
  g_autofree float *plane = NULL;
  g_autofree float *column = NULL;
  g_autoptr(GError) error = NULL;
  AirySlice slice = { AIRY_SLICE_XY, 0 };
  gsize i, n, best = 0;
  float peak = -G_MAXFLOAT;
  guint known = 0, k;

  if (s == NULL)
    return FALSE;
  if (airy_resident_is_partial (self->resident, &known))
    slice.index = known;
  else if (s->depth > 1)
    slice.kind = AIRY_SLICE_MIP;
  n = airy_stack_plane_size (s);
  plane = g_try_new (float, n);
  if (plane == NULL || !airy_resident_read_slice (self->resident, &slice, plane, &error))
    return FALSE;
  for (i = 0; i < n; i++)
    if (plane[i] > peak)   /* NaN never wins */
      {
        peak = plane[i];
        best = i;
      }
  if (!(peak > 0) || !isfinite (peak))
    return FALSE;
  *x = (guint) (best % s->width);
  *y = (guint) (best / s->width);
  *z = known;
  if (slice.kind == AIRY_SLICE_MIP)
    {
      column = g_new (float, s->depth);
      if (!airy_resident_read_box (self->resident, &(AiryBox) { 0, *y, *x, s->depth, 1, 1 }, column, &error))
        return FALSE;
      for (k = 1; k < s->depth; k++)
        if (column[k] > column[*z])
          *z = k;
    }
  return TRUE;
}

/* Where the cursor and z were, in µm from the optical axis (pixel ⌊N/2⌋),
 * so that a new result on another grid (size, spacing, planes) shows the
 * same point of the specimen. */
typedef struct
{
  gboolean valid;
  double   x, y, z;
} AiryPlace;

static AiryPlace
place_of (AiryStackView *self)
{
  const AiryStack *s = self->stack;

  if (s == NULL)
    return (AiryPlace) { FALSE, 0, 0, 0 };
  return (AiryPlace) { TRUE, airy_pixel_to_um (self->cx, s->width, s->dx > 0 ? s->dx : 1.0),
                       airy_pixel_to_um (self->cy, s->height, s->dy > 0 ? s->dy : 1.0),
                       airy_stack_get_z (s, MIN (self->z, s->depth - 1)) };
}

/* The cursor and z at the place when the new grid holds it (within half
 * a pixel or plane of its edge), else at the PSF's peak (each of the two,
 * lateral and axial, on its own). */
static void
keep_place (AiryStackView *self, const AiryPlace *place)
{
  const AiryStack *s = self->stack;
  double dx = s->dx > 0 ? s->dx : 1.0, dy = s->dy > 0 ? s->dy : 1.0;
  double fx = floor (place->x / dx + 0.5) + s->width / 2, fy = floor (place->y / dy + 0.5) + s->height / 2;
  double zlo = G_MAXDOUBLE, zhi = -G_MAXDOUBLE, half = s->depth > 1 ? 0.5 * fabs (s->dz) : 0.0;
  gboolean lateral = fx >= 0 && fx < s->width && fy >= 0 && fy < s->height, axial;
  guint k, best = 0, px, py, pz;

  for (k = 0; k < s->depth; k++)
    {
      double zk = airy_stack_get_z (s, k);

      zlo = MIN (zlo, zk);
      zhi = MAX (zhi, zk);
      if (fabs (zk - place->z) < fabs (airy_stack_get_z (s, best) - place->z))
        best = k;
    }
  /* one plane: nothing to choose */
  axial = s->depth == 1 || (place->z >= zlo - half - 1e-9 && place->z <= zhi + half + 1e-9);
  if ((!lateral || !axial) && airy_stack_view_find_peak (self, &px, &py, &pz))
    {
      if (!lateral)
        {
          fx = px;
          fy = py;
        }
      if (!axial)
        best = pz;
    }
  self->cx = (guint) CLAMP (fx, 0, s->width - 1);
  self->cy = (guint) CLAMP (fy, 0, s->height - 1);
  self->z = MIN (best, s->depth - 1);
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
  AiryPlace place = place_of (self);

  g_return_if_fail (AIRY_IS_STACK_VIEW (self));

  self->resident = resident;
  self->stack = stack;
  self->resident_serial++;
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
      if (place.valid)
        keep_place (self, &place);
      self->z = MIN (self->z, stack->depth - 1);
      self->cx = MIN (self->cx, stack->width - 1);
      self->cy = MIN (self->cy, stack->height - 1);
    }
  invalidate (self, TRUE, TRUE, TRUE);
  if (self->z != z)
    _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_Z);
  _airy_stack_view_update_zoom (self);
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

gboolean
airy_stack_view_drew_resident (AiryStackView *self)
{
  g_return_val_if_fail (AIRY_IS_STACK_VIEW (self), FALSE);

  return self->stack != NULL && self->drawn_serial == self->resident_serial;
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
  _airy_stack_view_update_zoom (self);
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

/* The stack's voxel size was changed in place (Properties…): the layout,
 * the sections' aspect and the scale bar follow. */
void
airy_stack_view_voxel_size_changed (AiryStackView *self)
{
  invalidate (self, TRUE, TRUE, TRUE);
  _airy_stack_view_update_zoom (self);
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

void
airy_stack_view_set_line_width (AiryStackView *self,
                                guint          width)
{
  g_return_if_fail (AIRY_IS_STACK_VIEW (self));

  self->line_width = MAX (width, 1);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
airy_stack_view_get_line_width (AiryStackView *self)
{
  return MAX (self->line_width, 1);
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
