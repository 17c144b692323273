#define G_LOG_DOMAIN "airy-optimize-dialog"

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "airy-optimize-dialog.h"
#include "airy-fit-dialog-private.h"
#include "airy-json-private.h"
#include "airy-optimize-private.h"
#include "airy-options-private.h"

/* The optimizer runs in a GTask thread on the system's file (its JSON, as
 * the bench has it when Optimize is pressed); each step is written under a
 * mutex and announced by at most one idle source. Cancel sets the
 * optimizer's stop flag: it stops before its next evaluation and the run
 * ends as "stopped" with the best point so far, which Apply can use. */

struct _AiryOptimizeDialog
{
  GtkWindow         parent_instance;

  AirySystem       *system;         /* the one the dialog was made with */
  AiryBenchPanel   *panel;          /* weak */
  AiryFitApplyFunc  apply;
  gpointer          apply_data;
  char             *target;
  AiryResident     *reference;      /* or the viewer's pinned reference as the target */
  char             *status;
  char             *progress;

  struct _Job      *job;            /* the running one (the task owns it) */
  gboolean          disposed;       /* a run ending after: its widgets are gone */
  GMutex            lock;           /* guards pending and idle_id */
  GArray           *pending;        /* AiryOptimizeStep from the worker */
  guint             idle_id;
  GArray           *curve;          /* double: the loss of each step shown */

  GStrv             best_paths;     /* the last run's result */
  double           *best_values;
  guint             steps_done;

  GPtrArray        *checks;         /* GtkCheckButton, each with its "airy-path" */
  GtkWidget        *target_label;
  GtkWidget        *loss_drop;
  GtkWidget        *optimizer_drop;
  GtkWidget        *steps_spin;
  GtkWidget        *lr_spin;
  GtkWidget        *variables_box;
  GtkWidget        *curve_area;
  GtkWidget        *progress_label;
  GtkWidget        *status_label;
};

G_DEFINE_FINAL_TYPE (AiryOptimizeDialog, airy_optimize_dialog, GTK_TYPE_WINDOW)

enum { SIGNAL_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *const loss_names[] = { "l2", "poisson" };
static const char *const optimizer_names[] = { "lbfgs", "adam" };

/* ---- the worker ---- */

typedef struct _Job
{
  AiryOptimizeDialog *self;        /* the task holds a reference */
  char               *json, *base_dir, *loss;
  AiryResident       *reference;   /* the target, else loss names its file */
  AiryLossKind        loss_kind;
  GStrv               paths;
  AiryOptimizerKind   kind;
  guint               steps;
  double              lr;
  volatile int        stop;
  /* the result */
  double             *best;
  double              first_loss, best_loss;
  guint               best_step, steps_done;
  AiryOptimizeEnd     end;
  char               *failure;
} Job;

static void
job_free (gpointer p)
{
  Job *job = p;

  g_free (job->json);
  g_free (job->base_dir);
  g_free (job->loss);
  g_clear_pointer (&job->reference, airy_resident_unref);
  g_strfreev (job->paths);
  g_free (job->best);
  g_free (job->failure);
  g_free (job);
}

static void
set_progress_text (AiryOptimizeDialog *self, const AiryOptimizeStep *s, guint steps)
{
  g_free (self->progress);
  self->progress = g_strdup_printf (_("Step %u of %u: loss %.6g, best %.6g (step %u), %.1f s"), s->step, steps,
                                    s->loss, s->best, s->best_step, s->elapsed_s);
  gtk_label_set_text (GTK_LABEL (self->progress_label), self->progress);
}

static gboolean
show_progress (gpointer data)
{
  AiryOptimizeDialog *self = data;
  AiryOptimizeStep last = { 0 };
  guint i, n;

  g_mutex_lock (&self->lock);
  n = self->pending->len;
  for (i = 0; i < n; i++)
    g_array_append_val (self->curve, g_array_index (self->pending, AiryOptimizeStep, i).loss);
  if (n)
    last = g_array_index (self->pending, AiryOptimizeStep, n - 1);
  g_array_set_size (self->pending, 0);
  self->idle_id = 0;
  g_mutex_unlock (&self->lock);
  if (self->disposed)
    return G_SOURCE_REMOVE;
  if (n && self->job)
    set_progress_text (self, &last, self->job->steps);
  gtk_widget_queue_draw (self->curve_area);
  return G_SOURCE_REMOVE;
}

/* on the worker */
static gboolean
on_step (AiryOptimizer *o, const AiryOptimizeStep *step, gpointer data)
{
  Job *job = data;
  AiryOptimizeDialog *self = job->self;

  g_mutex_lock (&self->lock);
  g_array_append_val (self->pending, *step);
  if (self->idle_id == 0)
    self->idle_id = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, show_progress, g_object_ref (self), g_object_unref);
  g_mutex_unlock (&self->lock);
  return !job->stop;
}

