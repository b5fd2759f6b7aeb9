"""Small transformers for the replications: pre-LayerNorm blocks, rotary positions, tied embeddings.

One model class covers every analog through its options:

* ``attention``: ``softmax`` (scaled dot product, Vaswani et al. 2017), ``linear`` (the elu+1 feature map
  of Katharopoulos et al. 2020, written as its explicit N x N matrix so that any mask applies; its rank is
  at most the head size), ``linformer`` (keys and values projected along the length to ``k`` rows, Wang
  et al. 2020; bidirectional only) or ``gau`` (a one-head gated attention unit with
  ``relu(q k^T / sqrt(s) )^2 / n`` scores, Hua et al. 2022, whose key is ``gamma_k * z + beta_k``).
* ``head_masks``: one mask kind per head (``bi``, ``fwd`` = causal, ``bwd`` = anti-causal, ``prefix`` =
  bidirectional over the first half, causal after it), the same in every layer, or a list per layer.

Rotary positions (Su et al. 2021) are used because a first prototype with learned absolute positions
never left the unigram plateau in 800 steps (issue 47); a causal mask also carries position information
by itself (Haviv et al. 2022), which rotary positions make less of a confound.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["TinyTransformer", "mask_for"]


def mask_for(kind: str, n: int) -> torch.Tensor:
    """The boolean ``(n, n)`` mask (True = may attend) of one mask kind; raises ValueError for an unknown kind."""
    i = torch.arange(n)
    if kind == "bi":
        return torch.ones(n, n, dtype=torch.bool)
    if kind == "fwd":
        return i[:, None] >= i[None, :]
    if kind == "bwd":
        return i[:, None] <= i[None, :]
    if kind == "prefix":
        half = n // 2
        return (i[:, None] >= i[None, :]) | ((i[:, None] < half) & (i[None, :] < half))
    raise ValueError(f"unknown attention mask kind {kind!r} (bi, fwd, bwd, prefix)")


def _rotary(x: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` (..., n, d) by position (RoFormer's half-split form, base 10000)."""
    n, d = x.shape[-2], x.shape[-1]
    half = d // 2
    freq = 10000.0 ** (-torch.arange(half, dtype=x.dtype, device=x.device) / half)
    ang = torch.arange(n, dtype=x.dtype, device=x.device)[:, None] * freq[None, :]
    cos, sin = ang.cos(), ang.sin()
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class _Attention(nn.Module):
    def __init__(self, d: int, heads: int, kind: str, n: int, k: int = 0):
        super().__init__()
        self.d, self.h, self.kind = d, heads, kind
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        if kind == "linformer":
            self.e = nn.Parameter(torch.randn(k, n) / math.sqrt(n))
            self.f = nn.Parameter(torch.randn(k, n) / math.sqrt(n))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.d // self.h).permute(2, 0, 3, 1, 4)
        q, k = _rotary(q), _rotary(k)
        if self.kind == "softmax":
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        elif self.kind == "linear":
            fq, fk = F.elu(q) + 1, F.elu(k) + 1
            a = (fq @ fk.transpose(-1, -2)) * mask
            y = (a / a.sum(-1, keepdim=True).clamp_min(1e-6)) @ v
        elif self.kind == "linformer":
            kp, vp = self.e @ k, self.f @ v
            y = torch.softmax(q @ kp.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1) @ vp
        else:
            raise ValueError(f"unknown attention {self.kind!r}")
        return self.out(y.transpose(1, 2).reshape(b, n, self.d))


class _GAU(nn.Module):
    """Gated attention unit (Hua et al. 2022, 'Transformer Quality in Linear Time'), relu^2 scores."""

    def __init__(self, d: int, s: int, key_bias: str):
        super().__init__()
        self.e = 2 * d
        self.uv = nn.Linear(d, 2 * self.e + s)
        self.s = s
        self.gamma = nn.Parameter(torch.ones(2, s) + 0.02 * torch.randn(2, s))
        self.beta = nn.Parameter(torch.zeros(2, s))
        if key_bias not in ("trained", "zero"):
            raise ValueError(f"key_bias must be 'trained' or 'zero', not {key_bias!r}")
        self.key_bias = key_bias
        self.out = nn.Linear(self.e, d)
        self.last_sparsity = float("nan")

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        u, v, z = F.silu(self.uv(x)).split([self.e, self.e, self.s], dim=-1)
        beta = self.beta if self.key_bias == "trained" else self.beta * torch.tensor([1.0, 0.0], device=x.device)[:, None]
        q = _rotary(z * self.gamma[0] + beta[0])
        k = _rotary(z * self.gamma[1] + beta[1])
        a = torch.relu(q @ k.transpose(-1, -2) / math.sqrt(self.s)) ** 2 / n
        a = a * mask[0]
        with torch.no_grad():
            allowed = mask[0].expand_as(a)
            self.last_sparsity = float(((a == 0) & allowed).sum() / allowed.sum())
        return self.out(u * (a @ v))


class TinyTransformer(nn.Module):
    """A small pre-LN transformer over token ids ``(batch, n)`` returning hidden states ``(batch, n, d)``;
    :meth:`logits` maps hidden states to vocabulary logits with the tied embedding."""

    def __init__(self, vocab: int, d: int, layers: int, heads: int, n: int, attention: str = "softmax",
                 head_masks=("bi",), k: int = 0, key_bias: str = "trained"):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        nn.init.normal_(self.emb.weight, std=0.02)
        self.attention = attention
        per_layer = head_masks if head_masks and isinstance(head_masks[0], (list, tuple)) else [head_masks] * layers
        if len(per_layer) != layers:
            raise ValueError(f"{len(per_layer)} head-mask lists for {layers} layers")
        masks = []
        for kinds in per_layer:
            kinds = list(kinds) * (heads // len(kinds)) if len(kinds) != heads else list(kinds)
            if len(kinds) != heads:
                raise ValueError(f"head masks {kinds} do not divide {heads} heads")
            masks.append(torch.stack([mask_for(kind, n) for kind in kinds]))
        self.register_buffer("masks", torch.stack(masks), persistent=False)
        self.norm1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.norm2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        if attention == "gau":
            self.mix = nn.ModuleList(_GAU(d, max(16, d // 2), key_bias) for _ in range(layers))
            self.mlp = None
        else:
            self.mix = nn.ModuleList(_Attention(d, heads, attention, n, k) for _ in range(layers))
            self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                     for _ in range(layers))
        self.final = nn.LayerNorm(d)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        n = ids.shape[1]
        for i, mix in enumerate(self.mix):
            x = x + mix(self.norm1[i](x), self.masks[i][:, :n, :n])
            if self.mlp is not None:
                x = x + self.mlp[i](self.norm2[i](x))
        return self.final(x)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Vocabulary logits of hidden states (..., d) -> (..., vocab)."""
        return hidden @ self.emb.weight.T

    def sparsity(self) -> float:
        """Mean share of exact zeros among the allowed GAU scores of the last forward pass (nan otherwise)."""
        vals = [m.last_sparsity for m in self.mix if isinstance(m, _GAU)]
        return float(sum(vals) / len(vals)) if vals else float("nan")
