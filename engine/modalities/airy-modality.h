#pragma once

/* Internal (not installed): a modality says how a system becomes one or
 * more chains of elements (the planner compiles each into ops) and how
 * their intensities combine. `psf` and `imaging` are today's two; a new
 * one is one file (airy-modality-NAME.c) defining an AiryModality and one
 * line in the registry (airy-modality.c), or, in a test, a call to
 * _airy_modality_register. */

#include <json-glib/json-glib.h>

#include "airy-geometry.h"
#include "airy-stack.h"
#include "airy-run.h"
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

/* airy_run, handed to a modality's run hook for its one-chain systems (so
 * that a modality's unit calls no function of the run's, which calls it) */
typedef AiryResult *(*AiryModalityRunFunc) (AirySystem           *system,
                                            const AiryRunOptions *options,
                                            AiryProgressFunc      progress,
                                            gpointer              user_data,
                                            GCancellable         *cancellable,
                                            GError              **error);

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
  /* Chains combined by the modality's own rule instead of `combine` (a
   * pinhole's convolution, a pixel reassignment), for one chain or several:
   * stacks[0..n) are the chains' intensities (one shape, each chain's
   * metadata), and stacks[0] becomes the result, in place. channels (NULL
   * unless the run asks for channels, AiryRunOptions.per_wavelength) gets
   * the stacks the result is made of (AiryStack*, transfer full); warnings
   * (char*) the run's; cancellable the run's (a cancelled combination
   * stops between planes, with G_IO_ERROR_CANCELLED). NULL: `combine`. */
  gboolean           (*combine_stacks) (AirySystem   *system,
                                        AiryStack   **stacks,
                                        guint         n,
                                        GPtrArray    *channels,
                                        GPtrArray    *warnings,
                                        GCancellable *cancellable,
                                        GError      **error);
  /* The elements the modality reads beside its chain (a scanning
   * microscope's excitation, pinhole, detector array; STED's depletion
   * mask, a light sheet, a SIM pattern), each as the JSON object the panel
   * adds when the mode is chosen and the system has none of its type (a
   * sensor's at the end; another after the source, or at the end of a
   * microscope's elements) and removes when another mode is chosen that
   * does not read it; NULL-terminated, or NULL. */
  const char * const  *parts;
  /* The stacks of the result's shape (the geometry's out_depth ×
   * out_height × out_width) a run holds at once: the chains' intensities
   * being combined, the result and, with channels (spectrum.channels), the
   * modality's channels; for the panel's "Result" figure and the memory
   * budget. NULL: as the geometry counts a one-chain run's. */
  guint              (*result_stacks) (AirySystem *system,
                                       gboolean    channels);
  /* A modality that makes its result itself (NULL: the chains run and
   * combine as `combine` says): airy_run hands it the system, and it
   * runs one-chain systems with run_chain (airy_run) and combines them as
   * no plain sum or product does (STED's exp(−ln 2·ζ·I_dep), a light
   * sheet, SIM's raw stack); the run sets the result's hash. */
  AiryResult        *(*run)        (AirySystem           *system,
                                    AiryModalityRunFunc   run_chain,
                                    const AiryRunOptions *options,
                                    AiryProgressFunc      progress,
                                    gpointer              user_data,
                                    GCancellable         *cancellable,
                                    GError              **error);
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

/* its result combines several chains, or one by its own rule (what the
 * fit and the gradient, which follow one chain's ops, refuse) */
gboolean _airy_modality_combines     (const AiryModality *modality,
                                      AirySystem         *system);

/* The run of a modality that combines (airy-modality-chains.c): its own
 * run, or each chain run with run_chain (airy_run) and the intensities
 * combined; the result's hash and time are the whole system's. */
AiryResult *_airy_modality_run (const AiryModality   *m,
                                AirySystem           *system,
                                AiryModalityRunFunc   run_chain,
                                const AiryRunOptions *options,
                                AiryProgressFunc      progress,
                                gpointer              user_data,
                                GCancellable         *cancellable,
                                GError              **error);

/* One progress for a run of n chains: chain k's (done, total) reported
 * as (k·total + done, n·total), the chains having the same planes. */
typedef struct
{
  AiryProgressFunc progress;
  gpointer         user_data;
  guint            k, n;
} AiryModalityProgress;

static inline void
_airy_modality_progress (guint done, guint total, gpointer user_data)
{
  AiryModalityProgress *p = user_data;

  if (p->progress)
    p->progress (p->k * total + done, p->n * total, p->user_data);
}

/* psf's chain rule (a source first, then the enabled elements), for
 * modalities built on it */
gboolean _airy_modality_psf_chain (AiryGeometry *geom,
                                   GError      **error);

/* For modalities with a run hook (airy-modality-runs.c): the first
 * enabled element of a type (-1: none); a result of stack and channels
 * (taken) with first's run facts and both runs' warnings (second's
 * prefixed "second_name: "), kept as a resident where options ask; a
 * chain's run options (on the host, no PSF, channels or preview). */
int            _airy_modality_find_element   (AirySystem           *system,
                                              const char           *type_name);
char          *_airy_modality_backends_join  (const char *const   *backends,
                                               guint                 n);
AiryResult    *_airy_modality_result_new     (AiryResult           *first,
                                              AiryResult           *second,
                                              const char           *second_name,
                                              AiryStack            *stack,
                                              AiryStack           **channels,
                                              guint                 n_channels,
                                              const AiryRunOptions *options);
AiryRunOptions _airy_modality_chain_options  (const AiryRunOptions *options);
/* result_stacks of a run of two stacks and, with channels, three
 * channels (sted, light-sheet) */
guint          _airy_modality_pair_stacks    (AirySystem           *system,
                                              gboolean              channels);
/* an illumination's NA at elements[at] against its medium's n (≤ n) */
gboolean       _airy_modality_check_na       (int                   at,
                                              double                na,
                                              double                n,
                                              GError              **error);

/* imaging's chain rule (the microscope's objective, the elements, with
 * tube the tube lens), for modalities built on it */
gboolean _airy_modality_microscope_chain (AiryGeometry *geom,
                                          gboolean      tube,
                                          GError      **error);

/* the built-in ones */
extern const AiryModality _airy_modality_psf;
extern const AiryModality _airy_modality_imaging;
/* the scanning microscopes (airy-modality-scan.c) */
extern const AiryModality _airy_modality_confocal;
extern const AiryModality _airy_modality_two_photon;
extern const AiryModality _airy_modality_ism;
/* those with a run of their own (airy-modality-sted.c, -light-sheet.c, -sim.c) */
extern const AiryModality _airy_modality_sted;
extern const AiryModality _airy_modality_light_sheet;
extern const AiryModality _airy_modality_sim;
extern const AiryModality _airy_modality_light_field;

G_END_DECLS
