// Prediction kernels over flattened trees.
#include "gbdt/model.hpp"

#include <algorithm>
#include <type_traits>

namespace hpct::gbdt {

void Model::truncate(int r) {
  const std::size_t keep = static_cast<std::size_t>(r) * static_cast<std::size_t>(num_outputs());
  if (keep < trees.size()) {
    trees.resize(keep);
    tree_output.resize(keep);
  }
}

std::vector<double> predict_margins(const Model& m, const std::vector<float>& x, long long n, int rounds) {
  const int K = m.num_outputs();
  const int F = m.num_features;
  const std::size_t ntrees = rounds < 0 ? m.trees.size()
                                        : kmin(m.trees.size(), static_cast<std::size_t>(rounds) * K);
  // Flatten: node arrays of all trees back to back, children as global indices.
  std::vector<int> root, out, feat, left, right;
  std::vector<char> dl;
  std::vector<float> thr;
  std::vector<double> val;
  std::vector<std::uint32_t> cat;  // per node: 1 for a categorical split, then 8 words of its set
  for (std::size_t t = 0; t < ntrees; ++t) {
    const Tree& tr = m.trees[t];
    const int base = static_cast<int>(feat.size());
    root.push_back(base);
    out.push_back(m.tree_output[t]);
    for (int i = 0; i < tr.num_nodes(); ++i) {
      const auto u = static_cast<std::size_t>(i);
      feat.push_back(tr.feature[u]);
      left.push_back(tr.is_leaf(i) ? -1 : base + tr.left[u]);
      right.push_back(tr.is_leaf(i) ? -1 : base + tr.right[u]);
      dl.push_back(tr.default_left[u]);
      thr.push_back(tr.threshold[u]);
      val.push_back(tr.value[u]);
      const SplitRule cr = categorical_rule(0, -1, tr.is_categorical(i) ? tr.cats[u] : std::vector<int>{});
      cat.push_back(tr.is_categorical(i) ? 1u : 0u);
      cat.insert(cat.end(), cr.cat, cr.cat + 8);
    }
  }
  auto dev = [](const auto& v, const char* name) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    View1<T> d(std::string(name), v.size());
    auto h = Kokkos::create_mirror_view(d);
    for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
    Kokkos::deep_copy(d, h);
    return d;
  };
  auto d_root = dev(root, "root"), d_out = dev(out, "out"), d_feat = dev(feat, "feat");
  auto d_left = dev(left, "left"), d_right = dev(right, "right");
  auto d_dl = dev(dl, "dl");
  auto d_thr = dev(thr, "thr");
  auto d_val = dev(val, "val");
  auto d_cat = dev(cat, "cat");
  auto d_base = dev(m.base_margin, "base");
  auto d_x = dev(x, "x");
  View2<double> margin("gbdt::margin", static_cast<std::size_t>(n), static_cast<std::size_t>(K));
  const int nt = static_cast<int>(ntrees);
  Kokkos::parallel_for(
      "gbdt::predict", range(0, n), KOKKOS_LAMBDA(const long long r) {
        for (int k = 0; k < K; ++k) margin(r, k) = d_base(k);
        for (int t = 0; t < nt; ++t) {
          int node = d_root(t);
          while (d_left(node) >= 0) {
            float v = d_x(r * F + d_feat(node));
            v = v > 3.402823466e38f ? 3.402823466e38f : (v < -3.402823466e38f ? -3.402823466e38f : v);
            bool go_left = v != v ? d_dl(node) != 0 : v <= d_thr(node);  // v != v: NaN
            if (d_cat(9 * node) != 0) {  // a category code: left when in the set; NaN, unseen: right
              const int c = v >= 0.0f && v < 256.0f ? static_cast<int>(v) : -1;
              go_left = c >= 0 && static_cast<float>(c) == v && ((d_cat(9 * node + 1 + (c >> 5)) >> (c & 31)) & 1u);
            }
            node = go_left ? d_left(node) : d_right(node);
          }
          margin(r, d_out(t)) += d_val(node);
        }
      });
  auto h = to_host(margin);
  return std::vector<double>(h.data(), h.data() + n * K);
}

