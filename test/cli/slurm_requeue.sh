#!/usr/bin/env bash
# jobs/cpu_n1.sbatch on a real Slurm (a private one, test/cli/slurm_local.sh), scaled to this machine
# (2 tasks x 1 CPU; the deck's SMART at batch 32 per rank, tiny widths, 130 trajgen scenes and 6
# epochs of 2 steps): its time limit is shortened
# while it trains, so Slurm sends the script's `--signal=B:USR1@120`; jobs/requeue.sh forwards it,
# train checkpoints and exits 3, requeue.sh runs `scontrol requeue`, the job starts again with
# `resume auto` and finishes, and its weights equal bit for bit those of an uninterrupted run of the
# same deck (mpirun, outside Slurm). Every daemon and process it started is ended on exit.
# usage: slurm_requeue.sh TRAIN_BINARY MPIEXEC WORKDIR SOURCE_DIR   (exit 77: Slurm cannot start)
set -u
train=$1 mpiexec=$2 work=$3 src=$4
rm -rf "$work" && mkdir -p "$work"
source "$src/test/cli/slurm_local.sh"
start=$SECONDS
slurm_start 420  # ctest's TIMEOUT is 600 s

# The submit directory: the repository layout the script expects (jobs/, build/apps/train,
# inputs/cpu_n1.in, data/), with the deck scaled down and every output under the build tree.
sub=$work/submit
mkdir -p "$sub/build/apps" "$sub/inputs" "$sub/data"
ln -s "$src/jobs" "$sub/jobs"
ln -s "$train" "$sub/build/apps/train"
"$(dirname "$train")/trajgen" "$sub/data/scenes_seed002.h5" --scenes 130 --seed 1 >/dev/null || fail "trajgen"
# 2 ranks with batch 32 keep the effective batch at 64; 128 training scenes = 2 steps an epoch;
# checkpoints every 2 steps on top of the deck's every epoch; the model shrunk to seconds.
sed -E -e 's/^ranks_per_node .*/ranks_per_node 2/' -e 's/^batch_size .*/batch_size 32/' \
    -e 's/^epochs .*/epochs 6/' -e 's/^log_every .*/log_every 2/' -e 's/^warmup_steps .*/warmup_steps 2/' \
    -e 's/^smart_hidden .*/smart_hidden 16/' -e 's/^smart_heads .*/smart_heads 2/' \
    -e 's/^smart_(map|agent)_layers .*/smart_\1_layers 1/' -e 's/^motion_vocab .*/motion_vocab 64/' \
    -e 's/^smart_freqs .*/smart_freqs 4/' -e 's/^smart_time_span .*/smart_time_span 2/' \
    -e 's/^smart_(map|agent)_neighbours .*/smart_\1_neighbours 4/' \
    -e 's/^checkpoint_keep .*/checkpoint_keep 100\ncheckpoint_every_steps 2/' \
    "$src/inputs/cpu_n1.in" >"$sub/inputs/cpu_n1.in"
for key in "model +smart" "data_file +data/scenes_seed002.h5" "ranks_per_node 2" "batch_size 32" "epochs 6" \
           "smart_hidden 16" "smart_agent_neighbours 4" "checkpoint_every_steps 2" "checkpoint_dir +runs/" \
           "resume +auto"; do
  grep -Eq "^$key" "$sub/inputs/cpu_n1.in" || fail "scaled deck lacks '$key' (inputs/cpu_n1.in changed?)"
done

# Submit: 2 tasks x 1 CPU instead of 4 x 16 on this node's partition; the script's own --time,
# --signal=B:USR1@120, --requeue and srun line unchanged.
id=$(cd "$sub" && sbatch --parsable --partition="$slurm_partition" --ntasks-per-node=2 --cpus-per-task=1 \
       jobs/cpu_n1.sbatch) || fail "sbatch jobs/cpu_n1.sbatch refused"
