// Outcome categories of the in-situ library: the integer codes of hpctrain.h (capi/ asserts the
// values match), and an error that carries one. Collective stages agree on their outcome over the
// model's communicator first, so every rank returns the same code and none waits in a collective.
#pragma once

#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"

namespace hpct::insitu {

enum class Status : int {
  ok = 0,
  argument = 1,      // a null pointer, a negative count, an unknown layout
  handle = 2,        // unknown or destroyed handle
  deck = 3,          // the deck: unreadable, unknown key, bad value
  shape = 4,         // array widths that differ from the model's
  empty = 5,         // a session with no samples in any rank's buffer
  device = 6,        // a device this build or machine does not have
  nonfinite = 7,     // NaN/Inf in pushed data, or a session whose loss went NaN/Inf (rolled back)
  io = 8,            // a checkpoint or log file could not be written or read
  mpi = 9,           // an unusable communicator
  unsupported = 10,  // an operation the model family does not have (predict on diffusion, ...)
  internal = 11,     // anything else (out of memory, a bug): the message says what
};

class InsituError : public Error {
 public:
  InsituError(Status status, const std::string& message) : Error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

// Runs f on every rank of `comm`; if it fails anywhere, every rank throws the same InsituError
// (the failing rank's status when it raised one, else `status`).
template <class F>
void run_agreed_as(const Comm& comm, Status status, F&& f) {
  std::string err;
  int code = 0;
  try {
    f();
  } catch (const InsituError& e) {
    err = e.what();
    code = static_cast<int>(e.status());
  } catch (const std::exception& e) {
    err = e.what();
    code = static_cast<int>(status);
  }
  const int agreed = comm.max(code);
  try {
    comm.agree(err);
  } catch (const Error& e) {
    throw InsituError(static_cast<Status>(agreed), e.what());
  }
}

}  // namespace hpct::insitu