namespace {
// A tree in device arrays for walking binned rows: per node feature, bin, NaN bin, default_left,
// left child, right child (-1: leaf), categorical, the 8 words of a categorical split's set; and
// the node values.
struct BinnedTree {
  View2<int> nodes;
  View1<double> value;
};

BinnedTree flatten_binned(const Tree& t, const BinCuts& cuts) {
  const int nn = t.num_nodes();
  BinnedTree bt{View2<int>("gbdt::tree_nodes", static_cast<std::size_t>(nn), 15),
                View1<double>("gbdt::tree_values", static_cast<std::size_t>(nn))};
  auto h = Kokkos::create_mirror_view(bt.nodes);
  auto hv = Kokkos::create_mirror_view(bt.value);
  for (int i = 0; i < nn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    h(i, 0) = t.feature[u];
    h(i, 1) = t.bin[u];
    h(i, 2) = t.is_leaf(i) ? 0 : cuts.nan_bin(t.feature[u]);
    h(i, 3) = t.default_left[u] != 0 ? 1 : 0;
    h(i, 4) = t.left[u];
    h(i, 5) = t.right[u];
    const SplitRule cr = categorical_rule(0, -1, t.is_categorical(i) ? t.cats[u] : std::vector<int>{});
    h(i, 6) = t.is_categorical(i) ? 1 : 0;
    for (int w = 0; w < 8; ++w) h(i, 7 + w) = static_cast<int>(cr.cat[w]);
    hv(i) = t.value[u];
  }
  Kokkos::deep_copy(bt.nodes, h);
  Kokkos::deep_copy(bt.value, hv);
  return bt;
}

KOKKOS_INLINE_FUNCTION int leaf_of(const View2<int>& nodes, const View2<std::uint8_t>& bins, long long r) {
  int node = 0;
  while (nodes(node, 4) >= 0) {
    SplitRule s{nodes(node, 0), nodes(node, 1), nodes(node, 2), nodes(node, 3) != 0};
    if (nodes(node, 6) != 0) {
      s.categorical = true;
      for (int w = 0; w < 8; ++w) s.cat[w] = static_cast<std::uint32_t>(nodes(node, 7 + w));
    }
    node = s.goes_left(bins(r, s.feature)) ? nodes(node, 4) : nodes(node, 5);
  }
  return node;
}
}  // namespace

namespace {
// Note [fixed-depth tree walk]
// Walking a tree row by row costs a mispredicted branch at nearly every level (the direction is
// data) and each level waits for the previous one's loads. On the host the tree is flattened with
// children in one array (child[2 node + right]) and every leaf its own two children, so a row takes
// exactly `depth` steps without a branch, and blocks of rows walk side by side: their chains are
// independent, so their loads overlap. The leaf reached and the value added are the walk's, so the
// margins are bitwise those of the branching walk (the device path).
struct HostWalk {
  std::vector<int> feature, bin, nan_bin, flip, child;
  int depth = 0;
};

HostWalk host_walk(const Tree& t, const BinCuts& cuts) {
  const int nn = t.num_nodes();
  HostWalk w;
  w.feature.assign(static_cast<std::size_t>(nn), 0);
  w.bin.assign(static_cast<std::size_t>(nn), 0);
  w.nan_bin.assign(static_cast<std::size_t>(nn), -1);
  w.flip.assign(static_cast<std::size_t>(nn), 0);
  w.child.assign(2 * static_cast<std::size_t>(nn), 0);
  for (int i = 0; i < nn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (t.is_leaf(i)) {
      w.child[2 * u] = w.child[2 * u + 1] = i;
      w.depth = kmax(w.depth, t.depth[u]);
      continue;
    }
    w.feature[u] = t.feature[u];
    w.bin[u] = t.bin[u];
    w.nan_bin[u] = cuts.nan_bin(t.feature[u]);
    w.flip[u] = t.default_left[u] != 0 ? 1 : 0;
    w.child[2 * u] = t.left[u];
    w.child[2 * u + 1] = t.right[u];
  }
  return w;
}
}  // namespace

