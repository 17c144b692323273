#!/usr/bin/python3
"""What tifffile (napari's TIFF reader) sees in a file: a JSON report for
tests/test-readers.c. Usage: tifffile-report.py FILE.tif RAW DEPTH HEIGHT WIDTH
where RAW holds the stack Airy wrote, float32 in the host's byte order."""
import json
import sys
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import tifffile

path, raw, depth, height, width = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
expected = np.fromfile(raw, dtype=np.float32).reshape(depth, height, width)
report = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with tifffile.TiffFile(path) as tif:
        series = tif.series[0]
        data = series.asarray()
        report.update(
            is_imagej=tif.is_imagej, is_ome=tif.is_ome, is_bigtiff=tif.is_bigtiff,
            pages=len(tif.pages), kind=series.kind, shape=list(series.shape), axes=series.axes,
            dtype=str(data.dtype), equal=bool(np.array_equal(data.reshape(expected.shape), expected)),
            planes_equal=[bool(np.array_equal(data.reshape(expected.shape)[k], expected[k]))
                          for k in range(depth)],
        )
        page = tif.pages[0]
        if "XResolution" in page.tags:
            x, y = page.tags["XResolution"].value, page.tags["YResolution"].value
            report["resolution"] = [x[0] / x[1], y[0] / y[1]]
        if tif.is_imagej:
            meta = tif.imagej_metadata
            report["imagej"] = {k: meta[k] for k in ("images", "slices", "unit", "spacing", "zorigin")
                                if k in meta}
            report["labels"] = meta.get("Labels", [])
            report["info"] = meta.get("Info", "")
        if tif.is_ome:
            ns = {"ome": "http://www.openmicroscopy.org/Schemas/OME/2016-06"}
            root = ET.fromstring(tif.ome_metadata)
            pixels = root.find("ome:Image/ome:Pixels", ns)
            report["ome"] = {k: pixels.get(k) for k in ("SizeX", "SizeY", "SizeZ", "SizeC", "SizeT", "Type",
                                                        "DimensionOrder", "PhysicalSizeX", "PhysicalSizeXUnit",
                                                        "PhysicalSizeZ")}
            report["ome"]["PositionZ"] = [float(p.get("PositionZ")) for p in pixels.findall("ome:Plane", ns)]
            channel = pixels.find("ome:Channel", ns)
            report["ome"]["EmissionWavelength"] = channel.get("EmissionWavelength")
            report["ome"]["annotations"] = {m.get("K"): m.text for m in root.iter("{%s}M" % ns["ome"])}
        try:
            mapped = tifffile.memmap(path)
            report["memmap"] = bool(np.array_equal(np.asarray(mapped).reshape(expected.shape), expected))
        except Exception as e:  # noqa: BLE001 - the report says why
            report["memmap"] = False
            report["memmap_error"] = str(e)
report["warnings"] = [str(w.message) for w in caught]
print(json.dumps(report))
