#!/usr/bin/env python3
"""The peers of spoc's bench programs, at the sizes spoc ran, and the table of ratios.

Usage (on a machine with an NVIDIA GPU, CuPy, PyTorch and Triton; the H200 machine has them):

    peers.py SPOC_JSON [SPOC_JSON ...] [--reps N] [--out TABLE.md]

Each SPOC_JSON is what `bench --json FILE` wrote (one per spoc device: CUDA/PTX, CUDA/C,
Vulkan, ...). For every program that has a peer here, the peer runs the same problem at the
same size (the `size` field: elements, or the side of a matrix, as `examples/programs/lib.rs`
says per program), in this process, right after spoc's bench in the same device session. The
table gives each peer's time and `peer ms / spoc ms` per spoc device: above 1 means spoc is
faster.

Peers (each skipped, with the reason printed, when its library is missing):
  torch   PyTorch's own CUDA kernels; matrix products through cuBLAS with TF32 off
          (torch.backends.cuda.matmul.allow_tf32 = False), so they are fp32 products like spoc's.
  triton  torch.compile (Inductor): element-wise programs become Triton kernels; matrix
          products use Inductor's autotuned Triton GEMM templates only (max-autotune,
          max_autotune_gemm_backends="TRITON"), TF32 off.
          gemm_bf16 / gemm_f16 (16-bit inputs, f32 output in spoc): torch.matmul of the 16-bit
          tensors (16-bit output, as issue 14's cuBLAS figures), and torch_f32_out,
          torch.mm(..., out_dtype=torch.float32), where torch has it; Triton's GEMM template on
          the 16-bit inputs.
  cupy    CuPy, whose sum, cumsum and sort are CUB's device-wide primitives.

Timing: CUDA events around each call, after warm-up calls (compilation and autotuning happen
there), the median of --reps calls. spoc's bench times one launch pass after one untimed pass,
so for sub-millisecond programs compare with care.
"""

import argparse
import json
import statistics
import sys
import time


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- timing


def time_ms(torch, fn, reps):
    """Median milliseconds of `fn()` over `reps` calls, CUDA events, after 3 warm-up calls."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


# ---------------------------------------------------------------- problems
#
# Each maker takes (libs, size) and returns {peer name: zero-argument callable}, building the
# inputs once. The problems mirror examples/programs/<name>.rs: same element types, same
# shapes.


def f32(torch, n, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.rand(n, device="cuda", generator=g, dtype=torch.float32) * 2 - 1


def elementwise(libs, size, torch_fn, compiled_fn, arity):
    torch = libs["torch"]
    ins = [f32(torch, size, seed=k + 1) for k in range(arity)]
    out = torch.empty(size, device="cuda", dtype=torch.float32)
    peers = {"torch": lambda: torch_fn(out, *ins)}
    if libs.get("triton"):
        f = libs["compile"](compiled_fn)
        peers["triton"] = lambda: f(*ins)
    return peers


def vector_add(libs, size):
    return elementwise(
        libs, size, lambda o, a, b: libs["torch"].add(a, b, out=o), lambda a, b: a + b, 2
    )


def vector_copy(libs, size):
    return elementwise(libs, size, lambda o, a: o.copy_(a), lambda a: a.clone(), 1)


def saxpy_vec4(libs, size):
    torch = libs["torch"]
    a = 1.5
    x, y = f32(torch, size, 1), f32(torch, size, 2)
    peers = {"torch": lambda: y.add_(x, alpha=a)}
    if libs.get("triton"):
        f = libs["compile"](lambda x, y: a * x + y)
        peers["triton"] = lambda: f(x, y)
    if libs.get("cupy"):
        # The hand-written CUDA a user would write: float4 loads, grid-stride, 4 vectors a thread.
        cp = libs["cupy"]
        kernel = cp.RawKernel(
            r"""
