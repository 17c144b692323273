#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include <cuda_gl_interop.h>

#include "airy-cuda-backend-private.h"

/* Results kept on the devices for the viewer (AiryResident): slices and
 * statistics computed where the values are, peer copies between GPUs, and
 * CUDA–GL interop into the viewer's textures. */

/* ---- GL registrations through airy-cuda-private.h ---- */

static int
gl_register (const AiryGlRegistration *key, gpointer *resource, gpointer user_data)
{
  cudaGraphicsResource_t r = NULL;
  cudaError_t status = cudaGraphicsGLRegisterImage (&r, key->texture, GL_TEXTURE_2D,
                                                    cudaGraphicsRegisterFlagsWriteDiscard);

  *resource = r;
  return (int) status;
}

static void
gl_unregister (gpointer resource, gpointer user_data)
{
  cudaGraphicsUnregisterResource (resource);
  cudaGetLastError ();
}

static int
gl_set_device (int device, gpointer user_data)
{
  int previous = device;

  if (cudaGetDevice (&previous) != cudaSuccess || cudaSetDevice (device) != cudaSuccess)
    cudaGetLastError ();
  return previous;
}

const AiryGlRegistrationOps _airy_cuda_gl_registration_ops = { gl_register, gl_unregister, gl_set_device };

/* ---- results kept for the viewer ---- */

static ResultPart *
part_of (CudaResident *cr, guint z)
{
  guint i;

  for (i = 0; i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);
      if (z >= p->first && z < p->first + p->count)
        return p;
    }
  g_assert_not_reached ();
  return NULL;
}

static gsize
part_bytes (CudaResident *cr, ResultPart *p)
{
  return (gsize) p->count * cr->geometry->height * cr->geometry->width * sizeof (float);
}

/* With keep, the parts' buffers go to the backend's kept blocks for the
 * next run (airy-cuda-private.h) instead of to cudaFree. With the lock held. */
static void
resident_free_device (CudaResident *cr, gboolean keep)
{
  CudaBackend *self = cr->backend;
  guint i;
  int d;

  for (i = 0; i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);

      if (p->data)
        {
          cudaSetDevice (p->device);
          if (keep)
            _airy_blocks_give (self->blocks, p->device, p->data, part_bytes (cr, p));
          else
            cudaFree (p->data);
          _airy_cuda_held_add (self, p->device, -(gint64) part_bytes (cr, p));
          p->data = NULL;
        }
    }
  for (d = 0; d < self->count; d++)
    if (cr->scratch[d])
      {
        cudaSetDevice (d);
        cudaFree (cr->scratch[d]);
        cudaFree (cr->partial[d]);
        cudaFree (cr->counts[d]);
        _airy_cuda_held_add (self, d, -(gint64) (2 * cr->scratch_n * sizeof (float)));
        cr->scratch[d] = NULL;
        cr->partial[d] = NULL;
        cr->counts[d] = NULL;
      }
  cudaGetLastError ();
}

/* The values to host memory, the device memory free: a run needs the
 * room. With the lock held. FALSE when host memory is short too. */
static gboolean
resident_spill (CudaResident *cr)
{
  const AiryStack *g = cr->geometry;
  AiryStack *host;
  guint i;

  if (cr->host != NULL)
    return TRUE;
  host = _airy_stack_new_uninitialised (g->depth, g->height, g->width);
  if (host == NULL)
    return FALSE;
  for (i = 0; i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);

      if (cudaSetDevice (p->device) != cudaSuccess
          || cudaMemcpy (airy_stack_plane (host, p->first), p->data, part_bytes (cr, p), cudaMemcpyDeviceToHost)
             != cudaSuccess)
        {
          cudaGetLastError ();
          airy_stack_free (host);
          return FALSE;
        }
    }
  airy_stack_copy_metadata (host, g);
  host->bits = g->bits;
  resident_free_device (cr, FALSE);
  cr->host = airy_resident_new_host (host);
  cr->note = N_("the result was moved to host memory to make room for a later run");
  return TRUE;
}

