"""kernelc's generated source (the XLA FFI shim) compiles with its prelude
precompiled, kept in the user's kernelc cache: a build
with them makes the same library, byte for byte, as one without, and a
precompiled header that Clang will not load is compiled around, removed, and
made anew by the next build."""

import hashlib
import os
import subprocess

from conftest import EXAMPLES, KERNELC

# A kernel under the block executor, which is prebuilt (in kernelc's
# runtime archive): the shim's is the one prelude a CPU build has.
SOURCE = EXAMPLES / "softmax.cu"


def build(tmp_path, out, cache_root):
    """Builds SOURCE for the CPU with KERNELC_CACHE_DIR=cache_root and no
    build cache; returns the SHA-256 of the package's library."""
    env = dict(os.environ, KERNELC_CACHE_DIR=str(cache_root))
    r = subprocess.run([str(KERNELC), "build", str(SOURCE), "-o", str(tmp_path / out),
                        "--target", "cpu", "--no-cache"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    (library,) = (tmp_path / out / "softmax").glob("*.so")
    return hashlib.sha256(library.read_bytes()).hexdigest()


def headers(cache_root):
    return sorted((cache_root / "prelude").glob("*/*.pch"))


def test_precompiled_preludes_change_no_byte(tmp_path):
    # A cache root that cannot be created: no prelude is precompiled.
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    whole = build(tmp_path, "whole", blocker / "cache")
    cache = tmp_path / "cache"
    first = build(tmp_path, "first", cache)
    assert len(headers(cache)) == 1
    again = build(tmp_path, "again", cache)
    assert whole == first == again


def test_a_damaged_precompiled_header_is_compiled_around(tmp_path):
    cache = tmp_path / "cache"
    good = build(tmp_path, "good", cache)
    made = headers(cache)
    for pch in made:
        pch.write_bytes(b"not a precompiled header")
    assert build(tmp_path, "damaged", cache) == good
    assert headers(cache) == []
    assert build(tmp_path, "remade", cache) == good
    assert headers(cache) == made
    assert all(pch.read_bytes().startswith(b"CPCH") for pch in made)
