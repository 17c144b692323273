#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <string.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"
#include "airy-image-file.h"
#include "airy-error.h"
#include "airy-view-math.h"
#include <json-glib/json-glib.h>

/* What the viewer writes: the view and the sections as PNG, the raw
 * slice, the stack or a section as TIFF, the profiles as CSV; the file
 * I/O on worker threads (opens too), and the file choosers of the
 * viewer.open and viewer.export… actions. */

guint8 *
airy_stack_viewer_render_view (AiryStackViewer *self,
                               guint            scale,
                               gboolean         bar,
                               guint           *width,
                               guint           *height)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  const AiryDisplay *d = airy_stack_view_get_display (self->view);
  g_autofree guint8 *rgb = NULL;
  guint8 *out;
  guint W, H, y, x;

  if (s == NULL)
    return NULL;
  scale = CLAMP (scale, 1, 8);
  rgb = g_malloc (airy_stack_plane_size (s) * 3);
  airy_display_render_rgb (d, airy_stack_view_get_xy_plane (self->view), s->height, s->width, rgb);
  W = s->width * scale;
  H = s->height * scale;
  out = g_malloc ((gsize) W * H * 3);
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      memcpy (out + ((gsize) y * W + x) * 3, rgb + ((gsize) (y / scale) * s->width + x / scale) * 3, 3);

  if (bar && s->dx > 0)
    {
      /* the same bar as on screen: at most a quarter of the width */
      double px, len = airy_scale_bar (scale / s->dx, W / 4.0, &px);
      cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) W, (int) H);
      unsigned char *data;
      int stride;
      cairo_t *cr;

      cairo_surface_flush (surface);
      data = cairo_image_surface_get_data (surface);
      stride = cairo_image_surface_get_stride (surface);
      for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
          {
            guint8 *p = out + ((gsize) y * W + x) * 3;
            *(guint32 *) (data + (gsize) y * stride + x * 4) = ((guint32) p[0] << 16) | ((guint32) p[1] << 8) | p[2];
          }
      cairo_surface_mark_dirty (surface);
      if (len > 0 && px >= 4)
        {
          g_autofree char *label = airy_format_length (len);
          double bx = 10 * scale, by = H - 12.0 * scale;

          cr = cairo_create (surface);
          cairo_set_source_rgb (cr, 1, 1, 1);
          cairo_rectangle (cr, bx, by, px, 3 * scale);
          cairo_fill (cr);
          cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
          cairo_set_font_size (cr, 11 * scale);
          cairo_move_to (cr, bx, by - 3 * scale);
          cairo_show_text (cr, label);
          cairo_destroy (cr);
        }
      cairo_surface_flush (surface);
      for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
          {
            guint32 v = *(guint32 *) (data + (gsize) y * stride + x * 4);
            guint8 *p = out + ((gsize) y * W + x) * 3;
            p[0] = (v >> 16) & 0xff;
            p[1] = (v >> 8) & 0xff;
            p[2] = v & 0xff;
          }
      cairo_surface_destroy (surface);
    }
  *width = W;
  *height = H;
  return out;
}

/* The main view as the screen shows it (zoom and pan, sections, scale
 * bar, cursor, line and rectangle), RGB, rendered by the window's own
 * renderer from the widget's snapshot: the pixels of the screen. */
guint8 *
airy_stack_viewer_render_screen (AiryStackViewer *self,
                                 guint           *width,
                                 guint           *height)
{
  GtkWidget *widget = GTK_WIDGET (self->view);
  GtkNative *native = gtk_widget_get_native (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget), stride;
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree guint8 *bgra = NULL;
  GtkSnapshot *snapshot;
  guint8 *out;
  gsize k;

  if (native == NULL || gsk_renderer_is_realized (gtk_native_get_renderer (native)) == FALSE || w <= 0 || h <= 0)
    return NULL;
  paintable = gtk_widget_paintable_new (widget);
  snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, w, h);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    return NULL;
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (native), node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  w = gdk_texture_get_width (texture);
  h = gdk_texture_get_height (texture);
  stride = w * 4;
  bgra = g_malloc ((gsize) stride * h);
  /* CAIRO_FORMAT_ARGB32: B, G, R, A in memory on little-endian machines;
   * the canvas is opaque */
  gdk_texture_download (texture, bgra, stride);
  out = g_malloc ((gsize) w * h * 3);
  for (k = 0; k < (gsize) w * h; k++)
    {
      guint32 v = *(guint32 *) (bgra + 4 * k);

      out[3 * k] = (v >> 16) & 0xff;
      out[3 * k + 1] = (v >> 8) & 0xff;
      out[3 * k + 2] = v & 0xff;
    }
  *width = (guint) w;
  *height = (guint) h;
  return out;
}

