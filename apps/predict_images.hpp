// predict's image data for a network weights file: an image folder (or a COCO JSON) read as the
// model's training data was, through the data-source registry and the training deck the weights file
// keeps (predict_network.cpp runs the model on its rows).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"

namespace hpct::tools {

// Whether predict reads DATA as image files: a folder (image_folder) or a .json file (coco_keypoints).
bool is_image_data(const std::string& data);

// What predict's command line says of image data.
struct ImageRequest {
  std::string weights, data, out;  // the weights file, DATA, OUT
  std::vector<std::string> sets;   // --set KEY=VALUE: the training deck's keys changed for DATA
};

// The image data predict reads: OUT's row i is `data`'s row order[i], the files in name order (a
// file's rows, a COCO image's annotations, in the data set's order).
struct ImageRows {
  std::shared_ptr<const Dataset> data;
  std::vector<std::uint64_t> order;
};

// Collective. `request.data` opened with the weights file's training deck (attribute 'deck'; data_file
// DATA, no validation_file, data_cache stream, then request.sets) and its files checked at open over
// the ranks as train checks them (check_images_at_open; with broken_images skip the files refused are
// left out and listed in <OUT stem>.broken_images.tsv); OUT's rows in name order (Note [predicting
// image files]). The rows must hold `input` (the model's one input) as a float32 field of its name and
// shape. Errors are agreed and name the file.
ImageRows open_network_images(const ImageRequest& request, const NamedShape& input, const std::string& family,
                              const Comm& comm);

// Collective, after OUT is written: <OUT stem>.files.tsv, the file of each of OUT's first `rows` rows.
void write_image_files_list(const ImageRows& images, const std::string& out, std::uint64_t rows, const Comm& comm);

// OUT's rows [first, first + count): `images`' field named as `input` into `x` (count x its row size).
void read_image_rows(const ImageRows& images, const NamedShape& input, std::uint64_t first, std::uint64_t count,
                     float* x);

}  // namespace hpct::tools
