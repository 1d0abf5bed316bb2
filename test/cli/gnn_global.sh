#!/usr/bin/env bash
# inputs/gnn_global.in scaled down on a reduced Gaussian N32 GRIB (6114 points) that ecCodes writes
# (test/python/make_reduced_grids.sh: two waves travelling east, 40 steps of 6 hours): for 6 epochs, the
# icosahedral mesh (3 refinements) trains on 2 ranks and on 1 with rank_invariant, and both write
# the same bytes in every dataset; the validation loss falls below 0.5 x the first epoch's; wxeval
# (on 2 ranks and on 1, the same table) beats persistence at every lead to 4 steps; the weights file
# reloads onto the graph of its points (Note [graph from positions]); plot-forecast draws the points;
# scripts/wx-climatology scores the daily climatology; cfgrib's NetCDF gives the same table, and its points
# shifted by one are refused.
# usage: gnn_global.sh BUILD_DIR MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
build=$1 mpiexec=$2 dir=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$dir"
"$src/test/python/make_reduced_grids.sh" "$dir" 40 > /dev/null
train() {  # NAME RANKS: the global batch 4 on either
  "$mpiexec" -np "$2" --oversubscribe --bind-to none "$build/apps/train" "$src/inputs/gnn_global.in" \
    --set data_file="$dir/reduced.grib" --set gnn_mesh_refinements=3 --set gnn_latent=16 --set gnn_layers=2 \
    --set derived_forcings=toa_radiation,time_of_day --set epochs=6 --set batch_size=$((4 / $2)) \
    --set rank_invariant=true \
    --set output="$dir/$1.h5" --set metrics_file= > "$dir/$1.log" 2>&1 || { cat "$dir/$1.log"; fail "train $1"; }
}
train np2 2
train np1 1
grep -E "^Epoch|^Done" "$dir/np2.log"
grep -q "grid_ny=1 grid_nx=6114" "$dir/np2.log" || fail "not read as one row of 6114 points"
first=$(sed -n 's/^Epoch 1\/.*val loss = \([0-9.e+-]*\).*/\1/p' "$dir/np2.log")
last=$(sed -n 's/.*final val loss \([0-9.e+-]*\).*/\1/p' "$dir/np2.log")
awk -v a="$first" -v b="$last" 'BEGIN { if (!(b < 0.5 * a)) { print "val loss " b " not below 0.5 x " a; exit 1 } }'
for n in np1 np2; do
  args=()
  for d in $(h5ls -r "$dir/$n.h5" | awk '$2 == "Dataset" { print $1 }' | sort); do args+=(-d "$d"); done
  h5dump -b LE -o "$dir/$n.bin" "${args[@]}" "$dir/$n.h5" > /dev/null
done
cmp "$dir/np1.bin" "$dir/np2.bin" || fail "1 and 2 ranks wrote different weights"
"$mpiexec" -np 2 --oversubscribe --bind-to none "$build/apps/wxeval" "$dir/np2.h5" "$dir/reduced.grib" --lead-steps 4 \
  --fields "$dir/fields.h5" --forecast "$dir/forecast.nc" > "$dir/eval2.log" 2>&1 ||
  { cat "$dir/eval2.log"; fail "wxeval on 2 ranks"; }
"$mpiexec" -np 1 --bind-to none "$build/apps/wxeval" "$dir/np2.h5" "$dir/reduced.grib" --lead-steps 4 \
  > "$dir/eval1.log" 2>&1 || { cat "$dir/eval1.log"; fail "wxeval on 1 rank"; }
cat "$dir/eval2.log"
awk '$1 ~ /^[0-9]+$/ && NF == 7 { n++; if (!($6 < 1)) { print "lead " $1 ": RMSE " $6 " x persistence"; bad = 1 } }
     END { if (n != 4) { print n " leads"; bad = 1 } exit bad }' "$dir/eval2.log"
cmp <(grep -v "held-out" "$dir/eval1.log") <(grep -v "held-out" "$dir/eval2.log") || fail "1 and 2 ranks print different tables"
# The forecast file (both ranks' initial times, WeatherBench2's layout) scored by xarray against
# cfgrib's NetCDF of the data gives wxeval's table; its first forecast is --fields'.
/usr/bin/python3 - "$dir" <<'EOF2' || fail "the forecast file"
import sys
import h5py
import numpy as np
import xarray as xr

