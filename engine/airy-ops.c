#define G_LOG_DOMAIN "airy-ops"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-ops-private.h"

AiryOpList *
_airy_ops_ref (AiryOpList *list)
{
  g_atomic_int_inc (&list->ref);
  return list;
}

void
_airy_ops_unref (AiryOpList *list)
{
  guint i;

  if (list == NULL || !g_atomic_int_dec_and_test (&list->ref))
    return;
  /* the ops first: they point at the states */
  if (list->ops)
    g_ptr_array_unref (list->ops);
  for (i = 0; list->states && i < list->chain->len; i++)
    {
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (list->chain, i));
      if (list->states[i] && klass->free_state)
        klass->free_state (list->states[i]);
    }
  g_free (list->states);
  if (list->chain)
    g_ptr_array_unref (list->chain);
  g_free (list);
}

/* Walks the chain on a field that carries the geometry: each element's
 * compile(), or for a pixelwise one its apply() on a field of ones; a type
 * with neither runs its apply() on the host (APPLY). */
AiryOpList *
_airy_ops_compile (AiryPlan  *plan,
                   GError   **error)
{
  AiryOpList *list = g_new0 (AiryOpList, 1);
  g_autoptr (AiryField) field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  AiryPlane any = { 0, 0.0, 1 };
  guint i, l;

  list->ref = 1;
  list->chain = g_ptr_array_ref (plan->chain);
  list->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) _airy_op_unref);
  list->states = g_new0 (gpointer, plan->chain->len);
  for (l = 0; l < field->n_lambda; l++)
    {
      field->dy[l] = plan->in_dy[l];
      field->dx[l] = plan->in_dx[l];
    }
  list->max_height = field->height;
  list->max_width = field->width;
  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);
      g_autofree char *path = g_strdup_printf ("chain[%u]", i);
      AiryContext ctx = plan->contexts[i];
      gboolean ok = TRUE;
      guint before = list->ops->len, k;

      ctx.path = path;
      if (klass->prepare && (list->states[i] = klass->prepare (e, &ctx, error)) == NULL)
        goto fail;
      /* a pixelwise type first in the chain has no field to multiply */
      if (klass->compile && !(klass->elementwise && i == 0))
        {
          ok = klass->compile (e, list->states[i], field, list->ops, error);
          /* the bases its ops carry are this element's */
          for (k = before; ok && k < list->ops->len; k++)
            {
              AiryOp *op = g_ptr_array_index (list->ops, k);
              guint b;

              for (b = 0; op->bases && b < op->bases->len; b++)
                ((AiryZernikeBasis *) g_ptr_array_index (op->bases, b))->index = i;
            }
        }
      else if (klass->elementwise && i > 0)
        {
          _airy_field_fill_ones (field);
          ok = klass->apply (e, list->states[i], field, &any, error);
          if (ok)
            g_ptr_array_add (list->ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
        }
      else
        {
          /* it sees the grid entering it; the shape and grid it leaves
           * are the ones the plan's check walked to */
          AiryOp *op = _airy_op_new (AIRY_OP_APPLY, field);

          op->element = e;
          op->state = list->states[i];
          op->index = i;
          op->dy = g_memdup2 (field->dy, field->n_lambda * sizeof (double));
          op->dx = g_memdup2 (field->dx, field->n_lambda * sizeof (double));
          if (i + 1 < plan->chain->len)
            {
              op->height = plan->contexts[i + 1].height;
              op->width = plan->contexts[i + 1].width;
              memcpy (field->dy, plan->contexts[i + 1].dy, field->n_lambda * sizeof (double));
              memcpy (field->dx, plan->contexts[i + 1].dx, field->n_lambda * sizeof (double));
            }
          else
            {
              op->height = plan->psf_height;
              op->width = plan->psf_width;
            }
          airy_field_resize (field, op->height, op->width);
          g_ptr_array_add (list->ops, op);
        }
      if (!ok)
        goto fail;
      for (k = before; k < list->ops->len; k++)
        {
          AiryOp *op = g_ptr_array_index (list->ops, k);

          op->chain_index = i;
          if (op->kind == AIRY_OP_APPLY)  /* a compile() may hand itself to the host */
            op->index = i;
        }
      list->max_height = MAX (list->max_height, field->height);
      list->max_width = MAX (list->max_width, field->width);
    }
  if (field->height != plan->psf_height || field->width != plan->psf_width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("the device operations end on %u × %u, the plan on %u × %u"),
                   field->height, field->width, plan->psf_height, plan->psf_width);
      goto fail;
    }
  list->max_size = (gsize) plan->spectrum->n * list->max_height * list->max_width;
  return list;

