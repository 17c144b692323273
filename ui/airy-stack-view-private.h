/* airy-stack-view-private.h: the stack view's state, shared by its units:
 * airy-stack-view.c (the object, properties, signals, the shown plane),
 * airy-stack-view-zoom.c (layout, zoom and pan), airy-stack-view-input.c
 * (pointer and keys), airy-stack-view-gl.c (realize, upload through the
 * resident's slot, render) and airy-stack-view-overlays.c (cursor, scale
 * bar, profile line). */
#pragma once

#include <epoxy/gl.h>

#include "airy-stack-view.h"

G_BEGIN_DECLS

/* between XY and its sections, in widget pixels */
#define AIRY_STACK_VIEW_GAP 6.0

struct _AiryStackView
{
  GtkGLArea     parent_instance;

  AiryResident *resident;
  AiryStack    *stack;          /* the resident's geometry (data NULL on a GPU) */
  float        *xy_host;        /* the shown plane in host memory, fetched on demand */
  gboolean      xy_host_valid;
  guint         z;
  guint         cx, cy;         /* cursor, image pixels */
  AiryDisplay   display;
  gboolean      linear;
  gboolean      show_mip;
  gboolean      sections;
  AiryViewTool  tool;

  gboolean      fit;
  gboolean      fit_region;     /* fitting frames the region below, not the whole image */
  double        rx, ry, rw, rh; /* that region, image pixels */
  gboolean      center;         /* centre XY at the next layout (set_zoom before a size) */
  double        pointer_x, pointer_y;   /* the pointer over the canvas, widget pixels */
  gboolean      pointer_in;
  gboolean      pixel_units;    /* uncalibrated: the scale bar in pixels */
  double        zoom;           /* screen pixels per image pixel */
  double        ox, oy;         /* XY origin in widget pixels when not fitting */
  double        shown_zoom;     /* the effective zoom last notified */

  gboolean      line_valid;
  double        lx0, ly0, lx1, ly1;
  guint         line_width;     /* the profile's width in image pixels (drawn when > 1) */
  gboolean      roi_valid;      /* the rectangle tool's, corners inclusive */
  guint         qx0, qy0, qx1, qy1;
  gboolean      dragging_roi;

  /* drag state */
  double        drag_x, drag_y, drag_ox, drag_oy;
  gboolean      dragging_line;
  gboolean      drag_was_fit;

  /* GL */
  GLuint        program;
  GLuint        vao, vbo;
  GLuint        tex[3];         /* xy, xz, yz */
  guint         tex_w[3], tex_h[3];
  guint         tex_generation[3];  /* bumped when a texture is re-specified */
  gboolean      interop;        /* the GL context runs on an NVIDIA GPU */
  char         *renderer;
  char         *slice_path;     /* how slices reach GL, said in the status bar */
  guint         slice_path_idle;
  GLuint        lut;
  gboolean      dirty[3];
  gboolean      lut_dirty;
  gboolean      use_es;
  char         *gl_error;

  /* composite: channels drawn over each other, each through a ramp from
   * black to its colour between its own limits (added in GL) */
  guint         n_composite;
  AiryResident *composite[AIRY_STACK_VIEW_MAX_CHANNELS];
  float         comp_lo[AIRY_STACK_VIEW_MAX_CHANNELS], comp_hi[AIRY_STACK_VIEW_MAX_CHANNELS];
  GdkRGBA       comp_color[AIRY_STACK_VIEW_MAX_CHANNELS];
  GLuint        ctex[AIRY_STACK_VIEW_MAX_CHANNELS][3];
  guint         ctex_w[AIRY_STACK_VIEW_MAX_CHANNELS][3], ctex_h[AIRY_STACK_VIEW_MAX_CHANNELS][3];
  guint         ctex_generation[AIRY_STACK_VIEW_MAX_CHANNELS][3];
  GLuint        comp_lut[AIRY_STACK_VIEW_MAX_CHANNELS];
  gboolean      comp_dirty;     /* every channel's textures and ramps */

  /* which resident the last frame drew: set_resident counts, render
   * takes the count (what "the first frame of a result" means) */
  guint         resident_serial;
  guint         drawn_serial;

  /* on GTK's cairo renderer: the slices colormapped at their own size
   * (airy-stack-view-cairo.c), with the display each was made with */
  cairo_surface_t *sw_surface[3];
  gboolean      sw_dirty[3];
  AiryDisplay   sw_display[3];

  gboolean      want_readback;
  guint8       *readback;
  int           readback_w, readback_h;
};

