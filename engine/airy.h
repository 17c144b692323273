#pragma once

#include "airy-atomic.h"
#include "airy-backend.h"
#include "airy-colormap.h"
#include "airy-comm.h"
#include "airy-element.h"
#include "airy-error.h"
#include "airy-field.h"
#include "airy-fit.h"
#include "airy-image-file.h"
#include "airy-param.h"
#include "airy-rays.h"
#include "airy-run.h"
#include "airy-stack.h"
#include "airy-system.h"
#include "airy-version.h"

G_BEGIN_DECLS

/* Registers the built-in elements and the CPU backend and loads the modules
 * on the modules path once; safe to call more than once. */
void        airy_init              (void);
/* Ends what the engine keeps for the whole process: FFTW's worker threads
 * and plans (its wisdom saved). Call it at the end of main, after the last
 * run; a later run sets FFTW up again. */
void        airy_shutdown          (void);
const char *airy_version_string    (void);

G_END_DECLS
