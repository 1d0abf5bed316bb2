// Loading one rank's block of a data set (HDF5, CSV, TSV, LibSVM) for the GBDT trainer. Errors on
// any rank become the same error on every rank.
#pragma once

#include <string>

#include "comm/comm.hpp"
#include "gbdt/booster.hpp"

namespace hpct::gbdt {

struct DataSource {
  std::string file;
  std::string format = "auto";                                         // auto, hdf5, csv, tsv, libsvm
  std::string inputs_dataset = "inputs", targets_dataset = "targets";  // HDF5
  int label_column = 0;                                                // CSV/TSV
  bool header = false;                                                 // CSV/TSV
  int libsvm_base = 1;
  long long num_features = -1;  // -1: from the data (LibSVM: max id over all ranks)
  std::string weight_file;      // one weight per data row; empty: unit weights
  bool allow_infinite = false;  // text: infinite values read as such (scoring); training refuses them
};

// Collective. Rows are split in contiguous blocks over ranks; see docs/gbdt.md.
Data load_data(const DataSource& src, const std::string& name, const Comm& comm);

// Moves the global rows [cut, global_rows) of `d` into a new data set (the validation hold-out).
// Not collective: every rank knows the global layout.
Data split_tail(Data& d, long long cut, const std::string& name);

// "hdf5" for .h5/.hdf5; csv/tsv/libsvm from the extension; else throws bad_input naming `key`.
std::string resolve_format(const std::string& file, const std::string& format);

}  // namespace hpct::gbdt
