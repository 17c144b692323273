#include "config.h"

#include "airy-test-ops.h"
#include "airy-elements-private.h"

/* The device operation lists (what the CUDA backend runs for chains
 * without a fused path) against the element-by-element CPU path, on small
 * grids with two wavelengths, for every built-in element type. */

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g}," \
             " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [0.4, 0.6]}," \
             " \"z\": {\"start\": -2, \"stop\": 3, \"count\": 3}, \"elements\": [%s]}"

static AiryPlan *
plan_for (guint h, guint w, double spacing, const char *elements)
{
  g_autofree char *json = g_strdup_printf (HEAD, h, w, spacing, elements);

  return test_plan_new (json);
}

/* Compiles the chain, checks the op kinds, then every plane's intensity
 * both ways; returns the largest relative difference. */
static double
compare (guint h, guint w, double spacing, const char *elements, const char *kinds)
{
  g_autoptr (AiryPlan) plan = plan_for (h, w, spacing, elements);
  g_autoptr (GError) error = NULL;
  AiryOpList *list = _airy_ops_compile (plan, &error);
  g_autoptr (GString) got = g_string_new (NULL);
  gsize n = (gsize) plan->psf_height * plan->psf_width, k;
  g_autofree float *a = g_new (float, n);
  g_autofree float *b = g_new (float, n);
  double worst = 0.0;
  guint i, p;

  g_assert_no_error (error);
  for (i = 0; i < list->ops->len; i++)
    {
      static const char letters[] = "SOPGMJFRA";
      g_string_append_c (got, letters[((AiryOp *) g_ptr_array_index (list->ops, i))->kind]);
    }
  g_assert_cmpstr (got->str, ==, kinds);

  for (p = 0; p < plan->n_planes; p++)
    {
      AiryPlane plane = { p, plan->z[p], 1 };
      g_autoptr (AiryField) fa = test_plan_field (plan);
      g_autoptr (AiryField) fb = test_plan_field (plan);
      double peak = 0.0, diff = 0.0;

      for (i = 0; i < plan->chain->len; i++)
        {
          AiryElement *e = g_ptr_array_index (plan->chain, i);
          g_assert_true (AIRY_ELEMENT_GET_CLASS (e)->apply (e, list->states[i], fa, &plane, &error));
          g_assert_no_error (error);
        }
      g_assert_true (_airy_ops_run (list, fb, &plane, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (fb->height, ==, fa->height);
      g_assert_cmpuint (fb->width, ==, fa->width);
      airy_field_intensity (fa, a, FALSE);
      airy_field_intensity (fb, b, FALSE);
      for (k = 0; k < n; k++)
        {
          peak = MAX (peak, a[k]);
          diff = MAX (diff, fabs (a[k] - b[k]));
        }
      g_assert_cmpfloat (peak, >, 0.0);
      worst = MAX (worst, diff / peak);
    }
  _airy_ops_unref (list);
  g_test_message ("%s: largest difference %.3g of the peak", kinds, worst);
  return worst;
}

static void
test_objective_chain (void)
{
  /* objective (non-paraxial, aplanatic, off axis), pixelwise masks, an FF lens with an NA */
  double d = compare (64, 64, 0.5,
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.33, \"na\": 0.9, \"defocus-model\": \"nonparaxial\","
    " \"apodisation\": \"aplanatic\", \"offset-x\": 0.4, \"z\": 0.5},"
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 7], \"zernike-coefficients\": [0.1, 0.05]},"
    "{\"type\": \"circular-pupil\", \"diameter\": 20},"
    "{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\", \"wrap\": true, \"bits\": 4},"
    "{\"type\": \"ff-lens\", \"f\": 20, \"n\": 1.33, \"na\": 0.95}",
    "OMMMMF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_propagation_chain (void)
{
  /* plane wave through pupils and a thin lens, three propagations with
   * padding (same and full), then an inverse FF lens */
  double d = compare (48, 40, 1.0,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.01},"
    "{\"type\": \"square-pupil\", \"width\": 30},"
    "{\"type\": \"thin-lens\", \"f\": 2000},"
    "{\"type\": \"propagate\", \"z\": 300, \"pad\": 8},"
    "{\"type\": \"rectangular-pupil\", \"width\": 36, \"height\": 40},"
    "{\"type\": \"propagate\", \"z\": 150, \"method\": \"angular-spectrum\", \"band-limit\": true, \"pad\": 4, \"output\": \"full\"},"
    "{\"type\": \"ff-lens\", \"f\": 500, \"inverse\": true}",
    "SMMRFMFRMRFMFF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_thick_lens_chain (void)
{
  /* thick plano-convex lenses: input chirp (with the pupil), FFT, transfer,
   * FFT⁻¹ and, where D ≠ 1, the output chirp; no thickness: one chirp */
  double d = compare (48, 40, 0.5,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.01},"
    "{\"type\": \"circular-pupil\", \"diameter\": 18},"
    "{\"type\": \"thick-plano-convex-lens\", \"radius\": 400, \"thickness\": 3, \"n-lens\": 1.5},"
    "{\"type\": \"thick-plano-convex-ff-lens\", \"radius\": 300, \"thickness\": 20, \"f\": 500, \"na\": 0.02, \"inverse\": true},"
    "{\"type\": \"thick-plano-convex-lens\", \"radius\": 900, \"thickness\": 0}",
    "SMMFMFMFMFMM");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_kernel_chain (void)
{
  /* kernel-propagate: FFT, the file's kernel as a factor, FFT⁻¹ */
  g_autofree char *dir = g_dir_make_tmp ("airy-ops-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "kernel.tif", NULL);
  g_autofree char *chain = NULL;
  g_autoptr(AiryStack) k = airy_stack_new (2, 40, 48);
  g_autoptr(GError) error = NULL;
  double d;

  for (gsize i = 0; i < (gsize) 40 * 48; i++)
    {
      k->data[i] = (float) cos (0.01 * (double) (i % 97) * (double) (i % 13));
      k->data[40 * 48 + i] = (float) sin (0.02 * (double) (i % 89));
    }
  g_assert_true (airy_image_write (path, k, NULL, &error));
  g_assert_no_error (error);
  chain = g_strdup_printf ("{\"type\": \"plane-wave\", \"angle-x\": 0.01},"
                           "{\"type\": \"gaussian-pupil\", \"waist\": 6},"
                           "{\"type\": \"kernel-propagate\", \"file\": \"%s\"}", path);
  d = compare (40, 48, 0.5, chain, "SMFMF");
  g_assert_cmpfloat (d, <, 1e-6);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_sas_chain (void)
{
  /* the scalable angular spectrum: pad N/2, precompensation, one-FFT
   * Fresnel, crop; backwards the precompensation comes last */
  double d = compare (32, 32, 0.5,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.01},"
    "{\"type\": \"gaussian-pupil\", \"waist\": 2},"
    "{\"type\": \"propagate\", \"z\": 60, \"method\": \"sas\"},"
    "{\"type\": \"propagate\", \"z\": -60, \"method\": \"sas\"}",
    "SMRFMFMFMRRMFMFMFR");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_czt_chain (void)
{
  /* an FF lens with an output region (chirp-z, on the host), a field
   * filter (host), then a thin lens and a propagation on the region's grid */
  double d = compare (48, 40, 0.5,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.002},"
    "{\"type\": \"circular-pupil\", \"diameter\": 16},"
    "{\"type\": \"ff-lens\", \"f\": 400, \"output-shape\": 36, \"output-spacing\": 1.5,"
    " \"output-center-x\": 4, \"output-center-y\": -3},"
    "{\"type\": \"field-filter\", \"sigma\": 1.2, \"high-pass\": true},"
    "{\"type\": \"thin-lens\", \"f\": 3000},"
    "{\"type\": \"propagate\", \"z\": 50}",
    "SMAAMFMF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_thick_chain (void)
{
  /* a thin sample and a microlens array (pixelwise), then a multislice bead of 3 slices with
   * padding, an NA and a dark-field stop: per slice FFT, H, FFT⁻¹, slice */
  double d = compare (32, 28, 0.5,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.02},"
    "{\"type\": \"thin-sample\", \"dn\": 0.03, \"absorption\": 0.002, \"thickness\": 2},"
    "{\"type\": \"microlens-array\", \"layout\": \"hexagonal\", \"lenses\": 2, \"pitch\": 5, \"radius\": 3,"
    " \"f\": 300, \"block-between\": true},"
    "{\"type\": \"multislice\", \"radius\": 3.1, \"slices\": 3, \"spacing\": 1, \"pad\": 4,"
    " \"absorption\": 0.001, \"na\": 0.9, \"stop-na\": 0.2, \"focus\": 0.5}",
    "SMMRFMFMFMFMFMFMFMFR");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_generated_sources (void)
{
  /* a point source through a Gaussian pupil, single-FFT Fresnel, a DF lens */
  double d = compare (64, 64, 1.0,
    "{\"type\": \"point-source\", \"z\": 400},"
    "{\"type\": \"gaussian-pupil\", \"waist\": 20},"
    "{\"type\": \"propagate\", \"z\": 1000, \"method\": \"single-fft\"},"
    "{\"type\": \"df-lens\", \"f\": 800, \"d\": 300}",
    "PMMFMFM");
  g_assert_cmpfloat (d, <, 1e-6);

  /* a Gaussian beam, evanescent waves kept, an inverse DF lens with an NA */
  d = compare (32, 32, 0.25,
    "{\"type\": \"gaussian-beam\", \"waist\": 2, \"z\": 10},"
    "{\"type\": \"propagate\", \"z\": 5, \"method\": \"angular-spectrum\", \"remove-evanescent\": false},"
    "{\"type\": \"df-lens\", \"f\": 100, \"d\": 50, \"na\": 0.05, \"inverse\": true}",
    "GFMFMF");
  g_assert_cmpfloat (d, <, 1e-6);
}

static void
test_point_source_at_zero (void)
{
  /* the planes reach z = 0 for the point source: the device path says so as the CPU does */
  g_autoptr (AiryPlan) plan = plan_for (16, 16, 1.0, "{\"type\": \"point-source\", \"z\": 2}");
  g_autoptr (GError) error = NULL;
  AiryOpList *list = _airy_ops_compile (plan, &error);
  g_autoptr (AiryField) field = test_plan_field (plan);
  AiryPlane plane = { 0, plan->z[0], 1 };

  g_assert_no_error (error);
  g_assert_false (_airy_ops_run (list, field, &plane, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "point-source: distance z must not be 0 (plane 0 has z = 0 µm)");
  _airy_ops_unref (list);
}

/* ---- the program: the fusion pass and the intensity stage ---- */

/* The plan's program (fusion pass included) against the elements' apply()
 * for every plane's intensity; checks the op kinds and returns the largest
 * difference relative to the peak. */
static double
compare_program (AiryPlan *plan, const char *kinds)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *described = NULL;
  g_autoptr (AiryOpList) list = NULL;
  gsize n = (gsize) plan->psf_height * plan->psf_width, k;
  g_autofree float *a = g_new (float, n);
  g_autofree float *b = g_new (float, n);
  double worst = 0.0;
  guint i, p;

  g_assert_true (_airy_plan_compile (plan, &error));
  g_assert_no_error (error);
  described = _airy_plan_describe (plan);
  g_assert_cmpstr (described, ==, kinds);
  /* the elements' own states, for apply() */
  list = _airy_ops_compile (plan, &error);
  g_assert_no_error (error);
  for (p = 0; p < plan->n_planes; p++)
    {
      AiryPlane plane = { p, plan->z[p], 1 };
      g_autoptr (AiryField) fa = test_plan_field (plan);
      g_autoptr (AiryField) fb = test_plan_field (plan);
      double peak = 0.0, diff = 0.0;

      for (i = 0; i < plan->chain->len; i++)
        {
          AiryElement *e = g_ptr_array_index (plan->chain, i);
          g_assert_true (AIRY_ELEMENT_GET_CLASS (e)->apply (e, list->states[i], fa, &plane, &error));
          g_assert_no_error (error);
        }
      airy_field_intensity (fa, a, FALSE);
      g_assert_true (_airy_ops_run_intensity (plan->ops, fb, &plane, b, &error));
      g_assert_no_error (error);
      for (k = 0; k < n; k++)
        {
          peak = MAX (peak, a[k]);
          diff = MAX (diff, fabs (a[k] - b[k]));
        }
      g_assert_cmpfloat (peak, >, 0.0);
      worst = MAX (worst, diff / peak);
    }
  g_test_message ("%s: largest difference %.3g of the peak", kinds, worst);
  return worst;
}

static double
compare_fused (guint h, guint w, double spacing, const char *elements, const char *kinds)
{
  g_autoptr (AiryPlan) plan = plan_for (h, w, spacing, elements);

  return compare_program (plan, kinds);
}

static const char *objective_chain =
  "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.33, \"na\": 0.9, \"defocus-model\": \"nonparaxial\","
  " \"apodisation\": \"aplanatic\", \"offset-x\": 0.4, \"z\": 0.5},"
  "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 7], \"zernike-coefficients\": [0.1, 0.05]},"
  "{\"type\": \"circular-pupil\", \"diameter\": 20},"
  "{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\", \"wrap\": true, \"bits\": 4},"
  "{\"type\": \"ff-lens\", \"f\": 20, \"n\": 1.33, \"na\": 0.95}";

static void
test_fused_chain (void)
{
  /* the masks and the lens pupil fold into the source, which fuses with
   * the lens transform and |u|²: one op, the same planes as apply() */
  g_assert_cmpfloat (compare_fused (64, 64, 0.5, objective_chain, "fused-psf"), <, 1e-6);
  /* paraxial (a separable phase), an odd grid, a pupil that fills the rows */
  g_assert_cmpfloat (compare_fused (45, 52, 0.6,
    "{\"type\": \"objective-point-source\", \"f\": 30, \"n\": 1.0, \"na\": 0.6, \"offset-y\": -0.3},"
    "{\"type\": \"gaussian-pupil\", \"waist\": 8},"
    "{\"type\": \"ff-lens\", \"f\": 30}", "fused-psf"), <, 1e-6);
}

static void
test_fused_op (void)
{
  /* what the fused op carries: the pupil's rows only, G separable for the
   * paraxial model, scale w·|c|², the extra z */
  g_autoptr (AiryPlan) plan = plan_for (64, 64, 0.5,
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": 0.5, \"z\": 0.25},"
    "{\"type\": \"ff-lens\", \"f\": 20}");
  g_autoptr (GError) error = NULL;
  AiryOp *op;
  const AiryFusedPsf *psf;
  double r = 20 * 0.5 / 1.0, c;

  g_assert_true (_airy_plan_compile (plan, &error));
  op = g_ptr_array_index (plan->ops, 0);
  g_assert_cmpint (op->kind, ==, AIRY_OP_FUSED_PSF);
  psf = op->psf;
  /* the pupil radius of 10 µm covers rows 32 ± 20 of the 0.5 µm grid */
  g_assert_cmpuint (psf->y0, ==, 32 - (guint) (r / 0.5));
  g_assert_cmpuint (psf->rows, ==, 2 * (guint) (r / 0.5) + 1);
  g_assert_nonnull (psf->gx);
  g_assert_nonnull (psf->gy);
  g_assert_cmpfloat (psf->z0, ==, 0.25);
  g_assert_cmpfloat_with_epsilon (psf->G[(gsize) 5 * 64 + 40],
                                  psf->gy[5] + psf->gx[40], 1e-12 * fabs (psf->G[(gsize) 5 * 64 + 40]));
  c = 0.5 * 0.5 / (0.5 * 20);   /* dx·dy·n/(λ f) at λ = 0.5 µm */
  g_assert_cmpfloat_with_epsilon (psf->scale[0], 0.4 * c * c, 1e-6 * 0.4 * c * c);
  g_assert_cmpuint (psf->hash, ==, plan->optics_hash);
}

static void
test_folded_chain (void)
{
  /* no fused PSF here, but the pupils right after the source fold into it */
  g_assert_cmpfloat (compare_fused (48, 40, 1.0,
    "{\"type\": \"plane-wave\", \"angle-x\": 0.01},"
    "{\"type\": \"square-pupil\", \"width\": 30},"
    "{\"type\": \"thin-lens\", \"f\": 2000},"
    "{\"type\": \"propagate\", \"z\": 300, \"pad\": 8},"
    "{\"type\": \"ff-lens\", \"f\": 500, \"inverse\": true}",
    "set resize fft multiply fft resize fft intensity"), <, 1e-6);
  /* an inverse lens or a chirp after the transform is not the PSF pattern */
  g_assert_cmpfloat (compare_fused (32, 32, 0.5,
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": 0.5},"
    "{\"type\": \"df-lens\", \"f\": 20, \"d\": 10}",
    "objective fft multiply intensity"), <, 1e-6);
  g_assert_cmpfloat (compare_fused (32, 32, 0.5,
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": 0.5},"
    "{\"type\": \"ff-lens\", \"f\": 20, \"inverse\": true}",
    "objective fft intensity"), <, 1e-6);
}

/* A lens type that exists only in this test: a soft-edged Fourier lens
 * whose compile() emits a MULTIPLY (its apodisation) and a centred FFT with
 * the lens constant, as the ff-lens does. Nothing in the engine knows its
 * name: the fusion pass sees the ops. */
typedef struct { AiryElement parent; } TestSoftLens;
typedef struct { AiryElementClass parent_class; } TestSoftLensClass;
static GType test_soft_lens_get_type (void);
G_DEFINE_FINAL_TYPE (TestSoftLens, test_soft_lens, AIRY_TYPE_ELEMENT)

static double
soft_edge (double x, double y, guint l, gpointer user_data)
{
  double a = *(double *) user_data;
  return exp (-(x * x + y * y) / (a * a));
}

static gboolean
soft_lens_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  double f = airy_element_get_double (self, "f");
  guint l;

  for (l = 0; l < ctx->spectrum->n; l++)
    {
      ctx->dx[l] = f * ctx->spectrum->wavelengths[l] / (ctx->width * ctx->dx[l]);
      ctx->dy[l] = f * ctx->spectrum->wavelengths[l] / (ctx->height * ctx->dy[l]);
    }
  return TRUE;
}

static gboolean
soft_lens_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  double a = airy_element_get_double (self, "edge");

  _airy_field_multiply_real (field, soft_edge, &a);
  _airy_ff_transform (field, airy_element_get_double (self, "f"), 1.0, FALSE, plane->threads);
  return TRUE;
}

static gboolean
soft_lens_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  double a = airy_element_get_double (self, "edge"), f = airy_element_get_double (self, "f");
  AiryOp *op;
  guint l;

  _airy_field_fill_ones (field);
  _airy_field_multiply_real (field, soft_edge, &a);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->centred = TRUE;
  op->sign = AIRY_FFT_FORWARD;
  op->scale = fftwf_alloc_complex (field->n_lambda);
  for (l = 0; l < field->n_lambda; l++)
    {
      op->scale[l] = -(float) (field->dx[l] * field->dy[l] / (field->lambda[l] * f)) * I;
      field->dx[l] = f * field->lambda[l] / (field->width * field->dx[l]);
      field->dy[l] = f * field->lambda[l] / (field->height * field->dy[l]);
    }
  g_ptr_array_add (ops, op);
  return TRUE;
}

static void
test_soft_lens_class_init (TestSoftLensClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "test-soft-lens", "Soft-edged Fourier lens (test)",
                                   AIRY_CATEGORY_LENS);
  element_class->check = soft_lens_check;
  element_class->apply = soft_lens_apply;
  element_class->compile = soft_lens_compile;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("f", "Focal length", "Focal length", "µm", 0.0, 1e6, 100.0, AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("edge", "Edge", "1/e radius of the apodisation", "µm", 0.0, 1e6, 10.0,
                            AIRY_PARAM_EXCLUSIVE_MIN));
}

static void
test_soft_lens_init (TestSoftLens *self)
{
}

/* A mask type that exists only in this test and has no device form: a
 * host-only apply() that is not declared pixelwise. */
typedef struct { AiryElement parent; } TestHostMask;
typedef struct { AiryElementClass parent_class; } TestHostMaskClass;
static GType test_host_mask_get_type (void);
G_DEFINE_FINAL_TYPE (TestHostMask, test_host_mask, AIRY_TYPE_ELEMENT)

static gboolean
host_mask_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  double a = 6.0;

  _airy_field_multiply_real (field, soft_edge, &a);
  return TRUE;
}

static void
test_host_mask_class_init (TestHostMaskClass *klass)
{
  airy_element_class_set_metadata (AIRY_ELEMENT_CLASS (klass), "test-host-mask", "Host-only mask (test)",
                                   AIRY_CATEGORY_MASK);
  AIRY_ELEMENT_CLASS (klass)->apply = host_mask_apply;
}

static void
test_host_mask_init (TestHostMask *self)
{
}

static void
test_new_lens_fuses (void)
{
  static const char *json =
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [0.4, 0.6]},"
    " \"z\": {\"start\": -2, \"stop\": 3, \"count\": 5}, \"elements\": ["
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": 0.6},"
    "{\"type\": \"test-soft-lens\", \"f\": 20, \"edge\": 9}]}";
  g_autoptr (AirySystem) system = test_system (json);
  g_autoptr (AiryResult) fused = NULL, generic = NULL;
  g_autoptr (AiryPlan) plan = plan_for (64, 64, 0.5, "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0,"
                                        " \"na\": 0.6}, {\"type\": \"test-soft-lens\", \"f\": 20, \"edge\": 9}");
  gsize n = 64 * 64, k;
  double worst = 0.0, peak = 0.0;

  /* the engine fuses it by its ops: the plan reports one FUSED_PSF op, and
   * the op's planes are apply()'s */
  g_assert_cmpfloat (compare_program (plan, "fused-psf"), <, 1e-6);
  /* the CPU runs it with its pruned kernels, as the element-free path does */
  fused = test_run (system, &(AiryRunOptions) { .backend = "cpu" });
  g_setenv ("AIRY_NO_FAST_PATH", "1", TRUE);
  generic = test_run (system, &(AiryRunOptions) { .backend = "cpu" });
  g_unsetenv ("AIRY_NO_FAST_PATH");
  for (k = 0; k < 5 * n; k++)
    {
      peak = MAX (peak, generic->stack->data[k]);
      worst = MAX (worst, fabs (fused->stack->data[k] - generic->stack->data[k]));
    }
  g_assert_cmpfloat (peak, >, 0.0);
  g_assert_cmpfloat (worst / peak, <, 1e-6);
}

static void
test_host_only_element (void)
{
  /* a type without a device form becomes an APPLY op: the CPU runs it */
  g_autoptr (AiryPlan) plan = plan_for (32, 32, 0.5,
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": 0.5},"
    "{\"type\": \"test-host-mask\"}, {\"type\": \"circular-pupil\", \"diameter\": 12},"
    "{\"type\": \"ff-lens\", \"f\": 20}");

  g_assert_cmpfloat (compare_program (plan, "objective apply multiply fft intensity"), <, 1e-6);
}

static void
test_intensity_stage (void)
{
  /* the sensor and the sum over z are ops after the field stage */
  g_autoptr (AirySystem) summed = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": 0.5},"
    "  {\"type\": \"ff-lens\", \"f\": 20}, {\"type\": \"sensor\", \"reduce\": \"sum\", \"resample\": \"block-sum\","
    "  \"factor\": 2}]}");
  g_autoptr (AirySystem) microscope = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
    " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
    " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1}}");
  AiryRunOptions options = { .backend = "cpu" };
  g_autoptr (GError) error = NULL;
  g_autoptr (AiryPlan) a = _airy_plan_new (summed, &options, NULL, &error);
  g_autoptr (AiryPlan) b = _airy_plan_new (microscope, &options, NULL, &error);
  g_autofree char *da = NULL, *db = NULL;
  AiryOp *sensor;

  g_assert_no_error (error);
  g_assert_true (_airy_plan_compile (a, &error) && _airy_plan_compile (b, &error));
  da = _airy_plan_describe (a);
  db = _airy_plan_describe (b);
  g_assert_cmpstr (da, ==, "fused-psf sum sensor");
  g_assert_cmpstr (db, ==, "fused-psf convolve sensor");
  sensor = g_ptr_array_index (a->ops, a->ops->len - 1);
  g_assert_cmpint (sensor->sensor->resample, ==, AIRY_SENSOR_BLOCK_SUM);
  g_assert_cmpuint (sensor->sensor->factor, ==, 2);
  g_assert_cmpuint (sensor->sensor->out_height, ==, 16);
}

