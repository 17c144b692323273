#define G_LOG_DOMAIN "airy-plan"

#include "config.h"

#include <sys/stat.h>

#include <string.h>

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-ops-private.h"
#include "airy-run.h"
#include "airy-sensor-private.h"

/* A plan's program (DESIGN §4): its field stage (the element chain lowered
 * to ops and passed through the fusion pass: F, G, masks) depends on the
 * optics only, never on z, the sample or the sensor; the last ones compiled
 * are kept and shared, so that an edit of z, the sample, the sensor or the
 * devices reuses them and only a change of the optics computes one again.
 * Two are kept (within the memory cap together): a modality of two chains
 * (STED's excitation and depletion) runs them in turn. */

#define N_KEPT 2
static GMutex      compiled_lock;
static AiryOpList *compiled_kept[N_KEPT];      /* the last field stages, the latest first */
static gboolean    compiled_kept_fused[N_KEPT];
static guint       compiled_count;

static void
append_double (GString *s, const char *what, const double *v, guint n)
{
  guint i;

  g_string_append_printf (s, "|%s", what);
  for (i = 0; i < n; i++)
    g_string_append_printf (s, " %.17g", v[i]);
}

/* what a file an element reads is, as far as the field stage is concerned */
static void
append_files (GString *s, AiryElement *e)
{
  guint n, k;
  g_autofree GParamSpec **specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);
  const char *base = _airy_element_get_base_dir (e);

  for (k = 0; k < n; k++)
    {
      const char *file;
      g_autofree char *path = NULL;
      g_autofree char *stamp = NULL;

      if (!(airy_param_spec_get_flags (specs[k]) & AIRY_PARAM_FILE)
          || (file = airy_element_get_string (e, specs[k]->name)) == NULL || *file == '\0')
        continue;
      path = g_path_is_absolute (file) || base == NULL ? g_strdup (file) : g_build_filename (base, file, NULL);
      if ((stamp = _airy_file_stamp (path)) != NULL)
        g_string_append_printf (s, "|file %s %s", path, stamp);
      else
        g_string_append_printf (s, "|file %s missing", path);
    }
}

/* A cache keyed by a file must not keep its old contents after a change
 * anywhere in it, and hashing a sample of many GiB on every run would cost
 * more than imaging it: the key is the file's stat instead. A rewrite
 * changes the change time (which no program can set back) and, written
 * through a new file, the inode; the times are to the nanosecond, not the
 * second of st_mtime, so an edit within the same second is seen. */
char *
_airy_file_stamp (const char *path)
{
  struct stat st;

  if (stat (path, &st) != 0)
    return NULL;
  return g_strdup_printf ("dev %llu ino %llu size %lld m %lld.%09ld c %lld.%09ld",
                          (unsigned long long) st.st_dev, (unsigned long long) st.st_ino,
                          (long long) st.st_size, (long long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec,
                          (long long) st.st_ctim.tv_sec, (long) st.st_ctim.tv_nsec);
}

guint64
_airy_plan_optics_hash (AiryPlan *plan)
{
  g_autoptr(GString) s = g_string_new ("airy optics 1");
  g_autofree char *sum = NULL;
  guint i;

  g_string_append_printf (s, "|in %u × %u → %u × %u", plan->in_height, plan->in_width, plan->psf_height,
                          plan->psf_width);
  append_double (s, "dy", plan->in_dy, plan->spectrum->n);
  append_double (s, "dx", plan->in_dx, plan->spectrum->n);
  append_double (s, "λ", plan->spectrum->wavelengths, plan->spectrum->n);
  append_double (s, "w", plan->spectrum->weights, plan->spectrum->n);
  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *json = NULL;

      json_node_take_object (node, airy_element_to_json (e));
      json = json_to_string (node, FALSE);

      g_string_append_printf (s, "|%s", json);
      append_files (s, e);
    }
  sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, s->len);
  return g_ascii_strtoull (sum + 48, NULL, 16);
}

guint
_airy_plan_compiles (void)
{
  return (guint) g_atomic_int_get (&compiled_count);
}

/* A vectorial source's components are batch entries of the fused PSF; a
 * field of one scalar plane per wavelength has no room for them, so one
 * left unfused is an error, not a scalar answer. */
