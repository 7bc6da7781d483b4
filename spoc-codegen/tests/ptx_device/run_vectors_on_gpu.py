#!/usr/bin/env python3
"""Runs the vector kernels of tests/ptx_vectors.rs on a real NVIDIA GPU (through CuPy) and checks
their values bit for bit against numpy.

usage: run_vectors_on_gpu.py DIR   (DIR holds the files written by `cargo test -p spoc-codegen
                                    --test ptx_vectors -- --ignored dump_for_device`)

Prints one line per check; exits 1 if one fails.
"""
import os
import sys

import cupy as cp
import numpy as np

DIR = sys.argv[1]
FAILED = []
rng = np.random.default_rng(7)


def kernel(name):
    return cp.RawModule(path=os.path.join(DIR, name + ".ptx")).get_function(name)


def check(name, got, want):
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    ok = got.shape == want.shape and bool(np.all(got.view(np.uint8) == want.view(np.uint8)))
    print(("PASS " if ok else "FAIL ") + name, flush=True)
    if not ok:
        FAILED.append(name)
        bad = np.argwhere(got != want)[:4]
        print("  first differences at", bad.tolist(), "got", got[tuple(bad.T)] if len(bad) else "",
              "want", want[tuple(bad.T)] if len(bad) else "", flush=True)


def f32x4(n):
    return rng.standard_normal((n, 4)).astype(np.float32)


N = 1000  # not a multiple of the block: the tail threads must not write


def grid(n, b=128):
    return ((n + b - 1) // b,), (b,)


# y[i] = (x.w * s, x.z * s, x.y, x.x)
x = f32x4(N)
y = cp.zeros((N, 4), np.float32)
s = np.float32(1.5)
g, b = grid(N)
kernel("vec_swap_scale")(g, b, (s, cp.asarray(x), np.uint32(N), y, np.uint32(N)))
want = np.stack([x[:, 3] * s, x[:, 2] * s, x[:, 1], x[:, 0]], axis=1).astype(np.float32)
check("vec_swap_scale", y.get(), want)

# y[i].z = 1; y[i].x += y[i].w; z[i] = (2 x.x, 2, x.z, x.w)
x = f32x4(N)
y0 = f32x4(N)
y = cp.asarray(y0)
z = cp.zeros((N, 4), np.float32)
kernel("vec_lane_writes")(g, b, (cp.asarray(x), np.uint32(N), y, np.uint32(N), z, np.uint32(N)))
wy = y0.copy()
wy[:, 2] = 1.0
wy[:, 0] = y0[:, 0] + y0[:, 3]
wz = np.stack([x[:, 0] + x[:, 0], np.full(N, 2.0, np.float32), x[:, 2], x[:, 3]], axis=1)
check("vec_lane_writes y (lane stores)", y.get(), wy)
check("vec_lane_writes z (local vector)", z.get(), wz.astype(np.float32))

# Shared tile of 64 f32x4 per block, read reversed: y[i] = x[block + 63 - t].
M = 64 * 20
x = f32x4(M)
y = cp.zeros((M, 4), np.float32)
kernel("vec_shared_tile")((M // 64,), (64,), (cp.asarray(x), np.uint32(M), y, np.uint32(M)))
check("vec_shared_tile", y.get(), x.reshape(-1, 64, 4)[:, ::-1, :].reshape(M, 4))

# The same through the dynamic shared array: y[i] = x[block + (t ^ 1)].
y = cp.zeros((M, 4), np.float32)
kernel("vec_dynamic_shared")((M // 64,), (64,), (cp.asarray(x), np.uint32(M), y, np.uint32(M)),
                             shared_mem=64 * 16)
check("vec_dynamic_shared", y.get(), x.reshape(-1, 32, 2, 4)[:, :, ::-1, :].reshape(M, 4))

# u32x2, i32x2, f64x2.
a = rng.integers(0, 2**32, (N, 2), dtype=np.uint32)
out = cp.zeros((N, 2), np.uint32)
ia0 = rng.integers(-2**31, 2**31, (N, 2), dtype=np.int32)
da0 = rng.standard_normal((N, 2))
ia, da = cp.asarray(ia0), cp.asarray(da0)
kernel("vec_pairs")(g, b, (cp.asarray(a), np.uint32(N), out, np.uint32(N), ia, np.uint32(N), da,
                           np.uint32(N)))
check("vec_pairs u32x2", out.get(), np.stack([a[:, 1], a[:, 0] + np.uint32(1)], axis=1))
check("vec_pairs i32x2", ia.get(), ia0[:, ::-1])
check("vec_pairs f64x2", da.get(), np.stack([da0[:, 0], da0[:, 1] + 0.5], axis=1))

# vec_mixed with one working thread (the others return at once): records with vector fields,
# f64x4, f32x3, f16x4, a local array of f32x4.
P = np.dtype({"names": ["pos", "id", "vel"], "formats": [("<f4", 4), "<u4", ("<f4", 2)],
              "offsets": [0, 16, 24], "itemsize": 32})
ps0 = np.zeros(2, P)
ps0["pos"] = f32x4(2)
ps0["id"] = [7, 9]
ps0["vel"] = rng.standard_normal((2, 2)).astype(np.float32)
ps_raw = ps0.view(np.uint8)
po = cp.zeros(1 * 32, np.uint8)
ds0 = rng.standard_normal((2, 4))
ts0 = rng.standard_normal((2, 3)).astype(np.float32)
hs0 = rng.standard_normal((2, 4)).astype(np.float16)
out0 = f32x4(1)
ds, ts, hs, outv = cp.asarray(ds0), cp.asarray(ts0), cp.asarray(hs0), cp.asarray(out0)
kernel("vec_mixed")((1,), (32,), (cp.asarray(ps_raw), np.uint32(2), po, np.uint32(1), ds,
                                  np.uint32(2), ts, np.uint32(2), hs, np.uint32(2), outv,
                                  np.uint32(1)))
check("vec_mixed record of vectors", po.get(), ps_raw[:32])
check("vec_mixed f64x4", ds.get(), np.stack([ds0[1], ds0[1]]))
check("vec_mixed f32x3", ts.get(), np.stack([ts0[1], ts0[1]]))
check("vec_mixed f16x4", hs.get(), np.stack([hs0[1], hs0[1]]))
# a = [ps[0].pos; 4]; a[0] = out[0]; out[0] = a[0 ^ 1] = ps[0].pos
check("vec_mixed local array", outv.get(), ps0["pos"][:1])

print(f"{'FAILED: ' + ', '.join(FAILED) if FAILED else 'all vector checks passed'}")
sys.exit(1 if FAILED else 0)
