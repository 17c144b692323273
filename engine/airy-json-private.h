#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Limits of a system file: far above any real one (the deepest Airy writes
 * is 4 levels, the largest a few kB), far below what breaks json-glib, which
 * recurses once per level and reads everything it is given. */
#define AIRY_JSON_MAX_DEPTH 64
#define AIRY_JSON_MAX_BYTES (16u << 20)

/* What a scan of the raw text finds before json-glib sees it. */
typedef struct
{
  guint    max_depth;    /* deepest nesting of arrays and objects */
  char    *bad_path;     /* first number json-glib cannot hold (NULL: none): its JSON path */
  char    *bad_text;     /* … and its text as written */
  gboolean bad_integer;  /* an integer beyond 64 bits (else a double that overflows) */
} AiryJsonScan;

void      _airy_json_scan             (const char   *data,
                                       gsize         length,
                                       AiryJsonScan *scan);
void      _airy_json_scan_clear       (AiryJsonScan *scan);
/* The error for scan->bad_*, for after a successful parse. */
void      _airy_json_set_number_error (const AiryJsonScan *scan,
                                       GError            **error);

/* Reads at most AIRY_JSON_MAX_BYTES from a regular file, a FIFO or a device. */
char     *_airy_json_read_file        (const char   *path,
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

G_END_DECLS
