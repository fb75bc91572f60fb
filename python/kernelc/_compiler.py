"""The kernelc compiler as the Python API runs it: one process per call.

A build runs `kernelc build ... --json`: the result and the diagnostics come
back as one JSON object on stdout, and progress lines, when asked for, on
stderr as they happen. Keyword arguments become command-line options
through the compiler's own option table (`kernelc --print-options`), so
the API takes exactly the options the command line takes, under the same
names, and checks only their Python types: what a value means is the
compiler's to judge.

A process costs a few milliseconds (kernelc links LLVM statically and
starts quickly), and keeps a crash in a compiler from taking the caller's
interpreter, a notebook kernel say, with it.
"""

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import threading

# The compiler of this installation: the kernelc distribution puts it
# beside this package's modules. KERNELC_COMPILER names another (a
# development build, bazel-bin/tools/kernelc).
BINARY = pathlib.Path(os.environ.get("KERNELC_COMPILER") or
                      pathlib.Path(__file__).parent / "bin" /
                      "kernelc").resolve()


class BuildError(Exception):
    """kernelc could not build the sources.

    str(error) is kernelc's report as it prints it: clang-style diagnostics
    (`file:line:col: error: message`, the source line and a caret), then
    the error kernelc stopped at. `kind` is "user" when the sources or the
    options are at fault, "internal" when kernelc or a toolchain failed.
    """

    def __init__(self, diagnostics, *, kind="user", message=""):
        super().__init__(diagnostics)
        self.diagnostics = diagnostics
        self.kind = kind
        self.message = message

    def __str__(self):
        return self.diagnostics.rstrip("\n")

    __module__ = "kernelc"

    def _render_traceback_(self):
        # IPython and Jupyter show these lines instead of a traceback into
        # kernelc's modules: the diagnostics, with their carets aligned.
        if self.kind != "user":
            raise NotImplementedError  # the full traceback, then
        return ["kernelc.BuildError:", *str(self).splitlines()]


@dataclasses.dataclass(frozen=True)
class BuildInfo:
    """What a build did: `package` and its directory, the `library` file in
    it, and whether it came from the build cache (`cache_hit`: no compiler
    ran)."""

    __module__ = "kernelc"

    package: str
    package_dir: str
    library: str
    cache_hit: bool


def compiler_path():
    """The path of the kernelc executable that the API runs."""
    if not BINARY.is_file():
        raise BuildError(
            f"kernelc: internal error: the compiler is missing at {BINARY}: "
            "reinstall the kernelc distribution", kind="internal")
    return str(BINARY)


_tables = {}
_tables_lock = threading.Lock()


def option_table():
    """The compiler's option table, `kernelc --print-options`: its version,
    the default cache directory and every option. Read once per compiler
    and environment (the default cache directory follows the environment).
    """
    key = (str(BINARY), tuple(sorted(os.environ.items())))
    with _tables_lock:
        table = _tables.get(key)
        if table is None:
            r = subprocess.run([compiler_path(), "--print-options"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise BuildError(r.stderr or f"kernelc --print-options exited "
                                 f"with status {r.returncode}", kind="internal")
            table = json.loads(r.stdout)
            _tables.clear()
            _tables[key] = table
        return table


def _text(keyword, value, path, cwd):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{keyword}: expected a str, not {type(value).__name__}")
    if path and cwd is not None:
        value = os.path.abspath(value)
    return value


def _texts(keyword, value, path, cwd):
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    try:
        values = list(value)
    except TypeError:
        raise TypeError(f"{keyword}: expected a str or a list of str, not "
                        f"{type(value).__name__}") from None
    return [_text(keyword, v, path, cwd) for v in values]


def command_line(command, options, *, cwd=None):
    """The arguments of `kernelc COMMAND` for keyword arguments `options`,
    mapped through the option table: a flag takes a bool, a text option a
    str (or a path), a list option a str or a list of them, the target a
    name ("cpu", "cuda", "cpu,cuda") or a list of names. None leaves an
    option at its default. When the command runs in another directory than
    this process, `cwd` is that directory, and relative paths are made
    absolute first. Raises TypeError for an option that COMMAND does not
    take and for a value of the wrong type.
    """
    specs = {o["keyword"]: o for o in option_table()["options"]
             if command in o["commands"]}
    args = []
    for keyword, value in options.items():
        spec = specs.get(keyword)
        if spec is None:
            known = ", ".join(sorted(specs))
            raise TypeError(f"unexpected keyword argument {keyword!r} "
                            f"(kernelc {command} takes: {known})")
        if value is None:
            continue
        name, kind, path = spec["name"], spec["kind"], spec["path"]
        if kind == "flag":
            if not isinstance(value, bool):
                raise TypeError(f"{keyword}: expected a bool, not "
                                f"{type(value).__name__}")
            if value:
                args.append(name)
        elif kind == "text":
            args += [name, _text(keyword, value, path, cwd)]
        elif kind == "targets":
            names = value.split(",") if isinstance(value, str) else value
            args += [name, ",".join(_texts(keyword, names, False, None))]
        else:
            values = _texts(keyword, value, path, cwd)
            if not name.startswith("-"):
                args += values  # positional
            else:
                for v in values:
                    args += [name, v]
    return args


def run(args, *, cwd=None, verbose=False):
    """Runs `kernelc ARGS --json` in `cwd`; returns its result object.
    Progress lines go to sys.stderr as they come when `verbose`. Raises
    BuildError with kernelc's diagnostics when the command fails."""
    command = [compiler_path(), *args, "--json", "-v" if verbose else "-q"]
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    stderr = []

    def relay():
        for line in process.stderr:
            stderr.append(line)
            if verbose:
                sys.stderr.write(line)
                sys.stderr.flush()

    relay_thread = threading.Thread(target=relay, daemon=True)
    relay_thread.start()
    stdout = process.stdout.read()
    process.wait()
    relay_thread.join()
    try:
        reply = json.loads(stdout)
    except ValueError:
        raise BuildError("".join(stderr) or
                         f"kernelc: internal error: kernelc exited with "
                         f"status {process.returncode} and no result",
                         kind="internal") from None
    if not reply["ok"]:
        error = reply["error"]
        raise BuildError(reply["diagnostics"], kind=error["kind"],
                         message=error["message"])
    return reply["result"]
