#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n.h>
#include <epoxy/gl.h>

#include "airy-stack-view.h"

/* The stack viewer's canvas: XY, and beside it the XZ and YZ sections with
 * the true z spacing, drawn through the colormap in a shader. The view
 * shows a result kept by its backend (AiryResident) and fills its textures
 * through the resident's slot: a CPU result (or a stack from a file) is
 * uploaded from host memory (glTexSubImage2D), a CUDA result is copied on
 * the GPU when the GL context runs on one (CUDA–GL interop), and only the
 * visible slices move: the z slider copies one plane, the cursor one
 * section. Overlays (cursor, scale bar, profile line) are drawn with
 * GtkSnapshot on top of the GL frame. */

#define GAP 6.0

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
  gboolean      center;         /* centre XY at the next layout (set_zoom before a size) */
  double        zoom;           /* screen pixels per image pixel */
  double        ox, oy;         /* XY origin in widget pixels when not fitting */

  gboolean      line_valid;
  double        lx0, ly0, lx1, ly1;

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

  gboolean      want_readback;
  guint8       *readback;
  int           readback_w, readback_h;
};

G_DEFINE_FINAL_TYPE (AiryStackView, airy_stack_view, GTK_TYPE_GL_AREA)

enum { SIGNAL_CHANGED, SIGNAL_HOVER, SIGNAL_READBACK, SIGNAL_SLICE_PATH, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct { double x, y, w, h; } Rect;

typedef struct
{
  Rect xy, xz, yz;
  gboolean sections;
  double zoom;
} Layout;

static double
z_aspect (AiryStack *s, double d)
{
  return (s->dz > 0 && d > 0) ? s->dz / d : 1.0;
}

static void
compute_layout (AiryStackView *self, Layout *L)
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
      double gw = L->sections ? GAP : 0.0;
      zoom = MIN ((W - gw) / (s->width + D * zx), (H - gw) / (s->height + D * zy));
      zoom = MAX (zoom, 1e-3);
      tw = s->width * zoom + (L->sections ? GAP + D * zx * zoom : 0.0);
      th = s->height * zoom + (L->sections ? GAP + D * zy * zoom : 0.0);
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
  L->xy = (Rect) { ox, oy, s->width * zoom, s->height * zoom };
  /* XZ under XY (z downwards), YZ right of XY (z to the right) */
  L->xz = (Rect) { ox, oy + L->xy.h + GAP, L->xy.w, D * zy * zoom };
  L->yz = (Rect) { ox + L->xy.w + GAP, oy, D * zx * zoom, L->xy.h };
}

/* ---- GL ---- */

static GLuint
compile (GLenum type, const char *header, const char *path, GError **error)
{
  g_autoptr(GBytes) bytes = g_resources_lookup_data (path, 0, error);
  const char *sources[2];
  GLint ok = 0;
  GLuint shader;

  if (bytes == NULL)
    return 0;
  sources[0] = header;
  sources[1] = g_bytes_get_data (bytes, NULL);
  shader = glCreateShader (type);
  {
    GLint lengths[2] = { (GLint) strlen (header), (GLint) g_bytes_get_size (bytes) };
    glShaderSource (shader, 2, sources, lengths);
  }
  glCompileShader (shader);
  glGetShaderiv (shader, GL_COMPILE_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetShaderInfoLog (shader, sizeof log, NULL, log);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", path, log);
      glDeleteShader (shader);
      return 0;
    }
  return shader;
}

