"""The repositories and toolchains that a workspace using kernelc needs.

In the WORKSPACE file:

    local_repository(name = "kernelc", path = "/path/to/kernelc")

    load("@kernelc//tools:deps.bzl", "kernelc_dependencies", "kernelc_python_toolchain")

    # A prebuilt kernelc: the `kernelc` on PATH (pip install kernelc), or a
    # path. Nothing of kernelc is built.
    kernelc_dependencies(compiler = "kernelc")

    # Or kernelc built from the checkout, once `bash tools/setup.sh` has run
    # there:
    # kernelc_dependencies()

    # py_test and py_binary run with this Python, which must have jax.
    kernelc_python_toolchain(interpreter = "/path/to/venv/bin/python3")

Everything is local (Debian packages and tools/setup.sh's files under the
kernelc checkout, or the prebuilt kernelc): nothing is downloaded. A missing
piece fails when Bazel first needs it, with the command that provides it.
"""

# kernelc_library's toolchain type, by its label in this repository.
_TOOLCHAIN_TYPE = str(Label("//tools:toolchain_type"))
_RULES = str(Label("//tools:kernelc_library.bzl"))

def _kernelc_root(rctx):
    # This file is tools/deps.bzl in the kernelc repository: the checkout
    # itself, not Bazel's link to it, so that messages name the checkout.
    return rctx.path(Label("//tools:deps.bzl")).realpath.dirname.dirname

def _child(path, rel):
    for part in rel.split("/"):
        path = path.get_child(part)
    return path

_SETUP_HINT = ("run `bash tools/setup.sh` in {root}, which provides it; or " +
               "use a prebuilt kernelc, which needs none of this: " +
               "kernelc_dependencies(compiler = \"kernelc\")")

def _local_dir_impl(rctx):
    root = _kernelc_root(rctx)
    path = rctx.attr.path
    src = rctx.path(path) if path.startswith("/") else _child(root, path)
    hint = _SETUP_HINT.format(root = root)
    if not src.exists:
        fail("kernelc's build needs {what} in {src}, which is missing: {hint}"
            .format(what = rctx.attr.what, src = src, hint = hint))
    for rel, package in rctx.attr.needs.items():
        if not _child(src, rel).exists:
            fail(("kernelc's build needs {rel} in {src} (Debian's {package}), " +
                  "which is missing: {hint}").format(
                rel = rel,
                src = src,
                package = package,
                hint = hint,
            ))
    for child in src.readdir():
        rctx.symlink(child, child.basename)
    if rctx.attr.build_file:
        rctx.symlink(rctx.path(rctx.attr.build_file), "BUILD.bazel")
    if not src.get_child("WORKSPACE").exists:
        rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)

# A directory as a repository: one of the kernelc checkout (`path` relative
# to it), or of the system (an absolute `path`). local_repository and
# new_local_repository take paths relative to the main workspace, which
# kernelc's are not, and say only that a path does not exist.
_local_dir = repository_rule(
    implementation = _local_dir_impl,
    local = True,
    attrs = {
        "path": attr.string(mandatory = True),
        "build_file": attr.label(allow_single_file = True),
        "what": attr.string(mandatory = True, doc = "for messages"),
        "needs": attr.string_dict(
            doc = "files that must be there, relative to path -> the " +
                  "Debian package that provides each",
        ),
    },
)

# The repositories that building kernelc from source needs, each with its
# BUILD file in third_party/system: name, directory (absolute, or in the
# kernelc checkout), what it holds (for messages), and the files that must
# be there with the Debian package that provides each.
_BUILD_REPOSITORIES = [
    ("llvm", "/usr/lib/llvm-19", "LLVM and Clang 19", {
        "include/llvm/Support/raw_ostream.h": "llvm-19-dev",
        "include/clang/Tooling/Tooling.h": "libclang-19-dev",
        "lib/libLLVM.so.19.1": "libllvm19",
        "lib/libclang-cpp.so.19.1": "libclang-cpp19",
    }),
    ("system_include", "/usr/include",
     "the headers of fmt, CLI11, nlohmann/json, Catch2, libzip and " +
     "Boost.Context", {
         "fmt/format.h": "libfmt-dev",
         "CLI/CLI.hpp": "libcli11-dev",
         "nlohmann/json.hpp": "nlohmann-json3-dev",
         "catch2/catch.hpp": "catch2",
         "zip.h": "libzip-dev",
         "boost/context/detail/fcontext.hpp": "libboost-context-dev",
     }),
    # Static libraries that kernelc embeds: Boost.Context's, the context
    # switch of the block executor's fibers.
    ("system_lib", "/usr/lib/x86_64-linux-gnu", "Boost.Context's static library", {
        "libboost_context.a": "libboost-context-dev",
    }),
    ("xla_ffi", ".cache/xla_ffi", "the XLA FFI headers of the floor jaxlib", {}),
    ("manylinux_policy", ".cache/manylinux_policy",
     "auditwheel's manylinux policies", {}),
]

_PREBUILT_BUILD = """\
load("{rules}", "kernelc_toolchain")

# {version}
kernelc_toolchain(
    name = "kernelc_toolchain",
    compiler = ":kernelc",
    identity = ["VERSION"],
)

toolchain(
    name = "toolchain",
    toolchain = ":kernelc_toolchain",
    toolchain_type = "{toolchain_type}",
)
"""

