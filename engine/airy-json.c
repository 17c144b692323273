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
 * turns into inf (1e999) or wraps around (integers beyond 64 bits), and
 * files that never end (/dev/zero). And a writer whose numbers read back
 * exactly and stay short (json-glib prints %.17g: 0.53200000000000003). */

/* ---- scanning ---- */

typedef struct
{
  gboolean    object;
  guint       index;     /* arrays: the current element */
  const char *key;       /* objects: the current key, as written (NULL: none yet) */
  gsize       key_len;
} Frame;

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
            g_string_append_len (path, frames[i].key, frames[i].key_len);
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

/* One pass that respects strings (with their escapes) and json-glib's
 * C comments; it never fails: broken JSON is json-glib's to report. */
void
_airy_json_scan (const char   *data,
                 gsize         length,
                 AiryJsonScan *scan)
{
  Frame frames[AIRY_JSON_MAX_DEPTH];
  const char *p = data, *end = data + length;
  gboolean expect_key = FALSE;
  guint depth = 0;

  memset (scan, 0, sizeof *scan);
  while (p < end)
    {
      char c = *p;

      if (c == '"')
        {
          const char *s = ++p;

          while (p < end && *p != '"')
            p += (*p == '\\' && p + 1 < end) ? 2 : 1;
          if (expect_key && depth > 0 && depth <= AIRY_JSON_MAX_DEPTH)
            {
              frames[depth - 1].key = s;
              frames[depth - 1].key_len = MIN (p, end) - s;
            }
          expect_key = FALSE;
          p++;
        }
      else if (c == '/' && p + 1 < end && p[1] == '*')
        {
          const char *close = g_strstr_len (p + 2, end - p - 2, "*/");
          p = close ? close + 2 : end;
        }
      else if (c == '{' || c == '[')
        {
          depth++;
          scan->max_depth = MAX (scan->max_depth, depth);
          if (depth <= AIRY_JSON_MAX_DEPTH)
            frames[depth - 1] = (Frame) { c == '{', 0, NULL, 0 };
          expect_key = c == '{';
          p++;
        }
      else if (c == '}' || c == ']')
        {
          if (depth > 0)
            depth--;
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
          if (scan->bad_text == NULL && depth <= AIRY_JSON_MAX_DEPTH)
            {
              g_autofree char *text = g_strndup (s, p - s);
              gboolean integer;

              if (!number_fits (text, &integer))
                {
                  scan->bad_path = frame_path (frames, depth);
                  scan->bad_text = g_steal_pointer (&text);
                  scan->bad_integer = integer;
                }
            }
        }
      else
        p++;
    }
}

void
_airy_json_scan_clear (AiryJsonScan *scan)
{
  g_clear_pointer (&scan->bad_path, g_free);
  g_clear_pointer (&scan->bad_text, g_free);
}

void
_airy_json_set_number_error (const AiryJsonScan *scan,
                             GError            **error)
{
  if (scan->bad_integer)
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                 _("%s: must be an integer in [-9223372036854775808, 9223372036854775807], got %s"),
                 scan->bad_path, scan->bad_text);
  else
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                 _("%s: must be a finite number, got %s"), scan->bad_path, scan->bad_text);
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
  GStatBuf st;
  int fd, e;

  _airy_file_io_note (path);
  fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    {
      e = errno;
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
