/* OME-Zarr metadata: an input is a store's .zattrs, a NUL, level 0's
 * .zarray, a NUL and the bytes of its first chunk (a missing part: an
 * empty one). Each part alone goes through its parser, which either fails
 * with an error naming the file or returns values in range; then the three
 * as a store on disk go through the reader, which returns a stack that
 * matches the metadata or an error of Airy's. */
#include "fuzz-common.h"
#include "airy-zarr-private.h"

#include <glib/gstdio.h>

static char *store;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  g_autofree char *level = NULL;

  fuzz_init ();
  store = g_dir_make_tmp ("airy-fuzz-zarr-XXXXXX", NULL);
  level = g_build_filename (store, "0", NULL);
  if (store == NULL || g_mkdir (level, 0755) != 0)
    abort ();
  return 0;
}

static void
expect_error (const GError *error, const char *name)
{
  if (error == NULL || error->domain != AIRY_ERROR || !g_str_has_prefix (error->message, name))
    {
      g_printerr ("fuzz-zarr: a failure without Airy's error naming %s: %s\n", name,
                  error ? error->message : "(none)");
      abort ();
    }
}

static void
check_array (const char *text, gsize len)
{
  g_autoptr(GError) error = NULL;
  AiryZarrArray a;
  guint i;

  if (!_airy_zarr_parse_array (text, len, "fuzz/.zarray", &a, &error))
    {
      expect_error (error, "fuzz/.zarray");
      return;
    }
  if (a.ndim < 1 || a.ndim > AIRY_ZARR_MAX_DIMS || !strchr ("fui", a.kind) || !strchr ("./", a.separator)
      || (a.itemsize != 1 && a.itemsize != 2 && a.itemsize != 4 && a.itemsize != 8))
    abort ();
  for (i = 0; i < a.ndim; i++)
    if (a.shape[i] < 1 || a.chunks[i] < 1)
      abort ();
}

static void
check_group (const char *text, gsize len)
{
  g_autoptr(GError) error = NULL;
  AiryZarrGroup g;
  guint i;

  if (!_airy_zarr_parse_group (text, len, "fuzz/.zattrs", &g, &error))
    {
      expect_error (error, "fuzz/.zattrs");
      return;
    }
  if (g.ndim < 2 || g.ndim > AIRY_ZARR_MAX_DIMS || g.n_levels < 1 || g.axes[g.ndim - 1] != 'x')
    abort ();
  for (i = 0; i < g.n_levels * g.ndim; i++)
    if (!(g.scales[i] > 0) || !isfinite (g.scales[i]) || !isfinite (g.translations[i]))
      abort ();
  for (i = 0; i < g.n_levels; i++)
    if (g.paths[i] == NULL || g.paths[i][0] == '/' || strstr (g.paths[i], ".."))
      abort ();
  _airy_zarr_group_clear (&g);
}

static void
put (const char *rel, const char *data, gsize len)
{
  g_autofree char *path = g_build_filename (store, rel, NULL);

  if (len == 0)
    g_unlink (path);
  else if (!g_file_set_contents (path, data, len, NULL))
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *p = (const char *) data, *end = p + size;
  const char *zattrs = p, *zarray = "", *chunk = "";
  gsize la = size, lz = 0, lc = 0;
  const char *nul = memchr (p, '\0', size);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) stack = NULL;

  if (nul)
    {
      la = nul - p;
      zarray = nul + 1;
      nul = memchr (zarray, '\0', end - zarray);
      lz = (nul ? nul : end) - zarray;
      if (nul)
        {
          chunk = nul + 1;
          lc = end - chunk;
        }
    }
  check_group (zattrs, la);
  check_array (zarray, lz);
  /* the same parts as a store (a chunk under both separators' names) */
  put (".zattrs", zattrs, la);
  put ("0/.zarray", zarray, lz);
  put ("0/0.0.0", chunk, lc);
  {
    g_autofree char *dir = g_build_filename (store, "0", "0", "0", NULL);
    if (g_mkdir_with_parents (dir, 0755) != 0)
      abort ();
  }
  put ("0/0/0/0", chunk, lc);
  stack = airy_image_read (store, &error);
  if (stack == NULL)
    expect_error (error, store);
  else if (stack->depth == 0 || stack->height == 0 || stack->width == 0 || stack->data == NULL)
    abort ();
  return 0;
}
