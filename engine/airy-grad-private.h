#pragma once

#include <json-glib/json-glib.h>

#include "airy-stack.h"
#include "airy-system.h"

G_BEGIN_DECLS

/* Differentiable Airy (issue #28): the gradient of a scalar loss of a
 * system's result with respect to its differentiable parameters.
 *
 * The reverse pass runs the program unfused (each element's own ops, then
 * INTENSITY and the intensity stage) and goes back through each op kind's
 * adjoint (airy-ops-kinds.c), accumulating every op's data cotangents in
 * double over the planes. A parameter's gradient is then the cotangent
 * dotted with the tangent of the op data it makes: analytic for a mask's
 * pixels (the phase or amplitude on the grid), else the element's compile
 * linearised by a symmetric step (no propagation: only the ops are made
 * again). Either the forward keeps each plane's op inputs (stored) or the
 * backward recomputes them plane by plane (checkpointing), as the memory
 * budget allows; both give the same numbers. */

typedef enum
{
  AIRY_LOSS_L2,        /* mean (I − T)² */
  AIRY_LOSS_POISSON,   /* mean (I − C log I): the negative log-likelihood of counts C */
  AIRY_LOSS_REGION,    /* −Σ_M I / Σ I: minus the energy fraction inside the mask */
  AIRY_LOSS_CRLB,      /* the mean √CRLB of x, y, z over planes in [zmin, zmax] (airy-grad-crlb.c) */
} AiryLossKind;

typedef struct
{
  AiryLossKind kind;
  char        *file;
  AiryStack   *target;  /* T, C or M (NULL for crlb) */
  double       zmin, zmax, photons, background;  /* crlb */
  guint        axes;    /* crlb: bits 1, 2, 4 for x, y, z */
} AiryLoss;

/* "l2:TARGET.tif", "poisson:COUNTS.tif", "region:MASK.tif" (relative to
 * the working directory), "crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND[:AXES]". */
AiryLoss  *_airy_loss_new_from_spec (const char      *spec,
                                     GError         **error);
void       _airy_loss_free          (AiryLoss        *loss);
/* FALSE unless the target has the result's shape (the message names both). */
gboolean   _airy_loss_check_shape   (const AiryLoss  *loss,
                                     const AiryStack *result,
                                     GError         **error);
/* The loss of result; bar (may be NULL, the result's size) gets ∂L/∂I. */
double     _airy_loss_eval          (const AiryLoss  *loss,
                                     const AiryStack *result,
                                     float           *bar);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryLoss, _airy_loss_free)
/* the crlb loss's parts (airy-grad-crlb.c): its arguments after "crlb:",
 * whether the result has planes for it, and its value and ∂L/∂I */
gboolean   _airy_loss_crlb_parse    (AiryLoss        *loss,
                                     const char      *args,
                                     GError         **error);
gboolean   _airy_loss_crlb_check    (const AiryLoss  *loss,
                                     const AiryStack *result,
                                     GError         **error);
double     _airy_loss_crlb_eval     (const AiryLoss  *loss,
                                     const AiryStack *result,
                                     float           *bar);

typedef enum
{
  AIRY_GRAD_AUTO,        /* store when it fits the memory budget */
  AIRY_GRAD_STORE,
  AIRY_GRAD_CHECKPOINT,
} AiryGradMode;

/* One variable: a number of the system file (the sweep's paths,
 * "elements[1].zernike-coefficients[3]") or a mask's pixels
 * ("elements[1].pixels": its phase in rad, or amplitude, on the grid). */
typedef struct _AiryGradVar
{
  char    *path;
  guint    element;      /* its index in "elements" */
  char    *name;         /* the parameter ("pixels" for the pixels) */
  gint     item;         /* the array entry, −1 for a number */
  gboolean pixels;
  double   value;        /* a number's value in the file */
  double   step;         /* the symmetric step of its tangent */
  double   lo, hi;       /* its parameter's range (±∞ for pixels) */
  gboolean lo_open;      /* the range is (lo, hi] */
  char    *range;        /* the range as the messages say it ("(0, 4]") */
  /* the result */
  double   grad;         /* a number's */
  AiryStack *grad_pixels; /* the pixels': n_lambda planes summed: one plane */
} AiryGradVar;

void        _airy_grad_var_free   (gpointer var);
/* The variable at path in the system file's JSON (root): FALSE, naming
 * the path and why, for a path that is not there or not differentiable. */
AiryGradVar *_airy_grad_var_new   (JsonNode    *root,
                                   AirySystem  *system,
                                   const char  *path,
                                   GError     **error);
/* The variables of paths (each entry of a path naming an array of
 * numbers: "elements[1].zernike-coefficients" is all of them); NULL with
 * the first path's error. */
GPtrArray  *_airy_grad_vars_from_paths (JsonNode          *root,
                                        AirySystem        *system,
                                        const char *const *paths,
                                        GError           **error);
/* The index of the variable a gradient's error names first (one the pass
 * cannot follow in this system: "PATH: …"), or −1. */
gint        _airy_grad_vars_refused   (GPtrArray    *vars,
                                       const GError *error);
/* Bounds [a, b] inside the parameter's range (the message names the path,
 * both values and the range). */
gboolean    _airy_grad_var_set_bounds (AiryGradVar *var,
                                       double       a,
                                       double       b,
                                       GError     **error);
/* Every differentiable number the file's elements give (for `grad`
 * without --vary). */
GPtrArray  *_airy_grad_vars_all   (JsonNode    *root,
                                   AirySystem  *system);
/* The node at a path like elements[1].zernike-coefficients[0]: a number
 * that is there, or NULL (the sweep's parser). */
/* The system of root with var set to value (base_dir for its files). */
AirySystem *_airy_grad_system_with (JsonNode    *root,
                                    const char  *base_dir,
                                    const AiryGradVar *var,
                                    double       value,
                                    GError     **error);

typedef struct
{
  AiryGradMode mode;
  guint64      budget;   /* bytes for the stored pass (0: the machine's budget) */
  guint        threads;
  gboolean     stored;   /* out: whether the pass stored (else checkpointed) */
  double       forward_s, total_s;  /* out: the forward's and the whole call's time */
} AiryGradOptions;

/* The loss of system's result (the reference program's) and, for each var
 * (AiryGradVar), its gradient; result (may be NULL) gets the forward's
 * result. root and base_dir: the system's file, for the tangents. */
gboolean    _airy_grad_compute (AirySystem      *system,
                                JsonNode        *root,
                                const char      *base_dir,
                                const AiryLoss  *loss,
                                GPtrArray       *vars,
                                AiryGradOptions *options,
                                double          *loss_value,
                                AiryStack      **result,
                                GError         **error);
/* The forward alone: the reference program's result. */
AiryStack  *_airy_grad_forward (AirySystem      *system,
                                guint            threads,
                                GError         **error);

G_END_DECLS
