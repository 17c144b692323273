#define G_LOG_DOMAIN "airy-optimize"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>

#include <math.h>
#include <string.h>

#include "airy-error.h"
#include "airy-image-file.h"
#include "airy-json-private.h"
#include "airy-optimize-private.h"

/* The optimizer (airy-optimize-private.h). The unknowns x are the number
 * variables' values and the pixel variables' phases in rad; a point is
 * the system file with those values written in (a pixel variable's phase
 * as a float TIFF in tmpdir, its phase range its minimum and maximum, so
 * that the mask's normalisation gives the phase back). */

#define LBFGS_MEMORY 8
#define LINE_SEARCH_TRIES 20

static JsonObject *
element_object (JsonNode *root, guint element)
{
  JsonArray *elements = json_object_get_array_member (json_node_get_object (root), "elements");

  return json_array_get_object_element (elements, element);
}

static JsonNode *
deep_copy (JsonNode *root)
{
  /* json_node_copy shares the objects and arrays */
  g_autofree char *text = json_to_string (root, FALSE);

  return json_from_string (text, NULL);
}

/* a bound a little inside the parameter's range, so that the symmetric
 * step of the tangent stays in it */
static double
inner (double bound, double sign)
{
  return isfinite (bound) ? bound + sign * 1e-6 * MAX (1.0, fabs (bound)) : bound;
}

/* A pixel variable's start: the phase its image and range give. */
static gboolean
pixels_start (AiryOptimizer *o, guint v, AiryGradVar *var, double **start, GError **error)
{
  JsonObject *e = element_object (o->root, var->element);
  const char *type = json_object_get_string_member_with_default (e, "type", "");
  const char *file = json_object_get_string_member_with_default (e, "file", "");
  double pmin = json_object_get_double_member_with_default (e, "phase-min", 0.0);
  double pmax = json_object_get_double_member_with_default (e, "phase-max", 2.0 * G_PI);
  g_autofree char *path = NULL;
  g_autoptr(AiryStack) image = NULL;
  float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
  gsize np, i;

  if (!g_str_equal (type, "phase-mask"))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--vary %s: only a phase mask's pixels can be optimized (an amplitude mask's image is "
                     "normalised to [0, 1])"), var->path);
      return FALSE;
    }
  path = g_path_is_absolute (file) || o->base_dir == NULL ? g_strdup (file) : g_build_filename (o->base_dir, file, NULL);
  if ((image = airy_image_read (path, error)) == NULL)
    return FALSE;
  o->height[v] = image->height;
  o->width[v] = image->width;
  np = airy_stack_plane_size (image);
  for (i = 0; i < np; i++)
    {
      lo = MIN (lo, image->data[i]);
      hi = MAX (hi, image->data[i]);
    }
  *start = g_new (double, np);
  for (i = 0; i < np; i++)
    (*start)[i] = pmin + (hi > lo ? (image->data[i] - (double) lo) / ((double) hi - lo) : 0.0) * (pmax - pmin);
  return TRUE;
}

static void
project (const AiryOptimizer *o, double *x)
{
  gsize i;

  for (i = 0; i < o->n; i++)
    x[i] = CLAMP (x[i], o->lo[i], o->hi[i]);
}

