/* airy-sim sweep: one system per combination of --set values, handed out over the ranks. */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy.h"
#include "airy-atomic-private.h"
#include "airy-image-file-private.h"
#include "airy-json-private.h"
#include "airy-sim-private.h"
#if AIRY_HAVE_MPI
#include "airy-mpi.h"
#endif

/* ---- sweep: many systems, one per combination of parameter values ---- */

typedef struct
{
  char    *path;      /* e.g. elements[1].zernike-coefficients[0] */
  double  *values;
  guint    n;
} SweepParam;

static void
sweep_param_clear (gpointer data)
{
  SweepParam *p = data;

  g_free (p->path);
  g_free (p->values);
}

/* PATH=START:STOP:COUNT (COUNT evenly spaced values, the ends included) or
 * PATH=V1,V2,… */
static gboolean
parse_set (const char *arg, SweepParam *p, GError **error)
{
  const char *eq = strrchr (arg, '=');
  g_auto(GStrv) range = NULL;
  g_auto(GStrv) list = NULL;
  guint i;

  memset (p, 0, sizeof *p);
  if (eq == NULL || eq == arg || eq[1] == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--set: must be PATH=START:STOP:COUNT or PATH=V1,V2,…, got \"%s\""), arg);
      return FALSE;
    }
  p->path = g_strndup (arg, eq - arg);
  range = g_strsplit (eq + 1, ":", -1);
  if (g_strv_length (range) == 3)
    {
      double a, b;
      guint64 n;
      char *end_a, *end_b;

      a = g_ascii_strtod (range[0], &end_a);
      b = g_ascii_strtod (range[1], &end_b);
      if (end_a == range[0] || *end_a || end_b == range[1] || *end_b || !isfinite (a) || !isfinite (b)
          || !g_ascii_string_to_unsigned (range[2], 10, 1, 1000000, &n, NULL))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--set %s: START:STOP:COUNT needs two finite numbers and a count in [1, 1000000], "
                         "got \"%s\""), p->path, eq + 1);
          return FALSE;
        }
      p->n = (guint) n;
      p->values = g_new (double, p->n);
      for (i = 0; i < p->n; i++)
        /* weighted ends: exact at both, symmetric in between */
        p->values[i] = p->n == 1 ? a : ((p->n - 1 - i) * a + i * b) / (p->n - 1);
      return TRUE;
    }
  list = g_strsplit (eq + 1, ",", -1);
  p->n = g_strv_length (list);
  p->values = g_new (double, p->n);
  for (i = 0; i < p->n; i++)
    {
      char *end;

      p->values[i] = g_ascii_strtod (list[i], &end);
      if (end == list[i] || *end || !isfinite (p->values[i]))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--set %s: \"%s\" is not a finite number"), p->path, list[i]);
          return FALSE;
        }
    }
  return TRUE;
}

/* The node at a path like elements[1].zernike-coefficients[0] in the
 * system file's JSON: a number that is there (a sweep changes values, it
 * adds no keys). */
static JsonNode *
json_find_number (JsonNode *root, const char *path, const char *file, GError **error)
{
  JsonNode *node = _airy_json_find_number (root, path);

  if (node == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--set %s: %s has no number there (a sweep sets numbers the file gives)"), path, file);
      return NULL;
    }
  return node;
}

/* Combination k: the value index of each parameter, the last fastest. */
static void
sweep_combination (GArray *params, guint k, guint *index)
{
  guint i;

  for (i = params->len; i-- > 0;)
    {
      SweepParam *p = &g_array_index (params, SweepParam, i);

      index[i] = k % p->n;
      k /= p->n;
    }
}

/* The system of combination k: the file's JSON with the values set. */
static AirySystem *
sweep_system (JsonNode *root, GArray *params, guint k, const char *file, GError **error)
{
  g_autoptr(JsonNode) copy = json_node_copy (root);
  g_autofree guint *index = g_new (guint, params->len);
  g_autofree char *dir = g_path_get_dirname (file);
  g_autofree char *json = NULL;
  guint i;

  sweep_combination (params, k, index);
  for (i = 0; i < params->len; i++)
    {
      SweepParam *p = &g_array_index (params, SweepParam, i);
      JsonNode *node = json_find_number (copy, p->path, file, error);
      double v = p->values[index[i]];

      if (node == NULL)
        return NULL;
      /* a whole number stays one where the file has one (indices, counts) */
      if (json_node_get_value_type (node) == G_TYPE_INT64 && v == floor (v) && fabs (v) < 9e15)
        json_node_set_int (node, (gint64) v);
      else
        json_node_set_double (node, v);
    }
  json = json_to_string (copy, FALSE);
  return airy_system_new_from_data (json, -1, dir, file, error);
}

