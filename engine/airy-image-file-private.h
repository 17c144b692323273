#pragma once

#include "airy-image-file.h"

G_BEGIN_DECLS

/* The built-in formats, each defined beside its reader and writer. */
extern const AiryImageFormat _airy_tiff_format;
extern const AiryImageFormat _airy_png_format;

G_END_DECLS