AiryOptimizer *
_airy_optimizer_new (JsonNode *root, const char *base_dir, const AiryLoss *loss, GPtrArray *vars, guint threads,
                     GError **error)
{
  g_autoptr(AiryOptimizer) o = g_new0 (AiryOptimizer, 1);
  g_autoptr(GPtrArray) starts = g_ptr_array_new_with_free_func (g_free);
  guint v;
  gsize i;

  o->root = deep_copy (root);
  o->base_dir = g_strdup (base_dir);
  o->loss = loss;
  o->vars = g_ptr_array_ref (vars);
  o->threads = MAX (threads, 1);
  o->offset = g_new0 (gsize, vars->len);
  o->height = g_new0 (guint, vars->len);
  o->width = g_new0 (guint, vars->len);
  o->curve = g_array_new (FALSE, FALSE, sizeof (double));
  for (v = 0; v < vars->len; v++)
    {
      AiryGradVar *var = g_ptr_array_index (vars, v);
      double *start = NULL;

      o->offset[v] = o->n;
      if (var->pixels && !pixels_start (o, v, var, &start, error))
        return NULL;
      g_ptr_array_add (starts, start);
      o->n += var->pixels ? (gsize) o->height[v] * o->width[v] : 1;
    }
  o->x = g_new (double, o->n);
  o->lo = g_new (double, o->n);
  o->hi = g_new (double, o->n);
  for (v = 0; v < vars->len; v++)
    {
      AiryGradVar *var = g_ptr_array_index (vars, v);
      gsize count = var->pixels ? (gsize) o->height[v] * o->width[v] : 1;
      const double *start = g_ptr_array_index (starts, v);

      for (i = 0; i < count; i++)
        {
          o->x[o->offset[v] + i] = start ? start[i] : var->value;
          o->lo[o->offset[v] + i] = inner (var->lo, 1.0);
          o->hi[o->offset[v] + i] = inner (var->hi, -1.0);
        }
    }
  project (o, o->x);
  o->best_x = g_memdup2 (o->x, o->n * sizeof (double));
  o->best_loss = o->first_loss = INFINITY;
  o->tmpdir = g_dir_make_tmp ("airy-optimize-XXXXXX", error);
  if (o->tmpdir == NULL)
    return NULL;
  return g_steal_pointer (&o);
}

void
_airy_optimizer_free (AiryOptimizer *o)
{
  guint v;

  if (o == NULL)
    return;
  if (o->tmpdir)
    {
      for (v = 0; v < o->vars->len; v++)
        {
          g_autofree char *name = g_strdup_printf ("pixels-%u.tif", v);
          g_autofree char *path = g_build_filename (o->tmpdir, name, NULL);

          g_unlink (path);
        }
      g_rmdir (o->tmpdir);
      g_free (o->tmpdir);
    }
  g_clear_pointer (&o->root, json_node_unref);
  g_clear_pointer (&o->vars, g_ptr_array_unref);
  g_clear_pointer (&o->curve, g_array_unref);
  g_free (o->base_dir);
  g_free (o->offset);
  g_free (o->height);
  g_free (o->width);
  g_free (o->x);
  g_free (o->lo);
  g_free (o->hi);
  g_free (o->best_x);
  g_free (o);
}

static AiryStack *
pixels_of (const AiryOptimizer *o, const double *x, guint v)
{
  AiryStack *s = airy_stack_new (1, o->height[v], o->width[v]);
  gsize i, np = airy_stack_plane_size (s);

  for (i = 0; i < np; i++)
    s->data[i] = (float) x[o->offset[v] + i];
  return s;
}

/* The system file at x; a pixel variable's element reads files[v]. */
static JsonNode *
point_json (const AiryOptimizer *o, const double *x, const char *const *files)
{
  JsonNode *copy = deep_copy (o->root);
  guint v;

  for (v = 0; v < o->vars->len; v++)
    {
      const AiryGradVar *var = g_ptr_array_index (o->vars, v);

      if (var->pixels)
        {
          JsonObject *e = element_object (copy, var->element);
          gsize np = (gsize) o->height[v] * o->width[v], i;
          double lo = INFINITY, hi = -INFINITY;

          for (i = 0; i < np; i++)
            {
              /* the range of the float image the file holds */
              lo = MIN (lo, (float) x[o->offset[v] + i]);
              hi = MAX (hi, (float) x[o->offset[v] + i]);
            }
          json_object_set_string_member (e, "file", files[v]);
          json_object_set_double_member (e, "phase-min", lo);
          json_object_set_double_member (e, "phase-max", hi > lo ? hi : lo + 1.0);
        }
      else
        {
          JsonNode *node = _airy_json_find_number (copy, var->path);

          if (node)
            json_node_set_double (node, x[o->offset[v]]);
        }
    }
  return copy;
}

