// The node's progress board (comm/progress_board.hpp): a peer whose heartbeat thread went silent is
// named as stopped, one alive but without progress for long as stalled (Note [stalled peers]), or
// as waiting when it waits in a collective (Note [waiting in a collective]), each with its last
// place; a peer progressing, or this rank itself, is never named.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "comm/comm.hpp"
#include "comm/progress_board.hpp"
#include "core/log.hpp"

using namespace hpct;

namespace {
// What board.stalled / board.stopped should say of every rank but this one (all on this node).
// (of_rank: "" leaves a rank out.)
std::string expected(const Comm& comm, const std::function<std::string(int)>& of_rank) {
  std::string out;
  for (int r = 0; r < comm.size(); ++r) {
    const std::string said = r != comm.rank() ? of_rank(r) : std::string();
    if (!said.empty()) out += (out.empty() ? "" : "; ") + said;
  }
  return out;
}
}  // namespace

// Times are made up (the board takes them as given): every rank ticked at 100 s and last progressed
// at 60 s, opening a file of its own.
TEST(ProgressBoard, NamesThePeersAliveButStalledAndThoseStopped) {
  const Comm comm;
  ProgressBoard board(comm);
  board.progress(60.0, strf("opening data: r%d.nc", comm.rank()).c_str());
  board.tick(100.0);
  comm.barrier();  // every slot written before any is read
  // At 101 s: alive (ticked 1 s ago), 41 s without progress. This rank waited 60 s: named.
  EXPECT_EQ(board.stalled(101.0, 60.0), expected(comm, [](int r) {
              return strf(
                  "rank %d is alive but has made no progress for 41 s (its last progress: opening data: r%d.nc)", r,
                  r);
            }));
  EXPECT_EQ(board.stopped(101.0), "");
  // This rank waited 90 s: 41 s is no more than half of it, so the peers count as progressing.
  EXPECT_EQ(board.stalled(101.0, 90.0), "");
  // At 110 s: no tick for 10 s, so stopped, and no longer stalled (named once, as stopped).
  EXPECT_EQ(board.stopped(110.0), expected(comm, [](int r) {
              return strf(
                  "rank %d stopped (dead or frozen: no sign of life for 10 s; its last progress: opening data: "
                  "r%d.nc, 50 s ago)",
                  r, r);
            }));
  EXPECT_EQ(board.stalled(110.0, 60.0), "");
  // Rank 1 waits in a collective since 70 s: said so, after the ranks stuck elsewhere.
  comm.barrier();  // every rank has read the board above
  if (comm.rank() == 1) board.waiting(70.0);
  comm.barrier();
  std::string stuck_then_waiting = expected(comm, [](int r) {
    return r == 1
               ? std::string()
               : strf(
                     "rank %d is alive but has made no progress for 41 s (its last progress: opening data: r%d.nc)",
                     r, r);
  });
  if (comm.size() > 1 && comm.rank() != 1) {
    stuck_then_waiting += stuck_then_waiting.empty() ? "" : "; ";
    stuck_then_waiting +=
        "rank 1 is waiting in a collective (for 31 s; its last progress: opening data: r1.nc, 41 s ago)";
  }
  EXPECT_EQ(board.stalled(101.0, 60.0), stuck_then_waiting);
  comm.barrier();  // no rank unmaps its board while another still reads
}
