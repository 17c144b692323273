#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"
#include "airy-image-file.h"
#include "airy-error.h"

/* Stacks from files: opening one, a hyperstack's channels and time
 * points (the file is read again for another), the composite of all
 * its channels, and a file without a voxel size: shown in pixels until
 * Properties… sets one. */

static void update_composite (AiryStackViewer *self);

void
_airy_stack_viewer_set_uncalibrated (AiryStackViewer *self, gboolean uncalibrated)
{
  self->uncalibrated = uncalibrated;
  gtk_widget_set_visible (self->calibration, uncalibrated);
  airy_stack_view_set_pixel_units (self->view, uncalibrated);
  airy_plot_set_unit (self->line_plot, uncalibrated ? "px" : NULL);
  airy_plot_set_unit (self->axial_plot, uncalibrated ? _("planes") : NULL);
  _airy_stack_viewer_on_view_changed (self->view, self);
}

gboolean
airy_stack_viewer_get_uncalibrated (AiryStackViewer *self)
{
  return self->uncalibrated;
}

/* Fiji's Image ▸ Properties: the voxel size of what is shown. */
gboolean
airy_stack_viewer_set_voxel_size (AiryStackViewer *self,
                                  double           dx,
                                  double           dy,
                                  double           dz,
                                  GError         **error)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  const struct { const char *name; double v; } sizes[] = {
    { N_("pixel width"), dx }, { N_("pixel height"), dy }, { N_("voxel depth"), dz },
  };
  guint i;

  if (s == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("no stack is shown"));
      return FALSE;
    }
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    if (!(sizes[i].v > 0 && sizes[i].v <= 1e6))
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: must be in (0, 1e6] µm, got %g"),
                     _(sizes[i].name), sizes[i].v);
        return FALSE;
      }
  s->dx = self->user_dx = dx;
  s->dy = self->user_dy = dy;
  s->dz = self->user_dz = dz;
  airy_stack_view_voxel_size_changed (self->view);
  _airy_stack_viewer_set_uncalibrated (self, FALSE);
  return TRUE;
}

static void
on_properties_response (GtkDialog *dialog, int response, AiryStackViewer *self)
{
  if (response == GTK_RESPONSE_OK)
    {
      GtkWidget **spins = g_object_get_data (G_OBJECT (dialog), "spins");
      g_autoptr(GError) error = NULL;

      if (!airy_stack_viewer_set_voxel_size (self, gtk_spin_button_get_value (GTK_SPIN_BUTTON (spins[0])),
                                             gtk_spin_button_get_value (GTK_SPIN_BUTTON (spins[1])),
                                             gtk_spin_button_get_value (GTK_SPIN_BUTTON (spins[2])), &error))
        airy_stack_viewer_show_message (self, error->message);
    }
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* viewer.properties: a dialog with the voxel size in µm */
void
_airy_stack_viewer_action_properties (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryStackViewer *self = data;
  AiryStack *s = airy_stack_view_get_stack (self->view);
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  const char *labels[] = { N_("Pixel width (µm)"), N_("Pixel height (µm)"), N_("Voxel depth (µm)") };
  GtkWidget **spins = g_new0 (GtkWidget *, 3);
  GtkWidget *dialog, *grid;
  guint i;

  if (s == NULL)
    {
      g_free (spins);
      return;
    }
  dialog = gtk_dialog_new_with_buttons (_("Properties"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                        _("_Cancel"), GTK_RESPONSE_CANCEL, _("_Apply"), GTK_RESPONSE_OK, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (dialog), GTK_RESPONSE_OK);
  grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  gtk_widget_set_margin_start (grid, 12);
  gtk_widget_set_margin_end (grid, 12);
  gtk_widget_set_margin_top (grid, 12);
  gtk_widget_set_margin_bottom (grid, 12);
  for (i = 0; i < 3; i++)
    {
      GtkWidget *label = gtk_label_new (_(labels[i]));
      double v = i == 0 ? s->dx : i == 1 ? s->dy : s->dz;

      gtk_label_set_xalign (GTK_LABEL (label), 0);
      spins[i] = gtk_spin_button_new_with_range (1e-4, 1e6, 0.001);
      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spins[i]), 4);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (spins[i]), v > 0 ? v : 1.0);
      gtk_grid_attach (GTK_GRID (grid), label, 0, (int) i, 1, 1);
      gtk_grid_attach (GTK_GRID (grid), spins[i], 1, (int) i, 1, 1);
    }
  if (self->uncalibrated)
    gtk_grid_attach (GTK_GRID (grid), gtk_label_new (_("The file gives no voxel size: it is shown in pixels.")),
                     0, 3, 2, 1);
  gtk_box_append (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dialog))), grid);
  g_object_set_data_full (G_OBJECT (dialog), "spins", spins, g_free);
  g_signal_connect (dialog, "response", G_CALLBACK (on_properties_response), self);
  gtk_window_present (GTK_WINDOW (dialog));
}

