#!/usr/bin/env python3
"""apps/predict on a model that reads several inputs: a tiny gnn with a forcing and a static field
(wxgen's sun and orog) trained for seconds, its inputs written here with h5py from wxgen's file as
one dataset per input (state [n, S, 2, N], forcing [n, F, 1, N], static [n, K, N]; docs/gnn.md).
Checks: the forecast [n, S, N] on 1 rank equals 2 ranks' byte for byte, and equals (within float
rounding) predict's with the rows batched; the rows reversed in every dataset give the forecast
reversed; the forcing read a row off changes it; datasets named otherwise through --inputs-dataset
NAME=DATASET give the same forecast; and the errors (a dataset missing, a row of the wrong size,
datasets of unequal rows, a bare --inputs-dataset, an unknown input) name the file and the dataset,
on 2 ranks, with nothing written.
usage: predict_gnn.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import os
import sys

import h5py
import numpy as np
import xarray as xr
from tool_run import Checks, deck_args, in_folder, tool_script

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()
path = in_folder(scratch)


def ok(r, what):
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAILED: {what} exited {r.returncode}")


ok(run([apps("wxgen"), path("wx.nc"), "--nx", "8", "--ny", "6", "--margin", "4", "--hours", "30", "--spinup", "6"]),
   "wxgen")
deck = f"""model gnn
data_format netcdf
data_file {path('wx.nc')}
state_variables h, u, v, q
forcing_variables sun
static_variables orog
boundary_width 2
gnn_latent 8
gnn_layers 1
batch_size 4
epochs 1
output {path('gnn.h5')}
"""
ok(run([train, *deck_args(path("gnn.in"), deck, [])]), "train the gnn")

# The inputs of the forecasts from hours 1 .. 28: the state at t - 1 and t, sun at t + 1, orog.
wx = xr.open_dataset(path("wx.nc"))
times = range(1, wx.sizes["time"] - 1)
flat = {v: wx[v].values.reshape(wx.sizes["time"], -1) for v in ("h", "u", "v", "q", "sun")}
state = np.stack([np.stack([flat[v][t - 1:t + 1] for v in ("h", "u", "v", "q")]) for t in times]).astype(np.float32)
forcing = np.stack([flat["sun"][t + 1][None, None] for t in times]).astype(np.float32)
static = np.repeat(wx["orog"].values.reshape(1, 1, -1), len(times), axis=0).astype(np.float32)
n, N = state.shape[0], state.shape[-1]


def inputs(name, **datasets):
    with h5py.File(path(name), "w") as h:
        for k, v in datasets.items():
            h.create_dataset(k, data=v)
    return path(name)


def forecast(name):
    with h5py.File(path(name), "r") as h:
        given = h.attrs["inputs_dataset"]
        return h["forecast"][...], given.decode() if isinstance(given, bytes) else given


data = inputs("in.h5", state=state, forcing=forcing, static=static)
for ranks, chunk, out in ((1, "1", "p1.h5"), (2, "1", "p2.h5"), (1, "2048", "pb.h5")):
    ok(run([predict, path("gnn.h5"), data, path(out), "--chunk", chunk], ranks), f"predict {out}")
one, given = forecast("p1.h5")
check(one.shape == (n, 4, N) and np.isfinite(one).all(), f"forecast [{n}, 4, {N}], finite: {one.shape}")
check(given == "state=state,forcing=forcing,static=static", "the file names each input's dataset: " + str(given))
check(np.array_equal(one, forecast("p2.h5")[0]), "1 rank == 2 ranks, byte for byte")
batched = forecast("pb.h5")[0]
check(np.abs(batched - one).max() <= 1e-5 * max(1.0, np.abs(one).max()),
      "rows batched == one sample at a time (max difference %g)" % np.abs(batched - one).max())
rev = inputs("rev.h5", state=state[::-1], forcing=forcing[::-1], static=static[::-1])
ok(run([predict, path("gnn.h5"), rev, path("prev.h5"), "--chunk", "1"], 2), "predict reversed rows")
check(np.array_equal(forecast("prev.h5")[0], one[::-1]), "every dataset's rows reversed: the forecast reversed")
off = inputs("off.h5", state=state, forcing=np.roll(forcing, 1, axis=0), static=static)
ok(run([predict, path("gnn.h5"), off, path("poff.h5"), "--chunk", "1"]), "predict with the forcing a row off")
moved = np.abs(forecast("poff.h5")[0] - one).max()
check(moved > 1e-4, "the forcing a row off changes the forecast (by up to %g)" % moved)
named = inputs("named.h5", s=state, f=forcing, o=static)
ok(run([predict, path("gnn.h5"), named, path("pnamed.h5"), "--chunk", "1", "--inputs-dataset",
        "static=o,state=s,forcing=f"]), "predict --inputs-dataset NAME=DATASET")
check(np.array_equal(forecast("pnamed.h5")[0], one), "datasets named otherwise, given as NAME=DATASET: the same")


def refused(name, data_file, expect, *options):
    out = path(name + "_forecast.h5")
    r = run([predict, path("gnn.h5"), data_file, out, *options], 2)
    check.refused(r, expect, name)
    check(not os.path.exists(out), name + ": nothing written")


refused("missing", inputs("missing.h5", state=state, static=static),
        path("missing.h5") + ": no dataset 'forcing' (the gnn model's input 'forcing'")
refused("row_size", inputs("row_size.h5", state=state, forcing=forcing, static=np.concatenate([static, static], 1)),
        path("row_size.h5") + f": dataset 'static' is [{n}, 2, {N}]; the gnn model's input 'static' is rows of [1, {N}]")
refused("rows", inputs("rows.h5", state=state, forcing=forcing[:-1], static=static),
        path("rows.h5") + f": dataset 'forcing' has {n - 1} rows, dataset 'state' {n}")
refused("bare", data, "--inputs-dataset s: the gnn model reads 3 inputs (state, forcing, static), one dataset each: "
        "give NAME=DATASET pairs", "--inputs-dataset", "s")
refused("unknown", data, "--inputs-dataset: the gnn model has no input 'wind' (it reads state, forcing, static)",
        "--inputs-dataset", "wind=s")
check.finish()
