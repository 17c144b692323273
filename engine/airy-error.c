#define G_LOG_DOMAIN "airy-error"

#include "config.h"

#include "airy-error.h"

G_DEFINE_QUARK (airy-error-quark, airy_error)

/* Bad input is the user's to fix (exit status 2 in airy-sim); the rest are run failures. */
gboolean
airy_error_is_bad_input (const GError *error)
{
  if (error == NULL || error->domain != AIRY_ERROR)
    return FALSE;

  switch ((AiryError) error->code)
    {
    case AIRY_ERROR_INVALID_VALUE:
    case AIRY_ERROR_PARSE:
    case AIRY_ERROR_UNKNOWN_KEY:
    case AIRY_ERROR_UNKNOWN_TYPE:
    case AIRY_ERROR_WRONG_TYPE:
    case AIRY_ERROR_FILE:
    case AIRY_ERROR_BUDGET:
      return TRUE;
    case AIRY_ERROR_NO_DEVICE:
    case AIRY_ERROR_BACKEND:
    case AIRY_ERROR_MODULE:
    case AIRY_ERROR_WRITE:
    case AIRY_ERROR_NOT_FINITE:
    default:
      return FALSE;
    }
}
