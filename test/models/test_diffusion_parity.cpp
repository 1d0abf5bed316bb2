// Parity with PyTorch: hpctrain writes the denoiser's weights and a fixed batch of (x_t, c, t, eps)
// with its eps_hat, loss and parameter gradients (float64) to HDF5; test/python/diffusion_parity.py
// recomputes them with torch and compares (1e-5 relative). Skipped when torch is not importable.
#include <gtest/gtest.h>
#include <mpi.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/diffusion_net.hpp"
#include "nn/loss.hpp"
#include "nn/weights_io.hpp"
#include "test_paths.hpp"

namespace hpct {
namespace {

template <class V>
std::vector<double> flat(const V& v) {
  auto h = to_host(v);
  return std::vector<double>(h.data(), h.data() + h.span());
}

TEST(DiffusionParity, MatchesPyTorchForwardLossAndGradients) {
  const char* python = HPCTRAIN_REFERENCE_PYTHON;  // the venv of scripts/setup --reference, else Debian's
  if (access(python, X_OK) != 0) GTEST_SKIP() << python << " not found: PyTorch parity not checked";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string dir = hpct::test::binary_dir() + "/test";
  const std::string weights = dir + "/diffusion_parity_weights_r" + std::to_string(rank) + ".h5";
  const std::string batch = dir + "/diffusion_parity_batch_r" + std::to_string(rank) + ".h5";

  DiffusionConfig c;  // the production sizes: E=32, H=256, 7 -> 256, depth 2
  const int n = 6;
  DiffusionNet<double> net(c, n);
  net.store().initialize(5);
  // Round the parameters to float32 exactly as the weights file stores them.
  nn::write_weights(weights, net.store(), {{"model", "diffusion"}, {"config", c.to_string()}});
  nn::read_weights(weights, net.store());

  View2<double> x("x", n, c.n_fine), ctx("c", n, c.n_context), eps("eps", n, c.n_fine);
  View1<double> t("t", n);
  auto hx = Kokkos::create_mirror_view(x), hc = Kokkos::create_mirror_view(ctx),
       he = Kokkos::create_mirror_view(eps);
  auto ht = Kokkos::create_mirror_view(t);
  for (int i = 0; i < n; ++i) {
    ht(i) = static_cast<double>((17 * i + 2) % c.steps);
    for (int j = 0; j < c.n_fine; ++j) {
      hx(i, j) = rng::normal(rng::hash(1, i, j));
      he(i, j) = rng::normal(rng::hash(2, i, j));
    }
    for (int j = 0; j < c.n_context; ++j) hc(i, j) = rng::normal(rng::hash(3, i, j));
  }
  Kokkos::deep_copy(x, hx), Kokkos::deep_copy(ctx, hc), Kokkos::deep_copy(eps, he), Kokkos::deep_copy(t, ht);

  net.store().zero_grads();
  const auto& out = net.forward(x, ctx, t, n);
  const double loss = nn::mse_forward_backward(out, eps, net.output_grad(), n, n) / (n * c.n_fine);
  const std::vector<double> eps_hat = flat(out);
  net.backward(x, ctx, n);
  const std::vector<double> grads = flat(net.store().grads());
  {
    const h5::File f = h5::File::create(batch);
    const auto N = static_cast<std::uint64_t>(n);
    h5::write(f, "x_t", {N, 256}, flat(x).data());
    h5::write(f, "c", {N, 7}, flat(ctx).data());
    h5::write(f, "t", {N}, flat(t).data());
    h5::write(f, "eps", {N, 256}, flat(eps).data());
    h5::write(f, "eps_hat", {N, 256}, eps_hat.data());
    h5::write(f, "loss", {1}, &loss);
    for (const auto& tensor : net.store().tensors())
      h5::write(f, "grad/" + tensor.name, tensor.shape, grads.data() + tensor.offset);
    f.flush();
  }
  const std::string cmd = std::string(python) + " " + hpct::test::source_dir() +
                          "/test/python/diffusion_parity.py " + weights + " " + batch + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << cmd;
  const int code = WEXITSTATUS(status);
  if (code == 77) GTEST_SKIP() << "PyTorch not importable by " << python << ": parity not checked";
  EXPECT_EQ(code, 0) << "PyTorch parity failed (see the table above): " << cmd;
}

}  // namespace
}  // namespace hpct
