/* Backend logic that needs no GPU: the CUDA backend's bookkeeping
 * (engine/cuda/airy-cuda-private.h) with fake CUDA functions, its defocus
 * phase formula, the run driver around a failing backend, slots without
 * planes on virtual CPU devices, and the results kept for the viewer. */
#include "config.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include "airy-test-util.h"
#include "airy-plan-private.h"
#include "airy-ops-private.h"
#include "cpu/airy-cpu-backend.h"
#include "cuda/airy-cuda-private.h"
#include "cuda/airy-cuda-kernels.h"

/* ---- the check path ---- */

/* a fake CUDA thread state: a failed call leaves its code as the last
 * error, a kernel launch reports (and clears) whatever is there */
static int fake_last_error;
static int fake_clears;

static int
fake_clear (void)
{
  int e = fake_last_error;

  fake_last_error = 0;
  fake_clears++;
  return e;
}

static const char *
fake_string (AiryGpuApi api, int status)
{
  return api == AIRY_GPU_NCCL ? "unhandled system error" : status == 2 ? "out of memory" : "invalid argument";
}

static const AiryGpuHooks fake_hooks = { fake_string, fake_clear };

static int
fake_malloc_fails (void)
{
  fake_last_error = AIRY_GPU_CUDA_OUT_OF_MEMORY;
  return AIRY_GPU_CUDA_OUT_OF_MEMORY;
}

static int
fake_launch (void)
{
  /* cudaGetLastError() after <<<…>>> */
  int e = fake_last_error;

  fake_last_error = 0;
  return e;
}

#define FAKE_CHECK(expr, error) _airy_gpu_check (&fake_hooks, (expr), #expr, "file.c", 7, AIRY_GPU_CUDA, (error))

