// Lanelet2 maps for apps/scenes_import (docs/scenes-import.md): the OSM XML that lanelet2, JOSM
// and the INTERACTION dataset write (.osm in latitude/longitude, or local_x/local_y tags; INTERACTION's
// .osm_xy in local x/y), read with pugixml, each lanelet's centre line taken as a map polyline.
#pragma once

#include <string>
#include <vector>

#include "models/smart/track_table.hpp"

namespace hpct::smart {

// Where a latitude/longitude map's local frame starts: lanelet2's UtmProjector origin.
struct MapOrigin {
  bool given = false;
  double lat = 0, lon = 0;
};

// Whether `path` is a lanelet2 map by its extension (.osm, .osm_xy).
bool is_lanelet_map(const std::string& path);

// The map's lanelets, every recording's map: each lanelet's centre line as a polyline in its
// driving direction (both directions where it is not one way); lanelets of other subtypes, areas
// and regulatory elements are left out. Errors name the file and the element.
std::vector<Polyline> read_lanelet_map(const std::string& path, const MapOrigin& origin);

// The polylines a map table or lanelet2 map gave `recording`, as a map table (CSV: polyline_id, x,
// y, type) that read_map_table reads back (scenes_import --write-map).
void write_map_table(const std::string& path, const Recording& recording);

}  // namespace hpct::smart
