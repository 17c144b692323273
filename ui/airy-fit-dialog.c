#define G_LOG_DOMAIN "airy-fit-dialog"

#include "config.h"

#include <math.h>

#include <glib/gi18n-lib.h>

#include "airy-fit-dialog-private.h"
#include "airy-stack-viewer.h"
#include "airy-physics.h"
#include "airy-options-private.h"
#include "airy-modality.h"

/* The fit runs in a GTask thread with a copy of the system; its progress
 * (one loss per iteration) is written under a mutex and announced by at
 * most one idle source; the result is shown only by the task that the
 * current cancellable belongs to. The window owns no file access: the
 * stack is read by the worker, a file or the values of a viewer's stack
 * (its resident, held by a reference: a result on a GPU comes to host
 * memory on the worker). */

G_DEFINE_FINAL_TYPE (AiryFitDialog, airy_fit_dialog, GTK_TYPE_WINDOW)

enum { SIGNAL_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
update_readout (AiryFitDialog *self)
{
  g_autofree char *text = NULL;
  guint z, w;
  gsize k;

  if (self->result == NULL)
    {
      gtk_label_set_text (GTK_LABEL (self->readout), "");
      return;
    }
  w = self->measured->width;
  z = (guint) CLAMP (gtk_range_get_value (GTK_RANGE (self->z_scale)) - 1, 0, self->measured->depth - 1);
  k = ((gsize) z * self->measured->height + self->cursor_y) * w + self->cursor_x;
  text = g_strdup_printf (_("x %d, y %d, plane %u: measured %.5g, model %.5g, residual %.5g"),
                          self->cursor_x, self->cursor_y, z + 1, self->measured->data[k],
                          self->result->model->data[k], self->result->residual->data[k]);
  gtk_label_set_text (GTK_LABEL (self->readout), text);
}

static void
redraw_results (AiryFitDialog *self)
{
  guint i;

  for (i = 0; i < 3; i++)
    gtk_widget_queue_draw (self->images[i]);
  gtk_widget_queue_draw (self->wavefront);
  gtk_widget_queue_draw (self->bars);
  update_readout (self);
}

static void
on_image_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
  AiryFitDialog *self = data;
  GtkWidget *area = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  double scale = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (area), "airy-scale")) / 1000.0;
  int width = gtk_widget_get_width (area);
  double ox;

  if (self->result == NULL || scale <= 0)
    return;
  ox = (width - scale * self->measured->width) / 2;
  self->cursor_x = CLAMP ((int) floor ((x - ox) / scale), 0, (int) self->measured->width - 1);
  self->cursor_y = CLAMP ((int) floor ((y - 16) / scale), 0, (int) self->measured->height - 1);
  redraw_results (self);
}

/* ---- the worker ---- */

typedef struct
{
  AirySystem     *system;
  char           *path;
  AiryResident   *resident;
  AiryFitOptions  options;
} FitJob;

static void
fit_job_free (gpointer p)
{
  FitJob *job = p;

  g_clear_object (&job->system);
  g_free (job->path);
  g_clear_pointer (&job->resident, airy_resident_unref);
  g_free (job);
}

static gboolean
show_progress (gpointer data)
{
  AiryFitDialog *self = data;

  g_mutex_lock (&self->lock);
  g_array_append_vals (self->losses, self->pending->data, self->pending->len);
  g_array_set_size (self->pending, 0);
  self->idle_id = 0;
  g_mutex_unlock (&self->lock);
  gtk_widget_queue_draw (self->loss_area);
  return G_SOURCE_REMOVE;
}

/* on the worker */
static void
on_fit_progress (guint restart, guint iteration, double loss, gpointer data)
{
  AiryFitDialog *self = data;
  LossPoint pt = { loss, restart };

  g_mutex_lock (&self->lock);
  g_array_append_val (self->pending, pt);
  if (self->idle_id == 0)
    self->idle_id = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, show_progress, g_object_ref (self), g_object_unref);
  g_mutex_unlock (&self->lock);
}

static void
fit_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  FitJob *job = task_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) beads = job->resident ? airy_resident_to_stack (job->resident, &error)
                                             : airy_image_read (job->path, &error);
  AiryFitResult *res;

  if (beads == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  res = airy_fit_stack (job->system, beads, &job->options, cancellable, &error);
  if (res == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, res, (GDestroyNotify) airy_fit_result_free);
}

