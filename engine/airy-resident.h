#pragma once

#include <glib.h>

#include "airy-stack.h"

G_BEGIN_DECLS

/* Results kept by their backend, for the viewer (DESIGN §5).
 *
 * A run asked for a resident result (AiryRunOptions.resident) leaves its
 * values where they were computed: in host memory on the CPU, on the GPUs
 * with CUDA. The viewer reads everything it shows through the resident's
 * slots (like ggml's buffer interface beside its backend interface): the
 * slices it draws go into its GL textures (CUDA: device to device, a small
 * kernel gathering a section across planes, peer copies between GPUs; CPU:
 * an upload from host memory), the histogram and the limits are computed
 * where the values are, and only what a person reads as numbers (the value
 * under the cursor, profiles) or saves comes to host memory. */

typedef enum
{
  AIRY_SLICE_XY,     /* plane z = index: height × width */
  AIRY_SLICE_XZ,     /* row y = index of every plane: depth × width, z downwards */
  AIRY_SLICE_YZ,     /* column x = index of every plane: depth × height */
  AIRY_SLICE_MIP,    /* the maximum along z: height × width */
  AIRY_SLICE_STACK,  /* every value (statistics only) */
} AirySliceKind;

typedef struct
{
  AirySliceKind kind;
  guint         index;
} AirySlice;

/* A box of voxels [z, z + depth) × [y, y + height) × [x, x + width),
 * read into out[z][y][x]. */
typedef struct
{
  guint z, y, x;
  guint depth, height, width;
} AiryBox;

typedef struct
{
  float    min;        /* out: the finite extremes (0 and 1 when there are none) */
  float    max;
  guint    n_bins;     /* in: histogram bins over [min, airy_stats_hist_max()]; 0 for none */
  guint64 *counts;     /* in: n_bins counters, filled as airy_histogram() does */
} AirySliceStats;

typedef enum
{
  AIRY_TEXTURE_HOST,    /* uploaded from host memory (glTexSubImage2D) */
  AIRY_TEXTURE_DEVICE,  /* copied on the GPU (CUDA–GL interop) */
} AiryTexturePath;

/* The histogram's upper end: max, or min + 1 for a constant slice (its
 * values then all fall in the first bin). */
static inline float
airy_stats_hist_max (const AirySliceStats *stats)
{
  return stats->max > stats->min ? stats->max : stats->min + 1.0f;
}

/* A GL texture of the viewer (GL_R32F, of the slice's size), with its
 * context current on the calling thread (the GTK main thread). */
typedef struct
{
  guint           texture;     /* GL name */
  guint           generation;  /* changes whenever the viewer re-specifies the texture */
  gpointer        context;     /* the GL context (identity only) */
  gboolean        interop;     /* the context runs on an NVIDIA GPU: device copies may be tried */
  /* the upload of host values into the bound texture */
  void          (*upload)      (const float *data,
                                guint        width,
                                guint        height,
                                gpointer     user_data);
  gpointer        user_data;
  /* out: how the slice got there */
  AiryTexturePath path;
  int             device;      /* AIRY_TEXTURE_DEVICE: the GPU that copied it */
  const char     *note;        /* why a device copy was not possible (untranslated, static), or NULL */
} AiryTexture;

typedef struct _AiryBackend  AiryBackend;
typedef struct _AiryResident AiryResident;

/* The slots of a resident result. read_slice, read_box and stats are
 * required; to_texture NULL means read_slice then texture->upload. Slots
 * are called on one thread at a time per resident (the viewer's). */
typedef struct
{
  gboolean (*read_slice) (AiryResident         *resident,
                          const AirySlice      *slice,
                          float                *out,
                          GError              **error);
  gboolean (*read_box)   (AiryResident         *resident,
                          const AiryBox        *box,
                          float                *out,
                          GError              **error);
  gboolean (*stats)      (AiryResident         *resident,
                          const AirySlice      *slice,
                          AirySliceStats       *stats,
                          GError              **error);
  gboolean (*to_texture) (AiryResident         *resident,
                          const AirySlice      *slice,
                          AiryTexture          *texture,
                          GError              **error);
  void     (*free)       (AiryResident         *resident);
} AiryResidentOps;