void add_tree_binned(const Tree& t, const BinCuts& cuts, const View2<std::uint8_t>& bins,
                     const View2<double>& margin, int k) {
  if (kHostBackend && !t.has_categorical()) {  // categorical sets: the generic walk below
    const HostWalk hw = host_walk(t, cuts);
    const long long n = static_cast<long long>(bins.extent(0));
    const long long F = static_cast<long long>(bins.extent(1));
    const long long K = static_cast<long long>(margin.extent(1));
    const long long chunks = host_chunks(n, 16384);
    const long long per = (n + chunks - 1) / chunks;
    const std::uint8_t* B = bins.data();
    double* mg = margin.data();
    const int* fe = hw.feature.data();
    const int* bi = hw.bin.data();
    const int* nb = hw.nan_bin.data();
    const int* fl = hw.flip.data();
    const int* ch = hw.child.data();
    const double* val = t.value.data();
    const int depth = hw.depth;
    for_each_host_chunk("gbdt_add_tree", chunks, [=](const int c) {
      constexpr int kBlock = 16;
      const long long lo = c * per, hi = kmin(n, lo + per);
      for (long long r0 = lo; r0 < hi; r0 += kBlock) {
        const int m = static_cast<int>(kmin<long long>(kBlock, hi - r0));
        int node[kBlock] = {};
        for (int d = 0; d < depth; ++d)
          for (int j = 0; j < m; ++j) {
            const int u = node[j];
            const int b = B[(r0 + j) * F + fe[u]];
            // Partition's rule (partition_piece): right unless b <= bin, flipped for NaN going left.
            const int right = static_cast<int>(b > bi[u]) ^ (static_cast<int>(b == nb[u]) & fl[u]);
            node[j] = ch[2 * u + right];
          }
        for (int j = 0; j < m; ++j) mg[(r0 + j) * K + k] += val[node[j]];
      }
    });
    return;
  }
  const BinnedTree bt = flatten_binned(t, cuts);
  const auto nodes = bt.nodes;
  const auto val = bt.value;
  Kokkos::parallel_for(
      "gbdt_add_tree", range<Kokkos::IndexType<long long>>(0, static_cast<long long>(bins.extent(0))),
      KOKKOS_LAMBDA(const long long r) { margin(r, k) += val(leaf_of(nodes, bins, r)); });
}

