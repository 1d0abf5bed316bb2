#!/usr/bin/env bash
# rank_invariant true (issue 39, Note [rank invariance] in src/train/rank_invariant.cpp): every
# network family's scaled-down quickstart keeps the global batch and trains on 1, 2 and 4 ranks
# (and 3 where the batch allows), and the weights files hold the same bytes in every dataset (the
# files' deck attribute names the per-rank batch, so the datasets are dumped and compared with cmp).
# mlp also with gradient accumulation, ZeRO-1, clipping and an EMA, in both sums (12 chunks a step:
# fixed point; 4: the float tree), and a run resumed on another
# rank count from a mid-epoch checkpoint of a 4-rank run equals the uninterrupted 1-rank run.
# diffusion also with its chunks fused (Note [fused chunks]) and not, accumulation, MPI's buckets,
# and 3 ranks (the fixed-point sum); gnn and smart on 3 ranks too.
# usage: rank_invariant.sh BUILD_DIR MPIEXEC WORKDIR SOURCE_DIR PYTHON [FAMILY...]
# (no FAMILY: all of them; PYTHON: the reference venv's, for the digits and token data)
set -u
build=$1 mpiexec=$2 work=$3 src=$4 python=$5
shift 5
families=${*:-mlp diffusion gnn smart transformer resnet cape}
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
command -v h5dump >/dev/null && command -v h5ls >/dev/null || fail "h5dump/h5ls missing (hdf5-tools)"
export OMP_NUM_THREADS=1
apps=$build/apps

# train NAME RANKS DECK ARGS...: a rank_invariant run writing $work/NAME.h5.
train() {
  local name=$1 np=$2 deck=$3
  shift 3
  "$mpiexec" -np "$np" --oversubscribe --bind-to none "$apps/train" "$src/inputs/$deck" --set rank_invariant=true \
    --set metrics_file= --set checkpoint_dir= --set output="$work/$name.h5" "$@" >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log"; fail "train $name ($np ranks)"; }
}
# dump NAME: every dataset of NAME.h5, in name order, as raw little-endian bytes, into NAME.bin
# (one h5dump for all of them: it writes each -d's data after the previous one's).
dump() {
  local f=$work/$1.h5 out=$work/$1.bin d
  local args=()
  for d in $(h5ls -r "$f" | awk '$2 == "Dataset" { print $1 }' | sort); do args+=(-d "$d"); done
  [ "${#args[@]}" -gt 0 ] || fail "$f holds no dataset"
  rm -f "$out"
  h5dump -b LE -o "$out" "${args[@]}" "$f" >/dev/null || fail "h5dump $f"
  [ -s "$out" ] || fail "h5dump wrote no data from $f"
}
# same REF NAME...: the weights of every NAME are those of REF, bit for bit.
same() {
  local ref=$1
  shift
  dump "$ref"
  for n in "$@"; do
    dump "$n"
    cmp "$work/$ref.bin" "$work/$n.bin" || fail "$n: weights differ from $ref"
  done
  echo "bitwise: $ref == $*"
}

# on_1_2_4 NAME GLOBAL DECK ARGS...: NAME1, NAME2 and NAME4 on 1, 2 and 4 ranks with the global batch
# GLOBAL split over them, the same weights bit for bit.
on_1_2_4() {
  local name=$1 global=$2 r
  shift 2
  for r in 1 2 4; do train "$name$r" "$r" "$@" --set batch_size=$((global / r)); done
  same "${name}1" "${name}2" "${name}4"
}

