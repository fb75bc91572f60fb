"""kernelc's PEP 440 versions and PEP 508 requirements against `packaging`,
the reference implementation that pip uses: over many generated strings,
kernelc (through the pep_check tool, which calls the same parsers as
`kernelc wheel`) accepts exactly what packaging accepts, and normalises
versions to str(packaging.version.Version(text))."""

import json
import random
import subprocess

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from conftest import ROOT

PEP_CHECK = ROOT / "bazel-bin" / "compiler" / "wheel" / "pep_check"


def pep_check(mode, texts):
    if not PEP_CHECK.exists():
        pytest.fail(f"{PEP_CHECK} is missing: run `bazel build "
                    "//compiler/wheel:pep_check` (tools/setup.sh does)")
    r = subprocess.run([str(PEP_CHECK), mode], capture_output=True, text=True,
                       input="".join(json.dumps(t) + "\n" for t in texts),
                       check=True)
    return [json.loads(line) for line in r.stdout.splitlines()]


def packaging_version(text):
    try:
        return str(Version(text))
    except InvalidVersion:
        return None


def packaging_requirement(text):
    try:
        Requirement(text)
        return True
    except InvalidRequirement:
        return False


# Pieces of versions: each part in the spellings PEP 440 allows, with
# separators, case and leading zeros varied, and pieces that break them.
NUMBERS = ["0", "1", "2", "10", "007", "00", "123456789012345678901234567890"]
SEPARATORS = ["", "", ".", "-", "_"]
PRE = ["a", "alpha", "b", "beta", "c", "rc", "pre", "preview", "RC", "Alpha"]
POST = ["post", "rev", "r", "POST", "Rev"]
LOCAL_PARTS = ["ubuntu", "abc", "7", "007", "Deb", "x86", "0"]
WHITE = ["", "", "", " ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f"]
NOISE = ["", ".", "-", "_", "+", "!", "*", "v", "x", " ", "..", "dev", "a",
         "1", "post", "+a", "-1", "é"]


def random_version(rng):
    parts = [rng.choice(WHITE)]
    if rng.random() < 0.3:
        parts.append(rng.choice(["v", "V"]))
    if rng.random() < 0.2:
        parts.append(rng.choice(NUMBERS) + "!")
    parts.append(".".join(rng.choice(NUMBERS)
                          for _ in range(rng.choice([1, 1, 2, 3, 4]))))
    if rng.random() < 0.4:
        parts.append(rng.choice(SEPARATORS) + rng.choice(PRE) +
                     rng.choice(SEPARATORS) + rng.choice(NUMBERS + [""]))
    if rng.random() < 0.4:
        if rng.random() < 0.3:
            parts.append("-" + rng.choice(NUMBERS))
        else:
            parts.append(rng.choice(SEPARATORS) + rng.choice(POST) +
                         rng.choice(SEPARATORS) + rng.choice(NUMBERS + [""]))
    if rng.random() < 0.4:
        parts.append(rng.choice(SEPARATORS) + rng.choice(["dev", "DEV"]) +
                     rng.choice(SEPARATORS) + rng.choice(NUMBERS + [""]))
    if rng.random() < 0.3:
        local = [rng.choice(LOCAL_PARTS)
                 for _ in range(rng.choice([1, 2, 3]))]
        parts.append("+" + "".join(rng.choice([".", "-", "_"]) + p
                                   for p in local)[1:])
    parts.append(rng.choice(WHITE))
    text = "".join(parts)
    # Break some: insert, delete or replace a piece somewhere.
    if rng.random() < 0.35:
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.choice([0, 0, 1, 2]))
        text = text[:i] + rng.choice(NOISE) + text[j:]
    return text


def random_ascii(rng):
    alphabet = "0123456789.!+-_ vVabcdeilnoprstvx*\t"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))


NAMED_VERSIONS = [
    "v1", "V1.0", "1.0.0-dev", "1.0-DEV", "1!2.0", "0!1.0", "01!01.01",
    "1.0+local.7", "1.0+LOCAL-007_x", "1.0-1", "1.0a.", "1.0a-", "1.0.post",
    "1.0.r", "1.0rc1-1.dev", "1.2-beta", "1.0-x", "1.0+", "1.0+a..b",
    "1..0", ".1", "1.", "", " ", "v", "latest", "1.0 beta", "1.*",
    "1.0+\u212a",  # KELVIN SIGN: packaging's local segment is ASCII only
]


