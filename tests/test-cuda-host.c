/* The CUDA backend's logic on the host, without a GPU: the fused PSF's batch
 * layout (engine/cuda/airy-cuda-layout.h: every entry of every plane of a
 * batch in one row and one column transform) run with the kernels' own
 * bodies, one loop iteration per CUDA thread and FFTW's strided transforms
 * for cuFFT's, against the CPU backend, vectorial and per wavelength; and
 * the bookkeeping of engine/cuda/airy-cuda-private.h with fake CUDA calls:
 * the slot's buffer list and budget, the buffers kept across runs, the
 * wait for an NCCL collective, plans past 2³¹ elements, the stale error
 * at an entry point. tests/test-cuda.c checks the module itself on a GPU. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-test-util.h"
#include "airy-plan-private.h"
#include "airy-ops-private.h"
#include "cuda/airy-cuda-private.h"
#include "cuda/airy-cuda-layout.h"

/* ---- the fused PSF's batch ---- */

/* One batch of nb planes as the GPU runs it (airy-cuda-psf.c): generate
 * the band, the row pass over the pupil's rows of all L·nb transforms, the
 * column pass over all their columns, the intensity (and each
 * wavelength's). Returns the transforms' executions (2: one of each). */
static guint
emulate_batch (const AiryOp *fused, guint h, guint w, const double *z, guint nb, guint C, float *out, float *chan)
{
  const AiryFusedPsf *psf = fused->psf;
  guint L = fused->n_lambda;
  gsize n = (gsize) h * w, T = (gsize) L * nb, i;
  fftwf_complex *field = fftwf_alloc_complex (T * n), *field2 = fftwf_alloc_complex (T * n);
  fftwf_complex *band = field + (gsize) psf->y0 * T * w;
  int wi = (int) w, hi = (int) h;
  fftwf_plan rows, cols;

  memset (field, 0, T * n * sizeof (fftwf_complex));
  for (i = 0; i < (gsize) psf->rows * T * w; i++)
    airy_band_generate_at (i, (const float *) psf->F, psf->G, z, L, nb, psf->rows, w, (float *) band);
  /* cuFFT's plans of airy-cuda-psf.c: rows contiguous (distance w), columns
   * of stride T·w (distance 1) */
  rows = fftwf_plan_many_dft (1, &wi, (int) (psf->rows * T), band, NULL, 1, wi, band, NULL, 1, wi, FFTW_FORWARD,
                              FFTW_ESTIMATE);
  cols = fftwf_plan_many_dft (1, &hi, (int) (T * w), field, NULL, (int) (T * w), 1, field2, NULL, (int) (T * w), 1,
                              FFTW_FORWARD, FFTW_ESTIMATE);
  fftwf_execute (rows);
  fftwf_execute (cols);
  for (i = 0; i < nb * n; i++)
    airy_band_intensity_at (i, (const float *) field2, psf->scale, L, C, nb, h, w, out, chan);
  fftwf_destroy_plan (rows);
  fftwf_destroy_plan (cols);
  fftwf_free (field);
  fftwf_free (field2);
  return 2;
}

static double
worst_of_peak (const float *a, const float *b, gsize n)
{
  float peak = plane_max (b, n, NULL);
  double worst = 0.0;
  gsize i;

  g_assert_cmpfloat (peak, >, 0.0f);
  for (i = 0; i < n; i++)
    worst = MAX (worst, fabs (a[i] - b[i]));
  return worst / peak;
}

