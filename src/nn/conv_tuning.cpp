// conv_algorithm's fixed choice and auto's tuning passes (see conv_tuning.hpp).
#include "nn/conv_tuning.hpp"

#include "core/log.hpp"

namespace hpct {

// Note [direct kernels in auto]: the direct kernels (one work item per element, 1-2 GFLOP/s on a
// core against oneDNN's ~100) cannot win where oneDNN is there, and timing them costs seconds on a
// 64x64 network (the reason inputs/cape_quickstart.in once named onednn); so auto leaves them out
// of builds with oneDNN. Without it (gemm and direct) direct is timed only on convolutions of at
// most kDirectTimingMacs multiply-adds per forward pass of the batch (tens of milliseconds at the
// direct kernels' rate), where a small GEMM's overhead can lose to it; larger ones run gemm in the
// direct pass and are not candidates for direct.
constexpr double kDirectTimingMacs = 4e6;
constexpr double kNotTimed = 1e30;  // seconds: never the fastest

void ConvTuning::configure(const std::vector<nn::Conv2d<float>*>& convs, const std::vector<std::string>& names,
                           const std::string& choice, bool deterministic) {
  convs_ = &convs, names_ = &names;
  choice_ = choice, deterministic_ = deterministic;
  const bool autotune = choice == "auto";
  const nn::ConvAlgorithm fixed = autotune              ? nn::conv_algorithm_deterministic()
                                  : choice == "library" ? nn::conv_algorithm_library()
                                                        : nn::conv_algorithm_from_name(choice);
  nn::set_conv_search(autotune && !deterministic, deterministic);  // cuDNN: benchmark mode under auto
  for (auto* c : convs) c->set_algorithm(fixed);
  pass_ = autotune && !deterministic ? 0 : -1;
  passes_.clear();
  times_.clear();
  int count = 0;
  const nn::ConvAlgorithm* available = nn::conv_algorithms_available(count);
  const bool onednn = nn::conv_algorithm_available(nn::ConvAlgorithm::onednn);
  candidates_.clear();
  for (int i = 0; i < count; ++i)
    if (available[i] != nn::ConvAlgorithm::direct || !onednn) candidates_.push_back(available[i]);
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    if (candidates_[i] != nn::ConvAlgorithm::direct) passes_.push_back({candidates_[i], -1});  // warm-up
    // A direct pass only where some convolution is small enough to time (Note [direct kernels in auto]).
    bool any = false;
    for (std::size_t c = 0; c < convs.size(); ++c) any = any || times(candidates_[i], c);
    if (any) passes_.push_back({candidates_[i], static_cast<int>(i)});
  }
  if (choice == "library")
    Log::info(strf("  conv_algorithm library: %s for every convolution", nn::conv_algorithm_name(fixed)));
  if (autotune && deterministic)
    Log::info(
        strf("  conv_algorithm auto with conv_deterministic: %s for every convolution (a fixed rule, no timing)",
             nn::conv_algorithm_name(fixed)));
}

void ConvTuning::untimed_auto() {
  if (choice_ != "auto" || deterministic_ || !convs_) return;
  for (auto* c : *convs_) c->set_algorithm(nn::conv_algorithm_library());
  pass_ = -1;
}

bool ConvTuning::times(nn::ConvAlgorithm a, std::size_t i) const {
  if (a != nn::ConvAlgorithm::direct) return true;
  const nn::Conv2d<float>& c = *(*convs_)[i];
  return c.geometry().macs_per_sample() * static_cast<double>(c.output().shape().dim[0]) <= kDirectTimingMacs;
}

std::vector<nn::ConvAlgorithm> ConvTuning::algorithms() const {
  std::vector<nn::ConvAlgorithm> a;
  if (convs_)
    for (const auto* c : *convs_) a.push_back(c->algorithm());
  return a;
}

