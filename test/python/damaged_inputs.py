"""The valid inputs damaged_files.py writes with the standard library (its cases' files before their
damage): a grey PNG and an uncompressed RGB TIFF written byte by byte, CSV, TSV and LibSVM tables of
one regression, an image folder of either, and scenes_import's CSV tracks."""
import os
import struct
import zlib


def png(path, w, h, value):
    """A grey 8-bit PNG of w x h pixels, pixel (x, y) = (value + 3 x + 5 y) % 256."""
    raw = b"".join(b"\0" + bytes((value + 3 * x + 5 * y) % 256 for x in range(w)) for y in range(h))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def tiff(path, w, h, value):
    """An uncompressed RGB TIFF (little-endian, one strip, the directory after the pixels)."""
    pixels = bytes((value + k * 40 + x + 2 * y) % 256 for y in range(h) for x in range(w) for k in range(3))
    bps_at = 8 + len(pixels)
    ifd_at = bps_at + 6
    tags = [(256, 3, 1, w), (257, 3, 1, h), (258, 3, 3, bps_at), (259, 3, 1, 1), (262, 3, 1, 2),
            (273, 4, 1, 8), (277, 3, 1, 3), (278, 3, 1, h), (279, 4, 1, len(pixels))]
    ifd = struct.pack("<H", len(tags)) + b"".join(
        struct.pack("<HHI", t, k, n) + (struct.pack("<HH", v, 0) if k == 3 and n == 1 else struct.pack("<I", v))
        for t, k, n, v in tags) + struct.pack("<I", 0)
    with open(path, "wb") as f:
        f.write(b"II*\0" + struct.pack("<I", ifd_at) + pixels + struct.pack("<HHH", 8, 8, 8) + ifd)


def table_rows(n=60):
    """Rows (a, b, c, y) of a small regression table, from a fixed LCG."""
    s, rows = 12345, []
    for _ in range(n):
        v = []
        for _ in range(3):
            s = (s * 1103515245 + 12345) % 2147483648
            v.append(s / 2147483648)
        rows.append(v + [3 * v[0] + v[1] * v[1]])
    return rows


def make_text_tables(d):
    rows = table_rows()
    with open(f"{d}/table.csv", "w") as f:
        f.write("a,b,c,y\n" + "".join(",".join(f"{v:.6f}" for v in r) + "\n" for r in rows))
    with open(f"{d}/table.tsv", "w") as f:
        f.write("a\tb\tc\ty\n" + "".join("\t".join(f"{v:.6f}" for v in r) + "\n" for r in rows))
    with open(f"{d}/table.svm", "w") as f:
        f.write("".join(f"{r[3]:.6f} 1:{r[0]:.6f} 2:{r[1]:.6f} 3:{r[2]:.6f}\n" for r in rows))


def make_image_folder(d, ext):
    """2 classes x 3 images of 10 x 8 pixels; the damaged one is cls1/i1.<ext>."""
    for c in range(2):
        os.makedirs(f"{d}/folder/cls{c}")
        for i in range(3):
            (png if ext == "png" else tiff)(f"{d}/folder/cls{c}/i{i}.{ext}", 10, 8, 60 * c + 9 * i)


def make_tracks_csv(d):
    """One scenario, 3 tracks over 12 s at 10 Hz (Argoverse 2's columns)."""
    with open(f"{d}/tracks.csv", "w") as f:
        f.write("scenario_id,track_id,timestep,position_x,position_y,heading,object_type\n")
        for t in range(3):
            for k in range(120):
                f.write(f"s1,{t},{k},{1.5 * t + 0.9 * k / 10:.3f},{2.0 * t - 0.3 * k / 10:.3f},0.1,vehicle\n")
