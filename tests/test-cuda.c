/* The CUDA backend against the CPU one. Without a CUDA device the whole
 * binary is skipped (TAP "1..0 # SKIP"), as on CI. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include "airy-test-util.h"

static AiryBackend *cuda;

static AiryResult *
run_on (AirySystem *system, const char *backend, const guint *devices, guint n_devices)
{
  AiryRunOptions options = { .backend = backend, .devices = devices, .n_devices = n_devices };

  return test_run (system, &options);
}

/* max |gpu − cpu| ≤ tolerance × peak */
static void
agree (const char *json, double tolerance)
{
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) cpu = run_on (system, "cpu", NULL, 0);
  g_autoptr(AiryResult) gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);
  gsize n = (gsize) cpu->stack->depth * airy_stack_plane_size (cpu->stack), i;
  float lo, hi;
  double worst = 0.0;

  g_assert_cmpuint (gpu->stack->depth, ==, cpu->stack->depth);
  g_assert_cmpuint (gpu->stack->width, ==, cpu->stack->width);
  g_assert_cmpfloat (gpu->stack->dx, ==, cpu->stack->dx);
  airy_stack_min_max (cpu->stack, &lo, &hi);
  for (i = 0; i < n; i++)
    worst = MAX (worst, fabs (gpu->stack->data[i] - cpu->stack->data[i]));
  g_test_message ("worst |gpu − cpu| = %.3g of the peak", worst / hi);
  g_assert_cmpfloat (worst, <=, tolerance * hi);
}

static void
test_psf_agreement (void)
{
  /* the seed widefield workload at reduced size, and one with every mask kind */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [384, 384], \"spacing\": 1.2}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -4, \"stop\": 4, \"count\": 19},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
         "  {\"type\": \"phase-mask\", \"value\": 1.0}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [200, 256], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [1, 2]},"
         " \"z\": {\"values\": [-2, 0.5, 3]},"
         " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 80, \"n\": 1.0, \"na\": 0.7,"
         "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\", \"offset-x\": 0.4},"
         "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5, 7], \"zernike-coefficients\": [0.1, 0.05]},"
         "  {\"type\": \"gaussian-pupil\", \"waist\": 50}, {\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\", \"strength\": 1},"
         "  {\"type\": \"ff-lens\", \"f\": 80, \"na\": 0.65}]}", 1e-5);
}

static void
test_ops_agreement (void)
{
  /* chains without the fused path run as device operation lists: a plane
   * wave through propagations with padding and an inverse lens; a point
   * source with single-FFT Fresnel and a DF lens; a Gaussian beam */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [96, 80], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
         " \"z\": {\"values\": [0]},"
         " \"elements\": [{\"type\": \"plane-wave\", \"angle-x\": 0.01}, {\"type\": \"square-pupil\", \"width\": 60},"
         "  {\"type\": \"thin-lens\", \"f\": 4000}, {\"type\": \"propagate\", \"z\": 300, \"pad\": 16},"
         "  {\"type\": \"propagate\", \"z\": 150, \"method\": \"angular-spectrum\", \"band-limit\": true, \"pad\": 8, \"output\": \"full\"},"
         "  {\"type\": \"ff-lens\", \"f\": 500, \"inverse\": true}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -50, \"stop\": 50, \"count\": 5},"
         " \"elements\": [{\"type\": \"point-source\", \"z\": 400}, {\"type\": \"gaussian-pupil\", \"waist\": 40},"
         "  {\"type\": \"propagate\", \"z\": 1000, \"method\": \"single-fft\"}, {\"type\": \"df-lens\", \"f\": 800, \"d\": 300}]}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.25}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": 0, \"stop\": 20, \"count\": 4},"
         " \"elements\": [{\"type\": \"gaussian-beam\", \"waist\": 2},"
         "  {\"type\": \"propagate\", \"z\": 5, \"method\": \"angular-spectrum\", \"remove-evanescent\": false}]}", 1e-5);
}

static void
test_imaging_agreement (void)
{
  /* the seed imaging workload at reduced size (the NCCL path on one device),
   * and a bead sample */
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.3}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -4, \"stop\": 4, \"count\": 16},"
         " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
         " \"elements\": [{\"type\": \"phase-mask\", \"value\": 0}], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1}}", 1e-5);
  agree ("{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.532]},"
         " \"z\": {\"start\": -2, \"stop\": 2, \"count\": 12},"
         " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
         " \"sensor\": {\"reduce\": \"sum\", \"resample\": \"block-sum\", \"factor\": 2},"
         " \"sample\": {\"beads\": {\"count\": 30, \"seed\": 4}}}", 1e-5);
}

