// WebP files through libwebp: a still image (lossy or lossless) by WebPDecode, an animation's
// first frame by libwebpdemux's WebPAnimDecoder (as PIL's Image.open shows it), the EXIF chunk's
// orientation by libwebpdemux; a truncated or corrupt file is an Error naming it with libwebp's
// reason. Called by decode_image.
#include <webp/decode.h>
#include <webp/demux.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

namespace {

std::string status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt data (a bitstream error)";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "a feature libwebp does not read";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the data ends early (a truncated file)";
    default: return "error " + std::to_string(static_cast<int>(s));
  }
}

// The first `limit` bytes of `file` (all of them if it is shorter), and its size in `size`.
std::vector<std::uint8_t> read_bytes(const std::string& file, std::size_t limit, std::size_t& size) {
  std::FILE* f = open_image(file);
  const long end = std::fseek(f, 0, SEEK_END) == 0 ? std::ftell(f) : -1;
  if (end < 0 || std::fseek(f, 0, SEEK_SET) != 0) {
    std::fclose(f);
    fail(file, "cannot read the image: cannot tell its size");
  }
  size = static_cast<std::size_t>(end);
  std::vector<std::uint8_t> d(std::min(size, limit));
  const std::size_t got = std::fread(d.data(), 1, d.size(), f);
  const int why = errno;
  std::fclose(f);
  if (got != d.size()) fail(file, std::string("cannot read the image: ") + std::strerror(why));
  return d;
}

// `out`'s pixels from `width` x `height` pixels of `from` channels (3: RGB, 4: RGBA), row by row
// without gaps: their colour, or its grey (Note [grey from colour]); an alpha is dropped (Note [PNG
// alpha]: the colour kept).
void put_pixels(const std::uint8_t* src, int from, Image& out) {
  const auto n = static_cast<std::size_t>(out.width) * out.height;
  out.pixels.resize(n * out.channels);
  for (std::size_t i = 0; i < n; ++i, src += from) {
    if (out.channels == 1) out.pixels[i] = grey_of(src[0], src[1], src[2]);
    else std::memcpy(&out.pixels[i * 3], src, 3);
  }
}

// Note [WebP alpha]: decoded as MODE_RGB (a still image) or MODE_RGBA (an animation's canvas), not
// the premultiplied modes: the colour as stored whatever its alpha, as PIL's convert("RGB") keeps it.
void decode_still(const std::string& file, const std::vector<std::uint8_t>& data, Image& out) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) fail(file, "WebP: libwebp's headers and library differ in version");
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(out.width) * out.height * 3);
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = rgb.data();
  config.output.u.RGBA.stride = out.width * 3;
  config.output.u.RGBA.size = rgb.size();
  const VP8StatusCode s = WebPDecode(data.data(), data.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (s == VP8_STATUS_OUT_OF_MEMORY) throw std::bad_alloc();  // Note [decoders' out of memory]
  if (s != VP8_STATUS_OK) fail(file, "WebP: " + status_text(s));
  if (out.channels == 3) out.pixels = std::move(rgb);
  else put_pixels(rgb.data(), 3, out);
}

// Note [animated WebP]: an animation reads as its first frame on the canvas, as PIL's Image.open
// shows it (Pillow decodes every WebP through the same WebPAnimDecoder): the canvas is transparent
// black (0, 0, 0) where a smaller first frame leaves it, whatever background colour the file names.
void decode_first_frame(const std::string& file, const std::vector<std::uint8_t>& data, Image& out) {
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options))
    fail(file, "WebP: libwebpdemux's headers and library differ in version");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;  // the loader thread decodes; one file needs no more
  const WebPData whole{data.data(), data.size()};
  const std::unique_ptr<WebPAnimDecoder, void (*)(WebPAnimDecoder*)> dec(WebPAnimDecoderNew(&whole, &options),
                                                                         WebPAnimDecoderDelete);
  std::uint8_t* canvas = nullptr;
  int timestamp = 0;
  // No reason is given: a refused allocation reads as a bad file (Note [decoders' out of memory]).
  if (!dec || !WebPAnimDecoderGetNext(dec.get(), &canvas, &timestamp))
    fail(file, "WebP: the animation's first frame cannot be read (a truncated or corrupt file)");
  put_pixels(canvas, 4, out);
}

