#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define AIRY_TYPE_HISTOGRAM (airy_histogram_widget_get_type ())
G_DECLARE_FINAL_TYPE (AiryHistogramWidget, airy_histogram_widget, AIRY, HISTOGRAM_WIDGET, GtkDrawingArea)

/* Log-count histogram of the shown data with the contrast limits on it
 * (:limit-low, :limit-high); dragging near a limit moves it. */
GtkWidget *airy_histogram_widget_new        (void);
void       airy_histogram_widget_set_values (AiryHistogramWidget *self,
                                             const float         *values,
                                             gsize                n);
/* Counts computed elsewhere (where the values are: AirySliceStats) over
 * [min, max], AIRY_HISTOGRAM_BINS of them. */
#define AIRY_HISTOGRAM_BINS 256
void       airy_histogram_widget_set_counts (AiryHistogramWidget *self,
                                             float                min,
                                             float                max,
                                             const guint64       *counts,
                                             guint                n_bins);
void       airy_histogram_widget_set_limits (AiryHistogramWidget *self,
                                             float                lo,
                                             float                hi);

G_END_DECLS