static void
airy_stack_view_realize (GtkWidget *widget)
{
  AiryStackView *self = AIRY_STACK_VIEW (widget);
  g_autoptr(GError) error = NULL;
  const char *header;
  GLuint vs, fs;
  GLint ok = 0;

  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->realize (widget);
  gtk_gl_area_make_current (GTK_GL_AREA (widget));
  if (gtk_gl_area_get_error (GTK_GL_AREA (widget)) != NULL)
    {
      g_free (self->gl_error);
      self->gl_error = g_strdup (gtk_gl_area_get_error (GTK_GL_AREA (widget))->message);
      return;
    }
  self->use_es = gdk_gl_context_get_use_es (gtk_gl_area_get_context (GTK_GL_AREA (widget)));
  /* device copies only where GL runs on an NVIDIA GPU (AIRY_GL_INTEROP=0
   * turns them off, for comparisons) */
  {
    const char *vendor = (const char *) glGetString (GL_VENDOR);
    const char *renderer = (const char *) glGetString (GL_RENDERER);

    g_free (self->renderer);
    self->renderer = g_strdup (renderer ? renderer : "?");
    self->interop = vendor != NULL && strstr (vendor, "NVIDIA") != NULL
                    && g_strcmp0 (g_getenv ("AIRY_GL_INTEROP"), "0") != 0;
  }
  header = self->use_es ? "#version 300 es\n" : "#version 330 core\n";
  vs = compile (GL_VERTEX_SHADER, header, "/io/github/airyoptics/Airy/shaders/stack.vert", &error);
  fs = vs ? compile (GL_FRAGMENT_SHADER, header, "/io/github/airyoptics/Airy/shaders/stack.frag", &error) : 0;
  if (!vs || !fs)
    {
      self->gl_error = g_strdup (error->message);
      gtk_gl_area_set_error (GTK_GL_AREA (widget), error);
      return;
    }
  self->program = glCreateProgram ();
  glAttachShader (self->program, vs);
  glAttachShader (self->program, fs);
  glBindAttribLocation (self->program, 0, "position");
  glBindAttribLocation (self->program, 1, "texcoord");
  glLinkProgram (self->program);
  glDeleteShader (vs);
  glDeleteShader (fs);
  glGetProgramiv (self->program, GL_LINK_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetProgramInfoLog (self->program, sizeof log, NULL, log);
      self->gl_error = g_strdup_printf ("shader link: %s", log);
      return;
    }
  glGenVertexArrays (1, &self->vao);
  glGenBuffers (1, &self->vbo);
  glBindVertexArray (self->vao);
  glBindBuffer (GL_ARRAY_BUFFER, self->vbo);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof (float), (void *) 0);
  glEnableVertexAttribArray (1);
  glVertexAttribPointer (1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof (float), (void *) (2 * sizeof (float)));
  glBindVertexArray (0);
  glGenTextures (3, self->tex);
  glGenTextures (1, &self->lut);
  memset (self->tex_w, 0, sizeof self->tex_w);
  memset (self->tex_h, 0, sizeof self->tex_h);
  self->dirty[0] = self->dirty[1] = self->dirty[2] = TRUE;
  self->lut_dirty = TRUE;
}

static void
airy_stack_view_unrealize (GtkWidget *widget)
{
  AiryStackView *self = AIRY_STACK_VIEW (widget);

  gtk_gl_area_make_current (GTK_GL_AREA (widget));
  if (gtk_gl_area_get_error (GTK_GL_AREA (widget)) == NULL && self->program)
    {
      /* the backends' registrations of these textures go first */
      airy_backends_gl_release (gtk_gl_area_get_context (GTK_GL_AREA (widget)));
      glDeleteTextures (3, self->tex);
      glDeleteTextures (1, &self->lut);
      glDeleteBuffers (1, &self->vbo);
      glDeleteVertexArrays (1, &self->vao);
      glDeleteProgram (self->program);
    }
  self->program = 0;
  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->unrealize (widget);
}

static void
texture_upload (const float *data, guint width, guint height, gpointer user_data)
{
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glTexSubImage2D (GL_TEXTURE_2D, 0, 0, 0, (GLsizei) width, (GLsizei) height, GL_RED, GL_FLOAT, data);
}

static gboolean
emit_slice_path (gpointer data)
{
  AiryStackView *self = data;

  self->slice_path_idle = 0;
  g_signal_emit (self, signals[SIGNAL_SLICE_PATH], 0);
  return G_SOURCE_REMOVE;
}

static void
set_slice_path (AiryStackView *self, const AiryTexture *texture)
{
  g_autofree char *path = NULL;

  if (texture->path == AIRY_TEXTURE_DEVICE)
    path = g_strdup_printf (_("slices: copied on GPU %d (CUDA–GL interop)"), texture->device);
  else if (g_str_equal (airy_resident_get_backend_name (self->resident), "cpu"))
    path = g_strdup (_("slices: uploaded from host memory (a CPU result)"));
  else if (!self->interop)
    path = g_strdup_printf (_("slices: uploaded from host memory (GL renderer %s is not an NVIDIA GPU)"),
                            self->renderer);
  else
    path = g_strdup_printf (_("slices: uploaded from host memory (%s)"), texture->note ? _(texture->note) : "?");
  if (g_strcmp0 (path, self->slice_path) == 0)
    return;
  g_free (self->slice_path);
  self->slice_path = g_steal_pointer (&path);
  g_info ("%s", self->slice_path);
  /* told after the frame: widgets must not change while GTK renders */
  if (self->slice_path_idle == 0)
    self->slice_path_idle = g_idle_add (emit_slice_path, self);
}

