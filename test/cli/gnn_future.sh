#!/usr/bin/env bash
# wxeval --init: forecasts past the data file's end (Note [future forecast]). A regional gnn (wxgen, the
# day before blended, derived forcings only) and a global one (the reduced Gaussian N32 of
# make_reduced_grids.sh), each trained for one epoch: from the last time of a file truncated at T
# (the full file as the regional model's --boundary) the forecast equals the hindcast's from T on the
# full file at every lead (float32); the states after T perturbed change nothing (the boundary aside);
# 1 rank == 2 ranks; xarray decodes valid times past the file's end; files holding only the forecast's
# inputs give the same forecast, and so does a forecast file (one initial time) as the boundary; and the
# errors (no --boundary, a boundary or a forcing variable that does not cover the valid times, a file
# short of the states before T, a forecast file of several initial times as boundary, bad --init,
# leads past a day with state_day_before; a hindcast file too short for --lead-steps, or for any lead)
# exit 2 naming what is missing, on 1 and 2 ranks, no file.
# usage: gnn_future.sh BUILD_DIR MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
build=$1 mpiexec=$2 dir=$3 src=$4
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$dir"
wxeval() {  # RANKS ARGS...: wxeval on RANKS ranks
  local np=$1
  shift
  "$mpiexec" -np "$np" --oversubscribe --bind-to none "$build/apps/wxeval" "$@"
}
train() {  # DECK OUT ARGS...
  local deck=$1 out=$2
  shift 2
  "$build/apps/train" "$src/inputs/$deck" --set output="$dir/$out" --set metrics_file= --set epochs=1 \
    --set gnn_latent=8 --set gnn_layers=1 "$@" > "$dir/$out.log" 2>&1 || { cat "$dir/$out.log"; fail "train $out"; }
}
"$build/apps/wxgen" "$dir/wx.nc" --nx 12 --ny 9 --margin 6 --hours 60 --spinup 24 > /dev/null
"$build/apps/wxgen" "$dir/other.nc" --nx 10 --ny 9 --margin 6 --hours 60 --spinup 24 > /dev/null
"$src/test/python/make_reduced_grids.sh" "$dir/g" 16 > /dev/null
train gnn_quickstart.in regional.h5 --set data_file="$dir/wx.nc" --set forcing_variables= \
  --set derived_forcings=day_of_year,state_day_before,lead_time --set gnn_output=day_before_blend
train gnn_quickstart.in sun.h5 --set data_file="$dir/wx.nc"
train gnn_global.in global.h5 --set data_file="$dir/g/reduced.nc" --set state_variables=t2m \
  --set gnn_mesh_refinements=2 --set derived_forcings=toa_radiation,time_of_day --set batch_size=4
# Truncated at T (wx: time 40 of 0 .. 60, hourly; g: 11 of 0 .. 15, 6-hourly) and perturbed after T.
/usr/bin/python3 - "$dir" <<'EOF'
import sys
import xarray as xr

d = sys.argv[1]
for name, T, states in (("wx", 40, ["h", "u", "v", "q"]), ("g/reduced", 11, ["t2m"])):
    ds = xr.load_dataset(f"{d}/{name}.nc")
    ds.isel(time=slice(0, T + 1)).to_netcdf(f"{d}/{name}_trunc.nc")
    for v in states:
        ds[v][T + 1:] = ds[v][T + 1:] * 1.5 + 7.0
    ds.to_netcdf(f"{d}/{name}_pert.nc")
# Files of exactly what a forecast from T reads, no training sample in them (Note [future inputs]): the
# regional model's states T - 23 .. T (state_day_before) and its boundary at the valid times alone; the
# global model's T - 1 and T. One time less of each is refused.
wx, g = xr.load_dataset(f"{d}/wx.nc"), xr.load_dataset(f"{d}/g/reduced.nc")
wx.isel(time=slice(17, 41)).to_netcdf(f"{d}/wx_init.nc")
wx.isel(time=slice(18, 41)).to_netcdf(f"{d}/wx_short.nc")
wx.isel(time=slice(41, 47)).to_netcdf(f"{d}/wx_valid.nc")
g.isel(time=slice(10, 12)).to_netcdf(f"{d}/g/init.nc")
g.isel(time=[11]).to_netcdf(f"{d}/g/one.nc")
g.isel(time=slice(10, 12), values=list(range(1, g.sizes["values"])) + [0]).to_netcdf(f"{d}/g/rolled.nc")
EOF
# The hindcasts on the full files (--from 0.5 holds T).
wxeval 1 "$dir/regional.h5" "$dir/wx.nc" --lead-steps 6 --from 0.5 --forecast "$dir/hind.nc" > "$dir/hind.log" 2>&1 ||
  { cat "$dir/hind.log"; fail "the regional hindcast"; }
