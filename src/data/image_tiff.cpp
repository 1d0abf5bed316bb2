// TIFF files through libtiff (its first page; any compression it reads: LZW, deflate, PackBits,
// JPEG, CCITT): 8- and 16-bit grey, grey with alpha, RGB and RGBA, 1-bit black and white, 8-bit
// palettes, in strips or tiles, interleaved or in planes. libtiff's errors and warnings go to a
// handler of the file's own, not to stderr: a truncated or corrupt file is an Error naming it
// with libtiff's first message. Called by decode_image.
#include <tiffio.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "core/log.hpp"
#include "data/image_formats.hpp"

#ifndef TIFFLIB_AT_LEAST  // libtiff before 4.5 does not define it
#error "hpctrain needs libtiff 4.5 or later (TIFFOpenExt: per-file error handlers)"
#elif !TIFFLIB_AT_LEAST(4, 5, 0)
#error "hpctrain needs libtiff 4.5 or later (TIFFOpenExt: per-file error handlers)"
#endif

namespace hpct::image_formats {

namespace {

// Note [libtiff messages]: libtiff reports through handlers, by default printing to stderr; each
// file opened gets its own (TIFFOpenExt, libtiff >= 4.5), which keeps the first error (the one
// that says what is wrong: "Read error on strip 3; got 512 bytes, expected 4096"; one in the
// directory only where it stops the open: TiffFile) for our Error and drops the warnings (an
// unknown tag, an odd but readable field: the pixels decide). Handlers of a file's own are
// thread-safe, as the loader threads need; the process-wide ones are silenced too (once), for a
// message libtiff might give without a file.
int keep_first_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto& first = *static_cast<std::string*>(user);
  if (first.empty()) {
    char text[512];
    std::vsnprintf(text, sizeof(text), fmt, ap);
    first = module != nullptr && *module != '\0' ? std::string(module) + ": " + text : text;
  }
  return 1;  // handled: the process-wide handler is not called
}

int drop_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

// An open TIFF file, closed when it goes; `errors` holds libtiff's first error message.
struct TiffFile {
  TIFF* tif = nullptr;
  std::string errors;
  TiffFile(const TiffFile&) = delete;
  TiffFile& operator=(const TiffFile&) = delete;
  explicit TiffFile(const std::string& file) {
    static std::once_flag silenced;
    std::call_once(silenced, [] {
      TIFFSetErrorHandler(nullptr);
      TIFFSetWarningHandler(nullptr);
    });
    TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(options, keep_first_error, &errors);
    TIFFOpenOptionsSetWarningHandlerExtR(options, drop_warning, nullptr);
    tif = TIFFOpenExt(file.c_str(), "r", options);
    TIFFOpenOptionsFree(options);
    if (tif == nullptr) refuse(file, "cannot read the file");
    // An error in a directory libtiff opened anyway is about a tag it left unset (a value out of
    // range: Orientation 9, read as none, as Pillow reads it); dropped, so that the message of a
    // failure later is that failure's, not "Bad value 9 for Orientation".
    errors.clear();
  }
  ~TiffFile() {
    if (tif != nullptr) TIFFClose(tif);
  }
  // Fails naming `file`: libtiff's first error, else `why`; throws std::bad_alloc where that error
  // says libtiff's allocation was refused (Note [decoders' out of memory]).
  [[noreturn]] void refuse(const std::string& file, const std::string& why) const {
    if (says_out_of_memory(errors)) throw std::bad_alloc();
    fail(file, "TIFF: " + (errors.empty() ? why : errors + " (a truncated or corrupt file)"));
  }
};

// The layout of the first page, as decode reads it.
struct Layout {
  std::uint32_t width = 0, height = 0;
  std::uint16_t bits = 1, samples = 1, photometric = 0, planar = PLANARCONFIG_CONTIG,
                compression = COMPRESSION_NONE;
  bool tiled = false;
  std::uint16_t *red = nullptr, *green = nullptr, *blue = nullptr;  // a palette's colour map
};

// The first page's layout, refused unless decode reads it (saying what the file holds).
Layout layout_of(const TiffFile& t, const std::string& file) {
  Layout l;
  TIFF* tif = t.tif;
  std::uint16_t format = SAMPLEFORMAT_UINT;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &l.width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &l.height))
    t.refuse(file, "no ImageWidth or ImageLength tag");
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l.photometric))
    t.refuse(file, "no PhotometricInterpretation tag (grey, RGB or palette?)");
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &l.bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &l.samples);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &l.planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &l.compression);
  l.tiled = TIFFIsTiled(tif) != 0;
  const std::string held = strf(" (%u samples of %u bits per pixel, photometric %u)", l.samples, l.bits,
                                l.photometric);
  if (format != SAMPLEFORMAT_UINT)
    t.refuse(file, strf("samples of SampleFormat %u (floating-point or signed): not read; save them as 8- or "
                        "16-bit unsigned integers",
                        format));
  // A JPEG-compressed YCbCr page: libjpeg converts it to RGB (as Pillow has libtiff do).
  if (l.photometric == PHOTOMETRIC_YCBCR && l.compression == COMPRESSION_JPEG && l.planar == PLANARCONFIG_CONTIG) {
    TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    l.photometric = PHOTOMETRIC_RGB;
  }
  const bool grey = l.photometric == PHOTOMETRIC_MINISBLACK || l.photometric == PHOTOMETRIC_MINISWHITE;
  bool ok = false;
  if (grey) ok = l.samples >= 1 && (l.bits == 1 || l.bits == 8 || l.bits == 16);
  else if (l.photometric == PHOTOMETRIC_RGB) ok = l.samples >= 3 && (l.bits == 8 || l.bits == 16);
  else if (l.photometric == PHOTOMETRIC_PALETTE)
    ok = l.samples == 1 && l.bits == 8 && TIFFGetField(tif, TIFFTAG_COLORMAP, &l.red, &l.green, &l.blue) != 0;
  if (!ok)
    t.refuse(file, "a layout hpctrain does not read" + held +
                       ": it reads 8- and 16-bit grey and RGB (with alpha), 1-bit black and white and 8-bit "
                       "palettes; save the image as one of those (CMYK as RGB: PIL's Image.convert('RGB'))");
  return l;
}

