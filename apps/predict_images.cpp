// predict's image data for a network weights file (see predict_images.hpp).
#include "predict_images.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/image_files_dataset.hpp"
#include "data/source_registry.hpp"
#include "deck/deck.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "train/driver.hpp"

namespace hpct::tools {

namespace {

// Note [predicting image files]: predict reads an image folder or a COCO JSON as train read the
// model's data, so it takes the training deck the weights file keeps (attribute 'deck': the image
// size, image_mean/image_std, exif_orientation, image_dir, check_images_at_open, broken_images), with
// DATA as data_file and `--set KEY=VALUE` over it. The rows are unaugmented (Dataset::read_block),
// each image decoded once (data_cache stream: nothing would read it again). The check at open is
// train's (check_data_files): a bad file stops predict before any row is predicted, exit 2, naming
// it; with broken_images skip it is left out, has no row in OUT, and is listed in
// <OUT stem>.broken_images.tsv. OUT's rows are the data set's rows with their files in name order
// (not the data set's order: a folder's is shuffled once by a fixed key for training, Note [image
// rows]; a file's rows, a COCO image's annotations, keep theirs), and line i + 1 of
// <OUT stem>.files.tsv, written once OUT is, names the file of row i.
deck::Deck training_deck(const ImageRequest& o) {
  std::string text;
  {
    const h5::File f = h5::File::open_read(o.weights);
    if (!h5::has_attr(f, "/", "deck"))
      throw Error(o.weights + ": no training deck (attribute 'deck'), which says how to read " + o.data +
                      "'s images (their size and normalisation)",
                  ExitCode::bad_input);
    text = h5::read_attr_string(f, "/", "deck");
  }
  // The user's --set first, so that its errors number them as given ("--set:1"); a key it sets is
  // not overridden below. DATA is the data file, whatever a --set says.
  std::vector<std::string> sets = o.sets;
  std::set<std::string> given;
  for (const std::string& s : o.sets) {
    const std::string key = s.substr(0, s.find('='));
    if (key == "data_file" || key == "validation_file")
      throw Error("predict: --set " + s + ": DATA (" + o.data + ") is the data read", ExitCode::bad_input);
    given.insert(key);
  }
  // The attribute is Deck::resolved(): "key value   # origin" for every key. The keys the training
  // set are taken, each as a deck line (one set empty as an override: a deck line needs a value);
  // the others keep their defaults, as they did there.
  std::string lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t origin = line.rfind("   # ");
    if (origin == std::string::npos || line.compare(origin + 5, std::string::npos, "default") == 0) {
      lines += "\n";  // the line numbers stay the attribute's
      continue;
    }
    line.erase(origin);
    const std::size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    if (space == std::string::npos || line.find_first_not_of(' ', space) == std::string::npos) {
      if (given.count(key) == 0) sets.push_back(key + "=");
      line.clear();
    }
    lines += line + "\n";
  }
  sets.push_back("data_file=" + o.data);
  sets.emplace_back("validation_file=");
  if (given.count("data_cache") == 0) sets.emplace_back("data_cache=stream");
  return deck::Deck::parse(lines, o.weights + ": attribute 'deck'", full_schema(), sets);
}

std::string files_list_path(const std::string& out) {
  const std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + ".files.tsv")).string();
}

}  // namespace

bool is_image_data(const std::string& data) {
  std::error_code ec;
  if (std::filesystem::is_directory(data, ec)) return true;
  return data.size() > 5 && data.compare(data.size() - 5, 5, ".json") == 0;
}

ImageRows open_network_images(const ImageRequest& o, const NamedShape& input, const std::string& family,
                              const Comm& comm) {
  deck::Deck deck;
  comm.run_agreed([&] {
    deck = training_deck(o);
    const std::string source = data_source_for(deck, o.data, "data_file").name;
    if (source != "image_folder" && source != "coco_keypoints")
      throw Error(o.data + ": the " + family + " model's training deck reads it as " + source +
                      "; predict reads a folder or a .json as image files (image_folder, coco_keypoints), "
                      "other data as an HDF5 file",
                  ExitCode::bad_input);
  });
  std::shared_ptr<const Dataset> data = open_data_source(deck, o.data, "data_file", comm);
  std::vector<BadFile> left_out;
  data = check_data_files(data, comm, &left_out);  // Note [leaving broken files out]
  if (!left_out.empty()) {
    const std::string list = left_out_list_path(o.out);
    write_left_out_list(list, left_out, comm);
    Log::info(strf("predict: the %zu image files left out (no row in %s): %s", left_out.size(), o.out.c_str(),
                   list.c_str()));
  }
  comm.run_agreed([&] {
    const std::vector<FieldSpec> fields = data->fields();
    for (const FieldSpec& f : fields)
      if (f.name == input.name) {
        if (f.dtype == DType::f32 && !f.ragged && f.width() == static_cast<std::uint64_t>(input.row_size())) return;
        throw Error(o.data + ": its rows' '" + f.name + "' is " + f.describe() + "; the " + family +
                        " model's input is " + std::to_string(input.row_size()) +
                        " float32 values a row (a --set that changed the image size?)",
                    ExitCode::bad_input);
      }
    throw Error(o.data + ": its rows have no '" + input.name + "', the " + family + " model's input",
                ExitCode::bad_input);
  });
  std::vector<std::uint64_t> order(data->rows());
  comm.run_agreed([&] {
    const auto* files = dynamic_cast<const ImageFilesDataset*>(data.get());
    if (!files) throw Error("internal: " + data->description() + " is not a data set of image files");
    std::iota(order.begin(), order.end(), std::uint64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return files->row_file(a) < files->row_file(b); });
  });
  return {data, std::move(order)};
}

void write_image_files_list(const ImageRows& images, const std::string& out, std::uint64_t rows, const Comm& comm) {
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    const auto& files = dynamic_cast<const ImageFilesDataset&>(*images.data);  // checked at open
    std::string text;
    for (std::uint64_t i = 0; i < rows; ++i) text += files.row_file(images.order[i]) + "\n";
    write_file_atomically(files_list_path(out), std::vector<char>(text.begin(), text.end()));
  });
}

void read_image_rows(const ImageRows& images, const NamedShape& input, std::uint64_t first, std::uint64_t count,
                     float* x) {
  const std::vector<FieldSpec> fields = images.data->fields();
  std::vector<std::vector<std::uint64_t>> scratch(fields.size());  // 8 bytes a value: any dtype
  std::vector<FieldBuffer> out(fields.size());
  for (std::size_t f = 0; f < fields.size(); ++f)
    if (fields[f].name != input.name) {
      scratch[f].resize(fields[f].width());  // the labels: read, not used
      out[f].values = scratch[f].data();
    }
  const auto width = static_cast<std::uint64_t>(input.row_size());
  for (std::uint64_t i = 0; i < count; ++i) {  // one row at a time: OUT's order is not the data set's
    for (std::size_t f = 0; f < fields.size(); ++f)
      if (fields[f].name == input.name) out[f].values = x + i * width;
    images.data->read_block(images.order[first + i], 1, out);
  }
}

}  // namespace hpct::tools
