#define G_LOG_DOMAIN "airy-modality"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-modality.h"
#include "airy-error.h"
#include "airy-param.h"

/* The registry: the built-in ones first, then those registered at run time
 * (a test's), in registration order. */
static GPtrArray *registry;
G_LOCK_DEFINE_STATIC (registry);

static GPtrArray *
get_registry (void)
{
  G_LOCK (registry);
  if (registry == NULL)
    {
      registry = g_ptr_array_new ();
      g_ptr_array_add (registry, (gpointer) &_airy_modality_psf);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_imaging);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_confocal);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_two_photon);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_ism);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_sted);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_light_sheet);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_sim);
      g_ptr_array_add (registry, (gpointer) &_airy_modality_light_field);
    }
  G_UNLOCK (registry);
  return registry;
}

const AiryModality * const *
_airy_modality_list (guint *n)
{
  GPtrArray *r = get_registry ();

  if (n)
    *n = r->len;
  return (const AiryModality * const *) r->pdata;
}

const AiryModality *
_airy_modality_lookup (const char *name)
{
  GPtrArray *r = get_registry ();
  guint i;

  if (name == NULL)
    return NULL;
  for (i = 0; i < r->len; i++)
    if (g_str_equal (((const AiryModality *) g_ptr_array_index (r, i))->name, name))
      return g_ptr_array_index (r, i);
  return NULL;
}

gboolean
_airy_modality_register (const AiryModality *modality)
{
  g_return_val_if_fail (modality != NULL && modality->name != NULL && modality->chain != NULL, FALSE);

  if (_airy_modality_lookup (modality->name) != NULL)
    return FALSE;
  G_LOCK (registry);
  g_ptr_array_add (registry, (gpointer) modality);
  G_UNLOCK (registry);
  return TRUE;
}

char *
_airy_modality_names (void)
{
  g_autoptr(GString) s = g_string_new (NULL);
  guint n, i;
  const AiryModality * const *list = _airy_modality_list (&n);

  for (i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", list[i]->name);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

const AiryModality *
_airy_modality_of (AirySystem *system)
{
  return _airy_modality_lookup (airy_system_get_modality (system));
}

gboolean
_airy_modality_check (AirySystem *system,
                      const char *name,
                      GError    **error)
{
  const AiryModality *m;
  gboolean has_microscope = airy_system_get_objective (system) != NULL;

  if (name == NULL)
    return TRUE;
  m = _airy_modality_lookup (name);
  if (m == NULL)
    {
      g_autofree char *names = _airy_modality_names ();

      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: must be one of %s, got %s"), names, name);
      return FALSE;
    }
  if (m->needs_microscope && !has_microscope)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: %s needs a \"microscope\" object (the objective and the tube lens)"), name);
      return FALSE;
    }
  if (!m->needs_microscope && has_microscope)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("modality: %s takes no \"microscope\" object; remove it or say \"modality\": \"imaging\""),
                   name);
      return FALSE;
    }
  return TRUE;
}

gboolean
_airy_modality_one_image (const AiryModality *modality)
{
  return modality != NULL && modality->combine == AIRY_MODALITY_COMBINE_CONVOLVE;
}

gboolean
_airy_modality_combines (const AiryModality *modality,
                         AirySystem         *system)
{
  return modality != NULL
         && (modality->run != NULL || modality->combine_stacks != NULL
             || (modality->n_chains && modality->n_chains (system) > 1));
}

gboolean
_airy_modality_has_objective (const AiryModality *modality)
{
  return modality != NULL && modality->needs_microscope;
}

/* Which of the system's own fields apply in its modality: the tube lens to
 * one with a "microscope" object, the sample to one that images a sample,
 * and of the sample those of its kind. (Here, not in airy-system.c: the
 * system does not call the modalities.) */
gboolean
airy_system_param_relevant (AirySystem *self,
                            GParamSpec *pspec)
{
  const AiryModality *m;
  const char *path;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), TRUE);
  path = airy_param_spec_get_path (pspec);
  if (path == NULL)
    return TRUE;
  m = _airy_modality_of (self);
  if (g_str_has_prefix (path, "microscope."))
    return m != NULL && m->needs_microscope;
  if (!g_str_has_prefix (path, "sample."))
    return TRUE;
  if (m == NULL || !m->needs_sample)
    return FALSE;
  switch (airy_system_get_sample (self)->kind)
    {
    case AIRY_SAMPLE_CONSTANT:
      return g_str_equal (path, "sample.constant");
    case AIRY_SAMPLE_BEADS:
      return g_str_has_prefix (path, "sample.beads.");
    case AIRY_SAMPLE_FILE:
      return !g_str_equal (path, "sample.constant") && !g_str_has_prefix (path, "sample.beads.");
    default:
      return FALSE;
    }
}
