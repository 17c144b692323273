#define G_LOG_DOMAIN "airy-bench-ui"

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "airy-bench-ui.h"
#include "airy-window-private.h"

/* The GUI latency benchmark (airy --bench-ui): edit → first new pixels on
 * screen, measured where a person sees them. Stamps: the objective's
 * ::notify::na (the panel committed the edit to the system), and the
 * frame clock's ::after-paint of the first frame whose view drew the
 * resident the window shows for that system's hash. */

#define TIMEOUT_S 60
#define QUIET_MS  150   /* between an edit's full stack and the next edit */

typedef enum { PHASE_COLD, PHASE_QUIET, PHASE_EDIT, PHASE_DONE } Phase;

typedef struct
{
  AiryWindow  *window;
  AiryElement *objective;
  guint        edits, done, size;
  Phase        phase;
  gint64       t_edit;         /* monotonic µs of the committed edit */
  guint64      want_hash;
  gboolean     first_seen;     /* this edit's first frame is in */
  double       cold_first_ms;  /* process start → first frame */
  double       cold_full_ms;   /* process start → the full first stack on screen */
  GArray      *first;          /* ms per edit: edit → first frame */
  GArray      *full;           /* edit → the frame of the full stack */
  GArray      *engine;         /* the engine's seconds of each full run, in ms */
  /* where an edit's first frame went: the stamps of this edit (µs) and
   * of the frame now being drawn, and the stages' ms per edit */
  gint64       t_preview;      /* the first plane reached the UI thread */
  gint64       t_frame, t_paint;  /* the frame's before-paint, its layout's end */
  guint        frames;         /* frames drawn between the edit and its first */
  GArray      *stage[4];       /* to the plane, waiting, layout, paint */
  gulong       paint_handler;
  GdkFrameClock *clock;
  guint        timeout;
  guint        quiet;
} Bench;

enum { STAGE_PLANE, STAGE_WAIT, STAGE_LAYOUT, STAGE_PAINT, N_STAGES };

/* edit → first frame = the first plane reaches the UI thread, it waits for
 * the frame clock, the frame's update and layout, its paint (snapshot,
 * render, the copy to the X server) */
static const char *const stage_names[N_STAGES] = {
  "  edit → first plane", "  plane → frame starts", "  frame's layout", "  frame's paint",
};

static Bench *bench;
static int bench_status;

int
airy_bench_ui_status (void)
{
  return bench_status;
}

/* µs since this process started (/proc/self/stat's start time, in clock
 * ticks since boot, against CLOCK_BOOTTIME); -1 where that is unknown */
static gint64
process_age_us (void)
{
  g_autofree char *stat = NULL;
  struct timespec now;
  const char *p;
  guint64 start;
  int field;

  if (!g_file_get_contents ("/proc/self/stat", &stat, NULL, NULL) || clock_gettime (CLOCK_BOOTTIME, &now) != 0)
    return -1;
  /* the command name may hold spaces: count the fields after its ')' */
  p = strrchr (stat, ')');
  for (field = 2; p && field < 22; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL)
    return -1;
  start = g_ascii_strtoull (p + 1, NULL, 10);
  return (gint64) now.tv_sec * 1000000 + now.tv_nsec / 1000 - (gint64) (start * 1000000 / sysconf (_SC_CLK_TCK));
}

static int
compare_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static void
print_row (const char *what, GArray *values)
{
  double *v = (double *) values->data;
  guint n = values->len;

  if (n == 0)
    return;
  qsort (v, n, sizeof (double), compare_double);
  printf ("%-22s median %7.1f ms   min %7.1f   max %7.1f   (%u)\n", what,
          n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1], n);
}

