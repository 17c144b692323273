#define G_LOG_DOMAIN "airy-json"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "airy-json-private.h"
#include "airy-error.h"
#include "airy-atomic-private.h"

/* What json-glib cannot be trusted with, found on the raw text: nesting
 * deep enough to overflow its recursive parser's stack, numbers it silently
 * turns into inf (1e999) or wraps around (integers beyond 64 bits), keys
 * given twice (it keeps the last), text after the value (it keeps the
 * first of two objects), millions of values (it builds the whole tree
 * first), and files that never end (/dev/zero). And a writer whose numbers
 * read back exactly and stay short (json-glib prints %.17g:
 * 0.53200000000000003). */

/* ---- scanning ---- */

typedef struct
{
  gboolean    object;
  guint       index;     /* arrays: the current element */
  const char *key;       /* objects: the current key, as written (NULL: none yet) */
  gsize       key_len;
  GHashTable *keys;      /* objects: decoded key → 1 + its offset (made at the second key) */
  const char *first_key; /*   the first key, until then */
  gsize       first_len;
} Frame;

/* What a scan of the raw text finds before json-glib sees it. */
typedef struct
{
  guint    max_depth;     /* deepest nesting of arrays and objects */
  char    *bad_path;      /* first number json-glib cannot hold (NULL: none): its JSON path */
  char    *bad_text;      /* … and its text as written */
  gboolean bad_integer;   /* an integer beyond 64 bits (else a double that overflows) */
  char    *many_path;     /* where the values passed AIRY_JSON_MAX_VALUES (the scan stopped there) */
  char    *twice_path;    /* the first key given twice in one object: its JSON path */
  gsize    twice_at;      /*   its offsets, the second and the first time */
  gsize    twice_first;
  gsize    after;         /* offset of the first text after the top-level value (0: none) */
} Scan;

char *
_airy_json_clip (const char *text,
                 gssize      length)
{
  gsize n = length < 0 ? strlen (text) : (gsize) length;
  const char *cut = text, *stop = text + n;
  guint i;

  /* whole characters where the text is UTF-8 */
  for (i = 0; i < AIRY_JSON_CLIP && cut < stop; i++)
    cut += MIN ((gsize) g_utf8_skip[*(const guchar *) cut], (gsize) (stop - cut));
  if (cut >= stop)
    return g_strndup (text, n);
  return g_strdup_printf (_("%.*s… (%lu bytes)"), (int) (cut - text), text, (unsigned long) n);
}

static char *
frame_path (const Frame *frames, guint depth)
{
  GString *path = g_string_new (NULL);
  guint i;

  for (i = 0; i < depth; i++)
    {
      if (!frames[i].object)
        g_string_append_printf (path, "[%u]", frames[i].index);
      else
        {
          if (path->len)
            g_string_append_c (path, '.');
          if (frames[i].key)
            {
              g_autofree char *key = _airy_json_clip (frames[i].key, frames[i].key_len);
              g_string_append (path, key);
            }
          else
            g_string_append_c (path, '?');
        }
    }
  if (path->len == 0)
    g_string_append (path, "(top level)");
  return g_string_free (path, FALSE);
}

/* json-glib reads a number with a '.' or an exponent as a double (overflow:
 * ±inf) and any other as a gint64 (overflow: wrapped around). */
static gboolean
number_fits (const char *text, gboolean *integer)
{
  *integer = strpbrk (text, ".eE") == NULL;
  if (*integer)
    return g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, NULL, NULL);
  return isfinite (g_ascii_strtod (text, NULL));
}

/* A key as json-glib stores it: its escapes decoded (an invalid escape is
 * json-glib's to report, and kept as written). */
