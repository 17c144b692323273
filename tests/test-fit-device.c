/* The fit's passes on a device (issue 19: CPU and CUDA), without a GPU: a
 * test backend runs the CUDA module's fit pass on the host, the same
 * kernel bodies (airy-fit-kernels.h), one loop iteration per CUDA thread,
 * FFTW's batched 2-D transforms for cuFFT's, batches of three planes and
 * the per-block partial sums, so that the device path of the model
 * (airy-fit-model.c: base, planes, data, the gradient from M) and the
 * kernels' arithmetic are checked against the CPU's model here; tests/
 * test-cuda.c checks the CUDA module itself on a GPU. */

#include "config.h"

#include "airy-test-fit.h"
#include "airy-fit-kernels.h"

#define FAKE_BATCH 3
#define FAKE_BLOCKS 7

typedef struct
{
  AiryFitShape  shape;
  gsize         nband, np, win;
  float        *scale;
  double       *G;
  float        *dpos;
  double       *dconst;
  float        *data;
  guint         passes;
} FakeFit;

static guint fake_fail_at;     /* the pass that fails (0: none) */
static guint fake_alive;       /* models made and not freed */

static guint
fake_n_devices (AiryBackend *backend)
{
  return 1;
}

static void
fake_device_info (AiryBackend *backend, guint device, AiryDeviceInfo *info)
{
  info->name = g_strdup ("host emulation of the CUDA fit");
  info->detail = g_strdup ("");
}

static gpointer
fake_fit_new (AiryBackend *backend, guint device, const AiryFitShape *shape, GError **error)
{
  FakeFit *f = g_new0 (FakeFit, 1);

  f->shape = *shape;
  f->nband = (gsize) shape->rows * shape->width;
  f->np = (gsize) shape->height * shape->width;
  f->win = (gsize) shape->win_h * shape->win_w;
  /* the device keeps copies, not the host's pointers */
  f->scale = g_memdup2 (shape->scale, shape->L * sizeof (float));
  f->G = g_memdup2 (shape->G, shape->L * f->nband * sizeof (double));
  fake_alive++;
  return f;
}

static gboolean
fake_fit_set_data (AiryBackend *backend, gpointer data, const float *dpos, const double *dconst, const float *values,
                   GError **error)
{
  FakeFit *f = data;
  gsize n = (gsize) f->shape.depth * f->win;

  if (dpos)
    {
      g_free (f->dpos);
      g_free (f->dconst);
      f->dpos = g_memdup2 (dpos, n * sizeof (float));
      f->dconst = g_memdup2 (dconst, n * sizeof (double));
    }
  else
    {
      g_free (f->data);
      f->data = g_memdup2 (values, n * sizeof (float));
    }
  return TRUE;
}

static void
fake_fft (float *X, guint count, const AiryFitShape *s, int sign)
{
  int n[2] = { (int) s->height, (int) s->width };
  fftwf_plan plan = fftwf_plan_many_dft (2, n, (int) count, (fftwf_complex *) X, NULL, 1, n[0] * n[1],
                                         (fftwf_complex *) X, NULL, 1, n[0] * n[1], sign, FFTW_ESTIMATE);

  fftwf_execute (plan);
  fftwf_destroy_plan (plan);
}

/* airy-cuda-fit.c's pass, on the host */
static gboolean
fake_fit_pass (AiryBackend *backend, gpointer data, AiryFitPass *pass, GError **error)
{
  FakeFit *f = data;
  AiryFitLossArgs a = _airy_fit_loss_args (&f->shape, pass, f->scale, f->dpos, f->dconst, f->data);
  double partial[3 * FAKE_BLOCKS] = { 0 };
  gsize L = f->shape.L, i;
  guint b0, j;

  if (++f->passes == fake_fail_at)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, "cudaMemcpyAsync (…) failed: the test's device is lost");
      return FALSE;
    }
  g_assert_true (!a.poisson || f->dpos != NULL);
  g_assert_true (!pass->has_data || pass->poisson || f->data != NULL);
  if (pass->grad)
    memset (pass->M, 0, L * f->nband * sizeof (double));
  for (b0 = 0; b0 < pass->n; b0 += FAKE_BATCH)
    {
      guint nb = MIN (FAKE_BATCH, pass->n - b0);
      gsize nx = (gsize) nb * L * f->np, npix = (gsize) nb * f->np;
      float *X = (float *) fftwf_alloc_complex (nx);

      for (i = 0; i < nx; i++)
        airy_fit_field_at (i, &a, pass->base, f->G, pass->zt + b0, X);
      fake_fft (X, nb * a.L, &f->shape, FFTW_FORWARD);
      /* a grid-stride loop of FAKE_BLOCKS blocks, as the loss kernel's */
      for (i = 0; i < npix; i++)
        {
          double t[3];
          airy_fit_loss_at (i, &a, pass->k + b0, X, pass->mu ? pass->mu + (gsize) b0 * f->win : NULL, t);
          for (j = 0; j < 3; j++)
            partial[3 * (i % FAKE_BLOCKS) + j] += t[j];
        }
      if (pass->grad)
        {
          fake_fft (X, nb * a.L, &f->shape, FFTW_BACKWARD);
          for (i = 0; i < L * f->nband; i++)
            airy_fit_adjoint_at (i, &a, nb, pass->base, f->G, pass->zt + b0, X, pass->M);
        }
      fftwf_free (X);
    }
  pass->loss = pass->dA = pass->dB = 0.0;
  for (j = 0; j < FAKE_BLOCKS; j++)
    {
      pass->loss += partial[3 * j];
      pass->dA += partial[3 * j + 1];
      pass->dB += partial[3 * j + 2];
    }
  return TRUE;
}

