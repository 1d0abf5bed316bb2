// The histogram kernel (ScatterView: per-thread copies on OpenMP, atomics on GPUs) and quantization.
#include "gbdt/histogram.hpp"

#include <Kokkos_ScatterView.hpp>
#include <cmath>

#include "gbdt/fixed_point.hpp"

namespace hpct::gbdt {

namespace {
// Round half away from zero; Kokkos 3.4 has no round() among its device math functions.
KOKKOS_INLINE_FUNCTION long long round_ll(double x) {
  return static_cast<long long>(x >= 0 ? kmath::floor(x + 0.5) : -kmath::floor(0.5 - x));
}
}  // namespace

QuantGrad quantize(const View1<double>& g, const View1<double>& h, const View1<int>& in_bag,
                   long long global_rows, const Comm& comm) {
  const int n = static_cast<int>(g.extent(0));
  double mg = 0, mh = 0;
  Kokkos::parallel_reduce(
      "gbdt::grad_max", Kokkos::RangePolicy<ExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i, double& a) { a = kmax(a, kmath::fabs(g(i))); }, Kokkos::Max<double>(mg));
  Kokkos::parallel_reduce(
      "gbdt::hess_max", Kokkos::RangePolicy<ExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i, double& a) { a = kmax(a, kmath::fabs(h(i))); }, Kokkos::Max<double>(mh));
  QuantGrad q;
  // The scale depends on global maxima and the global row count only: same on every rank count.
  q.scale_g = fixed_scale(comm.max(mg), static_cast<double>(global_rows));
  q.scale_h = fixed_scale(comm.max(mh), static_cast<double>(global_rows));
  q.g = View1<long long>("gbdt::qg", static_cast<std::size_t>(n));
  q.h = View1<long long>("gbdt::qh", static_cast<std::size_t>(n));
  q.c = View1<int>("gbdt::qc", static_cast<std::size_t>(n));
  const double sg = q.scale_g, sh = q.scale_h;
  auto qg = q.g;
  auto qh = q.h;
  auto qc = q.c;
  Kokkos::parallel_for(
      "gbdt::quantize", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const bool in = in_bag(i) != 0;
        qg(i) = in ? round_ll(g(i) * sg) : 0;
        qh(i) = in ? round_ll(h(i) * sh) : 0;
        qc(i) = in ? 1 : 0;
      });
  return q;
}

Hist subtract(const Hist& parent, const Hist& child) {
  Hist out(parent.size());
  for (std::size_t i = 0; i < parent.size(); ++i) out[i] = parent[i] - child[i];
  return out;
}

void accumulate_histograms(const View2<std::uint8_t>& bins, const View1<int>& offset, const QuantGrad& q,
                           const View1<int>& row_node, const View1<int>& slot_of_node,
                           const View2<long long>& hist) {
  using Scatter = Kokkos::Experimental::ScatterView<long long**, Kokkos::LayoutRight, ExecSpace>;
  Scatter scatter(hist);
  const int n = static_cast<int>(bins.extent(0));
  const int F = static_cast<int>(bins.extent(1));
  auto qg = q.g;
  auto qh = q.h;
  auto qc = q.c;
  Kokkos::parallel_for(
      "gbdt::histogram", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int r) {
        if (qc(r) == 0) return;  // out of this tree's bag
        const int node = row_node(r);
        if (node < 0) return;
        const int slot = slot_of_node(node);
        if (slot < 0) return;
        auto acc = scatter.access();
        const long long g = qg(r), h = qh(r);
        for (int f = 0; f < F; ++f) {
          const int b = 3 * (offset(f) + static_cast<int>(bins(r, f)));
          acc(slot, b) += g;
          acc(slot, b + 1) += h;
          acc(slot, b + 2) += 1;
        }
      });
  View2<long long> target = hist;  // contribute() takes a non-const view handle
  Kokkos::Experimental::contribute(target, scatter);
}

HistogramBuilder::HistogramBuilder(View2<std::uint8_t> bins, const std::vector<int>& offset)
    : bins_(bins), total_bins_(offset.back()) {
  offset_ = View1<int>("gbdt::offset", offset.size());
  auto h = Kokkos::create_mirror_view(offset_);
  for (std::size_t i = 0; i < offset.size(); ++i) h(i) = offset[i];
  Kokkos::deep_copy(offset_, h);
}

std::vector<Hist> HistogramBuilder::build(const QuantGrad& q, const View1<int>& row_node,
                                          const std::vector<int>& nodes, int num_tree_nodes) {
  const std::size_t per = static_cast<std::size_t>(total_bins_) * 3;
  // Bound the duplicated scatter memory to ~256 MiB: threads x slots x bins x 24 bytes.
  const std::size_t threads = static_cast<std::size_t>(kmax(1, ExecSpace().concurrency()));
  const std::size_t budget = std::size_t(256) << 20;
  const std::size_t chunk = kmax<std::size_t>(1, budget / (threads * per * sizeof(long long)));
  std::vector<Hist> out;
  View1<int> slot_of("gbdt::slot_of", static_cast<std::size_t>(num_tree_nodes));
  auto slot_h = Kokkos::create_mirror_view(slot_of);
  for (std::size_t s0 = 0; s0 < nodes.size(); s0 += chunk) {
    const std::size_t m = kmin(chunk, nodes.size() - s0);
    for (int i = 0; i < num_tree_nodes; ++i) slot_h(i) = -1;
    for (std::size_t s = 0; s < m; ++s) slot_h(nodes[s0 + s]) = static_cast<int>(s);
    Kokkos::deep_copy(slot_of, slot_h);
    View2<long long> hist("gbdt::hist", m, per);
    accumulate_histograms(bins_, offset_, q, row_node, slot_of, hist);
    auto hh = to_host(hist);
    for (std::size_t s = 0; s < m; ++s) out.emplace_back(&hh(s, 0), &hh(s, 0) + per);
  }
  return out;
}

}  // namespace hpct::gbdt
