// Depthwise and leafwise growth. Histograms live on the host after the kernel: they are small
// (bins x 16 bytes a node), MPI reduces host buffers without needing a GPU-aware MPI, and the split
// scan is cheap next to the histogram pass over rows.
#include "gbdt/grow.hpp"

#include <algorithm>

#include "core/trace.hpp"
#include "gbdt/level.hpp"
#include "gbdt/packed.hpp"

namespace hpct::gbdt {

namespace {

// All-reduce of several node histograms in one contiguous buffer (one MPI call), under the
// watchdog: a rank that froze or died while building its part is named, not waited for.
void allreduce_hists(std::vector<Hist>& hists, WatchedAllreduce& reduce, std::uint64_t round) {
  if (reduce.ranks() == 1 || hists.empty()) return;
  trace::Scope t("allreduce");
  const std::size_t per = hists[0].size();
  std::vector<long long> buf(per * hists.size());
  for (std::size_t i = 0; i < hists.size(); ++i)
    std::copy(hists[i].begin(), hists[i].end(), buf.begin() + static_cast<std::ptrdiff_t>(i * per));
  reduce.sum(buf.data(), buf.size(), round);
  for (std::size_t i = 0; i < hists.size(); ++i)
    std::copy(buf.begin() + static_cast<std::ptrdiff_t>(i * per),
              buf.begin() + static_cast<std::ptrdiff_t>((i + 1) * per), hists[i].begin());
}

struct Grower {
  const GrowParams& gp;
  const BinCuts& cuts;
  HistogramBuilder& hb;
  const View2<std::uint8_t>& columns;  // bins feature-major, for partitioning
  const QuantGrad& q;
  const std::vector<char>& allowed;
  RowPartition& part;
  WatchedAllreduce& reduce;
  std::uint64_t round;
  Tree tree;
  std::vector<Hist> hist;            // by node id; emptied once a node is done
  std::vector<SplitCandidate> cand;  // by node id

