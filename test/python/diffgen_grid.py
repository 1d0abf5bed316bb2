#!/usr/bin/env python3
"""diffgen --grid: the diffusion downscaler's samples cut from gridded files that xarray writes as users
write theirs (NetCDF, and a Zarr store of the same data). Checks every row against numpy's cut of the
same field (fine P x P block, the seven hexagonal block means, the patch centre's latitude and
longitude, a static field's fine block with --statics, time_index, corner), the time split (--times),
the place split (--region inside and --outside: numpy's own selection, and no fine block shared),
that patches touching a missing value (of the field or of a static) are left out and counted (and none other), that NetCDF and Zarr give the same file, the errors (an unknown
variable, a grid too small for the patch, --times holding no time, --position without coordinates,
a malformed --region or one holding no patch)
with exit code 2 and no file written, and that inputs/diffusion_grid.in trains on the result,
apps/sample scores it against the copy baseline and scripts/plot-downscaling draws it. --anomaly:
every row against numpy's, a model trained on it stores anomaly=true and samples absolute values
(exactly its anomalies + the block mean; the truth scored absolute), and sample and predict refuse
an anomaly model on absolute data and the reverse. diffusion_linear_skip: the stored map is numpy's
ridge least squares, and the members are those without it plus the map. diffusion_statics_linear_only:
the network without the static columns, the skip with them, the members those of the cut network plus
the map, 1 rank = 2 ranks, and its refusals.
usage: diffgen_grid.py BUILD_DIR MPIEXEC SCRATCH_DIR SOURCE_DIR"""
import os
import sys

import h5py
import numpy as np
import xarray as xr
from tool_run import Checks, in_folder, tool_script

apps, scratch, run = tool_script(sys.argv)
source = sys.argv[4]
check = Checks()
path = in_folder(scratch)
diffgen = apps("diffgen")

# A field with structure at every scale: a large-scale gradient, a diurnal cycle and a fixed
# small-scale "terrain" pattern, plus noise; float32 as ERA5's NetCDF holds it.
T, NY, NX, P, STRIDE = 10, 30, 40, 6, 3
rng = np.random.default_rng(3)
lat = np.linspace(60.0, 52.75, NY)
lon = np.linspace(-10.0, -0.25, NX)
yy, xx = np.meshgrid(np.arange(NY), np.arange(NX), indexing="ij")
terrain = np.sin(xx * 1.3) * np.cos(yy * 0.9)
field = np.stack([280 + 0.2 * yy + 3 * np.sin(t / 4) + terrain + 0.1 * rng.standard_normal((NY, NX)) for t in range(T)])
times = np.datetime64("2019-03-01T00") + np.arange(T) * np.timedelta64(1, "h")


orog = (200 * np.maximum(terrain, 0) + rng.uniform(0, 5, (NY, NX))).astype(np.float32)  # a static field


def dataset(values, statics=orog):
    return xr.Dataset({"t2m": (("time", "latitude", "longitude"), values.astype(np.float32)),
                       "orog": (("latitude", "longitude"), statics)},
                      coords={"time": times, "latitude": lat, "longitude": lon})


dataset(field).to_netcdf(path("grid.nc"))
dataset(field).to_zarr(path("grid.zarr"), mode="w")
holed = field.copy()
holed[4, 12, 20] = np.nan  # one missing value: the patches whose blocks hold it at time 4 are left out
dataset(holed).to_netcdf(path("holed.nc"))
orog_holed = orog.copy()
orog_holed[20, 9] = np.nan  # a missing static value: its patches are left out at every time
dataset(field, orog_holed).to_netcdf(path("orog_holed.nc"))

OFFSETS = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)]  # (di along x, dj along y), in blocks


