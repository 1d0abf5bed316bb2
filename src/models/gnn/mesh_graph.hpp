// The graphs of the gnn model, built from the grid's size alone (so a weights file rebuilds them
// identically): a multi-scale mesh (levels 3x coarser, joined into one graph), grid -> mesh edges
// for every grid point within 0.67 mesh spacings, mesh -> grid edges from the 4 nearest mesh nodes,
// and per-edge features [length, dx, dy] (neural-lam's create_graph.py, read, not copied).
#pragma once

#include <cstdint>
#include <vector>

namespace hpct {

// One directed edge set from `senders` nodes to `receivers` nodes.
struct EdgeList {
  std::vector<int> sender, receiver;
  std::vector<float> features;  // [edges, 3]: length, dx, dy (receiver - sender), over the longest mesh edge
  std::int64_t senders = 0, receivers = 0;
  std::int64_t size() const { return static_cast<std::int64_t>(sender.size()); }
};

struct MeshGraph {
  int ny = 0, nx = 0;                // the grid
  int mesh_ny = 0, mesh_nx = 0;      // the finest mesh level
  int levels = 0;                    // mesh levels joined into m2m
  bool sphere_mesh = false;          // gnn_mesh icosahedral (sphere_mesh.hpp): built from the points' positions
  int mesh_feature_width = 2;        // the grid's mesh: x, y; the icosahedral mesh: the unit vector x, y, z
  std::vector<float> mesh_features;  // [mesh nodes, mesh_feature_width]: x, y over the grid's larger side
  EdgeList g2m, m2m, m2g;
  std::int64_t grid_nodes() const { return static_cast<std::int64_t>(ny) * nx; }
  std::int64_t mesh_nodes() const { return static_cast<std::int64_t>(mesh_ny) * mesh_nx; }
};

// Note [mesh in grid units]: the grid is taken as regular, point (i, j) at x = i, y = j; the finest
// mesh has a node every 3 points, at 3k + 1 (so every coarser level's node, at 9k + 4, ..., is one
// of them), and each level connects its nodes to their 8 neighbours. Needs ny, nx >= 6.
MeshGraph build_mesh_graph(int ny, int nx);

// Note [edge features on the sphere]: with gnn_edge_distances sphere the edges keep their grid-index
// topology, but their features become [great-circle length, east, north] in km between the points'
// latitudes and longitudes (degrees, one per grid point; a mesh node sits on its grid point), over
// the longest mesh edge again: a 0.25 degree cell at 55N is 28 km north-south and 16 km east-west,
// which index units hide. The east component takes the longitude difference wrapped to +-180
// degrees (0-360 and -180-180 grids alike) times the cosine of the mean latitude.
void set_sphere_edge_features(MeshGraph& g, const std::vector<double>& lat, const std::vector<double>& lon);

}  // namespace hpct
