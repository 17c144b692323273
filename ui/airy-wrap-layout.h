#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define AIRY_TYPE_WRAP_LAYOUT (airy_wrap_layout_get_type ())
G_DECLARE_FINAL_TYPE (AiryWrapLayout, airy_wrap_layout, AIRY, WRAP_LAYOUT, GtkLayoutManager)

/* Lays the children out left to right at their natural widths, starting a
 * new row where the next one does not fit (a toolbar that wraps instead of
 * being cut at a narrow window); `spacing` pixels between them and between
 * the rows. */
GtkLayoutManager *airy_wrap_layout_new (int spacing);

G_END_DECLS
