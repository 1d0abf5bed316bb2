"""The Python test scripts' way of running the project's programs: a command that must succeed, its
output returned, and on failure its output printed and the script stopped naming the command."""
import os
import shutil
import subprocess


def run_ok(*args, stderr_too=False):
    """Runs args (converted to str); returns stdout (and stderr after it with stderr_too)."""
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAILED: {' '.join(map(str, args))} exited {r.returncode}")
    return r.stdout + r.stderr if stderr_too else r.stdout


def run_ranks(mpiexec, args, ranks=1, env=None):
    """Runs args on `ranks` MPI ranks (1: directly); returns the CompletedProcess, output as text."""
    cmd = ([mpiexec, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + list(args)
    return subprocess.run([str(a) for a in cmd], capture_output=True, text=True, env=env)


def tool_script(argv):
    """A script run as SCRIPT BUILD MPIEXEC SCRATCH: returns (apps, scratch, run), where apps(name) is
    BUILD/apps/NAME, scratch a fresh empty folder and run(args, ranks=1) runs args on that many
    ranks, one thread each (run_ranks)."""
    build, mpiexec, scratch = argv[1], argv[2], argv[3]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return (lambda name: os.path.join(build, "apps", name), scratch,
            lambda args, ranks=1: run_ranks(mpiexec, args, ranks, env))


class Checks:
    """A script's named checks: check(cond, what) prints ok or FAILED; finish() ends the script,
    exit status 1 when any failed."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok: " if cond else "FAILED: ") + what)
        if not cond:
            self.failures.append(what)

    def finish(self):
        if self.failures:
            print("%d check(s) failed" % len(self.failures))
            raise SystemExit(1)
        print("all checks passed")
