// Quads are given in normalised device coordinates with their texture
// coordinates; the #version line is prepended at run time (330 core or 300 es).
in vec2 position;
in vec2 texcoord;
out vec2 uv;

void
main ()
{
  uv = texcoord;
  gl_Position = vec4 (position, 0.0, 1.0);
}
