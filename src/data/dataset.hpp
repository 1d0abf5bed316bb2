// What a data source provides to the trainer: a row count, its fields (name, dtype, per-row shape,
// ragged or not: data/field.hpp) and readers for a set of row indices or a block of rows. The
// trainer, the sampler, the epoch shard, the evaluator and the statistics see only this interface;
// data sources are chosen by the deck's `data_format` (data/source_registry.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/field.hpp"

namespace hpct {

// The first bad file a source found in its share of the files it checks at open (check_files).
struct FileCheck {
  long long first = -1;  // the file's index in the source's own order (-1: none bad)
  std::string message;   // the error for it, as the source would give it reading the file
};

// A file a source's check at open refused (broken_images skip: Note [leaving broken files out]).
struct BadFile {
  long long index = -1;  // in check_files' order
  std::string file;      // the file's path
  std::string reason;    // why, as the check says it (for the list of files left out)
  std::string message;   // the error check_files gives for it
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string description() const = 0;  // for messages: the file (and part)
  virtual std::uint64_t rows() const = 0;
  virtual std::vector<FieldSpec> fields() const = 0;
  // Ragged field `field`: rows() + 1 offsets; row r holds elements [o[r], o[r + 1]) (Note [ragged
  // fields] in field.hpp). Known before any read, so buffers are sized once.
  virtual const std::vector<std::uint64_t>& ragged_offsets(int field) const;
  // Reads the given rows (indices into this data set, ascending, unique) of every field into host
  // buffers, one per field in fields() order (ragged: elements in row order plus offsets from 0).
  // Returns a bad-value code (field.hpp) for what only the source can see, else kNoBadValue; the
  // value checks of first_bad_value are the caller's.
  virtual long long read_rows(const std::vector<std::uint64_t>& rows,
                              const std::vector<FieldBuffer>& out) const = 0;
  // Reads the contiguous rows [first, first + count).
  virtual long long read_block(std::uint64_t first, std::uint64_t count,
                               const std::vector<FieldBuffer>& out) const = 0;
  // "<file>: dataset '<targets>': row <r>" for row `row` of this data set's field `field`.
  virtual std::string describe_row(std::uint64_t row, int field) const = 0;
  // Sources whose training rows differ per epoch (image augmentation: Note [augmentation keys] in
  // data/image_transform.hpp) say so; the training stager then reads every epoch through
  // read_epoch_rows, never a held copy. read_rows and read_block give the rows unaugmented
  // (validation, statistics).
  virtual bool varies_by_epoch() const { return false; }
  virtual long long read_epoch_rows(std::uint64_t epoch, const std::vector<std::uint64_t>& rows,
                                    const std::vector<FieldBuffer>& out) const {
    (void)epoch;
    return read_rows(rows, out);
  }
  // The names of fixed field `field`'s values (a text table's header columns); empty: unnamed.
  virtual std::vector<std::string> value_names(int field) const;
  // The line of the file that holds row `row` (text tables), else row + 1: for messages.
  virtual long long file_line(std::uint64_t row) const { return static_cast<long long>(row) + 1; }
  // Note [file checks over ranks]: sources of many files (image_folder, coco_keypoints) check each
  // file once at open, over all ranks: part `part` of `parts` checks files part, part + parts, ...
  // and returns the first bad one. Whoever opens the data set calls check_data_files
  // (source_registry.hpp), which agrees on the lowest bad index over the ranks and throws its
  // message on every rank. Sources with nothing to check return none.
  virtual FileCheck check_files(int part, int parts) const {
    (void)part, (void)parts;
    return {};
  }
  // A source whose deck says `broken_images skip` says so (Note [leaving broken files out] in
  // source_registry.cpp); its bad_files gives every bad file of part `part` (as check_files finds
  // them, not only the first), file_count how many files it checks over all parts, and
  // without_files the data set as the source opens it where the files of those indices are not
  // there (the same rows, in the same order, as a folder or JSON without them), the same on every
  // rank given the same indices. check_data_files (source_registry.hpp) calls them.
  virtual bool skips_bad_files() const { return false; }
  virtual std::vector<BadFile> bad_files(int part, int parts) const {
    (void)part, (void)parts;
    return {};
  }
  virtual std::uint64_t file_count() const { return 0; }
  virtual std::shared_ptr<const Dataset> without_files(const std::vector<long long>& files) const;
  // A string attribute of the file's root that says how the data was made (an HDF5 file's; diffgen
  // --anomaly's Note [anomaly targets]), "" when the file has none or the source keeps no such thing.
  virtual std::string file_attribute(const std::string& name) const {
    (void)name;
    return {};
  }
};

// Values per row of fixed field i (the product of its row shape).
inline std::uint64_t field_width(const Dataset& d, int i) {
  return d.fields().at(static_cast<std::size_t>(i)).width();
}

// The message for a bad-value code of `data` checked against `specs` (its fields, as constrained).
// `part` names which rows `data` is when that is not plain from the file ("the validation split: the
// last 4 rows of data_file, validation_fraction 0.1"): "(first bad row of PART)".
std::string describe_bad_value(const Dataset& data, const std::vector<FieldSpec>& specs, long long code,
                               const std::string& part = {});

// Rows [first, first + count) of `data` as a data set (the training and validation parts).
std::shared_ptr<const Dataset> row_range(std::shared_ptr<const Dataset> data, std::uint64_t first,
                                         std::uint64_t count);

// The most elements that any `rows` rows of ragged field `field` hold (capacity for a shard).
std::uint64_t most_elements(const Dataset& data, int field, std::uint64_t rows);

// Host buffers for `rows` rows of every field of a data set, ragged fields holding up to
// `elements[f]` elements (sized once, reused).
class HostFields {
 public:
  HostFields() = default;
  HostFields(const std::vector<FieldSpec>& specs, std::uint64_t rows, const std::vector<std::uint64_t>& elements);
  const std::vector<FieldBuffer>& buffers() const { return buffers_; }
  const std::uint32_t* words(std::size_t f) const { return words_[f].data(); }
  const std::uint64_t* offsets(std::size_t f) const { return offsets_[f].data(); }

 private:
  std::vector<std::vector<std::uint32_t>> words_;
  std::vector<std::vector<std::uint64_t>> offsets_;
  std::vector<FieldBuffer> buffers_;
};

}  // namespace hpct