wxeval 1 "$dir/global.h5" "$dir/g/reduced.nc" --lead-steps 4 --from 0.5 --forecast "$dir/ghind.nc" \
  > "$dir/ghind.log" 2>&1 || { cat "$dir/ghind.log"; fail "the global hindcast"; }
# The future forecasts: from the truncated file's last time, on 1 and 2 ranks; from T of the
# perturbed file (by its time, and by its index); a boundary that differs after T changes the
# regional forecast (the strip is --boundary's).
run() {  # LOG ARGS...: wxeval that must succeed
  local log=$1
  shift
  "$@" > "$dir/$log" 2>&1 || { cat "$dir/$log"; fail "$log"; }
}
for np in 1 2; do
  run fut$np.log wxeval $np "$dir/regional.h5" "$dir/wx_trunc.nc" --init last --boundary "$dir/wx.nc" --lead-steps 6 \
    --forecast "$dir/fut$np.nc" --csv "$dir/fut$np.csv"
  run gfut$np.log wxeval $np "$dir/global.h5" "$dir/g/reduced_trunc.nc" --init last --lead-steps 4 \
    --forecast "$dir/gfut$np.nc"
done
cat "$dir/fut2.log"
cmp <(grep -v "^wxeval: forecast from" "$dir/fut1.log") <(grep -v "^wxeval: forecast from" "$dir/fut2.log") ||
  fail "1 and 2 ranks print different tables"
run pert.log wxeval 2 "$dir/regional.h5" "$dir/wx_pert.nc" --init 2026-01-02T16:00 --boundary "$dir/wx.nc" \
  --lead-steps 6 --forecast "$dir/pert.nc"
run bpert.log wxeval 1 "$dir/regional.h5" "$dir/wx_trunc.nc" --init 40 --boundary "$dir/wx_pert.nc" --lead-steps 6 \
  --forecast "$dir/bpert.nc"
run gpert.log wxeval 1 "$dir/global.h5" "$dir/g/reduced_pert.nc" --init 11 --lead-steps 4 --forecast "$dir/gpert.nc"
# Exactly the inputs; a forecast file as the boundary (Note [a forecast as data]): --forecast's own
# output, and one initial time of the hindcast's written back by xarray.
run init.log wxeval 1 "$dir/regional.h5" "$dir/wx_init.nc" --init last --boundary "$dir/wx_valid.nc" --lead-steps 6 \
  --forecast "$dir/init.nc"
run ginit.log wxeval 2 "$dir/global.h5" "$dir/g/init.nc" --init last --lead-steps 4 --forecast "$dir/ginit.nc"
/usr/bin/python3 - "$dir" <<'EOF'
import sys
import xarray as xr

d = sys.argv[1]
h, T = xr.load_dataset(f"{d}/hind.nc"), xr.open_dataset(f"{d}/wx_trunc.nc").time.values[-1]
h.sel(time=[T]).to_netcdf(f"{d}/hind_T.nc")
h.sel(time=[T - (h.time.values[1] - h.time.values[0])]).to_netcdf(f"{d}/hind_early.nc")
EOF
for b in fut1 hind_T; do
  run chain_$b.log wxeval 1 "$dir/regional.h5" "$dir/wx_init.nc" --init last --boundary "$dir/$b.nc" --lead-steps 6 \
    --forecast "$dir/chain_$b.nc"
done
run glong.log wxeval 1 "$dir/global.h5" "$dir/g/reduced.nc" --init last --lead-steps 8 --forecast "$dir/glong.nc"
cat "$dir/glong.log"
grep -q "^wxeval: forecast from 2026-01-02T16:00 (time 40 of 41 .*0 scored .* 6 past its end" "$dir/fut1.log" ||
  fail "the forecast's header line"
grep -q "6 scored against .* 0 past its end" "$dir/pert.log" || { cat "$dir/pert.log"; fail "pert: 6 leads scored"; }
[ "$(awk -F, 'NR > 1 && $3 == "" && $4 == ""' "$dir/fut1.csv" | wc -l)" -eq 24 ] || fail "fut1.csv: 24 unscored rows"
/usr/bin/python3 - "$dir" <<'EOF' || fail "the future forecasts"
import sys
import numpy as np
import xarray as xr

