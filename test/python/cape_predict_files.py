"""cli_cape_predict's files and checks (test/cli/cape_predict.sh), on make_image_files.py's coco/.
  write DIR          from DIR/coco/train.json: pair.json (the face boxes of images 101 and 102, whose
                     two rows are cape_eval's two episodes), queries.json (every box of the six
                     photographs with its keypoints taken away: absent, null or all 0), repeated.json
                     (those 7 times, new ids), no_box.json
                     (its first box taken away too), empty.json (no annotations), no_names.json
                     (the face category without keypoint names), other.h5 (a weights file of a
                     resnet model: its attributes only)
  check OUT QUERIES  OUT is COCO keypoint results for QUERIES' face boxes in its order, its fields
                     checked with json
  several OUT QUERIES FACES
                     OUT holds a result for every box of QUERIES, faces and bars, in its order,
                     each of its box's category and keypoint count; its face rows equal FACES's
  per_category TRAIN SCRATCH SCORE_KEYPOINTS
                     scripts/score-keypoints' mean of per-category AP against one COCOeval over
                     two categories of 3 keypoints (TRAIN's faces, 4 of them twice; noisy results)
  cocoeval GT OUT    pycocotools (the reference environment's) loads OUT as results on GT
                     (COCO.loadRes) and COCOeval scores them ('keypoints', OKS sigma 0.025 per
                     keypoint, MP-100's): AP within [0, 1], one OKS per box, the same OKS as computed
                     here from COCO's formula
  agree EPISODES PAIR MARGIN SIZE ID=OUT ID=OUT
                     each of cape_eval's two episodes of PAIR: its support found among PAIR's two
                     annotations by its keypoints in the view, its predicted query keypoints
                     (normalised to the query's view) equal the OUT of that support's ID for the
                     query box mapped back into the view (the box with MARGIN, widened to square,
                     SIZE pixels) within 1e-4 pixels: a map off by the margin is off by pixels
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def view(box, margin, size):
    """The view of a COCO box [x, y, w, h]: its left, top and side in the image's pixels (square output)."""
    w, h = box[2] * (1 + margin), box[3] * (1 + margin)
    side = max(w, h)
    return box[0] + 0.5 * box[2] - 0.5 * side, box[1] + 0.5 * box[3] - 0.5 * side, side


def write(d):
    coco = load(f"{d}/coco/train.json")
    coco["annotations"] = [a for a in coco["annotations"] if not a.get("iscrowd")]
    pair = dict(coco, images=[i for i in coco["images"] if i["id"] in (101, 102)],
                annotations=[a for a in coco["annotations"] if a["image_id"] in (101, 102) and a["category_id"] == 1])
    # The second box grown to one side, so that the two supports' keypoints differ in their views
    # (make_image_files draws every face alike about its box).
    pair = json.loads(json.dumps(pair))
    pair["annotations"][1]["bbox"] = [b + g for b, g in zip(pair["annotations"][1]["bbox"], [-3, -1, 5, 2])]
    json.dump(pair, open(f"{d}/coco/pair.json", "w"))
    queries = json.loads(json.dumps(coco))
    for n, a in enumerate(queries["annotations"]):
        if n % 3 == 0:
            del a["keypoints"]
        elif n % 3 == 1:
            a["keypoints"] = [0] * len(a["keypoints"])
        else:
            a["keypoints"] = None
        a["num_keypoints"] = 0
    json.dump(queries, open(f"{d}/coco/queries.json", "w"))
    repeated = json.loads(json.dumps(queries))  # 42 face boxes: 2 chunks of queries, one for each of 2 ranks
    repeated["annotations"] = [dict(a, id=1000 * r + a["id"]) for r in range(7) for a in queries["annotations"]]
    json.dump(repeated, open(f"{d}/coco/repeated.json", "w"))
    no_box = json.loads(json.dumps(queries))
    del no_box["annotations"][0]["bbox"]
    json.dump(no_box, open(f"{d}/coco/no_box.json", "w"))
    empty = json.loads(json.dumps(queries))
    empty["annotations"] = []
    json.dump(empty, open(f"{d}/coco/empty.json", "w"))
    no_names = json.loads(json.dumps(coco))
    no_names["categories"][0]["keypoints"] = []
    json.dump(no_names, open(f"{d}/coco/no_names.json", "w"))
    import h5py
    with h5py.File(f"{d}/other.h5", "w") as f:
        f.attrs["model"] = "resnet"
        f.attrs["config"] = "channels=3"


