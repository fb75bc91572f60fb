"""The hazards that untrusted sources and specs posed, each shown gone: an
expression as deep as kernelc allows builds a package that imports and
runs (Python's parser has a nesting limit), one level more is a located
error; a spec cannot make a diagnostic quote a file it did not give; a
spec that contradicts its source, and a kernel that writes to a KC_IN
array, no longer build."""

import json
import re
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

from conftest import EXAMPLES, KERNELC, run_kernelc

# kernelc's limit on the depth of an expression tree (compiler/expr/expr.h).
MAX_DEPTH = 100


def chain(depth):
    """`n + 0 + 0 ...`: a left-nested tree `depth` deep, worth n."""
    return "n" + " + 0" * (depth - 1)


def right_nested(depth):
    """`n - (0 - (0 - ... 0))`: a right-nested, parenthesised tree."""
    inner = "0"
    for _ in range(depth - 2):
        inner = f"(0 - {inner})"
    return f"n - {inner}"


def calls(depth):
    """`max(max(... max(n, 0) ..., 0), 0)`: nested calls."""
    return "max(" * (depth - 1) + "n" + ", 0)" * (depth - 1)


def depth_of(text):
    """The depth of an expression written by the functions above."""
    if text.startswith("max("):
        return text.count("max(") + 1
    if "(" in text:
        return text.count("(") + 2
    return text.count("+") + text.count("-") + 1


def deep_source(check, derived, out):
    return f"""#include <kernelc.h>

KC_KERNEL void deep(KC_SHAPE("n") kc::In<float, 1> x,
                    KC_SHAPE("{check}") kc::In<float, 1> y,
                    KC_DERIVED("{derived}") int64_t m,
                    KC_SHAPE("{out}") kc::Out<float, 1> out) {{
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = x(i) + y(i) + (float)m;
}}
"""


def test_the_depth_helpers_write_what_they_say():
    for make in (chain, right_nested, calls):
        for depth in (MAX_DEPTH, MAX_DEPTH + 1):
            assert depth_of(make(depth)) == depth, make.__name__
    n = 7
    for make in (chain, right_nested, calls):
        assert eval(make(MAX_DEPTH), {"max": max, "n": n}) == n


def test_expressions_at_the_depth_limit_build_import_and_run(build_package):
    # The input check runs in the generated Python and in the handler, the
    # derived value and the output shape in the handler: each at the limit.
    mod = build_package("trust_deep", source_text=deep_source(
        right_nested(MAX_DEPTH), calls(MAX_DEPTH), chain(MAX_DEPTH)))
    x = np.arange(6, dtype=np.float32)
    y = np.full(6, 0.5, np.float32)
    want = x + y + 6
    for f in (mod.deep, jax.jit(mod.deep)):
        np.testing.assert_array_equal(np.asarray(f(x, y)), want)
    with pytest.raises(Exception, match="y"):
        mod.deep(x, np.zeros(5, np.float32))


