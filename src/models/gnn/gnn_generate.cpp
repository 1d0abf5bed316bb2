// apps/wxgen, the gnn family's `generate` tool (ModelFamily::generate): writes a regional weather data set
// with real dynamics (shallow water on a beta-plane larger than the region,
// src/models/gnn/shallow_water.hpp) as a NetCDF-4 file laid out as xarray writes one.
#include <netcdf.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/help_option.hpp"
#include "models/gnn/netcdf_out.hpp"
#include "models/gnn/shallow_water.hpp"

namespace {
using hpct::netcdf_out::check;
using hpct::netcdf_out::data_variable;
using hpct::netcdf_out::text;

const char* kWxgenUsage =
    "usage: wxgen OUT.nc [--nx N] [--ny N] [--margin N] [--hours N] [--spinup N] [--dx-km N] [--dt N] [--seed K]\n"
    "  shallow water (depth h, velocities u, v, tracer q) on a beta-plane channel of (nx + 2 margin) x\n"
    "  (ny + 2 margin) cells, forced by a jet and a diurnal heating (forcing variable `sun`), over\n"
    "  orography (static variable `orog`); after --spinup hours, the nx x ny region in the middle is\n"
    "  written every hour for --hours hours (--hours + 1 times). Equations: docs/wxgen.md.\n"
    "  defaults: --nx 32 --ny 24 --margin 16 --hours 720 --spinup 120 --dx-km 25 --dt 300 --seed 1\n";

struct Options {
  long long nx = 32, ny = 24, margin = 16, hours = 720, spinup = 120, dx_km = 25, dt = 300, seed = 1;
};

void write(const std::string& out, const Options& o, const std::string& command) {
  hpct::ShallowWaterConfig c;
  c.nx = static_cast<int>(o.nx + 2 * o.margin), c.ny = static_cast<int>(o.ny + 2 * o.margin);
  c.dx = 1e3 * static_cast<double>(o.dx_km), c.dt = static_cast<double>(o.dt);
  c.seed = static_cast<std::uint64_t>(o.seed);
  hpct::ShallowWater sw(c);
  sw.advance(3600.0 * static_cast<double>(o.spinup));

  int nc = -1;
  check(nc_create(out.c_str(), NC_NETCDF4 | NC_CLOBBER, &nc), out);
  const auto nx = static_cast<std::size_t>(o.nx), ny = static_cast<std::size_t>(o.ny);
  const auto nt = static_cast<std::size_t>(o.hours + 1);
  int dt = -1, dy = -1, dx = -1;
  check(nc_def_dim(nc, "time", nt, &dt), "time");
  check(nc_def_dim(nc, "y", ny, &dy), "y");
  check(nc_def_dim(nc, "x", nx, &dx), "x");
  int vt = -1, vy = -1, vx = -1;
  check(nc_def_var(nc, "time", NC_INT64, 1, &dt, &vt), "time");
  text(nc, vt, "units", "hours since 2026-01-01 00:00:00");
  text(nc, vt, "calendar", "proleptic_gregorian");
  text(nc, vt, "axis", "T");
  const auto coordinate = [&](int dim, const char* name, const char* axis) {
    int id = -1;
    check(nc_def_var(nc, name, NC_DOUBLE, 1, &dim, &id), name);
    text(nc, id, "units", "m");
    text(nc, id, "axis", axis);
    text(nc, id, "standard_name", std::string("projection_") + name + "_coordinate");
    return id;
  };
  vy = coordinate(dy, "y", "Y");
  vx = coordinate(dx, "x", "X");
  const std::vector<int> txy = {dt, dy, dx};
  const int vh = data_variable(nc, "h", txy, "m", "fluid depth");
  const int vu = data_variable(nc, "u", txy, "m s-1", "eastward velocity");
  const int vv = data_variable(nc, "v", txy, "m s-1", "northward velocity");
  const int vq = data_variable(nc, "q", txy, "1", "passive tracer");
  const int vs = data_variable(nc, "sun", txy, "1", "diurnal heating (forcing)");
  const int vb = data_variable(nc, "orog", {dy, dx}, "m", "orography (static)");
  text(nc, NC_GLOBAL, "Conventions", "CF-1.8");
  text(nc, NC_GLOBAL, "title", "wxgen: shallow water on a beta-plane, regional cut-out");
  text(nc, NC_GLOBAL, "source", "hpctrain apps/wxgen (docs/gnn.md)");
  text(nc, NC_GLOBAL, "history", command);
  check(nc_enddef(nc), out);

  std::vector<double> coord(std::max(nx, ny));
  for (std::size_t i = 0; i < ny; ++i)
    coord[i] = (static_cast<double>(o.margin + static_cast<long long>(i)) + 0.5) * c.dx;
  check(nc_put_var_double(nc, vy, coord.data()), "y");
  for (std::size_t i = 0; i < nx; ++i)
    coord[i] = (static_cast<double>(o.margin + static_cast<long long>(i)) + 0.5) * c.dx;
  check(nc_put_var_double(nc, vx, coord.data()), "x");
  // The region's cells of an outer-grid field, as float32.
  std::vector<float> slab(nx * ny);
  const auto cut = [&](const auto& value) {
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t i = 0; i < nx; ++i)
        slab[j * nx + i] = static_cast<float>(value(static_cast<int>(i + static_cast<std::size_t>(o.margin)),
                                                    static_cast<int>(j + static_cast<std::size_t>(o.margin))));
    return slab.data();
  };
  const auto field = [&](const std::vector<double>& f) {
    return cut([&](int i, int j) { return f[static_cast<std::size_t>(j * c.nx + i)]; });
  };
  // No half-written file is left behind when the integration fails (a file of NaNs would train).
  try {
    check(nc_put_var_float(nc, vb, field(sw.orography())), "orog");
    for (std::size_t k = 0; k < nt; ++k) {
      if (k > 0) sw.advance(3600.0);
      const long long hour = static_cast<long long>(k);
      const std::size_t start[3] = {k, 0, 0}, count[3] = {1, ny, nx};
      check(nc_put_var1_longlong(nc, vt, &k, &hour), "time");
      check(nc_put_vara_float(nc, vh, start, count, field(sw.h())), "h");
      check(nc_put_vara_float(nc, vu, start, count, field(sw.u())), "u");
      check(nc_put_vara_float(nc, vv, start, count, field(sw.v())), "v");
      check(nc_put_vara_float(nc, vq, start, count, field(sw.q())), "q");
      const double t = sw.time();
      check(nc_put_vara_float(nc, vs, start, count, cut([&](int i, int j) { return sw.sun(i, j, t); })), "sun");
    }
  } catch (...) {
    nc_close(nc);
    std::remove(out.c_str());
    throw;
  }
  check(nc_close(nc), out);
}
}  // namespace