static void
finish (int status)
{
  g_autofree char *load = NULL;
  guint h, w, nz;

  bench->phase = PHASE_DONE;
  bench_status = status;
  g_clear_handle_id (&bench->timeout, g_source_remove);
  g_clear_handle_id (&bench->quiet, g_source_remove);
  if (bench->clock && bench->paint_handler)
    g_signal_handler_disconnect (bench->clock, bench->paint_handler);
  g_file_get_contents ("/proc/loadavg", &load, NULL, NULL);
  airy_system_get_shape (bench->window->system, &h, &w);
  airy_system_get_z (bench->window->system, &nz);
  printf ("airy --bench-ui: widefield, %u planes of %u × %u, %u NA edits; load average %s", nz, h, w,
          bench->first->len, load ? load : "?\n");
  if (bench->cold_first_ms > 0)
    printf ("%-22s %7.1f ms (from the process's start)\n", "start → first frame", bench->cold_first_ms);
  if (bench->cold_full_ms > 0)
    printf ("%-22s %7.1f ms\n", "start → full stack", bench->cold_full_ms);
  print_row ("edit → first frame", bench->first);
  for (guint i = 0; i < N_STAGES; i++)
    print_row (stage_names[i], bench->stage[i]);
  print_row ("edit → full stack", bench->full);
  print_row ("engine, full run", bench->engine);
  if (status != 0)
    printf ("a frame did not come within %d s\n", TIMEOUT_S);
  fflush (stdout);
  /* nothing to ask about on the way out */
  bench->window->dirty = FALSE;
  gtk_window_destroy (GTK_WINDOW (bench->window));
}

static gboolean
on_timeout (gpointer data)
{
  bench->timeout = 0;
  finish (1);
  return G_SOURCE_REMOVE;
}

static void
arm_timeout (void)
{
  g_clear_handle_id (&bench->timeout, g_source_remove);
  bench->timeout = g_timeout_add_seconds (TIMEOUT_S, on_timeout, NULL);
}

/* the edit as a person makes it: a value typed into the NA field and
 * committed (what Enter or Tab does) */
static gboolean
edit (gpointer data)
{
  GtkWidget *spin = airy_bench_panel_get_editor (bench->window->panel, "elements[0].na");
  g_autofree char *text = g_strdup_printf ("%.4f", 0.70 + 0.005 * (bench->done + 1));

  bench->quiet = 0;
  g_assert (GTK_IS_SPIN_BUTTON (spin));
  bench->phase = PHASE_EDIT;
  bench->first_seen = FALSE;
  bench->t_edit = 0;
  bench->t_preview = 0;
  bench->frames = 0;
  arm_timeout ();
  gtk_editable_set_text (GTK_EDITABLE (spin), text);
  gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
  if (bench->t_edit == 0)
    {
      g_printerr ("airy --bench-ui: the NA field did not commit %s\n", text);
      finish (1);
    }
  return G_SOURCE_REMOVE;
}

static void
on_na (GObject *object, GParamSpec *pspec, gpointer data)
{
  if (bench->phase != PHASE_EDIT || bench->t_edit != 0)
    return;
  bench->t_edit = g_get_monotonic_time ();
  bench->want_hash = airy_system_hash (bench->window->system);
}

static void
on_finished (AiryWorker *worker, AiryResult *result, guint64 hash, gpointer data)
{
  if (bench->phase == PHASE_EDIT && hash == bench->want_hash)
    {
      double ms = result->seconds * 1e3;
      g_array_append_val (bench->engine, ms);
    }
}

static void
on_preview (AiryWorker *worker, AiryResident *partial, guint64 hash, gpointer data)
{
  if (bench->phase == PHASE_EDIT && hash == bench->want_hash && bench->t_preview == 0)
    bench->t_preview = g_get_monotonic_time ();
}

static void
on_before_paint (GdkFrameClock *clock, gpointer data)
{
  bench->t_frame = g_get_monotonic_time ();
}

/* after the window's layout handler: the paint is next */
static void
on_layout (GdkFrameClock *clock, gpointer data)
{
  bench->t_paint = g_get_monotonic_time ();
}

