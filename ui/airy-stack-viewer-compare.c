#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"
#include "airy-error.h"

/* Comparing the result with a pinned reference: side by side in a
 * second, linked view, or their difference in a signed colormap; A/B
 * swaps them (the key B), and the viewer.pin… actions. */

/* The other side of a comparison (B; A in a difference, where the view
 * shows A − B), or NULL. */
AiryResident *
_airy_stack_viewer_compared (AiryStackViewer *self, gboolean a_side)
{
  AiryResident *a = self->show_b && self->reference ? self->reference : self->current;
  AiryResident *b = a == self->current ? self->reference : self->current;
  const AiryStack *s = airy_stack_view_get_stack (self->view), *o;
  AiryResident *r = a_side ? a : b;

  if (self->reference == NULL || self->compare == AIRY_COMPARE_OFF || r == NULL || s == NULL)
    return NULL;
  o = airy_resident_get_stack (r);
  return o->depth == s->depth && o->height == s->height && o->width == s->width ? r : NULL;
}

/* every plane's z of a stack (µm) */
static double *
stack_planes (const AiryStack *s)
{
  double *z = g_new (double, MAX (s->depth, 1));
  guint k;

  for (k = 0; k < s->depth; k++)
    z[k] = airy_stack_get_z (s, k);
  return z;
}

static gboolean
same_grid (const AiryStack *a, const AiryStack *b)
{
  guint k;

  if (a->depth != b->depth || a->height != b->height || a->width != b->width
      || fabs (a->dx - b->dx) > 1e-6 * a->dx || fabs (a->dy - b->dy) > 1e-6 * a->dy)
    return FALSE;
  for (k = 0; k < a->depth; k++)
    if (fabs (airy_stack_get_z (a, k) - airy_stack_get_z (b, k)) > 1e-6 * MAX (fabs (a->dz), 1e-3))
      return FALSE;
  return TRUE;
}

AiryStack *
_airy_stack_viewer_on_grid (const AiryStack *src, const AiryStack *grid, gboolean *same)
{
  g_autofree double *zg = NULL, *zs = NULL;

  *same = same_grid (grid, src);
  if (*same)
    return NULL;
  zg = stack_planes (grid);
  zs = stack_planes (src);
  return _airy_stack_resample (src, grid->height, grid->width, grid->dy, grid->dx, grid->depth, zg, zs);
}

/* current − reference on the host, on the current's grid: a reference on
 * another grid (pixel, size or planes) is resampled onto it first (values
 * are intensities per area: linear where finer, the mean where coarser,
 * zero outside it); *note says so */
static AiryStack *
difference (AiryResident *a, AiryResident *b, char **note, GError **error)
{
  const AiryStack *sa = airy_resident_get_stack (a), *sb = airy_resident_get_stack (b);
  g_autoptr(AiryStack) ha = NULL, hb = NULL, rb = NULL;
  const AiryStack *va, *vb;
  AiryStack *d;
  gboolean same;
  gsize i, n;

  /* values on a GPU come to host memory for this */
  if (sa->data == NULL && (ha = airy_resident_to_stack (a, error)) == NULL)
    return NULL;
  if (sb->data == NULL && (hb = airy_resident_to_stack (b, error)) == NULL)
    return NULL;
  va = ha ? ha : sa;
  vb = hb ? hb : sb;
  rb = _airy_stack_viewer_on_grid (vb, va, &same);
  if (!same)
    {
      if (rb == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                       _("no difference: no memory to resample the reference onto the result's grid"));
          return NULL;
        }
      *note = g_strdup_printf (_("difference on the result's grid: the reference (%u × %u × %u, voxel %.4g × %.4g µm) "
                                 "resampled onto %u × %u × %u, voxel %.4g × %.4g µm"),
                               vb->width, vb->height, vb->depth, vb->dx, vb->dy,
                               va->width, va->height, va->depth, va->dx, va->dy);
      vb = rb;
    }
  d = airy_stack_new (va->depth, va->height, va->width);
  airy_stack_copy_metadata (d, sa);
  n = (gsize) va->depth * va->height * va->width;
  for (i = 0; i < n; i++)
    d->data[i] = va->data[i] - vb->data[i];
  return d;
}

/* What the main view shows, in words, above it and in the window's
 * header: never the reference as if it were the result. */
static void
set_shown (AiryStackViewer *self, const char *text)
{
  if (g_strcmp0 (self->shown_label, text) == 0)
    return;
  g_free (self->shown_label);
  self->shown_label = g_strdup (text);
  gtk_widget_set_visible (self->a_label, text != NULL);
  g_signal_emit_by_name (self, "shown-changed");
}

gboolean
airy_stack_viewer_get_pinned (AiryStackViewer *self)
{
  return self->reference != NULL;
}

