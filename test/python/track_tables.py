#!/usr/bin/env python3
"""apps/scenes_import on track tables written by pandas, as users write theirs (issue 35): a 2.5 Hz
pedestrian recording (frame, id, x, y; tracks that enter late, leave early and are lost for a while;
no map) resampled to 10 Hz; an Argoverse 2-style table (string ids, a quoted scenario id, AV2 type
names, headings with empty cells, velocities) with a map table; rows whose position is NaN (the agent
not observed), taken as absent; an Argoverse 2 scenario's length cut
with --align end and start; the same tracks in INTERACTION's columns; odd but valid tables (rows
shuffled, float steps and ids, negative steps, extra columns, an agent seen once, a short recording);
and bad tables, each refused with an error naming file, line and column,
leaving no output. Checks the HDF5 written with h5py: positions linear between samples, validity
where samples bracket a step, heading from the motion, types mapped, the grid attributes.
usage: track_tables.py SCENES_IMPORT SCRATCH_DIR"""
import math
import os
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd

tool, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


def run(*args):
    return subprocess.run([tool, *args], capture_output=True, text=True)


# 1. Pedestrians at 2.5 Hz (frame numbers 0, 1, ...), no object_type, no map.
rows = []
for f in range(0, 41):  # A: 16 s straight east at 1.2 m/s
    rows.append((f, 1, 1.2 * f / 2.5, 0.0))
for f in range(10, 31):  # B: enters at 4 s, leaves at 12 s, walking north at 0.8 m/s
    rows.append((f, 2, 3.0, 0.8 * f / 2.5))
for f in list(range(0, 12)) + list(range(16, 41)):  # C: lost between 4.4 s and 6.4 s
    rows.append((f, 3, -1.0 * f / 2.5, 2.0))
ped = pd.DataFrame(rows, columns=["timestep", "track_id", "position_x", "position_y"])
ped.insert(0, "scenario_id", "zara")
ped_csv = os.path.join(scratch, "pedestrians.csv")
ped.to_csv(ped_csv, index=False)
out = os.path.join(scratch, "pedestrians.h5")
r = run(ped_csv, out, "--rate", "2.5", "--history", "3", "--window", "8", "--stride", "4", "--type", "pedestrian")
print(r.stdout, r.stderr)
check(r.returncode == 0, "pedestrian import succeeds")
with h5py.File(out, "r") as h:
    st, valid, off = h["agent_state"][()], h["agent_valid"][()], h["agent_state_offsets"][()]
    check(st.shape[1:] == (81, 5) and valid.shape[1] == 81, f"81 steps of 0.1 s per scene, got {st.shape}")
    check(abs(h.attrs["step_seconds"] - 0.1) < 1e-12 and h.attrs["history_seconds"] == 3.0 and
          h.attrs["future_seconds"] == 5.0, "grid attributes")
    check(len(off) - 1 == 3, f"16 s -> scenes at 0, 4 and 8 s (8 s windows), got {len(off) - 1}")
    check((h["agent_type"][()] == 1).all(), "--type pedestrian")
    check(h["map_polyline"].shape == (0, 11, 2) and (h["map_polyline_offsets"][()] == 0).all(), "no map")
    # Scene 0 (0..8 s): A, B, C in order of first appearance.
    t = np.arange(81) * 0.1
    a, b, c = st[0], st[1], st[2]
    check(np.allclose(a[:, 0], 1.2 * t, atol=1e-4) and valid[0].all(), "A linear in position, valid throughout")
    check(np.allclose(a[:, 2], 0.0, atol=1e-5) and np.allclose(a[:, 3], 1.2, atol=1e-4), "A heading, velocity")
    vb = valid[1].astype(bool)
    check((~vb[t < 4 - 1e-9]).all() and vb[(t >= 4 - 1e-9)].all(), "B invalid before its first sample at 4 s")
    check(np.allclose(b[vb, 1], 0.8 * t[vb], atol=1e-4), "B positions")
    check(np.allclose(b[vb, 2], math.pi / 2, atol=1e-5), "B heading from the motion (north)")
    check((b[~vb] == 0).all(), "invalid steps hold zeros")
    vc = valid[2].astype(bool)
    gap = (t > 4.4 + 1e-9) & (t < 6.4 - 1e-9)
    check((~vc[gap]).all() and vc[~gap].all(), "C invalid in its 2 s gap, valid elsewhere")
    check(np.allclose(np.abs(c[vc, 2]), math.pi, atol=1e-5), "C heading west")
    # Scene 1 (4..12 s): B leaves at 12 s, its last sample; valid to the end of the window.
    s1 = slice(off[1], off[2])
    check(valid[s1][1].all(), "B valid in 4..12 s")

