"""WebP and TIFF files as users hold them, written with Pillow (and a few TIFF layouts Pillow does not
write, byte by byte), with Pillow's own decode of each, for the image decoder's tests
(test_image_formats, cli_image_decks).

  formats/<name>.webp|.tif  one 37 x 23 picture (a gradient with noise; with alpha: a ramp through 0)
                          as lossless and lossy WebP (RGB, RGBA), an animated WebP (its first frame);
                          TIFF uncompressed, LZW and deflate as RGB, RGBA, grey and 16-bit grey; grey
                          with alpha, 1-bit (CCITT group 4), a palette, JPEG-compressed, two pages,
                          16-bit big-endian (MM), and written by hand: tiles of 16 x 16, planes
                          (PlanarConfiguration 2: RGB; grey with alpha, which Pillow cannot read:
                          its stored grey), 16-bit RGB
  formats/<name>.rgb, .l  Pillow's decode: Image.open(f).convert("RGB") / ("L") as raw bytes; for
                          16-bit files Pillow's 16-bit values as round(v / 257) (Note [16-bit TIFFs])
  formats/index.tsv       name, width, height per file
  formats/grey16.png      the 16-bit grey values of grey16_raw.tif as a 16-bit PNG
  mixed/cls<c>/           3 classes of one colour each: PNG, JPEG, lossless and lossy WebP, LZW and
                          uncompressed TIFF (.tif, .tiff) of varying size; beside them (as in broken/mixed_*)
                          image files of kinds not read (.jp2 2, .j2k 1, .JXL 1) and files of no image
                          (README.txt, .DS_Store, labels.csv)
  not_read_only/cls<c>/   only files of kinds not read (.jp2 2, .j2k 1) and of no image
  broken/mixed_cut/       mixed/ with cls1/p2.webp cut to half its bytes and cls2/p5.tiff (uncompressed,
                          its directory first) with its strips cut; broken/mixed_removed/: without them
  broken/webp_cut.webp, tiff_lzw_cut.tif (its directory, at its end, lost), tiff_middle.tif (deflate,
                          bytes flipped inside its strip, ending well), float.tif (32-bit floats),
                          o9_cut.tif (orient/o9.tif, its strip cut)
  orient/<name>.webp|.tif  the picture of formats/ with EXIF Orientation N: o<N>.webp (lossless, the
                          EXIF chunk as Pillow writes it, without "Exif\0\0") and o<N>.tif (Pillow's
                          own writer, tag 274) for N = 1..8, o6_lzw.tif (libtiff's writer), lossy_o5.webp,
                          anim_o8.webp (its chunk with "Exif\0\0"), o9.webp and o9.tif (outside 1..8);
                          o<N>.png (Pillow's eXIf chunk, before the image data) for N = 1..9, and
                          o6_late.png (the chunk moved after the image data); <name>.png.up.png: the upright
                          picture as a PNG without EXIF (libpng's grey is not Pillow's)
  orient/<name>.rgb, .l   Pillow's upright image of it (a WebP's ImageOps.exif_transpose; a TIFF as
                          Image.open reads it, turned), .convert("RGB") / ("L") as raw bytes
  orient/index.tsv        name, width, height (upright) per file
  orient/coco/            a COCO keypoints JSON (train.json) of 10 faces, one an image: lossless WebPs
                          with Orientation 1..8 and TIFFs with 5 and 6, each drawn upright (a red, green
                          and blue dot: left eye, right eye, nose) and stored as Pillow turns it back
                          upright; the JSON's sizes and keypoints are the upright image's; tiff_stored.json:
                          the same with the TIFF of Orientation 6 given its stored size
usage: make_image_formats.py OUT_DIR
"""
import json
import os
import shutil
import struct
import sys

from image_writers import References, fresh_output, pictures, require

try:
    import numpy as np
    from PIL import Image, ImageDraw, ImageOps, features
except ImportError as e:  # the runner (reference_python.sh) turns this into a failure where the venv exists
    print(f"make_image_formats: {e} (python3-pil, python3-numpy)")
    sys.exit(77)
require("make_image_formats",
        [(features.check(f), f"this Pillow lacks {f}") for f in ("webp", "webp_anim", "libtiff")])
