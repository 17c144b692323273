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
/* The viewer alone (the bench hidden) on a TIFF or PNG. */
gboolean         airy_window_view_file       (AiryWindow     *self,
                                              const char     *path,
                                              GError        **error);
/* Opens what the file holds, decided by its content: a TIFF or PNG stack in
 * the viewer alone, a system (JSON) in the bench. A file that cannot be read
 * is reported in the window's notice and the window stays as it was. */
gboolean         airy_window_open_location   (AiryWindow     *self,
                                              GFile          *file,
                                              GError        **error);
/* The application's "open" handler: one window per file, through
 * airy_window_open_location; a window whose file fails opens on the default
 * preset with the message in its notice (and on stderr). */
void             airy_window_open_files      (GApplication   *application,
                                              GFile         **files,
                                              int             n_files,
                                              const char     *hint,
                                              gpointer        data);
/* The same on workers (app/airy-window-io.c): the file is read, parsed or
 * decoded, or the system written, off the UI thread, and shown or marked
 * saved when done; a failure is reported in the window (and on stderr when
 * fallback_preset is given: a new window then opens that preset; NULL for
 * none). close: the window
 * closes once the file is written. */
void             airy_window_open_location_async (AiryWindow *self,
                                                  GFile      *file,
                                                  const char *fallback_preset);
void             airy_window_open_path_async (AiryWindow     *self,
                                              const char     *path,
                                              const char     *fallback_preset);
void             airy_window_save_async      (AiryWindow     *self,
                                              const char     *path,
                                              gboolean        close);
/* opens and saves (the window's and the viewer's) still on workers */
guint            airy_window_get_pending_files (AiryWindow   *self);
/* Reloads the system with its relative file names resolved in `folder` (the
 * folder the user chose, e.g. through the file chooser portal), and files
 * found nowhere else looked up there by name. Fails, changing nothing, when
 * the folder holds none of the missing files. */
gboolean         airy_window_grant_folder    (AiryWindow     *self,
                                              const char     *folder,
                                              GError        **error);
/* The notice's text, or NULL when none is shown; *offers_folder tells whether
 * it offers to choose a folder (files the Flatpak sandbox does not see). */
const char      *airy_window_get_notice      (AiryWindow     *self,
                                              gboolean       *offers_folder);
AirySystem      *airy_window_get_system      (AiryWindow     *self);
AiryBenchPanel  *airy_window_get_panel       (AiryWindow     *self);
AiryStackViewer *airy_window_get_viewer      (AiryWindow     *self);
AiryWorker      *airy_window_get_worker      (AiryWindow     *self);
gboolean         airy_window_get_dirty       (AiryWindow     *self);
/* Results shown so far, and the hash of the system of the shown one. */
guint            airy_window_get_shown       (AiryWindow     *self);
guint64          airy_window_get_shown_hash  (AiryWindow     *self);
/* The viewer shows the first plane of a run whose other planes are still
 * being computed (a partial resident); the full stack replaces it. */
gboolean         airy_window_shows_partial   (AiryWindow     *self);
const char      *airy_window_get_status      (AiryWindow     *self);
/* The airy-sim command that reproduces the current result. */
char            *airy_window_command_line    (AiryWindow     *self);

G_END_DECLS
