// The Model interface's shared pieces: prediction batches, host-row prediction, the default predict,
// output selection.
#include "models/model.hpp"

#include <algorithm>
#include <climits>

#include "core/error.hpp"

namespace hpct {

void Model::accumulate_chunk_gradients(const Batch& b, double normaliser, int rows, double* losses) {
  (void)b, (void)normaliser, (void)rows, (void)losses;
  throw Error("internal: " + family() + ": accumulate_chunk_gradients on a model whose rows are not independent");
}

void Model::evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) {
  (void)b, (void)o, (void)rows, (void)sums;
  throw Error("internal: " + family() + ": evaluate_chunks on a model whose rows are not evaluated alone");
}

Batch prediction_batch(const Tensor<float>& inputs, int n, const View1<std::uint64_t>& ids) {
  Batch b;
  b.set(Batch::kInputs, inputs);
  b.ids = ids;
  b.n = n;
  return b;
}

std::vector<HostOutput> predict_fields(Model& m, const std::vector<HostInput>& inputs, std::uint64_t count,
                                       std::uint64_t first, const PredictOptions& o) {
  if (count > static_cast<std::uint64_t>(INT_MAX))
    throw Error("predict: more than 2^31 rows in one call", ExitCode::bad_input);
  Batch b;
  std::vector<View1<float>> fields;  // the batch's memory, alive until predict returns
  for (const HostInput& in : inputs) {
    const auto width = static_cast<std::uint64_t>(in.shape->row_size());
    fields.emplace_back(in.shape->name, count * width);
    auto h = Kokkos::create_mirror_view(fields.back());
    if (count > 0) std::copy(in.values, in.values + count * width, h.data());
    Kokkos::deep_copy(fields.back(), h);
    // [count, row...] where the tensor's rank allows, else [count, width].
    const std::vector<std::int64_t>& row = in.shape->row_shape;
    Shape shape{static_cast<std::int64_t>(count), static_cast<std::int64_t>(width)};
    if (!row.empty() && row.size() < shape.dim.size()) {
      shape.rank = static_cast<int>(row.size()) + 1;
      for (std::size_t d = 0; d < row.size(); ++d) shape.dim[d + 1] = row[d];
    }
    b.set(in.shape->name.c_str(), Tensor<float>(fields.back().data(), shape));
  }
  b.ids = View1<std::uint64_t>("predict_ids", count);
  {
    auto h = Kokkos::create_mirror_view(b.ids);
    for (std::uint64_t i = 0; i < count; ++i) h(i) = first + i;
    Kokkos::deep_copy(b.ids, h);
  }
  b.n = static_cast<int>(count);
  const Predictions pred = m.predict(b, o);
  std::vector<HostOutput> out;
  for (const PredictOutput& p : pred) {
    auto h = Kokkos::create_mirror_view(p.values);
    Kokkos::deep_copy(h, p.values);
    out.push_back({p.name, p.row_size(), std::vector<float>(h.data(), h.data() + h.extent(0))});
  }
  return out;
}

std::vector<HostOutput> predict_rows(Model& m, const float* x, std::uint64_t count, std::uint64_t width,
                                     std::uint64_t first, const PredictOptions& o) {
  const NamedShape inputs{Batch::kInputs, {static_cast<std::int64_t>(width)}};
  return predict_fields(m, {{&inputs, x}}, count, first, o);
}

Predictions Model::predict(const Batch& b, const PredictOptions& o) {
  (void)b, (void)o;
  throw Error("the " + family() + " model has no predict", ExitCode::bad_input);
}

bool output_wanted(const PredictOptions& o, const std::string& name) {
  return o.outputs.empty() || std::find(o.outputs.begin(), o.outputs.end(), name) != o.outputs.end();
}

}  // namespace hpct
