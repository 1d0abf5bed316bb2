// PNG through libpng's simplified API, JPEG through libjpeg-turbo (errors and warnings, such as a
// truncated file, become an Error naming the file), WebP, TIFF, HEIF, AVIF, BMP, GIF and PNM through
// their own files (image_formats.hpp), each told by its first bytes; EXIF orientation
// (image_orientation.cpp) applied to JPEG, WebP, PNG and TIFF; and the image store's cache.
#include "data/image_decode.hpp"

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
// clang-format off
#include <jpeglib.h>  // needs <cstdio> first
#include <jerror.h>   // JERR_OUT_OF_MEMORY
// clang-format on
#include <png.h>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "data/image_formats.hpp"

namespace hpct {

namespace image_formats {

void fail(const std::string& file, const std::string& why) { throw Error(file + ": " + why, ExitCode::bad_input); }

namespace {
std::atomic<std::uint64_t> pixel_limit{kPillowBombPixels};  // Note [pixel limit]
}  // namespace

bool too_many_pixels(std::uint64_t width, std::uint64_t height) {
  const std::uint64_t limit = pixel_limit.load();
  return limit > 0 && width * height > limit;  // both below 2^32: no overflow
}

void check_pixel_count(const std::string& file, std::uint64_t width, std::uint64_t height) {
  if (too_many_pixels(width, height))
    fail(file,
         strf("the image claims %llu x %llu = %llu pixels, more than max_image_pixels %llu (Pillow's "
              "decompression-bomb limit: a damaged or malicious header); raise max_image_pixels, or set it 0, "
              "for an image this large",
              static_cast<unsigned long long>(width), static_cast<unsigned long long>(height),
              static_cast<unsigned long long>(width * height),
              static_cast<unsigned long long>(pixel_limit.load())));
}

std::FILE* open_image(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) fail(file, std::string("cannot open the image: ") + std::strerror(errno));
  return f;
}

}  // namespace image_formats

void set_max_image_pixels(std::uint64_t pixels) { image_formats::pixel_limit = pixels; }
std::uint64_t max_image_pixels() { return image_formats::pixel_limit.load(); }

