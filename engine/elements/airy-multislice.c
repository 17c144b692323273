/* multislice: chromatix's multislice_thick_sample, a beam-propagation
 * method through a thick absorbing and phase volume. The volume is D slices
 * of thickness dz (index change Δn_k and absorption α_k from a medium of
 * index n); the field, zero padded by `pad` pixels on each side, is
 * propagated by dz with the angular spectrum kernel H_dz and then passes
 * slice k as a thin sample (e^{i 2π (Δn_k + iα_k)·dz/λ}), for k = 0 … D − 1;
 * at the end it is propagated back by D·dz/2 − focus (to the middle of the
 * volume, or `focus` µm past it), through the pupil of an imaging system
 * of the given NA (0: none) with an optional dark-field stop or phase-contrast
 * ring, and cropped.
 * The volume: a uniform slab, a bead (a sphere of radius r in the middle
 * of the volume), maps (a value per voxel, slice by slice and row by row),
 * or TIFF stacks of Δn and α per voxel (as stored), whose voxels must be
 * the grid's spacing × dz unless "resample" is set. Compiled to RESIZE,
 * FFT and MULTIPLY ops, which every backend runs and whose adjoints exist. */
#define G_LOG_DOMAIN "airy-multislice"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-image-file.h"
#include "airy-ops-private.h"
#include "airy-stack.h"

typedef struct { AiryElement parent; } AiryMultislice;
typedef struct { AiryElementClass parent_class; } AiryMultisliceClass;
G_DEFINE_FINAL_TYPE (AiryMultislice, _airy_multislice, AIRY_TYPE_ELEMENT)

typedef struct
{
  guint    depth, height, width;  /* the volume (the grid entering) */
  guint    pad;
  double   n, dz, back, na, stop_na;
  double   ring[2];               /* the phase ring's NAs (inner, outer; 0, 0: none) */
  fftwf_complex ring_factor;      /* t·e^{iφ} inside it */
  gboolean band_limit, remove_evanescent;
  float   *dn, *ab;               /* depth × height × width; ab NULL: no absorption */
} SliceState;

static void
slice_state_free (gpointer p)
{
  SliceState *s = p;

  g_free (s->dn);
  g_free (s->ab);
  g_free (s);
}

static gboolean
same_spacing (double a, double b)
{
  return fabs (a - b) <= 1e-4 * MAX (fabs (a), fabs (b));
}

/* A TIFF stack of the volume: its voxels the grid's spacing × dz (or
 * resampled onto them), its planes the slices. */
static AiryStack *
load_volume_file (AiryElement *self, const AiryContext *ctx, const char *name, gboolean probe, GError **error)
{
  const char *file = airy_element_get_string (self, name);
  const char *base = _airy_element_get_base_dir (self);
  double dz = airy_element_get_double (self, "spacing");
  gboolean resample = airy_element_get_boolean (self, "resample");
  double dx = ctx->dx[0], dy = ctx->dy[0];
  g_autofree char *path = NULL;
  g_autoptr(GError) local = NULL;
  AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
  AiryStack *v;
  gboolean lateral_ok, axial_ok;

  if (file == NULL || *file == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s.%s: no file given"), ctx->path, name);
      return NULL;
    }
  path = g_path_is_absolute (file) || base == NULL ? g_strdup (file) : g_build_filename (base, file, NULL);
  v = probe ? airy_tiff_probe (path, &ro, &local) : airy_tiff_read_full (path, &ro, &local);
  if (v == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s.%s: %s"), ctx->path, name, local->message);
      return NULL;
    }
  lateral_ok = !(v->dx > 0 && v->dy > 0) || (same_spacing (v->dx, dx) && same_spacing (v->dy, dy));
  axial_ok = v->depth < 2 || v->dz == 0 || same_spacing (fabs (v->dz), dz);
  if (!resample && (!lateral_ok || !axial_ok || v->height != ctx->height || v->width != ctx->width))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.%s: %s has %u × %u voxels of %.4g × %.4g × %.4g µm, the grid is %u × %u of "
                     "%.4g × %.4g µm with slices of %.4g µm; resample the volume, or add \"resample\": true"),
                   ctx->path, name, path, v->width, v->height, v->dx, v->dy, fabs (v->dz),
                   ctx->width, ctx->height, dx, dy, dz);
      airy_stack_free (v);
      return NULL;
    }
  if (resample && !probe && (!lateral_ok || !axial_ok || v->height != ctx->height || v->width != ctx->width))
    {
      double sz = v->dz != 0 ? fabs (v->dz) : dz, sx = v->dx > 0 ? v->dx : dx, sy = v->dy > 0 ? v->dy : dy;
      guint depth = (guint) CLAMP (floor (v->depth * sz / dz + 0.5), 1, 65536), k;
      g_autofree double *zd = g_new (double, depth);
      g_autofree double *zs = g_new (double, v->depth);
      AiryStack *r;

      v->dx = sx;
      v->dy = sy;
      for (k = 0; k < v->depth; k++)
        zs[k] = (k + 0.5 - v->depth / 2.0) * sz;
      for (k = 0; k < depth; k++)
        zd[k] = (k + 0.5 - depth / 2.0) * dz;
      r = _airy_stack_resample (v, ctx->height, ctx->width, dy, dx, depth, zd, zs);
      airy_stack_free (v);
      if (r == NULL)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, _("%s.%s: not enough memory to resample %s"),
                     ctx->path, name, path);
      return r;
    }
  return v;
}

