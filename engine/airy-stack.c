#define G_LOG_DOMAIN "airy-stack"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE__
#include <xmmintrin.h>
#endif

#include "airy-stack.h"

/* One freed large mapping is kept for the next stack of the same size: a
 * fresh mapping costs a page fault per page (and, in a virtual machine, far
 * more), which repeated runs of one system (the GUI, benchmarks) would pay
 * again for every result. */
static GMutex  spare_lock;
static void   *spare_data;
static gsize   spare_bytes;

static void *
take_spare (gsize bytes)
{
  void *p = NULL;

  g_mutex_lock (&spare_lock);
  if (spare_data != NULL && spare_bytes == bytes)
    {
      p = spare_data;
      spare_data = NULL;
      spare_bytes = 0;
    }
  g_mutex_unlock (&spare_lock);
  return p;
}

static void
give_spare (void *p, gsize bytes)
{
  void *old;
  gsize old_bytes;

  g_mutex_lock (&spare_lock);
  old = spare_data;
  old_bytes = spare_bytes;
  spare_data = p;
  spare_bytes = bytes;
  g_mutex_unlock (&spare_lock);
  if (old != NULL)
    munmap (old, old_bytes);
}

gsize
airy_stack_release_spare (void)
{
  void *old;
  gsize bytes;

  g_mutex_lock (&spare_lock);
  old = spare_data;
  bytes = spare_bytes;
  spare_data = NULL;
  spare_bytes = 0;
  g_mutex_unlock (&spare_lock);
  if (old != NULL)
    munmap (old, bytes);
  return old ? bytes : 0;
}

static AiryStack *
stack_new (guint depth, guint height, guint width, gboolean zero)
{
  AiryStack *stack;
  gsize n = (gsize) depth * height * width;

  stack = g_new0 (AiryStack, 1);
  stack->depth = depth;
  stack->height = height;
  stack->width = width;
  stack->bits = 32;
  if (n * sizeof (float) >= (32u << 20))
    {
      /* Large stacks get their own mapping, as huge pages where the kernel
       * allows: a plane of a 1536² stack then spans 5 pages instead of
       * 2304, and writing it block by block stays in the TLB. */
      gsize bytes = n * sizeof (float);
      void *p = take_spare (bytes);

      if (p != NULL)
        {
          if (zero)
            memset (p, 0, bytes);
        }
      else
        {
          p = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          if (p == MAP_FAILED)
            p = NULL;
#ifdef MADV_HUGEPAGE
          else
            madvise (p, bytes, MADV_HUGEPAGE);
#endif
        }
      if (p != NULL)
        {
          stack->data = p;
          stack->mapped = bytes;
          return stack;
        }
    }
  /* an uninitialised one is not cleared: a heap block glibc reuses would
   * be (a 16 MiB memset before the first plane of every run) */
  stack->data = zero ? g_try_malloc0 (MAX (n, 1) * sizeof (float)) : g_try_malloc (MAX (n, 1) * sizeof (float));
  if (stack->data == NULL)
    {
      g_free (stack);
      return NULL;
    }
  return stack;
}

/* A stack whose every value the caller writes: no zeroing. */
AiryStack *
_airy_stack_new_uninitialised (guint depth,
                               guint height,
                               guint width)
{
  return stack_new (depth, height, width, FALSE);
}

AiryStack *
airy_stack_new (guint depth,
                guint height,
                guint width)
{
  return stack_new (depth, height, width, TRUE);
}

void
airy_stack_free (AiryStack *stack)
{
  if (stack == NULL)
    return;
  if (stack->mapped)
    give_spare (stack->data, stack->mapped);
  else
    g_free (stack->data);
  g_free (stack->z);
  g_free (stack->wavelengths);
  g_free (stack->weights);
  g_free (stack->system_json);
  g_strfreev (stack->channel_names);
  g_free (stack);
}

G_DEFINE_BOXED_TYPE (AiryStack, airy_stack, airy_stack_copy, airy_stack_free)