/* the status line, and the warnings (each once) in their bounded area;
 * get_status returns both */
static void
set_status_warnings (AiryFitDialog *self, const char *text, GPtrArray *warnings)
{
  g_autoptr(GString) shown = g_string_new (NULL);
  guint i, j;

  for (i = 0; warnings && i < warnings->len; i++)
    {
      const char *w = g_ptr_array_index (warnings, i);
      gboolean seen = FALSE;

      for (j = 0; j < i && !seen; j++)
        seen = g_strcmp0 (w, g_ptr_array_index (warnings, j)) == 0;
      if (!seen)
        g_string_append_printf (shown, "%s%s %s", shown->len ? "\n" : "", _("Warning:"), w);
    }
  g_free (self->status);
  self->status = shown->len ? g_strdup_printf ("%s\n%s", text, shown->str) : g_strdup (text);
  gtk_label_set_text (GTK_LABEL (self->status_label), text);
  gtk_label_set_text (GTK_LABEL (self->warnings_label), shown->str);
}

static void
set_status (AiryFitDialog *self, const char *text)
{
  set_status_warnings (self, text, NULL);
}

/* a new stack or a failed fit: no result shown, nothing to apply */
static void
clear_result (AiryFitDialog *self)
{
  guint i;

  g_clear_pointer (&self->result, airy_fit_result_free);
  g_clear_pointer (&self->measured, airy_stack_free);
  g_array_set_size (self->losses, 0);
  g_mutex_lock (&self->lock);
  g_array_set_size (self->pending, 0);
  g_mutex_unlock (&self->lock);
  for (i = 0; i < 3; i++)
    g_object_set_data (G_OBJECT (self->images[i]), "airy-scale", NULL);
  gtk_widget_queue_draw (self->loss_area);
}

/* the z slider for a stack of depth planes, counted from 1 as the viewer */
static void
set_planes (AiryFitDialog *self, guint depth)
{
  gtk_range_set_range (GTK_RANGE (self->z_scale), 1, MAX (depth, 2));
  gtk_range_set_value (GTK_RANGE (self->z_scale), depth / 2 + 1);
  gtk_widget_set_sensitive (self->z_scale, depth > 1);
}

/* an error of the fit, with what it means in this dialog */
static char *
error_text (AiryFitDialog *self, const GError *error)
{
  GString *text = g_string_new (error->message);

  /* the engine names the CLI's option: here it is the Crop field */
  if (strstr (error->message, "--crop") != NULL)
    g_string_append_printf (text, " — %s", _("in this dialog: set Crop (pixels) to the bead's window"));
  if (self->opened != NULL && self->opened->dx > 0 && strstr (error->message, "--crop") != NULL)
    {
      double du = airy_system_get_spacing (self->system);

      if (du > 0 && fabs (self->opened->dx - du) > 1e-6 * du)
        g_string_append_printf (text, _(" (the stack, %u × %u pixels of %g µm, was resampled to the system's grid.spacing, %g µm)"),
                                self->opened->width, self->opened->height, self->opened->dx, du);
    }
  return g_string_free (text, FALSE);
}

static void
update_sensitivity (AiryFitDialog *self)
{
  gboolean running = self->cancellable != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "fit.start",
                                 !running && (self->path != NULL || self->resident != NULL));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "fit.cancel", running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "fit.apply",
                                 !running && self->result != NULL && self->apply != NULL);
}

/* a value printed with %.3f that rounds to zero prints as 0.000, not −0.000 */
static double
no_negative_zero (double v)
{
  return fabs (v) < 0.0005 ? 0.0 : v;
}

