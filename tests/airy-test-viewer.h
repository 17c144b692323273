/* Helpers shared by the stack viewer's tests (test-viewer*.c): the
 * fixture (a window holding a viewer), frames read back from the GL view,
 * the view's controllers. */
#pragma once

#include <math.h>
#include <gtk/gtk.h>

#include "airy.h"
#include "airy-stack-viewer.h"

static gboolean have_display;
static char *tmpdir;

static inline AiryStack *
gradient_stack (guint depth, guint h, guint w, double dx, double dz)
{
  AiryStack *s = airy_stack_new (depth, h, w);
  guint z, y, x;

  for (z = 0; z < depth; z++)
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        airy_stack_plane (s, z)[y * w + x] = (float) x + 100.0f * z;
  s->dx = s->dy = dx;
  s->dz = dz;
  return s;
}

typedef struct
{
  GtkWidget       *window;
  AiryStackViewer *viewer;
  AiryStackView   *view;
} Fixture;

static inline void
fixture_setup (Fixture *f, gconstpointer data)
{
  if (!have_display)
    return;
  f->window = gtk_window_new ();
  f->viewer = AIRY_STACK_VIEWER (airy_stack_viewer_new ());
  f->view = airy_stack_viewer_get_view (f->viewer);
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->viewer));
  gtk_window_set_default_size (GTK_WINDOW (f->window), 900, 700);
  gtk_window_present (GTK_WINDOW (f->window));
}

static inline void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->window)
    gtk_window_destroy (GTK_WINDOW (f->window));
}

static inline gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Renders a frame and returns the framebuffer (RGBA, top row first). */
static inline const guint8 *
read_frame (Fixture *f, int *w, int *h)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (20, timeout_cb, &timed_out);
  const guint8 *px = NULL;

  /* let the window map and lay out first */
  while (!gtk_widget_get_mapped (GTK_WIDGET (f->view)) && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  airy_stack_view_request_readback (f->view);
  while (!timed_out && (px = airy_stack_view_get_readback (f->view, w, h)) == NULL)
    {
      g_assert_null (airy_stack_view_get_gl_error (f->view));
      g_main_context_iteration (NULL, TRUE);
    }
  if (!timed_out)
    g_source_remove (id);
  g_assert_false (timed_out);
  return px;
}

/* Where the XY image lands: zoom 1 puts image pixel (x, y) at widget
 * (ox + x, oy + y). */
static inline void
image_origin (Fixture *f, int *ox, int *oy)
{
  double ix, iy, zoom = airy_stack_view_get_zoom (f->view);

  g_assert_true (airy_stack_view_widget_to_image (f->view, gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0,
                                                  gtk_widget_get_height (GTK_WIDGET (f->view)) / 2.0, &ix, &iy));
  *ox = (int) floor (gtk_widget_get_width (GTK_WIDGET (f->view)) / 2.0 - (ix + 0.5) * zoom + 0.5);
  *oy = (int) floor (gtk_widget_get_height (GTK_WIDGET (f->view)) / 2.0 - (iy + 0.5) * zoom + 0.5);
}

/* the viewer's reads and writes on worker threads, done */
static inline void
wait_files (AiryStackViewer *viewer)
{
  while (airy_stack_viewer_get_pending_files (viewer) > 0)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* The view's controller of a type (scroll, motion, key). */
static inline GtkEventController *
view_controller (Fixture *f, GType type)
{
  g_autoptr(GListModel) list = gtk_widget_observe_controllers (GTK_WIDGET (f->view));
  guint i;

  for (i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr(GObject) c = g_list_model_get_item (list, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return GTK_EVENT_CONTROLLER (c);
    }
  g_assert_not_reached ();
}

static inline void
press_key (Fixture *f, guint keyval)
{
  gboolean handled = FALSE;

  g_signal_emit_by_name (view_controller (f, GTK_TYPE_EVENT_CONTROLLER_KEY), "key-pressed", keyval, 0, 0, &handled);
  g_assert_true (handled);
}

static inline GtkWidget *
find_check (GtkWidget *root, const char *label)
{
  GtkWidget *child, *found;

  if (GTK_IS_CHECK_BUTTON (root) && g_strcmp0 (gtk_check_button_get_label (GTK_CHECK_BUTTON (root)), label) == 0)
    return root;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = find_check (child, label)) != NULL)
      return found;
  return NULL;
}