/* the loss of the target file (its spec), or of the pinned reference's
 * values (read here: a result on a GPU comes to host memory) */
static AiryLoss *
job_loss (Job *job, GError **error)
{
  AiryStack *target;
  AiryLoss *loss;

  if (job->reference == NULL)
    return _airy_loss_new_from_spec (job->loss, error);
  if ((target = airy_resident_to_stack (job->reference, error)) == NULL)
    return NULL;
  loss = g_new0 (AiryLoss, 1);
  loss->kind = job->loss_kind;
  loss->file = g_strdup (_("the pinned reference"));
  loss->target = target;
  return loss;
}

static void
optimize_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  g_autoptr(GError) error = NULL, failure = NULL;
  g_autoptr(JsonNode) root = json_from_string (job->json, &error);
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryLoss) loss = NULL;
  g_autoptr(GPtrArray) vars = NULL;
  g_autoptr(AiryOptimizer) o = NULL;
  guint v;

  if (root == NULL || (system = airy_system_new_from_data (job->json, -1, job->base_dir, NULL, &error)) == NULL
      || (loss = job_loss (job, &error)) == NULL
      || (vars = _airy_grad_vars_from_paths (root, system, (const char *const *) job->paths, &error)) == NULL
      || (o = _airy_optimizer_new (root, job->base_dir, loss, vars, 0, &error)) == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  o->stop = &job->stop;
  job->end = _airy_optimizer_run (o, job->kind, job->steps, job->lr, on_step, job, &failure);
  if (job->end == AIRY_OPTIMIZE_FAILED && !isfinite (o->best_loss))
    {
      /* nothing good to keep: a target of another shape, a loss that fails at once */
      g_task_return_error (task, g_steal_pointer (&failure));
      return;
    }
  job->failure = failure ? g_strdup (failure->message) : NULL;
  job->best = g_new (double, vars->len);
  for (v = 0; v < vars->len; v++)
    job->best[v] = _airy_optimizer_best_value (o, v);
  job->first_loss = o->first_loss;
  job->best_loss = o->best_loss;
  job->best_step = o->best_step;
  job->steps_done = o->steps_done;
  g_task_return_boolean (task, TRUE);
}

/* ---- the dialog ---- */

static void
set_status (AiryOptimizeDialog *self, const char *text)
{
  g_free (self->status);
  self->status = g_strdup (text);
  gtk_label_set_text (GTK_LABEL (self->status_label), text);
}

static void
update_sensitivity (AiryOptimizeDialog *self)
{
  gboolean running = self->job != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "optimize.start", !running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "optimize.cancel", running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "optimize.apply",
                                 !running && self->best_paths != NULL && self->apply != NULL);
}

static AirySystem *
current_system (AiryOptimizeDialog *self)
{
  return self->panel && airy_bench_panel_get_system (self->panel) ? airy_bench_panel_get_system (self->panel)
                                                                   : self->system;
}

/* the system's file with every parameter written (defaults too: a z of 0
 * is a variable as any other) */
static JsonNode *
system_root (AirySystem *system, GError **error)
{
  g_autofree char *json = airy_system_to_json_full (system);

  return json_from_string (json, error);
}

/* The check boxes: one per differentiable number of the system, those
 * ticked before kept ticked. */
