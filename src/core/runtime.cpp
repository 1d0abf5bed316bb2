// Process-wide setup of one SPMD rank (see runtime.hpp): MPI, Kokkos on the chosen device, the banner.
#include "core/runtime.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/blas_kernels.hpp"
#include "core/cli_number.hpp"
#include "core/gpu_fallback.hpp"
#include "core/kokkos_compat.hpp"
#include "core/log.hpp"
#include "core/signals.hpp"
#include "hpctrain/version.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(HPCTRAIN_HAVE_NCCL)
#include <nccl.h>
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace hpct {

Topology query_topology(MPI_Comm comm) {
  Topology t;
  MPI_Comm_rank(comm, &t.rank);
  MPI_Comm_size(comm, &t.size);
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, t.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &t.local_rank);
  MPI_Comm_size(local, &t.local_size);
  MPI_Comm_free(&local);
  int leader = t.local_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &t.nodes, 1, MPI_INT, MPI_SUM, comm);
  MPI_Allreduce(&t.local_size, &t.max_ranks_per_node, 1, MPI_INT, MPI_MAX, comm);
  return t;
}

int affinity_core_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

Runtime::Runtime(int& argc, char**& argv) {
  exec_host_twin_without_gpu(argv);  // before MPI starts: the twin initialises MPI itself
  // Before any BLAS call or thread (Note [OpenBLAS on unknown CPU models]); the banner's math line
  // says which kernels run (no line here: `train --help` prints its usage first).
  (void)choose_openblas_kernels();
  // Note [file-size limit]: under a file-size limit (`ulimit -f`, which SLURM propagates from the
  // submitting shell) a write past it raises SIGXFSZ, whose default action kills the rank mid-write:
  // no error message, and the other ranks wait for the watchdog. Ignored, the write fails with EFBIG
  // instead, and every writer reports that as an error naming its file, keeping what it replaces.
  std::signal(SIGXFSZ, SIG_IGN);
  // Before MPI and Kokkos start their threads, so that each inherits the block.
  stop_signals_ = std::make_unique<StopSignalThread>();
  // Note [non-blocking all-reduce algorithm]: Open MPI's non-blocking collectives (libnbc) pick a
  // binomial reduce + broadcast for every in-place all-reduce on fewer than 4 ranks, which moves the
  // whole buffer twice: a 1 MiB gradient all-reduce between 2 ranks of a node took 220-260 us
  // against 110 us for the blocking MPI_Allreduce. The gradient buckets are non-blocking (they
  // overlap backward and run under the watchdog), so unless the user chose an algorithm, ask for
  // Rabenseifner's reduce-scatter + all-gather, which gives the blocking call's 110 us. Other MPI
  // libraries ignore the variable. The per-element sum order is that of any all-reduce algorithm:
  // exact at 2 ranks (Note [buckets are exact]).
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", /*overwrite=*/0);
  // Note [singleton start]: a process started without a launcher (a tool on one core: smart_eval,
  // trajgen, a test) is an Open MPI singleton. By default MPI_Init then forks a supporting daemon
  // (orted) and waits for its handshake, and loads the network transports (UCX, PSM2, libfabric),
  // whose start-up calibrates clocks in sleep loops: together 0.2-0.4 s of every tool's start on
  // the 2-core VM, the largest part of a short evaluation's wall time beyond its CPU time. A
  // singleton talks to nobody: unless the user chose otherwise, it runs without the daemon (which
  // serves only MPI_Comm_spawn and ports, unused here) and with ob1 over `self` alone (the one
  // transport one rank needs, spelled the same in every Open MPI; MPICH ignores these variables).
  // Ranks started by mpirun or srun (any launcher's variable set) are left as they are.
  bool launched = false;
  for (const char* v :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD", "SLURM_STEP_NUM_TASKS"})
    launched = launched || std::getenv(v) != nullptr;
  if (!launched) {
    setenv("OMPI_MCA_ess_singleton_isolated", "1", /*overwrite=*/0);
    setenv("OMPI_MCA_pml", "ob1", /*overwrite=*/0);
    setenv("OMPI_MCA_btl", "self", /*overwrite=*/0);
  }
  int provided = 0;
  // FUNNELED: only the main thread calls MPI (a later prefetch thread does file I/O, not MPI).
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  topo_ = query_topology(MPI_COMM_WORLD);
  Log::set_rank(topo_.rank);

  // Note [help options]: Kokkos prints its 40-line argument help on `--help` too, before the
  // program's own usage. `--help`/`-h` are the program's; Kokkos sees them only as
  // `--help-kokkos`, passed on as `--kokkos-help` by rank 0 (every rank would print it).
  std::vector<char*> args{argv[0]};
  std::string kokkos_help = "--kokkos-help";
  // Note [thread option spellings]: Kokkos 3.x knows `--kokkos-threads=N`, 4.x and later
  // `--kokkos-num-threads=N` (the old spelling deprecated); each ignores the other's without a word.
  // Either spelling is accepted and passed on in the linked Kokkos's, and N also becomes OpenMP's
  // thread count below, which OpenBLAS and oneDNN read at every call: Kokkos sizes only its own pool.
  std::string threads_arg;
  int threads_requested = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") continue;
    const std::size_t eq = a.find('=');
    if (a.compare(0, eq, "--kokkos-threads") == 0 || a.compare(0, eq, "--kokkos-num-threads") == 0) {
      const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
      long long n = 0;  // not a whole number: left to Kokkos, which refuses it
      threads_requested = leading_integer(value.c_str(), n) && n > 0 && n <= INT_MAX ? static_cast<int>(n) : 0;
      threads_arg = (KOKKOS_VERSION >= 40000 ? "--kokkos-num-threads=" : "--kokkos-threads=") + value;
      continue;  // passed on once, after the loop: the last one given wins, as in Kokkos
    }
    if (a == "--help-kokkos") {
      if (topo_.rank == 0) args.push_back(kokkos_help.data());
      continue;
    }
    args.push_back(argv[i]);
  }
  if (!threads_arg.empty()) args.push_back(threads_arg.data());
#if defined(KOKKOS_ENABLE_CUDA)
  std::string device_arg;  // args points into it until Kokkos::initialize
  bool has_device_arg = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--kokkos-device", 0) == 0) has_device_arg = true;
  gpus_on_node_ = visible_gpu_count(nullptr);
  if (!has_device_arg && gpus_on_node_ > 0) {
    // One GPU per node-local rank; more ranks than GPUs is refused in device_error (after the deck
    // is read, so the message reaches every rank), not here.
    device_arg = "--kokkos-device-id=" + std::to_string(topo_.local_rank % gpus_on_node_);
    args.push_back(device_arg.data());
  }
#endif
  // Without OMP_NUM_THREADS, OpenMP starts one thread per core of the node in EVERY rank, so
  // 2 ranks on 2 cores run 4 spinning threads and crawl. Default to the rank's fair share: its
  // affinity mask when the launcher bound it, else the node's cores divided by its ranks.
  // An explicit thread option wins over OMP_NUM_THREADS (Note [thread option spellings]).
  if (threads_requested > 0) {
#if defined(KOKKOS_ENABLE_OPENMP)
    omp_set_num_threads(threads_requested);
#endif
  } else if (!std::getenv("OMP_NUM_THREADS")) {
    const int mask = affinity_core_count();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = mask > 0 ? mask : 1;
    if (mask > 0 && online > 0 && mask >= online) threads = std::max(1, mask / topo_.local_size);
#if defined(KOKKOS_ENABLE_OPENMP)
    // libgomp read the environment before main(); set the runtime's value directly.
    omp_set_num_threads(threads);
#endif
  }
  // Kokkos warns when OpenMP binding is unset; spreading threads over the rank's cores is right
  // for our kernels, and a user setting wins.
  setenv("OMP_PROC_BIND", "spread", 0);
  setenv("OMP_PLACES", "threads", 0);
  int kargc = static_cast<int>(args.size());
  args.push_back(nullptr);
  char** kargv = args.data();
  Kokkos::initialize(kargc, kargv);
}