def in_region(y0, x0, region):
    """Whether the patch at (y0, x0) is on the side of --region's box that region = (box, outside) takes."""
    if region is None:
        return True
    (ya, yb, xa, xb), outside = region
    block = np.zeros((NY, NX), bool)
    block[y0:y0 + P, x0:x0 + P] = True
    in_box = block[ya:yb, xa:xb].sum()
    return in_box == 0 if outside else in_box == P * P


def expected(values, t_lo, t_hi, position, statics=None, region=None):
    """Rows numpy cuts: (time, y0, x0, context, fine), NaN-touching patches left out."""
    rows, skipped = [], 0
    for t in range(t_lo, t_hi):
        for y0 in range(P, NY - 2 * P + 1, STRIDE):
            for x0 in range(P, NX - 2 * P + 1, STRIDE):
                if not in_region(y0, x0, region):
                    continue
                means = [values[t, y0 + dj * P:y0 + dj * P + P, x0 + di * P:x0 + di * P + P].mean() for di, dj in OFFSETS]
                block = None if statics is None else statics[y0:y0 + P, x0:x0 + P].ravel()
                if not np.all(np.isfinite(means)) or (block is not None and not np.all(np.isfinite(block))):
                    skipped += 1
                    continue
                ctx = list(means)
                if position:
                    ctx += [lat[y0 + (P - 1) // 2:y0 + P // 2 + 1].mean(), lon[x0 + (P - 1) // 2:x0 + P // 2 + 1].mean()]
                if block is not None:
                    ctx += list(block)
                rows.append((t, y0, x0, np.array(ctx), values[t, y0:y0 + P, x0:x0 + P].ravel()))
    return rows, skipped


def anomalies(rows, position, statics):
    """--anomaly (Note [anomaly targets]): neighbour means, the static block and fine minus their block's
    mean, the block mean kept as context column 0 and the static block's mean appended."""
    out = []
    for t, y0, x0, ctx, fine in rows:
        ctx = ctx.copy()
        ctx[1:7] -= ctx[0]
        extra = []
        if statics is not None:
            at = 9 if position else 7
            level = ctx[at:at + P * P].mean()
            ctx[at:at + P * P] -= level
            extra = [level]
        out.append((t, y0, x0, np.concatenate([ctx, extra]), fine - ctx[0]))
    return out


def compare(out, values, t_lo, t_hi, position, what, statics=None, region=None, anomaly=False):
    rows, skipped = expected(values, t_lo, t_hi, position, statics, region)
    if anomaly:
        rows = anomalies(rows, position, statics)
    width = (9 if position else 7) + (0 if statics is None else P * P + anomaly)
    with h5py.File(out, "r") as h:
        ctx, fine, ti, corner = h["context"][...], h["fine"][...], h["time_index"][...], h["corner"][...]
        check(ctx.shape == (len(rows), width) and fine.shape == (len(rows), P * P),
              f"{what}: context {ctx.shape}, fine {fine.shape} for {len(rows)} patches")
        if ctx.shape[0] != len(rows):
            return skipped
        check(list(ti) == [r[0] for r in rows] and [tuple(c) for c in corner] == [(r[1], r[2]) for r in rows],
              f"{what}: time_index and corner in time, then row-major order")
        if anomaly:
            err = np.abs(fine - np.array([r[4] for r in rows])).max()
            check(err < 1e-4 and "anomaly" in h.attrs, f"{what}: fine anomalies within 1e-4 of numpy's ({err:.2e}), "
                  "the file marked")
        else:
            check(np.array_equal(fine, np.array([r[4] for r in rows], dtype=np.float32)), f"{what}: fine blocks exact")
        err = np.abs(ctx - np.array([r[3] for r in rows])).max()
        check(err < 1e-4, f"{what}: block means and position within 1e-4 of numpy's ({err:.2e})")
    return skipped


r = run([diffgen, path("train.h5"), "--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--stride", STRIDE,
         "--times", "0:0.8", "--position"])
check(r.returncode == 0, "diffgen --grid on NetCDF: " + r.stdout.strip() + r.stderr.strip())
compare(path("train.h5"), field, 0, 8, True, "NetCDF, times 0:0.8, --position")
r = run([diffgen, path("test.h5"), "--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--stride", STRIDE,
         "--times", "0.8:1", "--position"])
check(r.returncode == 0, "the held-out times 0.8:1")
compare(path("test.h5"), field, 8, 10, True, "NetCDF, times 0.8:1")
r = run([diffgen, path("zarr.h5"), "--grid", path("grid.zarr"), "--variable", "t2m", "--patch", P, "--stride", STRIDE,
         "--times", "0:0.8", "--position"])
with h5py.File(path("train.h5"), "r") as a, h5py.File(path("zarr.h5"), "r") as b:
    check(r.returncode == 0 and all(np.array_equal(a[k][...], b[k][...]) for k in ("context", "fine", "corner")),
          "the Zarr store gives the NetCDF file's samples")
# A held-out place (--region): the box of rows 0.5:1 and columns 0.4:0.75 is [15, 30) x [16, 30) in
# points (floor of the fractions); inside it the test patches, outside (no shared point) the training ones.
BOX = (int(np.floor(0.5 * NY)), NY, int(np.floor(0.4 * NX)), int(np.floor(0.75 * NX)))
for side, times_arg, (t_lo, t_hi) in [("inside", "0.8:1", (8, 10)), ("outside", "0:0.8", (0, 8))]:
    r = run([diffgen, path(side + ".h5"), "--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--stride",
             STRIDE, "--times", times_arg, "--region", "0.5:1,0.4:0.75", "--statics", "orog"]
            + (["--outside"] if side == "outside" else []))
    check(r.returncode == 0 and f"{side} rows [{BOX[0]}, {BOX[1]}) and columns [{BOX[2]}, {BOX[3]})" in r.stdout,
          f"--region {side}: " + r.stdout.strip() + r.stderr.strip())
    compare(path(side + ".h5"), field, t_lo, t_hi, False, f"--region 0.5:1,0.4:0.75 {side}, times {times_arg}", orog,
            (BOX, side == "outside"))
with h5py.File(path("inside.h5"), "r") as a, h5py.File(path("outside.h5"), "r") as b:
    covered = {}
    for name, h in (("inside", a), ("outside", b)):
        covered[name] = np.zeros((NY, NX), bool)
        for y0, x0 in h["corner"][...]:
            covered[name][y0:y0 + P, x0:x0 + P] = True
    overlap = (covered["inside"] & covered["outside"]).sum()
    check(a["corner"].shape[0] > 0 and b["corner"].shape[0] > 0 and overlap == 0,
          f"--region: no fine block of the training (outside) file shares a point with a test (inside) one ({overlap})")
    check(covered["inside"][:BOX[0]].sum() == 0 and covered["outside"][BOX[0]:, BOX[2]:BOX[3]].sum() == 0,
          "--region: the inside blocks lie in the box, the outside ones out of it")

# --anomaly (Note [anomaly targets]): every row against numpy's, with a static and the position, and the
# held-out times without the static for the model below.
r = run([diffgen, path("anomaly.h5"), "--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--stride",
         STRIDE, "--times", "0:0.8", "--position", "--statics", "orog", "--anomaly"])
check(r.returncode == 0, "diffgen --anomaly: " + r.stdout.strip() + r.stderr.strip())
compare(path("anomaly.h5"), field, 0, 8, True, "--anomaly --position --statics orog", orog, anomaly=True)
for name, times_arg, (t_lo, t_hi) in [("train_a", "0:0.8", (0, 8)), ("test_a", "0.8:1", (8, 10))]:
    r = run([diffgen, path(name + ".h5"), "--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--stride",
             STRIDE, "--times", times_arg, "--position", "--anomaly"])
    compare(path(name + ".h5"), field, t_lo, t_hi, True, f"--anomaly --position, times {times_arg}", anomaly=True)

r = run([diffgen, path("holed.h5"), "--grid", path("holed.nc"), "--variable", "t2m", "--patch", P, "--stride", STRIDE])
skipped = compare(path("holed.h5"), holed, 0, T, False, "a missing value, without --position")
check(r.returncode == 0 and skipped > 0 and f"{skipped} left out for a missing value" in r.stdout,
      f"{skipped} patches touching the missing value left out and counted: {r.stdout.strip()}")
r = run([diffgen, path("orog.h5"), "--grid", path("orog_holed.nc"), "--variable", "t2m", "--patch", P, "--stride",
         STRIDE, "--statics", "orog"])
skipped = compare(path("orog.h5"), field, 0, T, False, "--statics orog (a missing static value)", orog_holed)
check(r.returncode == 0 and skipped > 0 and f"{skipped} left out" in r.stdout,
      f"{skipped} patches touching the missing static value left out: {r.stdout.strip()}")

# Errors: exit code 2, a message naming what is wrong, no file.
for args, expect, what in [
        (["--grid", path("grid.nc"), "--variable", "x2m"], "x2m", "an unknown variable"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--patch", "11"], "30 x 40 grid", "a grid too small"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--times", "0.95:0.99"], "holds none",
         "--times holding no time"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--times", "0.5"], "A:B", "--times without B"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--region", "0:1"], "Y0:Y1,X0:X1", "--region without X"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--region", "0:1,0.5:x"], "Y0:Y1,X0:X1",
         "--region not a number"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--region", "0:1,0.6:0.5"], "0 <= X0 < X1 <= 1",
         "--region X0 > X1"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--region", "-0.1:1,0:1"], "0 <= Y0 < Y1 <= 1",
         "--region below 0"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--region", "0:1,0.4:0.5"], "holds no 6 x 6",
         "--region too small for a patch"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--patch", P, "--region", "0:1,0:1", "--outside"],
         "leaves outside it no", "--region --outside leaving no patch"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--outside"], "--outside needs --region",
         "--outside without --region"),
        (["--grid", path("grid.nc")], "--variable", "no --variable"),
        (["--grid", path("grid.nc"), "--variable", "t2m", "--statics", "z"], "'z'", "an unknown static")]:
    if os.path.exists(path("bad.h5")):
        os.remove(path("bad.h5"))
    r = run([diffgen, path("bad.h5")] + [str(a) for a in args])
    check.refused(r, expect, what)
    check(r.returncode == 2 and not os.path.exists(path("bad.h5")), what + ": exit code 2, no file")
