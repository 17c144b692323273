/* airy-window-private.h: the window's state, shared by its units:
 * airy-window.c (the bench, the sandbox's files, saving, closing),
 * airy-window-actions.c (the menu and the "win." actions),
 * airy-window-history.c (undo and redo of the bench's edits),
 * airy-window-files.c (opening files by content, recent files),
 * airy-window-io.c (opening and saving on workers) and
 * airy-window-run.c (the worker and the viewer: what was run, progress). */
#pragma once

#include "airy-window.h"

G_BEGIN_DECLS

struct _AiryWindow
{
  GtkApplicationWindow parent_instance;

  AirySystem      *system;
  char            *path;
  gboolean         dirty;
  AiryBenchPanel  *panel;
  AiryStackViewer *viewer;
  AiryWorker      *worker;
  GtkWidget       *paned;
  GtkWidget       *title;
  GtkWidget       *subtitle;
  GtkWidget       *progress_box;   /* while a run is on: bar, times, Cancel */
  GtkWidget       *progress;
  GtkWidget       *progress_times;
  guint            progress_tick;
  GtkWidget       *menu_button;
  gboolean         view_only;      /* the viewer alone: no system, no bench */
  GtkWidget       *notice;         /* a revealer: a message that stays until dismissed */
  GtkWidget       *notice_label;
  GtkWidget       *notice_folder;  /* "Choose Folder…", for files the sandbox hides */
  gboolean         notice_access;  /* the notice is about such files */
  GMenu           *recent_menu;
  GSettings       *settings;
  guint            shown;
  guint64          shown_hash;
  gboolean         partial;        /* the viewer shows a run's first plane, its stack filling */
  guint64          displayed_hash; /* the system of what the viewer shows, full or partial */
  gulong           preview_paint;  /* after-paint handler that lets the run go on */
  AiryResident    *last_full;      /* the last full result: shown again when the run
                                    * of a partial one is cancelled or fails */
  char            *shown_settings; /* backend, threads, devices of the shown run */
  gboolean         previewing;     /* memory was tight: one plane of the shown result */
  guint64          memory_total;   /* what the process may hold, as of the last result */
  char            *run_status;     /* what was run; the slice path follows it */
  char            *status;         /* the header's text, after what the viewer shows */
  char            *remote_copy;    /* a temporary copy of a stack from a URI, while it is shown */
  gboolean         closing;
  /* undo: the system as JSON before each edit, newest last */
  GPtrArray       *undo;
  GPtrArray       *redo;
  char            *current_json;   /* the system as the last edit left it */
  char            *saved_json;     /* as saved or opened: not dirty */
  guint            file_tasks;     /* opens and saves under way on workers */
  char            *last_edit;      /* the field of the newest undo step ... */
  gint64           last_edit_time; /* ... and when: edits of one field in a row are one step */
};

/* the system's file chooser: open, save, or save and close */
typedef enum { CHOOSE_OPEN, CHOOSE_SAVE, CHOOSE_SAVE_CLOSE } AiryWindowChoose;

/* airy-window.c */
void _airy_window_update_title   (AiryWindow   *self);
/* every edit: checked, then computed by the worker */
void _airy_window_recompute      (AiryWindow   *self);
void _airy_window_choose         (AiryWindow   *self,
                                  AiryWindowChoose what);
void _airy_window_set_status     (AiryWindow   *self,
                                  const char   *text);
void _airy_window_show_notice    (AiryWindow   *self,
                                  const char   *text,
                                  gboolean      access);
void _airy_window_report         (AiryWindow   *self,
                                  const GError *error);
void _airy_window_offer_folder   (AiryWindow   *self,
                                  const GError *error);
void _airy_window_set_system     (AiryWindow   *self,
                                  AirySystem   *system,
                                  const char   *path);

/* airy-sim as a shell calls it: by name, or by its path beside the
 * program in program_dir when PATH does not find that one; *note (a shell
 * comment) when neither exists */
char *_airy_window_sim_command   (const char   *program_dir,
                                  char        **note);

/* airy-window-actions.c */
void _airy_window_class_add_actions (GtkWidgetClass *widget_class);
/* the bench with a system, or the viewer alone */
void _airy_window_set_view_only  (AiryWindow   *self,
                                  gboolean      view_only);

