#define G_LOG_DOMAIN "airy-resident"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-resident.h"
#include "airy-backend-impl.h"
#include "airy-error.h"

AiryResident *
airy_resident_new (AiryBackend           *backend,
                   const AiryResidentOps *ops,
                   AiryStack             *stack,
                   gpointer               priv)
{
  AiryResident *r;

  g_return_val_if_fail (ops != NULL && ops->read_slice != NULL && ops->read_box != NULL && ops->stats != NULL, NULL);
  g_return_val_if_fail (stack != NULL, NULL);

  r = g_new0 (AiryResident, 1);
  r->ref = 1;
  r->ops = ops;
  r->backend = backend;
  r->stack = stack;
  r->priv = priv;
  return r;
}

AiryResident *
airy_resident_ref (AiryResident *resident)
{
  g_return_val_if_fail (resident != NULL, NULL);
  g_atomic_int_inc (&resident->ref);
  return resident;
}

void
airy_resident_unref (AiryResident *resident)
{
  if (resident == NULL || !g_atomic_int_dec_and_test (&resident->ref))
    return;
  if (resident->ops->free)
    resident->ops->free (resident);
  airy_stack_free (resident->stack);
  g_free (resident);
}

const AiryStack *
airy_resident_get_stack (AiryResident *resident)
{
  return resident->stack;
}

const char *
airy_resident_get_backend_name (AiryResident *resident)
{
  return resident->backend ? resident->backend->ops->name : "cpu";
}

void
airy_slice_size (const AiryStack *s,
                 const AirySlice *slice,
                 guint           *width,
                 guint           *height)
{
  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
    case AIRY_SLICE_MIP:
      *width = s->width;
      *height = s->height;
      break;
    case AIRY_SLICE_XZ:
      *width = s->width;
      *height = s->depth;
      break;
    case AIRY_SLICE_YZ:
      *width = s->height;
      *height = s->depth;
      break;
    default:
      *width = *height = 0;
      break;
    }
}

static gboolean
check_slice (AiryResident *r, const AirySlice *slice, gboolean stack_ok, GError **error)
{
  const AiryStack *s = r->stack;
  guint limit;

  switch (slice->kind)
    {
    case AIRY_SLICE_XY:  limit = s->depth; break;
    case AIRY_SLICE_XZ:  limit = s->height; break;
    case AIRY_SLICE_YZ:  limit = s->width; break;
    case AIRY_SLICE_MIP: return TRUE;
    case AIRY_SLICE_STACK:
      if (stack_ok)
        return TRUE;
      G_GNUC_FALLTHROUGH;
    default:
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("slice: kind %d is not a slice"), slice->kind);
      return FALSE;
    }
  if (slice->index >= limit)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("slice: index must be in [0, %u], got %u"),
                   limit - 1, slice->index);
      return FALSE;
    }
  return TRUE;
}

gboolean
airy_resident_read_slice (AiryResident    *resident,
                          const AirySlice *slice,
                          float           *out,
                          GError         **error)
{
  g_return_val_if_fail (resident != NULL && slice != NULL && out != NULL, FALSE);
  return check_slice (resident, slice, FALSE, error) && resident->ops->read_slice (resident, slice, out, error);
}

gboolean
airy_resident_read_box (AiryResident  *resident,
                        const AiryBox *box,
                        float         *out,
                        GError       **error)
{
  const AiryStack *s;

  g_return_val_if_fail (resident != NULL && box != NULL && out != NULL, FALSE);
  s = resident->stack;
  if (box->depth == 0 || box->height == 0 || box->width == 0
      || box->z + (guint64) box->depth > s->depth || box->y + (guint64) box->height > s->height
      || box->x + (guint64) box->width > s->width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("box: [%u, +%u) × [%u, +%u) × [%u, +%u) must lie in the %u × %u × %u stack"),
                   box->z, box->depth, box->y, box->height, box->x, box->width, s->depth, s->height, s->width);
      return FALSE;
    }
  return resident->ops->read_box (resident, box, out, error);
}

gboolean
airy_resident_stats (AiryResident    *resident,
                     const AirySlice *slice,
                     AirySliceStats  *stats,
                     GError         **error)
{
  g_return_val_if_fail (resident != NULL && slice != NULL && stats != NULL, FALSE);
  g_return_val_if_fail (stats->n_bins == 0 || stats->counts != NULL, FALSE);
  return check_slice (resident, slice, TRUE, error) && resident->ops->stats (resident, slice, stats, error);
}

