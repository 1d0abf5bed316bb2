// The SMART model's loader thread: next micro-batch's token graph built beside the step (see
// graph_prefetch.hpp).
#include "models/smart/graph_prefetch.hpp"

namespace hpct::smart {

// Note [graph prefetch]: the trainer hands the model the micro-batch after the one it is about to
// train (Model::prefetch, same epoch only: its rows stay in place until they are trained). The
// worker builds it into the back builder while the step runs on the front one; take() of exactly
// those rows swaps the two. Anything else (validation, evaluation, a first step) is built on the
// caller's thread into the front builder, which the worker never touches, so a graph is the same
// wherever it was built and results do not depend on the prefetch. The front builder is sized in
// the constructor, the back one by the first prefetch (a training's first step; an evaluation, which
// never prefetches, never fills a second builder's buffers), and the worker waits on a condition
// variable: nothing is allocated per step after the first.
GraphPrefetcher::GraphPrefetcher(const GraphLimits& limits, const MotionVocab& vocab)
    : limits_(limits), vocab_(vocab), a_(limits, vocab), worker_([this] { run(); }) {}

GraphPrefetcher::~GraphPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void GraphPrefetcher::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || (has_job_ && !job_done_); });
    if (stop_) return;
    const SceneRows r = job_;
    SceneGraphBuilder* into = back_;
    lock.unlock();
    std::exception_ptr error;
    try {
      into->build(r);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    job_done_ = true;
    cv_.notify_all();
  }
}

void GraphPrefetcher::start_pending() {
  if (!has_pending_ || has_job_) return;
  job_ = pending_, has_job_ = true, job_done_ = false, has_pending_ = false;
  cv_.notify_all();
}

void GraphPrefetcher::prefetch(const SceneRows& next) {
  std::lock_guard<std::mutex> lock(mu_);
  if (has_job_ && job_.same(next)) return;
  if (!b_) b_ = std::make_unique<SceneGraphBuilder>(limits_, vocab_), back_ = b_.get();
  pending_ = next, has_pending_ = true;
  start_pending();
}

const SceneGraph& GraphPrefetcher::take(const SceneRows& rows) {
  std::unique_lock<std::mutex> lock(mu_);
  if (has_job_ && job_.same(rows)) {
    cv_.wait(lock, [this] { return job_done_; });
    has_job_ = false;
    std::exception_ptr error = error_;
    error_ = nullptr;
    if (!error) {
      std::swap(front_, back_);
      ++prefetched_;
      if (has_pending_ && pending_.same(rows)) has_pending_ = false;
      start_pending();
      return front_->graph();
    }
    // A failed build is redone below, where its error reaches the caller.
  }
  if (has_pending_ && pending_.same(rows)) has_pending_ = false;
  start_pending();
  lock.unlock();
  return front_->build(rows);
}

}  // namespace hpct::smart
