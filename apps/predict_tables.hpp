// predict's tables for network weights files: a CSV/TSV, Parquet or LibSVM data file read as the model's
// training file was (predict_network.cpp reads HDF5 itself).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "data/text_table.hpp"
#include "gbdt/table_encoding.hpp"
#include "io/text_tables.hpp"

namespace hpct::tools {

// What predict's command line says of a table.
struct TableRequest {
  std::string weights, data;  // the weights file, the data file
  std::string weight_column;  // --weight-column (CSV/TSV only): an index or a header name; "": none
  bool labelled = true;       // the file holds the training file's label column (--no-label: false)
};

// Collective. `request.data` of `format` (csv also for a Parquet file: io::is_parquet) read for a
// model of `width` inputs a row. CSV/TSV/Parquet: through
// the weights file's `table` encoding (set in `encoding`; `text`: the table under it, for its weight
// column); LibSVM: with the weights file's libsvm_absent and libsvm_base (`text` left null). Errors
// are agreed and name the file.
std::shared_ptr<const Dataset> open_network_table(const TableRequest& request, io::TextFormat format,
                                                  std::uint64_t width, const Comm& comm, TableEncoding& encoding,
                                                  std::shared_ptr<const TableDataset>& text);

}  // namespace hpct::tools
