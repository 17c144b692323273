#define G_LOG_DOMAIN "airy-stack-view"

#include "config.h"

#include <string.h>
#include <glib/gi18n.h>

#include "airy-stack-view-private.h"

/* The stack view's GL: the shader program made at realize, the textures
 * filled through the resident's slot (a host upload with glTexSubImage2D,
 * or a copy on the GPU where GL runs on one), and the frame drawn through
 * the colormap LUT. */

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

void
_airy_stack_view_gl_realize (AiryStackView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  g_autoptr(GError) error = NULL;
  const char *header;
  GLuint vs, fs;
  GLint ok = 0;

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
  /* a composite's textures went with the last context */
  self->comp_dirty = self->n_composite > 0;
}

void
_airy_stack_view_gl_unrealize (AiryStackView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);

  gtk_gl_area_make_current (GTK_GL_AREA (widget));
  if (gtk_gl_area_get_error (GTK_GL_AREA (widget)) == NULL && self->program)
    {
      /* the backends' registrations of these textures go first */
      airy_backends_gl_release (gtk_gl_area_get_context (GTK_GL_AREA (widget)));
      glDeleteTextures (3, self->tex);
      glDeleteTextures (1, &self->lut);
      for (guint c = 0; c < AIRY_STACK_VIEW_MAX_CHANNELS; c++)
        if (self->ctex[c][0])
          {
            glDeleteTextures (3, self->ctex[c]);
            glDeleteTextures (1, &self->comp_lut[c]);
          }
      memset (self->ctex, 0, sizeof self->ctex);
      glDeleteBuffers (1, &self->vbo);
      glDeleteVertexArrays (1, &self->vao);
      glDeleteProgram (self->program);
    }
  self->program = 0;
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
  _airy_stack_view_notify (self, AIRY_STACK_VIEW_PROP_SLICE_PATH);
  return G_SOURCE_REMOVE;
}

void
_airy_stack_view_set_slice_path (AiryStackView *self, const AiryTexture *texture)
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

/* The texture tex (with its size and generation) holds the slice of a
 * resident, through its slot. */
static void
fill_texture_of (AiryStackView *self, AiryResident *resident, GLuint tex, guint *tex_w, guint *tex_h,
                 guint *generation, const AirySlice *slice)
{
  GLint filter = (self->linear && !self->use_es) ? GL_LINEAR : GL_NEAREST;
  g_autoptr(GError) error = NULL;
  AiryTexture texture = { 0 };
  guint w, h;

  airy_slice_size (resident->stack, slice, &w, &h);
  glBindTexture (GL_TEXTURE_2D, tex);
  if (*tex_w != w || *tex_h != h)
    {
      /* new storage: a backend's registration of the old one is stale */
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, (GLsizei) w, (GLsizei) h, 0, GL_RED, GL_FLOAT, NULL);
      *tex_w = w;
      *tex_h = h;
      (*generation)++;
    }
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  texture.texture = tex;
  texture.generation = *generation;
  texture.context = gtk_gl_area_get_context (GTK_GL_AREA (self));
  texture.interop = self->interop;
  texture.upload = texture_upload;
  texture.user_data = self;
  if (!airy_resident_to_texture (resident, slice, &texture, &error))
    {
      g_free (self->gl_error);
      self->gl_error = g_strdup (error->message);
      return;
    }
  /* a device copy wrote the texture behind GL's back: rebind it */
  glBindTexture (GL_TEXTURE_2D, tex);
  if (resident == self->resident)
    _airy_stack_view_set_slice_path (self, &texture);
}

/* Texture i (xy, xz, yz) holds the shown stack's slice. */
static void
fill_texture (AiryStackView *self, guint i, const AirySlice *slice)
{
  fill_texture_of (self, self->resident, self->tex[i], &self->tex_w[i], &self->tex_h[i],
                   &self->tex_generation[i], slice);
}

