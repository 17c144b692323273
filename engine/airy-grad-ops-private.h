#pragma once

#include <complex.h>

#include "airy-grad-private.h"
#include "airy-ops-private.h"
#include "airy-plan-private.h"

G_BEGIN_DECLS

/* Between the reverse pass (airy-grad.c) and the variables
 * (airy-grad-vars.c). */

/* One op's data cotangents, accumulated in double over the planes. */
typedef struct
{
  double complex *factor;   /* n_lambda × height × width (SET, OBJECTIVE, MULTIPLY) */
  double         *phase;    /* OBJECTIVE */
  double          power, z, gain, exposure, offset;
} AiryGradAcc;

/* The unfused program of a system: each element's ops, INTENSITY, then
 * the plan's intensity stage. */
typedef struct
{
  AiryPlan   *plan;
  AiryOpList *list;
  GPtrArray  *ops;
  guint       n_field;      /* ops[0 … n_field) the field stage, INTENSITY last */
} Program;

gboolean _airy_grad_program_init  (Program    *p,
                                   AirySystem *system,
                                   GError    **error);
void     _airy_grad_program_clear (Program    *p);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Program, _airy_grad_program_clear)

typedef struct
{
  GPtrArray         *ops;
  GPtrArray         *chain;    /* the plan's chain (copies) */
  guint              n_field;
  const AiryGradAcc *acc;      /* per op */
  double             lambda0;
} AiryGradOps;

/* A variable's gradient from the op cotangents. */
gboolean _airy_grad_var_apply (AiryGradVar       *var,
                               JsonNode          *root,
                               const char        *base_dir,
                               const AiryGradOps *go,
                               GError           **error);

G_END_DECLS
