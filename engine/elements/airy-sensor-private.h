#pragma once

#include "airy-element.h"
#include "airy-physics.h"

G_BEGIN_DECLS

void     _airy_sensor_output_shape (AiryElement *self,
                                    guint h, guint w, double dy, double dx,
                                    guint *oh, guint *ow, double *ody, double *odx);
gboolean _airy_sensor_reduces      (AiryElement *self);
/* the noise chain's parameters for plane `stream` */
void     _airy_sensor_noise        (AiryElement *self,
                                    guint64 stream,
                                    AiryNoiseParams *noise);

G_END_DECLS
