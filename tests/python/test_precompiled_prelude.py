"""kernelc's generated sources (the XLA FFI shim, the block executor) compile
with their preludes precompiled, kept in the cache directory's prelude/: a
build with them makes the same library, byte for byte, as one without, and a
precompiled header that Clang will not load is compiled around, removed, and
made anew by the next build. A build without the cache reads and writes no
prelude, and a kernelc that makes its preludes keeps the newest three other
kernelc executables' ones."""

import hashlib
import os
import shutil
import subprocess

from conftest import EXAMPLES, KERNELC

# The shim and the block executor: both kinds of prelude a CPU build has.
SOURCE = EXAMPLES / "softmax.cu"


def build(tmp_path, out, *flags, env=None):
    """Builds SOURCE for the CPU with `flags` (and `env` over the
    environment); returns the SHA-256 of the package's library."""
    r = subprocess.run([str(KERNELC), "build", str(SOURCE), "-o", str(tmp_path / out),
                        "--target", "cpu", *flags],
                       env=dict(os.environ, **(env or {})), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    (library,) = (tmp_path / out / "softmax").glob("*.so")
    return hashlib.sha256(library.read_bytes()).hexdigest()


def build_compiled(tmp_path, out, cache):
    """Builds with the cache directory `cache` (as $KERNELC_CACHE_DIR) once
    its build cache is emptied, so that the build compiles; its preludes
    stay."""
    if cache.is_dir():
        for entry in cache.iterdir():
            if entry.name != "prelude":
                shutil.rmtree(entry)
    return build(tmp_path, out, env={"KERNELC_CACHE_DIR": str(cache)})


def headers(cache):
    return sorted((cache / "prelude").glob("*/*.pch"))


def test_precompiled_preludes_change_no_byte(tmp_path):
    whole = build(tmp_path, "whole", "--no-cache")
    cache = tmp_path / "cache"
    first = build_compiled(tmp_path, "first", cache)
    assert len(headers(cache)) == 2
    again = build_compiled(tmp_path, "again", cache)
    assert whole == first == again


def test_a_damaged_precompiled_header_is_compiled_around(tmp_path):
    cache = tmp_path / "cache"
    good = build_compiled(tmp_path, "good", cache)
    made = headers(cache)
    for pch in made:
        pch.write_bytes(b"not a precompiled header")
    assert build_compiled(tmp_path, "damaged", cache) == good
    assert headers(cache) == []
    assert build_compiled(tmp_path, "remade", cache) == good
    assert headers(cache) == made
    assert all(pch.read_bytes().startswith(b"CPCH") for pch in made)


def test_preludes_live_in_the_cache_directory_of_the_build(tmp_path):
    # Every default place of the cache directory, none of them made yet.
    home = tmp_path / "home"
    defaults = {"KERNELC_CACHE_DIR": str(tmp_path / "default"),
                "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(home)}
    # Without the cache, nothing is written outside the output directory.
    build(tmp_path, "uncached", "--no-cache", env=defaults)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["uncached"]
    # --cache-dir: under that directory, and nowhere else.
    build(tmp_path, "chosen", "--cache-dir", str(tmp_path / "chosen_cache"), env=defaults)
    assert len(headers(tmp_path / "chosen_cache")) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chosen", "chosen_cache",
                                                           "uncached"]


def test_new_preludes_keep_the_newest_of_other_kernelc_executables(tmp_path):
    cache = tmp_path / "cache"
    # Those of four other kernelc executables, the first made a day ago,
    # the others earlier, a day apart; and a directory kernelc did not name.
    others = [cache / "prelude" / (c * 64) for c in "abcd"]
    for days, directory in enumerate(others, start=1):
        directory.mkdir(parents=True)
        (directory / "x.pch").write_bytes(b"CPCH")
        os.utime(directory, (0, os.path.getmtime(directory) - days * 86400))
    (cache / "prelude" / "mine").mkdir()
    os.utime(cache / "prelude" / "mine", (0, 0))
    build_compiled(tmp_path, "out", cache)
    kept = sorted(p.name for p in (cache / "prelude").iterdir())
    (ours,) = {p.parent.name for p in headers(cache)} - {d.name for d in others}
    assert kept == sorted([ours, "mine"] + [d.name for d in others[:3]])