// Note [WebP orientation]: the Orientation of the EXIF chunk, found by libwebpdemux as Pillow finds
// it (its WebP reader is built on the same demuxer): only where the VP8X header's flags say the file
// has one (the demuxer keeps the chunk only then). The chunk holds the TIFF header and directories of
// an EXIF block without the "Exif\0\0" that starts a JPEG's (Pillow writes it so; its animations and
// some other writers keep the six bytes): read as the JPEG's block either way (Note [EXIF
// orientation]). The chunk follows the image data, so where only the file's first bytes were read
// (`data`, of the file's `size` bytes: the check at open) and the flags name one, the file is read
// whole. A file the demuxer refuses (truncated: its decode says so) reads as orientation 1.
int orientation_of(const std::string& file, std::vector<std::uint8_t>& data, std::size_t size) {
  using Demuxer = std::unique_ptr<WebPDemuxer, void (*)(WebPDemuxer*)>;
  const WebPData head{data.data(), data.size()};
  WebPDemuxState state;
  const Demuxer partial(WebPDemuxPartial(&head, &state), WebPDemuxDelete);
  if (!partial || (WebPDemuxGetI(partial.get(), WEBP_FF_FORMAT_FLAGS) & EXIF_FLAG) == 0) return 1;
  if (data.size() < size) data = read_bytes(file, SIZE_MAX, size);
  const WebPData whole{data.data(), data.size()};
  const Demuxer demux(WebPDemux(&whole), WebPDemuxDelete);
  WebPChunkIterator chunk;
  if (!demux || !WebPDemuxGetChunk(demux.get(), "EXIF", 1, &chunk)) return 1;
  static const std::uint8_t kExif[6] = {'E', 'x', 'i', 'f', 0, 0};
  std::vector<std::uint8_t> block;
  if (chunk.chunk.size < 6 || std::memcmp(chunk.chunk.bytes, kExif, 6) != 0) block.assign(kExif, kExif + 6);
  block.insert(block.end(), chunk.chunk.bytes, chunk.chunk.bytes + chunk.chunk.size);
  WebPDemuxReleaseChunkIterator(&chunk);
  return exif_orientation(block.data(), block.size());
}

}  // namespace

Image decode_webp(const std::string& file, int channels, bool header_only, int* orientation, bool* whole) {
  // Note [WebP headers]: the size and the features (alpha, animation) are in the first chunks,
  // read from the first 4 KiB; a file with a larger chunk before them (an ICC profile) is read whole.
  constexpr std::size_t kHead = 4096;
  std::size_t size = 0;
  std::vector<std::uint8_t> data = read_bytes(file, header_only ? kHead : SIZE_MAX, size);
  WebPBitstreamFeatures features;
  VP8StatusCode s = WebPGetFeatures(data.data(), data.size(), &features);
  if (s == VP8_STATUS_NOT_ENOUGH_DATA && data.size() < size) {
    data = read_bytes(file, SIZE_MAX, size);
    s = WebPGetFeatures(data.data(), data.size(), &features);
  }
  if (s != VP8_STATUS_OK) fail(file, "WebP: " + status_text(s));
  check_pixel_count(file, static_cast<std::uint64_t>(features.width), static_cast<std::uint64_t>(features.height));
  Image out;
  out.width = out.file_width = features.width;
  out.height = out.file_height = features.height;
  out.channels = channels;
  if (orientation != nullptr) *orientation = orientation_of(file, data, size);
  if (header_only) {
    // A whole file is its RIFF chunk: 8 bytes of header and the size its header gives (even).
    if (whole != nullptr) {
      const std::uint64_t riff = data[4] | data[5] << 8 | data[6] << 16 | static_cast<std::uint64_t>(data[7]) << 24;
      *whole = size == riff + 8;
    }
    return out;
  }
  if (features.has_animation) decode_first_frame(file, data, out);
  else decode_still(file, data, out);
  return out;
}

}  // namespace hpct::image_formats
