// apps/sample, the diffusion family's `evaluate` tool (ModelFamily::evaluate): ensembles from a trained
// model that generates them (Model::generates_ensembles: the diffusion downscaler) for the contexts of an
// HDF5 file, data-parallel over MPI ranks (each rank samples a contiguous block of contexts and writes it
// into the one output file with parallel HDF5), with the evaluation against the `fine` dataset when the
// file has one. apps/predict serves every family, this one included; sample adds the progress lines and the
// ensemble scores.

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/error_exit.hpp"
#include "comm/run_guard.hpp"
#include "core/cli_number.hpp"
#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/help_option.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"
#include "core/tool_options.hpp"
#include "data/row_output.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/diffusion_scores.hpp"
#include "models/diffusion/grid_patches.hpp"
#include "models/registry.hpp"

namespace {
const char* kDiffusionEvalUsage =
    "usage: sample WEIGHTS.h5 DATA.h5 OUT.h5 [options]\n"
    "  --members M      ensemble size (default 8)\n"
    "  --method NAME    ddpm (ancestral, all T steps; default) or ddim (eta = 0)\n"
    "  --steps S        ddim: timesteps used (default: all T)\n"
    "  --seed K         sampling noise seed (default 1)\n"
    "  --rows N         only the first N contexts (default: all)\n"
    "  --clip X         clip the x0 prediction to [-X, X] normalised units (default 6; 0: off)\n"
    "  --chunk R        (context, member) rows per network batch (default 2048)\n"
    "  --weights ema|raw  the EMA of the weights (default, when the file has one) or the trained ones\n"
    "  --context NAME / --fine NAME   dataset names (default context / fine)\n"
    "  --watchdog-timeout S   end the job when a rank makes no progress for 2 S + 5 s, naming it and its\n"
    "                   place (default 600; 0: off; docs/data-parallel.md)\n"
    "Writes `ensembles` [N, M, n_fine]. When DATA.h5 has the fine dataset, prints ensemble-mean\n"
    "RMSE, CRPS, spread/skill and the coarse-copy baseline (context column 0 copied to every cell).\n"
    "A file of diffgen --anomaly (and its model) holds fine values relative to context column 0: the\n"
    "members and the truth get it added back, so both are absolute values.\n";

struct Options {
  std::string weights, data, out, context = "context", fine = "fine";
  hpct::nn::WeightsChoice weights_choice = hpct::nn::WeightsChoice::preferred;
  std::string weight_set;  // the set loaded: ema or raw
  hpct::SamplingOptions sampler;
  long long rows = -1, chunk = 2048;
};

Options parse(int argc, char** argv) {
  Options o;
  const std::vector<std::string> pos = hpct::read_tool_options(
      argc, argv, "", kDiffusionEvalUsage, [&](const std::string& a, const auto& value) {
        const std::string v = value();
        auto number = [&]() { return hpct::cli_integer(a, v); };
        if (a == "--members") o.sampler.members = static_cast<int>(number());
        else if (a == "--method") o.sampler.method = v;
        else if (a == "--steps") o.sampler.steps = static_cast<int>(number());
        else if (a == "--seed") o.sampler.seed = static_cast<std::uint64_t>(number());
        else if (a == "--rows") o.rows = number();
        else if (a == "--clip") o.sampler.clip = hpct::cli_real(a, v);
        else if (a == "--chunk") o.chunk = number();
        else if (a == "--weights") o.weights_choice = hpct::nn::weights_choice(v, "sample: --weights");
        else if (a == "--context") o.context = v;
        else if (a == "--fine") o.fine = v;
        else throw hpct::Error("unknown option " + a + "\n" + kDiffusionEvalUsage, hpct::ExitCode::bad_input);
      });
  if (pos.size() != 3)
    throw hpct::Error(std::string("expected WEIGHTS DATA OUT\n") + kDiffusionEvalUsage, hpct::ExitCode::bad_input);
  o.weights = pos[0], o.data = pos[1], o.out = pos[2];
  if (o.sampler.members < 1 || o.chunk < o.sampler.members)
    throw hpct::Error("--members must be >= 1 and --chunk >= --members", hpct::ExitCode::bad_input);
  return o;
}

int run(int argc, char** argv, const hpct::Comm& comm) {
  using namespace hpct;
  if (hpct::asks_for_help(argc, argv)) return hpct::print_usage(kDiffusionEvalUsage, comm.rank() == 0);
  double watchdog_timeout = 0;
  Options o;
  comm.run_agreed([&] {
    watchdog_timeout = take_watchdog_timeout(argc, argv);
    o = parse(argc, argv);
  });
  // Note [the tools' guard]: from before the model and the data are opened to the last write.
  RunGuard guard(comm, watchdog_timeout, StopSignals::left_alone);
  Heartbeat& heartbeat = guard.heartbeat();
  heartbeat.beat("loading the model", o.weights);
  // The model (through the registry: its family's stored configuration) and what it samples.
  std::unique_ptr<Model> model;
  PredictOptions po;
  po.chunk = static_cast<int>(std::min<long long>(o.chunk, INT_MAX));
  po.sampling = o.sampler;
  std::vector<std::pair<std::string, long long>> facts;
  std::uint64_t nc = 0, nf = 0;
  comm.run_agreed([&] {
    model = load_model(o.weights, po.chunk, o.weights_choice, &o.weight_set);
    if (!model->generates_ensembles())
      throw Error(o.weights + ": " + model->family() + " models do not generate ensembles; sample needs " +
                      families_generating_ensembles(true) + " model (apps/predict serves every family)",
                  ExitCode::bad_input);
    facts = model->prediction_facts(po);  // also checks the method
    po.outputs = {model->predict_outputs(po).front().name};
    nc = static_cast<std::uint64_t>(model->predict_inputs().front().row_size());
    nf = static_cast<std::uint64_t>(model->predict_outputs(po).front().row_shape.back());
  });

  // This rank's block of contexts.
  std::uint64_t total = 0;
  bool has_fine = false, anomaly = false;
  heartbeat.beat("opening data", o.data);
  comm.run_agreed([&] {
    model->check_data_file(o.data);  // Note [anomaly targets]: made as the training data was
    const h5::File f = h5::File::open_read(o.data);
    anomaly = h5::has_attr(f, "/", kAnomalyAttribute);
    const h5::DatasetInfo di = h5::info(f, o.context);
    if (di.dims.size() != 2 || di.dims[1] != nc)
      throw Error(o.data + ": dataset '" + o.context + "' must be [N, " + std::to_string(nc) + "]",
                  ExitCode::bad_input);
    total = di.dims[0];
    if (o.rows >= 0 && static_cast<std::uint64_t>(o.rows) < total) total = static_cast<std::uint64_t>(o.rows);
    has_fine = h5::exists(f, o.fine);
  });
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = total * r / p, count = total * (r + 1) / p - first;
  const auto M = static_cast<std::uint64_t>(o.sampler.members);
  std::vector<float> ctx(count * nc), truth(has_fine ? count * nf : 0), ens(count * M * nf);
  comm.run_agreed([&] {
    const h5::File f = h5::File::open_read(o.data);
    if (count > 0) h5::read_row_range(f, o.context, first, count, nc, ctx.data());
    if (has_fine && count > 0) h5::read_row_range(f, o.fine, first, count, nf, truth.data());
  });
  if (anomaly && has_fine)  // Note [anomaly targets]: the truth's absolute values, as the model's members are
    for (std::uint64_t i = 0; i < count; ++i)
      for (std::uint64_t j = 0; j < nf; ++j) truth[i * nf + j] += ctx[i * nc];
  std::string described;
  for (const auto& [k, v] : facts) described += strf(", %s %lld", k.c_str(), v);
  Log::info(strf("sample: %llu contexts x %d members, %s%s, %d rank(s)", (unsigned long long)total,
                 o.sampler.members, o.sampler.method.c_str(), described.c_str(), comm.size()));

  // Blocks of whole network batches (chunk / members contexts each), so the values are those of one
  // call over the whole block; a progress line about every 10%.
  const View2<float> ctx_dev("sample_contexts", count, nc);
  const View1<std::uint64_t> ids("sample_context_ids", count);
  {
    auto h = Kokkos::create_mirror_view(ctx_dev);
    std::copy(ctx.begin(), ctx.end(), h.data());
    Kokkos::deep_copy(ctx_dev, h);
    auto hi = Kokkos::create_mirror_view(ids);
    for (std::uint64_t i = 0; i < count; ++i) hi(i) = first + i;  // noise keyed by the global context index
    Kokkos::deep_copy(ids, hi);
  }
  const std::uint64_t per_batch = std::max<std::uint64_t>(static_cast<std::uint64_t>(po.chunk) / M, 1);
  const std::uint64_t block = per_batch *
                              std::max<std::uint64_t>((count + 10 * per_batch - 1) / (10 * per_batch), 1);
  Stopwatch clock;
  comm.run_agreed([&] {
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t k = std::min(block, count - done);
      heartbeat.beat("sampling a block of contexts", o.data);
      const Shape block_shape{static_cast<std::int64_t>(k), static_cast<std::int64_t>(nc)};
      const Batch b = prediction_batch(Tensor<float>(ctx_dev.data() + done * nc, block_shape), static_cast<int>(k),
                                       Kokkos::subview(ids, Kokkos::make_pair(done, done + k)));
      const PredictOutput out = model->predict(b, po).front();
      auto h = Kokkos::create_mirror_view(out.values);
      Kokkos::deep_copy(h, out.values);
      std::copy(h.data(), h.data() + h.extent(0), ens.begin() + static_cast<std::ptrdiff_t>(done * M * nf));
      done += k;
      Log::info(strf("  rank 0: %llu/%llu contexts (%llu%%), %.1f s", (unsigned long long)done,
                     (unsigned long long)count, (unsigned long long)(done * 100 / count), clock.seconds()));
    }
  });
  const double secs = comm.max(clock.seconds());
  Log::info(strf("sample: %llu ensembles in %.2f s (%.0f member samples/s)", (unsigned long long)total, secs,
                 static_cast<double>(total * M) / secs));