static void
test_check_clears_last_error (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) second = NULL;

  fake_last_error = 0;
  fake_clears = 0;
  /* a run runs out of memory … */
  g_assert_false (FAKE_CHECK (fake_malloc_fails (), &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_assert_cmpstr (error->message, ==, "fake_malloc_fails () failed: out of memory (2) (file.c:7)");
  g_assert_cmpint (fake_clears, ==, 1);
  /* … and the next run's first launch on the same thread is clean */
  g_assert_true (FAKE_CHECK (fake_launch (), &second));
  g_assert_no_error (second);

  /* the first failure is the one reported; later ones still clear */
  g_assert_false (FAKE_CHECK (fake_malloc_fails (), &second));
  g_assert_false (_airy_gpu_check (&fake_hooks, 5, "cufftExecC2C (…)", "f.c", 9, AIRY_GPU_CUFFT, &second));
  g_assert_cmpstr (second->message, ==, "fake_malloc_fails () failed: out of memory (2) (file.c:7)");
  g_assert_cmpint (fake_last_error, ==, 0);
  g_clear_error (&second);
  /* NCCL and cuFFT failures other than allocation are backend errors */
  g_assert_false (_airy_gpu_check (&fake_hooks, 2, "ncclAllReduce (…)", "f.c", 3, AIRY_GPU_NCCL, &second));
  g_assert_error (second, AIRY_ERROR, AIRY_ERROR_BACKEND);
  g_assert_cmpstr (second->message, ==, "ncclAllReduce (…) failed: unhandled system error (2) (f.c:3)");
  /* without an error to fill the failure is still cleared */
  fake_malloc_fails ();
  g_assert_false (FAKE_CHECK (AIRY_GPU_CUDA_OUT_OF_MEMORY, NULL));
  g_assert_cmpint (fake_last_error, ==, 0);
}

/* ---- NCCL communicators ---- */

typedef struct
{
  int    inits, destroyed, aborted;
  int    fail_init;
  GArray *log;   /* device counts given to init_all */
} FakeNccl;

static int
fake_init_all (gpointer *comms, int n, const int *devices, gpointer data)
{
  FakeNccl *f = data;
  int i;

  f->inits++;
  g_array_append_val (f->log, n);
  if (f->fail_init)
    return 3;
  for (i = 0; i < n; i++)
    comms[i] = GINT_TO_POINTER (100 + devices[i]);
  return 0;
}

static void
fake_destroy (gpointer comm, gpointer data)
{
  ((FakeNccl *) data)->destroyed++;
}

static void
fake_abort (gpointer comm, gpointer data)
{
  ((FakeNccl *) data)->aborted++;
}

static const AiryCommOps fake_comm_ops = { fake_init_all, fake_destroy, fake_abort };

static void
test_comms (void)
{
  FakeNccl f = { 0, 0, 0, 0, g_array_new (FALSE, FALSE, sizeof (int)) };
  AiryCommSet set = { 0 };
  int two[] = { 0, 2 }, three[] = { 0, 1, 2 };

  /* made once per device set, kept for the same set */
  g_assert_cmpint (_airy_comms_get (&set, two, 2, &fake_comm_ops, &f), ==, 0);
  g_assert_cmpint (_airy_comms_get (&set, two, 2, &fake_comm_ops, &f), ==, 0);
  g_assert_cmpint (f.inits, ==, 1);
  g_assert_cmpint (GPOINTER_TO_INT (set.comms[1]), ==, 102);
  /* another set replaces them */
  g_assert_cmpint (_airy_comms_get (&set, three, 3, &fake_comm_ops, &f), ==, 0);
  g_assert_cmpint (f.inits, ==, 2);
  g_assert_cmpint (f.destroyed, ==, 2);
  /* a failed collective: aborted (not destroyed), made anew next time */
  _airy_comms_failed (&set, &fake_comm_ops, &f);
  g_assert_cmpint (f.aborted, ==, 3);
  g_assert_cmpint (set.n, ==, 0);
  g_assert_cmpint (_airy_comms_get (&set, three, 3, &fake_comm_ops, &f), ==, 0);
  g_assert_cmpint (f.inits, ==, 3);
  /* an init that fails leaves no half set behind */
  f.fail_init = 1;
  g_assert_cmpint (_airy_comms_get (&set, two, 2, &fake_comm_ops, &f), ==, 3);
  g_assert_cmpint (set.n, ==, 0);
  g_assert_null (set.comms);
  f.fail_init = 0;
  g_assert_cmpint (_airy_comms_get (&set, two, 2, &fake_comm_ops, &f), ==, 0);
  g_assert_cmpint (set.n, ==, 2);
  _airy_comms_clear (&set, &fake_comm_ops, &f, FALSE);
  g_array_unref (f.log);
}

/* The device set a reduction uses: the slots with planes (one: no NCCL at
 * all). */
static void
test_active_slots (void)
{
  AiryChunk chunks[4] = { { 0, 0, 0, 0, 1 }, { 1, 1, 0, 5, 1 }, { 2, 2, 5, 0, 1 }, { 3, 3, 5, 6, 1 } };
  AiryRunState state = { 0 };
  guint active[4];

  state.n_slots = 4;
  state.chunks = chunks;
  g_assert_cmpuint (_airy_run_state_active_slots (&state, active), ==, 2);
  g_assert_cmpuint (active[0], ==, 1);
  g_assert_cmpuint (active[1], ==, 3);
  chunks[3].count = 0;
  g_assert_cmpuint (_airy_run_state_active_slots (&state, active), ==, 1);
}

/* ---- CUDA–GL registrations ---- */

typedef struct
{
  int registered, unregistered, fail;
  int current;            /* the fake's current CUDA device */
  GString *log;           /* each unregistration: "resource@device " */
} FakeGl;

static int
fake_register (const AiryGlRegistration *key, gpointer *resource, gpointer data)
{
  FakeGl *f = data;

  if (f->fail)
    return 999;
  *resource = GINT_TO_POINTER (++f->registered);
  return 0;
}

static void
fake_unregister (gpointer resource, gpointer data)
{
  FakeGl *f = data;

  f->unregistered++;
  if (f->log)
    g_string_append_printf (f->log, "%d@%d ", GPOINTER_TO_INT (resource), f->current);
}

static int
fake_set_device (int device, gpointer data)
{
  FakeGl *f = data;
  int previous = f->current;

  f->current = device;
  return previous;
}

static const AiryGlRegistrationOps fake_gl_ops = { fake_register, fake_unregister, fake_set_device };

static void
test_gl_registrations (void)
{
  g_autoptr(GPtrArray) cache = g_ptr_array_new ();
  FakeGl f = { 0 };
  int ctx_a, ctx_b, status;
  AiryGlRegistration key = { &ctx_a, 3, 1, 64, 32, 0, NULL }, *reg, *again;

  reg = _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);
  again = _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);
  g_assert_true (reg == again);
  g_assert_cmpint (f.registered, ==, 1);
  /* re-specified (the viewer bumps the generation), resized, another GPU:
   * each drops the stale registration first */
  key.generation = 2;
  reg = _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);
  g_assert_cmpint (f.registered, ==, 2);
  g_assert_cmpint (f.unregistered, ==, 1);
  key.width = 65;
  _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);
  key.device = 1;
  _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);
  g_assert_cmpint (f.registered, ==, 4);
  g_assert_cmpint (f.unregistered, ==, 3);
  g_assert_cmpuint (cache->len, ==, 1);
  /* the same texture name in another context is another texture */
  key.context = &ctx_b;
  _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);
  g_assert_cmpuint (cache->len, ==, 2);
  g_assert_cmpint (f.unregistered, ==, 3);
  /* a failed registration is not kept */
  f.fail = 1;
  key.texture = 9;
  g_assert_null (_airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status));
  g_assert_cmpint (status, ==, 999);
  g_assert_cmpuint (cache->len, ==, 2);
  /* a context going away takes its registrations only */
  _airy_gl_registrations_release (cache, &ctx_a, &fake_gl_ops, &f);
  g_assert_cmpuint (cache->len, ==, 1);
  g_assert_true (((AiryGlRegistration *) g_ptr_array_index (cache, 0))->context == &ctx_b);
  _airy_gl_registrations_release (cache, NULL, &fake_gl_ops, &f);
  g_assert_cmpuint (cache->len, ==, 0);
  g_assert_cmpint (f.unregistered, ==, f.registered);
}

