#!/usr/bin/env bash
# apps/cape_predict (Note [cape predict] in src/models/cape/cape_predict.cpp) on make_image_files.py's
# COCO photographs: inputs/cape_coco.in scaled down (32x32, width 4, gemm) trains for 2 epochs at 1
# rank, then
#  - the face annotation 3 of train.json as the support places its keypoints on every face box of
#    queries.json (the six photographs' boxes, their keypoints absent, null or all 0; the bar boxes
#    are another category, left out): COCO keypoint results in queries.json's order, x, y inside
#    each box's view, checked with json; pycocotools' COCOeval scores the results on pair.json, and
#    scripts/score-keypoints scores the truth itself 1 and copies a support onto its own box unchanged;
#  - on those boxes 7 times (42 faces: 2 chunks of 32, a chunk for each rank) 1 rank and 2 ranks
#    write the same bytes, with the default support (the first labelled annotation) too;
#  - mapped back into the query's view, the keypoints equal cape_eval's episodes on pair.json (two
#    face boxes, each the other's support) within 1e-4 pixels: the inverse of the crop-with-margin
#    is right (off by the margin it would be pixels off);
#  - several categories (--query-category all or its ids, or a support per category): a result for
#    every box in queries.json's order, each of its category's keypoint count, the faces' equal to
#    their run alone,
#    1 rank == 2 ranks, the default supports each category's first; score-keypoints scores results of
#    two categories a category at a time (a category without results 0, as COCOeval counts it), and
#    their mean is one COCOeval's where one can run (two categories of 3 keypoints);
#  - a query file without boxes gives [];
#  - refused with exit 2, one line naming the file and annotation, no OUT left: a support id not in
#    the JSON, a support without a labelled keypoint, a category without keypoint names, a query
#    photograph that is no image (refused at open) or damaged inside (at its decode), a query box with neither bbox nor keypoints, a weights file of
#    another family, a query category not there or of another keypoint count, a query category
#    without a support (given or found), two supports of one category;
#    apps/predict, given the cape weights, names cape_predict.
# usage: cape_predict.sh TRAIN CAPE_EVAL CAPE_PREDICT PREDICT PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 cape_eval=$2 predict=$3 apps_predict=$4 python=$5 mpiexec=$6 dir=$7 src=$8
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$python" -c "import h5py, numpy, PIL, pycocotools" 2>/dev/null ||
  fail "no h5py/numpy/Pillow/pycocotools in $python (scripts/setup --reference installs them)"
fresh_dir "$dir"
"$python" "$src/test/python/make_image_files.py" "$dir/files" > /dev/null
"$python" "$src/test/python/cape_predict_files.py" write "$dir/files"
c=$dir/files/coco
"$train" "$src/inputs/cape_coco.in" --set data_file="$c/train.json" --set validation_file="$c/train.json" \
  --set image_height=32 --set image_width=32 --set resnet_width=4 --set cape_dim=16 --set batch_size=4 \
  --set conv_algorithm=gemm --set epochs=2 --set output="$dir/cape.h5" --set metrics_file= > "$dir/train.log" 2>&1 ||
  { cat "$dir/train.log"; fail "training the cape model"; }

"$predict" "$dir/cape.h5" "$c/train.json" "$c/queries.json" "$dir/one.json" --support-annotation 3 \
  > "$dir/one.log" 2>&1 || { cat "$dir/one.log"; fail "cape_predict at 1 rank"; }
grep -q "cape_predict: 6 boxes of category 'face' in .*queries.json located by .*train.json's annotation id 3 (3 keypoints, 1 rank(s))" \
  "$dir/one.log" || { cat "$dir/one.log"; fail "cape_predict's log line"; }
"$python" "$src/test/python/cape_predict_files.py" check "$dir/one.json" "$c/queries.json"
for support in "--support-annotation 3" ""; do  # the default support: annotation 1
  # shellcheck disable=SC2086
  "$predict" "$dir/cape.h5" "$c/train.json" "$c/repeated.json" "$dir/one_r.json" $support > "$dir/one_r.log" 2>&1 ||
    { cat "$dir/one_r.log"; fail "cape_predict on repeated.json at 1 rank ($support)"; }
  # shellcheck disable=SC2086
  "$mpiexec" -np 2 --bind-to none "$predict" "$dir/cape.h5" "$c/train.json" "$c/repeated.json" "$dir/two_r.json" \
    $support > "$dir/two_r.log" 2>&1 || { cat "$dir/two_r.log"; fail "cape_predict at 2 ranks ($support)"; }
  cmp "$dir/one_r.json" "$dir/two_r.json" || fail "1 rank and 2 ranks wrote different results ($support)"