# 1b. Note [unobserved positions]: the same recording with C's 2 s gap kept as rows whose position is
# NaN (Argoverse-style: a row per step, the agent not observed), written by pandas as empty cells and
# with na_rep "NaN": the scenes as without those rows, and the rows counted in the log.
lost = pd.DataFrame([(12 + k, 3, np.nan, np.nan) for k in range(4)],
                    columns=["timestep", "track_id", "position_x", "position_y"])
lost.insert(0, "scenario_id", "zara")
with h5py.File(os.path.join(scratch, "pedestrians.h5"), "r") as h:
    want = {k: h[k][()] for k in ("agent_state", "agent_valid", "agent_state_offsets")}
for na_rep in ("", "NaN"):
    nan_csv = os.path.join(scratch, f"pedestrians_nan{na_rep}.csv")
    pd.concat([ped, lost]).to_csv(nan_csv, index=False, na_rep=na_rep)  # rows in any order: C's at the end
    out = nan_csv + ".h5"
    r = run(nan_csv, out, "--rate", "2.5", "--history", "3", "--window", "8", "--stride", "4", "--type", "pedestrian")
    check(r.returncode == 0, f"NaN positions (na_rep '{na_rep}'): rc {r.returncode} {r.stderr.strip()}")
    check("4 rows without a position (empty or NaN: the agent not observed at that step) were taken as absent" in
          r.stdout, f"NaN positions counted in the log: {r.stdout.strip()}")
    if r.returncode == 0:
        with h5py.File(out, "r") as h:
            check(all(np.array_equal(h[k][()], v) for k, v in want.items()),
                  f"NaN positions (na_rep '{na_rep}'): the scenes as without those rows")

# 2. Argoverse 2-style: string ids, a quoted scenario id, AV2 types, headings with holes, a map.
rows = []
for k in range(0, 60):  # 6 s at 10 Hz
    rows.append(("scene, one", "AV", k, 2.0 * k / 10, 1.0, 0.0, 2.0, 0.0, "vehicle"))
    rows.append(("scene, one", "17", k, 0.0, -1.5 * k / 10, -math.pi / 2 if k % 3 else None, 0.0, -1.5, "bus"))
    rows.append(("scene, one", "p9", k, 5.0, 5.0 + 0.5 * k / 10, None, None, None, "pedestrian"))
    rows.append(("scene, one", "m1", k, 1.0 * k / 10, 9.0, 0.0, 1.0, 0.0, "motorcyclist"))
    rows.append(("scene, one", "s", k, 7.0, 7.0, 0.0, 0.0, 0.0, "static"))
av2 = pd.DataFrame(rows, columns=["scenario_id", "track_id", "timestep", "position_x", "position_y", "heading",
                                  "velocity_x", "velocity_y", "object_type"])
av2_csv = os.path.join(scratch, "av2.csv")
av2.to_csv(av2_csv, index=False)
lanes = pd.DataFrame([("scene, one", "L1", x, 1.0, "vehicle_lane") for x in np.linspace(-10, 15, 26)] +
                     [("scene, one", "W", 6.0, y, "sidewalk") for y in np.linspace(-5, 20, 26)],
                     columns=["scenario_id", "polyline_id", "x", "y", "type"])
map_csv = os.path.join(scratch, "map.csv")
lanes.to_csv(map_csv, index=False)
out = os.path.join(scratch, "av2.h5")
r = run(av2_csv, out, "--map", map_csv, "--history", "2", "--window", "5", "--stride", "5")
print(r.stdout, r.stderr)
check(r.returncode == 0, "AV2-style import succeeds")
with h5py.File(out, "r") as h:
    check(list(h["agent_type"][()]) == [0, 0, 1, 2], f"vehicle, bus, pedestrian, motorcyclist -> 0 0 1 2; static "
                                                    f"left out: {list(h['agent_type'][()])}")
    st = h["agent_state"][()]
    check(st.shape[1] == 51, "5 s of 0.1 s steps")
    check(np.allclose(st[1, :, 2], -math.pi / 2, atol=1e-5), "headings of the table, holes from the motion")
    check(np.allclose(st[2, :, 2], math.pi / 2, atol=1e-5), "pedestrian heading from the motion")
    check(h["map_polyline"].shape == (6, 11, 2), f"two 25 m polylines -> 3 pieces each: {h['map_polyline'].shape}")
    check(list(h["map_type"][()]) == [0, 0, 0, 2, 2, 2], "map types")

