#!/usr/bin/env python3
"""The benchmark suite in one command: kernelc's CPU ops against the named
baseline of each figure, measured in the same run. Writes a Markdown table
(bench/results.md) and a plot of the ratios (bench/results.png), and prints
the table.

    .venv/bin/python bench/run.py [--quick] [--reps N] [--out DIR] [--no-nvcc]

Sections, each with its baseline (ratios are median / the baseline's median):
  per call     the tiny op (x + 1, bench/kernels/bench_ops.cu) and saxpy
               (examples/saxpy.cu) at n = 16 and 1024: in a jitted fori_loop
               of 1000 calls (time per call), and eager: one call from Python
               with concrete arrays on the device, K calls in a row, the time
               per call up to the last result's readiness. Baseline: the
               floor, the same kernels behind hand-written XLA FFI handlers
               (bench/floor/floor_cpu.cc) called through jax.ffi.ffi_call;
               eager, the floor and the other baselines are jax.jit-compiled
               functions (a static scalar) called eagerly, and kernelc's
               generated function is called as it is. Beside them:
               jax.experimental.buffer_callback and jax.pure_callback of the
               same NumPy computation, XLA's jnp, and Warp's jax_kernel and
               Numba where installed.
  throughput   saxpy over 16M floats, the tiled matmul (examples/matmul.cu,
               2-D grid) and the row softmax (examples/softmax.cu, a block of
               256 per row), under jax.jit. Baseline: XLA's fused jnp.
  vmap         vmap of saxpy and matmul over a batch of 64, jitted.
               Baseline: lax.map of the same op.
  build        `kernelc build examples/saxpy.cu` with an empty cache (cold)
               and again with it filled (warm), for cpu and cuda. Baseline:
               `nvcc -c -O3` of the same file.
  import       importing the generated package in a fresh process that has
               imported jax (its bytecode cached, as after an install).
               Baseline: the floor's load and registration (ctypes.CDLL and
               jax.ffi.register_ffi_target).

Each figure is the median of --reps runs (builds: at most 5) with its
interquartile range.
--quick: one run each, small sizes and short loops, no nvcc or cuda builds:
a check that the suite works, not figures. A benchmark, not a test: it
never fails on a slow figure.
"""

import ctypes
import importlib.util
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

import build_times
import cpu_bench
import vmap_bench
from common import ROOT, kernelc, parser, run_times

SOURCES = [ROOT / "examples" / "saxpy.cu", ROOT / "examples" / "matmul.cu",
           ROOT / "examples" / "softmax.cu", ROOT / "bench" / "kernels" / "bench_ops.cu"]
PACKAGE = "bench_suite_ops"


class Figure:
    """One measured figure: per-run samples in seconds (or a note saying
    why there are none)."""

    def __init__(self, samples=None, note=None):
        self.samples = list(samples or [])
        self.note = note

    @property
    def median(self):
        return statistics.median(self.samples) if self.samples else None

    def quartiles(self):
        s = sorted(self.samples)
        if len(s) < 2:
            return s[0], s[0]
        q = statistics.quantiles(s, n=4, method="inclusive")
        return q[0], q[2]


class Section:
    """A table: rows of figures per column, ratios against `baseline`."""

    def __init__(self, title, columns, baseline, unit, scale):
        self.title = title
        self.columns = columns
        self.baseline = baseline
        self.unit = unit
        self.scale = scale
        self.rows = []

    def add(self, what, figures):
        self.rows.append((what, figures))


def timed_runs(fn, *args, reps, calls=1, eager=False):
    """The wall times per call of common.run_times, as a Figure."""
    return Figure(run_times(fn, *args, reps=reps, calls=calls, eager=eager)[0])


def build_floor(work):
    """The floor's handlers (cpu_bench.compile_floor), registered; returns
    the CDLL."""
    import jax

    lib = cpu_bench.compile_floor(work)
    floor = ctypes.CDLL(str(lib))
    for name in ("FloorTinyCpu", "FloorSaxpyCpu"):
        jax.ffi.register_ffi_target(f"bench_floor.{name}",
                                    jax.ffi.pycapsule(getattr(floor, name)),
                                    platform="cpu")
    return floor