/* the number of slices the volume has (0 with error set) */
static guint
volume_depth (AiryElement *self, const AiryContext *ctx, GError **error)
{
  int kind = airy_element_get_enum (self, "volume");
  guint slices = (guint) airy_element_get_int (self, "slices");
  g_autoptr(AiryStack) head = NULL;
  g_autofree char *shape = NULL;
  gsize need;

  switch (kind)
    {
    case AIRY_VOLUME_MAP:
      need = (gsize) slices * ctx->height * ctx->width;
      shape = g_strdup_printf ("slices × height × width = %u × %u × %u", slices, ctx->height, ctx->width);
      if (!_airy_sample_map_check (self, "dn-map", need, shape, ctx->path, error)
          || !_airy_sample_map_check (self, "absorption-map", need, shape, ctx->path, error))
        return 0;
      return slices;
    case AIRY_VOLUME_FILE:
      if (ctx->no_files)
        {
          const char *file = airy_element_get_string (self, "dn-file");

          if (file != NULL && *file != '\0')
            return slices;
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s.dn-file: no file given"), ctx->path);
          return 0;
        }
      head = load_volume_file (self, ctx, "dn-file", TRUE, error);
      return head ? head->depth : 0;
    default:
      return slices;
    }
}

static gboolean
multislice_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  double n = airy_element_get_double (self, "n");
  double na = airy_element_get_double (self, "na"), stop = airy_element_get_double (self, "stop-na");
  int pad = airy_element_get_int (self, "pad");
  guint l, depth;

  if (na > n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.na: must be in [0, n=%g], got %g"), ctx->path, n, na);
      return FALSE;
    }
  if (na > 0 && stop >= na)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.stop-na: must be below na=%g, got %g"), ctx->path, na, stop);
      return FALSE;
    }
  if (ctx->height + 2 * pad > 65536 || ctx->width + 2 * pad > 65536)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.pad: the padded grid must be at most 65536 pixels wide, got %u × %u"),
                   ctx->path, ctx->height + 2 * pad, ctx->width + 2 * pad);
      return FALSE;
    }
  {
    gsize nr = 0;
    const double *r = airy_element_get_doubles (self, "ring-na", &nr);

    if (nr != 0 && nr != 2)
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("%s.ring-na: needs 2 values (the ring's inner and outer NA), got %lu"),
                     ctx->path, (unsigned long) nr);
        return FALSE;
      }
    if (nr == 2 && r[0] >= r[1])
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("%s.ring-na: the inner NA must be below the outer, got %g and %g"), ctx->path, r[0], r[1]);
        return FALSE;
      }
  }
  for (l = 1; l < ctx->spectrum->n; l++)
    if (!same_spacing (ctx->dx[l], ctx->dx[0]) || !same_spacing (ctx->dy[l], ctx->dy[0]))
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("%s: the volume needs one grid for every wavelength, the field entering it has "
                       "%.4g µm pixels at %.4g µm and %.4g µm at %.4g µm"),
                     ctx->path, ctx->dx[0], ctx->spectrum->wavelengths[0], ctx->dx[l],
                     ctx->spectrum->wavelengths[l]);
        return FALSE;
      }
  depth = volume_depth (self, ctx, error);
  if (depth == 0)
    return FALSE;
  /* the plan holds a complex factor per slice and wavelength, the kernels
   * (one for every slice, one for the way back) and the volume's floats */
  {
    guint64 padded = (guint64) (ctx->height + 2 * pad) * (ctx->width + 2 * pad);

    ctx->held_bytes += (depth + 1) * padded * ctx->spectrum->n * 8
                       + (guint64) depth * ctx->height * ctx->width * 4 * 2;
  }
  ctx->n = n;
  return TRUE;
}

