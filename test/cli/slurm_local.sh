# A private, real Slurm on this one machine for the tests (sourced): munged, slurmctld and slurmd
# with a configuration, state, spool and logs under the test's work directory, started by
# slurm_start and stopped by the EXIT trap it sets, which also ends every process left behind.
#
# Note [a private Slurm]: Debian's slurm-wlm (scripts/setup --slurm, implied by --reference) with
# nothing of the system's: its own munge key and socket, free ports picked at start, SLURM_CONF
# exported, so it never meets a site's or another test's Slurm. One node = this host with the CPUs and
# memory `slurmd -C` reports. proctrack/linuxproc and task/none: no cgroups, which containers and CI
# machines often do not delegate (srun then says "cluster configuration lacks support for cpu
# binding" and runs the ranks unbound). The node also advertises four stand-in GPUs (gres.conf names
# /dev/null, /dev/zero, /dev/full, /dev/urandom; Slurm only counts them) so that `sbatch --test-only`
# checks the GPU scripts' --gpus-per-node; no job here asks for a GPU, so nothing opens them.
# MpiDefault stays none, Slurm's default: the jobs must choose PMIx themselves (srun --mpi=pmix).
#
# The caller sets `work` (an empty directory under the build tree) and may set `job_ids` (a list that
# cleanup scancels) and `stopped_pids` (processes it sent SIGSTOP, continued before cleanup).
# Exit 77 only where Slurm cannot start at all (not installed, not root, a daemon that will not come
# up), saying why.
slurm_node=localnode
slurm_partition=local
job_ids=()
stopped_pids=()
slurm_pids=()  # slurmctld, slurmd
munge_pid=
# Credential lifetime, and so how long Slurm holds a requeued job before starting it again
# (slurm.conf AuthInfo cred_expire, default 120 s; starting it sooner fails, "Job credential revoked").
# Slurm takes 5 s at least; 10 leaves a step's launch on a busy machine time within its credential.
slurm_cred_expire=10

. "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # fail, skip

# Seconds left before the test's own deadline (set by slurm_start): every wait is bounded by it, so
# the EXIT trap always runs before ctest's TIMEOUT would kill the test with its daemons.
slurm_left() { echo $((slurm_deadline - SECONDS)); }

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s until it succeeds; fails naming WHAT.
wait_for() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  [ "$end" -gt "$slurm_deadline" ] && end=$slurm_deadline
  while ! "$@"; do
    [ "$SECONDS" -ge "$end" ] && fail "timed out after ${limit} s waiting for $what"
    sleep 0.2
  done
}

# One field of `scontrol show job` (JobState, Restarts, ExitCode, ...).
job_field() { scontrol -o show job "$1" 2>/dev/null | grep -o "\b$2=[^ ]*" | head -1 | cut -d= -f2; }

slurm_write_config() {
  local dir=$1 ctld_port=$2 slurmd_port=$3
  local host hw
  host=$(uname -n)
  host=${host%%.*}  # the short name, which slurmctld compares with SlurmctldHost
  # "CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105"
  hw=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
  slurm_cpus=$(echo "$hw" | grep -o '\bCPUs=[0-9]*' | cut -d= -f2)
  cat >"$dir/slurm.conf" <<EOF
# Written by test/cli/slurm_local.sh (Note [a private Slurm]); removed with the build tree.
ClusterName=hpctraintest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket,cred_expire=$slurm_cred_expire
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/state/slurmctld.pid
SlurmdPidFile=$dir/spool/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SchedulerType=sched/builtin
# A job whose begin time passes (a requeued one, after cred_expire) starts at the next full
# scheduling pass: every sched_interval seconds (default 60), so a requeue waited 21-60 s, now 11-15.
SchedulerParameters=sched_interval=5
JobRequeue=1
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
MessageTimeout=30
KillWait=10
MinJobAge=600
TmpFS=$dir/tmp
GresTypes=gpu
NodeName=$slurm_node NodeHostname=$host NodeAddr=127.0.0.1 Port=$slurmd_port $hw Gres=gpu:4 State=UNKNOWN
PartitionName=$slurm_partition Nodes=$slurm_node Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$dir/gres.conf" <<EOF
# Four stand-in GPUs for sbatch --test-only of the GPU scripts (Note [a private Slurm]).
NodeName=$slurm_node Name=gpu File=/dev/null
NodeName=$slurm_node Name=gpu File=/dev/zero
NodeName=$slurm_node Name=gpu File=/dev/full
NodeName=$slurm_node Name=gpu File=/dev/urandom
EOF
}

