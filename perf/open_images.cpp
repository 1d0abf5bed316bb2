// open_images: how long opening an image data source takes and how much memory it holds, at any
// number of ranks (docs/images.md, "Opening image data"): the open as train does it (the COCO JSON
// parsed and checked, or the folder listed) and the files' check split over the ranks (Note [file
// checks over ranks]), each timed as its slowest rank, and the peak resident memory of each rank.
// The open is done once for all ranks (Note [open once per job]); --every-rank: by every rank
// itself, as before, to compare.
// usage: mpirun -np N open_images DATA [--every-rank] [KEY=VALUE]...   (deck keys: data_format,
//        image_dir, check_images_at_open, ...)
#include <mpi.h>
#include <sys/resource.h>

#include <cstdio>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/runtime.hpp"
#include "data/source_registry.hpp"
#include "train/driver.hpp"

int main(int argc, char** argv) {
  hpct::Runtime runtime(argc, argv);
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs("usage: mpirun -np N open_images DATA [--every-rank] [KEY=VALUE]...\n", stderr);
    return 2;
  }
  const hpct::Comm comm;
  try {
    std::vector<std::string> sets = {std::string("data_file=") + argv[1]};
    bool every_rank = false;
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--every-rank") every_rank = true;
      else sets.emplace_back(argv[i]);
    const hpct::deck::Schema schema = hpct::full_schema();
    const hpct::deck::Deck deck = hpct::deck::Deck::parse("", "open_images", schema, sets);
    comm.barrier();
    double t0 = MPI_Wtime();
    std::shared_ptr<const hpct::Dataset> data;
    if (every_rank) comm.run_agreed([&] { data = hpct::open_data_source(deck, argv[1], "data_file"); });
    else data = hpct::open_data_source(deck, argv[1], "data_file", comm);
    const double open_s = comm.max(MPI_Wtime() - t0);
    t0 = MPI_Wtime();
    data = hpct::check_data_files(data, comm);
    const double check_s = comm.max(MPI_Wtime() - t0);
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    // Each rank's: rank 0 parses for all, the others hold what it sent.
    const std::vector<long long> peak_mib = comm.allgather(static_cast<long long>(u.ru_maxrss) / 1024);
    std::string peaks;
    for (const long long p : peak_mib) peaks += (peaks.empty() ? "" : ", ") + std::to_string(p);
    if (comm.rank() == 0)
      std::printf(
          "open_images: %s at %d ranks (opened by %s): %llu rows; open %.2f s, file check %.2f s (slowest rank); "
          "peak "
          "resident memory by rank %s MiB\n",
          argv[1], comm.size(), every_rank ? "every rank" : "rank 0 for all",
          static_cast<unsigned long long>(data->rows()), open_s, check_s, peaks.c_str());
  } catch (const hpct::Error& e) {
    if (comm.rank() == 0) std::fprintf(stderr, "error: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