/* the bead: a sphere of radius r in the middle of the volume, voxel
 * (k, y, x) at ((k + ½ − D/2)·dz, (y − ⌊H/2⌋)·dy, (x − ⌊W/2⌋)·dx) inside
 * when its centre is within r (inclusive) */
static void
fill_bead (SliceState *s, double r, double dn, double ab, double dy, double dx)
{
  guint k, y, x;

  for (k = 0; k < s->depth; k++)
    {
      double zz = (k + 0.5 - s->depth / 2.0) * s->dz;

      for (y = 0; y < s->height; y++)
        {
          double yy = airy_grid_coord (y, s->height, dy);

          for (x = 0; x < s->width; x++)
            {
              double xx = airy_grid_coord (x, s->width, dx);
              gsize i = ((gsize) k * s->height + y) * s->width + x;
              gboolean in = airy_inside_circle (xx * xx + yy * yy + zz * zz, r);

              s->dn[i] = in ? (float) dn : 0.0f;
              if (s->ab)
                s->ab[i] = in ? (float) ab : 0.0f;
            }
        }
    }
}

static float *
stack_floats (AiryStack *v)
{
  gsize n = (gsize) v->depth * v->height * v->width;
  float *out = g_new (float, n);
  guint k;

  for (k = 0; k < v->depth; k++)
    memcpy (out + (gsize) k * v->height * v->width, airy_stack_plane (v, k),
            (gsize) v->height * v->width * sizeof (float));
  return out;
}

static gboolean
fill_files (AiryElement *self, const AiryContext *ctx, SliceState *s, GError **error)
{
  g_autoptr(AiryStack) dn = load_volume_file (self, ctx, "dn-file", FALSE, error);
  g_autoptr(AiryStack) ab = NULL;
  const char *file = airy_element_get_string (self, "absorption-file");

  if (dn == NULL)
    return FALSE;
  if (file != NULL && *file != '\0')
    {
      ab = load_volume_file (self, ctx, "absorption-file", FALSE, error);
      if (ab == NULL)
        return FALSE;
      if (ab->depth != dn->depth)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s.absorption-file: %u slices, the index file has %u"), ctx->path, ab->depth, dn->depth);
          return FALSE;
        }
      s->ab = stack_floats (ab);
    }
  s->depth = dn->depth;
  s->dn = stack_floats (dn);
  return TRUE;
}

