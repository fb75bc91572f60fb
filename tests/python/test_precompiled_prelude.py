"""kernelc compiles with preludes precompiled, kept in the cache
directory's prelude/: those of its generated sources (the XLA FFI shim, the
CPU entry files' kernelc headers, for the cuda target the CUDA binaries),
and kernelc.h as the frontend reads a source that opens with it. A build
with them makes the same package, byte for byte, as one without, and
reports the same diagnostics; a precompiled header that Clang will not
load is compiled around, removed, and made anew by the next build, and
the frontend's is made anew when a header it read has changed. A build
without the cache reads and writes no prelude, and a kernelc that makes its
preludes keeps the newest three other kernelc executables' ones."""

import hashlib
import os
import shutil
import subprocess

from conftest import EXAMPLES, KERNELC

# A kernel under the block executor (in kernelc's prebuilt runtime
# archive). A CPU build of it has three preludes: the frontend's kernelc.h,
# the entry file's and the shim's.
SOURCE = EXAMPLES / "softmax.cu"
PRELUDES = 3


def run(source, out, *flags, env=None):
    return subprocess.run([str(KERNELC), "build", str(source), "-o", str(out),
                           "--target", "cpu", *flags],
                          env=dict(os.environ, **(env or {})), capture_output=True, text=True)


def package(out):
    """Every file of the package in `out`, path -> bytes."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file()}


def build(tmp_path, out, *flags, env=None, source=SOURCE):
    """Builds `source` for the CPU with `flags` (and `env` over the
    environment); returns the SHA-256 of the package's library."""
    r = run(source, tmp_path / out, *flags, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    (library,) = (tmp_path / out / source.stem).glob("*.so")
    return hashlib.sha256(library.read_bytes()).hexdigest()


def empty_build_cache(cache):
    """Empties the build cache in `cache`, so that a build compiles; its
    preludes stay."""
    if cache.is_dir():
        for entry in cache.iterdir():
            if entry.name != "prelude":
                shutil.rmtree(entry)


def build_compiled(tmp_path, out, cache, source=SOURCE):
    """Builds with the cache directory `cache` (as $KERNELC_CACHE_DIR) once
    its build cache is emptied."""
    empty_build_cache(cache)
    return build(tmp_path, out, env={"KERNELC_CACHE_DIR": str(cache)}, source=source)


def headers(cache):
    return sorted((cache / "prelude").glob("*/*.pch"))


def test_precompiled_preludes_change_no_byte(tmp_path):
    whole = build(tmp_path, "whole", "--no-cache")
    cache = tmp_path / "cache"
    first = build_compiled(tmp_path, "first", cache)
    assert len(headers(cache)) == PRELUDES
    again = build_compiled(tmp_path, "again", cache)
    assert whole == first == again
    assert package(tmp_path / "whole") == package(tmp_path / "first")


def test_the_frontend_reads_kernelc_h_precompiled_only_where_the_source_opens_with_it(
        tmp_path):
    body = SOURCE.read_text()
    assert body.index("#include <kernelc.h>") < body.index("KC_GRID")
    opening = tmp_path / "opening.cu"
    opening.write_text("// A comment, then the include.\n/* and\n another */\n" + body)
    # A macro defined first could change how kernelc.h (or a header it
    # includes) reads: the source is read whole.
    later = tmp_path / "later.cu"
    later.write_text("#define KC_LATER 1\n" + body)
    for source in (opening, later):
        cache = tmp_path / f"cache_{source.stem}"
        whole = build(tmp_path, f"whole_{source.stem}", "--no-cache", source=source)
        cached = build_compiled(tmp_path, f"cached_{source.stem}", cache, source=source)
        assert whole == cached
        frontend = sorted(p.name for p in (cache / "prelude").glob("*/frontend-*.pch"))
        assert len(frontend) == (1 if source is opening else 0)


def test_the_frontends_header_is_made_anew_when_a_header_it_read_changed(tmp_path):
    cache = tmp_path / "cache"
    good = build_compiled(tmp_path, "good", cache)
    (inputs,) = (cache / "prelude").glob("*/frontend-*.inputs")
    pch = inputs.with_suffix(".pch")
    lines = inputs.read_text().splitlines()
    assert any(" /usr/include/" in line for line in lines)  # system headers too
    size, mtime, path = lines[-1].split(" ", 2)
    lines[-1] = f"{size} {int(mtime) - 1} {path}"
    inputs.write_text("\n".join(lines) + "\n")
    os.utime(pch, (0, 0))
    assert build_compiled(tmp_path, "again", cache) == good
    assert pch.stat().st_mtime > 0
    assert inputs.read_text().splitlines()[-1] == f"{size} {mtime} {path}"


def test_a_source_with_an_error_reports_the_same_with_preludes(tmp_path):
    broken = tmp_path / "broken.cu"
    broken.write_text(SOURCE.read_text().replace("expf(", "no_such_function(", 1))
    cache = tmp_path / "cache"
    build_compiled(tmp_path, "prime", cache)
    whole = run(broken, tmp_path / "whole", "--no-cache")
    cached = run(broken, tmp_path / "cached", env={"KERNELC_CACHE_DIR": str(cache)})
    assert whole.returncode == cached.returncode == 1
    assert "no_such_function" in whole.stderr
    assert cached.stderr == whole.stderr
    assert len(headers(cache)) == PRELUDES


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
    assert len(headers(tmp_path / "chosen_cache")) == PRELUDES
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


def test_user_flags_that_could_change_kernelc_h_get_preludes_of_their_own(tmp_path):
    cache = tmp_path / "cache"
    plain = build_compiled(tmp_path, "plain", cache)
    assert len(headers(cache)) == PRELUDES
    # -D and -I reach the frontend's kernelc.h and the entry file's prelude,
    # not the shim's.
    flags = ("-D", "KC_SOME_FLAG=1", "-I", str(tmp_path))
    empty_build_cache(cache)
    defined = build(tmp_path, "defined", *flags, env={"KERNELC_CACHE_DIR": str(cache)})
    assert len(headers(cache)) == PRELUDES + 2
    assert defined == build(tmp_path, "defined_whole", *flags, "--no-cache")
    assert plain == build(tmp_path, "plain_whole", "--no-cache")
