#!/usr/bin/env python3
"""PyTorch peer of clt-bench: the same cases, names and method (bench/README.md), as JSON lines.

Method: inputs are fresh uniform [0, 1) float32 tensors already on the device; a warm-up call; R chosen
so that one sample (R calls, then one synchronize) lasts >= 20 ms; >= 5 samples; the median of
wall / R in microseconds, with min and max. Outputs go into preallocated out= tensors where torch
offers that, so the timed loop allocates nothing it does not have to. TF32 is off.

Usage: torch_suite.py [--suite seed,micro,...|all] [--case SUBSTR] [--device cpu|cuda]
                      [--mode eager|graph|compile] [--json FILE] [--threads N] [--samples N]
                      [--min-ms MS]
--mode (pinn suite only; other suites run eager and are left out of other modes): graph = the
forward / the whole train step (zero_grad, forward, loss, backward, Adam with capturable=True)
captured in one CUDA graph and replayed (CUDA only); compile = torch.compile of the network's
forward (features included), and on CUDA the whole step with it captured in one CUDA graph. The
peer is then torch-<device>-<mode>, its own column in clt-bench --compare.
Without torch installed it says so on stderr and prints nothing (exit 0): a peer never fakes lines.
"""
import argparse
import json
import platform
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

SUITES = ["transfer", "seed", "micro", "gemm", "conv", "pinn", "fft", "attention", "transformer",
          "cnn", "ops", "nnops"]
MICRO_SIZES = [1024, 65536, 1048576, 16777216]
MICRO_ROWS = [(64, 1000), (512, 1000), (4096, 4096)]
GEMM_SIZES = [128, 256, 512, 1024, 2048, 4096, 8192]
CPU_GEMM_MAX = 2048
MLP_SHAPES = [(64, 784, 128), (256, 1024, 1024), (1000, 128, 128), (8192, 512, 2048)]
# n, c, h (= w), o, k, stride, pad
CONV_CASES = [(8, 64, 56, 64, 3, 1, 1), (8, 3, 224, 64, 7, 2, 3), (32, 128, 28, 128, 3, 1, 1),
              (8, 256, 56, 64, 1, 1, 0), (1, 64, 56, 64, 3, 1, 1)]
SEED_CONV = (1, 16, 64, 32, 3, 1, 1)
# (which, case) of the conv suite's backward rows: "input" = dx, "weight" = dw
CONV_BWD_CASES = [("input", CONV_CASES[0]), ("weight", CONV_CASES[0]), ("weight", CONV_CASES[1]),
                  ("input", CONV_CASES[4]), ("weight", CONV_CASES[4])]
MAX_REPS = 10_000_000
PINN_SIZES = [200, 1000, 10000]
PINN_FREQS, PINN_WIDTH = 64, 128
# nnops suite (bench/suite_nnops.c): (op, rows, cols) of the row-wise ops
NNOPS_ROWS = [("layer_norm", 1024, 128), ("layer_norm", 4096, 1024), ("layer_norm_backward", 1024, 128),
              ("layer_norm_backward", 4096, 1024), ("rms_norm", 4096, 1024), ("cross_entropy", 1024, 512),
              ("cross_entropy", 4096, 32000)]
# fft suite (bench/suite_fft.c): (name, kind, dims, batch); GB/s = 2 x complex bytes / time
FFT_CASES = [("fft_c2c/1024x4096", "c2c", (1024,), 4096), ("fft_c2c/4096x1024", "c2c", (4096,), 1024),
             ("fft_c2c/65536x64", "c2c", (65536,), 64), ("fft_c2c/16777216x1", "c2c", (16777216,), 1),
             ("rfft2/64x256x256", "r2c", (256, 256), 64), ("irfft2/64x256x256", "c2r", (256, 256), 64),
             ("rfft2/16x512x512", "r2c", (512, 512), 16), ("irfft2/16x512x512", "c2r", (512, 512), 16),
             ("fft3_c2c/128", "c2c", (128, 128, 128), 1)]
FFT_GPU_ONLY = {"fft_c2c/16777216x1"}
FFT_BATCHED = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 1000, 1536, 85]
FFT_BATCHED_TOTAL_GPU, FFT_BATCHED_TOTAL_CPU = 512 << 20, 32 << 20
FNO_CASE = (8, 32, 64, 64, 16, 16)  # B, channels, H, W, m1, m2
# transformer / cnn suites (bench/suite_models.c): (name, batch, steps, deferred, gpu only)
TRANSFORMER_CASES = [("transformer_train_step/b8", 8, 1, 0, 0),
                     ("transformer_100_steps_deferred/b8", 8, 100, 1, 1),
                     ("transformer_train_step/b2", 2, 1, 0, 0)]
CNN_CASES = [("cnn_train_step/b32", 32, 1, 0, 0), ("cnn_100_steps_deferred/b32", 32, 100, 1, 1),
             ("cnn_train_step/b8", 8, 1, 0, 0)]