struct _AiryResident
{
  gint                   ref;
  const AiryResidentOps *ops;
  AiryBackend           *backend;
  /* geometry, voxel size and z origin; data is NULL when the values are
   * on the devices only */
  AiryStack             *stack;
  gpointer               priv;
  /*< private >*/
  GMutex                 stats_lock;
  GPtrArray             *stats_cache;   /* statistics asked for before, kept */
};

/* For backends: takes stack (geometry, transfer full) and priv. */
AiryResident *airy_resident_new         (AiryBackend           *backend,
                                         const AiryResidentOps *ops,
                                         AiryStack             *stack,
                                         gpointer               priv);
/* The CPU backend's resident: a stack in host memory (transfer full). */
AiryResident *airy_resident_new_host    (AiryStack             *stack);
/* What a run shows before it ends (AiryRunOptions.preview): the geometry
 * of the whole stack (depth planes at their z, voxel size; no data;
 * transfer full) of which only plane `index` is known (plane, a one-plane
 * stack; transfer full). Every other plane reads NaN; its statistics are
 * those of the known values; it cannot be saved (airy_resident_to_stack
 * says which plane is known). */
AiryResident *airy_resident_new_partial (AiryStack             *geometry,
                                         AiryStack             *plane,
                                         guint                  index);
/* Whether only one plane is known so far (a partial resident), and which. */
gboolean      airy_resident_is_partial  (AiryResident          *resident,
                                         guint                 *index);
AiryResident *airy_resident_ref         (AiryResident          *resident);
void          airy_resident_unref       (AiryResident          *resident);
const AiryStack *airy_resident_get_stack (AiryResident         *resident);
const char   *airy_resident_get_backend_name (AiryResident     *resident);

/* The slots, with their arguments checked (an error names the bad index). */
gboolean      airy_resident_read_slice  (AiryResident          *resident,
                                         const AirySlice       *slice,
                                         float                 *out,
                                         GError               **error);
gboolean      airy_resident_read_box    (AiryResident          *resident,
                                         const AiryBox         *box,
                                         float                 *out,
                                         GError               **error);
/* Statistics are computed once per slice and number of bins and kept with
 * the resident (a thread that computed them before handing the resident
 * on, as the app's worker does, spares the viewer the pass). */
gboolean      airy_resident_stats       (AiryResident          *resident,
                                         const AirySlice       *slice,
                                         AirySliceStats        *stats,
                                         GError               **error);
gboolean      airy_resident_to_texture  (AiryResident          *resident,
                                         const AirySlice       *slice,
                                         AiryTexture           *texture,
                                         GError               **error);
/* A host copy of every value (for saving): a new stack. */
AiryStack    *airy_resident_to_stack    (AiryResident          *resident,
                                         GError               **error);

/* The size of a slice of a stack of this geometry (0 × 0 for STACK). */
void          airy_slice_size           (const AiryStack       *geometry,
                                         const AirySlice       *slice,
                                         guint                 *width,
                                         guint                 *height);

/* Slices and statistics of values in host memory: the CPU's slots, and
 * the CUDA backend's for a result moved to host memory. */
void          airy_stack_section_xz     (const AiryStack       *stack,
                                         guint                  y,
                                         float                 *out);
void          airy_stack_section_yz     (const AiryStack       *stack,
                                         guint                  x,
                                         float                 *out);
void          airy_stack_mip            (const AiryStack       *stack,
                                         float                 *out);
/* counts[bin] of values in [lo, hi], bin = ⌊(v − lo)/(hi − lo)·bins⌋ (the
 * last bin includes hi); all zero unless hi > lo. */
void          airy_histogram            (const float           *values,
                                         gsize                  n,
                                         float                  lo,
                                         float                  hi,
                                         guint                  bins,
                                         guint64               *counts);
/* The finite extremes of values (0 and 1 when there are none). */
void          airy_values_min_max       (const float           *values,
                                         gsize                  n,
                                         float                 *min,
                                         float                 *max);
/* Statistics of n host values as the stats slot returns them. */
void          airy_values_stats         (const float           *values,
                                         gsize                  n,
                                         AirySliceStats        *stats);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryResident, airy_resident_unref)

G_END_DECLS
