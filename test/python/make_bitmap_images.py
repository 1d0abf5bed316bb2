"""BMP, GIF and PNM (PBM, PGM, PPM) files as users hold them, written with Pillow (and the PNM
layouts Pillow does not write, byte by byte), with Pillow's own decode of each, for the image
decoder's tests (test_bitmap_images).

  formats/<name>          one 37 x 23 picture (a gradient with noise) as BMP (24-bit RGB, 32-bit
                          RGBA, 8-bit grey, a 16-colour palette, 1-bit), GIF (RGB through Pillow's
                          palette, grey, a palette, a two-frame animation: its first frame, all
                          interlaced as Pillow writes them; not interlaced; a transparent index), PPM,
                          PGM and PBM as Pillow writes them (binary), a 16-bit PGM, and by hand: GIFs
                          of a local colour table over another global one, a frame inside a larger
                          screen with a transparent index (and again with a second graphic control
                          extension that gives none), a frame reaching past its screen with
                          indices past its 16-colour table, no colour table; a 16-bit PPM, a PPM and
                          PGM of maxval 100, a PGM with a comment in its header, plain (text) PBM, PGM
                          and PPM
  formats/<name>.rgb, .l  Pillow's decode: Image.open(f).convert("RGB") / ("L") as raw bytes; for
                          the 16-bit PGM Pillow's 16-bit values as round(v / 257) (its convert("L")
                          clips them, asserted here: docs/bitmap-formats.md); for the GIF of indices
                          past its table Pillow 13's (black there; Pillow 9.4's grey (i, i, i) there,
                          asserted here)
  formats/index.tsv       name, width, height per file
  gtsrb/000NN/            GTSRB's layout (the German traffic sign benchmark): 3 class folders of
                          .ppm files of varying size, each of its class's colour, and GT-000NN.csv,
                          the annotations, beside them
  named/cls<c>/           files named for another kind, as ImageNet holds PNGs named .JPEG: a PNG
                          and a PPM named .JPEG, a GIF named .png, a JPEG named .JPEG; each of its
                          class's colour
  broken/mixed_cut/       3 classes of one colour each of BMP, GIF, PPM, PGM and PNG files, with
                          cls0/b.bmp, cls1/g.gif and cls2/p.ppm cut to 60%; broken/mixed_removed/:
                          without them
  broken/<name>           rgb_cut.bmp, anim_cut.gif, rgb_cut.ppm, plain_cut.pgm (cut short); rle.bmp
                          (rgb.bmp saying BI_RLE8: a layout not read)
  huge/<name>             headers claiming 70000 x 70000 pixels (a BMP, a PPM) or 65535 x 65535 (a
                          GIF), a few bytes of data after them (Note [pixel limit])
  oom/                    cls0/ (two small PPMs) and cls1/big.gif (800 x 600), and coco.json of one
                          annotation on a.ppm and one on big.gif (Note [out of memory at the image
                          check]); oom_bmp/: cls0/a.ppm and cls1/tall.bmp, a header claiming 12000 x
                          12000 pixels, under max_image_pixels, and a few bytes of data; oom_jpeg/:
                          the same with cls1/tall.jpg, a progressive JPEG claiming 12000 x 12000;
                          oom_pnm/: with cls1/wide.ppm claiming 16000000 x 1; oom_webp/: with
                          cls1/wide.webp, a lossless 8000 x 8000 whose pixels take no bits;
                          oom_leak/: big.png and big.jpg, 800 x 600
usage: make_bitmap_images.py OUT_DIR
"""
import io
import json
import os
import struct
import sys

from image_writers import References, fresh_output, pictures, require

try:
    import numpy as np
    from PIL import Image
except ImportError as e:  # the runner (reference_python.sh) turns this into a failure where the venv exists
    print(f"make_bitmap_images: {e} (python3-pil, python3-numpy)")
    sys.exit(77)
require("make_bitmap_images", [(hasattr(Image, "open"), "no PIL.Image")])
out, fmt = fresh_output(sys.argv, "formats")
W, H, x, y, rgb, alpha, grey16 = pictures(41)
rgba = np.concatenate([rgb, alpha[..., None]], -1)
refs = References(fmt)
save, write = refs.save, refs.write

