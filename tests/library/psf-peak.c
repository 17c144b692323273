/* A program outside the tree: built against an installed libairy with
 * `pkg-config --cflags --libs airy` alone. The in-focus plane of the
 * widefield preset has its peak on the axis, pixel ⌊N/2⌋, the Airy peak
 * π·NA²/λ² and the energy of the source: Σ I·du² = power = 1 (DESIGN §3). */
#include <math.h>
#include <stdio.h>
#include <airy.h>

int
main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AiryResult) result = NULL;
  const double z0 = 0.0, na = 0.8, lambda = 0.532, peak_want = G_PI * na * na / (lambda * lambda);
  double sum = 0, peak = -1;
  guint i, at = 0, h, w;

  airy_init ();
  system = airy_system_new_from_preset ("widefield", &error);
  if (system)
    airy_system_set_z_values (system, &z0, 1);
  if (system)
    result = airy_run (system, NULL, NULL, NULL, NULL, &error);
  if (result == NULL)
    return fprintf (stderr, "psf-peak: %s\n", error->message), 1;
  h = result->stack->height, w = result->stack->width;
  for (i = 0; i < h * w; i++)
    {
      sum += result->stack->data[i];
      if (result->stack->data[i] > peak)
        peak = result->stack->data[i], at = i;
    }
  sum *= result->stack->dx * result->stack->dy;
  printf ("psf-peak: %u × %u, peak %.6g at (%u, %u), want %.6g at (%u, %u); Σ I·du² = %.6f\n",
          h, w, peak, at / w, at % w, peak_want, h / 2, w / 2, sum);
  airy_shutdown ();
  return at == (h / 2) * w + w / 2 && fabs (sum - 1) < 1e-3 && fabs (peak / peak_want - 1) < 1e-3 ? 0 : 1;
}