static void
list_variables (AiryOptimizeDialog *self)
{
  AirySystem *system = current_system (self);
  g_autoptr(GHashTable) ticked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(JsonNode) root = system_root (system, NULL);
  g_autoptr(GPtrArray) vars = root ? _airy_grad_vars_all (root, system) : NULL;
  GtkWidget *child;
  guint i;

  for (i = 0; i < self->checks->len; i++)
    {
      GtkWidget *check = g_ptr_array_index (self->checks, i);

      if (gtk_check_button_get_active (GTK_CHECK_BUTTON (check)))
        g_hash_table_add (ticked, g_strdup (g_object_get_data (G_OBJECT (check), "airy-path")));
    }
  g_ptr_array_set_size (self->checks, 0);
  while ((child = gtk_widget_get_first_child (self->variables_box)) != NULL)
    gtk_box_remove (GTK_BOX (self->variables_box), child);
  for (i = 0; vars && i < vars->len; i++)
    {
      const AiryGradVar *var = g_ptr_array_index (vars, i);
      JsonArray *elements = json_object_get_array_member (json_node_get_object (root), "elements");
      JsonObject *element = json_array_get_object_element (elements, var->element);
      const char *type = json_object_get_string_member_with_default (element, "type", "");
      /* TRANSLATORS: the variable's path, its element's type, its value and its range */
      g_autofree char *text = g_strdup_printf (_("%s (%s) = %.6g, in %s"), var->path, type, var->value,
                                               var->range ? var->range : "");
      GtkWidget *check = gtk_check_button_new_with_label (text);

      g_object_set_data_full (G_OBJECT (check), "airy-path", g_strdup (var->path), g_free);
      gtk_check_button_set_active (GTK_CHECK_BUTTON (check), g_hash_table_contains (ticked, var->path));
      gtk_box_append (GTK_BOX (self->variables_box), check);
      g_ptr_array_add (self->checks, check);
    }
  if (self->checks->len == 0)
    gtk_box_append (GTK_BOX (self->variables_box),
                    gtk_label_new (_("The bench's system has no differentiable numbers.")));
}

static void
clear_best (AiryOptimizeDialog *self)
{
  g_clear_pointer (&self->best_paths, g_strfreev);
  g_clear_pointer (&self->best_values, g_free);
  self->steps_done = 0;
}

static void
on_done (GObject *source, GAsyncResult *result, gpointer data)
{
  AiryOptimizeDialog *self = AIRY_OPTIMIZE_DIALOG (source);
  Job *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;

  show_progress (self);
  self->job = NULL;
  if (self->disposed)
    return;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      /* the engine names the CLI's option: here it is the target */
      g_autofree char *text = g_str_has_prefix (error->message, "--loss: ")
                                ? g_strdup_printf (_("Target: %s"), error->message + strlen ("--loss: "))
                                : g_strdup (error->message);

      clear_best (self);
      set_status (self, text);
    }
  else
    {
      g_autofree char *text = NULL;

      clear_best (self);
      self->best_paths = g_strdupv (job->paths);
      self->best_values = g_memdup2 (job->best, g_strv_length (job->paths) * sizeof (double));
      self->steps_done = job->steps_done;
      if (job->end == AIRY_OPTIMIZE_STOPPED)
        text = g_strdup_printf (_("Cancelled after %u steps: the best so far, loss %.6g (from %.6g) at step %u, "
                                  "can be applied."),
                                job->steps_done, job->best_loss, job->first_loss, job->best_step);
      else if (job->end == AIRY_OPTIMIZE_FAILED)
        text = g_strdup_printf (_("Stopped: %s; the best so far, loss %.6g at step %u, can be applied."),
                                job->failure, job->best_loss, job->best_step);
      else
        text = g_strdup_printf (_("%s after %u steps: loss %.6g → %.6g (best at step %u)."),
                                job->end == AIRY_OPTIMIZE_CONVERGED ? _("Converged") : _("Done"), job->steps_done,
                                job->first_loss, job->best_loss, job->best_step);
      set_status (self, text);
    }
  update_sensitivity (self);
  g_signal_emit (self, signals[SIGNAL_FINISHED], 0);
}