/* ---- the compiled field stage is shared by plans of the same optics ---- */

static AiryPlan *
plan_of (AirySystem *system)
{
  AiryRunOptions options = { .backend = "cpu" };
  g_autoptr (GError) error = NULL;
  AiryPlan *plan = _airy_plan_new (system, &options, NULL, &error);

  g_assert_no_error (error);
  return plan;
}

static void
test_optics_hash (void)
{
  static const char *json =
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": %g, \"stop\": %g, \"count\": %u}, \"elements\": ["
    "{\"type\": \"objective-point-source\", \"f\": 20, \"n\": 1.0, \"na\": %g},"
    "{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [5], \"zernike-coefficients\": [0.1]},"
    "{\"type\": \"ff-lens\", \"f\": 20}]}";
  g_autofree char *ja = g_strdup_printf (json, -2.0, 2.0, 5, 0.5);
  g_autofree char *jb = g_strdup_printf (json, -1.0, 3.0, 9, 0.5);   /* other planes */
  g_autofree char *jc = g_strdup_printf (json, -2.0, 2.0, 5, 0.45);  /* other optics */
  g_autofree char *jd = g_strdup_printf (json, -2.0, 2.0, 5, 0.4);   /* and others */
  g_autoptr (AirySystem) a = test_system (ja);
  g_autoptr (AirySystem) b = test_system (jb);
  g_autoptr (AirySystem) c = test_system (jc);
  g_autoptr (AirySystem) d = test_system (jd);
  g_autoptr (AiryPlan) pa = plan_of (a);
  g_autoptr (AiryPlan) pb = plan_of (b);
  g_autoptr (AiryPlan) pc = plan_of (c);
  g_autoptr (AiryResult) ra = NULL, rb = NULL, rc = NULL, rd = NULL, again = NULL, fresh = NULL;
  AiryRunOptions options = { .backend = "cpu" };
  guint compiles;

  /* z is not part of the optics */
  g_assert_cmpuint (_airy_plan_optics_hash (pa), ==, _airy_plan_optics_hash (pb));
  g_assert_cmpuint (_airy_plan_optics_hash (pa), !=, _airy_plan_optics_hash (pc));
  g_assert_cmpuint (airy_system_hash (a), !=, airy_system_hash (b));

  /* a run with other planes reuses the compiled field stage (F, G) … */
  ra = test_run (a, &options);
  compiles = _airy_plan_compiles ();
  rb = test_run (b, &options);
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles);
  /* … other optics compile theirs */
  rc = test_run (c, &options);
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles + 1);
  /* the last two are kept (a modality's two chains in turn) … */
  again = test_run (b, &options);
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles + 1);
  /* … a third pushes the oldest out */
  rd = test_run (d, &options);
  rc = (airy_result_free (rc), test_run (c, &options));
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles + 2);
  /* and what was reused gives what a fresh compile gives, exactly */
  fresh = test_run (b, &options);
  g_assert_cmpuint (_airy_plan_compiles (), ==, compiles + 3);
  g_assert_cmpmem (rb->stack->data, 9 * 64 * 64 * sizeof (float), fresh->stack->data, 9 * 64 * 64 * sizeof (float));
}