static gboolean
check_components_fused (AiryOpList *list, gboolean fuse, GError **error)
{
  guint i;

  for (i = 0; i < list->ops->len; i++)
    {
      AiryOp *op = g_ptr_array_index (list->ops, i);
      g_autoptr(GString) after = NULL;
      guint k;

      if (op->kind != AIRY_OP_OBJECTIVE || op->n_components == 0)
        continue;
      if (!fuse)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("objective-point-source.field: a vectorial field runs on the fused PSF path only, "
                         "which AIRY_NO_FAST_PATH turns off"));
          return FALSE;
        }
      after = g_string_new (NULL);
      for (k = i + 1; k < list->ops->len; k++)
        g_string_append_printf (after, "%s%s", k > i + 1 ? ", " : "",
                                _airy_op_kind_name (((AiryOp *) g_ptr_array_index (list->ops, k))->kind));
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("objective-point-source.field: a vectorial field needs its pupil to go through "
                     "pupil-plane masks into one ff-lens that ends the optics; "
                     "after it come the operations %s"), after->str);
      return FALSE;
    }
  return TRUE;
}

/* The field stage for this plan's optics: the kept one, or a new one
 * (kept in its place when it is not too big to keep). */
static AiryOpList *
field_stage (AiryPlan *plan, GError **error)
{
  gboolean fuse = g_getenv ("AIRY_NO_FAST_PATH") == NULL;
  guint64 cap = MIN (G_GUINT64_CONSTANT (1) << 30, airy_memory_budget () / 4);
  AiryOpList *list = NULL, *old = NULL;
  guint i;

  if (plan->unfused)
    {
      /* the gradient's program: compiled once, as the elements wrote it */
      if ((list = _airy_ops_compile (plan, error)) != NULL)
        {
          list->hash = plan->optics_hash;
          _airy_ops_end_field (list, plan->spectrum);
        }
      return list;
    }
  g_mutex_lock (&compiled_lock);
  for (i = 0; i < N_KEPT && list == NULL; i++)
    if (compiled_kept[i] && compiled_kept[i]->hash == plan->optics_hash && compiled_kept_fused[i] == fuse)
      list = _airy_ops_ref (compiled_kept[i]);
  g_mutex_unlock (&compiled_lock);
  if (list)
    return list;

  list = _airy_ops_compile (plan, error);
  if (list == NULL)
    return NULL;
  list->hash = plan->optics_hash;
  _airy_ops_end_field (list, plan->spectrum);
  if (fuse)
    _airy_ops_fuse (list);
  if (!check_components_fused (list, fuse, error))
    {
      _airy_ops_unref (list);
      return NULL;
    }
  g_atomic_int_inc (&compiled_count);
  if (_airy_ops_bytes (list) <= cap)
    {
      guint64 kept;

      g_mutex_lock (&compiled_lock);
      old = compiled_kept[N_KEPT - 1];
      memmove (compiled_kept + 1, compiled_kept, (N_KEPT - 1) * sizeof compiled_kept[0]);
      memmove (compiled_kept_fused + 1, compiled_kept_fused, (N_KEPT - 1) * sizeof compiled_kept_fused[0]);
      compiled_kept[0] = _airy_ops_ref (list);
      compiled_kept_fused[0] = fuse;
      /* the older ones go where the two together pass the cap */
      kept = _airy_ops_bytes (list);
      for (i = 1; i < N_KEPT; i++)
        if (compiled_kept[i] && (kept += _airy_ops_bytes (compiled_kept[i])) > cap)
          {
            _airy_ops_unref (compiled_kept[i]);
            compiled_kept[i] = NULL;
          }
      g_mutex_unlock (&compiled_lock);
      _airy_ops_unref (old);
    }
  return list;
}

static AiryOp *
tail_op_new (AiryOpKind kind, guint n_lambda, guint height, guint width)
{
  AiryOp *op = g_new0 (AiryOp, 1);

  op->ref = 1;
  op->kind = kind;
  op->n_lambda = n_lambda;
  op->height = height;
  op->width = width;
  return op;
}

/* CONVOLVE with its data: the sample (a file shared with the plan, by
 * reference) and the padded geometry. */
