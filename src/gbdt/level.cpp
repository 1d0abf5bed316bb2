// Partition and smaller-child histogram of many split nodes in one pass (host backends).
#include "gbdt/level.hpp"

#include <algorithm>

#include "gbdt/packed.hpp"

namespace hpct::gbdt {

namespace {
// A task below this many rows costs more to schedule and to sum as a partial than it saves.
constexpr long long kMinTaskRows = 8192;

// Runs body(i) for i in [0, n): inline for one, else one parallel region, largest tasks first
// (callers order them so), each thread taking the next task when it is done.
template <class Body>
void run_tasks(const char* label, int n, const Body& body) {
  if (n <= 1 || host_exec().concurrency() <= 1) {
    for (int i = 0; i < n; ++i) body(i);
    return;
  }
  auto policy = host_range<Kokkos::Schedule<Kokkos::Dynamic>>(0, n);
  policy.set_chunk_size(1);
  Kokkos::parallel_for(label, policy, body);
  fence();
}

struct Task {
  int job = 0, chunk = 0;
  long long lo = 0, hi = 0;   // positions in the job's slice
  long long* hist = nullptr;  // where the rows of the job's `build` side are summed (null: none)
};
}  // namespace

// Note [one region per level]
// A depth-6 tree used to cost about 230 parallel regions (per split node a partition and a move
// region, per built child a histogram and a partial-sum region, per pair a split-search region);
// each one wakes the other threads and waits for the slowest, which on a shared node (another
// process on a core) costs a time slice, far more than the work. Here all split nodes of a level
// are tasks of one region: a task partitions a piece of a node's rows (one byte of the split
// feature per row) and sums the rows it sent to the smaller side into its own histogram at once.
// A node gets one task (and is finished inside it) unless it holds more than ~1/(2 x threads) of
// the level's rows (then up to one task per thread); its pieces are then placed and its partial
// histograms summed in a second region. Integer sums: any cut into tasks gives the same bits, and
// the index the same order. Leafwise growth (one node per split) keeps the per-node kernels: there
// this pass measured 5-20% more CPU time (a node's one or two tasks against finer chunks).
std::vector<Hist> split_and_build(const std::vector<SplitJob>& jobs, RowPartition& part, HistogramBuilder& hb,
                                  const View2<std::uint8_t>& columns, const QuantGrad& q) {
  const int T = kmax(1, host_exec().concurrency());
  const std::size_t J = jobs.size();
  std::vector<long long> begin(J), count(J), chunks(J), per(J);
  long long total = 0;
  for (std::size_t j = 0; j < J; ++j) {
    begin[j] = part.begin(jobs[j].node);
    count[j] = part.count(jobs[j].node);
    total += count[j];
  }
  const long long target = kmax(kMinTaskRows, (total + 2 * T - 1) / (2 * T));
  std::vector<Hist> out;
  std::vector<Hist> partials;
  std::vector<Task> tasks;
  std::vector<std::size_t> out_of(J, 0), first_partial(J, 0);
  for (std::size_t j = 0; j < J; ++j) {
    // At most one task per thread for a node: each further one costs a partial histogram to zero and add.
    chunks[j] = T == 1 ? 1 : kmax(1ll, kmin<long long>(T, count[j] / target));
    per[j] = (count[j] + chunks[j] - 1) / chunks[j];
    if (jobs[j].build < 0) continue;
    out_of[j] = out.size();
    out.push_back(hb.take());
    first_partial[j] = partials.size();
    for (long long c = 1; c < chunks[j]; ++c) partials.push_back(hb.take());
  }
  for (std::size_t j = 0; j < J; ++j) {
    for (long long c = 0; c < chunks[j]; ++c) {
      Task t;
      t.job = static_cast<int>(j);
      t.chunk = static_cast<int>(c);
      t.lo = c * per[j];
      t.hi = kmin(count[j], t.lo + per[j]);
      if (jobs[j].build >= 0)
        t.hist = c == 0 ? out[out_of[j]].data()
                        : partials[first_partial[j] + static_cast<std::size_t>(c) - 1].data();
      tasks.push_back(t);
    }
  }
  // Largest first: the threads then finish close together (dynamic scheduling).
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const Task& a, const Task& b) { return a.hi - a.lo > b.hi - b.lo; });

  const View2<std::uint8_t>& bins = hb.bins();
  const std::uint8_t* B = bins.data();
  const int F = static_cast<int>(bins.extent(1));
  const int* off = hb.offset_host().data();
  const QuantGrad* qp = &q;  // captured as a pointer: no View copies inside the region
  int* idx = part.index_data();
  int* tmp = part.scratch_data();
  std::vector<long long> left_rows(tasks.size()), right_rows(tasks.size());
  const Task* tk = tasks.data();
  long long* nl = left_rows.data();
  long long* nr = right_rows.data();
  const SplitJob* jb = jobs.data();
  const long long* bg = begin.data();
  const long long* ch = chunks.data();
  run_tasks("gbdt::split_build", static_cast<int>(tasks.size()), [=](const int i) {
    const Task& t = tk[i];
    const SplitJob& job = jb[t.job];
    int* ix = idx + bg[t.job] + t.lo;
    int* tx = tmp + bg[t.job] + t.lo;
    const long long m = t.hi - t.lo;
    const long long l = partition_piece(ix, tx, m, &columns(job.rule.feature, 0), job.rule);
    const long long r = m - l;
    nl[i] = l;
    nr[i] = r;
    if (t.hist) {
      const bool left_side = job.build == job.left;
      sum_rows_host(t.hist, B, F, off, left_side ? ix : tx, left_side ? l : r, *qp);
    }
    if (ch[t.job] == 1) std::copy(tx, tx + r, ix + l);  // the whole node: its right rows after the left
  });

  // Per job: its tasks' counts in chunk order.
  std::vector<std::vector<long long>> lcnt(J), rcnt(J);
  for (std::size_t j = 0; j < J; ++j) {
    lcnt[j].assign(static_cast<std::size_t>(chunks[j]), 0);
    rcnt[j].assign(static_cast<std::size_t>(chunks[j]), 0);
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto j = static_cast<std::size_t>(tasks[i].job);
    lcnt[j][static_cast<std::size_t>(tasks[i].chunk)] = left_rows[i];
    rcnt[j][static_cast<std::size_t>(tasks[i].chunk)] = right_rows[i];
  }
  // Second region, for nodes cut into several tasks: one task places a node's pieces (left pieces
  // towards the front in chunk order, never past a piece not yet moved; then the right pieces from
  // scratch), T tasks sum its partial histograms, each a range of bins.
  struct Finish {
    int job, part;  // part -1: placement; else the bin range part of T
  };
  std::vector<Finish> finish;
  for (std::size_t j = 0; j < J; ++j) {
    if (chunks[j] == 1) continue;
    finish.push_back({static_cast<int>(j), -1});
    if (jobs[j].build >= 0)
      for (int p = 0; p < T; ++p) finish.push_back({static_cast<int>(j), p});
  }
  const Finish* fin = finish.data();
  // Packed (Note [packed gradients]): one int64 a bin until expanded below.
  const long long size = static_cast<long long>(hb.total_bins()) * (q.packed ? 1 : kHistStride);
  const std::vector<long long>* lc = lcnt.data();
  const std::vector<long long>* rc = rcnt.data();
  const long long* pr = per.data();
  Hist* outs = out.data();
  Hist* parts = partials.data();
  const std::size_t* oo = out_of.data();
  const std::size_t* fp = first_partial.data();
  run_tasks("gbdt::split_finish", static_cast<int>(finish.size()), [=](const int i) {
    const auto j = static_cast<std::size_t>(fin[i].job);
    const long long k = ch[j];
    if (fin[i].part < 0) {
      int* ix = idx + bg[j];
      const int* tx = tmp + bg[j];
      long long at = lc[j][0];
      for (long long c = 1; c < k; ++c) {
        std::copy(ix + c * pr[j], ix + c * pr[j] + lc[j][static_cast<std::size_t>(c)], ix + at);
        at += lc[j][static_cast<std::size_t>(c)];
      }
      for (long long c = 0; c < k; ++c) {
        std::copy(tx + c * pr[j], tx + c * pr[j] + rc[j][static_cast<std::size_t>(c)], ix + at);
        at += rc[j][static_cast<std::size_t>(c)];
      }
      return;
    }
    long long* h = outs[oo[j]].data();
    const long long lo = size * fin[i].part / T, hi = size * (fin[i].part + 1) / T;
    for (long long c = 1; c < k; ++c) {
      const long long* p = parts[fp[j] + static_cast<std::size_t>(c) - 1].data();
      for (long long b = lo; b < hi; ++b) h[b] += p[b];
    }
  });
  for (Hist& p : partials) hb.recycle(std::move(p));
  if (q.packed)  // Note [packed gradients]: the sums above were one int64 a bin
    for (Hist& h : out) expand_packed(h.data(), hb.total_bins());
  for (std::size_t j = 0; j < J; ++j) {
    long long l = 0;
    for (const long long v : lcnt[j]) l += v;
    part.set_split(jobs[j].node, jobs[j].left, jobs[j].right, l);
  }
  return out;
}

}  // namespace hpct::gbdt