/* ---- every op self-contained ---- */

/* The program from its ops alone (_airy_ops_run_program: no plan, no
 * element) gives what the CPU backend gives from the plan, for every kind:
 * SET, OBJECTIVE (fused), POINT, GAUSS, MULTIPLY, FFT, INTENSITY,
 * CONVOLVE (constant, beads, a file), SUM and SENSOR (block sum, bilinear,
 * the noise chain). The plan and the system are gone when it runs; no op
 * but APPLY points at an element. */
static void
check_self_contained (const char *json, const char *kinds)
{
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) ref = test_run (system, &(AiryRunOptions) { .backend = "cpu", .threads = 1 });
  g_autoptr(GPtrArray) ops = NULL;
  g_autoptr(AiryStack) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree double *z = NULL;
  g_autofree char *described = NULL;
  AiryRunOptions options = { 0 };
  AiryPlan *plan = _airy_plan_new (system, &options, NULL, &error);
  double peak = 0.0, worst = 0.0;
  guint n, i;
  gsize k, total;

  g_assert_no_error (error);
  g_assert_true (_airy_plan_compile (plan, &error));
  described = _airy_plan_describe (plan);
  g_assert_cmpstr (described, ==, kinds);
  ops = g_ptr_array_ref (plan->ops);
  n = plan->n_planes;
  z = g_memdup2 (plan->z, n * sizeof (double));
  _airy_plan_unref (plan);
  g_clear_object (&system);
  for (i = 0; i < ops->len; i++)
    {
      AiryOp *op = g_ptr_array_index (ops, i);

      g_assert_null (op->element);
      g_assert_null (op->state);
      if (op->kind == AIRY_OP_CONVOLVE)
        g_assert_nonnull (op->convolve);
      if (op->kind == AIRY_OP_SUM)
        g_assert_true (op->reduce != NULL && op->reduce->n_planes == n);
      if (op->kind == AIRY_OP_SENSOR)
        g_assert_nonnull (op->sensor);
    }
  out = _airy_ops_run_program (ops, n, z, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (out->depth, ==, ref->stack->depth);
  g_assert_cmpuint (out->height, ==, ref->stack->height);
  g_assert_cmpuint (out->width, ==, ref->stack->width);
  total = (gsize) out->depth * airy_stack_plane_size (out);
  for (k = 0; k < total; k++)
    {
      peak = MAX (peak, fabs (ref->stack->data[k]));
      worst = MAX (worst, fabs ((double) out->data[k] - ref->stack->data[k]));
    }
  g_test_message ("%s: worst %g of a peak %g", kinds, worst, peak);
  g_assert_cmpfloat (peak, >, 0.0);
  g_assert_cmpfloat (worst, <=, 1e-5 * peak);
}

