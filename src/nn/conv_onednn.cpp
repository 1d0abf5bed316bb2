// oneDNN convolutions behind nn/conv.hpp: plans created once per shape (Note [oneDNN plans]).
#include "nn/conv_onednn.hpp"

#include "core/error.hpp"
#include "nn/conv_plan_key.hpp"

#if defined(HPCTRAIN_HAVE_ONEDNN)
#include <oneapi/dnnl/dnnl_version.h>
#include <array>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "nn/conv_arena.hpp"
#endif

namespace hpct::nn::onednn {

#if !defined(HPCTRAIN_HAVE_ONEDNN)

bool available() { return false; }
std::string version() { return ""; }
std::size_t plans_built() { return 0; }
void forward(const ConvGeometry&, const float*, const float*, float*, int) {
  throw Error(
      "conv_algorithm onednn: this build has no oneDNN (configure with it found: libdnnl-dev / spack onednn)");
}
void backward_data(const ConvGeometry& g, const float*, const float*, float*, bool, int) {
  forward(g, nullptr, nullptr, nullptr, 0);
}
void backward_weights(const ConvGeometry& g, const float*, const float*, float*, int) {
  forward(g, nullptr, nullptr, nullptr, 0);
}

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Dir : int { forward, backward_data, backward_weights };

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& stream() {
  static dnnl::stream s(engine());
  return s;
}

// One tensor of a call: the caller's array (user, re-pointed every call) and, where oneDNN prefers
// another layout or the result is added rather than assigned, the plan's own copy (inner) with the
// reorder between the two.
struct Operand {
  memory user, inner;
  memory::desc inner_md;  // inner's, kept: oneDNN 3's get_desc() clones it on the heap per call
  dnnl::primitive reorder;
  bool reordered = false;
  std::size_t offset = 0;  // of inner in the arena, when reordered
};

struct Plan {
  Dir dir = Dir::forward;
  dnnl::primitive conv;
  Operand in[2], out;
  memory scratch;
  std::size_t scratch_offset = 0, arena_bytes = 0;
  std::array<dnnl_exec_arg_t, 4> args{};
  int nargs = 0;
};

// Note [oneDNN arena]: the reordered copies and the scratchpad of a plan live only while it
// executes, and plans execute one at a time, so all plans share one arena sized for the largest
// (grown, 64-byte aligned, when a plan is built; each call points its memory objects into it). Per
// plan buffers would hold about six copies of every convolution's activations for the process.
ConvArena& arena() {
  static ConvArena a;
  return a;
}
void reserve_arena(std::size_t bytes) {
  arena().reserve(
      bytes, [](char* old) { std::free(old); },
      [](std::size_t n) {
        auto* p = static_cast<char*>(std::aligned_alloc(64, n));
        if (!p) throw Error("oneDNN convolutions: out of memory for a " + std::to_string(n) + "-byte arena");
        return p;
      });
}
std::size_t aligned_bytes(const memory::desc& md) { return (md.get_size() + 63) / 64 * 64; }

// Note [oneDNN reorder reuse]: every convolution reorders its input x into the blocked layout twice
// per step (forward, backward weights) and its output gradient dy twice (backward weights, backward
// data): four of the six reorders of its activations, each a pass over a tensor that has left the
// cache. So the forward's blocked x is kept (one buffer per (array, layout), made on its first
// forward and kept for the process: the Workspace's tensors keep their addresses) and the backward
// weights pass reads it instead of reordering x again; and the blocked dy of a backward pass is kept
// in one buffer for the next call, which reads it when it is a backward pass of the same dy array
// and layout (Conv2d::backward runs the weights' pass, then the data's, on one dy). The contract:
// x is not written between a forward and the backward weights pass on the same array, nor dy between
// the two backward passes: true of every layer's input and output gradient (its backward reads them),
// and what an autodiff framework assumes anyway. Values are unchanged bitwise: the same reorder made
// the same copy, once instead of twice.
struct KeptX {
  const float* user = nullptr;
  memory::desc md;
  char* data = nullptr;
};
std::vector<KeptX>& kept_x() {
  static std::vector<KeptX> kept;
  return kept;
}
// The entry of (x, md), made on first use (first steps only) when `make`; null when none.
KeptX* find_kept_x(const float* x, const memory::desc& md, bool make) {
  for (KeptX& k : kept_x())
    if (k.user == x && k.md == md) return &k;
  if (!make) return nullptr;
  KeptX k;
  k.user = x, k.md = md;
  k.data = static_cast<char*>(std::aligned_alloc(64, aligned_bytes(md)));
  if (!k.data) throw Error("oneDNN convolutions: out of memory for a kept input copy");
  kept_x().push_back(k);
  return &kept_x().back();
}

struct KeptDy {
  char* data = nullptr;
  std::size_t size = 0;
  const float* user = nullptr;  // the dy array the buffer holds in layout md; null: none
  memory::desc md;
};
KeptDy& kept_dy() {
  static KeptDy k;
  return k;
}
void reserve_kept_dy(std::size_t bytes) {
  KeptDy& k = kept_dy();
  k.user = nullptr;
  if (bytes <= k.size) return;
  std::free(k.data);
  k.data = static_cast<char*>(std::aligned_alloc(64, bytes));
  if (!k.data) throw Error("oneDNN convolutions: out of memory for a " + std::to_string(bytes) + "-byte dy copy");
  k.size = bytes;
}

using Key = ConvPlanKey;

Key key_of(const ConvGeometry& g, Dir dir, bool accumulate, int n) {
  return conv_plan_key(g, n, static_cast<int>(dir), accumulate ? 1 : 0, g.layout_in, g.layout_out);
}

memory::desc weights_desc(const ConvGeometry& g, bool any) {
  if (g.groups == 1)
    return memory::desc({g.c_out, g.c_in, g.kh, g.kw}, memory::data_type::f32, any ? Tag::any : Tag::oihw);
  return memory::desc({g.groups, g.cout_g(), g.cin_g(), g.kh, g.kw}, memory::data_type::f32,
                      any ? Tag::any : Tag::goihw);
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// An input the primitive reads in layout `want`: reordered from the caller's plain layout when they differ.
void plan_input(Operand& op, const memory::desc& user_md, const memory::desc& want) {
  op.user = memory(user_md, engine(), DNNL_MEMORY_NONE);
  op.reordered = want != user_md;
  op.inner_md = want;
  if (!op.reordered) {
    op.inner = op.user;
    return;
  }
  op.inner = memory(want, engine(), DNNL_MEMORY_NONE);
  op.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), user_md, engine(), want));
}

