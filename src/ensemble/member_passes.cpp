// An ensemble's member trainings as passes of the run loop (see member_passes.hpp).
#include "ensemble/member_passes.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/booster_state.hpp"
#include "gbdt/gbdt.hpp"
#include "gbdt/model_io.hpp"
#include "io/hdf5.hpp"

namespace hpct::ensemble {

namespace {

// Note [member checkpoint state]: `extra/ensemble_decks` holds the checksum of the member decks'
// texts and `extra/ensemble_files` that of each finished pass's model file, each 64-bit checksum
// as two exact float64 halves; a tree member stopped inside its rounds adds its booster's gbdt_*
// arrays (gbdt/booster_state.hpp).
constexpr const char* kDecks = "ensemble_decks";
constexpr const char* kFiles = "ensemble_files";

void put(std::vector<double>& out, std::uint64_t h) {
  out.push_back(static_cast<double>(h >> 32));
  out.push_back(static_cast<double>(h & 0xffffffffull));
}

std::uint64_t get(const std::vector<double>& in, std::size_t i) {
  return (static_cast<std::uint64_t>(in[2 * i]) << 32) | static_cast<std::uint64_t>(in[2 * i + 1]);
}

std::uint64_t from_hex(const std::string& hex) { return std::strtoull(hex.c_str(), nullptr, 16); }

}  // namespace

std::string beside(const std::string& output, const std::string& suffix) {
  std::filesystem::path p(output);
  return (p.parent_path() / (p.stem().string() + suffix)).string();
}

void check_classes(const Member& m, int K) {
  if (m.num_class != K)
    throw Error(strf("ensemble: member %s predicts %d class(es); the ensemble has %d (num_class)", m.path.c_str(),
                     m.num_class, K),
                ExitCode::bad_input);
}

// Note [ensemble classes]
// The combiner adds member j's score of class k to every other member's score of class k, so class
// k must be the same class for every member. Deck members train on the ensemble's own rows, coded
// once by the shared coder (Note [text labels] in gbdt/categories.cpp), so they agree by
// construction (a tree member's file keeps the names; a network trained in memory keeps them in its
// `table` attribute only with categorical features, Note [category embeddings]). A
// member file was coded by its own training file: the most frequent class first there may be
// another class here, and a file without class names was trained on numbers whose meaning the
// ensemble cannot check; both are refused, naming the member and the two lists.

namespace {

std::string list_text(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return "[" + s + "]";
}

}  // namespace

void check_class_names(const Member& m, const gbdt::Data& data) {
  if (m.classes == data.classes) return;
  const std::string ours = data.classes.empty() ? "numbers (no class names)"
                                                : "the classes " + list_text(data.classes);
  const std::string theirs = m.classes.empty() ? "numeric labels (no class names)"
                                               : "the classes " + list_text(m.classes);
  throw Error("ensemble: member " + m.path + " was trained on " + theirs + "; the labels of " + data.file +
                  (data.label.empty() ? "" : " (" + data.label + ")") + " are " + ours +
                  ": every member must code class k as the same class (train it on a file with the same "
                  "classes, or give it as a deck)",
              ExitCode::bad_input);
}

namespace {

// "the categories [...]" (the first 10 names) or "numbers".
std::string coding_text(const gbdt::Categories& c, std::size_t f) {
  if (!c.of(static_cast<int>(f))) return "numbers";
  const std::vector<std::string>& names = c.names[f];
  const std::size_t shown = std::min<std::size_t>(names.size(), 10);
  std::string s = list_text({names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown)});
  if (shown < names.size()) s.insert(s.size() - 1, strf(", ... (%zu in all)", names.size()));
  return "the categories " + s;
}

// Where two codings of a feature's categories part: "first difference: code 3 is 'a' there, 'b' in F".
std::string first_difference(const std::vector<std::string>& theirs, const std::vector<std::string>& ours,
                             const std::string& file) {
  std::size_t c = 0;
  while (c < theirs.size() && c < ours.size() && theirs[c] == ours[c]) ++c;
  auto name = [&](const std::vector<std::string>& v) { return c < v.size() ? "'" + v[c] + "'" : "none"; };
  return strf("first difference: code %zu is %s there, %s in %s", c, name(theirs).c_str(), name(ours).c_str(),
              file.c_str());
}

}  // namespace

