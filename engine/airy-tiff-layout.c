/* TIFF stacks: which planes of a file form the z stack asked for, and
 * where they are — ImageJ descriptions (hyperstack axes, units, spacing,
 * origins, the single-IFD layout beyond 4 GB), OME-XML (sizes, units,
 * dimension order, TiffData, Plane positions) and plain multi-page files —
 * with the voxel size and exact z. */
#define G_LOG_DOMAIN "airy-tiff"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <glib/gstdio.h>

#include "airy-stack.h"
#include "airy-error.h"
#include "airy-run.h"
#include "airy-tiff-private.h"

/* ---- descriptions ---- */

static gboolean
desc_value (const char *desc, const char *key, char **value)
{
  g_auto(GStrv) lines = NULL;
  gsize key_len = strlen (key);
  guint i;

  if (desc == NULL)
    return FALSE;
  lines = g_strsplit (desc, "\n", -1);
  for (i = 0; lines[i]; i++)
    if (strncmp (lines[i], key, key_len) == 0 && lines[i][key_len] == '=')
      {
        *value = g_strstrip (g_strdup (lines[i] + key_len + 1));
        return TRUE;
      }
  return FALSE;
}

static double
desc_double (const char *desc, const char *key, double fallback)
{
  g_autofree char *v = NULL;
  char *end;
  double x;

  if (!desc_value (desc, key, &v))
    return fallback;
  x = g_ascii_strtod (v, &end);
  return end != v && isfinite (x) ? x : fallback;
}

static gboolean
desc_count (Reader *r, const char *desc, const char *key, guint *out, GError **error)
{
  g_autofree char *v = NULL;
  guint64 n;

  *out = 1;
  if (!desc_value (desc, key, &v))
    return TRUE;
  if (!g_ascii_string_to_unsigned (v, 10, 1, G_MAXINT32, &n, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: ImageJ description: %s=%s must be a count in [1, %d]"), r->name, key, v, G_MAXINT32);
      return FALSE;
    }
  *out = (guint) n;
  return TRUE;
}


void
_airy_tiff_layout_clear (Layout *l)
{
  g_clear_pointer (&l->z, g_free);
  g_clear_pointer (&l->wavelengths, g_free);
  g_clear_pointer (&l->channel_names, g_strfreev);
  g_clear_pointer (&l->ifd, g_free);
}

/* The channels' wavelengths a file claims (µm), checked: one per channel or
 * none; a value that is not a finite positive length becomes 0 (not
 * known). NULL when none is known. They only name channels, so a bad
 * value is dropped, never an error. */
static double *
channel_wavelengths (const double *claimed, gsize n_claimed, guint n_channels)
{
  g_autofree double *wl = NULL;
  gboolean known = FALSE;
  guint c;

  if (claimed == NULL || n_channels == 0 || n_claimed != n_channels)
    return NULL;
  wl = g_new0 (double, n_channels);
  for (c = 0; c < n_channels; c++)
    if (isfinite (claimed[c]) && claimed[c] > 0)
      {
        wl[c] = claimed[c];
        known = TRUE;
      }
  return known ? g_steal_pointer (&wl) : NULL;
}

static gboolean
pick_axis (Reader *r, const char *what, const char *axes, int wanted, guint n, guint *out,
           GError **error)
{
  if (n <= 1)
    {
      *out = 0;
      if (wanted > 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: %s %d asked for, but the file has one (%s)"), r->name, what, wanted, axes);
          return FALSE;
        }
      return TRUE;
    }
  if (wanted < 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: %s; Airy reads one z stack: choose a channel and a frame (0-based: \"channel\" "
                     "and \"frame\" of the sample, or the viewer's choice), a %s in [0, %u]"),
                   r->name, axes, what, n - 1);
      return FALSE;
    }
  if ((guint) wanted >= n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: %s %d does not exist; %s: must be in [0, %u]"), r->name, what, wanted, axes, n - 1);
      return FALSE;
    }
  *out = (guint) wanted;
  return TRUE;
}

/* What the first IFD says beyond its page: description, resolution (read
 * exactly), Airy's z tag. */
typedef struct
{
  Page     first;
  char    *desc;
  double   xres, yres;
  guint16  resunit;
  double  *z_tag;
  guint32  z_count;
  double  *wl_tag;
  guint32  wl_count;
  char   **labels;   /* the first slice labels' channel names, or NULL */
} Head;