  void ensure(int n) {
    if (static_cast<int>(hist.size()) < n) {
      hist.resize(static_cast<std::size_t>(n));
      cand.resize(static_cast<std::size_t>(n));
    }
  }
  int new_node(int depth, const Stats& s) {
    const int id = tree.add_node(depth, s.h / q.scale_h, s.c);
    ensure(id + 1);
    return id;
  }
  bool may_split(int node) const {
    return gp.max_depth <= 0 || tree.depth[static_cast<std::size_t>(node)] < gp.max_depth;
  }
  void search(int node, const Stats& s) {
    trace::Scope t("split_search");
    cand[static_cast<std::size_t>(node)] = may_split(node)
                                               ? best_split(hist[static_cast<std::size_t>(node)], cuts, allowed, s,
                                                            q.scale_g, q.scale_h, q.count_bits, gp.split)
                                               : SplitCandidate{};
  }
  // Turns node into an inner node with two children (the tree only: its rows move in
  // split_rows); returns the children.
  std::pair<int, int> make_children(int node) {
    const SplitCandidate c = cand[static_cast<std::size_t>(node)];
    const int d = tree.depth[static_cast<std::size_t>(node)] + 1;
    const int l = new_node(d, c.left);
    const int r = new_node(d, c.right);
    const auto n = static_cast<std::size_t>(node);
    tree.feature[n] = c.feature;
    tree.bin[n] = c.bin;
    if (c.categorical) {  // bin b of a categorical feature is code b
      for (int b = 0; b < 256; ++b)
        if ((c.cat[b >> 5] >> (b & 31)) & 1u) tree.cats[n].push_back(b);
    } else {
      tree.threshold[n] = cuts.upper[static_cast<std::size_t>(c.feature)][static_cast<std::size_t>(c.bin)];
    }
    tree.default_left[n] = c.default_left ? 1 : 0;
    tree.gain[n] = c.gain;
    tree.left[n] = l;
    tree.right[n] = r;
    record_g(l, c.left);
    record_g(r, c.right);
    return {l, r};
  }
  SplitRule rule_of(int node) const {
    const SplitCandidate& c = cand[static_cast<std::size_t>(node)];
    SplitRule r{c.feature, c.bin, cuts.nan_bin(c.feature), c.default_left};
    r.categorical = c.categorical;
    std::copy(c.cat, c.cat + 8, r.cat);
    return r;
  }
  // The child whose histogram is built (by global in-bag count, ties: left); the other is
  // parent - built.
  int smaller_child(int p) const {
    const int l = tree.left[static_cast<std::size_t>(p)], r = tree.right[static_cast<std::size_t>(p)];
    return tree.count[static_cast<std::size_t>(l)] <= tree.count[static_cast<std::size_t>(r)] ? l : r;
  }
  // Moves the rows of the split `parents` to their children; with `build`, returns the local
  // histograms of their smaller children (in order). Depthwise on CPUs with histograms small enough
  // to be summed row by row, both in one pass (Note [one region per level] in gbdt/level.cpp).
  // Leafwise splits one node at a time, whose rows the per-node kernels cut finer (the fused pass
  // measured 5-20% more CPU time there).
  std::vector<Hist> split_rows(const std::vector<int>& parents, bool build) {
    if (!build && kHostBackend) {  // leaves: their rows move in the margin update, not here
      for (int p : parents) {
        const auto u = static_cast<std::size_t>(p);
        part.defer_split(p, tree.left[u], tree.right[u], rule_of(p));
      }
      return {};
    }
    if (!hb.row_by_row_host() || gp.leafwise) {
      {
        trace::Scope t("partition");
        for (int p : parents) {
          const auto u = static_cast<std::size_t>(p);
          part.split(p, tree.left[u], tree.right[u], rule_of(p), columns);
        }
      }
      if (!build) return {};
      std::vector<int> small;
      for (int p : parents) small.push_back(smaller_child(p));
      trace::Scope t("histograms");
      return hb.build(q, part, small);
    }
    std::vector<SplitJob> jobs;
    for (int p : parents) {
      const auto u = static_cast<std::size_t>(p);
      jobs.push_back({p, tree.left[u], tree.right[u], rule_of(p), build ? smaller_child(p) : -1});
    }
    trace::Scope t(build ? "histograms" : "partition");
    return split_and_build(jobs, part, hb, columns, q);
  }
  // All-reduces the `built` histograms of the parents' smaller children, derives the siblings,
  // frees the parents and searches the children.
  void children_hists(const std::vector<int>& parents, std::vector<Hist> built) {
    allreduce_hists(built, reduce, round);
    if (q.packed)
      for (Hist& h : built) fill_counts(h, count_per_h, q.count_bits);
    std::vector<PairSearch> pairs;
    for (std::size_t i = 0; i < parents.size(); ++i) {
      const auto p = static_cast<std::size_t>(parents[i]);
      const int bi = smaller_child(parents[i]);
      const int oi = bi == tree.left[p] ? tree.right[p] : tree.left[p];
      const auto b = static_cast<std::size_t>(bi), o = static_cast<std::size_t>(oi);
      const SplitCandidate& c = cand[p];
      const bool built_left = tree.left[p] == bi;
      // The sibling takes over the parent's buffer (parent - built child, in place), and both
      // children are searched in the same pass.
      hist[o] = std::move(hist[p]);
      hist[b] = std::move(built[i]);
      pairs.push_back({&hist[o], &hist[b], built_left ? c.left : c.right, built_left ? c.right : c.left,
                       may_split(bi), may_split(oi), &cand[b], &cand[o]});
    }
    trace::Scope t("split_search");
    subtract_and_search(pairs, cuts, allowed, q.scale_g, q.scale_h, q.count_bits, gp.split);
  }

  void grow() {
    ensure(1);
    std::vector<Hist> root;
    {
      trace::Scope t("histograms");
      root = hb.build(q, part, {0});
    }
    allreduce_hists(root, reduce, round);
    if (q.packed) root_counts(root[0]);
    const Stats rs = node_stats(root[0], cuts, q.count_bits);
    new_node(0, rs);
    record_g(0, rs);
    hist[0] = std::move(root[0]);
    search(0, rs);
    if (gp.leafwise) grow_leafwise();
    else grow_depthwise();
    for (Hist& h : hist) hb.recycle(std::move(h));
    for (int i = 0; i < tree.num_nodes(); ++i) {
      if (!tree.is_leaf(i)) continue;
      // Leaf value from the exact global sums the node was created with.
      const auto n = static_cast<std::size_t>(i);
      tree.value[n] = gp.eta * leaf_value(leaf_g[n], tree.hess[n], gp.split);
    }
  }