# 2c. The same tracks as INTERACTION writes its tables (and SinD its): no scenario_id (the file is
# one recording), timestamp_ms, x, y, vx, vy, psi_rad, agent_type (car, truck, pedestrian/bicycle,
# motorcycle); read without conversion, the same scenes as the Argoverse 2 names give.
names = {"vehicle": "car", "bus": "truck", "pedestrian": "pedestrian/bicycle", "motorcyclist": "motorcycle"}
inter = av2[av2.object_type != "static"]
inter = pd.DataFrame({"track_id": inter.track_id, "frame_id": inter.timestep, "timestamp_ms": inter.timestep * 100,
                      "agent_type": inter.object_type.map(names), "x": inter.position_x, "y": inter.position_y,
                      "vx": inter.velocity_x, "vy": inter.velocity_y, "psi_rad": inter.heading,
                      "length": 4.5, "width": 1.8})
inter_csv = os.path.join(scratch, "vehicle_tracks_000.csv")
inter.to_csv(inter_csv, index=False)
common = ["--history", "2", "--window", "5", "--stride", "5"]
r = run(inter_csv, os.path.join(scratch, "interaction.h5"), *common)
print(r.stdout, r.stderr)
r2 = run(av2_csv, os.path.join(scratch, "av2_no_map.h5"), *common)
check(r.returncode == 0 and r2.returncode == 0, "INTERACTION-style import succeeds")
with h5py.File(os.path.join(scratch, "interaction.h5"), "r") as h, \
        h5py.File(os.path.join(scratch, "av2_no_map.h5"), "r") as g:
    differ = [k for k in g.keys() if k not in h or not np.array_equal(h[k][()], g[k][()])]
    check(not differ and sorted(h.keys()) == sorted(g.keys()),
          f"INTERACTION's columns give the Argoverse 2 names' scenes (differ: {differ})")

# 2b. An Argoverse 2 scenario's length (110 steps at 10 Hz: 4.9 s observed, the current step the 50th,
# 6 s predicted): a 10.5 s window with a 4.5 s history, aligned to the end, puts the current step at
# AV2's; from the start it would be 0.4 s early. A car throughout (x = 2 t) and one entering at 7 s.
rows = [("av2", "car", k, 0.2 * k, 0.0, "vehicle") for k in range(110)]
rows += [("av2", "late", k, 50.0, 0.1 * k, "vehicle") for k in range(70, 110)]
scen = pd.DataFrame(rows, columns=["scenario_id", "track_id", "timestep", "position_x", "position_y", "object_type"])
scen_csv = os.path.join(scratch, "av2_scenario.csv")
scen.to_csv(scen_csv, index=False)
for align, first in (("end", 0.4), ("start", 0.0)):
    out = os.path.join(scratch, f"av2_{align}.h5")
    r = run(scen_csv, out, "--history", "4.5", "--window", "10.5", "--stride", "11", "--align", align)
    print(r.stdout, r.stderr)
    check(r.returncode == 0, f"--align {align} import succeeds")
    with h5py.File(out, "r") as h:
        st, valid, hs = h["agent_state"][()], h["agent_valid"][()], int(h.attrs["history_steps"])
        check(len(h["agent_state_offsets"][()]) == 2 and st.shape[1] == 106, f"--align {align}: one scene of 106 steps")
        t = first + np.arange(106) * 0.1
        check(np.allclose(st[0, :, 0], 2 * t, atol=1e-4), f"--align {align}: the scene starts at {first} s")
        check(hs == 46 and abs(t[hs - 1] - (4.9 if align == "end" else 4.5)) < 1e-9,
              f"--align {align}: the current step at {t[hs - 1]:.1f} s")
        check(np.array_equal(valid[1].astype(bool), t >= 7 - 1e-9), f"--align {align}: the late car from 7 s")
r = run(scen_csv, os.path.join(scratch, "x.h5"), "--history", "4.5", "--window", "10.5", "--align", "middle")
check(r.returncode == 2 and "--align expects start or end" in r.stderr, f"--align middle refused: {r.stderr.strip()}")
stride_ends = []
for align in ("start", "end"):  # 16 s of pedestrians, 8 s windows every 3 s: 0, 3, 6 s or 2, 5, 8 s
    out = os.path.join(scratch, f"ped_{align}.h5")
    r = run(ped_csv, out, "--rate", "2.5", "--history", "3", "--window", "8", "--stride", "3", "--align", align)
    with h5py.File(out, "r") as h:
        off, st = h["agent_state_offsets"][()], h["agent_state"][()]
        stride_ends.append([round(float(st[off[k], 0, 0]) / 1.2, 4) for k in range(len(off) - 1)])
