// The trace recorder: file naming per rank, nested scopes on the timeline inside their parents,
// nothing recorded while off, and a full buffer that drops and counts instead of growing.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/timer.hpp"
#include "core/trace.hpp"

namespace hpct {
namespace {

struct TraceEvent {
  std::string name;
  long long ts_ns, dur_ns;  // exact: the file prints microseconds with three decimals
};

long long to_ns(const std::string& us) {
  const auto dot = us.find('.');
  return std::stoll(us.substr(0, dot)) * 1000 + std::stoll(us.substr(dot + 1));
}

std::vector<TraceEvent> read_events(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const std::regex event(
      R"re("name": "([a-z_]+)", "ph": "X", "ts": ([0-9]+\.[0-9]{3}), "dur": ([0-9]+\.[0-9]{3}))re");
  std::vector<TraceEvent> out;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), event); it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1], to_ns((*it)[2]), to_ns((*it)[3])});
  return out;
}

bool inside(const TraceEvent& child, const TraceEvent& parent) {
  return child.ts_ns >= parent.ts_ns && child.ts_ns + child.dur_ns <= parent.ts_ns + parent.dur_ns;
}

TEST(Trace, RankPathSubstitutesOrInsertsTheRank) {
  EXPECT_EQ(trace::rank_path("runs/t.%r.json", 3), "runs/t.3.json");
  EXPECT_EQ(trace::rank_path("runs/trace.json", 1), "runs/trace.rank1.json");
  EXPECT_EQ(trace::rank_path("runs.d/trace", 0), "runs.d/trace.rank0");
  EXPECT_EQ(trace::rank_path(".trace", 2), ".trace.rank2");
}

TEST(Trace, NestedScopesLieInsideTheirParents) {
  { trace::Scope off("before_start"); }  // not recording yet: leaves no event
  ASSERT_EQ(trace::start("scratch_trace_unit_%r.json", 5), "");
  {
    trace::Scope step("step");
    double bucket = 0;
    {
      ScopedTime t(bucket, "forward_backward");
      trace::Scope inner("forward");
    }
    ScopedTime t(bucket, "allreduce");
  }
  trace::finish();
  { trace::Scope after("after_finish"); }
  const auto events = read_events("scratch_trace_unit_5.json");
  ASSERT_EQ(events.size(), 4u);
  auto find = [&](const std::string& name) {
    for (const auto& e : events)
      if (e.name == name) return e;
    ADD_FAILURE() << "no event " << name;
    return TraceEvent{};
  };
  EXPECT_TRUE(inside(find("forward"), find("forward_backward")));
  EXPECT_TRUE(inside(find("forward_backward"), find("step")));
  EXPECT_TRUE(inside(find("allreduce"), find("step")));
  EXPECT_LE(find("forward_backward").ts_ns + find("forward_backward").dur_ns, find("allreduce").ts_ns);
  std::ifstream in("scratch_trace_unit_5.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"pid\": 5"), std::string::npos);
  EXPECT_NE(text.str().find("\"name\": \"rank 5\""), std::string::npos);
}

TEST(Trace, AFullBufferDropsAndCounts) {
  ASSERT_EQ(trace::start("scratch_trace_full.json", 0, 4), "");
  for (int i = 0; i < 10; ++i) trace::Scope s("phase");
  EXPECT_EQ(trace::dropped_events(), 6u);
  trace::finish();
  EXPECT_EQ(read_events("scratch_trace_full.rank0.json").size(), 4u);
}

TEST(Trace, AnUncreatableFileIsReportedAtStart) {
  EXPECT_NE(trace::start("/proc/no/such/dir/t.json", 0), "");
  EXPECT_FALSE(trace::enabled());
}

}  // namespace
}  // namespace hpct
