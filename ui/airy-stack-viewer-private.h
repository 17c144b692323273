/* airy-stack-viewer-private.h: the stack viewer's state, shared by its
 * units: airy-stack-viewer.c (the object, display, z, zoom, layout),
 * airy-stack-viewer-toolbar.c (the controls and their bindings),
 * airy-stack-viewer-profiles.c (readout, rectangle statistics, profiles),
 * airy-stack-viewer-compare.c (the pinned reference: side by side,
 * difference, A/B), airy-stack-viewer-hyperstack.c (files: channels, time
 * points, composite, voxel size) and airy-stack-viewer-export.c (exports,
 * file I/O on worker threads, file choosers). */
#pragma once

#include "airy-stack-viewer.h"
#include "airy-histogram.h"

G_BEGIN_DECLS

struct _AiryStackViewer
{
  GtkBox               parent_instance;

  AiryStackView       *view;
  GActionGroup        *actions;   /* "viewer.": open and exports */
  GtkWidget           *colormap;
  GtkWidget           *invert;
  GtkWidget           *scale;
  GtkWidget           *gamma;
  GtkWidget           *auto_mode;
  GtkWidget           *auto_on;
  GtkWidget           *smooth;
  GtkWidget           *mip;
  GtkWidget           *sections;
  GtkWidget           *line_tool;
  GtkWidget           *line_width;
  GtkWidget           *rect_tool;
  GtkWidget           *roi_label;
  GtkWidget           *z_scale;
  GtkWidget           *z_label;
  GtkWidget           *play;
  GtkWidget           *lo_spin;
  GtkWidget           *hi_spin;
  AiryHistogramWidget *histogram;
  AiryPlot            *line_plot;
  AiryPlot            *axial_plot;
  GtkWidget           *readout;
  GtkWidget           *message;
  GtkWidget           *message_revealer;
  guint                play_source;
  gboolean             updating;
  char                *readout_text;
  /* a hyperstack's channel and time point (the file is read again for
   * another one) */
  char                *path;
  GtkWidget           *hyper_box;
  GtkWidget           *channel_spin;
  GtkWidget           *frame_spin;
  GtkWidget           *composite;
  guint                composite_generation;
  /* a computed result's stack of each wavelength (AiryStack*), shown as
   * channels; NULL for files and single stacks */
  GPtrArray           *mem_channels;
  /* the vacuum wavelength (µm) of each channel, of a computed result or of
   * a file that carries them; NULL: the channels have numbers only */
  GArray              *channel_wavelengths;
  /* a file without a voxel size shows pixels; Properties… sets one, kept
   * for the file's other channels and time points */
  gboolean             uncalibrated;
  /* the first look framed a run's first plane (a partial resident): the
   * full stack frames again */
  gboolean             fit_after_partial;
  /* Go to Best Focus (airy-stack-viewer-focus.c): the criterion, what the
   * last search found, for which resident */
  GtkWidget           *focus_criterion;
  GtkWidget           *focus_label;
  gconstpointer        focus_for;
  double               user_dx, user_dy, user_dz;
  GtkWidget           *calibration;
  /* comparison: the result (current), a pinned reference, and how they are
   * shown: side by side (ref_view, linked), or their difference; show_b
   * puts the reference where the result was (A/B) */
  AiryResident        *current;
  AiryResident        *reference;
  AiryCompare          compare;
  gboolean             show_b;
  AiryStackView       *ref_view;
  GtkWidget           *ref_box;
  GtkWidget           *ref_label;
  GtkWidget           *a_label;
  GtkWidget           *compare_dd;
  gboolean             shows_difference;
  char                *shown_label;   /* what the main view shows, in words */
  AiryColormap         colormap_before_diff;
  /* reads and writes on worker threads */
  guint                file_tasks;
  guint                open_generation;
};

/* airy-stack-viewer.c */
void      _airy_stack_viewer_on_view_changed     (AiryStackView         *view,
                                                  AiryStackViewer       *self);
/* Shows a resident in the main view (transfer full). */
void      _airy_stack_viewer_show_resident       (AiryStackViewer       *self,
                                                  AiryResident          *resident);

/* airy-stack-viewer-toolbar.c */
void      _airy_stack_viewer_class_init_toolbar  (GtkWidgetClass        *widget_class);
GtkWidget *_airy_stack_viewer_build_toolbar      (AiryStackViewer       *self);
void      _airy_stack_viewer_bind_controls       (AiryStackViewer       *self);

/* airy-stack-viewer-profiles.c */
void      _airy_stack_viewer_update_readout      (AiryStackViewer       *self,
                                                  guint                  x,
                                                  guint                  y);
void      _airy_stack_viewer_update_plots        (AiryStackViewer       *self);

/* airy-stack-viewer-compare.c */
AiryResident *_airy_stack_viewer_compared        (AiryStackViewer       *self,
                                                  gboolean               a_side);
void      _airy_stack_viewer_show_compare        (AiryStackViewer       *self);
/* the label above the main view (and ::shown-changed) after what it shows
 * changed */
void      _airy_stack_viewer_update_shown        (AiryStackViewer       *self);
/* src on grid's pixels and planes (pixel ⌊N/2⌋ on the axis): NULL with
 * *same TRUE when it is on them already, else a resampled copy (NULL with
 * *same FALSE: no memory); airy-stack-viewer-compare.c */
AiryStack *_airy_stack_viewer_on_grid            (const AiryStack       *src,
                                                  const AiryStack       *grid,
                                                  gboolean              *same);
void      _airy_stack_viewer_on_compare_selected (GtkDropDown           *dd,
                                                  GParamSpec            *pspec,
                                                  AiryStackViewer       *self);
void      _airy_stack_viewer_action_compare      (GSimpleAction         *action,
                                                  GVariant              *param,
                                                  gpointer               data);
gboolean  _airy_stack_viewer_on_viewer_key       (GtkEventControllerKey *key,
                                                  guint                  keyval,
                                                  guint                  keycode,
                                                  GdkModifierType        state,
                                                  AiryStackViewer       *self);
void      _airy_stack_viewer_on_main_moved       (AiryStackView         *view,
                                                  AiryStackViewer       *self);

/* airy-stack-viewer-hyperstack.c */
void      _airy_stack_viewer_set_uncalibrated    (AiryStackViewer       *self,
                                                  gboolean               uncalibrated);
void      _airy_stack_viewer_show_opened         (AiryStackViewer       *self,
                                                  AiryStack             *stack,
                                                  const char            *path);
void      _airy_stack_viewer_action_properties   (GSimpleAction         *action,
                                                  GVariant              *param,
                                                  gpointer               data);
void      _airy_stack_viewer_on_composite        (GtkCheckButton        *button,
                                                  AiryStackViewer       *self);
void      _airy_stack_viewer_on_hyper_axis       (GtkSpinButton         *spin,
                                                  AiryStackViewer       *self);
int       _airy_stack_viewer_on_channel_input    (GtkSpinButton         *spin,
                                                  double                *value,
                                                  AiryStackViewer       *self);
gboolean  _airy_stack_viewer_on_channel_output   (GtkSpinButton         *spin,
                                                  AiryStackViewer       *self);

/* airy-stack-viewer-export.c */
void      _airy_stack_viewer_action_file         (GSimpleAction         *action,
                                                  GVariant              *param,
                                                  gpointer               data);

/* airy-stack-viewer-focus.c: the Best Focus button, its criterion and the
 * key G, added to the bar beside the z slider */
void      _airy_stack_viewer_add_focus           (AiryStackViewer       *self,
                                                  GActionMap            *actions,
                                                  GtkWidget             *bar);

G_END_DECLS