void
airy_optimize_dialog_start (AiryOptimizeDialog *self)
{
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  AirySystem *system;
  Job *job;
  guint i;

  g_return_if_fail (AIRY_IS_OPTIMIZE_DIALOG (self));
  if (self->job != NULL)
    return;
  for (i = 0; i < self->checks->len; i++)
    if (gtk_check_button_get_active (GTK_CHECK_BUTTON (g_ptr_array_index (self->checks, i))))
      g_ptr_array_add (paths, g_strdup (g_object_get_data (G_OBJECT (g_ptr_array_index (self->checks, i)),
                                                           "airy-path")));
  if (self->target == NULL && self->reference == NULL)
    {
      set_status (self, _("Choose the target stack (a TIFF of the result's shape) first."));
      return;
    }
  if (paths->len == 0)
    {
      set_status (self, _("Tick at least one variable: no parameter would change."));
      return;
    }
  g_ptr_array_add (paths, NULL);
  system = current_system (self);
  job = g_new0 (Job, 1);
  job->self = self;
  job->json = airy_system_to_json_full (system);
  job->base_dir = g_strdup (airy_system_get_base_dir (system));
  job->reference = self->reference ? airy_resident_ref (self->reference) : NULL;
  job->loss_kind = gtk_drop_down_get_selected (GTK_DROP_DOWN (self->loss_drop)) == 1 ? AIRY_LOSS_POISSON : AIRY_LOSS_L2;
  job->loss = g_strdup_printf ("%s:%s", loss_names[gtk_drop_down_get_selected (GTK_DROP_DOWN (self->loss_drop))],
                               self->target);
  job->paths = (GStrv) g_ptr_array_steal (paths, NULL);
  job->kind = gtk_drop_down_get_selected (GTK_DROP_DOWN (self->optimizer_drop)) == 1 ? AIRY_OPTIMIZER_ADAM
                                                                                     : AIRY_OPTIMIZER_LBFGS;
  job->steps = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->steps_spin));
  job->lr = gtk_spin_button_get_value (GTK_SPIN_BUTTON (self->lr_spin));
  self->job = job;
  g_array_set_size (self->curve, 0);
  g_mutex_lock (&self->lock);
  g_array_set_size (self->pending, 0);
  g_mutex_unlock (&self->lock);
  g_clear_pointer (&self->progress, g_free);
  gtk_label_set_text (GTK_LABEL (self->progress_label), "");
  task = g_task_new (self, NULL, on_done, NULL);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, optimize_thread);
  set_status (self, _("Optimizing…"));
  update_sensitivity (self);
  gtk_widget_queue_draw (self->curve_area);
}

void
airy_optimize_dialog_cancel (AiryOptimizeDialog *self)
{
  g_return_if_fail (AIRY_IS_OPTIMIZE_DIALOG (self));
  if (self->job)
    self->job->stop = 1;
}

gboolean
airy_optimize_dialog_is_running (AiryOptimizeDialog *self)
{
  return self->job != NULL;
}

void
airy_optimize_dialog_apply (AiryOptimizeDialog *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(AirySystem) best = NULL;
  g_autofree char *json = NULL, *text = NULL;
  AirySystem *now;
  guint i;

  g_return_if_fail (AIRY_IS_OPTIMIZE_DIALOG (self));
  if (self->best_paths == NULL || self->apply == NULL)
    return;
  /* the bench of now with the optimized numbers set: nothing else changes */
  now = current_system (self);
  if ((root = system_root (now, &error)) == NULL)
    {
      set_status (self, error->message);
      return;
    }
  for (i = 0; self->best_paths[i]; i++)
    {
      JsonNode *node = _airy_json_find_number (root, self->best_paths[i]);

      if (node == NULL)
        {
          text = g_strdup_printf (_("%s is no longer in the bench's system: nothing applied."), self->best_paths[i]);
          set_status (self, text);
          return;
        }
      json_node_set_double (node, self->best_values[i]);
    }
  json = json_to_string (root, FALSE);
  if ((best = airy_system_new_from_data (json, -1, airy_system_get_base_dir (now), NULL, &error)) == NULL)
    {
      set_status (self, error->message);
      return;
    }
  self->apply (self->apply_data, best, NULL);
  text = g_strdup_printf (ngettext ("The optimized value is in the bench.", "The %u optimized values are in the bench.",
                                    i), i);
  set_status (self, text);
  list_variables (self);
}

/* ---- setters and getters ---- */

