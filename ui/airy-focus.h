#pragma once

#include <glib.h>

#include "airy-backend.h"

G_BEGIN_DECLS

/* What "best focus" means (Go to Best Focus in the viewer). */
typedef enum
{
  AIRY_FOCUS_PEAK,     /* the plane with the stack's brightest voxel */
  AIRY_FOCUS_FWHM,     /* the narrowest: smallest FWHM along x through the plane's peak,
                        * among planes whose peak is ≥ 10 % of the stack's */
  AIRY_FOCUS_ENERGY,   /* the most concentrated: the largest share of the plane's
                        * energy within one FWHM (of the brightest plane) of the
                        * stack's peak, laterally */
} AiryFocusCriterion;

/* The best plane of a resident's stack by a criterion, read plane by plane
 * through its slots; *score gets the criterion's value there (the peak,
 * the FWHM in µm, the encircled share). FALSE with an error for a stack
 * still being computed (a partial resident) or without a positive value. */
gboolean airy_focus_best_plane (AiryResident       *resident,
                                AiryFocusCriterion  criterion,
                                guint              *plane,
                                double             *score,
                                GError            **error);

G_END_DECLS
