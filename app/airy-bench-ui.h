#pragma once

#include "airy-window.h"

G_BEGIN_DECLS

/* `airy --bench-ui N`: latency as a person feels it. The window opens on
 * the widefield preset (grid `size`² when size > 0, over the same field),
 * the time from the process's start to the first frame that shows a result
 * is taken, then N edits of the objective's NA are typed into its field and
 * committed, one after the other's full stack is in, and each is timed from
 * the property change the panel commits to the first frame (the
 * GtkGLArea's render, then GTK's paint) that shows pixels of its result,
 * and to the frame of its full stack. Prints medians, minima and maxima and
 * the engine's own time, then quits with status 0 (1 when a frame did not
 * come within 60 s). */
void airy_bench_ui_start (AiryWindow *window,
                          guint       edits,
                          guint       size);
/* The status the bench ends with (0 before it ended). */
int  airy_bench_ui_status (void);

G_END_DECLS
