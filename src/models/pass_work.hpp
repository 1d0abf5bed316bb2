// Work that the program's run loop drives as passes of rounds (RunServices::run_passes): an
// ensemble's member trainings are the passes, a tree member's boosting rounds the rounds (a network
// member's training is one round). The loop (train/pass_loop.hpp) owns what every run shares: the
// checkpoint cadence, the stop agreement after every round and pass, the write-and-agree of a
// checkpoint, resume, the heartbeat and the "stopped by signal" line. The work owns what a pass
// and a round do, and the state a checkpoint keeps of them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hpct {

class Heartbeat;

// A checkpoint's state as named float64 arrays (its `extra/<name>` datasets).
using StateArrays = std::map<std::string, std::vector<double>>;

// Which checkpoints the loop writes besides those of a stop signal and the minutes clock
// (checkpoint_every_minutes): after every `every_rounds` rounds of a pass that can continue
// mid-way, and after every `every_passes` passes (0: off). The last pass always ends with one.
struct PassCadence {
  std::uint64_t every_rounds = 0, every_passes = 0;
};

class PassWork {
 public:
  virtual ~PassWork() = default;
  virtual std::uint64_t passes() const = 0;
  // "member gbm, fold 2 of 3": log lines and the stop line.
  virtual std::string pass_name(std::uint64_t pass) const = 0;
  // Collective: starts pass `pass`, from its beginning (`mid` null) or from the state a checkpoint
  // written inside it holds (mid_state()'s arrays among the checkpoint's).
  virtual void begin(std::uint64_t pass, const StateArrays* mid) = 0;
  // Rounds are left in the pass in progress; rounds done in it (resumed ones included).
  virtual bool more() const = 0;
  virtual std::uint64_t rounds() const = 0;
  // Collective: one round. A round that agrees on stop signals itself (a network's optimizer steps)
  // returns the signal that ended it early (the same on every rank), else 0.
  virtual int round(Heartbeat* heartbeat) = 0;
  // Collective: finishes the pass in progress (its model written, what the run keeps of it kept).
  virtual void end() = 0;
  // Whether the pass in progress can continue mid-way from a checkpoint (mid_state()); a pass that
  // cannot starts over when a run resumes inside it.
  virtual bool resumable_mid_pass() const = 0;
  // On rank 0 (which writes checkpoints): the state of the finished passes [0, finished), and of
  // the pass in progress after its rounds so far. Names must not clash.
  virtual StateArrays state(std::uint64_t finished) const = 0;
  virtual StateArrays mid_state() const = 0;
  // Collective, when a run resumes: passes [0, finished) as `state` (a checkpoint's arrays, read
  // from `path`, named in errors) records them.
  virtual void restore(std::uint64_t finished, const StateArrays& state, const std::string& path) = 0;
};

}  // namespace hpct