// The output the primitive writes in layout `have`: written in place when it is the caller's layout
// and assigned, else into the plan's buffer and reordered (with a sum post-op when accumulating).
void plan_output(Operand& op, const memory::desc& user_md, const memory::desc& have, bool accumulate) {
  op.user = memory(user_md, engine(), DNNL_MEMORY_NONE);
  op.reordered = accumulate || have != user_md;
  if (!op.reordered) {
    op.inner = op.user;
    return;
  }
  op.inner = memory(have, engine(), DNNL_MEMORY_NONE);
  dnnl::primitive_attr a;
  if (accumulate) {
    dnnl::post_ops po;
    po.append_sum(1.0f);
    a.set_post_ops(po);
  }
  op.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), have, engine(), user_md, a));
}

// A convolution's shape as oneDNN takes it: x, w, y in the layouts it may choose (any), strides,
// dilations (0: none), the padding before and after.
struct ConvDescArgs {
  memory::desc x, w, y;
  memory::dims strides, dil, pad_l, pad_r;
};

// Note [oneDNN 2 and 3]: oneDNN 3.0 removed the operation descriptors (convolution_forward::desc,
// ...) that 2.x builds a primitive_desc from; 3.x builds the primitive_desc from the engine, the
// memory descs and the attributes directly. Debian 12 ships 2.6.3 (libdnnl-dev) and spack's onednn
// is 3.x, so the same source takes both: forward_pd and backward_pd are the only version switch (the
// rest, memory descs, reorders, post-ops and the C API's execute, is the same in both). The
// arguments are the same and so are the primitives chosen: convolution_direct, the forward's
// layouts as the backward passes' hint.
using FwdPd = dnnl::convolution_forward::primitive_desc;
using BwdDataPd = dnnl::convolution_backward_data::primitive_desc;
using BwdWeightsPd = dnnl::convolution_backward_weights::primitive_desc;
constexpr auto kDirect = dnnl::algorithm::convolution_direct;  // deterministic; no Winograd

FwdPd forward_pd(const ConvDescArgs& a, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  return FwdPd(engine(), dnnl::prop_kind::forward_training, kDirect, a.x, a.w, a.y, a.strides, a.dil, a.pad_l,
               a.pad_r, attr);
#else
  const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, kDirect, a.x, a.w, a.y, a.strides,
                                          a.dil, a.pad_l, a.pad_r);
  return FwdPd(d, attr, engine());
#endif
}

// The two backward passes take the same arguments in either version: P is
// convolution_backward_data or convolution_backward_weights.
template <class P>
typename P::primitive_desc backward_pd(const ConvDescArgs& a, const dnnl::primitive_attr& attr, const FwdPd& hint) {
#if DNNL_VERSION_MAJOR >= 3
  return
      typename P::primitive_desc(engine(), kDirect, a.x, a.w, a.y, a.strides, a.dil, a.pad_l, a.pad_r, hint, attr);
#else
  const typename P::desc d(kDirect, a.x, a.w, a.y, a.strides, a.dil, a.pad_l, a.pad_r);
  return typename P::primitive_desc(d, attr, engine(), hint);
#endif
}