// Note [last split in the margin update]
// The last level's split nodes need no histograms, only their rows' leaves: on host backends growth
// does not partition them (RowPartition::defer_split) and this pass, which visits every in-bag row
// anyway, sends each row of such a node to its leaf by the same bin rule the partition would have
// applied (one byte of the split feature's column), so the margins are those of a partition. That
// saves a pass that read and rewrote the whole row index (about 2% of a depth-6 run).
//
// Note [leaf codes]
// Adding each row's leaf value while walking the leaves' slices writes the margins in slice order:
// every slice sweeps the whole margin array (8 bytes a row, 7 MB at 900k rows, beyond L2) touching a
// cache line per row, 6% of a depth-6 run's CPU. On host backends without row sampling the walk
// instead writes each row's leaf as one byte (the same scattered order, but into an array an eighth
// the size, the row index's scratch, free once the tree is grown), and a second pass adds
// table[code] to the margins in row order. The value added to each row is the same as before, so
// the margins are bitwise unchanged. Up to 128 slices (a byte holds two codes per slice).
void add_tree_trained(const Tree& t, const BinCuts& cuts, const View2<std::uint8_t>& bins,
                      const View2<std::uint8_t>& columns, RowPartition& part, const View2<double>& margin, int k) {
  const auto idx = part.index();
  // The leaves' slices tile the in-bag positions: one kernel finds each position's leaf by a
  // binary search over the slice ends (sorted), rather than one launch per leaf. A leaf with no row
  // on this rank owns no position and is left out: its end equals its neighbour's, and sorted
  // before it (by value) it would hand that neighbour's rows its own value (a model that then
  // depended on the rank count). A deferred split's node is one slice too (`split` >= 0).
  struct Slice {
    long long end;
    double value;
    int split;  // index into part.deferred(), or -1: a leaf
    bool operator<(const Slice& o) const { return end < o.end || (end == o.end && value < o.value); }
  };
  std::vector<Slice> ends;
  for (int i = 0; i < t.num_nodes(); ++i)
    if (t.is_leaf(i) && part.count(i) > 0)
      ends.push_back({part.begin(i) + part.count(i), t.value[static_cast<std::size_t>(i)], -1});
  const auto& deferred = part.deferred();
  for (std::size_t d = 0; d < deferred.size(); ++d)
    if (part.count(deferred[d].node) > 0)
      ends.push_back({part.begin(deferred[d].node) + part.count(deferred[d].node), 0.0, static_cast<int>(d)});
  if (ends.empty()) ends.push_back({0, 0.0, -1});  // no in-bag row here: the kernels below visit none
  std::sort(ends.begin(), ends.end());
  const int L = static_cast<int>(ends.size());
  View1<long long> end("gbdt::leaf_end", ends.size());
  View1<double> value("gbdt::leaf_value", ends.size());
  auto he = Kokkos::create_mirror_view(end);
  auto hv = Kokkos::create_mirror_view(value);
  std::vector<int> split(ends.size());
  for (int i = 0; i < L; ++i) {
    he(i) = ends[static_cast<std::size_t>(i)].end;
    hv(i) = ends[static_cast<std::size_t>(i)].value;
    split[static_cast<std::size_t>(i)] = ends[static_cast<std::size_t>(i)].split;
  }
  Kokkos::deep_copy(end, he);
  Kokkos::deep_copy(value, hv);
  if (kHostBackend) {
    // The deferred splits' rules, columns and leaf values.
    std::vector<SplitRule> rule;
    std::vector<const std::uint8_t*> col;
    std::vector<double> vlr;
    const long long stride = static_cast<long long>(columns.extent(1));
    for (const auto& d : deferred) {
      rule.push_back(d.rule);
      col.push_back(columns.data() + static_cast<long long>(d.rule.feature) * stride);
      vlr.push_back(t.value[static_cast<std::size_t>(d.left)]);
      vlr.push_back(t.value[static_cast<std::size_t>(d.right)]);
    }
    // Host: chunks of positions, each walking the leaves alongside instead of searching.
    const long long n = part.bag_rows();
    const long long chunks = host_chunks(n, 16384);
    const long long per = (n + chunks - 1) / chunks;
    const int* ix = idx.data();
    const long long* e = he.data();
    const double* v = hv.data();
    const int* sp = split.data();
    const SplitRule* ru = rule.data();
    const std::uint8_t* const* co = col.data();
    const double* lr = vlr.data();
    double* mg = margin.data();
    const long long K = static_cast<long long>(margin.extent(1));
    bool numeric_rules = true;
    for (const SplitRule& r : rule) numeric_rules = numeric_rules && !r.categorical;
    if (n == part.rows() && 2 * L <= 256 && numeric_rules) {
      // Note [leaf codes]: every row's leaf as a byte, then the margins in row order. Code 2i is
      // slice i's leaf (or the left leaf of its deferred split), 2i + 1 that split's right leaf.
      std::vector<double> table(2 * static_cast<std::size_t>(L));
      for (int i = 0; i < L; ++i) {
        const int s = split[static_cast<std::size_t>(i)];
        table[2 * static_cast<std::size_t>(i)] = s < 0 ? hv(i) : vlr[2 * static_cast<std::size_t>(s)];
        table[2 * static_cast<std::size_t>(i) + 1] = s < 0 ? hv(i) : vlr[2 * static_cast<std::size_t>(s) + 1];
      }
      std::uint8_t* code = reinterpret_cast<std::uint8_t*>(part.scratch_data());  // free after growth
      for_each_host_chunk("gbdt_leaf_codes", chunks, [=](const int c) {
        const long long lo = c * per, hi = kmin(n, lo + per);
        for (int i = static_cast<int>(std::upper_bound(e, e + L, lo) - e); i < L && (i == 0 ? 0 : e[i - 1]) < hi;
             ++i) {
          const long long a = kmax(lo, i == 0 ? 0ll : e[i - 1]), b = kmin(hi, e[i]);
          const auto c0 = static_cast<std::uint8_t>(2 * i);
          const int s = sp[i];
          if (s < 0) {
            for (long long j = a; j < b; ++j) code[ix[j]] = c0;
            continue;
          }
          const std::uint8_t* cl = co[s];
          const int bin = ru[s].bin, nan_bin = ru[s].nan_bin, flip = ru[s].default_left ? 1 : 0;
          for (long long j = a; j < b; ++j) {
#if defined(__GNUC__)
            if (j + 16 < b) __builtin_prefetch(cl + ix[j + 16]);  // scattered rows
#endif
            const int r = ix[j];
            const int x = cl[r];
            // partition_piece's rule: right unless x <= bin, flipped for NaN going left.
            code[r] = static_cast<std::uint8_t>(c0 + (static_cast<int>(x > bin) ^
                                                      (static_cast<int>(x == nan_bin) & flip)));
          }
        }
      });
      const double* tb = table.data();
      for_each_host_chunk("gbdt_add_leaf", chunks, [=](const int c) {
        const long long lo = c * per, hi = kmin(n, lo + per);
        for (long long r = lo; r < hi; ++r) mg[r * K + k] += tb[code[r]];
      });
      return;  // every row is in the bag
    }
    for_each_host_chunk("gbdt_add_leaf", chunks, [=](const int c) {
      const long long lo = c * per, hi = kmin(n, lo + per);
      int leaf = static_cast<int>(std::upper_bound(e, e + L, lo) - e);
      for (long long j = lo; j < hi; ++j) {
#if defined(__GNUC__)
        if (j + 16 < hi) __builtin_prefetch(mg + ix[j + 16] * K + k, 1);  // scattered rows
#endif
        while (e[leaf] <= j) ++leaf;
        const int s = sp[leaf];
        const int r = ix[j];
        if (s < 0) {
          mg[r * K + k] += v[leaf];
        } else {
          const int right = ru[s].goes_left(co[s][r]) ? 0 : 1;
          mg[r * K + k] += lr[2 * s + right];
        }
      }
    });
  } else {
    Kokkos::parallel_for(
        "gbdt_add_leaf", range<Kokkos::IndexType<long long>>(0, part.bag_rows()), KOKKOS_LAMBDA(const long long j) {
          int lo = 0, hi = L - 1;  // first leaf whose end > j
          while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (end(mid) > j) hi = mid;
            else lo = mid + 1;
          }
          margin(idx(j), k) += value(lo);
        });
  }
  if (part.bag_rows() == part.rows()) return;
  const BinnedTree bt = flatten_binned(t, cuts);
  const auto nodes = bt.nodes;
  const auto val = bt.value;
  Kokkos::parallel_for(
      "gbdt_add_oob", range<Kokkos::IndexType<long long>>(part.bag_rows(), part.rows()),
      KOKKOS_LAMBDA(const long long j) {
        const int r = idx(j);
        margin(r, k) += val(leaf_of(nodes, bins, r));
      });
}

// The partition's leaves (and deferred splits, by the same rule add_tree_trained applies) per row:
// every in-bag row is visited once, no tree walk.
std::vector<int> leaves_trained(const Tree& t, const RowPartition& part, const View2<std::uint8_t>& columns) {
  const auto idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), part.index());
  std::vector<int> leaf(static_cast<std::size_t>(part.rows()), -1);
  for (int i = 0; i < t.num_nodes(); ++i) {
    if (!t.is_leaf(i)) continue;
    const long long b = part.begin(i), e = b + part.count(i);
    for (long long j = b; j < e; ++j) leaf[static_cast<std::size_t>(idx(j))] = i;
  }
  for (const auto& d : part.deferred()) {  // host backends only: `columns` is host memory
    const std::uint8_t* col = columns.data() +
                              static_cast<long long>(d.rule.feature) * static_cast<long long>(columns.extent(1));
    const long long b = part.begin(d.node), e = b + part.count(d.node);
    for (long long j = b; j < e; ++j) {
      const int r = idx(j);
      leaf[static_cast<std::size_t>(r)] = d.rule.goes_left(col[r]) ? d.left : d.right;
    }
  }
  return leaf;
}

}  // namespace hpct::gbdt
