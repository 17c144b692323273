/* A test modality, the whole of it: "twin" holds several PSF chains, each
 * starting at a source in "elements" (a chain may start with a source
 * anywhere it says so), and sums their intensities. One file and one
 * _airy_modality_register call; confocal's excitation × detection would be
 * the same with AIRY_MODALITY_COMBINE_PRODUCT. */
#pragma once

#include "airy.h"
#include "airy-modality.h"

/* elements [first, end) of chain k: from its source to the next */
static inline gboolean
twin_range (AirySystem *system, guint k, guint *first, guint *end)
{
  GPtrArray *elements = airy_system_get_elements (system);
  guint i, seen = 0;

  *first = *end = elements->len;
  for (i = 0; i < elements->len; i++)
    if (AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (elements, i))->category == AIRY_CATEGORY_SOURCE)
      {
        if (seen == k)
          *first = i;
        else if (seen == k + 1)
          *end = i;
        seen++;
      }
  return *first < elements->len;
}

static inline guint
twin_n_chains (AirySystem *system)
{
  guint k = 0, first, end;

  while (twin_range (system, k, &first, &end))
    k++;
  return k;
}

/* the system of chain k alone: a psf system */
static inline void
twin_keep (AirySystem *system, guint k)
{
  GPtrArray *elements = airy_system_get_elements (system);
  guint first, end;

  twin_range (system, k, &first, &end);
  g_ptr_array_remove_range (elements, end, elements->len - end);
  g_ptr_array_remove_range (elements, 0, first);
}

static inline AirySystem *
twin_chain_system (AirySystem *system, guint k, GError **error)
{
  AirySystem *sub = airy_system_copy (system);

  (void) error;
  twin_keep (sub, k);
  airy_system_set_modality (sub, "psf");
  return sub;
}

/* the geometry: the first chain's (geom->system is the geometry's own copy) */
static inline gboolean
twin_chain (AiryGeometry *geom, GError **error)
{
  twin_keep (geom->system, 0);
  return _airy_modality_psf_chain (geom, error);
}

static const AiryModality test_modality_twin = {
  .name = "twin",
  .label = "Two PSF chains, summed",
  .description = "Two or more PSF chains, their intensities summed",
  .combine = AIRY_MODALITY_COMBINE_SUM,
  .n_chains = twin_n_chains,
  .chain_system = twin_chain_system,
  .chain = twin_chain,
};
