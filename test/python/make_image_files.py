"""Image files as users hold them, written with Pillow, for the image data sources' tests
(test_image_files, cli_image_decks).

  folder/train/<class>/   classes "ant", "bee", "cat": grey PNGs of 6 x 5 pixels whose values the
                          test knows: pixel(x, y) = (40 c + 7 i + 3 x + 11 y) % 256 for class c, image i
                          (i = 0..3, files i0.png ... in name order); plus in "bee" a JPEG of one colour
                          (RGB 200, 40, 90, 23 x 17 pixels) named j.jpg
  folder/val/<class>/     "ant" and "cat" only (1 grey PNG each, i = 0)
  photos/<class>/         RGB JPEGs and PNGs of one colour each and of varying sizes, 3 classes x 4
                          (for the decks: colour = class; the tests check the sizes and colours)
  broken/truncated/<class>/  photos/ with one JPEG cut to half its bytes (cls1/p2.jpg)
  broken/notimage/<class>/   photos/ with one file named .png holding text (cls0/p1.png)
  broken/middle_jpeg/<class>/, broken/middle_png/<class>/  photos/ with one file damaged in its
                          middle, ending well (cls1/p2.jpg: an end marker in its scan; cls2/p1.png:
                          IDAT bytes flipped): only a whole decode finds them
  broken/two/<class>/     photos/ with cls1/p2.jpg damaged in its middle and cls0/p3.png no image;
                          broken/two_removed/<class>/: photos/ without those two files
  broken/all/<class>/     two files, neither an image
  coco/train.json + coco/images/   COCO keypoints (see coco_files below)
  exif/o<N>.jpg, exif/o<N>.png  a 24 x 16 RGB JPEG of six 8 x 8 blocks of colour with EXIF
                          Orientation N (1..8), and Pillow's ImageOps.exif_transpose of it (PNG)
  exif_odd/<case>.jpg     the same pixels with EXIF blocks built byte by byte: malformed ones (see
                          exif_odd below) and two valid ones Pillow turns (long6, motorola6: their PNGs)
usage: make_image_files.py OUT_DIR
"""
import json
import os
import shutil
import struct
import sys

try:
    import numpy as np
    from PIL import Image, ImageDraw, ImageOps
except ImportError as e:  # the runner (reference_python.sh) turns this into a failure where the venv exists
    print(f"make_image_files: {e} (python3-pil, python3-numpy)")
    sys.exit(77)

out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True)


def grey(c, i, w=6, h=5):
    im = Image.new("L", (w, h))
    im.putdata([(40 * c + 7 * i + 3 * x + 11 * y) % 256 for y in range(h) for x in range(w)])
    return im


for part, classes, count in (("train", ("ant", "bee", "cat"), 4), ("val", ("ant", "cat"), 1)):
    for name in classes:
        c = ("ant", "bee", "cat").index(name)
        d = os.path.join(out, "folder", part, name)
        os.makedirs(d)
        for i in range(count):
            grey(c, i).save(os.path.join(d, f"i{i}.png"))
Image.new("RGB", (23, 17), (200, 40, 90)).save(os.path.join(out, "folder/train/bee/j.jpg"), quality=95)

COLOURS = [(220, 30, 30), (30, 200, 40), (40, 60, 230)]
SIZES = [(31, 24), (16, 16), (50, 37), (20, 45)]


def photos(root):
    for c, colour in enumerate(COLOURS):
        d = os.path.join(root, f"cls{c}")
        os.makedirs(d)
        for i, size in enumerate(SIZES):
            ext = "jpg" if i % 2 == 0 else "png"
            Image.new("RGB", size, colour).save(os.path.join(d, f"p{i}.{ext}"))