static void
head_clear (Head *h)
{
  g_clear_pointer (&h->desc, g_free);
  g_clear_pointer (&h->z_tag, g_free);
  g_clear_pointer (&h->wl_tag, g_free);
  g_clear_pointer (&h->labels, g_strfreev);
}

static gboolean
head_read (Reader *r, Head *h, GError **error)
{
  char *desc = NULL;
  float xres = 0, yres = 0;
  double *z_tag = NULL, *wl_tag = NULL;

  memset (h, 0, sizeof *h);
  h->resunit = RESUNIT_INCH;
  _airy_tiff_page_read (r->tif, &h->first);
  if (!_airy_tiff_page_check (r, &h->first, 0, NULL, error))
    return FALSE;
  /* tag values belong to the current directory: copy them now */
  if (TIFFGetField (r->tif, TIFFTAG_IMAGEDESCRIPTION, &desc) == 1 && desc != NULL)
    h->desc = g_strdup (desc);
  TIFFGetField (r->tif, TIFFTAG_XRESOLUTION, &xres);
  TIFFGetField (r->tif, TIFFTAG_YRESOLUTION, &yres);
  h->xres = xres;
  h->yres = yres;
  if (xres > 0 && !_airy_tiff_read_rational (r, h->first.offset, TIFFTAG_XRESOLUTION, &h->xres))
    h->xres = xres;
  if (yres > 0 && !_airy_tiff_read_rational (r, h->first.offset, TIFFTAG_YRESOLUTION, &h->yres))
    h->yres = yres;
  TIFFGetFieldDefaulted (r->tif, TIFFTAG_RESOLUTIONUNIT, &h->resunit);
  if (TIFFGetField (r->tif, TAG_AIRY_Z, &h->z_count, &z_tag) == 1 && z_tag != NULL && h->z_count > 0)
    h->z_tag = g_memdup2 (z_tag, (gsize) h->z_count * sizeof (double));
  else
    h->z_count = 0;
  if (TIFFGetField (r->tif, TAG_AIRY_WAVELENGTHS, &h->wl_count, &wl_tag) == 1 && wl_tag != NULL && h->wl_count > 0)
    h->wl_tag = g_memdup2 (wl_tag, (gsize) h->wl_count * sizeof (double));
  else
    h->wl_count = 0;
  /* the first labels, for the channels' names (a hyperstack's channel
   * count is known only later) */
  h->labels = _airy_tiff_imagej_channel_names (r->tif, 256);
  return TRUE;
}

static gboolean
too_many_planes (Reader *r, const AiryReadOptions *o, guint Z, GError **error)
{
  if (o->max_planes && Z > o->max_planes)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: has %u z planes, more than the %u expected"), r->name, Z, o->max_planes);
      return TRUE;
    }
  return FALSE;
}

/* OME-TIFF: the planes the XML maps to IFDs, its physical sizes and the
 * chosen planes' PositionZ. */
