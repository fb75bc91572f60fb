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

With target "cpu,cuda" the spec names the CPU path's C++ source too
(kernelc._numba.numba_source), whose kernels the cpu target compiles.
Imported only when a Numba kernel is built for CUDA.
"""

import hashlib
import json
import re
import warnings

from kernelc import _compiler, _load, _numba

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
    try:
        return _load.load(directory / "spec.json", name=name, target=target,
                          verbose=verbose, **build_options)
    except _compiler.BuildError as e:
        located = _located_annotation_errors(kernels, directory)
        if located is None:
            raise
        raise located from e


def _located_annotation_errors(kernels, directory):
    """kernelc places a spec's mistakes in spec.json. The same annotations,
    in the CPU path's C++ kernels, are placed in the kernels' .py files
    (#line): when `kernelc inspect` of those kernels, with no code behind
    them, finds errors, they are the BuildError to raise; else None."""
    path = directory / "annotations.cu"
    _load._write_once(path, _annotations_source(kernels))
    try:
        _compiler.run(["inspect", str(path)], cwd=directory)
    except _compiler.BuildError as e:
        return e if e.kind == "user" else None
    return None


def _annotations_source(kernels):
    """The CPU path's C++ source of `kernels` (kernelc._numba), each kernel's
    Numba function empty: what its annotations say, without compiling it."""
    from kernelc import _numba_compile
    empty = _numba_compile.CompiledKernel(assembly="")
    return _numba.source_of(k._spec._wrapper(k._spec.symbol, empty)
                            for k in kernels)


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
    files["spec.json"] = json.dumps({"kernels": entries}, indent=2,
                                    sort_keys=True) + "\n"
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
    annotated ranks)."""
    params = []
    for p in d.params:
        param = {"name": p.name, "role": p.role, "dtype": p.dtype.name}
        if p.role != "scalar":
            param.update(access="view", rank=p.rank, shape=p.shape.text)
        if p.init is not None:
            param["init"] = p.init
        params.append(param)
    kernel = {"name": d.name, "kind": "global",
              "ptx": {"file": f"{d.name}.ptx", "entry": entry,
                      "abi": "numba"},
              "grid": [g.text for g in d.grid], "params": params}
    if cpu:
        kernel["source"] = "kernels.cu"
    if d.block is not None:
        kernel["block"] = list(d.block)
    if d.elementwise:
        kernel["elementwise"] = True
    if d.vjp is not None:
        kernel["vjp"] = d.vjp.text
    if d.parallel:
        kernel["parallel"] = [t.text for t in d.parallel]
    return kernel


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
