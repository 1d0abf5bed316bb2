// A lane's centre line from its two bounds, resampled alike by arc length and averaged: what
// scenes_import makes of a lanelet2 lanelet (lanelet_map.cpp) and an Argoverse 2 lane segment or
// pedestrian crossing (av2_map.cpp), whose maps give a lane's bounds rather than its centre.
//
// Note [centre line by arc length]
// Two bounds of one lane rarely have the same number of points (an AV2 lane's left bound may have 2
// points where its right one has 11, around a kerb), so point k of one is not opposite point k of
// the other. Both are resampled to the same number of points evenly spaced by arc length (each
// bound's first and last points kept) and the centre line is the pointwise mean: it takes the same
// fraction of each bound's length as opposite, which holds on straight and on evenly curved lanes
// and needs no search for the nearest point of the other bound. The av2 API's compute_midpoint_line
// interpolates the same way; the point count differs: here a point at most every metre of the
// longer bound (scene cutting then takes 10 m pieces of 11 points), there 10 per lane. A bound of one point (AV2's cul-de-sacs) is that point repeated: the centre line then
// runs half way between it and the other bound, as av2's pivot arc does.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace hpct::smart {

using Points = std::vector<std::array<double, 2>>;

// The length of a polyline (the sum of its segments).
double polyline_length(const Points& p);

// `p` (at least one point) resampled to n >= 2 points evenly spaced by arc length, its first and
// last points kept; a single point is repeated.
Points resampled_by_arc_length(const Points& p, std::size_t n);

// The pointwise mean of `left` and `right` resampled alike (Note [centre line by arc length]); the
// two bounds run the same way, the centre line runs as they do. Both need at least one point.
Points centre_line_of(const Points& left, const Points& right);

// `second` turned where it runs against `first` (its first point then nearer the end of `first`):
// bounds stored without a direction (a lanelet's right bound, a crossing's edges) made to run alike.
void run_alike(const Points& first, Points& second);

}  // namespace hpct::smart
