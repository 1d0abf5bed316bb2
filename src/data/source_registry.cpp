// The list of data sources (see source_registry.hpp): one line per format; opening a file for every
// rank, and the check of its files at open over the ranks, leaving broken ones out where asked.
#include "data/source_registry.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "io/atomic_file.hpp"

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
DataSourceKind parquet_source();         // data/parquet_table.cpp

const std::vector<DataSourceKind>& data_sources() {
  // Order matters for auto: the more specific formats first, plain tabular HDF5 last; hdf5_fields
  // before hdf5_images, since a deck that sets `fields` names the datasets it wants (an image file
  // read as fields keeps its own names).
  static const std::vector<DataSourceKind> sources = {
      hdf5_fields_source(), netcdf_grid_source(),  grib_grid_source(),      zarr_grid_source(),
      hdf5_images_source(), image_folder_source(), coco_keypoints_source(), hdf5_tabular_source(),
      csv_source(),         tsv_source(),          libsvm_source(),         parquet_source(),
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

namespace {
// Note [out of memory at open]: an allocation refused while a file is opened (a size in a damaged
// header that no check caught, or data larger than the rank's memory) came out as
// "std::bad_alloc" or "internal error", naming nothing: it names the file it was opening instead.
template <class F>
std::shared_ptr<const Dataset> naming_file(const std::string& file, F&& open) {
  try {
    return open();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    if (!is_allocation_failure(e)) throw;
    throw Error(file + ": out of memory while opening it (" + first_line(e) +
                    "): a size in a damaged file, or more data than this rank's memory holds",
                ExitCode::failure);
  }
}
}  // namespace

std::shared_ptr<const Dataset> open_data_source(const deck::Deck& deck, const std::string& file,
                                                const char* file_key) {
  return naming_file(file, [&] { return data_source_for(deck, file, file_key).open(deck, file); });
}

std::shared_ptr<const Dataset> open_data_source(const deck::Deck& deck, const std::string& file,
                                                const char* file_key, const Comm& comm) {
  Heartbeat::beat_current("opening data", file);  // Note [beats from the open]
  // data_format auto looks into the file: once, on rank 0 (Note [open once per job]).
  int kind = -1;
  comm.run_on_root([&] {
    const DataSourceKind& k = data_source_for(deck, file, file_key);
    kind = static_cast<int>(&k - data_sources().data());
  });
  comm.broadcast(&kind, 1);
  const DataSourceKind& k = data_sources().at(static_cast<std::size_t>(kind));
  if (k.open_shared) return naming_file(file, [&] { return k.open_shared(deck, file, comm); });
  std::shared_ptr<const Dataset> data;
  comm.run_agreed([&] { data = naming_file(file, [&] { return k.open(deck, file); }); });
  return data;
}

// Note [leaving broken files out]: with broken_images skip, each rank checks its share of the
// files whole (every bad one, not only the first), the bad ones are gathered to every rank, and each
// rank makes the data set without them from the same list: the same rows everywhere, as the source
// opened without those files would give them (so the same batches and losses at any rank count).
// Only the check at open can leave a file out: one found at its decode mid-epoch is in one rank's
// batch, and leaving it out there would give that rank a batch of another size.
std::shared_ptr<const Dataset> check_data_files(std::shared_ptr<const Dataset> data, const Comm& comm,
                                                std::vector<BadFile>* left_out) {
  if (!data->skips_bad_files()) {
    FileCheck c;
    comm.run_agreed([&] { c = data->check_files(comm.rank(), comm.size()); });  // an unforeseen failure: agreed
    comm.agree_first(c.first, c.message, ExitCode::bad_input);
    return data;
  }
  std::vector<BadFile> mine;
  comm.run_agreed([&] { mine = data->bad_files(comm.rank(), comm.size()); });
  std::vector<long long> index;
  std::vector<std::string> text;  // file, reason and message of each
  for (const BadFile& b : mine) index.push_back(b.index), text.insert(text.end(), {b.file, b.reason, b.message});
  index = comm.gather_to_all(index);
  text = comm.gather_to_all(text);
  if (index.empty()) return data;
  std::vector<BadFile> bad(index.size());
  for (std::size_t i = 0; i < bad.size(); ++i)
    bad[i] = {index[i], std::move(text[3 * i]), std::move(text[3 * i + 1]), std::move(text[3 * i + 2])};
  std::sort(bad.begin(), bad.end(), [](const BadFile& a, const BadFile& b) { return a.index < b.index; });
  std::vector<long long> files;
  for (const BadFile& b : bad) files.push_back(b.index);
  comm.run_agreed([&] {
    const std::uint64_t all = data->file_count();
    const std::string name = data->description();
    data = data->without_files(files);
    if (data->rows() == 0)
      throw Error(strf("%s: broken_images skip left out %zu of %llu image files and no row is left; the first: %s",
                       name.c_str(), bad.size(), static_cast<unsigned long long>(all), bad[0].message.c_str()),
                  ExitCode::bad_input);
    std::string named;
    for (std::size_t i = 0; i < std::min<std::size_t>(bad.size(), 3); ++i)
      named += (i ? "; " : "") + bad[i].file + ": " + bad[i].reason;
    Log::info(strf("  %s: %zu of %llu image files left out as broken (broken_images skip): %s%s", name.c_str(),
                   bad.size(), static_cast<unsigned long long>(all), named.c_str(), bad.size() > 3 ? "; ..." : ""));
  });
  if (left_out) left_out->insert(left_out->end(), bad.begin(), bad.end());
  return data;
}

std::string left_out_list_path(const std::string& output) {
  const std::filesystem::path out(output);
  return (out.parent_path() / (out.stem().string() + ".broken_images.tsv")).string();
}

void write_left_out_list(const std::string& path, const std::vector<BadFile>& files, const Comm& comm) {
  comm.run_on_root([&] {
    std::string text;
    for (const BadFile& b : files) text += b.file + "\t" + b.reason + "\n";
    write_file_atomically(path, std::vector<char>(text.begin(), text.end()));
  });
}

}  // namespace hpct
