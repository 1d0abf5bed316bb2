// The gnn's rollout curriculum: parsing and checking `ar_steps_schedule` (see rollout_schedule.hpp).
#include "models/gnn/rollout_schedule.hpp"

#include <cctype>
#include <cstdlib>

namespace hpct {

namespace {

// A positive integer written in full ("12"), or -1.
long long positive(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  for (const char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return -1;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  return v >= 1 ? v : -1;
}

}  // namespace

std::vector<RolloutStage> parse_rollout_schedule(const deck::Deck& d, const std::string& key) {
  const std::string& value = d.get_string(key);
  std::vector<RolloutStage> stages;
  if (value.empty() || value == "none") return stages;
  for (const std::string& item : deck::split_list(value)) {
    const std::size_t colon = item.find(':');
    const long long epoch = colon == std::string::npos ? -1 : positive(item.substr(0, colon));
    const long long steps = colon == std::string::npos ? -1 : positive(item.substr(colon + 1));
    if (epoch < 0 || steps < 0)
      d.fail(key, "'" + item +
                      "' is not EPOCH:STEPS with positive integers (stages as 1:1, 5:6, 9:24: from epoch 5 on, "
                      "6-step rollouts)");
    if (stages.empty() && epoch != 1)
      d.fail(key, "the first stage starts at epoch " + std::to_string(epoch) + "; it must start at epoch 1");
    if (!stages.empty() && epoch <= stages.back().first_epoch)
      d.fail(key, "stage '" + item + "' starts at epoch " + std::to_string(epoch) +
                      ", not after the stage before (" + std::to_string(stages.back().first_epoch) +
                      "); the epochs must increase");
    stages.push_back({static_cast<int>(epoch), static_cast<int>(steps)});
  }
  return stages;
}

void check_rollout_schedule(const deck::Deck& d, const std::string& key, const std::vector<RolloutStage>& stages,
                            int ar_steps, long long epochs) {
  int largest = 0;
  for (const RolloutStage& s : stages) largest = s.steps > largest ? s.steps : largest;
  for (const RolloutStage& s : stages) {
    if (s.steps > ar_steps)
      d.fail(key, "stage " + std::to_string(s.first_epoch) + ":" + std::to_string(s.steps) + " rolls out " +
                      std::to_string(s.steps) + " steps, but the samples hold ar_steps " +
                      std::to_string(ar_steps) + " targets; set ar_steps " + std::to_string(largest) +
                      " (the schedule's largest)");
    if (epochs > 0 && s.first_epoch > epochs)
      d.fail(key, "stage " + std::to_string(s.first_epoch) + ":" + std::to_string(s.steps) +
                      " starts after the run's " + "last epoch (epochs " + std::to_string(epochs) + ")");
  }
}

int rollout_steps_at(const std::vector<RolloutStage>& stages, std::uint64_t epoch, int all) {
  int steps = all;
  for (const RolloutStage& s : stages)
    if (epoch + 1 >= static_cast<std::uint64_t>(s.first_epoch)) steps = s.steps;
  return steps;
}

std::string rollout_schedule_text(const std::vector<RolloutStage>& stages) {
  std::string out;
  for (const RolloutStage& s : stages)
    out += (out.empty() ? "" : ",") + std::to_string(s.first_epoch) + ":" + std::to_string(s.steps);
  return out.empty() ? "none" : out;
}

}  // namespace hpct
