// Workspace layout: scratch units share one block, tensors within a unit and tensors of their own
// never overlap, and without an open scope a scratch request is an ordinary one (Note [scratch units]);
// recomputed units share another (Note [recomputed units]).
#include <gtest/gtest.h>

#include "nn/workspace.hpp"

namespace hpct {
namespace {

using WS = nn::Workspace<float>;

bool overlap(const Tensor<float>& a, const Tensor<float>& b) {
  const float *a0 = a.data(), *a1 = a0 + a.shape().size(), *b0 = b.data(), *b1 = b0 + b.shape().size();
  return a0 < b1 && b0 < a1;
}

TEST(Workspace, ScratchUnitsShareOneBlock) {
  WS ws;
  Tensor<float>& own1 = ws.request("own1", 100, 3);
  Tensor<float>*a1, *a2, *b1, *moved, *moved2;
  {
    const WS::ScratchScope unit(ws, "a");
    a1 = &ws.request_scratch("a1", 50, 7);
    a2 = &ws.request_scratch("a2", 10, 1);
    ws.request("a_own", 4, 4);
  }
  {
    const WS::ScratchScope unit(ws, "b");
    moved = &ws.request("b_moved", 20, 20);
    moved2 = &ws.request("b_moved2", 5, 5);
    ws.to_scratch(*moved), ws.to_scratch(*moved2);
    b1 = &ws.request_scratch("b1", 300, 2);
  }
  Tensor<float>& own2 = ws.request("own2", 9, 9);
  ws.allocate();
  const Tensor<float>* all[] = {&own1, a1, a2, b1, moved, moved2, &own2};
  for (const Tensor<float>* t : all) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t->data()) % 64, 0u);
  EXPECT_FALSE(overlap(*a1, *a2));         // one unit's backward: apart
  EXPECT_FALSE(overlap(*moved, *moved2));  // one unit's forward: apart
  EXPECT_EQ(a1->data(), moved->data());    // every unit and pass from the block's start
  EXPECT_EQ(b1->data(), moved->data());
  for (const Tensor<float>* t : {a1, a2, b1, moved, moved2}) EXPECT_FALSE(overlap(*t, own1) || overlap(*t, own2));
  EXPECT_FALSE(overlap(own1, own2));
  // Tensors of their own (300, 16 and 81 elements, each rounded up to 16), then the largest pass of
  // a unit (b's backward, 600 rounded up), then 16 for the alignment of the first.
  EXPECT_EQ(ws.bytes(), (304 + 16 + 96 + 608 + 16) * sizeof(float));
}

TEST(Workspace, ScratchWithoutScopeIsOrdinary) {
  WS ws;
  Tensor<float>& a = ws.request_scratch("a", 8, 8);
  Tensor<float>& b = ws.request_scratch("b", 8, 8);
  ws.to_scratch(a);  // no scope: a no-op
  ws.allocate();
  EXPECT_FALSE(overlap(a, b));
  EXPECT_EQ(a.data()[0], 0.0f);  // an ordinary tensor still starts zeroed
}

// Note [recomputed units]: every tensor of a recomputed unit in one block shared by all such units,
// apart within a unit; kept tensors and the scratch units' block apart from it.
TEST(Workspace, RecomputedUnitsShareOneBlock) {
  WS ws;
  Tensor<float>& own = ws.request("own", 10, 10);
  Tensor<float>*a1, *a2, *a_out, *b1, *s1;
  {
    const WS::RecomputeScope unit(ws, "a");
    a1 = &ws.request("a1", 40, 4);
    a2 = &ws.request_scratch("a2", 8, 8);
    a_out = &ws.request("a_out", 3, 3);
    ws.keep(*a_out);
    ws.to_scratch(*a1);  // a no-op: a1 stays in the recomputed block
  }
  {
    const WS::RecomputeScope unit(ws, "b");
    b1 = &ws.request("b1", 100, 2);
  }
  {
    const WS::ScratchScope unit(ws, "c");
    s1 = &ws.request_scratch("s1", 30, 1);
  }
  ws.keep(own);  // a no-op for a tensor of its own
  ws.allocate();
  EXPECT_EQ(a1->data(), b1->data());  // every recomputed unit from the block's start
  EXPECT_FALSE(overlap(*a1, *a2));
  for (const Tensor<float>* t : {a1, a2, b1})
    EXPECT_FALSE(overlap(*t, own) || overlap(*t, *a_out) || overlap(*t, *s1)) << t->shape().size();
  EXPECT_FALSE(overlap(own, *a_out));
  // Own: 100 and 9 (rounded up to 112, 16); scratch: 32; recomputed: max(160 + 64, 208) = 224; alignment 16.
  EXPECT_EQ(ws.bytes(), (112 + 16 + 32 + 224 + 16) * sizeof(float));
  EXPECT_ANY_THROW(ws.keep(own));  // after allocate()
}

TEST(Workspace, NestedScopesAreRefused) {
  WS ws;
  const WS::ScratchScope outer(ws, "outer");
  EXPECT_ANY_THROW(WS::ScratchScope(ws, "inner"));
  EXPECT_ANY_THROW(WS::RecomputeScope(ws, "inner"));
}

}  // namespace
}  // namespace hpct