MODEL_LR = 0.05
# attention suite (bench/suite_attention.c): (name, b, h, s, d, backward, causal, gpu only)
ATTENTION_CASES = [("attention_forward/b8h8s1024d64", 8, 8, 1024, 64, 0, 0, 1),
                   ("attention_backward/b8h8s1024d64", 8, 8, 1024, 64, 1, 0, 1),
                   ("attention_forward/b32h12s512d64", 32, 12, 512, 64, 0, 0, 1),
                   ("attention_backward/b32h12s512d64", 32, 12, 512, 64, 1, 0, 1),
                   ("attention_forward_causal/b8h8s1024d64", 8, 8, 1024, 64, 0, 1, 1),
                   ("attention_backward_causal/b8h8s1024d64", 8, 8, 1024, 64, 1, 1, 1),
                   ("attention_forward/b2h4s256d64", 2, 4, 256, 64, 0, 0, 0),
                   ("attention_backward/b2h4s256d64", 2, 4, 256, 64, 1, 0, 0)]


# The ops suite (bench/suite_ops.c): (op, shape name, parameters).
OPS_CASES = [("permute_0213", "8x1024x8x64", (8, 1024, 8, 64)),
             ("transpose_last2", "64x512x64", (64, 512, 64)),
             ("transpose_last2", "1x4096x4096", (1, 4096, 4096)),
             ("slice_step2", "4096x4096", (4096, 4096)),
             ("concat3_last", "8x1024x256", (8, 1024, 256)),
             ("pad_reflect", "8x64x56x56", (8, 64, 56, 56)),
             ("bias_grad", "8192x512", (8192, 512)),
             ("embedding", "512x128x1024", (512, 128, 1024)),
             ("embedding_backward_atomic", "512x128x1024", (512, 128, 1024)),
             ("embedding_backward_det", "512x128x1024", (512, 128, 1024)),
             ("masked_fill_causal", "64x512", (64, 512)),
             ("topk", "64x32000k64", (64, 32000, 64)),
             ("topk", "64x32000k1", (64, 32000, 1)),
             ("dropout", "16777216", (16777216,)),
             ("random_uniform", "16777216", (16777216,)),
             ("random_normal", "16777216", (16777216,))]


class Bench:
    """One case ready to time: run() does one op; work per op in `unit` ('gbps', 'gflops' or None)."""

    def __init__(self, run, work=0.0, unit=None, note=None):
        self.run, self.work, self.unit, self.note = run, work, unit, note