/* Makes room on a device: every kept result with values there goes to host
 * memory. With the lock held. */
void
_airy_cuda_residents_spill (CudaBackend *self, int device)
{
  guint i, k;

  for (i = 0; i < self->residents->len; i++)
    {
      CudaResident *cr = g_ptr_array_index (self->residents, i);

      for (k = 0; k < cr->parts->len; k++)
        if (((ResultPart *) g_ptr_array_index (cr->parts, k))->device == device)
          {
            resident_spill (cr);
            break;
          }
    }
}

void
_airy_cuda_residents_release_all (CudaBackend *self)
{
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->residents->len; i++)
    resident_free_device (g_ptr_array_index (self->residents, i), FALSE);
  g_mutex_unlock (&self->lock);
}

/* Two slices and the statistics' buffers on a device, made on first use. */
static gboolean
resident_scratch (CudaResident *cr, int d, GError **error)
{
  if (cr->scratch[d])
    return TRUE;
  if (!CHECK (cudaSetDevice (d), error)
      || !CHECK (cudaMalloc ((void **) &cr->scratch[d], 2 * cr->scratch_n * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &cr->partial[d], 2 * AIRY_CUDA_STATS_BLOCKS * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &cr->counts[d], AIRY_STATS_BINS * sizeof (unsigned long long)), error))
    {
      cudaFree (cr->scratch[d]);
      cudaFree (cr->partial[d]);
      cr->scratch[d] = NULL;
      cr->partial[d] = NULL;
      return FALSE;
    }
  _airy_cuda_held_add (cr->backend, d, (gint64) (2 * cr->scratch_n * sizeof (float)));
  return TRUE;
}

/* The slice on device `dev`: a pointer into the result for a plane that
 * lives there, else assembled in the device's scratch (sections gathered
 * per part with a kernel, parts on other GPUs copied peer to peer, the
 * projection taken per part and combined). With the lock held; the values
 * are ready when this returns. */
static gboolean
resident_slice_on (CudaResident *cr, const AirySlice *slice, int dev, const float **out, GError **error)
{
  const AiryStack *g = cr->geometry;
  gsize n = airy_stack_plane_size (g);
  gboolean yz = slice->kind == AIRY_SLICE_YZ;
  guint len = yz ? g->height : g->width, i;
  float *dst;

  if (!resident_scratch (cr, dev, error) || !CHECK (cudaSetDevice (dev), error))
    return FALSE;
  dst = cr->scratch[dev];
  if (slice->kind == AIRY_SLICE_XY)
    {
      ResultPart *p = part_of (cr, slice->index);
      const float *src = p->data + (gsize) (slice->index - p->first) * n;

      if (p->device == dev)
        {
          *out = src;
          return TRUE;
        }
      if (!CHECK (cudaMemcpyPeer (dst, dev, src, p->device, n * sizeof (float)), error))
        return FALSE;
    }
  else
    for (i = 0; i < cr->parts->len; i++)
      {
        ResultPart *p = g_ptr_array_index (cr->parts, i);
        gboolean here = p->device == dev;
        float *tmp;
        gsize bytes;

        if (!here && !resident_scratch (cr, p->device, error))
          return FALSE;
        /* on the part's own device: into the result's place, or its scratch */
        tmp = here ? (slice->kind == AIRY_SLICE_MIP ? dst : dst + (gsize) p->first * len)
                   : cr->scratch[p->device] + cr->scratch_n;
        if (!CHECK (cudaSetDevice (p->device), error))
          return FALSE;
        if (slice->kind == AIRY_SLICE_MIP)
          {
            if (!CHECK (airy_cuda_launch_max_planes (p->data, p->count, n, tmp, here && i > 0, NULL), error))
              return FALSE;
            bytes = n * sizeof (float);
          }
        else
          {
            if (!CHECK (airy_cuda_launch_section (p->data, p->count, g->height, g->width, yz, slice->index, tmp, NULL),
                        error))
              return FALSE;
            bytes = (gsize) p->count * len * sizeof (float);
          }
        if (here)
          continue;
        if (!CHECK (cudaStreamSynchronize (NULL), error))
          return FALSE;
        if (slice->kind != AIRY_SLICE_MIP)
          {
            if (!CHECK (cudaMemcpyPeer (dst + (gsize) p->first * len, dev, tmp, p->device, bytes), error))
              return FALSE;
          }
        else if (!CHECK (cudaMemcpyPeer (i == 0 ? dst : cr->scratch[dev] + cr->scratch_n, dev, tmp, p->device, bytes), error)
                 || (i > 0
                     && (!CHECK (cudaSetDevice (dev), error)
                         || !CHECK (airy_cuda_launch_max_planes (cr->scratch[dev] + cr->scratch_n, 1, n, dst, TRUE, NULL),
                                    error))))
          return FALSE;
      }
  if (!CHECK (cudaSetDevice (dev), error) || !CHECK (cudaStreamSynchronize (NULL), error))
    return FALSE;
  *out = dst;
  return TRUE;
}