# Two free TCP ports on the loopback interface (slurmctld, slurmd).
slurm_free_ports() {
  python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

slurm_node_idle() { [ "$(sinfo -h -N -n "$slurm_node" -o %T 2>/dev/null)" = idle ]; }
slurm_alive() { kill -0 "$1" 2>/dev/null; }

slurm_print_logs() {
  local f d
  for d in munged slurmctld slurmd; do
    f=$work/slurm/log/$d.log
    # Before a daemon opens its log file, what it says goes to stderr.
    [ -s "$f" ] || f=$work/slurm/log/$d.stderr
    [ -f "$f" ] && { echo "----- $f (last 60 lines)"; tail -n 60 "$f"; }
  done
  for f in "$work"/submit/*.out; do
    [ -f "$f" ] && { echo "----- $f (last 60 lines)"; tail -n 60 "$f"; }
  done
}

# Daemons started here and every process whose working directory lies under $work (job scripts,
# ranks, slurmstepd: slurmd starts them from its own directory) end here.
slurm_cleanup() {
  local rc=$? id p i
  trap - EXIT
  [ "${#stopped_pids[@]}" -gt 0 ] && kill -CONT "${stopped_pids[@]}" 2>/dev/null
  if [ "${#slurm_pids[@]}" -gt 0 ]; then
    for id in "${job_ids[@]}"; do scancel "$id" 2>/dev/null; done
    for ((i = 0; i < 150; ++i)); do  # up to 30 s for the jobs to end (KillWait=10)
      [ -z "$(squeue -h -t running,completing,suspended -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
    scontrol shutdown >/dev/null 2>&1
  fi
  for p in "${slurm_pids[@]}" $munge_pid; do
    [ "$p" != "$munge_pid" ] && for ((i = 0; i < 50; ++i)); do slurm_alive "$p" || break; sleep 0.2; done
    kill -TERM "$p" 2>/dev/null
    for ((i = 0; i < 50; ++i)); do slurm_alive "$p" || break; sleep 0.2; done
    slurm_alive "$p" && { echo "slurm: daemon $p did not stop; killing it"; kill -KILL "$p" 2>/dev/null; }
  done
  [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && slurm_print_logs  # complete now that the daemons are gone
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = $$ ] && continue
    case "$(readlink "/proc/$p/cwd" 2>/dev/null)" in
      "$work"|"$work"/*) echo "slurm: ending leftover process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
                         kill -KILL "$p" 2>/dev/null ;;
    esac
  done
  exit "$rc"
}

# slurm_start BUDGET_SECONDS: starts the daemons under $work/slurm and waits for the node to be idle.
slurm_start() {
  slurm_deadline=$((SECONDS + $1))
  local b p
  for b in munged slurmctld slurmd sbatch srun scontrol squeue scancel sinfo python3; do
    command -v "$b" >/dev/null ||
      skip "Slurm cannot start: $b not found (scripts/setup --slurm, or --reference, installs Debian's slurm-wlm)"
  done
  [ "$(id -u)" -eq 0 ] || skip "Slurm cannot start: slurmd must run as root to start jobs (this is uid $(id -u))"
  local dir=$work/slurm ports
  mkdir -p "$dir"/{munge,state,spool,log,tmp} || fail "cannot create $dir"
  chmod 755 "$dir/munge"
  ports=$(slurm_free_ports) || skip "Slurm cannot start: no free TCP port on 127.0.0.1"
  slurm_write_config "$dir" $ports
  [ -n "$slurm_cpus" ] || skip "Slurm cannot start: slurmd -C does not describe this machine: $(slurmd -C 2>&1 | head -2)"
  # Nothing of a Slurm job this test may itself run in reaches the private Slurm's commands.
  local v
  for v in $(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_'); do unset "$v"; done
  export SLURM_CONF=$dir/slurm.conf
  trap slurm_cleanup EXIT
  trap 'exit 143' TERM INT  # through the EXIT trap

  # munged: a fresh key; --force because the build tree may lie under a directory others cannot
  # enter (/root), which munged only warns about then (root's clients reach the socket anyway).
  (umask 077 && head -c 1024 /dev/urandom >"$dir/munge/munge.key")
  # In the foreground (-F) munged logs to stderr.
  (cd "$dir" && exec munged -F --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" >>"$dir/log/munged.log" 2>&1) &
  munge_pid=$!
  local i
  for ((i = 0; i < 100; ++i)); do
    munge -S "$dir/munge/socket" -n 2>/dev/null | unmunge -S "$dir/munge/socket" >/dev/null 2>&1 && break
    slurm_alive "$munge_pid" || break
    sleep 0.2
  done
  munge -S "$dir/munge/socket" -n 2>/dev/null | unmunge -S "$dir/munge/socket" >/dev/null 2>&1 ||
    { slurm_print_logs; skip "Slurm cannot start: munged does not answer (log above)"; }

  # In the foreground (-D): $! is the daemon itself.
  (cd "$dir" && exec slurmctld -D -f "$SLURM_CONF" >>"$dir/log/slurmctld.stderr" 2>&1) &
  slurm_pids+=($!)
  (cd "$dir" && exec slurmd -D -N "$slurm_node" -f "$SLURM_CONF" >>"$dir/log/slurmd.stderr" 2>&1) &
  slurm_pids+=($!)
  local end=$((SECONDS + 60))
  while ! slurm_node_idle; do
    for p in "${slurm_pids[@]}"; do
      slurm_alive "$p" || { slurm_print_logs; skip "Slurm cannot start: a daemon exited (logs above)"; }
    done
    [ "$SECONDS" -ge "$end" ] &&
      { slurm_print_logs; skip "Slurm cannot start: node $slurm_node not idle after 60 s (logs above)"; }
    sleep 0.2
  done
  echo "slurm: $(sinfo -V) up in $work/slurm: node $slurm_node ($slurm_cpus CPUs), partition $slurm_partition"
}