extern "C" __global__ void saxpy_float4(float a, const float4* __restrict__ x,
                                        float4* __restrict__ y, unsigned n4) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += gridDim.x * blockDim.x) {
        float4 xv = x[i];
        float4 yv = y[i];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        y[i] = yv;
    }
}
""",
            "saxpy_float4",
        )
        n4 = size // 4
        cx, cy = cp.asarray(x), cp.asarray(y)
        blocks = (n4 + 1023) // 1024
        args = (cp.float32(a), cx, cy, cp.uint32(n4))
        peers["cuda_float4"] = lambda: kernel((blocks,), (256,), args)
    return peers


def stream_triad(libs, size):
    s = 3.0
    return elementwise(
        libs,
        size,
        lambda o, b, c: libs["torch"].add(b, c, alpha=s, out=o),
        lambda b, c: b + s * c,
        2,
    )


def dot_product(libs, size):
    torch = libs["torch"]
    a, b = f32(torch, size, 1), f32(torch, size, 2)
    peers = {"torch": lambda: torch.dot(a, b)}
    if libs.get("cupy"):
        cp = libs["cupy"]
        ca, cb = cp.asarray(a), cp.asarray(b)
        peers["cupy"] = lambda: cp.dot(ca, cb)
    return peers


def u32(libs, size, seed=7):
    """`size` random u32 keys as a CuPy array (torch has no uint32 arithmetic to speak of)."""
    cp = libs["cupy"]
    return cp.random.default_rng(seed).integers(0, 2**32, size=size, dtype=cp.uint64).astype(
        cp.uint32
    )


def reduction(libs, size):
    if not libs.get("cupy"):
        return {}
    cp = libs["cupy"]
    x = u32(libs, size)
    return {"cupy": lambda: cp.sum(x, dtype=cp.uint32)}


def reduction_max(libs, size):
    torch = libs["torch"]
    x = f32(torch, size)
    peers = {"torch": lambda: torch.max(x)}
    if libs.get("cupy"):
        cp = libs["cupy"]
        cx = cp.asarray(x)
        peers["cupy"] = lambda: cp.max(cx)
    return peers


def scan(libs, size):
    if not libs.get("cupy"):
        return {}
    cp = libs["cupy"]
    x = u32(libs, size)
    out = cp.empty_like(x)
    return {"cupy": lambda: cp.cumsum(x, dtype=cp.uint32, out=out)}


def histogram(libs, size):
    torch = libs["torch"]
    # `size` u32 words: 4 * size bytes, 256 bins.
    data = torch.randint(0, 256, (4 * size,), device="cuda", dtype=torch.uint8)
    peers = {"torch": lambda: torch.bincount(data, minlength=256)}
    if libs.get("cupy"):
        cp = libs["cupy"]
        cd = cp.asarray(data)
        peers["cupy"] = lambda: cp.bincount(cd, minlength=256)
    return peers


def sort(libs, size):
    peers = {}
    if libs.get("cupy"):
        cp = libs["cupy"]
        x = u32(libs, size)
        peers["cupy"] = lambda: cp.sort(x)
    torch = libs["torch"]
    t = torch.randint(0, 2**31 - 1, (size,), device="cuda", dtype=torch.int32)
    peers["torch"] = lambda: torch.sort(t)
    return peers


def bitonic_sort(libs, size):
    n = 1
    while n < size:
        n *= 2
    return sort(libs, n)


def matrix(libs, size):
    torch = libs["torch"]
    n = size
    a = f32(torch, n * n, 1).reshape(n, n)
    b = f32(torch, n * n, 2).reshape(n, n)
    c = torch.empty(n, n, device="cuda", dtype=torch.float32)
    peers = {"torch": lambda: torch.mm(a, b, out=c)}
    if libs.get("triton"):
        f = libs["compile_gemm"](lambda x, y: x @ y)
        peers["triton"] = lambda: f(a, b)
    return peers


def gemm(libs, size, dtype):
    """examples/programs/gemm.rs: C = A @ B, n x n x n, 16-bit inputs uniform in [-1, 1).
    "torch" is torch.matmul on the 16-bit tensors, the cuBLAS reference of issue 14 (f32
    accumulation, the result rounded to bf16/f16); spoc writes f32, so "torch_f32_out" also
    times torch.mm(..., out_dtype=torch.float32) where this torch has it (2.8 and newer)."""
    torch = libs["torch"]
    n = size
    a = f32(torch, n * n, 1).reshape(n, n).to(dtype)
    b = f32(torch, n * n, 2).reshape(n, n).to(dtype)
    peers = {"torch": lambda: torch.matmul(a, b)}
    try:
        torch.mm(a, b, out_dtype=torch.float32)
        peers["torch_f32_out"] = lambda: torch.mm(a, b, out_dtype=torch.float32)
    except (TypeError, RuntimeError) as e:
        log(f"peers: gemm {size}: no torch.mm out_dtype here ({e}); torch_f32_out skipped")
    if libs.get("triton"):
        f = libs["compile_gemm"](lambda x, y: x @ y)
        peers["triton"] = lambda: f(a, b)
    return peers


def gemm_bf16(libs, size):
    return gemm(libs, size, libs["torch"].bfloat16)


def gemm_f16(libs, size):
    return gemm(libs, size, libs["torch"].float16)


def transpose(libs, size):
    torch = libs["torch"]
    rows, cols = size, size * 3 // 4
    a = f32(torch, rows * cols).reshape(rows, cols)
    out = torch.empty(cols, rows, device="cuda", dtype=torch.float32)
    peers = {"torch": lambda: out.copy_(a.t())}
    if libs.get("triton"):
        f = libs["compile"](lambda x: x.t().contiguous())
        peers["triton"] = lambda: f(a)
    return peers


def conv2d(libs, size):
    torch = libs["torch"]
    img = f32(torch, size * size).reshape(1, 1, size, size)
    blur = torch.full((1, 1, 3, 3), 1.0 / 9.0, device="cuda")
    edge = torch.tensor(
        [[[[-1.0, -1.0, -1.0], [-1.0, 8.0, -1.0], [-1.0, -1.0, -1.0]]]], device="cuda"
    )
    w = torch.cat([blur, edge])
    conv = torch.nn.functional.conv2d
    return {"torch": lambda: conv(img, w, padding=1)}


PROBLEMS = {
    "vector_add": vector_add,
    "vector_copy": vector_copy,
    "stream_triad": stream_triad,
    "saxpy_vec4": saxpy_vec4,
    "dot_product": dot_product,
    "reduction": reduction,
    "reduction_max": reduction_max,
    "scan": scan,
    "histogram": histogram,
    "matrix_mul": matrix,
    "matrix_mul_tiled": matrix,
    "sgemm": matrix,
    "sgemm_64": matrix,
    "gemm_bf16": gemm_bf16,
    "gemm_f16": gemm_f16,
    "transpose": transpose,
    "transpose_tiled": transpose,
    "conv2d": conv2d,
    "bitonic_sort": bitonic_sort,
    "radix_sort": sort,
}

# ---------------------------------------------------------------- libraries


def load_libs():
    libs = {}
    try:
        import torch
    except ImportError as e:
        log(f"peers: no torch ({e}): nothing to measure")
        return None
    if not torch.cuda.is_available():
        log("peers: torch sees no CUDA device: nothing to measure")
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    libs["torch"] = torch
    try:
        import cupy

        libs["cupy"] = cupy
    except ImportError as e:
        log(f"peers: cupy skipped ({e})")
    try:
        import triton  # noqa: F401
        import torch._inductor.config as inductor

        libs["triton"] = True
        libs["compile"] = lambda f: torch.compile(f, dynamic=False)

        def compile_gemm(f):
            inductor.max_autotune_gemm_backends = "TRITON"
            return torch.compile(f, mode="max-autotune-no-cudagraphs", dynamic=False)

        libs["compile_gemm"] = compile_gemm
    except ImportError as e:
        log(f"peers: triton skipped ({e})")
    return libs


# ---------------------------------------------------------------- table


def spoc_rows(paths):
    """{(program, size): {framework: ms}} from bench --json files, and the frameworks."""
    rows, frameworks = {}, []
    for p in paths:
        with open(p) as f:
            for r in json.load(f):
                fw = r["framework"]
                if fw not in frameworks:
                    frameworks.append(fw)
                if r["ms"] is not None and r["checked"]:
                    rows.setdefault((r["program"], r["size"]), {})[fw] = r["ms"]
    return rows, frameworks


def table(rows, frameworks, peer_ms):
    """Markdown: program, size, each spoc framework's ms, each peer's ms and the ratios."""
    head = ["program", "size"] + [f"spoc {fw} ms" for fw in frameworks] + ["peer", "peer ms"]
    head += [f"peer / {fw}" for fw in frameworks]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (program, size), spoc in rows.items():
        peers = peer_ms.get((program, size), {})
        for peer, ms in sorted(peers.items()):
            cells = [program, str(size)]
            cells += [f"{spoc[fw]:.3f}" if fw in spoc else "-" for fw in frameworks]
            cells += [peer, f"{ms:.3f}"]
            cells += [f"{ms / spoc[fw]:.2f}" if fw in spoc else "-" for fw in frameworks]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def measure(libs, rows, reps, deadline):
    """{(program, size): {peer: ms}}. The fast peers (torch, CuPy) of every problem first, the
    Triton ones (compilation, GEMM autotuning) after them, so that a deadline cuts the slow
    ones; a problem's peers are measured once per (maker, size), so programs that share a
    problem (matrix_mul, matrix_mul_tiled, sgemm at one size) share its peer timings."""
    start = time.monotonic()
    made, timed, peer_ms = {}, {}, {}
    for pass_ in ("fast", "triton"):
        for program, size in rows:
            maker = PROBLEMS.get(program)
            if maker is None:
                continue
            key = (maker, size)
            if key not in made:
                try:
                    made[key] = maker(libs, size)
                except Exception as e:  # a peer's own failure is reported, not fatal
                    log(f"peers: {program} {size}: inputs failed: {e}")
                    made[key] = {}
            for peer, fn in made[key].items():
                if (peer == "triton") != (pass_ == "triton"):
                    continue
                if (key, peer) not in timed:
                    if deadline and time.monotonic() - start > deadline:
                        log(f"peers: deadline passed, {program} {size} {peer} not measured")
                        continue
                    try:
                        timed[(key, peer)] = time_ms(libs["torch"], fn, reps)
                    except Exception as e:
                        log(f"peers: {program} {size} {peer} failed: {e}")
                        timed[(key, peer)] = None
                ms = timed.get((key, peer))
                if ms is not None:
                    peer_ms.setdefault((program, size), {})[peer] = ms
                    log(f"peers: {program} {size} {peer}: {ms:.3f} ms")
    return peer_ms


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spoc_json", nargs="+")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out")
    ap.add_argument(
        "--deadline",
        type=float,
        default=0,
        help="seconds after which no further peer is measured (0: none); the table keeps what ran",
    )
    args = ap.parse_args(argv)
    rows, frameworks = spoc_rows(args.spoc_json)
    libs = load_libs()
    peer_ms = {}
    if libs is not None:
        peer_ms = measure(libs, rows, args.reps, args.deadline)
    text = table(rows, frameworks, peer_ms)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
