#!/usr/bin/env python3
"""Which C++ sources of a CUDA build reach no Kokkos or CUDA header (Note [host-only sources] in
cmake/CudaHostOnly.cmake), found by following their #include lines through the project's headers.

usage: kokkos_free_sources.py OUT_SOURCES OUT_READ INCLUDE_DIR... -- SOURCE...
Writes the sources that may skip nvcc to OUT_SOURCES and every project file their verdict read
(the sources and the headers they reach) to OUT_READ, one path a line.
"""
import os
import re
import sys

# A header by one of these names needs nvcc (Kokkos, Kokkos Kernels, the CUDA libraries), as does a
# file that asks which compiler it is in: over-marking only costs time, under-marking fails loudly.
NEEDS_NVCC_HEADER = re.compile(r"^(Kokkos|impl/Kokkos|KokkosBlas|KokkosKernels|KokkosSparse|KokkosBatched|"
                               r"cuda|cublas|cudnn|curand|cusparse|cufft|nccl|nvtx|thrust/|cub/)")
NEEDS_NVCC_TEXT = re.compile(r"__CUDACC__|__NVCC__|__CUDA_ARCH__|KOKKOS_")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)


def main(argv):
    out_sources, out_read = argv[1], argv[2]
    split = argv.index("--")
    include_dirs = argv[3:split]
    sources = argv[split + 1:]
    verdict = {}  # path -> True when it needs nvcc
    read = set()  # the project files the free sources reach

    def resolve(kind, name, here):
        dirs = ([here] if kind == '"' else []) + include_dirs
        for d in dirs:
            path = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(path):
                return path
        return None  # a system or third-party header: judged by its name alone

    def needs_nvcc(path):
        if path in verdict:
            return verdict[path]
        verdict[path] = False  # a cycle: the include guard makes the second visit empty
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        result = bool(NEEDS_NVCC_TEXT.search(text))
        for kind, name in INCLUDE.findall(text):
            if result:
                break
            if NEEDS_NVCC_HEADER.match(name):
                result = True
                break
            found = resolve(kind, name, os.path.dirname(path))
            if found is not None and needs_nvcc(found):
                result = True
        verdict[path] = result
        return result

    free = [s for s in sources if not needs_nvcc(os.path.normpath(s))]

    def reach(path):  # every project file a free source's verdict read
        if path in read:
            return
        read.add(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            for kind, name in INCLUDE.findall(f.read()):
                found = resolve(kind, name, os.path.dirname(path))
                if found is not None:
                    reach(found)

    read.clear()
    for s in free:
        reach(os.path.normpath(s))
    with open(out_sources, "w", encoding="utf-8") as f:
        f.write("".join(s + "\n" for s in free))
    with open(out_read, "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in sorted(read)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
