"""matplotlib for the plotting scripts: from this interpreter, else from Debian's python3 (README
command 1 installs python3-matplotlib there), else from the reference venv of `scripts/setup
--reference` (.deps/refenv), by re-running the script with the first of them that exists."""
import os
import sys

_GUARD = "HPCTRAIN_PYPLOT_REEXEC"


def pyplot(required):
    """Returns matplotlib.pyplot (Agg backend, no display needed), or None when it is missing and
    not `required`; exits with a message naming the fix when it is required and missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        pass
    refenv = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".deps", "refenv", "bin", "python")
    # Each candidate is tried once: the guard lists those already tried, so no re-exec loops.
    tried = set(filter(None, os.environ.get(_GUARD, "").split(os.pathsep))) | {os.path.realpath(sys.executable)}
    for python in ("/usr/bin/python3", refenv):
        if os.path.exists(python) and os.path.realpath(python) not in tried:
            os.environ[_GUARD] = os.pathsep.join(tried | {os.path.realpath(python)})
            os.execv(python, [python] + sys.argv)
    if required:
        sys.exit(f"{os.path.basename(sys.argv[0])}: needs matplotlib: run scripts/setup "
                 "(it installs Debian's python3-matplotlib)")
    return None