def implementations(ops):
    """Per variant, (tiny(x), saxpy(x, y, a)) as jax functions; a string
    where a variant is not available, saying why."""
    import jax
    import numpy as np

    def like(x):
        return jax.ShapeDtypeStruct(x.shape, x.dtype)

    def floor_tiny(x):
        return jax.ffi.ffi_call("bench_floor.FloorTinyCpu", like(x))(x)

    def floor_saxpy(x, y, a):
        return jax.ffi.ffi_call("bench_floor.FloorSaxpyCpu", like(x))(
            x, y, a=np.float32(a))

    impl = {"kernelc": (ops.tiny, ops.saxpy), "floor": (floor_tiny, floor_saxpy)}
    try:
        from jax.experimental.buffer_callback import buffer_callback

        def bc_tiny(x):
            def fill(ctx, out, v):
                np.asarray(out)[...] = np.asarray(v) + 1
            return buffer_callback(fill, like(x))(x)

        def bc_saxpy(x, y, a):
            def fill(ctx, out, u, v):
                np.asarray(out)[...] = a * np.asarray(u) + np.asarray(v)
            return buffer_callback(fill, like(x))(x, y)

        impl["buffer_callback"] = (bc_tiny, bc_saxpy)
    except ImportError:
        impl["buffer_callback"] = f"not in jax {jax.__version__}"
    impl["pure_callback"] = (
        lambda x: jax.pure_callback(lambda v: np.asarray(v) + np.float32(1),
                                    like(x), x, vmap_method="broadcast_all"),
        lambda x, y, a: jax.pure_callback(
            lambda u, v: np.float32(a) * np.asarray(u) + np.asarray(v), like(x),
            x, y, vmap_method="broadcast_all"))
    impl["jnp"] = (lambda x: x + np.float32(1),
                   lambda x, y, a: np.float32(a) * x + y)
    impl["warp"] = optional_warp()
    impl["numba"] = optional_numba()
    return impl