static void
fake_fit_free (AiryBackend *backend, gpointer data)
{
  FakeFit *f = data;

  g_free (f->scale);
  g_free (f->G);
  g_free (f->dpos);
  g_free (f->dconst);
  g_free (f->data);
  g_free (f);
  fake_alive--;
}

static const AiryBackendOps fake_ops = {
  .name = "test-fit-device",
  .n_devices = fake_n_devices,
  .device_info = fake_device_info,
  .fit_new = fake_fit_new,
  .fit_set_data = fake_fit_set_data,
  .fit_pass = fake_fit_pass,
  .fit_free = fake_fit_free,
};

/* a backend without the fit's slots */
static const AiryBackendOps no_fit_ops = {
  .name = "test-no-fit",
  .n_devices = fake_n_devices,
};

static AiryBackend *fake;

static const int idx[] = { 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

/* The device pass's loss, gradient and μ equal the CPU model's (full
 * and every 4th plane: 16 planes in batches of 3 leave a rest), scalar
 * and vectorial, Poisson and least squares. */
static void
test_pass_matches_cpu (gconstpointer data)
{
  gboolean poisson = GPOINTER_TO_INT (data) & 1, vectorial = GPOINTER_TO_INT (data) & 2;
  g_autoptr(AirySystem) base = vectorial ? oil_system (48, 16, TRUE, NULL, NULL) : micro_system (48, 16, NULL, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitModel) cpu = _airy_fit_model_new (base, idx, G_N_ELEMENTS (idx), 40, 36, 2, NULL, &error);
  g_autoptr(AiryFitModel) dev = _airy_fit_model_new (base, idx, G_N_ELEMENTS (idx), 40, 36, 2, NULL, &error);
  double loss_rel, grad_rel, mu_rel;

  g_assert_no_error (error);
  g_assert_true (_airy_fit_model_set_device (dev, fake, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fake_alive, ==, 1);
  test_fit_compare_device (cpu, dev, poisson, 4, &loss_rel, &grad_rel, &mu_rel);
  g_assert_cmpfloat (loss_rel, <=, 1e-6);
  g_assert_cmpfloat (grad_rel, <=, 1e-5);
  g_assert_cmpfloat (mu_rel, <=, 1e-6);
  g_assert_true (_airy_fit_model_check (dev, &error));
  g_clear_pointer (&dev, _airy_fit_model_free);
  g_assert_cmpuint (fake_alive, ==, 0);
}

/* A fit asked to run on the device does, recovers what the CPU's fit
 * does, and says where it ran; a device that fails mid-fit stops it with
 * its message (no crash, no result), and "auto" never picks the test
 * backend. */
static void
test_fit_on_device (void)
{
  static const int tidx[] = { 5, 7, 12 };
  static const double tc[] = { 0.08, -0.06, 0.05 };
  g_autofree char *mask = mask_json (tidx, tc, G_N_ELEMENTS (tidx));
  g_autoptr(AirySystem) truth = micro_system (48, 16, ", \"offset-x\": 0.1, \"z\": -0.2", mask);
  g_autoptr(AirySystem) base = micro_system (48, 16, NULL, NULL);
  AiryRunOptions run = { .keep_psf = TRUE, .threads = 2 };
  g_autoptr(AiryResult) r = test_run (truth, &run);
  g_autoptr(AiryStack) beads = airy_stack_copy (r->psf);
  g_autoptr(AiryFitResult) on_cpu = NULL, on_dev = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *mu = NULL;
  AiryFitOptions options;
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;
  double peak = 0, worst = 0;
  guint i;

  for (q = 0; q < n; q++)
    peak = MAX (peak, beads->data[q]);
  mu = g_new (float, n);
  for (q = 0; q < n; q++)
    mu[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
  poisson_sample (mu, beads->data, n, 5);

  airy_fit_options_init (&options);
  options.objective = AIRY_FIT_OBJECTIVE_POISSON;
  options.threads = 2;
  options.backend = "cpu";
  on_cpu = airy_fit_stack (base, beads, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (on_cpu->backend, ==, "cpu");
  options.backend = "test-fit-device";
  fake_fail_at = 0;
  on_dev = airy_fit_stack (base, beads, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (on_dev->backend, ==, "test-fit-device");
  g_assert_cmpstr (on_dev->device, ==, "host emulation of the CUDA fit");
  g_assert_cmpuint (on_dev->threads, ==, 0);
  g_assert_cmpstr (on_cpu->device, ==, "CPU");
  g_assert_cmpuint (on_cpu->threads, ==, 2);
  g_assert_cmpuint (on_dev->n_terms, ==, on_cpu->n_terms);
  for (i = 0; i < on_dev->n_terms; i++)
    worst = MAX (worst, fabs (on_dev->coefficients[i] - on_cpu->coefficients[i]));
  g_test_message ("device and CPU fits: terms differ by %.2g waves at most; z %.5f / %.5f µm; %u / %u iterations",
                  worst, on_dev->position[2], on_cpu->position[2], on_dev->iterations_total,
                  on_cpu->iterations_total);
  g_assert_cmpfloat (worst, <=, 1e-3);
  g_assert_cmpfloat (fabs (on_dev->position[2] - on_cpu->position[2]), <=, 2e-3);
  for (i = 0; i < G_N_ELEMENTS (tidx); i++)
    {
      guint j;
      for (j = 0; j < on_dev->n_terms && on_dev->indices[j] != tidx[i]; j++)
        ;
      g_assert_cmpuint (j, <, on_dev->n_terms);
      g_assert_cmpfloat (fabs (on_dev->coefficients[j] - tc[i]), <=, 0.01);
    }
  {
    g_autofree char *report = airy_fit_result_to_json (on_dev);
    g_assert_nonnull (strstr (report, "\"backend\" : \"test-fit-device\""));
  }
  g_assert_cmpuint (fake_alive, ==, 0);

  /* the device fails at its 20th pass: the fit stops with that message */
  fake_fail_at = 20;
  g_clear_pointer (&on_dev, airy_fit_result_free);
  on_dev = airy_fit_stack (base, beads, &options, NULL, &error);
  g_assert_null (on_dev);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND);
  g_assert_nonnull (strstr (error->message, "the test's device is lost"));
  g_assert_cmpuint (fake_alive, ==, 0);
  g_clear_error (&error);
  fake_fail_at = 0;

  /* a backend that cannot fit, by name: refused with its name */
  options.backend = "test-no-fit";
  g_assert_null (airy_fit_stack (base, beads, &options, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "backend test-no-fit: cannot fit");
  g_clear_error (&error);
  /* a device the backend does not have */
  options.backend = "test-fit-device";
  options.device = 3;
  g_assert_null (airy_fit_stack (base, beads, &options, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "device: must be in [0, 0] for backend test-fit-device, got 3");
  g_clear_error (&error);
  /* auto: CUDA when usable, else the CPU; never the test backend */
  options.backend = NULL;
  options.device = 0;
  options.max_iterations = 2;
  g_clear_pointer (&on_dev, airy_fit_result_free);
  on_dev = airy_fit_stack (base, beads, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_equal (on_dev->backend, "cpu") || g_str_equal (on_dev->backend, "cuda"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("AIRY_FFTW_PLANNER", "estimate", FALSE);
  airy_init ();
  fake = airy_backend_register (&fake_ops, NULL);
  airy_backend_register (&no_fit_ops, NULL);

  g_test_add_data_func ("/fit-device/pass/poisson", GINT_TO_POINTER (1), test_pass_matches_cpu);
  g_test_add_data_func ("/fit-device/pass/least-squares", GINT_TO_POINTER (0), test_pass_matches_cpu);
  g_test_add_data_func ("/fit-device/pass/vectorial-poisson", GINT_TO_POINTER (3), test_pass_matches_cpu);
  g_test_add_func ("/fit-device/fit", test_fit_on_device);
  return g_test_run ();
}
