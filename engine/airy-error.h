#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define AIRY_ERROR (airy_error_quark ())

/**
 * AiryError:
 * @AIRY_ERROR_INVALID_VALUE: a parameter is outside its allowed range
 * @AIRY_ERROR_PARSE: a system file is not valid JSON
 * @AIRY_ERROR_UNKNOWN_KEY: a key the format does not know
 * @AIRY_ERROR_UNKNOWN_TYPE: an element or backend type nobody registered
 * @AIRY_ERROR_WRONG_TYPE: a JSON value of the wrong type
 * @AIRY_ERROR_FILE: a file is missing, unreadable, corrupt or unsupported
 * @AIRY_ERROR_BUDGET: a run would exceed the memory budget
 * @AIRY_ERROR_NO_DEVICE: the backend has no usable device
 * @AIRY_ERROR_BACKEND: the backend failed while running
 * @AIRY_ERROR_MODULE: a module could not be loaded
 * @AIRY_ERROR_WRITE: an output file could not be written
 * @AIRY_ERROR_NOT_FINITE: a run's result holds NaN or infinite values
 */
typedef enum
{
  AIRY_ERROR_INVALID_VALUE = 1,
  AIRY_ERROR_PARSE,
  AIRY_ERROR_UNKNOWN_KEY,
  AIRY_ERROR_UNKNOWN_TYPE,
  AIRY_ERROR_WRONG_TYPE,
  AIRY_ERROR_FILE,
  AIRY_ERROR_BUDGET,
  AIRY_ERROR_NO_DEVICE,
  AIRY_ERROR_BACKEND,
  AIRY_ERROR_MODULE,
  AIRY_ERROR_WRITE,
  AIRY_ERROR_NOT_FINITE,
} AiryError;

/**
 * AiryErrorRange:
 * @minimum: the smallest value allowed
 * @maximum: the largest (G_MAXDOUBLE: none)
 * @value: the value refused
 * @exclusive_minimum: @minimum itself is refused
 * @maximum_name: what @maximum is when it is another parameter ("n", the
 *   medium's index), or NULL
 * @unit: the unit of the three ("µm"), or NULL
 *
 * What an %AIRY_ERROR_INVALID_VALUE error about a number out of its range
 * says, as data: the message stays the engine's (with the JSON path, for
 * the CLI), a caller that says it in its own words reads this instead.
 */
typedef struct
{
  double      minimum;
  double      maximum;
  double      value;
  gboolean    exclusive_minimum;
  const char *maximum_name;
  const char *unit;
} AiryErrorRange;

GQuark                airy_error_quark        (void);
gboolean              airy_error_is_bad_input (const GError *error);
/* Attach @range to @error (an AIRY_ERROR; NULL: nothing), copied. */
void                  airy_error_set_range    (GError               *error,
                                               const AiryErrorRange *range);
/* The range @error carries, or NULL. */
const AiryErrorRange *airy_error_get_range    (const GError *error);

G_END_DECLS
