// Inference for the in-situ library: predictions of an mlp and ensembles of the diffusion
// downscaler (models/diffusion/diffusion_sampler.hpp), on this rank's rows only (no collectives).
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
  // x [n, d_in] -> y [n, output_width], row-major float32 on the host. mlp only.
  void predict(const float* x, std::uint64_t n, float* y);
  // contexts [n, d_in] -> out [n, members, d_out] in data units. diffusion only; `stats_set`:
  // whether `stats` holds the training normalisation (else identity).
  void sample(const float* contexts, std::uint64_t n, int members, std::uint64_t seed, const InsituConfig& cfg,
              const DataStats& stats, bool stats_set, float* out);

 private:
  static constexpr int kChunk = 256;
  Model& trained_;
  std::unique_ptr<Model> mlp_;
  std::unique_ptr<DiffusionNet<float>> net_;
  int net_capacity_ = 0;
};

}  // namespace hpct::insitu
