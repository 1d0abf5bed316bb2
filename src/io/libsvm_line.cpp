// LibSVM lines ("label [qid:N] id:value ..."): the entries' ids checked and the values read into a
// dense row (see libsvm_line.hpp).
#include "io/libsvm_line.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace hpct::io {
namespace {

const float kAbsentNaN = std::numeric_limits<float>::quiet_NaN();

// A LibSVM entry's feature id (as written, base included); errors name the line.
long long libsvm_id(const TextLayout& t, const Line& l, const std::string& id_s) {
  char* end = nullptr;
  const long long id = std::strtoll(id_s.c_str(), &end, 10);
  if (id_s.empty() || *end != '\0')
    input_error(t.file, l.number, "", "feature id '" + id_s + "' is not an integer");
  const long long col = id - t.opt.libsvm_base;
  if (col < 0)
    input_error(t.file, l.number, "",
                "feature id " + std::to_string(id) + " below the base " + std::to_string(t.opt.libsvm_base) +
                    " (libsvm_base)");
  if (col >= kMaxLibsvmFeatures)
    input_error(t.file, l.number, "",
                "feature id " + std::to_string(id) + " is beyond the limit of " +
                    std::to_string(kMaxLibsvmFeatures) + " features (rows are held dense)");
  return id;
}

}  // namespace

// Note [absent LibSVM entries]
// A LibSVM line lists only some ids; what the others hold is the reader's choice. XGBoost (its
// DMatrix from a LibSVM/CSR file) takes them as missing: the trees send them their default way.
// LightGBM takes them as 0 (unless zero_as_missing): the trees compare 0 with the threshold. Files
// written from sparse matrices (LightGBM's lambdarank example, scikit-learn's dump_svmlight_file)
// drop their zeros, so the two readings train on different data. libsvm_absent picks (missing by
// default); the model file keeps the choice so that predict reads a file as training did. A network
// (the mlp) reads absent entries as 0 unless libsvm_absent is set (data/text_table.hpp's
// network_libsvm_reading): scikit-learn's load_svmlight_file and a PyTorch user's dense matrix do,
// and a network has no default direction for a missing number (missing: the mlp's missing_numbers).

long long parse_libsvm(const TextLayout& t, const Line& l, float* x, float* y) {
  std::istringstream ss(std::string(l.begin, l.end));
  std::string tok;
  ss >> tok;
  if (x) {
    float v = 0;
    const Parsed py = parse_float(tok, v);
    if (py != Parsed::number || std::isnan(v))
      input_error(t.file, l.number, "",
                  "label '" + tok + "' " + parse_problem(py == Parsed::number ? Parsed::not_a_number : py));
    *y = v;
    std::fill(x, x + t.cols, t.opt.absent_zero ? 0.0F : kAbsentNaN);  // Note [absent LibSVM entries]
  }
  long long prev = -1;
  bool first = true;
  while (ss >> tok) {
    if (tok[0] == '#') break;                                                     // trailing comment
    if (std::exchange(first, false) && tok.compare(0, 4, "qid:") == 0) continue;  // the query id (scan_text)
    const auto colon = tok.find(':');
    if (colon == std::string::npos) input_error(t.file, l.number, "", "entry '" + tok + "' is not id:value");
    const std::string id_s = tok.substr(0, colon);
    const long long id = libsvm_id(t, l, id_s);
    const long long col = id - t.opt.libsvm_base;
    if (x && col >= t.cols)
      input_error(t.file, l.number, "",
                  "feature id " + std::to_string(id) + " exceeds the " + std::to_string(t.cols) +
                      " features expected");
    if (col <= prev)
      input_error(t.file, l.number, "", "feature ids must increase along a line (id " + std::to_string(id) + ")");
    prev = col;
    if (!x) continue;
    float v = 0;
    const std::string v_s = tok.substr(colon + 1);
    const Parsed pv = parse_float(v_s, v, t.opt.allow_infinite);
    if (pv != Parsed::number)
      input_error(t.file, l.number, "", "value '" + v_s + "' of feature " + id_s + " " + parse_problem(pv));
    x[col] = v;
  }
  return prev;
}

}  // namespace hpct::io