// Note [TIFF extent]: whether every strip or tile of the first page lies within the file's `size`
// bytes and holds some (a file cut short in a copy loses the data at its end: a writer such as
// Pillow's puts the directory first; libtiff's, after the data, is lost with the end and the file
// is refused at its open).
bool within(TIFF* tif, std::uint64_t size) {
  const std::uint32_t n = TIFFIsTiled(tif) ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  for (std::uint32_t i = 0; i < n; ++i) {
    int err = 0;
    const std::uint64_t at = TIFFGetStrileOffsetWithErr(tif, i, &err),
                        bytes = TIFFGetStrileByteCountWithErr(tif, i, &err);
    if (err != 0 || bytes == 0 || at > size || bytes > size - at) return false;
  }
  return true;
}

// Note [uncompressed TIFF size]: an uncompressed page's samples are in the file as they are, so
// the file is at least as long as they are (whole tiles). A damaged ImageLength or ImageWidth (one
// flipped bit: 23 rows read as 2^24 + 23) within a file otherwise whole had decode allocate the
// samples it claims, gigabytes from a file of a few hundred bytes, before libtiff found the strip
// short (libtiff replaces a single strip's byte count it finds too small by the one the size
// implies, so the strips' byte counts cannot tell): refused before that, at the check at open too.
// Compressed strips can hold any number of pixels; their decoder stops where their data does.
void check_uncompressed_size(const TiffFile& t, const std::string& file, const Layout& l) {
  if (l.compression != COMPRESSION_NONE) return;
  TIFF* tif = t.tif;
  const std::uint64_t planes = l.planar == PLANARCONFIG_SEPARATE ? l.samples : 1;
  const std::uint64_t need = l.tiled ? static_cast<std::uint64_t>(TIFFNumberOfTiles(tif)) * TIFFTileSize64(tif)
                                     : planes * l.height * TIFFScanlineSize64(tif);
  const auto size = static_cast<std::uint64_t>(TIFFGetSizeProc(tif)(TIFFClientdata(tif)));
  if (need > size)
    t.refuse(file,
             strf("its %u x %u pixels need %llu bytes uncompressed, the file has %llu (a truncated or corrupt "
                  "file)",
                  l.width, l.height, static_cast<unsigned long long>(need), static_cast<unsigned long long>(size)));
}

