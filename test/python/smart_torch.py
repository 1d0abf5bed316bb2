#!/usr/bin/env python3
"""Plain-PyTorch reference of the SMART family's layers (issue 19), for the parity tests: no
torch_geometric, the segment softmax over incoming edges written with scatter ops
(scatter_reduce amax, index_add_), as SMART's AttentionLayer and FourierEmbedding compute them.
Module and parameter names match ours ("to_q.weight" <-> "layer/to_q/weight")."""
import math

import numpy as np
import torch
import torch.nn as nn


def segment_softmax(score, index, num):
    """softmax of score [E, H] over the edges sharing index[e] (one softmax per destination)."""
    h = score.shape[1]
    idx = index.unsqueeze(1).expand(-1, h)
    m = torch.full((num, h), -math.inf, dtype=score.dtype).scatter_reduce(0, idx, score, "amax",
                                                                         include_self=True)
    p = (score - m.index_select(0, index).detach()).exp()
    s = torch.zeros(num, h, dtype=score.dtype).index_add_(0, index, p)
    return p / s.index_select(0, index)


def edge_softmax(q, k, v, kr, vr, src, dst, heads, head_dim):
    """Multi-head attention over edges src -> dst; kr, vr per-edge terms (or None)."""
    n_dst = q.shape[0]
    qi = q.index_select(0, dst).view(-1, heads, head_dim)
    kj = k.index_select(0, src).view(-1, heads, head_dim)
    vj = v.index_select(0, src).view(-1, heads, head_dim)
    if kr is not None:
        kj = kj + kr.view(-1, heads, head_dim)
        vj = vj + vr.view(-1, heads, head_dim)
    score = (qi * kj).sum(-1) / math.sqrt(head_dim)
    a = segment_softmax(score, dst, n_dst)
    msg = (vj * a.unsqueeze(-1)).reshape(-1, heads * head_dim)
    return torch.zeros(n_dst, heads * head_dim, dtype=q.dtype).index_add_(0, dst, msg)


class EdgeAttention(nn.Module):
    """SMART's attention block: projections, edge softmax, sigmoid gate, output projection."""

    def __init__(self, hidden, heads, head_dim, has_r):
        super().__init__()
        w = heads * head_dim
        self.heads, self.head_dim, self.has_r = heads, head_dim, has_r
        self.to_k = nn.Linear(hidden, w, bias=False)
        self.to_v = nn.Linear(hidden, w)
        if has_r:
            self.to_k_r = nn.Linear(hidden, w, bias=False)
            self.to_v_r = nn.Linear(hidden, w)
        self.to_q = nn.Linear(hidden, w)
        self.to_s = nn.Linear(hidden, w)
        self.to_g = nn.Linear(w + hidden, w)
        self.to_out = nn.Linear(w, hidden)

    def forward(self, x_src, x_dst, r, src, dst):
        kr = self.to_k_r(r) if self.has_r else None
        vr = self.to_v_r(r) if self.has_r else None
        agg = edge_softmax(self.to_q(x_dst), self.to_k(x_src), self.to_v(x_src), kr, vr, src, dst,
                           self.heads, self.head_dim)
        g = torch.sigmoid(self.to_g(torch.cat([agg, x_dst], dim=-1)))
        return self.to_out(agg + g * (self.to_s(x_dst) - agg))


class FourierEmbedding(nn.Module):
    """SMART's FourierEmbedding (continuous inputs only, optional categorical sum)."""

    def __init__(self, inputs, hidden, freqs):
        super().__init__()
        self.freqs = nn.Embedding(inputs, freqs)
        self.mlps = nn.ModuleList([nn.Sequential(nn.Linear(2 * freqs + 1, hidden), nn.LayerNorm(hidden),
                                                 nn.ReLU(), nn.Linear(hidden, hidden)) for _ in range(inputs)])
        self.to_out = nn.Sequential(nn.LayerNorm(hidden), nn.ReLU(), nn.Linear(hidden, hidden))

    def forward(self, x, extra=None):
        t = x.unsqueeze(-1) * self.freqs.weight * 2 * math.pi
        f = torch.cat([t.cos(), t.sin(), x.unsqueeze(-1)], dim=-1)
        s = extra if extra is not None else 0
        for i, mlp in enumerate(self.mlps):
            s = s + mlp(f[:, i])
        return self.to_out(s)


class CausalAttention(nn.Module):
    """Dense causal multi-head self-attention with a -inf mask above the diagonal."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.to_q, self.to_v = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        n, length, dim = x.shape
        split = lambda t: t.view(n, length, self.heads, dim // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.to_q(x)), split(self.to_k(x)), split(self.to_v(x))
        score = q @ k.transpose(-1, -2) / math.sqrt(dim // self.heads)
        mask = torch.ones(length, length, dtype=torch.bool).triu(1)
        a = score.masked_fill(mask, -math.inf).softmax(-1)
        return self.to_out((a @ v).transpose(1, 2).reshape(n, length, dim))


def load_params(module, group):
    """Copies our parameters (h5 group with <module path>/<weight|bias>) into a torch module."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            path, leaf = name.rsplit(".", 1)
            p.copy_(torch.tensor(np.array(group[path][leaf])))
    return module


def grad_errors(module, group, rel_err):
    """rel_err of our gradients (h5 group like load_params) against the module's .grad."""
    out = {}
    for name, p in module.named_parameters():
        path, leaf = name.rsplit(".", 1)
        out[f"{name}.grad"] = rel_err(group[path][leaf], p.grad.numpy())
    return out


KINDS = ("edge_softmax", "edge_attention", "fourier_embedding", "causal_attention")


def build_layer(f, kind, xs):
    """The torch forward of one parity case of these layers: (y, module or None)."""
    num = lambda k: int(f.attrs[k])  # noqa: E731
    src = torch.tensor(np.array(f["input/src"])).long() if "input/src" in f else None
    dst = torch.tensor(np.array(f["input/dst"])).long() if "input/dst" in f else None
    if kind == "edge_softmax":
        return edge_softmax(*xs, src, dst, num("heads"), num("head_dim")), None
    if kind == "edge_attention":
        bipartite = len(xs) == 3
        m = EdgeAttention(num("hidden"), num("heads"), num("head_dim"), bipartite)
        load_params(m, f["layer"])
        if bipartite:
            return m(xs[0], xs[1], xs[2], src, dst), m
        return m(xs[0], xs[0], None, src, dst), m
    if kind == "fourier_embedding":
        m = FourierEmbedding(xs[0].shape[1], num("hidden"), num("freqs"))
        load_params(m, f["layer"])
        return m(xs[0]), m
    if kind == "causal_attention":
        m = CausalAttention(xs[0].shape[2], num("heads"))
        load_params(m, f["layer"])
        return m(xs[0]), m
    raise ValueError(f"unknown layer kind '{kind}'")
