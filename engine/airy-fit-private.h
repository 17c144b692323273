#pragma once

#include "airy-backend-impl.h"
#include "airy-fit.h"
#include "airy-ops-private.h"

G_BEGIN_DECLS

/* The forward model of the fit and its gradient (airy-fit-model.c), for the
 * tests. The parameters, in physical units, are
 *   p = [c_0 … c_{K−1} (waves), x_b, y_b, z_b (µm), amplitude, background]
 * and the model is a window of win_h × win_w pixels centred on the PSF's
 * axis pixel (⌊H/2⌋, ⌊W/2⌋) at every plane of the system. */
typedef struct _AiryFitModel AiryFitModel;

/* (airy-fit-model.c; its fields are read by the fit's driver, airy-fit.c) */
struct _AiryFitModel
{
  AiryPlan     *plan;
  const AiryOp *op;              /* plan->ops[0], FUSED_PSF */
  guint         H, W, y0, rows;
  guint         L;               /* the FUSED_PSF's entries: wavelengths × components */
  guint         C;               /* components per wavelength (1: scalar); entry e is wavelength e / C */
  guint         NL;              /* wavelengths */
  gsize         nband, np;
  guint         depth;
  const double *z;               /* the system's planes (plan->z) */
  guint         K;
  int          *indices;
  double       *basis;           /* K × NL × nband: Z_j on the band, per wavelength */
  double       *lscale;          /* λ_c/λ_l, per wavelength */
  double        du_x, du_y;      /* PSF pixel (first wavelength) */
  guint         win_h, win_w, win_y0, win_x0;
  guint         threads;
  guint         stride;          /* planes used: every stride-th */
  /* Poisson's per-voxel constants of the last data (airy-fit-private.h) */
  const float  *data;
  float        *dpos;
  double       *dconst;
  /* the device the passes run on (_airy_fit_model_set_device; NULL: the
   * CPU's threads), the data it holds, and its first failure */
  AiryBackend  *backend;
  gpointer      dev;
  const float  *dev_data;
  gboolean      dev_poisson;
  GError       *dev_error;
};

/* A phase mask holding Zernike terms (ANSI, waves, unit RMS; coefficients
 * NULL: zeros), and a copy of system with it in the pupil (*chain_at, when
 * not NULL: its place in the plan's chain). */
AiryElement  *_airy_fit_zernike_mask_new   (const int     *indices,
                                            const double  *coefficients,
                                            guint          n,
                                            GError       **error);
AirySystem   *_airy_fit_system_insert_mask (AirySystem    *system,
                                            AiryElement   *mask,
                                            guint         *chain_at);

AiryFitModel *_airy_fit_model_new      (AirySystem    *system,
                                        const int     *indices,
                                        guint          n_terms,
                                        guint          win_h,
                                        guint          win_w,
                                        guint          threads,
                                        GPtrArray     *warnings,
                                        GError       **error);
/* The model around a given phase mask of Zernike terms (ANSI, waves, unit
 * RMS, as _airy_fit_zernike_mask_new makes it, any pupil-radius): the
 * fitted terms are its indices, its coefficients their origin, its basis
 * the one its op carries. */
AiryFitModel *_airy_fit_model_new_for_mask (AirySystem  *system,
                                            AiryElement *mask,
                                            guint        win_h,
                                            guint        win_w,
                                            guint        threads,
                                            GPtrArray   *warnings,
                                            GError     **error);
void          _airy_fit_model_free     (AiryFitModel  *model);
/* Runs the forward and adjoint passes of eval and loss on a device of a
 * backend that can fit (the CUDA module), from now on; the Fisher
 * information stays on the CPU. FALSE with the backend's error. */
gboolean      _airy_fit_model_set_device (AiryFitModel *model,
                                          AiryBackend  *backend,
                                          guint         device,
                                          GError      **error);
/* FALSE with a copy of the device's error once a pass failed there (its
 * loss was NaN). */
gboolean      _airy_fit_model_check    (AiryFitModel  *model,
                                        GError       **error);
guint         _airy_fit_model_n_params (AiryFitModel  *model);
guint         _airy_fit_model_depth    (AiryFitModel  *model);
/* Only every stride-th plane enters the loss and the gradient (the fit's
 * coarse stage); 1: all. */
void          _airy_fit_model_set_stride (AiryFitModel *model,
                                          guint         stride);
/* μ of every plane: depth × win_h × win_w */
void          _airy_fit_model_eval     (AiryFitModel  *model,
                                        const double  *params,
                                        float         *out);
/* The loss of data (depth × win_h × win_w; photons for Poisson; the same
 * pointer must hold the same data: Poisson keeps per-voxel constants) and, when
 * grad is not NULL, its gradient with respect to params (one adjoint
 * transform per forward transform). noise_var scales least squares:
 * ½ Σ (μ − d)² / noise_var. */
double        _airy_fit_model_loss     (AiryFitModel  *model,
                                        const float   *data,
                                        gboolean       poisson,
                                        double         noise_var,
                                        const double  *params,
                                        double        *grad);
/* The Fisher information Jᵀ diag(1/μ) J (Poisson) or Jᵀ J / noise_var, a
 * n_params × n_params matrix in row order. */
void          _airy_fit_model_fisher   (AiryFitModel  *model,
                                        gboolean       poisson,
                                        double         noise_var,
                                        const double  *params,
                                        double        *fisher);

/* One start of the fit's optimiser from params (physical units; the end
 * point on return) for at most max_iterations iterations and 5 evaluations
 * per iteration: FALSE with an error when the loss or its gradient is not
 * finite. */
gboolean      _airy_fit_minimize       (AiryFitModel  *model,
                                        const float   *data,
                                        gboolean       poisson,
                                        double         noise_var,
                                        double        *params,
                                        guint          max_iterations,
                                        guint         *iterations,
                                        guint         *evaluations,
                                        double        *loss,
                                        GError       **error);

/* The Strehl ratio of the terms (waves) over the pupil at the first
 * wavelength, summed over a vectorial field's components. */
double        _airy_fit_model_strehl   (AiryFitModel  *model,
                                        const double  *coefficients);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryFitModel, _airy_fit_model_free)

/* The bead stack as the fit sees it (airy-fit-data.c): checked finite,
 * planned against the system (its warnings added), on the system's grid,
 * converted to photons, its window and the window's background. */
typedef struct
{
  gboolean poisson;
  double   gain, offset;           /* ADU = photons · gain + offset (1, 0: least squares) */
  guint    grid_w, grid_h, depth;  /* the stack on the system's grid */
  guint    bx, by;                 /* the bead's pixel on the grid */
  guint    cx, cy, ww, wh;         /* the window on the grid */
  gsize    win;                    /* ww · wh */
  float   *data;                   /* the window in photons: depth × wh × ww */
  double   B0, sigma;              /* background and noise (photons) of the window's border */
} AiryFitData;

gboolean      _airy_fit_data_prepare   (AiryFitData          *data,
                                        AirySystem           *system,
                                        const AiryStack      *beads,
                                        const AiryFitOptions *options,
                                        GPtrArray            *warnings,
                                        GError              **error);
void          _airy_fit_data_clear     (AiryFitData          *data);

G_END_DECLS
