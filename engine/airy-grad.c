#define G_LOG_DOMAIN "airy-grad"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <complex.h>
#include <math.h>
#include <string.h>

#include "airy-error.h"
#include "airy-grad-private.h"
#include "airy-ops-private.h"
#include "airy-plan-private.h"
#include "airy-grad-ops-private.h"
#include "airy-modality.h"

/* The reverse pass (airy-grad-private.h). */

/* The unfused program of a system: each element's ops, INTENSITY, then
 * the plan's intensity stage. */

/* how many planes enter op k of the intensity stage */
static guint
planes_into (const Program *p, guint k)
{
  guint n = p->plan->n_planes, j;

  for (j = p->n_field; j < k; j++)
    if (((AiryOp *) g_ptr_array_index (p->ops, j))->kind != AIRY_OP_SENSOR)
      n = 1;
  return n;
}

static AiryField *
program_field (const Program *p)
{
  const AiryOp *first = g_ptr_array_index (p->ops, 0);
  const AiryOp *intensity = g_ptr_array_index (p->ops, p->n_field - 1);
  g_autofree double *lambda = g_new (double, first->n_lambda);
  AirySpectrum spectrum = { first->n_lambda, lambda, intensity->weights };
  guint l;

  for (l = 0; l < first->n_lambda; l++)
    lambda[l] = first->lambda ? first->lambda[l] : 1.0;
  return airy_field_new (&spectrum, first->height, first->width, 1.0);
}

/* One plane's field stage: its intensity in out; tape (may be NULL) gets
 * each op's input, then the last field. */
static gboolean
plane_forward (const Program *p, const AiryPlane *plane, GPtrArray *tape, float *out, GError **error)
{
  g_autoptr(AiryField) field = program_field (p);
  guint k;

  for (k = 0; k + 1 < p->n_field; k++)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      const AiryOpKindInfo *kind = _airy_op_kind_info (op->kind);

      if (kind->adjoint == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("elements: %s has no adjoint: the gradient cannot pass through it"),
                       op->element ? airy_element_get_type_name (op->element) : _airy_op_kind_name (op->kind));
          return FALSE;
        }
      if (tape)
        g_ptr_array_add (tape, _airy_field_copy (field));
      if (!kind->forward (op, field, plane, error))
        return FALSE;
    }
  _airy_op_intensity_forward (g_ptr_array_index (p->ops, p->n_field - 1), field, out);
  if (tape)
    g_ptr_array_add (tape, g_steal_pointer (&field));
  return TRUE;
}

static void
acc_add (AiryGradAcc *acc, const AiryOp *op, const AiryOpGrad *g)
{
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;

  for (k = 0; g->factor && k < n; k++)
    acc->factor[k] += g->factor[k];
  for (k = 0; g->phase && k < n; k++)
    acc->phase[k] += g->phase[k];
  acc->power += g->power;
  acc->z += g->z;
  acc->gain += g->gain;
  acc->exposure += g->exposure;
  acc->offset += g->offset;
}

/* One plane back through the field stage from ibar, with its tape: each
 * op's cotangents into a float scratch, then added in double. */
static gboolean
plane_backward (const Program *p, const AiryPlane *plane, GPtrArray *tape, const float *ibar, AiryGradAcc *acc,
                GError **error)
{
  const AiryField *last = g_ptr_array_index (tape, p->n_field - 1);
  g_autoptr(AiryField) bar = _airy_field_copy (last);
  guint k;

  _airy_op_intensity_adjoint (g_ptr_array_index (p->ops, p->n_field - 1), last, ibar, bar);
  for (k = p->n_field - 1; k-- > 0;)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      gsize n = (gsize) op->n_lambda * op->height * op->width, i;
      g_autofree fftwf_complex *gf = op->factor ? g_new0 (fftwf_complex, n) : NULL;
      g_autofree double *gp = op->phase ? g_new0 (double, n) : NULL;
      AiryOpGrad g = { gf, gp };

      if (op->kind == AIRY_OP_OBJECTIVE)
        {
          /* its distance: u = F·e^{itG}, z̄ = Σ G·Im(conj(u)·ū); where
           * F is 0 (outside the pupil) so is the term */
          double t = plane->z + op->z;

          for (i = 0; i < n; i++)
            if (op->factor[i] != 0.0f)
              g.z += op->phase[i] * cimag (conj (op->factor[i] * cexp (I * t * op->phase[i])) * bar->data[i]);
        }
      if (!_airy_op_kind_info (op->kind)->adjoint (op, g_ptr_array_index (tape, k), bar, plane, &g, error))
        return FALSE;
      acc_add (&acc[k], op, &g);
    }
  return TRUE;
}