std::unique_ptr<Plan> make_plan(const ConvGeometry& g, Dir dir, bool accumulate, int n) {
  const auto f32 = memory::data_type::f32;
  // Note [blocked activations]: the caller's arrays in nChw16c need no reorder when oneDNN picks it.
  const auto tag_of = [](int layout) { return layout == 16 ? Tag::nChw16c : Tag::nchw; };
  const memory::desc x_user({n, g.c_in, g.h, g.w}, f32, tag_of(g.layout_in)),
      y_user({n, g.c_out, g.oh(), g.ow()}, f32, tag_of(g.layout_out));
  const memory::desc w_user = weights_desc(g, false);
  ConvDescArgs a;
  a.x = memory::desc({n, g.c_in, g.h, g.w}, f32, Tag::any);
  a.w = weights_desc(g, true);
  a.y = memory::desc({n, g.c_out, g.oh(), g.ow()}, f32, Tag::any);
  a.strides = {g.stride_h, g.stride_w}, a.dil = {g.dil_h - 1, g.dil_w - 1}, a.pad_l = {g.pad_h, g.pad_w};
  // The right padding that makes oneDNN's output size PyTorch's (floor), as ideep computes it.
  a.pad_r = {(g.oh() - 1) * g.stride_h + (g.kh - 1) * g.dil_h + 1 - g.h - g.pad_h,
             (g.ow() - 1) * g.stride_w + (g.kw - 1) * g.dil_w + 1 - g.w - g.pad_w};
  const dnnl::primitive_attr attr = user_scratchpad();
  const FwdPd fpd = forward_pd(a, attr);
  auto p = std::make_unique<Plan>();
  p->dir = dir;
  memory::desc scratch_md;
  int arg_in[2] = {0, 0}, arg_out = 0;
  if (dir == Dir::forward) {
    plan_input(p->in[0], x_user, fpd.src_desc());
    plan_input(p->in[1], w_user, fpd.weights_desc());
    plan_output(p->out, y_user, fpd.dst_desc(), false);
    p->conv = dnnl::convolution_forward(fpd);
    scratch_md = fpd.scratchpad_desc();
    arg_in[0] = DNNL_ARG_SRC, arg_in[1] = DNNL_ARG_WEIGHTS, arg_out = DNNL_ARG_DST;
  } else if (dir == Dir::backward_data) {
    const BwdDataPd bpd = backward_pd<dnnl::convolution_backward_data>(a, attr, fpd);
    plan_input(p->in[0], y_user, bpd.diff_dst_desc());
    plan_input(p->in[1], w_user, bpd.weights_desc());
    plan_output(p->out, x_user, bpd.diff_src_desc(), accumulate);
    p->conv = dnnl::convolution_backward_data(bpd);
    scratch_md = bpd.scratchpad_desc();
    arg_in[0] = DNNL_ARG_DIFF_DST, arg_in[1] = DNNL_ARG_WEIGHTS, arg_out = DNNL_ARG_DIFF_SRC;
  } else {
    const BwdWeightsPd wpd = backward_pd<dnnl::convolution_backward_weights>(a, attr, fpd);
    plan_input(p->in[0], x_user, wpd.src_desc());
    plan_input(p->in[1], y_user, wpd.diff_dst_desc());
    plan_output(p->out, w_user, wpd.diff_weights_desc(), true);
    p->conv = dnnl::convolution_backward_weights(wpd);
    scratch_md = wpd.scratchpad_desc();
    arg_in[0] = DNNL_ARG_SRC, arg_in[1] = DNNL_ARG_DIFF_DST, arg_out = DNNL_ARG_DIFF_WEIGHTS;
  }
  p->scratch = memory(scratch_md, engine(), DNNL_MEMORY_NONE);
  std::size_t bytes = 0;
  for (Operand* op : {&p->in[0], &p->in[1], &p->out})
    if (op->reordered) op->offset = bytes, bytes += aligned_bytes(op->inner.get_desc());
  p->scratch_offset = bytes;
  p->arena_bytes = bytes + aligned_bytes(scratch_md);
  reserve_arena(p->arena_bytes);
  const Operand& dy = dir == Dir::backward_data ? p->in[0] : p->in[1];
  if (dir != Dir::forward && dy.reordered) reserve_kept_dy(aligned_bytes(dy.inner.get_desc()));
  p->args[0] = {arg_in[0], p->in[0].inner.get()};
  p->args[1] = {arg_in[1], p->in[1].inner.get()};
  p->args[2] = {arg_out, p->out.inner.get()};
  p->args[3] = {DNNL_ARG_SCRATCHPAD, p->scratch.get()};
  p->nargs = 4;
  return p;
}

