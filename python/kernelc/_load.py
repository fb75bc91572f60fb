"""load and load_inline: build through the cache, then import.

Where things go, under the build cache's directory (the `kernelc` command's
default, `$KERNELC_CACHE_DIR`, or `cache_dir=`):

    inline/<digest>/<name>.cu    the source of a load_inline call, by its
                                 name and text: the same call finds the same
                                 file, and so the same cache entry
    python/<library>/<package>/  each package that was loaded, by its
                                 library's name, which holds the content
                                 hash: a package directory is written once
                                 and never changed, so a module loaded from
                                 it keeps its files

A package is built into a scratch directory beside these and moved into
place when it is new: builds in other processes at the same time find
either no directory or a whole one.
"""

import hashlib
import importlib.util
import os
import pathlib
import shutil
import sys
import tempfile
import threading

from kernelc import _compiler

# The modules this process loaded, by package directory: the same build
# again gives the same module object.
_modules = {}
_lock = threading.RLock()


def load(*paths, name=None, target="cpu", verbose=None, **build_options):
    """Builds the annotated sources at `paths` and returns the imported
    package.

    `name` is the package's name (default: the first source's stem),
    `target` "cpu", "cuda" or "cpu,cuda"; other keyword arguments are the
    build options of `kernelc build` by their long names (`cuda_arch`,
    `use_fast_math`, `lineinfo`, `defines`, `include_dirs`, `no_cache`,
    `cache_dir`). `verbose` prints each stage of the build with its time on
    stderr (default: when stderr is a terminal).

    The build goes through kernelc's build cache: unchanged sources, headers
    and options run no compiler. The package is imported as `name` (and
    replaces an earlier one of that name in sys.modules); modules returned
    before keep working. Raises BuildError with kernelc's diagnostics when
    the sources do not build, TypeError for an unknown option or a value of
    the wrong type.
    """
    if not paths:
        raise TypeError("load() needs the path of at least one source")
    sources = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"load(): a source is a path, not "
                            f"{type(p).__name__}")
        sources.append(os.fspath(p))
    return _build_and_import(sources, dict(build_options, name=name,
                                           target=target),
                             cwd=None, verbose=verbose)


def load_inline(source, *, name, target="cpu", verbose=None, **build_options):
    """Builds the annotated kernel source text `source` as the package
    `name` and returns it imported: as load() does for a file, which this
    writes into the cache directory (diagnostics name it `<name>.cu`).
    Relative paths in the options (`include_dirs`) are taken from the
    working directory."""
    if not isinstance(source, str):
        raise TypeError(f"load_inline(): source is the kernel's text, a str, "
                        f"not {type(source).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"load_inline(): name is a str, not "
                        f"{type(name).__name__}")
    if not name.isidentifier():
        raise ValueError(f"load_inline(): name {name!r} is not a Python "
                         "package name")
    options = dict(build_options, name=name, target=target)
    digest = hashlib.sha256(f"{name}\0{source}".encode()).hexdigest()[:24]
    directory = _cache_dir(options) / "inline" / digest
    file_name = f"{name}.cu"
    _write_once(directory / file_name, source)
    return _build_and_import([file_name], options, cwd=directory,
                             verbose=verbose)


def _cache_dir(options):
    """The build cache's directory for a call with `options`, absolute."""
    given = options.get("cache_dir")
    if given is not None:
        if not isinstance(given, (str, os.PathLike)):
            raise TypeError(f"cache_dir: expected a str, not "
                            f"{type(given).__name__}")
        options["cache_dir"] = os.path.abspath(os.fspath(given))
        return pathlib.Path(options["cache_dir"])
    default = _compiler.option_table()["cache_dir"]
    if not default:
        raise _compiler.BuildError(
            "kernelc: error: no cache directory: set KERNELC_CACHE_DIR or "
            "pass cache_dir=")
    return pathlib.Path(default)


def _write_once(path, text):
    """Writes `text` to `path` unless it holds it already; atomically, for
    other processes that read it."""
    data = text.encode()
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _build_and_import(sources, options, *, cwd, verbose):
    if verbose is None:
        verbose = sys.stderr.isatty()
    modules_dir = _cache_dir(options) / "python"
    for managed in ("sources", "out_dir"):
        if managed in options:
            raise TypeError(f"unexpected keyword argument {managed!r} (the "
                            "sources are the arguments, and the output goes "
                            "into the cache directory)")
    # Checked before anything is built.
    args = ["build", *sources,
            *_compiler.command_line("build", options, cwd=cwd)]
    modules_dir.mkdir(parents=True, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".build-", dir=modules_dir)
    try:
        result = _compiler.run([*args, "-o", staging], cwd=cwd,
                               verbose=verbose)
        package = result["package"]
        final = modules_dir / pathlib.Path(result["library"]).stem
        if not final.is_dir():
            try:
                os.rename(staging, final)
            except OSError:
                if not final.is_dir():  # not another process's doing
                    raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    package_dir = final / package
    with _lock:
        module = _modules.get(package_dir)
        if module is None:
            module = _import(package, package_dir)
            _modules[package_dir] = module
        else:
            _install(package, module)
    module.__kernelc_build__ = _compiler.BuildInfo(
        package=package, package_dir=str(package_dir),
        library=result["library"], cache_hit=result["cache_hit"])
    return module


def _submodules(package):
    return [k for k in sys.modules if k == package or
            k.startswith(package + ".")]


def _install(package, module):
    """Makes `module` the package `package` in sys.modules, with its own
    submodules, in place of another one of that name."""
    for k in _submodules(package):
        del sys.modules[k]
    sys.modules.update(module.__kernelc_submodules__)


def _import(package, package_dir):
    """Imports the package at `package_dir` as `package`, a new module even
    when one of that name is loaded already: that one keeps its own
    submodules, library and registered FFI targets (whose names hold the
    content hash, so they do not collide)."""
    spec = importlib.util.spec_from_file_location(
        package, package_dir / "__init__.py",
        submodule_search_locations=[str(package_dir)])
    module = importlib.util.module_from_spec(spec)
    saved = {k: sys.modules.pop(k) for k in _submodules(package)}
    sys.modules[package] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for k in _submodules(package):
            del sys.modules[k]
        sys.modules.update(saved)
        raise
    module.__kernelc_submodules__ = {k: sys.modules[k]
                                     for k in _submodules(package)}
    return module
