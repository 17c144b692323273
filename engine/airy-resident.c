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
  g_mutex_init (&r->stats_lock);
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
  g_clear_pointer (&resident->stats_cache, g_ptr_array_unref);
  g_mutex_clear (&resident->stats_lock);
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

/* One kept answer of the stats slot. */
typedef struct
{
  AirySlice slice;
  float     min, max;
  guint     n_bins;
  guint64   counts[];
} CachedStats;

/* A kept answer for the slice: one with the same bins, or any for a
 * question without bins (the extremes do not depend on them). */
static const CachedStats *
cached_stats (AiryResident *r, const AirySlice *slice, guint n_bins)
{
  guint i;

  for (i = 0; r->stats_cache && i < r->stats_cache->len; i++)
    {
      const CachedStats *c = g_ptr_array_index (r->stats_cache, i);

      if (c->slice.kind == slice->kind && c->slice.index == slice->index && (n_bins == 0 || c->n_bins == n_bins))
        return c;
    }
  return NULL;
}

gboolean
airy_resident_stats (AiryResident    *resident,
                     const AirySlice *slice,
                     AirySliceStats  *stats,
                     GError         **error)
{
  const CachedStats *c;
  CachedStats *kept;
  AirySlice key;

  g_return_val_if_fail (resident != NULL && slice != NULL && stats != NULL, FALSE);
  g_return_val_if_fail (stats->n_bins == 0 || stats->counts != NULL, FALSE);
  if (!check_slice (resident, slice, TRUE, error))
    return FALSE;
  /* the stack's statistics do not depend on an index */
  key = (AirySlice) { slice->kind, slice->kind == AIRY_SLICE_STACK || slice->kind == AIRY_SLICE_MIP ? 0 : slice->index };
  g_mutex_lock (&resident->stats_lock);
  c = cached_stats (resident, &key, stats->n_bins);
  if (c)
    {
      stats->min = c->min;
      stats->max = c->max;
      if (stats->n_bins)
        memcpy (stats->counts, c->counts, stats->n_bins * sizeof (guint64));
      g_mutex_unlock (&resident->stats_lock);
      return TRUE;
    }
  g_mutex_unlock (&resident->stats_lock);
  if (!resident->ops->stats (resident, slice, stats, error))
    return FALSE;
  kept = g_malloc (sizeof (CachedStats) + stats->n_bins * sizeof (guint64));
  kept->slice = key;
  kept->min = stats->min;
  kept->max = stats->max;
  kept->n_bins = stats->n_bins;
  if (stats->n_bins)
    memcpy (kept->counts, stats->counts, stats->n_bins * sizeof (guint64));
  g_mutex_lock (&resident->stats_lock);
  if (resident->stats_cache == NULL)
    resident->stats_cache = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (resident->stats_cache, kept);
  g_mutex_unlock (&resident->stats_lock);
  return TRUE;
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
  guint known;

  g_return_val_if_fail (resident != NULL, NULL);
  s = resident->stack;
  if (airy_resident_is_partial (resident, &known))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the stack is still being computed: only plane %u of %u is known"), known + 1, s->depth);
      return NULL;
    }
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

  /* the vector pass skips NaN; an infinity (rare) takes the careful one */
  _airy_floats_min_max (values, n, &a, &b);
  if (isinf (a) || isinf (b))
    for (i = 0, a = INFINITY, b = -INFINITY; i < n; i++)
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

/* ---- a partial resident: one plane known ---- */

typedef struct
{
  AiryStack *plane;   /* the known plane */
  guint      index;
} Partial;

static void
fill_nan (float *out, gsize n)
{
  gsize i;

  for (i = 0; i < n; i++)
    out[i] = NAN;
}

static gboolean
partial_read_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  Partial *p = r->priv;
  const AiryStack *s = r->stack;
  const float *known = p->plane->data;
  guint w, h, y;

  airy_slice_size (s, slice, &w, &h);
  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
      if (slice->index == p->index)
        memcpy (out, known, airy_stack_plane_size (s) * sizeof (float));
      else
        fill_nan (out, airy_stack_plane_size (s));
      break;
    case AIRY_SLICE_MIP:
      /* the maximum over the planes known */
      memcpy (out, known, airy_stack_plane_size (s) * sizeof (float));
      break;
    case AIRY_SLICE_XZ:
      fill_nan (out, (gsize) w * h);
      memcpy (out + (gsize) p->index * s->width, known + (gsize) slice->index * s->width, s->width * sizeof (float));
      break;
    case AIRY_SLICE_YZ:
      fill_nan (out, (gsize) w * h);
      for (y = 0; y < s->height; y++)
        out[(gsize) p->index * s->height + y] = known[(gsize) y * s->width + slice->index];
      break;
    default:
      g_assert_not_reached ();
    }
  return TRUE;
}

static gboolean
partial_read_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  Partial *p = r->priv;
  const AiryStack *s = r->stack;
  guint z, y;

  for (z = 0; z < box->depth; z++)
    for (y = 0; y < box->height; y++)
      {
        float *row = out + ((gsize) z * box->height + y) * box->width;

        if (box->z + z == p->index)
          memcpy (row, p->plane->data + (gsize) (box->y + y) * s->width + box->x, box->width * sizeof (float));
        else
          fill_nan (row, box->width);
      }
  return TRUE;
}

static gboolean
partial_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  Partial *p = r->priv;
  g_autofree float *values = NULL;
  guint w, h;

  if (slice->kind == AIRY_SLICE_STACK || slice->kind == AIRY_SLICE_MIP
      || (slice->kind == AIRY_SLICE_XY && slice->index == p->index))
    {
      airy_values_stats (p->plane->data, airy_stack_plane_size (p->plane), stats);
      return TRUE;
    }
  airy_slice_size (r->stack, slice, &w, &h);
  values = g_new (float, (gsize) w * h);
  partial_read_slice (r, slice, values, error);
  airy_values_stats (values, (gsize) w * h, stats);
  return TRUE;
}

static void
partial_free (AiryResident *r)
{
  Partial *p = r->priv;

  airy_stack_free (p->plane);
  g_free (p);
}

static const AiryResidentOps partial_ops = {
  .read_slice = partial_read_slice,
  .read_box = partial_read_box,
  .stats = partial_stats,
  .free = partial_free,
};

AiryResident *
airy_resident_new_partial (AiryStack *geometry,
                           AiryStack *plane,
                           guint      index)
{
  Partial *p;

  g_return_val_if_fail (geometry != NULL && plane != NULL && plane->data != NULL, NULL);
  g_return_val_if_fail (index < geometry->depth && plane->depth == 1, NULL);
  g_return_val_if_fail (plane->height == geometry->height && plane->width == geometry->width, NULL);

  p = g_new0 (Partial, 1);
  p->plane = plane;
  p->index = index;
  return airy_resident_new (airy_backend_lookup ("cpu"), &partial_ops, geometry, p);
}

gboolean
airy_resident_is_partial (AiryResident *resident,
                          guint        *index)
{
  g_return_val_if_fail (resident != NULL, FALSE);

  if (resident->ops != &partial_ops)
    return FALSE;
  if (index)
    *index = ((Partial *) resident->priv)->index;
  return TRUE;
}