static gpointer
multislice_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  SliceState *s = g_new0 (SliceState, 1);
  int kind = airy_element_get_enum (self, "volume");
  double dn = airy_element_get_double (self, "dn"), ab = airy_element_get_double (self, "absorption");
  gsize n, i;

  s->height = ctx->height;
  s->width = ctx->width;
  s->pad = (guint) airy_element_get_int (self, "pad");
  s->n = airy_element_get_double (self, "n");
  s->dz = airy_element_get_double (self, "spacing");
  s->na = airy_element_get_double (self, "na");
  s->stop_na = airy_element_get_double (self, "stop-na");
  {
    gsize nr = 0;
    const double *r = airy_element_get_doubles (self, "ring-na", &nr);

    s->ring[0] = nr == 2 ? r[0] : 0.0;
    s->ring[1] = nr == 2 ? r[1] : 0.0;
    s->ring_factor = (float) airy_element_get_double (self, "ring-transmission")
                     * _airy_cis (airy_element_get_double (self, "ring-phase"));
  }
  s->band_limit = airy_element_get_boolean (self, "band-limit");
  s->remove_evanescent = airy_element_get_boolean (self, "remove-evanescent");
  s->depth = volume_depth (self, ctx, error);
  if (s->depth == 0)
    {
      slice_state_free (s);
      return NULL;
    }
  n = (gsize) s->depth * s->height * s->width;
  switch (kind)
    {
    case AIRY_VOLUME_FILE:
      if (!fill_files (self, ctx, s, error))
        {
          slice_state_free (s);
          return NULL;
        }
      break;
    case AIRY_VOLUME_MAP:
      s->dn = _airy_sample_map_floats (self, "dn-map", 1.0);
      s->ab = _airy_sample_map_floats (self, "absorption-map", 1.0);
      if (s->dn == NULL)
        s->dn = g_new0 (float, n);
      break;
    default:
      s->dn = g_new (float, n);
      s->ab = ab != 0.0 ? g_new (float, n) : NULL;
      if (kind == AIRY_VOLUME_BEAD)
        fill_bead (s, airy_element_get_double (self, "radius"), dn, ab, ctx->dy[0], ctx->dx[0]);
      else
        for (i = 0; i < n; i++)
          {
            s->dn[i] = (float) dn;
            if (s->ab)
              s->ab[i] = (float) ab;
          }
    }
  s->back = s->depth * s->dz / 2.0 - airy_element_get_double (self, "focus");
  return s;
}

typedef struct
{
  const SliceState   *s;
  gboolean            pupil;
  double              na2, stop2, ring0, ring1;  /* (NA/λ)² of the pupil, the stop, the ring */
  AiryAngularSpectrum as;
} KernelState;

static fftwf_complex
kernel_at (double fx, double fy, gpointer user_data)
{
  const KernelState *k = user_data;
  const SliceState *s = k->s;
  double f2 = fx * fx + fy * fy;

  if (k->pupil && ((s->na > 0 && f2 > k->na2) || (s->stop_na > 0 && f2 < k->stop2)))
    return 0.0f;
  if (k->pupil && s->ring[1] > 0 && f2 >= k->ring0 && f2 <= k->ring1)
    return _airy_angular_spectrum_at (&k->as, fx, fy) * s->ring_factor;
  return _airy_angular_spectrum_at (&k->as, fx, fy);
}

/* plane l of field (its uncentred spectrum) times the angular spectrum
 * kernel of z over N (the backward transform's normalisation); with pupil,
 * times the imaging pupil f² ≤ (NA/λ)² less the stop f² < (NA_stop/λ)²,
 * and the phase ring t·e^{iφ} over (NA_in/λ)² ≤ f² ≤ (NA_out/λ)² (Zernike's
 * phase contrast; an inner NA of 0 is a phase dot on the unscattered wave) */
static void
multiply_propagator (const SliceState *s, AiryField *field, guint l, double z, gboolean pupil)
{
  double lambda = field->lambda[l];
  KernelState k = { s, pupil };

  k.na2 = (s->na / lambda) * (s->na / lambda);
  k.stop2 = (s->stop_na / lambda) * (s->stop_na / lambda);
  k.ring0 = (s->ring[0] / lambda) * (s->ring[0] / lambda);
  k.ring1 = (s->ring[1] / lambda) * (s->ring[1] / lambda);
  _airy_angular_spectrum_init (&k.as, field, l, z, s->n, s->band_limit, s->remove_evanescent);
  _airy_field_multiply_spectrum (field, l, kernel_at, &k);
}

/* every plane of the padded field times slice k (1 in the padding) */
static void
multiply_slice (const SliceState *s, AiryField *field, guint k)
{
  guint h = field->height, w = field->width, p = s->pad, y, x, l;
  gsize np = (gsize) h * w;

  for (l = 0; l < field->n_lambda; l++)
    for (y = p; y < p + s->height; y++)
      for (x = p; x < p + s->width; x++)
        {
          gsize i = ((gsize) k * s->height + (y - p)) * s->width + (x - p);
          double t[2];

          airy_thin_sample (s->dn[i], s->ab ? s->ab[i] : 0.0, s->dz, field->lambda[l], t);
          field->data[l * np + (gsize) y * w + x] *= (float) t[0] + I * (float) t[1];
        }
}

