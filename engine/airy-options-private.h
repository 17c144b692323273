#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* The options of a run and of a fit, declared once (name, range, default,
 * what they mean) as GParamSpecs of the parameter machinery
 * (airy-param.h): airy-sim's option checks, the bench panel's run settings
 * and the fit dialog's fields all read these, so a range cannot drift
 * between them. Names: "threads", "device", "devices" (a count),
 * "fit-zernike", "fit-crop", "fit-restarts", "fit-max-iterations",
 * "fit-seed". */

/* The declaration (owned by the table); NULL for an unknown name. */
GParamSpec *_airy_option_spec      (const char  *name);
/* A new spec with the same name, range, default and blurb, for a class to
 * install as its property (a GParamSpec belongs to one class). */
GParamSpec *_airy_option_spec_new  (const char  *name,
                                    const char  *property);
/* The default of an integer option. */
int         _airy_option_default   (const char  *name);
/* A value typed for an integer option, checked against its declaration;
 * the message names `as` ("--threads"), the declared range and the value:
 * "--threads: must be in [0, 4096], got 5000". */
gboolean    _airy_option_check_int (const char  *name,
                                    gint64       value,
                                    const char  *as,
                                    GError     **error);

/* The backend names a run may ask for, from the registry: the registered
 * backends (built in and from modules, in the order they came), "cuda"
 * where its module is not found (airy_backend_choose then says why it
 * cannot run) and "auto". */
char      **_airy_option_backend_names (void);
/* A backend name checked against them: "PATH: must be one of cpu, cuda,
 * auto, got \"x\"". */
gboolean    _airy_option_check_backend (const char  *name,
                                        const char  *path,
                                        GError     **error);

G_END_DECLS