/* The loss f and its gradient g at x (projected). */
static gboolean
evaluate (AiryOptimizer *o, const double *x, double *f, double *g, GError **error)
{
  g_auto(GStrv) files = g_new0 (char *, o->vars->len + 1);
  g_autoptr(JsonNode) point = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autofree char *json = NULL;
  AiryGradOptions options = { AIRY_GRAD_AUTO, 0, o->threads };
  guint v;

  for (v = 0; v < o->vars->len; v++)
    {
      AiryGradVar *var = g_ptr_array_index (o->vars, v);
      g_autofree char *name = g_strdup_printf ("pixels-%u.tif", v);

      files[v] = g_build_filename (o->tmpdir, name, NULL);
      if (var->pixels)
        {
          g_autoptr(AiryStack) s = pixels_of (o, x, v);

          if (!airy_tiff_write (files[v], s, error))
            return FALSE;
        }
      else
        {
          double value = x[o->offset[v]];

          var->value = value;
          var->step = MIN (1e-3 * MAX (fabs (value), 1.0), 0.5 * MIN (value - var->lo, var->hi - value));
        }
      g_clear_pointer (&var->grad_pixels, airy_stack_free);
    }
  point = point_json (o, x, (const char *const *) files);
  json = json_to_string (point, FALSE);
  o->evaluations++;
  if ((system = airy_system_new_from_data (json, -1, o->base_dir, NULL, error)) == NULL
      || !_airy_grad_compute (system, point, o->base_dir, o->loss, o->vars, &options, f, NULL, error))
    return FALSE;
  for (v = 0; v < o->vars->len; v++)
    {
      const AiryGradVar *var = g_ptr_array_index (o->vars, v);

      if (!var->pixels)
        g[o->offset[v]] = var->grad;
      else if (var->grad_pixels->height != o->height[v] || var->grad_pixels->width != o->width[v])
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("--vary %s: the mask's image is %u × %u, the field %u × %u: give an image of the field's "
                         "shape to optimize its pixels"), var->path, o->height[v], o->width[v],
                       var->grad_pixels->height, var->grad_pixels->width);
          return FALSE;
        }
      else
        {
          gsize i, np = (gsize) o->height[v] * o->width[v];

          for (i = 0; i < np; i++)
            g[o->offset[v] + i] = var->grad_pixels->data[i];
        }
    }
  return TRUE;
}

/* the gradient's norm without the components that push against a bound */
static double
projected_norm (const AiryOptimizer *o, const double *x, const double *g)
{
  double s = 0.0;
  gsize i;

  for (i = 0; i < o->n; i++)
    if (!((x[i] <= o->lo[i] && g[i] > 0) || (x[i] >= o->hi[i] && g[i] < 0)))
      s += g[i] * g[i];
  return sqrt (s);
}

typedef struct
{
  AiryOptimizer       *o;
  AiryOptimizeStepFunc on_step;
  gpointer             user_data;
  gint64               t0;
  guint                step;
} Run;

static void
note_point (Run *r, const double *x, double f)
{
  if (f < r->o->best_loss)
    {
      r->o->best_loss = f;
      r->o->best_step = r->step;
      memcpy (r->o->best_x, x, r->o->n * sizeof (double));
    }
}

/* The step's report; FALSE: stop. */
static gboolean
end_step (Run *r, const double *x, double f, const double *g)
{
  AiryOptimizer *o = r->o;
  AiryOptimizeStep s;

  g_array_append_val (o->curve, f);
  o->steps_done = r->step;
  o->last_grad_norm = projected_norm (o, x, g);
  o->elapsed_s = (g_get_monotonic_time () - r->t0) / 1e6;
  s = (AiryOptimizeStep){ r->step, o->evaluations, f, o->best_loss, o->best_step, o->last_grad_norm, o->elapsed_s };
  if (r->on_step && !r->on_step (o, &s, r->user_data))
    return FALSE;
  return !(o->stop && *o->stop);
}

