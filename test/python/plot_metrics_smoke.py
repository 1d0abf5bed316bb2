"""scripts/plot-metrics on a run's metrics file writes a non-empty PNG (exit 77 = no matplotlib).

usage: plot_metrics_smoke.py REPO METRICS.jsonl OUT.png
"""
import os
import subprocess
import sys

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("SKIP: matplotlib is missing (scripts/setup --reference installs it)")
    sys.exit(77)

repo, metrics, out = sys.argv[1:4]
if os.path.exists(out):
    os.remove(out)
subprocess.check_call([sys.executable, os.path.join(repo, "scripts", "plot-metrics"), metrics, out])
with open(out, "rb") as f:
    data = f.read()
if not data.startswith(b"\x89PNG\r\n\x1a\n") or len(data) < 5000:
    print(f"FAIL: {out} is not a PNG with a plot in it ({len(data)} bytes)")
    sys.exit(1)
print(f"PASS: {out}, {len(data)} bytes")
