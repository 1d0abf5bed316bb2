// A process-wide count of writes to parameter buffers, so that layers keeping derived copies of
// their weights know when to refresh them (Note [parameter generation]).
#pragma once

#include <cstdint>

namespace hpct::nn {

// Note [parameter generation]: every code path that writes a ParameterStore's parameter buffer as a
// whole (initialisation, the optimizer step and its all-gather, checkpoint and weight loads, copies
// into an inference model, the in-situ session's restore) calls parameters_written() afterwards.
// Linear's half-precision weights on GPU builds (Note [half GEMMs]) are converted again when the
// generation has moved since their last conversion: once per optimizer step, not once per forward.
// One counter for all stores: a write to any store refreshes every layer's copy, which costs one
// extra conversion and never serves stale weights. A new writer of parameters must call it too.
std::uint64_t parameter_generation();
void parameters_written();

}  // namespace hpct::nn
