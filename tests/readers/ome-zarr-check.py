"""What the ome-zarr package (OME's reader, napari-ome-zarr's base) and
ome-zarr-models (its NGFF 0.4 validator) see in stores airy-sim wrote.
Usage: ome-zarr-check.py STORE...; prints TAP, one test per check."""
import sys

import numpy as np
import zarr
from ome_zarr.io import parse_url
from ome_zarr.reader import Reader
from ome_zarr_models.v04.image import Image

n = 0
failed = 0


def check(ok, what):
    global n, failed
    n += 1
    failed += not ok
    print(("ok %d - %s" if ok else "not ok %d - %s") % (n, what), flush=True)


for store in sys.argv[1:]:
    name = store.rsplit("/", 1)[-1]
    # ome-zarr-models: the NGFF 0.4 image schema (pydantic), every array's metadata
    try:
        image = Image.from_zarr(zarr.open_group(store, mode="r"))
        ms = image.attributes.multiscales[0]
        check(len(ms.datasets) >= 2, "%s: ome-zarr-models validates it as an NGFF 0.4 image, %d levels"
              % (name, len(ms.datasets)))
    except Exception as e:  # the validator's message is the report
        check(False, "%s: ome-zarr-models refuses it: %s" % (name, str(e).splitlines()[0]))
        continue
    nodes = list(Reader(parse_url(store))())
    check(len(nodes) >= 1 and nodes[0].data, "%s: ome-zarr's Reader finds the image" % name)
    node = nodes[0]
    axes = node.metadata["axes"]
    check([a["name"] for a in axes] == ["z", "y", "x"] and all(a["unit"] == "micrometer" for a in axes),
          "%s: axes z, y, x in micrometer" % name)
    levels = [np.asarray(d) for d in node.data]
    transforms = node.metadata["coordinateTransformations"]
    base = transforms[0][0]["scale"]
    for k in range(1, len(levels)):
        prev, cur = levels[k - 1], levels[k]
        h, w = prev.shape[1], prev.shape[2]
        pad = np.zeros((prev.shape[0], h + h % 2, w + w % 2), np.float64)
        cnt = np.zeros_like(pad)
        pad[:, :h, :w] = prev
        cnt[:, :h, :w] = 1
        mean = (pad.reshape(pad.shape[0], pad.shape[1] // 2, 2, pad.shape[2] // 2, 2).sum(axis=(2, 4))
                / cnt.reshape(cnt.shape[0], cnt.shape[1] // 2, 2, cnt.shape[2] // 2, 2).sum(axis=(2, 4)))
        err = float(np.abs(cur - mean).max() / max(np.abs(prev).max(), 1e-30))
        scale = transforms[k][0]["scale"]
        check(cur.shape == (prev.shape[0], (h + 1) // 2, (w + 1) // 2) and err < 1e-6
              and scale[0] == base[0] and abs(scale[1] - base[1] * 2 ** k) < 1e-12,
              "%s: level %d %s is level %d's 2 x 2 mean (max error %.1e of the peak), pixel %.4g um"
              % (name, k, cur.shape, k - 1, err, scale[1]))
print("1..%d" % n)
sys.exit(1 if failed else 0)
