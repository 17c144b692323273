#pragma once

#include "airy-fit.h"

G_BEGIN_DECLS

/* The forward model of the fit and its gradient (airy-fit.c), for the
 * tests. The parameters, in physical units, are
 *   p = [c_0 … c_{K−1} (waves), x_b, y_b, z_b (µm), amplitude, background]
 * and the model is a window of win_h × win_w pixels centred on the PSF's
 * axis pixel (⌊H/2⌋, ⌊W/2⌋) at every plane of the system. */
typedef struct _AiryFitModel AiryFitModel;

AiryFitModel *_airy_fit_model_new      (AirySystem    *system,
                                        const int     *indices,
                                        guint          n_terms,
                                        guint          win_h,
                                        guint          win_w,
                                        guint          threads,
                                        GPtrArray     *warnings,
                                        GError       **error);
void          _airy_fit_model_free     (AiryFitModel  *model);
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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryFitModel, _airy_fit_model_free)

G_END_DECLS