static void
propagate_planes (const SliceState *s, AiryField *field, double z, gboolean pupil, guint threads)
{
  gsize np = airy_field_plane_size (field);
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      /* the field is centred at ⌊N/2⌋ and H even in f: an uncentred pair
       * leaves the result in place */
      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_FORWARD, threads, u, u);
      multiply_propagator (s, field, l, z, pupil);
      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_BACKWARD, threads, u, u);
    }
}

static gboolean
multislice_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  const SliceState *s = state;
  guint k;

  airy_field_resize_centred (field, s->height + 2 * s->pad, s->width + 2 * s->pad);
  for (k = 0; k < s->depth; k++)
    {
      propagate_planes (s, field, s->dz, FALSE, plane->threads);
      multiply_slice (s, field, k);
    }
  propagate_planes (s, field, -s->back, TRUE, plane->threads);
  airy_field_resize_centred (field, s->height, s->width);
  return TRUE;
}

static void
add_fft (GPtrArray *ops, const AiryField *field, AiryFftSign sign)
{
  AiryOp *op = _airy_op_new (AIRY_OP_FFT, field);

  op->sign = sign;
  g_ptr_array_add (ops, op);
}

/* FFT, MULTIPLY (the kernel of z), FFT⁻¹; the kernel op is made once and
 * shared by every slice (*kernel: NULL the first time) */
static void
add_propagator (GPtrArray *ops, const SliceState *s, AiryField *field, double z, gboolean pupil, AiryOp **kernel)
{
  guint l;

  add_fft (ops, field, AIRY_FFT_FORWARD);
  if (kernel == NULL || *kernel == NULL)
    {
      AiryOp *op;

      _airy_field_fill_ones (field);
      for (l = 0; l < field->n_lambda; l++)
        multiply_propagator (s, field, l, z, pupil);
      op = _airy_op_take_factor (AIRY_OP_MULTIPLY, field);
      if (kernel != NULL)
        *kernel = op;
      g_ptr_array_add (ops, op);
    }
  else
    g_ptr_array_add (ops, _airy_op_ref (*kernel));
  add_fft (ops, field, AIRY_FFT_BACKWARD);
}

/* The same steps as ops: RESIZE, then per slice FFT, MULTIPLY (H_dz, one
 * op shared by the slices), FFT⁻¹, MULTIPLY (the slice), then the way back
 * and the crop. */
static gboolean
multislice_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  const SliceState *s = state;
  AiryOp *kernel = NULL;
  guint k;

  if (s->pad > 0)
    {
      airy_field_resize (field, s->height + 2 * s->pad, s->width + 2 * s->pad);
      g_ptr_array_add (ops, _airy_op_new (AIRY_OP_RESIZE, field));
    }
  for (k = 0; k < s->depth; k++)
    {
      add_propagator (ops, s, field, s->dz, FALSE, &kernel);
      _airy_field_fill_ones (field);
      multiply_slice (s, field, k);
      g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
    }
  add_propagator (ops, s, field, -s->back, TRUE, NULL);
  if (s->pad > 0)
    {
      airy_field_resize (field, s->height, s->width);
      g_ptr_array_add (ops, _airy_op_new (AIRY_OP_RESIZE, field));
    }
  return TRUE;
}

static gboolean
multislice_relevant (AiryElement *self, GParamSpec *pspec)
{
  int kind = airy_element_get_enum (self, "volume");
  const char *name = pspec->name;

  if (g_str_has_suffix (name, "-file") || g_str_equal (name, "resample"))
    return kind == AIRY_VOLUME_FILE;
  if (g_str_has_suffix (name, "-map"))
    return kind == AIRY_VOLUME_MAP;
  if (g_str_equal (name, "radius"))
    return kind == AIRY_VOLUME_BEAD;
  if (g_str_equal (name, "dn") || g_str_equal (name, "absorption"))
    return kind == AIRY_VOLUME_BEAD || kind == AIRY_VOLUME_SLAB;
  if (g_str_equal (name, "slices"))
    return kind != AIRY_VOLUME_FILE;
  if (g_str_equal (name, "stop-na"))
    return airy_element_get_double (self, "na") > 0;
  if (g_str_equal (name, "ring-phase") || g_str_equal (name, "ring-transmission"))
    {
      gsize nr = 0;

      airy_element_get_doubles (self, "ring-na", &nr);
      return nr == 2;
    }
  return TRUE;
}

