#pragma once

#include "airy-element.h"

G_BEGIN_DECLS

void     _airy_sensor_output_shape (AiryElement *self,
                                    guint h, guint w, double dy, double dx,
                                    guint *oh, guint *ow, double *ody, double *odx);
gboolean _airy_sensor_reduces      (AiryElement *self);
float   *_airy_sensor_process      (AiryElement *self,
                                    const float *in,
                                    guint h, guint w, double dy, double dx,
                                    guint64 stream);

G_END_DECLS
