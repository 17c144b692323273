#define G_LOG_DOMAIN "airy-ops"

#include "config.h"

#include <string.h>

#include "airy-ops-private.h"
#include "airy-physics.h"

/* One op (airy-ops-private.h): its kind's name, its data and its lifetime,
 * and the per-op kernels of the intensity stage that the reference
 * interpreter's kinds and the CPU backend share (the sensor, the sample's
 * planes). Elements make ops with these from their compile(); the op
 * lists, the kinds and the backends read them: a unit below all three. */

static const char *const kind_names[AIRY_N_OP_KINDS] = {
  [AIRY_OP_SET] = "set",
  [AIRY_OP_OBJECTIVE] = "objective",
  [AIRY_OP_POINT] = "point",
  [AIRY_OP_GAUSS] = "gauss",
  [AIRY_OP_MULTIPLY] = "multiply",
  [AIRY_OP_JONES] = "jones",
  [AIRY_OP_FFT] = "fft",
  [AIRY_OP_RESIZE] = "resize",
  [AIRY_OP_APPLY] = "apply",
  [AIRY_OP_INTENSITY] = "intensity",
  [AIRY_OP_FUSED_PSF] = "fused-psf",
  [AIRY_OP_CONVOLVE] = "convolve",
  [AIRY_OP_SUM] = "sum",
  [AIRY_OP_SENSOR] = "sensor",
};

const char *
_airy_op_kind_name (AiryOpKind kind)
{
  g_return_val_if_fail (kind < AIRY_N_OP_KINDS, NULL);
  return kind_names[kind];
}

static void
fused_psf_free (AiryFusedPsf *psf)
{
  if (psf == NULL)
    return;
  fftwf_free (psf->F);
  g_free (psf->G);
  g_free (psf->gx);
  g_free (psf->gy);
  g_free (psf->scale);
  g_free (psf);
}

void
_airy_zernike_basis_free (gpointer p)
{
  AiryZernikeBasis *b = p;

  g_free (b->n);
  g_free (b->m);
  g_free (b->radius);
  g_free (b->dy);
  g_free (b->dx);
  g_free (b);
}

double
_airy_zernike_basis_at (const AiryZernikeBasis *b,
                        guint                   j,
                        guint                   l,
                        guint                   y,
                        guint                   x)
{
  return airy_zernike_at (b->n[j], b->m[j], airy_grid_coord (x, b->width, b->dx[l]),
                          airy_grid_coord (y, b->height, b->dy[l]), b->radius[l], b->normalised);
}

const AiryZernikeBasis *
_airy_op_find_basis (const AiryOp *op,
                     guint         index)
{
  guint i;

  for (i = 0; op->bases && i < op->bases->len; i++)
    if (((AiryZernikeBasis *) g_ptr_array_index (op->bases, i))->index == index)
      return g_ptr_array_index (op->bases, i);
  return NULL;
}

void
_airy_volume_box_clear (gpointer box)
{
  g_clear_pointer ((AiryStack **) box, airy_stack_free);
}

AiryOp *
_airy_op_ref (AiryOp *op)
{
  g_atomic_int_inc (&op->ref);
  return op;
}

void
_airy_op_unref (AiryOp *op)
{
  if (op == NULL || !g_atomic_int_dec_and_test (&op->ref))
    return;
  fftwf_free (op->factor);
  fftwf_free (op->scale);
  g_free (op->phase);
  g_free (op->phase_x);
  g_free (op->phase_y);
  fftwf_free (op->components);
  g_free (op->component_weights);
  g_free (op->weights);
  g_free (op->lambda);
  g_free (op->dy);
  g_free (op->dx);
  fused_psf_free (op->psf);
  g_free (op->sensor);
  if (op->convolve)
    {
      if (op->convolve->volume)
        g_atomic_rc_box_release_full (op->convolve->volume, _airy_volume_box_clear);
      _airy_volume_stream_unref (op->convolve->stream);
      g_free (op->convolve->key);
      g_free (op->convolve);
    }
  g_free (op->reduce);
  if (op->bases)
    g_ptr_array_unref (op->bases);
  g_free (op);
}

AiryOp *
_airy_op_new (AiryOpKind       kind,
              const AiryField *field)
{
  AiryOp *op = g_new0 (AiryOp, 1);

  op->ref = 1;
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

float *
_airy_op_sensor_process (const AiryOp *op,
                         const float  *in,
                         guint64       stream)
{
  const AirySensorOp *s = op->sensor;
  guint oh = s->out_height, ow = s->out_width, y, x;
  gsize n = (gsize) oh * ow, i;
  AiryNoiseParams noise = s->noise;
  float *out = g_new (float, n);

  switch (s->resample)
    {
    case AIRY_SENSOR_BLOCK_SUM:
      for (y = 0; y < oh; y++)
        for (x = 0; x < ow; x++)
          out[(gsize) y * ow + x] = airy_block_sum_at (in, s->in_width, s->factor, y, x);
      break;
    case AIRY_SENSOR_LINEAR:
      for (y = 0; y < oh; y++)
        for (x = 0; x < ow; x++)
          out[(gsize) y * ow + x] = airy_linear_resample_at (in, s->in_height, s->in_width, s->in_dy, s->in_dx, y, x,
                                                             oh, ow, s->out_dy, s->out_dx, s->scale);
      break;
    case AIRY_SENSOR_COPY:
    default:
      memcpy (out, in, n * sizeof (float));
      break;
    }
  noise.stream = stream;
  for (i = 0; i < n; i++)
    out[i] = (float) airy_sensor_pixel (&noise, out[i], i);
  return out;
}

gboolean
_airy_convolve_volume_plane (const AiryConvolveOp *conv,
                             guint                 z,
                             float                *out)
{
  gsize n = (gsize) conv->vol_height * conv->vol_width, i;

  switch (conv->kind)
    {
    case AIRY_SAMPLE_CONSTANT:
      for (i = 0; i < n; i++)
        out[i] = (float) conv->value;
      return TRUE;
    case AIRY_SAMPLE_FILE:
      if (conv->stream)   /* the plane alone; a failed read is the stream's error */
        return _airy_volume_stream_plane (conv->stream, NULL, z, out, NULL);
      memcpy (out, _airy_convolve_volume_data (conv, z), n * sizeof (float));
      return TRUE;
    case AIRY_SAMPLE_BEADS:
      memset (out, 0, n * sizeof (float));
      for (i = 0; i < conv->count; i++)
        {
          guint bz, by, bx;

          airy_bead_position (conv->seed, i, conv->n_planes, conv->vol_height, conv->vol_width, &bz, &by, &bx);
          if (bz == z)
            out[(gsize) by * conv->vol_width + bx] += (float) conv->intensity;
        }
      return TRUE;
    case AIRY_SAMPLE_NONE:
    default:
      return FALSE;
    }
}

const float *
_airy_convolve_volume_data (const AiryConvolveOp *conv,
                            guint                 z)
{
  const AiryStack *v;

  g_assert (conv->volume != NULL && *conv->volume != NULL);
  v = *conv->volume;
  g_assert (z >= conv->volume_first && z - conv->volume_first < v->depth);
  return airy_stack_plane (v, z - conv->volume_first);
}
