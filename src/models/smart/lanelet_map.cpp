// Lanelet2 maps read as centre lines (lanelet_map.hpp): pugixml for the XML, PROJ's UTM (the
// projection of lanelet2's UtmProjector) for latitude/longitude nodes.
#include "models/smart/lanelet_map.hpp"

#include <proj.h>

#include <pugixml.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "models/smart/centre_line.hpp"

namespace hpct::smart {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error(path + ": " + why, ExitCode::bad_input);
}

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

std::string tag(const pugi::xml_node& element, const char* key) {
  for (const pugi::xml_node t : element.children("tag"))
    if (std::string(t.attribute("k").value()) == key) return t.attribute("v").value();
  return "";
}

// Note [lanelet2 local frame]: lanelet2 writes nodes in latitude/longitude through its UtmProjector:
// local = UTM(point) - UTM(origin), every point in the origin's standard UTM zone (GeographicLib's,
// with Norway's and Svalbard's exceptions), so the origin the map was written with must be given.
// The same transverse Mercator is PROJ's `utm` here; one projection for all points, so the
// hemispheres' false northing cancels in the difference. INTERACTION's maps use origin 0, 0 and
// ship an .osm_xy twin with x/y attributes, and Autoware's carry local_x / local_y tags: those are
// read as they are.
class LocalFrame {
 public:
  LocalFrame(const MapOrigin& o, const std::string& path) {
    if (!o.given) return;
    if (o.lat < -80 || o.lat >= 84) refuse(path, "--map-origin: a polar origin (UPS) is not read");
    int zone = static_cast<int>(std::floor((o.lon + 180) / 6)) % 60 + 1;
    if (o.lat >= 56 && o.lat < 64 && o.lon >= 3 && o.lon < 12) zone = 32;
    if (o.lat >= 72 && o.lon >= 0 && o.lon < 42) zone = o.lon < 9 ? 31 : o.lon < 21 ? 33 : o.lon < 33 ? 35 : 37;
    ctx_ = proj_context_create();
    proj_log_level(ctx_, PJ_LOG_NONE);
    pj_ = proj_create(ctx_, ("+proj=utm +zone=" + std::to_string(zone) + " +ellps=WGS84").c_str());
    if (!pj_) refuse(path, "PROJ cannot make the UTM projection of zone " + std::to_string(zone));
    origin_ = project(o.lat, o.lon);
  }
  ~LocalFrame() {
    if (pj_) proj_destroy(pj_);
    if (ctx_) proj_context_destroy(ctx_);
  }
  LocalFrame(const LocalFrame&) = delete;
  LocalFrame& operator=(const LocalFrame&) = delete;
  std::array<double, 2> operator()(double lat, double lon) const {
    const std::array<double, 2> p = project(lat, lon);
    return {p[0] - origin_[0], p[1] - origin_[1]};
  }

 private:
  std::array<double, 2> project(double lat, double lon) const {
    const PJ_COORD c = proj_trans(pj_, PJ_FWD, proj_coord(proj_torad(lon), proj_torad(lat), 0, 0));
    return {c.enu.e, c.enu.n};
  }
  PJ_CONTEXT* ctx_ = nullptr;
  PJ* pj_ = nullptr;
  std::array<double, 2> origin_{};
};

// Note [lanelet centre line]: a lanelet is driven the way that has its left bound on the left, as
// lanelet2 reads it; the order its ways are stored in does not say (INTERACTION's maps store 28 of
// the 43 driven lanes of DR_DEU_Roundabout_OF against the traffic). The right bound is first turned
// to run as the left one (its first point then nearer the left bound's first); the centre line is
// the mean of the two resampled alike by arc length (Note [centre line by arc length] in
// centre_line.hpp), turned where the left bound lies on its right.
Points centre_line(const Points& left, Points right) {
  run_alike(left, right);
  Points c = centre_line_of(left, right);
  const Points l = resampled_by_arc_length(left, c.size());
  // The left bound on the left: summed over the line, the direction crossed with (left - centre).
  double side = 0;
  for (std::size_t k = 0; k + 1 < c.size(); ++k)
    side += (c[k + 1][0] - c[k][0]) * (l[k][1] - c[k][1]) - (c[k + 1][1] - c[k][1]) * (l[k][0] - c[k][0]);
  if (side < 0) std::reverse(c.begin(), c.end());
  return c;
}

// Our map type of a lanelet subtype (lanelet2's names), or -1 to leave it out; `both_ways` is
// lanelet2's one_way default for it.
int lanelet_type(const std::string& subtype, bool& both_ways) {
  both_ways = false;
  for (const char* s : {"road", "highway", "play_street", "emergency_lane", "bus_lane", ""})
    if (subtype == s) return 0;
  if (subtype == "bicycle_lane") return 1;
  both_ways = true;
  for (const char* s : {"crosswalk", "walkway", "stairs"})
    if (subtype == s) return 2;
  return -1;
}

}  // namespace

bool is_lanelet_map(const std::string& path) { return ends_with(path, ".osm") || ends_with(path, ".osm_xy"); }