static char *
decode_key (const char *s, gsize len)
{
  GString *out;
  gsize i;

  if (memchr (s, '\\', len) == NULL)
    return g_strndup (s, len);
  out = g_string_sized_new (len);
  for (i = 0; i < len; i++)
    {
      gunichar u;
      gsize used;

      if (s[i] != '\\' || i + 1 >= len)
        {
          g_string_append_c (out, s[i]);
          continue;
        }
      switch (s[++i])
        {
        case 'b': g_string_append_c (out, '\b'); break;
        case 'f': g_string_append_c (out, '\f'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'u':
          used = 0;
          if (i + 4 < len && g_ascii_isxdigit (s[i + 1]) && g_ascii_isxdigit (s[i + 2])
              && g_ascii_isxdigit (s[i + 3]) && g_ascii_isxdigit (s[i + 4]))
            {
              g_autofree char *hex = g_strndup (s + i + 1, 4);

              u = (gunichar) g_ascii_strtoull (hex, NULL, 16);
              used = 4;
              /* a surrogate pair */
              if (u >= 0xd800 && u < 0xdc00 && i + 10 < len && s[i + 5] == '\\' && s[i + 6] == 'u')
                {
                  g_autofree char *low = g_strndup (s + i + 7, 4);
                  gunichar l = (gunichar) g_ascii_strtoull (low, NULL, 16);

                  if (l >= 0xdc00 && l < 0xe000)
                    {
                      u = 0x10000 + ((u - 0xd800) << 10) + (l - 0xdc00);
                      used = 10;
                    }
                }
              g_string_append_unichar (out, u);
              i += used;
            }
          else
            g_string_append (out, "\\u");
          break;
        default:
          g_string_append_c (out, s[i]);   /* \" \\ \/ */
        }
    }
  return g_string_free (out, FALSE);
}

/* The key just read into f: is it there already? Only the first key given
 * twice is kept. */
static void
note_key (Scan *scan, Frame *frames, guint depth, const char *data)
{
  Frame *f = &frames[depth - 1];
  g_autofree char *key = NULL;
  gpointer first;

  if (scan->twice_path != NULL)
    return;
  if (f->first_key == NULL)
    {
      f->first_key = f->key;
      f->first_len = f->key_len;
      return;
    }
  /* offsets of the opening quotes */
  if (f->keys == NULL)
    {
      f->keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_insert (f->keys, decode_key (f->first_key, f->first_len),
                           GSIZE_TO_POINTER (f->first_key - 1 - data));
    }
  key = decode_key (f->key, f->key_len);
  if (g_hash_table_lookup_extended (f->keys, key, NULL, &first))
    {
      scan->twice_path = frame_path (frames, depth);
      scan->twice_at = f->key - 1 - data;
      scan->twice_first = GPOINTER_TO_SIZE (first);
      return;
    }
  g_hash_table_insert (f->keys, g_steal_pointer (&key), GSIZE_TO_POINTER (f->key - 1 - data));
}

static void
frame_close (Frame *f)
{
  g_clear_pointer (&f->keys, g_hash_table_unref);
}

/* One pass that respects strings (with their escapes) and json-glib's
 * C comments; it never fails: broken JSON is json-glib's to report. It
 * stops at AIRY_JSON_MAX_VALUES values, so that a file of millions of
 * numbers is refused before json-glib builds its tree (about 100 bytes a
 * value). */
static void
scan_text (const char *data,
           gsize       length,
           Scan       *scan)
{
  Frame frames[AIRY_JSON_MAX_DEPTH];
  const char *p = data, *end = data + length;
  gboolean expect_key = FALSE, done = FALSE;
  guint depth = 0, i;
  guint64 values = 0;

  memset (scan, 0, sizeof *scan);
  while (p < end)
    {
      char c = *p;
      gboolean value = FALSE;

      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        {
          p++;
          continue;
        }
      if (c == '/' && p + 1 < end && p[1] == '*')
        {
          const char *close = g_strstr_len (p + 2, end - p - 2, "*/");
          p = close ? close + 2 : end;
          continue;
        }
      /* anything but space and comments after the one value */
      if (done && depth == 0)
        {
          if (scan->after == 0)
            scan->after = (gsize) (p - data);
          break;
        }
      if (c == '"')
        {
          const char *s = ++p;

          while (p < end && *p != '"')
            p += (*p == '\\' && p + 1 < end) ? 2 : 1;
          if (expect_key && depth > 0 && depth <= AIRY_JSON_MAX_DEPTH)
            {
              frames[depth - 1].key = s;
              frames[depth - 1].key_len = MIN (p, end) - s;
              note_key (scan, frames, depth, data);
            }
          else
            value = TRUE;
          expect_key = FALSE;
          p++;
        }
      else if (c == '{' || c == '[')
        {
          depth++;
          scan->max_depth = MAX (scan->max_depth, depth);
          if (depth <= AIRY_JSON_MAX_DEPTH)
            frames[depth - 1] = (Frame) { c == '{', 0, NULL, 0, NULL, NULL, 0 };
          expect_key = c == '{';
          value = TRUE;
          p++;
        }
      else if (c == '}' || c == ']')
        {
          if (depth > 0 && depth <= AIRY_JSON_MAX_DEPTH)
            frame_close (&frames[depth - 1]);
          if (depth > 0)
            depth--;
          done = depth == 0;
          expect_key = FALSE;
          p++;
        }
      else if (c == ',')
        {
          if (depth > 0 && depth <= AIRY_JSON_MAX_DEPTH)
            {
              Frame *f = &frames[depth - 1];

              if (f->object)
                {
                  f->key = NULL;
                  expect_key = TRUE;
                }
              else
                f->index++;
            }
          p++;
        }
      else if (c == '-' || g_ascii_isdigit (c))
        {
          const char *s = p;

          while (p < end && (g_ascii_isdigit (*p) || strchr ("+-.eE", *p) != NULL) && *p != '\0')
            p++;
          value = TRUE;
          if (scan->bad_text == NULL && depth <= AIRY_JSON_MAX_DEPTH)
            {
              g_autofree char *text = g_strndup (s, p - s);
              gboolean integer;

              if (!number_fits (text, &integer))
                {
                  scan->bad_path = frame_path (frames, depth);
                  scan->bad_text = _airy_json_clip (text, -1);
                  scan->bad_integer = integer;
                }
            }
        }
      else if (g_ascii_isalpha (c))
        {
          /* true, false, null (or a word json-glib refuses) */
          while (p < end && g_ascii_isalnum (*p))
            p++;
          value = TRUE;
        }
      else
        p++;
      if (value)
        {
          done = depth == 0;
          if (++values > AIRY_JSON_MAX_VALUES && depth <= AIRY_JSON_MAX_DEPTH)
            {
              scan->many_path = frame_path (frames, depth);
              break;
            }
        }
    }
  for (i = 0; i < MIN (depth, AIRY_JSON_MAX_DEPTH); i++)
    frame_close (&frames[i]);
}

static void
scan_clear (Scan *scan)
{
  g_clear_pointer (&scan->bad_path, g_free);
  g_clear_pointer (&scan->bad_text, g_free);
  g_clear_pointer (&scan->many_path, g_free);
  g_clear_pointer (&scan->twice_path, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Scan, scan_clear)

/* "line 3, column 7" of a byte offset (columns count characters) */
static void
line_column (const char *data, gsize offset, guint *line, guint *column)
{
  const char *p, *start = data;

  *line = 1;
  for (p = data; p < data + offset; p++)
    if (*p == '\n')
      {
        (*line)++;
        start = p + 1;
      }
  *column = (guint) g_utf8_strlen (start, data + offset - start) + 1;
}

/* The first string or key that is not UTF-8, by its path (NULL: none).
 * json-glib turns an unpaired surrogate escape ("\udc00") into bytes that
 * are not UTF-8, which nothing can write back. */
static char *
find_bad_utf8 (JsonNode *node, const char *path)
{
  guint i, n;

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_VALUE:
      if (json_node_get_value_type (node) == G_TYPE_STRING && !g_utf8_validate (json_node_get_string (node), -1, NULL))
        return g_strdup (*path ? path : "(top level)");
      return NULL;
    case JSON_NODE_ARRAY:
      {
        JsonArray *a = json_node_get_array (node);

        n = json_array_get_length (a);
        for (i = 0; i < n; i++)
          {
            g_autofree char *sub = g_strdup_printf ("%s[%u]", path, i);
            char *bad = find_bad_utf8 (json_array_get_element (a, i), sub);

            if (bad)
              return bad;
          }
        return NULL;
      }
    case JSON_NODE_OBJECT:
      {
        JsonObject *o = json_node_get_object (node);
        JsonObjectIter it;
        const char *key;
        JsonNode *member;

        json_object_iter_init (&it, o);
        while (json_object_iter_next (&it, &key, &member))
          {
            g_autofree char *sub = NULL;
            char *bad;

            if (!g_utf8_validate (key, -1, NULL))
              return g_strdup_printf (_("a key in %s"), *path ? path : "(top level)");
            sub = *path ? g_strdup_printf ("%s.%s", path, key) : g_strdup (key);
            if ((bad = find_bad_utf8 (member, sub)) != NULL)
              return bad;
          }
        return NULL;
      }
    case JSON_NODE_NULL:
    default:
      return NULL;
    }
}

/* json-glib reports "<data>:LINE:COL: Parse error: …"; keep its position and
 * name the source instead. */
static void
set_parse_error (GError **error, const char *source, const GError *json_error)
{
  const char *msg = json_error->message;

  if (g_str_has_prefix (msg, "<data>:"))
    msg += strlen ("<data>:");
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE, _("%s:%s"), source, msg);
}