  tools::write_row_datasets(comm, o.out, first, count, {{po.outputs.front(), {total, M, nf}, ens.data()}},
                            [&](const h5::File& f) {
                              h5::write_attr(f, "/", "method", o.sampler.method);
                              h5::write_attr(f, "/", "members", static_cast<long long>(M));
                              for (const auto& [k, v] : facts) h5::write_attr(f, "/", k, v);
                              h5::write_attr(f, "/", "seed", static_cast<long long>(o.sampler.seed));
                              h5::write_attr(f, "/", "weights", o.weights);
                              h5::write_attr(f, "/", "weight_set", o.weight_set);
                              h5::write_attr(f, "/", "data", o.data);
                              if (anomaly)
                                h5::write_attr(f, "/", "values",
                                               std::string("absolute: the data's anomalies plus context column 0"));
                            });
  Log::info("sample: wrote " + o.out + " (" + po.outputs.front() + " [" + std::to_string(total) + ", " +
            std::to_string(M) + ", " + std::to_string(nf) + "])");

  if (has_fine) {
    EnsembleScores s;
    std::vector<float> coarse(count);
    for (std::uint64_t i = 0; i < count; ++i) coarse[i] = ctx[i * nc];
    s.add(truth.data(), ens.data(), coarse.data(), count, o.sampler.members, static_cast<int>(nf));
    double sums[6] = {s.values, s.sse_mean, s.crps, s.variance, s.sse_baseline, s.abs_baseline};
    comm.allreduce_sum(sums, 6);
    s.values = sums[0], s.sse_mean = sums[1], s.crps = sums[2], s.variance = sums[3];
    s.sse_baseline = sums[4], s.abs_baseline = sums[5];
    Log::info("evaluation on " + o.data + " (" + std::to_string(total) + " contexts):\n" +
              s.report(o.sampler.members));
  }
  return 0;
}
}  // namespace

namespace hpct {

int diffusion_evaluate_main(int argc, char** argv) {
  hpct::Runtime runtime(argc, argv);
  const hpct::Comm comm;
  return run_ending_on_errors(comm, {"sample: ", "sample: internal error: ", ""},
                              [&] { return run(argc, argv, comm); });
}

}  // namespace hpct