  // Note [packed gradients] (gbdt/packed.hpp): rows per hessian unit at the root, from its exact
  // global row count and hessian sum; the bins' counts are estimated with it.
  double count_per_h = 0;
  void root_counts(Hist& root) {
    long long rows = part.count(0);
    if (reduce.ranks() > 1) reduce.sum(&rows, 1, round);
    long long hs = 0;  // the root's hessian sum: feature 0's bins, NaN bin included
    for (int b = 0; b < cuts.offset[1]; ++b) hs += root[kHistStride * static_cast<std::size_t>(b) + 1];
    count_per_h = hs > 0 ? static_cast<double>(rows) / static_cast<double>(hs) : 0.0;
    fill_counts(root, count_per_h, q.count_bits);
  }

  std::vector<double> leaf_g;  // G of every node, kept for leaf values
  void record_g(int node, const Stats& s) {
    if (static_cast<int>(leaf_g.size()) <= node) leaf_g.resize(static_cast<std::size_t>(node) + 1);
    leaf_g[static_cast<std::size_t>(node)] = s.g / q.scale_g;
  }

  void grow_depthwise() {
    std::vector<int> level = {0};
    int leaves = 1;
    while (!level.empty()) {
      std::vector<int> split_nodes;
      for (int node : level) {
        if (!cand[static_cast<std::size_t>(node)].valid) continue;
        if (gp.max_leaves > 0 && leaves >= gp.max_leaves) break;
        make_children(node);
        ++leaves;
        split_nodes.push_back(node);
      }
      for (int node : level)
        if (std::find(split_nodes.begin(), split_nodes.end(), node) == split_nodes.end())
          hb.recycle(std::move(hist[static_cast<std::size_t>(node)]));
      if (split_nodes.empty()) break;
      std::vector<int> next;
      for (int p : split_nodes) {
        next.push_back(tree.left[static_cast<std::size_t>(p)]);
        next.push_back(tree.right[static_cast<std::size_t>(p)]);
      }
      // Children at the depth limit (or beyond the leaf budget) are leaves: no histograms needed.
      const bool more = may_split(next[0]) && (gp.max_leaves <= 0 || leaves < gp.max_leaves);
      std::vector<Hist> built = split_rows(split_nodes, more);
      if (!more) break;
      children_hists(split_nodes, std::move(built));
      level = next;
    }
  }

  void grow_leafwise() {
    int leaves = 1;
    std::vector<int> open = {0};
    const int limit = gp.max_leaves > 0 ? gp.max_leaves : (1 << 30);
    while (leaves < limit) {
      int pick = -1;
      for (int node : open) {
        const auto& c = cand[static_cast<std::size_t>(node)];
        if (c.valid && (pick < 0 || c.gain > cand[static_cast<std::size_t>(pick)].gain)) pick = node;
      }
      if (pick < 0) break;
      const auto lr = make_children(pick);
      ++leaves;
      open.erase(std::find(open.begin(), open.end(), pick));
      const bool more = leaves < limit && may_split(lr.first);
      std::vector<Hist> built = split_rows({pick}, more);
      if (more) {
        children_hists({pick}, std::move(built));
        open.push_back(lr.first);
        open.push_back(lr.second);
      } else {
        hb.recycle(std::move(hist[static_cast<std::size_t>(pick)]));
      }
      // Keep `open` sorted by id so ties in gain resolve to the lowest node id on every rank.
      std::sort(open.begin(), open.end());
    }
  }
};

}  // namespace

Tree grow_tree(const GrowParams& gp, const BinCuts& cuts, HistogramBuilder& hb, const View2<std::uint8_t>& columns,
               const QuantGrad& q, const std::vector<char>& allowed, RowPartition& part, WatchedAllreduce& reduce,
               std::uint64_t round) {
  Grower g{gp, cuts, hb, columns, q, allowed, part, reduce, round, {}, {}, {}, 0.0, {}};
  g.grow();
  return std::move(g.tree);
}

}  // namespace hpct::gbdt
