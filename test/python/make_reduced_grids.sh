#!/bin/sh
# A global field on ECMWF's reduced Gaussian grid N32 (6114 points, ecCodes' sample), written by
# ecCodes' grib_filter, and the same read by cfgrib and written by xarray as NetCDF (the cells'
# dimension `values` with latitude and longitude over it, as users convert GRIB): the tests of
# reduced and unstructured grids (test_unstructured_grids) and of the gnn's icosahedral mesh.
# 2t (K) every 6 hours from 2024-01-01 00 UTC: 280 - 30 sin^2(lat) plus two waves travelling east,
# 8 cos^2(lat) cos(3 (lon - 15 t)) and 3 cos(lat) cos(2 lon + 10 t) (t in 6-hour steps, degrees).
# usage: make_reduced_grids.sh OUT_DIR [STEPS]
set -eu
out=$1
steps=${2:-8}
command -v grib_filter >/dev/null || { echo "make_reduced_grids: grib_filter missing (libeccodes-tools)"; exit 1; }
samples=$(codes_info -t 2>/dev/null || echo /usr/share/eccodes/samples)
[ -f "$samples/reduced_gg_pl_32_grib2.tmpl" ] || samples=/usr/share/eccodes/samples
template=$samples/reduced_gg_pl_32_grib2.tmpl
mkdir -p "$out"
# The points' latitudes and longitudes, in the order of the values.
grib_get_data "$template" | awk 'NR > 1 && NF == 3 { print $1, $2 }' > "$out/points.txt"
rules=$out/reduced.rules
: > "$rules"
t=0
while [ "$t" -lt "$steps" ]; do
  day=$((1 + t / 4))
  hhmm=$(printf '%02d00' $((t % 4 * 6)))
  values=$(awk -v t="$t" 'BEGIN { d = 3.14159265358979 / 180 }
    { p = $1 * d; l = $2 * d
      v = 280 - 30 * sin(p)^2 + 8 * cos(p)^2 * cos(3 * (l - 15 * t * d)) + 3 * cos(p) * cos(2 * l + 10 * t * d)
      printf "%s%.3f", (NR > 1) ? ", " : "", v }' "$out/points.txt")
  printf 'set dataDate = 202401%02d; set dataTime = %s;\nset discipline = 0; set parameterCategory = 0; set parameterNumber = 0;\nset typeOfFirstFixedSurface = 103; set scaledValueOfFirstFixedSurface = 2;\nset values = {%s};\nwrite;\n' \
    "$day" "$hhmm" "$values" >> "$rules"
  t=$((t + 1))
done
grib_filter -o "$out/reduced.grib" "$rules" "$template"
rm -f "$rules"
/usr/bin/python3 - "$out" <<'EOF'
import sys
import xarray as xr

out = sys.argv[1]
ds = xr.open_dataset(f"{out}/reduced.grib", engine="cfgrib", backend_kwargs={"indexpath": ""})
ds.to_netcdf(f"{out}/reduced.nc")
EOF
# reduced_nan.grib: reduced.grib with step 2 missing at point 1000 (a bitmap, by ecCodes' Python
# API): read as NaN, named by its point (test_unstructured_grids).
/usr/bin/python3 - "$out" <<'EOF3'
import sys
import eccodes

out = sys.argv[1]
with open(f"{out}/reduced.grib", "rb") as f, open(f"{out}/reduced_nan.grib", "wb") as o:
    count = 0
    while (h := eccodes.codes_grib_new_from_file(f)) is not None:
        count += 1
        if count == 3:  # step 2
            values = eccodes.codes_get_values(h)
            values[1000] = 9999.0
            eccodes.codes_set(h, "bitmapPresent", 1)
            eccodes.codes_set(h, "missingValue", 9999.0)
            eccodes.codes_set_values(h, values)
        eccodes.codes_write(h, o)
        eccodes.codes_release(h)
EOF3
# Refused: a spectral field (ecCodes' sample), and cells without latitude and longitude.
cp "$samples/sh_ml_grib2.tmpl" "$out/spectral.grib"
/usr/bin/python3 - "$out" <<'EOF2'
import sys
import xarray as xr

out = sys.argv[1]
ds = xr.open_dataset(f"{out}/reduced.nc")
ds.drop_vars(["latitude", "longitude"]).to_netcdf(f"{out}/cells_no_coordinates.nc")
EOF2
