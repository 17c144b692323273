#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <math.h>

#include <glib/gi18n.h>

#include "airy-stack-view-private.h"

/* What the stack view draws with GtkSnapshot on top of its GL frame: the
 * cursor linked across XY, XZ and YZ, the drawn profile line and the scale
 * bar. */

static void
append_line (GtkSnapshot *snapshot, double x0, double y0, double x1, double y1, const GdkRGBA *color)
{
  if (fabs (y1 - y0) < 0.5)
    gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (MIN (x0, x1), y0, fabs (x1 - x0), 1));
  else if (fabs (x1 - x0) < 0.5)
    gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (x0, MIN (y0, y1), 1, fabs (y1 - y0)));
  else
    {
      GskRoundedRect r;
      double len = hypot (x1 - x0, y1 - y0);

      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x0, y0));
      gtk_snapshot_rotate (snapshot, atan2 (y1 - y0, x1 - x0) * 180.0 / G_PI);
      gsk_rounded_rect_init_from_rect (&r, &GRAPHENE_RECT_INIT (0, -0.75, len, 1.5), 0);
      gtk_snapshot_push_rounded_clip (snapshot, &r);
      gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (0, -0.75, len, 1.5));
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
    }
}

double
airy_stack_view_get_scale_bar (AiryStackView *self,
                               double        *pixels)
{
  AiryViewLayout L;

  *pixels = 0.0;
  if (self->stack == NULL || self->stack->dx <= 0)
    return 0.0;
  _airy_stack_view_compute_layout (self, &L);
  /* at most a quarter of the visible XY's width */
  return airy_scale_bar (L.zoom / self->stack->dx, MAX (L.vxy.w, 40.0) / 4.0, pixels);
}

void
_airy_stack_view_draw_overlays (AiryStackView *self,
                                GtkSnapshot   *snapshot)
{
  static const GdkRGBA cursor = { 0.3, 0.8, 1.0, 0.7 };
  static const GdkRGBA white = { 1, 1, 1, 0.95 };
  static const GdkRGBA shade = { 0, 0, 0, 0.8 };
  static const GdkRGBA line = { 1.0, 0.85, 0.1, 0.95 };
  AiryViewLayout L;
  double px, len;

  if (self->stack == NULL)
    return;
  _airy_stack_view_compute_layout (self, &L);

  /* the cursor, linked across the three views, each line inside its view */
  {
    const AiryRect *v = &L.vxy;
    double x = L.xy.x + (self->cx + 0.5) * L.zoom, y = L.xy.y + (self->cy + 0.5) * L.zoom;
    gboolean x_in = x >= v->x && x < v->x + v->w, y_in = y >= v->y && y < v->y + v->h;

    if (y_in)
      append_line (snapshot, v->x, y, v->x + v->w, y, &cursor);
    if (x_in)
      append_line (snapshot, x, v->y, x, v->y + v->h, &cursor);
    if (L.sections)
      {
        double zz = (self->z + 0.5) / self->stack->depth;
        if (x_in)
          append_line (snapshot, x, L.xz.y, x, L.xz.y + L.xz.h, &cursor);
        append_line (snapshot, L.xz.x, L.xz.y + zz * L.xz.h, L.xz.x + L.xz.w, L.xz.y + zz * L.xz.h, &cursor);
        if (y_in)
          append_line (snapshot, L.yz.x, y, L.yz.x + L.yz.w, y, &cursor);
        append_line (snapshot, L.yz.x + zz * L.yz.w, L.yz.y, L.yz.x + zz * L.yz.w, L.yz.y + L.yz.h, &cursor);
      }
  }

  if (self->line_valid)
    {
      double ax = L.xy.x + (self->lx0 + 0.5) * L.zoom, ay = L.xy.y + (self->ly0 + 0.5) * L.zoom;
      double bx = L.xy.x + (self->lx1 + 0.5) * L.zoom, by = L.xy.y + (self->ly1 + 0.5) * L.zoom;
      double len = hypot (bx - ax, by - ay);

      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (L.vxy.x, L.vxy.y, L.vxy.w, L.vxy.h));
      append_line (snapshot, ax, ay, bx, by, &line);
      if (self->line_width > 1 && len > 0)
        {
          /* the band the profile averages across: its edges, w/2 pixels
           * either side */
          static const GdkRGBA band = { 1.0, 0.85, 0.2, 0.55 };
          double h = 0.5 * self->line_width * L.zoom, nx = -(by - ay) / len * h, ny = (bx - ax) / len * h;

          append_line (snapshot, ax + nx, ay + ny, bx + nx, by + ny, &band);
          append_line (snapshot, ax - nx, ay - ny, bx - nx, by - ny, &band);
        }
      gtk_snapshot_pop (snapshot);
    }

  if (self->roi_valid)
    {
      static const GdkRGBA roi = { 0.4, 1.0, 0.4, 0.95 };
      double x0 = L.xy.x + MIN (self->qx0, self->qx1) * L.zoom, y0 = L.xy.y + MIN (self->qy0, self->qy1) * L.zoom;
      double x1 = L.xy.x + (MAX (self->qx0, self->qx1) + 1) * L.zoom;
      double y1 = L.xy.y + (MAX (self->qy0, self->qy1) + 1) * L.zoom;

      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (L.vxy.x, L.vxy.y, L.vxy.w, L.vxy.h));
      append_line (snapshot, x0, y0, x1, y0, &roi);
      append_line (snapshot, x0, y1, x1, y1, &roi);
      append_line (snapshot, x0, y0, x0, y1, &roi);
      append_line (snapshot, x1, y0, x1, y1, &roi);
      gtk_snapshot_pop (snapshot);
    }

  /* scale bar, bottom left of XY */
  len = airy_stack_view_get_scale_bar (self, &px);
  if (len > 0 && px >= 4)
    {
      g_autofree char *label = self->pixel_units ? g_strdup_printf (_("%g px"), len) : airy_format_length (len);
      PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), label);
      /* in the visible part of XY, whatever the zoom */
      double bx = L.vxy.x + 10, by = L.vxy.y + L.vxy.h - 12;
      int tw, th;

      /* a dark edge and shadow: visible on white too (the difference
       * view's zero) */
      gtk_snapshot_append_color (snapshot, &shade, &GRAPHENE_RECT_INIT (bx - 2, by - 2, px + 4, 7));
      gtk_snapshot_append_color (snapshot, &white, &GRAPHENE_RECT_INIT (bx, by, px, 3));
      pango_layout_get_pixel_size (layout, &tw, &th);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (bx + px / 2 - tw / 2.0 + 1, by - th - 1));
      gtk_snapshot_append_layout (snapshot, layout, &shade);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (-1, -1));
      gtk_snapshot_append_layout (snapshot, layout, &white);
      gtk_snapshot_restore (snapshot);
      g_object_unref (layout);
    }
}
