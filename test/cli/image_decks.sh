#!/usr/bin/env bash
# inputs/resnet_folder.in and inputs/cape_coco.in on small image sets written by Pillow
# (test/python/make_image_files.py), scaled down to seconds:
#  - resnet_folder.in on photos/ (3 classes of one-colour JPEGs and PNGs of varying size, resized to
#    12x12, flips, scale and rotation jitter) for one epoch at 1 rank x batch 8 and at 2 ranks x
#    batch 4 (synchronised batch norm, SGD, gemm): the same augmented pixels in the same global
#    batches, so weights within 1e-6 relative; 2 epochs straight == 1 epoch + checkpoint + resume,
#    bitwise (the second epoch's augmentation is redrawn, not remembered);
#  - a truncated JPEG and a file that is not an image, at 2 ranks: refused at open (before any step),
#    exit 2 on every rank, one error line naming the file and its row; no weights file written;
#  - cape_coco.in on coco/train.json (2 categories, 6 photos, flips by left/right names) for 2
#    epochs at 2 ranks, then cape_eval on the same JSON through the deck: the PCK table and CSV, and
#    the episodes with the deck's image_mean and image_std (scripts/plot-cape undoes them);
#  - COCO files with an annotation naming a missing image, a keypoint outside its image, an image
#    file that is not there, bad images in both ranks' shares (the first is named): exit 2, one
#    error line naming the JSON, the annotation or image index (parsed by rank 0 for both: Note [open
#    once per job]); a JSON cut short, named with its position; cape_eval refuses a resized image;
#  - broken_images skip: a folder and a COCO JSON with broken files train as the same files without
#    them, bitwise, at 1 and 2 ranks, the files listed beside output; so does a folder of PNG, JPEG,
#    WebP and TIFF files (test/python/make_image_formats.py) with a cut WebP and a cut TIFF (its GIF,
#    BMP and JPEG XL files named in one line of the log); refused without a check at
#    open, and where no file is left; cape_eval skipping gives the PCK table of the JSON without them;
#  - predict on a folder checks its files at open as train does: the truncated JPEG refused (exit 2),
#    with broken_images skip the predictions of the folder without the broken files, bitwise;
# usage: image_decks.sh TRAIN CAPE_EVAL PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 cape_eval=$2 python=$3 mpiexec=$4 dir=$5 src=$6
"$python" -c "import h5py, numpy, PIL" 2>/dev/null || { echo "image_decks: no h5py/numpy/Pillow in $python"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
"$python" "$src/test/python/make_image_files.py" "$dir/files" > /dev/null
f=$dir/files
folder=(--set data_file="$f/photos" --set validation_file="$f/photos" --set image_channels=3
        --set image_height=12 --set image_width=12 --set image_mean=0.5 --set image_std=0.25
        --set augment_flip=true --set resnet_width=4 --set resnet_stem=small --set num_classes=3
        --set lr_schedule=constant --set warmup_steps=0 --set log_every=1 --set conv_algorithm=gemm)
run() {  # run NAME RANKS DECK ARGS...: the deck with its outputs under $dir/NAME
  local name=$1 np=$2 deck=$3
  shift 3
  "$mpiexec" -np "$np" --bind-to none "$train" "$src/inputs/$deck" \
    --set output="$dir/$name.h5" --set metrics_file="$dir/$name.jsonl" "$@" > "$dir/$name.log" 2>&1 ||
    { cat "$dir/$name.log"; exit 1; }
}
run one 1 resnet_folder.in "${folder[@]}" --set batch_size=8 --set epochs=1 --set optimizer=sgd --set lr=0.05 \
  --set sync_batch_norm=true
run two 2 resnet_folder.in "${folder[@]}" --set batch_size=4 --set epochs=1 --set optimizer=sgd --set lr=0.05 \
  --set sync_batch_norm=true
grep -q "rendered from the decoded images" "$dir/two.log" || { cat "$dir/two.log"; exit 1; }
run first 2 resnet_folder.in "${folder[@]}" --set batch_size=2 --set epochs=1 --set checkpoint_dir="$dir/ckpt" \
  --set checkpoint_every_epochs=1
run straight 2 resnet_folder.in "${folder[@]}" --set batch_size=2 --set epochs=2
run resumed 2 resnet_folder.in "${folder[@]}" --set batch_size=2 --set epochs=2 --set checkpoint_dir="$dir/ckpt" \
  --set resume=auto

broken() {  # broken NAME REGEX ARGS...: train must stop with exit 2 and one error line matching REGEX
  local name=$1 regex=$2
  shift 2
  set +e
  "$mpiexec" -np 2 --bind-to none "$train" "$@" --set output="$dir/$name.h5" --set metrics_file= \
    > "$dir/$name.log" 2> "$dir/$name.err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "image_decks: $name: exit $rc, expected 2"; cat "$dir/$name.err"; exit 1; }
  [ "$(grep -c '^error: ' "$dir/$name.err")" -eq 1 ] || { echo "image_decks: $name: not one error line"; cat "$dir/$name.err"; exit 1; }
  grep -Eq "$regex" "$dir/$name.err" || { echo "image_decks: $name: the error does not match /$regex/"; cat "$dir/$name.err"; exit 1; }
  [ ! -e "$dir/$name.h5" ] || { echo "image_decks: $name: wrote $dir/$name.h5"; exit 1; }
  grep '^error: ' "$dir/$name.err"
}
broken truncated "^error: .*broken/truncated/cls1/p2.jpg: JPEG: .*\(row [0-9]+ of " "$src/inputs/resnet_folder.in" \
  "${folder[@]}" --set data_file="$f/broken/truncated" --set validation_file= --set epochs=1 --set batch_size=2
broken notimage "^error: .*broken/notimage/cls0/p1.png: not a PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM file .*\(row [0-9]+ of " \
  "$src/inputs/resnet_folder.in" "${folder[@]}" --set data_file="$f/broken/notimage" --set validation_file= \
  --set epochs=1 --set batch_size=2
# Note [image checks at open]: both refused at open, each rank checking its share, before any step.
# The bad file is row 3 or 7: rank 1's share at 2 ranks; rank 0 prints its message as it is.
for name in truncated notimage; do
  ! grep -q "step" "$dir/$name.log" || { echo "image_decks: $name: steps ran before the error"; cat "$dir/$name.log"; exit 1; }
  ! grep -q "^error: rank" "$dir/$name.err" || { echo "image_decks: $name: a rank prefix"; cat "$dir/$name.err"; exit 1; }
done

# Note [leaving broken files out]: broken_images skip on broken/two (a JPEG damaged in its middle in
# rank 1's share, a file that is no image in rank 0's), train and validation: the steps of the folder
# without them (broken/two_removed), bitwise, at 1 rank x 8 and 2 ranks x 4 (compared below), the
# log counting them, the list beside output naming both; a validation_file of its own likewise.
skip=(--set check_images_at_open=decode --set broken_images=skip --set epochs=1 --set optimizer=sgd --set lr=0.05
      --set sync_batch_norm=true)
for np in 1 2; do
  run skip$np $np resnet_folder.in "${folder[@]}" "${skip[@]}" --set data_file="$f/broken/two" \
    --set validation_file="$f/broken/two" --set batch_size=$((8 / np))
  run removed$np $np resnet_folder.in "${folder[@]}" "${skip[@]}" --set data_file="$f/broken/two_removed" \
    --set validation_file="$f/broken/two_removed" --set batch_size=$((8 / np))
  grep -q "broken/two: 2 of 12 image files left out as broken (broken_images skip): $f/broken/two/cls1/p2.jpg: JPEG: " \
    "$dir/skip$np.log" || { echo "image_decks: skip$np: no count in the log"; cat "$dir/skip$np.log"; exit 1; }
  [ "$(cut -f1 "$dir/skip$np.broken_images.tsv" | tr '\n' ' ')" = "$f/broken/two/cls1/p2.jpg $f/broken/two/cls0/p3.png " ] ||
    { echo "image_decks: skip$np: the list"; cat "$dir/skip$np.broken_images.tsv"; exit 1; }
done
run skipval 2 resnet_folder.in "${folder[@]}" "${skip[@]}" --set validation_file="$f/broken/two" --set batch_size=4
run removedval 2 resnet_folder.in "${folder[@]}" "${skip[@]}" --set validation_file="$f/broken/two_removed" \
  --set batch_size=4
# WebP and TIFF beside PNG and JPEG (make_image_formats.py's broken/mixed_removed: PNG, JPEG, lossless
# and lossy WebP, LZW and uncompressed TIFF), 2 ranks; broken/mixed_cut (a cut WebP and a TIFF with
# its strips cut besides) with broken_images skip trains as it does, bitwise (compared below). The
# .jp2, .j2k and .JXL files beside them are named in one line of the log (Note [image kinds not read]).
"$python" "$src/test/python/make_image_formats.py" "$dir/formats" > /dev/null
g=$dir/formats/broken
run mixed_skip 2 resnet_folder.in "${folder[@]}" "${skip[@]}" --set data_file="$g/mixed_cut" --set validation_file= \
  --set batch_size=4
run mixed_removed 2 resnet_folder.in "${folder[@]}" "${skip[@]}" --set data_file="$g/mixed_removed" \
  --set validation_file= --set batch_size=4
grep -q "data $g/mixed_removed: 15 training rows, 1 validation rows" "$dir/mixed_removed.log" &&
  grep -q "mixed_cut: 2 of 18 image files left out as broken (broken_images skip): " "$dir/mixed_skip.log" &&
  grep -q "mixed_cut/cls1/p2.webp: WebP: the data ends early (a truncated file)" "$dir/mixed_skip.log" &&
  grep -q "mixed_cut/cls2/p5.tiff: TIFF: its 33 x 28 pixels need 2772 bytes uncompressed" "$dir/mixed_skip.log" &&
  [ "$(grep -cF "$g/mixed_cut: 4 image files of kinds not read left out (.jp2 2, .j2k 1, .jxl 1): convert them to \
PNG, JPEG, WebP or TIFF (e.g. with Pillow)" "$dir/mixed_skip.log")" = 1 ] ||
  { echo "image_decks: mixed formats"; cat "$dir/mixed_removed.log" "$dir/mixed_skip.log"; exit 1; }
broken skip_unchecked "^error: .*broken_images.*check_images_at_open true or decode" "$src/inputs/resnet_folder.in" \
  "${folder[@]}" --set data_file="$f/broken/two" --set validation_file= --set broken_images=skip \
  --set check_images_at_open=false
broken skip_all "^error: .*broken/all: broken_images skip left out 2 of 2 image files and no row is left" \
  "$src/inputs/resnet_folder.in" "${folder[@]}" --set data_file="$f/broken/all" --set validation_file= \
  --set broken_images=skip

# Note [predicting image files]: predict reads a folder through the training deck in the weights
# file, its check at open included: the truncated JPEG stops it before any row (exit 2, one error
# line naming the file, no OUT); with broken_images skip from --set, broken/two predicts as
# broken/two_removed (compared below), at 1 and 2 ranks, the files left out and the file of each row
# listed beside OUT.
predict=$(dirname "$train")/predict
set +e
"$mpiexec" -np 2 --bind-to none "$predict" "$dir/one.h5" "$f/broken/truncated" "$dir/ptrunc.h5" \
  > "$dir/ptrunc.log" 2> "$dir/ptrunc.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && [ "$(grep -c 'error: ' "$dir/ptrunc.err")" -eq 1 ] &&
  grep -Eq "error: .*broken/truncated/cls1/p2.jpg: JPEG: .*\(row [0-9]+ of " "$dir/ptrunc.err" &&
  [ ! -e "$dir/ptrunc.h5" ] || { echo "image_decks: predict on broken/truncated: exit $rc"; cat "$dir/ptrunc.err"; exit 1; }
cat "$dir/ptrunc.err"
for np in 1 2; do
  for data in two two_removed; do
    "$mpiexec" -np $np --bind-to none "$predict" "$dir/one.h5" "$f/broken/$data" "$dir/p_${data}_$np.h5" \
      --set check_images_at_open=decode --set broken_images=skip > "$dir/p_${data}_$np.log" 2>&1 ||
      { cat "$dir/p_${data}_$np.log"; exit 1; }
  done
  [ "$(cut -f1 "$dir/p_two_$np.broken_images.tsv" | tr '\n' ' ')" = "$f/broken/two/cls1/p2.jpg $f/broken/two/cls0/p3.png " ] ||
    { echo "image_decks: predict skipping at $np: the list"; cat "$dir/p_two_$np.broken_images.tsv"; exit 1; }
  [ "$(sed 's|/broken/two/|/broken/two_removed/|' "$dir/p_two_$np.files.tsv")" = "$(cat "$dir/p_two_removed_$np.files.tsv")" ] &&
    [ "$(wc -l < "$dir/p_two_$np.files.tsv")" -eq 10 ] ||
    { echo "image_decks: predict skipping at $np: the files of the rows"; cat "$dir/p_two_$np.files.tsv"; exit 1; }
  [ ! -e "$dir/p_two_removed_$np.broken_images.tsv" ] || { echo "image_decks: a list of no files"; exit 1; }
  LC_ALL=C sort -c "$dir/p_two_$np.files.tsv" || { echo "image_decks: predict's rows are not in name order"; exit 1; }
done
# Row i of OUT is the file on line i + 1 of the list: the 4th file alone predicts as row 3 (checked below).
one_file=$(sed -n 4p "$dir/p_two_removed_1.files.tsv")
rm -rf "$dir/single" && mkdir -p "$dir/single/$(basename "$(dirname "$one_file")")"
cp "$one_file" "$dir/single/$(basename "$(dirname "$one_file")")/"
"$mpiexec" -np 1 --bind-to none "$predict" "$dir/one.h5" "$dir/single" "$dir/p_single.h5" > "$dir/p_single.log" 2>&1 ||
  { cat "$dir/p_single.log"; exit 1; }
# A row predict refuses is named by its file, the first in name order (image_std 1e-300 is 0 as a
# float32: every row non-finite), and nothing is written: no OUT, no list of its files.
rm -f "$dir/pinf.h5" "$dir/pinf.files.tsv"
set +e
"$mpiexec" -np 2 --bind-to none "$predict" "$dir/one.h5" "$f/broken/two_removed" "$dir/pinf.h5" \
  --set image_std=1e-300 > "$dir/pinf.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -qF "error: $(sed -n 1p "$dir/p_two_removed_1.files.tsv") (row " "$dir/pinf.log" &&
  [ ! -e "$dir/pinf.h5" ] && [ ! -e "$dir/pinf.files.tsv" ] ||
  { echo "image_decks: predict on non-finite rows: exit $rc"; cat "$dir/pinf.log"; exit 1; }

coco=(--set data_file="$f/coco/train.json" --set validation_file="$f/coco/train.json" --set image_height=32
      --set image_width=32 --set resnet_width=4 --set cape_dim=16 --set batch_size=4 --set log_every=1
      --set conv_algorithm=gemm)
run cape 2 cape_coco.in "${coco[@]}" --set epochs=2
# validation_file is data_file: its second open says nothing (the count once, not twice).
[ "$(grep -c "train.json: 1 crowd annotations (iscrowd) left out" "$dir/cape.log")" -eq 1 ] ||
  { echo "image_decks: the crowd annotation is not counted once"; cat "$dir/cape.log"; exit 1; }
"$cape_eval" "$dir/cape.h5" "$f/coco/train.json" --deck "$src/inputs/cape_coco.in" --csv "$dir/pck.csv" \
  --episodes "$dir/episodes.h5" > "$dir/cape_eval.log"
cat "$dir/cape_eval.log"
broken no_image "^error: .*coco/no_image.json: annotations\[3\] \(id 4\): image_id 999 is not among the images" \
  "$src/inputs/cape_coco.in" "${coco[@]}" --set data_file="$f/coco/no_image.json" --set validation_file= --set epochs=1
broken outside "^error: .*coco/outside.json: annotations\[2\] \(id 3\): keypoint 1 \(left_eye\) at \(500.5, 8.5\) is outside its image .*img1.jpg \(64 x 48\)" \
  "$src/inputs/cape_coco.in" "${coco[@]}" --set data_file="$f/coco/outside.json" --set validation_file= --set epochs=1
broken missing_file "^error: .*coco/missing_file.json: images\[4\] \(id 104\): image file .*images/gone.jpg not found" \
  "$src/inputs/cape_coco.in" "${coco[@]}" --set data_file="$f/coco/missing_file.json" --set validation_file= --set epochs=1
# Note [open once per job]: rank 0's parse error stops both ranks with its message, unprefixed.
broken cut "^error: [^ ]*coco/cut.json: not valid JSON: \[json.exception.parse_error.101\] parse error at line 1" \
  "$src/inputs/cape_coco.in" "${coco[@]}" --set data_file="$f/coco/cut.json" --set validation_file= --set epochs=1
# Note [image sizes]: refused at open, from the file's header, before any step (was mid-epoch).
broken resized "^error: .*coco/resized.json: images\[2\] \(id 102\): width x height 360 x 520, but the file .*img2.png is 36 x 52" \
  "$src/inputs/cape_coco.in" "${coco[@]}" --set data_file="$f/coco/resized.json" --set validation_file= --set epochs=1
! grep -q "step" "$dir/resized.log" || { echo "image_decks: resized: steps ran before the error"; cat "$dir/resized.log"; exit 1; }
# Note [file checks over ranks]: bad images in both ranks' shares: the first (rank 1's) is reported.
broken two_bad "^error: [^ ]*coco/two_bad.json: images\[1\] \(id 101\): width x height 48 x 64, but the file .*img1.jpg is 64 x 48" \
  "$src/inputs/cape_coco.in" "${coco[@]}" --set data_file="$f/coco/two_bad.json" --set validation_file= --set epochs=1
# broken_images skip on a COCO JSON: the images damaged in their middle and their annotations left
# out, train and validation: the steps of the JSON without them (compared below).
run cape_skip 2 cape_coco.in "${coco[@]}" --set epochs=2 --set data_file="$f/coco/middle.json" \
  --set validation_file="$f/coco/middle.json" --set check_images_at_open=decode --set broken_images=skip
run cape_removed 2 cape_coco.in "${coco[@]}" --set epochs=2 --set data_file="$f/coco/middle_removed.json" \
  --set validation_file="$f/coco/middle_removed.json"
[ "$(wc -l < "$dir/cape_skip.broken_images.tsv")" -eq 2 ] ||
  { echo "image_decks: cape_skip: the list"; cat "$dir/cape_skip.broken_images.tsv"; exit 1; }
# cape_eval with broken_images skip from its --set: the episodes of the JSON without them.
"$cape_eval" "$dir/cape.h5" "$f/coco/middle.json" --deck "$src/inputs/cape_coco.in" --set broken_images=skip \
  --set check_images_at_open=decode --csv "$dir/pck_skip.csv" > "$dir/eval_skip.log"
"$cape_eval" "$dir/cape.h5" "$f/coco/middle_removed.json" --deck "$src/inputs/cape_coco.in" \
  --csv "$dir/pck_removed.csv" > "$dir/eval_removed.log"
cmp -s "$dir/pck_skip.csv" "$dir/pck_removed.csv" ||
  { echo "image_decks: cape_eval skipping"; cat "$dir/eval_skip.log" "$dir/eval_removed.log"; exit 1; }
# cape_eval checks the images too (one process: all of them).
set +e
"$cape_eval" "$dir/cape.h5" "$f/coco/resized.json" --deck "$src/inputs/cape_coco.in" > "$dir/eval_resized.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "resized.json: images\[2\] (id 102): width x height 360 x 520" "$dir/eval_resized.log" ||
  { echo "image_decks: cape_eval on resized.json: exit $rc"; cat "$dir/eval_resized.log"; exit 1; }

"$python" - "$dir" "$src/test/python" <<'PY'
import csv, json, sys, h5py, numpy as np
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from tool_run import losses, weights_flat as flat  # noqa: E402
ranks = float(np.linalg.norm(flat(f"{d}/two.h5") - flat(f"{d}/one.h5")) / np.linalg.norm(flat(f"{d}/one.h5")))
print(f"image_decks: resnet_folder, one epoch at 2 ranks x 4 vs 1 rank x 8 (augmented, synchronised batch norm, "
      f"SGD): weights differ by {ranks:.2e}")
assert ranks <= 1e-6, f"2 ranks differ from 1 rank by {ranks}"
assert np.array_equal(flat(f"{d}/straight.h5"), flat(f"{d}/resumed.h5")), "resume is not bitwise"
print("image_decks: resnet_folder, 2 epochs straight == 1 epoch + checkpoint + resume, bitwise")
for skipped, removed in (("skip1", "removed1"), ("skip2", "removed2"), ("skipval", "removedval"),
                         ("cape_skip", "cape_removed"), ("mixed_skip", "mixed_removed")):
    assert losses(f"{d}/{skipped}.jsonl") == losses(f"{d}/{removed}.jsonl"), (skipped, removed)
    assert np.array_equal(flat(f"{d}/{skipped}.h5"), flat(f"{d}/{removed}.h5")), (skipped, removed)
print("image_decks: broken_images skip: the losses and weights of the files without the broken ones, bitwise "
      "(a folder at 1 rank x 8 and 2 ranks x 4, a validation folder, a COCO JSON, a folder of PNG, JPEG, WebP "
      "and TIFF)")
for np_ in (1, 2):
    with h5py.File(f"{d}/p_two_{np_}.h5") as a, h5py.File(f"{d}/p_two_removed_{np_}.h5") as b:
        assert sorted(a) == sorted(b) and "probabilities" in a and a["probabilities"].shape == (10, 3), list(a)
        for name in a:
            assert np.array_equal(a[name][()], b[name][()]), (np_, name)
        with h5py.File(f"{d}/p_single.h5") as one:
            alone, row = one["probabilities"][0], b["probabilities"][3]
            assert np.allclose(alone, row, rtol=1e-5, atol=1e-6), (np_, alone, row)
print("image_decks: predict with broken_images skip: the predictions of the folder without the broken files, "
      "bitwise (1 and 2 ranks); rows in name order, row 3 that of its file alone")
epochs = [r for r in map(json.loads, open(f"{d}/cape.jsonl")) if r.get("type") == "epoch"]
assert len(epochs) == 2 and all(np.isfinite(r["val_loss"]) for r in epochs), epochs
rows = list(csv.DictReader(open(f"{d}/pck.csv")))
assert [r["category"] for r in rows] == ["0", "1", "all"], rows
assert abs(float(rows[-1]["pck"]) - epochs[-1]["val_pck"]) < 1e-6, (rows[-1], epochs[-1])
print(f"image_decks: cape_coco: val PCK {epochs[-1]['val_pck']:.4f}, cape_eval agrees")
# The episodes say how the deck normalised (ImageNet's mean and std); undone, the grey background
# of the photos (128) comes back.
with h5py.File(f"{d}/episodes.h5") as e:
    mean, std = e["image_mean"][()], e["image_std"][()]
    assert np.allclose(mean, [0.485, 0.456, 0.406]) and np.allclose(std, [0.229, 0.224, 0.225]), (mean, std)
    pixels = e["images"][()] * std[:, None, None] + mean[:, None, None]
    assert abs(float(np.median(pixels)) * 255 - 128) < 2, float(np.median(pixels)) * 255
print("image_decks: cape_eval's episodes carry the deck's image_mean and image_std")
PY
