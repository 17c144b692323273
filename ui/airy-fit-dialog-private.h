/* The fit dialog's parts (airy-fit-dialog.c: the object, the fit on its
 * worker, the actions; airy-fit-dialog-draw.c: the plots and views). */
#pragma once

#include "airy-fit-dialog.h"
#include "airy-stack-viewer.h"

G_BEGIN_DECLS

struct _AiryFitDialog
{
  GtkWindow         parent_instance;

  AirySystem       *system;          /* what the last fit modelled (a copy) */
  AiryBenchPanel   *panel;           /* weak: the bench whose system of now is fitted */
  GtkWidget        *system_label;    /* says which system that is */
  char             *path;
  AiryResident     *resident;        /* or a viewer's stack, with the cursor */
  guint             at_x, at_y, at_z;
  AiryFitApplyFunc  apply;
  gpointer          apply_data;
  AiryFitResult    *result;
  AiryStack        *measured;        /* model + residual of the result's window */
  AiryStack        *opened;          /* the file's stack, read when opened: shown before a fit */
  GCancellable     *open_cancellable;/* its read on a worker, while it runs */
  GCancellable     *cancellable;
  char             *status;

  GMutex            lock;            /* guards pending and idle_id */
  GArray           *pending;         /* LossPoints from the worker, not yet shown */
  guint             idle_id;
  GArray           *losses;          /* shown */

  int               cursor_x, cursor_y;

  GtkWidget        *file_label;
  GtkWidget        *zernike_spin;
  GtkWidget        *crop_spin;
  GtkWidget        *fit_button;
  GtkWidget        *cancel_button;
  GtkWidget        *apply_button;
  GtkWidget        *status_label;
  GtkWidget        *warnings_label;
  GtkWidget        *warnings_scroll; /* at most a few lines: the window stays on the screen */
  GtkWidget        *loss_area;
  GtkWidget        *images[3];       /* measured, model, residual */
  GtkWidget        *z_scale;
  GtkWidget        *readout;
  GtkWidget        *wavefront;
  GtkWidget        *bars;
};

/* one iteration's loss, and the start it belongs to */
typedef struct
{
  double loss;
  guint  restart;
} LossPoint;

/* the bench panel inside widget (the window), or NULL: the fit's and the
 * optimizer's dialogs find their bench with it */
AiryBenchPanel  *_airy_ui_find_bench_panel (GtkWidget *widget);
/* and the stack viewer inside it */
AiryStackViewer *_airy_ui_find_stack_viewer (GtkWidget *widget);
/* the apply function a window class installed with the dialogs' actions
 * (on it or a parent class), or NULL */
AiryFitApplyFunc _airy_ui_class_apply_func (GtkWidget *window);
void             _airy_ui_class_set_apply_func (GtkWidgetClass   *widget_class,
                                                AiryFitApplyFunc  apply);
/* A TIFF stack from a file chooser over dialog (titled title): chosen
 * gets dialog and the file's local path */
typedef void (*AiryUiStackChosen) (GtkWindow *dialog, const char *path);
void             _airy_ui_choose_tiff_stack (GtkWindow         *dialog,
                                             const char        *title,
                                             AiryUiStackChosen  chosen);

void _airy_fit_dialog_draw_loss      (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data);
void _airy_fit_dialog_draw_image     (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data);
void _airy_fit_dialog_draw_wavefront (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data);
void _airy_fit_dialog_draw_bars      (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data);

G_END_DECLS