static void
on_fit_done (GObject *source, GAsyncResult *result, gpointer data)
{
  AiryFitDialog *self = AIRY_FIT_DIALOG (source);
  GTask *task = G_TASK (result);
  g_autoptr(GError) error = NULL;
  AiryFitResult *res = g_task_propagate_pointer (task, &error);
  gsize n, q;

  /* a newer fit owns the dialog */
  if (g_task_get_cancellable (task) != self->cancellable)
    {
      g_clear_pointer (&res, airy_fit_result_free);
      return;
    }
  g_clear_object (&self->cancellable);
  show_progress (self);
  if (res == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        set_status (self, _("Cancelled."));
      else
        {
          g_autofree char *text = error_text (self, error);

          /* no older result stays on screen, to be applied by mistake */
          clear_result (self);
          set_status (self, text);
        }
    }
  else
    {
      g_autoptr(GString) text = g_string_new (NULL);

      g_clear_pointer (&self->result, airy_fit_result_free);
      g_clear_pointer (&self->measured, airy_stack_free);
      self->result = res;
      self->measured = airy_stack_copy (res->model);
      n = (gsize) res->model->depth * res->model->height * res->model->width;
      for (q = 0; q < n; q++)
        self->measured->data[q] = res->model->data[q] + res->residual->data[q];
      self->cursor_x = (int) res->model->width / 2;
      self->cursor_y = (int) res->model->height / 2;
      set_planes (self, res->model->depth);
      if (res->restarts > 1)
        g_string_printf (text, _("%s: %u iterations of the best start, %u over %u starts, in %.2f s"),
                         res->converged ? _("converged") : _("not converged"), res->iterations,
                         res->iterations_total, res->restarts, res->seconds);
      else
        g_string_printf (text, _("%s: %u iterations in %.2f s"), res->converged ? _("converged") : _("not converged"),
                         res->iterations, res->seconds);
      g_string_append_printf (text, _("; RMS %.4f waves, Strehl %.3f; bead at %.3f, %.3f, %.3f µm"),
                              res->rms_waves, res->strehl, no_negative_zero (res->position[0]),
                              no_negative_zero (res->position[1]), no_negative_zero (res->position[2]));
      if (res->threads)
        g_string_append_printf (text, ngettext (" on %s (%s, %u thread)", " on %s (%s, %u threads)", res->threads),
                                res->backend, res->device, res->threads);
      else
        g_string_append_printf (text, _(" on %s (%s)"), res->backend, res->device);
      if (self->resident)
        g_string_append_printf (text, _(" (window x %u … %u, y %u … %u around the cursor)"), res->window[0],
                                res->window[0] + res->window[2] - 1, res->window[1], res->window[1] + res->window[3] - 1);
      /* resampling, a window moved at the edges, …: said, not hidden */
      set_status_warnings (self, text->str, res->warnings);
    }
  update_sensitivity (self);
  redraw_results (self);
  g_signal_emit (self, signals[SIGNAL_FINISHED], 0);
}

/* The system a fit models: the bench's as it is now (its disabled
 * elements off), or the one the dialog was made with. */
static AirySystem *
current_system (AiryFitDialog *self)
{
  return self->panel && airy_bench_panel_get_system (self->panel) ? airy_bench_panel_get_system (self->panel)
                                                                   : self->system;
}

/* "Model: astigmatic (changed) — Objective point source, FF lens; off:
 * Phase mask": which system the fit uses, in the dialog */
static void
update_system_label (AiryFitDialog *self, AirySystem *system)
{
  GPtrArray *elements = airy_system_get_elements (system);
  g_autoptr(GString) on = g_string_new (NULL), off = g_string_new (NULL);
  g_autofree char *text = NULL;
  const char *name = airy_system_get_name (system);
  guint i;

  for (i = 0; i < elements->len; i++)
    {
      AiryElement *e = g_ptr_array_index (elements, i);
      GString *list = airy_element_get_enabled (e) ? on : off;

      g_string_append_printf (list, "%s%s", list->len ? ", " : "", _(AIRY_ELEMENT_GET_CLASS (e)->title));
    }
  if (_airy_modality_has_objective (_airy_modality_of (system)))
    g_string_prepend (on, on->len ? _("Microscope objective, ") : _("Microscope objective"));
  /* TRANSLATORS: the system's name, its elements switched off, and those on */
  /* what is off first: the line may be cut at its end */
  text = off->len ? g_strdup_printf (_("Model: the bench now (%s), off and not modelled: %s; on: %s"),
                                     name ? name : _("Untitled"), off->str, on->str)
                  : g_strdup_printf (_("Model: the bench now (%s): %s"), name ? name : _("Untitled"), on->str);
  gtk_label_set_text (GTK_LABEL (self->system_label), text);
  gtk_widget_set_tooltip_text (self->system_label, text);
}

const char *
airy_fit_dialog_get_system_text (AiryFitDialog *self)
{
  return gtk_label_get_text (GTK_LABEL (self->system_label));
}