void ConvTuning::set_precision(nn::Precision p) {
  if (!convs_) return;
  for (auto* c : *convs_) c->set_precision(p);
  if (p == nn::Precision::fp32) return;
  const bool library = nn::conv_algorithm_available(nn::ConvAlgorithm::cudnn) &&
                       (choice_ == "auto" || choice_ == "cudnn" || choice_ == "library");
  Log::info(library ? strf("  convolutions in %s: cuDNN on tensor cores, fp32 accumulation", nn::precision_name(p))
                    : strf("  convolutions in fp32 (precision %s is computed by conv_algorithm cudnn/auto on CUDA "
                           "builds with cuDNN only)",
                           nn::precision_name(p)));
}

void ConvTuning::before() {
  if (!tuning()) return;
  const Pass& p = passes_[static_cast<std::size_t>(pass_)];
  for (std::size_t i = 0; i < convs_->size(); ++i) {
    const bool timed = times(p.algorithm, i);  // else gemm, untimed (Note [direct kernels in auto])
    (*convs_)[i]->set_algorithm(timed ? p.algorithm : nn::ConvAlgorithm::gemm);
    (*convs_)[i]->set_timing(p.candidate >= 0 && timed);
  }
}

void ConvTuning::after(const Allreduce& reducer) {
  if (!tuning()) return;
  const auto& convs = *convs_;
  const Pass& p = passes_[static_cast<std::size_t>(pass_)];
  if (p.candidate >= 0) {
    if (times_.empty()) times_.assign(candidates_.size() * convs.size(), kNotTimed);
    const std::size_t base = static_cast<std::size_t>(p.candidate) * convs.size();
    for (std::size_t i = 0; i < convs.size(); ++i)
      if (times(p.algorithm, i)) times_[base + i] = convs[i]->elapsed();
  }
  if (++pass_ < static_cast<int>(passes_.size())) return;
  // Every rank takes the same choice from the times summed over the ranks.
  if (times_.empty()) times_.assign(candidates_.size() * convs.size(), kNotTimed);
  if (reducer) reducer(times_.data(), static_cast<int>(times_.size()));
  const int count = static_cast<int>(candidates_.size());
  const nn::ConvAlgorithm* candidates = candidates_.data();
  std::vector<int> chosen(static_cast<std::size_t>(count), 0);
  Log::info(
      strf("  conv_algorithm auto: %zu convolutions timed (forward + backward, one step each, summed over "
           "the ranks):",
           convs.size()));
  for (std::size_t i = 0; i < convs.size(); ++i) {
    int best = 0;
    std::string times;
    for (int a = 0; a < count; ++a) {
      const double t = times_[static_cast<std::size_t>(a) * convs.size() + i];
      if (t < times_[static_cast<std::size_t>(best) * convs.size() + i]) best = a;
      if (t >= kNotTimed) times += strf("  %s %11s", nn::conv_algorithm_name(candidates[a]), "(too slow)");
      else times += strf("  %s %8.3f ms", nn::conv_algorithm_name(candidates[a]), 1e3 * t);
    }
    ++chosen[static_cast<std::size_t>(best)];
    convs[i]->set_timing(false);
    convs[i]->set_algorithm(candidates[best]);
    const std::string name = i < names_->size() ? (*names_)[i] : strf("conv %zu", i);
    Log::info(strf("    %-22s %-44s%s  -> %s", name.c_str(), convs[i]->geometry().to_string().c_str(),
                   times.c_str(), nn::conv_algorithm_name(candidates[best])));
  }
  std::string summary;
  for (int a = 0; a < count; ++a)
    summary += strf("%s%d %s", a ? ", " : "", chosen[static_cast<std::size_t>(a)],
                    nn::conv_algorithm_name(candidates[a]));
  Log::info("  conv_algorithm auto: " + summary);
}

std::string stored_conv_algorithm(const std::string& stored) {
  if (stored == "onednn" && !nn::conv_algorithm_available(nn::ConvAlgorithm::onednn)) return "gemm";
  if (stored == "cudnn" && !nn::conv_algorithm_available(nn::ConvAlgorithm::cudnn)) return "gemm";
  return stored;
}

}  // namespace hpct
