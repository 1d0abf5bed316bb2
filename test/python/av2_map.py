"""scenes_import --map on Argoverse 2 map archives (log_map_archive_<scenario_id>.json) written here in
AV2's layout (the av2 package's ArgoverseStaticMap.from_json schema) with the json module: a small
intersection (straight lanes whose bounds have unequal point counts, a lane stored westwards, a
quarter turn, a bike lane, a bus lane, a crossing whose edges run opposite ways, a drivable area)
and an AV2-columns track table of two scenarios. Checks the centre lines and types written back by
--write-map, which scenario a file, a folder's maps or several --map files go to, and the errors
(exit 2, the file and the key named, nothing written).
usage: av2_map.py SCENES_IMPORT OUT_DIR"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys

from tool_run import Checks, run_ok

tool, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
check = Checks()
S1, S2 = "0a1e6f0a-0000-4000-8000-000000000001", "0a1e6f0a-0000-4000-8000-000000000002"


def pts(points, z=21.5):
    return [{"x": float(x), "y": float(y), "z": z} for x, y in points]


def lane(id_, kind, left, right, **extra):
    return {"id": id_, "is_intersection": extra.get("is_intersection", False), "lane_type": kind,
            "left_lane_boundary": pts(left), "right_lane_boundary": pts(right),
            "left_lane_mark_type": "DASHED_WHITE", "right_lane_mark_type": "SOLID_WHITE",
            "successors": extra.get("successors", []), "predecessors": [], "left_neighbor_id": None,
            "right_neighbor_id": None}


def turn(radius):
    """A left turn about (-10, 20): from heading east at (-10, 20 - radius) to heading north."""
    return [(-10 + radius * math.sin(math.radians(a)), 20 - radius * math.cos(math.radians(a))) for a in range(0, 91, 5)]


segments = [
    # eastwards, left bound north: 2 points against the right bound's 7; centre y = 1.75
    lane(101, "VEHICLE", [(-40, 3.5), (-10, 3.5)], [(x, 0) for x in range(-40, -9, 5)], successors=[103]),
    # westwards (stored so), its left bound south; centre y = 5.25, running west
    lane(102, "VEHICLE", [(x, 3.5) for x in range(-10, -41, -10)], [(-10, 7), (-25, 7), (-40, 7)]),
    # the quarter turn through the intersection: centre on radius 18.25
    lane(103, "VEHICLE", turn(16.5), turn(20.0), is_intersection=True),
    lane(104, "BIKE", [(-40, 0), (-10, 0)], [(-40, -2), (-25, -2), (-10, -2)]),
    # northwards bus lane: centre x = 21.75
    lane(105, "BUS", [(20, -40), (20, -10)], [(23.5, -40), (23.5, -25), (23.5, -10)]),
]
archive = {
    "drivable_areas": {"7": {"area_boundary": pts([(-45, -45), (30, -45), (30, 30), (-45, 30)]), "id": 7}},
    "lane_segments": {str(s["id"]): s for s in segments},
    # edges along the crossing, edge2 stored the other way: centre x = -6 from y = -6 to 10, both ways
    "pedestrian_crossings": {"900": {"edge1": pts([(-8, -6), (-8, 10)]), "edge2": pts([(-4, 10), (-4, -6)]),
                                     "id": 900}},
}
# A real forecasting map also carries each lane's "centerline" (not read): one here too.
archive["lane_segments"]["101"]["centerline"] = pts([(-40, 1.75), (-10, 1.75)])
other = {"drivable_areas": {}, "pedestrian_crossings": {},
         "lane_segments": {"201": lane(201, "VEHICLE", [(0, 10), (30, 10)], [(0, 6.5), (30, 6.5)])}}

# AV2's split layout for S1 (maps/<id>/log_map_archive_<id>.json), a flat file for S2.
maps = os.path.join(out, "maps")
for sid, m, folder in [(S1, archive, os.path.join(maps, S1)), (S2, other, maps)]:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"log_map_archive_{sid}.json"), "w") as f:
        json.dump(m, f, indent=1)
map1 = os.path.join(maps, S1, f"log_map_archive_{S1}.json")


def track_table(path, scenarios):
    """A vehicle driving east along lane 101 in each scenario, 110 steps at 10 Hz (AV2's columns)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario_id", "track_id", "timestep", "object_type", "position_x", "position_y", "heading",
                    "velocity_x", "velocity_y"])
        for sid in scenarios:
            for t in range(110):
                w.writerow([sid, "focal", t, "vehicle", -40 + 0.3 * t, 1.75, 0.0, 3.0, 0.0])