done
"$python" "$src/test/python/cape_predict_files.py" check "$dir/two_r.json" "$c/repeated.json"
grep -q "42 boxes .* located by .*train.json's annotation id 1 (3 keypoints, 2 rank(s))" "$dir/two_r.log" ||
  { cat "$dir/two_r.log"; fail "the default support"; }
# Several categories (Note [cape supports per category]): the faces from support 3, the bars from support 5,
# every box of queries.json in its order, the face rows those of the faces' run alone (one.json); the
# supports' categories without --query-category give the same; 1 rank == 2 ranks; the default supports
# are each category's first labelled annotation (face 1, bar 2).
"$predict" "$dir/cape.h5" "$c/train.json" "$c/queries.json" "$dir/all.json" --query-category all \
  --support-annotation 3 --support-annotation 5 > "$dir/all.log" 2>&1 || { cat "$dir/all.log"; fail "cape_predict, all"; }
grep -q "cape_predict: 3 boxes of category 'bar' in .*queries.json located by .*train.json's annotation id 5 (2 keypoints" \
  "$dir/all.log" || { cat "$dir/all.log"; fail "cape_predict's line for the bars"; }
"$python" "$src/test/python/cape_predict_files.py" several "$dir/all.json" "$c/queries.json" "$dir/one.json"
"$predict" "$dir/cape.h5" "$c/train.json" "$c/queries.json" "$dir/by_support.json" --support-annotation 5 \
  --support-annotation 3 > "$dir/by_support.log" 2>&1 || { cat "$dir/by_support.log"; fail "cape_predict, 2 supports"; }
cmp "$dir/all.json" "$dir/by_support.json" || fail "the supports' categories predicted other results than all"
"$predict" "$dir/cape.h5" "$c/train.json" "$c/queries.json" "$dir/by_ids.json" --query-category 2 --query-category 1 \
  --support-annotation 3 --support-annotation 5 > "$dir/by_ids.log" 2>&1 || { cat "$dir/by_ids.log"; fail "cape_predict, 2 ids"; }
cmp "$dir/all.json" "$dir/by_ids.json" || fail "--query-category 2 and 1 predicted other results than all"
"$predict" "$dir/cape.h5" "$c/train.json" "$c/repeated.json" "$dir/all_one_r.json" --query-category all \
  > "$dir/all_one_r.log" 2>&1 || { cat "$dir/all_one_r.log"; fail "cape_predict, all, default supports"; }
"$mpiexec" -np 2 --bind-to none "$predict" "$dir/cape.h5" "$c/train.json" "$c/repeated.json" "$dir/all_two_r.json" \
  --query-category all > "$dir/all_two_r.log" 2>&1 || { cat "$dir/all_two_r.log"; fail "cape_predict, all, 2 ranks"; }
cmp "$dir/all_one_r.json" "$dir/all_two_r.json" || fail "several categories: 1 rank and 2 ranks wrote different results"
grep -q "21 boxes of category 'bar' .* annotation id 2 (2 keypoints, 2 rank(s))" "$dir/all_two_r.log" &&
  grep -q "42 boxes of category 'face' .* annotation id 1 (3 keypoints, 2 rank(s))" "$dir/all_two_r.log" ||
  { cat "$dir/all_two_r.log"; fail "the default supports of several categories"; }
# A query file without boxes: an empty list of results.
"$predict" "$dir/cape.h5" "$c/train.json" "$c/empty.json" "$dir/empty.json" > "$dir/empty.log" 2>&1 ||
  { cat "$dir/empty.log"; fail "cape_predict on a file without boxes"; }
[ "$(cat "$dir/empty.json")" = "[]" ] || fail "no boxes: $(cat "$dir/empty.json"), expected []"

# The inverse map against cape_eval's episodes: the same support and query, the model's own forward.
"$cape_eval" "$dir/cape.h5" "$c/pair.json" --deck "$src/inputs/cape_coco.in" --episodes "$dir/episodes.h5" \
  > "$dir/eval.log" 2>&1 || { cat "$dir/eval.log"; fail "cape_eval on pair.json"; }
for id in 3 4; do
  "$predict" "$dir/cape.h5" "$c/pair.json" "$c/pair.json" "$dir/pair$id.json" --support-annotation "$id" \
    > "$dir/pair$id.log" 2>&1 || { cat "$dir/pair$id.log"; fail "cape_predict on pair.json, support $id"; }
