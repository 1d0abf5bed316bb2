#!/usr/bin/env bash
# apps/wxgen at a small size: the file opens with xarray as xarray's own files do (dimensions,
# hourly datetime coordinate, CF axis attributes, float32 variables with NaN _FillValue, the static
# orography), every value is finite and the depth positive, the state moves from hour to hour, the
# same seed gives the same file and another seed other orography; a time step too long for the
# gravity waves is an error (exit 2) naming the hour, not a file of NaNs.
# usage: wxgen.sh WXGEN PYTHON SCRATCH_DIR
set -euo pipefail
wxgen=$1 python=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
small=(--nx 12 --ny 10 --margin 6 --hours 30 --spinup 6)
"$wxgen" "$dir/a.nc" "${small[@]}"
"$wxgen" "$dir/b.nc" "${small[@]}"
"$wxgen" "$dir/c.nc" "${small[@]}" --seed 2
set +e
"$wxgen" "$dir/bad.nc" "${small[@]}" --dt 3600 > "$dir/bad.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || { cat "$dir/bad.log"; echo "wxgen with --dt 3600 exited $rc, not 2"; exit 1; }
grep -q "unstable at hour" "$dir/bad.log" || { cat "$dir/bad.log"; exit 1; }
"$python" - "$dir" <<'PY'
import sys
try:
    import numpy as np
    import xarray as xr
except ImportError as e:
    print("wxgen.sh:", e); sys.exit(77)
d = sys.argv[1]
a, b, c = (xr.open_dataset(f"{d}/{n}.nc") for n in "abc")
assert dict(a.sizes) == {"time": 31, "y": 10, "x": 12}, dict(a.sizes)
assert a["time"].dtype.kind == "M" and (np.diff(a["time"].values) == np.timedelta64(1, "h")).all()
assert a["y"].attrs["axis"] == "Y" and a["x"].attrs["axis"] == "X", (a["y"].attrs, a["x"].attrs)
for v in ["h", "u", "v", "q", "sun"]:
    assert a[v].dims == ("time", "y", "x") and a[v].dtype == np.float32, (v, a[v].dims, a[v].dtype)
    assert np.isfinite(a[v].values).all(), v
    assert np.isnan(a[v].encoding["_FillValue"]), v
assert a["orog"].dims == ("y", "x") and "units" in a["orog"].attrs
assert (a["h"].values > 0).all() and 0 <= a["sun"].values.min() and a["sun"].values.max() <= 1
for v in ["h", "u", "v", "sun"]:
    assert np.abs(np.diff(a[v].values, axis=0)).max() > 1e-3, f"{v} does not move"
for v in a.data_vars:
    assert np.array_equal(a[v].values, b[v].values), f"same seed, different {v}"
assert not np.array_equal(a["orog"].values, c["orog"].values), "another seed, the same orography"
print("wxgen ok: h", float(a["h"].min()), "..", float(a["h"].max()))
PY