static char *
csv_field (const char *s)
{
  g_autofree char *q = NULL;
  g_auto(GStrv) parts = NULL;

  if (strpbrk (s, ",\"\n") == NULL)
    return g_strdup (s);
  parts = g_strsplit (s, "\"", -1);
  q = g_strjoinv ("\"\"", parts);
  return g_strdup_printf ("\"%s\"", q);
}

/* The sweep's stacks: TIFF, or OME-Zarr stores with --format ome-zarr */
static const AiryImageFormat *sweep_format;

/* The suffix of the sweep's stacks: their format's usual one, from the
 * format table (".tif", ".ome.zarr") */
static const char *
stack_suffix (void)
{
  return (sweep_format ? sweep_format : airy_image_format_lookup ("TIFF"))->suffixes[0];
}

/* index.csv: one row per system, its file and each parameter's value */
static char *
sweep_index_text (GArray *params, guint total, guint digits)
{
  g_autofree guint *index = g_new (guint, params->len);
  GString *csv = g_string_new ("index,file");
  guint k, i;

  for (i = 0; i < params->len; i++)
    {
      g_autofree char *f = csv_field (g_array_index (params, SweepParam, i).path);
      g_string_append_printf (csv, ",%s", f);
    }
  g_string_append_c (csv, '\n');
  for (k = 0; k < total; k++)
    {
      sweep_combination (params, k, index);
      g_string_append_printf (csv, "%u,%0*u%s", k, (int) digits, k, stack_suffix ());
      for (i = 0; i < params->len; i++)
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          SweepParam *p = &g_array_index (params, SweepParam, i);
          double v = p->values[index[i]];

          /* the shortest form that reads back as the same double */
          g_ascii_formatd (buf, sizeof buf, "%.15g", v);
          if (g_ascii_strtod (buf, NULL) != v)
            g_ascii_formatd (buf, sizeof buf, "%.17g", v);
          g_string_append_printf (csv, ",%s", buf);
        }
      g_string_append_c (csv, '\n');
    }
  return g_string_free (csv, FALSE);
}

static gboolean
write_sweep_index (const char *dir, GArray *params, guint total, guint digits, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "index.csv", NULL);
  g_autofree char *csv = sweep_index_text (params, total, digits);

  return airy_atomic_set_contents (path, csv, strlen (csv), error);
}

/* Whether name is one this sweep writes: index.csv, or NNNN.tif (digits
 * wide) of a combination below total. */
static gboolean
is_sweep_output (const char *name, guint total, guint digits)
{
  guint64 k;
  gsize len = strlen (name), i;

  if (g_str_equal (name, "index.csv"))
    return TRUE;
  if (len != digits + strlen (stack_suffix ()) || !g_str_has_suffix (name, stack_suffix ()))
    return FALSE;
  for (i = 0; i < digits; i++)
    if (!g_ascii_isdigit (name[i]))
      return FALSE;
  k = g_ascii_strtoull (name, NULL, 10);
  return k < total;
}

/* No output of the sweep may replace one of its inputs (the system file,
 * a sample, a mask image): a sweep sets numbers only, so every swept
 * system reads the files of the first. */
static gboolean
check_sweep_inputs (const char *dir, AirySystem *system, const char *system_file, guint total, guint digits,
                    GError **error)
{
  g_autoptr(GPtrArray) files = airy_system_list_input_files (system);
  guint i;

  for (i = 0; i <= files->len; i++)
    {
      AiryInputFile *f = i < files->len ? g_ptr_array_index (files, i) : NULL;
      NamedFile input = { f ? f->role : _("the system file"), f ? f->path : system_file };
      g_autofree char *base = g_path_get_basename (input.path);
      g_autofree char *out = g_build_filename (dir, base, NULL);
      NamedFile output = { "-o", out };

      if (is_sweep_output (base, total, digits) && !check_outputs (&output, 1, &input, 1, error))
        return FALSE;
    }
  return TRUE;
}

