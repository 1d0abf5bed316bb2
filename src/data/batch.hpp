// A micro-batch: named typed tensors (rows [0, n) on the device; ragged fields hold their rows'
// elements plus n + 1 offsets from 0, Note [ragged fields] in field.hpp) and the global sample ids
// and the epoch that per-sample randomness is keyed by (never the rank). Tabular data gives
// "inputs" and "targets"; images, graphs and token scenes add their own names.
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
  using Offsets = Kokkos::View<const std::uint64_t*, MemSpace, Kokkos::MemoryUnmanaged>;
  struct Field {
    const char* name = nullptr;  // a string literal or a name its data set keeps alive
    DType dtype = DType::f32;
    void* data = nullptr;
    Shape shape;                             // [n, row...] or, ragged, [elements, element...]
    const std::uint64_t* offsets = nullptr;  // ragged: n + 1 entries on the device, offsets[0] = 0
  };
  static constexpr const char* kInputs = "inputs";
  static constexpr const char* kTargets = "targets";
  // Row weights [n, 1] (Note [network row weights] in train/row_weights.cpp); absent: rows weigh alike.
  static constexpr const char* kWeights = "weights";

  std::array<Field, kMaxFields> fields{};
  int field_count = 0;
  View1<std::uint64_t> ids;  // global sample index of each row
  std::uint64_t epoch = 0;
  int n = 0;  // rows in this micro-batch

  // Sets (or replaces) the field called `name`.
  void set_field(const Field& f) {
    for (int i = 0; i < field_count; ++i)
      if (std::strcmp(fields[static_cast<std::size_t>(i)].name, f.name) == 0) {
        fields[static_cast<std::size_t>(i)] = f;
        return;
      }
    if (field_count == kMaxFields)
      throw Error(std::string("internal: batch field limit reached at '") + f.name + "'");
    fields[static_cast<std::size_t>(field_count++)] = f;
  }
  template <class T>
  void set(const char* name, const Tensor<T>& t, const std::uint64_t* offsets = nullptr) {
    set_field(Field{name, dtype_of<T>(), t.data(), t.shape(), offsets});
  }
  // float32 (also from a matrix view, which converts to a Tensor<float>)
  void set(const char* name, const Tensor<float>& t) { set<float>(name, t); }
  bool has(const char* name) const { return find(name) != nullptr; }
  const Field& field(const char* name) const {
    const Field* f = find(name);
    if (!f)
      throw Error(std::string("the batch has no field '") + name + "' (the model needs it)", ExitCode::bad_input);
    return *f;
  }
  // The field `name` as a tensor of T (its dtype must be T's).
  template <class T>
  Tensor<T> get_as(const char* name) const {
    const Field& f = field(name);
    if (f.dtype != dtype_of<T>())
      throw Error(std::string("the batch field '") + name + "' holds " + dtype_name(f.dtype) +
                      ", the model reads " + dtype_name(dtype_of<T>()),
                  ExitCode::bad_input);
    return Tensor<T>(static_cast<T*>(f.data), f.shape);
  }
  Tensor<float> get(const char* name) const { return get_as<float>(name); }
  // A ragged field's n + 1 offsets (device memory).
  Offsets offsets(const char* name) const {
    const Field& f = field(name);
    if (!f.offsets) throw Error(std::string("internal: the batch field '") + name + "' is not ragged");
    return Offsets(f.offsets, static_cast<std::size_t>(n) + 1);
  }
  Tensor<float> inputs() const { return get(kInputs); }
  Tensor<float> targets() const { return get(kTargets); }

 private:
  const Field* find(const char* name) const {
    for (int i = 0; i < field_count; ++i)
      if (std::strcmp(fields[static_cast<std::size_t>(i)].name, name) == 0)
        return &fields[static_cast<std::size_t>(i)];
    return nullptr;
  }
};

}  // namespace hpct
