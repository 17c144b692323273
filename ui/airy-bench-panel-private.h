#pragma once

#include "airy-bench-panel.h"

G_BEGIN_DECLS

/* One type over two files: the panel with its element rows and the error
 * marking (airy-bench-panel.c), and the system's rows: grid, spectrum, z,
 * run settings, microscope and sample (airy-bench-panel-system.c). The fixed
 * frames are the template resources/ui/airy-bench-panel.ui. */

struct _AiryBenchPanel
{
  GtkBox      parent_instance;

  AirySystem *system;

  /* template */
  GtkWidget  *mode;
  GtkWidget  *system_grid;
  GtkWidget  *derived_label;
  /* the messages: not in the form, so that a warning or an error that
   * comes or goes never moves a field (the window puts them below it) */
  GtkWidget  *messages;
  GtkWidget  *warnings_label;
  GtkWidget  *error_label;
  GtkWidget  *microscope_frame;
  GtkWidget  *microscope_grid;
  GtkWidget  *sample_grid;
  GtkWidget  *elements_frame;
  GtkWidget  *elements_title;
  GtkWidget  *elements_box;
  GtkWidget  *add_button;
  GtkWidget  *sensor_frame;
  GtkWidget  *sensor_grid;

  GHashTable *editors;       /* path → widget (borrowed) */
  GPtrArray  *marked;        /* widgets with the error class */
  GError     *error;
  char       *last_edit;     /* the path of the field edited last */
  char       *backend;
  guint       threads;
  GArray     *devices;       /* chosen device indices; empty: all */
  GPtrArray  *device_checks;
  gboolean    building;
  /* kept over a rebuild: the open element rows, the panel's scroll */
  gboolean    fresh;                /* a new system: rows closed, scrolled to the top */
  gboolean    keep_rows_by_place;   /* a replaced system: rows by index and type */
  double      scroll_wanted;
  GtkAdjustment *scroll_adj;        /* held while the scroll is kept */
  guint       scroll_timeout;
};

/* airy-bench-panel.c */
void       _airy_bench_panel_changed       (AiryBenchPanel *self);
/* A value refused before it reached the system: marked, and ::invalid. */
void       _airy_bench_panel_refuse        (AiryBenchPanel *self,
                                            const GError   *error);
void       _airy_bench_panel_rebuild_later (AiryBenchPanel *self);
void       _airy_bench_panel_register      (AiryBenchPanel *self,
                                            const char     *path,
                                            GtkWidget      *widget);
/* A row of grid for a parameter of object: its label (text, or the
 * declaration's nick and unit) and its editor, registered under path and
 * wired to the panel (::changed, ::invalid). Returns the editor. */
GtkWidget *_airy_bench_panel_add_param     (AiryBenchPanel *self,
                                            GtkGrid        *grid,
                                            GObject        *object,
                                            const char     *property,
                                            const char     *path,
                                            const char     *text);
/* Shows the editors of grid whose parameters apply to their object (an
 * element or the system) and hides the others. */
void       _airy_bench_panel_show_relevant (GtkWidget      *grid);
void       _airy_bench_panel_clear         (GtkWidget      *container);
void       _airy_bench_panel_add_editors   (AiryBenchPanel *self,
                                            GtkGrid        *grid,
                                            AiryElement    *element,
                                            const char     *prefix);

/* airy-bench-panel-system.c */
void       _airy_bench_panel_build_system  (AiryBenchPanel *self);
void       _airy_bench_panel_build_microscope (AiryBenchPanel *self);
void       _airy_bench_panel_update_derived (AiryBenchPanel *self);
/* the mode list from the registered modalities; the system's place in it */
void       _airy_bench_panel_modality_list (AiryBenchPanel *self);
guint      _airy_bench_panel_modality_index (AirySystem    *system);
void       _airy_bench_panel_on_mode       (GtkDropDown    *drop,
                                            GParamSpec     *pspec,
                                            AiryBenchPanel *self);

G_END_DECLS