dataset(field, np.full_like(orog, np.nan)).to_netcdf(path("no_orog.nc"))
if os.path.exists(path("bad.h5")):
    os.remove(path("bad.h5"))
r = run([diffgen, path("bad.h5"), "--grid", path("no_orog.nc"), "--variable", "t2m", "--patch", P, "--statics", "orog"])
check.refused(r, "every patch", "a static missing everywhere: no patch")
check(r.returncode == 2 and not os.path.exists(path("bad.h5")) and not any(".tmp" in f for f in os.listdir(scratch)),
      "no patch: exit code 2, no file and no temporary file left")
xr.Dataset({"t2m": (("time", "y", "x"), field.astype(np.float32))}, coords={"time": times}).to_netcdf(path("plain.nc"))
r = run([diffgen, path("bad.h5"), "--grid", path("plain.nc"), "--variable", "t2m", "--patch", P, "--position"])
check.refused(r, "latitudes and longitudes", "--position on a grid without coordinates")

# The deck for the user's data trains on the result; sample scores it against the copy baseline.
r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"), "--set", "data_file=" + path("train.h5"),
         "--set", "epochs=2", "--set", "batch_size=32", "--set", "output=" + path("w.h5"), "--set", "metrics_file="], 2)
check(r.returncode == 0 and "final val loss" in r.stdout, "inputs/diffusion_grid.in trains on it (2 ranks)")
r = run([apps("sample"), path("w.h5"), path("test.h5"), path("ens.h5"), "--members", "4", "--method", "ddim",
         "--steps", "5"])