// The first page's samples as stored (after decompression), plane after plane (one plane unless
// PlanarConfiguration is separate), each plane `row` bytes a row.
std::vector<std::uint8_t> read_samples(const TiffFile& t, const std::string& file, const Layout& l,
                                       std::size_t row) {
  TIFF* tif = t.tif;
  const std::uint32_t planes = l.planar == PLANARCONFIG_SEPARATE ? l.samples : 1, h = l.height;
  const std::uint32_t per_pixel = (l.planar == PLANARCONFIG_SEPARATE ? 1 : l.samples) * l.bits;  // bits
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(planes) * h * row);
  if (!l.tiled) {
    std::uint32_t strip_rows = h;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &strip_rows);
    strip_rows = std::max<std::uint32_t>(1, std::min(strip_rows, h));
    const std::uint32_t strips = (h + strip_rows - 1) / strip_rows;
    for (std::uint32_t p = 0; p < planes; ++p)
      for (std::uint32_t s = 0; s < strips; ++s) {
        const std::uint32_t rows = std::min(strip_rows, h - s * strip_rows);
        std::uint8_t* at = raw.data() + (static_cast<std::size_t>(p) * h + s * strip_rows) * row;
        if (TIFFReadEncodedStrip(tif, p * strips + s, at, static_cast<tmsize_t>(rows * row)) < 0)
          t.refuse(file, strf("strip %u cannot be read", p * strips + s));
      }
    return raw;
  }
  std::uint32_t tw = 0, th = 0;
  TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
  const auto tile_row = static_cast<std::size_t>(TIFFTileRowSize(tif));
  std::vector<std::uint8_t> tile(static_cast<std::size_t>(TIFFTileSize(tif)));
  if (tw == 0 || th == 0 || tile.empty() || tile_row == 0) t.refuse(file, "a tile size of 0");
  for (std::uint32_t p = 0; p < planes; ++p)
    for (std::uint32_t y = 0; y < h; y += th)
      for (std::uint32_t x = 0; x < l.width; x += tw) {
        const std::uint32_t i = TIFFComputeTile(tif, x, y, 0, static_cast<std::uint16_t>(p));
        if (TIFFReadEncodedTile(tif, i, tile.data(), static_cast<tmsize_t>(tile.size())) < 0)
          t.refuse(file, strf("tile %u cannot be read", i));
        // Tile widths are multiples of 16 pixels: a tile's first byte starts a pixel.
        const std::size_t skip = static_cast<std::size_t>(x) * per_pixel / 8,
                          bytes = std::min(tile_row, row - skip);
        for (std::uint32_t r = 0; r < th && y + r < h; ++r)
          std::memcpy(raw.data() + (static_cast<std::size_t>(p) * h + y + r) * row + skip,
                      tile.data() + r * tile_row, bytes);
      }
  return raw;
}

// Sample `k` of each of the `w` pixels of a row of samples `step` apart (`bits` each) as 8 bits,
// into `to`. Note [16-bit TIFFs]: a 16-bit sample v becomes round(v / 257), as a 16-bit PNG's does
// (Note [16-bit PNGs]): 65535 white, 32896 mid-grey 128. Pillow's convert("L") and convert("RGB")
// of a 16-bit grey image (mode I;16, PNG or TIFF) clip instead (min(v, 255): 32896 white, a
// microscope's image all white but its darkest pixels), and its 16-bit RGB reading keeps the high
// byte (v >> 8, at most 1 below ours).
void sample_row(const std::uint8_t* r, std::size_t k, std::size_t step, std::size_t w, unsigned bits,
                std::uint8_t* to) {
  if (bits == 8) {
    for (std::size_t x = 0; x < w; ++x) to[x] = r[x * step + k];
  } else if (bits == 16) {
    for (std::size_t x = 0; x < w; ++x) {
      std::uint16_t v;
      std::memcpy(&v, r + 2 * (x * step + k), 2);  // in the host's byte order (libtiff swaps)
      to[x] = static_cast<std::uint8_t>((v * 255u + 32767u) / 65535u);
    }
  } else {  // 1 bit, the first pixel in the high bit (libtiff turns FillOrder 2 round)
    for (std::size_t x = 0; x < w; ++x) {
      const std::size_t i = x * step + k;
      to[x] = static_cast<std::uint8_t>((r[i >> 3] >> (7 - (i & 7)) & 1u) * 255u);
    }
  }
}

}  // namespace