Runtime::~Runtime() {
  Kokkos::finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string execution_space_description() {
  std::string s = std::string(ExecSpace::name());
  s += strf(" (concurrency %d)", static_cast<int>(ExecSpace().concurrency()));
#if defined(KOKKOS_ENABLE_CUDA)
  int dev = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    s += strf(", device %d: %s, %.1f GiB", dev, prop.name,
              static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
#endif
  return s;
}

// Note [device memory peak]: CUDA has no per-process high-water mark, and Kokkos's allocation
// callbacks would switch on its profiling hooks, which name every kernel launch with a freshly
// allocated string (breaking "no allocation per step"). So the peak is sampled: total - free from
// cudaMemGetInfo after the first step, at progress lines, epoch ends and the summary. Training
// allocates everything up front, so the samples see the peak; what they count is what nvidia-smi
// shows for the GPU (our CUDA context, cuBLAS and NCCL buffers included; also any other process on
// the same GPU, e.g. ranks sharing it).
namespace {
std::atomic<std::uint64_t> device_bytes_peak{0};
}

void sample_device_memory() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return;
  const std::uint64_t used = total_bytes - free_bytes;
  std::uint64_t seen = device_bytes_peak.load();
  while (used > seen && !device_bytes_peak.compare_exchange_weak(seen, used)) {
  }
#endif
}

namespace {
// Note [peak of this process]: getrusage's ru_maxrss survives fork and exec, so a train started by a
// parent that had grown large (a Python driver holding a data set) reported the parent's peak as
// its own. VmHWM in /proc/self/status is the high-water mark of this process's own address space;
// ru_maxrss is the fallback where /proc is missing.
double host_peak_kib() {
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    double kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::strncmp(line, "VmHWM:", 6) == 0) {
        char* end = nullptr;
        const double v = std::strtod(line + 6, &end);
        if (end != line + 6) kib = v;
        break;
      }
    std::fclose(f);
    if (kib >= 0) return kib;
  }
  struct rusage usage {};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<double>(usage.ru_maxrss) : 0.0;
}
}  // namespace