tracks12, tracks21 = os.path.join(out, "tracks12.csv"), os.path.join(out, "tracks21.csv")
track_table(tracks12, [S1, S2])
track_table(tracks21, [S2, S1])
common = ["--history", "4.5", "--window", "10.5", "--align", "end"]
h5 = os.path.join(out, "scenes.h5")


def read_map(path):
    """--write-map's table: [(type, [(x, y), ...]), ...] by polyline_id."""
    lines = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            lines.setdefault(int(r["polyline_id"]), (r["type"], []))[1].append((float(r["x"]), float(r["y"])))
    return [lines[k] for k in sorted(lines)]


got = os.path.join(out, "got.csv")
said = run_ok(tool, tracks12, h5, "--map", map1, "--write-map", got, *common)
check(f"-> scenario {S1}" in said and "5 lanes (4 vehicle, 1 bike), 1 pedestrian crossings (1 drivable areas" in said,
      f"a file named after a scenario: that scenario's, counted ({said.splitlines()[0]})")
lines = read_map(got)
check(len(lines) == 7, f"5 lane centre lines and the crossing both ways (got {len(lines)})")
if len(lines) == 7:
    (t1, a), (t2, b), (t3, c), (t4, d), (t5, e), (t6, f), (t7, g) = lines
    check(t1 == "vehicle_lane" and len(a) == 31 and all(abs(y - 1.75) < 1e-6 for _, y in a)
          and abs(a[0][0] + 40) < 1e-6 and abs(a[-1][0] + 10) < 1e-6 and all(
              abs(a[k][0] - (-40 + k)) < 1e-6 for k in range(31)),
          "lane 101: bounds at y = 3.5 (2 points) and 0 (7 points): centre y = 1.75, a point every metre, eastwards")
    check(t2 == "vehicle_lane" and all(abs(y - 5.25) < 1e-6 for _, y in b) and b[0][0] > b[-1][0],
          "lane 102: centre y = 5.25, westwards as stored")
    check(t3 == "vehicle_lane" and all(abs(math.hypot(x + 10, y - 20) - 18.25) < 0.05 for x, y in c)
          and math.hypot(c[0][0] + 10, c[0][1] - 1.75) < 1e-6 and math.hypot(c[-1][0] - 8.25, c[-1][1] - 20) < 1e-6,
          "lane 103 (a quarter turn): centre on radius 18.25 within 5 cm, from (-10, 1.75) to (8.25, 20)")
    check(t4 == "bike_lane" and all(abs(y + 1) < 1e-6 for _, y in d), "lane 104: BIKE -> bike_lane, centre y = -1")
    check(t5 == "vehicle_lane" and all(abs(x - 21.75) < 1e-6 for x, _ in e) and e[0][1] < e[-1][1],
          "lane 105: BUS -> vehicle_lane, centre x = 21.75, northwards")
    check(t6 == t7 == "sidewalk" and all(abs(x + 6) < 1e-6 for x, _ in f + g) and f == g[::-1]
          and {f[0][1], f[-1][1]} == {-6.0, 10.0},
          "the crossing (edge2 stored against edge1): centre x = -6 from y = -6 to 10, a sidewalk both ways")
check(" 0 map segments" not in said, "the scenes hold map pieces")

# The same file with S2 first: S2 has no map (--write-map writes the first scenario's: nothing).
run_ok(tool, tracks21, h5, "--map", map1, "--write-map", got, *common)
check(read_map(got) == [], "a file named after S1 is not S2's map")
# A file named after no scenario of the table (nor .json: known by its '{'): every scenario's.
anymap = os.path.join(out, "area.map")
shutil.copy(map1, anymap)
said = run_ok(tool, tracks21, h5, "--map", anymap, "--write-map", got, *common)
check("-> every scenario (2)" in said and len(read_map(got)) == 7, "a file named otherwise, without .json: every scenario's")
# The folder: each scenario its own file (S1 in its own folder, S2's beside it).
said = run_ok(tool, tracks21, h5, "--map", maps, "--write-map", got, *common)
only = read_map(got)
check("each scenario its own (2 maps)" in said and len(only) == 1 and all(abs(y - 8.25) < 1e-6 for _, y in only[0][1]),
      "a folder: S2 takes maps/log_map_archive_S2.json (one lane, centre y = 8.25), S1 its folder's")