fail:
  _airy_ops_unref (list);
  return NULL;
}

void
_airy_ops_end_field (AiryOpList         *list,
                     const AirySpectrum *spectrum)
{
  AiryOp *last = g_ptr_array_index (list->ops, list->ops->len - 1);
  AiryOp *op = g_new0 (AiryOp, 1);

  op->ref = 1;
  op->kind = AIRY_OP_INTENSITY;
  op->n_lambda = spectrum->n;
  op->height = last->height;
  op->width = last->width;
  op->weights = g_memdup2 (spectrum->weights, spectrum->n * sizeof (double));
  g_ptr_array_add (list->ops, op);
}

gsize
_airy_ops_bytes (AiryOpList *list)
{
  gsize bytes = 0;
  guint i;

  for (i = 0; i < list->ops->len; i++)
    {
      AiryOp *op = g_ptr_array_index (list->ops, i);
      gsize n = (gsize) op->n_lambda * op->height * op->width;

      bytes += (op->factor ? (op->kind == AIRY_OP_JONES ? 2 : 1) * n * sizeof (fftwf_complex) : 0)
               + (op->phase ? n * sizeof (double) : 0);
      if (op->psf)
        bytes += (gsize) op->n_lambda * op->psf->rows * op->width * (sizeof (fftwf_complex) + sizeof (double));
    }
  return bytes;
}

void
_airy_ops_stages (GPtrArray  *ops,
                  AiryStages *stages)
{
  guint i;

  memset (stages, 0, sizeof *stages);
  for (i = 0; i < ops->len; i++)
    {
      AiryOp *op = g_ptr_array_index (ops, i);

      switch (op->kind)
        {
        case AIRY_OP_FUSED_PSF:
          stages->fused = op;
          stages->n_field = i + 1;
          break;
        case AIRY_OP_INTENSITY:
          stages->n_field = i + 1;
          break;
        case AIRY_OP_CONVOLVE:
          stages->convolve = op;
          break;
        case AIRY_OP_SUM:
          stages->sum = op;
          break;
        case AIRY_OP_SENSOR:
          stages->sensor = op;
          break;
        default:
          break;
        }
    }
}

/* The reference interpreter of the field ops: what a device does, on the
 * CPU; each kind's forward is airy-ops-kinds.c's, beside its adjoint. */
static gboolean
run_field (GPtrArray *ops, AiryField *field, const AiryPlane *plane, GError **error)
{
  guint i;

  for (i = 0; i < ops->len; i++)
    {
      AiryOp *op = g_ptr_array_index (ops, i);
      const AiryOpKindInfo *kind = _airy_op_kind_info (op->kind);

      if (op->kind == AIRY_OP_INTENSITY)
        return TRUE;
      g_return_val_if_fail (kind->forward != NULL, FALSE);
      if (!kind->forward (op, field, plane, error))
        return FALSE;
    }
  return TRUE;
}

/* INTENSITY with the op's weights: Σ_l w_l |u_l|² */
static const AiryOp *
intensity_op (GPtrArray *ops)
{
  guint k;

  for (k = 0; k < ops->len; k++)
    if (((AiryOp *) g_ptr_array_index (ops, k))->kind == AIRY_OP_INTENSITY)
      return g_ptr_array_index (ops, k);
  return NULL;
}

gboolean
_airy_ops_run (AiryOpList      *list,
               AiryField       *field,
               const AiryPlane *plane,
               GError         **error)
{
  return run_field (list->ops, field, plane, error);
}

gboolean
_airy_ops_run_intensity (GPtrArray       *ops,
                         AiryField       *field,
                         const AiryPlane *plane,
                         float           *out,
                         GError         **error)
{
  AiryOp *first = g_ptr_array_index (ops, 0);

  if (first->kind == AIRY_OP_FUSED_PSF)
    {
      _airy_fused_psf_reference (first, plane->z, plane->threads, out);
      return TRUE;
    }
  if (!run_field (ops, field, plane, error))
    return FALSE;
  _airy_op_intensity_forward (intensity_op (ops), field, out);
  return TRUE;
}