/* Evaluates at trial (projected); where that fails (the system refuses
 * the point, or its loss is not a number) trial moves halfway back to x,
 * up to LINE_SEARCH_TRIES times. */
static gboolean
evaluate_toward (Run *r, const double *x, double *trial, double *f, double *g, GError **error)
{
  AiryOptimizer *o = r->o;
  g_autoptr(GError) last = NULL;
  guint t;
  gsize i;

  project (o, trial);
  for (t = 0; t < LINE_SEARCH_TRIES; t++)
    {
      g_clear_error (&last);
      if (evaluate (o, trial, f, g, &last))
        {
          note_point (r, trial, *f);
          return TRUE;
        }
      for (i = 0; i < o->n; i++)
        trial[i] = 0.5 * (trial[i] + x[i]);
    }
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("step %u: %s"), r->step, last->message);
  return FALSE;
}

static AiryOptimizeEnd
run_adam (Run *r, guint steps, double lr, double *x, double f, double *g, GError **error)
{
  AiryOptimizer *o = r->o;
  const double b1 = 0.9, b2 = 0.999;
  g_autofree double *m = g_new0 (double, o->n), *v = g_new0 (double, o->n), *trial = g_new (double, o->n);
  gsize i;

  for (r->step = 1; r->step <= steps; r->step++)
    {
      double c1 = 1.0 - pow (b1, r->step), c2 = 1.0 - pow (b2, r->step), vmax = 0.0;

      for (i = 0; i < o->n; i++)
        {
          m[i] = b1 * m[i] + (1.0 - b1) * g[i];
          v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
          vmax = MAX (vmax, sqrt (v[i] / c2));
        }
      /* ε relative to the gradients' scale: a loss of tiny intensities
       * has tiny gradients, and Adam's step should not depend on that */
      for (i = 0; i < o->n; i++)
        trial[i] = x[i] - lr * (m[i] / c1) / (sqrt (v[i] / c2) + 1e-8 * vmax + 1e-300);
      if (!evaluate_toward (r, x, trial, &f, g, error))
        return AIRY_OPTIMIZE_FAILED;
      memcpy (x, trial, o->n * sizeof (double));
      if (!end_step (r, x, f, g))
        return r->step == steps ? AIRY_OPTIMIZE_STEPS : AIRY_OPTIMIZE_STOPPED;
    }
  return AIRY_OPTIMIZE_STEPS;
}