double process_cpu_seconds() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(usage.ru_utime) + sec(usage.ru_stime);
}

MemoryPeak memory_peak() {
  constexpr double kMiB = 1024.0 * 1024.0;
  MemoryPeak p;
  p.host_mib = host_peak_kib() / 1024.0;
#if defined(KOKKOS_ENABLE_CUDA)
  sample_device_memory();
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    p.device_mib = static_cast<double>(device_bytes_peak.load()) / kMiB;
    p.device_total_mib = static_cast<double>(total_bytes) / kMiB;
  }
#else
  (void)kMiB;
#endif
  return p;
}

std::string describe_memory_peak(const MemoryPeak& peak) {
  std::string s = strf("peak memory: host %.1f MiB", peak.host_mib);
  if (peak.device_mib >= 0)
    s += strf(", GPU %.2f of %.1f GiB", peak.device_mib / 1024.0, peak.device_total_mib / 1024.0);
  return s;
}

// Note [CUDA-aware MPI]: an MPI built with CUDA support reads and writes GPU memory itself; any
// other MPI crashes (or silently reads garbage) when handed a device pointer. GPU builds ask the
// library: OpenMPI says at compile time whether it was built with CUDA (MPIX_CUDA_AWARE_SUPPORT in
// mpi-ext.h) and at run time whether that support is on (MPIX_Query_cuda_support); any other MPI is
// taken as not CUDA-aware. HPCTRAIN_MPI_CUDA_AWARE=1|0 in the job's environment overrides the
// answer: CUDA awareness belongs to the MPI installation and its run-time settings (Cray MPICH
// wants MPICH_GPU_SUPPORT_ENABLED=1 and has no query here), the same for every deck on a system.
// Without it, device buffers travel through pinned host memory (comm/host_staging.hpp). Host builds
// have no device memory; HPCTRAIN_MPI_CUDA_AWARE=0 still switches the staging on there, so the tests
// run that path on every build (the "device" buffers are then host memory, copied by memcpy).
bool mpi_accepts_device_memory(std::string* how) {
  static const std::pair<bool, std::string> answer = [] {
    if (const char* env = std::getenv("HPCTRAIN_MPI_CUDA_AWARE"); env && *env)
      return std::make_pair(std::string(env) != "0", std::string("HPCTRAIN_MPI_CUDA_AWARE=") + env);
#if !defined(KOKKOS_ENABLE_CUDA)
    return std::make_pair(true, std::string("host build"));
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return std::make_pair(MPIX_Query_cuda_support() == 1, std::string("MPIX_Query_cuda_support"));
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
    return std::make_pair(false, std::string("OpenMPI built without CUDA"));
#else
    return std::make_pair(false, std::string("no CUDA-awareness query in this MPI"));
#endif
  }();
  if (how) *how = answer.second;
  return answer.first;
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace {

// The architectures this binary carries: nvcc lists them in __CUDA_ARCH_LIST__ (e.g. 800), and
// `-arch=sm_XY` (what Kokkos passes) embeds sm_XY machine code plus compute_XY PTX.
std::string compiled_cuda_archs() {
#if defined(__CUDA_ARCH_LIST__)
  const int archs[] = {__CUDA_ARCH_LIST__};
  std::string s;
  for (const int a : archs) s += strf("%ssm_%d + PTX compute_%d", s.empty() ? "" : ", ", a / 10, a / 10);
  return s;
#else
  return "unknown";
#endif
}

std::string cuda_version_string(int v) { return strf("%d.%d", v / 1000, v % 1000 / 10); }

// The GPU's compute capability, CUDA runtime and driver, what the binary carries, NCCL (the name and
// memory are on the execution-space line).
std::string gpu_banner_lines() {
  int dev = 0, runtime_version = 0, driver_version = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess)
    return "\n  GPU: properties unavailable";
  cudaRuntimeGetVersion(&runtime_version);
  cudaDriverGetVersion(&driver_version);
  std::string s = strf("\n  GPU %d: compute capability %d.%d; CUDA runtime %s, driver %s; binary carries %s", dev,
                       prop.major, prop.minor, cuda_version_string(runtime_version).c_str(),
                       cuda_version_string(driver_version).c_str(), compiled_cuda_archs().c_str());
#if defined(__CUDA_ARCH_LIST__)
  const int archs[] = {__CUDA_ARCH_LIST__};
  bool native = false;
  for (const int a : archs) native = native || a == prop.major * 100 + prop.minor * 10;
  if (!native) s += strf(" (PTX JIT-compiled for sm_%d%d)", prop.major, prop.minor);
#endif
#if defined(HPCTRAIN_HAVE_NCCL)
  int nccl = 0;  // the library loaded at run time, which may be newer than the header
  ncclGetVersion(&nccl);
  s += strf("\n  NCCL %d.%d.%d", nccl / 10000, nccl / 100 % 100, nccl % 100);
#else
  s += "\n  NCCL not linked (gradients over MPI)";
#endif
  std::string how;
  s += mpi_accepts_device_memory(&how) ? "\n  MPI: CUDA-aware (" + how + ")"
                                       : "\n  MPI: staging through pinned host memory (" + how + ")";
  return s;
}

}  // namespace
#endif