void
airy_fit_dialog_set_bench (AiryFitDialog  *self,
                           AiryBenchPanel *panel)
{
  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));

  if (self->panel)
    g_object_remove_weak_pointer (G_OBJECT (self->panel), (gpointer *) &self->panel);
  self->panel = panel;
  if (panel)
    g_object_add_weak_pointer (G_OBJECT (panel), (gpointer *) &self->panel);
  update_system_label (self, current_system (self));
}

void
airy_fit_dialog_start (AiryFitDialog *self)
{
  g_autoptr(GTask) task = NULL;
  FitJob *job;

  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));
  if (self->cancellable != NULL || (self->path == NULL && self->resident == NULL))
    return;
  /* the bench as it is when Fit is pressed, not when the dialog opened */
  if (current_system (self) != self->system)
    {
      AirySystem *now = airy_system_copy (current_system (self));

      g_clear_object (&self->system);
      self->system = now;
    }
  update_system_label (self, self->system);
  job = g_new0 (FitJob, 1);
  job->system = airy_system_copy (self->system);
  job->path = g_strdup (self->path);
  job->resident = self->resident ? airy_resident_ref (self->resident) : NULL;
  airy_fit_options_init (&job->options);
  job->options.zernike_max = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->zernike_spin));
  job->options.crop = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->crop_spin));
  if (self->resident)
    {
      /* the engine's --crop, centred on the cursor */
      job->options.crop_at = TRUE;
      job->options.crop_x = self->at_x;
      job->options.crop_y = self->at_y;
    }
  job->options.progress = on_fit_progress;
  job->options.user_data = self;
  self->cancellable = g_cancellable_new ();
  g_array_set_size (self->losses, 0);
  g_mutex_lock (&self->lock);
  g_array_set_size (self->pending, 0);
  g_mutex_unlock (&self->lock);
  /* the task holds the dialog until the worker is done */
  task = g_task_new (self, self->cancellable, on_fit_done, NULL);
  g_task_set_task_data (task, job, fit_job_free);
  g_task_run_in_thread (task, fit_thread);
  set_status (self, _("Fitting…"));
  update_sensitivity (self);
  gtk_widget_queue_draw (self->loss_area);
}

void
airy_fit_dialog_cancel (AiryFitDialog *self)
{
  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
}

gboolean
airy_fit_dialog_is_running (AiryFitDialog *self)
{
  return self->cancellable != NULL;
}

const AiryFitResult *
airy_fit_dialog_get_result (AiryFitDialog *self)
{
  return self->result;
}

const char *
airy_fit_dialog_get_status (AiryFitDialog *self)
{
  return self->status;
}

guint
airy_fit_dialog_get_n_losses (AiryFitDialog *self)
{
  return self->losses->len;
}

void
airy_fit_dialog_apply (AiryFitDialog *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) fitted = NULL;
  g_autofree int *indices = NULL;
  g_autofree double *coefficients = NULL;
  AiryFitResult terms;
  guint i, n = 0;

  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));
  if (self->result == NULL || self->apply == NULL)
    return;
  /* the fitted terms that are not zero as shown (0.0000 waves), in a mask
   * added to the bench's system of now: nothing else of it changes (an
   * element switched off stays off) */
  indices = g_new (int, MAX (self->result->n_terms, 1));
  coefficients = g_new (double, MAX (self->result->n_terms, 1));
  for (i = 0; i < self->result->n_terms; i++)
    if (fabs (self->result->coefficients[i]) >= 5e-5)
      {
        indices[n] = self->result->indices[i];
        coefficients[n++] = self->result->coefficients[i];
      }
  if (n == 0)
    {
      set_status (self, _("The fit found no aberration to add: the bench is unchanged."));
      return;
    }
  terms = *self->result;
  terms.indices = indices;
  terms.coefficients = coefficients;
  terms.n_terms = n;
  fitted = airy_fit_result_apply (&terms, current_system (self), &error);
  if (fitted == NULL)
    {
      set_status (self, error->message);
      return;
    }
  self->apply (self->apply_data, fitted, NULL);
  set_status (self, _("The fitted phase mask is in the bench."));
}

/* on a worker: the opened file's stack (the UI thread touches no file) */
static void
open_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  AiryStack *stack = airy_image_read (task_data, &error);

  if (stack == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, stack, (GDestroyNotify) airy_stack_free);
}

