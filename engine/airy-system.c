#define G_LOG_DOMAIN "airy-system"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "airy-system.h"
#include "airy-system-private.h"
#include "airy-error.h"
#include "airy-elements-private.h"
#include "airy-param-private.h"
#include "airy-run.h"

/* A system: grid, spectrum, z planes and either an ordered optical chain
 * (source first) or a microscope (objective + pupil-plane elements + tube
 * lens, a sample and a sensor). Its own fields are declared below like the
 * elements' parameters, each with its place in the file: the loader, the
 * writer, the schema and the panel read these declarations. JSON format:
 * DESIGN §6, README. */

G_DEFINE_FINAL_TYPE (AirySystem, airy_system, G_TYPE_OBJECT)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];
static GParamSpec *properties[AIRY_SYSTEM_N_PROPS];

#define SAMPLE_FIRST AIRY_SYSTEM_PROP_SAMPLE_CONSTANT
#define SAMPLE_LAST  AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE

static void
airy_system_finalize (GObject *object)
{
  AirySystem *self = AIRY_SYSTEM (object);

  g_free (self->name);
  g_free (self->description);
  g_free (self->schema);
  g_free (self->base_dir);
  g_free (self->modality);
  airy_spectrum_free (self->spectrum);
  g_array_unref (self->z);
  g_ptr_array_unref (self->elements);
  g_clear_object (&self->objective);
  g_clear_object (&self->sensor);
  g_free (self->sample.file);
  G_OBJECT_CLASS (airy_system_parent_class)->finalize (object);
}

static GVariant *
doubles_variant (const double *v, gsize n)
{
  return g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, v, n, sizeof (double));
}

static double
z_first (AirySystem *self)
{
  if (self->z_is_range)
    return self->z_start;
  return self->z->len ? g_array_index (self->z, double, 0) : 0.0;
}

static double
z_last (AirySystem *self)
{
  if (self->z_is_range)
    return self->z_stop;
  return self->z->len ? g_array_index (self->z, double, self->z->len - 1) : 0.0;
}

static void
airy_system_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  AirySystem *self = AIRY_SYSTEM (object);
  const AirySample *s = &self->sample;

  switch ((AirySystemProp) prop_id)
    {
    case AIRY_SYSTEM_PROP_HEIGHT: g_value_set_int (value, (int) self->height); break;
    case AIRY_SYSTEM_PROP_WIDTH: g_value_set_int (value, (int) self->width); break;
    case AIRY_SYSTEM_PROP_SPACING: g_value_set_double (value, self->spacing); break;
    case AIRY_SYSTEM_PROP_WAVELENGTHS:
      g_value_set_variant (value, doubles_variant (self->spectrum->wavelengths, self->spectrum->n));
      break;
    case AIRY_SYSTEM_PROP_WEIGHTS:
      g_value_set_variant (value, doubles_variant (self->spectrum->weights, self->spectrum->n));
      break;
    case AIRY_SYSTEM_PROP_CHANNELS: g_value_set_boolean (value, self->channels); break;
    case AIRY_SYSTEM_PROP_Z_START: g_value_set_double (value, z_first (self)); break;
    case AIRY_SYSTEM_PROP_Z_STOP: g_value_set_double (value, z_last (self)); break;
    case AIRY_SYSTEM_PROP_Z_COUNT: g_value_set_int (value, (int) self->z->len); break;
    case AIRY_SYSTEM_PROP_Z_VALUES:
      g_value_set_variant (value, doubles_variant ((const double *) self->z->data, self->z->len));
      break;
    case AIRY_SYSTEM_PROP_F_TUBE: g_value_set_double (value, self->f_tube); break;
    case AIRY_SYSTEM_PROP_SAMPLE_CONSTANT: g_value_set_double (value, s->value); break;
    case AIRY_SYSTEM_PROP_SAMPLE_FILE: g_value_set_string (value, s->file); break;
    case AIRY_SYSTEM_PROP_BEADS_COUNT: g_value_set_int (value, (int) s->count); break;
    case AIRY_SYSTEM_PROP_BEADS_SEED: g_value_set_int (value, (int) s->seed); break;
    case AIRY_SYSTEM_PROP_BEADS_INTENSITY: g_value_set_double (value, s->intensity); break;
    case AIRY_SYSTEM_PROP_SAMPLE_CHANNEL: g_value_set_int (value, (int) s->channel); break;
    case AIRY_SYSTEM_PROP_SAMPLE_FRAME: g_value_set_int (value, (int) s->frame); break;
    case AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE: g_value_set_boolean (value, s->resample); break;
    case AIRY_SYSTEM_PROP_0:
    case AIRY_SYSTEM_N_PROPS:
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* A new spectrum from wavelengths and weights (NULL: equal), or a warning. */
static void
set_spectrum_from (AirySystem *self, const double *wavelengths, const double *weights, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySpectrum) spectrum = airy_spectrum_new (wavelengths, weights, (guint) n, &error);

  if (spectrum == NULL)
    g_warning ("system: refusing the spectrum: %s", error->message);
  else
    airy_system_set_spectrum (self, spectrum);
}

