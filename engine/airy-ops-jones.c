#define G_LOG_DOMAIN "airy-ops"

#include "config.h"

#include <string.h>

#include "airy-jones.h"
#include "airy-ops-private.h"

/* JONES: a Jones matrix per pixel on a Jones field's entry pairs (entry 2p
 * is Ex, 2p + 1 is Ey of wavelength p; airy-jones.h), its adjoint, and the
 * folds of the engine pass. The matrix of pair p at pixel i is
 * factor[(4p + m)·np + i], m = xx, xy, yx, yy. */

static inline fftwf_complex *
jones_at (const AiryOp *op, guint pair, guint m)
{
  return op->factor + ((gsize) 4 * pair + m) * op->height * op->width;
}

AiryOp *
_airy_op_jones_new (const AiryField *field,
                    AiryJonesFunc    fn,
                    gpointer         user_data)
{
  AiryOp *op = _airy_op_new (AIRY_OP_JONES, field);
  guint pairs = field->n_lambda / 2, p, y, x, m;
  gsize np = (gsize) field->height * field->width;

  g_return_val_if_fail (field->n_lambda % 2 == 0, NULL);
  op->factor = fftwf_alloc_complex (2 * field->n_lambda * np);
  for (p = 0; p < pairs; p++)
    for (y = 0; y < field->height; y++)
      for (x = 0; x < field->width; x++)
        {
          double j[8];

          fn (y, x, p, j, user_data);
          for (m = 0; m < 4; m++)
            jones_at (op, p, m)[(gsize) y * field->width + x] = (float) j[2 * m] + I * (float) j[2 * m + 1];
        }
  return op;
}

gboolean
_airy_op_jones_forward (const AiryOp    *op,
                        AiryField       *field,
                        const AiryPlane *plane,
                        GError         **error)
{
  gsize np = (gsize) op->height * op->width, i;
  guint p;

  g_return_val_if_fail (field->n_lambda == op->n_lambda && op->n_lambda % 2 == 0, FALSE);
  for (p = 0; p < op->n_lambda / 2; p++)
    {
      fftwf_complex *ex = field->data + 2 * p * np, *ey = ex + np;
      const fftwf_complex *xx = jones_at (op, p, 0), *xy = jones_at (op, p, 1);
      const fftwf_complex *yx = jones_at (op, p, 2), *yy = jones_at (op, p, 3);

      for (i = 0; i < np; i++)
        {
          float j[8] = { crealf (xx[i]), cimagf (xx[i]), crealf (xy[i]), cimagf (xy[i]),
                         crealf (yx[i]), cimagf (yx[i]), crealf (yy[i]), cimagf (yy[i]) };
          float e[4] = { crealf (ex[i]), cimagf (ex[i]), crealf (ey[i]), cimagf (ey[i]) };

          airy_jones_apply_pixel (j, e);
          ex[i] = e[0] + I * e[1];
          ey[i] = e[2] + I * e[3];
        }
    }
  return TRUE;
}

/* u' = J·u: ū = Jᴴ·ū', J̄_pq = ū'_p·conj(u_q) */
gboolean
_airy_op_jones_adjoint (const AiryOp    *op,
                        const AiryField *in,
                        AiryField       *bar,
                        const AiryPlane *plane,
                        AiryOpGrad      *grad,
                        GError         **error)
{
  gsize np = (gsize) op->height * op->width, i;
  guint p;

  for (p = 0; p < op->n_lambda / 2; p++)
    {
      const fftwf_complex *ex = in->data + 2 * p * np, *ey = ex + np;
      fftwf_complex *bx = bar->data + 2 * p * np, *by = bx + np;
      const fftwf_complex *xx = jones_at (op, p, 0), *xy = jones_at (op, p, 1);
      const fftwf_complex *yx = jones_at (op, p, 2), *yy = jones_at (op, p, 3);

      for (i = 0; i < np; i++)
        {
          fftwf_complex a = bx[i], b = by[i];

          if (grad && grad->factor)
            {
              fftwf_complex *g = grad->factor + (gsize) 4 * p * np + i;

              g[0] += a * conjf (ex[i]);
              g[np] += a * conjf (ey[i]);
              g[2 * np] += b * conjf (ex[i]);
              g[3 * np] += b * conjf (ey[i]);
            }
          bx[i] = conjf (xx[i]) * a + conjf (yx[i]) * b;
          by[i] = conjf (xy[i]) * a + conjf (yy[i]) * b;
        }
    }
  return TRUE;
}