/* Texture i holds the slice, through the resident's slot. */
static void
fill_texture (AiryStackView *self, guint i, const AirySlice *slice)
{
  GLint filter = (self->linear && !self->use_es) ? GL_LINEAR : GL_NEAREST;
  g_autoptr(GError) error = NULL;
  AiryTexture texture = { 0 };
  guint w, h;

  airy_slice_size (self->stack, slice, &w, &h);
  glBindTexture (GL_TEXTURE_2D, self->tex[i]);
  if (self->tex_w[i] != w || self->tex_h[i] != h)
    {
      /* new storage: a backend's registration of the old one is stale */
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, (GLsizei) w, (GLsizei) h, 0, GL_RED, GL_FLOAT, NULL);
      self->tex_w[i] = w;
      self->tex_h[i] = h;
      self->tex_generation[i]++;
    }
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  texture.texture = self->tex[i];
  texture.generation = self->tex_generation[i];
  texture.context = gtk_gl_area_get_context (GTK_GL_AREA (self));
  texture.interop = self->interop;
  texture.upload = texture_upload;
  texture.user_data = self;
  if (!airy_resident_to_texture (self->resident, slice, &texture, &error))
    {
      g_free (self->gl_error);
      self->gl_error = g_strdup (error->message);
      return;
    }
  /* a device copy wrote the texture behind GL's back: rebind it */
  glBindTexture (GL_TEXTURE_2D, self->tex[i]);
  set_slice_path (self, &texture);
}

static AirySlice
xy_slice (AiryStackView *self)
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
  slice = xy_slice (self);
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
  AirySlice slice = xy_slice (self);

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
  AirySlice slice = xy_slice (self);

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
  AirySlice slice = xy_slice (self);

  return airy_resident_stats (self->resident, &slice, stats, error);
}

static void
upload_dirty (AiryStackView *self)
{
  AiryStack *s = self->stack;

  if (self->lut_dirty)
    {
      guint8 lut[256 * 3];

      airy_colormap_lut (self->display.colormap, self->display.inverted, lut);
      glBindTexture (GL_TEXTURE_2D, self->lut);
      glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
      glTexImage2D (GL_TEXTURE_2D, 0, GL_RGB8, 256, 1, 0, GL_RGB, GL_UNSIGNED_BYTE, lut);
      glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      self->lut_dirty = FALSE;
    }
  if (s == NULL)
    return;
  if (self->dirty[0])
    {
      AirySlice slice = xy_slice (self);
      fill_texture (self, 0, &slice);
    }
  if (s->depth > 1 && self->sections)
    {
      if (self->dirty[1])
        fill_texture (self, 1, &(AirySlice) { AIRY_SLICE_XZ, self->cy });
      if (self->dirty[2])
        fill_texture (self, 2, &(AirySlice) { AIRY_SLICE_YZ, self->cx });
      self->dirty[1] = self->dirty[2] = FALSE;
    }
  self->dirty[0] = FALSE;
}

/* One quad: rect in widget pixels → NDC; texture corners (u, v) at the
 * rect's top-left, top-right, bottom-left, bottom-right. */
static void
draw_quad (AiryStackView *self, Rect r, const float tc[8], double W, double H)
{
  float x0 = (float) (2.0 * r.x / W - 1.0), x1 = (float) (2.0 * (r.x + r.w) / W - 1.0);
  float y0 = (float) (1.0 - 2.0 * r.y / H), y1 = (float) (1.0 - 2.0 * (r.y + r.h) / H);
  float v[16] = {
    x0, y0, tc[0], tc[1],
    x1, y0, tc[2], tc[3],
    x0, y1, tc[4], tc[5],
    x1, y1, tc[6], tc[7],
  };

  glBindBuffer (GL_ARRAY_BUFFER, self->vbo);
  glBufferData (GL_ARRAY_BUFFER, sizeof v, v, GL_STREAM_DRAW);
  glDrawArrays (GL_TRIANGLE_STRIP, 0, 4);
}