/* Files in dir named like a sweep's (digits, .tif) that this one did not
 * write: an earlier, larger sweep's, which index.csv no longer lists. */
static guint
count_stale_outputs (const char *dir, guint total, guint digits)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      gsize len = strlen (name), suffix = strlen (stack_suffix ()), i;

      if (len < 4 + suffix || !g_str_has_suffix (name, stack_suffix ()) || is_sweep_output (name, total, digits))
        continue;
      for (i = 0; i < len - suffix && g_ascii_isdigit (name[i]); i++)
        ;
      n += i == len - suffix;
    }
  return n;
}

/* -o DIR/ before anything is made, on every rank: DIR a folder, or a
 * name whose nearest part that exists is a folder (the rest is made). */
static gboolean
check_sweep_folder (const char *dir, GError **error)
{
  g_autofree char *part = g_strdup (dir);
  gboolean above = FALSE;

  while (TRUE)
    {
      g_autofree char *up = NULL;

      if (g_file_test (part, G_FILE_TEST_IS_DIR))
        return TRUE;
      if (g_file_test (part, G_FILE_TEST_EXISTS))
        {
          if (above)
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("-o: cannot make the folder %s: %s is a file, not a folder"), dir, part);
          else
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("-o: %s exists and is not a folder"), dir);
          return FALSE;
        }
      /* afile/sub/ → afile/sub → afile (a trailing slash names the same part) */
      up = g_path_get_dirname (part);
      if (g_str_equal (up, part))
        return TRUE;   /* the root, or a missing "." : mkdir says why */
      above |= !(g_str_has_suffix (part, G_DIR_SEPARATOR_S));
      g_free (part);
      part = g_steal_pointer (&up);
    }
}