static void
set_sample_field (AirySystem *self, AirySystemProp prop, const GValue *value)
{
  AirySample s = self->sample;

  switch (prop)
    {
    case AIRY_SYSTEM_PROP_SAMPLE_CONSTANT: s.value = g_value_get_double (value); break;
    case AIRY_SYSTEM_PROP_SAMPLE_FILE: s.file = (char *) g_value_get_string (value); break;
    case AIRY_SYSTEM_PROP_BEADS_COUNT: s.count = (guint) g_value_get_int (value); break;
    case AIRY_SYSTEM_PROP_BEADS_SEED: s.seed = (guint) g_value_get_int (value); break;
    case AIRY_SYSTEM_PROP_BEADS_INTENSITY: s.intensity = g_value_get_double (value); break;
    case AIRY_SYSTEM_PROP_SAMPLE_CHANNEL:
      s.channel = (guint) g_value_get_int (value);
      s.channel_set = TRUE;
      break;
    case AIRY_SYSTEM_PROP_SAMPLE_FRAME:
      s.frame = (guint) g_value_get_int (value);
      s.frame_set = TRUE;
      break;
    case AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE: s.resample = g_value_get_boolean (value); break;
    default: g_assert_not_reached ();
    }
  airy_system_set_sample (self, &s);
}

