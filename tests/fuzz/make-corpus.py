#!/usr/bin/python3
"""Writes the hand-made part of the fuzz seed corpora (see make-corpus.sh).

    make-corpus.py OUT_DIR ELEMENTS_INFO

OUT_DIR gets json/, png/ and tiff/; ELEMENTS_INFO is the output of
`airy-sim info --elements`, from which one system per element type and
parameter range is written. Every file is small (a few KB at most) and
named for what it holds; none carries a file extension (the repository
ignores *.png and *.tif). PNGs are encoded here, chunk by chunk, so that
every colour type, bit depth, filter, interlace and ancillary chunk is
covered, and broken files are broken in one known place each. TIFFs come
from tifffile (Debian's python3-tifffile: run with /usr/bin/python3).
"""

import json
import os
import re
import struct
import sys
import zlib

out = sys.argv[1]
info = open(sys.argv[2], encoding="utf-8").read()


def put(kind, name, data):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(out, kind, name), "wb") as f:
        f.write(data)


# ---- JSON ------------------------------------------------------------------

GRID = {"shape": [16, 16], "spacing": 0.5}
SPECTRUM = {"wavelengths": [0.532], "weights": [1.0]}
SOURCE = {"type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8}
LENS = {"type": "ff-lens", "f": 100.0, "n": 1.33}


def system(elements, **extra):
    s = {"airy": 1, "grid": GRID, "spectrum": SPECTRUM,
         "z": {"start": -1.0, "stop": 1.0, "count": 3}, "elements": elements}
    s.update(extra)
    return json.dumps(s, indent=1, ensure_ascii=False)


# element types and their parameters, as `airy-sim info --elements` lists them
types = {}
current = None
for line in info.splitlines():
    m = re.match(r"^  (\S+)\s{2,}", line)
    if m and not line.startswith("    "):
        current = types.setdefault(m.group(1), [])
        continue
    m = re.match(r"^      (\S+)\s+(.*)$", line)
    if m and current is not None:
        current.append((m.group(1), m.group(2)))


def values_of(desc):
    """Values at the ends (and inside) of a documented range or choice."""
    m = re.search(r"one of (.+)$", desc)
    if m:
        return [v.strip() for v in m.group(1).split(",")]
    m = re.search(r"([\[(])(-?[0-9.e+]+), (-?[0-9.e+]+)([\])])", desc)
    if m:
        lo, hi = float(m.group(2)), float(m.group(3))
        vals = [(lo + hi) / 2]
        if m.group(1) == "[":
            vals.append(lo)
        if m.group(4) == "]":
            vals.append(hi)
        return [int(v) if v == int(v) and abs(v) < 2**31 else v for v in vals]
    return [True, False]


for t, params in sorted(types.items()):
    if t in ("sensor", "objective-point-source"):
        continue
    put("json", "element-" + t, system([SOURCE, {"type": t}, LENS]))
    for p, desc in params:
        if p in ("enabled", "file"):
            continue
        if p in ("zernike-indices", "zernike-coefficients"):
            continue
        for k, v in enumerate(values_of(desc)):
            put("json", "element-%s-%s-%d" % (t, p, k), system([SOURCE, {"type": t, p: v}, LENS]))

for p, desc in types.get("objective-point-source", []):
    if p != "enabled":
        for k, v in enumerate(values_of(desc)):
            put("json", "source-%s-%d" % (p, k), system([dict(SOURCE, **{p: v}), LENS]))

put("json", "zernike-noll", system([SOURCE, {"type": "phase-mask", "source": "zernike",
                                             "zernike-indexing": "noll", "zernike-indices": [1, 4, 11],
                                             "zernike-coefficients": [0.1, -0.2, 0.05],
                                             "zernike-unit": "um"}, LENS]))
put("json", "masks-with-files", system([SOURCE, {"type": "amplitude-mask", "file": "mask.png", "invert": True},
                                        {"type": "phase-mask", "source": "image", "file": "phase.tif",
                                         "phase-min": -3.14, "phase-max": 3.14}, LENS]))
put("json", "z-values", system([SOURCE, LENS], z={"values": [-0.5, 0.0, 0.25]}))
put("json", "two-wavelengths", system([SOURCE, LENS], spectrum={"wavelengths": [0.488, 0.561],
                                                                  "weights": [0.3, 0.7]}))
put("json", "name-description", system([SOURCE, LENS], name="naïve µ \u2013 \"quoted\" \\ ✓",
                                       description="line\nbreak\ttab \u0000 nul"))
microscope = {"f": 100.0, "n": 1.33, "na": 0.8, "f-tube": 200.0}
for k, sample in enumerate([{"constant": 2.0}, {"beads": {"count": 5, "seed": 7, "intensity": 3.0}},
                            {"file": "volume.tif"}]):
    put("json", "microscope-sample-%d" % k,
        system([{"type": "phase-mask", "source": "constant", "value": 0.5}], microscope=microscope,
               sensor={"reduce": "sum", "noise": "poisson", "exposure": 100.0, "bit-depth": 12},
               sample=sample))
good = system([SOURCE, LENS])
put("json", "minimal", good)
put("json", "minimal-compact", json.dumps(json.loads(good), separators=(",", ":")))
# broken in one place each
put("json", "bad-truncated", good[: len(good) // 2])
put("json", "bad-empty", "")
put("json", "bad-not-object", "[1, 2, 3]")
put("json", "bad-version", good.replace('"airy": 1', '"airy": 99'))
put("json", "bad-unknown-key", good.replace('"airy": 1', '"airy": 1, "colour": "blue"'))
put("json", "bad-wrong-type", good.replace('"spacing": 0.5', '"spacing": "half"'))
put("json", "bad-nan", good.replace('"spacing": 0.5', '"spacing": NaN'))
put("json", "bad-huge-number", good.replace('"spacing": 0.5', '"spacing": 1e999'))
put("json", "bad-negative-shape", good.replace("[16, 16]", "[-16, 16]"))
put("json", "bad-shape-float", good.replace("[16, 16]", "[16.5, 4294967312]"))
put("json", "bad-unknown-type", good.replace("ff-lens", "fff-lens"))
put("json", "bad-duplicate-key", good.replace('"airy": 1', '"airy": 1, "airy": 1'))
put("json", "bad-nested-arrays", good.replace("[0.532]", "[[[[[[[[[[0.532]]]]]]]]]]"))
put("json", "bad-not-utf8", good.encode("utf-8").replace(b"ff-lens", b"ff-l\xe9ns"))
put("json", "bad-trailing", good + "}")
put("json", "bad-comment", "// a comment\n" + good)


# ---- PNG -------------------------------------------------------------------

def chunk(name, data, claim=None):
    n = len(data) if claim is None else claim
    return struct.pack(">I", n) + name + data + struct.pack(">I", zlib.crc32(name + data) & 0xffffffff)


CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def filter_rows(rows, bpp, first_filter=0):
    """Scanlines with filters None, Sub, Up, Average, Paeth in turn."""
    out = b""
    prev = bytes(len(rows[0])) if rows else b""
    for y, row in enumerate(rows):
        ft = (first_filter + y) % 5
        f = bytearray(len(row))
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 0:
                p = 0
            elif ft == 1:
                p = a
            elif ft == 2:
                p = b
            elif ft == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else b if pb <= pc else c
            f[i] = (x - p) & 0xff
        out += bytes([ft]) + bytes(f)
        prev = row
    return out


def pack(samples, depth):
    """One row of samples (ints) as PNG stores it."""
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, nbits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s
        nbits += depth
        if nbits == 8:
            out.append(acc)
            acc, nbits = 0, 0
    if nbits:
        out.append(acc << (8 - nbits))
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def image_data(w, h, depth, ctype, pixels, interlace):
    """pixels[y][x] is a tuple of channel samples."""
    ch = CHANNELS[ctype]
    bpp = max(1, depth * ch // 8)
    if not interlace:
        rows = [pack([s for px in pixels[y] for s in px], depth) for y in range(h)]
        return filter_rows(rows, bpp)
    raw = b""
    for k, (x0, y0, dx, dy) in enumerate(ADAM7):
        xs = range(x0, w, dx)
        ys = range(y0, h, dy)
        if not xs or not ys:
            continue
        rows = [pack([s for x in xs for s in pixels[y][x]], depth) for y in ys]
        raw += filter_rows(rows, bpp, k)
    return raw


def png(w, h, depth, ctype, pixels, interlace=False, before=b"", after=b"", idat_parts=1, level=9):
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 1 if interlace else 0)
    z = zlib.compress(image_data(w, h, depth, ctype, pixels, interlace), level)
    step = max(1, -(-len(z) // idat_parts))
    idats = b"".join(chunk(b"IDAT", z[i:i + step]) for i in range(0, len(z), step))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + before + idats + after + chunk(b"IEND", b"")


def pattern(w, h, ch, maxv):
    return [[tuple((x * 37 + y * 101 + c * 53 + 11) % (maxv + 1) for c in range(ch)) for x in range(w)]
            for y in range(h)]


PLTE = chunk(b"PLTE", bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 200, 100, 50] + [i % 256 for i in range(12, 48)]))
PHYS = chunk(b"pHYs", struct.pack(">IIB", 2000000, 2000000, 1))

for depth in (1, 2, 4, 8, 16):
    for interlace in (False, True):
        for w, h in ((7, 5), (1, 1), (3, 9)):
            tag = "gray%d-%dx%d%s" % (depth, w, h, "-adam7" if interlace else "")
            put("png", tag, png(w, h, depth, 0, pattern(w, h, 1, 2**depth - 1), interlace))
    put("png", "gray%d-trns" % depth,
        png(6, 4, depth, 0, pattern(6, 4, 1, 2**depth - 1), before=chunk(b"tRNS", struct.pack(">H", 1))))
for depth in (1, 2, 4, 8):
    n = min(16, 2**depth)
    pal = [[(x + y) % n for x in range(9)] for y in range(5)]
    pixels = [[(v,) for v in row] for row in pal]
    put("png", "palette%d" % depth, png(9, 5, depth, 3, pixels, before=PLTE))
    put("png", "palette%d-trns" % depth,
        png(9, 5, depth, 3, pixels, before=PLTE + chunk(b"tRNS", bytes([255, 128, 0]))))
    put("png", "palette%d-trns-adam7" % depth,
        png(9, 5, depth, 3, pixels, interlace=True, before=PLTE + chunk(b"tRNS", bytes([0, 51]))))
for ctype, name in ((2, "rgb"), (4, "gray-alpha"), (6, "rgba")):
    for depth in (8, 16):
        ch = CHANNELS[ctype]
        for interlace in (False, True):
            put("png", "%s%d%s" % (name, depth, "-adam7" if interlace else ""),
                png(7, 6, depth, ctype, pattern(7, 6, ch, 2**depth - 1), interlace, before=PHYS))
put("png", "rgb8-trns", png(5, 3, 8, 2, pattern(5, 3, 3, 255),
                            before=chunk(b"tRNS", struct.pack(">HHH", 11, 64, 117))))
put("png", "rgb16-trns", png(5, 3, 16, 2, pattern(5, 3, 3, 65535),
                             before=chunk(b"tRNS", struct.pack(">HHH", 11, 64, 117))))

# Airy's raw 16-bit form: pHYs, tEXt airy:scale and Software, as airy_png_write_gray16 writes it
def airy_raw(scale, w=8, h=6):
    text = chunk(b"tEXt", b"airy:scale\0" + scale) + chunk(b"tEXt", b"Software\0Airy 0.1.0")
    return png(w, h, 16, 0, pattern(w, h, 1, 65535), before=PHYS + text, level=6)


put("png", "airy-raw16", airy_raw(b"0.0123"))
for k, s in enumerate([b"nan", b"-1", b"1e39", b"", b"12abc", b"inf"]):
    put("png", "airy-raw16-bad-scale-%d" % k, airy_raw(s))

colour = (chunk(b"gAMA", struct.pack(">I", 45455))
          + chunk(b"cHRM", struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000))
          + chunk(b"sRGB", b"\0")
          + chunk(b"iCCP", b"icc\0\0" + zlib.compress(b"not really a profile" * 4))
          + chunk(b"sBIT", b"\x05\x06\x05") + chunk(b"bKGD", struct.pack(">HHH", 1, 2, 3)))
texts = (chunk(b"tEXt", b"Comment\0hello") + chunk(b"zTXt", b"Title\0\0" + zlib.compress(b"zipped " * 20))
         + chunk(b"iTXt", b"Author\0\0\0de\0Autor\0plain") + chunk(b"iTXt", b"XML\0\1\0\0\0" + zlib.compress(b"<x/>"))
         + chunk(b"tIME", struct.pack(">HBBBBB", 2026, 12, 1, 8, 0, 0)) + chunk(b"prVt", b"private ancillary")
         + chunk(b"eXIf", b"MM\0*\0\0\0\x08\0\0"))
put("png", "rgb8-colour-chunks", png(6, 4, 8, 2, pattern(6, 4, 3, 255), before=colour))
put("png", "gray8-text-chunks", png(6, 4, 8, 0, pattern(6, 4, 1, 255), before=texts, after=texts))
put("png", "gray8-many-idat", png(8, 8, 8, 0, pattern(8, 8, 1, 255), idat_parts=9))
put("png", "gray8-empty-idat", png(4, 4, 8, 0, pattern(4, 4, 1, 255), before=chunk(b"IDAT", b"")))
put("png", "gray16-stored", png(9, 3, 16, 0, pattern(9, 3, 1, 65535), level=0))

base = png(8, 6, 8, 0, pattern(8, 6, 1, 255), before=PHYS)
for cut in (0, 5, 8, 20, 33, 50, len(base) - 12, len(base) - 1):
    put("png", "bad-cut-%d" % cut, base[:cut])
put("png", "bad-crc-ihdr", base[:29] + bytes([base[29] ^ 1]) + base[30:])
put("png", "bad-signature", b"\x89PNJ" + base[4:])
put("png", "bad-ascii-signature", base[:4] + b"\n" + base[5:])
ihdr = lambda w, h, d=8, t=0, i=0: chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, d, t, 0, 0, i))
empty = chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
sig = b"\x89PNG\r\n\x1a\n"
put("png", "bad-zero-width", sig + ihdr(0, 4) + empty)
put("png", "bad-too-wide", sig + ihdr(70000, 4) + empty)
put("png", "bad-huge-rgba16", sig + ihdr(16384, 16384, 16, 6) + empty)
put("png", "bad-bit-depth", sig + ihdr(4, 4, 3) + empty)
put("png", "bad-palette-missing", sig + ihdr(4, 4, 8, 3) + empty)
put("png", "bad-not-enough-data", sig + ihdr(64, 64) + chunk(b"IDAT", zlib.compress(b"\0" * 100)) + chunk(b"IEND", b""))
put("png", "bad-too-much-data", sig + ihdr(2, 2) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))
put("png", "bad-critical-chunk", sig + ihdr(2, 2) + chunk(b"AbCD", b"x") + empty)
put("png", "bad-text-claims-1.9GB", (sig + ihdr(1, 1) + chunk(b"tEXt", b"Comment\0" + b"x" * 150, claim=0x71000000))[:199])
put("png", "bad-ztxt-claims-1.9GB", (sig + ihdr(1, 1) + chunk(b"zTXt", b"Comment\0\0" + b"x" * 150, claim=0x71000000))[:199])
put("png", "bad-idat-garbage", sig + ihdr(4, 4) + chunk(b"IDAT", b"\x78\x9c" + b"\xff" * 20) + chunk(b"IEND", b""))
put("png", "bad-no-iend", base[:-12])