static void
test_gl_unregister_device (void)
{
  /* cudaGraphicsUnregisterResource acts on the current device: each
   * registration goes on the device it was made on, whatever is current,
   * which is current again afterwards */
  g_autoptr(GPtrArray) cache = g_ptr_array_new ();
  g_autoptr(GString) log = g_string_new (NULL);
  FakeGl f = { .current = 0, .log = log };
  int ctx, status;
  AiryGlRegistration key = { &ctx, 3, 1, 64, 32, 1, NULL };

  _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);   /* resource 1 on device 1 */
  key.texture = 4;
  key.device = 2;
  _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);   /* resource 2 on device 2 */
  key.device = 0;
  f.current = 3;
  _airy_gl_registration_get (cache, &key, &fake_gl_ops, &f, &status);   /* stale: 2 dropped on device 2 */
  g_assert_cmpstr (log->str, ==, "2@2 ");
  g_assert_cmpint (f.current, ==, 3);
  _airy_gl_registrations_release (cache, NULL, &fake_gl_ops, &f);
  /* resource 1 on device 1, resource 3 (made on device 0) on device 0 */
  g_assert_true (g_str_equal (log->str, "2@2 1@1 3@0 ") || g_str_equal (log->str, "2@2 3@0 1@1 "));
  g_assert_cmpint (f.current, ==, 3);
}

/* ---- the device budget ---- */

static void
test_device_budget (void)
{
  guint64 M = 1 << 20;
  guint batch;

  /* without a forced budget: the free memory */
  g_assert_cmpuint (_airy_device_usable (500 * M, 0, 300 * M), ==, 500 * M);
  /* within one, what the backend keeps counts as used */
  g_assert_cmpuint (_airy_device_usable (500 * M, 100 * M, 60 * M), ==, 40 * M);
  g_assert_cmpuint (_airy_device_usable (500 * M, 100 * M, 160 * M), ==, 0);
  g_assert_cmpuint (_airy_device_usable (20 * M, 100 * M, 10 * M), ==, 20 * M);
  /* a full batch fits */
  g_assert_cmpint (_airy_device_batch (1000 * M, 100 * M, 10 * M, 40, 16, FALSE, &batch), ==, AIRY_BATCH_OK);
  g_assert_cmpuint (batch, ==, 16);
  /* the previous result held on the device: room is made first (it moves
   * to host memory), not a smaller batch or a false "needs X, Y free" */
  g_assert_cmpint (_airy_device_batch (_airy_device_usable (1000 * M, 300 * M, 100 * M), 100 * M, 10 * M, 40, 16,
                                       FALSE, &batch), ==, AIRY_BATCH_MAKE_ROOM);
  g_assert_cmpint (_airy_device_batch (_airy_device_usable (1000 * M, 300 * M, 0), 100 * M, 10 * M, 40, 16,
                                       TRUE, &batch), ==, AIRY_BATCH_OK);
  g_assert_cmpuint (batch, ==, 16);
  /* after room was made, what still does not fit is split or refused */
  g_assert_cmpint (_airy_device_batch (200 * M, 100 * M, 10 * M, 40, 16, TRUE, &batch), ==, AIRY_BATCH_OK);
  g_assert_cmpuint (batch, ==, 8);
  g_assert_cmpint (_airy_device_batch (100 * M, 100 * M, 10 * M, 40, 16, TRUE, &batch), ==, AIRY_BATCH_TOO_BIG);
  /* fewer planes than a batch */
  g_assert_cmpint (_airy_device_batch (1000 * M, 0, 10 * M, 3, 16, FALSE, &batch), ==, AIRY_BATCH_OK);
  g_assert_cmpuint (batch, ==, 3);
}

