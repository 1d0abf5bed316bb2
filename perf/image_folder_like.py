#!/usr/bin/env python3
"""An ImageNet-style image folder of small JPEGs for measuring image_folder's check at open
(docs/images.md, "Opening image data"): --classes sub-folders of --files JPEGs in all, each
--size pixels of a colour gradient (Pillow, quality 90). --format: the same pictures as PNG, WebP
(lossy, quality 90, or lossless), TIFF (uncompressed or LZW), BMP, GIF (Pillow's palette of the
picture), PPM, or HEIC or AVIF (libheif's heif-enc, quality 90: x265 and aom; a process a file, so
seconds a file) instead, to compare their decoding
(docs/image-formats.md). --orientation N: each file with EXIF Orientation N (a JPEG's or WebP's
EXIF block, a PNG's eXIf chunk, a TIFF's tag 274), to time exif_orientation apply.
usage: perf/image_folder_like.py OUT_DIR [--files 20000] [--classes 100] [--size 160x120]
       [--format jpeg|png|webp|webp-lossless|tiff|tiff-lzw|bmp|gif|ppm|heic|avif] [--orientation 1..8]"""
import argparse
import os
import subprocess
import tempfile

from PIL import Image

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--files", type=int, default=20000)
p.add_argument("--classes", type=int, default=100)
p.add_argument("--size", default="160x120")
FORMATS = {"jpeg": ("JPEG", {"quality": 90}), "png": ("png", {}), "webp": ("webp", {"quality": 90}),
           "webp-lossless": ("webp", {"lossless": True}), "tiff": ("tif", {}),
           "tiff-lzw": ("tif", {"compression": "tiff_lzw"}), "bmp": ("bmp", {}), "gif": ("gif", {}),
           "ppm": ("ppm", {}), "heic": ("heic", {}), "avif": ("avif", {})}
p.add_argument("--format", choices=sorted(FORMATS), default="jpeg")
p.add_argument("--orientation", type=int, choices=range(1, 9))
a = p.parse_args()
ext, options = FORMATS[a.format]
if a.orientation and ext in ("heic", "avif", "bmp", "gif", "ppm"):
    p.error("--orientation: not for HEIC, AVIF, BMP, GIF or PPM (no EXIF block Pillow writes or reads)")
if a.orientation and ext == "tif":
    options = dict(options, tiffinfo={274: a.orientation})
elif a.orientation:
    exif = Image.Exif()
    exif[0x0112] = a.orientation
    options = dict(options, exif=exif.tobytes())
w, h = (int(v) for v in a.size.split("x"))
base = Image.linear_gradient("L").resize((w, h))
for i in range(a.files):
    c = i % a.classes
    d = os.path.join(a.out, f"n{c:08d}")
    os.makedirs(d, exist_ok=True)
    im = Image.merge("RGB", (base, base.point(lambda v, i=i: (v + i) % 256), base.point(lambda v, c=c: 255 - v)))
    path = os.path.join(d, f"img_{i:07d}.{ext}")
    if ext in ("heic", "avif"):  # heif-enc (Debian's libheif-examples) from the same picture as a PNG
        with tempfile.NamedTemporaryFile(suffix=".png") as png:
            im.save(png.name)
            subprocess.run(["heif-enc", "-q", "90", "-o", path, png.name], check=True, stdout=subprocess.DEVNULL)
    else:
        im.save(path, **options)
print(f"{a.out}: {a.files} {a.format} files of {w} x {h} in {a.classes} classes")