static gboolean
airy_stack_view_render (GtkGLArea *area, GdkGLContext *context)
{
  AiryStackView *self = AIRY_STACK_VIEW (area);
  double W = gtk_widget_get_width (GTK_WIDGET (area)), H = gtk_widget_get_height (GTK_WIDGET (area));
  Layout L;

  glClearColor (0.12f, 0.12f, 0.13f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (self->program && self->stack && W > 0 && H > 0)
    {
      /* texture rows run top to bottom, like the image */
      static const float xy_tc[8] = { 0, 0, 1, 0, 0, 1, 1, 1 };
      /* YZ: z runs left to right (texture t), y top to bottom (texture s) */
      static const float yz_tc[8] = { 0, 0, 0, 1, 1, 0, 1, 1 };

      upload_dirty (self);
      compute_layout (self, &L);
      glUseProgram (self->program);
      glUniform1f (glGetUniformLocation (self->program, "lo"), self->display.lo);
      glUniform1f (glGetUniformLocation (self->program, "hi"), self->display.hi);
      glUniform1f (glGetUniformLocation (self->program, "gamma_"), self->display.gamma);
      glUniform1f (glGetUniformLocation (self->program, "log_floor"), airy_display_log_floor (&self->display));
      glUniform1i (glGetUniformLocation (self->program, "scale"), (int) self->display.scale);
      glUniform1i (glGetUniformLocation (self->program, "slice"), 0);
      glUniform1i (glGetUniformLocation (self->program, "lut"), 1);
      glActiveTexture (GL_TEXTURE1);
      glBindTexture (GL_TEXTURE_2D, self->lut);
      glActiveTexture (GL_TEXTURE0);
      glBindVertexArray (self->vao);
      glBindTexture (GL_TEXTURE_2D, self->tex[0]);
      draw_quad (self, L.xy, xy_tc, W, H);
      if (L.sections)
        {
          glBindTexture (GL_TEXTURE_2D, self->tex[1]);
          draw_quad (self, L.xz, xy_tc, W, H);
          glBindTexture (GL_TEXTURE_2D, self->tex[2]);
          draw_quad (self, L.yz, yz_tc, W, H);
        }
      glBindVertexArray (0);
      glUseProgram (0);
    }

  if (self->want_readback)
    {
      int scale = gtk_widget_get_scale_factor (GTK_WIDGET (area));
      int w = (int) W * scale, h = (int) H * scale, y;
      g_autofree guint8 *flipped = g_malloc ((gsize) w * h * 4);

      glPixelStorei (GL_PACK_ALIGNMENT, 1);
      glReadPixels (0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, flipped);
      g_free (self->readback);
      self->readback = g_malloc ((gsize) w * h * 4);
      for (y = 0; y < h; y++)   /* GL's origin is bottom-left */
        memcpy (self->readback + (gsize) y * w * 4, flipped + (gsize) (h - 1 - y) * w * 4, (gsize) w * 4);
      self->readback_w = w;
      self->readback_h = h;
      self->want_readback = FALSE;
      g_signal_emit (self, signals[SIGNAL_READBACK], 0);
    }
  return TRUE;
}

/* ---- overlays ---- */

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
  Layout L;

  *pixels = 0.0;
  if (self->stack == NULL || self->stack->dx <= 0)
    return 0.0;
  compute_layout (self, &L);
  /* at most a quarter of the XY view's width */
  return airy_scale_bar (L.zoom / self->stack->dx, MAX (L.xy.w, 40.0) / 4.0, pixels);
}

static void
airy_stack_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  AiryStackView *self = AIRY_STACK_VIEW (widget);
  static const GdkRGBA cursor = { 0.3, 0.8, 1.0, 0.7 };
  static const GdkRGBA white = { 1, 1, 1, 0.95 };
  static const GdkRGBA line = { 1.0, 0.85, 0.1, 0.95 };
  Layout L;
  double px, len;

  GTK_WIDGET_CLASS (airy_stack_view_parent_class)->snapshot (widget, snapshot);
  if (self->stack == NULL)
    return;
  compute_layout (self, &L);

  /* the cursor, linked across the three views */
  {
    double x = L.xy.x + (self->cx + 0.5) * L.zoom, y = L.xy.y + (self->cy + 0.5) * L.zoom;
    append_line (snapshot, L.xy.x, y, L.xy.x + L.xy.w, y, &cursor);
    append_line (snapshot, x, L.xy.y, x, L.xy.y + L.xy.h, &cursor);
    if (L.sections)
      {
        double zz = (self->z + 0.5) / self->stack->depth;
        append_line (snapshot, x, L.xz.y, x, L.xz.y + L.xz.h, &cursor);
        append_line (snapshot, L.xz.x, L.xz.y + zz * L.xz.h, L.xz.x + L.xz.w, L.xz.y + zz * L.xz.h, &cursor);
        append_line (snapshot, L.yz.x, y, L.yz.x + L.yz.w, y, &cursor);
        append_line (snapshot, L.yz.x + zz * L.yz.w, L.yz.y, L.yz.x + zz * L.yz.w, L.yz.y + L.yz.h, &cursor);
      }
  }

  if (self->line_valid)
    append_line (snapshot, L.xy.x + (self->lx0 + 0.5) * L.zoom, L.xy.y + (self->ly0 + 0.5) * L.zoom,
                 L.xy.x + (self->lx1 + 0.5) * L.zoom, L.xy.y + (self->ly1 + 0.5) * L.zoom, &line);

  /* scale bar, bottom left of XY */
  len = airy_stack_view_get_scale_bar (self, &px);
  if (len > 0 && px >= 4)
    {
      g_autofree char *label = airy_format_length (len);
      PangoLayout *layout = gtk_widget_create_pango_layout (widget, label);
      double bx = L.xy.x + 10, by = L.xy.y + L.xy.h - 12;
      int tw, th;

      gtk_snapshot_append_color (snapshot, &white, &GRAPHENE_RECT_INIT (bx, by, px, 3));
      pango_layout_get_pixel_size (layout, &tw, &th);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (bx + px / 2 - tw / 2.0, by - th - 2));
      gtk_snapshot_append_layout (snapshot, layout, &white);
      gtk_snapshot_restore (snapshot);
      g_object_unref (layout);
    }
}

