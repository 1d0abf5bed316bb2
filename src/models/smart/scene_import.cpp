// Recorded tracks -> scenes on the model's grid (see scene_import.hpp).
#include "models/smart/scene_import.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <unistd.h>

#include "core/error.hpp"
#include "core/real_text.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "io/spool_file.hpp"
#include "models/smart/motion_tokens.hpp"
#include "models/smart/road_network.hpp"

namespace hpct::smart {

namespace {

constexpr double kTimeEps = 1e-6;       // s: times closer than this are one
constexpr double kStandingSpeed = 0.3;  // m/s: slower, the heading of the motion is noise

// A track's state at time t: false when no two samples at most max_gap apart bracket it.
bool state_at(const Track& tr, double t, double max_gap, float* out, bool& has_heading) {
  const auto& s = tr.samples;
  auto it = std::lower_bound(s.begin(), s.end(), t - kTimeEps,
                             [](const TrackSample& a, double v) { return a.t < v; });
  if (it == s.end()) return false;
  std::size_t j = static_cast<std::size_t>(it - s.begin());
  if (std::abs(s[j].t - t) > kTimeEps) {  // strictly between samples j - 1 and j
    if (j == 0 || s[j].t - s[j - 1].t > max_gap + kTimeEps) return false;
    --j;
  } else if ((j + 1 == s.size() || s[j + 1].t - s[j].t > max_gap + kTimeEps) && j > 0 &&
             s[j].t - s[j - 1].t <= max_gap + kTimeEps) {
    --j;  // the last sample (of the track, or before a gap): the motion of the segment ending there
  }
  const TrackSample& a = s[j];
  const TrackSample& b = j + 1 < s.size() ? s[j + 1] : s[j];
  const double span = b.t - a.t, w = span > 0 ? std::clamp((t - a.t) / span, 0.0, 1.0) : 0.0;
  const bool segment = span > 0 && span <= max_gap + kTimeEps;
  out[0] = static_cast<float>(a.x + w * (b.x - a.x)), out[1] = static_cast<float>(a.y + w * (b.y - a.y));
  double vx = 0, vy = 0;
  if (a.has_velocity && b.has_velocity) vx = a.vx + w * (b.vx - a.vx), vy = a.vy + w * (b.vy - a.vy);
  else if (segment) vx = (b.x - a.x) / span, vy = (b.y - a.y) / span;
  out[3] = static_cast<float>(vx), out[4] = static_cast<float>(vy);
  has_heading = true;
  if (a.has_heading && b.has_heading)
    out[2] = static_cast<float>(wrap_angle(a.heading + w * wrap_angle(b.heading - a.heading)));
  else if (std::hypot(vx, vy) >= kStandingSpeed) out[2] = static_cast<float>(std::atan2(vy, vx));
  else has_heading = false;  // filled from the neighbours by the caller
  return true;
}

float default_length(int type) { return type == 0 ? 4.5f : type == 2 ? 1.8f : 0.6f; }
float default_width(int type) { return type == 0 ? 1.9f : type == 2 ? 0.7f : 0.6f; }


}  // namespace

// Note [scenes spooled]
// The scenes of Argoverse 2's train split are ~25 GB, so they cannot wait in memory for the end;
// neither can the output be written as it goes in today's layout, whose contiguous datasets need
// their sizes when created. Each add() cuts one track file's scenes in memory and appends their
// rows to one spool file per dataset, in `out`'s folder (the file system that will hold the scenes;
// the import needs twice their size there until it ends) but with no name there, so that a killed
// import leaves none behind (Note [nameless spool] in io/spool_file.cpp); only the ragged offsets
// (8 bytes a scene) stay in memory. finish() then writes each dataset from its spool in pieces
// (h5::write_in_pieces): the file equals, byte for byte, what writing the whole arrays at once
// gave, for every input. Extendible (chunked) datasets would have saved the second copy on disk but
// changed the file's layout and bytes for every reader.
struct SceneWriter::Spools {
  explicit Spools(const std::string& stem)
      : state(stem + ".agent_state"),
        valid(stem + ".agent_valid"),
        type(stem + ".agent_type"),
        size(stem + ".agent_size"),
        poly(stem + ".map_polyline"),
        map_type(stem + ".map_type") {}
  io::SpoolFile state, valid, type, size, poly, map_type;
};

namespace {

// A ragged field from its spool: `name` [offsets.back(), element_dims...] and `name`_offsets, as
// h5::write_ragged writes them.
template <class T>
void write_spooled(const h5::File& f, const std::string& name, std::vector<std::uint64_t> element_dims,
                   const std::vector<long long>& offsets, io::SpoolFile& spool) {
  std::uint64_t per_row = sizeof(T);
  for (const std::uint64_t d : element_dims) per_row *= d;
  element_dims.insert(element_dims.begin(), static_cast<std::uint64_t>(offsets.back()));
  h5::write_in_pieces<T>(f, name, element_dims, [&](T* out, std::uint64_t rows) {
    spool.read(out, static_cast<std::size_t>(rows * per_row));
  });
  h5::write(f, name + "_offsets", {static_cast<std::uint64_t>(offsets.size())}, offsets.data());
}

}  // namespace

SceneWriter::SceneWriter(std::string out, const ImportOptions& options, std::string source)
    : out_(std::move(out)), source_(std::move(source)), o_(options) {
  const double shift = kTokenSeconds / o_.step;
  if (!(o_.step > 0) || std::abs(shift - std::round(shift)) > 1e-6)
    throw Error("--step " + real_text(o_.step) + " s: 0.5 s must be a whole number of steps", ExitCode::bad_input);
  for (const auto& [v, name] : {std::make_pair(o_.history, "--history"), std::make_pair(o_.window, "--window")}) {
    const double n = v / kTokenSeconds;
    if (n < 1 - 1e-9 || std::abs(n - std::round(n)) > 1e-6)
      throw Error(std::string(name) + " " + std::to_string(v) + " s must be a positive multiple of 0.5 s",
                  ExitCode::bad_input);
  }
  if (o_.window <= o_.history + 1e-9)
    throw Error("--window must exceed --history (the future is what is predicted)", ExitCode::bad_input);
  if (!(o_.stride > 0)) throw Error("--stride must be positive", ExitCode::bad_input);
  steps_ = static_cast<std::size_t>(std::lround(o_.window / o_.step)) + 1;
  spools_ = std::make_unique<Spools>(temporary_path(out_, static_cast<long>(getpid())) + ".spool");
}

SceneWriter::~SceneWriter() = default;

void SceneWriter::add(const std::vector<Recording>& recordings) {
  std::vector<float> state, size, poly;  // this call's scenes, appended to the spools at the end
  std::vector<std::int32_t> valid;
  std::vector<long long> type, map_type;
  const long long segments_before = segments_.back();  // map_type holds this call's segments alone
  for (const Recording& r : recordings) {
    ++sum_.recordings;
    double t0 = 1e300, t1 = -1e300;
    for (const Track& tr : r.tracks)
      if (!tr.samples.empty()) t0 = std::min(t0, tr.samples.front().t), t1 = std::max(t1, tr.samples.back().t);
    // The map once per recording, cut as trajgen's (10 m pieces of 11 points).
    scenes::RoadNetwork net;
    for (const Polyline& p : r.map) {
      scenes::Lane lane;
      lane.kind = static_cast<scenes::LaneKind>(p.type);
      for (std::size_t i = 0; i + 1 < p.xy.size(); i += 2) {
        const scenes::Vec2 v{p.xy[i], p.xy[i + 1]};
        const double d = lane.pts.empty() ? 0.0 : std::hypot(v.x - lane.pts.back().x, v.y - lane.pts.back().y);
        if (!lane.pts.empty() && d == 0) continue;
        lane.cum.push_back(lane.cum.empty() ? 0.0 : lane.cum.back() + d), lane.pts.push_back(v);
      }
      if (lane.pts.size() >= 2) net.lanes.push_back(lane);
    }
    std::vector<float> map_xy;
    std::vector<long long> map_kinds;
    scenes::map_segments(net, 10.0, 11, map_xy, map_kinds);
    if (t1 - t0 < o_.window - kTimeEps) {
      ++sum_.short_recordings;
      continue;
    }
    // Note [window alignment]: from the first sample on, or back from the last.
    const double span_windows = std::floor((t1 - t0 - o_.window + kTimeEps) / o_.stride) + 1;
    if (!(span_windows < 0x1p53))  // whole numbers of windows stay exact in a double
      throw Error(source_ + ": scenario '" + r.scenario + "' spans " + real_text(t1 - t0) + " s (" +
                      real_text(span_windows) + " windows of --stride " + real_text(o_.stride) +
                      " s): are its time steps at --rate?",
                  ExitCode::bad_input);
    const auto windows = static_cast<std::size_t>(span_windows);
    std::vector<double> times;  // the recording's sample times, to pass over windows without any
    for (const Track& tr : r.tracks)
      for (const TrackSample& ts : tr.samples) times.push_back(ts.t);
    std::sort(times.begin(), times.end());
    for (std::size_t w = 0; w < windows; ++w) {
      const double k = static_cast<double>(o_.align_end ? windows - 1 - w : w);
      const double start = o_.align_end ? t1 - o_.window - k * o_.stride : t0 + k * o_.stride;
      // Note [windows without samples]: a window no sample reaches (within max_gap of its ends) has
      // no valid step and so no agent (min_agents >= 1 leaves it out); a long gap in a recording
      // (a stray time step) is passed over in one go, not window by window.
      const double reach_end = start + o_.window + o_.max_gap + kTimeEps;
      const auto next = std::lower_bound(times.begin(), times.end(), start - o_.max_gap - kTimeEps);
      if (o_.min_agents >= 1 && (next == times.end() || *next > reach_end)) {
        if (next == times.end()) break;
        const double skip = std::floor((*next - reach_end) / o_.stride);  // windows that end before *next
        if (skip > 1) w += static_cast<std::size_t>(std::min(skip - 1, static_cast<double>(windows - w)));
        continue;
      }
      std::vector<float> st;
      std::vector<std::int32_t> vd;
      std::vector<long long> ty;
      double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
      for (const Track& tr : r.tracks) {
        int kind = tr.type == kOtherType ? o_.other : tr.type;
        if (kind == kOtherType) continue;
        std::vector<float> s(steps_ * 5, 0.0f);
        std::vector<std::int32_t> v(steps_, 0);
        std::vector<char> heading(steps_, 0);
        std::size_t seen = 0;
        for (std::size_t i = 0; i < steps_; ++i) {
          bool h = false;
          if (state_at(tr, start + static_cast<double>(i) * o_.step, o_.max_gap, &s[i * 5], h))
            v[i] = 1, heading[i] = h, ++seen;
        }
        if (seen == 0) continue;
        // Heading while standing: the last known one, else the next (else 0).
        for (int pass = 0; pass < 2; ++pass) {
          float last = 0;
          bool have = false;
          for (std::size_t k = 0; k < steps_; ++k) {
            const std::size_t i = pass == 0 ? k : steps_ - 1 - k;
            if (!v[i]) {
              have = false;
              continue;
            }
            if (heading[i]) last = s[i * 5 + 2], have = true;
            else if (have) s[i * 5 + 2] = last, heading[i] = 1;
          }
        }
        for (std::size_t i = 0; i < steps_; ++i)
          if (v[i])
            for (int c = 0; c < 2; ++c)
              lo[c] = std::min(lo[c], double(s[i * 5 + c])), hi[c] = std::max(hi[c], double(s[i * 5 + c]));
        st.insert(st.end(), s.begin(), s.end()), vd.insert(vd.end(), v.begin(), v.end()), ty.push_back(kind);
        sum_.steps += steps_, sum_.valid_steps += seen;
      }
      if (ty.size() < o_.min_agents) continue;
      state.insert(state.end(), st.begin(), st.end()), valid.insert(valid.end(), vd.begin(), vd.end());
      for (long long k : ty) {
        type.push_back(k);
        size.push_back(default_length(static_cast<int>(k))), size.push_back(default_width(static_cast<int>(k)));
      }
      agents_.push_back(agents_.back() + static_cast<long long>(ty.size()));
      // Map pieces near the scene's agents (within 30 m of their bounding box).
      for (std::size_t m = 0; m < map_kinds.size(); ++m) {
        const float* p = &map_xy[m * 22];
        bool near = false;
        for (int i = 0; i < 11 && !near; ++i)
          near = p[2 * i] > lo[0] - 30 && p[2 * i] < hi[0] + 30 && p[2 * i + 1] > lo[1] - 30 &&
                 p[2 * i + 1] < hi[1] + 30;
        if (near) poly.insert(poly.end(), p, p + 22), map_type.push_back(map_kinds[m]);
      }
      segments_.push_back(segments_before + static_cast<long long>(map_type.size()));
      ++sum_.scenes;
    }
  }
  Spools& sp = *spools_;
  sp.state.append_values(state.data(), state.size()), sp.valid.append_values(valid.data(), valid.size());
  sp.type.append_values(type.data(), type.size()), sp.size.append_values(size.data(), size.size());
  sp.poly.append_values(poly.data(), poly.size()), sp.map_type.append_values(map_type.data(), map_type.size());
}

ImportSummary SceneWriter::finish() {
  if (sum_.scenes == 0)
    throw Error(source_ + ": no scene of " + std::to_string(o_.window) + " s with an agent (" +
                    std::to_string(sum_.short_recordings) + " of " + std::to_string(sum_.recordings) +
                    " recordings are shorter than the window; check --rate, --window)",
                ExitCode::bad_input);
  sum_.agents = static_cast<std::uint64_t>(agents_.back()),
  sum_.segments = static_cast<std::uint64_t>(segments_.back());
  Spools& sp = *spools_;
  write_atomically(out_, [&](const std::string& tmp) {
    const h5::File f = h5::File::create(tmp);
    write_spooled<float>(f, "agent_state", {steps_, 5}, agents_, sp.state);
    write_spooled<std::int32_t>(f, "agent_valid", {steps_}, agents_, sp.valid);
    write_spooled<long long>(f, "agent_type", {}, agents_, sp.type);
    write_spooled<float>(f, "agent_size", {2}, agents_, sp.size);
    write_spooled<float>(f, "map_polyline", {11, 2}, segments_, sp.poly);
    write_spooled<long long>(f, "map_type", {}, segments_, sp.map_type);
    h5::write_attr(f, "/", "generator", std::string("scenes_import (docs/transformer.md)"));
    h5::write_attr(f, "/", "source", source_);
    h5::write_attr(f, "/", "step_seconds", o_.step);
    h5::write_attr(f, "/", "history_seconds", o_.history);
    h5::write_attr(f, "/", "future_seconds", o_.window - o_.history);
    h5::write_attr(f, "/", "history_steps", static_cast<long long>(std::lround(o_.history / o_.step)) + 1);
  });
  spools_.reset();  // the spool files go now, not when the caller drops the writer
  return sum_;
}

}  // namespace hpct::smart