void
airy_optimize_dialog_set_apply_func (AiryOptimizeDialog *self, AiryFitApplyFunc apply, gpointer user_data)
{
  self->apply = apply;
  self->apply_data = user_data;
  update_sensitivity (self);
}

void
airy_optimize_dialog_set_bench (AiryOptimizeDialog *self, AiryBenchPanel *panel)
{
  g_return_if_fail (AIRY_IS_OPTIMIZE_DIALOG (self));
  if (self->panel)
    g_object_remove_weak_pointer (G_OBJECT (self->panel), (gpointer *) &self->panel);
  self->panel = panel;
  if (panel)
    g_object_add_weak_pointer (G_OBJECT (panel), (gpointer *) &self->panel);
  list_variables (self);
}

void
airy_optimize_dialog_set_target (AiryOptimizeDialog *self, const char *path)
{
  g_autofree char *base = path ? g_path_get_basename (path) : NULL;

  g_return_if_fail (AIRY_IS_OPTIMIZE_DIALOG (self));
  g_free (self->target);
  self->target = g_strdup (path);
  g_clear_pointer (&self->reference, airy_resident_unref);
  gtk_label_set_text (GTK_LABEL (self->target_label), base ? base : _("No target stack"));
  gtk_widget_set_tooltip_text (self->target_label, path);
  set_status (self, "");
}

void
airy_optimize_dialog_set_target_resident (AiryOptimizeDialog *self, AiryResident *resident)
{
  const AiryStack *s = airy_resident_get_stack (resident);
  g_autofree char *text = NULL;

  g_return_if_fail (AIRY_IS_OPTIMIZE_DIALOG (self));
  airy_resident_ref (resident);
  g_clear_pointer (&self->reference, airy_resident_unref);
  self->reference = resident;
  g_clear_pointer (&self->target, g_free);
  text = g_strdup_printf (_("The viewer's pinned reference, %u × %u × %u"), s->width, s->height, s->depth);
  gtk_label_set_text (GTK_LABEL (self->target_label), text);
  gtk_widget_set_tooltip_text (self->target_label, text);
  set_status (self, "");
}

static guint
name_index (const char *const *names, guint n, const char *name)
{
  guint i;

  for (i = 0; i < n; i++)
    if (g_strcmp0 (names[i], name) == 0)
      return i;
  g_return_val_if_reached (0);
}

void
airy_optimize_dialog_set_loss (AiryOptimizeDialog *self, const char *loss)
{
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->loss_drop),
                              name_index (loss_names, G_N_ELEMENTS (loss_names), loss));
}

void
airy_optimize_dialog_set_optimizer (AiryOptimizeDialog *self, const char *optimizer, guint steps, double lr)
{
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->optimizer_drop),
                              name_index (optimizer_names, G_N_ELEMENTS (optimizer_names), optimizer));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->steps_spin), steps);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->lr_spin), lr);
}

guint
airy_optimize_dialog_get_n_variables (AiryOptimizeDialog *self)
{
  return self->checks->len;
}

const char *
airy_optimize_dialog_get_variable (AiryOptimizeDialog *self, guint i)
{
  g_return_val_if_fail (i < self->checks->len, NULL);
  return g_object_get_data (G_OBJECT (g_ptr_array_index (self->checks, i)), "airy-path");
}

gboolean
airy_optimize_dialog_set_variable_active (AiryOptimizeDialog *self, const char *path, gboolean active)
{
  guint i;

  for (i = 0; i < self->checks->len; i++)
    if (g_strcmp0 (airy_optimize_dialog_get_variable (self, i), path) == 0)
      {
        gtk_check_button_set_active (GTK_CHECK_BUTTON (g_ptr_array_index (self->checks, i)), active);
        return TRUE;
      }
  return FALSE;
}

gboolean
airy_optimize_dialog_get_best (AiryOptimizeDialog *self, const char *path, double *value)
{
  guint i;

  for (i = 0; self->best_paths && self->best_paths[i]; i++)
    if (g_str_equal (self->best_paths[i], path))
      {
        *value = self->best_values[i];
        return TRUE;
      }
  return FALSE;
}

guint
airy_optimize_dialog_get_steps_done (AiryOptimizeDialog *self)
{
  return self->steps_done;
}