AiryStack *
airy_stack_copy (const AiryStack *stack)
{
  AiryStack *copy;

  g_return_val_if_fail (stack != NULL, NULL);
  if (stack->data == NULL)   /* a probe: the header alone */
    {
      copy = g_new0 (AiryStack, 1);
      copy->depth = stack->depth;
      copy->height = stack->height;
      copy->width = stack->width;
    }
  else if ((copy = airy_stack_new (stack->depth, stack->height, stack->width)) != NULL)
    memcpy (copy->data, stack->data, (gsize) stack->depth * airy_stack_plane_size (stack) * sizeof (float));
  if (copy == NULL)
    return NULL;
  airy_stack_copy_metadata (copy, stack);
  copy->bits = stack->bits;
  return copy;
}

void
airy_stack_copy_metadata (AiryStack       *dst,
                          const AiryStack *src)
{
  g_return_if_fail (dst != NULL && src != NULL);

  dst->dx = src->dx;
  dst->dy = src->dy;
  dst->dz = src->dz;
  dst->z0 = src->z0;
  g_clear_pointer (&dst->z, g_free);
  if (src->z != NULL && dst->depth == src->depth)
    dst->z = g_memdup2 (src->z, src->depth * sizeof (double));
  airy_stack_set_provenance (dst, src->n_wavelengths, src->wavelengths, src->weights, src->system_json);
  g_strfreev (dst->channel_names);
  dst->channel_names = g_strdupv (src->channel_names);
}

void
airy_stack_set_channel_name (AiryStack  *stack,
                             const char *name)
{
  g_return_if_fail (stack != NULL);

  g_clear_pointer (&stack->channel_names, g_strfreev);
  if (name != NULL)
    {
      stack->channel_names = g_new0 (char *, 2);
      stack->channel_names[0] = g_strdup (name);
    }
}

void
airy_stack_set_provenance (AiryStack    *stack,
                           guint         n_wavelengths,
                           const double *wavelengths,
                           const double *weights,
                           const char   *system_json)
{
  g_autofree double *lambda = n_wavelengths ? g_memdup2 (wavelengths, n_wavelengths * sizeof (double)) : NULL;
  g_autofree double *w = n_wavelengths && weights ? g_memdup2 (weights, n_wavelengths * sizeof (double)) : NULL;
  g_autofree char *json = g_strdup (system_json);

  g_free (stack->wavelengths);
  g_free (stack->weights);
  g_free (stack->system_json);
  stack->n_wavelengths = n_wavelengths;
  stack->wavelengths = g_steal_pointer (&lambda);
  stack->weights = g_steal_pointer (&w);
  stack->system_json = g_steal_pointer (&json);
}

double
airy_stack_get_z (const AiryStack *stack,
                  guint            k)
{
  g_return_val_if_fail (k < stack->depth, 0.0);
  return stack->z ? stack->z[k] : stack->z0 + k * stack->dz;
}

static gboolean
z_list_uniform (const double *z, guint n)
{
  double dz;
  guint k;

  if (n < 3)
    return TRUE;
  dz = (z[n - 1] - z[0]) / (n - 1);
  for (k = 1; k + 1 < n; k++)
    if (fabs (z[k] - (z[0] + k * dz)) > 1e-6 * MAX (fabs (dz), 1e-9))
      return FALSE;
  return TRUE;
}

gboolean
airy_stack_z_uniform (const AiryStack *stack)
{
  return stack->z == NULL || z_list_uniform (stack->z, stack->depth);
}

void
airy_stack_set_z (AiryStack    *stack,
                  const double *z)
{
  guint n = stack->depth;

  g_clear_pointer (&stack->z, g_free);
  if (z == NULL || n == 0)
    return;
  stack->z0 = z[0];
  stack->dz = n > 1 ? (z[n - 1] - z[0]) / (n - 1) : 0.0;
  if (!z_list_uniform (z, n))
    stack->z = g_memdup2 (z, n * sizeof (double));
}

gsize
airy_stack_plane_size (const AiryStack *stack)
{
  return (gsize) stack->height * stack->width;
}

float *
airy_stack_plane (const AiryStack *stack,
                  guint            z)
{
  g_return_val_if_fail (z < stack->depth, NULL);
  return stack->data + z * airy_stack_plane_size (stack);
}

const float *
airy_stack_get_plane_data (const AiryStack *stack,
                           guint            z,
                           gsize           *n_values)
{
  *n_values = 0;
  g_return_val_if_fail (stack != NULL && stack->data != NULL, NULL);
  g_return_val_if_fail (z < stack->depth, NULL);
  *n_values = airy_stack_plane_size (stack);
  return stack->data + z * airy_stack_plane_size (stack);
}