save(Image.fromarray(rgb), "rgb.bmp")
save(Image.fromarray(rgba), "rgba.bmp")
save(Image.fromarray(rgb[..., 0]), "grey.bmp")
save(Image.fromarray(rgb).quantize(16), "palette.bmp")
save(Image.fromarray(rgb[..., 1] > 128), "bilevel.bmp")
save(Image.fromarray(rgb), "rgb.gif")
save(Image.fromarray(rgb[..., 0]), "grey.gif")
save(Image.fromarray(rgb).quantize(16), "palette.gif")
save(Image.fromarray(rgb), "anim.gif", save_all=True, append_images=[Image.fromarray(255 - rgb)], duration=100)
save(Image.fromarray(rgb), "flat.gif", interlace=False)
# A transparent index (Note [GIF pixels as Pillow's]): its pixels read as the colour the table holds
# there, (90, 140, 125), as Pillow's convert("RGB") gives them, not black.
idx8 = ((x + y) % 8).astype(np.uint8)
t = Image.fromarray(idx8, "P")
t.putpalette([v for k in range(8) for v in (30 * k, 200 - 20 * k, 50 + 25 * k)])
save(t, "transparent.gif", transparency=3)
assert (np.fromfile(os.path.join(fmt, "transparent.gif.rgb"), np.uint8).reshape(H, W, 3)[idx8 == 3]
        == (90, 140, 125)).all()


def lzw(idx, bits):
    """Indices as a GIF's image data of minimum code size `bits`: a clear code every 2^bits - 2 codes
    keeps every code bits + 1 wide (no string table used: a valid stream any decoder reads)."""
    clear, width, codes = 1 << bits, bits + 1, [1 << bits]
    for k, v in enumerate(idx.reshape(-1), 1):
        codes += [int(v)] + ([clear] if k % (clear - 2) == 0 else [])
    acc = sum(c << (width * i) for i, c in enumerate(codes + [clear + 1]))
    data = acc.to_bytes((width * (len(codes) + 1) + 7) // 8, "little")
    return bytes([bits]) + b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255]
                                    for i in range(0, len(data), 255)) + b"\0"


def gif(screen, at, idx, glob=None, local=None, transparent=(), interlace=False):
    """A GIF written by hand: a screen of size `screen`, its tables (lists of colours: 2, 4, ... 256),
    a graphic control extension for each of `transparent` (a transparent index, or None: none given),
    one frame of indices `idx` at `at`."""
    def table(colours):
        return bytes(v for c in colours for v in c)

    def flags(colours):
        return 0 if colours is None else 0x80 | (len(colours).bit_length() - 2)
    h, w = idx.shape
    rows = idx
    if interlace:  # the rows in the file's order: every 8th from 0, 8th from 4, 4th from 2, 2nd from 1
        rows = idx[list(range(0, h, 8)) + list(range(4, h, 8)) + list(range(2, h, 4)) + list(range(1, h, 2))]
    data = b"GIF89a" + struct.pack("<HHBBB", *screen, flags(glob), 0, 0) + (table(glob) if glob else b"")
    for t in transparent:
        data += b"!\xf9\x04" + bytes([t is not None, 0, 0, t or 7]) + b"\0"
    data += b"," + struct.pack("<HHHHB", *at, w, h, flags(local) | (0x40 if interlace else 0))
    return data + (table(local) if local else b"") + lzw(rows, 8) + b";"


q = Image.fromarray(rgb).quantize(64)
qi, qp = np.asarray(q), [tuple(q.getpalette()[3 * k:3 * k + 3]) for k in range(64)]
write("local.gif", gif((W, H), (0, 0), qi, glob=qp[::-1], local=qp, interlace=True))
write("offset.gif", gif((W + 6, H + 4), (3, 2), qi, glob=qp, transparent=(5,)))
# Two graphic control extensions, the second giving no transparent index: the first's holds.
write("two_controls.gif", gif((W + 6, H + 4), (3, 2), qi, glob=qp, transparent=(5, None)))
write("nopalette.gif", gif((W, H), (0, 0), qi))
# A frame reaching past its screen (Pillow grows the picture to hold it), indices up to 63 in a table
# of 16: Pillow 13 shows the indices past the table black, Pillow 9.4 as grey (i, i, i).
path = os.path.join(fmt, "past_table.gif")
open(path, "wb").write(gif((30, 20), (5, 3), qi, glob=qp[:16]))
canvas = np.zeros((H + 3, W + 5), np.uint8)
canvas[3:, 5:] = qi
want = np.array(qp[:16] + [(0, 0, 0)] * 240, np.uint8)[canvas]
with Image.open(path) as im:
    shown = np.asarray(im.convert("RGB"))