void
_airy_fused_psf_reference (const AiryOp *op,
                           double        z,
                           guint         threads,
                           float        *out)
{
  const AiryFusedPsf *psf = op->psf;
  guint h = op->height, w = op->width, l, r, x;
  gsize n = (gsize) h * w, nband = (gsize) psf->rows * w, k;
  fftwf_complex *u = fftwf_alloc_complex (n);

  memset (out, 0, n * sizeof (float));
  for (l = 0; l < op->n_lambda; l++)
    {
      memset (u, 0, n * sizeof (fftwf_complex));
      for (r = 0; r < psf->rows; r++)
        for (x = 0; x < w; x++)
          {
            gsize i = l * nband + (gsize) r * w + x;
            u[(gsize) (psf->y0 + r) * w + x] = psf->F[i] * _airy_cis ((z + psf->z0) * psf->G[i]);
          }
      _airy_fft_c2c_execute (h, w, AIRY_FFT_FORWARD, threads, u, u);
      for (k = 0; k < n; k++)
        out[k] += airy_intensity_term (psf->scale[l], crealf (u[k]), cimagf (u[k]));
    }
  fftwf_free (u);
}

AiryStack *
_airy_ops_run_program (GPtrArray    *ops,
                       guint         n_planes,
                       const double *z,
                       guint         threads,
                       GError      **error)
{
  const AiryOp *first = g_ptr_array_index (ops, 0), *intensity = NULL;
  g_autoptr(AiryStack) planes = NULL;
  g_autofree double *lambda = g_new (double, first->n_lambda);
  g_autofree double *weights = g_new (double, first->n_lambda);
  AirySpectrum spectrum = { first->n_lambda, lambda, weights };
  AiryField *field = NULL;
  AiryStages st;
  guint b, l, h, w, k, n = n_planes;
  gboolean ok = TRUE;

  _airy_ops_stages (ops, &st);
  g_return_val_if_fail (st.n_field > 0, NULL);
  intensity = g_ptr_array_index (ops, st.n_field - 1);
  h = intensity->height;
  w = intensity->width;
  /* the field's grid: a generated source carries it; the other ops do
   * not read it */
  for (l = 0; l < first->n_lambda; l++)
    {
      lambda[l] = first->lambda ? first->lambda[l] : 1.0;
      weights[l] = intensity->weights ? intensity->weights[l] : 1.0;
    }
  if (first->kind != AIRY_OP_FUSED_PSF)
    field = airy_field_new (&spectrum, first->height, first->width, 1.0);
  planes = airy_stack_new (MAX (n_planes, 1), h, w);
  for (b = 0; ok && b < n_planes; b++)
    {
      AiryPlane plane = { b, z[b], threads };

      if (field && (field->height != first->height || field->width != first->width))
        airy_field_resize (field, first->height, first->width);
      ok = _airy_ops_run_intensity (ops, field, &plane, airy_stack_plane (planes, b), error);
    }
  g_clear_pointer (&field, airy_field_free);
  if (!ok)
    return NULL;

  /* the intensity stage, op by op: n planes in, the next op's planes out */
  for (k = st.n_field; ok && k < ops->len; k++)
    {
      const AiryOp *op = g_ptr_array_index (ops, k);
      guint n_out = op->kind == AIRY_OP_SENSOR ? n : 1;
      AiryStack *next = airy_stack_new (MAX (n_out, 1), op->height, op->width);

      ok = _airy_op_kind_info (op->kind)->image_forward (op, planes->data, n, 0, next->data, error);
      airy_stack_free (planes);
      planes = next;
      n = n_out;
    }
  if (!ok)
    return NULL;
  return g_steal_pointer (&planes);
}

gboolean
_airy_ops_run_vjp (GPtrArray       *ops,
                   AiryField       *field,
                   const AiryPlane *plane,
                   const float     *ibar,
                   AiryOpGrad      *grads,
                   GError         **error)
{
  const AiryOp *first = g_ptr_array_index (ops, 0);
  g_autoptr(GPtrArray) tape = NULL;
  g_autoptr(AiryField) bar = NULL;
  guint i, n;

  if (first->kind == AIRY_OP_FUSED_PSF)
    {
      _airy_fused_psf_adjoint (first, plane->z, plane->threads, ibar, &grads[0]);
      return TRUE;
    }
  /* forward, keeping what enters each op */
  tape = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_field_free);
  for (n = 0; n < ops->len; n++)
    {
      const AiryOp *op = g_ptr_array_index (ops, n);
      const AiryOpKindInfo *kind = _airy_op_kind_info (op->kind);

      if (op->kind == AIRY_OP_INTENSITY)
        break;
      if (kind->adjoint == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, _("chain[%u] (%s): this element has no adjoint"),
                       op->index, op->element ? airy_element_get_type_name (op->element) : _airy_op_kind_name (op->kind));
          return FALSE;
        }
      g_ptr_array_add (tape, _airy_field_copy (field));
      if (!kind->forward (op, field, plane, error))
        return FALSE;
    }
  g_return_val_if_fail (n < ops->len, FALSE);
  /* and back */
  bar = _airy_field_copy (field);
  _airy_op_intensity_adjoint (g_ptr_array_index (ops, n), field, ibar, bar);
  for (i = n; i-- > 0;)
    {
      const AiryOp *op = g_ptr_array_index (ops, i);

      if (!_airy_op_kind_info (op->kind)->adjoint (op, g_ptr_array_index (tape, i), bar, plane,
                                                    grads ? &grads[i] : NULL, error))
        return FALSE;
    }
  /* the field leaves with the input's cotangent */
  airy_field_resize (field, bar->height, bar->width);
  memcpy (field->data, bar->data, (gsize) bar->n_lambda * bar->height * bar->width * sizeof (fftwf_complex));
  return TRUE;
}