gboolean
_airy_floats_min_max (const float *v,
                      gsize        n,
                      float       *min,
                      float       *max)
{
  float lo = INFINITY, hi = -INFINITY;
  gboolean finite = TRUE;
  gsize i = 0;

#ifdef __SSE__
  /* min_ps (x, m) is x < m ? x : m: a NaN in x leaves m as it was; two
   * registers of each so the loads keep flowing. x − x is NaN for NaN and
   * ±inf alone: one unordered compare marks them, in the same pass. */
  {
    __m128 lo0 = _mm_set1_ps (INFINITY), lo1 = lo0, hi0 = _mm_set1_ps (-INFINITY), hi1 = hi0;
    __m128 bad = _mm_setzero_ps ();
    float l[4], h[4];
    guint k;

    for (; i + 8 <= n; i += 8)
      {
        __m128 a = _mm_loadu_ps (v + i), b = _mm_loadu_ps (v + i + 4);
        __m128 da = _mm_sub_ps (a, a), db = _mm_sub_ps (b, b);

        lo0 = _mm_min_ps (a, lo0);
        lo1 = _mm_min_ps (b, lo1);
        hi0 = _mm_max_ps (a, hi0);
        hi1 = _mm_max_ps (b, hi1);
        bad = _mm_or_ps (bad, _mm_cmpunord_ps (da, db));
      }
    _mm_storeu_ps (l, _mm_min_ps (lo0, lo1));
    _mm_storeu_ps (h, _mm_max_ps (hi0, hi1));
    for (k = 0; k < 4; k++)
      {
        lo = MIN (lo, l[k]);
        hi = MAX (hi, h[k]);
      }
    finite = _mm_movemask_ps (bad) == 0;
  }
#endif
  /* NaN compares false and is skipped */
  for (; i < n; i++)
    {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
      finite = finite && isfinite (v[i]);
    }
  *min = lo;
  *max = hi;
  return finite;
}

typedef struct
{
  const float *v;
  gsize        n;
  float        lo, hi;
  gboolean     finite;
} RangeJob;

static gpointer
range_job (gpointer data)
{
  RangeJob *j = data;

  j->finite = _airy_floats_min_max (j->v, j->n, &j->lo, &j->hi);
  return NULL;
}

/* The range of the first depth planes, on all cores; FALSE when one of
 * their values is not finite. */
static gboolean
stack_range (const AiryStack *stack,
             guint            depth,
             float           *min,
             float           *max)
{
  gsize n = (gsize) depth * airy_stack_plane_size (stack);
  /* a thread per 16 MB, up to the cores */
  guint n_threads = (guint) CLAMP (n >> 22, 1, g_get_num_processors ()), t;
  g_autofree RangeJob *jobs = NULL;
  g_autofree GThread **threads = NULL;
  gboolean finite = TRUE;
  gsize per;

  jobs = g_new0 (RangeJob, n_threads);
  threads = g_new0 (GThread *, n_threads);
  per = (n + n_threads - 1) / n_threads;
  for (t = 0; t < n_threads; t++)
    {
      gsize first = MIN (t * per, n);

      jobs[t] = (RangeJob) { stack->data + first, MIN (per, n - first), INFINITY, -INFINITY, TRUE };
      if (t + 1 < n_threads)
        threads[t] = g_thread_new ("airy-range", range_job, &jobs[t]);
    }
  range_job (&jobs[n_threads - 1]);
  for (t = 0; t + 1 < n_threads; t++)
    g_thread_join (threads[t]);
  *min = INFINITY;
  *max = -INFINITY;
  for (t = 0; t < n_threads; t++)
    {
      *min = MIN (*min, jobs[t].lo);
      *max = MAX (*max, jobs[t].hi);
      finite = finite && jobs[t].finite;
    }
  return finite;
}

void
airy_stack_min_max (const AiryStack *stack,
                    float           *min,
                    float           *max)
{
  g_return_if_fail (stack != NULL && stack->data != NULL);

  stack_range (stack, stack->depth, min, max);
}