/* -o DIR/: made with its parents where missing (mkdir -p, mode 0755). */
static gboolean
make_sweep_folder (const char *dir, GError **error)
{
  if (g_file_test (dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  if (g_file_test (dir, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("-o: %s exists and is not a folder"), dir);
      return FALSE;
    }
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("-o: cannot make the folder %s: %s"), dir, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

/* Each --set its own number of the file: the same path twice, or two
 * paths of the same number (elements[0].na and elements[00].na), would
 * give index.csv two columns of one value */
static gboolean
check_sweep_paths (JsonNode *root, GArray *params, const char *file, GError **error)
{
  g_autofree JsonNode **nodes = g_new0 (JsonNode *, MAX (params->len, 1));
  guint i, j;

  for (i = 0; i < params->len; i++)
    {
      const char *path = g_array_index (params, SweepParam, i).path;

      nodes[i] = json_find_number (root, path, file, error);
      if (nodes[i] == NULL)
        return FALSE;
      for (j = 0; j < i; j++)
        if (nodes[j] == nodes[i])
          {
            const char *other = g_array_index (params, SweepParam, j).path;

            if (g_str_equal (other, path))
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("--set: %s is given twice"), path);
            else
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("--set: %s and %s name the same number: give it once"), other, path);
            return FALSE;
          }
    }
  return TRUE;
}

static gboolean
agree_on_sweep (AirySystem *first, GArray *params, const char *output, const char *format_arg, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  guint i, j;

  json_builder_begin_object (b);
  describe_system (b, first);
  json_builder_set_member_name (b, "sweep");
  json_builder_begin_object (b);
  for (i = 0; i < params->len; i++)
    {
      SweepParam *p = &g_array_index (params, SweepParam, i);
      g_autofree char *name = g_strconcat ("--set ", p->path, NULL);

      json_builder_set_member_name (b, name);
      json_builder_begin_array (b);
      for (j = 0; j < p->n; j++)
        json_builder_add_double_value (b, p->values[j]);
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "outputs");
  json_builder_begin_object (b);
  describe_output (b, "-o", output);
  describe_option (b, "--format", format_arg);
  json_builder_end_object (b);
  return ranks_agree_on (b, error);
}

/* What became of each system of a sweep (one byte per system; the ranks
 * combine theirs with a MAX reduction) */
enum { SWEEP_PENDING = 0, SWEEP_SKIPPED = 1, SWEEP_RUN = 2, SWEEP_FAILED = 3 };

static char *
sweep_output_path (const char *dir, guint k, guint digits)
{
  g_autofree char *name = g_strdup_printf ("%0*u%s", (int) digits, k, stack_suffix ());

  return g_build_filename (dir, name, NULL);
}

/* --resume: whether system k's file in dir is complete. Absent, not a
 * TIFF, cut short (its planes do not all read) or in another format than
 * this sweep writes: run it again. A whole file of another system (its
 * provenance is not this system's): refused, so that one folder never
 * mixes two sweeps. */
static gboolean
sweep_output_complete (const char *path, AirySystem *system, guint k, AiryTiffFormat format, gboolean *complete,
                       GError **error)
{
  g_autofree char *expected = NULL, *found = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(AiryStack) stack = NULL;
  AiryTiffFormat want = format == AIRY_TIFF_AUTO ? airy_tiff_format_for_path (path) : format, has;

  *complete = FALSE;
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  if (sweep_format && sweep_format->folder)
    {
      /* a store is written whole or not at all (its metadata last, renamed
       * into place): one that reads, with its system, is complete */
      g_autoptr(AirySystem) stored = NULL;

      if ((stack = airy_image_read (path, &local)) == NULL)
        return TRUE;
      /* its attributes hold the system as JSON (ASCII-escaped): compared
       * as the system it reads back as */
      stored = stack->system_json ? airy_system_new_from_data (stack->system_json, -1, NULL, path, NULL) : NULL;
      found = stored ? airy_system_to_json_full (stored) : g_strdup (stack->system_json);
      has = want;
    }
  else if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("--resume: %s is not a regular file"), path);
      return FALSE;
    }
  else
    {
      found = _airy_tiff_read_provenance (path, &has, &local);
      if (local != NULL)
        return TRUE;
      /* a file cut short may have lost the metadata after its pixels: whole
       * (every plane reads) before it is called another's */
      stack = airy_tiff_read (path, &local);
      if (stack == NULL)
        return TRUE;
    }
  expected = airy_system_to_json_full (system);
  if (found == NULL || strcmp (found, expected) != 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   found ? _("--resume: %s holds the result of another system, not of system %u of this sweep "
                             "(another sweep's folder?): remove it or sweep into another folder")
                         : _("--resume: %s was not written by Airy's sweep (it carries no system), not system %u "
                             "of this sweep: remove it or sweep into another folder"),
                   path, k);
      return FALSE;
    }
  *complete = (has == AIRY_TIFF_OME) == (want == AIRY_TIFF_OME)
              && (want != AIRY_TIFF_BIGTIFF || has == AIRY_TIFF_BIGTIFF);
  return TRUE;
}

/* --resume, on rank 0: index.csv, where there is one, must be this
 * sweep's; each system's file is checked (sweep_output_complete) and
 * marked skipped when complete. */
static gboolean
check_resume (const char *dir, JsonNode *root, GArray *params, const char *file, guint total, guint digits,
              AiryTiffFormat format, guint8 *state, GError **error)
{
  g_autofree char *csv_path = g_build_filename (dir, "index.csv", NULL);
  g_autofree char *csv = NULL, *ours = NULL;
  guint k;

  if (g_file_get_contents (csv_path, &csv, NULL, NULL))
    {
      ours = sweep_index_text (params, total, digits);
      if (strcmp (csv, ours) != 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--resume: %s lists another sweep's systems than these --set values give: remove it "
                         "or sweep into another folder"), csv_path);
          return FALSE;
        }
    }
  for (k = 0; k < total; k++)
    {
      g_autoptr(AirySystem) system = NULL;
      g_autofree char *path = NULL;
      gboolean complete;

      if (state[k] != SWEEP_PENDING)
        continue;
      system = sweep_system (root, params, k, file, error);
      path = sweep_output_path (dir, k, digits);
      if (system == NULL || !sweep_output_complete (path, system, k, format, &complete, error))
        return FALSE;
      if (complete)
        state[k] = SWEEP_SKIPPED;
    }
  return TRUE;
}

/* The systems still pending, handed out one at a time from a counter all
 * ranks share (the next free rank takes the next system: dynamic load
 * balancing). A failing system stops this rank (state FAILED, error set);
 * the others go on with theirs. */
