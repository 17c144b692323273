#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Limits of a system file: far above any real one (the deepest Airy writes
 * is 4 levels, the largest a few kB), far below what breaks json-glib, which
 * recurses once per level and reads everything it is given. */
#define AIRY_JSON_MAX_DEPTH 64
#define AIRY_JSON_MAX_BYTES (16u << 20)

/* The most values (numbers, strings, arrays, objects) a system file may
 * hold: a million z planes (z.values at z.count's limit) and 100 000 more.
 * json-glib's tree takes about 100 bytes a value. */
#define AIRY_JSON_MAX_VALUES 1100000u

/* The characters of user text (a key, a value) that messages echo. */
#define AIRY_JSON_CLIP 64

/* The one JSON value of the text, read by json-glib once a scan of the raw
 * text found none of what json-glib cannot be trusted with: nesting deeper
 * than AIRY_JSON_MAX_DEPTH, more than AIRY_JSON_MAX_VALUES values, a key
 * given twice in an object, text after the value (AIRY_ERROR_PARSE), a
 * number it cannot hold (AIRY_ERROR_INVALID_VALUE). Messages name source
 * and the JSON path or line:column. */
JsonParser *_airy_json_parse         (const char   *data,
                                      gsize         length,
                                      const char   *source,
                                      GError      **error);
/* _airy_json_read_text and _airy_json_parse */
JsonParser *_airy_json_parse_file    (const char   *path,
                                      GError      **error);

/* User text for a message: the text itself up to AIRY_JSON_CLIP
 * characters, else its first ones and "… (N bytes)". length -1: up to
 * the NUL. */
char       *_airy_json_clip          (const char   *text,
                                      gssize        length);

/* Reads at most AIRY_JSON_MAX_BYTES from a regular file, a FIFO or a device. */
char     *_airy_json_read_file        (const char   *path,
                                       gsize        *length,
                                       GError      **error);
/* … and checks that it is UTF-8 */
char     *_airy_json_read_text        (const char   *path,
                                       gsize        *length,
                                       GError      **error);

/* The shortest of %.15g, %.16g, %.17g that reads back to v (also for the
 * numbers of OME-XML). */
const char *_airy_shortest_double     (char          buf[G_ASCII_DTOSTR_BUF_SIZE],
                                       double        v);

/* _airy_shortest_double, with ".0" after an
 * integral value so that it stays a double. v must be finite. */
void      _airy_json_append_double    (GString      *out,
                                       double        v);

/* Pretty JSON in json-glib's layout (2 spaces), numbers as above. JSON has
 * no inf or nan: a non-finite double is written as null and sets error
 * (naming its path); the text returned is valid JSON either way. */
char     *_airy_json_to_string        (JsonNode     *root,
                                       GError      **error);

/* The number at a sweep-style path (elements[1].zernike-coefficients[0]),
 * or NULL when the JSON has none there. */
JsonNode *_airy_json_find_number (JsonNode   *root,
                                  const char *path);
/* The array of numbers (one at least) at such a path, or NULL. */
JsonNode *_airy_json_find_array  (JsonNode   *root,
                                  const char *path);

G_END_DECLS
