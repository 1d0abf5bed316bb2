"""What the PyTorch parity scripts share: the relative error of one of our arrays against the
reference's, and the verdict over the dump files a script checks (exit 1 naming what failed).
Import it after the script's own guard on numpy (which exits 77 when a module is missing)."""
import sys

import numpy as np


def rel_err(ours, ref):
    """||ours - ref|| / ||ref|| over all elements in float64; inf when the element counts differ."""
    ours = np.asarray(ours, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    if ours.shape != ref.shape:
        return float("inf")
    return float(np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), 1e-30))


def check_files(check, paths, rtol, passed):
    """check(path) returns the quantities of one dump that failed; prints FAILED with the first ten
    and exits 1 when any did, else prints `passed`."""
    failed = []
    for path in paths:
        failed += check(path)
    if failed:
        print(f"FAILED: {len(failed)} quantities differ from PyTorch by more than {rtol}: {', '.join(failed[:10])}")
        sys.exit(1)
    print(passed)
