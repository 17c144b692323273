#pragma once

#include <gtk/gtk.h>

#include "airy.h"
#include "airy-bench-panel.h"

G_BEGIN_DECLS

/* "Fit Measured PSF…": fits a bead stack with the bench's system
 * (airy_fit_stack on a worker thread), plots the loss per iteration, can
 * be cancelled, and shows measured, model and residual side by side (one z
 * slider and one cursor for the three), the fitted wavefront and the
 * coefficients with their 1-σ uncertainties. "Apply to System" hands the
 * fitted system to the apply function. */

#define AIRY_TYPE_FIT_DIALOG (airy_fit_dialog_get_type ())
G_DECLARE_FINAL_TYPE (AiryFitDialog, airy_fit_dialog, AIRY, FIT_DIALOG, GtkWindow)

/* Receives the fitted system (a new object) and path NULL. */
typedef void (*AiryFitApplyFunc) (gpointer    user_data,
                                  AirySystem *system,
                                  const char *path);

GtkWidget           *airy_fit_dialog_new          (GtkWindow        *parent,
                                                   AirySystem       *system);
void                 airy_fit_dialog_set_apply_func (AiryFitDialog  *self,
                                                     AiryFitApplyFunc apply,
                                                     gpointer         user_data);
/* The stack file to fit: read on the worker when the fit starts. */
void                 airy_fit_dialog_set_file     (AiryFitDialog    *self,
                                                   const char       *path);
/* Or the stack a viewer shows (its resident, a reference is taken; its
 * values are read on the worker) with the viewer's cursor: the window of
 * the crop (spin button; 0 becomes AIRY_FIT_DIALOG_BEAD_CROP, at most the
 * stack) is centred on pixel (x, y) as the engine's crop_at places it. */
#define AIRY_FIT_DIALOG_BEAD_CROP 32
/* the coefficient bars' full height, and the wavefront map's colour scale,
 * are at least ± this (waves) */
#define AIRY_FIT_DIALOG_BARS_MIN_SCALE 0.01
/* the warnings' area scrolls beyond this height (pixels, three to four lines) */
#define AIRY_FIT_DIALOG_WARNINGS_HEIGHT 64
void                 airy_fit_dialog_set_resident (AiryFitDialog    *self,
                                                   AiryResident     *resident,
                                                   guint             x,
                                                   guint             y,
                                                   guint             z);
/* Shows a message in the status line (an error of the caller). */
void                 airy_fit_dialog_set_message  (AiryFitDialog    *self,
                                                   const char       *message);
void                 airy_fit_dialog_start        (AiryFitDialog    *self);
void                 airy_fit_dialog_cancel       (AiryFitDialog    *self);
gboolean             airy_fit_dialog_is_running   (AiryFitDialog    *self);
/* the visible fit dialog over window (there is one at most), or NULL */
GtkWidget           *airy_fit_dialog_find         (GtkWindow        *window);
/* the opened file is being read (on a worker; its status comes after) */
gboolean             airy_fit_dialog_is_reading   (AiryFitDialog    *self);
/* The last successful fit's result, shown until another succeeds (NULL
 * before the first). */
const AiryFitResult *airy_fit_dialog_get_result   (AiryFitDialog    *self);
const char          *airy_fit_dialog_get_status   (AiryFitDialog    *self);
/* Losses shown in the plot, one per iteration. */
guint                airy_fit_dialog_get_n_losses (AiryFitDialog    *self);
/* Adds the fitted terms (those not 0.0000 waves) as a phase mask to the
 * bench's system of now, through the apply function: nothing else changes
 * (a disabled element stays off); no terms, no mask. */
void                 airy_fit_dialog_apply        (AiryFitDialog    *self);
/* The bench whose system a fit models as it is when Fit is pressed (weak;
 * NULL: the system the dialog was made with), and the dialog's line that
 * says which system that is. */
void                 airy_fit_dialog_set_bench    (AiryFitDialog    *self,
                                                   AiryBenchPanel   *panel);
const char          *airy_fit_dialog_get_system_text (AiryFitDialog *self);

/* The app's hook, installed on a window class (a window holding a bench
 * panel and a stack viewer): win.fit-psf opens the dialog on the system of
 * the bench panel inside the window, win.fit-bead fits the stack shown by
 * the stack viewer inside the window around its cursor at once (the dialog
 * says so when it shows no stack). Apply is called with the window as its
 * user data. airy_fit_dialog_append_menu appends "Fit Measured PSF…" and
 * "Fit Bead at Cursor…" naming them. */
void                 airy_fit_dialog_class_install_actions (GtkWidgetClass   *widget_class,
                                                            AiryFitApplyFunc  apply);
void                 airy_fit_dialog_append_menu  (GMenu            *menu);

G_END_DECLS
