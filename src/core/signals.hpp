// Stop requests from the batch system: SLURM sends SIGUSR1 (with --signal=B:USR1@T) or SIGTERM
// before the time limit. The handler only sets a flag; the trainer acts on it at the next step
// boundary, after all ranks have agreed.
#pragma once

namespace hpct {

// Installs handlers for SIGUSR1 and SIGTERM (idempotent).
void install_stop_handlers();
// The signal received (0 when none).
int stop_signal();
void clear_stop_signal();

}  // namespace hpct
