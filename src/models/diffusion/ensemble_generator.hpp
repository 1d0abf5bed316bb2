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
#include "models/model.hpp"

namespace hpct {

// The sampling options (SamplingOptions) live with the Model interface (models/model.hpp).

class EnsembleGenerator {
 public:
  // The chunk size in (context, member) rows is chunk_rows (0: the net's capacity), at most the
  // net's capacity and at least the members.
  EnsembleGenerator(DiffusionNet<float>& net, const NoiseSchedule& schedule, const DiffusionNormalisation& norm,
                    const SamplingOptions& options, int chunk_rows = 0);

  // The timesteps a method visits on a schedule of T steps, from the noisiest down to 0 (ddim:
  // `steps` of them evenly spaced, 0: all); an unknown method is an input error.
  static std::vector<int> visited_timesteps(const std::string& method, int steps, int T);

  // contexts: host [n, n_context] in data units, rows with global indices first_index.. (the noise
  // of a member depends only on (seed, global context index, member, step), not on chunking or
  // ranks). out: host [n, members, n_fine] in data units. progress(done_contexts, n) after each chunk.
  void sample(const float* contexts, std::uint64_t n, std::uint64_t first_index, float* out,
              const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

  // The same with contexts [n, n_context] and out [n * members, n_fine] as views in the kernels'
  // memory (device memory on GPU builds): neither passes through the host (the in-situ library
  // samples into a caller's device array this way). Bitwise the same values as the host overload.
  void sample(const View2<float>& contexts, std::uint64_t n, std::uint64_t first_index, const View2<float>& out);
  // The same with each context's global index in ids [n] (first_index + i above): member m of
  // context i is keyed by ids(i) * members + m.
  void sample(const View2<float>& contexts, const View1<std::uint64_t>& ids, std::uint64_t n,
              const View2<float>& out);

  // The timesteps visited, from the noisiest down to 0.
  const std::vector<int>& timesteps() const { return visit_; }

  // One chunk of sample(). Public only because nvcc rejects a device lambda inside a private member.
  void run_chunk(int rows);
  // The view overloads' chunk input: contexts [first, first + k) each repeated for the members,
  // with their (context, member) ids. Public for the same reason.
  void stage_chunk(const View2<float>& contexts, const View1<std::uint64_t>& ids, std::uint64_t first,
                   std::uint64_t k);

 private:
  DiffusionNet<float>& net_;
  const NoiseSchedule& schedule_;
  const DiffusionNormalisation& norm_;
  SamplingOptions opt_;
  std::vector<int> visit_;
  int contexts_per_chunk_;
  View2<float> c_raw_, c_, x_;
  View2<float> c_net_;  // the network's part of c_ (Note [statics to the linear skip only]), else c_ itself
  View1<float> t_;
  View1<std::uint64_t> pair_ids_;
  typename View2<float>::host_mirror_type h_c_raw_, h_x_;
  typename View1<std::uint64_t>::host_mirror_type h_pair_ids_;
};

}  // namespace hpct