gboolean
_airy_ops_run_program_vjp (GPtrArray    *ops,
                           guint         n_planes,
                           const double *z,
                           guint         threads,
                           const float  *out_bar,
                           AiryOpGrad   *grads,
                           GError      **error)
{
  const AiryOp *first = g_ptr_array_index (ops, 0);
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_stack_free);
  g_autoptr(GPtrArray) field_ops = g_ptr_array_new ();
  g_autoptr(AiryStack) planes = NULL;
  g_autofree guint *counts = NULL;
  g_autofree float *bar = NULL;
  AiryStages st;
  guint b, k, n = n_planes;

  _airy_ops_stages (ops, &st);
  for (k = 0; k < st.n_field; k++)
    g_ptr_array_add (field_ops, g_ptr_array_index (ops, k));
  /* forward: the planes, then each op of the intensity stage, keeping
   * what enters it */
  planes = _airy_ops_run_program (field_ops, n_planes, z, threads, error);
  if (planes == NULL)
    return FALSE;
  counts = g_new (guint, ops->len + 1);
  for (k = st.n_field; k < ops->len; k++)
    {
      const AiryOp *op = g_ptr_array_index (ops, k);
      guint n_out = op->kind == AIRY_OP_SENSOR ? n : 1;
      AiryStack *next = airy_stack_new (MAX (n_out, 1), op->height, op->width);

      counts[k] = n;
      if (!_airy_op_kind_info (op->kind)->image_forward (op, planes->data, n, 0, next->data, error))
        {
          airy_stack_free (next);
          return FALSE;
        }
      g_ptr_array_add (inputs, g_steal_pointer (&planes));
      planes = next;
      n = n_out;
    }
  /* back through the intensity stage: the planes' cotangents */
  bar = g_memdup2 (out_bar, (gsize) n * airy_stack_plane_size (planes) * sizeof (float));
  for (k = ops->len; k-- > st.n_field;)
    {
      const AiryOp *op = g_ptr_array_index (ops, k);
      AiryStack *in = g_ptr_array_index (inputs, k - st.n_field);
      float *in_bar = g_new (float, (gsize) counts[k] * airy_stack_plane_size (in));

      if (!_airy_op_kind_info (op->kind)->image_adjoint (op, in->data, counts[k], 0, bar, in_bar,
                                                         grads ? &grads[k] : NULL, error))
        {
          g_free (in_bar);
          return FALSE;
        }
      g_free (bar);
      bar = in_bar;
    }
  /* and through the field stage, plane by plane */
  {
    g_autofree double *lambda = g_new (double, first->n_lambda);
    g_autofree double *weights = g_new (double, first->n_lambda);
    AirySpectrum spectrum = { first->n_lambda, lambda, weights };
    gsize np = (gsize) ((AiryOp *) g_ptr_array_index (ops, st.n_field - 1))->height
               * ((AiryOp *) g_ptr_array_index (ops, st.n_field - 1))->width;
    guint l;

    for (l = 0; l < first->n_lambda; l++)
      {
        lambda[l] = first->lambda ? first->lambda[l] : 1.0;
        weights[l] = 1.0;
      }
    for (b = 0; b < n_planes; b++)
      {
        g_autoptr(AiryField) field = first->kind == AIRY_OP_FUSED_PSF ? NULL
                                     : airy_field_new (&spectrum, first->height, first->width, 1.0);
        AiryPlane plane = { b, z[b], threads };

        if (first->kind == AIRY_OP_FUSED_PSF && grads)
          _airy_fused_psf_adjoint (first, z[b], threads, bar + b * np, &grads[0]);
        else if (first->kind == AIRY_OP_FUSED_PSF)
          continue;
        else if (!_airy_ops_run_vjp (field_ops, field, &plane, bar + b * np, grads, error))
          return FALSE;
      }
  }
  return TRUE;
}
