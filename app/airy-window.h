#pragma once

#include <gtk/gtk.h>

#include "airy.h"
#include "airy-bench-panel.h"
#include "airy-stack-viewer.h"
#include "airy-worker.h"

G_BEGIN_DECLS

#define AIRY_TYPE_WINDOW (airy_window_get_type ())
G_DECLARE_FINAL_TYPE (AiryWindow, airy_window, AIRY, WINDOW, GtkApplicationWindow)

AiryWindow      *airy_window_new             (GtkApplication *app);
gboolean         airy_window_open_file       (AiryWindow     *self,
                                              const char     *path,
                                              GError        **error);
gboolean         airy_window_load_preset     (AiryWindow     *self,
                                              const char     *name,
                                              GError        **error);
gboolean         airy_window_save            (AiryWindow     *self,
                                              const char     *path,
                                              GError        **error);
void             airy_window_view_file       (AiryWindow     *self,
                                              const char     *path);
AirySystem      *airy_window_get_system      (AiryWindow     *self);
AiryBenchPanel  *airy_window_get_panel       (AiryWindow     *self);
AiryStackViewer *airy_window_get_viewer      (AiryWindow     *self);
AiryWorker      *airy_window_get_worker      (AiryWindow     *self);
gboolean         airy_window_get_dirty       (AiryWindow     *self);
/* Results shown so far, and the hash of the system of the shown one. */
guint            airy_window_get_shown       (AiryWindow     *self);
guint64          airy_window_get_shown_hash  (AiryWindow     *self);
const char      *airy_window_get_status      (AiryWindow     *self);
/* The airy-sim command that reproduces the current result. */
char            *airy_window_command_line    (AiryWindow     *self);

G_END_DECLS