const char *
airy_optimize_dialog_get_progress (AiryOptimizeDialog *self)
{
  return self->progress;
}

const char *
airy_optimize_dialog_get_status (AiryOptimizeDialog *self)
{
  return self->status;
}

/* ---- the widgets ---- */

/* the loss of each step, log scale */
static void
draw_curve (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  AiryOptimizeDialog *self = data;
  GArray *c = self->curve;
  double lo = INFINITY, hi = -INFINITY;
  guint i;

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  for (i = 0; i < c->len; i++)
    if (g_array_index (c, double, i) > 0 && isfinite (g_array_index (c, double, i)))
      {
        lo = MIN (lo, log10 (g_array_index (c, double, i)));
        hi = MAX (hi, log10 (g_array_index (c, double, i)));
      }
  cairo_set_source_rgb (cr, 0.4, 0.4, 0.4);
  cairo_move_to (cr, 6, 14);
  if (c->len == 0 || !isfinite (lo))
    {
      cairo_show_text (cr, _("Loss per step (log scale)"));
      return;
    }
  {
    g_autofree char *label = g_strdup_printf (_("Loss per step (log scale): %.3g … %.3g"), pow (10, lo), pow (10, hi));

    cairo_show_text (cr, label);
  }
  if (hi - lo < 1e-12)
    hi = lo + 1;
  cairo_set_source_rgb (cr, 0.1, 0.3, 0.8);
  cairo_set_line_width (cr, 1.5);
  for (i = 0; i < c->len; i++)
    {
      double v = g_array_index (c, double, i);
      double x = 8 + (width - 16) * (c->len > 1 ? (double) i / (c->len - 1) : 0.5);
      double y = 22 + (height - 30) * (1 - (v > 0 ? (log10 (v) - lo) / (hi - lo) : 0));

      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);
}

static void
on_target_chosen (GtkWindow *dialog, const char *path)
{
  airy_optimize_dialog_set_target (AIRY_OPTIMIZE_DIALOG (dialog), path);
}

static void
open_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  _airy_ui_choose_tiff_stack (GTK_WINDOW (widget), _("Open Target Stack"), on_target_chosen);
}

/* optimize.use-reference: the pinned reference of the viewer beside the bench */
static void
reference_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  AiryOptimizeDialog *self = AIRY_OPTIMIZE_DIALOG (widget);
  GtkWindow *parent = gtk_window_get_transient_for (GTK_WINDOW (self));
  AiryStackViewer *viewer = parent ? _airy_ui_find_stack_viewer (GTK_WIDGET (parent)) : NULL;
  AiryStackView *view = viewer && airy_stack_viewer_get_pinned (viewer) ? airy_stack_viewer_get_reference_view (viewer)
                                                                        : NULL;
  AiryResident *resident = view ? airy_stack_view_get_resident (view) : NULL;

  if (resident == NULL)
    set_status (self, _("The viewer has no pinned reference: pin a result (Pin as Reference) first, or choose a "
                        "target file."));
  else
    airy_optimize_dialog_set_target_resident (self, resident);
}

static void
start_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  airy_optimize_dialog_start (AIRY_OPTIMIZE_DIALOG (widget));
}

static void
cancel_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  airy_optimize_dialog_cancel (AIRY_OPTIMIZE_DIALOG (widget));
}

static void
apply_activated (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  airy_optimize_dialog_apply (AIRY_OPTIMIZE_DIALOG (widget));
}

static gboolean
on_close_request (GtkWindow *window, gpointer data)
{
  airy_optimize_dialog_cancel (AIRY_OPTIMIZE_DIALOG (window));
  return FALSE;
}

static GtkWidget *
grid_row (GtkWidget *grid, int row, const char *label, GtkWidget *widget)
{
  GtkWidget *l = gtk_label_new_with_mnemonic (label);

  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_label_set_mnemonic_widget (GTK_LABEL (l), widget);
  gtk_grid_attach (GTK_GRID (grid), l, 0, row, 1, 1);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_grid_attach (GTK_GRID (grid), widget, 1, row, 1, 1);
  return widget;
}

static GtkWidget *
button (const char *label, const char *action)
{
  GtkWidget *b = gtk_button_new_with_mnemonic (label);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (b), action);
  return b;
}

