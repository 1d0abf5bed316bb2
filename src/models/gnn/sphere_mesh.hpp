// The gnn model's graphs for data on the sphere (gnn_mesh icosahedral): a refined icosahedron's
// vertices as the mesh, its levels' edges joined into one multi-mesh, grid -> mesh and
// mesh -> grid edges found from the points' latitudes and longitudes. For global grids (regular
// latitude-longitude, reduced Gaussian) and unstructured point sets, whose rows and columns (if any)
// say nothing of who neighbours whom.
#pragma once

#include <vector>

#include "models/gnn/mesh_graph.hpp"

namespace hpct {

// Note [icosahedral multi-mesh]: level 0 is the icosahedron with a vertex at each pole and two rings
// of five at latitude +-atan(1/2) (the second turned by 36 degrees); level r + 1 splits every
// triangle of level r into four at its edges' midpoints, pushed out to the sphere. A level r has
// 10 4^r + 2 vertices, and every coarser level's vertices are among them (with their indices):
// the mesh nodes are the finest level's vertices, and m2m holds every level's edges in both
// directions (a coarse edge spans 2^k finest edges: the long-range messages). Refinement r gives a
// finest edge of about 7054 / 2^r km (r = 4: 441 km, r = 6: 110 km).
//
// Grid -> mesh: every grid point within 0.6 finest edges of a mesh node sends to it; mesh -> grid:
// the 3 mesh nodes nearest each grid point (ties: the lower index) send to it; distances are the
// great circle's. A mesh node farther than max(0.6 finest edges, the largest distance from a grid
// point to its nearest other grid point) from every grid point is dropped, with its edges, unless it
// is one of a grid point's 3 nearest: data covering part of the sphere (a limited area) keeps a mesh
// over itself and a strip one data spacing wide, and a global grid coarser than the mesh keeps every
// node. Nodes keep the order of their indices.
//
// Features: mesh nodes [x, y, z], the unit vector of their position; edges [great-circle length,
// east, north] with (east, north) the receiver-minus-sender displacement (3-D chord) projected on
// the receiver's local east and north directions, so they are defined at the poles and across the
// antimeridian alike. Lengths in km, then every feature over the longest m2m edge.
MeshGraph build_sphere_mesh_graph(const std::vector<double>& lat, const std::vector<double>& lon, int refinements);

// The vertex count of refinement r: 10 4^r + 2.
long long icosahedral_vertices(int refinements);

}  // namespace hpct
