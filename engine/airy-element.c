#define G_LOG_DOMAIN "airy-element"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <string.h>

#include "airy-element.h"
#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-param-private.h"

/* Element parameters live in one generic store keyed by property name, so an
 * element class only declares its GParamSpecs (airy-param.h): the panel, the
 * JSON reader and writer (airy-element-json.c) and the validation all read
 * the same declarations (DESIGN §4). */

typedef struct
{
  GHashTable *values;    /* const char* (pspec name, interned) → GValue* */
  char       *base_dir;  /* where relative file names are resolved */
} AiryElementPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AiryElement, airy_element, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ENABLED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static GMutex      registry_lock;
static GHashTable *registry;   /* type name → GType */
static GArray     *registry_order;

static void
value_free (gpointer p)
{
  GValue *v = p;

  g_value_unset (v);
  g_free (v);
}

static void
airy_element_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  AiryElement *self = AIRY_ELEMENT (object);
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GValue *old = g_hash_table_lookup (priv->values, pspec->name);
  GValue *copy;

  /* GObject keeps doubles in their (finite) range; arrays are ours to check */
  if (G_VALUE_HOLDS_VARIANT (value)
      && !_airy_param_array_acceptable (pspec, value, airy_element_get_type_name (self)))
    return;
  if (old != NULL && g_param_values_cmp (pspec, old, value) == 0)
    return;
  if (old == NULL)
    {
      g_auto(GValue) def = G_VALUE_INIT;

      g_value_init (&def, pspec->value_type);
      g_param_value_set_default (pspec, &def);
      if (g_param_values_cmp (pspec, &def, value) == 0)
        return;
    }
  copy = g_new0 (GValue, 1);
  g_value_init (copy, pspec->value_type);
  g_value_copy (value, copy);
  g_hash_table_replace (priv->values, (gpointer) pspec->name, copy);
  g_object_notify_by_pspec (object, pspec);
}

static void
airy_element_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AiryElement *self = AIRY_ELEMENT (object);
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GValue *stored = g_hash_table_lookup (priv->values, pspec->name);

  if (stored != NULL)
    g_value_copy (stored, value);
  else
    g_param_value_set_default (pspec, value);
}

static gboolean
airy_element_real_check (AiryElement *self,
                         AiryContext *context,
                         GError     **error)
{
  return TRUE;
}

static void
airy_element_finalize (GObject *object)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (AIRY_ELEMENT (object));

  g_clear_pointer (&priv->values, g_hash_table_unref);
  g_clear_pointer (&priv->base_dir, g_free);
  G_OBJECT_CLASS (airy_element_parent_class)->finalize (object);
}

static void
airy_element_class_init (AiryElementClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = airy_element_set_property;
  object_class->get_property = airy_element_get_property;
  object_class->finalize = airy_element_finalize;
  klass->check = airy_element_real_check;

  properties[PROP_ENABLED] =
    airy_param_spec_boolean ("enabled", N_("Enabled"), N_("Whether the element takes part in the run"), TRUE);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
airy_element_init (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);

  priv->values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, value_free);
}

/* GObject does not inherit get/set_property into subclasses: every element
 * class installs its parameters through here, onto the generic store. The
 * store goes by name, so the id only has to be new in the class: one more
 * than the properties it has, inherited ones included. */
void
airy_element_class_install_property (GObjectClass *object_class,
                                     GParamSpec   *pspec)
{
  g_autofree GParamSpec **installed = NULL;
  guint n;

  g_return_if_fail (g_type_is_a (G_TYPE_FROM_CLASS (object_class), AIRY_TYPE_ELEMENT));

  object_class->set_property = airy_element_set_property;
  object_class->get_property = airy_element_get_property;
  installed = g_object_class_list_properties (object_class, &n);
  g_object_class_install_property (object_class, n + 1, pspec);
}

void
airy_element_class_set_metadata (AiryElementClass *klass,
                                 const char       *type_name,
                                 const char       *title,
                                 AiryCategory      category)
{
  klass->type_name = type_name;
  klass->title = title;
  klass->category = category;
}

const char *
airy_element_get_type_name (AiryElement *self)
{
  g_return_val_if_fail (AIRY_IS_ELEMENT (self), NULL);
  return AIRY_ELEMENT_GET_CLASS (self)->type_name;
}

gboolean
airy_element_get_enabled (AiryElement *self)
{
  return airy_element_get_boolean (self, "enabled");
}

void
airy_element_set_enabled (AiryElement *self,
                          gboolean     enabled)
{
  g_object_set (self, "enabled", enabled, NULL);
}

/* ---- typed access ---- */

static const GValue *
lookup_value (AiryElement *self, const char *name, GType type)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), name);
  const GValue *v;

  g_return_val_if_fail (pspec != NULL, NULL);
  g_return_val_if_fail (g_type_is_a (pspec->value_type, type), NULL);
  v = g_hash_table_lookup (priv->values, pspec->name);
  if (v == NULL)
    v = g_param_spec_get_default_value (pspec);
  return v;
}

double
airy_element_get_double (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_DOUBLE);
  return v ? g_value_get_double (v) : 0.0;
}

int
airy_element_get_int (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_INT);
  return v ? g_value_get_int (v) : 0;
}

gboolean
airy_element_get_boolean (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_BOOLEAN);
  return v ? g_value_get_boolean (v) : FALSE;
}

