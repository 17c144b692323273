/* STED: the effective PSF of a point-scanning STED microscope,
 *
 *   h_eff = h_exc · exp (−ln 2 · ζ · I_dep / max I_dep),
 *
 * ζ = I_dep/I_sat the saturation factor (the depletion crest over the
 * saturation intensity), h_exc the excitation PSF (the system's source and
 * elements at its wavelength, the depletion-mask left out) and I_dep the
 * depletion PSF (the same chain at the depletion-mask's wavelength and
 * polarisation, shaped by its vortex or top-hat), normalised to its
 * maximum over the stack. The depletion chain's pupil spacing is scaled by
 * λ_dep/λ_exc, so both PSFs land on the same output grid. The result is
 * h_eff; asked for channels (spectrum.channels, --channels), it has three:
 * the effective, the excitation and the depletion PSF. */
#define G_LOG_DOMAIN "airy-modality-sted"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-modality.h"
#include "airy-error.h"

static gboolean
sted_require (AirySystem *system, int *at, GError **error)
{
  const AirySpectrum *spectrum = airy_system_get_spectrum (system);

  *at = _airy_modality_find_element (system, "depletion-mask");
  if (*at < 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: sted needs a \"depletion-mask\" element (the depletion beam's mask, wavelength "
                     "and saturation)"));
      return FALSE;
    }
  if (spectrum->n != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("spectrum.wavelengths: sted takes one excitation wavelength, got %u"), spectrum->n);
      return FALSE;
    }
  return TRUE;
}

/* The geometry: the excitation chain (the result's shape). */
static gboolean
sted_chain (AiryGeometry *geom, GError **error)
{
  int at;

  if (!sted_require (geom->system, &at, error))
    return FALSE;
  g_ptr_array_remove_index (airy_system_get_elements (geom->system), at);
  return _airy_modality_psf_chain (geom, error);
}

/* The excitation (depletion FALSE) or the depletion chain as a psf system. */
static AirySystem *
sted_chain_system (AirySystem *system, gboolean depletion, GError **error)
{
  AirySystem *sub = airy_system_copy (system);
  GPtrArray *elements = airy_system_get_elements (sub);
  int at;

  airy_system_set_modality (sub, "psf");
  if (!sted_require (sub, &at, error))
    {
      g_object_unref (sub);
      return NULL;
    }
  if (!depletion)
    g_ptr_array_remove_index (elements, at);
  else
    {
      AiryElement *mask = g_ptr_array_index (elements, at);
      AiryElement *source = g_ptr_array_index (elements, 0);
      double lambda_exc = airy_system_get_spectrum (sub)->wavelengths[0];
      double lambda_dep = airy_element_get_double (mask, "wavelength");
      g_autoptr(AirySpectrum) spectrum = airy_spectrum_new (&lambda_dep, NULL, 1, error);

      if (spectrum == NULL)
        {
          g_object_unref (sub);
          return NULL;
        }
      airy_system_set_spectrum (sub, spectrum);
      airy_system_set_spacing (sub, airy_system_get_spacing (sub) * lambda_dep / lambda_exc);
      if (g_object_class_find_property (G_OBJECT_GET_CLASS (source), "polarization") != NULL)
        g_object_set (source, "polarization", airy_element_get_enum (mask, "polarization"), NULL);
    }
  return sub;
}

/* e^x for x ≤ 0 in float, in a form the compiler vectorises (the loop
 * below was four fifths of a STED run with libm's expf): x·log2 e = n + f,
 * |f| ≤ ½, 2^f by its Taylor series to f⁶ (relative error below 2e-7),
 * 2^n by the exponent bits; below −87 (2^−126) it is 2^−126, which the
 * product with h_exc makes 0 in all but name. x = 0 gives 1 exactly. */
static inline float
sted_exp (float x)
{
  float t = MAX (x, -87.0f) * 1.44269504f, f, p;
  int n = (int) (t - 0.5f);
  union { guint32 u; float f; } scale;

  f = (t - (float) n) * 0.693147181f;
  p = 1.0f + f * (1.0f + f * (0.5f + f * (1.0f / 6 + f * (1.0f / 24 + f * (1.0f / 120 + f * (1.0f / 720))))));
  scale.u = (guint32) (n + 127) << 23;
  return p * scale.f;
}

typedef struct
{
  float       *exc;
  const float *dep;
  gsize        n;
  float        k;
} DepleteSpan;

static gpointer
deplete_span (gpointer data)
{
  DepleteSpan *d = data;
  gsize i;

  for (i = 0; i < d->n; i++)
    d->exc[i] *= sted_exp (d->k * d->dep[i]);
  return NULL;
}