static int
resident_home (CudaResident *cr)
{
  return ((ResultPart *) g_ptr_array_index (cr->parts, 0))->device;
}

static gboolean
cuda_resident_read_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  CudaResident *cr = r->priv;
  const float *src;
  guint w, h;
  gboolean ok;

  g_mutex_lock (&cr->backend->lock);
  if (cr->host)
    ok = airy_resident_read_slice (cr->host, slice, out, error);
  else
    {
      int dev = slice->kind == AIRY_SLICE_XY ? part_of (cr, slice->index)->device : resident_home (cr);

      airy_slice_size (r->stack, slice, &w, &h);
      ok = resident_slice_on (cr, slice, dev, &src, error)
           && CHECK (cudaMemcpy (out, src, (gsize) w * h * sizeof (float), cudaMemcpyDeviceToHost), error);
    }
  g_mutex_unlock (&cr->backend->lock);
  return ok;
}

static gboolean
cuda_resident_read_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  CudaResident *cr = r->priv;
  const AiryStack *g = r->stack;
  gsize n = airy_stack_plane_size (g);
  gboolean ok = TRUE;
  guint i, z;

  g_mutex_lock (&cr->backend->lock);
  if (cr->host)
    ok = airy_resident_read_box (cr->host, box, out, error);
  for (i = 0; !cr->host && ok && i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);
      guint z0 = MAX (box->z, p->first), z1 = MIN (box->z + box->depth, p->first + p->count);

      if (z0 >= z1)
        continue;
      ok = CHECK (cudaSetDevice (p->device), error);
      if (ok && box->y == 0 && box->x == 0 && box->height == g->height && box->width == g->width)
        {
          /* whole planes (a host copy of the stack): one contiguous copy */
          ok = CHECK (cudaMemcpy (out + (gsize) (z0 - box->z) * n, p->data + (gsize) (z0 - p->first) * n,
                                  (gsize) (z1 - z0) * n * sizeof (float), cudaMemcpyDeviceToHost), error);
          continue;
        }
      if (ok && box->height == 1)
        /* one row per plane (a section, an axial profile): one strided copy */
        ok = CHECK (cudaMemcpy2D (out + (gsize) (z0 - box->z) * box->width, box->width * sizeof (float),
                                  p->data + (gsize) (z0 - p->first) * n + (gsize) box->y * g->width + box->x,
                                  n * sizeof (float), box->width * sizeof (float), z1 - z0,
                                  cudaMemcpyDeviceToHost), error);
      for (z = z0; ok && box->height > 1 && z < z1; z++)
        ok = CHECK (cudaMemcpy2D (out + (gsize) (z - box->z) * box->height * box->width, box->width * sizeof (float),
                                  p->data + (gsize) (z - p->first) * n + (gsize) box->y * g->width + box->x,
                                  g->width * sizeof (float), box->width * sizeof (float), box->height,
                                  cudaMemcpyDeviceToHost), error);
    }
  g_mutex_unlock (&cr->backend->lock);
  return ok;
}