static void
check_layout (const char *json, guint batch, guint want_entries)
{
  g_autoptr(AirySystem) system = test_system (json);
  AiryRunOptions options = { .backend = "cpu", .per_wavelength = TRUE, .threads = 1 };
  g_autoptr(AiryResult) cpu = test_run (system, &options);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryPlan) plan = _airy_plan_new (system, &options, NULL, &error);
  AiryStages stages;
  guint h, w, C, n_wl, b0, nb, l, execs = 0, batches = 0;
  gsize n;
  g_autofree float *out = NULL, *chan = NULL;
  g_autofree double *z = NULL;
  double worst = 0.0, worst_chan = 0.0;

  g_assert_no_error (error);
  g_assert_true (_airy_plan_compile (plan, &error));
  _airy_ops_stages (plan->ops, &stages);
  g_assert_nonnull (stages.fused);
  g_assert_cmpuint (stages.fused->n_lambda, ==, want_entries);
  h = plan->psf_height;
  w = plan->psf_width;
  n = (gsize) h * w;
  n_wl = plan->spectrum->n;
  C = stages.fused->n_lambda / n_wl;
  g_assert_cmpuint (cpu->n_channels, ==, n_wl);
  out = g_new (float, batch * n);
  chan = g_new (float, (gsize) n_wl * batch * n);
  z = g_new (double, batch);
  /* batches of `batch` planes and a last, smaller one, as the device's */
  for (b0 = 0; b0 < plan->n_planes; b0 += nb, batches++)
    {
      guint k;

      nb = MIN (batch, plan->n_planes - b0);
      for (k = 0; k < nb; k++)
        z[k] = plan->z[b0 + k] + stages.fused->psf->z0;
      execs += emulate_batch (stages.fused, h, w, z, nb, C, out, chan);
      for (k = 0; k < nb; k++)
        {
          worst = MAX (worst, worst_of_peak (out + k * n, airy_stack_plane (cpu->stack, b0 + k), n));
          for (l = 0; l < n_wl; l++)
            worst_chan = MAX (worst_chan, worst_of_peak (chan + ((gsize) l * nb + k) * n,
                                                         airy_stack_plane (cpu->channels[l], b0 + k), n));
        }
    }
  g_test_message ("%u entries, batches of %u: |device layout − cpu| ≤ %.2g of a plane's peak, per wavelength %.2g",
                  want_entries, batch, worst, worst_chan);
  g_assert_cmpfloat (worst, <=, 2e-5);
  g_assert_cmpfloat (worst_chan, <=, 2e-5);
  /* every entry of a batch went through one row and one column transform */
  g_assert_cmpuint (execs, ==, 2 * batches);
}

static void
test_layout (void)
{
  /* two wavelengths × six components of an unpolarized vectorial field
   * (12 entries), 7 planes in batches of 3 (the last of 1) */
  check_layout ("{\"airy\": 1, \"grid\": {\"shape\": [96, 80], \"spacing\": 4.8},"
                " \"spectrum\": {\"wavelengths\": [0.55, 0.65], \"weights\": [2, 1]},"
                " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 7},"
                " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.518, \"na\": 1.4,"
                "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"field\": \"vectorial\","
                "   \"polarization\": \"unpolarized\"},"
                "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.518}]}", 3, 12);
  /* three scalar wavelengths, 5 planes in batches of 2 */
  check_layout ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.2},"
                " \"spectrum\": {\"wavelengths\": [0.5, 0.55, 0.6]}, \"z\": {\"start\": -2, \"stop\": 2, \"count\": 5},"
                " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
                "  {\"type\": \"phase-mask\", \"value\": 1.0}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", 2, 3);
}

/* ---- a slot's buffers and the budget ---- */

static AirySlotShape
imaging_shape (gboolean varying)
{
  AirySlotShape s = { .h = 1536, .w = 1536, .entries = 1, .count = 128, .keep = FALSE, .out_h = 1536,
                      .out_w = 1536, .sum = !varying, .convolve = TRUE, .varying = varying,
                      .pad_h = 3072, .pad_w = 3072, .vol_h = 1536, .vol_w = 1536 };
  return s;
}

