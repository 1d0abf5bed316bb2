// A model trained inside a running simulation: the deck's model family, optimizer and step runner
// (the same pieces as `train`), a rolling buffer the simulation pushes into, and training sessions.
// Note [a session is an epoch]: a session numbers every rank's buffered samples (session_rows.hpp,
// Note [global numbering]) and runs session_epochs epochs over them through the epoch loop that
// NetworkTrainer runs over a file (train/epoch_steps.hpp: the same staging, steps, loss average and
// nan_policy) in EpochOrder(seed) order of epoch e, where e counts the epochs of all sessions so
// far, with the same step runner, batch ids and noise keys. So one session equals `train` on a file
// of those samples. Each epoch stages on each rank only the rows of its shard (buffer_shard.hpp,
// Note [staged shard]). Sessions are the passes of a run loop (train/run_loop.hpp): its cadence
// (checkpoint_every_sessions) and its checkpoint write-and-agree; the loop never stops on a signal
// (the simulation owns them).
// Calls marked collective must be made by every rank of the model's communicator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "deck/deck.hpp"
#include "insitu/buffer.hpp"
#include "insitu/config.hpp"
#include "insitu/insitu_log.hpp"
#include "insitu/session_rows.hpp"
#include "insitu/stats.hpp"
#include "models/model.hpp"
#include "train/epoch_steps.hpp"
#include "train/run_loop.hpp"
#include "train/step.hpp"

namespace hpct::insitu {

struct Counters {
  std::uint64_t global_step = 0;  // optimizer steps taken
  std::uint64_t sessions = 0;     // training sessions completed
  std::uint64_t epochs = 0;       // epochs of all sessions (the sampler's epoch index)
};

class InsituModel {
 public:
  // Collective. `comm` is the caller's communicator; the model works on its own duplicate.
  InsituModel(const std::string& name, const deck::Deck& deck, MPI_Comm comm);
  ~InsituModel();

  const std::string& name() const { return name_; }
  const InsituConfig& config() const { return cfg_; }
  const Comm& comm() const { return *comm_; }
  LogSink& log() { return log_; }
  Model& model() { return *model_; }

  // Local: n samples into this rank's buffer (and its online statistics). x and y may be host or
  // device memory (device_arrays.hpp).
  template <class T>
  void push(const T* x, const T* y, std::uint64_t n, Order order);
  // Collective: one session over every rank's buffer; returns its last epoch's mean loss.
  // `time` is the simulation's time string for the log line.
  double train_session(const std::string& time);
  // Collective: whether session_trigger says a session is due now (the same answer on all ranks).
  bool session_due() const;

  // Local: the model's primary prediction (Model::predict, its first output) for this rank's rows
  // x [n, input_width]: [n, output_width] values, or for a model that generates ensembles `members`
  // samples per row drawn with `seed` ([n, members, output_width]). Row-major float32 in the
  // kernels' memory (device_arrays.hpp moves caller arrays in and out). Works on an inference-sized
  // network (the trained one holds one micro-batch), in chunks of kPredictChunk rows.
  PredictOutput predict(const View2<float>& x, std::uint64_t n, int members = 1, std::uint64_t seed = 0);
  // Values per row of the primary output (per ensemble member for a model that generates ensembles).
  int output_width() const;
  static constexpr int kPredictChunk = 256;

  // Collective: rank 0 writes dir/ckpt-<step>.h5 (session_checkpoint.cpp); returns its path.
  std::string save(const std::string& dir);
  // Collective: every rank reads `path` (a checkpoint file, or a directory: its newest).
  void load(const std::string& path);

  const Counters& counters() const { return counters_; }
  const RollingBuffer& buffer() const { return buffer_; }
  // The normalisation in use (identity until the first session of a model that normalises).
  const DataStats& stats() const { return stats_; }
  std::uint64_t global_batch() const;
  // Wall seconds of the last session, and the part spent inside its optimizer steps (forward,
  // backward, all-reduce, update): the rest is the session's overhead.
  double last_session_seconds() const { return last_session_seconds_; }
  double last_session_step_seconds() const { return last_session_step_seconds_; }
  // The most session rows this rank held at once in the last session (an epoch's shard, or its
  // block of the buffer statistics): about N / P, never the whole session.
  std::uint64_t last_session_staged_rows() const { return last_session_staged_rows_; }

 private:
  // The shared epoch loop's hooks for session `session`: a nan_policy stop rolls the session back.
  EpochHooks session_hooks(std::uint64_t session);
  // Collective: rank 0 writes a checkpoint into `dir` through the run loop; `scheduled`: the
  // cadence's (logged, restarts its clock), else the caller's save.
  std::string write_checkpoint_to(const std::string& dir, bool scheduled);
  void update_stats(const Numbering& numbering);
  template <class T>
  void push_from_device(const T* x, const T* y, std::uint64_t n, Order order);
  void keep_good_state();
  void roll_back();
  PredictOptions predict_options(int members, std::uint64_t seed) const;

  std::string name_;
  deck::Deck deck_;
  InsituConfig cfg_;
  std::unique_ptr<Comm> comm_;
  MPI_Comm dup_ = MPI_COMM_NULL;
  LogSink log_;
  RollingBuffer buffer_;
  OnlineStats online_;
  DataStats stats_;
  bool stats_set_ = false;
  std::unique_ptr<Model> model_;
  std::unique_ptr<StepRunner> steps_;
  std::unique_ptr<RunLoop> loop_;
  std::unique_ptr<EpochSteps> epochs_;
  Counters counters_;
  std::uint64_t pushes_since_session_ = 0;
  TimeSplit time_;
  double last_session_seconds_ = 0, last_session_step_seconds_ = 0;
  std::uint64_t last_session_staged_rows_ = 0;
  // The state before the running session, restored when its loss goes NaN/Inf.
  struct GoodState {
    View1<float> params, m, v;
    std::uint64_t optimizer_steps = 0;
    Counters counters;
    DataStats stats;  // the normalisation (a model that normalises: diffusion, mlp)
    bool stats_set = false;
  } good_;
};

}  // namespace hpct::insitu
