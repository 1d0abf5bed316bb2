// Network-training deck keys and their one-time parse into TrainConfig (see config.hpp).
#include "train/config.hpp"

#include "models/registry.hpp"
#include "train/row_weights.hpp"

namespace hpct {

void declare_network_keys(deck::Schema& s) {
  declare_model_keys(s);
  s.section("model (all network families)");
  s.add_string("init_weights", "", "HDF5 weights file (as written by `output`) to start from; empty: seed init");
  s.add_choice("precision", "fp32", {"fp32", "bf16", "fp16"},
               "compute precision: fp32, or bf16/fp16 with fp32 master weights, optimizer state and "
               "accumulation (fp16 adds dynamic loss scaling)");

  s.section("training");
  s.add_int("batch_size", 32, 1, 1 << 24, "samples per rank per micro-batch");
  s.add_int("accumulation_steps", 1, 1, 1 << 16,
            "micro-batches per optimizer step (gradients all-reduced once, after the last)");
  s.add_int("epochs", 10, 1, 1 << 30, "passes over the training data");
  s.add_bool("shuffle", true, "new global sample order every epoch, from (seed, epoch)");
  s.add_choice("loss", "mse", {"mse", "cross_entropy", "bce"},
               "mse (regression), cross_entropy (targets: one column of class indices), bce (logits, 0/1 targets)");
  s.add_int("num_classes", 0, 0, 1 << 24, "cross_entropy: number of classes (the network's output width)");
  s.add_real("label_smoothing", 0.0, 0.0, 1.0, "cross_entropy: label smoothing (PyTorch's label_smoothing)");
  declare_row_weight_keys(s);
  s.add_int("top_k", 5, 1, 1 << 20, "classification: k of the top-k accuracy reported with the validation loss");
  s.add_int("early_stopping_patience", 0, 0, 1 << 30,
            "stop the run after this many epochs in a row without improvement of the validation loss (PyTorch "
            "Lightning's EarlyStopping patience, mode min; needs a validation split; 0: off); outputs and the "
            "final checkpoint are written as at a normal end, and a run resumed from a checkpoint that had stopped "
            "stays stopped (docs/outputs.md)");
  s.add_real("early_stopping_min_delta", 0.0, 0.0, 1e30,
             "early stopping: an epoch improves when its validation loss plus this is below the best so far "
             "(absolute; Lightning's min_delta); a NaN/Inf loss never improves");

  s.section("optimizer");
  s.add_choice("optimizer", "adamw", {"adamw", "sgd"}, "update rule (PyTorch semantics)");
  s.add_real("lr", 1e-3, 0.0, 100.0, "base learning rate");
  s.add_real("weight_decay", 0.0, 0.0, 10.0, "adamw: decoupled weight decay; sgd: L2 added to the gradient");
  s.add_bool("weight_decay_all", false,
             "decay every parameter; default: weights only (not biases or norm parameters), the usual AdamW "
             "groups");
  s.add_real("momentum", 0.0, 0.0, 1.0, "sgd momentum (0: plain SGD)");
  s.add_real("beta1", 0.9, 0.0, 0.999999, "adamw first-moment decay");
  s.add_real("beta2", 0.999, 0.0, 0.99999999, "adamw second-moment decay");
  s.add_real("adam_eps", 1e-8, 0.0, 1.0, "adamw denominator epsilon");
  s.add_choice("lr_schedule", "constant", {"constant", "cosine", "plateau"},
               "learning-rate schedule after warmup: constant, cosine decay, or plateau (PyTorch's "
               "ReduceLROnPlateau on each epoch's validation loss; needs a validation split)");
  s.add_int("warmup_steps", 0, 0, 1ll << 40,
            "optimizer steps of linear warmup (plateau: a ramp to the rate the plateau schedule holds)");
  s.add_real("min_lr_ratio", 0.0, 0.0, 1.0, "cosine: final rate as a fraction of lr");
  s.add_real("plateau_factor", 0.1, 1e-12, 1.0, "plateau: the rate is multiplied by this when it drops (below 1)");
  s.add_int("plateau_patience", 10, 0, 1 << 30,
            "plateau: epochs without improvement tolerated; the rate drops after the next bad one");
  s.add_real("plateau_threshold", 1e-4, 0.0, 1e30,
             "plateau: what counts as an improvement of the validation loss (see plateau_threshold_mode)");
  s.add_choice("plateau_threshold_mode", "rel", {"rel", "abs"},
               "plateau: rel: loss < best * (1 - plateau_threshold); abs: loss < best - plateau_threshold");
  s.add_int("plateau_cooldown", 0, 0, 1 << 30,
            "plateau: epochs after a drop during which bad epochs are not counted");
  s.add_real("plateau_min_lr", 0.0, 0.0, 100.0, "plateau: the rate never drops below this");
  s.add_real("plateau_eps", 1e-8, 0.0, 100.0, "plateau: a drop smaller than this is not made (PyTorch's eps)");
  s.add_real("clip_grad_norm", 0.0, 0.0, 1e12,
             "clip gradients to this global L2 norm (0: off); fp16: after unscaling");
  s.add_choice("nan_policy", "stop", {"stop", "skip"},
               "NaN/Inf loss or gradient: stop (checkpoint the last good state, exit 1) or skip the step");
  s.add_real("ema_decay", 0.0, 0.0, 0.999999999,
             "keep an exponential moving average of the weights with this decay (0: off), updated after "
             "every applied optimizer step, saved in checkpoints and the weights file; predict, sample, the "
             "evaluation apps and convert use it unless given --weights raw");
  s.add_bool("ema_warmup", true,
             "EMA decay min(ema_decay, (1 + k) / (10 + k)) at the k-th update (TensorFlow's and LitEma's "
             "warm-up); false: ema_decay from the first update");
  s.add_choice("validation_weights", "ema", {"ema", "raw"},
               "weights validation evaluates when the run keeps an EMA: the EMA or the trained weights");
  s.add_real("loss_scale_init", 65536.0, 1.0, 1e30, "fp16: initial loss scale (GradScaler's init_scale)");
  s.add_int("loss_scale_growth_interval", 2000, 1, 1ll << 40,
            "fp16: clean steps before the loss scale doubles (GradScaler's growth_interval)");

  s.section("checkpoint");
  s.add_string("checkpoint_dir", "", "directory of checkpoints (empty: no checkpoints)");
  s.add_int("checkpoint_every_steps", 0, 0, 1ll << 40, "checkpoint every N optimizer steps (0: off)");
  s.add_int("checkpoint_every_epochs", 0, 0, 1ll << 30, "checkpoint every N epochs (0: off)");
  s.add_real("checkpoint_every_minutes", 0.0, 0.0, 1e9, "checkpoint every M minutes of wall time (0: off)");
  s.add_int("checkpoint_keep", 3, 1, 100000, "number of newest checkpoints kept");
  s.add_string("resume", "none", "none | auto (newest valid checkpoint in checkpoint_dir) | a checkpoint path");
  s.add_real("watchdog_timeout", 600.0, 0.0, 1e9,
             "seconds a rank may wait in the gradient all-reduce before the job is aborted, naming the "
             "ranks that never arrived (0: off)");

  s.section("data parallelism");
  s.add_real("bucket_mb", 25.0, 0.0, 1e6,
             "MiB per gradient all-reduce bucket (the first one at most 1 MiB); 0: one all-reduce of the "
             "whole gradient buffer after backward. Results do not depend on it (bitwise at 2 ranks)");
  s.add_bool("overlap_allreduce", true,
             "start each bucket's all-reduce during backward of the last micro-step, as soon as the model "
             "reports its gradients final (false: all buckets after backward); nothing to overlap on 1 rank");
  s.add_choice("comm_backend", "auto", {"auto", "mpi", "nccl", "shm"},
               "gradient all-reduce: nccl (GPU builds with NCCL; control values stay on MPI), shm (ranks of one "
               "node, CPU builds: through a shared-memory window, no MPI call), mpi, or auto (nccl where the "
               "build has it, else shm when all ranks share one node, else mpi)");
  s.add_bool("hierarchical_allreduce", false,
             "sum the gradients inside each node first, then among one leader per node, then broadcast back "
             "(MPI, host builds; bucket_mb does not apply; docs/slurm.md)");
  s.add_bool("optimizer_sharding", false,
             "ZeRO stage 1: reduce-scatter the gradients, each rank updates its slice of the parameters "
             "(and keeps only that slice's optimizer state), all-gather; checkpoints still hold the whole state");
  s.add_bool("rank_invariant", false,
             "trained weights bit for bit the same for every rank count that keeps the global batch and divides "
             "it into whole chunks: gradients of fixed chunks of samples summed exactly in int64 fixed point "
             "(docs/data-parallel.md)");
  s.add_int("rank_invariant_chunk", 0, 0, 1 << 24,
            "rank_invariant: samples per chunk (it must divide batch_size); 0: the global batch / 4");
  s.add_bool("rank_invariant_fuse", true,
             "rank_invariant: a rank's chunks run as one micro-batch of batch_size rows where the model's rows are "
             "independent (diffusion, host builds; in validation also mlp); false: one micro-batch per chunk (the "
             "same weights and validation metrics)");
}

TrainConfig TrainConfig::from_deck(const deck::Deck& d) {
  TrainConfig c;
  c.seed = static_cast<std::uint64_t>(d.get_int("seed"));
  c.model = d.get_string("model");
  c.init_weights = d.get_string("init_weights");
  c.data_file = d.get_string("data_file");
  c.inputs_dataset = d.get_string("inputs_dataset");
  c.targets_dataset = d.get_string("targets_dataset");
  c.validation_file = d.get_string("validation_file");
  c.validation_fraction = d.get_real("validation_fraction");
  c.batch_size = static_cast<std::uint64_t>(d.get_int("batch_size"));
  c.accumulation_steps = static_cast<int>(d.get_int("accumulation_steps"));
  c.epochs = static_cast<std::uint64_t>(d.get_int("epochs"));
  c.shuffle = d.get_bool("shuffle");
  c.loss = d.get_string("loss");
  c.top_k = static_cast<int>(d.get_int("top_k"));
  c.early_stopping_patience = static_cast<std::uint64_t>(d.get_int("early_stopping_patience"));
  c.early_stopping_min_delta = d.get_real("early_stopping_min_delta");
  c.precision = nn::precision_from_name(d.get_string("precision"));
  c.optimizer.kind = d.get_string("optimizer");
  c.optimizer.weight_decay = d.get_real("weight_decay");
  c.optimizer.momentum = d.get_real("momentum");
  c.optimizer.beta1 = d.get_real("beta1");
  c.optimizer.beta2 = d.get_real("beta2");
  c.optimizer.eps = d.get_real("adam_eps");
  c.decay_all_parameters = d.get_bool("weight_decay_all");
  c.schedule.kind = d.get_string("lr_schedule");
  c.schedule.lr = d.get_real("lr");
  c.schedule.warmup_steps = static_cast<std::uint64_t>(d.get_int("warmup_steps"));
  c.schedule.min_lr_ratio = d.get_real("min_lr_ratio");
  c.schedule.plateau_lr = c.schedule.lr;
  c.plateau.factor = d.get_real("plateau_factor");
  if (!(c.plateau.factor < 1.0)) d.fail("plateau_factor", "must be below 1 (the rate drops by this factor)");
  c.plateau.patience = static_cast<std::uint64_t>(d.get_int("plateau_patience"));
  c.plateau.threshold = d.get_real("plateau_threshold");
  c.plateau.threshold_rel = d.get_string("plateau_threshold_mode") == "rel";
  c.plateau.cooldown = static_cast<std::uint64_t>(d.get_int("plateau_cooldown"));
  c.plateau.min_lr = d.get_real("plateau_min_lr");
  c.plateau.eps = d.get_real("plateau_eps");
  c.clip_grad_norm = d.get_real("clip_grad_norm");
  c.skip_nonfinite = d.get_string("nan_policy") == "skip";
  c.ema.decay = d.get_real("ema_decay");
  c.ema.warmup = d.get_bool("ema_warmup");
  c.validate_with_ema = d.get_string("validation_weights") == "ema";
  c.loss_scale_init = d.get_real("loss_scale_init");
  c.loss_scale_growth_interval = static_cast<std::uint64_t>(d.get_int("loss_scale_growth_interval"));
  c.checkpoint_dir = d.get_string("checkpoint_dir");
  c.checkpoint_every_steps = static_cast<std::uint64_t>(d.get_int("checkpoint_every_steps"));
  c.checkpoint_every_epochs = static_cast<std::uint64_t>(d.get_int("checkpoint_every_epochs"));
  c.checkpoint_every_minutes = d.get_real("checkpoint_every_minutes");
  c.checkpoint_keep = static_cast<int>(d.get_int("checkpoint_keep"));
  c.resume = d.get_string("resume");
  c.watchdog_timeout = d.get_real("watchdog_timeout");
  c.bucket_mb = d.get_real("bucket_mb");
  c.overlap_allreduce = d.get_bool("overlap_allreduce");
  c.optimizer_sharding = d.get_bool("optimizer_sharding");
  c.comm_backend = d.get_string("comm_backend");
  c.hierarchical_allreduce = d.get_bool("hierarchical_allreduce");
  c.rank_invariant = d.get_bool("rank_invariant");
  c.rank_invariant_chunk = static_cast<std::uint64_t>(d.get_int("rank_invariant_chunk"));
  c.rank_invariant_fuse = d.get_bool("rank_invariant_fuse");
  c.output = d.get_string("output");
  c.best_output = d.get_string("best_output");
  c.metrics_file = d.get_string("metrics_file");
  c.tensorboard_dir = d.get_string("tensorboard_dir");
  c.log_every = static_cast<std::uint64_t>(d.get_int("log_every"));
  return c;
}

}  // namespace hpct
