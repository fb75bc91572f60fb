"""The Python API (python/kernelc) over the development build of the
compiler: keyword arguments mapped through the compiler's option table and
their errors, BuildError, and load / load_inline: a cache hit the second
time, a new module after an edit while the old one keeps working, the
cache shared with the command line, progress lines when verbose.
tests/python/test_pip_install.py checks the same API installed from the
wheel."""

import re
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

from conftest import EXAMPLES, KERNELC, ROOT

sys.path.insert(0, str(ROOT / "python"))
import kernelc  # noqa: E402
from kernelc import _compiler  # noqa: E402

SOURCE = textwrap.dedent("""\
    #include <kernelc.h>

    KC_GRID("out.size")
    __global__ void scaled(KC_IN("n") const float* x, float a,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") float* out) {
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
      if (i < n) out[i] = SCALE * a * x[i];
    }
    """)

PROGRESS_LINE = re.compile(
    r"kernelc: (frontend|host compile|link|build cache) +\S.* +\d+\.\d\d s")


@pytest.fixture(autouse=True)
def compiler(monkeypatch, tmp_path):
    """The API runs the development build, with a private cache."""
    monkeypatch.setattr(_compiler, "BINARY", KERNELC)
    monkeypatch.setenv("KERNELC_CACHE_DIR", str(tmp_path / "cache"))


def test_keywords_map_to_the_command_line():
    args = _compiler.command_line("build", {
        "name": "ops", "target": ["cpu", "cuda"], "cuda_arch": "sm_80",
        "use_fast_math": True, "lineinfo": False, "defines": ["A=1", "B"],
        "include_dirs": "inc", "no_cache": None})
    assert args == ["--name", "ops", "--target", "cpu,cuda",
                    "--cuda-arch", "sm_80", "--use-fast-math",
                    "-D", "A=1", "-D", "B", "-I", "inc"]
    assert _compiler.command_line("build", {"target": "cpu,cuda"}) == \
        ["--target", "cpu,cuda"]