std::mutex plans_lock;
std::map<Key, std::unique_ptr<Plan> >& plans_by_key() {
  static std::map<Key, std::unique_ptr<Plan> > plans;
  return plans;
}

Plan& plan_for(const ConvGeometry& g, Dir dir, bool accumulate, int n) {
  const std::lock_guard<std::mutex> guard(plans_lock);
  auto& plans = plans_by_key();
  const Key k = key_of(g, dir, accumulate, n);
  const auto it = plans.find(k);
  if (it != plans.end()) return *it->second;
  return *plans.emplace(k, make_plan(g, dir, accumulate, n)).first->second;
}

void check(dnnl_status_t s, const char* what) {
  if (s != dnnl_success) throw Error(std::string("oneDNN: ") + what + " failed (status " + std::to_string(s) + ")");
}

// A reorder's two arguments, executed through the C API (no per-call containers).
void run_reorder(const Operand& op, bool to_inner) {
  const dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, (to_inner ? op.user : op.inner).get()},
                                {DNNL_ARG_TO, (to_inner ? op.inner : op.user).get()}};
  check(dnnl_primitive_execute(op.reorder.get(), stream().get(), 2, a), "reorder");
}

// Points a memory object at `data`; only when it changed (the Workspace's tensors keep their
// addresses from step to step, and oneDNN's set_data_handle does bookkeeping of its own).
void point(memory& m, const float* data) {
  if (m.get_data_handle() != data) m.set_data_handle(const_cast<float*>(data));
}

// Where a reordered input of `p` comes from (Note [oneDNN reorder reuse]): points its inner memory
// at a kept copy and says whether that copy already holds the input (no reorder to run), else at
// the plan's place in the arena (or the buffer to keep it in) and false.
bool place_input(Plan& p, int i, const float* user, char* base) {
  Operand& op = p.in[i];
  const memory::desc& md = op.inner_md;
  const bool is_x = i == 0 && p.dir != Dir::backward_data;
  if (is_x) {
    KeptX* k = find_kept_x(user, md, p.dir == Dir::forward);
    if (k) {
      point(op.inner, reinterpret_cast<const float*>(k->data));
      return p.dir == Dir::backward_weights;  // the forward reorders into it
    }
  } else if (p.dir == Dir::backward_weights) {  // dy, kept for the backward data pass next
    KeptDy& k = kept_dy();
    point(op.inner, reinterpret_cast<const float*>(k.data));
    k.user = user, k.md = md;
    return false;
  } else if (p.dir == Dir::backward_data && kept_dy().user == user && kept_dy().md == md) {
    point(op.inner, reinterpret_cast<const float*>(kept_dy().data));
    return true;
  }
  point(op.inner, reinterpret_cast<const float*>(base + op.offset));
  return false;
}

void execute(Plan& p, const float* in0, const float* in1, float* out) {
  point(p.in[0].user, in0);
  point(p.in[1].user, in1);
  point(p.out.user, out);
  char* base = arena().data;  // Note [oneDNN arena]
  const float* ins[2] = {in0, in1};
  bool held[2] = {false, false};
  for (int i = 0; i < 2; ++i)
    if (p.in[i].reordered) held[i] = place_input(p, i, ins[i], base);
  if (p.dir != Dir::backward_weights) kept_dy().user = nullptr;  // the kept dy serves the next call only
  if (p.out.reordered) point(p.out.inner, reinterpret_cast<const float*>(base + p.out.offset));
  if (p.arena_bytes > p.scratch_offset) point(p.scratch, reinterpret_cast<const float*>(base + p.scratch_offset));
  for (int i = 0; i < 2; ++i)
    if (p.in[i].reordered && !held[i]) run_reorder(p.in[i], true);
  check(dnnl_primitive_execute(p.conv.get(), stream().get(), p.nargs, p.args.data()), "convolution");
  if (p.out.reordered) run_reorder(p.out, false);
  check(dnnl_stream_wait(stream().get()), "stream wait");
}

}  // namespace

bool available() { return true; }

std::size_t plans_built() {
  const std::lock_guard<std::mutex> guard(plans_lock);
  return plans_by_key().size();
}

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         (v->cpu_runtime == DNNL_RUNTIME_OMP ? " (OpenMP)" : "");
}

void forward(const ConvGeometry& g, const float* x, const float* w, float* y, int n) {
  if (n > 0) execute(plan_for(g, Dir::forward, false, n), x, w, y);
}

void backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx, bool accumulate, int n) {
  if (n > 0) execute(plan_for(g, Dir::backward_data, accumulate, n), dy, w, dx);
}

void backward_weights(const ConvGeometry& g, const float* x, const float* dy, float* dw, int n) {
  if (n > 0) execute(plan_for(g, Dir::backward_weights, true, n), x, dy, dw);
}

#endif

}  // namespace hpct::nn::onednn
