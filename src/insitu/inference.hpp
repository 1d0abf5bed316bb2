// Inference for the in-situ library: predictions of an mlp and ensembles of the diffusion
// downscaler (models/diffusion/diffusion_sampler.hpp), on this rank's rows only (no collectives), from and to views in the kernels' memory (device memory
// on GPU builds), so a caller's device arrays never pass through the host (device_arrays.hpp).
// The trained model's capacity is one training micro-batch, so inference runs on its own network
// of the same configuration, sized for inference chunks, with the trained parameters copied in
// before every call (a device copy of the flat buffer: the seed's 256K parameters take microseconds).
#pragma once

#include <cstdint>
#include <memory>

#include "insitu/config.hpp"
#include "models/diffusion/diffusion_net.hpp"
#include "models/model.hpp"

namespace hpct::insitu {

class Inference {
 public:
  explicit Inference(Model& trained) : trained_(trained) {}
  // Output width of predict (mlp: its last layer).
  int output_width() const;
  // x [n, d_in] -> y [n, output_width], row-major float32 views in the kernels' memory. mlp only.
  void predict(const View2<float>& x, std::uint64_t n, const View2<float>& y);
  // contexts [n, d_in] -> out [n * members, d_out] in data units, views in the kernels' memory.
  // diffusion only; `stats_set`: whether `stats` holds the training normalisation (else identity).
  void sample(const View2<float>& contexts, std::uint64_t n, int members, std::uint64_t seed, const InsituConfig& cfg,
              const DataStats& stats, bool stats_set, const View2<float>& out);

 private:
  static constexpr int kChunk = 256;
  Model& trained_;
  std::unique_ptr<Model> mlp_;
  std::unique_ptr<DiffusionNet<float>> net_;
  int net_capacity_ = 0;
};

}  // namespace hpct::insitu
