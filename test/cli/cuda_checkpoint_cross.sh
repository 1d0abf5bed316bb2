#!/usr/bin/env bash
# Checkpoints cross builds ("train on CPU, resume on GPU"; run by ctest from the repository root of
# a CUDA build that has its host build next to it). One rank, so it also runs on a one-GPU node:
#  1. the host build trains with checkpoints; the CUDA build resumes from one of them and finishes;
#  2. the CUDA build trains with checkpoints; the host build resumes from one of them and finishes;
#  3. the CUDA build resumes from its own checkpoint.
# Every resume must say which checkpoint and which build wrote it, and run exactly the remaining steps.
# What it proves depends on the node (the GPU is NOT hidden here, unlike cuda_host_fallback.sh):
#  - with a GPU, the CUDA runs execute on it: the file written by Cuda kernels loads into the host
#    build and back, and training continues close to the uninterrupted run of the other build (float
#    sums in another order: a tolerance), and bitwise on the same build (3.);
#  - without a GPU (this machine, CI), the CUDA program hands over to its host twin
#    (core/gpu_fallback.hpp): the CUDA install's launcher path works with checkpoints in both
#    directions, and since both sides then run the same host kernels, every result is bitwise equal.
# usage: cuda_checkpoint_cross.sh CUDA_TRAIN HOST_TRAIN MPIEXEC WORKDIR
set -u
cuda_train=$1 host_train=$2 mpiexec=$3 work=$4
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
every=20  # checkpoint cadence in steps; the resumes start from the 2nd checkpoint (mid-epoch)
base=(--set data_file=$work/data.h5 --set epochs=2 --set batch_size=16 --set hidden_sizes=32,32
      --set log_every=1000000 --set metrics_file= --set checkpoint_every_steps=$every --set checkpoint_keep=100)
"$(dirname "$host_train")/datagen" friedman1 "$work/data.h5" --rows 1200 >/dev/null || fail "datagen"
run() {  # BINARY LOG ARGS...
  local binary=$1 log=$2
  shift 2
  "$mpiexec" -np 1 --bind-to none "$binary" inputs/quickstart.in "${base[@]}" "$@" >"$log" 2>&1 ||
    fail "$binary $*: exit code $? ($(tail -3 "$log"))"
}
steps_of() { grep -o 'Done: [0-9]* steps' "$1" | grep -o '[0-9]*'; }
val_loss_of() { grep -o 'final val loss [0-9.e+-]*' "$1" | grep -o '[0-9.e+-]*$'; }
same_weights() {  # bit for bit (attributes differ on purpose: they hold each run's deck)
  local t
  for t in fc0/weight fc0/bias fc1/weight fc1/bias fc2/weight fc2/bias; do
    h5diff -q "$1" "$2" "$t" "$t" || return 1
  done
}
close_weights() {  # GPU vs host: every weight within 1e-3 of the other run's
  local t
  for t in fc0/weight fc0/bias fc1/weight fc1/bias fc2/weight fc2/bias; do
    h5diff -q -d 1e-3 "$1" "$2" "$t" "$t" || return 1
  done
}
close_loss() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.02 * b) }'; }

# Both uninterrupted runs, with checkpoints.
run "$host_train" "$work/host.log" --set checkpoint_dir=$work/host_ckpt --set output=$work/host.h5
run "$cuda_train" "$work/cuda.log" --set checkpoint_dir=$work/cuda_ckpt --set output=$work/cuda.h5
steps=$(steps_of "$work/host.log")
[ "$(steps_of "$work/cuda.log")" = "$steps" ] || fail "the host and CUDA runs took different step counts"
resume_step=$((2 * every))
[ "$steps" -gt "$resume_step" ] || fail "only $steps steps: no checkpoint to resume from"
ckpt=$(printf 'ckpt-%09d.h5' "$resume_step")
if grep -q "execution space Cuda" "$work/cuda.log"; then
  on_gpu=1 cuda_backend=Cuda
  echo "the CUDA build runs on the GPU: $(grep -o 'device [0-9]*: [^,]*' "$work/cuda.log" | head -1)"
else
  grep -q "^warning: no GPU visible on host" "$work/cuda.log" || fail "the CUDA build neither ran on a GPU nor fell back"
  on_gpu=0 cuda_backend=OpenMP
  echo "no GPU here: the CUDA build hands over to its host twin, so all results must be bitwise equal"
fi

resume() {  # BINARY NAME CHECKPOINT_DIR WRITER_BACKEND
  run "$1" "$work/$2.log" --set resume=$3/$ckpt --set output=$work/$2.h5
  grep -q "^resume: from $3/$ckpt (step $resume_step, .*, $4 build)$" "$work/$2.log" ||
    fail "$2: no line 'resume: from $3/$ckpt (step $resume_step ... $4 build)'"
  [ "$(steps_of "$work/$2.log")" = "$((steps - resume_step))" ] ||
    fail "$2: $(steps_of "$work/$2.log") steps after the resume, expected $((steps - resume_step))"
}
resume "$cuda_train" host_to_cuda "$work/host_ckpt" OpenMP
resume "$host_train" cuda_to_host "$work/cuda_ckpt" "$cuda_backend"
resume "$cuda_train" cuda_to_cuda "$work/cuda_ckpt" "$cuda_backend"
same_weights "$work/cuda.h5" "$work/cuda_to_cuda.h5" || fail "CUDA -> CUDA resume: weights differ from the CUDA run"

if [ "$on_gpu" -eq 0 ]; then
  for r in cuda host_to_cuda cuda_to_host; do
    same_weights "$work/host.h5" "$work/$r.h5" || fail "$r: weights differ bitwise from the host run"
  done
  echo "ok: host -> CUDA build -> host resumes are bitwise identical to the uninterrupted runs (host twin)"
  exit 0
fi
# On a GPU: the cross resumes continue the run of the build that wrote the checkpoint, to rounding.
for pair in "host host_to_cuda" "cuda cuda_to_host" "host cuda"; do
  set -- $pair
  close_weights "$work/$1.h5" "$work/$2.h5" || fail "$2: weights further than 1e-3 from the $1 run"
  close_loss "$(val_loss_of "$work/$2.log")" "$(val_loss_of "$work/$1.log")" ||
    fail "$2: final val loss $(val_loss_of "$work/$2.log") not within 2% of the $1 run's $(val_loss_of "$work/$1.log")"
done
echo "ok: checkpoints written on the GPU resume on the host and the other way, and continue the run"