/* the stages of an edit's first frame */
static void
add_stages (gint64 now)
{
  /* a plane that came while its frame was under way waited for nothing */
  gint64 start = MAX (bench->t_frame, bench->t_preview);
  double ms[N_STAGES] = {
    bench->t_preview ? (bench->t_preview - bench->t_edit) / 1e3 : -1,
    bench->t_preview ? (start - bench->t_preview) / 1e3 : -1,
    (bench->t_paint - start) / 1e3,
    (now - bench->t_paint) / 1e3,
  };

  for (guint i = 0; i < N_STAGES; i++)
    if (ms[i] >= 0)
      g_array_append_val (bench->stage[i], ms[i]);
  if (g_getenv ("AIRY_BENCH_UI_VERBOSE"))
    printf ("edit %u: plane %.1f, wait %.1f (%u frames before), layout %.1f, paint %.1f ms\n",
            bench->done + 1, ms[0], ms[1], bench->frames, ms[2], ms[3]);
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  AiryStackView *view = airy_stack_viewer_get_view (bench->window->viewer);
  gint64 now = g_get_monotonic_time ();
  gboolean drawn = airy_stack_view_drew_resident (view);
  /* the shown result is the full one of the system in the panel */
  gboolean full = drawn && !airy_window_shows_partial (bench->window) && bench->window->shown > 0
                  && bench->window->shown_hash == bench->window->displayed_hash
                  && !airy_worker_is_busy (bench->window->worker);
  double ms;

  if (bench->phase == PHASE_EDIT && bench->t_edit != 0 && !bench->first_seen
      && !(drawn && _airy_window_displayed_hash (bench->window) == bench->want_hash))
    bench->frames++;
  if (!drawn)
    return;
  if (bench->phase == PHASE_COLD)
    {
      gint64 age = process_age_us ();

      if (bench->cold_first_ms == 0 && age >= 0)
        bench->cold_first_ms = age / 1e3;
      if (full)
        {
          bench->cold_full_ms = age / 1e3;
          if (bench->edits == 0)
            {
              finish (0);
              return;
            }
          bench->phase = PHASE_QUIET;
          bench->quiet = g_timeout_add (QUIET_MS, edit, NULL);
        }
      return;
    }
  if (bench->phase != PHASE_EDIT || bench->t_edit == 0
      || _airy_window_displayed_hash (bench->window) != bench->want_hash)
    return;
  ms = (now - bench->t_edit) / 1e3;
  if (!bench->first_seen)
    {
      bench->first_seen = TRUE;
      g_array_append_val (bench->first, ms);
      add_stages (now);
    }
  if (full)
    {
      g_array_append_val (bench->full, ms);
      g_clear_handle_id (&bench->timeout, g_source_remove);
      if (++bench->done == bench->edits)
        {
          finish (0);
          return;
        }
      bench->phase = PHASE_QUIET;
      bench->quiet = g_timeout_add (QUIET_MS, edit, NULL);
    }
}

static void
on_map (GtkWidget *widget, gpointer data)
{
  if (bench->clock)
    return;
  bench->clock = gtk_widget_get_frame_clock (widget);
  bench->paint_handler = g_signal_connect (bench->clock, "after-paint", G_CALLBACK (on_after_paint), NULL);
  g_signal_connect (bench->clock, "before-paint", G_CALLBACK (on_before_paint), NULL);
  g_signal_connect (bench->clock, "layout", G_CALLBACK (on_layout), NULL);
}

void
airy_bench_ui_start (AiryWindow *window,
                     guint       edits,
                     guint       size)
{
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("widefield", NULL);
  GPtrArray *elements;

  g_return_if_fail (bench == NULL && system != NULL);

  bench = g_new0 (Bench, 1);
  bench->window = window;
  bench->edits = edits;
  bench->size = size;
  bench->first = g_array_new (FALSE, FALSE, sizeof (double));
  bench->full = g_array_new (FALSE, FALSE, sizeof (double));
  bench->engine = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < N_STAGES; i++)
    bench->stage[i] = g_array_new (FALSE, FALSE, sizeof (double));
  if (size > 0)
    {
      guint h, w;

      /* the same field of view on an N² grid */
      airy_system_get_shape (system, &h, &w);
      airy_system_set_shape (system, size, size);
      airy_system_set_spacing (system, airy_system_get_spacing (system) * w / size);
    }
  g_signal_connect (window, "map", G_CALLBACK (on_map), NULL);
  if (gtk_widget_get_mapped (GTK_WIDGET (window)))
    on_map (GTK_WIDGET (window), NULL);
  g_signal_connect_after (window->worker, "finished", G_CALLBACK (on_finished), NULL);
  g_signal_connect (window->worker, "preview", G_CALLBACK (on_preview), NULL);
  arm_timeout ();
  _airy_window_set_system (window, system, NULL);
  elements = airy_system_get_elements (window->system);
  bench->objective = g_ptr_array_index (elements, 0);
  g_signal_connect (bench->objective, "notify::na", G_CALLBACK (on_na), NULL);
}
