#define G_LOG_DOMAIN "airy-window"

#include "config.h"

#include "airy-window-private.h"

/* Undo and redo of the bench's edits: the system as JSON before each
 * edit (edits of one field in a row are one step), stepping back and
 * forth through it, and win.undo, win.redo. */

/* edits of one field closer together than this are one step (a drag, the
 * arrows held, a number typed with pauses) */
#define UNDO_GROUP_US (1500 * G_TIME_SPAN_MILLISECOND)
#define UNDO_DEPTH 200

void
_airy_window_update_undo_actions (AiryWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.undo", !self->view_only && self->undo->len > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.redo", !self->view_only && self->redo->len > 0);
}

/* a new system (opened, a preset, saved): no history, not dirty */
void
_airy_window_reset_history (AiryWindow *self)
{
  g_ptr_array_set_size (self->undo, 0);
  g_ptr_array_set_size (self->redo, 0);
  g_free (self->current_json);
  self->current_json = self->system ? airy_system_to_json (self->system) : NULL;
  g_free (self->saved_json);
  self->saved_json = g_strdup (self->current_json);
  g_clear_pointer (&self->last_edit, g_free);
  _airy_window_update_undo_actions (self);
}

/* after every change of the panel: the state before it becomes a step */
void
_airy_window_record_edit (AiryWindow *self)
{
  g_autofree char *json = airy_system_to_json (self->system);
  const char *field = airy_bench_panel_get_last_edit (self->panel);
  gint64 now = g_get_monotonic_time ();

  /* the run settings are no part of the system */
  if (g_strcmp0 (json, self->current_json) == 0)
    return;
  if (!(field && self->undo->len > 0 && g_strcmp0 (field, self->last_edit) == 0
        && now - self->last_edit_time < UNDO_GROUP_US))
    {
      g_ptr_array_add (self->undo, g_steal_pointer (&self->current_json));
      if (self->undo->len > UNDO_DEPTH)
        g_ptr_array_remove_index (self->undo, 0);
    }
  g_free (self->current_json);
  self->current_json = g_steal_pointer (&json);
  g_free (self->last_edit);
  self->last_edit = g_strdup (field);
  self->last_edit_time = now;
  g_ptr_array_set_size (self->redo, 0);
  _airy_window_update_undo_actions (self);
}


/* from one history to the other: the system as it was, in the same panel
 * (rows open and scroll as they were), computed again */
/* the window's system is now system (json: its text, taken), in the
 * panel, the title and the undo actions, and computed */
static void
become (AiryWindow *self, AirySystem *system, char *json)
{
  g_free (self->current_json);
  self->current_json = json;
  g_clear_pointer (&self->last_edit, g_free);
  g_set_object (&self->system, system);
  airy_bench_panel_replace_system (self->panel, system);
  self->dirty = g_strcmp0 (self->current_json, self->saved_json) != 0;
  _airy_window_update_title (self);
  _airy_window_update_undo_actions (self);
  _airy_window_recompute (self);
}

static void
step_history (AiryWindow *self,
              GPtrArray  *from,
              GPtrArray  *to)
{
  g_autofree char *json = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(GError) error = NULL;

  if (from->len == 0 || self->system == NULL)
    return;
  json = g_ptr_array_steal_index (from, from->len - 1);
  system = airy_system_new_from_data (json, -1, airy_system_get_base_dir (self->system), self->path, &error);
  if (system == NULL)
    {
      /* a state the program wrote itself: should not happen */
      g_warning ("undo: %s", error->message);
      return;
    }
  g_ptr_array_add (to, g_steal_pointer (&self->current_json));
  become (self, system, g_steal_pointer (&json));
}

void
_airy_window_action_undo (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);

  step_history (self, self->undo, self->redo);
}

void
_airy_window_action_redo (GtkWidget *widget, const char *name, GVariant *p)
{
  AiryWindow *self = AIRY_WINDOW (widget);

  step_history (self, self->redo, self->undo);
}

/* a system from a tool (the fit's Apply to System): an edit as the
 * panel's, one undo step, the file name kept, modified */
void
_airy_window_apply_system (AiryWindow *self,
                           AirySystem *system,
                           const char *path)
{
  g_autofree char *json = NULL;

  g_return_if_fail (AIRY_IS_SYSTEM (system));
  if (self->view_only || self->system == NULL)
    {
      /* no bench to edit: the tool's system becomes the window's */
      _airy_window_set_system (self, system, NULL);
      return;
    }
  json = airy_system_to_json (system);
  if (g_strcmp0 (json, self->current_json) == 0)
    return;
  g_ptr_array_add (self->undo, g_steal_pointer (&self->current_json));
  if (self->undo->len > UNDO_DEPTH)
    g_ptr_array_remove_index (self->undo, 0);
  g_ptr_array_set_size (self->redo, 0);
  become (self, system, g_steal_pointer (&json));
}
