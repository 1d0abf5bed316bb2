# Sourced by jobs/*.sbatch: runs one srun step, forwards SIGUSR1 to it and requeues on exit code 3.
#
# Requeue pattern (the script side of train's checkpoints; docs/outputs.md "Checkpoints, resume and requeue"):
#   `#SBATCH --signal=B:USR1@120` makes Slurm send USR1 to this batch shell 120 s before the time
#   limit; we forward it to the step (srun passes USR1 on to every rank). train then writes a
#   checkpoint at the next step boundary and exits 3 = "checkpoint written, requeue me", and we
#   `scontrol requeue` the job, which restarts this script (same job id, SLURM_RESTART_COUNT + 1).
#   The layout decks set `resume auto`, so the restarted run continues from that checkpoint.
run_with_requeue() {
  "$@" &
  local pid=$! rc
  trap 'echo "job: USR1 (time limit in 120 s): forwarding to the step"; kill -USR1 "$pid" 2>/dev/null' USR1
  while :; do
    wait "$pid"
    rc=$?
    kill -0 "$pid" 2>/dev/null || break  # wait returns early (128+n) when a trapped signal arrives
  done
  trap - USR1
  if [ "$rc" -gt 128 ]; then  # the step may have exited right after an interrupted wait
    wait "$pid" 2>/dev/null
    local again=$?
    [ "$again" -ne 127 ] && rc=$again
  fi
  echo "job: step exited with $rc"
  if [ $rc -eq 3 ]; then
    echo "job: checkpoint written; requeueing job $SLURM_JOB_ID"
    scontrol requeue $SLURM_JOB_ID
  fi
  return $rc
}