static void
test_buffers (void)
{
  AirySlotShape constant = imaging_shape (FALSE), varying = imaging_shape (TRUE);
  AirySlotBytes b[AIRY_SLOT_N_BUFFERS];
  guint64 nvol = 1536 * 1536, np = 3072 * 3072, nspec = 3072 * 1537, n = 1536 * 1536, fixed, per_plane, sum_f = 0,
          sum_p = 0;
  guint k;

  /* a sample constant in z: one volume plane, one padded plane, one
   * spectrum, whatever the batch (16 volume planes before: 151 MB at the
   * seed size that the budget did not count) */
  _airy_slot_buffers (&constant, b);
  g_assert_cmpuint (_airy_slot_buffer_bytes (&b[AIRY_SLOT_VOL], 16), ==, nvol * 4);
  g_assert_cmpuint (_airy_slot_buffer_bytes (&b[AIRY_SLOT_PAD], 16), ==, np * 4);
  g_assert_cmpuint (_airy_slot_buffer_bytes (&b[AIRY_SLOT_SPEC], 16), ==, nspec * 8);
  g_assert_cmpuint (b[AIRY_SLOT_VSPEC].fixed + b[AIRY_SLOT_VSPEC].per_plane, ==, 0);
  g_assert_cmpuint (_airy_slot_buffer_bytes (&b[AIRY_SLOT_IMG], 16), ==, n * 4);
  /* the budget counts exactly the list, and cuFFT's work area beside it */
  for (k = 0; k < AIRY_SLOT_N_BUFFERS; k++)
    {
      sum_f += b[k].fixed;
      sum_p += b[k].per_plane;
    }
  _airy_slot_budget (&constant, &fixed, &per_plane);
  g_assert_cmpuint (fixed, ==, sum_f + nspec * 8);
  g_assert_cmpuint (per_plane, ==, sum_p + n * 8);
  /* per plane of a batch: the field, the column pass's output and the
   * intensity only, 20 bytes a pixel (28 with the work area) */
  g_assert_cmpuint (sum_p, ==, n * 20);

  /* a sample varying in z: its planes and spectra per plane of a batch */
  _airy_slot_buffers (&varying, b);
  g_assert_cmpuint (b[AIRY_SLOT_VOL].per_plane, ==, nvol * 4);
  g_assert_cmpuint (b[AIRY_SLOT_VSPEC].per_plane, ==, nspec * 8);
  g_assert_cmpuint (b[AIRY_SLOT_VOL].fixed + b[AIRY_SLOT_VCONST].fixed + b[AIRY_SLOT_IMG].fixed, ==, 0);

  /* a vectorial PSF kept on the device: six entries a plane in the batch,
   * the chunk's planes, each wavelength's planes for channels */
  {
    AirySlotShape psf = { .h = 512, .w = 512, .entries = 6, .channels = 1, .count = 64, .keep = TRUE,
                          .out_h = 512, .out_w = 512 };

    _airy_slot_buffers (&psf, b);
    g_assert_cmpuint (b[AIRY_SLOT_FIELD].per_plane, ==, 6 * 512 * 512 * 8);
    g_assert_cmpuint (b[AIRY_SLOT_CHAN].per_plane, ==, 512 * 512 * 4);
    g_assert_cmpuint (b[AIRY_SLOT_OUT].fixed, ==, 64ull * 512 * 512 * 4);
    g_assert_cmpuint (b[AIRY_SLOT_GA].fixed + b[AIRY_SLOT_PAD].fixed + b[AIRY_SLOT_IMG].fixed, ==, 0);
  }
}

/* ---- buffers kept across runs ---- */

typedef struct
{
  guint    allocs, frees, fail;
  gintptr  next;
} FakeBlocks;

static int
fake_block_alloc (int device, guint64 bytes, gpointer *ptr, gpointer data)
{
  FakeBlocks *f = data;

  if (f->fail)
    return AIRY_GPU_CUDA_OUT_OF_MEMORY;
  f->allocs++;
  *ptr = GSIZE_TO_POINTER (++f->next);
  return 0;
}

static void
fake_block_release (int device, gpointer ptr, gpointer data)
{
  ((FakeBlocks *) data)->frees++;
}

static const AiryBlockOps fake_block_ops = { fake_block_alloc, fake_block_release };

