#pragma once

#include <gtk/gtk.h>

#include "airy-colormap.h"
#include "airy-stack.h"
#include "airy-backend.h"
#include "airy-view-math.h"

G_BEGIN_DECLS

/* the most channels a composite shows */
#define AIRY_STACK_VIEW_MAX_CHANNELS 4

#define AIRY_TYPE_STACK_VIEW (airy_stack_view_get_type ())
G_DECLARE_FINAL_TYPE (AiryStackView, airy_stack_view, AIRY, STACK_VIEW, GtkGLArea)

typedef enum
{
  AIRY_TOOL_CURSOR,   /* click sets the cursor, drag pans */
  AIRY_TOOL_LINE,     /* drag draws a profile line */
  AIRY_TOOL_RECT,     /* drag draws a rectangle (its statistics) */
} AiryViewTool;

#define AIRY_TYPE_VIEW_TOOL (airy_view_tool_get_type ())
GType airy_view_tool_get_type (void);
#define AIRY_TYPE_DISPLAY_SCALE (airy_display_scale_get_type ())
GType airy_display_scale_get_type (void);

/* Properties, each notified once when it changes, for widgets to bind:
 * z, zoom (as shown), fit, mip, sections, linear (interpolation), tool,
 * colormap (an AiryColormap), inverted, scale (AiryDisplayScale), gamma,
 * limit-low, limit-high (the contrast limits) and slice-path (read-only).
 * ::changed says that the stack, the cursor, z, the projection or the
 * profile line changed; ::hover gives the image pixel under the pointer. */

GtkWidget         *airy_stack_view_new            (void);
/* Takes the stack (transfer full) as a CPU resident; NULL clears. */
void               airy_stack_view_set_stack      (AiryStackView     *self,
                                                   AiryStack         *stack);
/* Shows a result kept by its backend (transfer full); every slice, the
 * statistics and the values shown come through its slots. */
void               airy_stack_view_set_resident   (AiryStackView     *self,
                                                   AiryResident      *resident);
AiryResident      *airy_stack_view_get_resident   (AiryStackView     *self);
/* Whether the last frame drew the current resident's pixels (after it was
 * set, a render on the GL area showed it). */
gboolean           airy_stack_view_drew_resident  (AiryStackView     *self);
/* Geometry and voxel size; data is NULL when the values are on a GPU. */
AiryStack         *airy_stack_view_get_stack      (AiryStackView     *self);
/* How the last slice reached GL ("slices: copied on GPU 0 (CUDA–GL
 * interop)", "slices: uploaded from host memory (…)"), NULL before the
 * first frame; notify::slice-path says when it changes (after the frame). */
const char        *airy_stack_view_get_slice_path (AiryStackView     *self);
void               airy_stack_view_set_z          (AiryStackView     *self,
                                                   guint              z);
guint              airy_stack_view_get_z          (AiryStackView     *self);
void               airy_stack_view_set_display    (AiryStackView     *self,
                                                   const AiryDisplay *display);
const AiryDisplay *airy_stack_view_get_display    (AiryStackView     *self);
void               airy_stack_view_set_linear     (AiryStackView     *self,
                                                   gboolean           linear);
gboolean           airy_stack_view_get_linear     (AiryStackView     *self);
void               airy_stack_view_set_mip        (AiryStackView     *self,
                                                   gboolean           mip);
gboolean           airy_stack_view_get_mip        (AiryStackView     *self);
void               airy_stack_view_set_sections   (AiryStackView     *self,
                                                   gboolean           sections);
gboolean           airy_stack_view_get_sections   (AiryStackView     *self);
void               airy_stack_view_set_tool       (AiryStackView     *self,
                                                   AiryViewTool       tool);
AiryViewTool       airy_stack_view_get_tool       (AiryStackView     *self);
void               airy_stack_view_set_cursor     (AiryStackView     *self,
                                                   guint              x,
                                                   guint              y);
/* The stack's brightest voxel (in the projection along z, then along z
 * through it; a run's first plane in that plane); FALSE without a
 * positive value. A new resident keeps the cursor and z at the same
 * place in µm when its grid holds it, else goes there. */
gboolean           airy_stack_view_find_peak      (AiryStackView     *self,
                                                   guint             *x,
                                                   guint             *y,
                                                   guint             *z);
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
/* The profile's width (image pixels): a line wider than 1 is drawn with
 * the edges of the band it averages. */
void               airy_stack_view_set_line_width (AiryStackView     *self,
                                                   guint              width);
