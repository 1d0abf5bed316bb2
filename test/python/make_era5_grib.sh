#!/bin/sh
# GRIB as ECMWF writes ERA5, made by ecCodes' own grib_filter from its sample files (the grib
# source's tests, test_era5_sources): the grid and times of make_era5_grids.py's era5_cds.nc (6 x 7
# points, latitudes 52.0 .. 50.75 north to south, longitudes 358.5 .. 360.0, hours 0..13 of
# 2024-06-20 without 06), with t2m = 270 + t + 0.5 j + 0.25 i as 2t (GRIB 2, heightAboveGround),
# lsm = (i + j) % 2 (surface) at every time and z = level + 2 t + j - i on isobaricInhPa 850 and 500
# (GRIB 1, as ERA5's pressure levels are), t the hour, j and i the row and column.
# usage: make_era5_grib.sh OUT_DIR
set -eu
out=$1
command -v grib_filter >/dev/null || { echo "make_era5_grib: grib_filter missing (libeccodes-tools)"; exit 1; }
samples=$(codes_info -t 2>/dev/null || echo /usr/share/eccodes/samples)
[ -f "$samples/regular_ll_sfc_grib2.tmpl" ] || samples=/usr/share/eccodes/samples
mkdir -p "$out"
rules_sfc=$out/sfc.rules
rules_pl=$out/pl.rules
: > "$rules_sfc"
: > "$rules_pl"
grid='set Ni = 7; set Nj = 6;
set latitudeOfFirstGridPointInDegrees = 52.0; set longitudeOfFirstGridPointInDegrees = 358.5;
set latitudeOfLastGridPointInDegrees = 50.75; set longitudeOfLastGridPointInDegrees = 360.0;
set iDirectionIncrementInDegrees = 0.25; set jDirectionIncrementInDegrees = 0.25;'
for t in 0 1 2 3 4 5 7 8 9 10 11 12 13; do
  hhmm=$(printf '%02d00' "$t")
  for var in 2t lsm; do
    values=$(awk -v t="$t" -v var="$var" 'BEGIN {
      for (j = 0; j < 6; j++) for (i = 0; i < 7; i++) {
        v = var == "2t" ? 270 + t + 0.5 * j + 0.25 * i : (i + j) % 2
        printf "%s%.2f", (j || i) ? ", " : "", v } }')
    printf 'set dataDate = 20240620; set dataTime = %s; %s\nset shortName = "%s";\nset values = {%s};\nwrite;\n' \
      "$hhmm" "$grid" "$var" "$values" >> "$rules_sfc"
  done
  for level in 850 500; do
    values=$(awk -v t="$t" -v l="$level" 'BEGIN {
      for (j = 0; j < 6; j++) for (i = 0; i < 7; i++) printf "%s%.2f", (j || i) ? ", " : "", l + 2 * t + j - i }')
    printf 'set dataDate = 20240620; set dataTime = %s; %s\nset shortName = "z"; set level = %s;\nset values = {%s};\nwrite;\n' \
      "$hhmm" "$grid" "$level" "$values" >> "$rules_pl"
  done
done
grib_filter -o "$out/sfc.grib" "$rules_sfc" "$samples/regular_ll_sfc_grib2.tmpl"
grib_filter -o "$out/pl.grib" "$rules_pl" "$samples/regular_ll_pl_grib1.tmpl"
# era5.grib: both in one file; the two files also stay as they are (test_grid_file_lists).
cat "$out/sfc.grib" "$out/pl.grib" > "$out/era5.grib"
mv "$out/sfc.grib" "$out/era5_sfc.grib"
mv "$out/pl.grib" "$out/era5_pl.grib"
rm -f "$rules_sfc" "$rules_pl"
# era5_nan.grib: era5_sfc.grib with 2t at hour 4 (message 9) missing at j 2, i 3 (a bitmap, as ERA5's
# sea fields have over land): a value the grib source reads as NaN (test_era5_sources).
values=$(awk 'BEGIN { for (j = 0; j < 6; j++) for (i = 0; i < 7; i++) {
  v = j == 2 && i == 3 ? 9999 : 274 + 0.5 * j + 0.25 * i; printf "%s%.2f", (j || i) ? ", " : "", v } }')
printf 'if (shortName is "2t" && dataTime == 400) {\n  set bitmapPresent = 1; set missingValue = 9999;\n  set values = {%s};\n}\nwrite;\n' \
  "$values" > "$out/nan.rules"
grib_filter -o "$out/era5_nan.grib" "$out/nan.rules" "$out/era5_sfc.grib"
rm -f "$out/nan.rules"

# era5_lambert.grib: 2t on a 7 x 6 Lambert conformal grid (CERRA's kind, 20 km, rows south to
# north) at hours 0..3 of 2024-03-20, each value 270 + hour + 0.5 lat + 0.1 lon of its point: first
# the grid with zeros, then ecCodes' own grib_get_data gives each point's latitude and longitude,
# from which the values (test_projected_grids).
lambert='set gridType = "lambert"; set Nx = 7; set Ny = 6; set jScansPositively = 1;
set latitudeOfFirstGridPointInDegrees = 50.0; set longitudeOfFirstGridPointInDegrees = 355.0;
set LaDInDegrees = 50.0; set LoVInDegrees = 0.0; set Latin1InDegrees = 50.0; set Latin2InDegrees = 50.0;
set DxInMetres = 20000; set DyInMetres = 20000; set shortName = "2t";'
zeros=$(awk 'BEGIN { for (k = 0; k < 42; k++) printf "%s0", k ? ", " : "" }')
printf '%s\nset values = {%s};\nwrite;\n' "$lambert" "$zeros" > "$out/lambert0.rules"
grib_filter -o "$out/lambert0.grib" "$out/lambert0.rules" "$samples/GRIB2.tmpl"
: > "$out/lambert.rules"
for t in 0 1 2 3; do
  values=$(grib_get_data "$out/lambert0.grib" | awk -v t="$t" 'NR > 1 {
    printf "%s%.4f", n++ ? ", " : "", 270 + t + 0.5 * $1 + 0.1 * ($2 > 180 ? $2 - 360 : $2) }')
  printf 'set dataDate = 20240320; set dataTime = %02d00;\nset values = {%s};\nwrite;\n' "$t" "$values" >> "$out/lambert.rules"
done
grib_filter -o "$out/era5_lambert.grib" "$out/lambert.rules" "$out/lambert0.grib"
rm -f "$out/lambert0.rules" "$out/lambert.rules" "$out/lambert0.grib"
echo "wrote $out/era5.grib, era5_sfc.grib, era5_pl.grib, era5_nan.grib, era5_lambert.grib"
