// Value → colour exactly as ui/airy-view-math.c (airy_display_index) does it:
// scaled position between the contrast limits, clamped, raised to gamma,
// LUT index floor(255·t + 0.5), fetched without filtering.
precision highp float;

in vec2 uv;
out vec4 color;

uniform sampler2D slice;   // R32F data
uniform sampler2D lut;     // 256 × 1 RGB
uniform float lo;
uniform float hi;
uniform float gamma_;
uniform float log_floor;
uniform int scale;         // 0 linear, 1 log, 2 sqrt

void
main ()
{
  float v = texture (slice, uv).r;
  float t;

  // NaN: a value not computed yet (a plane of a run still filling its
  // stack), drawn as the canvas behind the image
  if (isnan (v))
    {
      color = vec4 (0.12, 0.12, 0.13, 1.0);
      return;
    }

  if (scale == 1)
    {
      float lf = log (log_floor), lh = log (hi);
      t = lh > lf ? (log (max (v, log_floor)) - lf) / (lh - lf) : 0.0;
    }
  else if (scale == 2)
    {
      float sl = sqrt (max (lo, 0.0)), sh = sqrt (max (hi, 0.0));
      t = sh > sl ? (sqrt (max (v, 0.0)) - sl) / (sh - sl) : 0.0;
    }
  else
    t = hi > lo ? (v - lo) / (hi - lo) : 0.0;
  t = clamp (t, 0.0, 1.0);
  if (gamma_ != 1.0 && t > 0.0)
    t = exp2 (gamma_ * log2 (t));
  int index = int (floor (t * 255.0 + 0.5));
  color = vec4 (texelFetch (lut, ivec2 (index, 0), 0).rgb, 1.0);
}
