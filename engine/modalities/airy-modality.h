#pragma once

/* Internal (not installed): a modality says how a system becomes one or
 * more chains of elements (the planner compiles each into ops) and how
 * their intensities combine. `psf` and `imaging` are today's two; a new
 * one is one file (airy-modality-NAME.c) defining an AiryModality and one
 * line in the registry (airy-modality.c), or, in a test, a call to
 * _airy_modality_register. */

#include <json-glib/json-glib.h>

#include "airy-geometry.h"
#include "airy-system.h"

G_BEGIN_DECLS

typedef enum
{
  AIRY_MODALITY_COMBINE_ONE,        /* one chain: its intensity is the result */
  AIRY_MODALITY_COMBINE_CONVOLVE,   /* one chain: Σ_z sample ⊛ its intensity */
  AIRY_MODALITY_COMBINE_SUM,        /* several chains: the sum of their intensities */
  AIRY_MODALITY_COMBINE_PRODUCT,    /* several chains: the product (confocal's excitation × detection) */
} AiryModalityCombine;

typedef struct _AiryModality AiryModality;

struct _AiryModality
{
  const char          *name;          /* the file's "modality" */
  const char          *label;         /* the panel's mode list, marked N_() */
  const char          *description;   /* untranslated, for the schema and messages */
  /* what the system must hold: a "microscope" object (the objective and
   * the tube lens) and a sample */
  gboolean             needs_microscope;
  /* it images a sample (the file's "sample" is read, and required); FALSE
   * (the default of a new modality): a "sample" is refused */
  gboolean             needs_sample;
  AiryModalityCombine  combine;
  /* The chains of system (1 for one-chain modalities; NULL means 1). */
  guint              (*n_chains)   (AirySystem    *system);
  /* A system that holds chain index alone, in a one-chain modality
   * (several chains only; the run runs each and combines them). */
  AirySystem        *(*chain_system) (AirySystem  *system,
                                      guint        index,
                                      GError     **error);
  /* The geometry step: fills geom->chain (copies of the enabled elements
   * in order), the source plane's spacing geom->in_dy/in_dx per
   * wavelength and geom->imaging. Of a several-chain modality: its first
   * chain, which sets the result's shape. */
  gboolean           (*chain)      (AiryGeometry  *geom,
                                    GError       **error);
  /* What the schema says of the modality's systems (the "modality"
   * enum's description entry); NULL: the description. */
  const char          *schema_note;
};

/* The registered modalities, in the order the panel lists them: psf,
 * imaging, then those registered at run time. */
const AiryModality * const *_airy_modality_list     (guint              *n);
const AiryModality         *_airy_modality_lookup   (const char         *name);
/* Adds one (a test's, a plug-in's); a second of the same name replaces
 * nothing and returns FALSE. */
gboolean                    _airy_modality_register (const AiryModality *modality);
/* "psf, imaging" for messages */
char                       *_airy_modality_names    (void);
/* The modality a system runs in: its "modality" when set, else inferred as
 * before the key existed (a "microscope" object → imaging, else psf). */
const AiryModality         *_airy_modality_of       (AirySystem         *system);
/* Checks that name is registered and that system holds what it needs;
 * NULL name: inferred. Error at "modality". */
gboolean                    _airy_modality_check    (AirySystem         *system,
                                                     const char         *name,
                                                     GError            **error);

/* The questions the rest of the program asks of a system's modality
 * (instead of whether it holds a "microscope" object): */
/* its result is one image, Σ_z over the planes, not a stack of planes */
gboolean _airy_modality_one_image     (const AiryModality *modality);
/* its chain starts at the "microscope" object's objective, which is not in
 * "elements" (the first enabled element is chain[1]) */
gboolean _airy_modality_has_objective (const AiryModality *modality);

/* psf's chain rule (a source first, then the enabled elements), for
 * modalities built on it */
gboolean _airy_modality_psf_chain (AiryGeometry *geom,
                                   GError      **error);

/* imaging's chain rule (the microscope's objective, the elements, with
 * tube the tube lens), for modalities built on it */
gboolean _airy_modality_microscope_chain (AiryGeometry *geom,
                                          gboolean      tube,
                                          GError      **error);

/* the built-in ones */
extern const AiryModality _airy_modality_psf;
extern const AiryModality _airy_modality_imaging;
extern const AiryModality _airy_modality_light_field;

G_END_DECLS
