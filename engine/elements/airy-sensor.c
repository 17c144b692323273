#define G_LOG_DOMAIN "airy-sensor"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-ops-private.h"
#include "airy-sensor-private.h"

/* The sensor turns intensity into a recorded image: optional sum over z,
 * resampling (block sum or bilinear), then photo-electrons = exposure·I,
 * shot noise (Poisson, or its Gaussian approximation), full-well
 * saturation, read noise, gain and offset (ADU), and quantisation to a bit
 * depth. Random numbers are counter-based: the same seed gives the same
 * image for any device split. */

typedef struct { AiryElement parent; } AirySensor;
typedef struct { AiryElementClass parent_class; } AirySensorClass;
G_DEFINE_FINAL_TYPE (AirySensor, _airy_sensor, AIRY_TYPE_ELEMENT)

void
_airy_sensor_output_shape (AiryElement *self,
                           guint h, guint w, double dy, double dx,
                           guint *oh, guint *ow, double *ody, double *odx)
{
  int resample = airy_element_get_enum (self, "resample");

  *oh = h;
  *ow = w;
  *ody = dy;
  *odx = dx;
  if (resample == AIRY_RESAMPLE_BLOCK_SUM)
    {
      guint f = (guint) airy_element_get_int (self, "factor");
      *oh = MAX (h / f, 1);
      *ow = MAX (w / f, 1);
      *ody = dy * f;
      *odx = dx * f;
    }
  else if (resample == AIRY_RESAMPLE_LINEAR)
    {
      double s = airy_element_get_double (self, "spacing");
      if (s > 0.0)
        {
          *oh = MAX ((guint) floor (h * dy / s), 1);
          *ow = MAX ((guint) floor (w * dx / s), 1);
          *ody = *odx = s;
        }
    }
}

gboolean
_airy_sensor_reduces (AiryElement *self)
{
  return airy_element_get_enum (self, "reduce") == AIRY_REDUCE_SUM;
}

static gboolean
sensor_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  guint f = (guint) airy_element_get_int (self, "factor");

  if (airy_element_get_enum (self, "resample") == AIRY_RESAMPLE_BLOCK_SUM
      && (f > ctx->height || f > ctx->width))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.factor: must be in [1, %u] for a %u × %u image, got %u"),
                   ctx->path, MIN (ctx->height, ctx->width), ctx->height, ctx->width, f);
      return FALSE;
    }
  return TRUE;
}

void
_airy_sensor_noise (AiryElement     *self,
                    guint64          stream,
                    AiryNoiseParams *noise)
{
  noise->noise = airy_element_get_enum (self, "noise");
  noise->exposure = airy_element_get_double (self, "exposure");
  noise->read_noise = airy_element_get_double (self, "read-noise");
  noise->gain = airy_element_get_double (self, "gain");
  noise->offset = airy_element_get_double (self, "offset");
  noise->full_well = airy_element_get_double (self, "full-well");
  noise->bits = airy_element_get_int (self, "bit-depth");
  noise->seed = (guint64) airy_element_get_int (self, "seed");
  noise->stream = stream;
}

/* The sensor lowered to its op (SENSOR, AirySensorOp): the intensity's
 * shape and pixel entering it are field's (the geometry only: a sensor's
 * field holds no samples, and leaves with the image's geometry). The op
 * carries everything the backends need: no backend reads the element. */
static gboolean
sensor_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  AiryOp *op = g_new0 (AiryOp, 1);
  AirySensorOp *s = g_new0 (AirySensorOp, 1);
  int resample = airy_element_get_enum (self, "resample");

  op->ref = 1;
  op->kind = AIRY_OP_SENSOR;
  op->n_lambda = 1;
  op->sensor = s;
  s->in_height = field->height;
  s->in_width = field->width;
  s->in_dy = field->dy[0];
  s->in_dx = field->dx[0];
  _airy_sensor_output_shape (self, s->in_height, s->in_width, s->in_dy, s->in_dx, &s->out_height, &s->out_width,
                             &s->out_dy, &s->out_dx);
  s->resample = AIRY_SENSOR_COPY;
  s->scale = 1.0;
  if (resample == AIRY_RESAMPLE_BLOCK_SUM)
    {
      s->resample = AIRY_SENSOR_BLOCK_SUM;
      s->factor = (guint) airy_element_get_int (self, "factor");
    }
  else if (resample == AIRY_RESAMPLE_LINEAR
           && (s->out_height != s->in_height || s->out_width != s->in_width || s->out_dy != s->in_dy
               || s->out_dx != s->in_dx))
    {
      s->resample = AIRY_SENSOR_LINEAR;
      if (airy_element_get_boolean (self, "sum-preserving"))
        s->scale = s->out_dy * s->out_dx / (s->in_dy * s->in_dx);
    }
  _airy_sensor_noise (self, 0, &s->noise);
  op->height = field->height = s->out_height;
  op->width = field->width = s->out_width;
  field->dy[0] = s->out_dy;
  field->dx[0] = s->out_dx;
  g_ptr_array_add (ops, op);
  return TRUE;
}

static void
_airy_sensor_class_init (AirySensorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "sensor", N_("Sensor"), AIRY_CATEGORY_SENSOR);
  element_class->check = sensor_check;
  element_class->compile = sensor_compile;

  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("reduce", N_("Reduce"), N_("Sum the planes into one image"),
                          _airy_reduce_get_type (), AIRY_REDUCE_NONE, AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("resample", N_("Resample"), N_("Block sum or bilinear resampling"),
                          _airy_resample_get_type (), AIRY_RESAMPLE_NONE, AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("factor", N_("Block"), N_("Block size of the block sum (pixels)"), 1, 4096, 1,
                         AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("spacing", N_("Pixel size"), N_("Output pixel of the linear resampling (0: same)"),
                            "µm", 0.0, 1e4, 0.0, AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("sum-preserving", N_("Keep sum"), N_("Scale the linear resampling to keep the sum"), TRUE));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("noise", N_("Shot noise"), N_("Poisson, its Gaussian approximation, or none"),
                          _airy_noise_get_type (), AIRY_NOISE_NONE, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("exposure", N_("Exposure"), N_("Photo-electrons per unit of intensity"), NULL,
                            0.0, 1e15, 1.0, AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("read-noise", N_("Read noise"), N_("Gaussian read noise (e⁻ RMS)"), "e⁻",
                            0.0, 1e6, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("gain", N_("Gain"), N_("ADU per electron"), NULL, 0.0, 1e6, 1.0,
                            AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("offset", N_("Offset"), N_("Baseline (ADU)"), NULL, 0.0, 1e9, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("full-well", N_("Full well"), N_("Saturation in electrons (0: none)"), "e⁻",
                            0.0, 1e12, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("bit-depth", N_("Bit depth"), N_("Quantise to this many bits (0: float)"), 0, 32, 0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("seed", N_("Seed"), N_("Seed of the noise"), 0, G_MAXINT, 0, 0));
}

static void
_airy_sensor_init (AirySensor *self)
{
}
