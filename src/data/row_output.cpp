// Row datasets written from every rank into one HDF5 file (see row_output.hpp).
#include "data/row_output.hpp"

#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdio>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "io/atomic_file.hpp"

namespace hpct::tools {

namespace {

std::uint64_t row_size(const RowDataset& d) {
  std::uint64_t s = 1;
  for (std::size_t i = 1; i < d.dims.size(); ++i) s *= d.dims[i];
  return s;
}

// No rank holds more than its own block. Written under a temporary name that rank 0 renames when
// every rank succeeded, so a failed run leaves no half-written file.
void write_collectively(const Comm& comm, const std::string& out, std::uint64_t first, std::uint64_t count,
                        const std::vector<RowDataset>& datasets, const WriteAttributes& attributes) {
  std::string tmp = temporary_path(out, static_cast<long>(getpid()));
  comm.broadcast(tmp, 0);  // rank 0's name
  std::string err;
  try {
    const h5::File f = h5::File::create_collective(tmp, comm.raw());
    for (const RowDataset& d : datasets) h5::write_rows_collective(f, d.name, d.dims, first, count, d.rows);
    attributes(f);
  } catch (const std::exception& e) {
    err = e.what();
  }
  const bool failed = comm.max(err.empty() ? 0 : 1) != 0;
  if (failed && comm.rank() == 0) std::remove(tmp.c_str());
  comm.agree(err, ExitCode::failure);
  if (comm.rank() == 0) {
    try {
      commit_file(tmp, out);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::failure);
}

// Without parallel HDF5: rank 0 gathers every dataset (MPI counts limit each to 2^31 floats) and writes.
void gather_and_write(const Comm& comm, const std::string& out, const std::vector<RowDataset>& datasets,
                      std::uint64_t count, const WriteAttributes& attributes) {
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::vector<float>> all(datasets.size());
  for (std::size_t k = 0; k < datasets.size(); ++k) {
    const RowDataset& d = datasets[k];
    const std::uint64_t per = row_size(d), total = d.dims[0];
    std::vector<int> counts(p), displs(p);
    for (std::size_t q = 0; q < p; ++q) {
      const std::uint64_t f0 = total * q / p, f1 = total * (q + 1) / p;
      if (f1 * per > static_cast<std::uint64_t>(INT_MAX))
        comm.agree(out + ": output too large for one gather; use --rows to split it", ExitCode::bad_input);
      counts[q] = static_cast<int>((f1 - f0) * per);
      displs[q] = static_cast<int>(f0 * per);
    }
    if (comm.rank() == 0) all[k].resize(total * per);
    const Comm::Waiting waiting;
    MPI_Gatherv(d.rows, static_cast<int>(count * per), MPI_FLOAT, all[k].data(), counts.data(), displs.data(),
                MPI_FLOAT, 0, comm.raw());
  }
  std::string err;
  if (comm.rank() == 0) {
    try {
      write_atomically(out, [&](const std::string& tmp) {
        const h5::File f = h5::File::create(tmp);
        for (std::size_t k = 0; k < datasets.size(); ++k)
          h5::write(f, datasets[k].name, datasets[k].dims, all[k].data());
        attributes(f);
        f.flush();
      });
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  comm.agree(err, ExitCode::failure);
}

}  // namespace

void write_row_datasets(const Comm& comm, const std::string& out, std::uint64_t first, std::uint64_t count,
                        const std::vector<RowDataset>& datasets, const WriteAttributes& attributes) {
  Heartbeat::beat_current("writing the output", out);  // Note [the tools' guard] in comm/run_guard.hpp
  if (h5::parallel_available()) write_collectively(comm, out, first, count, datasets, attributes);
  else gather_and_write(comm, out, datasets, count, attributes);
}

}  // namespace hpct::tools