void check_input_categories(const Member& m, const gbdt::Data& data) {
  // A network keeps its coding in its `table` attribute (none: trained on numbers, read as they
  // are); a tree model in its `categories`, which its categorical splits go by.
  const gbdt::Categories* theirs = m.inputs ? &m.inputs->categories : m.network ? nullptr : &m.trees.categories;
  if (!theirs) return;
  const long long cols = m.inputs ? m.inputs->cols : m.trees.num_features;
  for (long long f = 0; f < data.cols && f < cols; ++f) {
    const auto u = static_cast<std::size_t>(f);
    const bool ours_is = data.categories.of(static_cast<int>(f)), theirs_is = theirs->of(static_cast<int>(f));
    if (ours_is == theirs_is && (!ours_is || data.categories.names[u] == theirs->names[u])) continue;
    const std::string column = m.inputs                           ? m.inputs->column_text(f)
                               : u < m.trees.feature_names.size() ? "column '" + m.trees.feature_names[u] + "'"
                               : u < data.feature_names.size()    ? "column '" + data.feature_names[u] + "'"
                                                                  : "feature " + std::to_string(f);
    throw Error("ensemble: member " + m.path + " codes " + column + " as " + coding_text(*theirs, u) + "; " +
                    data.file + " has " + coding_text(data.categories, u) +
                    (ours_is && theirs_is
                         ? " (" + first_difference(theirs->names[u], data.categories.names[u], data.file) + ")"
                         : std::string()) +
                    ": every member must read the ensemble's codes (train it on a file with the same "
                    "categories, or give it as a deck)",
                ExitCode::bad_input);
  }
}

MemberPasses::MemberPasses(const MemberRun& run, std::vector<Entry>& entries, const std::vector<MemberDeck>& decks,
                           const Comm& comm, const RunServices& services)
    : run_(run), entries_(entries), decks_(decks), comm_(comm), services_(services) {
  for (std::size_t j = 0; j < decks.size(); ++j) {
    const MemberDeck& md = decks[j];
    if (md.path.empty()) continue;
    decks_hash_ = fnv1a64(md.text.data(), md.text.size(), fnv1a64(md.path.data(), md.path.size(), decks_hash_));
    const std::string ext = md.trees ? ".json" : ".h5";
    if (run.fit) {
      entries[j].fit_scores.assign(run.fold.size() * static_cast<std::size_t>(run.num_class), 0.0);
      for (int k = 0; k < run.folds; ++k)
        passes_.push_back({j, k,
                           (std::filesystem::path(run.work_dir) /
                            strf("%s.fold%d%s", md.name().c_str(), k, ext.c_str()))
                               .string()});
    }
    passes_.push_back({j, -1, beside(run.output, "." + md.name() + ext)});
  }
}

MemberPasses::~MemberPasses() = default;

std::string MemberPasses::pass_name(std::uint64_t pass) const {
  const Pass& p = passes_[pass];
  const std::string& name = decks_[p.member].name();
  return p.fold < 0 ? "member " + name : strf("member %s, fold %d/%d", name.c_str(), p.fold + 1, run_.folds);
}

void MemberPasses::begin(std::uint64_t pass, const StateArrays* mid) {
  pass_ = pass;
  rounds_ = 0;
  trained_ = false;
  const Pass& p = passes_[pass];
  const MemberDeck& md = decks_[p.member];
  std::vector<char> keep(run_.fold.size(), 1);
  if (p.fold >= 0)
    for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = run_.fold[i] != p.fold;
  rows_ = kept_rows(*run_.train, keep, comm_);
  if (!md.trees) {
    memory_ = rows_in_memory(rows_, run_.train->file + ": the rows of member " + md.name(), md.deck,
                             run_.hdf5_dataset, "member " + md.name() + " trains on", comm_);
    return;
  }
  params_ = member_params(md, run_.task, run_.num_class);
  gbdt::BoostResume from;
  if (mid)
    comm_.run_agreed([&] {
      from = gbdt::booster_from_arrays(*mid, "the checkpoint of " + pass_name(pass), static_cast<int>(rows_.cols),
                                       gbdt::num_outputs(params_.objective, params_.num_class));
    });
  if (mid) Log::info(strf("ensemble: %s continues from round %d", pass_name(pass).c_str(), from.rounds));
  booster_ = std::make_unique<gbdt::Booster>(params_, rows_, nullptr, std::vector<const gbdt::Data*>{}, comm_,
                                             gbdt::RoundCallback{}, mid ? &from : nullptr);
  rounds_ = static_cast<std::uint64_t>(booster_->rounds());
}

bool MemberPasses::more() const { return booster_ ? booster_->more() : !trained_; }

int MemberPasses::round(Heartbeat* heartbeat) {
  const Pass& p = passes_[pass_];
  if (booster_) {
    booster_->grow_round();
    rounds_ = static_cast<std::uint64_t>(booster_->rounds());
    return 0;
  }
  const int signal = services_.train_network(decks_[p.member].deck, memory_, p.output, heartbeat);
  trained_ = signal == 0;
  rounds_ = trained_ ? 1 : 0;
  return signal;
}

