#!/usr/bin/env bash
# Every jobs/*.sbatch is accepted by a real Slurm's `sbatch --test-only` (a private one,
# test/cli/slurm_local.sh): all of its #SBATCH options (--signal=B:USR1@120, --requeue,
# --open-mode=append, --gpus-per-node, ...) are read by Slurm itself. Only what this one node cannot
# hold is overridden on the command line: the partition, one node, ranks per node up to its CPUs and
# one CPU per rank; the GPU counts stay (the node advertises four stand-in GPUs).
# usage: slurm_sbatch_test_only.sh WORKDIR SOURCE_DIR   (exit 77: Slurm cannot start)
set -u
work=$1 src=$2
rm -rf "$work" && mkdir -p "$work"
source "$src/test/cli/slurm_local.sh"
slurm_start 120

scripts=("$src"/jobs/*.sbatch)
[ "${#scripts[@]}" -ge 7 ] || fail "expected the 7 layouts in $src/jobs, found ${#scripts[@]}"
bad=0
for f in "${scripts[@]}"; do
  name=$(basename "$f")
  tasks=$(sed -n 's/^#SBATCH --ntasks-per-node=\([0-9]*\).*/\1/p' "$f")
  [ -n "$tasks" ] || { echo "$name: no --ntasks-per-node"; bad=1; continue; }
  [ "$tasks" -gt "$slurm_cpus" ] && tasks=$slurm_cpus
  overrides=(--partition="$slurm_partition" --nodes=1 --ntasks-per-node="$tasks" --cpus-per-task=1)
  out=$(cd "$work" && sbatch --test-only "${overrides[@]}" "$f" 2>&1)
  rc=$?
  # The one line sbatch --test-only prints for a job it would run; anything else (an unknown or
  # invalid option, a warning) fails the script.
  if [ $rc -ne 0 ] || [ "$(echo "$out" | wc -l)" -ne 1 ] ||
     ! echo "$out" | grep -Eq "^sbatch: Job [0-9]+ to start at .* on nodes $slurm_node in partition $slurm_partition$"; then
    echo "$name: refused (rc $rc) with ${overrides[*]}:"
    echo "$out" | sed 's/^/  /'
    bad=1
  else
    echo "$name: accepted with ${overrides[*]}"
  fi
done
[ $bad -eq 0 ] || fail "a job script was refused by sbatch --test-only"
echo "PASS"
