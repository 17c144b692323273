/* The ranks of one launch agree on what they run before anything is
 * computed: the whole system (grid, z, spectrum, elements, sample,
 * sensor, and the contents of every file it reads), the outputs with
 * their options, and the plane split. A rank given other inputs (a stale
 * copy of a file on a node's own disk, an MPMD launch with other
 * arguments) would otherwise write its planes of another system into the
 * shared output; instead the run stops, nothing written, with
 * "rank 1 of 2: the system differs from rank 0's (elements[0].na: 1.2
 * here, 0.8 on rank 0)". Ranks compare a SHA-256 of the description;
 * only when one differs do they exchange rank 0's whole description, for
 * the first rank that differs to say how. */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <glib/gi18n.h>

#include "airy-atomic-private.h"
#include "airy-sim-private.h"

/* ---- the description ---- */

/* Files above this are identified by a sample of their bytes */
#define WHOLE_LIMIT (G_GUINT64_CONSTANT (64) << 20)
#define MIB (G_GUINT64_CONSTANT (1) << 20)

static gboolean
hash_range (GChecksum *sum, int fd, guint64 offset, gsize n, guint8 *buf)
{
  while (n > 0)
    {
      gssize got = pread (fd, buf, MIN (n, MIB), (off_t) offset);

      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return FALSE;
      g_checksum_update (sum, buf, (gsize) got);
      offset += (guint64) got;
      n -= (gsize) got;
    }
  return TRUE;
}

/* A file's identity: a SHA-256 of its contents; NULL when it cannot be
 * read. Up to 64 MiB the whole file; beyond, its size, its first and last
 * MiB and 4 KiB of every MiB between (for 4 GiB: 18 MiB read): every rank
 * computes it, and a rank of an imaging run then reads only its planes of
 * a sample, not the whole file (a stale copy differs in its size, its
 * header or in many of the sampled blocks). */
static char *
file_identity (const char *path)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guint8 *buf = g_malloc (MIB);
  int fd = _airy_input_open (path, FALSE, NULL);   /* a FIFO would hang here */
  struct stat st;
  guint64 size, at;
  gboolean ok;

  if (fd < 0)
    return NULL;
  ok = fstat (fd, &st) == 0;
  size = ok ? (guint64) st.st_size : 0;
  if (ok && size <= WHOLE_LIMIT)
    ok = hash_range (sum, fd, 0, (gsize) size, buf);
  else if (ok)
    {
      g_autofree char *head = g_strdup_printf ("sampled %" G_GUINT64_FORMAT "\n", size);

      g_checksum_update (sum, (const guchar *) head, -1);
      ok = hash_range (sum, fd, 0, MIB, buf);
      for (at = MIB; ok && at + 2 * MIB <= size; at += MIB)
        ok = hash_range (sum, fd, at, 4096, buf);
      ok = ok && hash_range (sum, fd, size - MIB, MIB, buf);
    }
  close (fd);
  return ok ? g_strdup (g_checksum_get_string (sum)) : NULL;
}

/* This rank's input files by their real names, for the message: a stale
 * copy elsewhere under the same name as written is the same input, so the
 * description holds only the roles and contents */
static GPtrArray *input_paths;
/* one cannot be read here: the run says so, in its own words */
static gboolean input_unreadable;

void
describe_system (JsonBuilder *builder, AirySystem *system)
{
  g_autoptr(GPtrArray) files = airy_system_list_input_files (system);
  g_autofree char *json = airy_system_to_json_full (system);
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  guint i;

  g_clear_pointer (&input_paths, g_ptr_array_unref);
  input_paths = g_ptr_array_new_with_free_func (g_free);
  input_unreadable = FALSE;

  json_builder_set_member_name (builder, "system");
  json_builder_add_value (builder, g_steal_pointer (&node));
  json_builder_set_member_name (builder, "files");
  json_builder_begin_array (builder);
  for (i = 0; i < files->len; i++)
    {
      AiryInputFile *f = g_ptr_array_index (files, i);
      g_autofree char *id = file_identity (f->path);

      input_unreadable |= id == NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "role");
      json_builder_add_string_value (builder, f->role);
      json_builder_set_member_name (builder, "contents");
      json_builder_add_string_value (builder, id ? id : "unreadable");
      json_builder_end_object (builder);
      g_ptr_array_add (input_paths, g_strdup (f->path));
    }
  json_builder_end_array (builder);
}

/* an option's value, or null when not given */
void
describe_option (JsonBuilder *builder, const char *option, const char *value)
{
  json_builder_set_member_name (builder, option);
  if (value == NULL)
    json_builder_add_null_value (builder);
  else
    json_builder_add_string_value (builder, value);
}

/* an output as the file it writes: links and the folder's ./.. resolved
 * (two names of one file agree), or null when not given */