static void
airy_optimize_dialog_init (AiryOptimizeDialog *self)
{
  const char *losses[] = { _("L2 to the target"), _("Poisson likelihood of the target's counts"), NULL };
  const char *optimizers[] = { _("L-BFGS (projected)"), _("Adam"), NULL };
  GParamSpecInt *steps = G_PARAM_SPEC_INT (_airy_option_spec ("optimize-steps"));
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  GtkWidget *grid = gtk_grid_new ();
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *scroll, *buttons, *heading;

  g_mutex_init (&self->lock);
  self->pending = g_array_new (FALSE, FALSE, sizeof (AiryOptimizeStep));
  self->curve = g_array_new (FALSE, FALSE, sizeof (double));
  self->checks = g_ptr_array_new ();
  gtk_window_set_title (GTK_WINDOW (self), _("Optimize System"));
  gtk_window_set_default_size (GTK_WINDOW (self), 720, 640);
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 12);
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);

  self->target_label = gtk_label_new (_("No target stack"));
  gtk_label_set_xalign (GTK_LABEL (self->target_label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->target_label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_hexpand (self->target_label, TRUE);
  gtk_box_append (GTK_BOX (row), self->target_label);
  gtk_box_append (GTK_BOX (row), button (_("_Choose…"), "optimize.open"));
  gtk_box_append (GTK_BOX (row), button (_("Use Pinned _Reference"), "optimize.use-reference"));
  grid_row (grid, 0, _("_Target:"), row);
  self->loss_drop = grid_row (grid, 1, _("_Loss:"), gtk_drop_down_new_from_strings (losses));
  self->optimizer_drop = grid_row (grid, 2, _("O_ptimizer:"), gtk_drop_down_new_from_strings (optimizers));
  self->steps_spin = grid_row (grid, 3, _("_Steps:"),
                               gtk_spin_button_new_with_range (steps->minimum, steps->maximum, 1));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->steps_spin), steps->default_value);
  self->lr_spin = grid_row (grid, 4, _("Step si_ze:"), gtk_spin_button_new_with_range (1e-4, 100, 0.01));
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (self->lr_spin), 4);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->lr_spin), 0.01);
  gtk_widget_set_tooltip_text (self->lr_spin, _("Adam's step, or L-BFGS's first step, in the variables' units"));
  gtk_box_append (GTK_BOX (box), grid);

  heading = gtk_label_new (_("Variables (the system's differentiable numbers):"));
  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  gtk_box_append (GTK_BOX (box), heading);
  self->variables_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  scroll = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), self->variables_box);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_vexpand (scroll, TRUE);
  gtk_widget_set_size_request (scroll, -1, 160);
  gtk_box_append (GTK_BOX (box), scroll);

  self->curve_area = gtk_drawing_area_new ();
  gtk_widget_set_size_request (self->curve_area, -1, 120);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->curve_area), draw_curve, self, NULL);
  gtk_box_append (GTK_BOX (box), self->curve_area);
  self->progress_label = gtk_label_new ("");
  self->status_label = gtk_label_new ("");
  gtk_label_set_xalign (GTK_LABEL (self->progress_label), 0);
  gtk_label_set_xalign (GTK_LABEL (self->status_label), 0);
  gtk_label_set_wrap (GTK_LABEL (self->status_label), TRUE);
  gtk_label_set_selectable (GTK_LABEL (self->status_label), TRUE);
  gtk_box_append (GTK_BOX (box), self->progress_label);
  gtk_box_append (GTK_BOX (box), self->status_label);

  buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign (buttons, GTK_ALIGN_END);
  gtk_box_append (GTK_BOX (buttons), button (_("_Optimize"), "optimize.start"));
  gtk_box_append (GTK_BOX (buttons), button (_("_Cancel"), "optimize.cancel"));
  gtk_box_append (GTK_BOX (buttons), button (_("_Apply to System"), "optimize.apply"));
  gtk_box_append (GTK_BOX (box), buttons);
  gtk_window_set_child (GTK_WINDOW (self), box);
  g_signal_connect (self, "close-request", G_CALLBACK (on_close_request), NULL);
  update_sensitivity (self);
}

