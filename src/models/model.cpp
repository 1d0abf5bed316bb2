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

Batch prediction_batch(const Tensor<float>& inputs, int n, const View1<std::uint64_t>& ids) {
  Batch b;
  b.set(Batch::kInputs, inputs);
  b.ids = ids;
  b.n = n;
  return b;
}

std::vector<HostOutput> predict_rows(Model& m, const float* x, std::uint64_t count, std::uint64_t width,
                                     std::uint64_t first, const PredictOptions& o) {
  if (count > static_cast<std::uint64_t>(INT_MAX))
    throw Error("predict: more than 2^31 rows in one call", ExitCode::bad_input);
  const View2<float> dx("predict_inputs", count, width);
  const View1<std::uint64_t> ids("predict_ids", count);
  {
    auto hx = Kokkos::create_mirror_view(dx);
    if (count > 0) std::copy(x, x + count * width, hx.data());
    Kokkos::deep_copy(dx, hx);
    auto h = Kokkos::create_mirror_view(ids);
    for (std::uint64_t i = 0; i < count; ++i) h(i) = first + i;
    Kokkos::deep_copy(ids, h);
  }
  const Predictions pred = m.predict(prediction_batch(Tensor<float>(dx), static_cast<int>(count), ids), o);
  std::vector<HostOutput> out;
  for (const PredictOutput& p : pred) {
    auto h = Kokkos::create_mirror_view(p.values);
    Kokkos::deep_copy(h, p.values);
    out.push_back({p.name, p.row_size(), std::vector<float>(h.data(), h.data() + h.extent(0))});
  }
  return out;
}

Predictions Model::predict(const Batch& b, const PredictOptions& o) {
  (void)b, (void)o;
  throw Error("the " + family() + " model has no predict", ExitCode::bad_input);
}

bool output_wanted(const PredictOptions& o, const std::string& name) {
  return o.outputs.empty() || std::find(o.outputs.begin(), o.outputs.end(), name) != o.outputs.end();
}

}  // namespace hpct