done
"$python" "$src/test/python/cape_predict_files.py" cocoeval "$c/pair.json" "$dir/pair3.json"
# scripts/score-keypoints: the truth as results scores 1; the copy baseline of a box onto itself is the box.
"$python" -c 'import json, sys; g = json.load(open(sys.argv[1])); json.dump([{"image_id": a["image_id"],
  "category_id": 1, "keypoints": a["keypoints"], "score": 1.0} for a in g["annotations"]], open(sys.argv[2], "w"))' \
  "$c/pair.json" "$dir/perfect.json"
"$python" "$src/scripts/score-keypoints" "$c/pair.json" "$dir/perfect.json" --copy "$c/pair.json" 3 \
  --copy-out "$dir/copy3.json" > "$dir/score.log" || { cat "$dir/score.log"; fail "score-keypoints"; }
# Results of several categories are scored a category at a time (Note [keypoint AP per category]); a
# category of the truth without results scores 0, as COCOeval counts it.
"$python" -c 'import json, sys; g = json.load(open(sys.argv[1])); json.dump([{"image_id": a["image_id"],
  "category_id": a["category_id"], "keypoints": a["keypoints"], "score": 1.0} for a in g["annotations"]
  if not a["iscrowd"] and a["category_id"] in map(int, sys.argv[3:])], open(sys.argv[2], "w"))' \
  "$c/train.json" "$dir/perfect_all.json" 1 2
"$python" -c 'import json, sys; g = json.load(open(sys.argv[1])); json.dump([{"image_id": a["image_id"],
  "category_id": 1, "keypoints": a["keypoints"], "score": 1.0} for a in g["annotations"]
  if not a["iscrowd"] and a["category_id"] == 1], open(sys.argv[2], "w"))' "$c/train.json" "$dir/perfect_faces.json"
"$python" "$src/scripts/score-keypoints" "$c/train.json" "$dir/perfect_all.json" --copy "$c/train.json" 3 \
  --copy "$c/train.json" 5 >> "$dir/score.log" || { cat "$dir/score.log"; fail "score-keypoints, 2 categories"; }
"$python" "$src/scripts/score-keypoints" "$c/train.json" "$dir/perfect_faces.json" >> "$dir/score.log" ||
  { cat "$dir/score.log"; fail "score-keypoints, the faces of 2 categories"; }
cat "$dir/score.log"
grep -q "perfect_all.json: category 2 (bar): keypoint AP 1.000, AP50 1.000, AP75 1.000 (3 boxes)" "$dir/score.log" &&
  grep -q "perfect_all.json: keypoint AP 1.000, AP50 1.000, AP75 1.000 (9 boxes, OKS sigma 0.05, the mean of 2 categories)" \
    "$dir/score.log" && grep -q "^copy baseline (supports 3, 5 of .*train.json): category 2 (bar): keypoint AP" "$dir/score.log" &&
  grep -q "perfect_faces.json: category 2 (bar): keypoint AP 0.000" "$dir/score.log" &&
  grep -q "perfect_faces.json: keypoint AP 0.500, AP50 0.500, AP75 0.500 (6 boxes, OKS sigma 0.05, the mean of 2 categories)" \
    "$dir/score.log" || fail "score-keypoints' lines for 2 categories"
"$python" "$src/test/python/cape_predict_files.py" per_category "$c/train.json" "$dir" "$src/scripts/score-keypoints"
# As the pages run it, by its first line: from Debian's python3 without pycocotools it re-runs itself
# with the reference venv's python, a link to that same python3 (their real paths are equal).
if [ -x "$src/.deps/refenv/bin/python" ] && [ -x /usr/bin/python3 ] &&
  ! /usr/bin/python3 -c "import pycocotools" 2>/dev/null; then
  /usr/bin/python3 "$src/scripts/score-keypoints" "$c/pair.json" "$dir/perfect.json" > "$dir/score_debian.log" 2>&1 &&
    grep -q "perfect.json: keypoint AP 1.000" "$dir/score_debian.log" ||
    { cat "$dir/score_debian.log"; fail "score-keypoints from /usr/bin/python3 did not re-run with .deps/refenv's python"; }
fi
grep -q "perfect.json: keypoint AP 1.000, AP50 1.000, AP75 1.000 (2 boxes, OKS sigma 0.05)" "$dir/score.log" &&
  grep -q "^copy baseline (support 3 of .*pair.json): keypoint AP [01]\.[0-9]*, AP50" "$dir/score.log" ||
  fail "score-keypoints' lines"
"$python" -c 'import json, sys; g = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
a, = [a for a in g["annotations"] if a["id"] == 3]; r, = [r for r, b in zip(c, g["annotations"]) if b is a]
assert max(abs(u - v) for u, v in zip(r["keypoints"][0::3] + r["keypoints"][1::3],
                                      a["keypoints"][0::3] + a["keypoints"][1::3])) < 1e-9, (r, a)' \
  "$c/pair.json" "$dir/copy3.json" || fail "the copy baseline of annotation 3 onto its own box is not its keypoints"