/* ---- the defocus phase on the device ---- */

static void
test_defocus_cis (void)
{
  /* the fused path's e^{i z G} against the CPU's double cexp, up to
   * |z·G| ≈ 3·10⁴ rad (z = 10 mm at NA 0.8): float rounding of the result
   * only, whatever z is */
  static const double z[] = { 0.5, -4.0, 100.0, -1000.0, 10000.0 };
  static const double g[] = { 2.84, -0.731, 1.0 / 3.0, 2.71828 };
  double worst = 0.0, naive = 0.0;
  guint i, k;

  for (i = 0; i < G_N_ELEMENTS (z); i++)
    for (k = 0; k < G_N_ELEMENTS (g); k++)
      {
        double complex ref = cexp (I * z[i] * g[k]);
        float s, c, fs, fc;

        airy_defocus_cis (z[i], g[k], &s, &c);
        worst = MAX (worst, cabs ((c + I * s) - ref));
        /* the float product it replaces drifts with |z·G| */
        fs = sinf ((float) z[i] * (float) g[k]);
        fc = cosf ((float) z[i] * (float) g[k]);
        naive = MAX (naive, cabs ((fc + I * fs) - ref));
      }
  g_test_message ("worst |e^{izG} − cexp| = %.2g (float phase: %.2g)", worst, naive);
  g_assert_cmpfloat (worst, <=, 3e-7);
  g_assert_cmpfloat (naive, >, 1e-4);
}

/* ---- a failing prepare releases the run ---- */

static guint fake_prepared, fake_released;

static gboolean
failing_prepare (AiryBackend *backend, AiryRunState *state, GError **error)
{
  fake_prepared++;
  /* state a real backend would have made (buffers, a pupil reference) */
  state->backend_data = g_strdup ("run state");
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, "grid.shape: device 0 needs at least 9 GiB, 1 GiB is free");
  return FALSE;
}

static void
failing_release (AiryBackend *backend, AiryRunState *state)
{
  fake_released++;
  g_clear_pointer (&state->backend_data, g_free);
}

static guint
one_device (AiryBackend *backend)
{
  return 1;
}

static gboolean
never_execute (AiryBackend *backend, AiryRunState *state, const AiryChunk *chunk, GError **error)
{
  g_assert_not_reached ();
  return FALSE;
}

static const AiryBackendOps failing_ops = {
  .name = "test-prepare-fails",
  .n_devices = one_device,
  .prepare = failing_prepare,
  .execute = never_execute,
  .release = failing_release,
};