for family in $families; do
  case $family in
  mlp)
    # 540 training rows, global batch 48: the epoch's last step is partial (12 rows, some empty chunks).
    "$apps/datagen" friedman1 "$work/f1.h5" --rows 600 >/dev/null || fail "datagen friedman1"
    m=(quickstart.in --set data_file="$work/f1.h5" --set epochs=2 --set hidden_sizes=16,8 --set warmup_steps=4
       --set clip_grad_norm=0.5 --set ema_decay=0.9 --set rank_invariant_chunk=4)
    train mlp1 1 "${m[@]}" --set batch_size=48
    train mlp2 2 "${m[@]}" --set batch_size=24
    train mlp3 3 "${m[@]}" --set batch_size=16
    train mlp4 4 "${m[@]}" --set batch_size=12
    train mlp2acc 2 "${m[@]}" --set batch_size=12 --set accumulation_steps=2
    train mlp2zero 2 "${m[@]}" --set batch_size=24 --set optimizer_sharding=true
    train mlp4zero 4 "${m[@]}" --set batch_size=12 --set optimizer_sharding=true
    same mlp1 mlp2 mlp3 mlp4 mlp2acc mlp2zero mlp4zero
    # The default chunk (48 / 4): 4 chunks a step, summed in the fixed float tree.
    train tree1 1 "${m[@]}" --set rank_invariant_chunk=0 --set batch_size=48
    train tree2 2 "${m[@]}" --set rank_invariant_chunk=0 --set batch_size=24 --set optimizer_sharding=true
    train tree4 4 "${m[@]}" --set rank_invariant_chunk=0 --set batch_size=12
    same tree1 tree2 tree4
    grep -q "rank_invariant: chunks of 4 samples" "$work/mlp2.log" || fail "no rank_invariant log line"
    # Resume across rank counts: a 4-rank ZeRO-1 run's checkpoint after step 7 (mid-epoch), resumed
    # on 2 ranks and on 1, continues the uninterrupted run bit for bit.
    "$mpiexec" -np 4 --oversubscribe --bind-to none "$apps/train" "$src/inputs/quickstart.in" "${m[@]:1}" \
      --set rank_invariant=true --set batch_size=12 --set optimizer_sharding=true --set metrics_file= \
      --set checkpoint_dir="$work/ckpt" --set checkpoint_every_steps=7 --set checkpoint_keep=100 \
      --set output="$work/mlp4ckpt.h5" >"$work/mlp4ckpt.log" 2>&1 || { cat "$work/mlp4ckpt.log"; fail "checkpointed run"; }
    ckpt=$(ls "$work/ckpt" | grep -E '^ckpt-0*7[^0-9]' | head -1)
    [ -n "$ckpt" ] || { ls "$work/ckpt"; fail "no checkpoint after step 7"; }
    train mlp_resumed2 2 "${m[@]}" --set batch_size=24 --set resume="$work/ckpt/$ckpt"
    train mlp_resumed1 1 "${m[@]}" --set batch_size=48 --set resume="$work/ckpt/$ckpt"
    grep -q "resume: from" "$work/mlp_resumed2.log" || fail "the 2-rank run did not resume"
    same mlp1 mlp4ckpt mlp_resumed2 mlp_resumed1
    # A chunk that does not divide the per-rank batch: an error naming the key, on every rank.
    "$mpiexec" -np 2 --oversubscribe --bind-to none "$apps/train" "$src/inputs/quickstart.in" "${m[@]:1}" \
      --set rank_invariant=true --set batch_size=6 --set output= --set metrics_file= >"$work/err.log" 2>&1 &&
      fail "a chunk of 4 with batch_size 6 was accepted"
    grep -q "rank_invariant_chunk: 4 does not divide batch_size 6" "$work/err.log" || { cat "$work/err.log"; fail "error text"; }
    ;;
  diffusion)
    "$apps/diffgen" "$work/diff.h5" --rows 200 --seed 1 >/dev/null || fail "diffgen"
    d=(diffusion_quickstart.in --set data_file="$work/diff.h5" --set diffusion_hidden=32 --set epochs=1
       --set warmup_steps=2)
    # Note [fused chunks]: 1 rank runs its 4 chunks as one micro-batch, 2 ranks 2 (the exchange
    # overlapped with backward), 4 ranks one; fused false and MPI's buckets give the same bits.
    on_1_2_4 diff 32 "${d[@]}"
    grep -q "rank_invariant: 2 chunks per micro-batch" "$work/diff2.log" || fail "diff2: chunks not fused"
    train diff2u 2 "${d[@]}" --set batch_size=16 --set rank_invariant_fuse=false
    train diff2mpi 2 "${d[@]}" --set batch_size=16 --set comm_backend=mpi --set bucket_mb=0.01
    same diff1 diff2u diff2mpi
    # Chunks of 4: 8 fused on 1 rank, 2 micro-batches of 2 with accumulation on 2, 2 on 4.
    train dc1 1 "${d[@]}" --set rank_invariant_chunk=4 --set batch_size=32
    train dc2 2 "${d[@]}" --set rank_invariant_chunk=4 --set batch_size=8 --set accumulation_steps=2
    train dc4 4 "${d[@]}" --set rank_invariant_chunk=4 --set batch_size=8
    same dc1 dc2 dc4
    # 6 chunks a step (the fixed-point sum) on 1, 2 and 3 ranks, fused 6, 3 and 2.
    train dq1 1 "${d[@]}" --set rank_invariant_chunk=4 --set batch_size=24
    train dq2 2 "${d[@]}" --set rank_invariant_chunk=4 --set batch_size=12
    train dq3 3 "${d[@]}" --set rank_invariant_chunk=4 --set batch_size=8
    same dq1 dq2 dq3
    # The seed-000 widths (hidden 256: other GEMM kernels), fused 4, 2 and 1 chunks a rank.
    on_1_2_4 dwide 32 "${d[@]}" --set diffusion_hidden=256
    ;;
  gnn)
    "$apps/wxgen" "$work/wx.nc" --nx 10 --ny 8 --margin 4 --hours 40 >/dev/null || fail "wxgen"
    g=(gnn_quickstart.in --set data_file="$work/wx.nc" --set gnn_latent=8 --set gnn_layers=2 --set epochs=1)
    on_1_2_4 gnn 8 "${g[@]}"
    # 3 chunks of 4 a step (the fixed-point sum) on 1 and 3 ranks.
    train gnnq1 1 "${g[@]}" --set rank_invariant_chunk=4 --set batch_size=12
    train gnnq3 3 "${g[@]}" --set rank_invariant_chunk=4 --set batch_size=4
    same gnnq1 gnnq3
    ;;
  smart)
    # 18 training scenes: the epoch's last step holds 2 (on 4 ranks, ranks without a sample in it).
    "$apps/trajgen" "$work/scenes.h5" --scenes 20 --seed 1 >/dev/null || fail "trajgen"
    s=(smart_quickstart.in --set data_file="$work/scenes.h5" --set smart_hidden=16 --set motion_vocab=512
       --set epochs=1 --set warmup_steps=2)
    on_1_2_4 smart 8 "${s[@]}"
    train smartq1 1 "${s[@]}" --set rank_invariant_chunk=2 --set batch_size=6
    train smartq3 3 "${s[@]}" --set rank_invariant_chunk=2 --set batch_size=2
    same smartq1 smartq3
    ;;
  transformer)
    "$python" "$src/scripts/make-tokens" "$work/tokens.h5" --max-rows 120 >/dev/null || fail "make-tokens"
    t=(lm_quickstart.in --set data_file="$work/tokens.h5" --set transformer_dim=16 --set transformer_layers=1
       --set epochs=1 --set warmup_steps=2)
    on_1_2_4 lm 16 "${t[@]}"
    ;;
  resnet)
    "$python" "$src/scripts/make-digits" "$work" >/dev/null || fail "make-digits"
    r=(resnet_digits.in --set data_file="$work/digits_train.h5" --set validation_file="$work/digits_test.h5"
       --set resnet_width=4 --set epochs=1 --set warmup_steps=2)
    on_1_2_4 resnet 64 "${r[@]}"
    ;;
  cape)
    "$apps/posegen" "$work/pose.h5" "$work/pose_test.h5" --categories 8 --test-categories 3 --rows 32 \
      --test-rows 12 --size 32 --views 3 --max-keypoints 6 >/dev/null || fail "posegen"
    c=(cape_quickstart.in --set data_file="$work/pose.h5" --set validation_file="$work/pose_test.h5"
       --set sync_batch_norm=false --set resnet_width=16 --set cape_dim=16 --set epochs=1 --set warmup_steps=2)
    # The deck's default conv_algorithm library (oneDNN on host builds; width 16: channels that block,
    # Note [blocked activations]), and gemm.
    on_1_2_4 cape 16 "${c[@]}"
    on_1_2_4 capegemm 16 "${c[@]}" --set conv_algorithm=gemm --set resnet_width=4
    ;;
  *) fail "unknown family $family" ;;
  esac
done
echo "PASS"