d = sys.argv[1]
f, truth = xr.open_dataset(f"{d}/forecast.nc"), xr.open_dataset(f"{d}/reduced.nc")
x = f["2t"]
assert x.dims == ("time", "prediction_timedelta", "values"), x.dims
assert list(f.prediction_timedelta.values) == [np.timedelta64(h, "h") for h in (6, 12, 18, 24)]
assert np.array_equal(f.latitude, truth.latitude) and np.array_equal(f.longitude, truth.longitude)
held = int(open(f"{d}/eval2.log").read().split(" held-out initial times")[0].split()[-1])
assert f.sizes["time"] == held, (f.sizes, held)
table = {int(r.split()[0]): float(r.split()[2]) for r in open(f"{d}/eval2.log") if r.split() and r.split()[0].isdigit()}
for k, lead in enumerate(f.prediction_timedelta.values):
    t = truth.t2m.sel(time=f.time.values + lead).values
    e = x.isel(prediction_timedelta=k).values - t
    rmse = np.sqrt(np.mean(e * e))  # the deck's gnn_point_weights uniform
    assert abs(rmse / table[k + 1] - 1) < 1e-4, (k, rmse, table[k + 1])
with h5py.File(f"{d}/fields.h5") as h:
    assert np.array_equal(h["forecast"][:, 0, 0, :], x.isel(time=0).values)
print(f"forecast.nc: {held} initial times x 4 leads, scored by xarray as wxeval scores them")
EOF2
"$src/scripts/plot-forecast" "$dir/fields.h5" "$dir/forecast.png" --leads 1,4
[ -s "$dir/forecast.png" ] || fail "no forecast.png"
# The daily climatology of scripts/wx-climatology (cfgrib's NetCDF of the same file): one row per
# lead, each worse than the model's lead-1 RMSE (the waves travel; the hour of day does not hold them).
"$src/scripts/wx-climatology" "$dir/reduced.nc" t2m --by hour --lead-steps 4 --weights latitude > "$dir/clim.log" ||
  { cat "$dir/clim.log"; fail "wx-climatology"; }
cat "$dir/clim.log"
model1=$(awk '$1 == 1 && NF == 7 { print $3 }' "$dir/eval2.log")
awk -v m="$model1" '$1 ~ /^[0-9]+$/ { n++; if (!($3 > m)) bad = 1 } END { if (n != 4 || bad) { print "climatology rows " n; exit 1 } }' \
  "$dir/clim.log" || fail "wx-climatology's table"
# The same points from cfgrib's NetCDF (its t2m named 2t as the GRIB-trained model reads it) roll out
# to the same table; shifted by one point they are refused, naming the file and the point (the
# graph knows where each point was in training).
/usr/bin/python3 - "$dir" <<'EOF2'
import sys
import xarray as xr

d = sys.argv[1]
ds = xr.open_dataset(f"{d}/reduced.nc").rename(t2m="2t")
ds.to_netcdf(f"{d}/renamed.nc")
ds.roll(values=1, roll_coords=True).to_netcdf(f"{d}/rolled.nc")
EOF2
"$build/apps/wxeval" "$dir/np2.h5" "$dir/renamed.nc" --lead-steps 4 > "$dir/eval_nc.log" 2>&1 ||
  { cat "$dir/eval_nc.log"; fail "wxeval on the NetCDF"; }
cmp <(grep -v "held-out" "$dir/eval1.log") <(grep -v "held-out" "$dir/eval_nc.log") || fail "the NetCDF's table differs"
if "$build/apps/wxeval" "$dir/np2.h5" "$dir/rolled.nc" --lead-steps 1 > "$dir/rolled.log" 2>&1; then
  fail "wxeval took points in another order"
fi
grep -q "rolled.nc: point 0 is at latitude .*np2.h5 was trained with it at" "$dir/rolled.log" ||
  { cat "$dir/rolled.log"; fail "no error naming the moved point"; }
