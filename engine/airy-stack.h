#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * AiryStack:
 * A float32 stack data[z][y][x] with its voxel size in µm (0: unknown) and,
 * for images read from disk, the bit depth they were stored with.
 *
 * z positions: plane k sits at z0 + k·dz, unless `z` holds the exact
 * position of every plane (a non-uniform list; dz is then their mean
 * spacing). Computed stacks also carry their provenance: the spectrum and
 * the system as JSON, which OME-TIFF files store.
 */
typedef struct
{
  guint   depth;
  guint   height;
  guint   width;
  float  *data;    /* NULL for a probe: the header of a file without its pixels */
  double  dx;
  double  dy;
  double  dz;
  double  z0;      /* z of the first plane, µm */
  int     bits;    /* 8, 16 or 32 as read; 32 for computed stacks */
  double *z;       /* depth exact positions (µm), or NULL for z0 + k·dz */
  guint   n_channels;      /* read from a hyperstack: its channels and time */
  guint   n_frames;        /*   points (1 or 0: none), and which were read */
  guint   channel;
  guint   frame;
  guint   n_wavelengths;   /* provenance, 0 when unknown */
  double *wavelengths;     /* vacuum, µm */
  double *weights;
  char   *system_json;
  /* what the channels are, for people (the TIFF's slice labels, the
   * viewer's channel chooser): a modality's channel stack names itself
   * ("excitation", "effective"; one entry), a hyperstack each of its
   * n_channels; NULL-terminated, "" for one unnamed, or NULL: by
   * wavelength */
  char  **channel_names;
  /*< private >*/
  gsize   mapped;  /* bytes mapped for data (large stacks), 0 when malloc'd */
} AiryStack;

/* A boxed type: a copy holds its own pixels (a probe's copy none). */
#define AIRY_TYPE_STACK (airy_stack_get_type ())
GType      airy_stack_get_type   (void);

AiryStack *airy_stack_new        (guint depth,
                                  guint height,
                                  guint width);
void       airy_stack_free       (AiryStack *stack);
/* The memory of the last freed large stack, which is kept for the next
 * stack of its size, goes back to the system now (when memory is tight:
 * the GUI then holds one stack, not two). Returns the bytes released. */
gsize      airy_stack_release_spare (void);
AiryStack *_airy_stack_new_uninitialised (guint depth,
                                          guint height,
                                          guint width);
AiryStack *airy_stack_copy       (const AiryStack *stack);
float     *airy_stack_plane      (const AiryStack *stack,
                                  guint            z);
gsize      airy_stack_plane_size (const AiryStack *stack);
/**
 * airy_stack_get_plane_data:
 * @stack: a stack with its pixels
 * @z: the plane, below depth
 * @n_values: (out): height × width
 *
 * Plane z's values, row by row, for bindings (which cannot read @data).
 *
 * Returns: (array length=n_values) (transfer none): the plane, or %NULL for
 *   a plane that does not exist
 */
const float *airy_stack_get_plane_data (const AiryStack *stack,
                                        guint            z,
                                        gsize           *n_values);
/**
 * airy_stack_min_max:
 * @stack: a stack
 * @min: (out): the smallest value
 * @max: (out): the largest value
 *
 * The whole stack's range (NaN ignored), on all cores.
 */
void       airy_stack_min_max    (const AiryStack *stack,
                                  float           *min,
                                  float           *max);
/* Position of plane k (µm), and whether the planes are evenly spaced
 * (to 1e-6 of the spacing). */
double     airy_stack_get_z      (const AiryStack *stack,
                                  guint            k);
gboolean   airy_stack_z_uniform  (const AiryStack *stack);
/* Sets the exact plane positions (depth values) and z0/dz from them; a
 * uniform list is kept as z0 + k·dz alone. */
void       airy_stack_set_z      (AiryStack       *stack,
                                  const double    *z);
/* Copies the metadata (voxel size, z, provenance; not the pixels nor the
 * plane ranges) of src. */
void       airy_stack_copy_metadata (AiryStack       *dst,
                                     const AiryStack *src);
/* Names the stack as one channel (NULL: unnamed). */
void       airy_stack_set_channel_name (AiryStack  *stack,
                                        const char *name);
void       airy_stack_set_provenance (AiryStack    *stack,
                                      guint         n_wavelengths,
                                      const double *wavelengths,
                                      const double *weights,
                                      const char   *system_json);
/* The stack on another grid: depth × height × width at dy, dx (pixel
 * ⌊N/2⌋ stays on the axis) and at the planes z_dst (µm; the source's
 * planes at z_src, or centred on z_dst's middle with spacing dz when
 * z_src is NULL). Values are densities: linear interpolation where the
 * new grid is finer, the mean over each new voxel where it is coarser;
 * zero outside the source. NULL when memory runs out. */
AiryStack *_airy_stack_resample  (const AiryStack *src,
                                  guint            height,
                                  guint            width,
                                  double           dy,
                                  double           dx,
                                  guint            depth,
                                  const double    *z_dst,
                                  const double    *z_src);
/* min and max of n floats (NaN ignored; +inf/−inf when all are NaN);
 * FALSE when one of them is not finite (NaN or ±inf). */
gboolean   _airy_floats_min_max  (const float     *v,
                                  gsize            n,
                                  float           *min,
                                  float           *max);
/* NULL when the first depth planes hold finite values only (one pass on
 * all cores, which also gives their min and max; NULL for none), else
 * "4096 non-finite values (the first at plane 3, y 17, x 5)", planes
 * counted from first_plane. */
char      *_airy_stack_describe_nonfinite (const AiryStack *stack,
                                           guint            depth,
                                           guint            first_plane,
                                           float           *min,
                                           float           *max);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryStack, airy_stack_free)

G_END_DECLS