/* airy-window-history.c */
void _airy_window_update_undo_actions (AiryWindow *self);
/* a new system (opened, a preset, saved): no history, not dirty */
void _airy_window_reset_history  (AiryWindow   *self);
/* after every change of the panel: the state before it becomes a step */
void _airy_window_record_edit    (AiryWindow   *self);
/* a system from a tool (Apply to System of the fit): one undo step, modified */
void _airy_window_apply_system   (AiryWindow   *self,
                                  AirySystem   *system,
                                  const char   *path);
void _airy_window_action_undo    (GtkWidget    *widget,
                                  const char   *name,
                                  GVariant     *p);
void _airy_window_action_redo    (GtkWidget    *widget,
                                  const char   *name,
                                  GVariant     *p);

/* after an open on a worker: the viewer shows path's stack (the window is
 * the viewer's); after a save: the system is path's (as saved_json, NULL:
 * as it is now) */
void _airy_window_viewing_file   (AiryWindow   *self,
                                  const char   *path);
void _airy_window_saved          (AiryWindow   *self,
                                  const char   *path,
                                  const char   *saved_json);

/* airy-window-files.c */
typedef enum { KIND_UNKNOWN, KIND_IMAGE, KIND_SYSTEM } FileKind;
FileKind _airy_window_file_kind  (GFile        *file,
                                  const char   *name,
                                  GError      **error);
/* What a location holds, read on any thread: *system (parsed) or *stack
 * (of a hyperstack its first channel and time point). A URI without a
 * local path is read through GIO, a stack from it through a temporary
 * copy (*copy, for the viewer's other channels; the caller unlinks it). */
gboolean _airy_window_read_location (GFile       *file,
                                     FileKind     kind,
                                     const char  *name,
                                     AirySystem **system,
                                     AiryStack  **stack,
                                     char       **copy,
                                     guint       *level,
                                     GError     **error);
/* airy-window-io.c: what a location held, applied (path NULL for a URI:
 * the system is no file's, the stack is shown from copy under name; level:
 * the store's level read, a coarser one than 0 when the stack exceeds the
 * memory budget); takes stack and copy */
void _airy_window_opened          (AiryWindow  *self,
                                   const char  *path,
                                   const char  *name,
                                   AirySystem  *system,
                                   AiryStack   *stack,
                                   char        *copy,
                                   guint        level);
/* a new stack from a URI shown: the last one's copy goes */
void _airy_window_set_remote_copy (AiryWindow   *self,
                                   char         *copy);
void _airy_window_rebuild_recent (AiryWindow   *self);
void _airy_window_remember       (AiryWindow   *self,
                                  const char   *path);

/* airy-window-run.c: connects the worker and the viewer (once, at init) */
void _airy_window_wire_run       (AiryWindow   *self);
/* the header's progress: a bar with planes done / total, the time gone and
 * left, a Cancel button (win.cancel, Escape) */
GtkWidget *_airy_window_progress_new (AiryWindow *self);
/* Before a run: when memory is tight, the shown result gives way to a
 * one-plane preview and the engine's spare stack memory is released. */
void _airy_window_make_room      (AiryWindow   *self);
/* win.cancel: ends the run; the shown result stays */
void _airy_window_cancel_run     (AiryWindow   *self);
/* what the run settings of the panel are now, as shown_settings keeps them */
char *_airy_window_run_settings  (AiryWindow   *self);
/* the header after the shown result: what was run */
void _airy_window_show_run_status (AiryWindow  *self);
/* the hash of the system whose result the viewer shows (the full result
 * or its first plane), 0 for none */
guint64  _airy_window_displayed_hash (AiryWindow *self);
/* The plane of the system's stack to compute and show first: the one
 * nearest the z the viewer shows (the middle one on a first run), -1 for
 * none (one plane, an image, memory tight). */
int      _airy_window_preview_plane  (AiryWindow *self);
/* A run that showed its first plane ended without its stack: the last full
 * result comes back. */
void     _airy_window_drop_partial   (AiryWindow *self);

G_END_DECLS
