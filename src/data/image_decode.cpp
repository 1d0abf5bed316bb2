// PNG through libpng's simplified API, JPEG through libjpeg-turbo (errors and warnings, such as a
// truncated file, become an Error naming the file), and the image store's cache.
#include "data/image_decode.hpp"

#include <csetjmp>
#include <cstdio>
#include <cstring>
// clang-format off
#include <jpeglib.h>  // needs <cstdio> first
// clang-format on
#include <png.h>

#include "core/error.hpp"

namespace hpct {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& why) {
  throw Error(file + ": " + why, ExitCode::bad_input);
}

enum class Kind { png, jpeg };

Kind kind_of(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) fail(file, std::string("cannot open the image: ") + std::strerror(errno));
  unsigned char head[8] = {0};
  const std::size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (n == 8 && png_sig_cmp(head, 0, 8) == 0) return Kind::png;
  if (n >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) return Kind::jpeg;
  fail(file, n == 0 ? "the image file is empty" : "not a PNG or JPEG file (by its first bytes)");
}

Image decode_png(const std::string& file, int channels, bool header_only) {
  png_image im;
  std::memset(&im, 0, sizeof(im));
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&im, file.c_str())) fail(file, std::string("PNG: ") + im.message);
  Image out;
  out.width = static_cast<int>(im.width), out.height = static_cast<int>(im.height), out.channels = channels;
  out.file_width = out.width, out.file_height = out.height;
  if (header_only) {
    png_image_free(&im);
    return out;
  }
  // Note [PNG alpha]: without an alpha channel in the output, libpng composites a transparent or
  // translucent pixel onto black; PIL's convert("RGB"), torchvision and OpenCV drop the alpha and
  // keep the colour. Read with it, then dropped, so a cut-out's edges keep their colour.
  const bool alpha = (im.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  im.format = (channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
  // Note [16-bit PNGs]: the simplified API takes a 16-bit file without a gAMA or sRGB chunk (as
  // PIL, OpenCV and scanners write them) as linear light and gamma-encodes it into 8 bits: a grey of
  // 32896 / 65535 came out 186, not 128, every picture brighter than PIL's, OpenCV's or
  // torchvision's reading. Its values are taken as they are instead (value / 257); a file that
  // states its gamma keeps libpng's conversion.
  im.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  out.pixels.resize(PNG_IMAGE_SIZE(im));
  if (!png_image_finish_read(&im, nullptr, out.pixels.data(), 0, nullptr))
    fail(file, std::string("PNG: ") + im.message);
  if (alpha) {  // [colour..., alpha] per pixel -> [colour...]
    const auto c = static_cast<std::size_t>(channels), n = static_cast<std::size_t>(out.width) * out.height;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < c; ++k) out.pixels[i * c + k] = out.pixels[i * (c + 1) + k];
    out.pixels.resize(n * c);
  }
  return out;
}

// libjpeg reports errors through error_exit, which must not return: it jumps back to decode_jpeg.
// Warnings (a premature end of the data: a truncated file) are kept and turned into an error too,
// since libjpeg would otherwise fill the missing rows with grey.
struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {0};
  bool warned = false;
  bool cmyk = false;  // libjpeg converts CMYK and YCCK to neither RGB nor grey
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_emit(j_common_ptr cinfo, int level) {
  auto* e = reinterpret_cast<JpegErrors*>(cinfo->err);
  if (level < 0 && !e->warned) {
    (*cinfo->err->format_message)(cinfo, e->message);
    e->warned = true;
  }
}

// Note [jpeg and setjmp]: everything the jump must not skip a destructor of lives outside this
// function; it only fills `out`, whose buffer is sized before the reading starts.
bool read_jpeg(std::FILE* f, int channels, const ReduceRule* reduce, Image& out, JpegErrors& errors) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = jpeg_error_exit;
  errors.mgr.emit_message = jpeg_emit;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  out.width = out.file_width = static_cast<int>(cinfo.image_width);
  out.height = out.file_height = static_cast<int>(cinfo.image_height);
  out.channels = channels;
  errors.cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  if (reduce != nullptr) {  // nullptr: the header only
    const int r = *reduce ? (*reduce)(out.width, out.height) : 1;
    out.reduce = r == 2 || r == 4 || r == 8 ? r : 1;
    cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    cinfo.scale_num = 1, cinfo.scale_denom = static_cast<unsigned>(out.reduce);
    jpeg_start_decompress(&cinfo);
    out.width = static_cast<int>(cinfo.output_width), out.height = static_cast<int>(cinfo.output_height);
    const std::size_t stride = static_cast<std::size_t>(cinfo.output_width) * channels;
    out.pixels.resize(stride * cinfo.output_height);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = out.pixels.data() + stride * cinfo.output_scanline;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  return !errors.warned;
}

Image decode_jpeg(const std::string& file, int channels, const ReduceRule* reduce) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) fail(file, std::string("cannot open the image: ") + std::strerror(errno));
  Image out;
  JpegErrors errors;
  const bool ok = read_jpeg(f, channels, reduce, out, errors);
  std::fclose(f);
  if (!ok)
    fail(file, std::string("JPEG: ") + errors.message +
                   (errors.cmyk     ? " (a CMYK JPEG, as print work saves them: save it as RGB, e.g. PIL's "
                                      "Image.convert('RGB'))"
                    : errors.warned ? " (truncated or corrupt file)"
                                    : ""));
  return out;
}

}  // namespace

Image decode_image(const std::string& file, int channels, const ReduceRule& reduce) {
  if (channels != 1 && channels != 3) fail(file, "internal: images decode as 1 or 3 channels");
  return kind_of(file) == Kind::png ? decode_png(file, channels, false) : decode_jpeg(file, channels, &reduce);
}

void image_size(const std::string& file, int& width, int& height) {
  const Image im = kind_of(file) == Kind::png ? decode_png(file, 1, true) : decode_jpeg(file, 1, nullptr);
  width = im.width, height = im.height;
}

ImageStore::ImageStore(std::vector<std::string> files, int channels, std::uint64_t cache_bytes, Rule reduce)
    : files_(std::move(files)),
      channels_(channels),
      reduce_(std::move(reduce)),
      budget_(cache_bytes),
      cache_(files_.size()) {}

std::shared_ptr<const Image> ImageStore::get(std::size_t i) const {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (cache_.at(i)) return cache_[i];
  }
  // Decoded outside the lock: the main thread may decode validation images meanwhile.
  ReduceRule rule;
  if (reduce_) rule = [&](int width, int height) { return reduce_(i, width, height); };
  auto im = std::make_shared<const Image>(decode_image(files_[i], channels_, rule));
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!cache_[i] && used_ + im->pixels.size() <= budget_) {
    cache_[i] = im;
    used_ += im->pixels.size();
  }
  return im;
}

std::uint64_t ImageStore::cached_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

}  // namespace hpct