std::string Runtime::affinity_warning() const {
  const int cores = affinity_core_count();
  const int threads = static_cast<int>(HostExecSpace().concurrency());
  if (cores > 0 && cores < threads)
    return strf(
        "warning: rank %d runs %d host threads on %d core(s) of its affinity mask; bind with "
        "`mpirun --map-by slot:PE=%d` or `srun --cpus-per-task=%d`",
        topo_.rank, threads, cores, threads, threads);
  return {};
}

std::string Runtime::device_error(const std::string& device, std::string* warning) const {
  std::string choice = check_device_choice(device, warning);
  if (!choice.empty() || kHostBackend) return choice;
  if (topo_.local_size > gpus_on_node_) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    return strf(
        "%d ranks run on node %s but it has %d GPU(s) visible; run at most %d rank(s) per node "
        "(one GPU each)",
        topo_.local_size, host, gpus_on_node_, gpus_on_node_);
  }
  return {};
}

std::string Runtime::banner() const {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string b;
  b += strf("hpctrain %s (git %s)\n", kVersion, kGitHash);
  b += strf("  Kokkos %s, execution space %s\n", kokkos_version_string().c_str(),
            execution_space_description().c_str());
  b += strf("  host threads %d, cores in rank 0's affinity mask %d, host %s\n",
            static_cast<int>(HostExecSpace().concurrency()), affinity_core_count(), host);
  b += strf("  MPI ranks %d on %d node(s), up to %d rank(s) per node", topo_.size, topo_.nodes,
            topo_.max_ranks_per_node);
#if defined(KOKKOS_ENABLE_CUDA)
  b += gpu_banner_lines();
#endif
  return b;
}

}  // namespace hpct
