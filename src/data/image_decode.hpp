// Decoding PNG and JPEG files into 8-bit pixels (libpng's simplified API, libjpeg-turbo), and the
// store of a data set's image files that keeps what it decoded in memory while it fits
// (data_cache). Host code only: the loader thread calls it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hpct {

// Pixels row by row, channels interleaved (height x width x channels), 1 (grey) or 3 (RGB).
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<std::uint8_t> pixels;
  std::uint8_t at(int x, int y, int c) const {
    return pixels[(static_cast<std::size_t>(y) * width + x) * channels + c];
  }
};

// Decodes `file` (PNG or JPEG, told by its first bytes, not its name) as `channels` channels
// (1: grey, 3: RGB; the decoder converts). Throws a bad_input Error naming the file for a missing,
// unreadable, truncated or corrupt file.
Image decode_image(const std::string& file, int channels);

// Width and height from the file's header, without decoding the pixels.
void image_size(const std::string& file, int& width, int& height);

// The image files of a data set: get(i) decodes file i, or returns the copy kept from an earlier
// call while the kept images take at most `cache_bytes` (0: nothing kept). Safe to call from the
// loader thread and the main thread at once.
class ImageStore {
 public:
  ImageStore(std::vector<std::string> files, int channels, std::uint64_t cache_bytes);
  std::size_t size() const { return files_.size(); }
  const std::string& file(std::size_t i) const { return files_.at(i); }
  std::shared_ptr<const Image> get(std::size_t i) const;
  std::uint64_t cached_bytes() const;

 private:
  std::vector<std::string> files_;
  int channels_;
  std::uint64_t budget_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const Image>> cache_;
  mutable std::uint64_t used_ = 0;
};

}  // namespace hpct