namespace {

using image_formats::exif_orientation;
using image_formats::fail;
using image_formats::open_image;
using image_formats::png_orientation;
using image_formats::upright;

enum class Kind { png, jpeg, webp, tiff, heif, bmp, gif, pnm };

constexpr std::size_t kHeadBytes = 12;  // enough to tell every kind (WebP's: "RIFF", size, "WEBP")

// The kind told by the first `n` bytes of `file`, `head`: PNG's signature, JPEG's start-of-image
// marker, a RIFF file of form WEBP, a TIFF's (or BigTIFF's) byte order and magic number, an
// ISO-BMFF file (its first box `ftyp`) whose major brand is HEIF's or AVIF's: HEVC images (heic,
// heix, heim, heis), sequences (hevc, hevx, hevm, hevs), the generic image and sequence brands (mif1,
// msf1, mif2: a phone's HEIC may carry mif1 first) and AV1's (avif, avis). A video's (isom, mp42, qt)
// is none of them; a BMP's "BM", a GIF's "GIF87a" or "GIF89a", a PNM's "P1" to "P6" and a white
// space (PBM, PGM, PPM: plain, then binary; Pillow reads these six).
bool heif_brand(const unsigned char* b) {
  static const char kBrands[][5] = {"heic", "heix", "heim", "heis", "hevc", "hevx", "hevm",
                                    "hevs", "mif1", "msf1", "mif2", "avif", "avis"};
  for (const char* k : kBrands)
    if (std::memcmp(b, k, 4) == 0) return true;
  return false;
}

Kind kind_from(const unsigned char* head, std::size_t n, const std::string& file) {
  if (n >= 8 && png_sig_cmp(head, 0, 8) == 0) return Kind::png;
  if (n >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) return Kind::jpeg;
  if (n >= 12 && std::memcmp(head, "RIFF", 4) == 0 && std::memcmp(head + 8, "WEBP", 4) == 0) return Kind::webp;
  if (n >= 4 && (std::memcmp(head, "II*\0", 4) == 0 || std::memcmp(head, "MM\0*", 4) == 0 ||
                 std::memcmp(head, "II+\0", 4) == 0 || std::memcmp(head, "MM\0+", 4) == 0))
    return Kind::tiff;
  if (n >= 12 && std::memcmp(head + 4, "ftyp", 4) == 0 && heif_brand(head + 8)) return Kind::heif;
  if (n >= 2 && head[0] == 'B' && head[1] == 'M') return Kind::bmp;
  if (n >= 6 && (std::memcmp(head, "GIF87a", 6) == 0 || std::memcmp(head, "GIF89a", 6) == 0)) return Kind::gif;
  if (n >= 3 && head[0] == 'P' && head[1] >= '1' && head[1] <= '6' &&
      (head[2] == ' ' || head[2] == '\t' || head[2] == '\r' || head[2] == '\n'))
    return Kind::pnm;
  fail(file, n == 0 ? "the image file is empty"
                    : "not a PNG, JPEG, WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM file (by its first bytes)");
}

Kind kind_of(const std::string& file) {
  std::FILE* f = open_image(file);
  unsigned char head[kHeadBytes] = {0};
  const std::size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  return kind_from(head, n, file);
}

// A libpng failure of `file` with the simplified API's `message`: an allocation refused as
// std::bad_alloc (Note [decoders' out of memory]), else a bad file.
[[noreturn]] void png_failed(const std::string& file, const char* message) {
  if (image_formats::says_out_of_memory(message)) throw std::bad_alloc();
  fail(file, std::string("PNG: ") + message);
}

// libpng's read state, freed when it goes (png_image_free: after png_image_finish_read, or its error,
// freed it already, a no-op): also where our pixel buffer is refused between begin and finish.
struct PngRead {
  png_image im;
  PngRead() {
    std::memset(&im, 0, sizeof(im));
    im.version = PNG_IMAGE_VERSION;
  }
  ~PngRead() { png_image_free(&im); }
  PngRead(const PngRead&) = delete;
  PngRead& operator=(const PngRead&) = delete;
};

Image decode_png(const std::string& file, int channels, bool header_only) {
  PngRead read;
  png_image& im = read.im;
  if (!png_image_begin_read_from_file(&im, file.c_str())) png_failed(file, im.message);
  image_formats::check_pixel_count(file, im.width, im.height);
  Image out;
  out.width = static_cast<int>(im.width), out.height = static_cast<int>(im.height), out.channels = channels;
  out.file_width = out.width, out.file_height = out.height;
  if (header_only) return out;
  // Note [PNG alpha]: without an alpha channel in the output, libpng composites a transparent or
  // translucent pixel onto black; PIL's convert("RGB"), torchvision and OpenCV drop the alpha and
  // keep the colour. Read with it, then dropped, so a cut-out's edges keep their colour.
  const bool alpha = (im.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  im.format = (channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
  // Note [16-bit PNGs]: the simplified API takes a 16-bit file without a gAMA or sRGB chunk (as
  // PIL, OpenCV and scanners write them) as linear light and gamma-encodes it into 8 bits: a grey of
  // 32896 / 65535 came out 186, not 128, every picture brighter than OpenCV's or torchvision's
  // reading. Its values are taken as they are instead (value / 257: 16 bits onto 8; Pillow 9.4's
  // convert("L") clips 16-bit grey at 255 instead: docs/image-formats.md); a file that states its
  // gamma keeps libpng's conversion.
  im.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  out.pixels.resize(PNG_IMAGE_SIZE(im));
  if (!png_image_finish_read(&im, nullptr, out.pixels.data(), 0, nullptr)) png_failed(file, im.message);
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
  bool cmyk = false;       // libjpeg converts CMYK and YCCK to neither RGB nor grey
  bool too_large = false;  // more pixels than max_image_pixels (Note [pixel limit])
  bool no_memory = false;  // libjpeg's allocation refused (Note [out of memory at the image check])
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  e->no_memory = cinfo->err->msg_code == JERR_OUT_OF_MEMORY;
  std::longjmp(e->jump, 1);
}

void jpeg_emit(j_common_ptr cinfo, int level) {
  auto* e = reinterpret_cast<JpegErrors*>(cinfo->err);
  if (level < 0 && !e->warned) {
    (*cinfo->err->format_message)(cinfo, e->message);
    e->warned = true;
  }
}

// libjpeg's decompressor, destroyed when it goes (jpeg_destroy_decompress: a no-op where it was
// destroyed, or never created: the struct starts zeroed): also where our pixel buffer is refused
// inside the decode (a C++ exception, which passes read_jpeg's frame without its setjmp).
struct JpegDecoder {
  jpeg_decompress_struct cinfo{};
  JpegDecoder() = default;
  ~JpegDecoder() { jpeg_destroy_decompress(&cinfo); }
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
};

// Note [jpeg and setjmp]: everything the jump must not skip a destructor of lives outside this
// function (the decompressor in `decoder`); it only fills `out`, whose buffer is sized before the
// reading starts.
bool read_jpeg(std::FILE* f, int channels, const ReduceRule* reduce, bool orient, Image& out, int& orientation,
               JpegErrors& errors, JpegDecoder& decoder) {
  jpeg_decompress_struct& cinfo = decoder.cinfo;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = jpeg_error_exit;
  errors.mgr.emit_message = jpeg_emit;
  if (setjmp(errors.jump)) return false;  // `decoder` destroys the decompressor
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  if (orient) jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&cinfo, TRUE);
  for (jpeg_saved_marker_ptr m = orient ? cinfo.marker_list : nullptr; m != nullptr && orientation == 1;
       m = m->next)
    if (m->marker == JPEG_APP0 + 1) orientation = exif_orientation(m->data, m->data_length);
  out.width = out.file_width = static_cast<int>(cinfo.image_width);
  out.height = out.file_height = static_cast<int>(cinfo.image_height);
  out.channels = channels;
  errors.cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  if (image_formats::too_many_pixels(cinfo.image_width, cinfo.image_height)) {
    errors.too_large = true;  // decode_jpeg says so, naming the file
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  if (reduce != nullptr) {                 // nullptr: the header only
    const bool turned = orientation >= 5;  // the rule sees the image as it will be shown
    const int r = *reduce ? (turned ? (*reduce)(out.height, out.width) : (*reduce)(out.width, out.height)) : 1;
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

// Note [TIFF orientation]: a TIFF is shown upright by its Orientation tag whatever exif_orientation
// says, as PIL's Image.open shows it (Pillow turns a TIFF as it loads it, since 6.2: so do
// torchvision's ImageFolder and viewers); the tag is the TIFF format's own, not EXIF metadata beside
// the pixels. (Pillow before 10.1 then turns it a second time in ImageOps.exif_transpose,
// python-pillow/Pillow#7381: its Image.open is the reference, test/python/make_image_formats.py.)
// A JPEG's, WebP's or PNG's EXIF orientation is applied only where asked (Note [EXIF orientation]).
//
// A WebP, TIFF, HEIF, AVIF, BMP, GIF or PNM file as decode_image (`header_only`: image_size) reads
// it, upright where its orientation applies (`orient`: exif_orientation apply); `whole`: as
// image_formats' decoders take it.
Image decode_other(Kind kind, const std::string& file, int channels, bool header_only, bool orient,
                   bool* whole = nullptr) {
  if (kind == Kind::bmp) return image_formats::decode_bmp(file, channels, header_only, whole);
  if (kind == Kind::gif) return image_formats::decode_gif(file, channels, header_only, whole);
  if (kind == Kind::pnm) return image_formats::decode_pnm(file, channels, header_only, whole);
  int o = 1;
  int* orientation = orient || kind == Kind::tiff ? &o : nullptr;
  Image im = kind == Kind::webp   ? image_formats::decode_webp(file, channels, header_only, orientation, whole)
             : kind == Kind::tiff ? image_formats::decode_tiff(file, channels, header_only, orientation, whole)
                                  : image_formats::decode_heif(file, channels, header_only, orientation, whole);
  return upright(std::move(im), o, header_only);
}

// `cmyk`, when given: whether the file is a CMYK or YCCK JPEG (which decode refuses).
Image decode_jpeg(const std::string& file, int channels, const ReduceRule* reduce, bool orient,
                  bool* cmyk = nullptr) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(open_image(file), std::fclose);
  Image out;
  JpegErrors errors;
  int orientation = 1;
  bool ok = false;
  {
    JpegDecoder decoder;  // destroyed before the file is closed
    ok = read_jpeg(f.get(), channels, reduce, orient, out, orientation, errors, decoder);
  }
  if (cmyk != nullptr) *cmyk = errors.cmyk;
  if (errors.too_large) image_formats::check_pixel_count(file, out.file_width, out.file_height);
  if (errors.no_memory) throw std::bad_alloc();  // no bad file (Note [out of memory at the image check])
  if (!ok)
    fail(file, std::string("JPEG: ") + errors.message +
                   (errors.cmyk     ? " (a CMYK JPEG, as print work saves them: save it as RGB, e.g. PIL's "
                                      "Image.convert('RGB'))"
                    : errors.warned ? " (truncated or corrupt file)"
                                    : ""));
  return upright(std::move(out), orientation, reduce == nullptr);  // nullptr: the header only
}

}  // namespace

Image decode_image(const std::string& file, int channels, const ReduceRule& reduce, bool orient) {
  if (channels != 1 && channels != 3) fail(file, "internal: images decode as 1 or 3 channels");
  const Kind kind = kind_of(file);
  switch (kind) {
    case Kind::png: return upright(decode_png(file, channels, false), orient ? png_orientation(file) : 1, false);
    case Kind::jpeg: return decode_jpeg(file, channels, &reduce, orient);
    default: break;
  }
  return decode_other(kind, file, channels, false, orient);
}

bool is_tiff(const std::string& file) {
  try {
    return kind_of(file) == Kind::tiff;
  } catch (const Error&) {
    return false;
  }
}

void image_size(const std::string& file, int& width, int& height, bool orient) {
  Image im;
  const Kind kind = kind_of(file);
  switch (kind) {
    case Kind::png: im = upright(decode_png(file, 1, true), orient ? png_orientation(file) : 1, true); break;
    case Kind::jpeg: im = decode_jpeg(file, 1, nullptr, orient); break;
    default: im = decode_other(kind, file, 1, true, orient); break;
  }
  width = im.width, height = im.height;
}

void check_image(const std::string& file, int& width, int& height, bool orient,
                 const std::function<void()>& whole) {
  // Note [image checks at open]: the first bytes and the last, in one open. A PNG ends with its
  // IEND chunk (length 0, type, CRC), a JPEG with its end-of-image marker; a WebP's and a TIFF's
  // header say where their data ends (decode_webp's and decode_tiff's `whole`: Note [TIFF extent]),
  // a HEIF's top-level boxes (decode_heif's), a BMP's, GIF's and PNM's: decode_bmp's, decode_gif's
  // and decode_pnm's.
  static const unsigned char kPngEnd[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  static const unsigned char kJpegEnd[2] = {0xFF, 0xD9};
  Heartbeat::beat_current("checking an image", file);  // Note [beats from the open]
  std::FILE* f = open_image(file);
  unsigned char head[kHeadBytes] = {0}, tail[12] = {0};
  const std::size_t got = std::fread(head, 1, sizeof(head), f);
  const bool tail_read = std::fseek(f, -12, SEEK_END) == 0 && std::fread(tail, 1, 12, f) == 12;
  std::fclose(f);
  const Kind kind = kind_from(head, got, file);  // throws for a file of no kind read
  bool ends_well = true, cmyk = false;
  Image im;
  switch (kind) {
    case Kind::png:
      ends_well = tail_read && std::memcmp(tail, kPngEnd, 12) == 0;
      im = upright(decode_png(file, 1, true), orient ? png_orientation(file) : 1, true);
      break;
    case Kind::jpeg:
      ends_well = tail_read && std::memcmp(tail + 10, kJpegEnd, 2) == 0;
      im = decode_jpeg(file, 1, nullptr, orient, &cmyk);
      break;
    default: im = decode_other(kind, file, 1, true, orient, &ends_well); break;
  }
  width = im.width, height = im.height;
  if (width <= 0 || height <= 0) fail(file, strf("the image is %d x %d pixels", width, height));
  if (whole) whole();
  else if (!ends_well || cmyk) decode_image(file, 1, {}, orient);  // throws for a file the decoder refuses
}

ImageStore::ImageStore(std::vector<std::string> files, int channels, std::uint64_t cache_bytes, Rule reduce,
                       bool orient)
    : files_(std::move(files)),
      channels_(channels),
      orient_(orient),
      reduce_(std::move(reduce)),
      budget_(cache_bytes),
      cache_(files_.size()) {}

std::shared_ptr<const Image> ImageStore::get(std::size_t i) const {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (cache_.at(i)) return cache_[i];
  }
  // Decoded outside the lock: the main thread may decode validation images meanwhile.
  auto im = std::make_shared<const Image>(decode(i));
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!cache_[i] && used_ + im->pixels.size() <= budget_) {
    cache_[i] = im;
    used_ += im->pixels.size();
  }
  return im;
}

Image ImageStore::decode(std::size_t i) const {
  ReduceRule rule;
  if (reduce_) rule = [&](int width, int height) { return reduce_(i, width, height); };
  return decode_image(files_.at(i), channels_, rule, orient_);
}

std::uint64_t ImageStore::cached_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

}  // namespace hpct