def optional_warp():
    if importlib.util.find_spec("warp") is None:
        return "not installed"
    import warp as wp
    from warp.jax_experimental import jax_kernel

    @wp.kernel
    def tiny(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = x[i] + 1.0

    @wp.kernel
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float,
              out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a * x[i] + y[i]

    return (jax_kernel(tiny), lambda x, y, a: jax_kernel(saxpy)(x, y, a))


def optional_numba():
    if importlib.util.find_spec("numba") is None:
        return "not installed"
    import jax
    import numba
    import numpy as np

    @numba.njit
    def tiny(x):
        out = np.empty(x.size, np.float32)
        for i in range(x.size):
            out[i] = x[i] + 1
        return out

    @numba.njit
    def saxpy(x, y, a):
        out = np.empty(x.size, np.float32)
        for i in range(x.size):
            out[i] = a * x[i] + y[i]
        return out

    def like(x):
        return jax.ShapeDtypeStruct(x.shape, x.dtype)

    # Numba compiles for NumPy arrays; the callback passes buffers.
    return (lambda x: jax.pure_callback(lambda v: tiny(np.asarray(v)), like(x), x,
                                        vmap_method="broadcast_all"),
            lambda x, y, a: jax.pure_callback(
                lambda u, v: saxpy(np.asarray(u), np.asarray(v), np.float32(a)),
                like(x), x, y, vmap_method="broadcast_all"))


def per_call(ops, quick, reps):
    import jax
    import numpy as np
    from jax import lax

    impl = implementations(ops)
    columns = list(impl)
    section = Section("Per call: a tiny op (x + 1) and saxpy", columns, "floor", "us",
                      1e6)
    loop_calls = 100 if quick else 1000
    eager_calls = 20 if quick else 200
    for op_index, op in enumerate(("tiny", "saxpy")):
        for n in (16, 1024):
            x = jax.device_put(np.arange(n, dtype=np.float32))
            y = jax.device_put(np.ones(n, np.float32))
            # a = 0.5: the loop's repeated saxpy stays finite.
            want = x + 1 if op == "tiny" else 0.5 * x + y
            loops, eagers = {}, {}
            for name, fns in impl.items():
                if isinstance(fns, str):
                    loops[name] = eagers[name] = Figure(note=fns)
                    continue
                fn = fns[op_index]
                if op == "tiny":
                    step, args, static = fn, (x,), ()
                else:
                    def step(u, fn=fn):
                        return fn(u, y, 0.5)
                    args, static = (x, y, 0.5), (2,)
                np.testing.assert_allclose(np.asarray(jax.jit(step)(x)),
                                           np.asarray(want), rtol=1e-6)
                loop = jax.jit(lambda v, step=step: lax.fori_loop(
                    0, loop_calls, lambda i, u: step(u), v))
                loops[name] = timed_runs(loop, x, reps=reps, calls=loop_calls)
                eager = fn if name == "kernelc" else jax.jit(fn, static_argnums=static)
                eagers[name] = timed_runs(eager, *args, reps=reps, calls=eager_calls,
                                          eager=True)
            section.add(f"{op} n={n}, jitted fori_loop of {loop_calls}", loops)
            section.add(f"{op} n={n}, eager", eagers)
    return section


def throughput(ops, quick, reps):
    import jax
    import jax.numpy as jnp
    import numpy as np

    section = Section("Throughput under jax.jit", ["kernelc", "floor", "jnp"], "jnp",
                      "ms", 1e3)
    rng = np.random.default_rng(0)
    n = (1 << 20) if quick else (16 << 20)
    x = jax.device_put(rng.standard_normal(n, np.float32))
    y = jax.device_put(rng.standard_normal(n, np.float32))
    impl = implementations(ops)
    section.add(f"saxpy {n >> 20}M float32", {
        name: timed_runs(jax.jit(lambda u, v, f=impl[name][1]: f(u, v, 2.0)), x, y,
                         reps=reps)
        for name in ("kernelc", "floor", "jnp")})
    m = 64 if quick else 256
    a = jax.device_put(rng.standard_normal((m, m)).astype(np.float32))
    b = jax.device_put(rng.standard_normal((m, m)).astype(np.float32))
    np.testing.assert_allclose(np.asarray(ops.matmul(a, b)), np.asarray(a @ b),
                               rtol=1e-3, atol=1e-3)
    section.add(f"matmul {m} x {m} x {m} (16 x 16 tiles)", {
        "kernelc": timed_runs(jax.jit(ops.matmul), a, b, reps=reps),
        "floor": Figure(note="-"),
        "jnp": timed_runs(jax.jit(jnp.matmul), a, b, reps=reps)})
    rows = 64 if quick else 1024
    s = jax.device_put(rng.standard_normal((rows, 1024)).astype(np.float32))
    section.add(f"softmax {rows} x 1024 (a block of 256 per row)", {
        "kernelc": timed_runs(jax.jit(ops.softmax), s, reps=reps),
        "floor": Figure(note="-"),
        "jnp": timed_runs(jax.jit(lambda v: jax.nn.softmax(v, axis=-1)), s,
                          reps=reps)})
    return section


def vmapped(ops, quick, reps):
    import numpy as np

    section = Section("vmap over a batch of 64, jitted", ["vmap", "lax.map"],
                      "lax.map", "us", 1e6)
    rng = np.random.default_rng(0)
    batch = 64
    n = 256 if quick else 4096
    cases = [(f"saxpy n={n}", lambda a, b: ops.saxpy(a, b, 2.0),
              (rng.standard_normal((batch, n)).astype(np.float32),
               rng.standard_normal((batch, n)).astype(np.float32))),
             ("matmul 32 x 32", ops.matmul,
              (rng.standard_normal((batch, 32, 32)).astype(np.float32),
               rng.standard_normal((batch, 32, 32)).astype(np.float32)))]
    for what, op, args in cases:
        args, vm, lm, _ = vmap_bench.variants(op, args, batch)
        section.add(what, {"vmap": timed_runs(vm, *args, reps=reps),
                           "lax.map": timed_runs(lm, *args, reps=reps)})
    return section


def builds(quick, reps, use_nvcc):
    section = Section("Build of examples/saxpy.cu", ["kernelc cold", "kernelc warm",
                                                      "nvcc -c -O3"],
                      "nvcc -c -O3", "ms", 1e3)
    example = ROOT / "examples" / "saxpy.cu"
    nvcc = build_times.find_nvcc() if use_nvcc else None
    with tempfile.TemporaryDirectory(prefix="kernelc-bench-build-") as tmp:
        tmp = pathlib.Path(tmp)
        baseline = (Figure(build_times.nvcc_samples(nvcc, example, reps, tmp))
                    if nvcc else Figure(note="skipped" if not use_nvcc else
                                        "not found"))
        for target in ("cpu",) if quick else ("cpu", "cuda"):
            cold, warm = build_times.build_samples(example, target, reps, tmp)
            section.add(f"--target {target}", {"kernelc cold": Figure(cold),
                                               "kernelc warm": Figure(warm),
                                               "nvcc -c -O3": baseline})
    return section


IMPORT_PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
import jax
start = time.perf_counter()
if sys.argv[2] == "floor":
    import ctypes
    lib = ctypes.CDLL(sys.argv[3])
    for name in ("FloorTinyCpu", "FloorSaxpyCpu"):
        jax.ffi.register_ffi_target("f." + name, jax.ffi.pycapsule(getattr(lib, name)),
                                    platform="cpu")
else:
    __import__(sys.argv[2])
print(time.perf_counter() - start)
"""


def imports(ops, package_dir, floor_lib, reps):
    section = Section("Import beyond jax, in a fresh process", ["kernelc", "floor"],
                      "floor", "ms", 1e3)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached

    def probe(what):
        r = subprocess.run([sys.executable, "-c", IMPORT_PROBE, str(package_dir),
                            what, str(floor_lib)], capture_output=True, text=True,
                           env=env, check=True)
        return float(r.stdout.split()[-1])

    probe(PACKAGE)  # writes the package's bytecode
    section.add(f"{len(ops.__all__)} ops from {len(SOURCES)} sources", {
        "kernelc": Figure([probe(PACKAGE) for _ in range(reps)]),
        "floor": Figure([probe("floor") for _ in range(reps)])})
    return section


def number(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.3g}"


def cell(figure, section, baseline):
    if figure.median is None:
        return figure.note or "-"
    low, high = figure.quartiles()
    s = section.scale
    text = f"{number(figure.median * s)} [{number(low * s)}, {number(high * s)}]"
    if baseline is not None and baseline.median and figure is not baseline:
        text += f" ({figure.median / baseline.median:.2f}x)"
    return text


def markdown(sections, header):
    lines = [header, ""]
    for section in sections:
        lines += [f"### {section.title}", "",
                  f"{section.unit}, median [interquartile range] (ratio to "
                  f"{section.baseline}, the baseline)", "",
                  "| what | " + " | ".join(section.columns) + " |",
                  "|---|" + "---:|" * len(section.columns)]
        for what, figures in section.rows:
            base = figures.get(section.baseline)
            lines.append(f"| {what} | " + " | ".join(
                cell(figures[c], section, base) for c in section.columns) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(sections, path, header):
    """One panel per section: each row's ratio to its baseline, a point per
    column, on a log scale, with the interquartile range as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(sections), 1, figsize=(8, 2.2 * len(sections)),
                             squeeze=False)
    for ax, section in zip(axes[:, 0], sections):
        others = [c for c in section.columns if c != section.baseline]
        height = 0.8 / max(len(others), 1)
        for k, column in enumerate(others):
            ys, ratios, lows, highs = [], [], [], []
            for i, (_, figures) in enumerate(section.rows):
                base, f = figures.get(section.baseline), figures[column]
                if base is None or not base.median or f.median is None:
                    continue
                low, high = f.quartiles()
                r = f.median / base.median
                ys.append(i + k * height)
                ratios.append(r)
                lows.append(r - low / base.median)
                highs.append(high / base.median - r)
            if ratios:
                ax.errorbar(ratios, ys, xerr=[lows, highs], fmt="o", markersize=3,
                            capsize=2, label=column)
        ax.axvline(1.0, color="black", linewidth=0.8)  # the baseline
        ax.set_xscale("log")
        ax.set_yticks([i + 0.4 - height / 2 for i in range(len(section.rows))])
        ax.set_yticklabels([w for w, _ in section.rows], fontsize=6)
        ax.invert_yaxis()
        ax.set_title(f"{section.title}: time / {section.baseline}", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.legend(fontsize=6, loc="best")
    fig.suptitle(header, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    plt.close(fig)


def main():
    ap = parser(__doc__)
    ap.add_argument("--quick", action="store_true",
                    help="one run, small sizes, no nvcc or cuda builds")
    ap.add_argument("--reps", type=int, help="runs per figure (default 15; 1 quick)")
    ap.add_argument("--out", default=str(ROOT / "bench"),
                    help="where results.md and results.png go (default bench/)")
    ap.add_argument("--no-nvcc", action="store_true", help="skip nvcc's builds")
    args = ap.parse_args()
    reps = args.reps or (1 if args.quick else 15)
    kernelc()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import jax

    work = tempfile.mkdtemp(prefix="kernelc-bench-suite-")
    ops = cpu_bench.build_package(SOURCES, work, PACKAGE)
    build_floor(work)
    floor_lib = pathlib.Path(work) / "libfloor_cpu.so"
    header = (f"jax {jax.__version__}, {jax.devices()[0].platform}, "
              f"{os.cpu_count()} CPUs (shared: load average "
              f"{os.getloadavg()[0]:.1f} at the start), {reps} runs per figure"
              f"{', --quick' if args.quick else ''}")
    sections = [per_call(ops, args.quick, reps), throughput(ops, args.quick, reps),
                vmapped(ops, args.quick, reps),
                builds(args.quick, min(reps, 5), not (args.quick or args.no_nvcc)),
                imports(ops, work, floor_lib, max(reps, 3))]
    text = markdown(sections, header)
    (out / "results.md").write_text(text)
    plot(sections, out / "results.png", header)
    print(text)
    print(f"wrote {out / 'results.md'} and {out / 'results.png'}")


if __name__ == "__main__":
    main()
