// Learning-rate schedules as a function of the optimizer step: constant, or linear warmup to the base
// rate followed by cosine decay to min_lr_ratio * lr at the last step (the usual "warmup + cosine"
// of Lightning/timm recipes), so resume needs only the step; or plateau, whose rate after warmup is
// the one ReduceLROnPlateau holds (optim/plateau.hpp, set after each epoch's validation).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace hpct::optim {

struct Schedule {
  std::string kind = "constant";  // constant | cosine | plateau
  double lr = 1e-3;
  std::uint64_t warmup_steps = 0;
  std::uint64_t total_steps = 1;
  double min_lr_ratio = 0.0;
  double plateau_lr = 0.0;  // plateau: the rate now (Plateau::lr()); warmup ramps to it as to lr

  // Rate for step s (0-based): warmup ramps (s+1)/warmup, so the first step is not wasted at lr 0.
  double at(std::uint64_t s) const {
    const double base = kind == "plateau" ? plateau_lr : lr;
    if (warmup_steps > 0 && s < warmup_steps)
      return base * static_cast<double>(s + 1) / static_cast<double>(warmup_steps);
    if (kind != "cosine") return base;
    const double span = static_cast<double>(total_steps > warmup_steps ? total_steps - warmup_steps : 1);
    double progress = static_cast<double>(s - warmup_steps) / span;
    if (progress > 1.0) progress = 1.0;
    const double min_lr = lr * min_lr_ratio;
    return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(3.14159265358979323846 * progress));
  }
};

}  // namespace hpct::optim
