#pragma once

#include <gtk/gtk.h>

#include "airy-system.h"

G_BEGIN_DECLS

#define AIRY_TYPE_BENCH_PANEL (airy_bench_panel_get_type ())
G_DECLARE_FINAL_TYPE (AiryBenchPanel, airy_bench_panel, AIRY, BENCH_PANEL, GtkBox)

/* The optical bench: the system's grid, spectrum, z planes and run
 * settings, and its elements in order, each row expanding into editors
 * generated from the element's GParamSpecs. Every edit changes the system
 * in place and emits ::changed. */
GtkWidget  *airy_bench_panel_new          (void);
void        airy_bench_panel_set_system   (AiryBenchPanel *self,
                                           AirySystem     *system);
/* Another version of the same system (an undo): the open rows (by place
 * and type) and the scroll stay. */
void        airy_bench_panel_replace_system (AiryBenchPanel *self,
                                             AirySystem     *system);
AirySystem *airy_bench_panel_get_system   (AiryBenchPanel *self);
/* The editor of a field by its JSON path ("elements[0].na", "grid.spacing",
 * "microscope.na", "sample.file", "z.count" …), for tests and for marking
 * errors. */
GtkWidget  *airy_bench_panel_get_editor   (AiryBenchPanel *self,
                                           const char     *path);
/* Marks the field the error names (its path before ": "), opens its row
 * and shows the message in the messages (airy_bench_panel_get_messages);
 * NULL clears. */
void        airy_bench_panel_show_error   (AiryBenchPanel *self,
                                           const GError   *error);
const char *airy_bench_panel_get_error    (AiryBenchPanel *self);
/* The path of the field of the last ::changed or ::invalid ("elements[0].na",
 * "elements[1].zernike"), NULL after a change of the rows (an element added,
 * moved or removed, the mode): for grouping edits of one field. */
const char *airy_bench_panel_get_last_edit (AiryBenchPanel *self);
void        airy_bench_panel_set_warnings (AiryBenchPanel *self,
                                           GPtrArray      *warnings);
/* The warnings and the error, outside the panel's form so that a message
 * that comes or goes moves no field: the window shows it below the panel's
 * scrolled form. */
GtkWidget  *airy_bench_panel_get_messages (AiryBenchPanel *self);
/* Run settings chosen in the panel. */
const char *airy_bench_panel_get_backend  (AiryBenchPanel *self);
guint       airy_bench_panel_get_threads  (AiryBenchPanel *self);
/* The chosen devices of the backend; NULL (and *n = 0) for all of them. */
const guint *airy_bench_panel_get_devices (AiryBenchPanel *self,
                                           guint          *n);
void        airy_bench_panel_set_backend  (AiryBenchPanel *self,
                                           const char     *backend);

G_END_DECLS
