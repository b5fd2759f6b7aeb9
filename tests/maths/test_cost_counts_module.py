"""attention_claims.maths.cost, the counts behind 引理 11.44 (normalised linear attention's operations, parameter
counts of attention layers and of rank-r factorisations): values by hand, agreement with independent counts
(torch FlopCounterMode, torch.nn modules on the meta device, an instrumented elementwise evaluation) and clear
errors on bad input."""

from __future__ import annotations

import pytest
import torch

from attention_claims.maths import (
    PARAMETER_METHODS,
    AttentionInputError,
    attention_parameter_count,
    factorised_parameter_count,
    matmul_count,
    meta_matmul_flops,
    normalised_linear_op_count,
)


def _counted_normalised_linear(N: int, d: int, m: int) -> int:
    """The same operations counted one by one in plain loops (scalar by scalar), an independent tally."""
    ops = 2 * N * m * 2  # elu and + 1 on every entry of phi(Q) and phi(K)
    ops += sum(2 for _ in range(m) for _ in range(d) for _ in range(N))  # S = phi(K)^T V: a multiply and an add per term
    ops += sum(1 for _ in range(m) for _ in range(N - 1))  # z = phi(K)^T 1: N - 1 additions per column
    ops += sum(2 for _ in range(N) for _ in range(d) for _ in range(m))  # phi(Q) S
    ops += sum(2 for _ in range(N) for _ in range(m))  # phi(Q) z
    return ops + N * d  # the division of every output entry


def test_normalised_linear_op_count_by_hand():
    # N = 2, d = m = 1: features 8, S 4, z 1, phi(Q) S 4, phi(Q) z 4, division 2
    assert normalised_linear_op_count(2, 1) == 23
    assert normalised_linear_op_count(2, 1, m=1) == 23


@pytest.mark.parametrize("N,d,m", [(1, 1, 1), (2, 3, 3), (5, 4, 7), (9, 2, 1)])
def test_normalised_linear_op_count_equals_a_scalar_tally(N, d, m):
    assert normalised_linear_op_count(N, d, m) == _counted_normalised_linear(N, d, m)


@pytest.mark.parametrize("N,d", [(3, 2), (64, 64), (4096, 128)])
def test_normalised_linear_matmul_part_equals_flop_counter(N, d):
    rest = 4 * N * d + d * (N - 1) + 2 * N * d + N * d
    assert normalised_linear_op_count(N, d) - rest == matmul_count("linear", N, d, m=d) == \
        meta_matmul_flops("linear", N, d, m=d)


@pytest.mark.parametrize("d_model,heads", [(8, 2), (512, 8), (768, 12), (1024, 16)])
def test_standard_parameters_equal_torch_multihead_attention(d_model, heads):
    mha = torch.nn.MultiheadAttention(d_model, heads, device="meta")
    assert attention_parameter_count("standard", d_model) == sum(p.numel() for p in mha.parameters())
    assert attention_parameter_count("linear", d_model) == attention_parameter_count("standard", d_model)


def test_linformer_parameters_add_e_and_f():
    assert attention_parameter_count("linformer", 2, N=5, k=3) == 4 * 4 + 4 * 2 + 2 * 3 * 5
    E, F = torch.nn.Linear(512, 128, bias=False, device="meta"), torch.nn.Linear(512, 128, bias=False, device="meta")
    added = E.weight.numel() + F.weight.numel()
    assert attention_parameter_count("linformer", 768, N=512, k=128) == attention_parameter_count("standard", 768) + added


@pytest.mark.parametrize("d_in,d_out,r", [(1, 1, 1), (768, 768, 150), (64, 32, 8)])
def test_factorised_parameters_equal_two_linear_layers(d_in, d_out, r):
    B = torch.nn.Linear(d_in, r, bias=False, device="meta")
    A = torch.nn.Linear(r, d_out, bias=False, device="meta")
    assert factorised_parameter_count(d_in, d_out, r) == B.weight.numel() + A.weight.numel()


@pytest.mark.parametrize("call,match", [
    (lambda: normalised_linear_op_count(0, 1), "N"),
    (lambda: normalised_linear_op_count(2, 1.0), "d"),
    (lambda: normalised_linear_op_count(2, 1, m=0), "m"),
    (lambda: attention_parameter_count("bogus", 8), "method"),
    (lambda: attention_parameter_count("standard", 0), "d_model"),
    (lambda: attention_parameter_count("linformer", 8, N=4), "k"),
    (lambda: attention_parameter_count("linformer", 8, k=4), "N"),
    (lambda: factorised_parameter_count(4, 4, 0), "r"),
    (lambda: factorised_parameter_count(True, 4, 1), "d_in"),
])
def test_count_input_errors(call, match):
    with pytest.raises(AttentionInputError, match=match):
        call()


def test_parameter_methods_listed():
    assert PARAMETER_METHODS == ("standard", "linear", "linformer")
