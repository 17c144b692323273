#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <string.h>

#include "airy-cpu-backend.h"
#include "airy-cpu-private.h"

/* The CPU backend's results for the viewer: the stack in host memory, read
 * through the resident's slots (airy-resident.h); a slice reaches GL with
 * glTexSubImage2D from here. */

typedef struct
{
  float *mip;     /* the projection, made on first use */
} HostResident;

static const float *
host_mip (AiryResident *r)
{
  HostResident *h = r->priv;

  if (h->mip == NULL)
    {
      h->mip = g_new (float, airy_stack_plane_size (r->stack));
      airy_stack_mip (r->stack, h->mip);
    }
  return h->mip;
}

static gboolean
host_read_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  const AiryStack *s = r->stack;

  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
      memcpy (out, airy_stack_plane (s, slice->index), airy_stack_plane_size (s) * sizeof (float));
      break;
    case AIRY_SLICE_XZ:
      airy_stack_section_xz (s, slice->index, out);
      break;
    case AIRY_SLICE_YZ:
      airy_stack_section_yz (s, slice->index, out);
      break;
    case AIRY_SLICE_MIP:
      memcpy (out, host_mip (r), airy_stack_plane_size (s) * sizeof (float));
      break;
    default:
      g_assert_not_reached ();
    }
  return TRUE;
}

static gboolean
host_read_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  const AiryStack *s = r->stack;
  guint z, y;

  for (z = 0; z < box->depth; z++)
    for (y = 0; y < box->height; y++)
      memcpy (out + ((gsize) z * box->height + y) * box->width,
              airy_stack_plane (s, box->z + z) + (gsize) (box->y + y) * s->width + box->x,
              box->width * sizeof (float));
  return TRUE;
}

static gboolean
host_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  const AiryStack *s = r->stack;
  g_autofree float *section = NULL;
  guint w, h;

  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
      airy_values_stats (airy_stack_plane (s, slice->index), airy_stack_plane_size (s), stats);
      return TRUE;
    case AIRY_SLICE_MIP:
      airy_values_stats (host_mip (r), airy_stack_plane_size (s), stats);
      return TRUE;
    case AIRY_SLICE_STACK:
      airy_values_stats (s->data, (gsize) s->depth * airy_stack_plane_size (s), stats);
      return TRUE;
    default:
      airy_slice_size (s, slice, &w, &h);
      section = g_new (float, (gsize) w * h);
      host_read_slice (r, slice, section, error);
      airy_values_stats (section, (gsize) w * h, stats);
      return TRUE;
    }
}

/* An XY plane goes to GL straight from the stack; sections are cut first. */
static gboolean
host_to_texture (AiryResident *r, const AirySlice *slice, AiryTexture *texture, GError **error)
{
  const AiryStack *s = r->stack;
  g_autofree float *section = NULL;
  guint w, h;

  airy_slice_size (s, slice, &w, &h);
  if (slice->kind == AIRY_SLICE_XY)
    texture->upload (airy_stack_plane (s, slice->index), w, h, texture->user_data);
  else if (slice->kind == AIRY_SLICE_MIP)
    texture->upload (host_mip (r), w, h, texture->user_data);
  else
    {
      section = g_new (float, (gsize) w * h);
      host_read_slice (r, slice, section, error);
      texture->upload (section, w, h, texture->user_data);
    }
  return TRUE;
}

static void
host_free (AiryResident *r)
{
  HostResident *h = r->priv;

  g_free (h->mip);
  g_free (h);
}

static const AiryResidentOps host_resident_ops = {
  .read_slice = host_read_slice,
  .read_box = host_read_box,
  .stats = host_stats,
  .to_texture = host_to_texture,
  .free = host_free,
};

AiryResident *
airy_resident_new_host (AiryStack *stack)
{
  g_return_val_if_fail (stack != NULL && stack->data != NULL, NULL);

  return airy_resident_new (airy_backend_lookup ("cpu"), &host_resident_ops, stack, g_new0 (HostResident, 1));
}