static void
on_opened (GObject *source, GAsyncResult *result, gpointer data)
{
  AiryFitDialog *self = AIRY_FIT_DIALOG (source);
  GTask *task = G_TASK (result);
  g_autoptr(GError) error = NULL;
  g_autofree char *base = NULL;
  AiryStack *stack = g_task_propagate_pointer (task, &error);

  /* a later file (or none) replaced this one: its stack is not shown */
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    {
      g_clear_pointer (&stack, airy_stack_free);
      return;
    }
  g_clear_object (&self->open_cancellable);
  base = g_path_get_basename (g_task_get_task_data (task));
  if (stack == NULL)
    {
      /* a fit started meanwhile says it itself */
      if (self->cancellable == NULL)
        {
          g_clear_pointer (&self->path, g_free);
          set_status (self, error->message);
        }
    }
  else
    {
      self->opened = stack;
      set_planes (self, stack->depth);
      if (self->cancellable == NULL)
        {
          g_autofree char *text = g_strdup_printf (_("%s: %u × %u pixels, %u planes; press Fit"), base,
                                                   stack->width, stack->height, stack->depth);
          set_status (self, text);
        }
    }
  update_sensitivity (self);
  redraw_results (self);
}

void
airy_fit_dialog_set_file (AiryFitDialog *self, const char *path)
{
  g_autofree char *base = NULL;

  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));
  /* a fit of the previous stack still running is not this file's, nor its read */
  airy_fit_dialog_cancel (self);
  g_clear_object (&self->cancellable);
  if (self->open_cancellable)
    g_cancellable_cancel (self->open_cancellable);
  g_clear_object (&self->open_cancellable);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->resident, airy_resident_unref);
  g_clear_pointer (&self->opened, airy_stack_free);
  clear_result (self);
  base = path ? g_path_get_basename (path) : NULL;
  gtk_label_set_text (GTK_LABEL (self->file_label), base ? base : _("No bead stack"));
  gtk_widget_set_tooltip_text (self->file_label, path);
  if (path != NULL)
    {
      g_autoptr(GTask) task = NULL;
      g_autofree char *text = g_strdup_printf (_("Reading %s…"), base);

      /* read now on a worker, as the fit will: a file that is no stack is
       * said when the read ends; Fit may start meanwhile (its worker reads
       * the file itself) */
      self->path = g_strdup (path);
      self->open_cancellable = g_cancellable_new ();
      task = g_task_new (self, self->open_cancellable, on_opened, NULL);
      g_task_set_task_data (task, g_strdup (path), g_free);
      g_task_run_in_thread (task, open_thread);
      set_status (self, text);
    }
  else
    set_status (self, "");
  update_sensitivity (self);
  redraw_results (self);
}

gboolean
airy_fit_dialog_is_reading (AiryFitDialog *self)
{
  g_return_val_if_fail (AIRY_IS_FIT_DIALOG (self), FALSE);
  return self->open_cancellable != NULL;
}

void
airy_fit_dialog_set_resident (AiryFitDialog *self,
                              AiryResident  *resident,
                              guint          x,
                              guint          y,
                              guint          z)
{
  g_autofree char *text = NULL;
  const AiryStack *s;
  guint crop;

  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));
  g_return_if_fail (resident != NULL);
  s = airy_resident_get_stack (resident);
  airy_fit_dialog_cancel (self);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->resident, airy_resident_unref);
  g_clear_pointer (&self->opened, airy_stack_free);
  clear_result (self);
  set_status (self, "");
  self->resident = airy_resident_ref (resident);
  self->at_x = x;
  self->at_y = y;
  self->at_z = z;
  /* a window around the cursor; the whole stack when it is smaller */
  crop = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->crop_spin));
  if (crop == 0)
    gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->crop_spin),
                               MIN (AIRY_FIT_DIALOG_BEAD_CROP, MIN (s->width, s->height)));
  /* planes counted from 1, as the viewer and the slider count them */
  text = g_strdup_printf (_("Viewer stack %u × %u × %u, cursor x %u, y %u, plane %u of %u"),
                          s->width, s->height, s->depth, x, y, z + 1, s->depth);
  gtk_label_set_text (GTK_LABEL (self->file_label), text);
  gtk_widget_set_tooltip_text (self->file_label, text);
  update_sensitivity (self);
}

