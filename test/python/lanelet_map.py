"""scenes_import --map on lanelet2 maps written by lanelet2 itself (PyPI lanelet2, the reference):
its centre lines against the ones lanelet2 loads from the same file, in the same driving
direction, from latitude/longitude (UtmProjector origin) and from an INTERACTION-style .osm_xy
copy in local x/y; the lanelet kinds (road, bicycle lane, crosswalk both ways, another subtype left
out); and the errors (no origin for a lat/lon map, broken XML), nothing written.
usage: lanelet_map.py SCENES_IMPORT OUT_DIR"""
import math
import os
import sys
import xml.etree.ElementTree as ET

try:
    import lanelet2
    import pandas as pd
    from lanelet2.core import Lanelet, LineString3d, Point3d, getId
    from lanelet2.io import Origin
    from lanelet2.projection import UtmProjector
except ImportError as e:
    print(f"lanelet_map: {e} (the reference venv: scripts/setup --reference)")
    sys.exit(77)

from tool_run import Checks, run_ok  # noqa: E402

tool, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
check = Checks()
ORIGIN = (49.0, 8.4)
projector = UtmProjector(Origin(*ORIGIN))


def line(points):
    return LineString3d(getId(), [Point3d(getId(), x, y, 0.0) for x, y in points])


def lanelet(left, right, subtype, **tags):
    ll = Lanelet(getId(), line(left), line(right))
    ll.attributes["subtype"] = subtype
    for k, v in tags.items():
        ll.attributes[k] = v
    return ll


arc = [math.radians(a) for a in range(0, 91, 5)]
lanelets = [
    # eastwards, bounds stored eastwards, the left one north
    lanelet([(x, 1.75) for x in range(0, 60, 5)], [(x, -1.75) for x in range(0, 60, 5)], "road"),
    # stored eastwards with the left bound south: lanelet2 drives it westwards
    lanelet([(x, -12.0) for x in range(0, 60, 6)], [(x, -8.5) for x in range(0, 60, 6)], "road"),
    # a quarter turn, its right bound stored the other way round
    lanelet([(70 + 20 * math.cos(a), 20 * math.sin(a)) for a in arc],
            [(70 + 24 * math.cos(a), 24 * math.sin(a)) for a in reversed(arc)], "road"),
    lanelet([(x, 5.0) for x in range(0, 40, 4)], [(x, 3.5) for x in range(0, 40, 4)], "bicycle_lane"),
    lanelet([(20.0, y) for y in range(-12, 12, 3)], [(24.0, y) for y in range(-12, 12, 3)], "crosswalk"),
    lanelet([(0.0, 30.0), (10.0, 30.0)], [(0.0, 27.0), (10.0, 27.0)], "parking"),
]
osm = os.path.join(out, "map.osm")
lanelet2.io.write(osm, lanelet2.core.createMapFromLanelets(lanelets), projector)
loaded = lanelet2.io.load(osm, projector)
# lanelet2's own reading: the centre line of each lanelet, in its driving direction.
reference = {}
for ll in loaded.laneletLayer:
    reference[ll.id] = (ll.attributes["subtype"], [(p.x, p.y) for p in ll.centerline])

# The same map as INTERACTION ships it (.osm_xy): nodes with local x/y, the relations as they are.
tree = ET.parse(osm)
root = tree.getroot()
root.tag = "osm_xy"
points = {p.id: (p.x, p.y) for p in loaded.pointLayer}
for node in root.findall("node"):
    x, y = points[int(node.get("id"))]
    for k in ("lat", "lon", "visible", "version"):
        node.attrib.pop(k, None)
    node.set("x", "%.6f" % x)
    node.set("y", "%.6f" % y)
osm_xy = os.path.join(out, "map.osm_xy")
tree.write(osm_xy)

tracks = os.path.join(out, "tracks.csv")
rows = [{"scenario_id": "s", "track_id": k, "timestep": t, "position_x": 2.0 * t / 10 + 5 * k, "position_y": 0.0}
        for k in range(2) for t in range(100)]
pd.DataFrame(rows).to_csv(tracks, index=False)