/* h_exc ← h_exc · exp (−ln 2 · ζ · I_dep / max I_dep), in place, in spans
 * over the cores */
static void
sted_deplete (AiryStack *excitation, const AiryStack *depletion, double saturation)
{
  gsize n = (gsize) excitation->depth * excitation->height * excitation->width, per;
  guint n_spans = MIN (MAX (g_get_num_processors (), 1), 16), t;
  DepleteSpan spans[16];
  GThread *threads[16];
  float lo, hi, k;

  airy_stack_min_max (depletion, &lo, &hi);
  k = hi > 0.0f ? (float) (-G_LN2 * saturation / hi) : 0.0f;
  if (n < ((gsize) 1 << 18))
    n_spans = 1;
  per = (n + n_spans - 1) / n_spans;
  for (t = 0; t < n_spans; t++)
    {
      gsize first = MIN (n, t * per);

      spans[t] = (DepleteSpan) { excitation->data + first, depletion->data + first, MIN (per, n - first), k };
      threads[t] = t ? g_thread_new ("airy-sted", deplete_span, &spans[t]) : NULL;
    }
  deplete_span (&spans[0]);
  for (t = 1; t < n_spans; t++)
    g_thread_join (threads[t]);
}

static AiryResult *
sted_run (AirySystem *system, AiryModalityRunFunc run_chain, const AiryRunOptions *options,
          AiryProgressFunc progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  AiryRunOptions opts = _airy_modality_chain_options (options);
  g_autoptr(AirySystem) exc_sys = sted_chain_system (system, FALSE, error);
  g_autoptr(AirySystem) dep_sys = exc_sys ? sted_chain_system (system, TRUE, error) : NULL;
  g_autoptr(AiryResult) exc = NULL;
  g_autoptr(AiryResult) dep = NULL;
  AiryElement *mask;

  AiryModalityProgress whole = { progress, user_data, 0, 2 };
  AiryProgressFunc each = progress ? _airy_modality_progress : NULL;

  if (dep_sys == NULL)
    return NULL;
  mask = g_ptr_array_index (airy_system_get_elements (system), _airy_modality_find_element (system, "depletion-mask"));
  exc = run_chain (exc_sys, &opts, each, &whole, cancellable, error);
  whole.k = 1;
  dep = exc ? run_chain (dep_sys, &opts, each, &whole, cancellable, error) : NULL;
  if (dep == NULL)
    return NULL;
  if (exc->stack_is_part && exc->ranks > 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: sted normalises the depletion over the whole stack; run it in one process"));
      return NULL;
    }
  /* with channels (AiryRunOptions.per_wavelength, spectrum.channels):
   * effective, excitation, depletion */
  if (options && options->per_wavelength)
    {
      AiryStack **channels = g_new0 (AiryStack *, 3);

      channels[1] = airy_stack_copy (exc->stack);
      sted_deplete (exc->stack, dep->stack, airy_element_get_double (mask, "saturation"));
      channels[0] = airy_stack_copy (exc->stack);
      channels[2] = g_steal_pointer (&dep->stack);
      airy_stack_set_channel_name (channels[0], _("effective"));
      airy_stack_set_channel_name (channels[1], _("excitation"));
      /* TRANSLATORS: a channel of STED's result: the depletion beam's intensity */
      airy_stack_set_channel_name (channels[2], _("depletion"));
      return _airy_modality_result_new (exc, dep, _("depletion beam"), g_steal_pointer (&exc->stack), channels, 3,
                                        options);
    }
  sted_deplete (exc->stack, dep->stack, airy_element_get_double (mask, "saturation"));
  return _airy_modality_result_new (exc, dep, _("depletion beam"), g_steal_pointer (&exc->stack), NULL, 0, options);
}

const AiryModality _airy_modality_sted = {
  .name = "sted",
  .label = N_("STED"),
  .description = ("STED: the excitation PSF times exp(−ln 2 · I_dep/I_sat) of a depletion beam shaped by a vortex "
                  "or top-hat mask"),
  .needs_microscope = FALSE,
  .combine = AIRY_MODALITY_COMBINE_ONE,
  .chain = sted_chain,
  .schema_note = "a source first, then the elements with one depletion-mask; h_exc · exp(−ln 2 · ζ · I_dep/max I_dep)",
  .parts = (const char *const[]) { "{\"type\": \"depletion-mask\"}", NULL },
  .run = sted_run,
  .result_stacks = _airy_modality_pair_stacks,
};