/* The composite's channels: their slices and their ramps from black. */
static void
upload_composite (AiryStackView *self)
{
  AirySlice slices[3] = { _airy_stack_view_xy_slice (self), { AIRY_SLICE_XZ, self->cy }, { AIRY_SLICE_YZ, self->cx } };
  guint c, i, k;

  if (!self->comp_dirty)
    return;
  for (c = 0; c < self->n_composite; c++)
    {
      guint8 ramp[256 * 3];

      if (self->ctex[c][0] == 0)
        {
          glGenTextures (3, self->ctex[c]);
          glGenTextures (1, &self->comp_lut[c]);
          memset (self->ctex_w[c], 0, sizeof self->ctex_w[c]);
          memset (self->ctex_h[c], 0, sizeof self->ctex_h[c]);
        }
      for (i = 0; i < (self->stack->depth > 1 && self->sections ? 3u : 1u); i++)
        fill_texture_of (self, self->composite[c], self->ctex[c][i], &self->ctex_w[c][i], &self->ctex_h[c][i],
                         &self->ctex_generation[c][i], &slices[i]);
      for (k = 0; k < 256; k++)
        {
          ramp[3 * k] = (guint8) (self->comp_color[c].red * k + 0.5);
          ramp[3 * k + 1] = (guint8) (self->comp_color[c].green * k + 0.5);
          ramp[3 * k + 2] = (guint8) (self->comp_color[c].blue * k + 0.5);
        }
      glBindTexture (GL_TEXTURE_2D, self->comp_lut[c]);
      glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
      glTexImage2D (GL_TEXTURE_2D, 0, GL_RGB8, 256, 1, 0, GL_RGB, GL_UNSIGNED_BYTE, ramp);
      glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    }
  self->comp_dirty = FALSE;
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
      AirySlice slice = _airy_stack_view_xy_slice (self);
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
draw_quad (AiryStackView *self, AiryRect r, const float tc[8], double W, double H)
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

gboolean
_airy_stack_view_render (GtkGLArea *area, GdkGLContext *context)
{
  AiryStackView *self = AIRY_STACK_VIEW (area);
  double W = gtk_widget_get_width (GTK_WIDGET (area)), H = gtk_widget_get_height (GTK_WIDGET (area));
  AiryViewLayout L;

  glClearColor (0.12f, 0.12f, 0.13f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (self->program && self->stack && W > 0 && H > 0)
    {
      float u0, u1, v0, v1;
      upload_dirty (self);
      _airy_stack_view_compute_layout (self, &L);
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
      /* the visible part of XY: texture rows run top to bottom, like the
       * image; the sections show the same x (XZ) and y (YZ) range */
      u0 = (float) ((L.vxy.x - L.xy.x) / L.xy.w);
      u1 = (float) ((L.vxy.x + L.vxy.w - L.xy.x) / L.xy.w);
      v0 = (float) ((L.vxy.y - L.xy.y) / L.xy.h);
      v1 = (float) ((L.vxy.y + L.vxy.h - L.xy.y) / L.xy.h);
      if (L.vxy.w > 0 && L.vxy.h > 0)
        {
          const float xy_tc[8] = { u0, v0, u1, v0, u0, v1, u1, v1 };
          const float xz_tc[8] = { u0, 0, u1, 0, u0, 1, u1, 1 };
          /* YZ: z runs left to right (texture t), y top to bottom (s) */
          const float yz_tc[8] = { v0, 0, v0, 1, v1, 0, v1, 1 };

          guint c, n = MAX (self->n_composite, 1);

          upload_composite (self);
          for (c = 0; c < n; c++)
            {
              const GLuint *tex = self->n_composite ? self->ctex[c] : self->tex;

              if (self->n_composite)
                {
                  /* each channel through its own limits and ramp, added */
                  glUniform1f (glGetUniformLocation (self->program, "lo"), self->comp_lo[c]);
                  glUniform1f (glGetUniformLocation (self->program, "hi"), self->comp_hi[c]);
                  glUniform1i (glGetUniformLocation (self->program, "scale"), 0);
                  glUniform1f (glGetUniformLocation (self->program, "gamma_"), 1.0f);
                  glActiveTexture (GL_TEXTURE1);
                  glBindTexture (GL_TEXTURE_2D, self->comp_lut[c]);
                  glActiveTexture (GL_TEXTURE0);
                  if (c > 0)
                    {
                      glEnable (GL_BLEND);
                      glBlendFunc (GL_ONE, GL_ONE);
                    }
                }
              glBindTexture (GL_TEXTURE_2D, tex[0]);
              draw_quad (self, L.vxy, xy_tc, W, H);
              if (L.sections)
                {
                  glBindTexture (GL_TEXTURE_2D, tex[1]);
                  draw_quad (self, L.xz, xz_tc, W, H);
                  glBindTexture (GL_TEXTURE_2D, tex[2]);
                  draw_quad (self, L.yz, yz_tc, W, H);
                }
            }
          glDisable (GL_BLEND);
        }
      glBindVertexArray (0);
      glUseProgram (0);
      self->drawn_serial = self->resident_serial;
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
      _airy_stack_view_emit_readback (self);
    }
  return TRUE;
}