def test_versions_agree_with_packaging():
    rng = random.Random(440)
    texts = NAMED_VERSIONS + [random_version(rng) for _ in range(20000)] + \
        [random_ascii(rng) for _ in range(5000)]
    # kernelc takes ASCII only, where packaging also strips Unicode white
    # space around a version (pep440.h): compare the ASCII ones.
    texts = [t for t in texts if t.isascii()]
    ours = pep_check("--versions", texts)
    mismatches = [(t, o, packaging_version(t)) for t, o in zip(texts, ours)
                  if o != packaging_version(t)]
    assert not mismatches[:20], f"{len(mismatches)} mismatches"
    valid = sum(o is not None for o in ours)
    # The generator reaches both sides, and every rule.
    assert 0.3 * len(texts) < valid < 0.8 * len(texts)
    normal = {packaging_version(t) for t in texts} - {None}
    for piece in ["!", "a", "b", "rc", ".post", ".dev", "+"]:
        assert any(piece in n for n in normal), piece


def test_non_ascii_versions_are_refused():
    assert pep_check("--versions", ["1.0+\u212a", "\u00a01.0", "1.0\u00e9"]) \
        == [None, None, None]


NAMES = ["scipy", "Foo.Bar", "foo-bar_baz", "a", "x1", "9lives"]
EXTRAS = ["", "[gpu]", "[a,b]", "[ a , b ]", "[]", "[a b]", "[a,]"]
SPEC_VERSIONS = ["1", "1.0", "1.0.0", "1.0a1", "1.0.post1", "1.0.dev2",
                 "1!2.0", "v1.0", "1.0+local", "1.*", "1.0.*", "1.0a1.*",
                 "2.0rc1+x"]
OPS = ["==", "!=", "<=", ">=", "<", ">", "~=", "===", "=", "=>"]
MARKER_VARS = ["python_version", "sys_platform", "os.name", "os_name",
               "platform_machine", "extra", "implementation_name",
               "python_full_version", "platform.python_implementation",
               "color"]
MARKER_VALUES = ["'3.11'", '"linux"', "'x86_64'", "'gpu'", "''", "'a\"b'"]
MARKER_OPS = ["==", "!=", ">=", "<", "~=", "===", "in", "not in", "not  in",
              "is"]


def random_marker(rng, depth=0):
    if depth < 2 and rng.random() < 0.2:
        return f"({random_marker(rng, depth + 1)})"
    left, right = rng.choice(MARKER_VARS), rng.choice(MARKER_VALUES)
    if rng.random() < 0.3:
        left, right = right, left
    ws = rng.choice(["", " ", "  "])
    item = f"{left}{ws}{rng.choice(MARKER_OPS)}{ws}{right}"
    if depth < 2 and rng.random() < 0.3:
        item += f" {rng.choice(['and', 'or', 'AND', 'xor'])} " + \
            random_marker(rng, depth + 1)
    return item


def random_requirement(rng):
    text = rng.choice(["", "", " ", "\t"]) + rng.choice(NAMES) + \
        rng.choice(["", " "]) + rng.choice(EXTRAS)
    if rng.random() < 0.15:
        text += rng.choice([" @ https://example.com/p.whl",
                            "@file:///tmp/x.whl", " @ ", " @ git+ssh://h/r"])
    elif rng.random() < 0.8:
        specs = [rng.choice(OPS) + rng.choice(["", " "]) +
                 rng.choice(SPEC_VERSIONS)
                 for _ in range(rng.choice([1, 1, 2, 3]))]
        spec = rng.choice([",", ", ", " , ", " "]).join(specs)
        text += rng.choice(["", " "]) + \
            (f"({spec})" if rng.random() < 0.2 else spec)
    if rng.random() < 0.4:
        text += rng.choice([";", " ;", "; ", " ; "]) + random_marker(rng)
    text += rng.choice(["", "", " "])
    if rng.random() < 0.25:
        i = rng.randrange(len(text) + 1)
        text = text[:i] + rng.choice(
            ["", ",", ";", "(", ")", "[", "]", "'", "*", " ", "a", "@"]) + \
            text[i + rng.choice([0, 1]):]
    return text


def test_requirements_agree_with_packaging():
    rng = random.Random(508)
    texts = [random_requirement(rng) for _ in range(6000)]
    ours = pep_check("--requirements", texts)
    mismatches = [(t, o) for t, o in zip(texts, ours)
                  if o != packaging_requirement(t)]
    assert not mismatches[:20], f"{len(mismatches)} mismatches"
    valid = sum(ours)
    assert 0.2 * len(texts) < valid < 0.8 * len(texts)


def test_requirements_kernelc_is_stricter_about():
    # A backslash in a marker's string (packaging reads a Python literal),
    # control characters and non-ASCII text.
    texts = ["foo; os_name == 'a\\tb'", "foo @ file:///x\x01",
             "foo; os_name == 'é'"]
    assert [packaging_requirement(t) for t in texts] == [True, True, True]
    assert pep_check("--requirements", texts) == [False, False, False]
