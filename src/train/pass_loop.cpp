// Passes of rounds on the run loop, with resume (see pass_loop.hpp).
#include "train/pass_loop.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>

#include "comm/watchdog.hpp"
#include "core/cli_number.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/signals.hpp"
#include "core/trace.hpp"
#include "train/checkpoint.hpp"
#include "train/resume.hpp"
#include "train/run_loop.hpp"

namespace hpct {

namespace {

// Note [pass position]: a checkpoint of passes records `extra/pass_position` = {passes finished,
// rounds of the pass in progress (0: it starts over)} beside the work's own arrays. Its number (the
// checkpoint's global_step) counts every round and every pass end of the run, so it grows with each
// checkpoint and the newest is the furthest.
constexpr const char* kPosition = "pass_position";

// Tests only: HPCTRAIN_TEST_STOP_AT=<rank>:<n> makes that rank send SIGUSR1 to itself when the
// position reaches n (after a round or a pass end), a signal only one rank sees (cli_ensemble_resume);
// it is seen before the next round (raise_stop_signal waits for the thread that receives it).
struct TestStop {
  long long at = -1;
  explicit TestStop(int rank) {
    const char* env = std::getenv("HPCTRAIN_TEST_STOP_AT");
    const char* colon = env ? std::strchr(env, ':') : nullptr;
    long long stop_rank = -1, stop_at = -1;
    if (env && leading_integer(env, stop_rank, ':') && stop_rank == rank && leading_integer(colon + 1, stop_at))
      at = stop_at;
  }
  void reached(std::uint64_t position) const {
    if (at >= 0 && position == static_cast<std::uint64_t>(at)) raise_stop_signal(SIGUSR1);
  }
};

struct Resumed {
  std::string path;
  std::uint64_t finished = 0, rounds = 0, position = 0;
  StateArrays state;
};

Resumed resume(const deck::Deck& deck, const Comm& comm, PassWork& work) {
  Resumed r;
  r.path = choose_checkpoint(deck, comm);
  if (r.path.empty()) return r;
  comm.run_agreed([&] {
    CheckpointState st = inspect_checkpoint(r.path);
    check_resume_deck(deck, st);  // names a key that may not change (the model among them)
    const auto it = st.extra.find(kPosition);
    if (it == st.extra.end() || it->second.size() != 2 || it->second[0] > static_cast<double>(work.passes()))
      throw Error(r.path + ": not a checkpoint of this run's passes (extra/" + kPosition + ")",
                  ExitCode::bad_input);
    r.finished = static_cast<std::uint64_t>(it->second[0]);
    r.rounds = static_cast<std::uint64_t>(it->second[1]);
    r.position = st.global_step;
    r.state = std::move(st.extra);
  });
  work.restore(r.finished, r.state, r.path);
  Log::info(strf("resume: from %s (%llu of %llu passes done%s)", r.path.c_str(), (unsigned long long)r.finished,
                 (unsigned long long)work.passes(),
                 r.rounds > 0 ? strf("; %s continues after round %llu", work.pass_name(r.finished).c_str(),
                                     (unsigned long long)r.rounds)
                                    .c_str()
                              : ""));
  return r;
}

}  // namespace

int run_passes(const deck::Deck& deck, const Comm& comm, PassWork& work, const PassCadence& cadence) {
  const Resumed resumed = resume(deck, comm, work);
  ProgramGuard guard(comm, deck.get_real("watchdog_timeout"));
  const std::string dir = deck.get_string("checkpoint_dir");
  RunLoop loop(comm,
               Cadence(dir, cadence.every_rounds, cadence.every_passes, deck.get_real("checkpoint_every_minutes")));
  loop.set_heartbeat(&guard.heartbeat());
  WatchedAllreduce agreement(comm, deck.get_real("watchdog_timeout"));
  agreement.describe("the stop agreement after round");
  const int keep = static_cast<int>(deck.get_int("checkpoint_keep"));
  const TestStop test_stop(comm.rank());
  std::uint64_t position = resumed.position;  // Note [pass position]

  // Collective: a checkpoint of the passes before `finished`, and of the pass in progress when `mid`.
  auto checkpoint = [&](std::uint64_t finished, bool mid) {
    trace::Scope t("checkpoint");
    loop.beat("checkpoint");
    return loop.checkpoint([&] {
      CheckpointState st = run_state(deck, comm.size());
      st.global_step = position;
      st.extra = work.state(finished);
      if (mid)
        for (auto& [name, values] : work.mid_state()) st.extra[name] = std::move(values);
      st.extra[kPosition] = {static_cast<double>(finished), mid ? static_cast<double>(work.rounds()) : 0.0};
      return write_state_checkpoint(dir, keep, st);
    });
  };
  auto agree = [&] {
    test_stop.reached(position);
    return loop.agree_flags(loop.local_flags(), agreement, position);
  };

  for (std::uint64_t pass = resumed.finished; pass < work.passes(); ++pass) {
    trace::Scope pass_trace("pass");
    loop.beat("starting a pass");
    const bool mid = pass == resumed.finished && resumed.rounds > 0;
    work.begin(pass, mid ? &resumed.state : nullptr);
    int signal = 0;
    while (work.more()) {
      loop.beat("a round");
      signal = work.round(&guard.heartbeat());
      ++position;
      if (signal != 0) {  // agreed inside the round, which starts over on resume
        if (loop.checkpoints()) checkpoint(pass, false);
        break;
      }
      if (!work.more()) break;  // the end of the pass decides
      const RoundFlags agreed = agree();
      if (work.resumable_mid_pass() && loop.checkpoint_due(work.rounds(), agreed, false)) checkpoint(pass, true);
      else if (agreed.stop && loop.checkpoints()) checkpoint(pass, false);
      if (agreed.stop) {
        signal = RunLoop::stop_signal_seen();
        break;
      }
    }
    if (signal != 0)
      return RunLoop::stopped(signal,
                              "in " + work.pass_name(pass) +
                                  (work.rounds() > 0 ? strf(" after round %llu", (unsigned long long)work.rounds())
                                                     : std::string()),
                              loop.last_checkpoint());
    work.end();
    ++position;
    // After the last pass the run finishes (its results follow): a stop signal is not waited on.
    const bool last = pass + 1 == work.passes();
    const RoundFlags agreed = agree();
    if (loop.checkpoint_due_after_pass(pass, work.rounds(), agreed, last)) checkpoint(pass + 1, false);
    if (agreed.stop && !last)
      return RunLoop::stopped(RunLoop::stop_signal_seen(), "after " + work.pass_name(pass), loop.last_checkpoint());
  }
  return 0;
}

}  // namespace hpct