static void
install_volume (GObjectClass *object_class)
{
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("volume", N_("Volume"), N_("A uniform slab, a bead, maps or TIFF stacks of the index and absorption"),
                          _airy_volume_kind_get_type (), AIRY_VOLUME_BEAD, AIRY_PARAM_SELECTS | AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("slices", N_("Slices"), N_("How many slices the volume has"), 1, 65536, 20,
                         AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("spacing", N_("Slice spacing"), N_("Thickness of each slice"), "µm",
                            AIRY_FEATURE_MIN, 1e4, 1.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("dn", N_("Index change"), N_("Δn from the medium (of the slab, inside the bead)"), NULL,
                            -4.0, 4.0, 0.05, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("absorption", N_("Absorption"), N_("α (of the slab, inside the bead)"), NULL,
                            0.0, 10.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("radius", N_("Bead radius"), N_("A sphere in the middle of the volume"), "µm",
                            AIRY_FEATURE_MIN, 1e6, 10.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("dn-map", N_("Index map"), N_("Δn per voxel, slice by slice, row by row over the grid"), NULL));
  airy_element_class_install_property (object_class,
    airy_param_spec_doubles ("absorption-map", N_("Absorption map"),
                             N_("α per voxel, slice by slice, row by row over the grid"), NULL));
  airy_element_class_install_property (object_class,
    airy_param_spec_string ("dn-file", N_("Index file"), N_("TIFF stack of Δn per voxel (a plane per slice)"),
                            AIRY_PARAM_FILE));
  airy_element_class_install_property (object_class,
    airy_param_spec_string ("absorption-file", N_("Absorption file"), N_("TIFF stack of α per voxel (none: 0)"),
                            AIRY_PARAM_FILE));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("resample", N_("Resample"), N_("Resample the files' voxels onto the grid and the slices"),
                             FALSE));
}

static void
_airy_multislice_class_init (AiryMultisliceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "multislice", N_("Thick sample (multislice)"),
                                   AIRY_CATEGORY_PROPAGATION);
  element_class->check = multislice_check;
  element_class->prepare = multislice_prepare;
  element_class->free_state = slice_state_free;
  element_class->apply = multislice_apply;
  element_class->compile = multislice_compile;
  element_class->param_relevant = multislice_relevant;
  install_volume (object_class);
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Of the medium"), NULL, 1.0, 4.0, 1.33, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("pad", N_("Padding"), N_("Zero padding on each side (pixels)"), 0, 32768, 0,
                         AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("NA"), N_("Of the system imaging the focus plane (0: the scattered field)"), NULL,
                            0.0, 4.0, 0.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("stop-na", N_("Dark-field stop"), N_("NA below which the pupil is blocked (0: none)"), NULL,
                            0.0, 4.0, 0.0, AIRY_PARAM_NOT_DIFFERENTIABLE));
  airy_element_class_install_property (object_class,
    airy_param_spec_set_max_items (airy_param_spec_double_array ("ring-na", N_("Phase ring"),
                                   N_("Inner and outer NA of a phase-contrast ring (none: no ring)"), NULL,
                                   0.0, 4.0, AIRY_PARAM_NOT_DIFFERENTIABLE), 2));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ring-phase", N_("Ring phase"), N_("Phase the ring adds"), "rad",
                            -2.0 * G_PI, 2.0 * G_PI, G_PI / 2, AIRY_PARAM_PHASE));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("ring-transmission", N_("Ring transmission"), N_("Amplitude the ring passes"), NULL,
                            0.0, 1.0, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("focus", N_("Focus"), N_("The plane imaged, from the middle of the volume towards its exit"),
                            "µm", -1e6, 1e6, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("band-limit", N_("Band limit"), N_("Band-limited angular spectrum (Matsushima)"), FALSE));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("remove-evanescent", N_("Remove evanescent"),
                             N_("Drop evanescent waves instead of letting them decay"), FALSE));
}

static void
_airy_multislice_init (AiryMultislice *self)
{
}
