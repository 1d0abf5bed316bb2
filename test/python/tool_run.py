"""The Python test scripts' way of running the project's programs: a command that must succeed, its
output returned, and on failure its output printed and the script stopped naming the command."""
import importlib
import os
import shutil
import subprocess
import sys


def import_or_skip(*modules):
    """The named modules (as `import` names them), or the script skipped (exit 77) naming the missing
    one: the reference libraries come from scripts/setup --reference, and scripts/test fails a skip
    where that environment exists."""
    try:
        return [importlib.import_module(m) for m in modules]
    except Exception as e:  # ImportError, or a numpy ABI mismatch in a broken install
        print(f"SKIPPED: needs {', '.join(modules)} ({type(e).__name__}: {e}); run scripts/setup --reference")
        sys.exit(77)


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


# Each script's runs get Open MPI session directories under its scratch folder (Note [MPI session
# directories] in cmake/TestSessionDirs.cmake: singletons of two tests starting at once race on one
# under /tmp); ctest gives every test its own base too, and this keeps a script run by hand apart.


def tool_script(argv):
    """A script run as SCRIPT BUILD MPIEXEC SCRATCH: returns (apps, scratch, run), where apps(name) is
    BUILD/apps/NAME, scratch a fresh empty folder and run(args, ranks=1) runs args on that many
    ranks, one thread each (run_ranks), with Open MPI's session directories in SCRATCH/ompi (Note
    [MPI session directories])."""
    build, mpiexec, scratch = argv[1], argv[2], argv[3]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(os.path.join(scratch, "ompi"))
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_orte_tmpdir_base=os.path.join(scratch, "ompi"))
    return (lambda name: os.path.join(build, "apps", name), scratch,
            lambda args, ranks=1: run_ranks(mpiexec, args, ranks, env))


def in_folder(folder):
    """The function name -> folder/name (a script's files in its scratch folder)."""
    return lambda name: os.path.join(folder, name)


class Checks:
    """A script's named checks: check(cond, what) prints ok or FAILED; finish() ends the script,
    exit status 1 when any failed."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok: " if cond else "FAILED: ") + what)
        if not cond:
            self.failures.append(what)

    def refused(self, r, expect, what):
        """Checks that r (a CompletedProcess) failed saying `expect`; names its first error line."""
        msg = r.stdout + r.stderr
        said = [l for l in msg.splitlines() if "error" in l] or msg.strip().splitlines() or [""]
        self(r.returncode != 0 and expect in msg, what + ": " + said[0])

    def finish(self):
        if self.failures:
            print("%d check(s) failed" % len(self.failures))
            raise SystemExit(1)
        print("all checks passed")


def deck_args(path, text, settings):
    """Writes the deck `text` to path; returns [path] then `--set key=value` for each of settings."""
    with open(path, "w") as f:
        f.write(text)
    return [path] + [a for kv in settings for a in ("--set", kv)]


def weights_bytes(path):
    """A weights file's datasets as {name: bytes}, and its "table" attribute (bitwise comparisons)."""
    import h5py
    with h5py.File(path, "r") as h:
        out = {}
        h.visititems(lambda n, o: out.__setitem__(n, o[...].tobytes()) if isinstance(o, h5py.Dataset) else None)
        return out, h.attrs["table"]


def weights_flat(path, model=None):
    """A weights file's datasets in name order as one float64 vector (for np.array_equal, bitwise, or
    a relative difference); with `model`, the file must be that model's weights."""
    import h5py
    import numpy as np
    with h5py.File(path, "r") as h:
        if model is not None:
            found = h.attrs.get("model")
            found = found.decode() if isinstance(found, bytes) else found
            assert found == model, f"{path}: model {found!r}, expected {model!r}"
        out = []
        h.visititems(lambda n, o: out.append((n, np.array(o, dtype=np.float64).ravel()))
                     if isinstance(o, h5py.Dataset) else None)
    return np.concatenate([v for _, v in sorted(out)])


def losses(path, keys=("loss", "train_loss", "val_loss")):
    """The step and epoch records of a metrics file (JSON lines) as (type, its value of each of keys;
    None where it has none), for runs that must log the same."""
    import json
    with open(path) as f:
        return [(r["type"],) + tuple(r.get(k) for k in keys) for r in map(json.loads, f)
                if r.get("type") in ("step", "epoch")]


def table_and_config(path):
    """A weights file's table encoding (its "table" attribute, JSON) and its "config" text."""
    import json

    import h5py
    with h5py.File(path, "r") as h:
        cfg = h.attrs["config"]
        return json.loads(h.attrs["table"]), cfg.decode() if isinstance(cfg, bytes) else cfg


def check_table_rank_invariance(check, run, train_args, batch, weights_of):
    """rank_invariant training on 1 and 2 ranks (global batch `batch`) gives the same encoding and
    the same weights bit for bit. train_args(name, *settings): the train command writing
    weights_of(name)."""
    for ranks in (1, 2):
        args = train_args("inv%d" % ranks, "epochs=2", "rank_invariant=true", "batch_size=%d" % (batch // ranks))
        r = run(args, ranks)
        check(r.returncode == 0, "rank_invariant training on %d rank(s): %s" % (ranks, r.stderr[-300:]))
        if r.returncode != 0:
            return
    a, b = weights_bytes(weights_of("inv1")), weights_bytes(weights_of("inv2"))
    check(a[1] == b[1], "1 and 2 ranks agree on the encoding")
    check(a[0].keys() == b[0].keys() and all(a[0][k] == b[0][k] for k in a[0]), "1 and 2 ranks: weights bitwise")