static void
test_prepare_failure_releases (void)
{
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5}, {\"type\": \"ff-lens\", \"f\": 50}]}");
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();

  airy_backend_register (&failing_ops, NULL);
  g_assert_null (airy_run (system, &(AiryRunOptions) { .backend = "test-prepare-fails" }, NULL, NULL, cancellable,
                           &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_assert_cmpuint (fake_prepared, ==, 1);
  g_assert_cmpuint (fake_released, ==, 1);
  /* the caller's cancellable is no longer connected to the dead run */
  g_cancellable_cancel (cancellable);
}

/* ---- slots without planes ---- */

static const char *sharded_psf =
  "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
  " \"z\": {\"values\": [-1, 0, 2]},"
  " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5}, {\"type\": \"ff-lens\", \"f\": 50}]}";

static const char *sharded_image =
  "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.2}, \"spectrum\": {\"wavelengths\": [0.532]},"
  " \"z\": {\"values\": [-0.5, 0.5]},"
  " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
  " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"beads\": {\"count\": 20, \"seed\": 3}}}";

static void
assert_same (AiryStack *a, AiryStack *b)
{
  gsize n = (gsize) a->depth * airy_stack_plane_size (a), i;
  float lo, hi;
  double worst = 0.0;

  g_assert_cmpuint (a->depth, ==, b->depth);
  g_assert_cmpuint (a->height, ==, b->height);
  g_assert_cmpuint (a->width, ==, b->width);
  airy_stack_min_max (a, &lo, &hi);
  g_assert_cmpfloat (hi, >, 0.0f);
  for (i = 0; i < n; i++)
    worst = MAX (worst, fabs (a->data[i] - b->data[i]));
  g_assert_cmpfloat (worst, <=, 1e-6 * hi);
}

static void
check_empty_slots (const char *json, guint planes)
{
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) one = test_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = (guint[]) { 0 },
                                                                    .n_devices = 1 });
  guint devices[] = { 0, 1, 2, 3 };
  /* explicit chunks with zeros, the first slot empty among them: the
   * reduction's root is the first slot with planes */
  guint split[][4] = { { 0, planes - 1, 0, 1 }, { 0, 0, 0, planes }, { planes, 0, 0, 0 } };
  guint k;

  /* fewer planes than devices */
  {
    g_autoptr(AiryResult) many = test_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = devices,
                                                                       .n_devices = 4 });
    g_assert_cmpuint (many->n_devices, ==, 4);
    assert_same (one->stack, many->stack);
  }
  for (k = 0; k < G_N_ELEMENTS (split); k++)
    {
      g_autoptr(AiryResult) explicit = test_run (system, &(AiryRunOptions) { .backend = "cpu", .devices = devices,
                                                                             .n_devices = 4, .chunks = split[k] });
      assert_same (one->stack, explicit->stack);
    }
}

static void
test_empty_slots (void)
{
  g_setenv ("AIRY_CPU_DEVICES", "4", TRUE);
  check_empty_slots (sharded_psf, 3);
  check_empty_slots (sharded_image, 2);
  g_unsetenv ("AIRY_CPU_DEVICES");
}

/* ---- results kept for the viewer ---- */

typedef struct
{
  guint  calls;
  guint  width, height;
  float  first, last;
} Upload;

static void
fake_upload (const float *data, guint width, guint height, gpointer user_data)
{
  Upload *u = user_data;

  u->calls++;
  u->width = width;
  u->height = height;
  u->first = data[0];
  u->last = data[(gsize) width * height - 1];
}

