// sample: ensembles from a trained diffusion downscaler for the contexts of an HDF5 file, data-parallel
// over MPI ranks (each rank samples a contiguous block of contexts and writes it into the one output
// file with parallel HDF5), with the evaluation against the `fine` dataset when the file has one.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/diffusion_sampler.hpp"
#include "models/diffusion/diffusion_scores.hpp"
#include "nn/weights_io.hpp"

namespace {
const char* kUsage =
    "usage: sample WEIGHTS.h5 DATA.h5 OUT.h5 [options]\n"
    "  --members M      ensemble size (default 8)\n"
    "  --method NAME    ddpm (ancestral, all T steps; default) or ddim (eta = 0)\n"
    "  --steps S        ddim: timesteps used (default: all T)\n"
    "  --seed K         sampling noise seed (default 1)\n"
    "  --rows N         only the first N contexts (default: all)\n"
    "  --clip X         clip the x0 prediction to [-X, X] normalised units (default 6; 0: off)\n"
    "  --chunk R        (context, member) rows per network batch (default 2048)\n"
    "  --context NAME / --fine NAME   dataset names (default context / fine)\n"
    "Writes `ensembles` [N, M, n_fine]. When DATA.h5 has the fine dataset, prints ensemble-mean\n"
    "RMSE, CRPS, spread/skill and the coarse-copy baseline (context column 0 copied to every cell).\n";

struct Options {
  std::string weights, data, out, context = "context", fine = "fine";
  hpct::SamplerOptions sampler;
  long long rows = -1, chunk = 2048;
};

Options parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--kokkos-", 0) == 0) continue;
    if (a.rfind("--", 0) != 0) {
      pos.push_back(a);
      continue;
    }
    if (i + 1 >= argc) throw hpct::Error(a + " needs a value\n" + kUsage, hpct::ExitCode::bad_input);
    const std::string v = argv[++i];
    auto number = [&]() {
      char* end = nullptr;
      const long long x = std::strtoll(v.c_str(), &end, 10);
      if (!end || *end != '\0') throw hpct::Error(a + " expects an integer, got '" + v + "'", hpct::ExitCode::bad_input);
      return x;
    };
    if (a == "--members") o.sampler.members = static_cast<int>(number());
    else if (a == "--method") o.sampler.method = v;
    else if (a == "--steps") o.sampler.steps = static_cast<int>(number());
    else if (a == "--seed") o.sampler.seed = static_cast<std::uint64_t>(number());
    else if (a == "--rows") o.rows = number();
    else if (a == "--clip") o.sampler.clip = std::atof(v.c_str());
    else if (a == "--chunk") o.chunk = number();
    else if (a == "--context") o.context = v;
    else if (a == "--fine") o.fine = v;
    else throw hpct::Error("unknown option " + a + "\n" + kUsage, hpct::ExitCode::bad_input);
  }
  if (pos.size() != 3) throw hpct::Error(std::string("expected WEIGHTS DATA OUT\n") + kUsage, hpct::ExitCode::bad_input);
  o.weights = pos[0], o.data = pos[1], o.out = pos[2];
  if (o.sampler.members < 1 || o.chunk < o.sampler.members)
    throw hpct::Error("--members must be >= 1 and --chunk >= --members", hpct::ExitCode::bad_input);
  return o;
}

// The ensembles [total, M, nf] and this rank's contexts [first, first + count) of them.
struct OutputBlock {
  std::uint64_t total, first, count, members, n_fine;
};
using WriteAttributes = std::function<void(const hpct::h5::File&)>;