out, fmt = fresh_output(sys.argv, "formats")
W, H, x, y, rgb, alpha, grey16 = pictures(37)
alpha[:, 3] = 128
rgba = np.concatenate([rgb, alpha[..., None]], -1)
refs = References(fmt)
save, reference = refs.save, refs.reference

save(Image.fromarray(rgb), "lossless_rgb.webp", lossless=True)
save(Image.fromarray(rgba), "lossless_rgba.webp", lossless=True)
save(Image.fromarray(rgb), "lossy_rgb.webp", quality=80)
save(Image.fromarray(rgba), "lossy_rgba.webp", quality=80)
save(Image.fromarray(rgba), "anim.webp", save_all=True, append_images=[Image.fromarray(255 - rgba)], duration=100)
for compression in ("raw", "tiff_lzw", "tiff_adobe_deflate"):
    c = compression.split("_")[-1]
    save(Image.fromarray(rgb), f"rgb_{c}.tif", compression=compression)
    save(Image.fromarray(rgba), f"rgba_{c}.tif", compression=compression)
    save(Image.fromarray(rgb[..., 0]), f"grey_{c}.tif", compression=compression)
    save(Image.fromarray(grey16, "I;16"), f"grey16_{c}.tif", True, compression=compression)
save(Image.fromarray(np.stack([rgb[..., 0], alpha], -1), "LA"), "grey_alpha.tif", compression="tiff_lzw")
save(Image.fromarray(rgb[..., 1] > 128), "bilevel.tif", compression="group4")
save(Image.fromarray(rgb).quantize(16), "palette.tif", compression="tiff_lzw")
save(Image.fromarray(rgb), "jpeg.tif", compression="jpeg", quality=90)
save(Image.fromarray(rgb), "pages.tif", save_all=True, append_images=[Image.fromarray(255 - rgb)])
save(Image.fromarray(grey16.astype(">u2"), "I;16B"), "grey16_be.tif", True)
Image.fromarray(grey16, "I;16").save(os.path.join(fmt, "grey16.png"))


def tiff_by_hand(name, samples, bits, photometric, tile=None, planar=1, order="<"):
    """An uncompressed TIFF of `samples` (H x W x S) with `bits` per sample: in tiles of `tile` x
    `tile` pixels (edge tiles padded), or one strip per plane; PlanarConfiguration `planar`; the
    second or fourth sample an alpha."""
    h, w, s = samples.shape
    dtype = np.dtype(order + ("u1" if bits == 8 else "u2"))
    planes = [samples] if planar == 1 else [samples[..., k:k + 1] for k in range(s)]
    blocks = []
    for p in planes:
        if tile is None:
            blocks.append(p.astype(dtype).tobytes())
            continue
        for ty in range(0, h, tile):
            for tx in range(0, w, tile):
                t = np.zeros((tile, tile, p.shape[2]), dtype)
                part = p[ty:ty + tile, tx:tx + tile]
                t[:part.shape[0], :part.shape[1]] = part
                blocks.append(t.tobytes())
    data, offsets, at = b"", [], 8
    for b in blocks:
        offsets.append(at + len(data))
        data += b
    extra = 8 + len(data)  # after the data: the values that do not fit an entry, then the directory
    values, entries = b"", []

    def entry(tag, kind, items):
        nonlocal values
        packed = b"".join(struct.pack(order + {3: "H", 4: "I"}[kind], v) for v in items)
        if len(packed) <= 4:
            entries.append((tag, struct.pack(order + "HHI", tag, kind, len(items)) + packed.ljust(4, b"\0")))
        else:
            entries.append((tag, struct.pack(order + "HHII", tag, kind, len(items), extra + len(values))))
            values += packed

    entry(256, 4, [w]), entry(257, 4, [h]), entry(258, 3, [bits] * s), entry(259, 3, [1]), entry(262, 3, [photometric])
    if tile is None:
        entry(273, 4, offsets), entry(277, 3, [s]), entry(278, 4, [h]), entry(279, 4, [len(b) for b in blocks])
    else:
        entry(277, 3, [s])
    entry(284, 3, [planar])
    if s in (2, 4):
        entry(338, 3, [2])  # ExtraSamples: an alpha, not premultiplied
    if tile is not None:
        entry(322, 4, [tile]), entry(323, 4, [tile]), entry(324, 4, offsets), entry(325, 4, [len(b) for b in blocks])
    ifd = extra + len(values)
    ifd += ifd % 2
    head = (b"II*\0" if order == "<" else b"MM\0*") + struct.pack(order + "I", ifd)
    body = head + data + values + b"\0" * ((extra + len(values)) % 2)
    body += struct.pack(order + "H", len(entries)) + b"".join(e for _, e in sorted(entries)) + struct.pack(order + "I", 0)
    open(os.path.join(fmt, name), "wb").write(body)