static gsize
tape_bytes (const Program *p)
{
  gsize bytes = 0;
  guint k;

  for (k = 0; k < p->n_field; k++)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      bytes += (gsize) op->n_lambda * op->height * op->width * sizeof (fftwf_complex);
    }
  return bytes * p->plan->n_planes;
}

/* The forward of the program (field stage per plane, then the intensity
 * stage keeping what enters each op); tapes (may be NULL) keep each
 * plane's. */
static AiryStack *
program_forward (const Program *p, guint threads, GPtrArray *tapes, GPtrArray *inputs, GError **error)
{
  const AiryOp *intensity = g_ptr_array_index (p->ops, p->n_field - 1);
  g_autoptr(AiryStack) planes = airy_stack_new (MAX (p->plan->n_planes, 1), intensity->height, intensity->width);
  guint b, k, n = p->plan->n_planes;

  for (b = 0; b < p->plan->n_planes; b++)
    {
      AiryPlane plane = { b, p->plan->z[b], threads };
      GPtrArray *tape = tapes ? g_ptr_array_new_with_free_func ((GDestroyNotify) airy_field_free) : NULL;

      if (tapes)
        g_ptr_array_add (tapes, tape);
      if (!plane_forward (p, &plane, tape, airy_stack_plane (planes, b), error))
        return NULL;
    }
  for (k = p->n_field; k < p->ops->len; k++)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      guint n_out = op->kind == AIRY_OP_SENSOR ? n : 1;
      AiryStack *next = airy_stack_new (MAX (n_out, 1), op->height, op->width);

      if (!_airy_op_kind_info (op->kind)->image_forward (op, planes->data, n, 0, next->data, error))
        {
          airy_stack_free (next);
          return NULL;
        }
      if (inputs)
        g_ptr_array_add (inputs, g_steal_pointer (&planes));
      else
        airy_stack_free (planes);
      planes = next;
      n = n_out;
    }
  return g_steal_pointer (&planes);
}

/* the result's pixel and planes, which the crlb loss reads */
static AiryStack *
stamp (const Program *p, AiryStack *out)
{
  if (out == NULL)
    return NULL;
  out->dx = p->plan->out_dx;
  out->dy = p->plan->out_dy;
  if (out->depth == p->plan->n_planes && out->depth > 0)
    {
      out->z = g_memdup2 (p->plan->z, out->depth * sizeof (double));
      out->z0 = out->z[0];
      out->dz = out->depth > 1 ? out->z[1] - out->z[0] : 0.0;
    }
  return out;
}

AiryStack *
_airy_grad_forward (AirySystem *system, guint threads, GError **error)
{
  Program p;
  AiryStack *out = NULL;

  if (_airy_grad_program_init (&p, system, error))
    out = stamp (&p, program_forward (&p, MAX (threads, 1), NULL, NULL, error));
  _airy_grad_program_clear (&p);
  return out;
}

/* The intensity stage's adjoint: the result's cotangent to the planes'. */
static float *
image_backward (const Program *p, GPtrArray *inputs, const AiryStack *result, const float *out_bar, GError **error)
{
  g_autofree float *bar = g_memdup2 (out_bar, (gsize) result->depth * airy_stack_plane_size (result) * sizeof (float));
  guint k;

  for (k = p->ops->len; k-- > p->n_field;)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      AiryStack *in = g_ptr_array_index (inputs, k - p->n_field);
      guint n_in = planes_into (p, k);
      float *in_bar = g_new0 (float, (gsize) n_in * airy_stack_plane_size (in));
      /* a sensor's gain, exposure and offset: op k's cotangents */
      AiryOpGrad g = { 0 };

      if (!_airy_op_kind_info (op->kind)->image_adjoint (op, in->data, n_in, 0, bar, in_bar, &g, error))
        {
          g_free (in_bar);
          return NULL;
        }
      g_free (bar);
      bar = in_bar;
    }
  return g_steal_pointer (&bar);
}

/* The sensor's own cotangents (image_backward leaves them out: it runs
 * before the accumulators exist). */
static gboolean
sensor_cotangents (const Program *p, GPtrArray *inputs, const float *bars_at_sensor, AiryGradAcc *acc, GError **error)
{
  guint k;

  for (k = p->n_field; k < p->ops->len; k++)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      AiryStack *in = g_ptr_array_index (inputs, k - p->n_field);
      g_autofree float *scratch = NULL;
      AiryOpGrad g = { 0 };

      if (op->kind != AIRY_OP_SENSOR || k + 1 != p->ops->len)
        continue;
      scratch = g_new (float, (gsize) planes_into (p, k) * airy_stack_plane_size (in));
      if (!_airy_op_kind_info (op->kind)->image_adjoint (op, in->data, planes_into (p, k), 0, bars_at_sensor,
                                                         scratch, &g, error))
        return FALSE;
      acc[k].gain += g.gain;
      acc[k].exposure += g.exposure;
      acc[k].offset += g.offset;
    }
  return TRUE;
}