@pytest.mark.parametrize("place", ["check", "derived", "out"])
@pytest.mark.parametrize("make", [chain, right_nested, calls])
def test_one_level_deeper_is_a_located_error(tmp_path, place, make):
    texts = {"check": "n", "derived": "n", "out": "n"}
    texts[place] = make(MAX_DEPTH + 1)
    src = tmp_path / "deep.cu"
    src.write_text(deep_source(texts["check"], texts["derived"], texts["out"]))
    r = run_kernelc("build", src, "-o", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    line = {"check": 4, "derived": 5, "out": 6}[place]
    assert re.match(
        rf"{re.escape(str(src))}:{line}:\d+: error: .*expression is too "
        rf"deeply nested: kernelc allows {MAX_DEPTH} levels of operations\n",
        r.stderr), r.stderr
    assert not (tmp_path / "out").exists()


SPEC_SOURCE = """\
__global__ void scale(const double* x, double* y, long long n) {}
"""


def spec(kernel_params, **kernel):
    k = {"name": "scale", "kind": "global", "source": "k.cu", "grid": ["n"],
         "params": kernel_params}
    k.update(kernel)
    return json.dumps({"kernels": [k]}, indent=1)


SCALE_PARAMS = [
    {"name": "x", "role": "in", "dtype": "float64", "shape": "n"},
    {"name": "y", "role": "out", "dtype": "float64", "shape": "x"},
    {"name": "n", "role": "derived", "dtype": "int64", "derived": "x.size"},
]


def test_a_spec_that_contradicts_its_source_does_not_build(tmp_path):
    # float32 buffers for a kernel that writes doubles: the op would write
    # past its output. It must not build, and the spec that agrees does.
    (tmp_path / "k.cu").write_text(SPEC_SOURCE)
    params = json.loads(json.dumps(SCALE_PARAMS))
    params[1]["dtype"] = "float32"
    (tmp_path / "bad.json").write_text(spec(params))
    r = run_kernelc("emit", "bad.json", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(
        "bad.json:20:15: error: $.kernels[0].params[1].dtype: the spec gives "
        "'y' dtype float32, but its source declares it 'double *', of dtype "
        "float64\n"), r.stderr
    assert "k.cu:1:48: note: 'y' is declared here" in r.stderr
    assert not (tmp_path / "out").exists()

    (tmp_path / "good.json").write_text(spec(SCALE_PARAMS))
    r = run_kernelc("emit", "good.json", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_spec_cannot_make_a_diagnostic_quote_another_file(tmp_path):
    secret = tmp_path / "secret" / "notes.cu"
    secret.parent.mkdir()
    secret.write_text("TOP SECRET LINE\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "k.cu").write_text(SPEC_SOURCE)
    params = json.loads(json.dumps(SCALE_PARAMS))
    params[0]["shape"] = {"text": "n *", "loc": f"{secret}:1:1"}
    (work / "k.json").write_text(spec(params))
    for source in ("k.cu", str(secret), "../secret/notes.cu"):
        (work / "k.json").write_text(spec(params, source=source))
        r = run_kernelc("emit", "k.json", "-o", "out", cwd=work)
        assert r.returncode == 1, r.stderr
        assert "TOP SECRET" not in r.stderr
        assert re.match(r"k\.json:\d+:\d+: error: ", r.stderr), r.stderr


def test_a_kernel_that_writes_to_its_input_does_not_build(tmp_path):
    # A non-const KC_IN pointer: reading it builds; writing through it, or
    # through a pointer made from it, is refused where the write is.
    body = {
        "reads": "y[0] = x[0];",
        "writes": "float* p = x + 1;\n  p[0] = y[0];",
    }
    for name, statement in body.items():
        src = tmp_path / f"{name}.cu"
        src.write_text(f"""#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {{
  {statement}
}}
""")
        r = run_kernelc("emit", src.name, "-o", f"out_{name}", cwd=tmp_path)
        if name == "reads":
            assert r.returncode == 0, r.stderr
            continue
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith(
            "writes.cu:6:3: error: kernel 'k' writes to input 'x', but a "
            "KC_IN tensor is read-only: it is the caller's JAX array; mark it "
            "KC_INMUT to update it in place\n"), r.stderr


def test_source_paths_with_quotes_backslashes_and_newlines_build(tmp_path):
    # The path enters generated code (comments, docstrings, #line, the
    # define that includes the source): each escaped, or avoided.
    src_dir = tmp_path / 'odd "dir\\\n'
    src_dir.mkdir()
    (src_dir / "scale.h").write_text("#define SCALE 3.0f\n")
    src = src_dir / 'k"\\\nern\\.cu'
    src.write_text("""#include <kernelc.h>
#include "scale.h"

KC_KERNEL void triple(KC_SHAPE("n") kc::In<float, 1> x,
                      KC_SHAPE("x") kc::Out<float, 1> y) {
  for (int64_t i = 0; i < y.shape[0]; ++i) y(i) = SCALE * x(i);
}
""")
    out = tmp_path / "out"
    r = run_kernelc("build", src, "-o", out, "--name", "odd_paths",
                    cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(
        [sys.executable, "-c",
         "import numpy as np, odd_paths; "
         "print(np.asarray(odd_paths.triple(np.arange(4, dtype=np.float32)))"
         ".tolist()); print(repr(odd_paths.triple.__doc__))"],
        cwd=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    values, doc = r.stdout.splitlines()
    assert values == "[0.0, 3.0, 6.0, 9.0]"
    # The docstring names the source by its path, bytes and all.
    doc = eval(doc)
    assert doc.startswith("Runs kernel 'triple' ("), doc
    assert f"{src.name}).\n" in doc, doc


def test_the_next_build_reclaims_what_a_killed_build_left(tmp_path):
    # Killed while it compiles, a build leaves its scratch directory in the
    # output directory; the next build into that directory removes it.
    out = tmp_path / "out"
    args = [str(KERNELC), "build", str(EXAMPLES / "saxpy.cu"), "-o", str(out),
            "--name", "killed", "--no-cache"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(out.glob(".killed.kernelc-*")):
        assert proc.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    assert list(out.glob(".killed.kernelc-*"))
    r = run_kernelc(*args[1:], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not list(out.glob(".killed.kernelc-*"))
    assert (out / "killed" / "__init__.py").exists()