static gboolean
need_stack (AiryStackViewer *self, GError **error)
{
  if (airy_stack_view_get_stack (self->view) != NULL)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("nothing to export: no stack is shown"));
  return FALSE;
}

/* An export in two steps: what is on screen, taken on the main thread (the
 * GL view, the shown plane, the stack, a section), then the file, which the
 * file chooser's exports write on a worker thread: the UI thread touches
 * no file. */
typedef enum { EXPORT_PNG_RGB, EXPORT_PNG_GRAY16, EXPORT_TIFF, EXPORT_TEXT } ExportKind;

typedef struct
{
  ExportKind    kind;
  guint8       *rgb;        /* PNG_RGB */
  char         *text;       /* TEXT */
  AiryStack    *stack;      /* GRAY16 (one plane), TIFF */
  AiryResident *resident;   /* keeps a borrowed stack alive */
  gboolean      borrowed;
  guint         height, width;
  double        dx;
} Export;

static void
export_free (Export *e)
{
  g_free (e->rgb);
  g_free (e->text);
  if (!e->borrowed)
    airy_stack_free (e->stack);
  g_clear_pointer (&e->resident, airy_resident_unref);
  g_free (e);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Export, export_free)

static Export *
export_view (AiryStackViewer *self, guint scale, GError **error)
{
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_RGB;
  e->rgb = airy_stack_viewer_render_view (self, scale, TRUE, &e->width, &e->height);
  e->dx = airy_stack_view_get_stack (self->view)->dx / scale;
  return e;
}

static gboolean export_write (const char *path, const Export *e, GError **error);

/* what the screen shows: µm per exported pixel at the shown zoom */
static Export *
export_screen (AiryStackViewer *self, GError **error)
{
  Export *e;
  double zoom = airy_stack_view_get_zoom (self->view);

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_RGB;
  e->rgb = airy_stack_viewer_render_screen (self, &e->width, &e->height);
  if (e->rgb == NULL)
    {
      g_free (e);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("nothing to export: the view is not on screen"));
      return NULL;
    }
  e->dx = zoom > 0 ? airy_stack_view_get_stack (self->view)->dx / zoom : 0.0;
  return e;
}

gboolean
airy_stack_viewer_export_screen (AiryStackViewer *self,
                                 const char      *path,
                                 GError         **error)
{
  g_autoptr(Export) e = export_screen (self, error);

  return e != NULL && export_write (path, e, error);
}

/* XY with its scale bar, XZ below and YZ beside it at the true z spacing,
 * as on screen (one image). */