namespace hpct {

int gnn_generate_main(int argc, char** argv) {
  if (asks_for_help(argc, argv)) return print_usage(kWxgenUsage);
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kWxgenUsage, stderr);
    return 2;
  }
  const std::string out = argv[1];
  std::string command = "wxgen";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "wxgen: %s needs a value\n%s", a.c_str(), kWxgenUsage);
      return 2;
    }
    char* end = nullptr;
    const long long v = std::strtoll(argv[++i], &end, 10);
    if (!end || *end != '\0' || v < 0 || (v == 0 && a != "--spinup")) {
      std::fprintf(stderr, "wxgen: %s expects a positive integer, got '%s'\n", a.c_str(), argv[i]);
      return 2;
    }
    long long* slot = a == "--nx"       ? &o.nx
                      : a == "--ny"     ? &o.ny
                      : a == "--margin" ? &o.margin
                      : a == "--hours"  ? &o.hours
                      : a == "--spinup" ? &o.spinup
                      : a == "--dx-km"  ? &o.dx_km
                      : a == "--dt"     ? &o.dt
                      : a == "--seed"   ? &o.seed
                                        : nullptr;
    if (!slot) {
      std::fprintf(stderr, "wxgen: unknown option %s\n%s", a.c_str(), kWxgenUsage);
      return 2;
    }
    *slot = v;
  }
  if (3600 % o.dt != 0) {
    std::fprintf(stderr, "wxgen: --dt must divide an hour (3600 s), got %lld\n", o.dt);
    return 2;
  }
  return hpct::run_tool("wxgen", [&] {
    write(out, o, command);
    std::printf(
        "wxgen: wrote %s (%lld hourly times of a %lld x %lld region, %lld km cells, in a %lld x %lld domain)\n",
        out.c_str(), o.hours + 1, o.nx, o.ny, o.dx_km, o.nx + 2 * o.margin, o.ny + 2 * o.margin);
    return 0;
  });
}

}  // namespace hpct
