#pragma once

#include <gtk/gtk.h>

#include "airy.h"
#include "airy-bench-panel.h"
#include "airy-fit-dialog.h"

G_BEGIN_DECLS

/* "Optimize…" (issue #28): moves the bench system's differentiable numbers
 * that are ticked to minimise a loss of its result against a target stack
 * (L2 or Poisson), by L-BFGS or Adam on the engine's gradient
 * (engine/airy-optimize-private.h), on a worker thread, with a progress
 * line and the loss curve. Cancel keeps the best point so far; Apply sets
 * the best values in the bench's system of now, nothing else, through the
 * apply function (one undo step in the window). */

#define AIRY_TYPE_OPTIMIZE_DIALOG (airy_optimize_dialog_get_type ())
G_DECLARE_FINAL_TYPE (AiryOptimizeDialog, airy_optimize_dialog, AIRY, OPTIMIZE_DIALOG, GtkWindow)

GtkWidget  *airy_optimize_dialog_new            (GtkWindow          *parent,
                                                 AirySystem         *system);
void        airy_optimize_dialog_set_apply_func (AiryOptimizeDialog *self,
                                                 AiryFitApplyFunc    apply,
                                                 gpointer            user_data);
/* The bench whose system of now is optimized and applied to (weak; NULL:
 * the system the dialog was made with); the variables are listed anew. */
void        airy_optimize_dialog_set_bench      (AiryOptimizeDialog *self,
                                                 AiryBenchPanel     *panel);
/* The target stack (a TIFF; read on the worker when the run starts). */
void        airy_optimize_dialog_set_target     (AiryOptimizeDialog *self,
                                                 const char         *path);
/* Or a stack's values (a reference is taken; read on the worker): the
 * viewer's pinned reference, which "Use Pinned Reference" sets. */
void        airy_optimize_dialog_set_target_resident (AiryOptimizeDialog *self,
                                                      AiryResident       *resident);
/* "l2" or "poisson" */
void        airy_optimize_dialog_set_loss       (AiryOptimizeDialog *self,
                                                 const char         *loss);
/* "lbfgs" or "adam", the steps and the first step size (lr) */
void        airy_optimize_dialog_set_optimizer  (AiryOptimizeDialog *self,
                                                 const char         *optimizer,
                                                 guint               steps,
                                                 double              lr);
/* The variables offered (the system's differentiable numbers, by path). */
guint       airy_optimize_dialog_get_n_variables (AiryOptimizeDialog *self);
const char *airy_optimize_dialog_get_variable   (AiryOptimizeDialog *self,
                                                 guint               i);
/* Ticks the variable at path; FALSE when none is offered there. */
gboolean    airy_optimize_dialog_set_variable_active (AiryOptimizeDialog *self,
                                                      const char         *path,
                                                      gboolean            active);
void        airy_optimize_dialog_start          (AiryOptimizeDialog *self);
void        airy_optimize_dialog_cancel         (AiryOptimizeDialog *self);
gboolean    airy_optimize_dialog_is_running     (AiryOptimizeDialog *self);
/* The last run's best values (by the path) and how many steps it made:
 * FALSE before a run that gave one. */
gboolean    airy_optimize_dialog_get_best       (AiryOptimizeDialog *self,
                                                 const char         *path,
                                                 double             *value);
guint       airy_optimize_dialog_get_steps_done (AiryOptimizeDialog *self);
/* "Step 3 of 10: loss …, best … (step 2)" */
const char *airy_optimize_dialog_get_progress   (AiryOptimizeDialog *self);
/* the status line: the end of a run, or what is wrong */
const char *airy_optimize_dialog_get_status     (AiryOptimizeDialog *self);
void        airy_optimize_dialog_apply          (AiryOptimizeDialog *self);
/* the visible optimize dialog over window, or NULL */
GtkWidget  *airy_optimize_dialog_find           (GtkWindow          *window);

/* The app's hook, installed on a window class: win.optimize opens the
 * dialog (one per window) on the bench panel inside the window; apply is
 * called with the window as its user data. airy_optimize_dialog_append_menu
 * appends "Optimize…" naming it. */
void        airy_optimize_dialog_class_install_actions (GtkWidgetClass   *widget_class,
                                                        AiryFitApplyFunc  apply);
void        airy_optimize_dialog_append_menu    (GMenu              *menu);

G_END_DECLS