guint8 *
airy_stack_viewer_render_sections (AiryStackViewer *self,
                                   guint           *width,
                                   guint           *height)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryResident *r = airy_stack_view_get_resident (self->view);
  const AiryDisplay *d = airy_stack_view_get_display (self->view);
  g_autofree guint8 *xy = NULL;
  g_autofree float *xz = NULL, *yz = NULL;
  g_autofree guint8 *xz_rgb = NULL, *yz_rgb = NULL;
  guint W, H, xw, xh, zx = 0, zy = 0, gap = 0, y, x, cx, cy;
  guint8 *out;
  gsize k;

  if (s == NULL)
    return NULL;
  xy = airy_stack_viewer_render_view (self, 1, TRUE, &xw, &xh);
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  if (s->depth > 1)
    {
      double az = s->dz > 0 ? s->dz : s->dx;

      xz = g_new (float, (gsize) s->depth * s->width);
      yz = g_new (float, (gsize) s->depth * s->height);
      if (!airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_XZ, cy }, xz, NULL)
          || !airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_YZ, cx }, yz, NULL))
        g_clear_pointer (&xz, g_free);
      else
        {
          xz_rgb = g_malloc ((gsize) s->depth * s->width * 3);
          yz_rgb = g_malloc ((gsize) s->depth * s->height * 3);
          airy_display_render_rgb (d, xz, s->depth, s->width, xz_rgb);
          airy_display_render_rgb (d, yz, s->depth, s->height, yz_rgb);
          zy = MAX (1, (guint) floor (s->depth * az / s->dy + 0.5));
          zx = MAX (1, (guint) floor (s->depth * az / s->dx + 0.5));
          gap = 6;   /* the canvas' gap */
        }
    }
  W = xw + (zx ? gap + zx : 0);
  H = xh + (zy ? gap + zy : 0);
  out = g_malloc ((gsize) W * H * 3);
  /* the canvas' background */
  for (k = 0; k < (gsize) W * H; k++)
    {
      out[3 * k] = out[3 * k + 1] = 31;
      out[3 * k + 2] = 33;
    }
  for (y = 0; y < xh; y++)
    memcpy (out + (gsize) y * W * 3, xy + (gsize) y * xw * 3, (gsize) xw * 3);
  if (xz_rgb)
    {
      /* XZ: z downwards; YZ: z to the right (nearest plane) */
      for (y = 0; y < zy; y++)
        memcpy (out + ((gsize) (xh + gap + y) * W) * 3,
                xz_rgb + (gsize) MIN (y * s->depth / zy, s->depth - 1) * s->width * 3, (gsize) s->width * 3);
      for (y = 0; y < s->height; y++)
        for (x = 0; x < zx; x++)
          memcpy (out + ((gsize) y * W + xw + gap + x) * 3,
                  yz_rgb + ((gsize) MIN (x * s->depth / zx, s->depth - 1) * s->height + y) * 3, 3);
    }
  *width = W;
  *height = H;
  return out;
}

static Export *
export_sections (AiryStackViewer *self, GError **error)
{
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_RGB;
  e->rgb = airy_stack_viewer_render_sections (self, &e->width, &e->height);
  e->dx = airy_stack_view_get_stack (self->view)->dx;
  return e;
}

/* What a profile's CSV is of, as "# " lines before its columns (readers
 * skip them: pandas' comment='#', numpy's loadtxt, Fiji's results): the
 * system or file, the plane, the cursor, the units. Numbers with a dot,
 * whatever the locale, as the columns. */