void
airy_fit_dialog_set_message (AiryFitDialog *self,
                             const char    *message)
{
  g_return_if_fail (AIRY_IS_FIT_DIALOG (self));
  set_status (self, message);
}

void
airy_fit_dialog_set_apply_func (AiryFitDialog *self, AiryFitApplyFunc apply, gpointer user_data)
{
  self->apply = apply;
  self->apply_data = user_data;
  update_sensitivity (self);
}

static void
on_file_chosen (GtkWindow *dialog, const char *path)
{
  airy_fit_dialog_set_file (AIRY_FIT_DIALOG (dialog), path);
}

/* fit.open: a bead stack from a file chooser */
static void
open_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  _airy_ui_choose_tiff_stack (GTK_WINDOW (widget), _("Open Bead Stack"), on_file_chosen);
}

/* fit.start, fit.cancel, fit.apply: the buttons' actions (enabled by
 * update_sensitivity) */
static void
start_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  airy_fit_dialog_start (AIRY_FIT_DIALOG (widget));
}

static void
cancel_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  airy_fit_dialog_cancel (AIRY_FIT_DIALOG (widget));
}

static void
apply_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  airy_fit_dialog_apply (AIRY_FIT_DIALOG (widget));
}

static void
on_z_changed (GtkRange *range, AiryFitDialog *self)
{
  redraw_results (self);
}

/* "17/32", as the viewer counts planes */
static char *
format_plane (GtkScale *scale, double value, gpointer data)
{
  AiryFitDialog *self = data;
  const AiryStack *s = self->result ? self->result->model : self->opened;

  return s ? g_strdup_printf ("%d/%u", (int) value, s->depth) : g_strdup ("");
}

static gboolean
on_close_request (GtkWindow *window, gpointer data)
{
  airy_fit_dialog_cancel (AIRY_FIT_DIALOG (window));
  return FALSE;
}

/* ---- the object ---- */

/* the warnings' area is shown while it has warnings (a binding of its
 * visibility to the label's text) */
static gboolean
text_to_visible (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  const char *text = g_value_get_string (from);

  g_value_set_boolean (to, text != NULL && *text != '\0');
  return TRUE;
}

/* A spin button over an option's declared range, at its default (the
 * range airy-sim fit checks: airy-options-private.h) */
static void
option_spin (GtkWidget *spin, const char *option, double step)
{
  GParamSpecInt *spec = G_PARAM_SPEC_INT (_airy_option_spec (option));

  gtk_spin_button_configure (GTK_SPIN_BUTTON (spin),
                             gtk_adjustment_new (spec->minimum, spec->minimum, spec->maximum, step, 10 * step, 0),
                             step, 0);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), spec->default_value);
}

static void
airy_fit_dialog_init (AiryFitDialog *self)
{
  static const struct { GtkDrawingAreaDrawFunc draw; gsize offset; } areas[] = {
    { _airy_fit_dialog_draw_loss, G_STRUCT_OFFSET (AiryFitDialog, loss_area) },
    { _airy_fit_dialog_draw_image, G_STRUCT_OFFSET (AiryFitDialog, images[0]) },
    { _airy_fit_dialog_draw_image, G_STRUCT_OFFSET (AiryFitDialog, images[1]) },
    { _airy_fit_dialog_draw_image, G_STRUCT_OFFSET (AiryFitDialog, images[2]) },
    { _airy_fit_dialog_draw_wavefront, G_STRUCT_OFFSET (AiryFitDialog, wavefront) },
    { _airy_fit_dialog_draw_bars, G_STRUCT_OFFSET (AiryFitDialog, bars) },
  };
  guint i;

  g_mutex_init (&self->lock);
  self->pending = g_array_new (FALSE, FALSE, sizeof (LossPoint));
  self->losses = g_array_new (FALSE, FALSE, sizeof (LossPoint));
  gtk_widget_init_template (GTK_WIDGET (self));

  option_spin (self->zernike_spin, "fit-zernike", 1);
  option_spin (self->crop_spin, "fit-crop", 2);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (self->warnings_scroll),
                                              AIRY_FIT_DIALOG_WARNINGS_HEIGHT);
  g_object_bind_property_full (self->warnings_label, "label", self->warnings_scroll, "visible", G_BINDING_SYNC_CREATE,
                               text_to_visible, NULL, NULL, NULL);
  for (i = 0; i < G_N_ELEMENTS (areas); i++)
    gtk_drawing_area_set_draw_func (G_STRUCT_MEMBER (GtkDrawingArea *, self, areas[i].offset), areas[i].draw, self,
                                    NULL);
  for (i = 0; i < 3; i++)
    {
      GtkGesture *click = gtk_gesture_click_new ();

      g_object_set_data (G_OBJECT (self->images[i]), "airy-which", GINT_TO_POINTER (i));
      g_signal_connect (click, "pressed", G_CALLBACK (on_image_pressed), self);
      gtk_widget_add_controller (self->images[i], GTK_EVENT_CONTROLLER (click));
    }
  gtk_scale_set_format_value_func (GTK_SCALE (self->z_scale), format_plane, self, NULL);
  g_signal_connect (self->z_scale, "value-changed", G_CALLBACK (on_z_changed), self);
  g_signal_connect (self, "close-request", G_CALLBACK (on_close_request), NULL);
  update_sensitivity (self);
}