static gboolean
layout_ome (Reader *r, const AiryReadOptions *o, const Head *h, Layout *l, GError **error)
{
  g_autoptr(GArray) pages = g_array_new (FALSE, FALSE, sizeof (Page));
  g_autofree char *axes = NULL;
  g_autofree gint64 *index = NULL;
  g_autofree double *zz = NULL;
  AiryOmeInfo om = { 0 };
  guint Z, zi, found = 0, i, limit = 0;
  gboolean more, ok = FALSE;

  if (!_airy_ome_parse (h->desc, r->name, &om, error))
    goto out;
  if (om.other_files)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: a multi-file OME-TIFF set (its planes are in other files); Airy reads "
                     "single-file OME-TIFF"), r->name);
      goto out;
    }
  if (om.size_x != h->first.width || om.size_y != h->first.height)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: OME-XML says %u × %u pixels, the first page is %u × %u"),
                   r->name, om.size_x, om.size_y, h->first.width, h->first.height);
      goto out;
    }
  l->n_channels = om.size_c;
  l->n_frames = om.size_t;
  Z = om.size_z;
  axes = g_strdup_printf (_("an OME-TIFF image of channels × z planes × time points = %u × %u × %u"),
                          om.size_c, Z, om.size_t);
  if (!pick_axis (r, _("channel"), axes, o->channel, om.size_c, &l->channel, error)
      || !pick_axis (r, _("frame"), axes, o->frame, om.size_t, &l->frame, error)
      || too_many_planes (r, o, Z, error)
      || !_airy_tiff_budget_check (r, o, o->n_planes ? MIN (o->n_planes, Z) : Z, h->first.height, h->first.width,
                                   error))
    goto out;
  /* the IFDs the chosen planes live in, then the chain up to the last */
  l->depth = Z;
  l->ifd = g_new0 (guint64, Z);
  index = g_new (gint64, Z);
  for (zi = 0; zi < Z; zi++)
    {
      index[zi] = _airy_ome_ifd_of (&om, zi, l->channel, l->frame);
      if (index[zi] < 0 || index[zi] >= G_MAXINT32)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: OME-XML maps no IFD to plane z=%u c=%u t=%u"), r->name, zi, l->channel, l->frame);
          goto out;
        }
      limit = MAX (limit, (guint) index[zi] + 1);
    }
  if (!_airy_tiff_walk_pages (r, limit, FALSE, &h->first, pages, &more, error))
    goto out;
  for (zi = 0; zi < Z; zi++)
    {
      if ((guint) index[zi] >= pages->len)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: OME-XML puts plane z=%u in IFD %lld, but the file has %u"),
                       r->name, zi, (long long) index[zi], pages->len);
          goto out;
        }
      l->ifd[zi] = g_array_index (pages, Page, index[zi]).offset;
    }
  l->dx = om.physical_x;
  l->dy = om.physical_y;
  l->dz = om.physical_z;
  /* exact z: the chosen planes' PositionZ when all of them have one */
  zz = g_new (double, Z);
  for (zi = 0; zi < Z; zi++)
    zz[zi] = NAN;
  for (i = 0; i < om.planes->len; i++)
    {
      AiryOmePlane *p = &g_array_index (om.planes, AiryOmePlane, i);
      if (p->has_z && p->the_c == l->channel && p->the_t == l->frame && isnan (zz[p->the_z]))
        {
          zz[p->the_z] = p->position_z;
          found++;
        }
    }
  if (found == Z && Z > 0)
    l->z = g_steal_pointer (&zz);
  l->wavelengths = channel_wavelengths ((const double *) om.channel_wavelengths->data, om.channel_wavelengths->len,
                                        om.size_c);
  ok = TRUE;

out:
  _airy_ome_info_clear (&om);
  return ok;
}

/* ImageJ's hyperstack counts, and the channel and frame asked for. */
static gboolean
imagej_axes (Reader *r, const AiryReadOptions *o, const char *desc, Layout *l, guint *Z, GError **error)
{
  g_autofree char *axes = NULL;
  guint C, T, images;

  if (!desc_count (r, desc, "channels", &C, error) || !desc_count (r, desc, "slices", Z, error)
      || !desc_count (r, desc, "frames", &T, error) || !desc_count (r, desc, "images", &images, error))
    return FALSE;
  if ((guint64) C * *Z * T > G_MAXINT32)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: ImageJ description claims %u × %u × %u images"), r->name, C, *Z, T);
      return FALSE;
    }
  /* a plain stack written with images=N and no slices key */
  if (C * *Z * T == 1 && images > 1)
    *Z = images;
  l->n_channels = C;
  l->n_frames = T;
  axes = g_strdup_printf (_("an ImageJ hyperstack of channels × slices × frames = %u × %u × %u"), C, *Z, T);
  return pick_axis (r, _("channel"), axes, o->channel, C, &l->channel, error)
         && pick_axis (r, _("frame"), axes, o->frame, T, &l->frame, error);
}

/* ImageJ's single-IFD stack (what ImageJ writes beyond 4 GB, and
 * tifffile's "virtual" files): planes back to back from the first strip,
 * in ImageJ's order (channel fastest, then slice, frame). */