static void
test_resident_host (void)
{
  g_autoptr(AirySystem) system = test_system (sharded_psf);
  g_autoptr(AiryResult) plain = test_run (system, &(AiryRunOptions) { .backend = "cpu" });
  g_autoptr(AiryResult) kept = test_run (system, &(AiryRunOptions) { .backend = "cpu", .resident = TRUE });
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) copy = NULL;
  const AiryStack *s;
  AiryStack *ref = plain->stack;
  g_autofree float *xz = g_new (float, 3 * 64), *yz = g_new (float, 3 * 64), *mip = g_new (float, 64 * 64);
  g_autofree float *got = g_new (float, 3 * 64 * 64);
  guint64 counts[16], expect[16];
  AirySliceStats stats = { 0, 0, 16, counts };
  Upload up = { 0 };
  AiryTexture texture = { .texture = 1, .upload = fake_upload, .user_data = &up, .interop = TRUE };
  float lo, hi;
  guint z, y;

  /* the CPU keeps the stack itself, in host memory */
  g_assert_null (kept->stack);
  g_assert_nonnull (kept->resident);
  g_assert_cmpstr (airy_resident_get_backend_name (kept->resident), ==, "cpu");
  s = airy_resident_get_stack (kept->resident);
  g_assert_nonnull (s->data);
  assert_same (ref, (AiryStack *) s);
  g_assert_cmpfloat (s->dx, ==, ref->dx);
  g_assert_cmpfloat (s->dz, ==, ref->dz);

  /* slices as the viewer cuts them */
  airy_stack_section_xz (ref, 20, xz);
  airy_stack_section_yz (ref, 33, yz);
  airy_stack_mip (ref, mip);
  g_assert_true (airy_resident_read_slice (kept->resident, &(AirySlice) { AIRY_SLICE_XZ, 20 }, got, &error));
  g_assert_cmpmem (got, 3 * 64 * sizeof (float), xz, 3 * 64 * sizeof (float));
  g_assert_true (airy_resident_read_slice (kept->resident, &(AirySlice) { AIRY_SLICE_YZ, 33 }, got, &error));
  g_assert_cmpmem (got, 3 * 64 * sizeof (float), yz, 3 * 64 * sizeof (float));
  g_assert_true (airy_resident_read_slice (kept->resident, &(AirySlice) { AIRY_SLICE_MIP, 0 }, got, &error));
  g_assert_cmpmem (got, 64 * 64 * sizeof (float), mip, 64 * 64 * sizeof (float));
  for (z = 0; z < 3; z++)
    for (y = 0; y < 64; y++)
      g_assert_cmpfloat (mip[y * 64 + 5], >=, airy_stack_plane (ref, z)[y * 64 + 5]);

  /* a box: the axial profile through one pixel, and a block */
  g_assert_true (airy_resident_read_box (kept->resident, &(AiryBox) { 0, 32, 32, 3, 1, 1 }, got, &error));
  for (z = 0; z < 3; z++)
    g_assert_cmpfloat (got[z], ==, airy_stack_plane (ref, z)[32 * 64 + 32]);
  g_assert_true (airy_resident_read_box (kept->resident, &(AiryBox) { 1, 10, 20, 2, 3, 4 }, got, &error));
  g_assert_cmpfloat (got[1 * 12 + 2 * 4 + 3], ==, airy_stack_plane (ref, 2)[12 * 64 + 23]);

  /* statistics of a plane and of the stack */
  g_assert_true (airy_resident_stats (kept->resident, &(AirySlice) { AIRY_SLICE_XY, 1 }, &stats, &error));
  airy_values_min_max (airy_stack_plane (ref, 1), 64 * 64, &lo, &hi);
  g_assert_cmpfloat (stats.min, ==, lo);
  g_assert_cmpfloat (stats.max, ==, hi);
  airy_histogram (airy_stack_plane (ref, 1), 64 * 64, lo, hi, 16, expect);
  g_assert_cmpmem (counts, sizeof counts, expect, sizeof expect);
  g_assert_true (airy_resident_stats (kept->resident, &(AirySlice) { AIRY_SLICE_STACK, 0 }, &stats, &error));
  airy_stack_min_max (ref, &lo, &hi);
  g_assert_cmpfloat (stats.max, ==, hi);
  g_assert_cmpuint (counts[0] + counts[15], <=, 3 * 64 * 64);

  /* into a texture: uploaded from host memory, and it says so */
  g_assert_true (airy_resident_to_texture (kept->resident, &(AirySlice) { AIRY_SLICE_YZ, 33 }, &texture, &error));
  g_assert_cmpint (texture.path, ==, AIRY_TEXTURE_HOST);
  g_assert_cmpuint (up.calls, ==, 1);
  g_assert_cmpuint (up.width, ==, 64);
  g_assert_cmpuint (up.height, ==, 3);
  g_assert_cmpfloat (up.last, ==, yz[3 * 64 - 1]);
  g_assert_true (airy_resident_to_texture (kept->resident, &(AirySlice) { AIRY_SLICE_XY, 2 }, &texture, &error));
  g_assert_cmpfloat (up.first, ==, airy_stack_plane (ref, 2)[0]);

  /* bad requests name the range */
  g_assert_false (airy_resident_read_slice (kept->resident, &(AirySlice) { AIRY_SLICE_XY, 3 }, got, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "slice: index must be in [0, 2], got 3");
  g_clear_error (&error);
  g_assert_false (airy_resident_read_box (kept->resident, &(AiryBox) { 2, 0, 60, 2, 1, 5 }, got, &error));
  g_assert_cmpstr (error->message, ==, "box: [2, +2) × [0, +1) × [60, +5) must lie in the 3 × 64 × 64 stack");
  g_clear_error (&error);

  /* saving takes a host copy */
  copy = airy_resident_to_stack (kept->resident, &error);
  g_assert_no_error (error);
  assert_same (ref, copy);
  g_assert_cmpfloat (copy->dz, ==, ref->dz);
}

/* A result whose values are elsewhere (a GPU): saving reads every value
 * through the box slot and keeps what a file carries (exact z, provenance). */