const char *
airy_stack_viewer_get_path (AiryStackViewer *self)
{
  return self->path;
}

const char *
airy_stack_viewer_get_shown_label (AiryStackViewer *self)
{
  g_return_val_if_fail (AIRY_IS_STACK_VIEWER (self), NULL);

  return self->shown_label;
}

/* the label of what is shown: a file's name, the result, the reference,
 * side by side, their difference (which way round) */
void
_airy_stack_viewer_update_shown (AiryStackViewer *self)
{
  AiryResident *a = self->show_b && self->reference ? self->reference : self->current;
  AiryCompare mode = self->reference ? self->compare : AIRY_COMPARE_OFF;
  g_autofree char *name = self->path ? g_path_get_basename (self->path) : NULL;
  gboolean diff = mode == AIRY_COMPARE_DIFF && self->shows_difference;
  /* by the A/B choice, not by the stacks: just pinned, the reference is
   * the result itself, and the view shows the result */
  gboolean a_is_ref = self->show_b && self->reference != NULL;

  if (a == NULL)
    set_shown (self, NULL);
  else if (diff)
    set_shown (self, a_is_ref ? _("Difference: reference − result") : _("Difference: result − reference"));
  else if (mode == AIRY_COMPARE_SIDE && gtk_widget_get_visible (self->ref_box))
    set_shown (self, a_is_ref ? _("A: reference") : _("A: result"));
  else if (a_is_ref)
    set_shown (self, _("Reference (pinned): not the current result"));
  else if (name)
    set_shown (self, name);
  else
    set_shown (self, _("Result"));
  if (diff)
    {
      /* the signed colormap's legend */
      g_autofree char *text = g_strdup_printf ("%s  ·  %s", self->shown_label,
                                               a_is_ref ? _("red: the reference above the result, blue: below it")
                                                                    : _("red: the result above the reference, blue: below it"));
      gtk_label_set_text (GTK_LABEL (self->a_label), text);
    }
  else
    gtk_label_set_text (GTK_LABEL (self->a_label), self->shown_label ? self->shown_label : "");
}

/* A new stack in the view drops its composite: back on the result's
 * channels where the check is on; a difference or the pinned reference has
 * no channels to put over each other, and the check says so. */
static void
keep_composite (AiryStackViewer *self)
{
  /* by the A/B choice: just pinned, the reference is the result's stack */
  gboolean possible = !(self->show_b && self->reference) && !self->shows_difference;

  gtk_widget_set_sensitive (self->composite, possible);
  if (possible && !self->updating && gtk_check_button_get_active (GTK_CHECK_BUTTON (self->composite)))
    _airy_stack_viewer_on_composite (GTK_CHECK_BUTTON (self->composite), self);
}

/* What the comparison shows now: A (the result, or the reference after
 * A/B) in the main view; B beside it, or A − B in a signed colormap. */
void
_airy_stack_viewer_show_compare (AiryStackViewer *self)
{
  AiryResident *a = self->show_b && self->reference ? self->reference : self->current;
  AiryResident *b = a == self->current ? self->reference : self->current;
  AiryCompare mode = self->reference ? self->compare : AIRY_COMPARE_OFF;
  AiryDisplay d = *airy_stack_view_get_display (self->view);
  gboolean was_diff = d.colormap == AIRY_COLORMAP_DIVERGING && self->colormap_before_diff != AIRY_COLORMAP_DIVERGING;

  gtk_widget_set_visible (self->ref_box, mode == AIRY_COMPARE_SIDE && b != NULL);
  self->shows_difference = FALSE;
  if (mode == AIRY_COMPARE_DIFF && a && b)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *note = NULL;
      /* A − B: B (the key) swaps the image too, not only the profiles */
      AiryStack *diff = difference (a, b, &note, &error);

      if (diff != NULL)
        {
          float lo, hi, m;

          self->shows_difference = TRUE;
          _airy_stack_viewer_show_resident (self, airy_resident_new_host (diff));
          /* symmetric limits: zero in the colormap's middle */
          airy_stack_min_max (diff, &lo, &hi);
          m = MAX (fabsf (lo), fabsf (hi));
          d = *airy_stack_view_get_display (self->view);
          if (!was_diff)
            self->colormap_before_diff = d.colormap;
          d.colormap = AIRY_COLORMAP_DIVERGING;
          d.scale = AIRY_SCALE_LINEAR;
          d.lo = m > 0 ? -m : -1.0f;
          d.hi = m > 0 ? m : 1.0f;
          airy_stack_view_set_display (self->view, &d);
          if (note)
            airy_stack_viewer_show_message (self, note);
          keep_composite (self);
          _airy_stack_viewer_update_shown (self);
          return;
        }
      airy_stack_viewer_show_message (self, error->message);
    }
  if (was_diff)
    {
      d.colormap = self->colormap_before_diff;
      airy_stack_view_set_display (self->view, &d);
      self->colormap_before_diff = AIRY_COLORMAP_DIVERGING;
    }
  _airy_stack_viewer_show_resident (self, a ? airy_resident_ref (a) : NULL);
  if (mode == AIRY_COMPARE_SIDE && b != NULL)
    {
      airy_stack_view_set_resident (self->ref_view, airy_resident_ref (b));
      airy_stack_view_link_cursor (self->ref_view, self->view);
      airy_stack_view_copy_view (self->ref_view, self->view);
      gtk_label_set_text (GTK_LABEL (self->ref_label), self->show_b ? _("B: result") : _("B: reference"));
    }
  else
    airy_stack_view_set_resident (self->ref_view, NULL);
  keep_composite (self);
  _airy_stack_viewer_update_plots (self);
  _airy_stack_viewer_update_shown (self);
}