check(r.returncode == 0 and "baseline (coarse mean copied)" in r.stdout, "sample scores the held-out times")
baseline = [l for l in r.stdout.splitlines() if "baseline (coarse mean copied)" in l]
r = run([os.path.join(source, "scripts", "plot-downscaling"), path("ens.h5"), path("test.h5"), path("ens.png")])
check(r.returncode == 0 and os.path.getsize(path("ens.png")) > 10000, "scripts/plot-downscaling draws them")

# A model trained on anomalies stores it, and its members are absolute values: exactly its raw
# (anomaly) members plus context column 0, which sampling the same weights marked anomaly=false on the same
# file unmarked gives; the truth is scored absolute (the same copy baseline as the absolute file's).
r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"), "--set", "data_file=" + path("train_a.h5"),
         "--set", "epochs=1", "--set", "batch_size=32", "--set", "output=" + path("w_a.h5"), "--set", "metrics_file="])
with h5py.File(path("w_a.h5"), "r") as h:
    config = h.attrs["config"]
    config = config if isinstance(config, str) else config.decode()
check(r.returncode == 0 and "anomaly=true" in config, "training on an --anomaly file stores anomaly=true: " + config)
r = run([apps("sample"), path("w_a.h5"), path("test_a.h5"), path("ens_a.h5"), "--members", "3", "--method", "ddim",
         "--steps", "5"])
