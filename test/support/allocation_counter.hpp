// Counting allocations for the no-allocation tests: every global operator new (the test binary links
// allocation_counter.cpp, which replaces the global allocation functions) and every Kokkos View
// allocation between start_counting_allocations() and stop_counting_allocations().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace hpct::test {

struct AllocationCounts {
  long heap = -1, views = -1;
};

void start_counting_allocations();
AllocationCounts stop_counting_allocations();

// Every global operator new of more than `bytes` throws std::bad_alloc, as a machine out of memory
// makes it (0: none refused), so that a test can show what an allocation refused becomes.
void refuse_allocations_above(std::size_t bytes);

// A trainer step hook (NetworkTrainer::set_step_hook) that counts the allocations from the end of
// step `from` to the end of step `to` into `counts` (left at -1 when step `to` never ends).
inline std::function<void(std::uint64_t)> count_allocations_between(std::uint64_t from, std::uint64_t to,
                                                                    AllocationCounts& counts) {
  return [from, to, &counts](std::uint64_t step) {
    if (step == from) {
      start_counting_allocations();
    } else if (step == to) {
      counts = stop_counting_allocations();
    }
  };
}

}  // namespace hpct::test