int
airy_element_get_enum (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_ENUM);
  return v ? g_value_get_enum (v) : 0;
}

const char *
airy_element_get_string (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_STRING);
  return v ? g_value_get_string (v) : NULL;
}

const double *
airy_element_get_doubles (AiryElement *self, const char *name, gsize *n)
{
  const GValue *v = lookup_value (self, name, G_TYPE_VARIANT);

  *n = 0;
  return v ? _airy_value_get_doubles (v, n) : NULL;
}

gboolean
airy_element_is_set (AiryElement *self, const char *name)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), name);

  return pspec != NULL && g_hash_table_contains (priv->values, pspec->name);
}

gboolean
airy_element_param_relevant (AiryElement *self,
                             GParamSpec  *pspec)
{
  AiryElementClass *klass;

  g_return_val_if_fail (AIRY_IS_ELEMENT (self), TRUE);
  klass = AIRY_ELEMENT_GET_CLASS (self);
  return klass->param_relevant == NULL || klass->param_relevant (self, pspec);
}

gboolean
airy_element_check (AiryElement *self,
                    AiryContext *context,
                    GError     **error)
{
  g_return_val_if_fail (AIRY_IS_ELEMENT (self), FALSE);
  return AIRY_ELEMENT_GET_CLASS (self)->check (self, context, error);
}

AiryElement *
airy_element_copy (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  AiryElement *copy = g_object_new (G_OBJECT_TYPE (self), NULL);
  AiryElementPrivate *cpriv = airy_element_get_instance_private (copy);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, priv->values);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GValue *v = g_new0 (GValue, 1);

      g_value_init (v, G_VALUE_TYPE ((GValue *) value));
      g_value_copy (value, v);
      g_hash_table_replace (cpriv->values, key, v);
    }
  cpriv->base_dir = g_strdup (priv->base_dir);
  return copy;
}

/* ---- registry ---- */

void
airy_element_register (GType type)
{
  g_autoptr(GTypeClass) klass = NULL;
  const char *name;

  g_return_if_fail (g_type_is_a (type, AIRY_TYPE_ELEMENT));
  klass = g_type_class_ref (type);
  name = ((AiryElementClass *) klass)->type_name;
  g_return_if_fail (name != NULL);

  g_mutex_lock (&registry_lock);
  if (registry == NULL)
    {
      registry = g_hash_table_new (g_str_hash, g_str_equal);
      registry_order = g_array_new (FALSE, FALSE, sizeof (GType));
    }
  if (!g_hash_table_contains (registry, name))
    {
      g_hash_table_insert (registry, (gpointer) name, GSIZE_TO_POINTER (type));
      g_array_append_val (registry_order, type);
    }
  g_mutex_unlock (&registry_lock);
}

GType
airy_element_lookup (const char *type_name)
{
  GType type = G_TYPE_INVALID;

  g_mutex_lock (&registry_lock);
  if (registry != NULL)
    type = GPOINTER_TO_SIZE (g_hash_table_lookup (registry, type_name));
  g_mutex_unlock (&registry_lock);
  return type;
}

GType *
airy_element_list_types (guint *n)
{
  GType *types;

  g_mutex_lock (&registry_lock);
  *n = registry_order ? registry_order->len : 0;
  types = g_new0 (GType, *n + 1);
  if (*n)
    memcpy (types, registry_order->data, sizeof (GType) * *n);
  g_mutex_unlock (&registry_lock);
  return types;
}

AiryElement *
airy_element_new (const char *type_name,
                  GError    **error)
{
  GType type = airy_element_lookup (type_name);

  if (type == G_TYPE_INVALID)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_TYPE,
                   _("unknown element type \"%s\""), type_name);
      return NULL;
    }
  return g_object_new (type, NULL);
}

const char *
_airy_element_get_base_dir (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  return priv->base_dir;
}

void
_airy_element_set_base_dir (AiryElement *self,
                            const char  *base_dir)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  char *copy = g_strdup (base_dir);

  g_free (priv->base_dir);
  priv->base_dir = copy;
}

/* ---- context ---- */

void
airy_context_init (AiryContext        *context,
                   const AirySpectrum *spectrum,
                   guint               height,
                   guint               width,
                   const double       *spacing)
{
  guint l;

  memset (context, 0, sizeof *context);
  context->spectrum = spectrum;
  context->height = height;
  context->width = width;
  context->dy = g_new (double, spectrum->n);
  context->dx = g_new (double, spectrum->n);
  for (l = 0; l < spectrum->n; l++)
    context->dy[l] = context->dx[l] = spacing[l];
  context->n = 1.0;
}

void
airy_context_clear (AiryContext *context)
{
  g_clear_pointer (&context->dy, g_free);
  g_clear_pointer (&context->dx, g_free);
}

void
airy_context_copy (AiryContext       *dst,
                   const AiryContext *src)
{
  *dst = *src;
  dst->dy = g_memdup2 (src->dy, sizeof (double) * src->spectrum->n);
  dst->dx = g_memdup2 (src->dx, sizeof (double) * src->spectrum->n);
}

void
airy_context_warn (AiryContext *context,
                   const char  *format,
                   ...)
{
  va_list args;
  char *msg;

  if (context->warnings == NULL)
    return;
  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_ptr_array_add (context->warnings, msg);
}