def _find_executable(rctx, call, value, missing):
    """The executable that `value` names: an absolute path, or a name looked
    up on PATH. `call` ("f(x = \"v\")") starts the messages; `missing` says
    what to do when the name is not on PATH."""
    if value.startswith("/"):
        path = rctx.path(value)
        if not path.exists:
            fail("%s: there is no such file" % call)
        return path
    if "/" in value:
        fail("%s: give an absolute path, or a name to look up on PATH" % call)
    path = rctx.which(value)
    if path == None:
        fail("%s: no %s on PATH (%s): %s" %
             (call, value, rctx.os.environ.get("PATH", ""), missing))
    return path

def _kernelc_prebuilt_impl(rctx):
    compiler = rctx.attr.compiler
    call = "kernelc_dependencies(compiler = \"%s\")" % compiler
    path = _find_executable(
        rctx,
        call,
        compiler,
        "install kernelc (pip install kernelc, into the environment whose " +
        "bin directory is on PATH), or give the compiler's absolute path",
    )
    result = rctx.execute([path, "--version"])
    if result.return_code != 0 or not result.stdout.startswith("kernelc "):
        fail(("{call}: {path} is not a kernelc that runs here: `{path} " +
              "--version` exited with {rc}: {out}").format(
            call = call,
            path = path,
            rc = result.return_code,
            out = (result.stdout + result.stderr).strip(),
        ))
    rctx.symlink(path, "kernelc")

    # The version text identifies the compiler to Bazel: the actions read it,
    # so a different kernelc (found when this repository is fetched again:
    # on a new PATH, after `bazel sync --only=<name>` or a restart of Bazel's
    # server) re-runs them.
    rctx.file("VERSION", result.stdout)
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD.bazel", _PREBUILT_BUILD.format(
        rules = _RULES,
        toolchain_type = _TOOLCHAIN_TYPE,
        version = "%s: %s" % (path, result.stdout.split("\n")[0]),
    ))

_kernelc_prebuilt = repository_rule(
    implementation = _kernelc_prebuilt_impl,
    local = True,
    environ = ["PATH"],
    attrs = {"compiler": attr.string(mandatory = True)},
)

def kernelc_dependencies(compiler = None, name = "kernelc_compiler"):
    """Defines the repositories kernelc needs, unless defined, and registers
    the kernelc toolchain that kernelc_library runs.

    Args:
      compiler: a prebuilt kernelc: an absolute path, or a name looked up on
        PATH when Bazel fetches the repository `name` ("kernelc": the one
        `pip install kernelc` installs). None: kernelc is built from this
        checkout, which tools/setup.sh must have set up.
      name: the repository of the prebuilt compiler.
    """
    existing = native.existing_rules()

    # Bazel's own tools ask for these; local stand-ins, nothing downloaded.
    for repo in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        if repo not in existing:
            _local_dir(
                name = repo,
                path = "third_party/" + repo,
                what = "Bazel's " + repo,
            )
    if compiler:
        if name not in existing:
            _kernelc_prebuilt(name = name, compiler = compiler)
        native.register_toolchains("@%s//:toolchain" % name)
    else:
        for repo, path, what, needs in _BUILD_REPOSITORIES:
            if repo not in existing:
                _local_dir(
                    name = repo,
                    path = path,
                    build_file = Label("//third_party/system:%s.BUILD" % repo),
                    what = what,
                    needs = needs,
                )
        native.register_toolchains(str(Label("//tools:built_toolchain")))

_PYTHON_BUILD = """\
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

# {version}
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

# What the interpreter must have to import kernelc's packages: Python 3.11
# and jax 0.8.1 or newer (the wheels' Requires-Python and Requires-Dist).
_PYTHON_CHECK = """\
import sys
print(sys.version.split()[0])
if sys.version_info < (3, 11):
    sys.exit("Python %s is older than 3.11, which jax 0.8.1 and kernelc's packages need" % sys.version.split()[0])
try:
    import jax, jaxlib
except ImportError as e:
    sys.exit("it cannot import jax (%s): %s -m pip install 'jax>=0.8.1'" % (e, sys.executable))
print("jax", jax.__version__)
"""

def _kernelc_python_impl(rctx):
    interpreter = rctx.attr.interpreter
    call = "kernelc_python_toolchain(interpreter = \"%s\")" % interpreter
    path = _find_executable(
        rctx,
        call,
        interpreter,
        "activate the virtual environment that has jax, or give its " +
        "interpreter's absolute path",
    )
    result = rctx.execute([path, "-c", _PYTHON_CHECK])
    if result.return_code != 0:
        fail("%s: %s: %s" %
             (call, path, (result.stderr or result.stdout).strip()))
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD.bazel", _PYTHON_BUILD.format(
        interpreter = path,
        version = "Python %s" % ", ".join(result.stdout.strip().split("\n")),
    ))

_kernelc_python = repository_rule(
    implementation = _kernelc_python_impl,
    local = True,
    environ = ["PATH"],
    attrs = {"interpreter": attr.string(mandatory = True)},
)

def kernelc_python_toolchain(interpreter, name = "kernelc_python"):
    """Registers a Python toolchain for py_binary and py_test: the Python
    that runs the packages kernelc_library builds.

    Args:
      interpreter: a Python 3.11 or newer with jax 0.8.1 or newer: an
        absolute path (a virtual environment's bin/python3, say), or a name
        looked up on PATH when Bazel fetches the repository `name`
        ("python3": the one of the virtual environment that is active).
        Checked then.
      name: the toolchain's repository.
    """
    _kernelc_python(name = name, interpreter = interpreter)
    native.register_toolchains("@%s//:toolchain" % name)