d = sys.argv[1]
def check(fut, hind, trunc, names, T):
    f, h, t = xr.open_dataset(fut), xr.open_dataset(hind), xr.open_dataset(trunc)
    assert f.sizes["time"] == 1 and f.time.values[0] == t.time.values[-1], (f.time.values, t.time.values[-1])
    valid = f.time.values[0] + f.prediction_timedelta.values
    assert valid[0] > t.time.values[-1], "the first valid time is past the truncated file's end"
    for v in names:
        a = f[v].isel(time=0).values
        b = h[v].sel(time=f.time.values[0]).values
        assert np.isfinite(a).all() and a.shape == b.shape, (v, a.shape, b.shape)
        err = np.abs(a - b).max() / max(1e-6, np.abs(b).max())
        assert err < 1e-5, (fut, v, err)  # float32: the same rollout, batches of another size
    return f

check(f"{d}/fut1.nc", f"{d}/hind.nc", f"{d}/wx_trunc.nc", ["h", "u", "v", "q"], 40)
check(f"{d}/gfut1.nc", f"{d}/ghind.nc", f"{d}/g/reduced_trunc.nc", ["t2m"], 11)
same = lambda a, b, v: np.array_equal(xr.open_dataset(a)[v].values, xr.open_dataset(b)[v].values)
for v in ["h", "u", "v", "q"]:
    assert same(f"{d}/fut1.nc", f"{d}/fut2.nc", v), "1 and 2 ranks"
    assert same(f"{d}/fut1.nc", f"{d}/pert.nc", v), "the states after T reached the regional forecast"
assert not same(f"{d}/fut1.nc", f"{d}/bpert.nc", "h"), "the regional forecast ignores --boundary"
assert same(f"{d}/gfut1.nc", f"{d}/gfut2.nc", "t2m") and same(f"{d}/gfut1.nc", f"{d}/gpert.nc", "t2m"), "global"
assert same(f"{d}/gfut1.nc", f"{d}/ginit.nc", "t2m"), "the global forecast from a file of T - 1 and T alone"
for v in ["h", "u", "v", "q"]:  # the strip is the boundary's, and a forecast file's valid times are its times
    for f in ["init", "chain_fut1", "chain_hind_T"]:
        assert same(f"{d}/fut1.nc", f"{d}/{f}.nc", v), (f, v)
g = xr.open_dataset(f"{d}/glong.nc")
last = xr.open_dataset(f"{d}/g/reduced.nc").time.values[-1]
assert g.time.values[0] == last and g.prediction_timedelta.values[-1] == np.timedelta64(48, "h")
assert (g.time.values[0] + g.prediction_timedelta.values > last).all() and np.isfinite(g.t2m.values).all()
print("future forecasts: equal to the hindcasts from T, blind to the states after T, valid times past the end")
EOF
# Errors: exit 2, one message naming what is missing, no forecast file.
refused() {  # WHAT PATTERN ARGS...: wxeval on 1 and 2 ranks must exit 2 with PATTERN and write no file
  local what=$1 pattern=$2
  shift 2
  for np in 1 2; do
    rm -f "$dir/err.nc"
    local rc=0
    wxeval $np "$@" --forecast "$dir/err.nc" > "$dir/err.log" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || { cat "$dir/err.log"; fail "$what on $np ranks: exit $rc, not 2"; }
    grep -q -- "$pattern" "$dir/err.log" || { cat "$dir/err.log"; fail "$what on $np ranks: no '$pattern'"; }
    [ "$(grep -c "^wxeval: " "$dir/err.log")" -eq 1 ] || { cat "$dir/err.log"; fail "$what: one message"; }
    ! ls "$dir"/err.nc* > /dev/null 2>&1 || fail "$what on $np ranks left a file"
  done
  sed -n 's/^wxeval: /  refused: /p' "$dir/err.log"
}
R=("$dir/regional.h5" "$dir/wx_trunc.nc")
refused "no boundary" "a limited-area model (boundary_width 2): a forecast from --init needs --boundary" \
  "${R[@]}" --init last --lead-steps 2
refused "a short boundary" "wx_trunc.nc: --boundary has no time 2026-01-02T17:00 (lead 1" \
  "${R[@]}" --init last --boundary "$dir/wx_trunc.nc" --lead-steps 2