/* ---- channel names: their wavelengths, where known ---- */

/* "532 nm", or NULL where channel c's wavelength is not known */
static char *
channel_wavelength (AiryStackViewer *self, guint c)
{
  double wl;

  if (self->channel_wavelengths == NULL || c >= self->channel_wavelengths->len)
    return NULL;
  wl = g_array_index (self->channel_wavelengths, double, c);
  if (!(wl > 0))
    return NULL;
  /* TRANSLATORS: a channel's vacuum wavelength in nanometres */
  return g_strdup_printf (_("%.4g nm"), wl * 1e3);
}

/* what a computed result's channel c is ("excitation", a modality's
 * name), or NULL */
static const char *
channel_own_name (AiryStackViewer *self, guint c)
{
  const AiryStack *s;

  if (self->mem_channels == NULL || c >= self->mem_channels->len)
    return NULL;
  s = g_ptr_array_index (self->mem_channels, c);
  return s->channel_names && s->channel_names[0] && s->channel_names[0][0] ? s->channel_names[0] : NULL;
}

/* "1 · excitation" (a modality's channel), "1 · 532 nm", or "1" */
static char *
channel_name (AiryStackViewer *self, guint c)
{
  const char *own = channel_own_name (self, c);
  g_autofree char *wl = own ? NULL : channel_wavelength (self, c);

  if (own || wl)
    return g_strdup_printf ("%u \xc2\xb7 %s", c + 1, own ? own : wl);
  return g_strdup_printf ("%u", c + 1);
}

/* the chooser's text back to its number: the digits before the wavelength */
int
_airy_stack_viewer_on_channel_input (GtkSpinButton *spin, double *value, AiryStackViewer *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  char *end = NULL;
  guint64 c;

  while (g_ascii_isspace (*text))
    text++;
  c = g_ascii_strtoull (text, &end, 10);
  if (end == text)
    return GTK_INPUT_ERROR;
  *value = (double) c;
  return TRUE;
}

gboolean
_airy_stack_viewer_on_channel_output (GtkSpinButton *spin, AiryStackViewer *self)
{
  int v = gtk_spin_button_get_value_as_int (spin);
  g_autofree char *text = channel_name (self, v > 0 ? (guint) v - 1 : 0);



  if (g_strcmp0 (text, gtk_editable_get_text (GTK_EDITABLE (spin))) != 0)
    gtk_editable_set_text (GTK_EDITABLE (spin), text);
  return TRUE;
}

/* Fiji's composite colours: red, green, blue, gray */
static const GdkRGBA composite_colors[AIRY_STACK_VIEW_MAX_CHANNELS] = {
  { 1, 0, 0, 1 }, { 0, 1, 0, 1 }, { 0, 0, 1, 1 }, { 1, 1, 1, 1 },
};

/* The colour (an index into composite_colors) of channel c of n: where two
 * or three channels have their wavelengths, by wavelength — the shortest
 * blue, the longest red (450, 532, 610 nm: blue, green, red; two: green
 * and red), never 450 nm in red; otherwise (one unknown, or two the same)
 * Fiji's order by channel. */