def check(out, queries):
    rows, q = load(out), load(queries)
    faces = [a for a in q["annotations"] if a["category_id"] == 1]
    assert isinstance(rows, list) and len(rows) == len(faces), (len(rows), len(faces))
    for r, a in zip(rows, faces):
        assert set(r) == {"image_id", "category_id", "keypoints", "score"}, r
        assert r["image_id"] == a["image_id"] and r["category_id"] == 1, (r, a)
        kp = r["keypoints"]
        assert len(kp) == 9 and all(isinstance(v, (int, float)) for v in kp), kp
        assert all(0 < s <= 1 for s in kp[2::3]), kp  # the support shows all three keypoints
        assert abs(r["score"] - sum(kp[2::3]) / 3) < 1e-6, r
        # The keypoints lie in their box's view (soft-argmax of the cells' centres).
        left, top, side = view(a["bbox"], 0.25, 32)
        for x, y in zip(kp[0::3], kp[1::3]):
            assert left <= x <= left + side and top <= y <= top + side, (x, y, a["bbox"])
    print(f"cape_predict: {out}: {len(rows)} results in COCO's keypoint results format")


def several(out, queries, faces_alone):
    """OUT: the results of every box of QUERIES, faces (3 keypoints) and bars (2), in its order, each
    row's category its box's; the face rows equal FACES_ALONE's (a run of the faces alone)."""
    rows, q, alone = load(out), load(queries), load(faces_alone)
    assert isinstance(rows, list) and len(rows) == len(q["annotations"]), (len(rows), len(q["annotations"]))
    assert {a["category_id"] for a in q["annotations"]} == {1, 2}, "queries of both categories"
    for r, a in zip(rows, q["annotations"]):
        assert r["image_id"] == a["image_id"] and r["category_id"] == a["category_id"], (r, a)
        kp = r["keypoints"]
        assert len(kp) == (9 if a["category_id"] == 1 else 6) and all(0 < s <= 1 for s in kp[2::3]), kp
    faces = [r for r in rows if r["category_id"] == 1]
    assert faces == alone, "the face rows differ from a run of the faces alone"
    print(f"cape_predict: {out}: {len(rows)} results of 2 categories; the faces' equal {faces_alone}'s")


def per_category(train, scratch, score_keypoints):
    """score-keypoints' mean of per-category AP equals one COCOeval over the categories, where one can
    run (the same keypoint count): train's faces, four of them again as a category 2 of 3 keypoints,
    results of both the truth moved by noise (Note [keypoint AP per category])."""
    import contextlib
    import io
    import subprocess
    import numpy as np
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    g = load(train)
    faces = [a for a in g["annotations"] if a["category_id"] == 1 and not a.get("iscrowd")]
    g["annotations"] = faces + [dict(a, id=a["id"] + 1000, category_id=2) for a in faces[:4]]  # unlike counts
    g["categories"][1]["keypoints"] = ["a", "b", "c"]
    truth, results = f"{scratch}/same_k_truth.json", f"{scratch}/same_k_results.json"
    json.dump(g, open(truth, "w"))
    rng = np.random.default_rng(1)
    rows = [{"image_id": a["image_id"], "category_id": a["category_id"], "score": float(rng.random()),
             "keypoints": [v + (float(rng.normal(0, 1.5)) if i % 3 < 2 else 0) for i, v in enumerate(a["keypoints"])]}
            for a in g["annotations"]]
    json.dump(rows, open(results, "w"))
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(truth)
        e = COCOeval(gt, gt.loadRes(results), "keypoints")
        e.params.kpt_oks_sigmas = np.full(3, 0.05)
        e.evaluate()
        e.accumulate()
        e.summarize()
    said = subprocess.run([sys.executable, score_keypoints, truth, results], capture_output=True, text=True,
                          check=True).stdout
    expected = f"keypoint AP {e.stats[0]:.3f}, AP50 {e.stats[1]:.3f}, AP75 {e.stats[2]:.3f} ({len(rows)} boxes"
    assert expected in said.splitlines()[-1] and "category 2" in said, (expected, said)
    print(f"cape_predict: score-keypoints' mean over 2 categories = one COCOeval's: {expected})")


