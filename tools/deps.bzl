"""The repositories kernelc needs in a workspace that uses it.

    local_repository(name = "kernelc", path = "/path/to/kernelc")
    load("@kernelc//tools:deps.bzl", "kernelc_dependencies", "kernelc_python_toolchain")
    kernelc_dependencies()
    kernelc_python_toolchain()  # optional: py_test with a Python that has jax

Everything is local (Debian packages and tools/setup.sh's files under the
kernelc checkout): nothing is downloaded.
"""

def _kernelc_root(rctx):
    # This file is tools/deps.bzl in the kernelc repository.
    return rctx.path(Label("//tools:deps.bzl")).dirname.dirname

def _child(path, rel):
    for part in rel.split("/"):
        path = path.get_child(part)
    return path

def _kernelc_local_dir_impl(rctx):
    src = _child(_kernelc_root(rctx), rctx.attr.path)
    if not src.exists:
        fail("%s is missing: run tools/setup.sh in the kernelc checkout" % src)
    for child in src.readdir():
        rctx.symlink(child, child.basename)
    if rctx.attr.build_file:
        rctx.symlink(rctx.path(rctx.attr.build_file), "BUILD.bazel")
    if not src.get_child("WORKSPACE").exists:
        rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)

# A directory of the kernelc checkout as a repository (local_repository and
# new_local_repository take paths relative to the main workspace, which
# kernelc's are not).
_kernelc_local_dir = repository_rule(
    implementation = _kernelc_local_dir_impl,
    local = True,
    attrs = {
        "path": attr.string(mandatory = True),
        "build_file": attr.label(allow_single_file = True),
    },
)

def kernelc_dependencies():
    """Defines the repositories kernelc's build needs, unless defined."""
    existing = native.existing_rules()

    # Bazel's own tools ask for these; local stand-ins, nothing downloaded.
    for name in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        if name not in existing:
            _kernelc_local_dir(name = name, path = "third_party/" + name)
    if "llvm" not in existing:
        native.new_local_repository(
            name = "llvm",
            build_file = str(Label("//third_party/system:llvm.BUILD")),
            path = "/usr/lib/llvm-19",
        )
    if "system_include" not in existing:
        native.new_local_repository(
            name = "system_include",
            build_file = str(Label("//third_party/system:system_include.BUILD")),
            path = "/usr/include",
        )
    if "xla_ffi" not in existing:
        _kernelc_local_dir(
            name = "xla_ffi",
            path = ".cache/xla_ffi",
            build_file = Label("//third_party/system:xla_ffi.BUILD"),
        )

_PYTHON_BUILD = """\
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

py_runtime(
    name = "python3",
    interpreter_path = "{interpreter}",
    python_version = "PY3",
    # The launcher stub runs with the same interpreter, not with whatever
    # `python` the test environment's PATH has (often none).
    stub_shebang = "#!{interpreter}",
)

py_runtime_pair(
    name = "runtime_pair",
    py3_runtime = ":python3",
)

toolchain(
    name = "toolchain",
    toolchain = ":runtime_pair",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)
"""

def _kernelc_python_impl(rctx):
    interpreter = rctx.attr.interpreter or rctx.os.environ.get("KERNELC_PYTHON", "")
    if not interpreter:
        interpreter = str(_child(_kernelc_root(rctx), ".venv/bin/python3"))
    if not interpreter.startswith("/"):
        fail("the Python interpreter must be an absolute path, not '%s'" % interpreter)
    if not rctx.path(interpreter).exists:
        fail("no Python interpreter at %s: set KERNELC_PYTHON or " % interpreter +
             "kernelc_python_toolchain(interpreter = ...)")
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD.bazel", _PYTHON_BUILD.format(interpreter = interpreter))

_kernelc_python = repository_rule(
    implementation = _kernelc_python_impl,
    local = True,
    environ = ["KERNELC_PYTHON"],
    attrs = {"interpreter": attr.string()},
)

def kernelc_python_toolchain(name = "kernelc_python", interpreter = None):
    """Registers a Python toolchain for py_binary/py_test: `interpreter` (an
    absolute path), else $KERNELC_PYTHON, else the kernelc checkout's .venv.
    The tests of kernelc_library targets need a Python that has jax."""
    _kernelc_python(name = name, interpreter = interpreter or "")
    native.register_toolchains("@%s//:toolchain" % name)