void MemberPasses::end() {
  const Pass& p = passes_[pass_];
  if (booster_) {
    gbdt::Model model = booster_->finish(false).model;
    model.libsvm_absent_zero = run_.libsvm_absent_zero;  // `predict MEMBER` reads as the ensemble did
    booster_.reset();
    comm_.run_agreed([&] {
      if (comm_.rank() == 0) gbdt::write_file_atomic(p.output, gbdt::to_json(model));
    });
  } else if (trained_ && run_.libsvm_base >= 0) {
    // Note [LibSVM members]
    // Every member reads the ensemble's rows as the ensemble deck's libsvm_absent says (default
    // missing: the trees' reading; an mlp member then takes absent entries as missing numbers, not
    // as the 0 of an mlp deck trained alone). Its file keeps that reading, as a tree member's does,
    // so `predict MEMBER.h5 data.svm` reads as the member was trained (Note [predicting from
    // LibSVM] in train/trainer_data.cpp).
    comm_.run_agreed([&] {
      if (comm_.rank() != 0) return;
      const h5::File f = h5::File::open_rw(p.output);
      h5::write_attr(f, "/", "libsvm_absent", std::string(run_.libsvm_absent_zero ? "zero" : "missing"));
      h5::write_attr(f, "/", "libsvm_base", std::to_string(run_.libsvm_base));
    });
  }
  memory_.reset();
  rows_ = gbdt::Data();
  finish(pass_);
}

void MemberPasses::finish(std::uint64_t pass) {
  const Pass& p = passes_[pass];
  Entry& e = entries_[p.member];
  Member m;
  comm_.run_agreed([&] {
    m = load_member(p.output, run_.task);
    check_classes(m, run_.num_class);
    if (comm_.rank() == 0) checksums_.push_back(file_checksum(p.output));
  });
  if (p.fold < 0) {
    e.model = std::move(m);
    Log::info(strf("ensemble: member %s (%s) from %s", e.name.c_str(), e.model.kind.c_str(), e.source.c_str()));
    return;
  }
  const gbdt::Data& d = *run_.train;
  std::vector<double> s;
  comm_.run_agreed([&] { s = member_scores(m, run_.task, d.x, d.rows, d.cols, d.first_row); });
  const auto K = static_cast<std::size_t>(run_.num_class);
  for (std::size_t i = 0; i < run_.fold.size(); ++i)
    if (run_.fold[i] == p.fold) std::copy(s.begin() + i * K, s.begin() + (i + 1) * K, e.fit_scores.begin() + i * K);
  Log::info(strf("ensemble: member %s, fold %d/%d trained", e.name.c_str(), p.fold + 1, run_.folds));
}

StateArrays MemberPasses::state(std::uint64_t finished) const {
  StateArrays st;
  put(st[kDecks], decks_hash_);
  auto& files = st[kFiles];
  for (std::uint64_t i = 0; i < finished; ++i) put(files, from_hex(checksums_[i]));
  return st;
}

StateArrays MemberPasses::mid_state() const {
  if (!booster_) return {};
  return gbdt::booster_arrays(booster_->model(), booster_->rounds(), booster_->best_round(), booster_->best());
}

void MemberPasses::restore(std::uint64_t finished, const StateArrays& state, const std::string& path) {
  comm_.run_agreed([&] {
    const auto decks = state.find(kDecks), files = state.find(kFiles);
    if (decks == state.end() || files == state.end() || decks->second.size() != 2 ||
        files->second.size() < 2 * finished)
      throw Error(path + ": not a checkpoint of an ensemble's members (extra/" + kDecks + ", extra/" + kFiles + ")",
                  ExitCode::bad_input);
    if (get(decks->second, 0) != decks_hash_)
      throw Error(path +
                      ": the member decks changed since this checkpoint (members, or a member deck's text); "
                      "start a new run with `resume none` or another checkpoint_dir",
                  ExitCode::bad_input);
    if (comm_.rank() != 0) return;
    for (std::uint64_t i = 0; i < finished; ++i) {
      const std::string& file = passes_[i].output;
      if (from_hex(file_checksum(file)) != get(files->second, i))
        throw Error(file + ": changed since the checkpoint " + path + " recorded it (" + pass_name(i) + ")",
                    ExitCode::bad_input);
    }
  });
  for (std::uint64_t i = 0; i < finished; ++i) finish(i);
}

}  // namespace hpct::ensemble
