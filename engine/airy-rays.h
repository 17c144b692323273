#pragma once

#include <glib.h>

#include "airy-element.h"
#include "airy-system.h"

G_BEGIN_DECLS

/* Paraxial ray transfer (ABCD) matrices, row major {A, B, C, D}, acting on
 * (height, angle) in a medium of one index (chromatix's functional/rays.py). */

void     airy_abcd_free_space   (double  z,
                                 double *abcd);
void     airy_abcd_thin_lens    (double   f,
                                 gboolean inverse,
                                 double  *abcd);
void     airy_abcd_plano_convex (double   radius,
                                 double   thickness,
                                 double   n_lens,
                                 double   n_medium,
                                 gboolean inverse,
                                 double  *abcd);
void     airy_abcd_multiply     (const double *second,
                                 const double *first,
                                 double       *abcd);
double   airy_abcd_focal_length (const double *abcd);

gboolean airy_element_get_abcd  (AiryElement  *element,
                                 double       *abcd);
guint    airy_system_get_abcd   (AirySystem   *system,
                                 double       *abcd);

G_END_DECLS