static gboolean
same_shape (const AiryOp *a, const AiryOp *b)
{
  return a->height == b->height && a->width == b->width && a->n_lambda == b->n_lambda;
}

static gboolean
has_bases (const AiryOp *op)
{
  return op->bases != NULL && op->bases->len > 0;
}

/* into = J·into for a factor of entry pairs (a SET's field) */
static void
jones_into_field (AiryOp *into, const AiryOp *jones)
{
  AiryField f = { .n_lambda = into->n_lambda, .height = into->height, .width = into->width, .data = into->factor };

  _airy_op_jones_forward (jones, &f, NULL, NULL);
}

/* b·a into a (both JONES): a applied first */
static void
jones_after_jones (AiryOp *a, const AiryOp *b)
{
  gsize np = (gsize) a->height * a->width, i;
  guint p, m;

  for (p = 0; p < a->n_lambda / 2; p++)
    for (i = 0; i < np; i++)
      {
        double ja[8], jb[8], jc[8];

        for (m = 0; m < 4; m++)
          {
            fftwf_complex va = jones_at (a, p, m)[i], vb = jones_at (b, p, m)[i];

            ja[2 * m] = crealf (va), ja[2 * m + 1] = cimagf (va);
            jb[2 * m] = crealf (vb), jb[2 * m + 1] = cimagf (vb);
          }
        airy_jones_product (jb, ja, jc);
        for (m = 0; m < 4; m++)
          jones_at (a, p, m)[i] = (float) jc[2 * m] + I * (float) jc[2 * m + 1];
      }
}

/* J·diag(mx, my) (the MULTIPLY first) or diag(mx, my)·J (after), into J */
static void
multiply_into_jones (AiryOp *jones, const AiryOp *mul, gboolean mul_first)
{
  gsize np = (gsize) jones->height * jones->width, i;
  guint p;

  for (p = 0; p < jones->n_lambda / 2; p++)
    {
      const fftwf_complex *mx = mul->factor + 2 * p * np, *my = mx + np;
      fftwf_complex *xx = jones_at (jones, p, 0), *xy = jones_at (jones, p, 1);
      fftwf_complex *yx = jones_at (jones, p, 2), *yy = jones_at (jones, p, 3);

      for (i = 0; i < np; i++)
        if (mul_first)
          {
            xx[i] *= mx[i], yx[i] *= mx[i];
            xy[i] *= my[i], yy[i] *= my[i];
          }
        else
          {
            xx[i] *= mx[i], xy[i] *= mx[i];
            yx[i] *= my[i], yy[i] *= my[i];
          }
    }
}

gboolean
_airy_ops_fold_jones (GPtrArray *ops)
{
  gboolean changed = FALSE;
  guint i = 0;

  while (i + 1 < ops->len)
    {
      AiryOp *a = g_ptr_array_index (ops, i);
      AiryOp *b = g_ptr_array_index (ops, i + 1);
      gboolean fold = FALSE;

      if (b->kind == AIRY_OP_JONES && same_shape (a, b))
        {
          /* a Zernike basis stays on its own factor (the fit varies it) */
          if (a->kind == AIRY_OP_SET && !has_bases (a))
            jones_into_field (a, b), fold = TRUE;
          else if (a->kind == AIRY_OP_JONES)
            jones_after_jones (a, b), fold = TRUE;
          else if (a->kind == AIRY_OP_MULTIPLY && !has_bases (a))
            {
              multiply_into_jones (b, a, TRUE);
              g_ptr_array_remove_index (ops, i);
              changed = TRUE;
              continue;
            }
        }
      else if (a->kind == AIRY_OP_JONES && b->kind == AIRY_OP_MULTIPLY && same_shape (a, b) && !has_bases (b))
        multiply_into_jones (a, b, FALSE), fold = TRUE;
      if (fold)
        {
          g_ptr_array_remove_index (ops, i + 1);
          changed = TRUE;
          continue;
        }
      i++;
    }
  return changed;
}