static void
airy_fit_dialog_dispose (GObject *object)
{
  AiryFitDialog *self = AIRY_FIT_DIALOG (object);

  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->open_cancellable)
    g_cancellable_cancel (self->open_cancellable);
  g_clear_object (&self->open_cancellable);
  if (self->panel)
    g_object_remove_weak_pointer (G_OBJECT (self->panel), (gpointer *) &self->panel);
  self->panel = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (object), AIRY_TYPE_FIT_DIALOG);
  G_OBJECT_CLASS (airy_fit_dialog_parent_class)->dispose (object);
}

static void
airy_fit_dialog_finalize (GObject *object)
{
  AiryFitDialog *self = AIRY_FIT_DIALOG (object);

  g_clear_object (&self->system);
  g_free (self->path);
  g_clear_pointer (&self->resident, airy_resident_unref);
  g_free (self->status);
  g_clear_pointer (&self->result, airy_fit_result_free);
  g_clear_pointer (&self->measured, airy_stack_free);
  g_clear_pointer (&self->opened, airy_stack_free);
  g_array_unref (self->pending);
  g_array_unref (self->losses);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (airy_fit_dialog_parent_class)->finalize (object);
}

static void
airy_fit_dialog_class_init (AiryFitDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = airy_fit_dialog_dispose;
  object_class->finalize = airy_fit_dialog_finalize;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/airyoptics/Airy/ui/airy-fit-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, file_label);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, system_label);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, zernike_spin);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, crop_spin);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, fit_button);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, apply_button);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, status_label);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, warnings_label);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, warnings_scroll);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, loss_area);
  gtk_widget_class_bind_template_child_full (widget_class, "image_measured", FALSE,
                                             G_STRUCT_OFFSET (AiryFitDialog, images[0]));
  gtk_widget_class_bind_template_child_full (widget_class, "image_model", FALSE,
                                             G_STRUCT_OFFSET (AiryFitDialog, images[1]));
  gtk_widget_class_bind_template_child_full (widget_class, "image_residual", FALSE,
                                             G_STRUCT_OFFSET (AiryFitDialog, images[2]));
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, z_scale);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, readout);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, wavefront);
  gtk_widget_class_bind_template_child (widget_class, AiryFitDialog, bars);
  gtk_widget_class_install_action (widget_class, "fit.open", NULL, open_activated);
  gtk_widget_class_install_action (widget_class, "fit.start", NULL, start_activated);
  gtk_widget_class_install_action (widget_class, "fit.cancel", NULL, cancel_activated);
  gtk_widget_class_install_action (widget_class, "fit.apply", NULL, apply_activated);
  /* Escape closes, as a dialog does (close-request cancels a running fit) */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
  /* a fit ended (result, error or cancel) */
  signals[SIGNAL_FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

GtkWidget *
airy_fit_dialog_new (GtkWindow *parent, AirySystem *system)
{
  AiryFitDialog *self = g_object_new (AIRY_TYPE_FIT_DIALOG, NULL);

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  self->system = airy_system_copy (system);
  update_system_label (self, self->system);
  if (parent)
    gtk_window_set_transient_for (GTK_WINDOW (self), parent);
  return GTK_WIDGET (self);
}