static void
airy_optimize_dialog_dispose (GObject *object)
{
  AiryOptimizeDialog *self = AIRY_OPTIMIZE_DIALOG (object);

  airy_optimize_dialog_cancel (self);
  self->disposed = TRUE;
  if (self->panel)
    g_object_remove_weak_pointer (G_OBJECT (self->panel), (gpointer *) &self->panel);
  self->panel = NULL;
  G_OBJECT_CLASS (airy_optimize_dialog_parent_class)->dispose (object);
}

static void
airy_optimize_dialog_finalize (GObject *object)
{
  AiryOptimizeDialog *self = AIRY_OPTIMIZE_DIALOG (object);

  g_clear_object (&self->system);
  g_free (self->target);
  g_clear_pointer (&self->reference, airy_resident_unref);
  g_free (self->status);
  g_free (self->progress);
  clear_best (self);
  g_array_unref (self->pending);
  g_array_unref (self->curve);
  g_ptr_array_unref (self->checks);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (airy_optimize_dialog_parent_class)->finalize (object);
}

static void
airy_optimize_dialog_class_init (AiryOptimizeDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = airy_optimize_dialog_dispose;
  object_class->finalize = airy_optimize_dialog_finalize;
  gtk_widget_class_install_action (widget_class, "optimize.open", NULL, open_activated);
  gtk_widget_class_install_action (widget_class, "optimize.use-reference", NULL, reference_activated);
  gtk_widget_class_install_action (widget_class, "optimize.start", NULL, start_activated);
  gtk_widget_class_install_action (widget_class, "optimize.cancel", NULL, cancel_activated);
  gtk_widget_class_install_action (widget_class, "optimize.apply", NULL, apply_activated);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
  /* a run ended (a result, a cancel or an error) */
  signals[SIGNAL_FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                           NULL, G_TYPE_NONE, 0);
}

GtkWidget *
airy_optimize_dialog_new (GtkWindow *parent, AirySystem *system)
{
  AiryOptimizeDialog *self;

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  self = g_object_new (AIRY_TYPE_OPTIMIZE_DIALOG, NULL);
  self->system = airy_system_copy (system);
  list_variables (self);
  if (parent)
    gtk_window_set_transient_for (GTK_WINDOW (self), parent);
  return GTK_WIDGET (self);
}

/* ---- the app's hook ---- */

GtkWidget *
airy_optimize_dialog_find (GtkWindow *window)
{
  g_autoptr(GList) list = gtk_window_list_toplevels ();
  GList *l;

  for (l = list; l; l = l->next)
    if (AIRY_IS_OPTIMIZE_DIALOG (l->data) && gtk_widget_get_visible (l->data)
        && gtk_window_get_transient_for (l->data) == window)
      return l->data;
  return NULL;
}

static void
action_optimize (GtkWidget *window, const char *name, GVariant *parameter)
{
  AiryBenchPanel *panel = _airy_ui_find_bench_panel (window);
  AirySystem *system = panel ? airy_bench_panel_get_system (panel) : NULL;
  GtkWidget *dialog;

  if (system == NULL)
    return;
  if ((dialog = airy_optimize_dialog_find (GTK_WINDOW (window))) == NULL)
    dialog = airy_optimize_dialog_new (GTK_WINDOW (window), system);
  airy_optimize_dialog_set_apply_func (AIRY_OPTIMIZE_DIALOG (dialog), _airy_ui_class_apply_func (window), window);
  if (!airy_optimize_dialog_is_running (AIRY_OPTIMIZE_DIALOG (dialog)))
    airy_optimize_dialog_set_bench (AIRY_OPTIMIZE_DIALOG (dialog), panel);
  gtk_window_present (GTK_WINDOW (dialog));
}

void
airy_optimize_dialog_class_install_actions (GtkWidgetClass *widget_class, AiryFitApplyFunc apply)
{
  _airy_ui_class_set_apply_func (widget_class, apply);
  gtk_widget_class_install_action (widget_class, "win.optimize", NULL, action_optimize);
}

void
airy_optimize_dialog_append_menu (GMenu *menu)
{
  g_menu_append (menu, _("_Optimize…"), "win.optimize");
}
