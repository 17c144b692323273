#pragma once

#include <gtk/gtk.h>

#include "airy-stack.h"
#include "airy-view-math.h"

G_BEGIN_DECLS

#define AIRY_TYPE_STACK_VIEW (airy_stack_view_get_type ())
G_DECLARE_FINAL_TYPE (AiryStackView, airy_stack_view, AIRY, STACK_VIEW, GtkGLArea)

typedef enum
{
  AIRY_TOOL_CURSOR,   /* click sets the cursor, drag pans */
  AIRY_TOOL_LINE,     /* drag draws a profile line */
} AiryViewTool;

GtkWidget         *airy_stack_view_new            (void);
/* Takes the stack (transfer full); NULL clears. */
void               airy_stack_view_set_stack      (AiryStackView     *self,
                                                   AiryStack         *stack);
AiryStack         *airy_stack_view_get_stack      (AiryStackView     *self);
void               airy_stack_view_set_z          (AiryStackView     *self,
                                                   guint              z);
guint              airy_stack_view_get_z          (AiryStackView     *self);
void               airy_stack_view_set_display    (AiryStackView     *self,
                                                   const AiryDisplay *display);
const AiryDisplay *airy_stack_view_get_display    (AiryStackView     *self);
void               airy_stack_view_set_linear     (AiryStackView     *self,
                                                   gboolean           linear);
void               airy_stack_view_set_mip        (AiryStackView     *self,
                                                   gboolean           mip);
gboolean           airy_stack_view_get_mip        (AiryStackView     *self);
void               airy_stack_view_set_sections   (AiryStackView     *self,
                                                   gboolean           sections);
void               airy_stack_view_set_tool       (AiryStackView     *self,
                                                   AiryViewTool       tool);
void               airy_stack_view_set_cursor     (AiryStackView     *self,
                                                   guint              x,
                                                   guint              y);
void               airy_stack_view_get_cursor     (AiryStackView     *self,
                                                   guint             *x,
                                                   guint             *y);
void               airy_stack_view_get_line       (AiryStackView     *self,
                                                   double            *x0,
                                                   double            *y0,
                                                   double            *x1,
                                                   double            *y1,
                                                   gboolean          *valid);
void               airy_stack_view_set_line       (AiryStackView     *self,
                                                   double             x0,
                                                   double             y0,
                                                   double             x1,
                                                   double             y1);
/* Zoom: screen pixels per image pixel; fit follows the widget's size. */
void               airy_stack_view_set_zoom       (AiryStackView     *self,
                                                   double             zoom);
double             airy_stack_view_get_zoom       (AiryStackView     *self);
void               airy_stack_view_fit            (AiryStackView     *self);
/* Widget coordinates → image pixel (x, y) of the XY view; FALSE outside. */
gboolean           airy_stack_view_widget_to_image (AiryStackView    *self,
                                                    double            wx,
                                                    double            wy,
                                                    double           *ix,
                                                    double           *iy);
/* The plane shown in XY (the z plane, or the projection). */
const float       *airy_stack_view_get_xy_plane   (AiryStackView     *self);
/* The scale bar for the current zoom: length in µm and in screen pixels. */
double             airy_stack_view_get_scale_bar  (AiryStackView     *self,
                                                   double            *pixels);

/* Tests and exports read the GL framebuffer (RGBA, top row first) after
 * the next frame: request, then wait for ::readback. */
void               airy_stack_view_request_readback (AiryStackView   *self);
const guint8      *airy_stack_view_get_readback   (AiryStackView     *self,
                                                   int               *width,
                                                   int               *height);
const char        *airy_stack_view_get_gl_error   (AiryStackView     *self);

G_END_DECLS
