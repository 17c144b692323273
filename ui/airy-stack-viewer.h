#pragma once

#include <gtk/gtk.h>

#include "airy-stack.h"
#include "airy-stack-view.h"
#include "airy-plot.h"
#include "airy-focus.h"

G_BEGIN_DECLS

#define AIRY_TYPE_STACK_VIEWER (airy_stack_viewer_get_type ())
G_DECLARE_FINAL_TYPE (AiryStackViewer, airy_stack_viewer, AIRY, STACK_VIEWER, GtkBox)

typedef enum
{
  AIRY_AUTO_MINMAX_SLICE,
  AIRY_AUTO_MINMAX_STACK,
  AIRY_AUTO_PERCENTILE_SLICE,   /* 0.1 % clipped at each end */
  AIRY_AUTO_PERCENTILE_STACK,
} AiryAutoContrast;

typedef enum
{
  AIRY_COMPARE_OFF,
  AIRY_COMPARE_SIDE,   /* the reference beside the result, linked */
  AIRY_COMPARE_DIFF,   /* result − reference, signed colormap */
} AiryCompare;

/* The stack viewer: the GL canvas with its sections, display controls
 * (colormap, contrast with histogram, gamma, scale, interpolation), z
 * slider with play, profiles with FWHM, readout, open and export. */
GtkWidget     *airy_stack_viewer_new              (void);
AiryStackView *airy_stack_viewer_get_view         (AiryStackViewer *self);
AiryPlot      *airy_stack_viewer_get_line_plot    (AiryStackViewer *self);
AiryPlot      *airy_stack_viewer_get_axial_plot   (AiryStackViewer *self);
/* Shows a stack (transfer full); the display settings stay, contrast is
 * set automatically when auto contrast is on. */
void           airy_stack_viewer_set_stack        (AiryStackViewer *self,
                                                   AiryStack       *stack);
/* Shows a result kept by its backend (transfer full; a CUDA result stays
 * on the GPUs: slices, histogram and limits come through its slots). */
void           airy_stack_viewer_set_resident     (AiryStackViewer *self,
                                                   AiryResident    *resident);
void           airy_stack_viewer_auto_contrast    (AiryStackViewer *self,
                                                   AiryAutoContrast mode);
void           airy_stack_viewer_set_display      (AiryStackViewer   *self,
                                                   const AiryDisplay *display);
/* Opens a TIFF or PNG; on failure the message is shown in the viewer, the
 * current stack stays, and FALSE is returned with the error. */
gboolean       airy_stack_viewer_open             (AiryStackViewer *self,
                                                   const char      *path,
                                                   GError         **error);
/* The same on a worker thread: the stack is shown when it has been read (a
 * newer open wins; a failure is shown as a message). The viewer's own
 * opens, and its exports from the file chooser, go through worker threads
 * too: the UI thread touches no file. */
void           airy_stack_viewer_open_async       (AiryStackViewer *self,
                                                   const char      *path,
                                                   guint            channel,
                                                   guint            frame);
/* A stack read from path elsewhere (on the window's worker) shown as
 * airy_stack_viewer_open shows it; takes the stack, and overtakes an open
 * still under way. */
void           airy_stack_viewer_show_file        (AiryStackViewer *self,
                                                   AiryStack       *stack,
                                                   const char      *path);
/* Export Stack (TIFF), or the XZ section, as the viewer's menu does it:
 * what is shown is taken now and written on a worker thread (a failure is
 * shown as a message). */
void           airy_stack_viewer_export_tiff_async (AiryStackViewer *self,
                                                    const char      *path,
                                                    gboolean         section);
/* reads and writes still running on worker threads */
guint          airy_stack_viewer_get_pending_files (AiryStackViewer *self);
/* A hyperstack opened from a file: how many channels and time points it
 * has (0 when the shown stack is no hyperstack), which are shown; and a
 * choice of another (0-based), read from the file again. */
void           airy_stack_viewer_get_hyperstack   (AiryStackViewer *self,
                                                   guint           *n_channels,
                                                   guint           *n_frames,
                                                   guint           *channel,
                                                   guint           *frame);
void           airy_stack_viewer_set_hyperstack_plane (AiryStackViewer *self,
                                                       guint            channel,
                                                       guint            frame);
/* A computed result's stack of each wavelength (transfer full: AiryStack*
 * with a free function, or NULL), after set_resident: with two or more,
 * the channel chooser and the composite show them (channel 1 first), as
 * for a hyperstack file. */
void           airy_stack_viewer_set_channels     (AiryStackViewer *self,
                                                   GPtrArray       *channels);
/* Exports: the view as the screen shows it (zoom, sections, scale bar,
 * overlays: viewer.export-png), the whole XY slice (colormap, contrast,
 * scale bar) at `scale` (1 or 2: viewer.export-slice-png,
 * viewer.export-png-2x), the raw slice as 16-bit PNG, the stack or the XZ
 * section as float32 TIFF with its voxel size. */
