"""HEIF (HEIC) and AVIF files as phones and web sets hold them, written by libheif's heif-enc (Debian's
libheif-examples: HEIC by x265, AVIF by aom), by pillow-heif and by Pillow's own AVIF writer, with the
reference decode of each, for the image decoder's tests (test_heif_images, cli_image_decks).

  heif/<name>.heic|.avif  one picture (a gradient with noise; with alpha: a ramp through 0) as
                          enc_*: heif-enc's 8-bit RGB (quality 90; 37 x 23, odd: its chroma's edge),
                          RGBA, grey, a HEIC's 10-bit RGB and grey (from a 16-bit PNG), lossless 4:4:4, and a
                          HEIC of a JPEG with EXIF Orientation 6 (the EXIF kept, no transform);
                          ph_*: pillow-heif's 8-bit RGB, grey, 10-bit, and EXIF Orientation 6 and 5
                          (which it writes as HEIF transforms, irot and imir), a 150 x 100 grid of
                          64 x 64 tiles (as a phone's 512) plain and with Orientation 6; pil_*: Pillow's AVIF with
                          Orientation 6 and 2 (the same)
  heif/<name>.rgb, .l     the reference's upright picture, convert("RGB") / ("L") as raw bytes: a
                          HEIC's by pillow-heif (exif_transpose(Image.open(f)), which is Image.open's
                          picture: pillow-heif resets the EXIF Orientation it hands on), an AVIF's by
                          Pillow's own reader (exif_transpose of Image.open: Note [HEIF orientation]); a 10-bit grey
                          HEIC (pillow-heif's mode I;16) as round(v / 257) of its 16-bit values
  heif/index.tsv          name, width, height (upright) per file
  mixed/cls<c>/           3 classes of one colour each: PNG, JPEG, HEIC (heif-enc and pillow-heif) and
                          AVIF (heif-enc, Pillow); broken/mixed_cut/: the same with cls1/c.heic and
                          cls2/d.avif cut to 60% of their bytes; broken/mixed_removed/: without them
  broken/cut.heic, cut.avif, box.heic   heif/enc_q90.* cut to 60% of their bytes; enc_q90.heic cut
                          inside its first box (ftyp)
usage: make_heif_images.py OUT_DIR   (run by zarr3_python.sh: .deps/zarr3env has pillow-heif)
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import zlib

from image_writers import fresh_output, require

try:
    import numpy as np
    import pillow_heif
    from PIL import Image, ImageOps, features
except ImportError as e:  # the runner turns this into a failure where the venvs exist
    print(f"make_heif_images: {e} (.deps/zarr3env of scripts/setup --reference: pillow-heif)")
    sys.exit(77)
require("make_heif_images", [(features.check("avif"), "this Pillow lacks AVIF (Pillow 11.3 or later)"),
                             (shutil.which("heif-enc") is not None,
                              "no heif-enc (Debian's libheif-examples: scripts/setup)")])
out, heif = fresh_output(sys.argv, "heif")
rng = np.random.default_rng(41)


def picture(w, h, alpha=False, deep=False):
    """A smooth gradient with noise (as a photograph's detail); `deep`: 16-bit values."""
    y, x = np.mgrid[0:h, 0:w]
    top = 65535 if deep else 255
    r = x * top // max(w - 1, 1)
    g = y * top // max(h - 1, 1)
    b = (x + y) * top // max(w + h - 2, 1)
    c = np.stack([r, g, b], -1).astype(np.int64) + rng.integers(-top // 16, top // 16 + 1, (h, w, 3))
    c = np.clip(c, 0, top).astype(np.uint16 if deep else np.uint8)
    if alpha:
        a = (x * 255 // max(w - 1, 1)).astype(np.uint8)[..., None]
        c = np.concatenate([c, a], -1)
    return c


def png16(path, c):
    """A 16-bit PNG (RGB or grey) written byte by byte: Pillow writes no 16-bit RGB."""
    h, w = c.shape[:2]
    grey = c.ndim == 2
    raw = b"".join(b"\0" + c[y].astype(">u2").tobytes() for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 16, 0 if grey else 2, 0, 0, 0)
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
                           + chunk(b"IEND", b""))


def heif_enc(src, dst, *args):
    subprocess.run(["heif-enc", *args, "-o", dst, src], check=True, stdout=subprocess.DEVNULL)


def exif(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


index = []


def reference(name):
    """The reference's upright picture of heif/`name` as raw RGB and grey bytes, and its size."""
    path = os.path.join(heif, name)
    im = Image.open(path)
    up = ImageOps.exif_transpose(im)
    if name.endswith(".heic"):  # pillow-heif turns by the transforms; EXIF does not turn it again
        assert up.size == im.size and up.convert("RGB").tobytes() == im.convert("RGB").tobytes(), name
    if up.mode == "I;16":  # a 10-bit grey HEIC, its values times 64: Pillow's convert("L") clips them
        grey = np.rint(np.asarray(up, np.float64) / 257).astype(np.uint8)  # as a 16-bit PNG's (the doc)
        open(path + ".rgb", "wb").write(np.repeat(grey[..., None], 3, -1).tobytes())
        open(path + ".l", "wb").write(grey.tobytes())
    else:
        open(path + ".rgb", "wb").write(up.convert("RGB").tobytes())
        open(path + ".l", "wb").write(up.convert("L").tobytes())
    index.append((name, *up.size))


pillow_heif.register_heif_opener()
tmp = os.path.join(out, "src")
os.makedirs(tmp)
rgb, odd, rgba = picture(64, 48), picture(37, 23), picture(37, 23, alpha=True)
Image.fromarray(rgb).save(f"{tmp}/rgb.png")
Image.fromarray(odd).save(f"{tmp}/odd.png")
Image.fromarray(rgba, "RGBA").save(f"{tmp}/rgba.png")
Image.fromarray(rgb).convert("L").save(f"{tmp}/grey.png")
deep = picture(37, 23, deep=True)
png16(f"{tmp}/rgb16.png", deep)
png16(f"{tmp}/grey16.png", deep[..., 0])
Image.fromarray(odd).save(f"{tmp}/o6.jpg", quality=95, exif=exif(6))

for ext, flags in ((".heic", []), (".avif", ["-A"])):
    heif_enc(f"{tmp}/rgb.png", f"{heif}/enc_q90{ext}", "-q", "90", *flags)
    heif_enc(f"{tmp}/odd.png", f"{heif}/enc_odd{ext}", "-q", "90", *flags)
    heif_enc(f"{tmp}/grey.png", f"{heif}/enc_grey{ext}", "-q", "90", *flags)
# Debian's heif-enc 1.15 aborts writing a 10-bit AVIF (an assertion in libaom's write_color_config).
heif_enc(f"{tmp}/rgb16.png", f"{heif}/enc_10bit.heic", "-q", "90", "-b", "10")
heif_enc(f"{tmp}/rgba.png", f"{heif}/enc_alpha.heic", "-q", "90")
heif_enc(f"{tmp}/grey16.png", f"{heif}/enc_grey10.heic", "-q", "90", "-b", "10")
heif_enc(f"{tmp}/odd.png", f"{heif}/enc_lossless.heic", "-L", "-p", "chroma=444")
heif_enc(f"{tmp}/o6.jpg", f"{heif}/enc_exif6.heic", "-q", "90")

Image.fromarray(odd).save(f"{heif}/ph_q90.heic", quality=90)
Image.fromarray(odd).convert("L").save(f"{heif}/ph_grey.heic", quality=90)
pillow_heif.from_bytes(mode="RGB;16", size=(37, 23), data=deep.astype("<u2").tobytes()).save(
    f"{heif}/ph_10bit.heic", quality=90)
for o in (6, 5):
    Image.fromarray(odd).save(f"{heif}/ph_o{o}.heic", quality=90, exif=exif(o))
# A phone's HEIC: a grid of tiles (pillow-heif's tile_size, as Apple's 512), the last row and column
# cut by the picture's size; and turned by irot as well.
wide = picture(150, 100)
Image.fromarray(wide).save(f"{heif}/ph_grid.heic", quality=90, tile_size=64)
Image.fromarray(wide).save(f"{heif}/ph_grid_o6.heic", quality=90, tile_size=64, exif=exif(6))
assert open(f"{heif}/ph_grid.heic", "rb").read().count(b"grid") >= 1
for o in (6, 2):
    Image.fromarray(odd).save(f"{heif}/pil_o{o}.avif", quality=90, exif=exif(o))

for name in sorted(os.listdir(heif)):
    reference(name)
with open(os.path.join(heif, "index.tsv"), "w") as f:
    for name, w, h in index:
        f.write(f"{name}\t{w}\t{h}\n")


def cut(src, dst, keep):
    data = open(src, "rb").read()
    open(dst, "wb").write(data[: int(len(data) * keep)] if keep < 1 else data[:keep])


COLOURS = [(200, 40, 40), (40, 160, 60), (50, 70, 210)]


def mixed(root, leave=()):
    """Three classes of one colour each (noise on it), a file of each kind and writer in each; the
    same pictures at each call."""
    noise = np.random.default_rng(5)
    for c, colour in enumerate(COLOURS):
        d = os.path.join(root, f"cls{c}")
        os.makedirs(d)
        for k, name in enumerate(["a.png", "b.jpg", "c.heic", "d.avif", "e.heic", "f.avif"]):
            size = (40 + 4 * k, 32 + 2 * c)
            im = Image.fromarray(np.clip(np.array(colour) + noise.integers(-20, 21, (size[1], size[0], 3)), 0,
                                         255).astype(np.uint8))
            if f"cls{c}/{name}" in leave:
                continue
            path = os.path.join(d, name)
            if name in ("c.heic", "d.avif"):  # heif-enc's
                im.save(f"{tmp}/m.png")
                heif_enc(f"{tmp}/m.png", path, "-q", "85")
            else:  # Pillow's (pillow-heif's for .heic)
                im.save(path, quality=85)


mixed(os.path.join(out, "mixed"))
mixed(os.path.join(out, "broken/mixed_cut"))
mixed(os.path.join(out, "broken/mixed_removed"), leave=("cls1/c.heic", "cls2/d.avif"))
for f in ("cls1/c.heic", "cls2/d.avif"):
    p = os.path.join(out, "broken/mixed_cut", f)
    cut(p, p, 0.6)
cut(f"{heif}/enc_q90.heic", os.path.join(out, "broken/cut.heic"), 0.6)
cut(f"{heif}/enc_q90.avif", os.path.join(out, "broken/cut.avif"), 0.6)
cut(f"{heif}/enc_q90.heic", os.path.join(out, "broken/box.heic"), 20)
shutil.rmtree(tmp)