class Peer:
    def __init__(self, device, min_s, samples, mode="eager"):
        self.mode = mode
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.min_s, self.samples = min_s, max(5, samples)

    # ------------------------------------------------------------------ helpers
    def rand(self, *shape):
        return torch.rand(*shape, device=self.device, dtype=torch.float32)

    def empty(self, *shape, dtype=None):
        return torch.empty(*shape, device=self.device, dtype=dtype or torch.float32)

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    # ------------------------------------------------------------------ the method
    def sample(self, run, reps):
        t0 = time.perf_counter()
        for _ in range(reps):
            run()
        self.sync()
        return time.perf_counter() - t0

    def measure(self, run):
        run()  # warm-up: kernel selection, allocator first touch
        self.sync()
        reps = 1
        while True:
            secs = self.sample(run, reps)
            if secs >= self.min_s or reps >= MAX_REPS:
                break
            # aim 25% past the target, growing 2x..100x per round
            want = self.min_s * 1.25 / (secs / reps) if secs > 0 else reps * 100
            reps = int(min(MAX_REPS, max(reps * 2, min(reps * 100, want + 1))))
        us = sorted(self.sample(run, reps) * 1e6 / reps for _ in range(self.samples))
        return statistics.median(us), us[0], us[-1], len(us), reps

    # ------------------------------------------------------------------ case factories
    def elementwise(self, op, n):
        a, b, c, o = self.rand(n), self.rand(n), self.rand(n), self.empty(n)
        if op == "add":
            return Bench(lambda: torch.add(a, b, out=o), 12.0 * n, "gbps")
        if op == "mul":
            return Bench(lambda: torch.mul(a, b, out=o), 12.0 * n, "gbps")
        if op == "relu":  # torch.relu has no out=; clamp_min is the same function
            return Bench(lambda: torch.clamp_min(a, 0.0, out=o), 8.0 * n, "gbps")
        if op == "sigmoid":
            return Bench(lambda: torch.sigmoid(a, out=o), 8.0 * n, "gbps")
        if op == "tanh":
            return Bench(lambda: torch.tanh(a, out=o), 8.0 * n, "gbps")
        if op == "chain_relu_mul_add":  # relu(a*b + c): two eager ops in torch
            return Bench(lambda: torch.addcmul(c, a, b, out=o).relu_(), 16.0 * n, "gbps",
                         "addcmul + relu_")
        s = self.empty(())
        if op == "sum":
            return Bench(lambda: torch.sum(a, 0, out=s), 4.0 * n, "gbps")
        if op == "mean":
            return Bench(lambda: torch.mean(a, 0, out=s), 4.0 * n, "gbps")
        if op == "max":
            return Bench(lambda: torch.amax(a, 0, out=s), 4.0 * n, "gbps")
        raise KeyError(op)

    def rowwise(self, op, rows, cols):
        a = self.rand(rows, cols)
        if op == "softmax":
            o = self.empty(rows, cols)
            return Bench(lambda: torch._softmax(a, -1, False, out=o), 8.0 * rows * cols, "gbps")
        o = self.empty(rows)
        return Bench(lambda: torch.sum(a, -1, out=o), 4.0 * rows * (cols + 1), "gbps")

    def matmul(self, s):
        a, b, o = self.rand(s, s), self.rand(s, s), self.empty(s, s)
        return Bench(lambda: torch.matmul(a, b, out=o), 2.0 * s ** 3, "gflops")

    def matmul_math(self, s, kind):
        """The math-mode rows: tf32 with TF32 allowed, bf16 with bf16 tensors (bf16 out), 3xtf32
        against the fp32 SGEMM (TF32 off): the accuracy class 3xTF32 promises."""
        if kind == "bf16":
            a, b = self.rand(s, s).bfloat16(), self.rand(s, s).bfloat16()
            o = self.empty(s, s, dtype=torch.bfloat16)
            return Bench(lambda: torch.matmul(a, b, out=o), 2.0 * s ** 3, "gflops", "bf16 tensors")
        a, b, o = self.rand(s, s), self.rand(s, s), self.empty(s, s)
        allow = kind == "tf32"

        def run():
            torch.backends.cuda.matmul.allow_tf32 = allow
            torch.matmul(a, b, out=o)
            torch.backends.cuda.matmul.allow_tf32 = False
        return Bench(run, 2.0 * s ** 3, "gflops", "allow_tf32=True" if allow else "fp32 SGEMM (TF32 off)")

    def conv_tf32(self, n, c, h, o, k, s, p, which=None):
        inner = self.conv(n, c, h, o, k, s, p) if which is None else self.conv_backward(which, n, c, h, o, k, s, p)

        def run():
            torch.backends.cudnn.allow_tf32 = True
            inner.run()
            torch.backends.cudnn.allow_tf32 = False
        return Bench(run, inner.work, inner.unit, "cudnn.allow_tf32=True")

    def mlp(self, m, k, n):
        a, b, bias, o = self.rand(m, k), self.rand(k, n), self.rand(n), self.empty(m, n)
        return Bench(lambda: torch.addmm(bias, a, b, out=o).relu_(), 2.0 * m * k * n, "gflops",
                     "addmm + relu_")

    def conv(self, n, c, h, o, k, s, p):
        x, w, bias = self.rand(n, c, h, h), self.rand(o, c, k, k), self.rand(o)
        ho = (h + 2 * p - k) // s + 1
        flop = 2.0 * n * o * ho * ho * c * k * k
        return Bench(lambda: F.conv2d(x, w, bias, stride=s, padding=p), flop, "gflops",
                     "allocates its output (no out=)")

    def conv_backward(self, which, n, c, h, o, k, s, p):
        x, w = self.rand(n, c, h, h), self.rand(o, c, k, k)
        ho = (h + 2 * p - k) // s + 1
        dy = self.rand(n, o, ho, ho)
        flop = 2.0 * n * o * ho * ho * c * k * k
        mask = [which == "input", which == "weight", False]
        run = lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [s, s], [p, p], [1, 1],
                                                          False, [0, 0], 1, mask)
        return Bench(run, flop, "gflops", "aten.convolution_backward, one output (allocates it)")

    def pool(self, kind, n, c, h, k=1, s=1, p=0):
        """The conv suite's pooling rows; bytes as bench_pool.c counts them."""
        x = self.rand(n, c, h, h)
        ho = (h + 2 * p - k) // s + 1 if kind != "global" else 1
        i_b, o_b = 4.0 * n * c * h * h, 4.0 * n * c * ho * ho
        if kind == "max":
            return Bench(lambda: F.max_pool2d(x, k, s, p), i_b + o_b, "gbps", "allocates its output")
        if kind == "avg":
            return Bench(lambda: F.avg_pool2d(x, k, s, p, count_include_pad=True), i_b + o_b, "gbps",
                         "allocates its output")
        if kind == "global":
            o = self.empty(n, c)
            return Bench(lambda: torch.mean(x, (2, 3), out=o), i_b + o_b, "gbps")
        y, idx = F.max_pool2d(x, k, s, p, return_indices=True)
        run = lambda: torch.ops.aten.max_pool2d_with_indices_backward(y, x, [k, k], [s, s], [p, p],
                                                                      [1, 1], False, idx)
        return Bench(run, 2 * o_b + i_b, "gbps", "aten.max_pool2d_with_indices_backward")

    def h2d(self, nbytes):
        host = torch.randint(0, 256, (nbytes,), dtype=torch.uint8)  # pageable
        dev = self.empty(nbytes, dtype=torch.uint8)
        return Bench(lambda: dev.copy_(host), float(nbytes), "gbps", "pageable host memory")

    def d2h(self, nbytes):
        host = torch.empty(nbytes, dtype=torch.uint8)
        dev = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device=self.device)
        return Bench(lambda: host.copy_(dev), float(nbytes), "gbps", "pageable host memory")

    def scalar_read(self):
        t = self.rand(1)
        return Bench(lambda: t.item(), note="blocking .item() of 1 float")

    def scalar_read_async(self):
        t, host = self.rand(1), torch.empty(1, pin_memory=True)

        def run():
            host.copy_(t, non_blocking=True)
            torch.cuda.current_stream().synchronize()
            return float(host[0])

        return Bench(run, note="non_blocking copy to pinned + stream sync")

    # ------------------------------------------------------------------ pinn
    def pinn(self, n, steps, every):
        """The network of bench/pinn_net.c: Fourier features 2 -> 128 (B ~ N(0, 2^2) fixed), three
        Linear + tanh of 128, Linear to 2; MSE; torch.optim.Adam(lr 1e-3). steps 0: one forward
        under no_grad; else `steps` train steps with loss.item() after every `every`-th step."""
        gen = torch.Generator().manual_seed(n)
        x = torch.rand(n, 2, generator=gen).to(self.device)
        tx, ty = x[:, 0], x[:, 1]
        target = torch.stack([torch.sin(3 * torch.pi * tx) * torch.sin(3 * torch.pi * ty),
                              torch.cos(3 * torch.pi * tx)], dim=1)
        B = (2.0 * torch.randn(2, PINN_FREQS, generator=gen)).to(self.device)
        net = torch.nn.Sequential(torch.nn.Linear(2 * PINN_FREQS, PINN_WIDTH), torch.nn.Tanh(),
                                  torch.nn.Linear(PINN_WIDTH, PINN_WIDTH), torch.nn.Tanh(),
                                  torch.nn.Linear(PINN_WIDTH, PINN_WIDTH), torch.nn.Tanh(),
                                  torch.nn.Linear(PINN_WIDTH, 2)).to(self.device)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
        two_pi = 2.0 * torch.pi

        def forward():
            p = two_pi * (x @ B)
            return net(torch.cat([torch.sin(p), torch.cos(p)], dim=1))

        if self.mode == "compile":
            forward = torch.compile(forward)
        if self.mode != "eager":
            return self.pinn_captured(forward, net, target, steps, every)
        if steps == 0:
            def run_forward():
                with torch.no_grad():
                    return forward()
            return Bench(run_forward, note="no_grad")

        @torch.enable_grad()  # the runner measures under no_grad
        def run_train():
            last = None
            for i in range(1, steps + 1):
                opt.zero_grad(set_to_none=True)
                loss = F.mse_loss(forward(), target)
                loss.backward()
                opt.step()
                if i % every == 0:
                    last = loss.item()
            return last
        return Bench(run_train, note="loss.item() every step" if every == 1 else f"loss.item() every {every}th step")

    def pinn_captured(self, forward, net, target, steps, every):
        """graph / compile modes: forward (no_grad) or the whole Adam step; on CUDA captured in one
        CUDA graph after warm-up on a side stream (the documented whole-network recipe)."""
        note = "torch.compile" if self.mode == "compile" else "eager ops"
        if steps == 0:
            with torch.no_grad():
                for _ in range(3):
                    forward()
                if not self.cuda:
                    return Bench(forward, note=note + ", no_grad")
                torch.cuda.synchronize()
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    forward()
            return Bench(graph.replay, note=note + " in one CUDA graph, no_grad")
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                               capturable=self.cuda)

        @torch.enable_grad()
        def step():
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(forward(), target)
            loss.backward()
            opt.step()
            return loss

        if not self.cuda:
            for _ in range(3):
                step()

            def run_cpu():
                last = None
                for i in range(1, steps + 1):
                    loss = step()
                    if i % every == 0:
                        last = loss.item()
                return last
            return Bench(run_cpu, note=note + ", loss.item() every " + ("step" if every == 1 else f"{every}th step"))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = step()

        def run_graph():
            last = None
            for i in range(1, steps + 1):
                graph.replay()
                if i % every == 0:
                    last = static_loss.item()
            return last
        return Bench(run_graph, note=note + ", whole step in one CUDA graph, loss.item() every " +
                     ("step" if every == 1 else f"{every}th step"))

    # ------------------------------------------------------------------ fft
    def crand(self, *shape):
        return torch.complex(self.rand(*shape), self.rand(*shape))

    def fft(self, kind, dims, batch, note=None):
        """One transform over the trailing len(dims) axes. No out=: with out= PyTorch runs cuFFT into a
        temporary and copies it (measured 2x slower at 512 MiB on the H200); its caching allocator makes
        the returned tensor cheap, so this is PyTorch's fastest form."""
        axes = tuple(range(-len(dims), 0))
        half = dims[:-1] + (dims[-1] // 2 + 1,)
        cbytes = 8.0 * batch
        for d in (dims if kind == "c2c" else half):
            cbytes *= d
        if kind == "c2c":
            x = self.crand(batch, *dims)
            run = lambda: torch.fft.fftn(x, dim=axes)
        elif kind == "r2c":
            x = self.rand(batch, *dims)
            run = lambda: torch.fft.rfftn(x, dim=axes)
        else:
            x = self.crand(batch, *half)
            run = lambda: torch.fft.irfftn(x, s=dims, dim=axes)
        return Bench(run, 2 * cbytes, "gbps", note)

    def fft_batched(self, n):
        """Batched 1-D c2c at a fixed total, halved until it fits like bench_fft.c."""
        total = FFT_BATCHED_TOTAL_GPU if self.cuda else FFT_BATCHED_TOTAL_CPU
        if self.cuda:
            mem = torch.cuda.get_device_properties(self.device).total_memory
            while total > (1 << 20) and total * 4 > mem:
                total //= 2
        batch = max(1, total // (8 * n))
        return self.fft("c2c", (n,), batch, f"batch {batch} ({(8 * n * batch) >> 20} MiB)")

    def fno(self, layer):
        """The reference FNO SpectralConv2d (rfft2, both corners mixed by einsum into a zeroed out_ft,
        irfft2); the layer adds a 1x1 conv with bias and GELU."""
        b, c, h, w, m1, m2 = FNO_CASE
        x = self.rand(b, c, h, w)
        w1, w2 = self.crand(c, c, m1, m2), self.crand(c, c, m1, m2)
        conv = torch.nn.Conv2d(c, c, 1).to(self.device)

        def spectral():
            x_ft = torch.fft.rfft2(x)
            out_ft = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.complex64, device=self.device)
            out_ft[:, :, :m1, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m1, :m2], w1)
            out_ft[:, :, -m1:, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m1:, :m2], w2)
            return torch.fft.irfft2(out_ft, s=(h, w))

        if not layer:
            return Bench(spectral, note="reference FNO SpectralConv2d, eager")
        return Bench(lambda: F.gelu(spectral() + conv(x)), note="spectral + 1x1 conv, GELU, eager")

    def attention(self, b, h, s, d, backward, causal):
        """F.scaled_dot_product_attention in fp32 (PyTorch picks its backend: flash needs f16/bf16,
        so fp32 runs memory-efficient attention on CUDA); FLOP as bench/suite_attention.c counts."""
        q, k, v = (self.rand(b, h, s, d).requires_grad_(backward == 1) for _ in range(3))
        flop = 4.0 * b * h * s * s * d * (2.5 if backward else 1.0) * (0.5 if causal else 1.0)
        if not backward:
            def fwd():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
            return Bench(fwd, flop, "gflops", "F.scaled_dot_product_attention fp32")
        with torch.enable_grad():  # the runner measures under no_grad
            out = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        dout = self.rand(b, h, s, d)
        return Bench(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True), flop,
                     "gflops", "autograd.grad of F.scaled_dot_product_attention fp32")

    # ------------------------------------------------------------------ transformer / cnn
    def gpt_net(self):
        """bench/model_gpt.h: 2 pre-norm blocks (d 128, 4 heads, causal SDPA, ReLU MLP 4d), final
        LayerNorm, Linear head without bias; vocab 512, context 128."""
        nn = torch.nn
        V, T, C, H = 512, 128, 128, 4

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.qkv, self.proj = nn.LayerNorm(C), nn.Linear(C, 3 * C), nn.Linear(C, C)
                self.ln2, self.fc1, self.fc2 = nn.LayerNorm(C), nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

            def forward(self, x):
                b, t, _ = x.shape
                q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, H, C // H).permute(2, 0, 3, 1, 4)
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.proj(y.transpose(1, 2).reshape(b, t, C))
                return x + self.fc2(F.relu(self.fc1(self.ln2(x))))

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte, self.wpe = nn.Embedding(V, C), nn.Parameter(0.02 * torch.randn(T, C))
                self.blocks = nn.ModuleList([Block(), Block()])
                self.lnf, self.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)

            def forward(self, ids):
                x = self.wte(ids) + self.wpe
                for blk in self.blocks:
                    x = blk(x)
                return self.head(self.lnf(x))

        return GPT().to(self.device), V, T

    def cnn_net(self):
        """bench/model_cnn.h: conv-BN-ReLU, max pool, a residual block, a strided conv, global
        average pool, Linear 32 -> 10."""
        nn = torch.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.b1 = nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)
                self.c2, self.b2 = nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)
                self.c3, self.b3 = nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)
                self.c4 = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
                self.b4, self.fc = nn.BatchNorm2d(32), nn.Linear(32, 10)

            def forward(self, x):
                p = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
                r = F.relu(self.b3(self.c3(F.relu(self.b2(self.c2(p))))) + p)
                y = F.relu(self.b4(self.c4(r)))
                return self.fc(y.mean(dim=(2, 3)))

        return Net().to(self.device)

    def train_model(self, kind, batch, steps, deferred):
        """`steps` SGD steps (lr 0.05) of the identical model; deferred: the losses stay on the
        device until the last step (one sync), else loss.item() after each step."""
        if kind == "gpt":
            net, V, T = self.gpt_net()
            x = torch.randint(0, V, (batch, T), device=self.device)
            y = (x * 5 + 3) % V
            loss_fn = lambda: F.cross_entropy(net(x).view(-1, V), y.view(-1))
        else:
            net = self.cnn_net()
            x = self.rand(batch, 3, 16, 16) - 0.5
            y = torch.arange(batch, device=self.device) % 10
            loss_fn = lambda: F.cross_entropy(net(x), y)
        opt = torch.optim.SGD(net.parameters(), lr=MODEL_LR)

        @torch.enable_grad()  # the runner measures under no_grad
        def run():
            losses = []
            for _ in range(steps):
                opt.zero_grad(set_to_none=True)
                loss = loss_fn()
                loss.backward()
                opt.step()
                if deferred:
                    losses.append(loss.detach())
                else:
                    last = loss.item()
            if deferred:
                last = torch.stack(losses).cpu()[-1].item()
            return last

        return Bench(run, note=f"{steps} SGD step(s), eager" + (", losses read at the end" if deferred else ""))

    # ------------------------------------------------------------------ the case list
    def layout_index_random(self, op, p):
        """The ops suite (bench/suite_ops.c): same shapes, outputs preallocated where torch has out=."""
        F = torch.nn.functional
        if op == "permute_0213":
            x, o = self.rand(*p), self.empty(p[0], p[2], p[1], p[3])
            return Bench(lambda: o.copy_(x.permute(0, 2, 1, 3)), 8.0 * x.numel(), "gbps")
        if op == "transpose_last2":
            x, o = self.rand(*p), self.empty(p[0], p[2], p[1])
            return Bench(lambda: o.copy_(x.transpose(1, 2)), 8.0 * x.numel(), "gbps")
        if op == "slice_step2":
            x, o = self.rand(*p), self.empty((p[0] + 1) // 2, (p[1] + 1) // 2)
            return Bench(lambda: o.copy_(x[::2, ::2]), 8.0 * o.numel(), "gbps")
        if op == "concat3_last":
            xs, o = [self.rand(*p) for _ in range(3)], self.empty(p[0], p[1], 3 * p[2])
            return Bench(lambda: torch.cat(xs, -1, out=o), 8.0 * o.numel(), "gbps")
        if op == "pad_reflect":
            x = self.rand(*p)
            return Bench(lambda: F.pad(x, (1, 1, 1, 1), mode="reflect"),
                         4.0 * p[0] * p[1] * (p[2] * p[3] + (p[2] + 2) * (p[3] + 2)), "gbps")
        if op == "bias_grad":
            dy, o = self.rand(*p), self.empty(p[1])
            return Bench(lambda: torch.sum(dy, 0, out=o), 4.0 * dy.numel() + 4.0 * p[1], "gbps")
        if op.startswith("embedding"):
            v, d, t = p
            ids = torch.randint(0, v, (t,), device=self.device)
            if op == "embedding":
                w, o = self.rand(v, d), self.empty(t, d)
                return Bench(lambda: torch.index_select(w, 0, ids, out=o), 8.0 * t * d + 4.0 * t, "gbps")
            dy = self.rand(t, d)
            det = op == "embedding_backward_det"
            return Bench(lambda: torch.ops.aten.embedding_dense_backward(dy, ids, v, -1, False),
                         8.0 * t * d + 4.0 * t + 4.0 * v * d, "gbps",
                         "embedding_dense_backward" + (" (torch is deterministic by default)" if det else ""))
        if op == "masked_fill_causal":
            bh, s = p
            x = self.rand(bh, s, s)
            m = torch.ones(s, s, device=self.device, dtype=torch.bool).triu(1)
            return Bench(lambda: x.masked_fill(m, -1e30), 8.0 * x.numel() + 4.0 * s * s, "gbps")
        if op == "topk":
            r, n, k = p
            x, v, i = self.rand(r, n), self.empty(r, k), self.empty(r, k, dtype=torch.int64)
            return Bench(lambda: torch.topk(x, k, -1, out=(v, i)), 4.0 * r * n + 8.0 * r * k, "gbps")
        if op == "dropout":
            x = self.rand(p[0])
            return Bench(lambda: torch.native_dropout(x, 0.1, True), 9.0 * p[0], "gbps")
        o = self.empty(p[0])
        if op == "random_uniform":
            return Bench(lambda: o.uniform_(), 4.0 * p[0], "gbps")
        if op == "random_normal":
            return Bench(lambda: o.normal_(), 4.0 * p[0], "gbps")
    def nnops(self, op, *dims):
        """The nnops suite (bench/suite_nnops.c): same shapes, same byte counts; backward rows time
        torch.autograd.grad of the op (what a training step runs), with grad mode on (the runner
        measures under no_grad)."""
        with torch.enable_grad():
            bench = self.nnops_case(op, *dims)
        run = bench.run

        @torch.enable_grad()
        def run_with_grad():
            return run()
        bench.run = run_with_grad
        return bench

    def nnops_case(self, op, *dims):
        F = torch.nn.functional
        if op in ("layer_norm", "layer_norm_backward", "rms_norm"):
            r, d = dims
            x, w, b = self.rand(r, d), self.rand(d), self.rand(d)
            n = r * d
            if op == "layer_norm":
                return Bench(lambda: F.layer_norm(x, (d,), w, b, 1e-5), 8.0 * n, "gbps")
            if op == "rms_norm":
                return Bench(lambda: F.rms_norm(x, (d,), w, 1e-6), 8.0 * n, "gbps")
            xg = x.clone().requires_grad_(True)
            wg, bg = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
            y, dy = F.layer_norm(xg, (d,), wg, bg, 1e-5), self.rand(r, d)
            return Bench(lambda: torch.autograd.grad(y, (xg, wg, bg), dy, retain_graph=True), 12.0 * n, "gbps")
        if op in ("batch_norm", "batch_norm_backward"):
            nb, c, h = dims
            x, w, b = self.rand(nb, c, h, h), self.rand(c), self.rand(c)
            rm, rv = self.rand(c), self.rand(c)
            n = nb * c * h * h
            if op == "batch_norm":
                return Bench(lambda: F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5), 8.0 * n, "gbps")
            xg = x.clone().requires_grad_(True)
            wg, bg = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
            y, dy = F.batch_norm(xg, rm, rv, wg, bg, True, 0.1, 1e-5), self.rand(nb, c, h, h)
            return Bench(lambda: torch.autograd.grad(y, (xg, wg, bg), dy, retain_graph=True), 12.0 * n, "gbps")
        if op == "cross_entropy":  # forward + gradient (cltensor fuses both in one launch)
            r, k = dims
            z = self.rand(r, k).requires_grad_(True)
            t = (torch.arange(r, device=self.device) * 7919) % k

            def run():
                loss = F.cross_entropy(z, t)
                return torch.autograd.grad(loss, z)
            return Bench(run, 8.0 * r * k, "gbps", "forward + backward")
        if op == "adamw_multi":
            total, count = dims
            each = total // count
            sizes = [each] * (count - 1) + [total - each * (count - 1)]
            params = [self.rand(s).requires_grad_(True) for s in sizes]
            for p in params:
                p.grad = self.rand(p.numel())
            opt = torch.optim.AdamW(params, lr=1e-3)
            return Bench(opt.step, 28.0 * total, "gbps", "torch.optim.AdamW default (foreach)")
        raise KeyError(op)

    def cases(self, suite):
        """(name, factory) pairs of a suite; cases torch cannot run here are left out."""
        cpu = not self.cuda
        out = []
        if self.mode != "eager" and suite != "pinn":
            return out
        if suite == "transfer" and self.cuda:
            out += [("h2d/268435456", lambda: self.h2d(268435456)),
                    ("d2h/268435456", lambda: self.d2h(268435456)),
                    ("scalar_read", self.scalar_read),
                    ("scalar_read_async", self.scalar_read_async)]
        elif suite == "seed":
            out += [(f"matmul/{s}", lambda s=s: self.matmul(s)) for s in (256, 512)]
            for n in (100000, 1000000):
                out += [(f"{op}/{n}", lambda op=op, n=n: self.elementwise(op, n)) for op in ("add", "mul")]
            out += [(f"{op}/1000000", lambda op=op: self.elementwise(op, 1000000))
                    for op in ("relu", "sigmoid", "sum", "mean")]
            out.append(("conv2d/n1c16h64o32k3s1", lambda: self.conv(*SEED_CONV)))
        elif suite == "micro":
            for op in ("add", "mul", "relu", "sigmoid", "tanh", "sum", "max", "chain_relu_mul_add"):
                out += [(f"{op}/{n}", lambda op=op, n=n: self.elementwise(op, n)) for n in MICRO_SIZES]
            for op in ("softmax", "rowsum"):
                out += [(f"{op}/{r}x{c}", lambda op=op, r=r, c=c: self.rowwise(op, r, c))
                        for r, c in MICRO_ROWS]
        elif suite == "gemm":
            out += [(f"matmul/{s}", lambda s=s: self.matmul(s))
                    for s in GEMM_SIZES if not (cpu and s > CPU_GEMM_MAX)]
            out += [(f"gemm_mlp_bias_relu/{m}x{k}x{n}", lambda m=m, k=k, n=n: self.mlp(m, k, n))
                    for m, k, n in MLP_SHAPES]
            if self.cuda:  # the math-mode rows (clt-bench runs them on GPUs only)
                out += [(f"matmul_{kind}/{s}", lambda s=s, kind=kind: self.matmul_math(s, kind))
                        for kind in ("tf32", "bf16", "3xtf32") for s in (1024, 2048, 4096, 8192)]
        elif suite == "conv":
            out += [(f"conv2d/n{n}c{c}h{h}o{o}k{k}s{s}", lambda a=(n, c, h, o, k, s, p): self.conv(*a))
                    for n, c, h, o, k, s, p in CONV_CASES]
            if self.cuda:
                out += [(f"conv2d_tf32/n{n}c{c}h{h}o{o}k{k}s{s}",
                         lambda a=(n, c, h, o, k, s, p): self.conv_tf32(*a))
                        for n, c, h, o, k, s, p in CONV_CASES]
            out += [(f"conv2d_backward_{wh}/n{n}c{c}h{h}o{o}k{k}s{s}",
                     lambda wh=wh, a=(n, c, h, o, k, s, p): self.conv_backward(wh, *a))
                    for wh, (n, c, h, o, k, s, p) in CONV_BWD_CASES]
            if self.cuda:  # the backward rows with TF32 allowed (cuDNN's default)
                out += [(f"conv2d_tf32_backward_{wh}/n{n}c{c}h{h}o{o}k{k}s{s}",
                         lambda wh=wh, a=(n, c, h, o, k, s, p): self.conv_tf32(*a, which=wh))
                        for wh, (n, c, h, o, k, s, p) in CONV_BWD_CASES]
            out += [("maxpool2d/n8c64h112k3s2", lambda: self.pool("max", 8, 64, 112, 3, 2, 1)),
                    ("maxpool2d_backward/n8c64h112k3s2",
                     lambda: self.pool("max_bwd", 8, 64, 112, 3, 2, 1)),
                    ("avgpool2d/n8c64h56k3s1", lambda: self.pool("avg", 8, 64, 56, 3, 1, 1)),
                    ("global_avgpool/n32c512h7", lambda: self.pool("global", 32, 512, 7))]
        elif suite == "pinn":
            out += [(f"pinn_forward/{n}", lambda n=n: self.pinn(n, 0, 1)) for n in PINN_SIZES]
            out += [(f"pinn_train_step/{n}", lambda n=n: self.pinn(n, 1, 1)) for n in PINN_SIZES]
            out.append(("pinn_100_epochs/200", lambda: self.pinn(200, 100, 1)))
            out.append(("pinn_100_epochs_deferred10/200", lambda: self.pinn(200, 100, 10)))
        elif suite == "nnops":
            out += [(f"{op}/{a}x{b}", lambda op=op, a=a, b=b: self.nnops(op, a, b))
                    for op, a, b in NNOPS_ROWS]
            out += [(f"{op}/n32c64h56", lambda op=op: self.nnops(op, 32, 64, 56))
                    for op in ("batch_norm", "batch_norm_backward")]
            out.append(("adamw_multi/10000000x50", lambda: self.nnops("adamw_multi", 10000000, 50)))
        elif suite == "fft":
            out += [(name, lambda k=k, d=d, b=b: self.fft(k, d, b))
                    for name, k, d, b in FFT_CASES if not (cpu and name in FFT_GPU_ONLY)]
            out += [(f"fft_batched/{n}", lambda n=n: self.fft_batched(n)) for n in FFT_BATCHED]
            b, c, h, w, m1, _ = FNO_CASE
            out.append((f"fno_spectral_conv/{b}x{c}x{h}x{w}m{m1}", lambda: self.fno(False)))
            out.append((f"fno_layer/{b}x{c}x{h}x{w}m{m1}", lambda: self.fno(True)))
        elif suite == "transformer":
            out += [(name, lambda a=(b, st, d): self.train_model("gpt", *a))
                    for name, b, st, d, gpu in TRANSFORMER_CASES if not (cpu and gpu)]
        elif suite == "cnn":
            out += [(name, lambda a=(b, st, d): self.train_model("cnn", *a))
                    for name, b, st, d, gpu in CNN_CASES if not (cpu and gpu)]
        elif suite == "attention":
            out += [(name, lambda a=(b, h, s, d, bw, ca): self.attention(*a))
                    for name, b, h, s, d, bw, ca, gpu in ATTENTION_CASES if not (cpu and gpu)]
        elif suite == "ops":
            out += [(f"{op}/{name}", lambda op=op, p=p: self.layout_index_random(op, p))
                    for op, name, p in OPS_CASES]
        return out


