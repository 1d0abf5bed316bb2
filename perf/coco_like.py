#!/usr/bin/env python3
"""A COCO-like person keypoint JSON of realistic size, for measuring how coco_keypoints opens it
(docs/images.md, "Opening image data"): person_keypoints_train2017's shape (64115 images, 262465
person annotations of which ~150k have labelled keypoints, 17 keypoints, ~1% crowd RLE masks,
segmentation polygons of ~70 coordinates with 2 decimals; 238 MB) with the `info` and `licenses`
blocks. Every image is 640 x 480 and its file_name is one of a few hard links to one 640 x 480
JPEG (written with Pillow when it is there, else left out), so the files' headers can be checked.
usage: perf/coco_like.py OUT_DIR [--images 64115] [--annotations 262465] [--no-files]
Writes OUT_DIR/person_keypoints.json and OUT_DIR/images/."""
import argparse
import json
import os
import random

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--images", type=int, default=64115)
p.add_argument("--annotations", type=int, default=262465)
p.add_argument("--no-files", action="store_true")
a = p.parse_args()
rng = random.Random(2017)
os.makedirs(os.path.join(a.out, "images"), exist_ok=True)
names = ["left_eye", "right_eye", "nose", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
         "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee",
         "left_ankle", "right_ankle"]
names = ["nose"] + [n for n in names if n != "nose"]
images = [{"license": 1 + i % 8, "file_name": f"images/{i:012d}.jpg", "coco_url": f"http://images.cocodataset.org/"
           f"train2017/{i:012d}.jpg", "height": 480, "width": 640, "date_captured": "2013-11-14 16:28:13",
           "flickr_url": f"http://farm4.staticflickr.com/1/{i}_z.jpg", "id": i} for i in range(a.images)]
r2 = lambda v: round(v, 2)
annotations = []
for n in range(a.annotations):
    x, y = rng.uniform(0, 500), rng.uniform(0, 300)
    w, h = rng.uniform(20, 640 - x), rng.uniform(40, 480 - y)
    crowd = rng.random() < 0.01
    labelled = not crowd and rng.random() < 0.57  # ~150k of 262k with keypoints
    kp = []
    for _ in names:
        if labelled and rng.random() < 0.7:
            kp += [int(x + rng.uniform(0, w)), int(y + rng.uniform(0, h)), rng.choice([1, 2])]
        else:
            kp += [0, 0, 0]
    if crowd:
        seg = {"counts": [rng.randint(0, 300) for _ in range(400)], "size": [480, 640]}
    else:
        seg = [[r2(x + rng.uniform(0, w)) if k % 2 == 0 else r2(y + rng.uniform(0, h))
                for k in range(2 * rng.randint(15, 55))] for _ in range(rng.choice([1, 1, 1, 2]))]
    annotations.append({"segmentation": seg, "num_keypoints": sum(1 for v in kp[2::3] if v), "area": r2(w * h * 0.6),
                        "iscrowd": int(crowd), "keypoints": kp, "image_id": rng.randrange(a.images),
                        "bbox": [r2(x), r2(y), r2(w), r2(h)], "category_id": 1, "id": 100000 + n})
skeleton = [[16, 14], [14, 12], [17, 15], [15, 13], [12, 13], [6, 12], [7, 13], [6, 7], [6, 8], [7, 9], [8, 10],
            [9, 11], [2, 3], [1, 2], [1, 3], [2, 4], [3, 5], [4, 6], [5, 7]]
doc = {"info": {"description": "COCO-like 2017 Dataset", "url": "http://cocodataset.org", "version": "1.0",
                "year": 2017, "contributor": "COCO Consortium", "date_created": "2017/09/01"},
       "licenses": [{"url": f"http://creativecommons.org/licenses/{i}/", "id": i, "name": f"License {i}"}
                    for i in range(1, 9)],
       "images": images, "annotations": annotations,
       "categories": [{"supercategory": "person", "id": 1, "name": "person", "keypoints": names,
                       "skeleton": skeleton}]}
path = os.path.join(a.out, "person_keypoints.json")
with open(path, "w") as f:
    json.dump(doc, f, separators=(",", ":"))
print(f"{path}: {os.path.getsize(path) / 1e6:.0f} MB, {a.images} images, {a.annotations} annotations")
if not a.no_files:
    from PIL import Image
    one = os.path.join(a.out, "images", "one.jpg")
    Image.new("RGB", (640, 480), (120, 90, 60)).save(one, quality=90)
    for im in images:
        target = os.path.join(a.out, im["file_name"])
        if not os.path.exists(target):
            os.link(one, target)
