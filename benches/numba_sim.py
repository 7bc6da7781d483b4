"""saxpy and a 16x16-tiled matmul on numba-cuda's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), the
same kernels and sizes as benches/sanitizer.rs; prints one line per kernel:

    numba-cudasim <kernel> n=<n> items=<work-items> seconds=<best time> items_per_s=<rate>

Usage: numba_sim.py <saxpy n> <matmul n> [reps]   (run it through numba_sim.sh, which makes the
virtual environment). Each result is checked against NumPy before it is printed.
"""

import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

TILE = 16


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


@cuda.jit
def matmul_tiled(a, b, c, n):
    ta = cuda.shared.array((TILE, TILE), float32)
    tb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        ac = t * TILE + tx
        br = t * TILE + ty
        if row < n and ac < n:
            ta[ty, tx] = a[row * n + ac]
        else:
            ta[ty, tx] = 0.0
        if br < n and col < n:
            tb[ty, tx] = b[br * n + col]
        else:
            tb[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += ta[ty, k] * tb[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        c[row * n + col] = acc


def best(reps, f):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    import numba

    print(f"numba-cudasim versions numba={numba.__version__} numpy={np.__version__} "
          f"python={sys.version.split()[0]}", flush=True)
    n_saxpy = int(sys.argv[1])
    n_mat = int(sys.argv[2])
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 1

    x = (np.arange(n_saxpy) % 100).astype(np.float32)
    y0 = np.ones(n_saxpy, dtype=np.float32)
    y = y0.copy()
    block = 256
    grid = (n_saxpy + block - 1) // block

    def run_saxpy():
        y[:] = y0
        saxpy[grid, block](np.float32(2.0), x, y)

    t = best(reps, run_saxpy)
    assert np.array_equal(y, np.float32(2.0) * x + y0), "saxpy result"
    print(f"numba-cudasim saxpy n={n_saxpy} items={n_saxpy} seconds={t:.6f} "
          f"items_per_s={n_saxpy / t:.1f}", flush=True)

    n = n_mat
    a = ((np.arange(n * n) % 7) * 0.25).astype(np.float32)
    b = ((np.arange(n * n) % 5) * 0.5).astype(np.float32)
    c = np.zeros(n * n, dtype=np.float32)
    g = (n + TILE - 1) // TILE
    t = best(reps, lambda: matmul_tiled[(g, g), (TILE, TILE)](a, b, c, np.int64(n)))
    want = (a.reshape(n, n).astype(np.float64) @ b.reshape(n, n).astype(np.float64)).ravel()
    assert np.allclose(c, want, rtol=1e-5), "matmul result"
    items = g * g * TILE * TILE
    print(f"numba-cudasim matmul_tiled n={n} items={items} seconds={t:.6f} "
          f"items_per_s={items / t:.1f}", flush=True)


if __name__ == "__main__":
    main()
