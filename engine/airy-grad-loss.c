#define G_LOG_DOMAIN "airy-grad"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-error.h"
#include "airy-grad-private.h"
#include "airy-image-file.h"

/* ---- losses ---- */

AiryLoss *
_airy_loss_new_from_spec (const char *spec, GError **error)
{
  static const char *const names[] = { "l2", "poisson", "region", "crlb" };
  const char *colon = spec ? strchr (spec, ':') : NULL;
  g_autoptr(AiryLoss) loss = g_new0 (AiryLoss, 1);
  guint i;

  for (i = 0; colon && i < G_N_ELEMENTS (names); i++)
    if (strlen (names[i]) == (gsize) (colon - spec) && strncmp (spec, names[i], colon - spec) == 0)
      break;
  if (colon == NULL || i == G_N_ELEMENTS (names) || colon[1] == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--loss: must be one of l2:TARGET.tif, poisson:COUNTS.tif, region:MASK.tif, "
                     "crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND[:AXES], got \"%s\""),
                   spec ? spec : "");
      return NULL;
    }
  loss->kind = (AiryLossKind) i;
  if (loss->kind == AIRY_LOSS_CRLB)
    return _airy_loss_crlb_parse (loss, colon + 1, error) ? g_steal_pointer (&loss) : NULL;
  loss->file = g_strdup (colon + 1);
  if ((loss->target = airy_tiff_read (loss->file, error)) == NULL)
    return NULL;
  return g_steal_pointer (&loss);
}

void
_airy_loss_free (AiryLoss *loss)
{
  if (loss == NULL)
    return;
  g_free (loss->file);
  g_clear_pointer (&loss->target, airy_stack_free);
  g_free (loss);
}

gboolean
_airy_loss_check_shape (const AiryLoss *loss, const AiryStack *result, GError **error)
{
  const AiryStack *t = loss->target;

  if (loss->kind == AIRY_LOSS_CRLB)
    return _airy_loss_crlb_check (loss, result, error);
  if (t->depth == result->depth && t->height == result->height && t->width == result->width)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("--loss: %s is %u × %u × %u (planes × rows × columns), the system gives %u × %u × %u"), loss->file,
               t->depth, t->height, t->width, result->depth, result->height, result->width);
  return FALSE;
}

double
_airy_loss_eval (const AiryLoss *loss, const AiryStack *result, float *bar)
{
  gsize n = (gsize) result->depth * airy_stack_plane_size (result), k;
  const float *R = result->data, *T = loss->target ? loss->target->data : NULL;
  double sum = 0.0, total = 0.0, inside = 0.0;

  switch (loss->kind)
    {
    case AIRY_LOSS_L2:
      for (k = 0; k < n; k++)
        {
          double d = (double) R[k] - T[k];

          sum += d * d;
          if (bar)
            bar[k] = (float) (2.0 * d / n);
        }
      return sum / n;
    case AIRY_LOSS_POISSON:
      for (k = 0; k < n; k++)
        {
          double m = MAX ((double) R[k], 1e-12);

          sum += m - T[k] * log (m);
          if (bar)
            bar[k] = (float) ((1.0 - T[k] / m) / n);
        }
      return sum / n;
    case AIRY_LOSS_REGION:
      for (k = 0; k < n; k++)
        {
          total += R[k];
          inside += T[k] > 0.5f ? R[k] : 0.0;
        }
      for (k = 0; bar && k < n; k++)
        bar[k] = (float) (-((T[k] > 0.5f ? 1.0 : 0.0) * total - inside) / (total * total));
      return -inside / total;
    case AIRY_LOSS_CRLB:
      return _airy_loss_crlb_eval (loss, result, bar);
    }
  return NAN;
}