def device_name(dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def parse_args(argv):
    ap = argparse.ArgumentParser(description="PyTorch peer of clt-bench (JSON lines).")
    ap.add_argument("--suite", action="append", help="suite name(s), comma list or repeated; 'all'")
    ap.add_argument("--case", help="only cases whose name contains this")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--mode", choices=["eager", "graph", "compile"], default="eager",
                    help="pinn suite: eager (default), CUDA graph, or torch.compile (+ CUDA graph)")
    ap.add_argument("--json", help="write the JSON lines to this file instead of stdout")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (CPU)")
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--min-ms", type=float, default=20.0)
    args = ap.parse_args(argv)
    suites = []
    for item in args.suite or ["seed"]:
        for name in item.split(","):
            names = SUITES if name == "all" else [name]
            for n in names:
                if n not in SUITES:
                    ap.error(f"unknown suite '{n}'")
                if n not in suites:
                    suites.append(n)
    args.suites = suites
    return args


def main(argv):
    args = parse_args(argv)
    if torch is None:
        print("torch_suite.py: PyTorch is not installed; no results", file=sys.stderr)
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_suite.py: --device cuda but torch sees no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0x5EED)

    if args.mode == "graph" and args.device != "cuda":
        print("torch_suite.py: --mode graph needs --device cuda", file=sys.stderr)
        return 1
    peer = Peer(args.device, args.min_ms / 1000.0, args.samples, args.mode)
    mode = "" if args.mode == "eager" else "-" + args.mode
    base = {"peer": "torch-" + args.device + mode, "device": device_name(peer.device)}
    extra = {"torch": torch.__version__}
    if not peer.cuda:
        extra["threads"] = torch.get_num_threads()
    out = open(args.json, "w") if args.json else sys.stdout
    progress = sys.stderr.isatty()
    seen, failed = set(), 0
    with torch.no_grad():
        for suite in args.suites:
            for name, factory in peer.cases(suite):
                if name in seen or (args.case and args.case not in name):
                    continue
                seen.add(name)
                if progress:
                    print(f"\r\033[K{suite}/{name} ...", end="", file=sys.stderr, flush=True)
                try:
                    bench = factory()
                    us, lo, hi, n, reps = peer.measure(bench.run)
                except (RuntimeError, MemoryError) as e:  # out of memory, unsupported op
                    failed += 1
                    line = dict(base, case=name, status="failed", error=str(e).splitlines()[0])
                else:
                    line = dict(base, case=name, us=round(us, 3), us_min=round(lo, 3),
                                us_max=round(hi, 3), samples=n, reps=reps)
                    if bench.unit:
                        line[bench.unit] = round(bench.work / (us * 1e3), 3)
                    if bench.note:
                        line["note"] = bench.note
                    line.update(extra)
                finally:
                    bench = None
                    if peer.cuda:
                        torch.cuda.empty_cache()
                if progress:
                    print("\r\033[K", end="", file=sys.stderr, flush=True)
                print(json.dumps(line), file=out, flush=True)
    if out is not sys.stdout:
        out.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
