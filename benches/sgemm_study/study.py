#!/usr/bin/env python3
"""Times the hand-written SGEMM variants of sg.cu against cuBLAS (torch.mm, TF32 off) on the GPU.

Usage (on the H200 machine, which has CuPy and PyTorch): python3 benches/sgemm_study/study.py

Each variant `sg<BM,BN,BK,TM,TN,VG,CHECK,MB>` is compiled by NVRTC through CuPy, run on the same
random n x n matrices as cuBLAS, checked against cuBLAS's product (max abs difference), and
timed with CUDA events (median). docs/BENCHMARKS.md ("sgemm: what the study measured") has the
table of the 2026-12-03 run and what spoc's kernel took from it.
"""
import os
import statistics

import cupy as cp
import numpy as np
import torch

VARIANTS = [
    "128,128,8,8,8,0,1,1",  # spoc's sgemm before: 4-byte global loads
    "128,128,8,8,8,1,1,1",  # 16-byte global loads
    "128,128,8,8,8,1,1,2",
    "128,128,8,8,8,1,0,2",  # no bounds checks
    "128,128,16,8,8,1,1,2",
    "128,256,8,8,16,1,1,1",  # 8 x 16 per thread
    "256,128,8,16,8,1,1,1",
    "64,128,16,8,8,1,1,3",
]


def median_ms(fn, reps):
    fn()
    fn()
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, "sg.cu")).read()
    names = [f"sg<{v}>" for v in VARIANTS]
    mod = cp.RawModule(code=src, options=("--std=c++17", "--fmad=false"), name_expressions=names)
    for n in (8192, 4096):
        reps = 10 if n == 8192 else 20
        a = torch.rand(n, n, device="cuda") * 2 - 1
        b = torch.rand(n, n, device="cuda") * 2 - 1
        ref = a @ b
        t_cublas = median_ms(lambda: torch.mm(a, b), reps)
        print(f"n = {n}: cuBLAS {t_cublas:.3f} ms", flush=True)
        A, B = cp.from_dlpack(a), cp.from_dlpack(b)
        C = cp.zeros((n, n), dtype=cp.float32)
        for v, name in zip(VARIANTS, names):
            bm, bn, _, tm, tn, *_ = map(int, v.split(","))
            f = mod.get_function(name)
            grid = ((n + bn - 1) // bn, (n + bm - 1) // bm)
            block = ((bm // tm) * (bn // tn),)
            C.fill(0)
            t = median_ms(lambda: f(grid, block, (A, B, C, np.uint32(n))), reps)
            err = float(torch.max(torch.abs(torch.from_dlpack(C) - ref)))
            print(f"  {name:26s} {t:8.3f} ms  cuBLAS / this {t_cublas / t:.3f}  max |diff| {err:.1e}")


if __name__ == "__main__":
    main()