enum
{
  AIRY_STACK_VIEW_PROP_0,
  AIRY_STACK_VIEW_PROP_Z,
  AIRY_STACK_VIEW_PROP_ZOOM,
  AIRY_STACK_VIEW_PROP_FIT,
  AIRY_STACK_VIEW_PROP_MIP,
  AIRY_STACK_VIEW_PROP_SECTIONS,
  AIRY_STACK_VIEW_PROP_LINEAR,
  AIRY_STACK_VIEW_PROP_TOOL,
  AIRY_STACK_VIEW_PROP_COLORMAP,
  AIRY_STACK_VIEW_PROP_INVERTED,
  AIRY_STACK_VIEW_PROP_SCALE,
  AIRY_STACK_VIEW_PROP_GAMMA,
  AIRY_STACK_VIEW_PROP_LIMIT_LOW,
  AIRY_STACK_VIEW_PROP_LIMIT_HIGH,
  AIRY_STACK_VIEW_PROP_SLICE_PATH,
  AIRY_STACK_VIEW_N_PROPS
};

typedef struct { double x, y, w, h; } AiryRect;

/* Fiji's orthogonal views: XY shows part of the image (xy is the whole
 * image's place, which may reach beyond the canvas; vxy the part on
 * screen), XZ below and YZ beside it show the same x and y range and all
 * of z, at the true z spacing up to 35 % of the canvas and squeezed
 * beyond: zoomed in, the sections stay in view. */
typedef struct
{
  AiryRect xy;      /* the whole XY image */
  AiryRect vxy;     /* its visible part: xy within the XY viewport */
  AiryRect xz, yz;  /* the sections beside vxy */
  AiryRect viewport;
  gboolean sections;
  double   zoom;
} AiryViewLayout;

/* airy-stack-view.c */
AirySlice _airy_stack_view_xy_slice       (AiryStackView  *self);
void      _airy_stack_view_notify         (AiryStackView  *self,
                                           guint           prop_id);
void      _airy_stack_view_emit_readback  (AiryStackView  *self);
void      _airy_stack_view_emit_changed   (AiryStackView  *self);
void      _airy_stack_view_emit_moved     (AiryStackView  *self);
void      _airy_stack_view_emit_hover     (AiryStackView  *self,
                                           double          x,
                                           double          y);

/* airy-stack-view-zoom.c */
void      _airy_stack_view_compute_layout (AiryStackView  *self,
                                           AiryViewLayout *layout);
/* the zoom the next frame shows, without settling a pending centring */
double    _airy_stack_view_effective_zoom (AiryStackView  *self);
/* after anything that can change the effective zoom: :zoom is notified
 * when it did */
void      _airy_stack_view_update_zoom    (AiryStackView  *self);
void      _airy_stack_view_set_fit        (AiryStackView  *self,
                                           gboolean        fit);
/* a fit becomes the zoom and position it shows */
void      _airy_stack_view_freeze_layout  (AiryStackView  *self);
/* a pan never leaves the viewport without image */
void      _airy_stack_view_clamp_pan      (AiryStackView  *self);
void      _airy_stack_view_zoom_at        (AiryStackView  *self,
                                           double          factor,
                                           double          px,
                                           double          py);
/* the middle of what XY shows, widget pixels */
void      _airy_stack_view_visible_centre (AiryStackView  *self,
                                           double         *x,
                                           double         *y);

/* airy-stack-view-input.c */
void      _airy_stack_view_add_controllers (AiryStackView *self);

/* airy-stack-view-gl.c */
void      _airy_stack_view_gl_realize     (AiryStackView  *self);
void      _airy_stack_view_gl_unrealize   (AiryStackView  *self);
gboolean  _airy_stack_view_render         (GtkGLArea      *area,
                                           GdkGLContext   *context);
/* the status bar's "slices: …" for how the last slice got there */
void      _airy_stack_view_set_slice_path (AiryStackView  *self,
                                           const AiryTexture *texture);

/* airy-stack-view-cairo.c */
gboolean  _airy_stack_view_uses_cairo     (AiryStackView  *self);
void      _airy_stack_view_cairo_snapshot (AiryStackView  *self,
                                           GtkSnapshot    *snapshot);
void      _airy_stack_view_cairo_clear    (AiryStackView  *self);

/* airy-stack-view-overlays.c */
void      _airy_stack_view_draw_overlays  (AiryStackView  *self,
                                           GtkSnapshot    *snapshot);

G_END_DECLS
