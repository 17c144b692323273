/* libairy as a shared library: one copy of the engine in a process that
 * loaded modules, and the boxed types bindings use (copies own their data). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "airy-test-util.h"

/* The file mapped at addr, from /proc/self/maps; NULL when none is. */
static char *
mapping_of (gconstpointer addr)
{
  g_autofree char *maps = NULL;
  g_auto(GStrv) lines = NULL;
  guint i;

  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  lines = g_strsplit (maps, "\n", -1);
  for (i = 0; lines[i]; i++)
    {
      guint64 start, end;
      char path[4096] = "";

      if (sscanf (lines[i], "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x %*s %*s %*s %*s %4095s",
                  &start, &end, path) == 3
          && (guint64) (guintptr) addr >= start && (guint64) (guintptr) addr < end)
        return g_strdup (path);
    }
  return NULL;
}

static void
test_one_copy (void)
{
  g_autofree char *maps = NULL;
  g_autofree char *engine = mapping_of ((gconstpointer) airy_init);
  g_autoptr(GHashTable) copies = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = NULL;
  GPtrArray *loaded = airy_modules_loaded ();
  guint i;

  /* the engine's code is libairy.so.0's, not the program's */
  g_assert_nonnull (engine);
  g_test_message ("airy_init is in %s", engine);
  g_assert_true (g_str_has_suffix (engine, "/libairy.so." AIRY_VERSION_S));
  /* the example element module (tests/modules) is loaded and linked it too:
   * every file mapped whose name is libairy's is that one file */
  g_assert_cmpuint (loaded->len, >=, 1);
  g_assert_true (airy_element_lookup ("ring-mask") != G_TYPE_INVALID);
  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  lines = g_strsplit (maps, "\n", -1);
  for (i = 0; lines[i]; i++)
    {
      if (strstr (lines[i], "/libairy") != NULL)
        g_hash_table_add (copies, g_strdup (strchr (lines[i], '/')));
    }
  g_assert_cmpuint (g_hash_table_size (copies), ==, 1);
  g_assert_true (g_hash_table_contains (copies, engine));
  g_test_message ("engine %s, module %s", engine, (char *) g_ptr_array_index (loaded, 0));
}

static void
test_boxed_stack (void)
{
  g_autoptr(AiryStack) stack = airy_stack_new (2, 3, 4);
  g_autoptr(AiryStack) probe = g_new0 (AiryStack, 1);
  AiryStack *copy, *header;
  const float *plane;
  gsize n;
  guint i;

  g_assert_true (G_TYPE_IS_BOXED (AIRY_TYPE_STACK));
  g_assert_cmpstr (g_type_name (AIRY_TYPE_STACK), ==, "AiryStack");
  for (i = 0; i < 24; i++)
    stack->data[i] = i;
  stack->dx = stack->dy = 0.25;
  copy = g_boxed_copy (AIRY_TYPE_STACK, stack);
  g_assert_true (copy->data != stack->data);
  g_assert_cmpmem (copy->data, 24 * sizeof (float), stack->data, 24 * sizeof (float));
  g_assert_cmpfloat (copy->dx, ==, 0.25);
  plane = airy_stack_get_plane_data (copy, 1, &n);
  g_assert_cmpuint (n, ==, 12);
  g_assert_cmpfloat (plane[0], ==, 12.0f);
  g_boxed_free (AIRY_TYPE_STACK, copy);

  /* a probe (a file's header without its pixels) copies as a header */
  probe->depth = 5, probe->height = 6, probe->width = 7;
  header = airy_stack_copy (probe);
  g_assert_null (header->data);
  g_assert_cmpuint (header->depth * header->height * header->width, ==, 210);
  airy_stack_free (header);
}

static void
test_boxed_run_options (void)
{
  const guint chunks[] = { 3 }, devices[] = { 0 };
  char backend[] = "cpu";
  AiryRunOptions mine = { .backend = backend, .threads = 2, .chunks = chunks };
  g_autoptr(AiryRunOptions) copy = NULL, again = NULL;
  g_autoptr(AiryRunOptions) fresh = airy_run_options_new ();

  g_assert_true (G_TYPE_IS_BOXED (AIRY_TYPE_RUN_OPTIONS));
  g_assert_null (fresh->backend);
  g_assert_cmpuint (fresh->threads, ==, 0);
  /* a copy of options on the stack owns its backend name and chunks (one
   * per device the run uses: the CPU backend's one device here) */
  copy = g_boxed_copy (AIRY_TYPE_RUN_OPTIONS, &mine);
  backend[0] = 'X';
  g_assert_cmpstr (copy->backend, ==, "cpu");
  g_assert_true (copy->chunks != chunks);
  g_assert_cmpuint (copy->chunks[0], ==, 3);
  g_assert_cmpuint (copy->threads, ==, 2);
  airy_run_options_set_devices (copy, devices, 1);
  airy_run_options_set_backend (copy, "auto");
  again = airy_run_options_copy (copy);
  g_assert_cmpstr (again->backend, ==, "auto");
  g_assert_true (again->devices != copy->devices);
  g_assert_cmpuint (again->n_devices, ==, 1);
  g_assert_cmpuint (again->devices[0], ==, 0);
  airy_run_options_set_devices (again, NULL, 0);
  g_assert_null (again->devices);
  g_assert_cmpuint (again->n_devices, ==, 0);

  g_assert_true (G_TYPE_IS_BOXED (AIRY_TYPE_SPECTRUM));
  g_assert_true (G_TYPE_IS_BOXED (AIRY_TYPE_RESULT));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();

  g_test_add_func ("/library/one-copy", test_one_copy);
  g_test_add_func ("/library/boxed/stack", test_boxed_stack);
  g_test_add_func ("/library/boxed/run-options", test_boxed_run_options);
  return g_test_run ();
}
