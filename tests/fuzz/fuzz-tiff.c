/* TIFF reader: any input is a stack or a GError naming the file, and a
 * stack holds the pixels an independent decode of the file finds
 * (tiff-decode.h; AIRY_FUZZ_DECODE=0 leaves that comparison out). */
#include "fuzz-common.h"
#include "tiff-decode.h"

static gboolean decode_check = TRUE;

/* read from the bytes the file says hold the pixels, or not at all */
static void
check_decode (const uint8_t *data, size_t size, const char *path, const AiryStack *stack)
{
  if (decode_check && tiff_decode_compare (data, size, path, stack) == DECODE_DIFFERENT)
    {
      g_printerr ("fuzz-tiff: Airy's pixels differ from the independent decode\n");
      abort ();
    }
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  decode_check = g_strcmp0 (g_getenv ("AIRY_FUZZ_DECODE"), "0") != 0;
  return 0;
}

/* The same bytes through the reader's memory entry point: the same answer. */
static void
check_memory_read (const uint8_t *data, size_t size, const AiryStack *from_file, const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) stack = _airy_tiff_read_memory (data, size, path, NULL, &error);

  if ((stack == NULL) != (from_file == NULL))
    abort ();
  if (stack == NULL)
    {
      if (error == NULL || error->domain != AIRY_ERROR || !g_str_has_prefix (error->message, path))
        abort ();
      return;
    }
  if (stack->depth != from_file->depth || stack->height != from_file->height || stack->width != from_file->width
      || memcmp (stack->data, from_file->data, (gsize) stack->depth * airy_stack_plane_size (stack) * 4) != 0)
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  const char *path = fuzz_input_path (data, size);
  g_autoptr(AiryStack) stack = airy_tiff_read (path, &error);

  check_memory_read (data, size, stack, path);
  /* a hyperstack's first channel and frame, a probe, an expected plane
   * count: other paths through the same checks */
  {
    AiryReadOptions ro = AIRY_READ_OPTIONS_INIT;
    g_autoptr(GError) e2 = NULL;
    g_autoptr(AiryStack) picked = NULL;
    g_autoptr(AiryStack) head = NULL;

    ro.channel = 0;
    ro.frame = 0;
    ro.max_planes = 8;
    picked = airy_tiff_read_full (path, &ro, &e2);
    if (picked == NULL && (e2 == NULL || e2->domain != AIRY_ERROR))
      abort ();
    if (picked != NULL)
      check_decode (data, size, path, picked);
    g_clear_error (&e2);
    head = airy_tiff_probe (path, &ro, &e2);
    /* a probe reads no pixels, so it may pass a file whose compressed
     * data turn out corrupt; never the other way round */
    if (picked != NULL && (head == NULL || head->data != NULL || head->depth != picked->depth
                           || head->height != picked->height || head->width != picked->width))
      abort ();
  }
  if (stack == NULL)
    {
      if (error == NULL || error->domain != AIRY_ERROR || !g_str_has_prefix (error->message, path))
        abort ();
      return 0;
    }
  /* touch every value: a stack that claims more than it holds shows here */
  {
    float lo, hi;

    airy_stack_min_max (stack, &lo, &hi);
    if (stack->depth == 0 || stack->height == 0 || stack->width == 0)
      abort ();
  }
  check_decode (data, size, path, stack);
  /* what a mask image reads: the first plane, row by row */
  fuzz_check_rows (path, stack, _airy_tiff_read_rows);
  return 0;
}
