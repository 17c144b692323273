/* microlens-array (engine/elements/airy-microlens.c): a plane wave through
 * the array focuses, one focal distance behind it, to a spot on each lens
 * centre (the pitch, the square, rectangular and hexagonal layouts, shifted
 * by f·tan θ for a tilted wave); the power, all of it without blocking and
 * the lenses' share of the area with it; the bad input. Runs end to end;
 * the chromatix peer cases are in tests/peers/cases.py. */
#include "config.h"

#include <json-glib/json-glib.h>

#include "airy-test-util.h"

#define N 128

/* the intensity one focal length f behind the array (a plane wave of
 * power 1 on N² pixels of 1 µm, λ 0.5) */
static AiryResult *
focus (double angle_x, const char *array, double z)
{
  g_autofree char *prop = z > 0 ? g_strdup_printf (", {\"type\": \"propagate\", \"z\": %.17g,"
                                                   " \"method\": \"angular-spectrum\", \"pad\": 64}", z)
                                 : g_strdup ("");
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%d, %d], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"angle-x\": %.17g}, {\"type\": \"microlens-array\", %s}%s]}",
    N, N, angle_x, array, prop);
  g_autoptr(AirySystem) system = test_system (json);

  return test_run (system, NULL);
}

/* the brightest pixel of an n × n image within 8 pixels of (cy, cx)
 * pixels from the axis, as offsets from it */
static void
spot_near (const AiryStack *s, int n, double cy, double cx, int *oy, int *ox)
{
  int y0 = (int) lround (cy) + n / 2, x0 = (int) lround (cx) + n / 2, y, x;
  float best = -1;

  for (y = y0 - 8; y <= y0 + 8; y++)
    for (x = x0 - 8; x <= x0 + 8; x++)
      if (y >= 0 && y < n && x >= 0 && x < n && s->data[y * n + x] > best)
        {
          best = s->data[y * n + x];
          *oy = y - y0;
          *ox = x - x0;
        }
}

static void
check_spots_on (const AiryStack *s, int size, const double *centres, guint n, int tolerance)
{
  guint i;

  for (i = 0; i < n; i++)
    {
      int oy = 99, ox = 99;

      spot_near (s, size, centres[2 * i], centres[2 * i + 1], &oy, &ox);
      g_test_message ("spot expected at (%g, %g) pixels: %d, %d off", centres[2 * i], centres[2 * i + 1], oy, ox);
      g_assert_cmpint (abs (oy), <=, tolerance);
      g_assert_cmpint (abs (ox), <=, tolerance);
    }
}

/* the spots of lenses at centres (µm) on the 1 µm grid, shifted by shift_x µm */
static void
check_spots (const AiryStack *s, const double *centres, guint n, double shift_x, int tolerance)
{
  guint i;

  for (i = 0; i < n; i++)
    {
      int oy = 99, ox = 99;

      spot_near (s, N, centres[2 * i], centres[2 * i + 1] + shift_x, &oy, &ox);
      g_test_message ("lens at (%g, %g) µm: its spot %d, %d pixels off", centres[2 * i], centres[2 * i + 1] + shift_x,
                      oy, ox);
      g_assert_cmpint (abs (oy), <=, tolerance);
      g_assert_cmpint (abs (ox), <=, tolerance);
    }
}

static void
test_square_spots (void)
{
  /* 3 × 3 lenses at a pitch of 40 µm: nine spots on the centres; a wave
   * tilted by 0.01 rad puts them f·tan θ = 4 µm further along x */
  static const double c[] = { -40, -40, -40, 0, -40, 40, 0, -40, 0, 0, 0, 40, 40, -40, 40, 0, 40, 40 };
  const char *mla = "\"layout\": \"square\", \"lenses\": 3, \"pitch\": 40, \"radius\": 19.5, \"f\": 400,"
                    " \"block-between\": true";
  g_autoptr(AiryResult) a = focus (0.0, mla, 400);
  g_autoptr(AiryResult) b = focus (0.01, mla, 400);

  check_spots (a->stack, c, 9, 0.0, 0);
  check_spots (b->stack, c, 9, 400 * tan (0.01), 0);
}

static void
test_rectangular_spots (void)
{
  /* 2 rows × 3 columns: lens ⌊m/2⌋ on the axis, so rows at −30, 0 and
   * columns at −30, 0, 30 */
  static const double c[] = { -30, -30, -30, 0, -30, 30, 0, -30, 0, 0, 0, 30 };
  g_autoptr(AiryResult) a = focus (0.0, "\"layout\": \"rectangular\", \"lenses-y\": 2, \"lenses-x\": 3, \"pitch\": 30,"
                                   " \"radius\": 14.5, \"f\": 200, \"block-between\": true", 200);

  check_spots (a->stack, c, 6, 0.0, 0);
}

static void
test_hexagonal_spots (void)
{
  /* 7 lenses: the centre and six at the pitch, rows √3/2·pitch apart */
  double p = 36, h = p * sqrt (3.0) / 2;
  double c[] = { 0, 0, 0, -p, 0, p, -h, -p / 2, -h, p / 2, h, -p / 2, h, p / 2 };
  g_autoptr(AiryResult) a = focus (0.0, "\"layout\": \"hexagonal\", \"lenses\": 2, \"pitch\": 36, \"radius\": 17.5,"
                                   " \"f\": 350, \"block-between\": true", 350);

  /* the centres fall between pixels (h = 31.18 µm): within one pixel */
  check_spots (a->stack, c, 7, 0.0, 1);
}

