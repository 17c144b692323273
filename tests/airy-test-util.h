/* Helpers shared by the GLib tests. */
#pragma once

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "airy.h"

/* A system from JSON text, failing the test on error. */
/* Removes dir and the files in it (a test's flat scratch folder). */
static inline void
test_remove_flat_dir (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_unlink (path);
    }
  g_rmdir (dir);
}

static inline AirySystem *
test_system (const char *json)
{
  g_autoptr(GError) error = NULL;
  AirySystem *system = airy_system_new_from_data (json, -1, NULL, "test", &error);

  g_assert_no_error (error);
  g_assert_nonnull (system);
  return system;
}

/* The system is refused, at load or by the check of the whole (some
 * errors appear only then), with this code and message. */
static inline void
test_expect_error (const char *json, int code, const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data (json, -1, NULL, "sys.json", &error);

  if (system != NULL)
    g_assert_false (airy_system_validate (system, NULL, &error));
  g_assert_error (error, AIRY_ERROR, code);
  g_assert_cmpstr (error->message, ==, message);
}

static inline AiryResult *
test_run (AirySystem *system, const AiryRunOptions *options)
{
  g_autoptr(GError) error = NULL;
  AiryResult *result = airy_run (system, options, NULL, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static inline float
plane_max (const float *p, gsize n, gsize *where)
{
  float m = -INFINITY;
  gsize i;

  for (i = 0; i < n; i++)
    if (p[i] > m)
      {
        m = p[i];
        if (where)
          *where = i;
      }
  return m;
}

static inline double
plane_sum (const float *p, gsize n)
{
  double s = 0.0;
  gsize i;

  for (i = 0; i < n; i++)
    s += p[i];
  return s;
}

/* FWHM (in samples) of the peak of a 1-D profile of a band-limited
 * intensity: Fourier interpolation (zero padding the spectrum `up` times)
 * is exact for a PSF whose spectrum fits the grid, then the half-maximum
 * crossings are found linearly on the fine grid. */
static inline double
profile_fwhm (const float *v, int n, int c)
{
  int up = 32, m = n * up, k, i;
  fftwf_complex *spec = fftwf_alloc_complex (n);
  fftwf_complex *fine = fftwf_alloc_complex (m);
  fftwf_plan fwd = fftwf_plan_dft_1d (n, spec, spec, FFTW_FORWARD, FFTW_ESTIMATE);
  fftwf_plan bwd = fftwf_plan_dft_1d (m, fine, fine, FFTW_BACKWARD, FFTW_ESTIMATE);
  double half, left, right;

  for (k = 0; k < n; k++)
    spec[k] = v[k];
  fftwf_execute (fwd);
  memset (fine, 0, sizeof (fftwf_complex) * m);
  for (k = 0; k < (n + 1) / 2; k++)
    fine[k] = spec[k];
  for (k = 1; k <= n / 2; k++)
    fine[m - k] = spec[n - k];
  if (n % 2 == 0)
    {
      /* split the Nyquist term between ±n/2 */
      fine[n / 2] = spec[n / 2] / 2;
      fine[m - n / 2] = spec[n / 2] / 2;
    }
  fftwf_execute (bwd);
  /* fine[j] is the profile at sample j/up (unnormalised by n) */
  half = crealf (fine[c * up]) / 2.0;
  for (i = c * up; i + 1 < m && crealf (fine[i + 1]) > half; i++)
    ;
  right = i + (crealf (fine[i]) - half) / (crealf (fine[i]) - crealf (fine[i + 1]));
  for (i = c * up; i - 1 >= 0 && crealf (fine[i - 1]) > half; i--)
    ;
  left = i - (crealf (fine[i]) - half) / (crealf (fine[i]) - crealf (fine[i - 1]));
  fftwf_destroy_plan (fwd);
  fftwf_destroy_plan (bwd);
  fftwf_free (spec);
  fftwf_free (fine);
  return (right - left) / up;
}

/* Fresnel integrals C(t), S(t) by composite Simpson (t up to ~20). */
static inline void
fresnel_cs (double t, double *c, double *s)
{
  int n = 20000, i;
  double h = t / n, sc = 0.0, ss = 0.0;

  for (i = 0; i <= n; i++)
    {
      double x = i * h, w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
      sc += w * cos (G_PI * x * x / 2.0);
      ss += w * sin (G_PI * x * x / 2.0);
    }
  *c = sc * h / 3.0;
  *s = ss * h / 3.0;
}

static inline double
sinc (double x)
{
  return fabs (x) < 1e-12 ? 1.0 : sin (x) / x;
}

/* A program run to its end: exit status (or 128 + the signal that ended
 * it), its stdout and stderr */
typedef struct
{
  int   status;
  char *out;
  char *err;
} Run;

static inline void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

/* $AIRY_SIM with the arguments (ended by NULL), run to its end in cwd */
static inline void
test_sim (const char *cwd, Run *r, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  const char *arg;
  int wait_status;
  va_list args;

  va_start (args, first);
  g_ptr_array_add (argv, (char *) g_getenv ("AIRY_SIM"));
  for (arg = first; arg; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (char *) arg);
  g_ptr_array_add (argv, NULL);
  va_end (args);
  g_assert_true (g_spawn_sync (cwd, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err,
                               &wait_status, &error));
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status)
              : WIFSIGNALED (wait_status) ? 128 + WTERMSIG (wait_status) : 128;
}

/* Is there any file in dir whose name starts with prefix? (leftover temporaries) */
static inline gboolean
dir_has_prefix (const char *dir, const char *prefix)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, prefix))
      return TRUE;
  return FALSE;
}

/* whether the element's parameter `name` applies (it exists) */
static inline gboolean
test_param_relevant_of (AiryElement *e, const char *name)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e), name);

  g_assert_nonnull (pspec);
  return airy_element_param_relevant (e, pspec);
}

/* An n² microscope (0.1 µm camera pixels, NA 0.8 in water, a 0.15-wave
 * ANSI 7 mask) imaging sample (JSON) over planes z in [−1, 1] µm, with the
 * sensor keys given. */
static inline char *
test_microscope_json (const char *sample, const char *sensor, guint n, guint planes)
{
  return g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": 0.1},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -1, \"stop\": 1, \"count\": %u},"
    " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
    " \"elements\": [{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [7],"
    "   \"zernike-coefficients\": [0.15]}],"
    " \"sensor\": {%s}, \"sample\": %s}", n, n, planes, sensor, sample);
}
