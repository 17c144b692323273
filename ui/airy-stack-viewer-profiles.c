#define G_LOG_DOMAIN "airy-stack-viewer"

#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n.h>

#include "airy-stack-viewer-private.h"

/* What the viewer measures: the readout under the cursor, the
 * rectangle's statistics and the line and axial profiles (with the
 * reference's beside them in a comparison). */

void
_airy_stack_viewer_update_readout (AiryStackViewer *self, guint x, guint y)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  guint z = airy_stack_view_get_z (self->view);
  g_autoptr(GError) error = NULL;
  float v;

  if (s == NULL || x >= s->width || y >= s->height)
    return;
  if (!airy_stack_view_read_value (self->view, x, y, &v, &error))
    {
      airy_stack_viewer_show_message (self, error->message);
      return;
    }
  g_free (self->readout_text);
  if (isnan (v))
    /* a plane of a run's stack not computed yet (a partial resident) */
    self->readout_text = g_strdup_printf (_("x %+.4f µm  y %+.4f µm  z %+.4f µm  not computed yet"),
                                          airy_pixel_to_um (x, s->width, s->dx),
                                          airy_pixel_to_um (y, s->height, s->dy), airy_stack_get_z (s, z));
  else if (self->uncalibrated)
    self->readout_text = g_strdup_printf (_("x %u px  y %u px  z %u  value %.6g"), x, y, z, v);
  else
    self->readout_text = g_strdup_printf (_("x %+.4f µm  y %+.4f µm  z %+.4f µm  value %.6g"),
                                          airy_pixel_to_um (x, s->width, s->dx),
                                          airy_pixel_to_um (y, s->height, s->dy),
                                          airy_stack_get_z (s, z), v);
  gtk_label_set_text (GTK_LABEL (self->readout), self->readout_text);
}

/* The rectangle's statistics, from the shown plane (fetched to host). */
static void
update_roi (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryBoxStats st;
  guint x, y, w, h;
  g_autofree char *text = NULL;

  if (s == NULL || !airy_stack_view_get_roi (self->view, &x, &y, &w, &h))
    {
      gtk_widget_set_visible (self->roi_label, FALSE);
      return;
    }
  airy_box_stats (airy_stack_view_get_xy_plane (self->view), s->height, s->width, x, y, w, h, &st);
  /* one figure a line, not a paragraph */
  text = g_strdup_printf (_("Rectangle %u × %u px\nsum %.6g\nmean %.6g\nmax %.6g\n"
                            "energy in it: %.1f %%\nin its circle (r %.3g µm): %.1f %%"),
                          w, h, st.sum, st.mean, st.max, 100 * st.ensquared, st.radius * s->dx, 100 * st.encircled);
  gtk_label_set_text (GTK_LABEL (self->roi_label), text);
  gtk_widget_set_visible (self->roi_label, TRUE);
}

const char *
airy_stack_viewer_get_roi_text (AiryStackViewer *self)
{
  return gtk_widget_get_visible (self->roi_label) ? gtk_label_get_text (GTK_LABEL (self->roi_label)) : NULL;
}

/* The shown plane (z, or the projection) of a resident in host memory. */
static float *
plane_of (AiryStackViewer *self, AiryResident *r, guint z, GError **error)
{
  const AiryStack *s = airy_resident_get_stack (r);
  AirySlice slice = airy_stack_view_get_mip (self->view) && s->depth > 1
                    ? (AirySlice) { AIRY_SLICE_MIP, 0 } : (AirySlice) { AIRY_SLICE_XY, MIN (z, s->depth - 1) };
  float *plane = g_new (float, airy_stack_plane_size (s));

  if (!airy_resident_read_slice (r, &slice, plane, error))
    g_clear_pointer (&plane, g_free);
  return plane;
}

/* The profiles of what is shown, or in a comparison of A (the line) and B
 * (the dashed line): along the drawn line, or the cursor's row as far as
 * XY shows it, and along z through the cursor. */
