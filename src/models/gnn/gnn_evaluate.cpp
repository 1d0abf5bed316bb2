// apps/wxeval, the gnn family's `evaluate` tool (ModelFamily::evaluate): rollouts of a trained gnn from the
// held-out initial times of a netcdf file; prints the RMSE per lead time and state variable of the model
// and of persistence, and writes them as CSV; with --init one forecast past the file's end
// (future_forecast.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "comm/comm.hpp"
#include "comm/run_guard.hpp"
#include "core/cli_number.hpp"
#include "core/error.hpp"
#include "core/help_option.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "data/grid_time.hpp"
#include "io/hdf5.hpp"
#include "models/gnn/future_forecast.hpp"
#include "models/gnn/rollout_evaluation.hpp"

namespace {
const char* kGnnEvalUsage =
    "usage: wxeval WEIGHTS.h5 DATA.nc [--lead-steps N] [--from F] [--batch N] [--csv OUT.csv] [--fields OUT.h5]\n"
    "              [--forecast OUT.nc]\n"
    "       wxeval WEIGHTS.h5 DATA.nc --init last|INDEX|TIME [--boundary FILE] [--lead-steps N]\n"
    "              [--forecast OUT.nc] [--csv OUT.csv]\n"
    "  rolls the gnn of WEIGHTS.h5 out from every initial time of DATA.nc's samples from fraction F on\n"
    "  (the held-out part; with the training file, the validation part), the boundary forced by the\n"
    "  truth, and prints the interior RMSE per lead step and state variable of the model, of\n"
    "  persistence and of climatology (the mean state per point of the samples before F), and writes\n"
    "  them to --csv. Ranks split the initial times (no sample twice); the ratio is model/persistence.\n"
    "  --fields: the first held-out initial time's truth and forecast [lead, variable, y, x] (and the\n"
    "    points' latitude and longitude [y, x] when the model has them) for\n"
    "  scripts/plot-forecast.\n"
    "  --forecast: every held-out initial time's forecast as NetCDF in WeatherBench2's layout (variables\n"
    "    over time, prediction_timedelta and the grid; docs/weather-forecasts.md). Memory: --batch x\n"
    "    leads x variables x points floats per rank. defaults: --lead-steps 24 --from 0.8 --batch 8\n"
    "  --init: one forecast from DATA's last time, its time index INDEX or its time yyyy-mm-ddThh:mm, to\n"
    "    valid times past the file's end (the forcings derived from the valid time; forcing variables\n"
    "    read from DATA must cover them); leads DATA holds are scored against it, the others are\n"
    "    forecast only. A limited-area model needs --boundary FILE: the state variables on the same grid\n"
    "    at every valid time (e.g. a global forecast) for its boundary strip; a global one takes none.\n"
    "  --weights ema|raw: the EMA of the weights (default, when the file has one) or the trained ones.\n"
    "  --watchdog-timeout S: end the job when a rank makes no progress for 2 S + 5 s, naming it and its\n"
    "    place (default 600; 0: off; docs/data-parallel.md).\n";

// --init's table: the leads the file holds scored, the others forecast only.
void print_future(const hpct::FutureForecast& f, const std::string& data, const std::string& csv) {
  const auto when = [&](double t) { return f.timed ? hpct::iso_time(t) : hpct::strf("index %g", t); };
  const int held = static_cast<int>(std::count(f.known.begin(), f.known.end(), 1));
  std::printf(
      "wxeval: forecast from %s (time %zu of %zu in %s), %d lead steps to %s; %d scored against %s, %d "
      "past its end (%s) forecast only\n",
      when(f.init_time).c_str(), f.init_index, f.times, data.c_str(), f.leads,
      when(f.init_time + f.leads * f.step_s).c_str(), held, data.c_str(), f.leads - held,
      when(f.last_time).c_str());
  std::printf("%5s  %-10s %14s %16s %10s %7s  %s\n", "lead", "variable", "model_rmse", "persistence_rmse", "ratio",
              "lead_h", "valid_time");
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    if (!out) throw hpct::Error(csv + ": cannot write", hpct::ExitCode::bad_input);
    out << "lead_steps,variable,model_rmse,persistence_rmse,lead_hours,valid_time\n";
  }
  const std::size_t V = f.variables.size();
  for (int k = 0; k < f.leads; ++k)
    for (std::size_t v = 0; v < V; ++v) {
      const std::string h = f.timed ? hpct::strf("%g", (k + 1) * f.step_s / 3600.0) : "";
      const std::string valid = when(f.init_time + (k + 1) * f.step_s);
      const double m = f.model[static_cast<std::size_t>(k) * V + v],
                   p = f.persistence[static_cast<std::size_t>(k) * V + v];
      const std::string ms = f.known[k] ? hpct::strf("%.6g", m) : "-",
                        ps = f.known[k] ? hpct::strf("%.6g", p) : "-";
      const std::string ratio = f.known[k] && p > 0 ? hpct::strf("%.3f", m / p) : "-";
      std::printf("%5d  %-10s %14s %16s %10s %7s  %s\n", k + 1, f.variables[v].c_str(), ms.c_str(), ps.c_str(),
                  ratio.c_str(), h.empty() ? "-" : h.c_str(), valid.c_str());
      if (out)
        out << k + 1 << "," << f.variables[v] << "," << (f.known[k] ? ms : "") << "," << (f.known[k] ? ps : "")
            << "," << h << "," << valid << "\n";
    }
}