static char *
csv_header (AiryStackViewer *self, gboolean axial)
{
  const AiryStack *s = airy_stack_view_get_stack (self->view);
  GString *h = g_string_new (NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  const char *name = NULL;
  char z[G_ASCII_DTOSTR_BUF_SIZE], x[G_ASCII_DTOSTR_BUF_SIZE], y[G_ASCII_DTOSTR_BUF_SIZE];
  guint cx, cy, k = airy_stack_view_get_z (self->view);

  airy_stack_view_get_cursor (self->view, &cx, &cy);
  if (s->system_json && json_parser_load_from_data (parser, s->system_json, -1, NULL)
      && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    name = json_object_get_string_member_with_default (json_node_get_object (json_parser_get_root (parser)), "name",
                                                       NULL);
  g_string_append_printf (h, "# Airy %s profile\n", axial ? "axial" : "line");
  if (self->path)
    g_string_append_printf (h, "# file: %s\n", self->path);
  g_string_append_printf (h, "# shown: %s\n", self->shown_label ? self->shown_label : "");
  if (name)
    g_string_append_printf (h, "# system: %s\n", name);
  g_ascii_formatd (z, sizeof z, "%.4f", airy_stack_get_z (s, k));
  g_ascii_formatd (x, sizeof x, "%.4f", airy_pixel_to_um (cx, s->width, s->dx));
  g_ascii_formatd (y, sizeof y, "%.4f", airy_pixel_to_um (cy, s->height, s->dy));
  if (axial)
    g_string_append_printf (h, "# along z through x %s µm, y %s µm (pixel %u, %u); %u planes\n", x, y, cx, cy, s->depth);
  else if (airy_stack_view_get_mip (self->view) && s->depth > 1)
    g_string_append_printf (h, "# plane: the maximum-intensity projection of %u planes\n", s->depth);
  else if (self->uncalibrated)
    g_string_append_printf (h, "# plane: %u of %u (1-based); cursor x %u px, y %u px\n", k + 1, s->depth, cx, cy);
  else
    g_string_append_printf (h, "# plane: %u of %u (1-based), z %s µm; cursor x %s µm, y %s µm\n", k + 1, s->depth, z, x, y);
  g_string_append_printf (h, "# units: %s in %s; value: intensity as computed (a PSF plane sums to 1/(dx dy))\n",
                          axial ? "z" : "x", self->uncalibrated ? (axial ? "planes" : "pixels") : "µm");
  return g_string_free (h, FALSE);
}

static Export *
export_csv (AiryStackViewer *self, gboolean axial, GError **error)
{
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_TEXT;
  {
    g_autofree char *header = csv_header (self, axial);
    g_autofree char *values = airy_plot_to_csv (axial ? self->axial_plot : self->line_plot);

    e->text = g_strconcat (header, values, NULL);
  }
  return e;
}

gboolean
airy_stack_viewer_export_sections (AiryStackViewer *self,
                                   const char      *path,
                                   GError         **error)
{
  g_autoptr(Export) e = export_sections (self, error);

  return e != NULL && export_write (path, e, error);
}

gboolean
airy_stack_viewer_export_profile (AiryStackViewer *self,
                                  const char      *path,
                                  gboolean         axial,
                                  GError         **error)
{
  g_autoptr(Export) e = export_csv (self, axial, error);

  return e != NULL && export_write (path, e, error);
}

static Export *
export_raw (AiryStackViewer *self, GError **error)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  Export *e;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_PNG_GRAY16;
  e->stack = airy_stack_new (1, s->height, s->width);
  memcpy (e->stack->data, airy_stack_view_get_xy_plane (self->view), airy_stack_plane_size (s) * sizeof (float));
  e->stack->dx = e->stack->dy = s->dx;
  return e;
}

static Export *
export_tiff (AiryStackViewer *self, gboolean section, GError **error)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryResident *r = airy_stack_view_get_resident (self->view);
  g_autoptr(Export) e = NULL;
  guint cx, cy;

  if (!need_stack (self, error))
    return NULL;
  e = g_new0 (Export, 1);
  e->kind = EXPORT_TIFF;
  if (!section)
    {
      /* a host stack is written where it is, a result on a GPU comes to
       * host memory for this only */
      if (s->data)
        {
          e->stack = s;
          e->borrowed = TRUE;
          e->resident = airy_resident_ref (r);
        }
      else if ((e->stack = airy_resident_to_stack (r, error)) == NULL)
        return NULL;
      return g_steal_pointer (&e);
    }
  /* the XZ section through the cursor: one image, rows are z */
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  e->stack = airy_stack_new (1, s->depth, s->width);
  if (!airy_resident_read_slice (r, &(AirySlice) { AIRY_SLICE_XZ, cy }, e->stack->data, error))
    return NULL;
  e->stack->dx = s->dx;
  e->stack->dy = s->dz > 0 ? s->dz : s->dy;
  return g_steal_pointer (&e);
}

static gboolean
export_write (const char *path, const Export *e, GError **error)
{
  switch (e->kind)
    {
    case EXPORT_PNG_RGB:
      return airy_png_write_rgb (path, e->rgb, e->height, e->width, e->dx, error);
    case EXPORT_PNG_GRAY16:
      return airy_png_write_gray16 (path, e->stack->data, e->stack->height, e->stack->width, e->stack->dx, error);
    case EXPORT_TEXT:
      return g_file_set_contents (path, e->text, -1, error);
    case EXPORT_TIFF:
    default:
      {
        /* a stack named .ome.zarr is written as a store */
        const AiryImageFormat *format = airy_image_format_for_suffix (path);

        if (format != NULL && format->folder)
          return airy_image_write (path, e->stack, NULL, error);
        return airy_tiff_write (path, e->stack, error);
      }
    }
}

gboolean
airy_stack_viewer_export_view (AiryStackViewer *self,
                               const char      *path,
                               guint            scale,
                               GError         **error)
{
  g_autoptr(Export) e = export_view (self, scale, error);

  return e != NULL && export_write (path, e, error);
}