JsonParser *
_airy_json_parse (const char *data,
                  gsize       length,
                  const char *source,
                  GError    **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local = NULL;
  g_auto(Scan) scan = { 0 };
  guint line, column, first_line, first_column;

  g_return_val_if_fail (data != NULL && source != NULL, NULL);

  /* json-glib recurses per level: a file nested 100 000 deep would take it
   * down with a stack overflow, so the nesting is measured first; and it
   * builds its whole tree before anyone can count */
  scan_text (data, length, &scan);
  if (scan.max_depth > AIRY_JSON_MAX_DEPTH)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE,
                   _("%s: arrays and objects nested %u levels deep, more than the limit of %u"),
                   source, scan.max_depth, AIRY_JSON_MAX_DEPTH);
      return NULL;
    }
  if (scan.many_path != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE,
                   _("%s: more than %u values (numbers, strings, arrays and objects), the limit for a "
                     "system file, reached at %s"), source, AIRY_JSON_MAX_VALUES, scan.many_path);
      return NULL;
    }
  if (!json_parser_load_from_data (parser, data, length, &local))
    {
      set_parse_error (error, source, local);
      return NULL;
    }
  /* what json-glib reads without a word: the first of two values, the
   * last of two equal keys, numbers it cannot hold */
  if (scan.after != 0)
    {
      line_column (data, scan.after, &line, &column);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE,
                   _("%s:%u:%u: text after the end of the JSON value (at byte %lu); "
                     "a system file holds one object"), source, line, column, (unsigned long) scan.after);
      return NULL;
    }
  if (scan.twice_path != NULL)
    {
      line_column (data, scan.twice_at, &line, &column);
      line_column (data, scan.twice_first, &first_line, &first_column);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE,
                   _("%s:%u:%u: %s: the key is given twice in one object (first at %u:%u); give it once"),
                   source, line, column, scan.twice_path, first_line, first_column);
      return NULL;
    }
  {
    JsonNode *root = json_parser_get_root (parser);
    g_autofree char *bad = root ? find_bad_utf8 (root, "") : NULL;

    if (bad != NULL)
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE,
                     _("%s: %s: not UTF-8 text (an unpaired \\u surrogate escape, such as \\udc00?)"),
                     source, bad);
        return NULL;
      }
  }
  if (scan.bad_integer)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: must be an integer in [-9223372036854775808, 9223372036854775807], got %s"),
                   scan.bad_path, scan.bad_text);
      return NULL;
    }
  if (scan.bad_text != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: must be a finite number, got %s"), scan.bad_path, scan.bad_text);
      return NULL;
    }
  return g_steal_pointer (&parser);
}