check(stride_ends == [[0.0, 3.0, 6.0], [2.0, 5.0, 8.0]], f"window starts by alignment: {stride_ends}")

# 2d. Odd but valid tables as pandas hands them over (the robust6 sweep): rows shuffled; time steps and
# track ids written as floats (an int column holding a NaN: 5.0, 17.0); time steps counted from -50
# (AV2's current step at 0); extra columns (AV2's parquet: observed, city, focal_track_id, ...); an agent
# seen once; a recording shorter than the window beside the long one (left out, counted). Each gives
# the scenes of the plain table (the once-seen agent: one valid step more).
end = ["--history", "4.5", "--window", "10.5", "--stride", "11", "--align", "end"]


def scenes_of(name, table):
    path = os.path.join(scratch, name)
    table.to_csv(path, index=False)
    r = run(path, path + ".h5", *end)
    check(r.returncode == 0, f"{name}: rc {r.returncode} {r.stderr.strip()}")
    if r.returncode != 0:
        return None, r
    with h5py.File(path + ".h5", "r") as h:
        return {k: h[k][()] for k in h.keys()}, r


plain, _ = scenes_of("odd_plain.csv", scen)
floats = scen.assign(timestep=scen.timestep.astype(float), track_id=scen.track_id.map({"car": 1.0, "late": 2.0}))
odd = [("odd_shuffled.csv", scen.sample(frac=1, random_state=3)), ("odd_floats.csv", floats),
       ("odd_negative.csv", scen.assign(timestep=scen.timestep - 50)),
       ("odd_extra.csv", scen.assign(observed=scen.timestep < 50, city="PIT", focal_track_id="car",
                                     start_timestamp=315969629019741000))]
for name, table in odd:
    got, _ = scenes_of(name, table)
    check(got is not None and plain is not None and sorted(got) == sorted(plain) and
          all(np.array_equal(got[k], plain[k]) for k in plain), f"{name}: the plain table's scenes")
once = pd.DataFrame([("av2", "once", 60, 3.0, 3.0, "pedestrian")], columns=scen.columns)
short = scen[scen.timestep < 30].assign(scenario_id="short")
# A recording of one observation (a snapshot: no span to tell its rate by) is a short one too.
snapshot = pd.DataFrame([("snap", "a", 7, 1.0, 2.0, "vehicle")], columns=scen.columns)
got, r = scenes_of("odd_once_short.csv", pd.concat([scen, once, short, snapshot]))
if got is not None:
    check(len(got["agent_state_offsets"]) == 2 and list(got["agent_type"]) == [0, 0, 1],
          f"the once-seen pedestrian imported, the short recording left out: {list(got['agent_type'])}")
    check(int(got["agent_valid"][2].sum()) == 1, "the once-seen agent: valid at its one step")
    check("2 recordings shorter than the window were left out" in r.stdout, f"short recordings counted: {r.stdout}")

bad = [
    ("missing_column.csv", "scenario_id,track_id,position_x,position_y\na,1,0,0\n", ":1: timestep: missing column"),
    ("not_a_number.csv", "scenario_id,track_id,timestep,position_x,position_y\na,1,0,0,0\na,1,1,abc,0\n",
     ":3: position_x: 'abc' is not a finite number"),
    ("unknown_type.csv", "scenario_id,track_id,timestep,position_x,position_y,object_type\na,1,0,0,0,car\n"
                         "a,1,1,0,0,spaceship\n", ":3: object_type: unknown type 'spaceship'"),
    ("repeated.csv", "scenario_id,track_id,timestep,position_x,position_y\na,1,0,0,0\na,1,1,0,0\na,1,1,0,0\n",
     ":4: timestep: track '1' of scenario 'a' repeats the time step of line 3"),
    ("short_row.csv", "scenario_id,track_id,timestep,position_x,position_y\na,1,0,0\n",
     ":2: position_y: the row has 4 fields"),
    ("open_quote.csv", "scenario_id,track_id,timestep,position_x,position_y\n\"a,1,0,0,0\n",
     ":2: a quoted field is not closed"),
    # Note [unobserved positions]: a NaN position is an absence only with both coordinates; a NaN in
    # another column of an observed row is refused.
    ("half_nan.csv", "scenario_id,track_id,timestep,position_x,position_y\na,1,0,0,0\na,1,1,NaN,0\n",
     ":3: position_x: 'NaN' is not a finite number, where position_y is given"),
    ("nan_heading.csv", "scenario_id,track_id,timestep,position_x,position_y,heading\na,1,0,0,0,0\na,1,1,1,0,nan\n",
     ":3: heading: 'nan' is not a finite number"),
    ("all_nan.csv", "scenario_id,track_id,timestep,position_x,position_y\na,1,0,0,0\na,1,1,1,0\nb,1,0,,\n",
     ":4: position_x: scenario 'b': every one of its 1 rows has no position"),
]
for name, text, expected in bad:
    path = os.path.join(scratch, name)
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(scratch, name + ".h5")
    if os.path.exists(out):
        os.remove(out)
    r = run(path, out)
    check(r.returncode != 0 and (path + expected) in r.stderr, f"{name}: expected '{path}{expected}', got "
                                                             f"rc {r.returncode} '{r.stderr.strip()}'")
    check(not os.path.exists(out), f"{name}: no output left behind")
