/* TIFF reader: any input is a stack or a GError naming the file. */
#include "fuzz-common.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  const char *path = fuzz_input_path (data, size);
  g_autoptr(AiryStack) stack = airy_tiff_read (path, &error);

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
  return 0;
}