gboolean
airy_stack_viewer_export_raw (AiryStackViewer *self,
                              const char      *path,
                              GError         **error)
{
  g_autoptr(Export) e = export_raw (self, error);

  return e != NULL && export_write (path, e, error);
}

gboolean
airy_stack_viewer_export_tiff (AiryStackViewer *self,
                               const char      *path,
                               gboolean         section,
                               GError         **error)
{
  g_autoptr(Export) e = export_tiff (self, section, error);

  return e != NULL && export_write (path, e, error);
}

/* ---- file I/O off the UI thread ---- */

typedef struct
{
  char            *path;
  Export          *export;     /* a write; NULL for a read */
  AiryReadOptions  read;
  AiryStack       *stack;      /* what a read gave */
  guint            generation;
} FileTask;

static void
file_task_free (FileTask *t)
{
  g_free (t->path);
  g_clear_pointer (&t->export, export_free);
  airy_stack_free (t->stack);
  g_free (t);
}

static void
file_task_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  FileTask *t = data;
  GError *error = NULL;

  if (t->export ? export_write (t->path, t->export, &error)
                : (t->stack = airy_image_read_full (t->path, &t->read, &error)) != NULL)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}


static void
file_task_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (source);
  FileTask *t = g_task_get_task_data (G_TASK (res));
  g_autoptr(GError) error = NULL;

  self->file_tasks--;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      g_autofree char *msg = t->export ? g_strdup (error->message)
                                       : g_strdup_printf (_("Could not open: %s"), error->message);
      /* an open overtaken by a newer one says nothing */
      if (t->export || t->generation == self->open_generation)
        airy_stack_viewer_show_message (self, msg);
      return;
    }
  if (!t->export && t->generation == self->open_generation)
    _airy_stack_viewer_show_opened (self, g_steal_pointer (&t->stack), t->path);
}

static void
run_file_task (AiryStackViewer *self, FileTask *t)
{
  g_autoptr(GTask) task = g_task_new (self, NULL, file_task_done, NULL);

  g_task_set_task_data (task, t, (GDestroyNotify) file_task_free);
  self->file_tasks++;
  g_task_run_in_thread (task, file_task_thread);
}

/* Opens a file on a worker thread; shown when it is read (a newer open
 * wins). The viewer's own opens (chooser, drop, another channel) go here. */
void
airy_stack_viewer_open_async (AiryStackViewer *self,
                              const char      *path,
                              guint            channel,
                              guint            frame)
{
  FileTask *t = g_new0 (FileTask, 1);

  t->path = g_strdup (path);
  t->read = (AiryReadOptions) AIRY_READ_OPTIONS_INIT;
  t->read.channel = (int) channel;
  t->read.frame = (int) frame;
  t->generation = ++self->open_generation;
  run_file_task (self, t);
}

guint
airy_stack_viewer_get_pending_files (AiryStackViewer *self)
{
  return self->file_tasks;
}

static void
export_async (AiryStackViewer *self, const char *path, Export *e)
{
  FileTask *t = g_new0 (FileTask, 1);

  t->path = g_strdup (path);
  t->export = e;
  run_file_task (self, t);
}

void
airy_stack_viewer_export_tiff_async (AiryStackViewer *self,
                                     const char      *path,
                                     gboolean         section)
{
  g_autoptr(GError) error = NULL;
  Export *e = export_tiff (self, section, &error);

  if (e != NULL)
    export_async (self, path, e);
  else
    airy_stack_viewer_show_message (self, error->message);
}

/* file choosers (portal-friendly native dialogs on GTK 4.8) */