Image decode_tiff(const std::string& file, int channels, bool header_only, int* orientation, bool* whole) {
  const TiffFile t(file);
  const Layout l = layout_of(t, file);
  // Note [pixel limit], after the more telling message where it applies (an uncompressed page).
  check_uncompressed_size(t, file, l);
  check_pixel_count(file, l.width, l.height);
  if (orientation != nullptr) {  // Note [EXIF orientation]: the first page's tag, 1 where none
    std::uint16_t o = ORIENTATION_TOPLEFT;
    *orientation = TIFFGetField(t.tif, TIFFTAG_ORIENTATION, &o) && o >= 1 && o <= 8 ? o : 1;
  }
  Image out;
  out.width = out.file_width = static_cast<int>(l.width);
  out.height = out.file_height = static_cast<int>(l.height);
  out.channels = channels;
  if (header_only) {
    if (whole != nullptr)
      *whole = within(t.tif, static_cast<std::uint64_t>(TIFFGetSizeProc(t.tif)(TIFFClientdata(t.tif))));
    return out;
  }
  const auto row = static_cast<std::size_t>(TIFFScanlineSize64(t.tif));
  std::vector<std::uint8_t> raw = read_samples(t, file, l, row);
  const bool planes = l.planar == PLANARCONFIG_SEPARATE;
  const std::size_t plane = static_cast<std::size_t>(l.height) * row, step = planes ? 1 : l.samples;
  const auto w = static_cast<std::size_t>(l.width), h = static_cast<std::size_t>(l.height);
  // 8-bit RGB read as RGB, 8-bit grey (black 0) as grey: the samples as stored are the pixels.
  if (l.bits == 8 && step == static_cast<std::size_t>(channels) && raw.size() == w * h * step &&
      (channels == 3 ? l.photometric == PHOTOMETRIC_RGB : l.photometric == PHOTOMETRIC_MINISBLACK)) {
    out.pixels = std::move(raw);
    return out;
  }
  const bool colour = l.photometric == PHOTOMETRIC_RGB || l.photometric == PHOTOMETRIC_PALETTE;
  // Row by row: each colour sample (one for grey and palettes) as 8 bits into its own row, then the
  // pixels from those, so that the loops over a row hold no test of the layout.
  std::vector<std::uint8_t> rows(3 * w);
  out.pixels.resize(w * h * channels);
  std::uint8_t* px = out.pixels.data();
  for (std::size_t y = 0; y < h; ++y) {
    std::uint8_t* c[3] = {rows.data(), rows.data() + w, rows.data() + 2 * w};
    for (std::size_t k = 0; k < (l.photometric == PHOTOMETRIC_RGB ? 3u : 1u); ++k)
      sample_row(raw.data() + (planes ? k : 0) * plane + y * row, planes ? 0 : k, step, w, l.bits, c[k]);
    if (l.photometric == PHOTOMETRIC_PALETTE) {  // 16-bit colours: their high byte, as Pillow reads them
      for (std::size_t x = 0; x < w; ++x) {
        const std::uint8_t v = c[0][x];
        c[0][x] = static_cast<std::uint8_t>(l.red[v] >> 8), c[1][x] = static_cast<std::uint8_t>(l.green[v] >> 8);
        c[2][x] = static_cast<std::uint8_t>(l.blue[v] >> 8);
      }
    } else if (l.photometric == PHOTOMETRIC_MINISWHITE) {
      for (std::size_t x = 0; x < w; ++x) c[0][x] = static_cast<std::uint8_t>(255 - c[0][x]);
    }
    if (!colour) c[1] = c[2] = c[0];
    if (channels == 3) {
      for (std::size_t x = 0; x < w; ++x) px[3 * x] = c[0][x], px[3 * x + 1] = c[1][x], px[3 * x + 2] = c[2][x];
    } else if (colour) {  // as PIL's convert("L") (Note [grey from colour])
      for (std::size_t x = 0; x < w; ++x) px[x] = grey_of(c[0][x], c[1][x], c[2][x]);
    } else {
      std::memcpy(px, c[0], w);
    }
    px += w * channels;
  }
  return out;
}

}  // namespace hpct::image_formats
