// The Model interface's shared pieces: prediction batches, the default predict, output selection.
#include "models/model.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hpct {

Batch prediction_batch(const Tensor<float>& inputs, int n, const View1<std::uint64_t>& ids) {
  Batch b;
  b.set(Batch::kInputs, inputs);
  b.ids = ids;
  b.n = n;
  return b;
}

Predictions Model::predict(const Batch& b, const PredictOptions& o) {
  (void)b, (void)o;
  throw Error("the " + family() + " model has no predict", ExitCode::bad_input);
}

bool output_wanted(const PredictOptions& o, const std::string& name) {
  return o.outputs.empty() || std::find(o.outputs.begin(), o.outputs.end(), name) != o.outputs.end();
}

}  // namespace hpct