static guint
composite_color (AiryStackViewer *self, guint c, guint n)
{
  static const guint by_rank[2][3] = { { 1, 0, 0 }, { 2, 1, 0 } };
  const double *wl;
  guint k, rank = 0;

  if (self->channel_wavelengths == NULL || self->channel_wavelengths->len != n || n < 2 || n > 3)
    return c;
  wl = &g_array_index (self->channel_wavelengths, double, 0);
  /* two of one wavelength (confocal's detection and effective): all in
   * Fiji's order, not one colour twice */
  for (k = 0; k < n; k++)
    if (!(wl[k] > 0) || (k > 0 && wl[k] == wl[0]) || (k > 1 && wl[k] == wl[1]))
      return c;
  for (k = 0; k < n; k++)
    rank += wl[k] < wl[c];
  return by_rank[n - 2][rank];
}

static void
composite_colors_of (AiryStackViewer *self, guint n, GdkRGBA *colors)
{
  for (guint c = 0; c < n; c++)
    colors[c] = composite_colors[composite_color (self, c, n)];
}

/* Names the n channels by their wavelengths (µm; NULL, or 0 for one not
 * known): the chooser, as wide as its longest name, and the composite's
 * colours in its tooltip. */
static void
set_channel_wavelengths (AiryStackViewer *self, guint n, const double *wavelengths)
{
  /* the composite's colours, as composite_color gives them */
  static const char *colors[AIRY_STACK_VIEW_MAX_CHANNELS] = { N_("red"), N_("green"), N_("blue"), N_("gray") };
  g_autoptr(GString) legend = g_string_new (NULL);
  g_autofree char *tip = NULL;
  gboolean known = FALSE;
  guint c, width = 0;

  g_clear_pointer (&self->channel_wavelengths, g_array_unref);
  for (c = 0; wavelengths != NULL && c < n; c++)
    known |= wavelengths[c] > 0;
  for (c = 0; c < n; c++)
    known |= channel_own_name (self, c) != NULL;
  if (known)
    {
      self->channel_wavelengths = g_array_sized_new (FALSE, FALSE, sizeof (double), n);
      g_array_append_vals (self->channel_wavelengths, wavelengths, n);
    }
  for (c = 0; c < n; c++)
    {
      g_autofree char *name = channel_name (self, c);

      width = MAX (width, (guint) g_utf8_strlen (name, -1));
      if (c < G_N_ELEMENTS (colors))
        /* TRANSLATORS: a composite's colour and the channel shown in it, "red: 1 · 532 nm" */
        g_string_append_printf (legend, _("%s%s: %s"), c ? ", " : "", _(colors[composite_color (self, c, n)]), name);
    }
  gtk_editable_set_width_chars (GTK_EDITABLE (self->channel_spin), known ? (int) width : -1);
  /* TRANSLATORS: the composite's tooltip, then "red: 1 · 532 nm, green: 2 · 640 nm" */
  tip = g_strdup_printf (_("All channels over each other: %s"), legend->str);
  gtk_widget_set_tooltip_text (self->composite, tip);
  _airy_stack_viewer_on_channel_output (GTK_SPIN_BUTTON (self->channel_spin), self);
}

/* Shows a stack read from a file: of a hyperstack, with the choosers for
 * its channels and time points. */