/* ---- reading ---- */


static void
set_too_large (GError **error, const char *path)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
               _("%s: larger than %u MiB, the limit for a system file"), path, AIRY_JSON_MAX_BYTES >> 20);
}

char *
_airy_json_read_file (const char *path,
                      gsize      *length,
                      GError    **error)
{
  g_autoptr(GByteArray) data = NULL;
  g_autoptr(GError) local = NULL;
  GStatBuf st;
  int fd, e;

  /* a system may come through a pipe (/dev/stdin) or a FIFO, never
   * from a folder or a disk */
  fd = _airy_input_open (path, TRUE, &local);
  if (fd < 0)
    {
      e = errno;
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("Failed to open file “%s”: %s"), path,
                     g_strerror (e));
      return NULL;
    }
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > (off_t) AIRY_JSON_MAX_BYTES)
    {
      close (fd);
      set_too_large (error, path);
      return NULL;
    }
  /* a FIFO or a device has no size: read until the end or one byte past the limit */
  data = g_byte_array_new ();
  for (;;)
    {
      guint8 buf[65536];
      gssize got = read (fd, buf, MIN (sizeof buf, AIRY_JSON_MAX_BYTES + 1 - data->len));

      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          e = errno;
          close (fd);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: cannot read: %s"), path, g_strerror (e));
          return NULL;
        }
      if (got == 0)
        break;
      g_byte_array_append (data, buf, got);
      if (data->len > AIRY_JSON_MAX_BYTES)
        {
          close (fd);
          set_too_large (error, path);
          return NULL;
        }
    }
  close (fd);
  *length = data->len;
  g_byte_array_append (data, (const guint8 *) "", 1);
  return (char *) g_byte_array_free (g_steal_pointer (&data), FALSE);
}