job_ids+=("$id")
log=$sub/hpctrain-cpu_n1-$id.out
ckpt=$sub/runs/cpu_n1.ckpt
has_checkpoint() {  # or the job has ended: stop waiting, the next line says how
  ls "$ckpt"/ckpt-*.h5 >/dev/null 2>&1 && return 0
  case "$(job_field "$id" JobState)" in PENDING|CONFIGURING|RUNNING) return 1 ;; esac
}
wait_for 120 "job $id to write its first checkpoint" has_checkpoint
[ "$(job_field "$id" JobState)" = RUNNING ] || fail "job $id is $(job_field "$id" JobState) before any signal"

# Note [pausing the ranks for the signal]: slurmctld checks time limits every 30 s, so USR1 comes up
# to 30 s after the limit is shortened; a fast machine could finish training first. The ranks are
# stopped (SIGSTOP) from just before the limit is shortened until Slurm's USR1, forwarded by
# requeue.sh and srun, is pending in both; the signal then lands mid-training on any machine.
ranks=()
rank_pids() {
  ranks=($(scontrol listpids "$id" 2>/dev/null | awk '$3 == "0" && $4 ~ /^[0-9]+$/ { print $1 }'))
  [ "${#ranks[@]}" -eq 2 ]
}
wait_for 30 "the 2 ranks of job $id (scontrol listpids)" rank_pids
for p in "${ranks[@]}"; do
  [ "$(readlink -f "/proc/$p/exe")" = "$(readlink -f "$train")" ] || fail "pid $p of job $id is not train"
done
stopped_pids=("${ranks[@]}")
kill -STOP "${ranks[@]}"
# The uninterrupted run of the same deck (mpirun, outside Slurm) runs while the job's ranks are
# paused: slurmctld's first time-limit check comes 30 s after it started whatever the test does, and
# the job must be paused by then or the signal waits for the next check, 30 s later.
(cd "$sub" && OMP_NUM_THREADS=1 exec timeout "$(slurm_left)" "$mpiexec" -np 2 --bind-to none ./build/apps/train \
   inputs/cpu_n1.in --set checkpoint_dir=reference.ckpt --set output=reference.weights.h5 \
   --set metrics_file=reference.metrics.jsonl >reference.log 2>&1) &
reference_pid=$!
ckpts_before=$(ls "$ckpt" | grep -c '^ckpt-')
# A limit 60-120 s away from the job's run time: within --signal=B:USR1@120, and time enough left to
# checkpoint and requeue after the signal before the limit itself ends the job.
run_s=$(squeue -h -j "$id" -o %M | awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; print s }')
limit_min=$((run_s / 60 + 2))
scontrol update JobId="$id" TimeLimit="$limit_min" || fail "scontrol update TimeLimit"
echo "job $id: ranks paused after $ckpts_before checkpoint(s), run time ${run_s} s, time limit now $limit_min min"
usr1_pending() {  # SIGUSR1 (10) pending in the process: bit 9 of SigPnd or ShdPnd
  local m
  for m in $(awk '/^(SigPnd|ShdPnd):/ { print $2 }' "/proc/$1/status" 2>/dev/null); do
    (( 0x$m & 0x200 )) && return 0
  done
  return 1
}
both_pending() { usr1_pending "${ranks[0]}" && usr1_pending "${ranks[1]}"; }
signalled() { grep -q '^job: USR1' "$log" 2>/dev/null; }
wait_for 90 "Slurm's USR1 to the batch script (--signal=B:USR1@120)" signalled
wait_for 30 "the forwarded USR1 to reach both ranks" both_pending
kill -CONT "${ranks[@]}"
stopped_pids=()
echo "job $id: USR1 from Slurm forwarded to both ranks after $((SECONDS - start)) s; ranks continued"

