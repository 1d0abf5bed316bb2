// Scenes from recorded tracks (apps/scenes_import, docs/transformer.md): every recording is cut into
// windows of `window` seconds every `stride` seconds; each track is resampled onto the window's
// grid of `step` seconds (linear in position; velocity from the table or the motion; heading from
// the table, else from the motion, held while the agent stands), valid where two samples at most
// `max_gap` apart bracket the step; the scenes are written in trajgen's layout (agent_state,
// agent_valid, agent_type, agent_size, map_polyline, map_type, ragged) with the grid's attributes
// step_seconds, history_seconds and future_seconds, so `model smart` reads them without deck keys.
//
// Note [window alignment]
// Windows start at a recording's first sample and follow every `stride` seconds, or (align_end) end
// at its last sample and precede it every `stride` seconds. Benchmarks cut their recordings so that
// the prediction starts at a fixed step: an Argoverse 2 scenario is 110 steps at 10 Hz, the current
// step the 50th (4.9 s) and 6 s after it; on the 0.5 s token grid the history is 4.5 s (steps 5-50),
// so a 10.5 s window must end at the scenario's end to put the current step where AV2's is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/smart/track_table.hpp"

namespace hpct::smart {

struct ImportOptions {
  double step = 0.1;             // seconds between the scenes' steps (0.5 s must be whole steps)
  double history = 1.0;          // seconds observed (a multiple of 0.5)
  double window = 9.0;           // seconds per scene (history + future, a multiple of 0.5)
  double stride = 4.5;           // seconds between scene starts in a recording
  bool align_end = false;        // windows laid out back from the recording's end (Note [window alignment])
  double max_gap = 0.25;         // seconds between two samples that interpolation bridges
  int other = kOtherType;        // AV2's other objects: dropped (kOtherType) or taken as this type
  std::uint64_t min_agents = 1;  // scenes with fewer agents are left out
};

struct ImportSummary {
  std::uint64_t recordings = 0, scenes = 0, agents = 0, segments = 0, short_recordings = 0;
  std::uint64_t steps = 0, valid_steps = 0;
};

// The scenes of the recordings it is given, a track file's at a time, written to `out` at the end
// (Note [scenes spooled] in scene_import.cpp): memory holds the scenes of one add() call, the rows
// wait in nameless spool files in `out`'s folder, and `out` appears only complete (temp + rename),
// never after an error. The options are checked when it is made.
class SceneWriter {
 public:
  SceneWriter(std::string out, const ImportOptions& options, std::string source);
  ~SceneWriter();
  SceneWriter(const SceneWriter&) = delete;
  SceneWriter& operator=(const SceneWriter&) = delete;

  // Cuts the recordings into scenes and appends them (in order) to the scenes so far.
  void add(const std::vector<Recording>& recordings);
  const ImportSummary& summary() const { return sum_; }
  // Writes `out` (an Error when no scene has an agent) and returns the counts over all recordings.
  ImportSummary finish();

 private:
  struct Spools;
  std::string out_, source_;
  ImportOptions o_;
  std::size_t steps_ = 0;  // per scene
  ImportSummary sum_;
  std::vector<long long> agents_{0}, segments_{0};  // the ragged offsets: one per scene, kept in memory
  std::unique_ptr<Spools> spools_;
};

}  // namespace hpct::smart
