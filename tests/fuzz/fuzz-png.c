/* PNG reader: any input is a plane or a GError naming the file. Each
 * input is read as it is and, when that differs, with every chunk CRC
 * recomputed: mutations then reach the chunk handlers instead of stopping
 * at "CRC error". */
#include "fuzz-common.h"

#include <zlib.h>

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

static void
read_one (const uint8_t *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  const char *path = fuzz_input_path (data, size);
  g_autoptr(AiryStack) stack = airy_png_read (path, &error);
  float lo, hi;

  if (stack == NULL)
    {
      if (error == NULL || error->domain != AIRY_ERROR || !g_str_has_prefix (error->message, path))
        abort ();
      return;
    }
  if (stack->depth != 1 || stack->height == 0 || stack->width == 0
      || !(stack->bits == 8 || stack->bits == 16 || stack->bits == 32))
    abort ();
  /* every value was written: under MSan/valgrind, and finite here */
  airy_stack_min_max (stack, &lo, &hi);
  if (!isfinite (lo) || !isfinite (hi) || lo < 0)
    abort ();
  if (stack->bits != 32 && hi > (1u << stack->bits) - 1)
    abort ();
  /* what a mask image reads */
  fuzz_check_rows (path, stack, _airy_png_read_rows);
}

/* A copy with the CRC of every complete chunk recomputed; NULL if none changed. */
static uint8_t *
with_fixed_crcs (const uint8_t *data, size_t size)
{
  uint8_t *copy = NULL;
  size_t at = 8;

  while (at + 12 <= size)
    {
      uint32_t length = (uint32_t) data[at] << 24 | data[at + 1] << 16 | data[at + 2] << 8 | data[at + 3];
      uint32_t crc, stored;

      if (length > size - at - 12)
        break;
      crc = crc32 (0, data + at + 4, length + 4);
      stored = (uint32_t) data[at + 8 + length] << 24 | data[at + 9 + length] << 16
               | data[at + 10 + length] << 8 | data[at + 11 + length];
      if (crc != stored)
        {
          if (copy == NULL)
            copy = g_memdup2 (data, size);
          copy[at + 8 + length] = crc >> 24;
          copy[at + 9 + length] = crc >> 16;
          copy[at + 10 + length] = crc >> 8;
          copy[at + 11 + length] = crc;
        }
      at += 12 + (size_t) length;
    }
  return copy;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree uint8_t *fixed = NULL;

  read_one (data, size);
  if (size > 8 && (fixed = with_fixed_crcs (data, size)) != NULL)
    read_one (fixed, size);
  return 0;
}