void
_airy_stack_viewer_show_opened (AiryStackViewer *self, AiryStack *stack, const char *path)
{
  gboolean same_file = g_strcmp0 (path, self->path) == 0, uncalibrated = FALSE;

  if (!same_file)
    self->user_dx = self->user_dy = self->user_dz = 0.0;
  if (self->user_dx > 0)
    {
      stack->dx = self->user_dx;
      stack->dy = self->user_dy;
      stack->dz = self->user_dz;
    }
  else if (stack->dx <= 0)
    {
      /* unknown: pixels, and planes one pixel apart */
      stack->dx = stack->dy = 1.0;
      if (stack->dz <= 0)
        stack->dz = 1.0;
      uncalibrated = TRUE;
    }
  airy_stack_viewer_set_stack (self, stack);
  _airy_stack_viewer_set_uncalibrated (self, uncalibrated);
  /* after set_stack, which forgets the file */
  self->path = g_strdup (path);
  _airy_stack_viewer_update_shown (self);
  self->updating = TRUE;
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->channel_spin), 1, MAX (stack->n_channels, 1));
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->frame_spin), 1, MAX (stack->n_frames, 1));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->channel_spin), stack->channel + 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->frame_spin), stack->frame + 1);
  gtk_widget_set_visible (gtk_widget_get_parent (self->channel_spin), stack->n_channels > 1);
  gtk_widget_set_visible (gtk_widget_get_parent (self->frame_spin), stack->n_frames > 1);
  gtk_widget_set_visible (self->hyper_box, stack->n_channels > 1 || stack->n_frames > 1);
  gtk_widget_set_visible (self->composite, stack->n_channels > 1);
  /* a file that carries its channels' wavelengths (an Airy hyperstack) */
  set_channel_wavelengths (self, MAX (stack->n_channels, 1),
                           stack->n_channels > 1 && stack->n_wavelengths == stack->n_channels
                           ? stack->wavelengths : NULL);
  self->updating = FALSE;
  /* a composite follows the time point */
  if (stack->n_channels > 1 && gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    update_composite (self);
}

/* Reads one z stack of the file here and now: of a hyperstack, the channel
 * and time point asked for (0-based). */
static gboolean
open_stack (AiryStackViewer *self, const char *path, guint channel, guint frame, GError **error)
{
  g_autoptr(GError) local = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  AiryStack *stack;

  ro.channel = (int) channel;
  ro.frame = (int) frame;
  self->open_generation++;
  stack = airy_image_read_full (path, &ro, &local);
  if (stack == NULL)
    {
      g_autofree char *msg = g_strdup_printf (_("Could not open: %s"), local->message);
      airy_stack_viewer_show_message (self, msg);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  _airy_stack_viewer_show_opened (self, stack, path);
  return TRUE;
}

void
airy_stack_viewer_show_file (AiryStackViewer *self,
                             AiryStack       *stack,
                             const char      *path)
{
  g_return_if_fail (AIRY_IS_STACK_VIEWER (self) && stack != NULL);
  self->open_generation++;
  _airy_stack_viewer_show_opened (self, stack, path);
}

gboolean
airy_stack_viewer_open (AiryStackViewer *self,
                        const char      *path,
                        GError         **error)
{
  return open_stack (self, path, 0, 0, error);
}

void
airy_stack_viewer_get_hyperstack (AiryStackViewer *self,
                                  guint           *n_channels,
                                  guint           *n_frames,
                                  guint           *channel,
                                  guint           *frame)
{
  gboolean shown = gtk_widget_get_visible (self->hyper_box);
  GtkAdjustment *c = gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (self->channel_spin));
  GtkAdjustment *t = gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (self->frame_spin));

  *n_channels = shown ? (guint) gtk_adjustment_get_upper (c) : 0;
  *n_frames = shown ? (guint) gtk_adjustment_get_upper (t) : 0;
  *channel = shown ? (guint) gtk_adjustment_get_value (c) - 1 : 0;
  *frame = shown ? (guint) gtk_adjustment_get_value (t) - 1 : 0;
}

/* as a person would: through the spin buttons */
void
airy_stack_viewer_set_hyperstack_plane (AiryStackViewer *self,
                                        guint            channel,
                                        guint            frame)
{
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->channel_spin), channel + 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->frame_spin), frame + 1);
}

/* ---- a computed result's channels (one stack per wavelength) ---- */