tiff_by_hand("tiled.tif", rgb, 8, 2, tile=16)
tiff_by_hand("planes.tif", rgb, 8, 2, planar=2)
tiff_by_hand("tiled_planes_be.tif", rgb, 8, 2, tile=16, planar=2, order=">")
for name in ("tiled.tif", "planes.tif", "tiled_planes_be.tif"):
    reference(name)
tiff_by_hand("grey_alpha_planes.tif", np.stack([rgb[..., 0], alpha], -1), 8, 1, planar=2)
reference("grey_alpha_planes.tif", grey=np.ascontiguousarray(rgb[..., 0]))  # Pillow 9.4: "unknown raw mode"
rgb16 = np.stack([grey16, 65535 - grey16, grey16 // 3], -1)
tiff_by_hand("rgb16.tif", rgb16, 16, 2)
reference("rgb16.tif", rgb16)
refs.write_index()

COLOURS = [(220, 30, 30), (30, 200, 40), (40, 60, 230)]
SIZES = [(31, 24), (16, 16), (50, 37), (20, 45), (26, 19), (33, 28)]
KINDS = [("p0.png", {}), ("p1.jpg", {"quality": 95}), ("p2.webp", {"lossless": True}),
         ("p3.webp", {"quality": 90}), ("p4.tif", {"compression": "tiff_lzw"}), ("p5.tiff", {})]


def mixed(root):
    for c, colour in enumerate(COLOURS):
        d = os.path.join(root, f"cls{c}")
        os.makedirs(d)
        for (name, kw), size in zip(KINDS, SIZES):
            Image.new("RGB", size, colour).save(os.path.join(d, name), **kw)
    not_read(root)


def not_read(root, only=False):
    """Note [image kinds not read]: image files of kinds not read among the class folders (.jp2 2,
    .j2k 1, .JXL 1; `only`: .jp2 2, .j2k 1 in folders of nothing else) and files that are no image
    (a README, a hidden .DS_Store, a CSV of labels). Their first bytes only: the name is what is
    counted (Debian's Pillow writes no JPEG XL)."""
    for c, name in [(0, "g0.jp2"), (0, "g1.jp2"), (1, "b.j2k")] + ([] if only else [(2, "scan.JXL")]):
        d = os.path.join(root, f"cls{c}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, name), "wb").write(b"\xff\x0a" if name.endswith(".JXL") else b"\0\0\0\x0cjP  ")
    for c, name in [(0, "README.txt"), (1, ".DS_Store"), (1, "labels.csv")]:
        open(os.path.join(root, f"cls{c}", name), "w").write("not an image\n")


def cut(path, keep):
    data = open(path, "rb").read()
    open(path, "wb").write(data[: int(len(data) * keep)])


mixed(os.path.join(out, "mixed"))
not_read(os.path.join(out, "not_read_only"), only=True)
mixed(os.path.join(out, "broken/mixed_cut"))
cut(os.path.join(out, "broken/mixed_cut/cls1/p2.webp"), 0.5)
cut(os.path.join(out, "broken/mixed_cut/cls2/p5.tiff"), 0.6)
mixed(os.path.join(out, "broken/mixed_removed"))
for name in ("cls1/p2.webp", "cls2/p5.tiff"):
    os.remove(os.path.join(out, "broken/mixed_removed", name))
b = os.path.join(out, "broken")
shutil.copy(os.path.join(fmt, "lossy_rgb.webp"), os.path.join(b, "webp_cut.webp"))
cut(os.path.join(b, "webp_cut.webp"), 0.5)
shutil.copy(os.path.join(fmt, "rgb_lzw.tif"), os.path.join(b, "tiff_lzw_cut.tif"))
cut(os.path.join(b, "tiff_lzw_cut.tif"), 0.7)
d = bytearray(open(os.path.join(fmt, "rgb_deflate.tif"), "rb").read())
with Image.open(os.path.join(fmt, "rgb_deflate.tif")) as im:
    start, length = im.tag_v2[273][0], im.tag_v2[279][0]
mid = start + length // 2
d[mid:mid + 4] = bytes(v ^ 0xFF for v in d[mid:mid + 4])
open(os.path.join(b, "tiff_middle.tif"), "wb").write(d)
Image.fromarray(grey16.astype(np.float32), "F").save(os.path.join(b, "float.tif"))

# Note [EXIF orientation] (image_decode.cpp), Note [WebP orientation] (image_webp.cpp), Note [TIFF
# orientation]: the picture stored with each Orientation, and the upright image Pillow shows of it.
ori = os.path.join(out, "orient")
os.makedirs(os.path.join(ori, "coco"))
T = Image.Transpose
# The method exif_transpose turns each Orientation upright with, and the one that undoes it.
UPRIGHT = {2: T.FLIP_LEFT_RIGHT, 3: T.ROTATE_180, 4: T.FLIP_TOP_BOTTOM, 5: T.TRANSPOSE, 6: T.ROTATE_270,
           7: T.TRANSVERSE, 8: T.ROTATE_90}
UNDO = {**UPRIGHT, 6: T.ROTATE_90, 8: T.ROTATE_270}


def exif_of(o):
    exif = Image.Exif()
    exif[0x0112] = o
    return exif.tobytes()  # "Exif\0\0" and the TIFF header: Pillow's still WebP drops the six bytes


def shown_upright(path):
    """The file as Pillow shows it upright: a WebP by ImageOps.exif_transpose; a TIFF as Image.open
    reads it, which turns it by its Orientation tag (Pillow 6.2 and later; Pillow 9.4's exif_transpose
    would turn it a second time: python-pillow/Pillow#7381)."""
    with Image.open(path) as im:
        im.load()
        return im.copy() if path.endswith(".tif") else ImageOps.exif_transpose(im)


upright_index = []


def save_turned(im, o, name, **kw):
    path = os.path.join(ori, name)
    im.save(path, **kw)
    up = shown_upright(path)
    with Image.open(path) as first:  # the stored first frame (an animation's) turned by the table
        first.load()
        want = np.asarray(first.convert("RGB")) if name.endswith(".webp") else np.asarray(im.convert("RGB"))
    want = Image.fromarray(want).transpose(UPRIGHT[o]) if o in UPRIGHT else Image.fromarray(want)
    assert up.convert("RGB").tobytes() == want.tobytes(), name
    open(path + ".rgb", "wb").write(up.convert("RGB").tobytes())
    open(path + ".l", "wb").write(up.convert("L").tobytes())
    if name.endswith(".png"):  # libpng's grey is not Pillow's: the upright picture as a PNG to compare
        up.convert("RGB").save(path + ".up.png")
    upright_index.append(f"{name}\t{up.size[0]}\t{up.size[1]}\n")


for o in range(1, 10):  # 9: outside 1..8, the stored pixels
    save_turned(Image.fromarray(rgb), o, f"o{o}.webp", lossless=True, exif=exif_of(o))
    save_turned(Image.fromarray(rgb), o, f"o{o}.tif", tiffinfo={274: o})
    save_turned(Image.fromarray(rgb), o, f"o{o}.png", exif=exif_of(o))  # eXIf before IDAT, without "Exif\0\0"
save_turned(Image.fromarray(rgb), 6, "o6_lzw.tif", tiffinfo={274: 6}, compression="tiff_lzw")
save_turned(Image.fromarray(rgb), 5, "lossy_o5.webp", quality=80, exif=exif_of(5))
save_turned(Image.fromarray(rgba), 8, "anim_o8.webp", save_all=True, append_images=[Image.fromarray(255 - rgba)],
            duration=100, lossless=True, exif=exif_of(8))
for name, prefixed in (("o6.webp", False), ("anim_o8.webp", True)):  # the EXIF chunk's payload, both ways
    d = open(os.path.join(ori, name), "rb").read()
    assert (d[d.index(b"EXIF") + 8:][:6] == b"Exif\0\0") == prefixed, name
# Note [PNG orientation]: a PNG's eXIf chunk after its image data (moved there byte by byte; Pillow
# reads it as it loads the image) turns it too.
d = open(os.path.join(ori, "o6.png"), "rb").read()
at = d.index(b"eXIf") - 4
n = 12 + int.from_bytes(d[at:at + 4], "big")
late = d[:at] + d[at + n:]
open(os.path.join(ori, "o6_late.png"), "wb").write(late[:-12] + d[at:at + n] + late[-12:])
assert late.index(b"IDAT") < len(late) - 12
with Image.open(os.path.join(ori, "o6_late.png")) as im:
    im.load()
    up = ImageOps.exif_transpose(im)
    assert up.size == (23, 37) and up.tobytes() == open(os.path.join(ori, "o6.png.rgb"), "rb").read()
    open(os.path.join(ori, "o6_late.png.rgb"), "wb").write(up.convert("RGB").tobytes())
    open(os.path.join(ori, "o6_late.png.l"), "wb").write(up.convert("L").tobytes())
    shutil.copy(os.path.join(ori, "o6.png.up.png"), os.path.join(ori, "o6_late.png.up.png"))
    upright_index.append(f"o6_late.png\t{up.size[0]}\t{up.size[1]}\n")
open(os.path.join(ori, "index.tsv"), "w").write("".join(upright_index))
shutil.copy(os.path.join(ori, "o9.tif"), os.path.join(b, "o9_cut.tif"))
cut(os.path.join(b, "o9_cut.tif"), 0.6)  # libtiff complains of the 9 first, then of the strip cut

# COCO faces drawn upright and stored turned back, so that Pillow shows each upright.
images, annotations = [], []
for n, (o, kind) in enumerate([(o, "webp") for o in range(1, 9)] + [(5, "tif"), (6, "tif")]):
    w, h = 30 + 2 * n, 44 - n  # upright, taller than wide
    up = Image.new("RGB", (w, h), (128, 128, 128))
    draw = ImageDraw.Draw(up)
    pts = [(7 + n, 9), (19 + n // 2, 12), (12, 25 + n)]
    kp = []
    for (x, y), colour in zip(pts, [(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
        draw.rectangle((x - 1, y - 1, x + 1, y + 1), fill=colour)
        kp += [x + 0.5, y + 0.5, 2]
    name = f"face{n}_o{o}.{kind}"
    stored = up.transpose(UNDO[o]) if o in UNDO else up
    path = os.path.join(ori, "coco", name)
    if kind == "webp":
        stored.save(path, lossless=True, exif=exif_of(o))
    else:
        stored.save(path, tiffinfo={274: o})
    assert shown_upright(path).convert("RGB").tobytes() == up.tobytes(), name
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    bbox = [min(xs) - 4, min(ys) - 4, max(xs) - min(xs) + 9, max(ys) - min(ys) + 9]
    images.append({"id": 200 + n, "file_name": name, "width": w, "height": h})
    annotations.append({"id": n + 1, "image_id": 200 + n, "category_id": 1, "bbox": bbox, "keypoints": kp,
                        "num_keypoints": 3, "iscrowd": 0, "area": bbox[2] * bbox[3]})
categories = [{"id": 1, "name": "face", "supercategory": "face", "keypoints": ["left_eye", "right_eye", "nose"],
               "skeleton": [[1, 3], [2, 3]]}]
json.dump({"images": images, "annotations": annotations, "categories": categories},
          open(os.path.join(ori, "coco", "train.json"), "w"))
# The TIFF turned by 6 annotated as stored (its stored size): refused whatever exif_orientation says.
images[9]["width"], images[9]["height"] = images[9]["height"], images[9]["width"]
json.dump({"images": images, "annotations": annotations, "categories": categories},
          open(os.path.join(ori, "coco", "tiff_stored.json"), "w"))
print(f"make_image_formats: wrote {out}")
