"""The CUDA half of kernelc.numba: each kernel compiled to PTX by
numba-cuda (with NVIDIA's NVVM from the CUDA toolkit), and handed to
kernelc's cuda target as a JSON spec whose kernels give their CUDA code as
PTX (README, "PTX kernels"). The build assembles the PTX with ptxas for
every requested architecture and embeds it, so the package that comes out
imports and launches with neither Numba nor NVVM.

Why PTX with the "numba" ABI, and no wrapper kernel: the kernel numba-cuda
compiles is the user's own, taking each array as Numba's array model
flattened into parameters (meminfo, parent, nitems, itemsize, data,
shape..., strides...). kernelc's CUDA handler fills exactly that block
(kc::cuda::NumbaArray), so the PTX runs as numba-cuda made it, with
everything numba-cuda supports on the GPU (shared arrays, barriers,
atomics, the math library), and kernelc checks the .entry's parameters
against the spec before ptxas sees it.

The spec places every text of the annotations (shapes, the grid, ...) at
its line and column in the kernel's .py file, and quotes those lines
under "origins": kernelc's errors in them name the .py file and point
into its line, as they do for the CPU path's C++ (whose #line directives
name the .py file).

With target "cpu,cuda" the spec names the CPU path's C++ source too
(kernelc._numba.numba_source), whose kernels the cpu target compiles.
Imported only when a Numba kernel is built for CUDA.
"""

import hashlib
import json
import os
import re
import warnings

from kernelc import _load, _numba

# The architectures kernelc builds for when none are given (the CLI's
# default, kDefaultCudaArchs).
_DEFAULT_ARCHS = "sm_80,sm_90"

_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")


def load(kernels, *, name, target, verbose, **build_options):
    """Builds `kernels` (with the backward kernels they name) for `target`
    ("cuda" or "cpu,cuda") as the package `name` and imports it."""
    kernels = _numba._closure(kernels)
    files = build_files(kernels, target=target,
                        cuda_arch=build_options.get("cuda_arch"))
    digest = hashlib.sha256(json.dumps(
        [name, sorted(files.items())]).encode()).hexdigest()[:24]
    directory = _load._cache_dir(build_options) / "numba" / digest
    for file_name, text in files.items():
        _load._write_once(directory / file_name, text)
    return _load.load(directory / "spec.json", name=name, target=target,
                      verbose=verbose, **build_options)


def build_files(kernels, *, target, cuda_arch):
    """The files of the build of `kernels` for `target` ("cuda" or
    "cpu,cuda") and `cuda_arch` (None: kernelc's default), by name."""
    return spec_files(kernels, cc=_lowest_cc(cuda_arch or _DEFAULT_ARCHS),
                      cpu="cpu" in target.split(","))


def spec_files(kernels, *, cc, cpu):
    """The files of the build, by name: spec.json, a .ptx per kernel and,
    with `cpu`, the CPU path's C++ source (kernels.cu)."""
    files = {}
    entries = []
    for k in kernels:
        ptx, entry = compile_ptx(k._spec, cc)
        files[f"{k.__name__}.ptx"] = ptx
        entries.append(_kernel_entry(k._spec.description, entry, cpu))
    if cpu:
        files["kernels.cu"] = _numba.numba_source(kernels)
    spec = {"kernels": entries,
            "origins": _origins(k._spec.description for k in kernels)}
    files["spec.json"] = json.dumps(spec, indent=2, sort_keys=True) + "\n"
    return files


def compile_ptx(spec, cc):
    """The PTX of `spec`'s kernel for compute capability `cc` (a pair), and
    its .entry's name. Arrays are C-contiguous, as XLA's buffers are; an In
    is read-only, so that Numba rejects a write to it."""
    # Imported here: only a CUDA build needs numba-cuda.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import numba
        from numba import cuda, types
    sig = []
    for p in spec.params:
        dtype = numba.from_dtype(p.dtype)
        if p.annotation.role == "scalar":
            sig.append(dtype)
        else:
            sig.append(types.Array(dtype, p.rank, "C",
                                   readonly=p.annotation.role == "in"))
    try:
        ptx, _ = cuda.compile_ptx(spec.fn, tuple(sig), cc=cc)
    except numba.core.errors.NumbaError as e:
        raise spec.where.error(
            spec.tree.lineno, spec.tree.col_offset,
            f"numba-cuda cannot compile kernel '{spec.name}':\n{e}") from None
    found = _ENTRY.search(ptx)
    if found is None:
        raise spec.where.error(
            spec.tree.lineno, spec.tree.col_offset,
            f"numba-cuda gave no kernel entry for '{spec.name}'")
    return ptx, found.group(1)


def _kernel_entry(d, entry, cpu):
    """The spec's entry of the kernel that `d` (a KernelDescription)
    describes, as the C++ kernel of the CPU path states it (views of the
    annotated ranks). Every name and text carries its place in the .py
    file (a "loc"), so kernelc's errors name the .py line and column."""
    path = _origin_path(d)
    params = []
    for p in d.params:
        at = _loc(path, p.line, p.column)
        param = {"name": p.name, "role": p.role, "dtype": p.dtype.name,
                 "loc": at}
        if p.role != "scalar":
            param.update(access="view", rank=p.rank,
                         shape=_spec_text(path, p.shape))
        if p.init is not None:
            param["init"] = {"text": p.init, "loc": at}
        params.append(param)
    kernel = {"name": d.name, "kind": "global", "loc": _loc(path, *d.name_at),
              "ptx": {"file": f"{d.name}.ptx", "entry": entry,
                      "abi": "numba"},
              "grid": [_spec_text(path, g) for g in d.grid], "params": params}
    if cpu:
        kernel["source"] = "kernels.cu"
    if d.block is not None:
        kernel["block"] = list(d.block)
    if d.elementwise:
        kernel["elementwise"] = True
    if d.vjp is not None:
        kernel["vjp"] = _spec_text(path, d.vjp)
    if d.parallel:
        kernel["parallel"] = [_spec_text(path, t) for t in d.parallel]
    return kernel


def _origins(descriptions):
    """The spec's "origins": the lines of each .py file that its kernels'
    places point into, their decorators and signatures (README, "Where a
    spec's texts come from"). kernelc quotes these under its errors and
    never reads the file; lines between two kernels are left empty, as no
    place points there."""
    quoted = {}
    for d in descriptions:
        quoted.setdefault(_origin_path(d), {}).update(
            enumerate(d.lines, start=d.line))
    return {path: {"first_line": min(lines),
                   "lines": [lines.get(n, "")
                             for n in range(min(lines), max(lines) + 1)]}
            for path, lines in quoted.items()}


def _origin_path(d):
    # Absolute: kernelc reads a relative "loc" in the spec's directory.
    return os.path.abspath(d.path)


def _loc(path, line, column):
    """A spec's "loc" for the 0-based `column` of `line`."""
    return f"{path}:{line}:{column + 1}"


def _spec_text(path, text):
    """A Text of the description as the spec's {"text", "loc"}."""
    return {"text": text.text, "loc": _loc(path, text.line, text.column)}


def _lowest_cc(archs):
    """The oldest of `archs` ("sm_80,sm_90") as numba-cuda's compute
    capability, (8, 0): PTX for it assembles for every newer one."""
    ccs = []
    for a in str(archs).split(","):
        a = a.strip()
        if not re.fullmatch(r"sm_\d{2,3}", a):
            # kernelc's own check reports it, as for any build.
            return (8, 0)
        n = int(a[3:])
        ccs.append((n // 10, n % 10))
    return min(ccs) if ccs else (8, 0)