void
airy_stack_viewer_pin_reference (AiryStackViewer *self)
{
  AiryResident *r = self->current;

  g_clear_pointer (&self->reference, airy_resident_unref);
  self->reference = r ? airy_resident_ref (r) : NULL;
  self->show_b = FALSE;
  gtk_widget_set_sensitive (self->compare_dd, self->reference != NULL);
  if (self->reference && self->compare == AIRY_COMPARE_OFF)
    gtk_drop_down_set_selected (GTK_DROP_DOWN (self->compare_dd), AIRY_COMPARE_SIDE);
  else
    _airy_stack_viewer_show_compare (self);
}

void
airy_stack_viewer_set_compare (AiryStackViewer *self,
                               AiryCompare      mode)
{
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->compare_dd), mode);
}

AiryCompare
airy_stack_viewer_get_compare (AiryStackViewer *self)
{
  return self->reference ? self->compare : AIRY_COMPARE_OFF;
}

void
airy_stack_viewer_toggle_ab (AiryStackViewer *self)
{
  if (self->reference == NULL)
    return;
  self->show_b = !self->show_b;
  _airy_stack_viewer_show_compare (self);
}

gboolean
airy_stack_viewer_get_showing_b (AiryStackViewer *self)
{
  return self->show_b;
}

AiryStackView *
airy_stack_viewer_get_reference_view (AiryStackViewer *self)
{
  return self->ref_view;
}

void
_airy_stack_viewer_on_compare_selected (GtkDropDown *dd, GParamSpec *pspec, AiryStackViewer *self)
{
  self->compare = (AiryCompare) gtk_drop_down_get_selected (dd);
  /* no comparison: the result, not the reference A/B left in the view */
  if (self->compare == AIRY_COMPARE_OFF)
    self->show_b = FALSE;
  _airy_stack_viewer_show_compare (self);
}

/* viewer.pin, viewer.unpin, viewer.toggle-ab, viewer.compare-side,
 * viewer.compare-diff, viewer.compare-off */
void
_airy_stack_viewer_action_compare (GSimpleAction *action, GVariant *param, gpointer data)
{
  AiryStackViewer *self = data;
  const char *name = g_action_get_name (G_ACTION (action));

  if (g_str_equal (name, "pin"))
    airy_stack_viewer_pin_reference (self);
  else if (g_str_equal (name, "unpin"))
    {
      g_clear_pointer (&self->reference, airy_resident_unref);
      self->show_b = FALSE;
      gtk_widget_set_sensitive (self->compare_dd, FALSE);
      _airy_stack_viewer_show_compare (self);
    }
  else if (g_str_equal (name, "toggle-ab"))
    airy_stack_viewer_toggle_ab (self);
  else
    airy_stack_viewer_set_compare (self, g_str_equal (name, "compare-side") ? AIRY_COMPARE_SIDE
                                         : g_str_equal (name, "compare-diff") ? AIRY_COMPARE_DIFF
                                         : AIRY_COMPARE_OFF);
}

/* the key B swaps A and B while a reference is pinned */
gboolean
_airy_stack_viewer_on_viewer_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
                                  AiryStackViewer *self)
{
  if ((keyval == GDK_KEY_b || keyval == GDK_KEY_B) && self->reference != NULL
      && !(state & (GDK_CONTROL_MASK | GDK_ALT_MASK)))
    {
      airy_stack_viewer_toggle_ab (self);
      return TRUE;
    }
  return FALSE;
}

void
_airy_stack_viewer_on_main_moved (AiryStackView *view, AiryStackViewer *self)
{
  if (gtk_widget_get_visible (self->ref_box))
    airy_stack_view_copy_view (self->ref_view, view);
}