static void
test_noise (void)
{
  /* Poisson on the device: mean ≈ variance, with the CPU's generator */
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"values\": [0]}, \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0, \"na\": 0.2},"
    "  {\"type\": \"ff-lens\", \"f\": 100}, {\"type\": \"sensor\", \"noise\": \"poisson\", \"exposure\": 1e6, \"seed\": 3}]}");
  g_autoptr(AiryResult) cpu = run_on (system, "cpu", NULL, 0);
  g_autoptr(AiryResult) gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);
  gsize n = airy_stack_plane_size (gpu->stack), i, same = 0;

  for (i = 0; i < n; i++)
    {
      g_assert_cmpfloat (gpu->stack->data[i], ==, floorf (gpu->stack->data[i]));
      same += gpu->stack->data[i] == cpu->stack->data[i];
    }
  /* the same counter-based draws: equal counts but for rounding at the edges */
  g_assert_cmpfloat ((double) same / n, >=, 0.999);
}

static void
test_multi_device (void)
{
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) one = NULL;
  guint n = cuda->ops->n_devices (cuda), k;

  if (n < 2)
    {
      g_test_skip ("one CUDA device: nothing to compare across devices");
      return;
    }
  system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.3}, \"spectrum\": {\"wavelengths\": [0.532]},"
                        " \"z\": {\"start\": -4, \"stop\": 4, \"count\": 24},"
                        " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
                        " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"beads\": {\"count\": 50, \"seed\": 1}}}");
  one = run_on (system, "cuda", (guint[]) { 0 }, 1);
  for (k = 2; k <= MIN (n, 4); k++)
    {
      guint devices[4] = { 0, 1, 2, 3 };
      g_autoptr(AiryResult) many = run_on (system, "cuda", devices, k);
      float lo, hi;
      double worst = 0.0;
      gsize i;

      airy_stack_min_max (one->stack, &lo, &hi);
      for (i = 0; i < airy_stack_plane_size (one->stack); i++)
        worst = MAX (worst, fabs (one->stack->data[i] - many->stack->data[i]));
      g_assert_cmpfloat (worst, <=, 1e-6 * hi);
    }
}

static void
test_gl_interop (void)
{
  /* an EGL context on the device, a texture filled through the slot, read back */
  EGLDisplay dpy = EGL_NO_DISPLAY;
  EGLDeviceEXT devices[8];
  EGLint n_devices = 0, major, minor;
  EGLContext ctx;
  EGLConfig config;
  EGLint n_config = 0;
  static const EGLint config_attribs[] = { EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE };
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) gpu = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *back = NULL;
  GLuint texture;
  gsize n, i;

  if (!epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_EXT_device_enumeration")
      || !eglQueryDevicesEXT (8, devices, &n_devices) || n_devices == 0)
    {
      g_test_skip ("no EGL device enumeration here");
      return;
    }
  dpy = eglGetPlatformDisplayEXT (EGL_PLATFORM_DEVICE_EXT, devices[0], NULL);
  if (dpy == EGL_NO_DISPLAY || !eglInitialize (dpy, &major, &minor) || !eglBindAPI (EGL_OPENGL_API)
      || !eglChooseConfig (dpy, config_attribs, &config, 1, &n_config) || n_config == 0)
    {
      g_test_skip ("no EGL OpenGL display on the device");
      return;
    }
  ctx = eglCreateContext (dpy, config, EGL_NO_CONTEXT, NULL);
  g_assert_true (ctx != EGL_NO_CONTEXT);
  g_assert_true (eglMakeCurrent (dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx));

  system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [128, 96], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
                        " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
                        " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5},"
                        "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  gpu = run_on (system, "cuda", (guint[]) { 0 }, 1);
  glGenTextures (1, &texture);
  glBindTexture (GL_TEXTURE_2D, texture);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, 96, 128, 0, GL_RED, GL_FLOAT, NULL);
  g_assert_true (cuda->ops->gl_copy_slice (cuda, NULL, 2, texture, &error));
  g_assert_no_error (error);
  n = 96 * 128;
  back = g_new (float, n);
  glGetTexImage (GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, back);
  for (i = 0; i < n; i++)
    g_assert_cmpfloat (back[i], ==, airy_stack_plane (gpu->stack, 2)[i]);
  glDeleteTextures (1, &texture);
  eglMakeCurrent (dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext (dpy, ctx);
  eglTerminate (dpy);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  cuda = airy_backend_lookup ("cuda");
  if (cuda == NULL || !cuda->available)
    {
      g_print ("1..0 # SKIP no CUDA device: %s\n",
               cuda ? cuda->unavailable_reason : "the CUDA module is not on the modules path");
      return 0;
    }
  g_test_add_func ("/cuda/psf-agreement", test_psf_agreement);
  g_test_add_func ("/cuda/ops-agreement", test_ops_agreement);
  g_test_add_func ("/cuda/imaging-agreement", test_imaging_agreement);
  g_test_add_func ("/cuda/noise", test_noise);
  g_test_add_func ("/cuda/multi-device", test_multi_device);
  g_test_add_func ("/cuda/gl-interop", test_gl_interop);
  return g_test_run ();
}
