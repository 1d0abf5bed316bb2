// A micro-batch: named tensors (rows [0, n) on the device) plus the global sample ids and the epoch
// that per-sample randomness is keyed by (never the rank). Tabular data gives "inputs" and
// "targets"; images, graphs and sequences add their own names without touching the trainer.
// Fixed capacity and C-string names: building and reading a Batch allocates nothing (the step).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace hpct {

struct Batch {
  static constexpr int kMaxFields = 8;
  struct Field {
    const char* name = nullptr;  // a string literal (static storage)
    Tensor<float> tensor;
  };
  static constexpr const char* kInputs = "inputs";
  static constexpr const char* kTargets = "targets";

  std::array<Field, kMaxFields> fields{};
  int field_count = 0;
  View1<std::uint64_t> ids;  // global sample index of each row
  std::uint64_t epoch = 0;
  int n = 0;                 // rows in this micro-batch

  // Sets (or replaces) the tensor called `name`.
  void set(const char* name, const Tensor<float>& t) {
    for (int i = 0; i < field_count; ++i)
      if (std::strcmp(fields[static_cast<std::size_t>(i)].name, name) == 0) {
        fields[static_cast<std::size_t>(i)].tensor = t;
        return;
      }
    if (field_count == kMaxFields) throw Error(std::string("internal: batch field limit reached at '") + name + "'");
    fields[static_cast<std::size_t>(field_count++)] = Field{name, t};
  }
  bool has(const char* name) const {
    for (int i = 0; i < field_count; ++i)
      if (std::strcmp(fields[static_cast<std::size_t>(i)].name, name) == 0) return true;
    return false;
  }
  const Tensor<float>& get(const char* name) const {
    for (int i = 0; i < field_count; ++i)
      if (std::strcmp(fields[static_cast<std::size_t>(i)].name, name) == 0) return fields[static_cast<std::size_t>(i)].tensor;
    throw Error(std::string("the batch has no tensor '") + name + "' (the model needs it)", ExitCode::bad_input);
  }
  const Tensor<float>& inputs() const { return get(kInputs); }
  const Tensor<float>& targets() const { return get(kTargets); }
};

}  // namespace hpct