/* min and max of n values on device d (current) */
static gboolean
device_min_max (CudaResident *cr, int d, const float *data, gsize n, float *lo, float *hi, GError **error)
{
  float partial[2 * AIRY_CUDA_STATS_BLOCKS];
  unsigned blocks = 0, b;

  if (!CHECK (airy_cuda_launch_minmax (data, n, cr->partial[d], &blocks, NULL), error)
      || !CHECK (cudaMemcpy (partial, cr->partial[d], 2 * blocks * sizeof (float), cudaMemcpyDeviceToHost), error))
    return FALSE;
  for (b = 0; b < blocks; b++)
    {
      *lo = MIN (*lo, partial[2 * b]);
      *hi = MAX (*hi, partial[2 * b + 1]);
    }
  return TRUE;
}

/* counts += the histogram of n values on device d (current) */
static gboolean
device_histogram (CudaResident *cr, int d, const float *data, gsize n, float lo, float hi, guint bins,
                  guint64 *counts, GError **error)
{
  g_autofree unsigned long long *host = g_new (unsigned long long, bins);
  unsigned long long *dev = cr->counts[d];
  gboolean ok;
  guint k;

  if (bins > AIRY_STATS_BINS && !CHECK (cudaMalloc ((void **) &dev, bins * sizeof (unsigned long long)), error))
    return FALSE;
  ok = CHECK (airy_cuda_launch_histogram (data, n, lo, hi, bins, dev, NULL), error)
       && CHECK (cudaMemcpy (host, dev, bins * sizeof (unsigned long long), cudaMemcpyDeviceToHost), error);
  if (dev != cr->counts[d])
    cudaFree (dev);
  for (k = 0; ok && k < bins; k++)
    counts[k] += host[k];
  return ok;
}

/* The statistics where the values are: the extremes, then the histogram
 * over them, of the slice assembled on one device or (the whole stack) of
 * every part on its own device. */
static gboolean
cuda_resident_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  CudaResident *cr = r->priv;
  const AiryStack *g = r->stack;
  float lo = INFINITY, hi = -INFINITY;
  gboolean ok = TRUE;
  const float *src = NULL;
  guint i, w, h;
  int dev = -1;

  g_mutex_lock (&cr->backend->lock);
  if (cr->host)
    {
      ok = airy_resident_stats (cr->host, slice, stats, error);
      g_mutex_unlock (&cr->backend->lock);
      return ok;
    }
  if (slice->kind != AIRY_SLICE_STACK)
    {
      dev = slice->kind == AIRY_SLICE_XY ? part_of (cr, slice->index)->device : resident_home (cr);
      airy_slice_size (g, slice, &w, &h);
      ok = resident_slice_on (cr, slice, dev, &src, error)
           && device_min_max (cr, dev, src, (gsize) w * h, &lo, &hi, error);
    }
  for (i = 0; ok && dev < 0 && i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);

      ok = resident_scratch (cr, p->device, error) && CHECK (cudaSetDevice (p->device), error)
           && device_min_max (cr, p->device, p->data, (gsize) p->count * airy_stack_plane_size (g), &lo, &hi, error);
    }
  stats->min = isfinite (lo) ? lo : 0.0f;
  stats->max = isfinite (hi) ? hi : 1.0f;
  if (ok && stats->n_bins > 0)
    {
      memset (stats->counts, 0, stats->n_bins * sizeof (guint64));
      if (dev >= 0)
        ok = device_histogram (cr, dev, src, (gsize) w * h, stats->min, airy_stats_hist_max (stats),
                               stats->n_bins, stats->counts, error);
      for (i = 0; ok && dev < 0 && i < cr->parts->len; i++)
        {
          ResultPart *p = g_ptr_array_index (cr->parts, i);

          ok = CHECK (cudaSetDevice (p->device), error)
               && device_histogram (cr, p->device, p->data, (gsize) p->count * airy_stack_plane_size (g), stats->min,
                                    airy_stats_hist_max (stats), stats->n_bins, stats->counts, error);
        }
    }
  g_mutex_unlock (&cr->backend->lock);
  return ok;
}

