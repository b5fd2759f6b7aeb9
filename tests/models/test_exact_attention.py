"""The suite's own eager attention (``attention_claims.models.loading._eager_exact_attention``, issue 37):
its float32 weights are transformers' eager weights bitwise, in a whole model and head by head, whether the
scaling ``1/sqrt(d_k)`` is a power of two (folded into the query) or not (applied in place); in float64 its
softmax runs in float64 (transformers' Llama path would cast to float32) and equals the plain out-of-place
formula bitwise.
"""

from __future__ import annotations

import math

import pytest
import tiny_models
import torch

from attention_claims.models import loading


class _Module:
    """What the attention function reads off transformers' attention module."""

    def __init__(self, groups: int):
        self.num_key_value_groups = groups
        self.training = False


def _inputs(dtype, d_k: int, N: int = 37, heads: int = 4, groups: int = 2, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, heads, N, d_k, generator=g, dtype=torch.float64).to(dtype) * 3
    k = torch.randn(1, heads // groups, N, d_k, generator=g, dtype=torch.float64).to(dtype) * 3
    v = torch.randn(1, heads // groups, N, d_k, generator=g, dtype=torch.float64).to(dtype)
    mask = torch.full((N, N), torch.finfo(dtype).min, dtype=dtype).triu(1)[None, None]
    return q, k, v, mask


def _plain(module, q, k, v, mask, scaling):
    """The formula out of place, as the suite computed it before issue 37 (and transformers' eager path does)."""
    k = k.repeat_interleave(module.num_key_value_groups, dim=1)
    v = v.repeat_interleave(module.num_key_value_groups, dim=1)
    w = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * scaling + mask, dim=-1)
    return torch.matmul(w, v).transpose(1, 2).contiguous(), w


@pytest.mark.parametrize("d_k", [4, 8, 16, 64, 80])
def test_float32_weights_are_transformers_eager_weights_bitwise(d_k):
    from transformers.models.llama.modeling_llama import eager_attention_forward

    module = _Module(groups=2)
    q, k, v, mask = _inputs(torch.float32, d_k)
    scaling = d_k ** -0.5
    assert (math.frexp(scaling)[0] == 0.5) == (d_k in (4, 16, 64))  # both paths of the function are taken
    out, w = loading._eager_exact_attention(module, q, k, v, mask, scaling)
    ref_out, ref_w = eager_attention_forward(module, q, k, v, mask, scaling)
    assert torch.equal(w, ref_w)
    assert torch.equal(out, ref_out)


@pytest.mark.parametrize("d_k", [8, 64])
def test_float64_softmax_runs_in_float64_and_equals_the_plain_formula(d_k):
    module = _Module(groups=2)
    q, k, v, mask = _inputs(torch.float64, d_k)
    out, w = loading._eager_exact_attention(module, q, k, v, mask, d_k ** -0.5)
    ref_out, ref_w = _plain(module, q, k, v, mask, d_k ** -0.5)
    assert w.dtype == torch.float64
    assert torch.equal(w, ref_w) and torch.equal(out, ref_out)
    assert float((w.sum(-1) - 1).abs().max()) < 1e-14  # not float32's ~1e-7


def test_scaling_on_the_query_is_used_only_where_it_is_exact():
    """A scaling that is not a power of two, folded into the query, would round differently: the function must
    apply it to the logits (this draw tells the two apart)."""
    module = _Module(groups=1)
    q, k, v, mask = _inputs(torch.float32, 8, groups=1)
    scaling = 8 ** -0.5
    folded = torch.softmax(torch.matmul(q * scaling, k.transpose(2, 3)) + mask, dim=-1)
    _, w = loading._eager_exact_attention(module, q, k, v, mask, scaling)
    _, ref = _plain(module, q, k, v, mask, scaling)
    assert not torch.equal(folded, ref)
    assert torch.equal(w, ref)


def test_a_whole_llama_in_float32_has_transformers_eager_attention_bitwise(tmp_path):
    import transformers as tf

    src = tiny_models.build("llama", tmp_path / "tiny-llama")
    ids = torch.arange(3, 40)[None] % 20
    weights = {}
    for impl in ("eager", loading.EXACT_ATTENTION):
        loading._register_exact_attention()
        model = tf.AutoModel.from_pretrained(src, attn_implementation=impl, dtype=torch.float32,
                                             local_files_only=True).eval()
        with torch.no_grad():
            weights[impl] = model(input_ids=ids, output_attentions=True).attentions
    assert len(weights["eager"]) == 2
    for a, b in zip(weights["eager"], weights[loading.EXACT_ATTENTION], strict=True):
        assert torch.equal(a, b)


def test_with_gradients_on_the_forward_pass_works_and_its_weights_are_the_eager_ones(tmp_path):
    """The in-place softmax has no autograd formula: where a gradient is recorded, the function softmaxes out of
    place (same values), so a user's model loaded by the suite still trains or takes gradients."""
    import transformers as tf

    src = tiny_models.build("llama", tmp_path / "tiny-llama")
    ids = torch.arange(3, 30)[None] % 20
    loading._register_exact_attention()
    out = {}
    for impl in ("eager", loading.EXACT_ATTENTION):
        model = tf.AutoModel.from_pretrained(src, attn_implementation=impl, dtype=torch.float32,
                                             local_files_only=True).eval()
        res = model(input_ids=ids, output_attentions=True)
        res.last_hidden_state.sum().backward()
        out[impl] = (res.attentions, model.layers[0].self_attn.q_proj.weight.grad)
    for a, b in zip(out["eager"][0], out[loading.EXACT_ATTENTION][0], strict=True):
        assert torch.equal(a.detach(), b.detach())
    assert torch.equal(out["eager"][1], out[loading.EXACT_ATTENTION][1])