void
_airy_stack_viewer_update_plots (AiryStackViewer *self)
{
  AiryStack *s = airy_stack_view_get_stack (self->view);
  AiryResident *a_diff = self->compare == AIRY_COMPARE_DIFF ? _airy_stack_viewer_compared (self, TRUE) : NULL;
  AiryResident *b = _airy_stack_viewer_compared (self, FALSE);
  g_autoptr(GError) error = NULL;
  double x0, y0, x1, y1;
  gboolean valid;
  guint cx, cy, bx, by, bz, z = airy_stack_view_get_z (self->view);

  if (s == NULL)
    return;
  airy_stack_view_get_cursor (self->view, &cx, &cy);
  airy_stack_view_get_line (self->view, &x0, &y0, &x1, &y1, &valid);
  /* B's cursor: the same point of the specimen, beside; else the same */
  bx = cx;
  by = cy;
  bz = z;
  if (b && gtk_widget_get_visible (self->ref_box))
    {
      airy_stack_view_get_cursor (self->ref_view, &bx, &by);
      bz = airy_stack_view_get_z (self->ref_view);
    }
  if (valid)
    {
      /* a drawn line needs the whole plane in host memory */
      g_autofree float *own = a_diff ? plane_of (self, a_diff, z, &error) : NULL;
      const float *plane = a_diff ? own : airy_stack_view_get_xy_plane (self->view);
      /* one sample per pixel of length along the drawn line */
      double len = hypot ((x1 - x0) * s->dx, (y1 - y0) * s->dy);
      guint n = MAX (2, (guint) ceil (hypot (x1 - x0, y1 - y0)) * 4 + 1);
      g_autofree float *p = g_new (float, n);
      g_autofree float *bplane = b ? plane_of (self, b, bz, &error) : NULL;
      guint lw = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->line_width));

      if (plane == NULL)
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_line_profile_wide (plane, s->height, s->width, x0, y0, x1, y1, n, lw, p);
      airy_plot_set_data (self->line_plot, p, n, 0.0, len / (n - 1), n / 2, TRUE);
      if (bplane)
        {
          const AiryStack *bs = airy_resident_get_stack (b);

          airy_line_profile_wide (bplane, s->height, s->width, x0, y0, x1, y1, n, lw, p);
          /* B's samples at B's voxel size */
          len = hypot ((x1 - x0) * bs->dx, (y1 - y0) * bs->dy);
        }
      airy_plot_set_reference (self->line_plot, bplane ? p : NULL, n, 0.0, len / (n - 1), n / 2);
    }
  else
    {
      /* without a line: the row through the cursor, as far as XY shows it */
      g_autofree float *row = g_new (float, s->width);
      double vx, vy, vw, vh;
      guint a = 0, e = s->width, mark;

      if (a_diff)
        {
          g_autofree float *plane = plane_of (self, a_diff, z, &error);

          if (plane)
            memcpy (row, plane + (gsize) cy * s->width, s->width * sizeof (float));
          else
            {
              airy_stack_viewer_show_message (self, error->message);
              return;
            }
        }
      else if (!airy_stack_view_read_row (self->view, cy, row, &error))
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_stack_view_get_visible (self->view, &vx, &vy, &vw, &vh);
      if (vw > 0)
        {
          a = (guint) CLAMP (floor (vx), 0, s->width - 1);
          e = (guint) CLAMP (ceil (vx + vw), a + 1, s->width);
          if (e - a < 2 && e < s->width)
            e++;
          else if (e - a < 2 && a > 0)
            a--;
        }
      mark = cx >= a && cx < e ? cx - a : (e - a) / 2;
      /* in µm from the axis; uncalibrated, in pixels as the readout */
      airy_plot_set_data (self->line_plot, row + a, e - a, self->uncalibrated ? a : airy_pixel_to_um (a, s->width, s->dx),
                          s->dx, mark, TRUE);
      if (b)
        {
          /* B's whole row at B's pixel size: the plot shows what falls on
           * A's axis */
          const AiryStack *bs = airy_resident_get_stack (b);
          g_autofree float *plane = plane_of (self, b, bz, &error);

          if (plane)
            memcpy (row, plane + (gsize) by * s->width, s->width * sizeof (float));
          airy_plot_set_reference (self->line_plot, plane ? row : NULL, s->width,
                                   airy_pixel_to_um (0, s->width, bs->dx), bs->dx, bx);
        }
      else
        airy_plot_set_reference (self->line_plot, NULL, 0, 0, 0, 0);
    }
  if (s->depth > 1 && airy_resident_is_partial (airy_stack_view_get_resident (self->view), NULL))
    {
      /* one plane known so far: no axial profile yet */
      airy_plot_set_data (self->axial_plot, NULL, 0, s->z0, 1.0, 0, FALSE);
      airy_plot_set_reference (self->axial_plot, NULL, 0, 0, 0, 0);
    }
  else if (s->depth > 1)
    {
      /* the axial profile: one value per plane, wherever the planes are */
      g_autofree float *axial = g_new (float, s->depth);
      AiryBox box = { 0, cy, cx, s->depth, 1, 1 };
      double step = s->dz > 0 ? s->dz : 1.0;
      guint z = airy_stack_view_get_z (self->view);

      if (!airy_resident_read_box (a_diff ? a_diff : airy_stack_view_get_resident (self->view), &box, axial, &error))
        {
          airy_stack_viewer_show_message (self, error->message);
          return;
        }
      airy_plot_set_data (self->axial_plot, axial, s->depth, s->z0, step, z, TRUE);
      if (b && airy_resident_read_box (b, &(AiryBox) { 0, by, bx, s->depth, 1, 1 }, axial, NULL))
        {
          const AiryStack *bs = airy_resident_get_stack (b);

          airy_plot_set_reference (self->axial_plot, axial, s->depth, bs->z0, bs->dz > 0 ? bs->dz : 1.0, z);
        }
      else
        airy_plot_set_reference (self->axial_plot, NULL, 0, 0, 0, 0);
    }
  else
    {
      /* one plane: no axial profile (not the last stack's) */
      airy_plot_set_data (self->axial_plot, NULL, 0, s->z0, 1.0, 0, FALSE);
      airy_plot_set_reference (self->axial_plot, NULL, 0, 0, 0, 0);
    }
  _airy_stack_viewer_update_readout (self, cx, cy);
  update_roi (self);
}
