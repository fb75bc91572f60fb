"""One expression semantics: random shape expressions, evaluated by the
compiler (its fold over kernelc/arith.h, through the expr_eval tool) and by
the Python that kernelc emits for them (run with the support module that a
built package ships), agree on every value, on overflow, on division by
zero and on shift counts out of range.

The default run checks a few thousand cases with a fixed seed. For a longer
run set KERNELC_EXPR_CASES (and KERNELC_EXPR_SEED for other expressions):

    KERNELC_EXPR_CASES=200000 .venv/bin/python -m pytest \
        tests/python/test_expr_semantics.py
"""

import collections
import os
import random
import subprocess
import types

import pytest

from conftest import ROOT

EXPR_EVAL = ROOT / "bazel-bin" / "compiler" / "expr" / "expr_eval"

CASES = int(os.environ.get("KERNELC_EXPR_CASES", "4000"))
SEED = int(os.environ.get("KERNELC_EXPR_SEED", "1"))

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# Values where int64 arithmetic goes wrong: the limits and their neighbours,
# zero and one, and factors whose products just fit or just do not.
EDGES = [0, 1, 2, 3, 7, 255, 2**31, 2**32, 3037000499, 3037000500, 2**62,
         INT64_MAX - 1, INT64_MAX]

NAMES = ["a", "b", "c", "n"]
MEMBERS = ["x.size", "x.rank", "x.shape[0]", "x.shape[1]", "x.shape[2]"]

SOURCE = r"""
#include <kernelc.h>
KC_KERNEL void copy(KC_SHAPE("n") kc::In<float, 1> x,
                    KC_SHAPE("n") kc::Out<float, 1> y) {}
"""


def literal(rng):
    """A literal (the language has no negative ones: unary minus makes
    them)."""
    r = rng.random()
    if r < 0.5:
        return rng.choice(EDGES)
    if r < 0.8:
        return rng.randrange(0, 100)
    return rng.randrange(0, INT64_MAX + 1)


def value(rng):
    """A bound value: anything in int64, often at an edge."""
    r = rng.random()
    if r < 0.5:
        v = rng.choice(EDGES + [INT64_MAX + 1])
        return -v if rng.random() < 0.5 else min(v, INT64_MAX)
    if r < 0.8:
        return rng.randrange(-100, 100)
    return rng.randrange(INT64_MIN, INT64_MAX + 1)


# Casts, one per type the language converts to.
CASTS = ["int", "unsigned", "short", "unsigned short", "signed char",
         "unsigned char", "long long", "size_t", "uint32_t", "int64_t"]

# The binary operators; the dividing ones twice, so that a division by zero
# stays as common as the other faults.
OPERATORS = ["+", "-", "*", "/", "%", "/", "%", "<<", ">>", "&", "|", "^"]


def spelled_literal(rng):
    """A literal in one of C's spellings: decimal or hexadecimal, with or
    without a suffix."""
    v = literal(rng)
    text = hex(v) if rng.random() < 0.2 else str(v)
    return text + rng.choice(["", "", "", "u", "L", "ULL", "ll"])


def shift_count(rng):
    """A shift count: mostly in 0..63, sometimes just outside."""
    return str(rng.choice([0, 1, 2, 5, 31, 32, 62, 63, 64, 100]))


def expression(rng, depth):
    """Random text using every operator, function and cast, nested."""
    if depth == 0 or rng.random() < 0.2:
        r = rng.random()
        if r < 0.35:
            return rng.choice(NAMES)
        if r < 0.55:
            return rng.choice(MEMBERS)
        return spelled_literal(rng)
    kind = rng.randrange(12 + len(OPERATORS))
    a = expression(rng, depth - 1)
    if kind == 0:
        return f"-{a}" if rng.random() < 0.5 else f"-({a})"
    if kind == 1:
        return f"~{a}" if rng.random() < 0.5 else f"~({a})"
    if kind <= 3:
        return f"({rng.choice(CASTS)})({a})"
    if kind <= 7:
        return (f"{('ceil_div', 'min', 'max', 'ceil_div')[kind - 4]}"
                f"({a}, {expression(rng, depth - 1)})")
    op = OPERATORS[(kind - 8) % len(OPERATORS)]
    shifts = op in ("<<", ">>")
    b = (shift_count(rng) if shifts and rng.random() < 0.7
         else expression(rng, depth - 1))
    text = f"{a} {op} {b}"
    return f"({text})" if rng.random() < 0.6 else text


def bindings(rng):
    names = {n: value(rng) for n in NAMES}
    members = {m: value(rng) for m in MEMBERS}
    return names, members


