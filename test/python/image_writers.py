"""What the image-file writers (make_image_formats.py, make_heif_images.py) share at their start: what
they need checked, the writer stopped naming the first thing missing, and their output folder made
afresh."""
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