static void
test_power (void)
{
  /* phase only: the power stays 1; blocked between the lenses: their share
   * of the pixels, counted here (d² < r²) */
  g_autoptr(AiryResult) open = focus (0.0, "\"lenses\": 3, \"pitch\": 40, \"radius\": 19.5, \"f\": 400", 0);
  g_autoptr(AiryResult) blocked = focus (0.0, "\"lenses\": 3, \"pitch\": 40, \"radius\": 19.5, \"f\": 400,"
                                         " \"block-between\": true", 0);
  guint inside = 0;
  int y, x, i, j;

  for (y = 0; y < N; y++)
    for (x = 0; x < N; x++)
      for (i = -1; i <= 1; i++)
        for (j = -1; j <= 1; j++)
          {
            double dy = y - N / 2 - 40.0 * i, dx = x - N / 2 - 40.0 * j;

            inside += dy * dy + dx * dx < 19.5 * 19.5;
          }
  g_assert_cmpfloat_with_epsilon (plane_sum (open->stack->data, N * N), 1.0, 1e-5);
  g_assert_cmpfloat_with_epsilon (plane_sum (blocked->stack->data, N * N), (double) inside / (N * N), 1e-6);
}

/* the light-field modality's image of one point at depth z (a sample of
 * one voxel at the axis, camera pixels of 2 µm): the preset's optics */
static AiryResult *
light_field (const char *dir, double z)
{
  g_autofree char *path = g_build_filename (dir, "point.tif", NULL);
  g_autoptr(AiryStack) point = airy_stack_new (1, 256, 256);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("light-field", &error);
  g_autofree char *json = NULL, *text = NULL;
  g_autoptr(AirySystem) one = NULL;
  JsonNode *root;
  JsonObject *o;

  g_assert_no_error (error);
  point->dx = point->dy = 2.0;
  point->data[128 * 256 + 128] = 1.0f;
  g_assert_true (airy_tiff_write (path, point, &error));
  g_assert_no_error (error);
  text = airy_system_to_json (system);
  root = json_from_string (text, NULL);
  o = json_node_get_object (root);
  json_object_set_object_member (o, "z", json_object_new ());
  json_object_set_array_member (json_object_get_object_member (o, "z"), "values", json_array_new ());
  json_array_add_double_element (json_object_get_array_member (json_object_get_object_member (o, "z"), "values"), z);
  json_object_set_object_member (o, "sample", json_object_new ());
  json_object_set_string_member (json_object_get_object_member (o, "sample"), "file", path);
  json = json_to_string (root, FALSE);
  json_node_unref (root);
  one = test_system (json);
  return test_run (one, NULL);
}

static void
test_light_field (void)
{
  /* a point in focus images to one spot per lenslet, on the lenslets'
   * centres (pitch 130 µm = 65 pixels, hexagonal); at depth z the spot of
   * the lenslet at c moves by −f_MLA·z·n·c/f² (the defocus phase's tilt
   * over the lenslet): 1.04·z µm for the outer ones, 10.4 pixels at 20 µm */
  g_autofree char *dir = g_dir_make_tmp ("airy-light-field-XXXXXX", NULL);
  g_autoptr(AiryResult) focused = light_field (dir, 0.0);
  g_autoptr(AiryResult) deep = light_field (dir, 20.0);
  double p = 130, h = p * sqrt (3.0) / 2, shift = 2000.0 * 20.0 * 1.0 / (500.0 * 500.0);
  double c[] = { 0, 0, 0, -p, 0, p, -h, -p / 2, -h, p / 2, h, -p / 2, h, p / 2 };
  double moved[14];
  guint i;

  g_assert_cmpuint (focused->stack->height, ==, 256);
  for (i = 0; i < 14; i++)
    {
      c[i] /= 2.0;  /* µm → camera pixels */
      moved[i] = c[i] * (1.0 - shift);
    }
  check_spots_on (focused->stack, 256, c, 7, 1);
  check_spots_on (deep->stack, 256, moved, 7, 1);
  {
    g_autofree char *path = g_build_filename (dir, "point.tif", NULL);

    g_unlink (path);
  }
  g_rmdir (dir);
}

static void
test_bad_input (void)
{
  static const struct { const char *element, *message; int code; } cases[] = {
    { "{\"type\": \"microlens-array\", \"pitch\": 0.9}",
      "elements[1].pitch: must be at least two pixels (2 × 0.5 µm), got 0.9 µm", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"microlens-array\", \"layout\": \"custom\", \"centers\": [1, 2, 3]}",
      "elements[1].centers: needs (y, x) pairs of lens centres (µm), got 3 values", AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"microlens-array\", \"lenses\": 0}", "elements[1].lenses: must be in [1, 1024], got 0",
      AIRY_ERROR_INVALID_VALUE },
    { "{\"type\": \"microlens-array\", \"f\": 0.5}", "elements[1].f: must be in [1, 1e+07] µm, got 0.5", AIRY_ERROR_INVALID_VALUE },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
        " \"elements\": [{\"type\": \"plane-wave\"}, %s]}", cases[i].element);

      test_expect_error (json, cases[i].code, cases[i].message);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/microlens/square-spots", test_square_spots);
  g_test_add_func ("/microlens/rectangular-spots", test_rectangular_spots);
  g_test_add_func ("/microlens/hexagonal-spots", test_hexagonal_spots);
  g_test_add_func ("/microlens/power", test_power);
  g_test_add_func ("/microlens/light-field", test_light_field);
  g_test_add_func ("/microlens/bad-input", test_bad_input);
  return g_test_run ();
}
