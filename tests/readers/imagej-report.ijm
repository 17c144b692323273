// What ImageJ sees in a file, for tests/test-readers.c:
//   java -jar ij.jar -batch imagej-report.ijm "IN.tif|OUT.raw"
// prints the stack's shape, calibration and slice labels, and saves every
// slice as raw 32-bit float (big-endian) for a bit-exact comparison.
args = split(getArgument(), "|");
open(args[0]);
getVoxelSize(w, h, d, unit);
print("slices=" + nSlices);
print("width=" + getWidth());
print("height=" + getHeight());
print("bitdepth=" + bitDepth());
getDimensions(dw, dh, channels, zslices, frames);
print("channels=" + channels);
print("zslices=" + zslices);
print("voxel=" + d2s(w, 12) + "," + d2s(h, 12) + "," + d2s(d, 12));
print("unit=" + unit);
x = 0; y = 0; z = 0;
toScaled(x, y, z);
print("origin=" + d2s(x, 9) + "," + d2s(y, 9) + "," + d2s(z, 9));
for (i = 1; i <= nSlices; i++) {
  setSlice(i);
  print("label" + i + "=" + getInfo("slice.label"));
}
saveAs("Raw Data", args[1]);
print("saved");