baseline_a = [l for l in r.stdout.splitlines() if "baseline (coarse mean copied)" in l]
copy_rmse = [float(b[0].split("RMSE")[2].split("|")[0]) for b in (baseline, baseline_a) if b]
check(r.returncode == 0 and len(copy_rmse) == 2 and abs(copy_rmse[0] - copy_rmse[1]) < 2e-4 and copy_rmse[0] > 0.1,
      f"sample on the --anomaly file scores absolute values: the absolute file's copy baseline {copy_rmse} "
      + ("" if baseline_a else r.stdout + r.stderr))
for name, source_file in (("raw_w.h5", "w_a.h5"), ("raw_test.h5", "test_a.h5")):
    with open(path(source_file), "rb") as a, open(path(name), "wb") as b:
        b.write(a.read())
with h5py.File(path("raw_w.h5"), "r+") as h:
    h.attrs["config"] = config.replace("anomaly=true", "anomaly=false")
with h5py.File(path("raw_test.h5"), "r+") as h:
    del h.attrs["anomaly"]
    context0 = h["context"][:, 0]
r = run([apps("sample"), path("raw_w.h5"), path("raw_test.h5"), path("ens_raw.h5"), "--members", "3", "--method",
         "ddim", "--steps", "5"])
with h5py.File(path("ens_a.h5"), "r") as a, h5py.File(path("ens_raw.h5"), "r") as b:
    absolute, raw = a["ensembles"][...], b["ensembles"][...]
    check(r.returncode == 0 and np.array_equal(absolute, raw + context0[:, None, None]),
          "the members of an anomaly model: exactly its anomalies + context column 0 "
          f"(max |difference| {np.abs(absolute - (raw + context0[:, None, None])).max():.2e})")
# diffusion_linear_skip (Note [linear skip]): the stored map is numpy's ridge least squares of the
# normalised fine values on [1, normalised context] over the training part (the rows before the
# validation tail), and the members are exactly those of the same weights without the skip plus
# fine_std x lin(c).
r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"), "--set", "data_file=" + path("train.h5"),
         "--set", "epochs=1", "--set", "batch_size=32", "--set", "output=" + path("w_s.h5"), "--set", "metrics_file=",
         "--set", "diffusion_linear_skip=true"])
