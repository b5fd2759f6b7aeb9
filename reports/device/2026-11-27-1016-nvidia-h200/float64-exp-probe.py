import torch, math, sys
sys.path.insert(0, "/work/main")
dev = "cuda"
print(torch.__version__, torch.cuda.get_device_name())
xs = [-744.44, -744.9, -744.99, -745.0, -745.0000001, -745.01, -745.1, -745.13, -745.133, -745.14]
for d in ("cpu", "cuda"):
    t = torch.tensor(xs, dtype=torch.float64, device=d)
    print(d, "exp", [f"{v:.3e}" for v in torch.exp(t).cpu().tolist()])
for elements in (2, 64, 1024):
    for d in ("cpu", "cuda"):
        res = []
        for g in (744.9, 744.999, 745.0, 745.001, 745.1, 745.13):
            z = torch.zeros(elements, dtype=torch.float64); z[0] = g
            res.append(f"{g}:{torch.softmax(z.to(d), -1)[1].item():.3e}")
        print(elements, d, res)
# bisection like the boundary function, on both devices, all dtypes, several row lengths
def bis(f, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi): break
        if f(mid): hi = mid
        else: lo = mid
    return hi
for dt in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
    for elements in (2, 64, 1024):
        out = []
        for d in ("cpu", "cuda"):
            def fails(g):
                z = torch.zeros(elements, dtype=torch.float64); z[0] = g
                return bool((torch.softmax(z.to(device=d, dtype=dt), -1)[1:] == 0).any().item())
            out.append(f"{d}={bis(fails, 0.0, min(1e5, torch.finfo(dt).max/2)):.9g}")
        print(dt, elements, *out)
# exp alone on cuda, float64 bottom: the smallest x with exp(x) > 0
def fz(x): return torch.exp(torch.tensor([x], dtype=torch.float64, device="cuda")).item() == 0
print("cuda float64 exp zero below", -bis(lambda g: fz(-g), 700.0, 800.0))
def fzc(x): return torch.exp(torch.tensor([x], dtype=torch.float64)).item() == 0
print("cpu float64 exp zero below", -bis(lambda g: fzc(-g), 700.0, 800.0))
