"""Why float64's diagonal underflow gap is 745.0 nats on CUDA and 745.133 on the CPU: the probe run on the lent
H200 on 2026-11-27 (output: float64-exp-probe.txt), in a second device call after scripts/gpu-run, as
``/opt/torch/.venv/bin/python3 float64-exp-probe.py``. Reformatted for ruff after the run; the computations are
the ones that ran.

It prints ``torch.exp`` near float64's last subnormal on both devices, ``torch.softmax``'s weight of a logit
``g`` below the row's maximum for rows of 2, 64 and 1024 logits, and the bisected gap at which that weight
becomes 0 for each dtype and device (as ``attention_claims.maths.softmax_diagonal_underflow_gap`` bisects it),
then the bisected ``x`` below which ``exp(x)`` is 0 in float64 on each device.
"""

import torch

DEVICES = ("cpu", "cuda")


def bisect(fails, lo: float, hi: float) -> float:
    """The smallest ``g`` in ``(lo, hi]`` with ``fails(g)``, to float64 resolution (``fails(hi)`` holds)."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return hi


def row_weight_vanishes(g: float, elements: int, device: str, dtype: torch.dtype) -> bool:
    z = torch.zeros(elements, dtype=torch.float64)
    z[0] = g
    return bool((torch.softmax(z.to(device=device, dtype=dtype), -1)[1:] == 0).any().item())


def exp_vanishes(x: float, device: str) -> bool:
    return torch.exp(torch.tensor([x], dtype=torch.float64, device=device)).item() == 0


def main() -> None:
    print(torch.__version__, torch.cuda.get_device_name())
    xs = [-744.44, -744.9, -744.99, -745.0, -745.0000001, -745.01, -745.1, -745.13, -745.133, -745.14]
    for d in DEVICES:
        t = torch.tensor(xs, dtype=torch.float64, device=d)
        print(d, "exp", [f"{v:.3e}" for v in torch.exp(t).cpu().tolist()])
    for elements in (2, 64, 1024):
        for d in DEVICES:
            res = []
            for g in (744.9, 744.999, 745.0, 745.001, 745.1, 745.13):
                z = torch.zeros(elements, dtype=torch.float64)
                z[0] = g
                res.append(f"{g}:{torch.softmax(z.to(d), -1)[1].item():.3e}")
            print(elements, d, res)
    for dt in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        for elements in (2, 64, 1024):
            out = []
            for d in DEVICES:
                gap = bisect(lambda g, e=elements, dev=d, t=dt: row_weight_vanishes(g, e, dev, t), 0.0,
                             min(1e5, torch.finfo(dt).max / 2))
                out.append(f"{d}={gap:.9g}")
            print(dt, elements, *out)
    print("cuda float64 exp zero below", -bisect(lambda g: exp_vanishes(-g, "cuda"), 700.0, 800.0))
    print("cpu float64 exp zero below", -bisect(lambda g: exp_vanishes(-g, "cpu"), 700.0, 800.0))


if __name__ == "__main__":
    main()