photos(os.path.join(out, "photos"))
photos(os.path.join(out, "broken/truncated"))
cut = os.path.join(out, "broken/truncated/cls1/p2.jpg")
data = open(cut, "rb").read()
open(cut, "wb").write(data[: len(data) // 2])
photos(os.path.join(out, "broken/notimage"))
open(os.path.join(out, "broken/notimage/cls0/p1.png"), "w").write("not an image\n")


def damage_middle(path):
    """Overwrites two bytes in the middle of the image data of `path`, leaving its header and its end
    as they were (a disk or copy error): a JPEG gets an end-of-image marker inside its scan (libjpeg
    warns of a premature end of the data segment; Pillow shows the image), a PNG's IDAT bytes are
    flipped (its CRC no longer matches)."""
    d = bytearray(open(path, "rb").read())
    if path.endswith(".jpg"):
        sos = d.index(b"\xff\xda")
        start = sos + 2 + struct.unpack(">H", d[sos + 2:sos + 4])[0]
        mid = (start + len(d) - 2) // 2
        d[mid:mid + 2] = b"\xff\xd9"
    else:
        at = d.index(b"IDAT")
        mid = at + 4 + struct.unpack(">I", d[at - 4:at])[0] // 2
        d[mid:mid + 2] = bytes([d[mid] ^ 0xFF, d[mid + 1] ^ 0xFF])
    open(path, "wb").write(d)


for name, damaged in (("middle_jpeg", "cls1/p2.jpg"), ("middle_png", "cls2/p1.png")):
    photos(os.path.join(out, "broken", name))
    damage_middle(os.path.join(out, "broken", name, damaged))
# Two broken files among good ones (broken_images skip): one damaged in its middle, one no image;
# and the same folder without them.
photos(os.path.join(out, "broken/two"))
damage_middle(os.path.join(out, "broken/two/cls1/p2.jpg"))
open(os.path.join(out, "broken/two/cls0/p3.png"), "w").write("not an image\n")
photos(os.path.join(out, "broken/two_removed"))
for name in ("cls1/p2.jpg", "cls0/p3.png"):
    os.remove(os.path.join(out, "broken/two_removed", name))
# Nothing but broken files: still an error with broken_images skip.
for name in ("cls0/a.png", "cls1/b.jpg"):
    os.makedirs(os.path.dirname(os.path.join(out, "broken/all", name)), exist_ok=True)
    open(os.path.join(out, "broken/all", name), "w").write("not an image\n")
# A 16-bit grey PNG (no gAMA chunk, as PIL writes it) and its 8-bit twin (Note [16-bit PNGs]).
os.makedirs(os.path.join(out, "depth"), exist_ok=True)
ramp = (np.arange(0, 256, 5, dtype=np.uint16) * 257).reshape(4, 13)
Image.fromarray(ramp, mode="I;16").save(os.path.join(out, "depth/ramp16.png"))
Image.fromarray((ramp // 257).astype(np.uint8), mode="L").save(os.path.join(out, "depth/ramp8.png"))
rgba = np.zeros((1, 4, 4), np.uint8)  # one colour at alpha 255, 128, 0, 64 (Note [PNG alpha])
rgba[0, :, :3], rgba[0, :, 3] = (200, 100, 50), (255, 128, 0, 64)
Image.fromarray(rgba, mode="RGBA").save(os.path.join(out, "depth/rgba.png"))
photos(os.path.join(out, "broken/cmyk"))  # a CMYK JPEG, as print work saves them
cmyk = os.path.join(out, "broken/cmyk/cls1/p2.jpg")
Image.open(cmyk).convert("CMYK").save(cmyk)


def coco_files(root):
    """COCO keypoints: 6 photos of varying size, grey background, each with dots of known colours at
    the keypoints of one or two objects. Category 1 "face" (left_eye red, right_eye green, nose
    blue; flip pairs by the left/right names), category 2 "bar" (end_a white, end_b black; no
    left/right names). Dots are 3x3 pixels; keypoints at their centres (x + 0.5, y + 0.5 of the
    middle pixel); the bbox is the keypoints' box with 4 pixels around."""
    os.makedirs(os.path.join(root, "images"))
    images, annotations = [], []
    sizes = [(40, 30), (64, 48), (36, 52), (50, 50), (45, 33), (58, 41)]
    for n, (w, h) in enumerate(sizes):
        name = f"img{n}.{'jpg' if n % 2 else 'png'}"
        im = Image.new("RGB", (w, h), (128, 128, 128))
        draw = ImageDraw.Draw(im)
        objects = [(1, [(8 + n, 8), (20 + n, 9), (14 + n, 16)], [2, 2, 2])]
        if n % 2 == 0:
            objects.append((2, [(w - 12, h - 14), (w - 5, h - 6)], [2, 1 if n else 0]))
        for cat, pts, vis in objects:
            colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)] if cat == 1 else [(255, 255, 255), (0, 0, 0)]
            kp = []
            for (x, y), v, colour in zip(pts, vis, colours):
                draw.rectangle((x - 1, y - 1, x + 1, y + 1), fill=colour)
                kp += [x + 0.5, y + 0.5, v] if v else [0, 0, 0]
            xs = [p[0] for p, v in zip(pts, vis) if v]
            ys = [p[1] for p, v in zip(pts, vis) if v]
            bbox = [min(xs) - 4, min(ys) - 4, max(xs) - min(xs) + 9, max(ys) - min(ys) + 9]
            annotations.append({"id": len(annotations) + 1, "image_id": 100 + n, "category_id": cat,
                                "bbox": bbox, "keypoints": kp, "num_keypoints": sum(1 for v in vis if v),
                                "iscrowd": 0, "area": bbox[2] * bbox[3]})
        if name.endswith("jpg"):  # no chroma subsampling: the dots keep their colours
            im.save(os.path.join(root, "images", name), quality=95, subsampling=0)
        else:
            im.save(os.path.join(root, "images", name))
        images.append({"id": 100 + n, "file_name": "images/" + name, "width": w, "height": h})
    categories = [
        {"id": 1, "name": "face", "supercategory": "face", "keypoints": ["left_eye", "right_eye", "nose"],
         "skeleton": [[1, 3], [2, 3]]},
        {"id": 2, "name": "bar", "supercategory": "bar", "keypoints": ["end_a", "end_b"], "skeleton": [[1, 2]]},
    ]
    return {"images": images, "annotations": annotations, "categories": categories}


coco = os.path.join(out, "coco")
good = coco_files(coco)
# A crowd annotation as COCO writes one (RLE mask, keypoints all 0; its image_id need not be among
# the images): left out and counted in the log (cli_image_decks).
good["annotations"].append({"id": 900, "image_id": 999, "category_id": 1, "iscrowd": 1, "area": 10,
                            "segmentation": {"counts": [0, 10, 1190], "size": [30, 40]}, "bbox": [0, 0, 5, 2],
                            "keypoints": [0] * 9, "num_keypoints": 0})
json.dump(good, open(os.path.join(coco, "train.json"), "w"))
# Broken files: an annotation naming an image that is not there, a keypoint outside its image, a
# file_name whose file is missing.
bad = json.loads(json.dumps(good))
bad["annotations"][3]["image_id"] = 999
json.dump(bad, open(os.path.join(coco, "no_image.json"), "w"))
bad = json.loads(json.dumps(good))
bad["annotations"][2]["keypoints"][0] = 500.5
json.dump(bad, open(os.path.join(coco, "outside.json"), "w"))
bad = json.loads(json.dumps(good))
bad["images"][4]["file_name"] = "images/gone.jpg"
json.dump(bad, open(os.path.join(coco, "missing_file.json"), "w"))
# Image sizes other than the files' (Note [image sizes]): img1 (64 x 48) given as 48 x 64, as an
# EXIF-rotated photo annotated upright is; img2 (36 x 52) given 10 times larger, as a photograph
# shrunk after annotating is.
bad = json.loads(json.dumps(good))
bad["images"][1]["width"], bad["images"][1]["height"] = 48, 64
json.dump(bad, open(os.path.join(coco, "turned.json"), "w"))
bad = json.loads(json.dumps(good))
bad["images"][2]["width"], bad["images"][2]["height"] = 360, 520
json.dump(bad, open(os.path.join(coco, "resized.json"), "w"))
# Two of them (Note [file checks over ranks]): img1 turned (images[1], rank 1's share at 2 ranks)
# and img2's file gone (images[2], rank 0's): the first over all ranks, images[1], is reported.
bad = json.loads(json.dumps(good))
bad["images"][1]["width"], bad["images"][1]["height"] = 48, 64
bad["images"][2]["file_name"] = "images/gone.png"
json.dump(bad, open(os.path.join(coco, "two_bad.json"), "w"))
# A file under an image's name that is no image (a download's error page): refused at open too
# (beside coco/, whose folders another test reads as an image_folder).
os.makedirs(os.path.join(out, "coco_broken"))
with open(os.path.join(out, "coco_broken", "error_page.jpg"), "w") as f:
    f.write("<html>404 Not Found</html>\n")
bad = json.loads(json.dumps(good))
bad["images"][3]["file_name"] = "../coco_broken/error_page.jpg"
json.dump(bad, open(os.path.join(coco, "not_image.json"), "w"))
bad["images"][3]["width"] = bad["images"][3]["height"] = None  # read at the parse (broken_images skip)
json.dump(bad, open(os.path.join(coco, "not_image_null.json"), "w"))
# Two images damaged in their middle, ending well (only check_images_at_open decode finds them):
# images[1] (rank 1's share at 2 ranks, the first) and images[2] (rank 0's).
bad = json.loads(json.dumps(good))
for n in (1, 2):
    name = bad["images"][n]["file_name"].replace("images/", "middle_")
    shutil.copy(os.path.join(coco, bad["images"][n]["file_name"]), os.path.join(out, "coco_broken", name))
    damage_middle(os.path.join(out, "coco_broken", name))
    bad["images"][n]["file_name"] = "../coco_broken/" + name
json.dump(bad, open(os.path.join(coco, "middle.json"), "w"))
# The same JSON without those two images and their annotations (broken_images skip reads middle.json so).
bad = json.loads(json.dumps(good))
bad["images"] = [im for n, im in enumerate(bad["images"]) if n not in (1, 2)]
bad["annotations"] = [a for a in bad["annotations"] if a["image_id"] not in (101, 102)]
json.dump(bad, open(os.path.join(coco, "middle_removed.json"), "w"))
# Sizes null, as some exporters write an unknown size: the files' own (read as train.json);
# num_keypoints null too (not read: the count is the keypoints' visibilities).
bad = json.loads(json.dumps(good))
for im in bad["images"]:
    im["width"] = im["height"] = None
for a in bad["annotations"]:
    a["num_keypoints"] = None
json.dump(bad, open(os.path.join(coco, "null_sizes.json"), "w"))
# A JSON cut short (a copy interrupted): a syntax error, named with its position.
open(os.path.join(coco, "cut.json"), "w").write(json.dumps(good)[:300])
# Refused at open (Note [boxes], ids): a bbox wholly outside its image, one of no area, an image id
# twice, an id as a string, a width as a string.
for name, change in [("box_outside", lambda b: b["annotations"][0].update(bbox=[1000, 1000, 10, 10])),
                     ("box_no_area", lambda b: b["annotations"][0].update(bbox=[5, 5, -10, 8])),
                     ("image_id_twice", lambda b: b["images"][1].update(id=100)),
                     ("id_text", lambda b: b["images"][0].update(id="100")),
                     ("width_text", lambda b: b["images"][0].update(width="40")),
                     # Note [coco types]: each value of another JSON type names its entry and key.
                     ("image_id_text", lambda b: b["annotations"][3].update(image_id="101")),
                     ("keypoints_text", lambda b: b["annotations"][2].update(keypoints="x")),
                     ("keypoint_text", lambda b: b["annotations"][2]["keypoints"].__setitem__(4, "7")),
                     ("bbox_null_value", lambda b: b["annotations"][1]["bbox"].__setitem__(2, None)),
                     ("height_float", lambda b: b["images"][4].update(height=2.5)),
                     ("name_number", lambda b: b["categories"][0].update(name=7)),
                     ("flip_text", lambda b: b["categories"][0].update(flip_pairs=[[1, "2"]])),
                     ("annotation_text", lambda b: b["annotations"].__setitem__(1, "x"))]:
    bad = json.loads(json.dumps(good))
    change(bad)
    json.dump(bad, open(os.path.join(coco, name + ".json"), "w"))


def large_photos(root):
    """coco/large.json: two photographs of 1600 x 1200 and 1200 x 1600 pixels (JPEG, no chroma
    subsampling) with a face of disks of 40 pixels' radius (left_eye red, right_eye green, nose
    blue) over a gradient; its bbox is 600 x 500 pixels (the keypoints' box and 150 around), so a
    32-pixel view shows about 23 file pixels per pixel and the source may decode them at 1/8
    (Note [reduced decoding])."""
    images, annotations = [], []
    for n, (w, h) in enumerate([(1600, 1200), (1200, 1600)]):
        im = Image.new("RGB", (w, h))
        im.putdata([(60 + (x * 120) // w, 90 + (y * 90) // h, 110) for y in range(h) for x in range(w)])
        draw = ImageDraw.Draw(im)
        cx, cy = 450 + 100 * n, 520 + 60 * n  # the left eye
        pts = [(cx, cy), (cx + 300, cy), (cx + 150, cy + 200)]
        kp = []
        for (x, y), colour in zip(pts, [(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
            draw.ellipse((x - 40, y - 40, x + 40, y + 40), fill=colour)
            kp += [x, y, 2]
        name = f"images/large{n}.jpg"
        im.save(os.path.join(root, name), quality=95, subsampling=0)
        images.append({"id": n + 1, "file_name": name, "width": w, "height": h})
        annotations.append({"id": n + 1, "image_id": n + 1, "category_id": 1, "keypoints": kp,
                            "num_keypoints": 3, "iscrowd": 0, "bbox": [cx - 150, cy - 150, 600, 500],
                            "area": 300000})
    categories = [{"id": 1, "name": "face", "supercategory": "face",
                   "keypoints": ["left_eye", "right_eye", "nose"], "skeleton": [[1, 3], [2, 3]]}]
    json.dump({"images": images, "annotations": annotations, "categories": categories},
              open(os.path.join(root, "large.json"), "w"))


large_photos(coco)

# Note [EXIF orientation] (image_decode.cpp): every Orientation value, and the upright image Pillow makes.
os.makedirs(os.path.join(out, "exif"))
blocks = Image.new("RGB", (24, 16))
blocks.putdata([(40 + 60 * (x // 8), 40 + 150 * (y // 8), 220 - 70 * (x // 8)) for y in range(16) for x in range(24)])
for o in range(1, 9):
    exif = Image.Exif()
    exif[0x0112] = o
    jpg = os.path.join(out, "exif", f"o{o}.jpg")
    blocks.save(jpg, quality=95, subsampling=0, exif=exif.tobytes())
    with Image.open(jpg) as im:
        ImageOps.exif_transpose(im).convert("RGB").save(os.path.join(out, "exif", f"o{o}.png"))


# Note [EXIF orientation]: EXIF blocks as Pillow's writer would not make them, each a TIFF header and
# an IFD0 holding only Orientation: the malformed ones read as orientation 1 (the stored pixels of
# exif/o1.png); an Orientation written as LONG or in big-endian (Motorola) order is turned as Pillow
# turns it (Pillow cannot open `short` and `magic` at all: the test needs no PNG of those).
def exif_block(entries, order="<", magic=42, ifd0=8):
    tiff = (b"II" if order == "<" else b"MM") + struct.pack(order + "HI", magic, ifd0)
    ifd = struct.pack(order + "H", len(entries))
    for tag, kind, count, value in entries:
        ifd += struct.pack(order + "HHI", tag, kind, count) + value
    return b"Exif\0\0" + tiff + ifd + struct.pack(order + "I", 0)  # no IFD1


def short(v, order="<"):  # a SHORT, left-justified in the 4-byte value field
    return struct.pack(order + "HH", v, 0)


SHORT, LONG, ASCII = 3, 4, 2
exif_odd = {
    "short": b"Exif\0\0II*\0",  # the TIFF header cut after its magic number
    "order": b"Exif\0\0XX" + exif_block([(0x0112, SHORT, 1, short(6))])[8:],  # no byte order
    "magic": exif_block([(0x0112, SHORT, 1, short(6))], magic=43),
    "ifd0_past_end": exif_block([(0x0112, SHORT, 1, short(6))], ifd0=4000),
    "cut_entry": exif_block([(0x0112, SHORT, 1, short(6))])[:6 + 8 + 2 + 8],  # cut in Orientation's entry
    "count_past_end": exif_block([(0x0112, SHORT, 0x40000000, short(6))]),  # its values past the block
    "value9": exif_block([(0x0112, SHORT, 1, short(9))]),
    "ascii": exif_block([(0x0112, ASCII, 2, b"6\0\0\0")]),
    "long6": exif_block([(0x0112, LONG, 1, struct.pack("<I", 6))]),
    "motorola6": exif_block([(0x0112, SHORT, 1, short(6, ">"))], order=">"),
}
os.makedirs(os.path.join(out, "exif_odd"))
for name, block in exif_odd.items():
    jpg = os.path.join(out, "exif_odd", f"{name}.jpg")
    blocks.save(jpg, quality=95, subsampling=0, exif=block)
    if name.endswith("6"):
        with Image.open(jpg) as im:
            ImageOps.exif_transpose(im).convert("RGB").save(os.path.join(out, "exif_odd", f"{name}.png"))
print(f"make_image_files: wrote {out}")
