#pragma once

#include <gio/gio.h>

#include "airy-stack.h"
#include "airy-system.h"

G_BEGIN_DECLS

/* Phase retrieval from a measured bead stack (issue 19): the stack is
 * fitted by the system's own PSF, scalar or vectorial, the one airy_run
 * computes (the fused pupil fields F·e^{izG} of the compiled plan: per
 * wavelength, or per wavelength and field component), with free Zernike
 * terms (ANSI 3 … N without 4: piston, tilt and defocus are the bead's
 * position), the bead's position, an amplitude and a background:
 *
 *   μ(x, y, z_k) = amplitude · PSF(x − x_b, y − y_b, z_k − z_b; W) + background,
 *
 * PSF in airy_run's units (a plane of an in-focus PSF sums to 1/du²),
 * W = Σ c_j Z_j in waves over the unit pupil, like the phase mask. The
 * objective is the Poisson negative log-likelihood (counts: photons =
 * (ADU − offset)/gain) or least squares; the gradient is analytic (one
 * adjoint transform per forward transform) and GSL's BFGS takes the steps.
 * 1-σ uncertainties come from the Fisher information at the optimum. */

typedef enum
{
  AIRY_FIT_OBJECTIVE_AUTO,          /* Poisson for integer stacks (8, 16 bit), else least squares */
  AIRY_FIT_OBJECTIVE_POISSON,
  AIRY_FIT_OBJECTIVE_LEAST_SQUARES,
} AiryFitObjective;

/* Called after each iteration of the optimiser (from the fitting thread). */
typedef void (*AiryFitProgressFunc) (guint    restart,
                                     guint    iteration,
                                     double   loss,
                                     gpointer user_data);

typedef struct
{
  guint               zernike_max;    /* highest ANSI index fitted (≥ 3); 0: 14 */
  guint               crop;           /* square window (pixels) around the brightest bead; 0: the whole stack */
  gboolean            crop_at;        /* the window is centred on pixel (crop_x, crop_y) of beads (moved
                                         * inside the stack at its edges, with a warning) and the bead is
                                         * the brightest in it, not the stack's brightest */
  guint               crop_x, crop_y;
  AiryFitObjective    objective;
  double              gain;           /* counts: ADU per photon; 0: the system's sensor, or 1 */
  double              offset;         /* counts: baseline in ADU; NaN: the system's sensor, or 0 */
  guint               restarts;       /* starts in all (the first at zero aberration); 0: 4, a
                                         * stack stopping at the first that fits to the noise, a
                                         * single plane (sign ambiguity) running all of them */
  guint               max_iterations; /* per start, its coarse and fine stage together (and at most
                                         * 5 evaluations per iteration); 0: 300 */
  guint               threads;        /* 0: all cores */
  const char         *backend;        /* "cpu", "cuda", or NULL / "auto": a CUDA device when one is
                                         * usable (the CPU, with a warning, when it fails to set up) */
  guint               device;         /* the backend's device */
  guint               seed;           /* of the random restarts */
  AiryFitProgressFunc progress;
  gpointer            user_data;
} AiryFitOptions;

void airy_fit_options_init (AiryFitOptions *options);

typedef struct
{
  guint             n_terms;
  int              *indices;          /* ANSI */
  double           *coefficients;     /* waves */
  double           *uncertainties;    /* 1 σ, waves (NaN when the Fisher matrix is singular) */
  double            position[3];      /* µm: x, y from the stack's pixel ⌊N/2⌋; z = z_b, where the
                                       * bead's focus lies among the system's planes (an
                                       * objective-point-source's "z" of −z_b gives the same PSF) */
  double            position_uncertainties[3];
  double            amplitude;        /* photons (or data units) per unit of airy_run's PSF */
  double            amplitude_uncertainty;
  double            background;       /* photons (or data units) per pixel */
  double            background_uncertainty;
  double            rms_waves;        /* √Σ c_j² (unit-RMS terms) */
  double            strehl;           /* |⟨P e^{2πiW}⟩|² / ⟨P⟩² over the pupil */
  double            loss;             /* Poisson: NLL minus its saturated value; least squares: ½χ² */
  AiryFitObjective  objective;        /* the one used */
  guint             iterations;       /* of the best start */
  guint             iterations_total; /* of every start */
  gboolean          converged;        /* the best start met the convergence test, not its iteration or
                                       * evaluation limit (else a warning says so) */
  guint             evaluations;      /* forward + adjoint passes, all starts */
  guint             restarts;
  double            seconds;          /* wall time of the fit */
  char             *backend;          /* where the passes ran: "cpu", "cuda" */
  char             *device;           /* "NVIDIA H200", "CPU" */
  guint             threads;          /* host threads of the passes on the CPU; 0 when a device ran them */
  double            seconds_per_iteration;
  guint             window[4];        /* x, y, width, height of the fitted window in the stack */
  AiryStack        *model;            /* the window's model, data units (counts as ADU) */
  AiryStack        *residual;         /* data − model in the window, data units */
  GPtrArray        *warnings;         /* char* */
} AiryFitResult;

void           airy_fit_result_free    (AiryFitResult        *result);

/* Fits beads (voxel size in µm; pixel and z spacing the system's, or it is
 * resampled with a warning) with the system's PSF. */
AiryFitResult *airy_fit_stack          (AirySystem           *system,
                                        const AiryStack      *beads,
                                        const AiryFitOptions *options,
                                        GCancellable         *cancellable,
                                        GError              **error);

/* A copy of system with a phase mask of the fitted Zernike terms (waves,
 * ANSI) in the pupil, ready to simulate. */
AirySystem    *airy_fit_result_apply   (const AiryFitResult  *result,
                                        AirySystem           *system,
                                        GError              **error);

/* The report (REPORT.json) as pretty-printed JSON. */
char          *airy_fit_result_to_json (const AiryFitResult  *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryFitResult, airy_fit_result_free)

G_END_DECLS
