"""The command line's progress lines (a line per stage as it finishes, with
its time: the frontend, NVRTC per architecture, each host compile, the
link, or the cache hit), on a terminal or with -v, none when piped or with
-q; and --json, the result as one object for programs."""

import json
import os
import pty
import re
import subprocess

import pytest

from conftest import EXAMPLES, KERNELC, ROOT

LINE = re.compile(r"kernelc: (?P<stage>frontend|nvrtc sm_\d+|host compile|link|"
                  r"build cache) +(?P<detail>\S.*?) +(?P<seconds>\d+\.\d\d) s")


def kernelc(*args, cwd, stderr=subprocess.PIPE):
    env = dict(os.environ)
    env.setdefault("VIRTUAL_ENV", str(ROOT / ".venv"))  # NVRTC's wheels
    return subprocess.run([str(KERNELC), *map(str, args)], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=stderr, text=True)


def stages(stderr):
    """(stage, detail) of each line; every line must be a progress line."""
    out = []
    for line in stderr.splitlines():
        m = LINE.fullmatch(line)
        assert m, f"not a progress line: {line!r}"
        out.append((m["stage"], m["detail"]))
    return out


def test_verbose_prints_each_stage_with_its_time(tmp_path):
    r = kernelc("build", EXAMPLES / "saxpy.cu", "-o", "out", "--no-cache", "-v",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    got = stages(r.stderr)
    src = str(EXAMPLES / "saxpy.cu")
    assert got[0] == ("frontend", src)
    assert sorted(got[1:-1]) == [("host compile", src),
                                 ("host compile", "XLA FFI shim")]
    assert got[-1][0] == "link"
    assert re.fullmatch(r"_kernelc_[0-9a-f]{12}\.so", got[-1][1])


def test_a_cache_hit_is_one_line(tmp_path):
    args = ("build", EXAMPLES / "saxpy.cu", "-o", "out", "-v",
            "--cache-dir", tmp_path / "cache")
    assert kernelc(*args, cwd=tmp_path).returncode == 0
    r = kernelc(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert stages(r.stderr) == [("build cache", "hit")]


def test_nvrtc_has_a_line_per_architecture(tmp_path):
    version = kernelc("--version", cwd=tmp_path).stdout
    if "NVRTC" not in version:
        pytest.skip(f"the cuda target needs NVRTC: {version.strip()}")
    r = kernelc("build", EXAMPLES / "matmul.cu", "-o", "out", "--no-cache",
                "-v", "--target", "cpu,cuda", "--cuda-arch", "sm_80,sm_90",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = stages(r.stderr)
    src = str(EXAMPLES / "matmul.cu")
    assert ("nvrtc sm_80", src) in got and ("nvrtc sm_90", src) in got
    assert ("host compile", "CUDA binaries") in got


def test_quiet_when_piped(tmp_path):
    r = kernelc("build", EXAMPLES / "saxpy.cu", "-o", "out", "--no-cache",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def on_a_terminal(*args, cwd):
    """Runs kernelc with stderr on a pseudo-terminal; returns what it
    printed there."""
    leader, follower = pty.openpty()
    try:
        r = kernelc(*args, cwd=cwd, stderr=follower)
        os.close(follower)
        follower = None
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert r.returncode == 0
        return b"".join(chunks).decode().replace("\r\n", "\n")
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)


def test_a_terminal_gets_the_lines_unless_quiet(tmp_path):
    args = ("build", EXAMPLES / "saxpy.cu", "-o", "out", "--no-cache")
    got = stages(on_a_terminal(*args, cwd=tmp_path))
    assert [s for s, _ in got].count("host compile") == 2
    assert on_a_terminal(*args, "-q", cwd=tmp_path) == ""


def test_json_prints_the_result_and_the_diagnostics(tmp_path):
    r = kernelc("build", EXAMPLES / "saxpy.cu", "-o", "out", "--json",
                "--cache-dir", tmp_path / "cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    reply = json.loads(r.stdout)
    assert reply["ok"] and reply["diagnostics"] == ""
    result = reply["result"]
    assert result["package"] == "saxpy"
    assert result["package_dir"] == "out/saxpy"
    assert result["cache_hit"] is False
    assert result["library"] in result["written"]

    (tmp_path / "bad.cu").write_text(
        (EXAMPLES / "saxpy.cu").read_text().replace("KC_IN(\"n\") const float* y",
                                                    "const float* y"))
    r = kernelc("build", "bad.cu", "-o", "out", "--json", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr == ""
    reply = json.loads(r.stdout)
    assert not reply["ok"]
    assert reply["error"] == {"kind": "user",
                              "message": "errors were reported as diagnostics"}
    assert reply["diagnostics"].startswith("bad.cu:")
    assert reply["diagnostics"].endswith("\n1 error generated.\n")


def test_print_options_is_the_option_table(tmp_path):
    r = kernelc("--print-options", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = json.loads(r.stdout)
    by_name = {o["name"]: o for o in table["options"]}
    assert by_name["--cuda-arch"]["keyword"] == "cuda_arch"
    assert by_name["-I"]["keyword"] == "include_dirs"
    assert by_name["-I"]["path"] is True
    assert "build" in by_name["--use-fast-math"]["commands"]
