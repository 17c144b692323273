#pragma once

#include <json-glib/json-glib.h>

#include "airy-grad-private.h"

G_BEGIN_DECLS

/* The optimizer of issue #28: minimises a loss of a system's result over
 * variables of its file (AiryGradVar: numbers and a phase mask's pixels)
 * with the reverse pass's gradient, by Adam or by a projected L-BFGS, each
 * variable kept inside its bounds (var->lo, var->hi). */

typedef enum
{
  AIRY_OPTIMIZER_ADAM,
  AIRY_OPTIMIZER_LBFGS,
} AiryOptimizerKind;

typedef enum
{
  AIRY_OPTIMIZE_STEPS,       /* ran the steps it was given */
  AIRY_OPTIMIZE_CONVERGED,   /* L-BFGS: no step lowers the loss, or a zero gradient */
  AIRY_OPTIMIZE_STOPPED,     /* stopped from outside (*stop, or the step callback) */
  AIRY_OPTIMIZE_FAILED,      /* an evaluation failed where no smaller step helps */
} AiryOptimizeEnd;

typedef struct
{
  guint  step;          /* 0: the start */
  guint  evaluations;   /* so far */
  double loss;          /* at this step's point */
  double best;
  guint  best_step;
  double grad_norm;     /* the projected gradient's norm here */
  double elapsed_s;
} AiryOptimizeStep;

typedef struct _AiryOptimizer AiryOptimizer;

/* FALSE stops the optimizer (AIRY_OPTIMIZE_STOPPED). */
typedef gboolean (*AiryOptimizeStepFunc) (AiryOptimizer          *optimizer,
                                          const AiryOptimizeStep *step,
                                          gpointer                user_data);

struct _AiryOptimizer
{
  JsonNode        *root;       /* the system file (a deep copy) */
  char            *base_dir;
  const AiryLoss  *loss;
  GPtrArray       *vars;       /* AiryGradVar, borrowed */
  guint            threads;
  const volatile int *stop;    /* nonzero: stop before the next evaluation (may be NULL) */
  gsize            n;          /* the unknowns: numbers, then each pixel variable's plane */
  gsize           *offset;     /* per var: its first unknown */
  guint           *height, *width;  /* per pixel var: the image's shape */
  double          *x, *lo, *hi;
  char            *tmpdir;     /* the pixel images of the evaluations */
  /* the result */
  double          *best_x;
  double           first_loss, best_loss, last_grad_norm;
  guint            best_step, steps_done, evaluations;
  GArray          *curve;      /* double: the loss at each step's point */
  double           elapsed_s;
};

/* An optimizer of loss over vars of the system file root (base_dir for its
 * files), starting from the file's values (a pixel variable's from its
 * image and phase range), each projected into its bounds. */
AiryOptimizer  *_airy_optimizer_new       (JsonNode        *root,
                                           const char      *base_dir,
                                           const AiryLoss  *loss,
                                           GPtrArray       *vars,
                                           guint            threads,
                                           GError         **error);
void            _airy_optimizer_free      (AiryOptimizer   *optimizer);
/* Runs at most steps steps (lr: Adam's step, L-BFGS's first step, in the
 * variables' units); on AIRY_OPTIMIZE_FAILED error says at which step and
 * why. The best point so far is kept throughout. */
AiryOptimizeEnd _airy_optimizer_run       (AiryOptimizer   *optimizer,
                                           AiryOptimizerKind kind,
                                           guint            steps,
                                           double           lr,
                                           AiryOptimizeStepFunc on_step,
                                           gpointer         user_data,
                                           GError         **error);
/* The best value of a number variable. */
double          _airy_optimizer_best_value (AiryOptimizer  *optimizer,
                                            guint           var);
/* The best phase of a pixel variable (one plane, rad). */
AiryStack      *_airy_optimizer_best_pixels (AiryOptimizer *optimizer,
                                             guint          var);
/* The system file at the best point; each pixel variable's element reads
 * pixel_files[var] (a NULL entry for a number). */
JsonNode       *_airy_optimizer_best_json (AiryOptimizer   *optimizer,
                                           const char *const *pixel_files);
/* "steps", "converged", "stopped", "failed" */
const char     *_airy_optimize_end_name   (AiryOptimizeEnd  end);
/* The report as pretty JSON: the optimizer's name, how it ended (end, a
 * name as above or "interrupted"), failure's message, the steps and
 * evaluations, the loss before and after, the best step, the gradient's
 * norm, the time, each variable (a number before and after, a pixel
 * variable's file from files, the bounds) and the loss curve. */
char           *_airy_optimizer_report    (AiryOptimizer   *optimizer,
                                           const char *const *files,
                                           const char      *optimizer_name,
                                           const char      *end,
                                           const GError    *failure);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryOptimizer, _airy_optimizer_free)

G_END_DECLS