# The folder's files given one by one (--map S2's --map S1's), in either table order: each goes to
# the scenario it is named after, as from the folder.
map2 = os.path.join(maps, f"log_map_archive_{S2}.json")
for table, first_map in ((tracks21, map2), (tracks12, map1)):
    said = run_ok(tool, table, h5, "--map", map2, "--map", map1, "--write-map", got, *common)
    by_files = read_map(got)
    run_ok(tool, table, h5, "--map", maps, "--write-map", got, *common)
    check("2 maps: 6 lanes (5 vehicle, 1 bike)" in said and "-> each its scenario (2 of 2 scenarios)" in said
          and by_files == read_map(got) and len(by_files) == (1 if first_map == map2 else 7),
          f"--map twice: each file its scenario's, as from the folder ({os.path.basename(table)})")


def refused(args, message, name):
    target, written = os.path.join(out, "refused.h5"), os.path.join(out, "refused.csv")
    r = subprocess.run([tool, tracks12, target, *args, "--write-map", written, *common], capture_output=True, text=True)
    check(r.returncode == 2 and message in r.stderr and not os.path.exists(target) and not os.path.exists(written),
          f"{name}: exit 2, '{message}', nothing written (got {r.returncode}: {r.stderr.strip()})")


def broken(name, change):
    m = json.loads(json.dumps(archive))
    change(m)
    path = os.path.join(out, name)
    with open(path, "w") as f:
        json.dump(m, f)
    return path


bad = broken("bad.json", lambda m: m["lane_segments"]["102"].update(left_lane_boundary="none"))
refused(["--map", bad], "bad.json: lane_segments['102'].left_lane_boundary: expected a list of points", "a bound not a list")
bad = broken("bad_point.json", lambda m: m["lane_segments"]["101"]["right_lane_boundary"][2].pop("y"))
refused(["--map", bad], "bad_point.json: lane_segments['101'].right_lane_boundary[2].y: expected a number", "a point without y")
bad = broken("bad_type.json", lambda m: m["lane_segments"]["104"].update(lane_type="TRAM"))
refused(["--map", bad], "bad_type.json: lane_segments['104'].lane_type: \"TRAM\" is not (VEHICLE, BIKE or BUS)", "a lane type")
bad = broken("bad_crossing.json", lambda m: m["pedestrian_crossings"]["900"].pop("edge2"))
refused(["--map", bad], "bad_crossing.json: pedestrian_crossings['900'].edge2: missing", "a crossing without edge2")
bad = broken("bad_layer.json", lambda m: m.pop("lane_segments"))
refused(["--map", bad], "bad_layer.json: no 'lane_segments': not an Argoverse 2 map", "no lane_segments")
cut = os.path.join(out, "cut.json")
with open(map1) as f, open(cut, "w") as g:
    g.write(f.read()[:500])
refused(["--map", cut], "cut.json: not valid JSON: parse error at line", "a truncated file")
os.makedirs(os.path.join(out, "empty"), exist_ok=True)
refused(["--map", os.path.join(out, "empty")], f"empty: scenario '{S1}' has no map", "a folder without a scenario's map")
# Several --map: a second map for a scenario, a map for none, a file or folder naming no scenario,
# a map table.
again = os.path.join(out, "empty", f"log_map_archive_{S1}.json")
shutil.copy(map1, again)
refused(["--map", map1, "--map", map2, "--map", again],
        f"{again}: a second map for scenario '{S1}' (the first: {map1})", "two maps for one scenario")
S3 = S1[:-1] + "3"
stray = os.path.join(out, f"log_map_archive_{S3}.json")
shutil.copy(map1, stray)
refused(["--map", map1, "--map", stray], f"{stray}: scenario '{S3}' is not in the track table", "a map for no scenario")
refused(["--map", map1, "--map", anymap], "area.map: names no scenario: with several --map, each is one scenario's map",
        "an unnamed map among several")
refused(["--map", map1, "--map", maps], "maps: a folder among several --map", "a folder among several")
table = os.path.join(out, "table.csv")
with open(table, "w") as f:
    f.write("polyline_id,x,y\n0,0,0\n0,1,0\n")
refused(["--map", map1, "--map", table], "--map " + table + ": --map is given once for a map table", "a map table among several")
check.finish()
