/* The .npy files the peer tests' Python side writes. */
#pragma once

#include "airy-test-util.h"

/* A little-endian float32 C-order .npy of 3 dimensions (what cases.py writes). */
static inline float *
read_npy (const char *path, guint shape[3])
{
  g_autofree char *data = NULL;
  gsize length = 0, header, offset;
  g_autoptr(GError) error = NULL;
  const char *s;
  float *values;

  g_file_get_contents (path, &data, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (length, >, 10);
  g_assert_cmpint (memcmp (data, "\x93NUMPY", 6), ==, 0);
  if (data[6] == 1)
    {
      header = (guint8) data[8] | ((guint8) data[9] << 8);
      offset = 10;
    }
  else
    {
      header = (guint8) data[8] | ((guint8) data[9] << 8) | ((gsize) (guint8) data[10] << 16);
      offset = 12;
    }
  g_assert_nonnull (g_strstr_len (data + offset, header, "'descr': '<f4'"));
  g_assert_nonnull (g_strstr_len (data + offset, header, "'fortran_order': False"));
  s = g_strstr_len (data + offset, header, "'shape': (");
  g_assert_nonnull (s);
  g_assert_cmpint (sscanf (s, "'shape': (%u, %u, %u)", &shape[0], &shape[1], &shape[2]), ==, 3);
  offset += header;
  g_assert_cmpuint (length - offset, ==, (gsize) shape[0] * shape[1] * shape[2] * sizeof (float));
  values = g_new (float, (gsize) shape[0] * shape[1] * shape[2]);
  memcpy (values, data + offset, length - offset);
  return values;
}