static void
show_mem_channel (AiryStackViewer *self, guint c)
{
  AiryStack *copy = airy_stack_copy (g_ptr_array_index (self->mem_channels, c));
  const AiryStack *before = airy_stack_view_get_stack (self->view);
  double bdx = before ? before->dx : 0, ndx = copy->dx, zoom = airy_stack_view_get_zoom (self->view);
  gboolean drawn = airy_stack_view_drew_resident (self->view);
  guint bw = before ? before->width : 0, bh = before ? before->height : 0;
  copy->n_channels = self->mem_channels->len;
  copy->channel = c;
  copy->n_frames = 1;
  g_clear_pointer (&self->current, airy_resident_unref);
  self->current = airy_resident_new_host (copy);
  _airy_stack_viewer_show_compare (self);
  /* the same µm per screen pixel: an FF lens's pixel scales with λ, and
   * another channel's pixels must not change the scale of what is shown */
  if (zoom > 0 && drawn && bdx > 0 && ndx > 0 && fabs (bdx - ndx) > 1e-9 * bdx && bw == copy->width && bh == copy->height)
    airy_stack_view_set_zoom (self->view, zoom * ndx / bdx);
  /* a composite stays on, on this channel's pixels: show_compare put it back */
}

void
airy_stack_viewer_set_channels (AiryStackViewer *self,
                                GPtrArray       *channels)
{
  g_return_if_fail (AIRY_IS_STACK_VIEWER (self));

  g_clear_pointer (&self->mem_channels, g_ptr_array_unref);
  if (channels == NULL || channels->len < 2)
    {
      g_clear_pointer (&channels, g_ptr_array_unref);
      return;
    }
  self->mem_channels = channels;
  /* the composite once, below, with the channels' wavelengths known */
  self->updating = TRUE;
  show_mem_channel (self, 0);
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->channel_spin), 1, channels->len);
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->frame_spin), 1, 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->channel_spin), 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->frame_spin), 1);
  gtk_widget_set_visible (gtk_widget_get_parent (self->channel_spin), TRUE);
  gtk_widget_set_visible (gtk_widget_get_parent (self->frame_spin), FALSE);
  gtk_widget_set_visible (self->hyper_box, TRUE);
  gtk_widget_set_visible (self->composite, TRUE);
  {
    /* each stack's own wavelength names its channel */
    g_autofree double *wavelengths = g_new0 (double, channels->len);
    guint c;

    for (c = 0; c < channels->len; c++)
      {
        const AiryStack *s = g_ptr_array_index (channels, c);

        if (s->n_wavelengths == 1)
          wavelengths[c] = s->wavelengths[0];
      }
    set_channel_wavelengths (self, channels->len, wavelengths);
  }
  self->updating = FALSE;
  if (gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    update_composite (self);
}

/* ---- composite: every channel of the time point, over each other ---- */

typedef struct
{
  char      *path;
  guint      frame, n;
  AiryStack *stacks[AIRY_STACK_VIEW_MAX_CHANNELS];
  guint      generation;
} CompositeTask;

static void
composite_task_free (CompositeTask *t)
{
  guint c;

  for (c = 0; c < t->n; c++)
    airy_stack_free (t->stacks[c]);
  g_free (t->path);
  g_free (t);
}