static AiryOp *
convolve_op_new (AiryPlan *plan)
{
  AiryOp *op = tail_op_new (AIRY_OP_CONVOLVE, 1, plan->vol_height, plan->vol_width);
  AiryConvolveOp *c = g_new0 (AiryConvolveOp, 1);

  op->convolve = c;
  c->kind = plan->sample.kind;
  c->value = plan->sample.value;
  c->count = plan->sample.count;
  c->seed = plan->sample.seed;
  c->intensity = plan->sample.intensity;
  c->n_planes = plan->n_planes;
  if (plan->volume != NULL)
    {
      if (plan->volume_box == NULL)
        {
          plan->volume_box = g_atomic_rc_box_new (AiryStack *);
          *plan->volume_box = plan->volume;
        }
      c->volume = g_atomic_rc_box_acquire (plan->volume_box);
      c->volume_first = plan->volume_first;
    }
  c->key = g_strdup (plan->volume_key);
  c->stream = _airy_volume_stream_ref (plan->volume_stream);
  if (plan->volume_stream)
    c->volume_first = plan->volume_first;
  c->psf_height = plan->psf_height;
  c->psf_width = plan->psf_width;
  c->vol_height = plan->vol_height;
  c->vol_width = plan->vol_width;
  c->pad_height = plan->pad_height;
  c->pad_width = plan->pad_width;
  return op;
}

/* The sensor lowered by its own compile() (airy-sensor.c) on the
 * geometry of what it records: the image after CONVOLVE (the sample's
 * grid) or each plane's intensity, or their SUM. */
static gboolean
sensor_lower (AiryPlan *plan, GError **error)
{
  AiryElement *e = plan->sensor;
  double dy = plan->imaging ? plan->vol_spacing : plan->psf_dy;
  double dx = plan->imaging ? plan->vol_spacing : plan->psf_dx;
  AiryField geometry = {
    .n_lambda = 1,
    .height = plan->imaging ? plan->vol_height : plan->psf_height,
    .width = plan->imaging ? plan->vol_width : plan->psf_width,
    .dy = &dy, .dx = &dx,
  };

  if (!AIRY_ELEMENT_GET_CLASS (e)->compile (e, NULL, &geometry, plan->ops, error))
    return FALSE;
  if (geometry.height != plan->out_height || geometry.width != plan->out_width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("the sensor's operation ends on %u × %u, the plan on %u × %u"),
                   geometry.height, geometry.width, plan->out_height, plan->out_width);
      return FALSE;
    }
  return TRUE;
}

gboolean
_airy_plan_compile (AiryPlan *plan,
                    GError  **error)
{
  guint i;

  g_return_val_if_fail (plan->ops == NULL, FALSE);

  plan->optics_hash = _airy_plan_optics_hash (plan);
  plan->compiled = field_stage (plan, error);
  if (plan->compiled == NULL)
    return FALSE;
  plan->ops = g_ptr_array_new_with_free_func ((GDestroyNotify) _airy_op_unref);
  for (i = 0; i < plan->compiled->ops->len; i++)
    g_ptr_array_add (plan->ops, _airy_op_ref (g_ptr_array_index (plan->compiled->ops, i)));

  /* what each plane's intensity becomes */
  if (plan->imaging)
    g_ptr_array_add (plan->ops, convolve_op_new (plan));
  else if (plan->reduce)
    {
      AiryOp *op = tail_op_new (AIRY_OP_SUM, 1, plan->psf_height, plan->psf_width);

      op->reduce = g_new0 (AiryReduceOp, 1);
      op->reduce->axis = AIRY_REDUCE_AXIS_PLANES;
      op->reduce->n_planes = plan->n_planes;
      g_ptr_array_add (plan->ops, op);
    }
  if (plan->sensor && !sensor_lower (plan, error))
    {
      g_clear_pointer (&plan->ops, g_ptr_array_unref);
      return FALSE;
    }
  return TRUE;
}

char *
_airy_plan_describe (AiryPlan *plan)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; plan->ops && i < plan->ops->len; i++)
    g_string_append_printf (s, "%s%s", i ? " " : "",
                            _airy_op_kind_name (((AiryOp *) g_ptr_array_index (plan->ops, i))->kind));
  return g_string_free (s, FALSE);
}