gboolean
airy_resident_to_texture (AiryResident    *resident,
                          const AirySlice *slice,
                          AiryTexture     *texture,
                          GError         **error)
{
  g_autofree float *host = NULL;
  guint w, h;

  g_return_val_if_fail (resident != NULL && slice != NULL && texture != NULL && texture->upload != NULL, FALSE);
  if (!check_slice (resident, slice, FALSE, error))
    return FALSE;
  texture->path = AIRY_TEXTURE_HOST;
  texture->device = -1;
  texture->note = NULL;
  if (resident->ops->to_texture)
    return resident->ops->to_texture (resident, slice, texture, error);
  airy_slice_size (resident->stack, slice, &w, &h);
  host = g_new (float, (gsize) w * h);
  if (!resident->ops->read_slice (resident, slice, host, error))
    return FALSE;
  texture->upload (host, w, h, texture->user_data);
  return TRUE;
}

AiryStack *
airy_resident_to_stack (AiryResident *resident,
                        GError      **error)
{
  const AiryStack *s;
  AiryStack *copy;

  g_return_val_if_fail (resident != NULL, NULL);
  s = resident->stack;
  if (s->data != NULL)
    return airy_stack_copy (s);
  copy = _airy_stack_new_uninitialised (s->depth, s->height, s->width);
  if (copy == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("not enough memory for a host copy of the stack"));
      return NULL;
    }
  if (!resident->ops->read_box (resident, &(AiryBox) { 0, 0, 0, s->depth, s->height, s->width }, copy->data, error))
    {
      airy_stack_free (copy);
      return NULL;
    }
  /* voxel size, exact z, provenance: what a saved file carries */
  airy_stack_copy_metadata (copy, s);
  copy->bits = s->bits;
  return copy;
}

/* ---- host slices and statistics ---- */

void
airy_stack_section_xz (const AiryStack *s,
                       guint            y,
                       float           *out)
{
  guint z;

  for (z = 0; z < s->depth; z++)
    memcpy (out + (gsize) z * s->width, airy_stack_plane (s, z) + (gsize) y * s->width,
            s->width * sizeof (float));
}

void
airy_stack_section_yz (const AiryStack *s,
                       guint            x,
                       float           *out)
{
  guint z, y;

  for (z = 0; z < s->depth; z++)
    {
      const float *p = airy_stack_plane (s, z);
      for (y = 0; y < s->height; y++)
        out[(gsize) z * s->height + y] = p[(gsize) y * s->width + x];
    }
}

void
airy_stack_mip (const AiryStack *s,
                float           *out)
{
  gsize n = airy_stack_plane_size (s), i;
  guint z;

  memcpy (out, s->data, n * sizeof (float));
  for (z = 1; z < s->depth; z++)
    {
      const float *p = airy_stack_plane (s, z);
      for (i = 0; i < n; i++)
        out[i] = MAX (out[i], p[i]);
    }
}

void
airy_histogram (const float *values,
                gsize        n,
                float        lo,
                float        hi,
                guint        bins,
                guint64     *counts)
{
  gsize i;

  memset (counts, 0, bins * sizeof (guint64));
  if (!(hi > lo))
    return;
  for (i = 0; i < n; i++)
    {
      float v = values[i];
      if (v >= lo && v <= hi)
        counts[MIN ((guint) ((v - lo) / (hi - lo) * bins), bins - 1)]++;
    }
}

void
airy_values_min_max (const float *values,
                     gsize        n,
                     float       *min,
                     float       *max)
{
  float a = INFINITY, b = -INFINITY;
  gsize i;

  for (i = 0; i < n; i++)
    if (isfinite (values[i]))
      {
        a = MIN (a, values[i]);
        b = MAX (b, values[i]);
      }
  *min = isfinite (a) ? a : 0.0f;
  *max = isfinite (b) ? b : 1.0f;
}

void
airy_values_stats (const float    *values,
                   gsize           n,
                   AirySliceStats *stats)
{
  airy_values_min_max (values, n, &stats->min, &stats->max);
  if (stats->n_bins > 0)
    airy_histogram (values, n, stats->min, airy_stats_hist_max (stats), stats->n_bins, stats->counts);
}