static void
test_self_contained (void)
{
  g_autofree char *tmpdir = g_dir_make_tmp ("airy-ops-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (tmpdir, "sample.tif", NULL);
  g_autoptr(AiryStack) volume = airy_stack_new (3, 40, 40);
  g_autoptr(GError) error = NULL;
  g_autofree char *beads = test_microscope_json ("{\"beads\": {\"count\": 30, \"seed\": 4, \"intensity\": 2}}",
                                                 "\"reduce\": \"sum\", \"resample\": \"block-sum\", \"factor\": 2,"
                                                 " \"gain\": 3, \"offset\": 10", 48, 4);
  g_autofree char *constant = test_microscope_json ("{\"constant\": 1.5}", "\"reduce\": \"sum\"", 40, 3);
  g_autofree char *file = NULL, *file_sample = NULL;
  gsize k;

  /* generated sources, the chain's ops, SUM and a bilinear sensor */
  check_self_contained (
    "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5, 0.6],"
    " \"weights\": [2, 1]}, \"z\": {\"values\": [0, 10, -40]},"
    " \"elements\": [{\"type\": \"gaussian-beam\", \"waist\": 3, \"power\": 2},"
    "  {\"type\": \"circular-pupil\", \"diameter\": 16}, {\"type\": \"ff-lens\", \"f\": 100}],"
    " \"sensor\": {\"reduce\": \"sum\", \"resample\": \"linear\", \"spacing\": 1.7}}",
    "gauss multiply fft intensity sum sensor");
  check_self_contained (
    "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.55]},"
    " \"z\": {\"values\": [50, 120]},"
    " \"elements\": [{\"type\": \"point-source\", \"z\": 10}, {\"type\": \"ff-lens\", \"f\": 100}],"
    " \"sensor\": {\"resample\": \"block-sum\", \"factor\": 3, \"gain\": 2, \"offset\": 5}}",
    "point fft intensity sensor");
  check_self_contained (
    "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.55]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"angle-x\": 0.01}, {\"type\": \"circular-pupil\", \"diameter\": 12},"
    "  {\"type\": \"ff-lens\", \"f\": 100}]}",
    "set fft intensity");
  /* the microscope: the fused PSF, CONVOLVE of each sample kind, SENSOR */
  check_self_contained (beads, "fused-psf convolve sensor");
  check_self_contained (constant, "fused-psf convolve sensor");
  for (k = 0; k < (gsize) volume->depth * airy_stack_plane_size (volume); k++)
    volume->data[k] = (float) ((k * 7919) % 13) / 13.0f;
  volume->dx = volume->dy = 0.1;
  g_assert_true (airy_tiff_write (path, volume, &error));
  file_sample = g_strdup_printf ("{\"file\": \"%s\"}", path);
  file = test_microscope_json (file_sample, "\"reduce\": \"sum\"", 40, 3);
  check_self_contained (file, "fused-psf convolve sensor");
  g_unlink (path);
  g_rmdir (tmpdir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  airy_element_register (test_soft_lens_get_type ());
  airy_element_register (test_host_mask_get_type ());
  g_test_add_func ("/ops/objective-chain", test_objective_chain);
  g_test_add_func ("/ops/thick-lens-chain", test_thick_lens_chain);
  g_test_add_func ("/ops/kernel-chain", test_kernel_chain);
  g_test_add_func ("/ops/sas-chain", test_sas_chain);
  g_test_add_func ("/ops/propagation-chain", test_propagation_chain);
  g_test_add_func ("/ops/czt-chain", test_czt_chain);
  g_test_add_func ("/ops/generated-sources", test_generated_sources);
  g_test_add_func ("/ops/thick-chain", test_thick_chain);
  g_test_add_func ("/ops/point-source-at-zero", test_point_source_at_zero);
  g_test_add_func ("/ops/fused-chain", test_fused_chain);
  g_test_add_func ("/ops/fused-op", test_fused_op);
  g_test_add_func ("/ops/folded-chain", test_folded_chain);
  g_test_add_func ("/ops/new-lens-fuses", test_new_lens_fuses);
  g_test_add_func ("/ops/host-only-element", test_host_only_element);
  g_test_add_func ("/ops/intensity-stage", test_intensity_stage);
  g_test_add_func ("/ops/optics-hash", test_optics_hash);
  g_test_add_func ("/ops/self-contained", test_self_contained);
  return g_test_run ();
}