/* one run's buffers on `device`: kept blocks freed unless wanted, taken, given back */
static guint
fake_run (GPtrArray *cache, int device, const guint64 *sizes, guint n, FakeBlocks *f)
{
  gpointer ptr[8];
  guint k, reused = 0;

  _airy_blocks_keep (cache, device, sizes, n, &fake_block_ops, f);
  for (k = 0; k < n; k++)
    {
      gboolean kept;

      g_assert_cmpint (_airy_blocks_take (cache, device, sizes[k], &fake_block_ops, f, &ptr[k], &kept), ==, 0);
      reused += kept;
    }
  g_assert_cmpuint (_airy_blocks_held (cache, device), ==, 0);
  for (k = 0; k < n; k++)
    _airy_blocks_give (cache, device, ptr[k], sizes[k]);
  return reused;
}

static void
test_blocks (void)
{
  g_autoptr(GPtrArray) cache = g_ptr_array_new ();
  FakeBlocks f = { 0 };
  const guint64 seed[] = { 100, 200, 200, 300 }, other[] = { 100, 250 };
  gpointer p;
  gboolean kept;

  /* the first run allocates, the next ones of the same shapes take them */
  g_assert_cmpuint (fake_run (cache, 0, seed, 4, &f), ==, 0);
  g_assert_cmpuint (fake_run (cache, 0, seed, 4, &f), ==, 4);
  g_assert_cmpuint (fake_run (cache, 0, seed, 4, &f), ==, 4);
  g_assert_cmpuint (f.allocs, ==, 4);
  g_assert_cmpuint (f.frees, ==, 0);
  g_assert_cmpuint (_airy_blocks_held (cache, 0), ==, 800);
  /* another device's are its own */
  g_assert_cmpuint (fake_run (cache, 1, other, 2, &f), ==, 0);
  g_assert_cmpuint (_airy_blocks_held (cache, 0), ==, 800);
  /* another shape: what it cannot take is freed before it allocates */
  g_assert_cmpuint (fake_run (cache, 0, other, 2, &f), ==, 1);
  g_assert_cmpuint (f.frees, ==, 3);
  g_assert_cmpuint (f.allocs, ==, 7);
  g_assert_cmpuint (_airy_blocks_held (cache, 0), ==, 350);
  /* a failed allocation says so; a run short of memory frees them all */
  f.fail = 1;
  g_assert_cmpint (_airy_blocks_take (cache, 0, 999, &fake_block_ops, &f, &p, &kept), ==,
                   AIRY_GPU_CUDA_OUT_OF_MEMORY);
  g_assert_false (kept);
  _airy_blocks_trim (cache, 0, &fake_block_ops, &f);
  g_assert_cmpuint (_airy_blocks_held (cache, 0), ==, 0);
  g_assert_cmpuint (_airy_blocks_held (cache, 1), ==, 350);
  _airy_blocks_trim (cache, -1, &fake_block_ops, &f);
  g_assert_cmpuint (cache->len, ==, 0);
  g_assert_cmpuint (f.frees, ==, f.allocs);
}

/* ---- waiting for a collective ---- */

static int fake_last_error;

static int
fake_clear (void)
{
  int e = fake_last_error;

  fake_last_error = 0;
  return e;
}

static const char *
fake_string (AiryGpuApi api, int status)
{
  return api == AIRY_GPU_NCCL ? "remote process exited or there was a network error" : "an illegal memory access";
}

static const AiryGpuHooks fake_hooks = { fake_string, fake_clear };

typedef struct
{
  int    polls_to_done[4];    /* stream i is done from this poll on (-1: never) */
  int    error_at, error;     /* the communicators' async error from poll error_at on (0: none) */
  int    query_error;
  int    poll;
  gint64 clock;
} FakeWait;

static int
fake_query (int i, gpointer data)
{
  FakeWait *f = data;

  if (f->query_error)
    return f->query_error;
  return f->polls_to_done[i] >= 0 && f->poll >= f->polls_to_done[i] ? 0 : 1;
}

static int
fake_async (int i, gpointer data)
{
  FakeWait *f = data;

  return f->error && f->poll >= f->error_at ? f->error : i == 0 ? AIRY_NCCL_IN_PROGRESS : 0;
}