check(r.returncode == 0, "inputs/diffusion_grid.in with diffusion_linear_skip trains " + r.stderr[-300:])
with h5py.File(path("w_s.h5"), "r") as h, h5py.File(path("train.h5"), "r") as d:
    cm, cs, fm, fs = (h["normalisation/" + k][...] for k in ("context_mean", "context_std", "fine_mean", "fine_std"))
    weight, bias = h["linear_skip/weight"][...].reshape(len(fm), len(cm)), h["linear_skip/bias"][...]
    config = h.attrs["config"]
    config = config if isinstance(config, str) else config.decode()
    n_train = len(d["fine"]) - int(np.floor(0.05 * len(d["fine"])))
    z = np.hstack([np.ones((n_train, 1)), (d["context"][:n_train].astype(np.float64) - cm) / cs])
    y = (d["fine"][:n_train].astype(np.float64) - fm) / fs
ridge = 1e-6 * n_train * np.diag([0.0] + [1.0] * len(cm))
solution = np.linalg.solve(z.T @ z + ridge, z.T @ y)
err = max(np.abs(solution[0] - bias).max(), np.abs(solution[1:].T - weight).max())
check(err < 1e-4 and "diffusion_linear_skip=true" in config,
      f"the linear skip is numpy's ridge least squares on the training part (max |difference| {err:.2e})")
r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"), "--set", "data_file=" + path("train.h5"),
         "--set", "epochs=1", "--set", "batch_size=16", "--set", "output=" + path("w_s2.h5"), "--set", "metrics_file=",
         "--set", "diffusion_linear_skip=true"], 2)
with h5py.File(path("w_s2.h5"), "r") as h:
    err = max(np.abs(h["linear_skip/weight"][...].reshape(weight.shape) - weight).max(),
              np.abs(h["linear_skip/bias"][...] - bias).max())
check(r.returncode == 0 and err < 1e-5, f"2 ranks fit the linear skip of 1 rank (max |difference| {err:.2e})")
r = run([apps("sample"), path("w_s.h5"), path("test.h5"), path("ens_s.h5"), "--members", "3", "--method", "ddim",
         "--steps", "5"])
check(r.returncode == 0 and "baseline (coarse mean copied)" in r.stdout, "sample with the linear skip")
with open(path("w_s.h5"), "rb") as a, open(path("w_noskip.h5"), "wb") as b:
    b.write(a.read())
with h5py.File(path("w_noskip.h5"), "r+") as h:
    h.attrs["config"] = config.replace("diffusion_linear_skip=true", "diffusion_linear_skip=false")
r = run([apps("sample"), path("w_noskip.h5"), path("test.h5"), path("ens_noskip.h5"), "--members", "3", "--method",
         "ddim", "--steps", "5"])
with h5py.File(path("ens_s.h5"), "r") as a, h5py.File(path("ens_noskip.h5"), "r") as b, \
        h5py.File(path("test.h5"), "r") as d:
    lin = bias + ((d["context"][...].astype(np.float64) - cm) / cs) @ weight.T
    err = np.abs(a["ensembles"][...] - b["ensembles"][...] - (fs * lin)[:, None, :]).max()
    check(r.returncode == 0 and err < 1e-3, f"the members with the skip: those without plus fine_std x lin(c) ({err:.2e})")

# diffusion_statics_linear_only (Note [statics to the linear skip only]): diffgen counts the static
# columns; the network's context_mlp reads the context without them, the linear skip (numpy's ridge
# fit on the whole context) with them; the members are exactly those of a model without the skip on
# the context cut to the network's columns plus fine_std x lin(c), predict's are sample's; 2 ranks
# train what 1 rank trains; it is refused without the skip, on a file without statics and (sample,
# predict) on data whose static columns differ.
with h5py.File(path("outside.h5"), "r") as a, h5py.File(path("anomaly.h5"), "r") as b:
    check(a.attrs.get("static_columns") == P * P and b.attrs.get("static_columns") == P * P + 1
          and "static_columns" not in h5py.File(path("train.h5"), "r").attrs,
          "diffgen stores the count of static context columns (P^2, + 1 with --anomaly; none without --statics)")