past = canvas >= 16
assert (shown[~past] == want[~past]).all()
assert (shown[past] == want[past]).all() or (shown[past] == canvas[past][:, None]).all()
refs.reference("past_table.gif", rgb=want)
save(Image.fromarray(rgb), "rgb.ppm")
save(Image.fromarray(rgb[..., 0]), "grey.pgm")
save(Image.fromarray(rgb[..., 1] > 128), "bilevel.pbm")
save(Image.fromarray(grey16.astype(np.int32), "I"), "grey16.pgm", True)
# Pillow reads a 16-bit PGM's samples as they are (mode I) and its convert("L") clips them, min(v, 255):
# hpctrain scales them instead, as it does a 16-bit PNG's (docs/bitmap-formats.md).
with Image.open(os.path.join(fmt, "grey16.pgm")) as im:
    assert (np.asarray(im) == grey16).all() and (np.asarray(im.convert("L")) == np.minimum(grey16, 255)).all()
rgb16 = np.stack([grey16, 65535 - grey16, grey16 // 3], -1)
write("rgb16.ppm", f"P6\n{W} {H}\n65535\n".encode() + rgb16.astype(">u2").tobytes())
hundred = (rgb.astype(np.uint32) * 100 // 255).astype(np.uint8)
write("rgb_max100.ppm", f"P6 {W} {H} 100\n".encode() + hundred.tobytes())
write("grey_max100.pgm", f"P5\n{W} {H}\n100\n".encode() + hundred[..., 0].tobytes())
write("comment.pgm", f"P5\n# written by hand\n{W} {H}\n255\n".encode() + rgb[..., 2].tobytes())


def text(rows):
    """A plain PNM's samples: a line of decimal numbers a row."""
    return ("\n".join(" ".join(map(str, row)) for row in rows) + "\n").encode()


write("plain.ppm", f"P3\n{W} {H}\n255\n".encode() + text(rgb.reshape(H, -1)))
write("plain.pgm", f"P2\n{W} {H}\n255\n".encode() + text(rgb[..., 0]))
write("plain.pbm", f"P1\n{W} {H}\n".encode() + text((rgb[..., 1] <= 128).astype(np.uint8)))  # PBM: 1 is black
refs.write_index()

COLOURS = [(220, 30, 30), (30, 200, 40), (40, 60, 230)]


def gtsrb(root):
    """GTSRB's training layout: Final_Training/Images/000NN/000SS_000FF.ppm and GT-000NN.csv."""
    for c, colour in enumerate(COLOURS):
        d = os.path.join(root, f"{c:05d}")
        os.makedirs(d)
        rows = ["Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId"]
        for k, (w, h) in enumerate([(29, 30), (31, 33), (35, 34), (30, 29)][: 3 + (c == 1)]):
            name = f"00000_{k:05d}.ppm"
            Image.new("RGB", (w, h), colour).save(os.path.join(d, name))
            rows.append(f"{name};{w};{h};5;5;{w - 5};{h - 5};{c}")
        open(os.path.join(d, f"GT-{c:05d}.csv"), "w").write("\n".join(rows) + "\n")


gtsrb(os.path.join(out, "gtsrb"))
named = os.path.join(out, "named")
for c, (name, kind) in enumerate([("png_named.JPEG", "PNG"), ("ppm_named.JPEG", "PPM"), ("gif_named.png", "GIF")]):
    d = os.path.join(named, f"cls{c}")
    os.makedirs(d)
    Image.new("RGB", (20, 14), COLOURS[c]).save(os.path.join(d, name), format=kind)
    Image.new("RGB", (18, 16), COLOURS[c]).save(os.path.join(d, "real.JPEG"), format="JPEG", quality=95)


def mixed(root):
    for c, colour in enumerate(COLOURS):
        d = os.path.join(root, f"cls{c}")
        os.makedirs(d)
        for (name, size) in [("b.bmp", (31, 24)), ("g.gif", (16, 16)), ("p.ppm", (50, 37)), ("q.pgm", (20, 45)),
                             ("r.png", (26, 19))]:
            im = Image.new("RGB", size, colour)
            (im.convert("L") if name.endswith(".pgm") else im).save(os.path.join(d, name))


def cut(path, keep):
    data = open(path, "rb").read()
    open(path, "wb").write(data[: int(len(data) * keep)])


b = os.path.join(out, "broken")
mixed(os.path.join(b, "mixed_cut"))
mixed(os.path.join(b, "mixed_removed"))
for name in ("cls0/b.bmp", "cls1/g.gif", "cls2/p.ppm"):
    cut(os.path.join(b, "mixed_cut", name), 0.6)
    os.remove(os.path.join(b, "mixed_removed", name))
for name, src, keep in (("rgb_cut.bmp", "rgb.bmp", 0.7), ("anim_cut.gif", "anim.gif", 0.3),
                        ("rgb_cut.ppm", "rgb.ppm", 0.9), ("plain_cut.pgm", "plain.pgm", 0.8)):
    open(os.path.join(b, name), "wb").write(open(os.path.join(fmt, src), "rb").read())
    cut(os.path.join(b, name), keep)

d = bytearray(open(os.path.join(fmt, "rgb.bmp"), "rb").read())
d[30] = 1  # its compression BI_RLE8, which stb_image does not read (Pillow does)
open(os.path.join(b, "rle.bmp"), "wb").write(d)

huge = os.path.join(out, "huge")
os.makedirs(huge)
n = 70000
open(os.path.join(huge, "huge.bmp"), "wb").write(
    b"BM" + struct.pack("<IHHI", 54 + 64, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, n, n, 1, 24, 0, 0, 0, 0, 0, 0)
    + b"\0" * 64)
screen = struct.pack("<HHBBB", 65535, 65535, 0, 0, 0)  # no palette
frame = b",\0\0\0\0" + struct.pack("<HH", 65535, 65535) + b"\0\x08\x02\x4c\x01\0;"
open(os.path.join(huge, "huge.gif"), "wb").write(b"GIF89a" + screen + frame)
open(os.path.join(huge, "huge.ppm"), "wb").write(f"P6\n{n} {n}\n255\n".encode() + b"\0" * 64)
# Note [out of memory at the image check]: oom/ holds one image of 1.44 MB of pixels (a GIF, 800 x 600)
# among small ones, as an image folder (cls0/ small, cls1/ the large one) and a COCO JSON of one
# annotation each; the test refuses every allocation above 1 MiB.
oom = os.path.join(out, "oom")
for c in ("cls0", "cls1"):
    os.makedirs(os.path.join(oom, c))
Image.new("RGB", (12, 10), COLOURS[0]).save(os.path.join(oom, "cls0", "a.ppm"))
Image.new("RGB", (14, 9), COLOURS[1]).save(os.path.join(oom, "cls0", "b.ppm"))
Image.new("RGB", (800, 600), COLOURS[2]).save(os.path.join(oom, "cls1", "big.gif"))
images = [{"id": k + 1, "file_name": f, "width": w, "height": h}
          for k, (f, w, h) in enumerate([("cls0/a.ppm", 12, 10), ("cls1/big.gif", 800, 600)])]
annotations = [{"id": k + 1, "image_id": k + 1, "category_id": 1, "bbox": [1, 1, 6, 6], "keypoints": [3, 3, 2],
                "num_keypoints": 1, "iscrowd": 0, "area": 36} for k in range(2)]
categories = [{"id": 1, "name": "dot", "supercategory": "dot", "keypoints": ["centre"], "skeleton": []}]
json.dump({"images": images, "annotations": annotations, "categories": categories},
          open(os.path.join(oom, "coco.json"), "w"))
# oom_bmp/: cls0/a.ppm and cls1/tall.bmp, whose header claims 12000 x 12000 pixels (under
# max_image_pixels; stb_image's buffer for them 432 MB), a few bytes of data after it.
ob = os.path.join(out, "oom_bmp")
for c in ("cls0", "cls1"):
    os.makedirs(os.path.join(ob, c))
Image.new("RGB", (12, 10), COLOURS[0]).save(os.path.join(ob, "cls0", "a.ppm"))
n = 12000
open(os.path.join(ob, "cls1", "tall.bmp"), "wb").write(
    b"BM" + struct.pack("<IHHI", 54 + 64, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, n, n, 1, 24, 0, 0, 0, 0, 0, 0)
    + b"\0" * 64)
# oom_jpeg/: the same with cls1/tall.jpg, a progressive JPEG whose frame header claims 12000 x 12000
# pixels (libjpeg's coefficient buffers for them 432 MB).
oj = os.path.join(out, "oom_jpeg")
for c in ("cls0", "cls1"):
    os.makedirs(os.path.join(oj, c))
Image.new("RGB", (12, 10), COLOURS[0]).save(os.path.join(oj, "cls0", "a.ppm"))
buf = io.BytesIO()
Image.fromarray(rgb).save(buf, "JPEG", progressive=True, quality=90)
d = bytearray(buf.getvalue())
sof = d.index(b"\xff\xc2")  # SOF2: length, precision, height, width
d[sof + 5:sof + 9] = struct.pack(">HH", n, n)
open(os.path.join(oj, "cls1", "tall.jpg"), "wb").write(d)
# Note [decoders' out of memory]: oom_pnm/cls1/wide.ppm, a header claiming 16000000 x 1 pixels and a
# few bytes of data (libnetpbm's row buffer for it 512 MB, our pixels 16-48 MB); oom_webp/cls1/
# wide.webp, a lossless WebP of 8000 x 8000 pixels whose five Huffman codes each hold one symbol, so
# that no pixel takes a bit (libwebp's own ARGB buffer for it 256 MB, our RGB 192 MB).
pnm = os.path.join(out, "oom_pnm")
for c in ("cls0", "cls1"):
    os.makedirs(os.path.join(pnm, c))
Image.new("RGB", (12, 10), COLOURS[0]).save(os.path.join(pnm, "cls0", "a.ppm"))
open(os.path.join(pnm, "cls1", "wide.ppm"), "wb").write(b"P6\n16000000 1\n255\n" + b"\0" * 64)
ow = os.path.join(out, "oom_webp")
for c in ("cls0", "cls1"):
    os.makedirs(os.path.join(ow, c))
Image.new("RGB", (12, 10), COLOURS[0]).save(os.path.join(ow, "cls0", "a.ppm"))
bits = [(0x2F, 8), (8000 - 1, 14), (8000 - 1, 14), (0, 1), (0, 3), (0, 1), (0, 1), (0, 1)]  # VP8L header:
# no transform, no colour cache, no meta Huffman codes; then green, red, blue, alpha and distance codes,
# each a simple code of one 1-bit symbol (0)
bits += [(1, 1), (0, 1), (0, 1), (0, 1)] * 5
value = sum(v << sum(n for _, n in bits[:k]) for k, (v, _) in enumerate(bits))
vp8l = value.to_bytes((sum(n for _, n in bits) + 7) // 8, "little")
vp8l += b"\0" * (len(vp8l) % 2)
chunk = b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l
open(os.path.join(ow, "cls1", "wide.webp"), "wb").write(b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk)
# oom_leak/: big.png and big.jpg of 800 x 600 pixels (1.44 MB as RGB), whose pixel buffer the test
# refuses inside libpng's and libjpeg's decode.
ol = os.path.join(out, "oom_leak")
os.makedirs(ol)
Image.new("RGB", (800, 600), COLOURS[2]).save(os.path.join(ol, "big.png"))
Image.new("RGB", (800, 600), COLOURS[2]).save(os.path.join(ol, "big.jpg"))
print(f"make_bitmap_images: wrote {out}")