def distance_to(p, polyline):
    """The distance from p to the polyline (its segments)."""
    best = math.inf
    for (ax, ay), (bx, by) in zip(polyline, polyline[1:]):
        dx, dy = bx - ax, by - ay
        f = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy)))
        best = min(best, math.hypot(p[0] - ax - f * dx, p[1] - ay - f * dy))
    return best


def compare(map_csv, what):
    got = pd.read_csv(map_csv)
    lines = [g[["x", "y"]].values.tolist() for _, g in got.groupby("polyline_id", sort=True)]
    types = [g["type"].iloc[0] for _, g in got.groupby("polyline_id", sort=True)]
    expected = {"road": "vehicle_lane", "bicycle_lane": "bike_lane", "crosswalk": "sidewalk"}
    # road x3, bicycle lane, crosswalk both ways; parking left out
    check(len(lines) == 6, f"{what}: 6 centre lines (got {len(lines)})")
    for subtype, ref in reference.values():
        if subtype not in expected:
            continue
        ways = [(i, l) for i, l in enumerate(lines)
                if max(distance_to(p, ref) for p in l) < 0.05]
        along = [i for i, l in ways if math.hypot(l[0][0] - ref[0][0], l[0][1] - ref[0][1]) < 0.05
                 and math.hypot(l[-1][0] - ref[-1][0], l[-1][1] - ref[-1][1]) < 0.05]
        check(len(along) == 1 and types[along[0]] == expected[subtype],
              f"{what}: {subtype} from ({ref[0][0]:.1f}, {ref[0][1]:.1f}) to ({ref[-1][0]:.1f}, {ref[-1][1]:.1f}): "
              f"one centre line within 5 cm of lanelet2's, the same way, type {expected[subtype]}")
        check(len(ways) == (2 if subtype == "crosswalk" else 1),
              f"{what}: {subtype}: {'both ways' if subtype == 'crosswalk' else 'one way'}")


h5 = os.path.join(out, "scenes.h5")
common = ["--history", "1", "--window", "9"]
run_ok(tool, tracks, h5, "--map", osm, "--map-origin", "%g,%g" % ORIGIN, "--write-map",
       os.path.join(out, "got.csv"), *common)
compare(os.path.join(out, "got.csv"), "map.osm (lat/lon)")
run_ok(tool, tracks, h5, "--map", osm_xy, "--write-map", os.path.join(out, "got_xy.csv"), *common)
compare(os.path.join(out, "got_xy.csv"), "map.osm_xy (x/y)")
# PROJ's UTM as lanelet2's UtmProjector: the lat/lon map reads where lanelet2 put the points.
# (the ends of each centre line; the count of points may differ where a length is a whole metre)
ends = [[g[["x", "y"]].values[[0, -1]] for _, g in pd.read_csv(os.path.join(out, f)).groupby("polyline_id")]
        for f in ("got.csv", "got_xy.csv")]
worst = max(float(abs(u - v).max()) for u, v in zip(*ends)) if len(ends[0]) == len(ends[1]) else math.inf
check(worst < 1e-3, f"lat/lon through --map-origin and lanelet2's local x/y agree within 1 mm (worst {worst:.2e} m)")

# Errors: a lat/lon map without its origin; broken XML. Exit 2, the file named, nothing written.
import subprocess  # noqa: E402

bad = os.path.join(out, "bad.osm")
with open(osm) as f:
    text = f.read()
with open(bad, "w") as f:
    f.write(text[: len(text) // 2])
for args, message in [(["--map", osm], "map.osm: node %d is in latitude/longitude: give the origin"),
                      (["--map", bad], "bad.osm: XML error at byte")]:
    target = os.path.join(out, "refused.h5")
    r = subprocess.run([tool, tracks, target, *args, *common], capture_output=True, text=True)
    msg = message % min(points) if "%d" in message else message
    check(r.returncode == 2 and msg in r.stderr and not os.path.exists(target),
          f"refused with exit 2, '{msg}', nothing written (got {r.returncode}: {r.stderr.strip()})")
check.finish()
