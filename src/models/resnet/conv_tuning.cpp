// conv_algorithm's fixed choice and auto's tuning passes (see conv_tuning.hpp).
#include "models/resnet/conv_tuning.hpp"

#include "core/log.hpp"

namespace hpct {

void ConvTuning::configure(const std::vector<nn::Conv2d<float>*>& convs, const std::vector<std::string>& names,
                           const std::string& choice, bool deterministic) {
  convs_ = &convs, names_ = &names;
  choice_ = choice, deterministic_ = deterministic;
  const bool autotune = choice == "auto";
  const nn::ConvAlgorithm fixed = autotune ? nn::conv_algorithm_deterministic()
                                           : nn::conv_algorithm_from_name(choice);
  nn::set_conv_search(autotune && !deterministic, deterministic);  // cuDNN: benchmark mode under auto
  for (auto* c : convs) c->set_algorithm(fixed);
  pass_ = autotune && !deterministic ? 0 : -1;
  passes_.clear();
  times_.clear();
  int count = 0;
  const nn::ConvAlgorithm* candidates = nn::conv_algorithms_available(count);
  candidates_ = count;
  for (int i = 0; i < count; ++i) {
    if (candidates[i] != nn::ConvAlgorithm::direct) passes_.push_back({candidates[i], -1});  // warm-up
    passes_.push_back({candidates[i], i});
  }
  if (autotune && deterministic)
    Log::info(
        strf("  conv_algorithm auto with conv_deterministic: %s for every convolution (a fixed rule, no timing)",
             nn::conv_algorithm_name(fixed)));
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
                       (choice_ == "auto" || choice_ == "cudnn");
  Log::info(library ? strf("  convolutions in %s: cuDNN on tensor cores, fp32 accumulation", nn::precision_name(p))
                    : strf("  convolutions in fp32 (precision %s is computed by conv_algorithm cudnn/auto on CUDA "
                           "builds with cuDNN only)",
                           nn::precision_name(p)));
}

void ConvTuning::before() {
  if (!tuning()) return;
  const Pass& p = passes_[static_cast<std::size_t>(pass_)];
  for (auto* c : *convs_) c->set_algorithm(p.algorithm), c->set_timing(p.candidate >= 0);
}

void ConvTuning::after(const Allreduce& reducer) {
  if (!tuning()) return;
  const auto& convs = *convs_;
  const Pass& p = passes_[static_cast<std::size_t>(pass_)];
  if (p.candidate >= 0) {
    if (times_.empty()) times_.assign(static_cast<std::size_t>(candidates_) * convs.size(), 0.0);
    const std::size_t base = static_cast<std::size_t>(p.candidate) * convs.size();
    for (std::size_t i = 0; i < convs.size(); ++i) times_[base + i] = convs[i]->elapsed();
  }
  if (++pass_ < static_cast<int>(passes_.size())) return;
  // Every rank takes the same choice from the times summed over the ranks.
  if (reducer) reducer(times_.data(), static_cast<int>(times_.size()));
  int count = 0;
  const nn::ConvAlgorithm* candidates = nn::conv_algorithms_available(count);
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
      times += strf("  %s %8.3f ms", nn::conv_algorithm_name(candidates[a]), 1e3 * t);
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

}  // namespace hpct
