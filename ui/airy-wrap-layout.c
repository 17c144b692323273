#define G_LOG_DOMAIN "airy-wrap-layout"

#include "config.h"

#include "airy-wrap-layout.h"

/* A layout manager for rows of controls that wrap: height for width, every
 * child at its natural width (its minimum when wider than the row), rows as
 * tall as their tallest child. GtkFlowBox aligns its children in columns,
 * which toolbars of unequal items do not want. */

struct _AiryWrapLayout
{
  GtkLayoutManager parent_instance;
  int              spacing;
};

G_DEFINE_FINAL_TYPE (AiryWrapLayout, airy_wrap_layout, GTK_TYPE_LAYOUT_MANAGER)

static GtkSizeRequestMode
get_request_mode (GtkLayoutManager *manager, GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

/* Walks the rows at `width` and returns the height; with `allocate`, puts
 * each child there, centred in its row's height. */
static int
flow (AiryWrapLayout *self, GtkWidget *widget, int width, gboolean allocate)
{
  g_autoptr(GArray) rows = g_array_new (FALSE, TRUE, sizeof (int));
  GtkWidget *child;
  int pass, x, y, row_h, row;

  for (pass = 0; pass < (allocate ? 2 : 1); pass++)
    {
      x = y = row_h = row = 0;
      for (child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
        {
          int min_w, nat_w, min_h, nat_h, w;

          if (!gtk_widget_should_layout (child))
            continue;
          gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
          w = nat_w <= width ? nat_w : MAX (min_w, width);
          if (x > 0 && x + w > width)
            {
              if (pass == 0)
                g_array_append_val (rows, row_h);
              x = 0;
              y += row_h + self->spacing;
              row_h = 0;
              row++;
            }
          gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, w, &min_h, &nat_h, NULL, NULL);
          if (pass == 1)
            {
              int h = g_array_index (rows, int, row);
              gtk_widget_size_allocate (child, &(GtkAllocation) { x, y + (h - nat_h) / 2, w, nat_h }, -1);
              row_h = h;
            }
          else
            row_h = MAX (row_h, nat_h);
          x += w + self->spacing;
        }
      if (pass == 0)
        g_array_append_val (rows, row_h);
    }
  return y + row_h;
}

static void
measure (GtkLayoutManager *manager, GtkWidget *widget, GtkOrientation orientation, int for_size,
         int *minimum, int *natural, int *minimum_baseline, int *natural_baseline)
{
  AiryWrapLayout *self = AIRY_WRAP_LAYOUT (manager);
  GtkWidget *child;

  *minimum = *natural = 0;
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      int n = 0;

      /* the widest child at least, all in one row at best */
      for (child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
        {
          int min_w, nat_w;

          if (!gtk_widget_should_layout (child))
            continue;
          gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
          *minimum = MAX (*minimum, min_w);
          *natural += nat_w + (n++ ? self->spacing : 0);
        }
      return;
    }
  if (for_size < 0)
    {
      /* without a width (a paned asks so): one row, and the real height
       * once the width is known */
      int min_w = 0, nat_w = 0;

      measure (manager, widget, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
      *minimum = *natural = flow (self, widget, nat_w, FALSE);
      return;
    }
  *minimum = *natural = flow (self, widget, for_size, FALSE);
}

static void
allocate (GtkLayoutManager *manager, GtkWidget *widget, int width, int height, int baseline)
{
  flow (AIRY_WRAP_LAYOUT (manager), widget, width, TRUE);
}

static void
airy_wrap_layout_class_init (AiryWrapLayoutClass *klass)
{
  GtkLayoutManagerClass *layout_class = GTK_LAYOUT_MANAGER_CLASS (klass);

  layout_class->get_request_mode = get_request_mode;
  layout_class->measure = measure;
  layout_class->allocate = allocate;
}

static void
airy_wrap_layout_init (AiryWrapLayout *self)
{
}

GtkLayoutManager *
airy_wrap_layout_new (int spacing)
{
  AiryWrapLayout *self = g_object_new (AIRY_TYPE_WRAP_LAYOUT, NULL);

  self->spacing = spacing;
  return GTK_LAYOUT_MANAGER (self);
}