int run(int argc, char** argv, const hpct::Comm& comm) {
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kGnnEvalUsage, comm.rank() == 0);
  const double watchdog_timeout = hpct::take_watchdog_timeout(argc, argv);
  if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-') {
    if (comm.rank() == 0) std::fputs(kGnnEvalUsage, stderr);
    return 2;
  }
  const std::string weights = argv[1], data = argv[2];
  int leads = 24, batch = 8;
  double from = 0.8;
  std::string csv, fields, forecast, init, boundary;
  std::vector<std::string> hindcast_only;  // options --init does not take
  hpct::nn::WeightsChoice choice = hpct::nn::WeightsChoice::preferred;
  for (int i = 3; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw hpct::Error(a + " needs a value", hpct::ExitCode::bad_input);
    const std::string v = argv[i + 1];
    if (a == "--batch" || a == "--from" || a == "--fields") hindcast_only.push_back(a);
    if (a == "--lead-steps") leads = static_cast<int>(std::clamp(hpct::cli_integer(a, v), 0LL, 1LL << 30));
    else if (a == "--batch") batch = static_cast<int>(std::clamp(hpct::cli_integer(a, v), 0LL, 1LL << 30));
    else if (a == "--from") from = hpct::cli_real(a, v);
    else if (a == "--csv") csv = v;
    else if (a == "--fields") fields = v;
    else if (a == "--init") init = v;
    else if (a == "--boundary") boundary = v;
    else if (a == "--forecast") forecast = v;
    else if (a == "--weights") choice = hpct::nn::weights_choice(v, "wxeval: --weights");
    else throw hpct::Error("unknown option " + a + "\n" + kGnnEvalUsage, hpct::ExitCode::bad_input);
  }
  if (leads < 1 || batch < 1 || !(from >= 0 && from < 1))
    throw hpct::Error("--lead-steps and --batch must be >= 1 and --from in [0, 1)", hpct::ExitCode::bad_input);
  std::string command = "wxeval";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  if (!boundary.empty() && init.empty())
    throw hpct::Error("--boundary is for a forecast from --init (the hindcast's boundary is the truth)",
                      hpct::ExitCode::bad_input);
  // Note [the tools' guard]: from before the model and the data are opened to the last write.
  hpct::RunGuard guard(comm, watchdog_timeout, hpct::StopSignals::left_alone);
  guard.heartbeat().beat("opening data", data);
  if (!init.empty()) {
    if (!hindcast_only.empty())
      throw hpct::Error(hindcast_only.front() + " is for the hindcast over held-out initial times, not --init",
                        hpct::ExitCode::bad_input);
    const hpct::FutureForecast f = hpct::gnn_future_forecast(weights, data, boundary, init, leads, comm, choice,
                                                             forecast, "hpctrain " + command);
    if (comm.rank() == 0) print_future(f, data, csv);
    return 0;
  }
  hpct::RolloutSums s = hpct::gnn_rollout_sums(weights, data, leads, from, batch, comm, choice, forecast,
                                               "hpctrain " + command);
  comm.allreduce_sum(s.model.data(), s.model.size());
  comm.allreduce_sum(s.persistence.data(), s.persistence.size());
  comm.allreduce_sum(s.climatology.data(), s.climatology.size());
  if (s.total_samples == 0) throw hpct::Error(data + ": no held-out initial times", hpct::ExitCode::bad_input);
  if (comm.rank() != 0) return 0;
  const double count = static_cast<double>(s.total_samples) * s.interior_points;
  const std::size_t V = s.variables.size();
  std::printf("wxeval: %llu held-out initial times of %s, %d lead steps, RMSE over %d interior points\n",
              static_cast<unsigned long long>(s.total_samples), data.c_str(), leads, s.interior_points);
  // Lead times in hours where the data has a time coordinate (its step), else in steps alone.
  const auto lead_hours = [&](int k) { return s.step_s > 0 ? hpct::strf("%g", (k + 1) * s.step_s / 3600.0) : ""; };
  if (s.step_s > 0) std::printf("wxeval: a lead step is %g h (the data's time step)\n", s.step_s / 3600.0);
  std::printf("%5s  %-10s %14s %16s %16s %10s %7s\n", "lead", "variable", "model_rmse", "persistence_rmse",
              "climatology_rmse", "ratio", "lead_h");
  guard.heartbeat().beat("writing the output", csv.empty() ? fields : csv);
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    if (!out) throw hpct::Error(csv + ": cannot write", hpct::ExitCode::bad_input);
    out << "lead_steps,variable,model_rmse,persistence_rmse,climatology_rmse,lead_hours\n";
  }
  int beaten = 0;
  for (int k = 0; k < leads; ++k)
    for (std::size_t v = 0; v < V; ++v) {
      const double m = std::sqrt(s.model[static_cast<std::size_t>(k) * V + v] / count);
      const double p = std::sqrt(s.persistence[static_cast<std::size_t>(k) * V + v] / count);
      const double c = std::sqrt(s.climatology[static_cast<std::size_t>(k) * V + v] / count);
      beaten += m < p ? 1 : 0;
      std::printf("%5d  %-10s %14.6g %16.6g %16.6g %10.3f %7s\n", k + 1, s.variables[v].c_str(), m, p, c,
                  p > 0 ? m / p : 0.0, s.step_s > 0 ? lead_hours(k).c_str() : "-");
      if (out)
        out << k + 1 << "," << s.variables[v] << "," << m << "," << p << "," << c << "," << lead_hours(k) << "\n";
    }
  std::printf("wxeval: the model beats persistence in %d of %d (lead, variable) pairs\n", beaten,
              leads * static_cast<int>(V));
  if (!fields.empty()) {
    const hpct::h5::File f = hpct::h5::File::create(fields);
    const std::vector<std::uint64_t> dims = {static_cast<std::uint64_t>(leads), V, static_cast<std::uint64_t>(s.ny),
                                             static_cast<std::uint64_t>(s.nx)};
    hpct::h5::write(f, "truth", dims, s.truth.data());
    hpct::h5::write(f, "forecast", dims, s.forecast.data());
    std::string names;
    for (const std::string& n : s.variables) names += (names.empty() ? "" : ",") + n;
    hpct::h5::write_attr(f, "/", "variables", names);
    // The points' positions when the model has them (gnn_edge_distances sphere, gnn_mesh icosahedral):
    // scripts/plot-forecast draws a grid of one row of points (a reduced grid) on a map from them.
    const hpct::h5::File w = hpct::h5::File::open_read(weights);
    for (const char* c : {"latitude", "longitude"})
      if (hpct::h5::exists(w, std::string("graph/") + c))
        hpct::h5::write(f, c, {static_cast<std::uint64_t>(s.ny), static_cast<std::uint64_t>(s.nx)},
                        hpct::h5::read_all<double>(w, std::string("graph/") + c).data());
  }
  return 0;
}
}  // namespace

namespace hpct {

int gnn_evaluate_main(int argc, char** argv) {
  hpct::Runtime runtime(argc, argv);
  const hpct::Comm comm;
  try {
    return run(argc, argv, comm);
  } catch (const hpct::Error& e) {
    // Every rank opens the same files and reads the same model: errors are the same everywhere.
    if (comm.rank() == 0) std::fprintf(stderr, "wxeval: %s\n", e.what());
    return static_cast<int>(e.code());
  }
}

}  // namespace hpct