char *
_airy_stack_describe_nonfinite (const AiryStack *stack,
                                guint            depth,
                                guint            first_plane,
                                float           *min,
                                float           *max)
{
  gsize n = (gsize) depth * airy_stack_plane_size (stack), i, first = 0;
  guint64 bad = 0;
  guint plane, y, x;
  float lo, hi;

  g_return_val_if_fail (stack != NULL && stack->data != NULL && depth <= stack->depth, NULL);

  if (min == NULL)
    min = &lo;
  if (max == NULL)
    max = &hi;
  if (n == 0 || stack_range (stack, depth, min, max))
    return NULL;
  /* the rare case: counted where it is found */
  for (i = n; i-- > 0;)
    if (!isfinite (stack->data[i]))
      {
        bad++;
        first = i;
      }
  plane = first_plane + (guint) (first / airy_stack_plane_size (stack));
  y = (guint) (first % airy_stack_plane_size (stack) / stack->width);
  x = (guint) (first % stack->width);
  if (bad == 1)
    return g_strdup_printf (_("1 non-finite value (at plane %u, y %u, x %u)"), plane, y, x);
  return g_strdup_printf (_("%lu non-finite values (the first at plane %u, y %u, x %u)"), (unsigned long) bad,
                          plane, y, x);
}

/* ---- resampling ---- */

/* Weights of a 1-D resampling: destination sample j takes
 * Σ_k w[off[j] + k]·src[first[j] + k] for k < n[j]. */
typedef struct
{
  guint  *first, *n, *off;
  float  *w;
} Taps;

static void
taps_free (Taps *t)
{
  g_free (t->first);
  g_free (t->n);
  g_free (t->off);
  g_free (t->w);
}

/* Source samples at u[i] with cell width a (uniform), destinations at x[j]
 * with footprint b[j]. */
static void
taps_build (Taps *t, const double *u, guint n_src, double a, const double *x, const double *b, guint n_dst)
{
  g_autoptr(GArray) w = g_array_new (FALSE, FALSE, sizeof (float));
  guint j;

  t->first = g_new0 (guint, n_dst);
  t->n = g_new0 (guint, n_dst);
  t->off = g_new0 (guint, n_dst);
  for (j = 0; j < n_dst; j++)
    {
      t->off[j] = w->len;
      if (n_src == 1)
        {
          /* one source sample: it fills its own cell */
          if (fabs (x[j] - u[0]) <= 0.5 * a + 1e-9 * a)
            {
              float one = 1.0f;
              g_array_append_val (w, one);
              t->n[j] = 1;
            }
          continue;
        }
      if (b[j] <= a)
        {
          /* finer: linear interpolation between the two neighbours */
          double p = (x[j] - u[0]) / a;
          double fl = floor (p), f = p - fl;
          int i0 = (int) fl;

          if (p < -1e-9 || p > n_src - 1 + 1e-9)
            continue;
          if (i0 >= (int) n_src - 1)
            {
              i0 = n_src - 2;
              f = 1.0;
            }
          if (i0 < 0)
            {
              i0 = 0;
              f = 0.0;
            }
          t->first[j] = (guint) i0;
          t->n[j] = 2;
          g_array_append_val (w, (float) { 1.0 - f });
          g_array_append_val (w, (float) { f });
        }
      else
        {
          /* coarser: the mean of the source cells over the footprint */
          double lo = x[j] - 0.5 * b[j], hi = x[j] + 0.5 * b[j];
          int i0 = (int) floor ((lo - u[0]) / a + 0.5), i1 = (int) floor ((hi - u[0]) / a + 0.5), i;

          i0 = MAX (i0, 0);
          i1 = MIN (i1, (int) n_src - 1);
          if (i1 < i0)
            continue;
          t->first[j] = (guint) i0;
          t->n[j] = (guint) (i1 - i0 + 1);
          for (i = i0; i <= i1; i++)
            {
              double c0 = u[0] + (i - 0.5) * a, c1 = c0 + a;
              double overlap = MAX (0.0, MIN (hi, c1) - MAX (lo, c0));
              g_array_append_val (w, (float) { overlap / b[j] });
            }
        }
    }
  t->w = (float *) g_array_free (g_steal_pointer (&w), FALSE);
}