static gboolean
layout_contiguous (Reader *r, const Head *h, guint Z, Layout *l, GError **error)
{
  guint C = l->n_channels, T = l->n_frames, n = C * Z * T, k;
  guint64 off, plane_bytes = (guint64) h->first.width * h->first.height * (h->first.bits / 8);

  if (h->first.compression != COMPRESSION_NONE || TIFFNumberOfStrips (r->tif) < 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: the ImageJ description says %u images but the file has one compressed page"), r->name, n);
      return FALSE;
    }
  TIFFSetDirectory (r->tif, 0);
  off = TIFFGetStrileOffset (r->tif, 0);
  if (off == 0 || off > r->size || (guint64) n * plane_bytes > r->size - off)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: truncated: the ImageJ description says %u images of %u × %u (%llu bytes "
                     "from offset %llu), the file has %llu bytes"),
                   r->name, n, h->first.width, h->first.height, (unsigned long long) ((guint64) n * plane_bytes),
                   (unsigned long long) off, (unsigned long long) r->size);
      return FALSE;
    }
  l->contiguous = TRUE;
  l->contiguous_offset = off;
  for (k = 0; k < Z; k++)
    l->ifd[k] = off + (((guint64) l->frame * Z + k) * C + l->channel) * plane_bytes;
  return TRUE;
}

/* The voxel size: ImageJ's units, else the resolution unit. */
static void
voxel_size (const Head *h, gboolean imagej, Layout *l)
{
  if (imagej)
    {
      g_autofree char *unit = NULL, *yunit = NULL, *zunit = NULL;
      double sx = 0, sy, sz;

      if (!desc_value (h->desc, "unit", &unit) || !_airy_length_unit_to_um (unit, &sx))
        return;
      sy = sz = sx;
      if (desc_value (h->desc, "yunit", &yunit) && !_airy_length_unit_to_um (yunit, &sy))
        sy = 0;
      if (desc_value (h->desc, "zunit", &zunit) && !_airy_length_unit_to_um (zunit, &sz))
        sz = 0;
      if (h->xres > 0 && isfinite (h->xres))
        l->dx = sx / h->xres;
      if (h->yres > 0 && isfinite (h->yres))
        l->dy = sy / h->yres;
      l->dz = sz * desc_double (h->desc, "spacing", 0.0);
      l->z0 = -desc_double (h->desc, "zorigin", 0.0) * l->dz;
    }
  else if (h->xres > 0 && h->yres > 0 && isfinite (h->xres) && isfinite (h->yres)
           && (h->resunit == RESUNIT_CENTIMETER || h->resunit == RESUNIT_INCH))
    {
      /* 72 dpi from a drawing program is no microscope; only real units
       * count (ImageJ writes no unit and says micron in its description) */
      double scale = h->resunit == RESUNIT_CENTIMETER ? 1e4 : 25400.0;
      l->dx = scale / h->xres;
      l->dy = scale / h->yres;
    }
}

/* The planes of a plain file whose walk stopped at `walked` pages (the
 * next one read): its directories counted on, without their data, up to
 * the most a stack may have. What a budget refusal describes. */
static guint64
count_pages_on (Reader *r, guint walked, gboolean skip_reduced)
{
  guint64 n = (guint64) walked + 1;

  while (n < 1000000 && TIFFReadDirectory (r->tif))
    {
      Page p;

      _airy_tiff_page_read (r->tif, &p);
      n += !skip_reduced || !(p.subfile & FILETYPE_REDUCEDIMAGE);
    }
  return n;
}