std::vector<Polyline> read_lanelet_map(const std::string& path, const MapOrigin& origin) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_file(path.c_str());
  if (!parsed) refuse(path, "XML error at byte " + std::to_string(parsed.offset) + ": " + parsed.description());
  const pugi::xml_node root = doc.document_element();
  if (std::string(root.name()) != "osm" && std::string(root.name()) != "osm_xy")
    refuse(path, std::string("the root element is <") + root.name() + ">, not <osm> (a lanelet2 map)");
  const LocalFrame frame(origin, path);
  std::map<long long, std::array<double, 2>> nodes;
  for (const pugi::xml_node n : root.children("node")) {
    const long long id = n.attribute("id").as_llong();
    const std::string where = "node " + std::to_string(id);
    if (n.attribute("x") && n.attribute("y")) {
      nodes[id] = {n.attribute("x").as_double(), n.attribute("y").as_double()};
    } else if (!tag(n, "local_x").empty() && !tag(n, "local_y").empty()) {
      nodes[id] = {std::stod(tag(n, "local_x")), std::stod(tag(n, "local_y"))};
    } else if (n.attribute("lat") && n.attribute("lon")) {
      if (!origin.given)
        refuse(path, where +
                         " is in latitude/longitude: give the origin the map was written with, --map-origin "
                         "LAT,LON (lanelet2's UtmProjector origin; INTERACTION's maps: 0,0)");
      nodes[id] = frame(n.attribute("lat").as_double(), n.attribute("lon").as_double());
    } else {
      refuse(path, where + " has no x/y, local_x/local_y or lat/lon");
    }
  }
  std::map<long long, Points> ways;
  for (const pugi::xml_node w : root.children("way")) {
    Points& p = ways[w.attribute("id").as_llong()];
    for (const pugi::xml_node nd : w.children("nd")) {
      const auto it = nodes.find(nd.attribute("ref").as_llong());
      if (it == nodes.end())
        refuse(path, "way " + std::string(w.attribute("id").value()) + " names node " +
                         nd.attribute("ref").value() + ", which the map lacks");
      p.push_back(it->second);
    }
  }
  std::vector<Polyline> lines;
  std::size_t left_out = 0;
  for (const pugi::xml_node r : root.children("relation")) {
    if (tag(r, "type") != "lanelet") continue;
    bool both_ways = false;
    const int type = lanelet_type(tag(r, "subtype"), both_ways);
    const std::string one_way = tag(r, "one_way");
    if (one_way == "yes") both_ways = false;
    if (one_way == "no") both_ways = true;
    const std::string where = "lanelet " + std::string(r.attribute("id").value());
    const Points* bound[2] = {nullptr, nullptr};
    for (const pugi::xml_node m : r.children("member")) {
      const std::string role = m.attribute("role").value();
      if (role != "left" && role != "right") continue;
      const auto it = ways.find(m.attribute("ref").as_llong());
      if (it == ways.end() || it->second.size() < 2)
        refuse(path, where + ": its " + role + " bound (way " + m.attribute("ref").value() +
                         ") is missing or has fewer than 2 nodes");
      bound[role == "right"] = &it->second;
    }
    if (!bound[0] || !bound[1]) refuse(path, where + " lacks a left or a right bound");
    if (type < 0) {
      ++left_out;
      continue;
    }
    Polyline line{type, {}};
    for (const auto& p : centre_line(*bound[0], *bound[1])) line.xy.push_back(p[0]), line.xy.push_back(p[1]);
    lines.push_back(line);
    if (both_ways) {
      Polyline back{type, {}};
      for (std::size_t k = line.xy.size(); k >= 2; k -= 2)
        back.xy.push_back(line.xy[k - 2]), back.xy.push_back(line.xy[k - 1]);
      lines.push_back(back);
    }
  }
  if (lines.empty())
    refuse(path,
           "no lanelet of a subtype read here (road, highway, bus_lane, bicycle_lane, crosswalk, walkway, ...)");
  if (left_out > 0)
    std::printf("scenes_import: %s: %zu lanelets of other subtypes left out\n", path.c_str(), left_out);
  return lines;
}

void write_map_table(const std::string& path, const Recording& recording) {
  static const char* kTypes[] = {"vehicle_lane", "bike_lane", "sidewalk"};
  write_atomically(path, [&](const std::string& tmp) {
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw Error(path + ": cannot write", ExitCode::failure);
    std::fprintf(f, "polyline_id,x,y,type\n");
    for (std::size_t k = 0; k < recording.map.size(); ++k) {
      const Polyline& p = recording.map[k];
      for (std::size_t i = 0; i + 1 < p.xy.size(); i += 2)
        std::fprintf(f, "%zu,%.6f,%.6f,%s\n", k, p.xy[i], p.xy[i + 1], kTypes[p.type]);
    }
    if (std::fclose(f) != 0) throw Error(path + ": cannot write", ExitCode::failure);
  });
}

}  // namespace hpct::smart