static void
centred_positions (double *x, guint n, double d)
{
  guint i;

  for (i = 0; i < n; i++)
    x[i] = ((double) i - (double) (n / 2)) * d;
}

AiryStack *
_airy_stack_resample (const AiryStack *src,
                      guint            height,
                      guint            width,
                      double           dy,
                      double           dx,
                      guint            depth,
                      const double    *z_dst,
                      const double    *z_src)
{
  g_autoptr(AiryStack) dst = NULL;
  g_autofree double *ux = g_new (double, src->width), *xx = g_new (double, width), *bx = g_new (double, width);
  g_autofree double *uy = g_new (double, src->height), *yy = g_new (double, height), *by = g_new (double, height);
  g_autofree double *uz = g_new (double, src->depth), *bz = g_new (double, depth);
  g_autofree float *rows = NULL, *plane = NULL;
  double az = src->depth > 1 ? fabs (src->dz) : 1.0, mid;
  Taps tx, ty, tz;
  guint i, j, k, y, x;

  g_return_val_if_fail (src->dx > 0 && src->dy > 0 && depth > 0, NULL);

  centred_positions (ux, src->width, src->dx);
  centred_positions (xx, width, dx);
  centred_positions (uy, src->height, src->dy);
  centred_positions (yy, height, dy);
  for (i = 0; i < width; i++)
    bx[i] = dx;
  for (i = 0; i < height; i++)
    by[i] = dy;
  /* source planes: their own positions, or centred on the new range */
  mid = 0.5 * (z_dst[0] + z_dst[depth - 1]);
  for (k = 0; k < src->depth; k++)
    uz[k] = z_src ? z_src[k] : mid + ((double) k - 0.5 * (src->depth - 1)) * az;
  if (z_src && src->depth > 1)
    az = fabs (z_src[src->depth - 1] - z_src[0]) / (src->depth - 1);
  for (k = 0; k < depth; k++)
    bz[k] = depth > 1 ? fabs (z_dst[MIN (k + 1, depth - 1)] - z_dst[k > 0 ? k - 1 : 0]) / (k > 0 && k + 1 < depth ? 2 : 1)
                      : az;
  taps_build (&tx, ux, src->width, src->dx, xx, bx, width);
  taps_build (&ty, uy, src->height, src->dy, yy, by, height);
  taps_build (&tz, uz, src->depth, az, z_dst, bz, depth);

  dst = airy_stack_new (depth, height, width);
  rows = g_try_new (float, (gsize) src->height * width);
  plane = g_try_new (float, (gsize) height * width);
  if (dst == NULL || rows == NULL || plane == NULL)
    {
      taps_free (&tx);
      taps_free (&ty);
      taps_free (&tz);
      return NULL;
    }
  dst->dx = dx;
  dst->dy = dy;
  for (k = 0; k < src->depth; k++)
    {
      const float *s = airy_stack_plane (src, k);

      /* x, then y, into `plane`; then spread into the planes that use k */
      for (y = 0; y < src->height; y++)
        for (x = 0; x < width; x++)
          {
            const float *w = tx.w + tx.off[x];
            const float *sp = s + (gsize) y * src->width + tx.first[x];
            float v = 0;
            for (i = 0; i < tx.n[x]; i++)
              v += w[i] * sp[i];
            rows[(gsize) y * width + x] = v;
          }
      for (y = 0; y < height; y++)
        {
          const float *w = ty.w + ty.off[y];
          float *out = plane + (gsize) y * width;

          memset (out, 0, width * sizeof (float));
          for (i = 0; i < ty.n[y]; i++)
            {
              const float *r = rows + (gsize) (ty.first[y] + i) * width;
              for (x = 0; x < width; x++)
                out[x] += w[i] * r[x];
            }
        }
      for (j = 0; j < depth; j++)
        if (k >= tz.first[j] && k < tz.first[j] + tz.n[j])
          {
            float wk = tz.w[tz.off[j] + (k - tz.first[j])];
            float *out = airy_stack_plane (dst, j);
            gsize n = (gsize) height * width, p;
            for (p = 0; p < n; p++)
              out[p] += wk * plane[p];
          }
    }
  airy_stack_set_z (dst, z_dst);
  taps_free (&tx);
  taps_free (&ty);
  taps_free (&tz);
  return g_steal_pointer (&dst);
}
