// The list of data sources (see source_registry.hpp): one line per format.
#include "data/source_registry.hpp"

#include <cstring>
#include <fstream>

#include "comm/comm.hpp"
#include "core/error.hpp"

namespace hpct {

DataSourceKind hdf5_tabular_source();    // data/hdf5_tabular.cpp
DataSourceKind hdf5_images_source();     // data/hdf5_images.cpp
DataSourceKind hdf5_fields_source();     // data/hdf5_fields.cpp
DataSourceKind netcdf_grid_source();     // data/netcdf_grid.cpp
DataSourceKind grib_grid_source();       // data/grib_grid.cpp
DataSourceKind zarr_grid_source();       // data/zarr_grid.cpp
DataSourceKind image_folder_source();    // data/image_folder.cpp
DataSourceKind coco_keypoints_source();  // data/coco_keypoints.cpp
DataSourceKind csv_source();             // data/csv_source.cpp
DataSourceKind tsv_source();             // data/tsv_source.cpp
DataSourceKind libsvm_source();          // data/libsvm_source.cpp

const std::vector<DataSourceKind>& data_sources() {
  // Order matters for auto: the more specific formats first, plain tabular HDF5 last; hdf5_fields
  // before hdf5_images, since a deck that sets `fields` names the datasets it wants (an image file
  // read as fields keeps its own names).
  static const std::vector<DataSourceKind> sources = {
      hdf5_fields_source(), netcdf_grid_source(),  grib_grid_source(),      zarr_grid_source(),
      hdf5_images_source(), image_folder_source(), coco_keypoints_source(), hdf5_tabular_source(),
      csv_source(),         tsv_source(),          libsvm_source(),
  };
  return sources;
}

void declare_data_source_keys(deck::Schema& s) {
  std::vector<std::string> names = {"auto"};
  std::string doc = "format of data_file, validation_file (and gbdt's test_file): auto (by extension and content)";
  for (const DataSourceKind& k : data_sources()) {
    names.push_back(k.name);
    doc += std::string("; ") + k.name + ": " + k.summary;
  }
  s.add_choice("data_format", "auto", names, doc);
  for (const DataSourceKind& k : data_sources())
    if (k.declare_keys) k.declare_keys(s);
}

const DataSourceKind& data_source_for(const deck::Deck& deck, const std::string& file, const char* file_key) {
  const std::string& format = deck.get_string("data_format");
  for (const DataSourceKind& k : data_sources())
    if (format == k.name) return k;
  for (const DataSourceKind& k : data_sources())
    if (k.recognises(deck, file)) return k;
  deck.fail(file_key, file + ": data_format auto does not recognise this file" +
                          (zip_archive_hint(file).empty() ? "; set data_format" : zip_archive_hint(file)));
}

std::string zip_archive_hint(const std::string& file) {
  char head[4] = {0, 0, 0, 0};
  std::ifstream in(file, std::ios::binary);
  if (!in.read(head, 4) || std::memcmp(head, "PK\x03\x04", 4) != 0) return "";
  return " (a ZIP archive: the CDS delivers one, of NetCDF files one per stepType, when a request mixes "
         "instantaneous and accumulated variables, whatever name it is saved under; unzip it and list its "
         "files in data_file, comma-separated)";
}

std::shared_ptr<const Dataset> open_data_source(const deck::Deck& deck, const std::string& file,
                                                const char* file_key) {
  return data_source_for(deck, file, file_key).open(deck, file);
}

std::shared_ptr<const Dataset> open_data_source(const deck::Deck& deck, const std::string& file,
                                                const char* file_key, const Comm& comm) {
  // data_format auto looks into the file: once, on rank 0 (Note [open once per job]).
  int kind = -1;
  comm.run_on_root([&] {
    const DataSourceKind& k = data_source_for(deck, file, file_key);
    kind = static_cast<int>(&k - data_sources().data());
  });
  comm.broadcast(&kind, 1);
  const DataSourceKind& k = data_sources().at(static_cast<std::size_t>(kind));
  if (k.open_shared) return k.open_shared(deck, file, comm);
  std::shared_ptr<const Dataset> data;
  comm.run_agreed([&] { data = k.open(deck, file); });
  return data;
}

void check_data_files(const Dataset& data, const Comm& comm) {
  FileCheck c;
  comm.run_agreed([&] { c = data.check_files(comm.rank(), comm.size()); });  // an unforeseen failure: agreed
  comm.agree_first(c.first, c.message, ExitCode::bad_input);
}

}  // namespace hpct
