#pragma once

#include <gtk/gtk.h>

#include "airy-element.h"

G_BEGIN_DECLS

#define AIRY_TYPE_ZERNIKE_EDITOR (airy_zernike_editor_get_type ())
G_DECLARE_FINAL_TYPE (AiryZernikeEditor, airy_zernike_editor, AIRY, ZERNIKE_EDITOR, GtkWidget)

/* The Zernike terms of a phase mask as a table: a row per term (index, its
 * name, coefficient, remove), "Add term" (the next index), "Add Named
 * Term" (a menu of named terms: the term is added, or found, and its
 * coefficient field takes the focus) and a hint of the signs, over the element's zernike-indices
 * and zernike-coefficients, with the ranges they are declared with. It
 * follows the element's changes, emits ::changed after an edit and
 * ::invalid with the declaration's GError for an index typed out of range.
 * Its spin buttons are kept registered in editors (path → widget) under
 * "<prefix>.zernike-indices[i]" and "<prefix>.zernike-coefficients[i]",
 * itself under "<prefix>.zernike-indices" and "….zernike-coefficients". */
GtkWidget *airy_zernike_editor_new (AiryElement *mask,
                                    const char  *prefix,
                                    GHashTable  *editors);
AiryElement *airy_zernike_editor_get_mask (AiryZernikeEditor *self);
/* The name of the Zernike term of radial order n and azimuthal order m
 * ("spherical", "coma x"; translated), NULL for one without a name. */
const char  *airy_zernike_name            (int                n,
                                           int                m);

G_END_DECLS