static void
composite_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CompositeTask *t = data;
  GError *error = NULL;
  guint c;

  for (c = 0; c < t->n; c++)
    {
      AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;

      ro.channel = (int) c;
      ro.frame = (int) t->frame;
      if ((t->stacks[c] = airy_image_read_full (t->path, &ro, &error)) == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  g_task_return_boolean (task, TRUE);
}

static void
composite_done (GObject *source, GAsyncResult *res, gpointer data)
{
  AiryStackViewer *self = AIRY_STACK_VIEWER (source);
  CompositeTask *t = g_task_get_task_data (G_TASK (res));
  AiryStack *shown = airy_stack_view_get_stack (self->view);
  g_autoptr(GError) error = NULL;
  AiryResident *residents[AIRY_STACK_VIEW_MAX_CHANNELS];
  float lo[AIRY_STACK_VIEW_MAX_CHANNELS], hi[AIRY_STACK_VIEW_MAX_CHANNELS];
  GdkRGBA colors[AIRY_STACK_VIEW_MAX_CHANNELS];
  guint c;

  self->file_tasks--;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      if (t->generation == self->composite_generation)
        airy_stack_viewer_show_message (self, error->message);
      return;
    }
  /* still the file and the composite asked for */
  if (t->generation != self->composite_generation || shown == NULL || g_strcmp0 (t->path, self->path) != 0
      || !gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    return;
  for (c = 0; c < t->n; c++)
    {
      AiryStack *s = t->stacks[c];

      /* each channel between 0 (or its minimum) and its maximum */
      airy_stack_min_max (s, &lo[c], &hi[c]);
      lo[c] = MIN (lo[c], 0.0f);
      if (!(hi[c] > lo[c]))
        hi[c] = lo[c] + 1.0f;
      s->dx = shown->dx;
      s->dy = shown->dy;
      s->dz = shown->dz;
      residents[c] = airy_resident_new_host (g_steal_pointer (&t->stacks[c]));
    }
  composite_colors_of (self, t->n, colors);
  airy_stack_view_set_composite (self->view, t->n, residents, lo, hi, colors);
  t->n = 0;
}

static void
update_composite (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  g_autoptr(GTask) task = NULL;
  CompositeTask *t;

  self->composite_generation++;
  if (s != NULL && self->mem_channels != NULL && gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    {
      AiryResident *residents[AIRY_STACK_VIEW_MAX_CHANNELS];
      float lo[AIRY_STACK_VIEW_MAX_CHANNELS], hi[AIRY_STACK_VIEW_MAX_CHANNELS];
      GdkRGBA colors[AIRY_STACK_VIEW_MAX_CHANNELS];
      guint c, n = MIN (self->mem_channels->len, AIRY_STACK_VIEW_MAX_CHANNELS);

      /* in memory already: no thread; each channel on the shown channel's
       * pixels (an FF lens's pixel scales with λ: the channels' pixel sizes
       * differ, and the composite overlays them where they are in µm, under
       * the shown channel's scale bar and cursor) */
      for (c = 0; c < n; c++)
        {
          const AiryStack *ch = g_ptr_array_index (self->mem_channels, c);
          gboolean same = TRUE;
          AiryStack *copy = _airy_stack_viewer_on_grid (ch, s, &same);

          if (copy == NULL)
            copy = airy_stack_copy (ch);

          airy_stack_min_max (copy, &lo[c], &hi[c]);
          lo[c] = MIN (lo[c], 0.0f);
          if (!(hi[c] > lo[c]))
            hi[c] = lo[c] + 1.0f;
          residents[c] = airy_resident_new_host (copy);
        }
      composite_colors_of (self, n, colors);
      airy_stack_view_set_composite (self->view, n, residents, lo, hi, colors);
      return;
    }
  if (s == NULL || self->path == NULL || s->n_channels < 2
      || !gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    {
      airy_stack_view_set_composite (self->view, 0, NULL, NULL, NULL, NULL);
      return;
    }
  t = g_new0 (CompositeTask, 1);
  t->path = g_strdup (self->path);
  t->frame = s->frame;
  t->n = MIN (s->n_channels, AIRY_STACK_VIEW_MAX_CHANNELS);
  t->generation = self->composite_generation;
  task = g_task_new (self, NULL, composite_done, NULL);
  g_task_set_task_data (task, t, (GDestroyNotify) composite_task_free);
  self->file_tasks++;
  g_task_run_in_thread (task, composite_thread);
}

void
_airy_stack_viewer_on_composite (GtkCheckButton *button, AiryStackViewer *self)
{
  update_composite (self);
}

void
_airy_stack_viewer_on_hyper_axis (GtkSpinButton *spin, AiryStackViewer *self)
{
  g_autofree char *path = g_strdup (self->path);

  if (!self->updating && self->mem_channels != NULL)
    {
      guint c = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->channel_spin)) - 1;

      show_mem_channel (self, MIN (c, self->mem_channels->len - 1));
      return;
    }
  if (self->updating || path == NULL)
    return;
  airy_stack_viewer_open_async (self, path,
                                (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->channel_spin)) - 1,
                                (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->frame_spin)) - 1);
}
