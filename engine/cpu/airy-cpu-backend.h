#pragma once

#include "airy-backend-impl.h"

G_BEGIN_DECLS

const AiryBackendOps *_airy_cpu_backend_ops (void);

G_END_DECLS