r = run(ped_csv, os.path.join(scratch, "x.h5"), "--window", "100")
check(r.returncode != 0 and "shorter than the window" in r.stderr, f"too long a window: {r.stderr.strip()}")

# Time steps not at --rate (Note [one rate per table]): a recording with ETH/UCY's raw frame numbers
# (25 fps video, every 10th frame annotated) beside one numbered 0, 1, 2, ... at 2.5 Hz; ns time
# stamps taken as steps (which also spanned ~1e16 windows and ran for ever); a track_id that names
# rows; and one stray time step, passed over (Note [windows without samples]) or refused when the
# windows cannot be counted.
ns = ped.assign(timestep=ped.timestep * 400_000_000 + 1_700_000_000_000_000_000)
stray = ped.copy()
stray.loc[stray.index[-1], "timestep"] = 10**16
rate_cases = [
    ("mixed_rate.csv", pd.concat([ped, ped.assign(scenario_id="eth", timestep=ped.timestep * 10)]),
     f":{len(ped) + 3}: timestep: scenario 'eth': no two samples of a track are within --max-gap 0.6 s (the "
     f"closest: track '1', lines {len(ped) + 2} and {len(ped) + 3}, 4 s apart as timestep / --rate 2.5 Hz)"),
    ("ns_steps.csv", ns, ":3: timestep: scenario 'zara': no two samples of a track are within --max-gap 0.6 s "
                         "(the closest: track '1', lines 2 and 3, 1.6e+08 s apart as timestep / --rate 2.5 Hz)"),
    ("row_ids.csv", ped.assign(track_id=range(len(ped))),
     f":2: track_id: scenario 'zara': every one of its {len(ped)} tracks has a single sample"),
    ("stray_huge.csv", stray.assign(timestep=stray.timestep.where(stray.timestep < 10**16, 1e300)),
     ": scenario 'zara' spans 4e+299 s"),
]
for name, table, expected in rate_cases:
    path, out = os.path.join(scratch, name), os.path.join(scratch, name + ".h5")
    table.to_csv(path, index=False)
    r = subprocess.run([tool, path, out, "--rate", "2.5"], capture_output=True, text=True, timeout=20)
    check(r.returncode == 2 and (path + expected) in r.stderr, f"{name}: expected '{path}{expected}', got "
                                                                f"rc {r.returncode} '{r.stderr.strip()}'")
    check(not os.path.exists(out), f"{name}: no output left behind")
scenes = []
for name, table in (("stray.csv", stray), ("unstrayed.csv", ped.iloc[:-1])):
    path = os.path.join(scratch, name)
    table.to_csv(path, index=False)
    r = subprocess.run([tool, path, path + ".h5", "--rate", "2.5", "--window", "8", "--stride", "4"],
                       capture_output=True, text=True, timeout=20)  # ~1e15 windows ran for ever
    check(r.returncode == 0, f"{name}: rc {r.returncode} {r.stderr.strip()}")
    with h5py.File(path + ".h5", "r") as h:
        off = h["agent_state_offsets"][()]
        scenes.append(h["agent_state"][()][:off[3]])
check(np.array_equal(scenes[0], scenes[1]), "a stray time step 1e16: the first three scenes as without it")

if failures:
    print(f"track_tables: {len(failures)} checks failed")
    sys.exit(1)
print(f"track_tables: pandas {pd.__version__} tables imported and checked; bad tables refused with file:line: column")