static gboolean
formula_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  guint z, y, x;

  for (z = 0; z < box->depth; z++)
    for (y = 0; y < box->height; y++)
      for (x = 0; x < box->width; x++)
        out[((gsize) z * box->height + y) * box->width + x] = (float) (1000 * (box->z + z) + 10 * (box->y + y) + box->x + x);
  return TRUE;
}

static gboolean
unused_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  g_assert_not_reached ();
  return FALSE;
}

static gboolean
unused_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  g_assert_not_reached ();
  return FALSE;
}

static const AiryResidentOps formula_ops = { .read_slice = unused_slice, .read_box = formula_box, .stats = unused_stats };

static void
test_resident_to_stack (void)
{
  static const double z[] = { -1.0, 0.25, 3.0 };
  static const double wavelengths[] = { 0.532 }, weights[] = { 1.0 };
  AiryStack *geometry = g_new0 (AiryStack, 1);
  g_autoptr(AiryResident) r = NULL;
  g_autoptr(AiryStack) copy = NULL;
  g_autoptr(GError) error = NULL;

  geometry->depth = 3;
  geometry->height = 4;
  geometry->width = 5;
  geometry->dx = geometry->dy = 0.1;
  geometry->bits = 32;
  airy_stack_set_z (geometry, z);
  airy_stack_set_provenance (geometry, 1, wavelengths, weights, "{\"airy\": 1}");
  r = airy_resident_new (NULL, &formula_ops, geometry, NULL);
  copy = airy_resident_to_stack (r, &error);
  g_assert_no_error (error);
  g_assert_nonnull (copy->data);
  g_assert_cmpfloat (airy_stack_plane (copy, 2)[3 * 5 + 4], ==, 2034.0f);
  g_assert_cmpfloat (copy->dx, ==, 0.1);
  g_assert_cmpfloat (airy_stack_get_z (copy, 1), ==, 0.25);
  g_assert_cmpstr (copy->system_json, ==, "{\"airy\": 1}");
  g_assert_cmpuint (copy->n_wavelengths, ==, 1);
}

/* A constant slice: every value in the first bin, as the viewer's
 * histogram always showed it. */
static void
test_stats_constant (void)
{
  float v[10];
  guint64 counts[4];
  AirySliceStats stats = { 0, 0, 4, counts };
  guint i;

  for (i = 0; i < 10; i++)
    v[i] = 3.0f;
  v[4] = NAN;
  airy_values_stats (v, 10, &stats);
  g_assert_cmpfloat (stats.min, ==, 3.0f);
  g_assert_cmpfloat (stats.max, ==, 3.0f);
  g_assert_cmpuint (counts[0], ==, 9);
  g_assert_cmpuint (counts[1] + counts[2] + counts[3], ==, 0);
}


/* ---- the fallback per op (supports_op) ---- */

/* A backend that is the CPU's but for one op kind it does not run, and
 * that records how much of the program it was given. */
static AiryOpKind refused_kind;
static guint      refused_given;

static gboolean
refusing_supports_op (AiryBackend *backend, const AiryOp *op)
{
  return op->kind != refused_kind;
}

static gboolean
refusing_prepare (AiryBackend *backend, AiryRunState *state, GError **error)
{
  guint i;

  refused_given = state->ops->len;
  for (i = 0; i < state->ops->len; i++)
    g_assert_cmpint (((AiryOp *) g_ptr_array_index (state->ops, i))->kind, !=, refused_kind);
  return _airy_cpu_backend_ops ()->prepare (backend, state, error);
}

/* The run on a backend that refuses `kind` is the CPU's, byte for byte; it
 * was given `given` ops (0: none, the CPU ran the system) and said so. */
