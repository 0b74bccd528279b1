#!/usr/bin/env python3
"""GPU-side kernel times of PyTorch for one matmul (a probe for the notes, not a benchmark peer).

Prints each CUDA kernel torch launches for torch.matmul(a, b, out=o) at the given sizes, with its
median device time over the profiled calls, so our trace (bench/tools/trace_summary.py) can be set beside
cuBLAS's kernel rather than beside torch's wall time. TF32 off, as in bench/peers/torch_suite.py.
usage: torch_kernels.py [N ...]   (default 512)
"""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

torch.backends.cuda.matmul.allow_tf32 = False
for n in [int(a) for a in sys.argv[1:]] or [512]:
    a, b, o = (torch.rand(n, n, device="cuda") for _ in range(3))
    for _ in range(20):
        torch.matmul(a, b, out=o)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(200):
            torch.matmul(a, b, out=o)
        torch.cuda.synchronize()
    times = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            times.setdefault(ev.name, []).append(ev.device_time)
    for name, ts in times.items():
        print(f"matmul/{n} | {len(ts)} launches | median {statistics.median(ts):.2f} us | {name[:120]}")