char *
_airy_json_read_text (const char *path,
                      gsize      *length,
                      GError    **error)
{
  g_autofree char *data = _airy_json_read_file (path, length, error);

  if (data != NULL && !g_utf8_validate (data, *length, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE, _("%s: not UTF-8 text"), path);
      return NULL;
    }
  return g_steal_pointer (&data);
}

JsonParser *
_airy_json_parse_file (const char *path,
                       GError    **error)
{
  g_autofree char *data = NULL;
  gsize length;

  data = _airy_json_read_text (path, &length, error);
  if (data == NULL)
    return NULL;
  return _airy_json_parse (data, length, path, error);
}

/* ---- writing ---- */

const char *
_airy_shortest_double (char   buf[G_ASCII_DTOSTR_BUF_SIZE],
                       double v)
{
  static const char *const formats[] = { "%.15g", "%.16g", "%.17g" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_ascii_formatd (buf, G_ASCII_DTOSTR_BUF_SIZE, formats[i], v);
      if (g_ascii_strtod (buf, NULL) == v)
        break;
    }
  return buf;
}

void
_airy_json_append_double (GString *out,
                          double   v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_return_if_fail (isfinite (v));
  _airy_shortest_double (buf, v);
  g_string_append (out, buf);
  if (buf[strspn (buf, "-0123456789")] == '\0')
    g_string_append (out, ".0");
}

/* JSON string escapes (RFC 8259 §7): quote, backslash and every control
 * character; UTF-8 passes through. */
static void
append_string (GString *out, const char *s)
{
  g_string_append_c (out, '"');
  for (; *s; s++)
    {
      guchar c = *s;

      switch (c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_c (out, c);
        }
    }
  g_string_append_c (out, '"');
}

static void
indent (GString *out, guint level)
{
  g_string_append_printf (out, "%*s", (int) (2 * level), "");
}

