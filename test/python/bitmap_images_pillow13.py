"""The bitmap fixture's references (make_bitmap_images.py, written with the reference venv's Pillow,
Debian's 9.4) against the Pillow a user installs today (13, in .deps/zarr3env): every file's
Image.open(f).convert("RGB") and convert("L") equal to its .rgb and .l, value for value (the GIFs of
a transparent index, a local table, a frame inside and past its screen, indices past the table), but
the 16-bit PGM, whose samples Pillow reads as they are and whose convert() clips them at 255 where
hpctrain scales them (docs/bitmap-formats.md): that clip is asserted, and a 12-bit PGM's (white from
sample 16 of 4095), so the page is told when a Pillow release changes it.

usage: bitmap_images_pillow13.py FIXTURE_DIR (the bitmap_images fixture's scratch_bitmap_images)
"""
import io
import os
import sys

try:
    import numpy as np
    import PIL
    from PIL import Image
except ImportError as e:
    print(f"bitmap_images_pillow13: {e}")
    sys.exit(77)

fmt = os.path.join(sys.argv[1], "formats")
wrong = []
for line in open(os.path.join(fmt, "index.tsv")):
    name = line.split("\t")[0]
    path = os.path.join(fmt, name)
    with Image.open(path) as im:
        rgb, grey, raw = np.asarray(im.convert("RGB")), np.asarray(im.convert("L")), np.asarray(im)
    want_rgb = np.fromfile(path + ".rgb", np.uint8).reshape(rgb.shape)
    want_grey = np.fromfile(path + ".l", np.uint8).reshape(grey.shape)
    if name == "grey16.pgm":  # Pillow: the samples as stored (mode I), convert() clipping them
        scaled = ((raw.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)
        if not ((grey == np.minimum(raw, 255)).all() and (want_grey == scaled).all() and raw.max() > 255):
            wrong.append(f"{name}: Pillow {PIL.__version__} no longer clips a 16-bit PGM (update docs/bitmap-formats.md)")
        continue
    for what, got, want in (("RGB", rgb, want_rgb), ("L", grey, want_grey)):
        if (got != want).any():
            wrong.append(f"{name} as {what}: {int((got != want).sum())} values unlike Pillow {PIL.__version__}'s")
# A 12-bit PGM (maxval 4095): Pillow scales its samples to 0-65535 (mode I), then clips: white from 16.
v = np.array([[0, 15, 16, 4095]], np.uint16)
with Image.open(io.BytesIO(b"P5\n4 1\n4095\n" + v.astype(">u2").tobytes())) as im:
    if np.asarray(im.convert("L")).tolist() != [[0, 240, 255, 255]]:
        wrong.append(f"a 12-bit PGM: Pillow {PIL.__version__} no longer clips it (update docs/bitmap-formats.md)")
for w in wrong:
    print(f"bitmap_images_pillow13: {w}")
print(f"bitmap_images_pillow13: Pillow {PIL.__version__}: {'FAIL' if wrong else 'every file as the references'}")
sys.exit(1 if wrong else 0)
