// Host micro-kernels for EdgeSoftmax's folded per-edge work (forward_rel, backward_rel): the R-long
// dot products and sums of every incoming edge of one destination, register-blocked with AVX-512.
//
// Note [register-blocked edge kernels]: per destination i and edge e the folded layer reads r_e
// [R] against H per-destination rows (qr_ih, gv_ih) and sums w_eh r_e into H rows (ragg_ih, rs_ih),
// and the backward forms dr_e = sum_h ds_eh qr_ih + w_eh gv_ih. Written as R-long dot_lanes/axpy
// calls per (edge, head), every axpy loads and stores its H R destination floats once per edge
// (3 memory operations per multiply-add) and r_e is read 2 H times; GCC kept the accumulators of
// plain loops on the stack. Here one 16-column chunk of all H rows lives in registers while the
// destination's edges stream past (r_e read once per chunk, dr_e written once), and head_dots()
// forms all H dots of one r_e in one pass. Every sum adds the same products in the same order as
// the plain loops (no FMA contraction: the library builds with -ffp-contract=off, and the
// intrinsics multiply then add), and head_dots() keeps dot_lanes()' 32 lanes and reduction tree,
// so results are the same bits as the generic kernels; test_attention_layers compares the two.
// Host builds with AVX-512 only (usable()); elsewhere the generic Kokkos kernels run.
//
// Note [shared norm scaled in the kernel]: with the shared edge norm (Note [shared edge
// normalisation], edge_softmax.hpp) the kernels take the unscaled qr and gv and form qr * gamma,
// gv * gamma and the constants qr . beta, gv . beta per destination, into a stack copy, with the
// products and dot_lanes() sums of the generic scale_heads() (the same bits). So qr and gv stay
// unscaled in the scratch, and backward_rel's gain and bias gradients read them there instead of
// running two of its five per-head GEMMs again, and no pass scales the [destinations, H R] rows.
#pragma once

#include "nn/layers/edge_softmax_detail.hpp"

namespace hpct::nn::edge_blocked {

// The widest R the blocked kernels take (the stack copies of Note [shared norm scaled in the kernel]).
constexpr int kMaxR = 512;
// Whether the blocked kernels run for this many heads and R (an AVX-512 host build, heads 1, 2, 4
// or 8, R a multiple of 16 up to kMaxR; compiled with the library's flags, so the answer is the
// library's).
bool usable(int heads, int R);
// Tests switch the blocked kernels off to compare them with the generic ones.
bool &enabled();

// forward_rel's per-destination loop: raw host pointers, rows of width H D (q, k, v, out), H (a,
// wd, wsum), R (r, gamma, beta) and H R (qr, ragg). Writes a, wd, wsum, out (its bias term
// included) and ragg; the caller then adds ragg's projection to out. With affine, qr is unscaled and gamma, beta are the shared norm's (Note [shared norm scaled
// in the kernel]), and ragg is written with the norm applied (gamma ragg + beta wsum).
struct FwArgs {
  int D, R;
  float scale;
  bool affine;
  const float *q, *k, *v, *r, *qr, *bv, *gamma, *beta;
  const int *offsets, *order, *src;
  float *a, *wd, *wsum, *out, *ragg;
};
void forward(int nd, int H, const FwArgs &p, const edge_detail::DropDraw<float> &dd);

// backward_rel's per-destination loop: da, dscore (into ds), rowdot, cst (sum_e ds with the
// shared norm), dq's key part, rs, ragg and dr of every incoming edge. With affine, qr and gv are
// unscaled (Note [shared norm scaled in the kernel]).
struct BwArgs {
  int D, R;
  float scale;
  bool affine, want_dq, acc_q, want_dr, acc_r;
  const float *g, *v, *k, *r, *qr, *gv, *a, *bv, *gamma, *beta;
  const int *offsets, *order, *src;
  float *ds, *wd, *rowdot, *cst, *dq, *rs, *ragg, *dr;
};
void backward(int nd, int H, const BwArgs &p, const edge_detail::DropDraw<float> &dd);

// backward_rel's per-source loop (edge_rel_src): dk_j = sum_e ds_eh q_i,h and dv_j = sum_e w_eh g_i,h
// over source j's outgoing edges e (to i) in `order`, with HD = H D columns held in 16-column
// registers while the edges stream past: the generic loop's axpys, the same products added in the
// same order (same bits). For D a multiple of 16 and HD in {16, 32, 64, 128} (source_usable()).
struct SrcArgs {
  int D;
  bool want_dk, want_dv;
  const float *q, *g, *ds, *w;
  const int *offsets, *order, *dst;
  float *dk, *dv;
};
bool source_usable(int heads, int D);
void by_source(int ns, int H, const SrcArgs &p);

}  // namespace hpct::nn::edge_blocked