def test_relative_paths_are_absolute_where_the_compiler_runs_elsewhere(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = _compiler.command_line(
        "build", {"include_dirs": ["inc", tmp_path / "abs"], "defines": "D=x/y"},
        cwd="/elsewhere")
    assert args == ["-I", str(tmp_path / "inc"), "-I", str(tmp_path / "abs"),
                    "-D", "D=x/y"]


@pytest.mark.parametrize("options, message", [
    ({"fast_math": True}, "unexpected keyword argument 'fast_math'"),
    # An option of `kernelc wheel`, not of build.
    ({"version": "1.0"}, "unexpected keyword argument 'version'"),
    ({"use_fast_math": 1}, "use_fast_math: expected a bool, not int"),
    ({"cuda_arch": 80}, "cuda_arch: expected a str, not int"),
    ({"defines": 3}, "defines: expected a str or a list of str, not int"),
    ({"defines": ["A", 3]}, "defines: expected a str, not int"),
    ({"target": 1}, "target: expected a str or a list of str, not int"),
])
def test_options_of_the_wrong_name_or_type_are_type_errors(options, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        _compiler.command_line("build", options)


def test_an_unknown_keyword_lists_the_build_options():
    with pytest.raises(TypeError) as e:
        kernelc.load_inline(SOURCE, name="ops", fast_math=True)
    for name in ("cuda_arch", "use_fast_math", "defines", "include_dirs"):
        assert name in str(e.value)


@pytest.mark.parametrize("call, error, message", [
    (lambda: kernelc.load(), TypeError, "at least one source"),
    (lambda: kernelc.load(3), TypeError, "a source is a path, not int"),
    (lambda: kernelc.load(EXAMPLES / "saxpy.cu", sources=["x.cu"]),
     TypeError, "unexpected keyword argument 'sources'"),
    (lambda: kernelc.load(EXAMPLES / "saxpy.cu", out_dir="out"),
     TypeError, "unexpected keyword argument 'out_dir'"),
    (lambda: kernelc.load_inline(b"src", name="ops"), TypeError,
     "source is the kernel's text, a str, not bytes"),
    (lambda: kernelc.load_inline(SOURCE, name=3), TypeError,
     "name is a str, not int"),
    (lambda: kernelc.load_inline(SOURCE, name="../ops"), ValueError,
     "'../ops' is not a Python package name"),
])
def test_arguments_are_checked_before_building(call, error, message, tmp_path):
    with pytest.raises(error, match=re.escape(message)):
        call()
    assert not (tmp_path / "cache" / "python").exists() or \
        not any((tmp_path / "cache" / "python").iterdir())


def test_diagnostics_raise_build_error_with_kernelc_s_text():
    bad = SOURCE.replace('KC_IN("n") const float* x', "const float* x")
    with pytest.raises(kernelc.BuildError) as e:
        kernelc.load_inline(bad, name="bad", defines="SCALE=1")
    assert e.value.kind == "user"
    lines = str(e.value).splitlines()
    assert lines[0] == ("bad.cu:4:37: error: pointer parameter 'x' of kernel "
                        "'scaled' needs a role: KC_IN, KC_INMUT or KC_OUT")
    assert lines[1] == "__global__ void scaled(const float* x, float a,"
    assert lines[2] == " " * 36 + "^"
    assert lines[-1] == "1 error generated."
    # In a notebook, IPython shows the diagnostics instead of a traceback.
    assert e.value._render_traceback_() == ["kernelc.BuildError:", *lines]


@pytest.mark.parametrize("options, message", [
    ({"target": "tpu"}, "kernelc: error: unknown target 'tpu' (expected cpu "
     "or cuda)"),
    ({"use_fast_math": True}, "kernelc: error: --use-fast-math needs the "
     "cuda target"),
])
def test_option_errors_are_the_compiler_s(options, message):
    with pytest.raises(kernelc.BuildError) as e:
        kernelc.load_inline(SOURCE, name="ops", defines="SCALE=1", **options)
    assert str(e.value) == message
    with pytest.raises(NotImplementedError):
        # An internal error keeps its traceback; these are the user's.
        kernelc.BuildError("x", kind="internal")._render_traceback_()


def test_load_inline_hits_the_cache_and_an_edit_gives_a_new_module():
    x = np.arange(6, dtype=np.float32)
    ops = kernelc.load_inline(SOURCE, name="api_ops", defines="SCALE=2")
    assert not ops.__kernelc_build__.cache_hit
    assert ops.__name__ == "api_ops" and sys.modules["api_ops"] is ops
    np.testing.assert_allclose(jax.jit(lambda x: ops.scaled(x, 1.5))(x),
                               3 * x)

    again = kernelc.load_inline(SOURCE, name="api_ops", defines="SCALE=2")
    assert again is ops
    assert again.__kernelc_build__.cache_hit

    edited = kernelc.load_inline(SOURCE.replace("SCALE * a", "SCALE + a"),
                                 name="api_ops", defines="SCALE=2")
    assert edited is not ops
    assert not edited.__kernelc_build__.cache_hit
    assert sys.modules["api_ops"] is edited
    np.testing.assert_allclose(jax.jit(lambda x: edited.scaled(x, 1.5))(x),
                               2 + 1.5 * x)
    # The first module keeps its own library and FFI targets.
    np.testing.assert_allclose(jax.jit(lambda x: ops.scaled(x, 1.5))(x),
                               3 * x)
    assert ops.__file__ != edited.__file__
    # Other options are another build too.
    three = kernelc.load_inline(SOURCE, name="api_ops", defines=["SCALE=3"])
    np.testing.assert_allclose(three.scaled(x, 1.0), 3 * x)


def test_load_shares_the_build_cache_with_the_command_line(tmp_path,
                                                           monkeypatch):
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    (src / "scaled.cu").write_text(SOURCE.replace(
        "#include <kernelc.h>", '#include <kernelc.h>\n#include "scale.h"'))
    (src / "inc" / "scale.h").write_text("#define SCALE 4.0f\n")
    monkeypatch.chdir(src)
    ops = kernelc.load("scaled.cu", include_dirs=str(src / "inc"))
    assert ops.__name__ == "scaled"
    assert not ops.__kernelc_build__.cache_hit
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(ops.scaled(x, 0.5), 2 * x)
    # The command line, with the same sources and options, finds the entry.
    r = subprocess.run([str(KERNELC), "build", "scaled.cu", "-I",
                        str(src / "inc"), "-o", str(tmp_path / "out"),
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '"cache_hit":true' in r.stdout
    # An edited header misses, in the API as on the command line.
    (src / "inc" / "scale.h").write_text("#define SCALE 5.0f\n")
    edited = kernelc.load("scaled.cu", include_dirs=str(src / "inc"))
    assert not edited.__kernelc_build__.cache_hit
    np.testing.assert_allclose(edited.scaled(x, 0.5), 2.5 * x)


def test_verbose_relays_the_progress_lines(capsys):
    kernelc.load_inline(SOURCE, name="api_quiet", defines="SCALE=1",
                        verbose=False)
    assert capsys.readouterr().err == ""
    kernelc.load_inline(SOURCE, name="api_loud", defines="SCALE=1",
                        verbose=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(PROGRESS_LINE.fullmatch(line) for line in lines), \
        lines
    assert [line.split()[1] for line in lines][0] == "frontend"
    assert lines[-1].startswith("kernelc: link ")
    kernelc.load_inline(SOURCE, name="api_loud", defines="SCALE=1",
                        verbose=True)
    assert re.fullmatch(r"kernelc: build cache +hit +\d+\.\d\d s\n",
                        capsys.readouterr().err)