refused "another grid" "other.nc: a 9 x 10 grid" "${R[@]}" --init last --boundary "$dir/other.nc" --lead-steps 2
refused "a forcing variable" "wx_trunc.nc: forcing variable 'sun' has no time 2026-01-02T17:00 (lead 1" \
  "$dir/sun.h5" "$dir/wx_trunc.nc" --init last --boundary "$dir/wx.nc" --lead-steps 2
refused "an index" "--init 41: .*wx_trunc.nc has times 0 .. 40" "${R[@]}" --init 41 --boundary "$dir/wx.nc"
refused "a time" "wx_trunc.nc has no time 2026-01-03T00:00 (its times: 2026-01-01T00:00 .. 2026-01-02T16:00)" \
  "${R[@]}" --init 2026-01-03T00 --boundary "$dir/wx.nc"
refused "not a time" "'yesterday' is not a time" "${R[@]}" --init yesterday --boundary "$dir/wx.nc"
refused "past a day" "25 lead steps reach beyond a day" "${R[@]}" --init last --boundary "$dir/wx.nc" --lead-steps 25
refused "a global boundary" "takes no --boundary" "$dir/global.h5" "$dir/g/reduced_trunc.nc" --init last \
  --boundary "$dir/g/reduced.nc"
refused "a short file" "wx_short.nc: a forecast from 2026-01-02T16:00 with 2 lead steps needs the states at \
2026-01-01T17:00 .. 2026-01-02T16:00 (23 steps before the initial time for state_day_before); the file has no time \
2026-01-01T17:00 (its times: 2026-01-01T18:00 .. 2026-01-02T16:00)" "$dir/regional.h5" "$dir/wx_short.nc" \
  --init last --boundary "$dir/wx.nc" --lead-steps 2
refused "one time" "one.nc: a forecast from 2024-01-03T18:00 with 4 lead steps needs the states at \
2024-01-03T18:00 and the step before it; the file holds 2024-01-03T18:00" "$dir/global.h5" "$dir/g/one.nc" \
  --init last --lead-steps 4
refused "points in another order" "rolled.nc: point 0 is at latitude" "$dir/global.h5" "$dir/g/rolled.nc" \
  --init last --lead-steps 2
refused "a boundary from an earlier time" "hind_early.nc: --boundary has no time 2026-01-02T22:00 (lead 6 .*\
2026-01-02T17:00 .. 2026-01-02T22:00 (its times: 2026-01-02T16:00 .. 2026-01-02T21:00)" "${R[@]}" --init last \
  --boundary "$dir/hind_early.nc" --lead-steps 6
refused "a boundary of many forecasts" "hind.nc: variable 'h' is a forecast from 16 initial times .*\
give one initial time" "${R[@]}" --init last --boundary "$dir/hind.nc" --lead-steps 2
refused "--from" "--from is for the hindcast" "${R[@]}" --init last --boundary "$dir/wx.nc" --from 0.5
# The hindcast on a file too short for its leads names the file, its times, the times needed and
# --lead-steps (not the deck key ar_steps that wxeval sets from it).
refused "a hindcast past the file" "wx_trunc.nc: 41 time steps; wxeval --lead-steps 24 needs 48 times from an \
initial time t (t - 1, t, the 24 leads and the 22 steps before t - 1 that state_day_before reads): at most 17 fit \
here; lower --lead-steps or give a file with more times" "${R[@]}" --lead-steps 24
! grep -q ar_steps "$dir/err.log" || fail "the hindcast's refusal speaks of ar_steps"
refused "a global hindcast past the file" "reduced_trunc.nc: 12 time steps; wxeval --lead-steps 40 needs 42 times \
from an initial time t (t - 1, t, the 40 leads): at most 10 fit here; lower --lead-steps" "$dir/global.h5" \
  "$dir/g/reduced_trunc.nc" --lead-steps 40
refused "a hindcast on one time" "one.nc: 1 time step; wxeval --lead-steps 3 needs 5 times from an initial time t \
(t - 1, t, the 3 leads); even --lead-steps 1 needs 3 times: give a file with more times" "$dir/global.h5" \
  "$dir/g/one.nc" --lead-steps 3
! grep -q "lower --lead-steps" "$dir/err.log" || fail "a file too short for any lead asks for fewer leads"
refused "a hindcast past a day" "wx_trunc.nc: derived_forcings state_day_before: wxeval --lead-steps 25 reaches \
beyond a day" "${R[@]}" --lead-steps 25
echo "gnn_future: ok"