gboolean       airy_stack_viewer_export_screen    (AiryStackViewer *self,
                                                   const char      *path,
                                                   GError         **error);
guint8        *airy_stack_viewer_render_screen    (AiryStackViewer *self,
                                                   guint           *width,
                                                   guint           *height);
gboolean       airy_stack_viewer_export_view      (AiryStackViewer *self,
                                                   const char      *path,
                                                   guint            scale,
                                                   GError         **error);
gboolean       airy_stack_viewer_export_raw       (AiryStackViewer *self,
                                                   const char      *path,
                                                   GError         **error);
gboolean       airy_stack_viewer_export_tiff      (AiryStackViewer *self,
                                                   const char      *path,
                                                   gboolean         section,
                                                   GError         **error);
/* An image whose file gives no voxel size is shown in pixels (TRUE), until
 * set_voxel_size (Properties…, the action viewer.properties) gives one
 * (µm, each in (0, 1e6]); it stays for the file's other channels and time
 * points. */
gboolean       airy_stack_viewer_get_uncalibrated (AiryStackViewer *self);
gboolean       airy_stack_viewer_set_voxel_size   (AiryStackViewer *self,
                                                   double           dx,
                                                   double           dy,
                                                   double           dz,
                                                   GError         **error);
/* Comparing two PSFs: pin the shown result as the reference (viewer.pin),
 * then show both side by side with linked cursor, z and zoom, or their
 * difference; the profiles show both FWHMs. A/B (key B, viewer.toggle-ab)
 * swaps which is shown as A. */
void           airy_stack_viewer_pin_reference    (AiryStackViewer *self);
void           airy_stack_viewer_set_compare      (AiryStackViewer *self,
                                                   AiryCompare      mode);
AiryCompare    airy_stack_viewer_get_compare      (AiryStackViewer *self);
void           airy_stack_viewer_toggle_ab        (AiryStackViewer *self);
gboolean       airy_stack_viewer_get_showing_b    (AiryStackViewer *self);
AiryStackView *airy_stack_viewer_get_reference_view (AiryStackViewer *self);
/* What the main view shows, in words ("Result", a file's name, "Reference
 * (pinned): not the current result", "Difference: result − reference",
 * "A: reference"…), shown above it; ::shown-changed says when it changes
 * (the window's header repeats it). NULL without a stack. */
const char    *airy_stack_viewer_get_shown_label (AiryStackViewer *self);
/* a reference is pinned; the file the shown stack was read from (NULL for
 * a computed one) */
gboolean       airy_stack_viewer_get_pinned       (AiryStackViewer *self);
const char    *airy_stack_viewer_get_path         (AiryStackViewer *self);
/* The rectangle tool's statistics as shown, NULL without a rectangle. */
const char    *airy_stack_viewer_get_roi_text     (AiryStackViewer *self);
/* XY (with its scale bar), XZ and YZ as on screen, in one RGB image
 * (viewer.export-sections-png), and the profiles as CSV
 * (viewer.export-line-csv, viewer.export-axial-csv). */
guint8        *airy_stack_viewer_render_sections  (AiryStackViewer *self,
                                                   guint           *width,
                                                   guint           *height);
gboolean       airy_stack_viewer_export_sections  (AiryStackViewer *self,
                                                   const char      *path,
                                                   GError         **error);
gboolean       airy_stack_viewer_export_profile   (AiryStackViewer *self,
                                                   const char      *path,
                                                   gboolean         axial,
                                                   GError         **error);
const char    *airy_stack_viewer_get_message      (AiryStackViewer *self);
const char    *airy_stack_viewer_get_readout      (AiryStackViewer *self);
void           airy_stack_viewer_show_message     (AiryStackViewer *self,
                                                   const char      *message);

/* The viewer's actions (inserted on it as "viewer."): open, export-png,
 * export-png-2x, export-raw, export-tiff, export-section and whatever it
 * adds later; a window inserts the same group so that its menu reaches them. */
GActionGroup  *airy_stack_viewer_get_actions      (AiryStackViewer *self);

/* A "TIFF and PNG images" filter, for every chooser of images. */
void           airy_file_chooser_add_image_filter (GtkFileChooser *chooser);

/* Renders the XY view as displayed into an RGB image (width·scale ×
 * height·scale), scale bar included when `bar` is TRUE. */
guint8        *airy_stack_viewer_render_view      (AiryStackViewer *self,
                                                   guint            scale,
                                                   gboolean         bar,
                                                   guint           *width,
                                                   guint           *height);

/* Go to Best Focus: shows the plane best by the criterion (airy-focus.h)
 * and names it beside the button; FALSE with the message for a stack still
 * being computed or none. */
gboolean       airy_stack_viewer_go_to_best_focus (AiryStackViewer    *self,
                                                   AiryFocusCriterion  criterion,
                                                   GError            **error);

G_END_DECLS