static double
dot (const double *a, const double *b, gsize n)
{
  double s = 0.0;
  gsize i;

  for (i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

typedef struct
{
  double *s[LBFGS_MEMORY], *y[LBFGS_MEMORY], rho[LBFGS_MEMORY];
  guint   len, next;
} Memory;

/* d = −H·g over the free unknowns (two-loop recursion); first: the
 * steepest descent scaled so that its largest component is lr */
static void
lbfgs_direction (const AiryOptimizer *o, const Memory *mem, const double *x, const double *g, double lr, double *d)
{
  g_autofree double *alpha = g_new (double, LBFGS_MEMORY);
  g_autofree gboolean *fixed = g_new (gboolean, o->n);
  double gamma, gmax = 0.0;
  guint j, k;
  gsize i;

  for (i = 0; i < o->n; i++)
    {
      fixed[i] = (x[i] <= o->lo[i] && g[i] > 0) || (x[i] >= o->hi[i] && g[i] < 0);
      d[i] = fixed[i] ? 0.0 : -g[i];
      gmax = MAX (gmax, fabs (d[i]));
    }
  if (mem->len == 0)
    {
      for (i = 0; gmax > 0 && i < o->n; i++)
        d[i] *= lr / gmax;
      return;
    }
  for (k = 0; k < mem->len; k++)
    {
      j = (mem->next + LBFGS_MEMORY - 1 - k) % LBFGS_MEMORY;
      alpha[j] = mem->rho[j] * dot (mem->s[j], d, o->n);
      for (i = 0; i < o->n; i++)
        d[i] -= alpha[j] * mem->y[j][i];
    }
  j = (mem->next + LBFGS_MEMORY - 1) % LBFGS_MEMORY;
  gamma = 1.0 / (mem->rho[j] * dot (mem->y[j], mem->y[j], o->n));
  for (i = 0; i < o->n; i++)
    d[i] *= gamma;
  for (k = mem->len; k-- > 0;)
    {
      double beta;

      j = (mem->next + LBFGS_MEMORY - 1 - k) % LBFGS_MEMORY;
      beta = mem->rho[j] * dot (mem->y[j], d, o->n);
      for (i = 0; i < o->n; i++)
        d[i] += (alpha[j] - beta) * mem->s[j][i];
    }
  for (i = 0; i < o->n; i++)
    if (fixed[i])
      d[i] = 0.0;
}

static void
memory_clear (Memory *mem)
{
  guint j;

  for (j = 0; j < LBFGS_MEMORY; j++)
    {
      g_clear_pointer (&mem->s[j], g_free);
      g_clear_pointer (&mem->y[j], g_free);
    }
  mem->len = mem->next = 0;
}

static void
memory_add (Memory *mem, const double *x, const double *xn, const double *g, const double *gn, gsize n)
{
  g_autofree double *s = g_new (double, n), *y = g_new (double, n);
  double sy;
  gsize i;

  for (i = 0; i < n; i++)
    {
      s[i] = xn[i] - x[i];
      y[i] = gn[i] - g[i];
    }
  sy = dot (s, y, n);
  /* only a pair of positive curvature keeps H positive definite */
  if (!(sy > 1e-12 * sqrt (dot (s, s, n) * dot (y, y, n))))
    return;
  g_free (mem->s[mem->next]);
  g_free (mem->y[mem->next]);
  mem->s[mem->next] = g_steal_pointer (&s);
  mem->y[mem->next] = g_steal_pointer (&y);
  mem->rho[mem->next] = 1.0 / sy;
  mem->next = (mem->next + 1) % LBFGS_MEMORY;
  mem->len = MIN (mem->len + 1, LBFGS_MEMORY);
}

/* A backtracking (Armijo) search along the projected path P(x + t·d):
 * TRUE with xn, fn, gn where the loss drops enough; FALSE without one. */
static gboolean
line_search (Run *r, const double *x, double f, const double *g, const double *d, double *xn, double *fn,
             double *gn, GError **error)
{
  AiryOptimizer *o = r->o;
  g_autoptr(GError) refused = NULL;
  gboolean evaluated = FALSE;
  double t = 1.0;
  guint tries;
  gsize i;

  for (tries = 0; tries < LINE_SEARCH_TRIES; tries++, t *= 0.5)
    {
      g_autoptr(GError) local = NULL;
      double decrease = 0.0;
      gboolean moved = FALSE;

      if (o->stop && *o->stop)
        return FALSE;
      for (i = 0; i < o->n; i++)
        xn[i] = x[i] + t * d[i];
      project (o, xn);
      for (i = 0; i < o->n; i++)
        {
          decrease += g[i] * (xn[i] - x[i]);
          moved |= xn[i] != x[i];
        }
      if (!moved)
        break;
      if (!evaluate (o, xn, fn, gn, &local))
        {
          /* a point the system refuses: a shorter step */
          g_clear_error (&refused);
          refused = g_steal_pointer (&local);
          continue;
        }
      evaluated = TRUE;
      note_point (r, xn, *fn);
      if (*fn <= f + 1e-4 * decrease)
        return TRUE;
    }
  /* no point of the path could be computed: that is a failure, not convergence */
  if (!evaluated && refused)
    g_propagate_prefixed_error (error, g_steal_pointer (&refused), _("step %u: "), r->step);
  return FALSE;
}

static AiryOptimizeEnd
run_lbfgs (Run *r, guint steps, double lr, double *x, double f, double *g, GError **error)
{
  AiryOptimizer *o = r->o;
  g_autofree double *d = g_new (double, o->n), *xn = g_new (double, o->n), *gn = g_new (double, o->n);
  Memory mem = { 0 };
  AiryOptimizeEnd end = AIRY_OPTIMIZE_STEPS;
  g_autoptr(GError) local = NULL;
  guint small = 0;
  double fn;

  for (r->step = 1; r->step <= steps; r->step++)
    {
      if (projected_norm (o, x, g) == 0.0)
        {
          end = AIRY_OPTIMIZE_CONVERGED;
          break;
        }
      lbfgs_direction (o, &mem, x, g, lr, d);
      if (dot (d, g, o->n) >= 0.0)
        {
          memory_clear (&mem);
          lbfgs_direction (o, &mem, x, g, lr, d);
        }
      if (!line_search (r, x, f, g, d, xn, &fn, gn, &local))
        {
          if (local)
            {
              g_propagate_error (error, g_steal_pointer (&local));
              end = AIRY_OPTIMIZE_FAILED;
              break;
            }
          if (o->stop && *o->stop)
            {
              end = AIRY_OPTIMIZE_STOPPED;
              break;
            }
          if (mem.len == 0)
            {
              end = AIRY_OPTIMIZE_CONVERGED;
              break;
            }
          /* the quasi-Newton direction failed: start again from steepest descent */
          memory_clear (&mem);
          r->step--;
          continue;
        }
      memory_add (&mem, x, xn, g, gn, o->n);
      memcpy (x, xn, o->n * sizeof (double));
      memcpy (g, gn, o->n * sizeof (double));
      /* a step that lowers the loss by less than float forwards resolve:
       * further line searches only spend evaluations */
      small = f - fn <= 1e-9 * fabs (f) ? small + 1 : 0;
      f = fn;
      if (!end_step (r, x, f, g))
        {
          end = r->step == steps ? AIRY_OPTIMIZE_STEPS : AIRY_OPTIMIZE_STOPPED;
          break;
        }
      if (small == 2)
        {
          end = AIRY_OPTIMIZE_CONVERGED;
          break;
        }
    }
  memory_clear (&mem);
  return end;
}

AiryOptimizeEnd
_airy_optimizer_run (AiryOptimizer *o, AiryOptimizerKind kind, guint steps, double lr, AiryOptimizeStepFunc on_step,
                     gpointer user_data, GError **error)
{
  Run r = { o, on_step, user_data, g_get_monotonic_time (), 0 };
  g_autofree double *x = g_memdup2 (o->x, o->n * sizeof (double));
  g_autofree double *g = g_new0 (double, o->n);
  AiryOptimizeEnd end;
  double f;

  if (!evaluate (o, x, &f, g, error))
    return AIRY_OPTIMIZE_FAILED;
  o->first_loss = f;
  note_point (&r, x, f);
  if (!end_step (&r, x, f, g))
    return AIRY_OPTIMIZE_STOPPED;
  end = kind == AIRY_OPTIMIZER_ADAM ? run_adam (&r, steps, lr, x, f, g, error)
                                     : run_lbfgs (&r, steps, lr, x, f, g, error);
  o->elapsed_s = (g_get_monotonic_time () - r.t0) / 1e6;
  return end;
}

double
_airy_optimizer_best_value (AiryOptimizer *o, guint var)
{
  return o->best_x[o->offset[var]];
}

AiryStack *
_airy_optimizer_best_pixels (AiryOptimizer *o, guint var)
{
  return pixels_of (o, o->best_x, var);
}

JsonNode *
_airy_optimizer_best_json (AiryOptimizer *o, const char *const *pixel_files)
{
  return point_json (o, o->best_x, pixel_files);
}