void
describe_output (JsonBuilder *builder, const char *option, const char *path)
{
  json_builder_set_member_name (builder, option);
  if (path == NULL)
    json_builder_add_null_value (builder);
  else
    {
      g_autofree char *target = _airy_atomic_resolve_output (path, NULL);
      g_autofree char *canon = canonical_name (target ? target : path);

      json_builder_add_string_value (builder, canon);
    }
}

/* ---- how two descriptions differ ---- */

static char *
value_text (JsonNode *node)
{
  if (node == NULL)
    return g_strdup (_("nothing"));
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_NULL:
      return g_strdup (_("none"));
    case JSON_NODE_OBJECT:
      return g_strdup (_("an object"));
    case JSON_NODE_ARRAY:
      return g_strdup_printf (_("a list of %u"), json_array_get_length (json_node_get_array (node)));
    case JSON_NODE_VALUE:
      break;
    }
  if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      double v = json_node_get_double (node);

      /* the shortest form that reads back as the same double */
      g_ascii_formatd (buf, sizeof buf, "%.15g", v);
      if (g_ascii_strtod (buf, NULL) != v)
        g_ascii_formatd (buf, sizeof buf, "%.17g", v);
      return g_strdup (buf);
    }
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
  if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    return g_strdup (json_node_get_boolean (node) ? "true" : "false");
  {
    const char *s = json_node_get_string (node);

    /* a long value cut (a path, a checksum) */
    if (g_utf8_strlen (s, -1) > 80)
      {
        g_autofree char *head = g_utf8_substring (s, 0, 77);
        return g_strdup_printf ("\"%s…\"", head);
      }
    return g_strdup_printf ("\"%s\"", s);
  }
}

static gboolean
same_value (JsonNode *a, JsonNode *b)
{
  return json_node_get_node_type (a) == json_node_get_node_type (b) && json_node_equal (a, b);
}

/* The first place where here and there differ, as "PATH: A here, B on
 * rank 0", or NULL when they are the same */
static char *
first_difference (JsonNode *here, JsonNode *there, const char *path)
{
  JsonNodeType type = json_node_get_node_type (here);

  if (type != json_node_get_node_type (there) || type == JSON_NODE_VALUE || type == JSON_NODE_NULL)
    {
      g_autofree char *a = NULL, *b = NULL;

      if (same_value (here, there))
        return NULL;
      a = value_text (here);
      b = value_text (there);
      return g_strdup_printf (_("%s: %s here, %s on rank 0"), path, a, b);
    }
  if (type == JSON_NODE_ARRAY)
    {
      JsonArray *x = json_node_get_array (here), *y = json_node_get_array (there);
      guint n = json_array_get_length (x), m = json_array_get_length (y), i;

      for (i = 0; i < MIN (n, m); i++)
        {
          g_autofree char *sub = g_strdup_printf ("%s[%u]", path, i);
          char *d = first_difference (json_array_get_element (x, i), json_array_get_element (y, i), sub);

          if (d)
            return d;
        }
      if (n != m)
        return g_strdup_printf (_("%s: %u entries here, %u on rank 0"), path, n, m);
      return NULL;
    }
  {
    JsonObject *x = json_node_get_object (here), *y = json_node_get_object (there);
    g_autoptr(GList) mx = json_object_get_members (x);
    g_autoptr(GList) my = json_object_get_members (y);
    GList *l;

    for (l = mx; l; l = l->next)
      {
        g_autofree char *sub = *path ? g_strdup_printf ("%s.%s", path, (char *) l->data) : g_strdup (l->data);
        JsonNode *other = json_object_get_member (y, l->data);
        g_autofree char *a = NULL;
        char *d;

        if (other == NULL)
          {
            a = value_text (json_object_get_member (x, l->data));
            return g_strdup_printf (_("%s: %s here, not given on rank 0"), sub, a);
          }
        d = first_difference (json_object_get_member (x, l->data), other, sub);
        if (d)
          return d;
      }
    for (l = my; l; l = l->next)
      if (!json_object_has_member (x, l->data))
        {
          g_autofree char *sub = *path ? g_strdup_printf ("%s.%s", path, (char *) l->data) : g_strdup (l->data);
          g_autofree char *b = value_text (json_object_get_member (y, l->data));

          return g_strdup_printf (_("%s: not given here, %s on rank 0"), sub, b);
        }
    return NULL;
  }
}

