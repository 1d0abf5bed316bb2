"""What the image-file writers (make_image_formats.py, make_heif_images.py, make_bitmap_images.py)
share: what they need checked, the writer stopped naming the first thing missing, their output folder
made afresh, and Pillow's decode of each file written beside it as the tests' reference."""
import os
import shutil
import sys


def require(writer, needs):
    """Stops `writer` (exit 1: a Pillow or tool without what the fixture needs is a broken setup, not
    a skip) printing the reason of the first of `needs`, (present, reason) pairs, not present."""
    for present, reason in needs:
        if not present:
            print(f"{writer}: {reason}")
            sys.exit(1)


def fresh_output(argv, folder):
    """The writer's OUT_DIR (argv[1]) emptied, with its subfolder `folder` made: (OUT_DIR, that folder)."""
    out = argv[1]
    shutil.rmtree(out, ignore_errors=True)
    path = os.path.join(out, folder)
    os.makedirs(path)
    return out, path


class References:
    """Files written into `folder`, each with Pillow's decode beside it (<name>.rgb, <name>.l: its
    convert("RGB") and convert("L") bytes) and a line of index.tsv (name, width, height)."""

    def __init__(self, folder):
        self.folder, self.index = folder, []

    def reference(self, name, sixteen=None, grey=None, rgb=None):
        """Pillow's decode of <folder>/<name> beside it; `sixteen`: True (read it as 16-bit samples) or
        its 16-bit samples (H x W or H x W x 3), scaled as round(v / 257); `grey` or `rgb`: its 8-bit
        grey values or RGB pixels, for a layout Pillow cannot read or reads otherwise than its current
        release (the grey of `rgb` as Pillow's convert("L") makes it)."""
        import numpy as np
        from PIL import Image
        path = os.path.join(self.folder, name)
        if rgb is not None:
            c, l, size = rgb, np.asarray(Image.fromarray(rgb, "RGB").convert("L")), (rgb.shape[1], rgb.shape[0])
        elif grey is not None:
            c, l, size = np.repeat(grey[..., None], 3, -1), grey, (grey.shape[1], grey.shape[0])
        else:
            with Image.open(path) as im:
                if sixteen is None:
                    c, l = np.asarray(im.convert("RGB")), np.asarray(im.convert("L"))
                else:
                    v = np.asarray(im).astype(np.uint32) if sixteen is True else sixteen.astype(np.uint32)
                    v8 = ((v * 255 + 32767) // 65535).astype(np.uint8)
                    c = v8 if v8.ndim == 3 else np.repeat(v8[..., None], 3, -1)
                    l = v8 if v8.ndim == 2 else np.asarray(Image.fromarray(v8, "RGB").convert("L"))
                size = im.size
        open(path + ".rgb", "wb").write(np.ascontiguousarray(c).tobytes())
        open(path + ".l", "wb").write(np.ascontiguousarray(l).tobytes())
        self.index.append(f"{name}\t{size[0]}\t{size[1]}\n")

    def save(self, im, name, sixteen=None, **kw):
        """`im` saved by Pillow as <folder>/<name> (its options in kw), with its reference."""
        im.save(os.path.join(self.folder, name), **kw)
        self.reference(name, sixteen)

    def write(self, name, data, sixteen=None):
        """Bytes written as <folder>/<name> (a layout Pillow does not write), with Pillow's reading."""
        open(os.path.join(self.folder, name), "wb").write(data)
        self.reference(name, sixteen)

    def write_index(self):
        open(os.path.join(self.folder, "index.tsv"), "w").write("".join(self.index))


def pictures(seed):
    """The writers' test picture, 37 x 23, of a seeded noise: (W, H, x, y, rgb, alpha, grey16); alpha 0
    at the left edge, 255 at the right; grey16 16-bit grey over its whole range."""
    import numpy as np
    rng = np.random.default_rng(seed)
    W, H = 37, 23
    y, x = np.mgrid[0:H, 0:W]
    rgb = np.stack([(7 * x + 3 * y) % 256, (5 * x * y) % 256, 255 - (11 * y) % 256], -1)
    rgb = np.clip(rgb + rng.integers(-20, 21, rgb.shape), 0, 255).astype(np.uint8)
    alpha = ((x * 255) // (W - 1)).astype(np.uint8)
    grey16 = ((x * 1789 + y * 2711 + rng.integers(0, 300, (H, W))) % 65536).astype(np.uint16)
    return W, H, x, y, rgb, alpha, grey16
