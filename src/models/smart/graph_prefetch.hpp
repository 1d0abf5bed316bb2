// GraphPrefetcher: builds the next micro-batch's SceneGraph on a persistent worker thread (the
// model's loader thread) while the current one trains, into a second SceneGraphBuilder sized like
// the first: a step neither builds its graph nor allocates (Note [graph prefetch]).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "models/smart/scene_graph.hpp"

namespace hpct::smart {

class GraphPrefetcher {
 public:
  GraphPrefetcher(const GraphLimits& limits, const MotionVocab& vocab);
  GraphPrefetcher(const GraphPrefetcher&) = delete;
  GraphPrefetcher& operator=(const GraphPrefetcher&) = delete;
  ~GraphPrefetcher();  // waits for a running build, then ends the worker

  const SceneGraphBuilder& builder() const { return *front_; }
  // The next micro-batch the caller will take (its memory must stay as it is until then): built on
  // the worker as soon as the worker and its builder are free.
  void prefetch(const SceneRows& next);
  // The graph of `rows`: the worker's, when it built exactly these rows (waits for it), else built
  // now on the caller's thread. Valid until the next take().
  const SceneGraph& take(const SceneRows& rows);
  // Micro-batches whose graph came from the worker (for tests and the log).
  std::uint64_t prefetched() const { return prefetched_; }

 private:
  void run();
  void start_pending();  // with mu_ held
  const GraphLimits limits_;
  const MotionVocab& vocab_;
  SceneGraphBuilder a_;
  std::unique_ptr<SceneGraphBuilder> b_;              // made by the first prefetch (evaluations never make it)
  SceneGraphBuilder *front_ = &a_, *back_ = nullptr;  // front: the graph in use; back: the worker's
  std::mutex mu_;
  std::condition_variable cv_;
  SceneRows job_, pending_;
  bool has_job_ = false, job_done_ = false, has_pending_ = false, stop_ = false;
  std::exception_ptr error_;
  std::uint64_t prefetched_ = 0;
  std::thread worker_;  // last: started once every member above is initialised
};

}  // namespace hpct::smart
