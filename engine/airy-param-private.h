#pragma once

#include "airy-param.h"

G_BEGIN_DECLS

/* "a number", "an object" …: what a JSON node holds, for messages. */
const char *_airy_json_kind          (JsonNode     *node);
gboolean    _airy_json_is_number     (JsonNode     *node);

/* A parameter's value as JSON (enums by nick, arrays of doubles as arrays). */
JsonNode   *_airy_value_to_json      (const GValue *value);
JsonNode   *_airy_param_value_to_json (GParamSpec   *pspec,
                                       const GValue *value);

/* One parameter as JSON Schema (draft 2020-12): title, description with
 * the unit, type, range (exclusive bounds and the entries of arrays too),
 * enumeration and default. */
JsonObject *_airy_param_spec_schema  (GParamSpec   *pspec);

/* GObject checks a double against its range but an array only for its
 * type: a setter refuses an array with a non-finite entry or one outside
 * the declared range the way GObject refuses a scalar, with a warning that
 * names owner.name. */
gboolean    _airy_param_array_acceptable (GParamSpec   *pspec,
                                          const GValue *value,
                                          const char   *owner);

/* The entries of an "ad" value, or NULL (and *n = 0) for none. */
const double *_airy_value_get_doubles (const GValue *value,
                                       gsize        *n);

G_END_DECLS
