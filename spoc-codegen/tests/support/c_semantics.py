#!/usr/bin/env python3
"""Compiles spoc's generated C with a real driver compiler and checks its semantics on a device.

Usage: c_semantics.py cuda|opencl DIR, where DIR holds the sources written by
`SPOC_C_DUMP=DIR cargo test -p spoc-codegen --test c_semantics`:
- cuda: every `.cu` file is compiled with NVRTC through CuPy (`--fmad=false`);
- opencl: every `.cl` file is built for the first OpenCL device through PyOpenCL
  (`-cl-fp32-correctly-rounded-divide-sqrt`; sources using subgroups only where the device has
  `cl_khr_subgroups`, with `-cl-std=CL2.0`).
The semantic kernels (conv_*, int_*, loops_*) then run against NumPy/Python references of
Rust's semantics. Exits non-zero on any failure. Needs NumPy, and CuPy or PyOpenCL.
"""
import math
import os
import random
import sys

import numpy as np

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


class Cuda:
    ext = ".cu"

    def __init__(self):
        import cupy

        self.cp = cupy

    def module(self, source):
        m = self.cp.RawModule(code=source, options=("--fmad=false",))
        m.compile()
        return m

    def array(self, a):
        return self.cp.asarray(a)

    def get(self, a, host):
        return self.cp.asnumpy(a)

    def launch(self, mod, name, n, args):
        block = 128
        mod.get_function(name)(((n + block - 1) // block,), (block,), tuple(args))
        self.cp.cuda.runtime.deviceSynchronize()


class OpenCl:
    ext = ".cl"

    def __init__(self):
        import pyopencl

        self.cl = pyopencl
        device = pyopencl.get_platforms()[0].get_devices()[0]
        self.ctx = pyopencl.Context([device])
        self.queue = pyopencl.CommandQueue(self.ctx)
        self.subgroups = "cl_khr_subgroups" in device.extensions

    def module(self, source):
        if "sub_group_" in source and not self.subgroups:
            return None
        opts = ["-cl-fp32-correctly-rounded-divide-sqrt"]
        if "sub_group_" in source:
            opts.append("-cl-std=CL2.0")
        return self.cl.Program(self.ctx, source).build(options=opts)

    def array(self, a):
        mf = self.cl.mem_flags
        return self.cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)

    def get(self, a, host):
        out = np.empty_like(host)
        self.cl.enqueue_copy(self.queue, out, a).wait()
        return out

    def launch(self, mod, name, n, args):
        block = 128
        getattr(mod, name)(self.queue, (((n + block - 1) // block) * block,), (block,), *args)
        self.queue.finish()


class Device:
    """A backend, remembering each buffer's host shape and type for reading it back."""

    def __init__(self, inner):
        self.inner = inner
        self.ext = inner.ext
        self.hosts = {}

    def module(self, source):
        return self.inner.module(source)

    def array(self, a):
        a = np.ascontiguousarray(a)
        d = self.inner.array(a)
        self.hosts[id(d)] = (d, a)
        return d

    def zeros(self, n, dtype):
        return self.array(np.zeros(n, dtype))

    def get(self, d):
        return np.array(self.inner.get(d, self.hosts[id(d)][1]))

    def launch(self, mod, name, n, *args):
        self.inner.launch(mod, name, n, args)


dev = None


def saturate(x, lo, hi):
    if math.isnan(x):
        return 0
    if x <= lo:
        return lo
    if x >= hi:
        return hi
    return int(x)  # truncates toward zero


INT_RANGES = {
    "i32": (-(2**31), 2**31 - 1, np.int32),
    "u32": (0, 2**32 - 1, np.uint32),
    "i64": (-(2**63), 2**63 - 1, np.int64),
    "u64": (0, 2**64 - 1, np.uint64),
}


def same_float(got, want):
    """Bit equality, NaN matching any NaN."""
    with np.errstate(all="ignore"):
        got_nan = np.isnan(got.astype(np.float64))
        want_nan = np.isnan(want.astype(np.float64))
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    bits_equal = got.view(width) == want.view(width)
    return (got_nan & want_nan) | (~got_nan & ~want_nan & bits_equal)


def check_conv(mod, name, src):
    n = len(src)
    outs = {
        "to_f16": np.zeros(n, np.uint16),
        "to_i32": np.zeros(n, np.int32),
        "to_u32": np.zeros(n, np.uint32),
        "to_i64": np.zeros(n, np.int64),
        "to_u64": np.zeros(n, np.uint64),
    }
    bufs = {k: dev.array(v) for k, v in outs.items()}
    args = [dev.array(src), np.uint32(n)]
    for k in ["to_f16", "to_i32", "to_u32", "to_i64", "to_u64"]:
        args += [bufs[k], np.uint32(n)]
    dev.launch(mod, name, n, *args)
    with np.errstate(all="ignore"):
        want16 = src.astype(np.float16)
    got16 = dev.get(bufs["to_f16"]).view(np.float16)
    ok = same_float(got16, want16)
    if not ok.all():
        i = int(np.argmin(ok))
        fail(f"{name} to_f16: {ok.size - ok.sum()} wrong, e.g. {src[i]!r} -> "
             f"{got16.view(np.uint16)[i]:#06x}, want {want16.view(np.uint16)[i]:#06x}")
    for k in ["i32", "u32", "i64", "u64"]:
        lo, hi, dt = INT_RANGES[k]
        got = dev.get(bufs["to_" + k])
        want = np.array([saturate(float(x), lo, hi) for x in src.tolist()], dtype=dt)
        bad = np.nonzero(got != want)[0]
        if len(bad):
            i = bad[0]
            fail(f"{name} to_{k}: {len(bad)} wrong, e.g. {src[i]!r} -> {got[i]}, want {want[i]}")


def check_conv_f16(mod):
    h = np.arange(65536, dtype=np.uint16)
    n = len(h)
    f = dev.zeros(n, np.float32)
    d = dev.zeros(n, np.float64)
    i = dev.zeros(n, np.int32)
    dev.launch(mod, "conv_f16", n, dev.array(h), np.uint32(n), f, np.uint32(n), d, np.uint32(n),
               i, np.uint32(n))
    vals = h.view(np.float16)
    for got, want, what in [(dev.get(f), vals.astype(np.float32), "to_f32"),
                            (dev.get(d), vals.astype(np.float64), "to_f64")]:
        ok = same_float(got, want)
        if not ok.all():
            k = int(np.argmin(ok))
            fail(f"conv_f16 {what}: {ok.size - ok.sum()} wrong, e.g. {h[k]:#06x} -> {got[k]!r}")
    want = np.array([saturate(float(x), -(2**31), 2**31 - 1) for x in vals.tolist()], np.int32)
    bad = np.nonzero(dev.get(i) != want)[0]
    if len(bad):
        fail(f"conv_f16 to_i32: {len(bad)} wrong")


def wrap(v, bits, signed):
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_reference(x, y, bits):
    w = lambda v: wrap(v, bits, True)
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    div = w(-x) if y == -1 else w(q)
    rem = 0 if y == -1 else x - y * q
    sh = y & (bits - 1)
    return [w(x + y), w(x - y), w(x * y), div, rem, w(x << sh), x >> sh, w(-x), w(abs(x)),
            min(x, y), max(x, y), w(x * 7 - y * x + (x << 3))]


def check_ints(mod, name, bits, dtype, rng):
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    special = [0, 1, -1, 2, -2, lo, hi, lo + 1, hi - 1, 7, -7, 31, 32, 33, 63, 64, 65]
    xs = special * len(special)
    ys = [y for y in special for _ in special]
    r = rng.integers(lo, hi, size=(2, 2000), endpoint=True, dtype=np.int64 if bits == 64 else np.int32)
    xs += [int(v) for v in r[0]]
    ys += [int(v) for v in r[1]]
    ys = [1 if y == 0 else y for y in ys]
    a = np.array(xs, dtype)
    b = np.array(ys, dtype)
    n = len(a)
    per = 12
    out = dev.zeros(n * per, dtype)
    dev.launch(mod, name, n, dev.array(a), np.uint32(n), dev.array(b), np.uint32(n), out,
               np.uint32(n * per))
    got = dev.get(out).reshape(n, per)
    ops = ["add", "sub", "mul", "div", "rem", "shl", "shr", "neg", "abs", "min", "max", "chain"]
    wrong = 0
    for i in range(n):
        want = int_reference(xs[i], ys[i], bits)
        for k in range(per):
            if int(got[i, k]) != want[k]:
                if wrong < 5:
                    fail(f"{name} {ops[k]}({xs[i]}, {ys[i]}) = {int(got[i, k])}, want {want[k]}")
                wrong += 1
    if wrong:
        fail(f"{name}: {wrong} wrong results")


def loop_reference(s, e, st):
    out = []
    for values in (range(s, e, st), range(e - 1, s - 1, -st)):
        count, acc = 0, 0
        for v in values:
            count += 1
            acc = (acc * 31 + (v % 2**64)) % 2**64
        out.append((count, acc))
    return out


def check_loops(mod, name, lo, hi, dtype, rng):
    cases = [(lo, hi, 2**31 + 12345), (lo, lo + 10, 1), (hi - 10, hi, 1), (hi - 10, hi, 3),
             (lo, hi, 4294967295), (0, 0, 1), (5, 3, 1), (lo, lo + 1, 7), (hi - 1, hi, 1)]
    if lo < 0:
        cases += [(-5, 5, 2), (-(2**31), -(2**31) + 100, 9), (-100, 2**31 - 1, 2**31 - 1)]
    r = random.Random(7)
    for _ in range(60):
        s = r.randint(lo, hi)
        length = r.randint(0, 3000)
        st = r.randint(1, 64)
        e = min(hi, s + length)
        cases.append((s, e, st))
    cases = [(s, e, st) for (s, e, st) in cases if len(range(s, e, st)) <= 20000]
    starts = np.array([c[0] for c in cases], dtype)
    ends = np.array([c[1] for c in cases], dtype)
    steps = np.array([c[2] for c in cases], np.uint32)
    n = len(cases)
    counts = dev.zeros(2 * n, np.uint32)
    sums = dev.zeros(2 * n, np.uint64)
    dev.launch(mod, name, n, dev.array(starts), np.uint32(n), dev.array(ends), np.uint32(n),
               dev.array(steps), np.uint32(n), counts, np.uint32(2 * n), sums, np.uint32(2 * n))
    c, sm = dev.get(counts), dev.get(sums)
    for i, (s, e, st) in enumerate(cases):
        for d, (wc, ws) in enumerate(loop_reference(s, e, st)):
            if int(c[2 * i + d]) != wc or int(sm[2 * i + d]) != ws:
                fail(f"{name} {'up' if d == 0 else 'down'} ({s}..{e}).step_by({st}): "
                     f"count {int(c[2 * i + d])} sum {int(sm[2 * i + d])}, want {wc} {ws}")


def main():
    global dev
    dev = Device(Cuda() if sys.argv[1] == "cuda" else OpenCl())
    d = sys.argv[2]
    files = sorted(f for f in os.listdir(d) if f.endswith(dev.ext))
    mods = {}
    for f in files:
        name = f[: -len(dev.ext)]
        try:
            with open(os.path.join(d, f)) as src:
                m = dev.module(src.read())
        except Exception as e:  # the compiler's log is in the message
            fail(f"the compiler rejected {f}: {e}")
            continue
        if m is None:
            print("skipped (the device has no subgroups):", f)
            continue
        mods[name] = m
        print("compiled", f)
    rng = np.random.default_rng(7)
    specials32 = np.array([0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.49999997, 65504.0, 65519.996,
                           65520.0, 65536.0, 6.1035156e-05, 6.0975552e-05, 5.9604645e-08,
                           2.9802322e-08, 2.9802326e-08, 1e-40, -1e-40, 2147483520.0,
                           2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0,
                           4294967296.0, 9.223372e18, 9.2233725e18, -9.2233725e18,
                           1.8446743e19, 1.8446744e19, 3.4028235e38, np.inf, -np.inf, np.nan,
                           -0.99999994, -1.0], np.float32)
    rand32 = rng.integers(0, 2**32, size=100000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    if "conv_f32" in mods:
        check_conv(mods["conv_f32"], "conv_f32", np.concatenate([specials32, rand32]))
    if "conv_f64" in mods:
        rand64 = rng.integers(0, 2**63, size=100000, dtype=np.uint64)
        rand64 = (rand64 ^ (rng.integers(0, 2, size=100000, dtype=np.uint64) << np.uint64(63))).view(np.float64)
        near = np.array([65519.99999999, 65520.0, 65520.00000001, 2.98023223876953125e-08,
                         2.9802322387695313e-08, 9.223372036854775e18, 9.223372036854776e18,
                         1.8446744073709552e19, 1.8446744073709550e19, 4294967295.9,
                         4294967296.0, -2147483648.9, -2147483649.0, 2147483647.9],
                        np.float64)
        check_conv(mods["conv_f64"], "conv_f64",
                   np.concatenate([specials32.astype(np.float64), near, rand64]))
    if "conv_f16" in mods:
        check_conv_f16(mods["conv_f16"])
    if "int_i32" in mods:
        check_ints(mods["int_i32"], "int_i32", 32, np.int32, rng)
    if "int_i64" in mods:
        check_ints(mods["int_i64"], "int_i64", 64, np.int64, rng)
    if "loops_i32" in mods:
        check_loops(mods["loops_i32"], "loops_i32", -(2**31), 2**31 - 1, np.int32, rng)
    if "loops_u64" in mods:
        check_loops(mods["loops_u64"], "loops_u64", 0, 2**64 - 1, np.uint64, rng)
    print(f"{len(files)} sources, {len(failures)} failures")
    print("ALL OK" if not failures else "FAILED")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
