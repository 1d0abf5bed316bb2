// Collectives over Kokkos views and scalars (MPI implementation), plus the agreement protocol that
// turns an error on any rank into the same error on every rank, so nobody waits in a collective.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/kokkos_compat.hpp"

namespace hpct {

template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, int>) return MPI_INT;
  else if constexpr (std::is_same_v<T, long long>) return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return MPI_UINT32_T;
  else if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
  else static_assert(sizeof(T) == 0, "no MPI datatype for this type");
}

class Comm {
 public:
  explicit Comm(MPI_Comm comm = MPI_COMM_WORLD);
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm raw() const { return comm_; }

  // This rank waits in a collective while one lives (Note [waiting in a collective] in
  // core/heartbeat.hpp): the progress board says so of it. Every collective below holds one; a raw
  // MPI collective on raw() (a gather of variable counts, an all-to-all of rows) holds one too.
  struct Waiting {
    Waiting();
    ~Waiting();
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
  };

  // In-place sum over ranks of a contiguous buffer. Views must be contiguous (LayoutRight/Left);
  // device buffers need a GPU-aware MPI (the NCCL communicator replaces this on GPUs).
  template <class T>
  void allreduce_sum(T* data, std::size_t n) const {
    if (size_ == 1 || n == 0) return;
    const Waiting waiting;
    MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), mpi_type<T>(), MPI_SUM, comm_);
  }
  template <class V>
  void allreduce_sum(const V& view) const {
    fence();  // kernels that produced the buffer must finish before MPI reads it
    allreduce_sum(view.data(), view.span());
  }
  template <class T>
  T sum(T v) const {
    return reduce_scalar(v, MPI_SUM);
  }
  template <class T>
  T max(T v) const {
    return reduce_scalar(v, MPI_MAX);
  }
  template <class T>
  T min(T v) const {
    return reduce_scalar(v, MPI_MIN);
  }

  // In pieces of at most 2^30 values: MPI counts are int (an ImageNet file list is ~100 MB).
  template <class T>
  void broadcast(T* data, std::size_t n, int root = 0) const {
    if (size_ == 1) return;
    const Waiting waiting;
    constexpr std::size_t kPiece = std::size_t(1) << 30;
    for (std::size_t at = 0; at < n; at += kPiece)
      MPI_Bcast(data + at, static_cast<int>(std::min(kPiece, n - at)), mpi_type<T>(), root, comm_);
  }
  void broadcast(std::string& s, int root = 0) const;
  // `v` of `root` on every rank (resized there).
  template <class T>
  void broadcast(std::vector<T>& v, int root = 0) const {
    if (size_ == 1) return;
    std::uint64_t n = v.size();
    broadcast(&n, 1, root);
    v.resize(static_cast<std::size_t>(n));
    broadcast(v.data(), v.size(), root);
  }
  // Strings of `root` on every rank, in pieces of about piece_bytes (Note [strings in pieces]).
  void broadcast(std::vector<std::string>& v, int root = 0, std::uint64_t piece_bytes = 16 << 20) const;
  // A vector of plain structs as their bytes (every rank runs the same build, so the same layout).
  template <class T>
  void broadcast_bytes(std::vector<T>& v, int root = 0) const {
    static_assert(std::is_trivially_copyable_v<T>, "only plain structs travel as bytes");
    if (size_ == 1) return;
    std::uint64_t n = v.size();
    broadcast(&n, 1, root);
    v.resize(static_cast<std::size_t>(n));
    broadcast(reinterpret_cast<char*>(v.data()), v.size() * sizeof(T), root);
  }
  template <class T>
  std::vector<T> allgather(T v) const {
    std::vector<T> out(static_cast<std::size_t>(size_));
    const Waiting waiting;
    MPI_Allgather(&v, 1, mpi_type<T>(), out.data(), 1, mpi_type<T>(), comm_);
    return out;
  }
  // Concatenation of every rank's vector in rank order, on `root` (empty elsewhere).
  template <class T>
  std::vector<T> gather_to_root(const std::vector<T>& local, int root = 0) const {
    const Waiting waiting;
    const int n = static_cast<int>(local.size());
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(counts.size());
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_);
    std::vector<T> all;
    if (rank_ == root) {
      int total = 0;
      for (std::size_t r = 0; r < counts.size(); ++r) displs[r] = total, total += counts[r];
      all.resize(static_cast<std::size_t>(total));
    }
    MPI_Gatherv(local.data(), n, mpi_type<T>(), all.data(), counts.data(), displs.data(), mpi_type<T>(), root,
                comm_);
    return all;
  }
  // The same concatenation on every rank (gather_to_root, then broadcast).
  template <class T>
  std::vector<T> gather_to_all(const std::vector<T>& local) const {
    std::vector<T> all = gather_to_root(local);
    broadcast(all);
    return all;
  }
  std::vector<std::string> gather_to_all(const std::vector<std::string>& local) const;
  void barrier() const {
    const Waiting waiting;
    MPI_Barrier(comm_);
  }

  // Every rank calls this with its own outcome (empty = fine). If any rank failed, every rank
  // throws the same Error: the lowest failing rank's message (prefixed with its rank when not all
  // ranks failed) and the most severe exit code.
  void agree(const std::string& local_error, ExitCode code = ExitCode::failure) const;
  // Every rank found `bad` rows of its block breaking a rule of the data, the first at global row
  // `first` (UINT64_MAX: none). If any rank found one, every rank throws the same Error(code): the
  // message the rank holding the first such row makes, message_of_first(the count over all ranks),
  // with no rank prefix (it names the row; predict's Note [predict non-finite inputs]).
  void agree_on_rows(std::uint64_t bad, std::uint64_t first,
                     const std::function<std::string(unsigned long long total)>& message_of_first,
                     ExitCode code = ExitCode::bad_input) const;

  // Every rank calls this with the first bad item of its share of a check split over the ranks
  // (`index` in one order for all ranks, -1 when its share holds none, `message` its error). If any
  // rank found one, every rank throws the message of the lowest index, with `code`, as one error
  // (no rank prefix: the message is the same whichever rank checked the item): agree_on_rows with
  // one item.
  void agree_first(long long index, const std::string& message, ExitCode code) const;

  // Runs f on `root` only (work done once for all ranks, whose result `root` then broadcasts) and
  // throws its error on every rank: root's message, unprefixed, and exit code, so that a run of any
  // size reports it as one rank does. f must not call collectives.
  template <class F>
  void run_on_root(F&& f, int root = 0) const {
    std::string err;
    ExitCode code = ExitCode::ok;
    if (rank_ == root) capture(f, err, code);
    agree_root(err, code, root);
  }

  // Runs f on every rank and agrees on its outcome (see agree). f must not itself call collectives
  // that other ranks could skip by throwing.
  template <class F>
  void run_agreed(F&& f) const {
    std::string err;
    ExitCode code = ExitCode::ok;
    capture(f, err, code);
    agree(err, code);
  }

 private:
  // f's error into err and code (left as they are when f returns).
  template <class F>
  static void capture(F& f, std::string& err, ExitCode& code) {
    try {
      f();
    } catch (const Error& e) {
      err = e.what();
      code = e.code();
    } catch (const std::exception& e) {
      err = e.what();
      code = ExitCode::failure;
    }
  }
  // root's error (empty: none) thrown on every rank with root's code (run_on_root).
  void agree_root(const std::string& root_error, ExitCode code, int root) const;
  template <class T>
  T reduce_scalar(T v, MPI_Op op) const {
    T out = v;
    if (size_ == 1) return out;
    const Waiting waiting;
    MPI_Allreduce(&v, &out, 1, mpi_type<T>(), op, comm_);
    return out;
  }
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace hpct