def python_outcome(support, text, names, members):
    """What the emitted Python computes, in expr_eval's words."""
    x = types.SimpleNamespace(size=members["x.size"], ndim=members["x.rank"],
                              shape=[members[f"x.shape[{d}]"] for d in range(3)])
    env = dict(names, x=x, _kc=support)
    try:
        v = eval(text, {"__builtins__": {}}, env)
    except support.ExpressionError as e:
        return {"overflows int64": "overflow",
                "divides by zero": "division by zero",
                "shifts by a count outside 0..63": "shift count"}[str(e)]
    assert type(v) is int, f"{text} gave {v!r}"
    return f"value {v}"


@pytest.fixture(scope="module")
def support(build_package):
    """The support module of a built package, as its functions use it."""
    return build_package("expr_semantics", source_text=SOURCE)._kc


def run_expr_eval(lines):
    if not EXPR_EVAL.exists():
        pytest.fail(f"{EXPR_EVAL} is missing: run tools/setup.sh first")
    r = subprocess.run([str(EXPR_EVAL)], input="".join(lines), text=True,
                       capture_output=True, check=True)
    return r.stdout.splitlines()


def test_emitted_python_agrees_with_the_compiler(support):
    rng = random.Random(SEED)
    cases = []
    for _ in range(CASES):
        text = expression(rng, rng.randrange(1, 7))
        names, members = bindings(rng)
        cases.append((text, names, members))
    lines = [text + "\t" + " ".join(f"{k}={v}" for k, v in
                                    {**names, **members}.items()) + "\n"
             for text, names, members in cases]
    results = run_expr_eval(lines)
    assert len(results) == len(cases)
    seen = collections.Counter()
    for (text, names, members), result in zip(cases, results):
        outcome, python = result.split("\t")
        assert not outcome.startswith(("error", "unknown")), (text, outcome)
        got = python_outcome(support, python, names, members)
        assert got == outcome, (
            f"{text}\n  bindings {names} {members}\n  compiler: {outcome}\n"
            f"  python {python}: {got}")
        seen[outcome.split()[0]] += 1
    # Every verdict is exercised, each many times.
    assert min(seen["value"], seen["overflow"], seen["division"],
               seen["shift"]) >= CASES // 20, seen


def test_edge_cases_agree(support):
    """The cases where C++'s own operators are undefined or trap, and where
    floor and ceiling differ from truncation."""
    lo = "(-9223372036854775807 - 1)"
    texts = [f"{lo} / -1", f"{lo} % -1", f"ceil_div({lo}, -1)",
             f"ceil_div({lo}, 2)", f"-{lo}", f"{lo} - 1", "9223372036854775807 + 1", "-7 / 2", "-7 % 2",
             "7 % -2", "ceil_div(-7, 2)", "ceil_div(7, -2)", "a / 0", "a % 0",
             "ceil_div(a, 0)", "min(a * a, 1)", "max(-a, a)",
             "3037000500 * 3037000500", "3037000499 * 3037000499",
             "1 << 63", "-1 << 63", "a >> 63", "a << 0", "a << 64", "0 << 64",
             "1 >> -1", "a & ~0", "~a", "a | 1", "a ^ -1", "(unsigned)-1",
             "(int)4294967295", "(short)a", "(uint64_t)-1", "(size_t)a",
             "(int64_t)a", "(unsigned char)0x1FFu", "-7 >> 1",
             "(uint32_t)a >> 1"]
    lines = [t + "\ta=-9223372036854775808\n" for t in texts]
    expected = ["overflow", "value 0", "overflow", "value -4611686018427387904",
                "overflow", "overflow", "overflow", "value -4", "value 1",
                "value -1", "value -3", "value -3", "division by zero",
                "division by zero", "division by zero", "overflow", "overflow",
                "overflow", "value 9223372030926249001",
                "overflow", "value -9223372036854775808", "value -1",
                "value -9223372036854775808", "shift count", "shift count",
                "shift count", "value -9223372036854775808",
                "value 9223372036854775807", "value -9223372036854775807",
                "value 9223372036854775807", "value 4294967295", "value -1",
                "value 0", "overflow", "overflow", "value -9223372036854775808",
                "value 255", "value -4", "value 0"]
    assert len(texts) == len(expected)
    for text, result, want in zip(texts, run_expr_eval(lines), expected):
        outcome, python = result.split("\t")
        assert outcome == want, text
        members = dict.fromkeys(MEMBERS, 0)
        assert python_outcome(support, python, {"a": INT64_MIN},
                              members) == want, (text, python)


def test_scalars_enter_as_the_handler_reads_them(support):
    import numpy as np
    assert support.int64(np.uint64(2**63)) == INT64_MIN
    assert support.int64(np.uint64(2**64 - 1)) == -1
    assert support.int64(np.int8(-5)) == -5
    assert type(support.int64(np.int32(7))) is int