/* The CUDA device of the GL context (cudaGLGetDevices, asked once per
 * context with it current); -1 when it is not on one of ours, GL_PROBE
 * when the driver does not say. With the lock held. */
static GlContext *
gl_context_get (CudaBackend *self, gpointer context)
{
  unsigned int n = 0;
  int devices[8];
  GlContext *c;
  guint i;

  for (i = 0; i < self->gl_contexts->len; i++)
    {
      c = g_ptr_array_index (self->gl_contexts, i);
      if (c->context == context)
        return c;
    }
  c = g_new0 (GlContext, 1);
  c->context = context;
  if (cudaGLGetDevices (&n, devices, G_N_ELEMENTS (devices), cudaGLDeviceListAll) != cudaSuccess || n == 0)
    {
      cudaGetLastError ();
      c->device = GL_PROBE;
    }
  else
    c->device = devices[0];
  g_ptr_array_add (self->gl_contexts, c);
  return c;
}

/* The driver did not name the context's GPU: the first device (those that
 * hold the result first) on which the texture registers is it. With the
 * lock held. */
static void
gl_context_probe (CudaBackend *self, CudaResident *cr, GlContext *c, const AiryGlRegistration *key)
{
  AiryGlRegistration k = *key;
  int order[64], n = 0, d, status;
  guint i;

  for (i = 0; i < cr->parts->len && n < (int) G_N_ELEMENTS (order); i++)
    order[n++] = ((ResultPart *) g_ptr_array_index (cr->parts, i))->device;
  for (d = 0; d < self->count && n < (int) G_N_ELEMENTS (order); d++)
    order[n++] = d;
  c->device = -1;
  c->note = N_("the GL context is not on a CUDA device");
  for (i = 0; i < (guint) n; i++)
    {
      k.device = order[i];
      if (cudaSetDevice (k.device) == cudaSuccess
          && _airy_gl_registration_get (self->registered, &k, &_airy_cuda_gl_registration_ops, NULL, &status) != NULL)
        {
          c->device = k.device;
          c->note = NULL;
          break;
        }
      cudaGetLastError ();
    }
}

/* Device to device into the viewer's texture when its GL context is on one
 * of the GPUs (cudaGLGetDevices); through host memory otherwise. */
static gboolean
cuda_resident_to_texture (AiryResident *r, const AirySlice *slice, AiryTexture *texture, GError **error)
{
  CudaResident *cr = r->priv;
  CudaBackend *self = cr->backend;
  const char *note = NULL;
  const float *src = NULL;
  AiryGlRegistration key, *reg;
  cudaGraphicsResource_t resource;
  cudaArray_t array;
  g_autofree float *host = NULL;
  guint w, h;
  int dev = -1, status;
  gboolean ok;

  airy_slice_size (r->stack, slice, &w, &h);
  g_mutex_lock (&self->lock);
  if (cr->host)
    note = cr->note;
  else if (!texture->interop)
    note = N_("the GL context is not on an NVIDIA GPU");
  else
    {
      GlContext *c = gl_context_get (self, texture->context);

      if (c->device == GL_PROBE)
        gl_context_probe (self, cr, c, &(AiryGlRegistration) { texture->context, texture->texture,
                                                               texture->generation, w, h, 0, NULL });
      dev = c->device;
      note = c->note;
    }
  if (dev < 0)
    {
      /* through host memory, as the CPU's */
      if (cr->host)
        ok = airy_resident_to_texture (cr->host, slice, texture, error);
      else
        {
          host = g_new (float, (gsize) w * h);
          g_mutex_unlock (&self->lock);
          ok = cuda_resident_read_slice (r, slice, host, error);
          g_mutex_lock (&self->lock);
          if (ok)
            texture->upload (host, w, h, texture->user_data);
        }
      texture->path = AIRY_TEXTURE_HOST;
      texture->note = note;
      g_mutex_unlock (&self->lock);
      return ok;
    }
  key = (AiryGlRegistration) { texture->context, texture->texture, texture->generation, w, h, dev, NULL };
  ok = resident_slice_on (cr, slice, dev, &src, error) && CHECK (cudaSetDevice (dev), error);
  reg = ok ? _airy_gl_registration_get (self->registered, &key, &_airy_cuda_gl_registration_ops, NULL, &status) : NULL;
  if (ok && reg == NULL)
    ok = CHECK (status, error);
  if (ok)
    {
      resource = reg->resource;
      ok = CHECK (cudaGraphicsMapResources (1, &resource, NULL), error);
      if (ok)
        {
          ok = CHECK (cudaGraphicsSubResourceGetMappedArray (&array, resource, 0, 0), error)
               && CHECK (cudaMemcpy2DToArray (array, 0, 0, src, w * sizeof (float), w * sizeof (float), h,
                                              cudaMemcpyDeviceToDevice), error);
          CHECK (cudaGraphicsUnmapResources (1, &resource, NULL), ok ? error : NULL);
        }
    }
  texture->path = AIRY_TEXTURE_DEVICE;
  texture->device = dev;
  g_mutex_unlock (&self->lock);
  return ok;
}