/* The input files: the first whose contents differ, by its role and name */
static char *
files_difference (JsonArray *here, JsonArray *there)
{
  guint n = json_array_get_length (here), m = json_array_get_length (there), i;

  for (i = 0; i < MIN (n, m); i++)
    {
      JsonObject *x = json_array_get_object_element (here, i), *y = json_array_get_object_element (there, i);
      const char *a = json_object_get_string_member (x, "contents");
      const char *b = json_object_get_string_member (y, "contents");

      if (!g_str_equal (a, b))
        return g_strdup_printf (_("%s (%s): other contents here (%.16s…) than on rank 0 (%.16s…)"),
                                json_object_get_string_member (x, "role"),
                                input_paths && i < input_paths->len ? (char *) g_ptr_array_index (input_paths, i)
                                                                    : "?", a, b);
    }
  return n != m ? g_strdup_printf (_("%u input files here, %u on rank 0"), n, m) : NULL;
}

/* "the system differs from rank 0's (…)", by the first section that does */
static char *
describe_difference (JsonNode *here, JsonNode *there)
{
  static const struct { const char *section; const char *what; } sections[] = {
    { "system", N_("the system differs from rank 0's") },
    { "files", N_("the system differs from rank 0's") },
    { "sweep", N_("the sweep's values differ from rank 0's") },
    { "planes", N_("the plane split differs from rank 0's") },
    { "outputs", N_("the outputs differ from rank 0's") },
    { "bench", N_("the bench options differ from rank 0's") },
  };
  JsonObject *x = json_node_get_object (here), *y = json_node_get_object (there);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (sections); i++)
    {
      JsonNode *a = json_object_get_member (x, sections[i].section);
      JsonNode *b = json_object_get_member (y, sections[i].section);
      g_autofree char *d = NULL;

      if (a == NULL || b == NULL)
        continue;
      d = g_str_equal (sections[i].section, "files")
          ? files_difference (json_node_get_array (a), json_node_get_array (b))
          : first_difference (a, b, "");
      if (d)
        return g_strdup_printf ("%s (%s)", _(sections[i].what), d);
    }
  return g_strdup (_("what it runs differs from rank 0's"));
}

/* ---- the agreement ---- */

gboolean
ranks_agree_on (JsonBuilder *builder, GError **error)
{
  g_autoptr(JsonNode) here = NULL;
  g_autofree char *text = NULL, *sum = NULL, *message = NULL;
  g_autofree char *root_text = NULL;
  char root_sum[65] = "";
  guint64 lengths[2] = { 0, 0 };
  float first, unreadable;
  GError *local = NULL;

  json_builder_end_object (builder);
  if (ranks->size == 1)
    return TRUE;
  /* a rank that failed before meets the others here */
  if (!airy_comm_agree (ranks, &local))
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  /* a file missing on a rank: the run stops at it with its own message
   * (the ranks agree on that), and nothing mixed is written */
  unreadable = input_unreadable ? 1.0f : 0.0f;
  if (!airy_comm_all_reduce (ranks, &unreadable, 1, AIRY_COMM_MAX, error))
    return FALSE;
  if (unreadable > 0)
    return TRUE;
  here = json_builder_get_root (builder);
  text = json_to_string (here, FALSE);
  sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
  if (is_root ())
    g_strlcpy (root_sum, sum, sizeof root_sum);
  if (!airy_comm_broadcast (ranks, root_sum, sizeof root_sum, 0, error))
    return FALSE;
  first = strcmp (root_sum, sum) != 0 ? (float) ranks->rank : (float) ranks->size;
  if (!airy_comm_all_reduce (ranks, &first, 1, AIRY_COMM_MIN, error))
    return FALSE;
  if (first >= (float) ranks->size)
    return TRUE;

  /* rank 0's description to all, the first differing rank's words back */
  lengths[0] = strlen (text) + 1;
  if (!airy_comm_broadcast (ranks, lengths, sizeof lengths[0], 0, error))
    return FALSE;
  root_text = is_root () ? g_strdup (text) : g_malloc0 (lengths[0]);
  if (!airy_comm_broadcast (ranks, root_text, lengths[0], 0, error))
    return FALSE;
  root_text[lengths[0] - 1] = '\0';
  if (ranks->rank == (guint) first)
    {
      g_autoptr(JsonNode) there = json_from_string (root_text, NULL);

      message = there ? describe_difference (here, there) : g_strdup (_("what it runs differs from rank 0's"));
      lengths[1] = strlen (message) + 1;
    }
  if (!airy_comm_broadcast (ranks, &lengths[1], sizeof lengths[1], (guint) first, error))
    return FALSE;
  if (message == NULL)
    message = g_malloc0 (lengths[1]);
  if (!airy_comm_broadcast (ranks, message, lengths[1], (guint) first, error))
    return FALSE;
  message[lengths[1] - 1] = '\0';
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("rank %u of %u: %s"), (guint) first, ranks->size,
               message);
  /* every rank holds the message, and it is bad input everywhere */
  ranks->agreed = TRUE;
  ranks->agreed_bad_input = TRUE;
  return FALSE;
}
