#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Parameters are GParamSpecs with a range, a default, a unit and the facts
 * below attached: declared once, they drive the JSON reader and writer, the
 * validation, the JSON Schema, `airy-sim info` and the bench panel, for the
 * elements' parameters and for the system's own fields alike (DESIGN §4). */

/* Extra facts about a parameter, attached to its GParamSpec. */
typedef enum
{
  AIRY_PARAM_EXCLUSIVE_MIN = 1 << 0,  /* the range is (min, max] */
  AIRY_PARAM_NEEDS_PLAN    = 1 << 1,  /* changing it needs a new plan (shape) */
  AIRY_PARAM_PHASE         = 1 << 2,  /* a phase in rad: a slider in the panel */
  AIRY_PARAM_FILE          = 1 << 3,  /* a file name: a file chooser */
  AIRY_PARAM_SELECTS       = 1 << 4,  /* its value changes which parameters apply
                                       * (AiryElementClass.param_relevant) */
  AIRY_PARAM_INTEGER       = 1 << 5,  /* an array of whole numbers (indices) */
  AIRY_PARAM_NOT_DIFFERENTIABLE = 1 << 6,  /* a double (or array) the gradient does not follow
                                       * (a step in the grid, a count given as a number) */
} AiryParamFlags;

/* The constructors: name, nick and blurb (marked N_() for translation,
 * the panel shows them), then the range, the default and the flags. */
GParamSpec    *airy_param_spec_double       (const char *name, const char *nick, const char *blurb,
                                             const char *unit, double minimum, double maximum,
                                             double default_value, AiryParamFlags flags);
GParamSpec    *airy_param_spec_int          (const char *name, const char *nick, const char *blurb,
                                             int minimum, int maximum, int default_value,
                                             AiryParamFlags flags);
GParamSpec    *airy_param_spec_boolean      (const char *name, const char *nick, const char *blurb,
                                             gboolean default_value);
GParamSpec    *airy_param_spec_enum         (const char *name, const char *nick, const char *blurb,
                                             GType enum_type, int default_value, AiryParamFlags flags);
GParamSpec    *airy_param_spec_string       (const char *name, const char *nick, const char *blurb,
                                             AiryParamFlags flags);
/* An array of doubles (GVariant "ad"), empty by default; any finite entries. */
GParamSpec    *airy_param_spec_doubles      (const char *name, const char *nick, const char *blurb,
                                             const char *unit);
/* An array of doubles whose entries lie in [minimum, maximum] (or (minimum,
 * maximum] with AIRY_PARAM_EXCLUSIVE_MIN); maximum may be G_MAXDOUBLE for
 * "no upper bound". */
GParamSpec    *airy_param_spec_double_array (const char *name, const char *nick, const char *blurb,
                                             const char *unit, double minimum, double maximum,
                                             AiryParamFlags flags);

/* Facts for declarations that the constructors above do not take: a unit
 * for a count ("px"), and the place of a field in the system file when it
 * is not "<element>.<name>" ("grid.shape[0]"). Both strings are static;
 * both return pspec, for use inside a declaration. */
GParamSpec    *airy_param_spec_set_unit     (GParamSpec    *pspec,
                                             const char    *unit);
GParamSpec    *airy_param_spec_set_path     (GParamSpec    *pspec,
                                             const char    *path);
/* The most entries an array may have (checked with its entries, "maxItems"
 * in the schema); returns pspec. */
GParamSpec    *airy_param_spec_set_max_items (GParamSpec   *pspec,
                                              guint         max_items);

const char    *airy_param_spec_get_unit     (GParamSpec    *pspec);
const char    *airy_param_spec_get_path     (GParamSpec    *pspec);
AiryParamFlags airy_param_spec_get_flags    (GParamSpec    *pspec);
/* 0: no limit (and for anything but an array) */
guint          airy_param_spec_get_max_items (GParamSpec   *pspec);
/* The range of an array's entries; FALSE for an array without one (and for
 * anything but an array). */
gboolean       airy_param_spec_get_item_range (GParamSpec  *pspec,
                                               double      *minimum,
                                               double      *maximum);
/* Whether the gradient (engine/airy-grad.c) follows the parameter: doubles
 * and arrays of doubles are differentiable unless declared
 * AIRY_PARAM_NOT_DIFFERENTIABLE; integers, enums, booleans, strings and
 * AIRY_PARAM_INTEGER arrays are not. why (may be NULL) gets the reason, a
 * static translated string, for a FALSE answer. */
gboolean       airy_param_spec_is_differentiable (GParamSpec *pspec,
                                                  const char **why);
/* "(0, 1e+06] µm", "[1, 65536]", "one of a, b": what the messages say. */
char          *airy_param_spec_range_string (GParamSpec    *pspec);

/* Checks a value against its spec; the message names the path, the allowed
 * range and the value, e.g. "elements[0].na: must be in (0, 4], got 7". */
gboolean       airy_param_check_value       (GParamSpec    *pspec,
                                             const GValue  *value,
                                             const char    *path,
                                             GError       **error);
/* The same for a number typed by a person for an int or double parameter:
 * TRUE if it lies in the range, else the same message as for a file. */
gboolean       airy_param_check_number      (GParamSpec    *pspec,
                                             double         number,
                                             const char    *path,
                                             GError       **error);

/* Reads a JSON value for the parameter into value (initialised here) and
 * checks it; errors carry the path. */
gboolean       airy_value_from_json         (GParamSpec    *pspec,
                                             JsonNode      *node,
                                             GValue        *value,
                                             const char    *path,
                                             GError       **error);

G_END_DECLS
