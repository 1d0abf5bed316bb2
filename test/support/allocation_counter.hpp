// Counting allocations for the no-allocation tests: every global operator new (the test binary links
// allocation_counter.cpp, which replaces the global allocation functions) and every Kokkos View
// allocation between start_counting_allocations() and stop_counting_allocations().
#pragma once

namespace hpct::test {

struct AllocationCounts {
  long heap = -1, views = -1;
};

void start_counting_allocations();
AllocationCounts stop_counting_allocations();

}  // namespace hpct::test