// Every rank writes its hyperslab of the one output file in one collective MPI-IO transfer: no rank
// holds more than its own block. Written under a temporary name that rank 0 renames when every
// rank succeeded, so a failed run leaves no half-written file.
void write_collectively(const hpct::Comm& comm, const std::string& out, const OutputBlock& b,
                        const std::vector<float>& ens, const WriteAttributes& attributes) {
  using namespace hpct;
  std::string tmp = temporary_path(out, static_cast<long>(getpid()));
  comm.broadcast(tmp, 0);  // rank 0's name
  std::string err;
  try {
    const h5::File f = h5::File::create_collective(tmp, comm.raw());
    h5::write_rows_collective(f, "ensembles", {b.total, b.members, b.n_fine}, b.first, b.count, ens.data());
    attributes(f);
  } catch (const std::exception& e) {
    err = e.what();
  }
  const bool failed = comm.max(err.empty() ? 0 : 1) != 0;
  if (failed && comm.rank() == 0) std::remove(tmp.c_str());
  comm.agree(err, ExitCode::failure);
  if (comm.rank() == 0) {
    try {
      commit_file(tmp, out);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::failure);
}

// Without parallel HDF5: rank 0 gathers every ensemble (MPI counts limit it to 2^31 floats) and writes.
void gather_and_write(const hpct::Comm& comm, const std::string& out, const OutputBlock& b,
                      const std::vector<float>& ens, const WriteAttributes& attributes) {
  using namespace hpct;
  // Counts in units of one context's ensemble.
  const std::uint64_t per = b.members * b.n_fine, p = static_cast<std::uint64_t>(comm.size());
  std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  for (std::uint64_t q = 0; q < p; ++q) {
    const std::uint64_t f0 = b.total * q / p, f1 = b.total * (q + 1) / p;
    if ((f1 - f0) * per > static_cast<std::uint64_t>(INT32_MAX) || f0 * per > static_cast<std::uint64_t>(INT32_MAX))
      comm.agree("sample: output too large for one gather; use --rows to split", ExitCode::bad_input);
    counts[q] = static_cast<int>((f1 - f0) * per);
    displs[q] = static_cast<int>(f0 * per);
  }
  std::vector<float> all(comm.rank() == 0 ? b.total * per : 0);
  MPI_Gatherv(ens.data(), static_cast<int>(b.count * per), MPI_FLOAT, all.data(), counts.data(), displs.data(),
              MPI_FLOAT, 0, comm.raw());
  std::string err;
  if (comm.rank() == 0) {
    try {
      write_atomically(out, [&](const std::string& tmp) {
        const h5::File f = h5::File::create(tmp);
        h5::write(f, "ensembles", {b.total, b.members, b.n_fine}, all.data());
        attributes(f);
        f.flush();
      });
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  comm.agree(err, ExitCode::failure);
}

int run(int argc, char** argv, const hpct::Comm& comm) {
  using namespace hpct;
  Options o;
  comm.run_agreed([&] { o = parse(argc, argv); });
  // Model description and weights.
  DiffusionConfig cfg;
  std::unique_ptr<DiffusionNet<float>> net;
  std::unique_ptr<DiffusionNormalisation> norm;
  comm.run_agreed([&] {
    const h5::File f = h5::File::open_read(o.weights);
    if (!h5::has_attr(f, "/", "model") || h5::read_attr_string(f, "/", "model") != "diffusion")
      throw Error(o.weights + ": not a diffusion model's weights (attribute model != diffusion)", ExitCode::bad_input);
    cfg = DiffusionConfig::parse(h5::read_attr_string(f, "/", "config"));
    net = std::make_unique<DiffusionNet<float>>(cfg, static_cast<int>(o.chunk));
    nn::read_weights(o.weights, net->store());
    norm = std::make_unique<DiffusionNormalisation>(cfg.n_context, cfg.n_fine);
    norm->load(o.weights);
  });
  const NoiseSchedule schedule = NoiseSchedule::make(cfg.schedule, cfg.steps);
  std::unique_ptr<DiffusionSampler> sampler;
  comm.run_agreed([&] { sampler = std::make_unique<DiffusionSampler>(*net, schedule, *norm, o.sampler); });

  // This rank's block of contexts.
  std::uint64_t total = 0;
  bool has_fine = false;
  comm.run_agreed([&] {
    const h5::File f = h5::File::open_read(o.data);
    const h5::DatasetInfo di = h5::info(f, o.context);
    if (di.dims.size() != 2 || di.dims[1] != static_cast<std::uint64_t>(cfg.n_context))
      throw Error(o.data + ": dataset '" + o.context + "' must be [N, " + std::to_string(cfg.n_context) + "]",
                  ExitCode::bad_input);
    total = di.dims[0];
    if (o.rows >= 0 && static_cast<std::uint64_t>(o.rows) < total) total = static_cast<std::uint64_t>(o.rows);
    has_fine = h5::exists(f, o.fine);
  });
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = total * r / p, count = total * (r + 1) / p - first;
  const std::uint64_t nc = static_cast<std::uint64_t>(cfg.n_context), nf = static_cast<std::uint64_t>(cfg.n_fine);
  const auto M = static_cast<std::uint64_t>(o.sampler.members);
  std::vector<float> ctx(count * nc), truth(has_fine ? count * nf : 0), ens(count * M * nf);
  comm.run_agreed([&] {
    const h5::File f = h5::File::open_read(o.data);
    if (count > 0) h5::read_row_range(f, o.context, first, count, nc, ctx.data());
    if (has_fine && count > 0) h5::read_row_range(f, o.fine, first, count, nf, truth.data());
  });
  Log::info(strf("sample: %llu contexts x %d members, %s with %zu network evaluations per member, %d rank(s)",
                 (unsigned long long)total, o.sampler.members, o.sampler.method.c_str(), sampler->timesteps().size(),
                 comm.size()));
  Stopwatch clock;
  std::uint64_t last_pct = 0;
  sampler->sample(ctx.data(), count, first, ens.data(), [&](std::uint64_t done, std::uint64_t n) {
    const std::uint64_t pct = n ? done * 100 / n : 100;
    if (pct >= last_pct + 10 || done == n) {
      last_pct = pct;
      Log::info(strf("  rank 0: %llu/%llu contexts (%llu%%), %.1f s", (unsigned long long)done, (unsigned long long)n,
                     (unsigned long long)pct, clock.seconds()));
    }
  });
  const double secs = comm.max(clock.seconds());
  Log::info(strf("sample: %llu ensembles in %.2f s (%.0f member samples/s)", (unsigned long long)total, secs,
                 static_cast<double>(total * M) / secs));

  const OutputBlock block{total, first, count, M, nf};
  const auto attributes = [&](const h5::File& f) {
    h5::write_attr(f, "/", "method", o.sampler.method);
    h5::write_attr(f, "/", "members", static_cast<long long>(M));
    h5::write_attr(f, "/", "network_evaluations", static_cast<long long>(sampler->timesteps().size()));
    h5::write_attr(f, "/", "seed", static_cast<long long>(o.sampler.seed));
    h5::write_attr(f, "/", "weights", o.weights);
    h5::write_attr(f, "/", "data", o.data);
  };
  if (h5::parallel_available()) write_collectively(comm, o.out, block, ens, attributes);
  else gather_and_write(comm, o.out, block, ens, attributes);
  Log::info("sample: wrote " + o.out + " (ensembles [" + std::to_string(total) + ", " + std::to_string(M) + ", " +
            std::to_string(nf) + "])");

  if (has_fine) {
    EnsembleScores s;
    std::vector<float> coarse(count);
    for (std::uint64_t i = 0; i < count; ++i) coarse[i] = ctx[i * nc];
    s.add(truth.data(), ens.data(), coarse.data(), count, o.sampler.members, cfg.n_fine);
    double sums[6] = {s.values, s.sse_mean, s.crps, s.variance, s.sse_baseline, s.abs_baseline};
    comm.allreduce_sum(sums, 6);
    s.values = sums[0], s.sse_mean = sums[1], s.crps = sums[2], s.variance = sums[3];
    s.sse_baseline = sums[4], s.abs_baseline = sums[5];
    Log::info("evaluation on " + o.data + " (" + std::to_string(total) + " contexts):\n" + s.report(o.sampler.members));
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  hpct::Runtime runtime(argc, argv);
  const hpct::Comm comm;
  try {
    return run(argc, argv, comm);
  } catch (const hpct::Error& e) {
    if (e.collective() || comm.size() == 1) {
      if (comm.rank() == 0) std::fprintf(stderr, "sample: %s\n", e.what());
      return static_cast<int>(e.code());
    }
    hpct::Log::rank_error(std::string("sample: ") + e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));
  } catch (const std::exception& e) {
    hpct::Log::rank_error(std::string("sample: internal error: ") + e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 1;
}