/* ---- input ---- */

gboolean
airy_stack_view_widget_to_image (AiryStackView *self,
                                 double         wx,
                                 double         wy,
                                 double        *ix,
                                 double        *iy)
{
  Layout L;

  if (self->stack == NULL)
    return FALSE;
  compute_layout (self, &L);
  *ix = (wx - L.xy.x) / L.zoom - 0.5;
  *iy = (wy - L.xy.y) / L.zoom - 0.5;
  return wx >= L.xy.x && wx < L.xy.x + L.xy.w && wy >= L.xy.y && wy < L.xy.y + L.xy.h;
}

static void
set_cursor_from_point (AiryStackView *self, double wx, double wy)
{
  AiryStack *s = self->stack;
  Layout L;

  compute_layout (self, &L);
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
  Layout L;

  if (!self->fit)
    {
      compute_layout (self, &L);   /* settles a pending centring */
      return;
    }
  compute_layout (self, &L);
  self->fit = FALSE;
  self->zoom = L.zoom;
  self->ox = L.xy.x;
  self->oy = L.xy.y;
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
          self->fit = self->drag_was_fit;
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
airy_stack_view_class_init (AiryStackViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkGLAreaClass *area_class = GTK_GL_AREA_CLASS (klass);

  object_class->finalize = airy_stack_view_finalize;
  widget_class->realize = airy_stack_view_realize;
  widget_class->unrealize = airy_stack_view_unrealize;
  widget_class->snapshot = airy_stack_view_snapshot;
  area_class->render = airy_stack_view_render;

  /* the cursor, the z plane or the profile line changed */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* the pointer is over image pixel (x, y) */
  signals[SIGNAL_HOVER] = g_signal_new ("hover", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  signals[SIGNAL_READBACK] = g_signal_new ("readback", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* airy_stack_view_get_slice_path() changed */
  signals[SIGNAL_SLICE_PATH] = g_signal_new ("slice-path-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
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
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

guint
airy_stack_view_get_z (AiryStackView *self)
{
  return self->z;
}

void
airy_stack_view_set_display (AiryStackView     *self,
                             const AiryDisplay *display)
{
  self->lut_dirty |= display->colormap != self->display.colormap || display->inverted != self->display.inverted;
  self->display = *display;
  invalidate (self, FALSE, FALSE, FALSE);
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
  self->linear = linear;
  invalidate (self, TRUE, TRUE, TRUE);
}

void
airy_stack_view_set_mip (AiryStackView *self,
                         gboolean       mip)
{
  if (mip != self->show_mip)
    self->xy_host_valid = FALSE;
  self->show_mip = mip;
  invalidate (self, TRUE, FALSE, FALSE);
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
  self->sections = sections;
  invalidate (self, FALSE, TRUE, TRUE);
}

void
airy_stack_view_set_tool (AiryStackView *self,
                          AiryViewTool   tool)
{
  self->tool = tool;
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
  self->fit = FALSE;
  self->zoom = zoom;
  self->center = TRUE;      /* at the next layout, when the size is known */
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
airy_stack_view_get_zoom (AiryStackView *self)
{
  Layout L;

  compute_layout (self, &L);
  return L.zoom;
}

void
airy_stack_view_fit (AiryStackView *self)
{
  self->fit = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
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
