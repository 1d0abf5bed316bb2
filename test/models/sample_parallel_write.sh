#!/bin/sh
# apps/sample writes its one output file from every rank at once (parallel HDF5, each rank its
# hyperslab): 1 and 2 ranks must give the same file (values, attributes, types, layout), also when a
# rank has no contexts, and leave no temporary file. --chunk equals --members, so every network batch
# is one context and the values do not depend on how contexts are split over ranks.
# usage: sample_parallel_write.sh BUILD_DIR SOURCE_DIR MPIEXEC
set -eu
build=$1 src=$2 mpiexec=$3
command -v h5diff >/dev/null && command -v h5dump >/dev/null || { echo "h5diff/h5dump missing: skipped"; exit 77; }
dir=$build/test/scratch_sample_parallel_write  # under the build tree, as every test writes
rm -rf "$dir" && mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
"$build/apps/diffgen" "$dir/train.h5" --rows 200 --seed 1 >/dev/null
"$build/apps/diffgen" "$dir/test.h5" --rows 13 --seed 2 >/dev/null
"$mpiexec" -n 1 --bind-to none "$build/apps/train" "$src/inputs/diffusion_quickstart.in" \
  --set data_file="$dir/train.h5" --set diffusion_hidden=32 --set epochs=1 --set batch_size=16 \
  --set warmup_steps=0 --set output="$dir/w.h5" --set metrics_file= >"$dir/train.log" 2>&1 || { cat "$dir/train.log"; exit 1; }
sample() {  # ranks rows output
  "$mpiexec" -n "$1" --oversubscribe --bind-to none "$build/apps/sample" "$dir/w.h5" "$dir/test.h5" "$3" \
    --members 3 --chunk 3 --method ddim --steps 3 --rows "$2" >"$3.log" 2>&1 || { cat "$3.log"; exit 1; }
}
for rows in 13 1; do
  sample 1 $rows "$dir/one_$rows.h5"
  sample 2 $rows "$dir/two_$rows.h5"
  h5diff -c "$dir/one_$rows.h5" "$dir/two_$rows.h5" || { echo "1 and 2 ranks differ ($rows contexts)"; exit 1; }
  # The same datasets, attributes, types and storage layout (the first line names the file). The
  # MPI-IO driver allocates dataset space when it creates the dataset, not at the first write.
  h5dump -p -H "$dir/one_$rows.h5" | sed -e 1d -e 's/H5D_ALLOC_TIME_[A-Z]*/ALLOC_TIME/' >"$dir/one.h"
  h5dump -p -H "$dir/two_$rows.h5" | sed -e 1d -e 's/H5D_ALLOC_TIME_[A-Z]*/ALLOC_TIME/' >"$dir/two.h"
  diff "$dir/one.h" "$dir/two.h" || { echo "1 and 2 ranks write different layouts"; exit 1; }
  grep -q "ensembles \[$rows, 3, 256\]" "$dir/two_$rows.h5.log" || { cat "$dir/two_$rows.h5.log"; exit 1; }
done
if ls "$dir"/*.tmp.* >/dev/null 2>&1; then echo "temporary file left behind"; exit 1; fi
echo "sample parallel write test passed"
