#define G_LOG_DOMAIN "airy-kernel-propagate"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-image-file.h"
#include "airy-ops-private.h"

/* kernel-propagate: a user's transfer function H(f) (chromatix's
 * kernel_propagate), u' = F⁻¹[H · F[u]]. The file is a float TIFF of two
 * planes, H's real and imaginary parts, on the grid's shape with f = 0 at
 * pixel ⌊N/2⌋ (chromatix's propagator fftshift-ed); one kernel for every
 * wavelength. */

typedef struct { AiryElement parent; } AiryKernelPropagate;
typedef struct { AiryElementClass parent_class; } AiryKernelPropagateClass;
G_DEFINE_FINAL_TYPE (AiryKernelPropagate, _airy_kernel_propagate, AIRY_TYPE_ELEMENT)

/* the kernel in the transform's (uncentred) order, divided by N for the
 * unnormalised backward transform; NULL with error when the file is not
 * two planes of the grid's shape */
static fftwf_complex *
load_kernel (AiryElement *self, const char *path, guint height, guint width, GError **error)
{
  g_autofree char *full = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(AiryStack) stack = NULL;
  const char *base = _airy_element_get_base_dir (self);
  gsize np = (gsize) height * width;
  fftwf_complex *k;
  guint y, x;

  if (path == NULL || *path == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("no kernel file given"));
      return NULL;
    }
  full = g_path_is_absolute (path) || base == NULL ? g_strdup (path) : g_build_filename (base, path, NULL);
  stack = airy_image_read (full, &local);
  if (stack == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, "%s", local->message);
      return NULL;
    }
  if (stack->depth != 2 || stack->height != height || stack->width != width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("the kernel %s is %u × %u × %u; it must be 2 × %u × %u (real and imaginary part on the grid)"),
                   path, stack->depth, stack->height, stack->width, height, width);
      return NULL;
    }
  k = fftwf_alloc_complex (np);
  for (y = 0; y < height; y++)
    for (x = 0; x < width; x++)
      {
        gsize c = (gsize) y * width + x;
        guint ky = (y + height - height / 2) % height, kx = (x + width - width / 2) % width;

        k[(gsize) ky * width + kx] = (stack->data[c] + I * stack->data[np + c]) / (float) np;
      }
  return k;
}

static gboolean
kernel_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  g_autoptr(GError) local = NULL;
  fftwf_complex *k;

  if (ctx->no_files)
    return TRUE;
  k = load_kernel (self, airy_element_get_string (self, "file"), ctx->height, ctx->width, &local);
  if (k == NULL)
    {
      g_set_error (error, AIRY_ERROR, local->code, "%s.file: %s", ctx->path, local->message);
      return FALSE;
    }
  fftwf_free (k);
  return TRUE;
}

static gpointer
kernel_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  return load_kernel (self, airy_element_get_string (self, "file"), ctx->height, ctx->width, error);
}

static void
kernel_free (gpointer state)
{
  fftwf_free (state);
}

static gboolean
kernel_apply (AiryElement *self, gpointer state, AiryField *field,
              const AiryPlane *plane, GError **error)
{
  const fftwf_complex *k = state;
  gsize np = airy_field_plane_size (field), i;
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_FORWARD, plane->threads, u, u);
      for (i = 0; i < np; i++)
        u[i] *= k[i];
      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_BACKWARD, plane->threads, u, u);
    }
  return TRUE;
}

static gboolean
kernel_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  gsize np = airy_field_plane_size (field);
  AiryOp *op;
  guint l;

  op = _airy_op_new (AIRY_OP_FFT, field);
  op->sign = AIRY_FFT_FORWARD;
  g_ptr_array_add (ops, op);
  for (l = 0; l < field->n_lambda; l++)
    memcpy (field->data + l * np, state, np * sizeof (fftwf_complex));
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->sign = AIRY_FFT_BACKWARD;
  g_ptr_array_add (ops, op);
  return TRUE;
}

static void
_airy_kernel_propagate_class_init (AiryKernelPropagateClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "kernel-propagate", N_("Propagation by a user kernel"),
                                   AIRY_CATEGORY_PROPAGATION);
  element_class->check = kernel_check;
  element_class->prepare = kernel_prepare;
  element_class->free_state = kernel_free;
  element_class->apply = kernel_apply;
  element_class->compile = kernel_compile;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_string ("file", N_("Kernel file"),
                            N_("Float TIFF of 2 planes: the transfer function's real and imaginary parts, f = 0 at the centre"),
                            AIRY_PARAM_FILE));
}

static void
_airy_kernel_propagate_init (AiryKernelPropagate *self)
{
}