# ---- TIFF ------------------------------------------------------------------

import numpy  # noqa: E402
import tifffile  # noqa: E402


def tif(name, data, **kw):
    path = os.path.join(out, "tiff", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tifffile.imwrite(path, data, **kw)
    with open(path, "rb") as f:
        return f.read()


yy, xx = numpy.mgrid[0:8, 0:8]
ramp = (yy * 8 + xx).astype(numpy.float64)
tif("u8", ramp.astype(numpy.uint8))
tif("u16", (ramp * 1000).astype(numpy.uint16))
tif("f32", ramp.astype(numpy.float32) / 7)
tif("f32-stack-imagej", numpy.stack([ramp, ramp * 2, ramp * 3]).astype(numpy.float32), imagej=True,
    resolution=(2.0, 2.0), metadata={"spacing": 0.25, "unit": "um", "axes": "ZYX"})
tif("u16-stack-imagej", numpy.stack([ramp, ramp]).astype(numpy.uint16), imagej=True,
    metadata={"spacing": 1.5, "unit": "micron", "axes": "ZYX"})
tif("f32-bigtiff", ramp.astype(numpy.float32), bigtiff=True)
tif("f32-deflate", ramp.astype(numpy.float32), compression="zlib")
tif("u8-strips", ramp.astype(numpy.uint8), rowsperstrip=3)
tif("u8-big-endian", ramp.astype(numpy.uint8), byteorder=">")
tif("f32-big-endian", ramp.astype(numpy.float32), byteorder=">")
tif("unsupported-rgb", numpy.zeros((4, 4, 3), numpy.uint8), photometric="rgb")
tif("unsupported-tiled", numpy.zeros((32, 32), numpy.uint8), tile=(16, 16))
tif("unsupported-i16", (ramp - 30).astype(numpy.int16))
tif("unsupported-f64", ramp)
tif("unsupported-u32", ramp.astype(numpy.uint32))
good = tif("f32-small", ramp.astype(numpy.float32))
for cut in (4, 8, 16, len(good) // 2, len(good) - 4):
    put("tiff", "bad-cut-%d" % cut, good[:cut])
put("tiff", "bad-offset", good[:4] + struct.pack("<I", 0xfffffff0) + good[8:])
put("tiff", "bad-magic", b"II+\0" + good[4:])


def strip_table(n_offsets, n_counts, zero_strip=None):
    """16 × 16 float32, one row per strip, with a strip table of n entries
    (a short one was once read from offset 0) and one offset set to 0."""
    side, ifd, n = 16, 8, 10
    arrays = ifd + 2 + n * 12 + 4
    data = arrays + 2 * 4 * side
    b = bytearray(data + side * side * 4)
    b[0:8] = b"II" + struct.pack("<HI", 42, ifd)
    entries = [(256, 3, 1, side), (257, 3, 1, side), (258, 3, 1, 32), (259, 3, 1, 1), (262, 3, 1, 1),
               (273, 4, n_offsets, data if n_offsets == 1 else arrays), (277, 3, 1, 1), (278, 3, 1, 1),
               (279, 4, n_counts, side * side * 4 if n_counts == 1 else arrays + 4 * side), (339, 3, 1, 3)]
    struct.pack_into("<H", b, ifd, n)
    for i, (tag, typ, count, value) in enumerate(entries):
        at = ifd + 2 + 12 * i
        struct.pack_into("<HHI", b, at, tag, typ, count)
        struct.pack_into("<HH" if typ == 3 else "<I", b, at + 8, *((value, 0) if typ == 3 else (value,)))
    for k in range(side):
        struct.pack_into("<I", b, arrays + 4 * k, 0 if k == zero_strip else data + 4 * side * k)
        struct.pack_into("<I", b, arrays + 4 * (side + k), 4 * side)
    for k in range(side * side):
        struct.pack_into("<f", b, data + 4 * k, k + 1)
    return bytes(b)


put("tiff", "f32-strip-per-row", strip_table(16, 16))
put("tiff", "bad-strip-table-short", strip_table(1, 1))
put("tiff", "bad-strip-at-zero", strip_table(16, 16, zero_strip=5))


# ---- JSON dictionary (json.dict, beside this script) -------------------------

words = {"airy", "name", "description", "grid", "shape", "spacing", "spectrum", "wavelengths", "weights",
         "z", "start", "stop", "count", "values", "elements", "type", "microscope", "f", "n", "na", "f-tube",
         "sensor", "sample", "constant", "beads", "seed", "intensity", "file"}
for t, params in types.items():
    words.add(t)
    for p, desc in params:
        words.add(p)
        m = re.search(r"one of (.+)$", desc)
        if m:
            words.update(v.strip() for v in m.group(1).split(","))
tokens = ["{", "}", "[", "]", ":", ",", "true", "false", "null", "1e308", "-0", "0.5", "4294967297"]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "json.dict"), "w") as f:
    f.write("# System JSON: every key, element type and choice Airy knows (written by make-corpus.py)\n")
    for w in sorted(words):
        f.write('"\\"%s\\""\n' % w)
    for t in tokens:
        f.write('"%s"\n' % t)