/* ImageJ files and plain multi-page files: a page per image. */
static gboolean
layout_pages (Reader *r, const AiryReadOptions *o, const Head *h, gboolean imagej, Layout *l, GError **error)
{
  g_autoptr(GArray) pages = g_array_new (FALSE, FALSE, sizeof (Page));
  guint Z = 0, C, T, k, limit;
  gboolean more;

  l->n_channels = l->n_frames = 1;
  if (imagej && !imagej_axes (r, o, h->desc, l, &Z, error))
    return FALSE;
  if (!imagej && (o->channel > 0 || o->frame > 0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: a plain TIFF has no channels or frames to choose from"), r->name);
      return FALSE;
    }
  C = l->n_channels;
  T = l->n_frames;
  /* Z == 0: a plain file, as many planes as pages */
  if (too_many_planes (r, o, Z, error)
      || (Z > 0 && !_airy_tiff_budget_check (r, o, o->n_planes ? MIN (o->n_planes, Z) : Z, h->first.height,
                                             h->first.width, error)))
    return FALSE;
  if (Z > 0)
    limit = C * Z * T;
  else
    {
      /* plain files: pages up to what the budget and the caller allow */
      guint64 budget = o->budget ? o->budget : airy_memory_budget ();
      guint64 by_budget = budget / ((guint64) h->first.height * h->first.width * 4);
      limit = (guint) MIN ((guint64) (o->max_planes ? o->max_planes : 1000000), MAX (by_budget, 1));
    }
  if (!_airy_tiff_walk_pages (r, limit, !imagej, &h->first, pages, &more, error))
    return FALSE;
  if (Z == 0 && more)
    {
      /* stopped before the end: too many planes for the caller or the budget */
      if (o->max_planes && limit == o->max_planes)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("%s: has more than the %u pages (z planes) expected"), r->name, o->max_planes);
      else if (_airy_tiff_budget_check (r, o, count_pages_on (r, limit, !imagej), h->first.height, h->first.width,
                                        error))
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: more than %u pages"), r->name, limit);
      return FALSE;
    }
  if (Z == 0)
    Z = pages->len;
  if (Z == 0)
    {
      /* every page a reduced-resolution copy */
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: no full-resolution page"), r->name);
      return FALSE;
    }
  l->depth = Z;
  l->ifd = g_new0 (guint64, Z);
  if (pages->len == 1 && C * Z * T > 1)
    {
      if (!layout_contiguous (r, h, Z, l, error))
        return FALSE;
    }
  else if (pages->len < C * Z * T)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: the ImageJ description says %u images, the file has %u pages"),
                   r->name, C * Z * T, pages->len);
      return FALSE;
    }
  else
    for (k = 0; k < Z; k++)
      l->ifd[k] = g_array_index (pages, Page, ((gsize) l->frame * Z + k) * C + l->channel).offset;
  voxel_size (h, imagej, l);
  return TRUE;
}

gboolean
_airy_tiff_layout_find (Reader *r, const AiryReadOptions *o, Layout *l, GError **error)
{
  Head h;
  gboolean imagej, ome, ok;
  guint k;

  memset (l, 0, sizeof *l);
  if (!head_read (r, &h, error))
    {
      head_clear (&h);
      return FALSE;
    }
  l->height = h.first.height;
  l->width = h.first.width;
  l->bits = h.first.bits;
  l->format = h.first.format;
  imagej = h.desc && g_str_has_prefix (h.desc, "ImageJ=");
  ome = !imagej && h.desc && strstr (h.desc, "<OME") != NULL && g_str_has_suffix (g_strchomp (h.desc), "OME>");
  ok = ome ? layout_ome (r, o, &h, l, error) : layout_pages (r, o, &h, imagej, l, error);
  if (ok)
    {
      if (!(l->dx > 0 && isfinite (l->dx)) || !(l->dy > 0 && isfinite (l->dy)))
        l->dx = l->dy = 0;
      if (!isfinite (l->dz) || !isfinite (l->z0))
        l->dz = l->z0 = 0;
      /* Airy's own tag: the exact z of every plane (ImageJ-layout files
       * only: for a hyperstack it lists the slices) */
      if (h.z_count == l->depth && h.z_tag != NULL && l->z == NULL && l->n_channels * l->n_frames == 1)
        {
          gboolean finite = TRUE;
          for (k = 0; k < l->depth; k++)
            finite &= isfinite (h.z_tag[k]);
          if (finite)
            l->z = g_memdup2 (h.z_tag, l->depth * sizeof (double));
        }
      /* and its channels' wavelengths (ImageJ hyperstacks) */
      if (l->wavelengths == NULL && imagej && l->n_channels > 1)
        l->wavelengths = channel_wavelengths (h.wl_tag, h.wl_count, l->n_channels);
      /* and their names, from the slice labels Airy wrote (ImageJ hyperstacks) */
      if (imagej && l->n_channels > 1 && h.labels != NULL && g_strv_length (h.labels) >= l->n_channels)
        {
          gboolean named = FALSE;

          for (k = 0; k < l->n_channels; k++)
            named |= h.labels[k][0] != '\0';
          if (named)
            {
              l->channel_names = g_new0 (char *, l->n_channels + 1);
              for (k = 0; k < l->n_channels; k++)
                l->channel_names[k] = g_strdup (h.labels[k]);
            }
        }
    }
  head_clear (&h);
  return ok;
}