"$python" "$src/test/python/cape_predict_files.py" agree "$dir/episodes.h5" "$c/pair.json" 0.25 32 \
  3="$dir/pair3.json" 4="$dir/pair4.json"

refused() {  # refused NAME REGEX WEIGHTS SUPPORT QUERY [OPTIONS]: exit 2 at 2 ranks, one error line matching REGEX, no OUT
  local name=$1 regex=$2
  shift 2
  rm -f "$dir/$name.json"
  set +e
  "$mpiexec" -np 2 --bind-to none "$predict" "$1" "$2" "$3" "$dir/$name.json" "${@:4}" > "$dir/$name.log" \
    2> "$dir/$name.err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$dir/$name.err"; fail "$name: exit $rc, expected 2"; }
  [ "$(grep -c '^cape_predict: ' "$dir/$name.err")" -eq 1 ] && grep -Eq "$regex" "$dir/$name.err" ||
    { cat "$dir/$name.err"; fail "$name: not one line matching $regex"; }
  [ ! -e "$dir/$name.json" ] || fail "$name: $dir/$name.json written"
  grep '^cape_predict: ' "$dir/$name.err"
}
refused no_id "^cape_predict: .*train.json: --support-annotation 77: no annotation has this id" \
  "$dir/cape.h5" "$c/train.json" "$c/queries.json" --support-annotation 77
refused unlabelled "^cape_predict: .*queries.json: annotation id 4 has no labelled keypoint: a support shows" \
  "$dir/cape.h5" "$c/queries.json" "$c/queries.json" --support-annotation 4
refused no_names "^cape_predict: .*no_names.json: categories\[0\] \(id 1\): has no keypoint names" \
  "$dir/cape.h5" "$c/no_names.json" "$c/queries.json"
refused not_image "^cape_predict: .*not_image.json: images\[3\] \(id 103\): .*error_page.jpg" \
  "$dir/cape.h5" "$c/train.json" "$c/not_image.json"
# Damaged in the middle: the header check at open passes it, its decode names it.
refused middle "^cape_predict: (rank [0-9]: )?.*middle_img1.jpg: JPEG: .*\(.*middle.json: annotations\[2\]\)$" \
  "$dir/cape.h5" "$c/train.json" "$c/middle.json"
refused no_box "^cape_predict: .*no_box.json: annotations\[0\] \(id 1\): has no bbox and no labelled keypoint: nothing says where" \
  "$dir/cape.h5" "$c/train.json" "$c/no_box.json"
refused family "^cape_predict: .*other.h5: the weights of a resnet model; cape_predict places keypoints with a cape" \
  "$dir/files/other.h5" "$c/train.json" "$c/queries.json"
refused category "^cape_predict: .*queries.json: --query-category 5: no category has this id; its categories: 1 \(face\), 2 \(bar\)" \
  "$dir/cape.h5" "$c/train.json" "$c/queries.json" --query-category 5
refused no_support "^cape_predict: .*queries.json: category 2 \(bar\) has no support: no --support-annotation is of a category named 'bar'" \
  "$dir/cape.h5" "$c/train.json" "$c/queries.json" --query-category all --support-annotation 3
refused no_default "^cape_predict: .*queries.json: category 2 \(bar\) has no support: .*pair.json has no annotation of a category named 'bar'" \
  "$dir/cape.h5" "$c/pair.json" "$c/queries.json" --query-category all
refused two_faces "^cape_predict: .*train.json: --support-annotation 3 and 4 are both of category 'face': one support a category" \
  "$dir/cape.h5" "$c/train.json" "$c/queries.json" --support-annotation 3 --support-annotation 4
refused count "^cape_predict: .*queries.json: category 2 \(bar\) has 2 keypoints, the support's category 1 \(face\) of .*train.json has 3" \
  "$dir/cape.h5" "$c/train.json" "$c/queries.json" --query-category 2
set +e
"$apps_predict" "$dir/cape.h5" "$c/queries.json" "$dir/rows.h5" > "$dir/rows.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "cape.h5: the cape model has no predict; its family's own tool predicts: apps/cape_predict" \
  "$dir/rows.log" || { cat "$dir/rows.log"; fail "apps/predict on cape weights: exit $rc"; }
[ -z "$(find "$dir" -maxdepth 1 -name '*.tmp.*')" ] || fail "a temporary file left in $dir"
echo "cape_predict: all checks passed"