wait "$reference_pid" || { tail -20 "$sub/reference.log"; fail "uninterrupted run failed"; }
total=$(grep -o 'Done: [0-9]* steps' "$sub/reference.log" | grep -o '[0-9]*')
echo "reference: $total steps uninterrupted ($((SECONDS - start)) s so far)"

requeued() {  # and out of COMPLETING, so that its time limit can be set again
  [ "$(job_field "$id" Restarts)" = 1 ] &&
    case "$(job_field "$id" JobState)" in PENDING|CONFIGURING|RUNNING) true ;; *) false ;; esac
}
wait_for 120 "job $id to be requeued" requeued
grep -q '^job: step exited with 3$' "$log" || fail "the step did not exit with 3"
stop_line=$(grep -o 'Stopped by signal 10 at step [0-9]*' "$log" | head -1)
[ -n "$stop_line" ] || fail "train did not report the stop"
stop_step=${stop_line##* }
grep -q "^job: checkpoint written; requeueing job $id$" "$log" || fail "requeue.sh did not requeue"
[ "$stop_step" -gt 0 ] && [ "$stop_step" -lt "$total" ] || fail "stopped at step $stop_step of $total"
echo "job $id: exit 3 at step $stop_step of $total, requeued by jobs/requeue.sh ($((SECONDS - start)) s)"

# Slurm holds a requeued job for the credential lifetime ($slurm_cred_expire s here): the script's
# own time limit goes back meanwhile, so the resumed run finishes without another signal.
scontrol update JobId="$id" TimeLimit=02:00:00 || fail "scontrol update TimeLimit (back)"
finished() { case "$(job_field "$id" JobState)" in PENDING|CONFIGURING|RUNNING|COMPLETING) return 1 ;; esac; }
wait_for 180 "the requeued job $id to finish" finished
state=$(job_field "$id" JobState) exit_code=$(job_field "$id" ExitCode)
[ "$state" = COMPLETED ] && [ "$exit_code" = 0:0 ] || fail "job $id ended $state, exit code $exit_code"
[ "$(job_field "$id" Restarts)" = 1 ] || fail "job $id restarted $(job_field "$id" Restarts) times, expected 1"
grep -q "^job $id (cpu_n1) on $slurm_node, restart 1$" "$log" || fail "no restart 1 in the job log"
grep -q "^resume: from runs/cpu_n1.ckpt/ckpt-0*$stop_step.h5" "$log" ||
  fail "the requeued run did not resume from step $stop_step: $(grep '^resume' "$log")"
grep -q "^Done: $((total - stop_step)) steps" "$log" || fail "the resumed run did not finish the remaining steps"

# Final weights: every dataset of the uninterrupted run's file, bit for bit (attributes hold each
# run's deck and differ on purpose).
# Both files' datasets in name order, dumped by one h5dump each, compared; h5diff names a difference.
datasets=$(h5ls -r "$sub/reference.weights.h5" | awk '$2 == "Dataset" { print $1 }' | sort)
[ -n "$datasets" ] || fail "no datasets in the reference weights"
dump_args=()
for d in $datasets; do dump_args+=(-d "$d"); done
for f in reference.weights runs/cpu_n1.weights; do
  h5dump -b LE -o "$sub/$f.bin" "${dump_args[@]}" "$sub/$f.h5" >/dev/null || fail "h5dump $sub/$f.h5"
done
if ! cmp -s "$sub/reference.weights.bin" "$sub/runs/cpu_n1.weights.bin"; then
  for d in $datasets; do
    h5diff -q "$sub/reference.weights.h5" "$sub/runs/cpu_n1.weights.h5" "$d" "$d" ||
      fail "weights $d after signal + requeue differ from the uninterrupted run"
  done
  fail "weights after signal + requeue differ from the uninterrupted run"
fi
echo "job $id: resumed from step $stop_step and completed; $(echo $datasets | wc -w) weight datasets equal" \
     "the uninterrupted run's bit for bit; $((SECONDS - start)) s in all"
echo "PASS"
