// The rows an ensemble's network members were trained refusing (Note [member non-finite inputs] in
// refused_rows.cpp): the ensemble's run and `predict ENSEMBLE` refuse them alike.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "ensemble/member.hpp"
#include "gbdt/booster.hpp"

namespace hpct::ensemble {

// The first of the `cols` values of `row` (as the ensemble's rows hold them: NaN missing, an Inf
// as +-FLT_MAX) that member `m` was trained refusing, or `cols` when none: a network member refuses
// NaN unless it reads it (Member::reads_nan) and an Inf always, but not in a categorical column of
// its `table` encoding (a missing code is a category of its own); a tree member refuses nothing.
std::size_t refused_column(const Member& m, const float* row, std::size_t cols);

// Collective. This rank's rows of `d`, scored by `members`: a row holding a value one of them
// refuses is a bad-input error on every rank naming the first such row (`hdf5_dataset`: the inputs
// dataset of an HDF5 file, the row named by its index; empty: a text file, by line and column), how
// many there are, `part` (which split they are in; empty: not said) and the member.
void refuse_member_rows(const std::vector<const Member*>& members, const gbdt::Data& d,
                        const std::string& hdf5_dataset, const std::string& part, const Comm& comm);

}  // namespace hpct::ensemble