void
airy_file_chooser_add_image_filter (GtkFileChooser *chooser)
{
  GtkFileFilter *filter = gtk_file_filter_new ();
  const AiryImageFormat *const *f;
  guint i;

  /* every format of the engine's table, by suffix and by type */
  gtk_file_filter_set_name (filter, _("TIFF and PNG images, OME-Zarr stores"));
  for (f = airy_image_formats (); *f; f++)
    {
      for (i = 0; (*f)->suffixes[i]; i++)
        gtk_file_filter_add_suffix (filter, (*f)->suffixes[i] + 1);
      if ((*f)->mime_type)
        gtk_file_filter_add_mime_type (filter, (*f)->mime_type);
    }
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

typedef enum { FILE_OPEN, FILE_VIEW_1X, FILE_VIEW_2X, FILE_RAW, FILE_TIFF, FILE_SECTION, FILE_SECTIONS_PNG,
               FILE_LINE_CSV, FILE_AXIAL_CSV, FILE_SCREEN } FileJob;

static void
on_file_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  AiryStackViewer *self = g_object_get_data (G_OBJECT (dialog), "viewer");
  FileJob job = GPOINTER_TO_INT (data);
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  gboolean ok = TRUE;

  if (response == GTK_RESPONSE_ACCEPT
      && (file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog))) != NULL
      && (path = g_file_get_path (file)) != NULL)
    {
      /* what is on screen is taken now; the file is read or written on a
       * worker thread */
      Export *e = NULL;

      switch (job)
        {
        case FILE_OPEN:    airy_stack_viewer_open_async (self, path, 0, 0); break;
        case FILE_VIEW_1X: e = export_view (self, 1, &error); break;
        case FILE_VIEW_2X: e = export_view (self, 2, &error); break;
        case FILE_RAW:     e = export_raw (self, &error); break;
        case FILE_TIFF:    e = export_tiff (self, FALSE, &error); break;
        case FILE_SECTION: e = export_tiff (self, TRUE, &error); break;
        case FILE_SECTIONS_PNG: e = export_sections (self, &error); break;
        case FILE_LINE_CSV: e = export_csv (self, FALSE, &error); break;
        case FILE_AXIAL_CSV: e = export_csv (self, TRUE, &error); break;
        case FILE_SCREEN:  e = export_screen (self, &error); break;
        default: break;
        }
      if (e != NULL)
        export_async (self, path, e);
      else if (job != FILE_OPEN)
        ok = FALSE;
      if (!ok)
        airy_stack_viewer_show_message (self, error->message);
    }
  g_object_unref (dialog);
}

static void
choose_file (AiryStackViewer *self, FileJob job)
{
  static const char *titles[] = { N_("Open Stack"), N_("Export Full Slice as PNG"), N_("Export Full Slice as PNG (2×)"),
                                  N_("Export Raw Slice (16-bit PNG)"), N_("Export Stack (TIFF)"),
                                  N_("Export XZ Section (TIFF)"), N_("Export XY, XZ and YZ as PNG"),
                                  N_("Export Line Profile (CSV)"), N_("Export Axial Profile (CSV)"),
                                  N_("Export View as PNG") };
  static const char *names[] = { NULL, "slice.png", "slice@2x.png", "slice-16bit.png", "stack.tif", "section-xz.tif",
                                 "sections.png", "line-profile.csv", "axial-profile.csv", "view.png" };
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileChooserNative *dialog;

  dialog = gtk_file_chooser_native_new (_(titles[job]), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        job == FILE_OPEN ? GTK_FILE_CHOOSER_ACTION_OPEN : GTK_FILE_CHOOSER_ACTION_SAVE,
                                        job == FILE_OPEN ? _("_Open") : _("_Export"), _("_Cancel"));
  if (names[job])
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), names[job]);
  else
    airy_file_chooser_add_image_filter (GTK_FILE_CHOOSER (dialog));
  g_object_set_data (G_OBJECT (dialog), "viewer", self);
  g_signal_connect (dialog, "response", G_CALLBACK (on_file_response), GINT_TO_POINTER (job));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

void
_airy_stack_viewer_action_file (GSimpleAction *action, GVariant *param, gpointer data)
{
  const char *name = g_action_get_name (G_ACTION (action));
  FileJob job = g_str_equal (name, "open") ? FILE_OPEN
              : g_str_equal (name, "export-png") ? FILE_SCREEN
              : g_str_equal (name, "export-slice-png") ? FILE_VIEW_1X
              : g_str_equal (name, "export-png-2x") ? FILE_VIEW_2X
              : g_str_equal (name, "export-raw") ? FILE_RAW
              : g_str_equal (name, "export-tiff") ? FILE_TIFF
              : g_str_equal (name, "export-sections-png") ? FILE_SECTIONS_PNG
              : g_str_equal (name, "export-line-csv") ? FILE_LINE_CSV
              : g_str_equal (name, "export-axial-csv") ? FILE_AXIAL_CSV : FILE_SECTION;
  choose_file (data, job);
}