static void
cuda_resident_free (AiryResident *r)
{
  CudaResident *cr = r->priv;
  CudaBackend *self = cr->backend;

  g_mutex_lock (&self->lock);
  g_ptr_array_remove (self->residents, cr);
  /* a result freed (the viewer's next one, bench's next run): its planes
   * are the next run's buffer */
  resident_free_device (cr, TRUE);
  g_mutex_unlock (&self->lock);
  airy_resident_unref (cr->host);
  g_ptr_array_free (cr->parts, TRUE);
  g_free (cr->scratch);
  g_free (cr->partial);
  g_free (cr->counts);
  g_free (cr);
}

static const AiryResidentOps cuda_resident_ops = {
  .read_slice = cuda_resident_read_slice,
  .read_box = cuda_resident_read_box,
  .stats = cuda_resident_stats,
  .to_texture = cuda_resident_to_texture,
  .free = cuda_resident_free,
};

/* Takes geometry (a stack without data) and the parts. */
AiryResident *
_airy_cuda_resident_new (AiryBackend *backend, AiryStack *geometry, GPtrArray *parts)
{
  CudaBackend *self = backend->priv;
  CudaResident *cr = g_new0 (CudaResident, 1);
  guint i;

  cr->backend = self;
  cr->geometry = geometry;
  cr->parts = parts;
  cr->scratch = g_new0 (float *, self->count);
  cr->partial = g_new0 (float *, self->count);
  cr->counts = g_new0 (unsigned long long *, self->count);
  cr->scratch_n = MAX ((gsize) geometry->height * geometry->width,
                       (gsize) geometry->depth * MAX (geometry->height, geometry->width));
  for (i = 0; i < parts->len; i++)
    _airy_cuda_held_add (self, ((ResultPart *) g_ptr_array_index (parts, i))->device,
              (gint64) part_bytes (cr, g_ptr_array_index (parts, i)));
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->residents, cr);
  g_mutex_unlock (&self->lock);
  return airy_resident_new (backend, &cuda_resident_ops, geometry, cr);
}

void
_airy_cuda_gl_release (AiryBackend *backend, gpointer context)
{
  CudaBackend *self = backend->priv;
  guint i = 0;

  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  _airy_gl_registrations_release (self->registered, context, &_airy_cuda_gl_registration_ops, NULL);
  while (i < self->gl_contexts->len)
    if (((GlContext *) g_ptr_array_index (self->gl_contexts, i))->context == context)
      g_ptr_array_remove_index_fast (self->gl_contexts, i);
    else
      i++;
  g_mutex_unlock (&self->lock);
}