guint              airy_stack_view_get_line_width (AiryStackView     *self);
/* The rectangle tool's rectangle in image pixels; FALSE when none. */
gboolean           airy_stack_view_get_roi        (AiryStackView     *self,
                                                   guint             *x,
                                                   guint             *y,
                                                   guint             *width,
                                                   guint             *height);
void               airy_stack_view_set_roi        (AiryStackView     *self,
                                                   guint              x,
                                                   guint              y,
                                                   guint              width,
                                                   guint              height);
/* Zoom: screen pixels per image pixel; fit follows the widget's size. */
void               airy_stack_view_set_zoom       (AiryStackView     *self,
                                                   double             zoom);
double             airy_stack_view_get_zoom       (AiryStackView     *self);
void               airy_stack_view_fit            (AiryStackView     *self);
/* FALSE keeps the zoom and the position as shown. */
void               airy_stack_view_set_fit        (AiryStackView     *self,
                                                   gboolean           fit);
gboolean           airy_stack_view_get_fit        (AiryStackView     *self);
/* Fitting a region (image pixels) instead of the whole image; FALSE from
 * get_fit_psf once the view is zoomed or panned, or fits the whole. */
void               airy_stack_view_fit_region     (AiryStackView     *self,
                                                   double             x,
                                                   double             y,
                                                   double             width,
                                                   double             height);
/* Where the stack exceeds 1e-3 of its peak (projected along z), with a
 * margin of a quarter of its size (at least 4 pixels); FALSE when the
 * stack has no positive peak. fit_psf frames it (a new geometry is framed
 * again while it fits so). */
gboolean           airy_stack_view_get_psf_region (AiryStackView     *self,
                                                   double            *x,
                                                   double            *y,
                                                   double            *width,
                                                   double            *height);
void               airy_stack_view_fit_psf        (AiryStackView     *self);
gboolean           airy_stack_view_get_fit_psf    (AiryStackView     *self);
/* The part of the image XY shows, in image pixels (x, y, width, height),
 * and the sections' widget rectangles (empty without sections). */
void               airy_stack_view_get_visible    (AiryStackView     *self,
                                                   double            *x,
                                                   double            *y,
                                                   double            *width,
                                                   double            *height);
void               airy_stack_view_get_section_rects (AiryStackView  *self,
                                                      graphene_rect_t *xy,
                                                      graphene_rect_t *xz,
                                                      graphene_rect_t *yz);
/* Widget coordinates → image pixel (x, y) of the XY view; FALSE outside. */
gboolean           airy_stack_view_widget_to_image (AiryStackView    *self,
                                                    double            wx,
                                                    double            wy,
                                                    double           *ix,
                                                    double           *iy);
/* The plane shown in XY (the z plane, or the projection) in host memory:
 * fetched from the resident on first use per plane. */
const float       *airy_stack_view_get_xy_plane   (AiryStackView     *self);
/* Reads of the shown plane that do not fetch it whole: a row, a value,
 * and its statistics (computed where the values are). */
gboolean           airy_stack_view_read_row       (AiryStackView     *self,
                                                   guint              y,
                                                   float             *out,
                                                   GError           **error);
gboolean           airy_stack_view_read_value     (AiryStackView     *self,
                                                   guint              x,
                                                   guint              y,
                                                   float             *value,
                                                   GError           **error);
gboolean           airy_stack_view_xy_stats       (AiryStackView     *self,
                                                   AirySliceStats    *stats,
                                                   GError           **error);
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
/* Composite: up to 4 channels of the shown stack's geometry (transfer
 * full each), drawn added over each other, channel c from black to
 * colors[c] between lo[c] and hi[c]; n = 0 ends it. The shown stack (set_
 * resident) stays what the readout, histogram and profiles read. */
void               airy_stack_view_set_composite  (AiryStackView     *self,
                                                   guint              n,
                                                   AiryResident     **channels,
                                                   const float       *lo,
                                                   const float       *hi,
                                                   const GdkRGBA     *colors);
guint              airy_stack_view_get_composite  (AiryStackView     *self);
/* Shows the same part of the specimen at the same scale as source, and
 * puts the cursor and z on the same point (other voxel sizes are matched
 * in µm about the optical axes). */
void               airy_stack_view_copy_view      (AiryStackView     *self,
                                                   AiryStackView     *source);
void               airy_stack_view_link_cursor    (AiryStackView     *self,
                                                   AiryStackView     *source);
/* After the stack's dx, dy, dz were changed in place. */
void               airy_stack_view_voxel_size_changed (AiryStackView *self);
/* An uncalibrated image (dx = dy = 1): the scale bar says pixels. */
void               airy_stack_view_set_pixel_units (AiryStackView    *self,
                                                    gboolean          pixels);

G_END_DECLS
