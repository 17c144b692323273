#define G_LOG_DOMAIN "airy-ops"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-ops-private.h"

static void
op_free (gpointer p)
{
  AiryOp *op = p;

  fftwf_free (op->factor);
  fftwf_free (op->scale);
  g_free (op->phase);
  g_free (op->lambda);
  g_free (op->dy);
  g_free (op->dx);
  g_free (op);
}

AiryOp *
_airy_op_new (AiryOpKind       kind,
              const AiryField *field)
{
  AiryOp *op = g_new0 (AiryOp, 1);

  op->kind = kind;
  op->n_lambda = field->n_lambda;
  op->height = field->height;
  op->width = field->width;
  op->sign = AIRY_FFT_FORWARD;
  if (kind == AIRY_OP_POINT || kind == AIRY_OP_GAUSS)
    {
      op->lambda = g_memdup2 (field->lambda, field->n_lambda * sizeof (double));
      op->dy = g_memdup2 (field->dy, field->n_lambda * sizeof (double));
      op->dx = g_memdup2 (field->dx, field->n_lambda * sizeof (double));
    }
  return op;
}

AiryOp *
_airy_op_take_factor (AiryOpKind       kind,
                      const AiryField *field)
{
  AiryOp *op = _airy_op_new (kind, field);
  gsize n = field->n_lambda * airy_field_plane_size (field);

  op->factor = fftwf_alloc_complex (n);
  memcpy (op->factor, field->data, n * sizeof (fftwf_complex));
  return op;
}

void
_airy_field_fill_ones (AiryField *field)
{
  gsize n = field->n_lambda * airy_field_plane_size (field), i;

  for (i = 0; i < n; i++)
    field->data[i] = 1.0f;
}

void
_airy_ops_free (AiryOpList *list)
{
  guint i;

  if (list == NULL)
    return;
  for (i = 0; list->states && i < list->plan->chain->len; i++)
    {
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (list->plan->chain, i));
      if (list->states[i] && klass->free_state)
        klass->free_state (list->states[i]);
    }
  g_free (list->states);
  if (list->ops)
    g_ptr_array_unref (list->ops);
  g_free (list);
}

/* Walks the chain on a field that carries the geometry: each element's
 * compile(), or for a pixelwise one its apply() on a field of ones. */
AiryOpList *
_airy_ops_compile (AiryPlan  *plan,
                   GError   **error)
{
  AiryOpList *list = g_new0 (AiryOpList, 1);
  g_autoptr (AiryField) field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  AiryPlane any = { 0, 0.0, 1 };
  guint i, l;

  list->plan = plan;
  list->ops = g_ptr_array_new_with_free_func (op_free);
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
      gboolean ok;

      ctx.path = path;
      if (klass->prepare && (list->states[i] = klass->prepare (e, &ctx, error)) == NULL)
        goto fail;
      if ((i == 0) != (klass->category == AIRY_CATEGORY_SOURCE) || (!klass->elementwise && !klass->compile))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                       _("%s (%s): this element has no device form"), path, airy_element_get_type_name (e));
          goto fail;
        }
      if (klass->compile)
        ok = klass->compile (e, list->states[i], field, list->ops, error);
      else
        {
          _airy_field_fill_ones (field);
          ok = klass->apply (e, list->states[i], field, &any, error);
          if (ok)
            g_ptr_array_add (list->ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
        }
      if (!ok)
        goto fail;
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
  _airy_ops_free (list);
  return NULL;
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

      bytes += (op->factor ? n * sizeof (fftwf_complex) : 0) + (op->phase ? n * sizeof (float) : 0);
    }
  return bytes;
}

/* The reference interpreter: what a device does, on the CPU. */
gboolean
_airy_ops_run (AiryOpList      *list,
               AiryField       *field,
               const AiryPlane *plane,
               GError         **error)
{
  guint i, l;

  for (i = 0; i < list->ops->len; i++)
    {
      AiryOp *op = g_ptr_array_index (list->ops, i);
      gsize np = (gsize) op->height * op->width, k;

      switch (op->kind)
        {
        case AIRY_OP_SET:
          memcpy (field->data, op->factor, op->n_lambda * np * sizeof (fftwf_complex));
          break;
        case AIRY_OP_OBJECTIVE:
          for (k = 0; k < op->n_lambda * np; k++)
            field->data[k] = op->factor[k] * _airy_cis ((float) (plane->z + op->z) * op->phase[k]);
          break;
        case AIRY_OP_POINT:
        case AIRY_OP_GAUSS:
          if (!AIRY_ELEMENT_GET_CLASS (op->element)->apply (op->element, op->state, field, plane, error))
            return FALSE;
          break;
        case AIRY_OP_MULTIPLY:
          for (k = 0; k < op->n_lambda * np; k++)
            field->data[k] *= op->factor[k];
          break;
        case AIRY_OP_FFT:
          if (op->centred)
            _airy_fft_centred (field, op->sign, plane->threads);
          else
            for (l = 0; l < op->n_lambda; l++)
              _airy_fft_c2c_execute (op->height, op->width, op->sign, plane->threads,
                                     field->data + l * np, field->data + l * np);
          for (l = 0; op->scale && l < op->n_lambda; l++)
            for (k = 0; k < np; k++)
              field->data[l * np + k] *= op->scale[l];
          break;
        case AIRY_OP_RESIZE:
          airy_field_resize_centred (field, op->height, op->width);
          break;
        }
    }
  return TRUE;
}
