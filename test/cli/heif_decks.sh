#!/usr/bin/env bash
# inputs/resnet_folder.in on a folder mixing HEIC, AVIF, PNG and JPEG files (make_heif_images.py's
# broken/mixed_removed: heif-enc's, pillow-heif's and Pillow's), 2 ranks, a few steps: it trains, and
# broken/mixed_cut (the same with a HEIC and an AVIF cut short) with broken_images skip trains as
# it does, bitwise (losses and weights), the two files named in the log; without skip the open
# stops naming one of them (exit 2, one error line); without libheif a HEIC is refused saying so.
# usage: heif_decks.sh TRAIN PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR HEIF_FILES
set -euo pipefail
train=$1 python=$2 mpiexec=$3 dir=$4 src=$5 g=$6/broken
"$python" -c "import h5py, numpy" 2>/dev/null || { echo "heif_decks: no h5py/numpy in $python"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
args=(--set validation_file= --set image_channels=3 --set image_height=12 --set image_width=12
      --set image_mean=0.5 --set image_std=0.25 --set resnet_width=4 --set resnet_stem=small --set num_classes=3
      --set lr_schedule=constant --set warmup_steps=0 --set log_every=1 --set conv_algorithm=gemm
      --set batch_size=4 --set epochs=1 --set broken_images=skip)
run() {  # run NAME DATA: resnet_folder.in at 2 ranks on DATA, its outputs under $dir/NAME
  "$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/resnet_folder.in" --set data_file="$2" "${args[@]}" \
    --set output="$dir/$1.h5" --set metrics_file="$dir/$1.jsonl" > "$dir/$1.log" 2>&1 || { cat "$dir/$1.log"; exit 1; }
}
run removed "$g/mixed_removed"
run skip "$g/mixed_cut"
grep -q "data $g/mixed_removed: 15 training rows, 1 validation rows" "$dir/removed.log" &&
  grep -q "mixed_cut: 2 of 18 image files left out as broken (broken_images skip): " "$dir/skip.log" &&
  grep -q "mixed_cut/cls1/c.heic: HEIF: " "$dir/skip.log" && grep -q "mixed_cut/cls2/d.avif: HEIF: " "$dir/skip.log" ||
  { echo "heif_decks: the runs' logs"; cat "$dir/removed.log" "$dir/skip.log"; exit 1; }
set +e
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/resnet_folder.in" --set data_file="$g/mixed_cut" \
  "${args[@]}" --set broken_images=error --set output="$dir/stop.h5" --set metrics_file= > "$dir/stop.log" 2> "$dir/stop.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && [ "$(grep -c '^error: ' "$dir/stop.err")" -eq 1 ] &&
  grep -Eq "^error: .*mixed_cut/cls(1/c.heic|2/d.avif): HEIF: .*\(row [0-9]+ of " "$dir/stop.err" ||
  { echo "heif_decks: without skip: exit $rc"; cat "$dir/stop.err"; exit 1; }
# Note [libheif loaded]: where libheif cannot be loaded (HPCTRAIN_LIBHEIF names a file that is not
# there, as on a node without libheif1), a HEIC is refused at open naming it, why and what to install.
set +e
HPCTRAIN_LIBHEIF="$dir/no-libheif.so.1" "$mpiexec" -np 1 "$train" "$src/inputs/resnet_folder.in" \
  --set data_file="$g/mixed_removed" "${args[@]}" --set broken_images=error --set output="$dir/nolib.h5" \
  --set metrics_file= > "$dir/nolib.log" 2> "$dir/nolib.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -Eq "^error: .*mixed_removed/cls0/(c|e).heic: a HEIF/AVIF image, and libheif cannot be loaded \
\($dir/no-libheif.so.1: cannot open shared object file: No such file or directory\): install libheif1" "$dir/nolib.err" ||
  { echo "heif_decks: without libheif: exit $rc"; cat "$dir/nolib.err"; exit 1; }
"$python" - "$dir" "$src/test/python" <<'PY'
import sys, numpy as np
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from tool_run import losses, weights_flat as flat  # noqa: E402
keys = ("loss", "train_loss")
a, b = losses(f"{d}/skip.jsonl", keys), losses(f"{d}/removed.jsonl", keys)
assert a and a == b, (a, b)
assert all(np.isfinite(l) for t, l, _ in a if t == "step"), a
assert np.array_equal(flat(f"{d}/skip.h5"), flat(f"{d}/removed.h5")), "weights differ"
print(f"heif_decks: HEIC, AVIF, PNG and JPEG at 2 ranks: {sum(t == 'step' for t, _, _ in a)} steps; broken_images "
      "skip == the folder without the cut HEIC and AVIF, bitwise")
PY