static void
check_fallback (const char *json, AiryOpKind kind, guint given, const char *warning)
{
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) cpu = test_run (system, &(AiryRunOptions) { .backend = "cpu", .threads = 1 });
  g_autoptr(AiryResult) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *name = g_strdup_printf ("test-no-%s", _airy_op_kind_name (kind));
  g_autofree char *said = g_strdup_printf (warning, name);
  AiryBackendOps *ops = g_new (AiryBackendOps, 1);
  gboolean found = FALSE;
  guint i;

  *ops = *_airy_cpu_backend_ops ();
  ops->name = name;
  ops->supports_op = refusing_supports_op;
  ops->prepare = refusing_prepare;
  airy_backend_register (ops, NULL);   /* the registry keeps ops */
  refused_kind = kind;
  refused_given = 0;
  other = airy_run (system, &(AiryRunOptions) { .backend = name, .threads = 1 }, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (refused_given, ==, given);
  g_assert_cmpuint (other->stack->depth, ==, cpu->stack->depth);
  g_assert_cmpuint (other->stack->height, ==, cpu->stack->height);
  g_assert_cmpuint (other->stack->width, ==, cpu->stack->width);
  g_assert_cmpfloat (other->stack->dx, ==, cpu->stack->dx);
  g_assert_cmpmem (other->stack->data, (gsize) cpu->stack->depth * airy_stack_plane_size (cpu->stack) * sizeof (float),
                   cpu->stack->data, (gsize) cpu->stack->depth * airy_stack_plane_size (cpu->stack) * sizeof (float));
  for (i = 0; i < other->warnings->len; i++)
    found |= g_str_equal (g_ptr_array_index (other->warnings, i), said);
  if (!found)
    g_error ("no warning “%s”", said);
  g_steal_pointer (&name);
}

static void
test_fallback_per_op (void)
{
  const char *tail = "backend %s does not run the operation “%s”: the CPU backend runs it and the ones after it";
  g_autofree char *sensor = g_strdup_printf (tail, "%s", "sensor");
  g_autofree char *convolve = g_strdup_printf (tail, "%s", "convolve");
  g_autofree char *sum = g_strdup_printf (tail, "%s", "sum");
  g_autofree char *microscope = test_microscope_json ("{\"beads\": {\"count\": 25, \"seed\": 2, \"intensity\": 4}}",
                                                      "\"reduce\": \"sum\", \"noise\": \"poisson\", \"exposure\": 30,"
                                                      " \"seed\": 9", 48, 4);

  /* the same sample spectra in both runs (no cache between them) */
  g_setenv ("AIRY_NO_VOLUME_CACHE", "1", TRUE);
  /* a sensor of each plane (the noise's numbers too) */
  check_fallback ("{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.2}, \"spectrum\": {\"wavelengths\": [0.532]},"
                  " \"z\": {\"values\": [-0.5, 0, 0.7]},"
                  " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
                  "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}],"
                  " \"sensor\": {\"resample\": \"block-sum\", \"factor\": 2, \"noise\": \"poisson\", \"exposure\": 1e4,"
                  " \"read-noise\": 1.5, \"seed\": 4}}",
                  AIRY_OP_SENSOR, 1, sensor);
  /* the microscope's convolution and its sensor */
  check_fallback (microscope, AIRY_OP_CONVOLVE, 1, convolve);
  /* a sum of the planes, then a bilinear sensor; the field ops unfused */
  check_fallback ("{\"airy\": 1, \"grid\": {\"shape\": [40, 40], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.55]},"
                  " \"z\": {\"values\": [60, 90, 200]},"
                  " \"elements\": [{\"type\": \"point-source\"}, {\"type\": \"ff-lens\", \"f\": 100}],"
                  " \"sensor\": {\"reduce\": \"sum\", \"resample\": \"linear\", \"spacing\": 3.1}}",
                  AIRY_OP_SUM, 3, sum);
  /* an op of the field stage: the CPU runs the system */
  check_fallback (microscope, AIRY_OP_FUSED_PSF, 0,
                  "backend %s does not run the operation “fused-psf”: the CPU backend runs this system");
  g_unsetenv ("AIRY_NO_VOLUME_CACHE");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/backend/check/clears-last-error", test_check_clears_last_error);
  g_test_add_func ("/backend/comms/device-sets", test_comms);
  g_test_add_func ("/backend/comms/active-slots", test_active_slots);
  g_test_add_func ("/backend/gl/registrations", test_gl_registrations);
  g_test_add_func ("/backend/gl/unregister-on-its-device", test_gl_unregister_device);
  g_test_add_func ("/backend/device-budget", test_device_budget);
  g_test_add_func ("/backend/defocus-cis", test_defocus_cis);
  g_test_add_func ("/backend/run/prepare-failure-releases", test_prepare_failure_releases);
  g_test_add_func ("/backend/sharding/empty-slots", test_empty_slots);
  g_test_add_func ("/backend/resident/host", test_resident_host);
  g_test_add_func ("/backend/resident/stats-constant", test_stats_constant);
  g_test_add_func ("/backend/resident/to-stack", test_resident_to_stack);
  g_test_add_func ("/backend/fallback-per-op", test_fallback_per_op);
  return g_test_run ();
}