split = ["--set", "diffusion_linear_skip=true", "--set", "diffusion_statics_linear_only=true"]
for name, ranks, batch in (("w_o.h5", 1, 32), ("w_o2.h5", 2, 16)):
    r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"),
             "--set", "data_file=" + path("outside.h5"), "--set", "epochs=1", "--set", "batch_size=%d" % batch, "--set", "output=" + path(name),
             "--set", "metrics_file="] + split, ranks)
    check(r.returncode == 0, f"diffusion_statics_linear_only trains ({ranks} rank(s)) " + r.stderr[-300:])
with h5py.File(path("w_o.h5"), "r") as h, h5py.File(path("outside.h5"), "r") as d, \
        h5py.File(path("w_o2.h5"), "r") as h2:
    config = h.attrs["config"]
    config = config if isinstance(config, str) else config.decode()
    n_context = d["context"].shape[1]
    cm, cs, fm, fs = (h["normalisation/" + k][...] for k in ("context_mean", "context_std", "fine_mean", "fine_std"))
    weight, bias = h["linear_skip/weight"][...].reshape(len(fm), len(cm)), h["linear_skip/bias"][...]
    n_train = len(d["fine"]) - int(np.floor(0.05 * len(d["fine"])))
    z = np.hstack([np.ones((n_train, 1)), (d["context"][:n_train].astype(np.float64) - cm) / cs])
    y = (d["fine"][:n_train].astype(np.float64) - fm) / fs
    params = {k: h[k][...] for k in ("context_mlp/weight", "input_proj/weight", "output/weight", "output/bias")}
    ranks_err = max(np.abs(h2[k][...] - v).max() for k, v in params.items())
ridge = 1e-6 * n_train * np.diag([0.0] + [1.0] * len(cm))
solution = np.linalg.solve(z.T @ z + ridge, z.T @ y)
err = max(np.abs(solution[0] - bias).max(), np.abs(solution[1:].T - weight).max())
check(params["context_mlp/weight"].shape[1] == n_context - P * P == 7 and weight.shape == (P * P, n_context)
      and err < 1e-4 and "static_columns=%d" % (P * P) in config,
      f"the network reads {params['context_mlp/weight'].shape[1]} of {n_context} context columns, the linear skip "
      f"all (numpy's ridge fit: max |difference| {err:.2e}): {config}")
check(ranks_err < 1e-4, f"2 ranks train the model of 1 rank (max |parameter difference| {ranks_err:.2e})")
r = run([apps("sample"), path("w_o.h5"), path("inside.h5"), path("ens_o.h5"), "--members", "3", "--method", "ddim",
         "--steps", "5"])
check(r.returncode == 0 and "baseline (coarse mean copied)" in r.stdout, "sample with the statics in the skip only")
r = run([apps("predict"), path("w_o.h5"), path("inside.h5"), path("pred_o.h5"), "--inputs-dataset", "context",
         "--members", "3", "--method", "ddim", "--steps", "5"])
with h5py.File(path("ens_o.h5"), "r") as a, h5py.File(path("pred_o.h5"), "r") as b:
    check(r.returncode == 0 and np.array_equal(a["ensembles"][...], b["ensembles"][...]),
          "predict writes sample's members " + r.stderr[-300:])
# The same network as a model without the skip on the context's first 7 columns.
with open(path("w_o.h5"), "rb") as a, open(path("w_cut.h5"), "wb") as b:
    b.write(a.read())
with h5py.File(path("w_cut.h5"), "r+") as h:
    h.attrs["config"] = config.replace("n_context=%d" % n_context, "n_context=7").replace(
        "diffusion_linear_skip=true", "diffusion_linear_skip=false").replace(
        " diffusion_statics_linear_only=true static_columns=%d" % (P * P), "")
    for k in ("context_mean", "context_std"):
        v = h["normalisation/" + k][:7]
        del h["normalisation/" + k]
        h["normalisation/" + k] = v