static void
sweep_run_pending (JsonNode *root, GArray *params, const char *file, const char *dir, guint total, guint digits,
                   const AiryRunOptions *options, AiryTiffFormat format, gboolean quiet, guint8 *state, guint *mine,
                   GError **error)
{
  g_autoptr(GArray) todo = g_array_new (FALSE, FALSE, sizeof (guint));
  guint64 i;
  guint k;

  for (k = 0; k < total; k++)
    if (state[k] == SWEEP_PENDING)
      g_array_append_val (todo, k);
  while (airy_comm_counter_next (ranks, &i, error) && i < todo->len)
    {
      g_autoptr(AirySystem) system = NULL;
      g_autoptr(AiryResult) result = NULL;
      g_autofree char *path = NULL;
      AiryTiffWriteOptions wo = { format, NULL, 0 };

      k = g_array_index (todo, guint, i);
      system = sweep_system (root, params, k, file, error);
      if (system != NULL)
        result = airy_run (system, options, NULL, NULL, NULL, error);
      if (result == NULL)
        {
          g_prefix_error (error, _("sweep system %u: "), k);
          state[k] = SWEEP_FAILED;
          return;
        }
      path = sweep_output_path (dir, k, digits);
      if (!airy_image_write_full (path, result->stack, &wo, error))
        {
          state[k] = SWEEP_FAILED;
          return;
        }
      state[k] = SWEEP_RUN;
      (*mine)++;
      if (!quiet && is_root () && isatty (STDERR_FILENO))
        {
          fputc ('\r', stderr);
          fprintf (stderr, _("system %u of %u"), k + 1, total);
        }
    }
}

/* The line a sweep ends with: what it wrote, and what --resume kept */
static void
print_sweep_done (const char *dir, const guint8 *state, guint total, const float *done_by, double seconds)
{
  g_autoptr(GString) per = g_string_new (NULL);
  guint r, k, run = 0, skipped = 0;

  for (r = 0; r < ranks->size; r++)
    g_string_append_printf (per, "%s%u", r ? ", " : "", (guint) done_by[r]);
  for (k = 0; k < total; k++)
    {
      run += state[k] == SWEEP_RUN;
      skipped += state[k] == SWEEP_SKIPPED;
    }
  if (isatty (STDERR_FILENO))
    fprintf (stderr, "\n");
  if (skipped == 0 && run == total)
    g_print (_("wrote %u systems and index.csv to %s in %.2f s on %u rank(s) (systems per rank: %s)\n"),
             total, dir, seconds, ranks->size, per->str);
  else
    g_print (_("wrote %u of %u systems and index.csv to %s in %.2f s on %u rank(s) (systems per rank: %s); "
               "%u complete from before, kept\n"),
             run, total, dir, seconds, ranks->size, per->str, skipped);
}

/* --json: one line on stdout (rank 0): the systems skipped (complete
 * from before, --resume), run, failed and not reached */
static void
print_sweep_summary (const char *dir, const guint8 *state, guint total, const float *done_by, double seconds)
{
  static const char *const names[] = { "not_run", "skipped", "run", "failed" };
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  guint s, k, r;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "output");
  json_builder_add_string_value (b, dir);
  json_builder_set_member_name (b, "systems");
  json_builder_add_int_value (b, total);
  for (s = 0; s < G_N_ELEMENTS (names); s++)
    {
      json_builder_set_member_name (b, names[s]);
      json_builder_begin_array (b);
      for (k = 0; k < total; k++)
        if ((state[k] == SWEEP_PENDING ? 0 : state[k]) == s)
          json_builder_add_int_value (b, k);
      json_builder_end_array (b);
    }
  json_builder_set_member_name (b, "ranks");
  json_builder_add_int_value (b, ranks->size);
  json_builder_set_member_name (b, "systems_per_rank");
  json_builder_begin_array (b);
  for (r = 0; r < ranks->size; r++)
    json_builder_add_int_value (b, (gint64) done_by[r]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "seconds");
  json_builder_add_double_value (b, seconds);
  json_builder_end_object (b);
  node = json_builder_get_root (b);
  json_generator_set_root (gen, node);
  text = json_generator_to_data (gen, NULL);
  g_print ("%s\n", text);
}

