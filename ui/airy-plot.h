#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define AIRY_TYPE_PLOT (airy_plot_get_type ())
G_DECLARE_FINAL_TYPE (AiryPlot, airy_plot, AIRY, PLOT, GtkDrawingArea)

/* A profile plot: samples `step` µm apart starting at x0 µm, axes labelled in
 * µm, and the FWHM of the peak nearest `mark` (a sample index) when asked. */
GtkWidget *airy_plot_new      (const char  *title);
void       airy_plot_set_data (AiryPlot    *self,
                               const float *samples,
                               guint        n,
                               double       x0,
                               double       step,
                               guint        mark,
                               gboolean     fwhm);
double     airy_plot_get_fwhm (AiryPlot    *self);
/* A peak at or below the floor is noise: the title says "no peak", as it
 * does for a profile without one single peak (airy_profile_fwhm). */
void       airy_plot_set_peak_floor (AiryPlot *self,
                                     double    floor);
gboolean   airy_plot_has_peak (AiryPlot    *self);
guint      airy_plot_get_n_samples (AiryPlot *self);
/* A second curve on the same x axis (the reference of a comparison) with
 * its own FWHM, told in the title beside the first; NULL clears it. */
void       airy_plot_set_reference (AiryPlot    *self,
                                    const float *samples,
                                    guint        n,
                                    double       x0,
                                    double       step,
                                    guint        mark);
double     airy_plot_get_reference_fwhm (AiryPlot *self);
/* The samples as CSV ("x_µm,value[,reference]" and a line each). */
char      *airy_plot_to_csv (AiryPlot *self);
/* the x axis' unit: NULL for µm, "px" for an uncalibrated image */
void       airy_plot_set_unit (AiryPlot    *self,
                               const char  *unit);
/* The title as drawn: the name and the widths ("Line profile — FWHM
 * 0.3484 µm"), "no peak" for a profile without one. */
char      *airy_plot_dup_title (AiryPlot *self);
/* For tests: the room left beside the title in the last frame (negative
 * when cut), the smallest gap between tick labels; returns the frames
 * drawn so far. */
guint      airy_plot_get_label_fit (AiryPlot *self,
                                    double   *title_room,
                                    double   *min_gap);

G_END_DECLS
