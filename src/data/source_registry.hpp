// The registry of data sources: one entry per `data_format` (its deck keys, how it recognises a
// file for `data_format auto`, how it opens one as a Dataset). Adding a format is one file in
// src/data plus one line in source_registry.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"

namespace hpct {

class Comm;  // comm/comm.hpp

struct DataSourceKind {
  const char* name;                       // the deck's data_format value
  const char* summary;                    // one line for --help-deck
  void (*declare_keys)(deck::Schema& s);  // may be nullptr
  // For data_format auto: whether `file` looks like this format (extension and content).
  bool (*recognises)(const deck::Deck& deck, const std::string& file);
  // Opens `file` (named by deck key `file_key`, for messages) as a data set; errors name the file.
  std::shared_ptr<const Dataset> (*open)(const deck::Deck& deck, const std::string& file);
  // Note [open once per job]: for a source whose open is mostly metadata that every rank would
  // repeat on the shared file system (a COCO JSON's parse: 7 s per rank for COCO's train2017; an
  // image folder's listing: ImageNet's 1.28M entries per rank, 330M lookups on one metadata server
  // at 256 ranks), open done by rank 0 of `comm` and its result broadcast as flat arrays; the other
  // ranks never touch the file. A collective, called by every rank: rank 0's error is every rank's,
  // with its message and exit code as at 1 rank (Comm::run_on_root). nullptr: each rank opens the
  // file itself (`open`). Figures: docs/images.md, "Opening image data".
  std::shared_ptr<const Dataset> (*open_shared)(const deck::Deck& deck, const std::string& file,
                                                const Comm& comm) = nullptr;
};

const std::vector<DataSourceKind>& data_sources();
// Declares data_format and the keys of every source.
void declare_data_source_keys(deck::Schema& s);
// The source the deck's data_format names for `file` (auto: the first that recognises it).
const DataSourceKind& data_source_for(const deck::Deck& deck, const std::string& file, const char* file_key);
// Opens `file` with that source, on this process alone (single-process tools, tests).
std::shared_ptr<const Dataset> open_data_source(const deck::Deck& deck, const std::string& file,
                                                const char* file_key);
// Opens `file` for every rank of `comm`: a collective that throws the same error on every rank
// (as Comm::run_agreed). Rank 0 picks the source; one with open_shared opens once for all (Note
// [open once per job]), any other on every rank.
std::shared_ptr<const Dataset> open_data_source(const deck::Deck& deck, const std::string& file,
                                                const char* file_key, const Comm& comm);

// Note [file checks over ranks] (dataset.hpp): checks `data`'s files at open, each rank its share,
// and throws the first bad file's error (lowest index over all ranks) on every rank (exit 2). A
// collective: every rank calls it, after an agreed open (Comm::run_agreed). Returns `data`, or,
// where its source leaves bad files out (broken_images skip: Note [leaving broken files out]), the
// data set without them, the same on every rank; those files (over all ranks, in the source's
// order) are added to `left_out` where given. A data set left with no row is an error still.
std::shared_ptr<const Dataset> check_data_files(std::shared_ptr<const Dataset> data, const Comm& comm,
                                                std::vector<BadFile>* left_out = nullptr);

// Where the files left out are listed for a run writing `output`: beside it, its stem with
// ".broken_images.tsv" (runs/x.weights.h5: runs/x.weights.broken_images.tsv; train's output,
// predict's OUT).
std::string left_out_list_path(const std::string& output);

// The files left out as `path`, one a line: the file, a tab, the reason. Written once by rank 0,
// atomically (a reader sees the whole list or none); a collective, its error agreed.
void write_left_out_list(const std::string& path, const std::vector<BadFile>& files, const Comm& comm);

// For the message about a file no source reads: " (a ZIP archive: ...)" when `file` is one (the
// CDS's download of several NetCDF files, whatever name it was saved under), else "".
std::string zip_archive_hint(const std::string& file);

}  // namespace hpct
