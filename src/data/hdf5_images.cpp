// The `hdf5_images` data source: an image set in HDF5, images [N, C, H, W] (or [N, H, W]: one
// channel) as float32/float64 or uint8 (scaled to [0, 1]) and integer class labels [N]. Its fields
// are "inputs" (float32 [C, H, W]) and "targets" (int64 class index per row).
#include <algorithm>

#include "core/error.hpp"
#include "data/hdf5_tabular.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"

namespace hpct {

namespace {

class ImageDataset : public Dataset {
 public:
  ImageDataset(const std::string& file, const std::string& images, const std::string& labels)
      : file_(file), images_(images), labels_(labels) {
    const h5::File f = h5::File::open_read(file);
    const h5::DatasetInfo im = h5::info(f, images), lb = h5::info(f, labels);
    if (im.dims.size() != 3 && im.dims.size() != 4)
      throw Error(file + ": dataset '" + images + "' must be [N, C, H, W] or [N, H, W], has rank " +
                      std::to_string(im.dims.size()),
                  ExitCode::bad_input);
    bytes_ = im.is_integer && im.type_size == 1;
    if (!im.is_float && !bytes_)
      throw Error(file + ": dataset '" + images + "' must be float32, float64 or uint8", ExitCode::bad_input);
    if (!lb.is_integer || (lb.dims.size() != 1 && !(lb.dims.size() == 2 && lb.dims[1] == 1)))
      throw Error(file + ": dataset '" + labels + "' must hold integer class labels [N]", ExitCode::bad_input);
    if (lb.dims[0] != im.dims[0])
      throw Error(file + ": datasets '" + images + "' and '" + labels + "' have different row counts (" +
                      std::to_string(im.dims[0]) + " vs " + std::to_string(lb.dims[0]) + ")",
                  ExitCode::bad_input);
    if (im.dims[0] == 0) throw Error(file + ": dataset '" + images + "' has no rows", ExitCode::bad_input);
    rows_ = im.dims[0];
    FieldSpec x, y;
    x.name = "inputs";
    if (im.dims.size() == 4)
      x.row_shape = Shape{static_cast<std::int64_t>(im.dims[1]), static_cast<std::int64_t>(im.dims[2]),
                          static_cast<std::int64_t>(im.dims[3])};
    else x.row_shape = Shape{1, static_cast<std::int64_t>(im.dims[1]), static_cast<std::int64_t>(im.dims[2])};
    y.name = "targets";
    y.dtype = DType::i64;
    specs_ = {x, y};
  }
  std::string description() const override { return file_; }
  std::uint64_t rows() const override { return rows_; }
  std::vector<FieldSpec> fields() const override { return specs_; }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    const h5::File f = h5::File::open_read(file_);
    const std::uint64_t w = specs_[0].width();
    if (bytes_) {
      std::vector<std::uint8_t> raw(rows.size() * w);
      h5::read_rows(f, images_, rows, w, raw.data());
      scale(raw, static_cast<float*>(out.at(0).values));
    } else {
      h5::read_rows(f, images_, rows, w, static_cast<float*>(out.at(0).values));
    }
    h5::read_rows(f, labels_, rows, 1, static_cast<long long*>(out.at(1).values));
    return kNoBadValue;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    if (count == 0) return kNoBadValue;
    const h5::File f = h5::File::open_read(file_);
    const std::uint64_t w = specs_[0].width();
    if (bytes_) {
      std::vector<std::uint8_t> raw(count * w);
      h5::read_row_range(f, images_, first, count, w, raw.data());
      scale(raw, static_cast<float*>(out.at(0).values));
    } else {
      h5::read_row_range(f, images_, first, count, w, static_cast<float*>(out.at(0).values));
    }
    h5::read_row_range(f, labels_, first, count, 1, static_cast<long long*>(out.at(1).values));
    return kNoBadValue;
  }
  std::string describe_row(std::uint64_t row, int field) const override {
    return file_ + ": dataset '" + (field == 0 ? images_ : labels_) + "': row " + std::to_string(row);
  }

 private:
  static void scale(const std::vector<std::uint8_t>& raw, float* out) {
    for (std::size_t i = 0; i < raw.size(); ++i) out[i] = static_cast<float>(raw[i]) / 255.0f;
  }
  std::string file_, images_, labels_;
  bool bytes_ = false;
  std::uint64_t rows_ = 0;
  std::vector<FieldSpec> specs_;
};

void declare_hdf5_image_keys(deck::Schema& s) {
  s.add_string("images_dataset", "images",
               "hdf5_images: the images [N, C, H, W] (float or uint8, scaled to [0, 1])");
  s.add_string("labels_dataset", "labels", "hdf5_images: the integer class labels [N]");
}

std::shared_ptr<const Dataset> open_images(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<ImageDataset>(file, deck.get_string("images_dataset"), deck.get_string("labels_dataset"));
}

// An HDF5 file whose images dataset has rank 3 or 4.
bool recognises_images(const deck::Deck& deck, const std::string& file) {
  if (!has_hdf5_extension(file)) return false;
  try {
    const h5::File f = h5::File::open_read(file);
    const std::string& images = deck.get_string("images_dataset");
    return h5::exists(f, images) && h5::info(f, images).dims.size() >= 3;
  } catch (const Error&) {
    return false;  // the tabular source will name what is wrong with the file
  }
}

}  // namespace

DataSourceKind hdf5_images_source() {
  return {"hdf5_images", "HDF5 images [N, C, H, W] (float or uint8) and labels [N] (fields inputs, targets: int64)",
          declare_hdf5_image_keys, recognises_images, open_images};
}

}  // namespace hpct
