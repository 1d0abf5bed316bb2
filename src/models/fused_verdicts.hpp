// The verdicts of fused validation for models whose rows are evaluated alone (resnet, cape): per
// (batch rows, chunk rows) pair, whether one forward over the batch gives each chunk the bits of
// the chunk run alone, checked bitwise on the pair's first batch and kept (Note [fused verdicts]).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace hpct {

// Note [fused verdicts]: Note [fused validation] (train/evaluator.cpp) lets a model evaluate a
// micro-batch of several chunks in one forward when each chunk's outputs then have the bits of that
// chunk alone. For the convolutional families that is up to the kernels each batch size runs (Note
// [fused conv validation], models/resnet/resnet_model.cpp), whose summation orders depend on the
// shapes and not on the values, so the check of a pair's first batch holds for every later batch of
// that pair. One class keeps the verdicts and runs the check, so both families decide alike.
class FusedVerdicts {
 public:
  // The device pointer to the outputs of rows [first, first + count) run as one batch: count x
  // `unit` contiguous floats, valid until the next call.
  using Forward = std::function<const float*(int first, int count)>;
  // The words of the log line: "<what> validation: a batch of <n> <rows> gives the <outputs> of its
  // chunks of <m> alone (Note [<note>])".
  struct Words {
    std::string what, rows, outputs, note;
  };

  explicit FusedVerdicts(Words words) : words_(std::move(words)) {}

  // Whether a batch of n rows in chunks of `rows` runs fused: always where it is one chunk (n <=
  // rows), else the pair's verdict, checked through `forward` (unit floats per row) the first time.
  bool fused(int n, int rows, std::size_t unit, const Forward& forward);
  // Whether batches of n rows in chunks of `rows` have been found to run fused (tests).
  bool fuses(int n, int rows) const {
    const auto it = verdicts_.find({n, rows});
    return it != verdicts_.end() && it->second;
  }

 private:
  // The check: the n rows' outputs in one batch against each chunk's alone, bitwise; logged.
  bool same_bits(int n, int rows, std::size_t unit, const Forward& forward) const;

  Words words_;
  std::map<std::pair<int, int>, bool> verdicts_;  // (batch rows, chunk rows) -> same_bits
};

}  // namespace hpct