with h5py.File(path("inside.h5"), "r") as d, h5py.File(path("inside_cut.h5"), "w") as o:
    for k in d:
        o[k] = d[k][...][:, :7] if k == "context" else d[k][...]
    contexts = d["context"][...].astype(np.float64)
r = run([apps("sample"), path("w_cut.h5"), path("inside_cut.h5"), path("ens_cut.h5"), "--members", "3", "--method",
         "ddim", "--steps", "5"])
with h5py.File(path("ens_o.h5"), "r") as a, h5py.File(path("ens_cut.h5"), "r") as b:
    lin = bias + ((contexts - cm) / cs) @ weight.T
    err = np.abs(a["ensembles"][...] - b["ensembles"][...] - (fs * lin)[:, None, :]).max()
    check(r.returncode == 0 and err < 1e-3, "the members: the network's on the 7 block means plus fine_std x lin(c) of "
          f"the whole context ({err:.2e}) " + r.stderr[-300:])
for data, extra, expect, what in [("outside.h5", [], "diffusion_linear_skip", "without diffusion_linear_skip"),
                                  ("train.h5", split[:2], "static_columns", "on a file without statics")]:
    r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"), "--set", "data_file=" + path(data),
             "--set", "epochs=1", "--set", "output=" + path("w_bad.h5"), "--set", "metrics_file=",
             "--set", "diffusion_statics_linear_only=true"] + extra)
    check.refused(r, "diffusion_statics_linear_only", f"diffusion_statics_linear_only {what}")
    check(r.returncode == 2 and expect in r.stdout + r.stderr and not os.path.exists(path("w_bad.h5")),
          f"diffusion_statics_linear_only {what}: exit code 2, no weights")
with open(path("inside.h5"), "rb") as a, open(path("inside_nostat.h5"), "wb") as b:
    b.write(a.read())
with h5py.File(path("inside_nostat.h5"), "r+") as h:
    del h.attrs["static_columns"]
for tool in ("sample", "predict"):
    r = run([apps(tool), path("w_o.h5"), path("inside_nostat.h5"), path("mixed.h5")]
            + (["--members", "2"] if tool == "sample" else ["--inputs-dataset", "context", "--members", "2"]))
    check.refused(r, "static_columns", f"{tool}: a statics-in-the-skip model on data without the count")
    check(r.returncode == 2 and not os.path.exists(path("mixed.h5")), f"{tool}: no statics count: exit code 2, no file")

# Mixing is refused: an anomaly model on an absolute file, an absolute model on an anomaly file.
for weights, data, expect, what in [("w_a.h5", "test.h5", "trained on anomalies", "an anomaly model, absolute data"),
                                    ("w.h5", "test_a.h5", "holds anomalies", "an absolute model, anomaly data")]:
    for tool in ("sample", "predict"):
        r = run([apps(tool), path(weights), path(data), path("mixed.h5")]
                + (["--members", "2"] if tool == "sample" else ["--inputs-dataset", "context", "--members", "2"]))
        check.refused(r, expect, f"{tool}: {what}")
        check(r.returncode == 2 and not os.path.exists(path("mixed.h5")), f"{tool}: {what}: exit code 2, no file")
r = run([apps("train"), os.path.join(source, "inputs", "diffusion_grid.in"), "--set", "data_file=" + path("train_a.h5"),
         "--set", "validation_file=" + path("test.h5"), "--set", "output=" + path("w_bad.h5"), "--set", "metrics_file="])
check.refused(r, "validation_file " + path("test.h5") + ": holds absolute values", "train: an absolute validation_file")
check(r.returncode == 2 and not os.path.exists(path("w_bad.h5")), "train: an absolute validation_file: exit 2, no file")
check.finish()