/* Every combination of the --set values as its own system, each in one
 * process, handed out over the ranks (sweep_run_pending); DIR gets
 * NNNN.tif per system and index.csv. Without MPI the same, in one
 * process. DIR is made when missing (with its parents). Files of those
 * names already there (an earlier sweep's) are replaced, each only once
 * its new file is complete; an input of the system of such a name stops
 * the sweep before anything is written; other files stay, and those named
 * like an earlier, larger sweep's are reported. --resume keeps the files
 * that are complete and this sweep's (check_resume); --index K runs
 * system K alone (a job array's task). */
int
cmd_sweep (int argc, char **argv)
{
  int status;
  g_autofree char *output = NULL, *backend = NULL, *format_arg = NULL, *index_arg = NULL;
  g_auto(GStrv) sets = NULL;
  int threads = 0;
  gboolean quiet = FALSE, resume = FALSE, json = FALSE;
  const SimOption options_table[] = {
    { "set", 0, SIM_OPTION_STRINGS, &sets },
    { "output", 'o', SIM_OPTION_STRING, &output },
    { "backend", 0, SIM_OPTION_STRING, &backend },
    { "threads", 0, SIM_OPTION_INT, &threads },
    { "format", 0, SIM_OPTION_STRING, &format_arg },
    { "quiet", 'q', SIM_OPTION_FLAG, &quiet },
    { "resume", 0, SIM_OPTION_FLAG, &resume },
    { "index", 0, SIM_OPTION_STRING, &index_arg },
    { "json", 0, SIM_OPTION_FLAG, &json },
    { NULL }
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) params = g_array_new (FALSE, TRUE, sizeof (SweepParam));
  g_autoptr(JsonParser) parser = NULL;
  g_autofree float *states = NULL;
  float *done_by;
  g_autofree guint8 *state = NULL;
  AiryTiffFormat tiff_format = AIRY_TIFF_AUTO;
  AiryRunOptions options = { 0 };
  guint64 total = 1, k, only = G_MAXUINT64;
  guint i, digits, mine = 0;
  gint64 t0 = g_get_monotonic_time ();

  g_array_set_clear_func (params, sweep_param_clear);
  if ((status = parse_command_line ("sweep", options_table, &argc, &argv)) != EXIT_OK)
    return status;
  if (argc != 2)
    return usage_error (_("sweep: give one system file"));
  if (output == NULL || sets == NULL)
    return usage_error (_("sweep: give the parameters with --set PATH=START:STOP:COUNT and the folder with -o DIR/"));
  if (*output == '\0')
    return usage_error (_("sweep: -o is empty: give the folder of the files with -o DIR/"));
  if ((status = check_threads_backend (threads, backend)) != EXIT_OK)
    return status;
  sweep_format = NULL;
  if (g_strcmp0 (format_arg, "ome-zarr") == 0)
    sweep_format = airy_image_format_lookup ("OME-Zarr");
  else if (format_arg && !parse_tiff_format (format_arg, &tiff_format))
    return usage_error ("--format: must be one of imagej, ome, bigtiff, ome-zarr, got \"%s\"", format_arg);
  if (index_arg && !g_ascii_string_to_unsigned (index_arg, 10, 0, 999999, &only, NULL))
    return usage_error (_("--index: must be the number of one system of the sweep (0, 1, …), got \"%s\""),
                        index_arg);
  for (i = 0; sets[i]; i++)
    {
      SweepParam p;

      if (!parse_set (sets[i], &p, &error))
        {
          sweep_param_clear (&p);
          return ranks_fail (error);
        }
      g_array_append_val (params, p);
      total *= p.n;
      if (total > 1000000)
        {
          g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--set: at most 1000000 combinations in all, these give more"));
          return ranks_fail (error);
        }
    }
  if (index_arg && only >= total)
    {
      g_set_error (&error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--index: must be in [0, %u] (this sweep has %u systems), got %s"), (guint) total - 1,
                   (guint) total, index_arg);
      return ranks_fail (error);
    }
  if (!check_environment (&error) || (parser = _airy_json_parse_file (argv[1], &error)) == NULL
      || !check_sweep_paths (json_parser_get_root (parser), params, argv[1], &error)
      || !check_sweep_folder (output, &error))
    return ranks_fail (error);
  /* every combination checked before any runs: a value out of its range
   * stops the sweep with the field's message and that combination */
  for (k = 0; k < total; k++)
    {
      g_autoptr(AirySystem) system = sweep_system (json_parser_get_root (parser), params, (guint) k, argv[1], &error);

      if (system == NULL || !airy_system_validate (system, NULL, &error))
        {
          g_prefix_error (&error, _("sweep system %u: "), (guint) k);
          return ranks_fail (error);
        }
    }
  for (digits = 4; total > 1 && pow (10, digits) < total; digits++)
    ;
  {
    g_autoptr(AirySystem) first = sweep_system (json_parser_get_root (parser), params, 0, argv[1], &error);

    if (first == NULL || !check_sweep_inputs (output, first, argv[1], (guint) total, digits, &error))
      return ranks_fail (error);
    /* every rank sweeps the same systems into the same folder: the first
     * system, and the values of the others */
    if (ranks->size > 1 && !agree_on_sweep (first, params, output, format_arg, &error))
      return ranks_failed (error);
  }
  /* --index K: the others are not this launch's */
  state = g_new0 (guint8, total);
  for (k = 0; index_arg && k < total; k++)
    state[k] = k == only ? SWEEP_PENDING : SWEEP_SKIPPED;
  /* the folder: made by rank 0 alone; the others write into it only after
   * the agreement below; --resume's checks are rank 0's too */
  if (is_root () && (!make_sweep_folder (output, &error)
                     || (resume && !check_resume (output, json_parser_get_root (parser), params, argv[1],
                                                  (guint) total, digits, tiff_format, state, &error))))
    return ranks_fail (error);
  /* a rank that failed above meets the others here, before the counter */
  if (ranks->size > 1 && !airy_comm_agree (ranks, &error))
    return ranks_failed (error);
  if (!airy_comm_broadcast (ranks, state, total, 0, &error) || !airy_comm_counter_reset (ranks, &error))
    return ranks_failed (error);

  options.backend = backend;
  options.threads = (guint) threads;
  sweep_run_pending (json_parser_get_root (parser), params, argv[1], output, (guint) total, digits, &options,
                     tiff_format, quiet, state, &mine, &error);
  /* what became of each system, as all ranks saw it; --index leaves the
   * others as not run */
  for (k = 0; index_arg && k < total; k++)
    if (k != only)
      state[k] = SWEEP_PENDING;
  states = g_new (float, total + ranks->size);
  for (k = 0; k < total; k++)
    states[k] = state[k];
  done_by = states + total;
  memset (done_by, 0, ranks->size * sizeof (float));
  done_by[ranks->rank] = mine;
  /* a failed rank stops taking systems; the others finish theirs and
   * every rank reports the lowest failing rank's message */
  if (ranks->size > 1)
    {
      g_autoptr(GError) reduced = NULL;
      g_autofree float *sum = g_memdup2 (done_by, ranks->size * sizeof (float));

      /* the states by MAX, the systems per rank by SUM */
      if (!airy_comm_all_reduce (ranks, states, total, AIRY_COMM_MAX, &reduced)
          || !airy_comm_all_reduce (ranks, sum, ranks->size, AIRY_COMM_SUM, &reduced))
        return ranks_failed (reduced);
      memcpy (done_by, sum, ranks->size * sizeof (float));
      for (k = 0; k < total; k++)
        state[k] = (guint8) states[k];
    }
  if (json && is_root ())
    print_sweep_summary (output, state, (guint) total, done_by, (g_get_monotonic_time () - t0) / 1e6);
  if (error != NULL || ranks->size > 1)
    {
      if (ranks->size > 1 && !airy_comm_agree (ranks, &error))
        return ranks_failed (error);
      if (error != NULL)
        return fail (error);
    }
  if (is_root () && !write_sweep_index (output, params, (guint) total, digits, &error))
    return fail (error);
  if (is_root ())
    {
      guint stale = count_stale_outputs (output, (guint) total, digits);

      if (stale > 0)
        g_printerr (_("airy-sim: warning: %s holds %u more file(s) named like a sweep's that this sweep did not "
                      "write (an earlier sweep's?); index.csv lists this sweep's %u\n"), output, stale,
                    (guint) total);
    }
  if (!quiet && !json && is_root ())
    print_sweep_done (output, state, (guint) total, done_by, (g_get_monotonic_time () - t0) / 1e6);
  return EXIT_OK;
}