static AiryGradAcc *
acc_new (const Program *p)
{
  AiryGradAcc *acc = g_new0 (AiryGradAcc, p->ops->len);
  guint k;

  for (k = 0; k < p->ops->len; k++)
    {
      const AiryOp *op = g_ptr_array_index (p->ops, k);
      gsize n = (gsize) op->n_lambda * op->height * op->width;

      if (op->factor && k < p->n_field)
        acc[k].factor = g_new0 (double complex, n);
      if (op->phase && k < p->n_field)
        acc[k].phase = g_new0 (double, n);
    }
  return acc;
}

static void
acc_free (AiryGradAcc *acc, guint n)
{
  guint k;

  for (k = 0; acc && k < n; k++)
    {
      g_free (acc[k].factor);
      g_free (acc[k].phase);
    }
  g_free (acc);
}


gboolean
_airy_grad_compute (AirySystem *system, JsonNode *root, const char *base_dir, const AiryLoss *loss, GPtrArray *vars,
                    AiryGradOptions *options, double *loss_value, AiryStack **result, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  g_auto(Program) p = { 0 };
  AiryGradOps go;
  g_autoptr(GPtrArray) tapes = NULL;
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
  g_autoptr(AiryStack) out = NULL;
  g_autofree float *bar = NULL, *ibar = NULL;
  AiryGradAcc *acc = NULL;
  guint threads = MAX (options->threads, 1), b, i;
  guint64 budget = options->budget ? options->budget : airy_memory_budget ();
  gboolean ok = FALSE;
  gsize np;

  if (!_airy_grad_program_init (&p, system, error))
    return FALSE;
  options->stored = options->mode == AIRY_GRAD_STORE
                    || (options->mode == AIRY_GRAD_AUTO && tape_bytes (&p) <= budget / 2);
  if (options->stored)
    tapes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  if ((out = stamp (&p, program_forward (&p, threads, tapes, inputs, error))) == NULL
      || !_airy_loss_check_shape (loss, out, error))
    return FALSE;
  options->forward_s = (g_get_monotonic_time () - t0) / 1e6;
  bar = g_new0 (float, (gsize) out->depth * airy_stack_plane_size (out));
  *loss_value = _airy_loss_eval (loss, out, bar);
  if (!isfinite (*loss_value))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("loss: the loss is %g (not a number)"), *loss_value);
      return FALSE;
    }
  acc = acc_new (&p);
  if ((ibar = image_backward (&p, inputs, out, bar, error)) == NULL || !sensor_cotangents (&p, inputs, bar, acc, error))
    goto out;
  np = (gsize) ((AiryOp *) g_ptr_array_index (p.ops, p.n_field - 1))->height
       * ((AiryOp *) g_ptr_array_index (p.ops, p.n_field - 1))->width;
  for (b = 0; b < p.plan->n_planes; b++)
    {
      AiryPlane plane = { b, p.plan->z[b], threads };
      g_autoptr(GPtrArray) tape = NULL;

      if (tapes)
        tape = g_ptr_array_ref (g_ptr_array_index (tapes, b));
      else
        {
          /* checkpointing: the plane's forward again */
          g_autofree float *scratch = g_new (float, np);

          tape = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_field_free);
          if (!plane_forward (&p, &plane, tape, scratch, error))
            goto out;
        }
      if (!plane_backward (&p, &plane, tape, ibar + b * np, acc, error))
        goto out;
      if (tapes)
        {
          /* what the plane stored is spent */
          g_ptr_array_set_size (g_ptr_array_index (tapes, b), 0);
        }
    }
  for (i = 0; vars && i < vars->len; i++)
    {
      go.ops = p.ops;
      go.chain = p.plan->chain;
      go.n_field = p.n_field;
      go.acc = acc;
      go.lambda0 = p.plan->spectrum->wavelengths[0];
      if (!_airy_grad_var_apply (g_ptr_array_index (vars, i), root, base_dir, &go, error))
        goto out;
    }
  if (result)
    *result = g_steal_pointer (&out);
  ok = TRUE;
out:
  acc_free (acc, p.ops->len);
  options->total_s = (g_get_monotonic_time () - t0) / 1e6;
  return ok;
}
