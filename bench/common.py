"""What the benchmark scripts of bench/ share: where the kernelc binary is,
their command lines' shape, how they time, and the cold build cache.

Imports only the standard library at load time (jax where a timing needs
it), so that the scripts that never touch jax do not pay for its import.
A script in bench/ imports it as `common`: Python puts a script's own
directory first on sys.path.
"""

import argparse
import pathlib
import shutil
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The development build's kernelc, as `bazel build //tools:kernelc` leaves it.
KERNELC = ROOT / "bazel-bin" / "tools" / "kernelc"


def kernelc(path=None):
    """The kernelc binary to run: `path` when given, else KERNELC. Raises
    SystemExit, with a message that says how to build it, when it is
    missing."""
    binary = pathlib.Path(path) if path else KERNELC
    if not binary.exists():
        how = "" if path else ": run `bazel build //tools:kernelc` first"
        raise SystemExit(f"{binary} is missing{how}")
    return binary


def parser(doc, **counts):
    """An ArgumentParser described by the first line of `doc` (a script's
    docstring), with an integer option per keyword: parser(__doc__, runs=5)
    takes --runs N, 5 when not given."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in counts.items():
        ap.add_argument(f"--{name}", type=int, default=default, metavar="N",
                        help=f"default {default}")
    return ap


def timed(cmd):
    """The wall time (s) of running the command `cmd` to its end, its
    output discarded; raises CalledProcessError when it fails."""
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def median_ms(samples):
    """The median of `samples` (s), in milliseconds."""
    return 1000.0 * statistics.median(samples)


def run_times(fn, *args, reps, calls=1, eager=False):
    """Times `reps` runs of `fn(*args)`, after one that compiles and warms
    up. A run is one call of `fn` that itself makes `calls` calls (a jitted
    loop), or with `eager`, `calls` calls of `fn` in a row from Python;
    either is timed up to its last result's readiness. Returns (each run's
    wall time, the mean CPU time of the runs, of all the process's
    threads), both per call."""
    import jax

    jax.block_until_ready(fn(*args))  # compile and warm up
    in_a_row = calls if eager else 1
    walls = []
    cpu = time.process_time()
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(in_a_row):
            out = fn(*args)
        jax.block_until_ready(out)
        walls.append((time.perf_counter() - start) / calls)
    return walls, (time.process_time() - cpu) / reps / calls


# A cache directory's subdirectory that holds its precompiled preludes
# (compiler/cache/build_cache.h, PreludeDirectory).
PRELUDE = "prelude"


def keep_only_preludes(cache):
    """Empties the kernelc cache directory `cache` of all but its
    precompiled preludes, which a kernelc makes once and then keeps: a
    build there is cold (the frontend, the compiles, the link and, for
    load_inline, the package's first import) without making them again.
    Nothing to do where `cache` does not exist yet."""
    cache = pathlib.Path(cache)
    if not cache.is_dir():
        return
    for entry in cache.iterdir():
        if entry.name == PRELUDE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