def agree(episodes, pair, margin, size, outs):
    import h5py
    import numpy as np
    p = load(pair)

    def normalised(a):  # its labelled keypoints in its view, as the data source normalises them
        left, top, side = view(a["bbox"], margin, size)
        kp = np.array(a["keypoints"], dtype=float).reshape(-1, 3)
        return np.stack([(kp[:, 0] - left) / side, (kp[:, 1] - top) / side], 1)

    with h5py.File(episodes) as f:
        kps, pred = f["kp_support"][:], f["predicted"][:]
    assert len(kps) == len(p["annotations"]) == 2, len(kps)
    for e in range(len(kps)):
        support, = [a for a in p["annotations"] if np.abs(kps[e, :3, :2] - normalised(a)).max() < 1e-5]
        query, = [a for a in p["annotations"] if a is not support]
        rows = load(outs[support["id"]])
        row, = [r for r, a in zip(rows, p["annotations"]) if a is query]
        left, top, side = view(query["bbox"], margin, size)
        kp = np.array(row["keypoints"], dtype=float).reshape(-1, 3)
        back = np.stack([(kp[:, 0] - left) / side * size, (kp[:, 1] - top) / side * size], 1)  # view pixels
        diff = np.abs(back - pred[e, :3] * size).max()
        assert diff < 1e-4, (e, diff, back, pred[e, :3] * size)
        print(f"cape_predict: support {support['id']} -> query {query['id']}: cape_eval's episode {e} agrees "
              f"within {diff:.2e} pixels of the view")


def cocoeval(gt_path, out):
    import numpy as np
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    gt = COCO(gt_path)
    dt = gt.loadRes(out)
    k = len(gt.loadCats(gt.getCatIds())[0]["keypoints"])
    e = COCOeval(gt, dt, "keypoints")
    e.params.kpt_oks_sigmas = np.full(k, 0.025)
    e.evaluate()
    e.accumulate()
    e.summarize()
    assert 0 <= e.stats[0] <= 1, e.stats  # -1: nothing was scored
    variance = (2 * 0.025) ** 2
    for a in gt.loadAnns(gt.getAnnIds()):
        r, = [r for r in dt.loadAnns(dt.getAnnIds(imgIds=[a["image_id"]]))]
        g, d = np.array(a["keypoints"], float).reshape(-1, 3), np.array(r["keypoints"], float).reshape(-1, 3)
        seen = g[:, 2] > 0
        ours = np.mean(np.exp(-((d[seen, :2] - g[seen, :2]) ** 2).sum(1) / variance / (a["area"] + np.spacing(1)) / 2))
        theirs = np.asarray(e.ious[(a["image_id"], a["category_id"])])
        assert theirs.shape == (1, 1) and abs(theirs[0, 0] - ours) < 1e-9, (theirs, ours)
        print(f"cape_predict: COCOeval: annotation {a['id']}: OKS {ours:.4f}")
    print(f"cape_predict: {out}: COCOeval keypoint AP {e.stats[0]:.3f} on {gt_path}")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "several":
        several(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "per_category":
        per_category(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "cocoeval":
        cocoeval(sys.argv[2], sys.argv[3])
    else:
        agree(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]),
              {int(a.split("=")[0]): a.split("=", 1)[1] for a in sys.argv[6:]})
