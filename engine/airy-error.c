#define G_LOG_DOMAIN "airy-error"

#include "config.h"

#include "airy-error.h"

#include <string.h>

/* An extended domain (GLib 2.68): an error about a number out of its range
 * carries the range and the value beside its message, so that a caller
 * words it in its own language (the panel) without reading the text. */
typedef struct
{
  gboolean has_range;
  AiryErrorRange range;
} AiryErrorPrivate;

static GQuark airy_error_domain;

/* the private data lies just before the GError, aligned as GLib's
 * allocator does (two gsize) */
static AiryErrorPrivate *
get_private (const GError *error)
{
  const gsize align = 2 * sizeof (gsize);
  const gsize size = (sizeof (AiryErrorPrivate) + align - 1) & ~(align - 1);

  return (AiryErrorPrivate *) (((guint8 *) error) - size);
}

static void
private_init (GError *error)
{
  memset (get_private (error), 0, sizeof (AiryErrorPrivate));
}

static void
private_clear (GError *error)
{
  AiryErrorPrivate *priv = get_private (error);

  g_clear_pointer ((char **) &priv->range.unit, g_free);
  g_clear_pointer ((char **) &priv->range.maximum_name, g_free);
  priv->has_range = FALSE;
}

static void
private_copy (const GError *src, GError *dest)
{
  const AiryErrorPrivate *from = get_private (src);

  if (from->has_range)
    airy_error_set_range ((GError *) dest, &from->range);
}

GQuark
airy_error_quark (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
    {
      airy_error_domain = g_error_domain_register_static ("airy-error-quark", sizeof (AiryErrorPrivate),
                                                          private_init, private_copy, private_clear);
      g_once_init_leave (&done, 1);
    }
  return airy_error_domain;
}

void
airy_error_set_range (GError               *error,
                      const AiryErrorRange *range)
{
  AiryErrorPrivate *priv;

  if (error == NULL)
    return;
  g_return_if_fail (error->domain == AIRY_ERROR && range != NULL);
  priv = get_private (error);
  private_clear (error);
  priv->range = *range;
  priv->range.unit = g_strdup (range->unit);
  priv->range.maximum_name = g_strdup (range->maximum_name);
  priv->has_range = TRUE;
}

const AiryErrorRange *
airy_error_get_range (const GError *error)
{
  if (error == NULL || error->domain != AIRY_ERROR || !get_private (error)->has_range)
    return NULL;
  return &get_private (error)->range;
}

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
