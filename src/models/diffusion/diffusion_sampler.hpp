// Ensemble generation with a trained denoiser: DDPM ancestral sampling (posterior variance) or
// deterministic DDIM (eta = 0) on a subset of the timesteps. All members of all contexts of a chunk
// run through the network together as one batch of (context, member) rows.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/diffusion/diffusion_net.hpp"
#include "models/diffusion/diffusion_normalisation.hpp"
#include "models/diffusion/diffusion_schedule.hpp"

namespace hpct {

struct SamplerOptions {
  std::string method = "ddpm";  // ddpm | ddim
  int steps = 0;                // ddim: number of timesteps used (0: all T); ddpm always uses all T
  int members = 8;              // ensemble size M
  std::uint64_t seed = 1;
  // The prediction x0_hat = (x_t - sqrt(1 - abar) eps_hat) / sqrt(abar) is clipped to [-clip, clip]
  // (normalised units) before the update, as improved-diffusion's clip_denoised; 0: no clipping.
  // Needed with the cosine schedule: its last abar is ~1e-6, so an unclipped x0_hat amplifies the
  // network's error at the noisiest step a thousandfold.
  double clip = 6.0;
};

class DiffusionSampler {
 public:
  // The net's capacity is the chunk size in (context, member) rows; it must hold >= members rows.
  DiffusionSampler(DiffusionNet<float>& net, const NoiseSchedule& schedule, const DiffusionNormalisation& norm,
                   const SamplerOptions& options);

  // contexts: host [n, n_context] in data units, rows with global indices first_index.. (the noise
  // of a member depends only on (seed, global context index, member, step), not on chunking or
  // ranks). out: host [n, members, n_fine] in data units. progress(done_contexts, n) after each chunk.
  void sample(const float* contexts, std::uint64_t n, std::uint64_t first_index, float* out,
              const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

  // The same with contexts [n, n_context] and out [n * members, n_fine] as views in the kernels'
  // memory (device memory on GPU builds): neither passes through the host (the in-situ library
  // samples into a caller's device array this way). Bitwise the same values as the host overload.
  void sample(const View2<float>& contexts, std::uint64_t n, std::uint64_t first_index, const View2<float>& out);

  // The timesteps visited, from the noisiest down to 0.
  const std::vector<int>& timesteps() const { return visit_; }

  // One chunk of sample(). Public only because nvcc rejects a device lambda inside a private member.
  void run_chunk(int rows);
  // The view overload's chunk input: contexts [first, first + k) each repeated for the members,
  // with their (context, member) ids. Public for the same reason.
  void stage_chunk(const View2<float>& contexts, std::uint64_t first, std::uint64_t k, std::uint64_t first_index);

 private:

  DiffusionNet<float>& net_;
  const NoiseSchedule& schedule_;
  const DiffusionNormalisation& norm_;
  SamplerOptions opt_;
  std::vector<int> visit_;
  int contexts_per_chunk_;
  View2<float> c_raw_, c_, x_;
  View1<float> t_;
  View1<std::uint64_t> pair_ids_;
  typename View2<float>::host_mirror_type h_c_raw_, h_x_;
  typename View1<std::uint64_t>::host_mirror_type h_pair_ids_;
};

}  // namespace hpct