static void
write_node (GString *out, JsonNode *node, guint level, GString *path, GError **error)
{
  gsize path_len = path->len;

  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_NULL:
      g_string_append (out, "null");
      break;

    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:
          g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          {
            double v = json_node_get_double (node);

            if (isfinite (v))
              _airy_json_append_double (out, v);
            else
              {
                /* JSON has no inf or nan: null keeps the text valid */
                g_string_append (out, "null");
                if (error && *error == NULL)
                  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                               _("%s: not a finite number (%g); it cannot be written as JSON"),
                               path->len ? path->str : "(top level)", v);
              }
          }
          break;
        case G_TYPE_BOOLEAN:
          g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
          break;
        case G_TYPE_STRING:
          append_string (out, json_node_get_string (node));
          break;
        default:
          g_string_append (out, "null");
          break;
        }
      break;

    case JSON_NODE_ARRAY:
      {
        JsonArray *a = json_node_get_array (node);
        guint n = json_array_get_length (a), i;

        if (n == 0)
          {
            g_string_append (out, "[]");
            break;
          }
        g_string_append (out, "[\n");
        for (i = 0; i < n; i++)
          {
            g_string_append_printf (path, "[%u]", i);
            indent (out, level + 1);
            write_node (out, json_array_get_element (a, i), level + 1, path, error);
            g_string_append (out, i + 1 < n ? ",\n" : "\n");
            g_string_truncate (path, path_len);
          }
        indent (out, level);
        g_string_append_c (out, ']');
      }
      break;

    case JSON_NODE_OBJECT:
      {
        JsonObject *o = json_node_get_object (node);
        g_autoptr(GList) members = json_object_get_members (o);
        GList *m;

        if (members == NULL)
          {
            g_string_append (out, "{}");
            break;
          }
        g_string_append (out, "{\n");
        for (m = members; m; m = m->next)
          {
            g_string_append_printf (path, "%s%s", path->len ? "." : "", (const char *) m->data);
            indent (out, level + 1);
            append_string (out, m->data);
            g_string_append (out, " : ");
            write_node (out, json_object_get_member (o, m->data), level + 1, path, error);
            g_string_append (out, m->next ? ",\n" : "\n");
            g_string_truncate (path, path_len);
          }
        indent (out, level);
        g_string_append_c (out, '}');
      }
      break;

    default:
      g_assert_not_reached ();
    }
}

char *
_airy_json_to_string (JsonNode *root,
                      GError  **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) path = g_string_new (NULL);

  write_node (out, root, 0, path, error);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* the node at a path like elements[1].zernike-coefficients[0], or NULL */
static JsonNode *
find_node (JsonNode *root, const char *path)
{
  g_auto(GStrv) keys = g_strsplit (path, ".", -1);
  JsonNode *node = root;
  guint i;

  for (i = 0; keys[i] && node; i++)
    {
      char *key = keys[i], *bracket = strchr (key, '[');
      g_autofree char *name = g_strndup (key, bracket ? (gsize) (bracket - key) : strlen (key));

      if (*name)
        node = JSON_NODE_HOLDS_OBJECT (node) ? json_object_get_member (json_node_get_object (node), name) : NULL;
      while (node && bracket)
        {
          char *end;
          guint64 k = g_ascii_strtoull (bracket + 1, &end, 10);

          if (end == bracket + 1 || *end != ']' || !JSON_NODE_HOLDS_ARRAY (node)
              || k >= json_array_get_length (json_node_get_array (node)))
            node = NULL;
          else
            node = json_array_get_element (json_node_get_array (node), (guint) k);
          bracket = node && end[1] == '[' ? end + 1 : NULL;
          if (node && end[1] != '\0' && end[1] != '[')
            node = NULL;
        }
    }
  return node;
}

/* The number at a path like elements[1].zernike-coefficients[0] in a system
 * file's JSON (the sweep's and the gradient's paths), or NULL when there is
 * none there. */
JsonNode *
_airy_json_find_number (JsonNode *root, const char *path)
{
  JsonNode *node = find_node (root, path);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || (json_node_get_value_type (node) != G_TYPE_DOUBLE && json_node_get_value_type (node) != G_TYPE_INT64))
    return NULL;
  return node;
}

JsonNode *
_airy_json_find_array (JsonNode *root, const char *path)
{
  JsonNode *node = find_node (root, path);
  JsonArray *a = node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
  guint i;

  for (i = 0; a && i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);

      if (!JSON_NODE_HOLDS_VALUE (e)
          || (json_node_get_value_type (e) != G_TYPE_DOUBLE && json_node_get_value_type (e) != G_TYPE_INT64))
        return NULL;
    }
  return a && json_array_get_length (a) > 0 ? node : NULL;
}