static gint64
fake_now (gpointer data)
{
  return ((FakeWait *) data)->clock;
}

static void
fake_pause (gpointer data)
{
  FakeWait *f = data;

  f->poll++;
  f->clock += 1000;   /* 1 ms a poll */
}

static const AiryCollectiveWaitOps fake_wait_ops = { fake_query, fake_async, fake_now, fake_pause };

static void
test_collective_wait (void)
{
  g_autoptr(GError) error = NULL;
  gint64 timeout_us = 0;

  /* done: each device's stream finishes in its own time */
  {
    FakeWait f = { { 3, 0, 7, 1 } };

    g_assert_true (_airy_collective_wait (&fake_wait_ops, &fake_hooks, 4, 60 * G_USEC_PER_SEC, &f, &error));
    g_assert_no_error (error);
    g_assert_cmpint (f.poll, ==, 7);
  }
  /* a peer that stopped: the communicator's error, not a hang */
  {
    FakeWait f = { { -1, -1 }, 5, 6 };

    g_assert_false (_airy_collective_wait (&fake_wait_ops, &fake_hooks, 2, 60 * G_USEC_PER_SEC, &f, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND);
    g_assert_true (g_str_has_prefix (error->message, "ncclCommGetAsyncError (comm, &state) failed: remote process "
                                                     "exited or there was a network error (6)"));
    g_assert_cmpint (f.poll, ==, 5);
    g_clear_error (&error);
  }
  /* nothing ever happens: the deadline (2 s of fake polls), with the count */
  {
    FakeWait f = { { 0, -1, -1 } };

    g_assert_false (_airy_collective_wait (&fake_wait_ops, &fake_hooks, 3, 2 * G_USEC_PER_SEC, &f, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND);
    g_assert_cmpstr (error->message, ==, "NCCL all-reduce: 2 of 3 devices not done after 2 s (a device or a rank "
                                         "stopped taking part; AIRY_NCCL_TIMEOUT sets the limit)");
    g_assert_cmpint (f.poll, ==, 2000);
    g_clear_error (&error);
  }
  /* the stream's own failure */
  {
    FakeWait f = { { -1 }, 0, 0, 700 };

    g_assert_false (_airy_collective_wait (&fake_wait_ops, &fake_hooks, 1, G_USEC_PER_SEC, &f, &error));
    g_assert_true (g_str_has_prefix (error->message, "cudaStreamQuery (stream) failed: an illegal memory access (700)"));
    g_clear_error (&error);
  }
  /* the limit from the environment */
  g_assert_true (_airy_collective_timeout (&timeout_us, &error));
  g_assert_cmpint (timeout_us, ==, 120 * G_USEC_PER_SEC);
  g_setenv ("AIRY_NCCL_TIMEOUT", "7", TRUE);
  g_assert_true (_airy_collective_timeout (&timeout_us, &error));
  g_assert_cmpint (timeout_us, ==, 7 * G_USEC_PER_SEC);
  g_setenv ("AIRY_NCCL_TIMEOUT", "0", TRUE);
  g_assert_false (_airy_collective_timeout (&timeout_us, &error));
  g_assert_cmpstr (error->message, ==, "AIRY_NCCL_TIMEOUT: must be whole seconds in [1, 86400], got \"0\"");
  g_unsetenv ("AIRY_NCCL_TIMEOUT");
}

/* ---- plans past 2³¹ elements, a stale error at an entry point ---- */

static void
test_fft_span (void)
{
  const gint64 seed[2] = { 1536, 1536 }, big[2] = { 16384, 16384 }, col = 16384;
  const gint64 one[2] = { col, 0 };

  /* the seed's batch of 16 planes: inside 32 bits */
  g_assert_cmpuint (_airy_fft_span (2, seed, FALSE, 1, 0, 16), ==, 16ull * 1536 * 1536);
  g_assert_cmpuint (_airy_fft_span (2, seed, FALSE, 1, 0, 16), <=, AIRY_FFT_SPAN_32);
  /* 8 planes of 16384², and the column pass of 8 such planes (stride 8·w,
   * 8·w transforms of h): 2³¹ elements, past the 32-bit plan call */
  g_assert_cmpuint (_airy_fft_span (2, big, FALSE, 1, 0, 8), ==, G_GUINT64_CONSTANT (2147483648));
  g_assert_cmpuint (_airy_fft_span (1, one, TRUE, 8 * col, 1, 8 * col), ==, G_GUINT64_CONSTANT (2147483648));
  g_assert_cmpuint (_airy_fft_span (1, one, TRUE, 8 * col, 1, 8 * col), >, AIRY_FFT_SPAN_32);
  /* and a vectorial batch (6 entries × 16 planes) of 8192² far past it */
  g_assert_cmpuint (_airy_fft_span (1, (gint64[]) { 8192, 0 }, TRUE, 96 * 8192, 1, 96 * 8192), ==,
                    G_GUINT64_CONSTANT (6442450944));
}

static void
test_enter_clears (void)
{
  g_autoptr(GError) error = NULL;

  /* an unchecked call of other code left an error on this thread: the
   * fit's entry drops it, and its first check (a launch reports the last
   * error) passes */
  fake_last_error = 700;
  g_assert_cmpint (_airy_gpu_enter (&fake_hooks), ==, 700);
  g_assert_true (_airy_gpu_check (&fake_hooks, fake_clear (), "launch", "f.c", 1, AIRY_GPU_CUDA, &error));
  g_assert_no_error (error);
  g_assert_cmpint (_airy_gpu_enter (&fake_hooks), ==, 0);
}

/* ---- which ops the module says it runs ---- */

/* A vectorial polarisation chain whose Jones matrices cannot all fold into
 * the source (propagations between them), as its plan's program. */
static const char *jones_chain =
  "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.55]},"
  " \"elements\": [{\"type\": \"plane-wave\", \"field\": \"vectorial\", \"jones-angle\": 0.3},"
  "  {\"type\": \"linear-polarizer\", \"angle\": 0.2}, {\"type\": \"propagate\", \"z\": 20},"
  "  {\"type\": \"quarter-wave-plate\", \"angle\": 0.7853981633974483},"
  "  {\"type\": \"jones-sample\", \"pattern\": \"spherulite\", \"retardance\": 3.14159, \"radius\": 10},"
  "  {\"type\": \"propagate\", \"z\": 20}, {\"type\": \"circular-polarizer\"},"
  "  {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}]}";

static void
test_supports_jones (void)
{
  /* the module, loaded without a driver, still answers supports_op: a
   * Jones field's JONES ops run on the device (no fallback to the CPU) */
  AiryBackend *cuda = airy_backend_lookup ("cuda");
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryPlan) plan = NULL;
  g_autoptr(GError) error = NULL;
  AiryRunOptions options = { .backend = "cpu" };
  guint i, n_jones = 0;

  if (cuda == NULL)
    {
      g_test_skip ("the CUDA module is not built");
      return;
    }
  system = test_system (jones_chain);
  plan = _airy_plan_new (system, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (_airy_plan_compile (plan, &error));
  g_assert_no_error (error);
  for (i = 0; i < plan->ops->len; i++)
    {
      const AiryOp *op = g_ptr_array_index (plan->ops, i);

      n_jones += op->kind == AIRY_OP_JONES;
      g_assert_true (_airy_backend_supports_op (cuda, op));
    }
  g_assert_cmpuint (n_jones, >=, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/cuda-host/layout/entries-in-one-transform", test_layout);
  g_test_add_func ("/cuda-host/buffers/list-and-budget", test_buffers);
  g_test_add_func ("/cuda-host/buffers/kept-across-runs", test_blocks);
  g_test_add_func ("/cuda-host/nccl/wait-with-deadline", test_collective_wait);
  g_test_add_func ("/cuda-host/fft/span-past-2-31", test_fft_span);
  g_test_add_func ("/cuda-host/check/entry-drops-stale-error", test_enter_clears);
  g_test_add_func ("/cuda-host/supports-op/jones", test_supports_jones);
  return g_test_run ();
}