static void
airy_system_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  AirySystem *self = AIRY_SYSTEM (object);
  const double *d = NULL;
  gsize n = 0;

  if (G_VALUE_HOLDS_VARIANT (value))
    {
      if (!_airy_param_array_acceptable (pspec, value, "system"))
        return;
      d = _airy_value_get_doubles (value, &n);
    }
  switch ((AirySystemProp) prop_id)
    {
    case AIRY_SYSTEM_PROP_HEIGHT:
      airy_system_set_shape (self, (guint) g_value_get_int (value), self->width);
      break;
    case AIRY_SYSTEM_PROP_WIDTH:
      airy_system_set_shape (self, self->height, (guint) g_value_get_int (value));
      break;
    case AIRY_SYSTEM_PROP_SPACING: airy_system_set_spacing (self, g_value_get_double (value)); break;
    case AIRY_SYSTEM_PROP_WAVELENGTHS:
      /* as many wavelengths as before keep their weights, else all weigh the same */
      set_spectrum_from (self, d, n == self->spectrum->n ? self->spectrum->weights : NULL, n);
      break;
    case AIRY_SYSTEM_PROP_WEIGHTS:
      if (n != self->spectrum->n)
        g_warning ("system.weights: refusing %" G_GSIZE_FORMAT " weights for %u wavelengths",
                   n, self->spectrum->n);
      else
        set_spectrum_from (self, self->spectrum->wavelengths, d, n);
      break;
    case AIRY_SYSTEM_PROP_CHANNELS: airy_system_set_channels (self, g_value_get_boolean (value)); break;
    case AIRY_SYSTEM_PROP_Z_START:
      airy_system_set_z_range (self, g_value_get_double (value), z_last (self), MAX (self->z->len, 1));
      break;
    case AIRY_SYSTEM_PROP_Z_STOP:
      airy_system_set_z_range (self, z_first (self), g_value_get_double (value), MAX (self->z->len, 1));
      break;
    case AIRY_SYSTEM_PROP_Z_COUNT:
      airy_system_set_z_range (self, z_first (self), z_last (self), (guint) g_value_get_int (value));
      break;
    case AIRY_SYSTEM_PROP_Z_VALUES:
      if (n == 0)
        g_warning ("system.z-values: refusing an empty list of planes");
      else
        airy_system_set_z_values (self, d, (guint) n);
      break;
    case AIRY_SYSTEM_PROP_F_TUBE: airy_system_set_f_tube (self, g_value_get_double (value)); break;
    case AIRY_SYSTEM_PROP_SAMPLE_CONSTANT:
    case AIRY_SYSTEM_PROP_SAMPLE_FILE:
    case AIRY_SYSTEM_PROP_BEADS_COUNT:
    case AIRY_SYSTEM_PROP_BEADS_SEED:
    case AIRY_SYSTEM_PROP_BEADS_INTENSITY:
    case AIRY_SYSTEM_PROP_SAMPLE_CHANNEL:
    case AIRY_SYSTEM_PROP_SAMPLE_FRAME:
    case AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE:
      set_sample_field (self, (AirySystemProp) prop_id, value);
      break;
    case AIRY_SYSTEM_PROP_0:
    case AIRY_SYSTEM_N_PROPS:
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* z.count's and z.values' limit */
#define MAX_PLANES 1000000

static GParamSpec *
at (const char *path, GParamSpec *pspec)
{
  return airy_param_spec_set_path (pspec, path);
}

/* The fields of a system file and their limits: far above any real system,
 * below what the engine can index (the grid) or compute with. The physical
 * ones are a physicist's: a sample spacing from 0.1 nm (below any camera
 * pixel or pupil sample; 1e-300 overflows the 1/dx² of a normalisation) to
 * 1 cm, wavelengths from 10 nm to 100 µm, intensities up to 1e12 (where
 * float32 still has 26 decades for the optics' scale). */
static void
declare_fields (GParamSpec **p)
{
  p[AIRY_SYSTEM_PROP_HEIGHT] = at ("grid.shape[0]", airy_param_spec_set_unit (
    airy_param_spec_int ("height", N_("Height"), N_("Grid height"), 1, 65536, 256, AIRY_PARAM_NEEDS_PLAN), "px"));
  p[AIRY_SYSTEM_PROP_WIDTH] = at ("grid.shape[1]", airy_param_spec_set_unit (
    airy_param_spec_int ("width", N_("Width"), N_("Grid width"), 1, 65536, 256, AIRY_PARAM_NEEDS_PLAN), "px"));
  p[AIRY_SYSTEM_PROP_SPACING] = at ("grid.spacing",
    airy_param_spec_double ("spacing", N_("Pupil spacing"),
                            N_("Sample spacing of the source plane (a microscope: the camera pixel)"), "µm",
                            1e-4, 1e4, 0.5, 0));
  /* airy_spectrum_new () holds the same limits for every other caller */
  p[AIRY_SYSTEM_PROP_WAVELENGTHS] = at ("spectrum.wavelengths", airy_param_spec_set_max_items (
    airy_param_spec_double_array ("wavelengths", N_("Wavelengths"), N_("Vacuum wavelengths"), "µm",
                                  AIRY_WAVELENGTH_MIN, AIRY_WAVELENGTH_MAX, 0), AIRY_SPECTRUM_MAX_WAVELENGTHS));
  p[AIRY_SYSTEM_PROP_WEIGHTS] = at ("spectrum.weights", airy_param_spec_set_max_items (
    airy_param_spec_double_array ("weights", N_("Weights"), N_("One weight per wavelength (normalised to sum 1)"),
                                  NULL, 0.0, AIRY_WEIGHT_MAX, 0), AIRY_SPECTRUM_MAX_WAVELENGTHS));
  p[AIRY_SYSTEM_PROP_CHANNELS] = at ("spectrum.channels",
    airy_param_spec_boolean ("channels", N_("Channels"),
                             N_("Keep one stack per wavelength, shown as channels (PSF mode)"), FALSE));
  p[AIRY_SYSTEM_PROP_Z_START] = at ("z.start",
    airy_param_spec_double ("z-start", N_("z from"), N_("First plane"), "µm", -1e6, 1e6, 0.0, 0));
  p[AIRY_SYSTEM_PROP_Z_STOP] = at ("z.stop",
    airy_param_spec_double ("z-stop", N_("z to"), N_("Last plane (included)"), "µm", -1e6, 1e6, 0.0, 0));
  p[AIRY_SYSTEM_PROP_Z_COUNT] = at ("z.count",
    airy_param_spec_int ("z-count", N_("z planes"), N_("Number of planes, evenly spaced like linspace"),
                         1, MAX_PLANES, 1, AIRY_PARAM_NEEDS_PLAN));
  p[AIRY_SYSTEM_PROP_Z_VALUES] = at ("z.values",
    airy_param_spec_set_max_items (airy_param_spec_double_array ("z-values", N_("Planes"), N_("The planes"), "µm",
                                                                 -1e6, 1e6, 0), MAX_PLANES));
  p[AIRY_SYSTEM_PROP_F_TUBE] = at ("microscope.f-tube",
    airy_param_spec_double ("f-tube", N_("Tube lens f"), N_("Tube lens focal length"), "µm",
                            AIRY_FOCAL_LENGTH_MIN, 1e6, 200.0, 0));
  p[AIRY_SYSTEM_PROP_SAMPLE_CONSTANT] = at ("sample.constant",
    airy_param_spec_double ("sample-constant", N_("Value"), N_("The same value in every voxel"), NULL,
                            0.0, 1e12, 1.0, 0));
  p[AIRY_SYSTEM_PROP_SAMPLE_FILE] = at ("sample.file",
    airy_param_spec_string ("sample-file", N_("Volume"), N_("A TIFF volume, one plane per z"), AIRY_PARAM_FILE));
  p[AIRY_SYSTEM_PROP_BEADS_COUNT] = at ("sample.beads.count",
    airy_param_spec_int ("beads-count", N_("Beads"), N_("Number of beads"), 0, 10000000, 40, 0));
  p[AIRY_SYSTEM_PROP_BEADS_SEED] = at ("sample.beads.seed",
    airy_param_spec_int ("beads-seed", N_("Seed"), N_("Seed of their positions"), 0, G_MAXINT, 0, 0));
  p[AIRY_SYSTEM_PROP_BEADS_INTENSITY] = at ("sample.beads.intensity",
    airy_param_spec_double ("beads-intensity", N_("Intensity"), N_("Intensity of each bead"), NULL,
                            0.0, 1e12, 1.0, AIRY_PARAM_EXCLUSIVE_MIN));
  p[AIRY_SYSTEM_PROP_SAMPLE_CHANNEL] = at ("sample.channel",
    airy_param_spec_int ("sample-channel", N_("Channel"),
                         N_("Channel of a hyperstack, from 0 (unset: the file holds one)"), 0, 1000000, 0, 0));
  p[AIRY_SYSTEM_PROP_SAMPLE_FRAME] = at ("sample.frame",
    airy_param_spec_int ("sample-frame", N_("Time point"),
                         N_("Time point of a hyperstack, from 0 (unset: the file holds one)"), 0, 1000000, 0, 0));
  p[AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE] = at ("sample.resample",
    airy_param_spec_boolean ("sample-resample", N_("Resample"),
                             N_("Resample a volume whose voxel size is not the system's instead of refusing it"),
                             FALSE));
}

static void
airy_system_class_init (AirySystemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = airy_system_finalize;
  object_class->get_property = airy_system_get_property;
  object_class->set_property = airy_system_set_property;
  declare_fields (properties);
  g_object_class_install_properties (object_class, AIRY_SYSTEM_N_PROPS, properties);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
airy_system_init (AirySystem *self)
{
  double lambda = 0.532;

  self->height = self->width = 256;
  self->spacing = 0.5;
  self->spectrum = airy_spectrum_new (&lambda, NULL, 1, NULL);
  self->z = g_array_new (FALSE, TRUE, sizeof (double));
  g_array_append_val (self->z, (double) { 0.0 });
  self->elements = g_ptr_array_new_with_free_func (g_object_unref);
  self->f_tube = 200.0;
}

AirySystem *
airy_system_new (void)
{
  return g_object_new (AIRY_TYPE_SYSTEM, NULL);
}

void
airy_system_changed (AirySystem *self)
{
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* ---- the declarations ---- */

GParamSpec *
_airy_system_param (AirySystemProp prop)
{
  g_assert (prop > AIRY_SYSTEM_PROP_0 && prop < AIRY_SYSTEM_N_PROPS);
  if (properties[prop] == NULL)
    g_type_class_unref (g_type_class_ref (AIRY_TYPE_SYSTEM));
  return properties[prop];
}

/* "grid.shape[0]" → "shape", "sample.beads.count" → "count" */
char *
_airy_system_param_key (AirySystemProp prop)
{
  const char *path = airy_param_spec_get_path (_airy_system_param (prop));
  const char *key = strrchr (path, '.') + 1;

  return g_strndup (key, strcspn (key, "["));
}

char **
_airy_system_section_keys (const char *section)
{
  GPtrArray *keys = g_ptr_array_new ();
  gsize len = strlen (section);
  guint p;

  for (p = AIRY_SYSTEM_PROP_0 + 1; p < AIRY_SYSTEM_N_PROPS; p++)
    {
      const char *path = airy_param_spec_get_path (_airy_system_param (p));
      g_autofree char *key = NULL;
      guint k;

      if (strncmp (path, section, len) != 0 || path[len] != '.')
        continue;
      key = g_strndup (path + len + 1, strcspn (path + len + 1, ".["));
      for (k = 0; k < keys->len && !g_str_equal (keys->pdata[k], key); k++)
        ;
      if (k == keys->len)
        g_ptr_array_add (keys, g_steal_pointer (&key));
    }
  g_ptr_array_add (keys, NULL);
  return (char **) g_ptr_array_free (keys, FALSE);
}

/* ---- accessors: the setters notify the fields they change ---- */

static void
notify (AirySystem *self, AirySystemProp prop)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

static void
notify_range (AirySystem *self, AirySystemProp first, AirySystemProp last)
{
  guint p;

  g_object_freeze_notify (G_OBJECT (self));
  for (p = first; p <= last; p++)
    notify (self, p);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
notify_z (AirySystem *self)
{
  notify_range (self, AIRY_SYSTEM_PROP_Z_START, AIRY_SYSTEM_PROP_Z_VALUES);
}

const char *
airy_system_get_name (AirySystem *self)
{
  return self->name;
}

void
airy_system_set_name (AirySystem *self, const char *name)
{
  char *copy = g_strdup (name);

  g_free (self->name);
  self->name = copy;
}

const char *
airy_system_get_description (AirySystem *self)
{
  return self->description;
}

void
airy_system_set_description (AirySystem *self, const char *description)
{
  char *copy = g_strdup (description);

  g_free (self->description);
  self->description = copy;
}

const char *
airy_system_get_base_dir (AirySystem *self)
{
  return self->base_dir;
}

gboolean
airy_system_is_microscope (AirySystem *self)
{
  return self->objective != NULL;
}

const char *
airy_system_get_modality (AirySystem *self)
{
  g_return_val_if_fail (AIRY_IS_SYSTEM (self), NULL);
  if (self->modality != NULL)
    return self->modality;
  /* as files without "modality" always read */
  return self->objective != NULL ? "imaging" : "psf";
}

void
airy_system_set_modality (AirySystem *self, const char *modality)
{
  char *copy = g_strdup (modality);

  g_return_if_fail (AIRY_IS_SYSTEM (self));
  g_free (self->modality);
  self->modality = copy;
}

void
airy_system_get_shape (AirySystem *self, guint *height, guint *width)
{
  *height = self->height;
  *width = self->width;
}

void
airy_system_set_shape (AirySystem *self, guint height, guint width)
{
  g_object_freeze_notify (G_OBJECT (self));
  if (height != self->height)
    {
      self->height = height;
      notify (self, AIRY_SYSTEM_PROP_HEIGHT);
    }
  if (width != self->width)
    {
      self->width = width;
      notify (self, AIRY_SYSTEM_PROP_WIDTH);
    }
  g_object_thaw_notify (G_OBJECT (self));
}

double
airy_system_get_spacing (AirySystem *self)
{
  return self->spacing;
}

void
airy_system_set_spacing (AirySystem *self, double spacing)
{
  g_return_if_fail (isfinite (spacing));
  if (spacing == self->spacing)
    return;
  self->spacing = spacing;
  notify (self, AIRY_SYSTEM_PROP_SPACING);
}

const AirySpectrum *
airy_system_get_spectrum (AirySystem *self)
{
  return self->spectrum;
}

void
airy_system_set_spectrum (AirySystem *self, const AirySpectrum *spectrum)
{
  AirySpectrum *copy;
  guint l;

  for (l = 0; l < spectrum->n; l++)
    g_return_if_fail (isfinite (spectrum->wavelengths[l]) && isfinite (spectrum->weights[l]));
  copy = airy_spectrum_copy (spectrum);

  airy_spectrum_free (self->spectrum);
  self->spectrum = copy;
  g_object_freeze_notify (G_OBJECT (self));
  notify (self, AIRY_SYSTEM_PROP_WAVELENGTHS);
  notify (self, AIRY_SYSTEM_PROP_WEIGHTS);
  g_object_thaw_notify (G_OBJECT (self));
}

const double *
airy_system_get_z (AirySystem *self, guint *n)
{
  *n = self->z->len;
  return (const double *) self->z->data;
}

/* z planes like numpy.linspace(start, stop, count): both ends included. */
void
airy_system_set_z_range (AirySystem *self, double start, double stop, guint count)
{
  guint i;

  g_return_if_fail (isfinite (start) && isfinite (stop));
  g_array_set_size (self->z, count);
  for (i = 0; i < count; i++)
    g_array_index (self->z, double, i) = count > 1 ? start + (stop - start) * i / (count - 1) : start;
  self->z_is_range = TRUE;
  self->z_start = start;
  self->z_stop = stop;
  notify_z (self);
}

void
airy_system_set_z_values (AirySystem *self, const double *values, guint count)
{
  guint i;

  for (i = 0; i < count; i++)
    g_return_if_fail (isfinite (values[i]));
  g_array_set_size (self->z, 0);
  g_array_append_vals (self->z, values, count);
  self->z_is_range = FALSE;
  notify_z (self);
}

GPtrArray *
airy_system_get_elements (AirySystem *self)
{
  return self->elements;
}

void
airy_system_add_element (AirySystem *self, AiryElement *element)
{
  g_ptr_array_add (self->elements, g_object_ref (element));
}

AiryElement *
airy_system_get_objective (AirySystem *self)
{
  return self->objective;
}

gboolean
airy_system_get_channels (AirySystem *self)
{
  g_return_val_if_fail (AIRY_IS_SYSTEM (self), FALSE);
  return self->channels;
}

void
airy_system_set_channels (AirySystem *self, gboolean channels)
{
  g_return_if_fail (AIRY_IS_SYSTEM (self));
  channels = !!channels;
  if (channels == self->channels)
    return;
  self->channels = channels;
  notify (self, AIRY_SYSTEM_PROP_CHANNELS);
}

double
airy_system_get_f_tube (AirySystem *self)
{
  return self->f_tube;
}

void
airy_system_set_f_tube (AirySystem *self, double f_tube)
{
  g_return_if_fail (isfinite (f_tube));
  if (f_tube == self->f_tube)
    return;
  self->f_tube = f_tube;
  notify (self, AIRY_SYSTEM_PROP_F_TUBE);
}

AiryElement *
airy_system_get_sensor (AirySystem *self)
{
  return self->sensor;
}

void
airy_system_set_sensor (AirySystem *self, AiryElement *sensor)
{
  g_set_object (&self->sensor, sensor);
}

const AirySample *
airy_system_get_sample (AirySystem *self)
{
  return &self->sample;
}

void
airy_system_set_sample (AirySystem *self, const AirySample *sample)
{
  char *file;

  g_return_if_fail (isfinite (sample->value) && isfinite (sample->intensity));
  file = g_strdup (sample->file);

  g_free (self->sample.file);
  self->sample = *sample;
  self->sample.file = file;
  notify_range (self, SAMPLE_FIRST, SAMPLE_LAST);
}

void
airy_system_make_microscope (AirySystem *self, AiryElement *objective, double f_tube)
{
  g_return_if_fail (isfinite (f_tube));
  g_set_object (&self->objective, objective);
  self->f_tube = f_tube;
  notify (self, AIRY_SYSTEM_PROP_F_TUBE);
}

/* airy_system_validate is the planner's (airy-plan.c), airy_system_check the
 * geometry's (airy-geometry.c): the model calls neither. */

/* ---- file names ---- */

/* realpath () of a path that exists, else its canonical form */
char *
_airy_physical_path (const char *path)
{
  char *real = realpath (path, NULL);
  char *out;

  if (real == NULL)
    return g_canonicalize_filename (path, NULL);
  out = g_strdup (real);
  free (real);
  return out;
}

/* A file name as the run opens it: relative ones against their base folder
 * (NULL: the current folder). */
static char *
resolve_file (const char *file, const char *base)
{
  g_autofree char *abs_base = NULL;

  if (g_path_is_absolute (file))
    return g_strdup (file);
  abs_base = g_canonicalize_filename (base ? base : ".", NULL);
  return g_canonicalize_filename (file, abs_base);
}

/* An absolute file name as seen from the folder dir: relative ("../a.tif")
 * when the two share a folder below the root, else absolute. Symbolic links
 * are resolved first, so that ".." means what the kernel will make of it. */
static char *
path_from (const char *file, const char *dir)
{
  g_autofree char *file_dir = g_path_get_dirname (file);
  g_autofree char *base = g_path_get_basename (file);
  g_autofree char *pf = _airy_physical_path (file_dir);
  g_autofree char *pd = _airy_physical_path (dir);
  g_auto(GStrv) a = g_strsplit (pf + 1, G_DIR_SEPARATOR_S, -1);
  g_auto(GStrv) b = g_strsplit (pd + 1, G_DIR_SEPARATOR_S, -1);
  GString *out;
  guint common = 0, i;

  while (a[common] && b[common] && *a[common] && g_str_equal (a[common], b[common]))
    common++;
  if (common == 0)
    return g_build_filename (pf, base, NULL);
  out = g_string_new (NULL);
  for (i = common; b[i]; i++)
    g_string_append (out, ".." G_DIR_SEPARATOR_S);
  for (i = common; a[i]; i++)
    g_string_append_printf (out, "%s" G_DIR_SEPARATOR_S, a[i]);
  g_string_append (out, base);
  return g_string_free (out, FALSE);
}

typedef void (*FileFunc) (AirySystem  *self,
                          const char  *role,
                          AiryElement *element,   /* NULL: the sample */
                          const char  *property,
                          const char  *file,
                          const char  *base,
                          gpointer     data);

static void
foreach_element_file (AirySystem *self, AiryElement *e, const char *prefix, FileFunc func, gpointer data)
{
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), NULL);
  guint i;

  for (i = 0; pspecs[i]; i++)
    {
      const char *file;
      g_autofree char *role = NULL;

      if (!(airy_param_spec_get_flags (pspecs[i]) & AIRY_PARAM_FILE)
          || (file = airy_element_get_string (e, pspecs[i]->name)) == NULL || *file == '\0')
        continue;
      role = g_strdup_printf ("%s.%s", prefix, pspecs[i]->name);
      func (self, role, e, pspecs[i]->name, file, _airy_element_get_base_dir (e), data);
    }
}

/* Every file name the system reads: the file parameters of its elements
 * (AIRY_PARAM_FILE) and a sample volume. */
static void
foreach_file (AirySystem *self, FileFunc func, gpointer data)
{
  guint i;

  if (self->objective)
    foreach_element_file (self, self->objective, "microscope", func, data);
  for (i = 0; i < self->elements->len; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("elements[%u]", i);
      foreach_element_file (self, g_ptr_array_index (self->elements, i), prefix, func, data);
    }
  if (self->sensor)
    foreach_element_file (self, self->sensor, "sensor", func, data);
  if (self->objective && self->sample.kind == AIRY_SAMPLE_FILE && self->sample.file && *self->sample.file)
    func (self, "sample.file", NULL, NULL, self->sample.file, self->base_dir, data);
}

typedef char *(*FileMap) (const char *file, const char *base, gpointer data);

typedef struct
{
  FileMap  map;
  gpointer data;
} MapFiles;

static void
map_one (AirySystem *self, const char *role, AiryElement *element, const char *property,
         const char *file, const char *base, gpointer data)
{
  MapFiles *m = data;
  char *mapped = m->map (file, base, m->data);

  if (g_str_equal (mapped, file))
    g_free (mapped);
  else if (element == NULL)
    {
      g_free (self->sample.file);
      self->sample.file = mapped;
    }
  else
    {
      g_object_set (element, property, mapped, NULL);
      g_free (mapped);
    }
}

void
_airy_system_set_base_dir (AirySystem *self, const char *base_dir)
{
  char *copy = g_strdup (base_dir);
  guint i;

  g_free (self->base_dir);
  self->base_dir = copy;
  for (i = 0; i < self->elements->len; i++)
    _airy_element_set_base_dir (g_ptr_array_index (self->elements, i), base_dir);
  if (self->objective)
    _airy_element_set_base_dir (self->objective, base_dir);
  if (self->sensor)
    _airy_element_set_base_dir (self->sensor, base_dir);
}

/* a relative name as seen from the folder new_dir (absolute) */
static char *
rebase_file (const char *file, const char *base, gpointer new_dir)
{
  g_autofree char *abs = NULL;

  if (g_path_is_absolute (file))
    return g_strdup (file);
  abs = resolve_file (file, base);
  return path_from (abs, new_dir);
}

void
_airy_system_rebase (AirySystem *self, const char *new_dir_abs, const char *new_base)
{
  MapFiles m = { rebase_file, (gpointer) new_dir_abs };

  foreach_file (self, map_one, &m);
  _airy_system_set_base_dir (self, new_base);
}

/* for the hash: the files themselves, however they are named (by name:
 * the hash is taken on the UI thread, which touches no file) */
static char *
identify_file (const char *file, const char *base, gpointer data)
{
  return resolve_file (file, base);
}

static void
add_input_file (AirySystem *self, const char *role, AiryElement *element, const char *property,
                const char *file, const char *base, gpointer data)
{
  AiryInputFile *f = g_new0 (AiryInputFile, 1);

  f->role = g_strdup (role);
  f->path = resolve_file (file, base);
  g_ptr_array_add (data, f);
}

void
airy_input_file_free (AiryInputFile *file)
{
  if (file == NULL)
    return;
  g_free (file->role);
  g_free (file->path);
  g_free (file);
}

GPtrArray *
airy_system_list_input_files (AirySystem *self)
{
  GPtrArray *files = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_input_file_free);

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), files);
  foreach_file (self, add_input_file, files);
  return files;
}

