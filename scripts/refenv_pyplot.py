"""matplotlib for the plotting scripts: from this interpreter, else from the reference venv that
`scripts/setup --reference` makes (.deps/refenv), by re-running the script there."""
import os
import sys

_GUARD = "HPCTRAIN_REFENV_REEXEC"


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
    if os.path.exists(refenv) and not os.environ.get(_GUARD):
        os.environ[_GUARD] = "1"
        os.execv(refenv, [refenv] + sys.argv)
    if required:
        sys.exit(f"{os.path.basename(sys.argv[0])}: needs matplotlib: run scripts/setup --reference "
                 "(or apt-get install python3-matplotlib)")
    return None
