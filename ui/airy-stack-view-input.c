#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <math.h>

#include "airy-stack-view-private.h"

/* The stack view's input: the pointer (cursor, pan, the line and
 * rectangle tools, zoom on scroll, hover), the keyboard (zoom, pan, z)
 * and the controllers that bring them. */

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
      _airy_stack_view_freeze_layout (self);
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
        _airy_stack_view_emit_changed (self);
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
        _airy_stack_view_emit_changed (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  else if (hypot (dx, dy) > 3)
    {
      self->ox = self->drag_ox + dx;
      self->oy = self->drag_oy + dy;
      _airy_stack_view_clamp_pan (self);
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
          _airy_stack_view_set_fit (self, self->drag_was_fit);
        }
      set_cursor_from_point (self, self->drag_x, self->drag_y);
    }
  self->dragging_line = self->dragging_roi = FALSE;
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
    _airy_stack_view_visible_centre (self, &x, &y);
  _airy_stack_view_zoom_at (self, pow (1.25, -CLAMP (dy, -4.0, 4.0)), x, y);
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
    _airy_stack_view_emit_hover (self, floor (ix + 0.5), floor (iy + 0.5));
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
  _airy_stack_view_visible_centre (self, &cx, &cy);
  switch (keyval)
    {
    case GDK_KEY_plus: case GDK_KEY_equal: case GDK_KEY_KP_Add:
      _airy_stack_view_zoom_at (self, 1.25, cx, cy);
      return TRUE;
    case GDK_KEY_minus: case GDK_KEY_KP_Subtract:
      _airy_stack_view_zoom_at (self, 0.8, cx, cy);
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
      _airy_stack_view_freeze_layout (self);
      self->ox += keyval == GDK_KEY_Left ? 40 : keyval == GDK_KEY_Right ? -40 : 0;
      self->oy += keyval == GDK_KEY_Up ? 40 : keyval == GDK_KEY_Down ? -40 : 0;
      _airy_stack_view_clamp_pan (self);
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

/* the drag, scroll, motion and key controllers of the canvas */
void
_airy_stack_view_add_controllers (AiryStackView *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkEventController *key = gtk_event_controller_key_new ();

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