/* ---- JSON writing ---- */

/* ---- copies and hashes ---- */

AirySystem *
airy_system_copy (AirySystem *self)
{
  AirySystem *copy = airy_system_new ();
  guint i;

  copy->name = g_strdup (self->name);
  copy->description = g_strdup (self->description);
  copy->schema = g_strdup (self->schema);
  copy->base_dir = g_strdup (self->base_dir);
  copy->height = self->height;
  copy->width = self->width;
  copy->spacing = self->spacing;
  airy_system_set_spectrum (copy, self->spectrum);
  copy->channels = self->channels;
  g_array_set_size (copy->z, 0);
  g_array_append_vals (copy->z, self->z->data, self->z->len);
  copy->z_is_range = self->z_is_range;
  copy->z_start = self->z_start;
  copy->z_stop = self->z_stop;
  for (i = 0; i < self->elements->len; i++)
    g_ptr_array_add (copy->elements, airy_element_copy (g_ptr_array_index (self->elements, i)));
  if (self->objective)
    copy->objective = airy_element_copy (self->objective);
  copy->modality = g_strdup (self->modality);
  copy->f_tube = self->f_tube;
  if (self->sensor)
    copy->sensor = airy_element_copy (self->sensor);
  airy_system_set_sample (copy, &self->sample);
  return copy;
}

/* The system as its hash sees it (airy_system_hash, in airy-system-json.c):
 * every file named by its real absolute path, so that a Save As that
 * rewrites names keeps the hash, and no name or description: what is
 * computed, not what it is called (a description that goes with an edit
 * changes no result). */
AirySystem *
_airy_system_copy_for_hash (AirySystem *self)
{
  AirySystem *copy = airy_system_copy (self);
  MapFiles m = { identify_file, NULL };

  foreach_file (copy, map_one, &m);
  airy_system_set_name (copy, NULL);
  airy_system_set_description (copy, NULL);
  return copy;
}
