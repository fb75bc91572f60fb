"""Numba kernels as kernelc ops: `kernelc.numba` and its annotations.

A Numba-CUDA-style Python kernel (`cuda.grid(1)`, `cuda.threadIdx.x`, ...)
whose parameters carry `In`, `InMut`, `Out` and `Scalar` annotations
becomes an ordinary kernelc build: Numba compiles the kernel's body ahead
of time as a per-thread function (thread and block indices are its last
arguments), LLVM emits it as x86-64 assembly, and a generated C++ kernel
with the same annotations calls it under kernelc's CPU grid executor, for
a row of a block's threads per call. A kernel with shared arrays or
barriers gets them from the C++ kernel instead (its `__shared__` arrays,
passed as pointers, and functions that call CUDA's barriers, which select
kernelc's block executor), and its function runs one thread. So the
package that comes out is the one the C++ path gives (shape checks at
trace time, vmap, grad through a declared backward kernel, sharding), and
importing it needs neither Numba nor a compiler.

Why assembly in the C++ source, and not an object file: the C++ kernel
source is the one input kernelc's build has, keyed by its content; Clang's
integrated assembler takes the function as a file-scope `asm` block, so
the build, its cache and its wheel need nothing new. The symbols are
hidden and named after the kernel, and local labels are renamed, so the
block links beside the C++ around it.

The annotations' lines in the .py file reach kernelc's diagnostics through
`#line` directives: an error in a shape expression names the Python file
and the annotation's line. What the decorator and the signature say is
read once into a KernelDescription, from which both this C++ and the cuda
target's JSON spec (kernelc._numba_ptx, which places the same texts in the
.py file by their "loc") are written.
"""

import ast
import dataclasses
import inspect
import pathlib
import textwrap
import threading

import numpy as np

from kernelc import _load
from kernelc._compiler import BuildError

# The C++ element type of each NumPy dtype a Numba kernel may use.
_CPP_TYPES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "int8_t",
    np.dtype(np.int16): "int16_t",
    np.dtype(np.int32): "int32_t",
    np.dtype(np.int64): "int64_t",
    np.dtype(np.uint8): "uint8_t",
    np.dtype(np.uint16): "uint16_t",
    np.dtype(np.uint32): "uint32_t",
    np.dtype(np.uint64): "uint64_t",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}

# The dtype strings pytorch-numba-extension-jit's annotations use (the
# width in bits: "i8" is int8 here, where NumPy would read int64).
_BIT_DTYPES = {f"{kind}{bits}": np.dtype(f"{kind}{bits // 8}")
               for kind, widths in (("i", (8, 16, 32, 64)),
                                    ("u", (8, 16, 32, 64)), ("f", (32, 64)))
               for bits in widths}

# The per-thread function's trailing arguments, in this order, and the
# CUDA indices they stand for.
_INDEX_ARGS = [f"__kc_{kind}_{axis}"
               for kind in ("tid", "bid", "bdim", "gdim")
               for axis in "xyz"]
_INDEX_SOURCES = {"threadIdx": "tid", "blockIdx": "bid", "blockDim": "bdim",
                  "gridDim": "gdim"}
_CPP_INDICES = ["threadIdx", "blockIdx", "blockDim", "gridDim"]

# The barriers a kernel may call (cuda.<name>), each with the `kind` by
# which the Numba function names it to the C++ kernel's barrier function,
# which calls CUDA's __<name>.
BARRIERS = {"syncthreads": 0, "syncthreads_count": 1, "syncthreads_and": 2,
            "syncthreads_or": 3}


class _Annotation:
    """A parameter's role; built by In, InMut, Out and Scalar."""

    role = ""
    init = None

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = shape

    def __repr__(self):
        parts = [repr(self.dtype)]
        if self.role != "scalar":
            parts.append(repr(self.shape))
        if self.init is not None:
            parts.append(f"init={self.init!r}")
        return f"kernelc.{type(self).__name__}({', '.join(parts)})"


class In(_Annotation):
    """An input tensor: `In(dtype, shape)`. `shape` is a tuple of ints,
    expression strings ("n", "n * 2") and None (any extent), a string of
    comma-separated dimensions ("n, m"), or another tensor parameter's name
    (the same shape)."""

    role = "in"


class InMut(_Annotation):
    """A tensor updated in place and returned: `InMut(dtype, shape)`."""

    role = "inmut"


class Out(_Annotation):
    """An output tensor allocated by XLA and returned:
    `Out(dtype, shape, init=None)`; `init` pre-fills it."""

    role = "out"

    def __init__(self, dtype, shape, init=None):
        super().__init__(dtype, shape)
        self.init = init


class Scalar(_Annotation):
    """A scalar parameter, a static attribute of the op: `Scalar(dtype)`."""

    role = "scalar"

    def __init__(self, dtype):
        super().__init__(dtype, None)


@dataclasses.dataclass
class _Param:
    name: str
    annotation: _Annotation
    line: int
    column: int
    cpp_type: str = ""
    dims: list = dataclasses.field(default_factory=list)  # None: a tensor name
    rank: int = 0
    # Where the shape's first string is in the .py file: (line, column).
    shape_at: tuple = None
    # The column of each dimension of a one-line tuple shape, or None.
    dim_columns: list = None


@dataclasses.dataclass(frozen=True)
class Text:
    """A string of a kernel's annotations as kernelc reads it, and where its
    first character is in the kernel's .py file: `line` and `column`
    (0-based). `literal`: the .py writes it there as a string literal, so
    that a position inside the text is the same inside the literal; else
    the place is the nearest one that the .py has (the parameter, the
    decorator)."""
    text: str
    line: int
    column: int
    literal: bool = False


@dataclasses.dataclass(frozen=True)
class ParamDescription:
    """A parameter as kernelc states it: `role` "in", "inmut", "out" or
    "scalar"; a tensor's `shape` as KC_SHAPE takes it, and `init` as KC_INIT
    does (an output's fill value, or None). `line` and `column` (0-based)
    are the parameter's name in the .py file."""
    name: str
    role: str
    dtype: np.dtype
    cpp_type: str
    rank: int
    line: int
    column: int
    shape: Text = None
    init: str = None


@dataclasses.dataclass(frozen=True)
class KernelDescription:
    """What the decorator and the Python signature say of one kernel, once:
    the C++ kernel of the CPU path (_KernelSpec.cpp) and the cuda target's
    spec entry (kernelc._numba_ptx) are both written from it. `line` is
    the first line of the kernel's source (its decorator), `name_at` the
    (line, column) of its name in the `def`; `lines` the .py lines from
    `line` through the signature, which hold every place of the
    description."""
    name: str
    path: str
    line: int
    name_at: tuple
    params: tuple
    grid: tuple  # of Text
    block: tuple = None  # of int; None: kernelc's default
    elementwise: bool = False
    vjp: Text = None  # the backward kernel's name
    parallel: tuple = ()  # of Text
    lines: tuple = ()


class _Located:
    """Clang-style diagnostics for a place in the kernel's .py file."""

    def __init__(self, path, lines):
        self.path = path
        self.lines = lines

    def error(self, line, column, message):
        text = f"{self.path}:{line}:{column + 1}: error: {message}\n"
        if 0 < line <= len(self.lines):
            source = self.lines[line - 1].rstrip("\n")
            text += f"{source}\n{' ' * column}^\n"
        return BuildError(text)


class NumbaKernel:
    """A kernel made by `kernelc.numba`: calling it runs the op (built on
    the first call for the decorator's target, through the build cache)."""

    def __init__(self, fn, options):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self._options = options
        self._lock = threading.Lock()
        self._function = None
        self._spec = _KernelSpec(fn, options)

    def __repr__(self):
        return f"<kernelc.numba kernel {self.__name__}>"

    def __call__(self, *args, **kwargs):
        return self.function()(*args, **kwargs)

    def function(self):
        """The generated package's JAX function of this kernel."""
        with self._lock:
            if self._function is None:
                module = load_numba([self], name=self.__name__,
                                    **self._options["build"])
                self._function = getattr(module, self.__name__)
            return self._function


def numba(fn=None, *, grid, block=None, vjp=None, parallel=None,
          elementwise=False, target="cpu", **build_options):
    """Makes a Numba-CUDA-style Python kernel a kernelc op.

        @kernelc.numba(grid="out.size")
        def add_one(x: kernelc.In(np.float32, ("n",)),
                    out: kernelc.Out(np.float32, "x")):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = x[i] + 1

    `grid` is the total threads per axis (an expression, or a tuple of up
    to three), as KC_GRID states it; `block` the threads per block (an int
    or a tuple); `vjp` another `kernelc.numba` kernel, the backward kernel
    (KC_VJP's conventions); `parallel` the shape symbols along which the
    work splits (KC_PARALLEL); `elementwise=True` is KC_ELEMENTWISE.
    `target` and the other keyword arguments are build options, as
    `kernelc.load` takes them. Supported inside the kernel: `cuda.grid`,
    `cuda.gridsize`, `cuda.threadIdx`, `cuda.blockIdx`, `cuda.blockDim`,
    `cuda.gridDim`, `cuda.atomic.add`, `cuda.shared.array` and
    `cuda.local.array` (constant shapes), `cuda.syncthreads` (and its
    `_count`, `_and` and `_or` forms) and `cuda.syncwarp`; on the CPU any
    other `cuda.` name is an error that names the line. For "cuda"
    numba-cuda compiles the kernel to PTX, which kernelc assembles for each
    `cuda_arch`, and whatever numba-cuda supports on the GPU works. Errors
    in the annotations raise BuildError naming the .py file and line."""
    _check_target(target)
    options = {"grid": grid, "block": block, "vjp": vjp,
               "parallel": parallel, "elementwise": elementwise,
               "build": dict(build_options, target=target)}
    if fn is None:
        return lambda f: NumbaKernel(f, options)
    return NumbaKernel(fn, options)


def load_numba(kernels, *, name, target="cpu", verbose=None,
               **build_options):
    """Builds `kernels` (made by `kernelc.numba`, with the backward kernels
    they name) into one package `name` and returns it imported, as
    `kernelc.load_inline` does."""
    _check_target(target)
    if "cuda" in target.split(","):
        # Imported here: the CPU path needs none of it.
        from kernelc import _numba_ptx
        return _numba_ptx.load(kernels, name=name, target=target,
                               verbose=verbose, **build_options)
    return _load.load_inline(_source(_closure(kernels)), name=name,
                             target=target, verbose=verbose,
                             **build_options)


def numba_source(kernels):
    """The C++ source of `kernels` (and the backward kernels they name):
    write it to a file and build it with `kernelc build` (or `kernelc.load`)
    to get the package and its wheel. The source holds the compiled kernels
    as assembly, so the build needs no Numba."""
    return _source(_closure(kernels))


def write_numba(kernels, directory, *, target="cpu", cuda_arch=None):
    """Writes into `directory` what `kernelc build` and `kernelc wheel` (or
    `kernelc.load`) take to build `kernels` (and the backward kernels they
    name) for `target`, and returns the path to give them: for "cpu" the C++
    source `kernels.cu` (numba_source's text); for "cuda" and "cpu,cuda" the
    JSON spec `spec.json`, beside numba-cuda's PTX of each kernel for the
    oldest of `cuda_arch` (default sm_80,sm_90) and, for "cpu,cuda",
    `kernels.cu`. The files hold the compiled kernels, so building them
    needs no Numba; build them with the same `--target` and
    `--cuda-arch`."""
    _check_target(target)
    kernels = _closure(kernels)
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if "cuda" in target.split(","):
        from kernelc import _numba_ptx
        files = _numba_ptx.build_files(kernels, target=target,
                                       cuda_arch=cuda_arch)
        entry = "spec.json"
    else:
        files = {"kernels.cu": _source(kernels)}
        entry = "kernels.cu"
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory / entry


def _closure(kernels):
    """`kernels` and the backward kernels they name, once each, in order."""
    seen = {}
    pending = list(kernels)
    while pending:
        k = pending.pop(0)
        if not isinstance(k, NumbaKernel):
            raise TypeError(f"not a kernelc.numba kernel: {k!r}")
        if seen.setdefault(k.__name__, k) is not k:
            raise TypeError(f"two kernels named {k.__name__!r}")
        if k._options["vjp"] is not None:
            pending.append(k._options["vjp"])
    return list(seen.values())


def _source(kernels):
    return "\n".join(["// Numba kernels, compiled by kernelc.numba.\n"
                      "#include <kernelc.h>\n#include <cstdint>\n",
                      *(k._spec.cpp() for k in kernels)])


class _KernelSpec:
    """One kernel's parameters, read from the annotations, and its C++."""

    def __init__(self, fn, options):
        self.fn = fn
        self.name = fn.__name__
        # The Numba function's symbol, which the C++ kernel calls.
        self.symbol = f"kc_numba_{self.name}"
        self.options = options
        self.path = inspect.getsourcefile(fn) or fn.__code__.co_filename
        lines, first = inspect.getsourcelines(fn)
        self.first_line = first
        self.file_lines = _file_lines(self.path, lines, first)
        self.where = _Located(self.path, self.file_lines)
        self.tree = _function_def(lines, first, self.name)
        self.params = self._read_params()
        self.description = self._describe()
        self._cpp = None

    def _read_params(self):
        tree = self.tree
        params = []
        args = tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.where.error(
                tree.lineno, tree.col_offset,
                f"kernel '{self.name}' takes only plain parameters")
        annotations = self.fn.__annotations__
        for a in args.args:
            ann = annotations.get(a.arg)
            if not isinstance(ann, _Annotation):
                raise self.where.error(
                    a.lineno, a.col_offset,
                    f"parameter '{a.arg}' of kernel '{self.name}' needs an "
                    "annotation: kernelc.In, kernelc.InMut, kernelc.Out or "
                    "kernelc.Scalar")
            p = _Param(a.arg, ann, a.lineno, a.col_offset)
            p.shape_at = _shape_place(a.annotation)
            p.dim_columns = _dim_columns(a.annotation)
            dtype = _dtype(ann.dtype)
            if dtype not in _CPP_TYPES:
                raise self.where.error(
                    a.lineno, a.col_offset,
                    f"parameter '{a.arg}': element type {ann.dtype!r} is not "
                    "one of " + ", ".join(str(d) for d in _CPP_TYPES))
            if ann.role == "scalar" and dtype == np.dtype(np.bool_):
                raise self.where.error(
                    a.lineno, a.col_offset,
                    f"parameter '{a.arg}': a bool scalar is not supported; "
                    "use an integer")
            p.cpp_type = _CPP_TYPES[dtype]
            p.dtype = dtype
            if ann.role != "scalar":
                p.dims = self._dims(p)
            params.append(p)
        by_name = {p.name: p for p in params}
        for p in params:
            p.rank = self._rank(p, by_name, set())
        return params

    def _dims(self, p):
        shape = p.annotation.shape
        if isinstance(shape, str):
            shape = shape.strip()
            other = self.fn.__annotations__.get(shape)
            if isinstance(other, _Annotation) and other.role != "scalar":
                return None  # the shape of another tensor
            return [d.strip() for d in shape.split(",")] if shape else []
        if isinstance(shape, int) and not isinstance(shape, bool):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)):
            raise self.where.error(
                p.line, p.column,
                f"parameter '{p.name}': a shape is a tuple of ints, "
                f"expression strings and None, or a string, not {shape!r}")
        dims = []
        for d in shape:
            if d is None:
                dims.append("_")
            elif isinstance(d, int) and not isinstance(d, bool):
                dims.append(str(d))
            elif isinstance(d, str) and "," not in d:
                dims.append(d.strip())
            else:
                raise self.where.error(
                    p.line, p.column,
                    f"parameter '{p.name}': dimension {d!r} of its shape is "
                    "not an int, an expression string or None")
        return dims

    def _rank(self, p, by_name, visiting):
        if p.annotation.role == "scalar":
            return 0
        if p.dims is not None:
            if any(d.startswith("...") for d in p.dims):
                raise self.where.error(
                    p.line, p.column,
                    f"parameter '{p.name}': '...' shapes are not supported "
                    "by kernelc.numba (the kernel's arrays need a rank)")
            return len(p.dims)
        other = by_name[p.annotation.shape.strip()]
        if other.name in visiting or other.annotation.role == "scalar":
            raise self.where.error(
                p.line, p.column,
                f"parameter '{p.name}': shape {other.name!r} names no "
                "tensor with a shape of its own")
        return self._rank(other, by_name, visiting | {p.name})

    def _describe(self):
        """The kernel's description, from the decorator's options and the
        parameters read from the signature."""
        o = self.options
        params = tuple(
            ParamDescription(
                name=p.name, role=p.annotation.role, dtype=p.dtype,
                cpp_type=p.cpp_type, rank=p.rank, line=p.line,
                column=p.column,
                shape=(None if p.annotation.role == "scalar" else
                       _text_at(self._shape_text(p), p.shape_at,
                                (p.line, p.column))),
                init=(None if p.annotation.init is None else
                      _init_text(p.annotation.init)))
            for p in self.params)
        decorator = (self.first_line, 0)
        grid = _as_tuple(o["grid"])
        grid_literals = _keyword_strings(self.tree, "grid")
        block = o["block"]
        parallel = o["parallel"]
        parallel = (parallel,) if isinstance(parallel, str) else parallel
        parallel_literals = _keyword_strings(self.tree, "parallel")
        vjp = None
        if o["vjp"] is not None:
            # What is not a kernel is reported when the build gathers the
            # kernels (_closure).
            vjp = Text(getattr(o["vjp"], "__name__", repr(o["vjp"])),
                       *(_keyword_value_place(self.tree, "vjp") or decorator))
        # The signature ends before the body, or on the line of its
        # last annotation where the body follows on that line.
        end = max([self.tree.lineno, self.tree.body[0].lineno - 1] + [
            a.annotation.end_lineno for a in self.tree.args.args
            if a.annotation is not None])
        return KernelDescription(
            name=self.name, path=self.path, line=self.first_line,
            name_at=_name_place(self.tree, self.file_lines),
            params=params,
            grid=tuple(_text_at(str(g), _nth(grid_literals, i), decorator)
                       for i, g in enumerate(grid)),
            block=(None if block is None else
                   tuple(int(b) for b in _as_tuple(block))),
            elementwise=bool(o["elementwise"]),
            vjp=vjp,
            parallel=tuple(
                _text_at(t, _nth(parallel_literals, i), decorator)
                for i, t in enumerate(parallel or ())),
            lines=tuple(line.rstrip("\r\n") for line in
                        self.file_lines[self.first_line - 1:end]))

    def _shape_text(self, p):
        """The shape as KC_SHAPE takes it. Where the annotation writes the
        dimensions as a tuple on one line, each starts at its distance from
        the first in the .py line (the shape grammar ignores blanks), so a
        caret into the text lands in the Python source."""
        if p.dims is None:
            return p.annotation.shape.strip()
        columns = p.dim_columns
        if not columns or len(columns) != len(p.dims):
            return ", ".join(p.dims)
        text = ""
        for dim, column in zip(p.dims, columns):
            if text:
                text += ","
            text += " " * max(column - columns[0] - len(text), 1 if text
                              else 0) + dim
        return text

    def cpp(self):
        """The kernel's C++: Numba's assembly and the annotated kernel that
        calls it. Compiled once (Numba takes a while)."""
        if self._cpp is None:
            # Imported here: only a build needs Numba.
            from kernelc import _numba_compile
            self._cpp = self._wrapper(
                self.symbol, _numba_compile.compile_kernel(self, self.symbol))
        return self._cpp

    def _wrapper(self, symbol, compiled):
        d = self.description
        path = _c_string(d.path)
        decl_args = ["void**", "void**"]
        call_args = ["&kc_result", "&kc_error"]
        cpp_params = []
        for p in d.params:
            if p.role == "scalar":
                decl_args.append(p.cpp_type)
                call_args.append(p.name)
                cpp_params.append(f"#line {p.line} {path}\n"
                                  f"    {p.cpp_type} {p.name}")
                continue
            view = {"in": "In", "inmut": "InMut", "out": "Out"}[p.role]
            init = "" if p.init is None else f" KC_INIT({p.init})"
            cpp_params.append(_placed(
                p.shape, f"KC_SHAPE({_c_string(p.shape.text)}){init} "
                f"kc::{view}<{p.cpp_type}, {p.rank}> {p.name}", path))
            decl_args.append(("const " if p.role == "in" else "") +
                             p.cpp_type + "*")
            call_args.append(p.name + ".data")
            for i in range(p.rank):
                decl_args.append("int64_t")
                call_args.append(f"{p.name}.shape[{i}]")
        for i, shared in enumerate(compiled.shared):
            decl_args.append(_CPP_TYPES[shared.dtype] + "*")
            call_args.append(f"kc_shared{i}")
        decl_args += ["int64_t"] * len(_INDEX_ARGS)
        call_args += [f"{idx}.{axis}" for idx in _CPP_INDICES
                      for axis in "xyz"]
        # The first text places the whole KC_GRID.
        first = d.grid[0] if d.grid else Text("", d.line, 0)
        attrs = [_placed(first, "KC_GRID(" + ", ".join(
            _c_string(g.text) for g in d.grid) + ")", path)]
        if d.block is not None:
            attrs.append("KC_BLOCK(" + ", ".join(str(b) for b in d.block)
                         + ")")
        if d.elementwise:
            attrs.append("KC_ELEMENTWISE")
        if d.vjp is not None:
            attrs.append(f'KC_VJP("{d.vjp.text}")')
        if d.parallel:
            attrs.append("KC_PARALLEL(" +
                         ", ".join(_c_string(t.text) for t in d.parallel)
                         + ")")
        head = "\n".join(a if a.startswith("#line") else
                         f"#line {d.line} {path}\n{a}" for a in attrs)
        top = (f"// kernel {self.name}\n"
               f'extern "C" int32_t {symbol}({", ".join(decl_args)});\n'
               f'asm(R"kc_asm(\n{compiled.assembly})kc_asm");\n')
        signature = (f"__global__ void {self.name}(\n" +
                     ",\n".join(cpp_params) + ") {\n")
        call = (
            "  void* kc_result = nullptr;\n"
            "  void* kc_error = nullptr;\n"
            f"  {symbol}({', '.join(call_args)});\n"
            "}\n")
        if compiled.per_thread:
            return (top + _block_support(symbol, compiled) + f"{head}\n" +
                    signature + _block_body(symbol, compiled, path) + call)
        return (
            top + f"{head}\n" + signature +
            "  // The first thread of each row of the block runs the row\n"
            "  // (see the Numba function's comment in kernelc/_numba_compile.py).\n"
            "  // The status is never an error: the body is compiled with\n"
            "  // NumPy's error model and no bounds checks.\n"
            "  if (threadIdx.x != 0) return;\n" + call)


def _block_support(symbol, compiled):
    """The C functions through which the Numba function `symbol` calls
    CUDA's barriers (kernelc/block.h): `<symbol>_barrier(kind, predicate)`
    (`kind` from BARRIERS) and `<symbol>_syncwarp(mask)`, those it calls.
    Hidden, so that they link only with the function's assembly."""
    text = ""
    if compiled.barrier:
        cases = "".join(
            f"    case {kind}: return __{name}(predicate);\n"
            for name, kind in BARRIERS.items() if name != "syncthreads")
        text += (
            'extern "C" __attribute__((visibility("hidden"))) int32_t\n'
            f"{symbol}_barrier(int32_t kind, int32_t predicate) {{\n"
            "  switch (kind) {\n" + cases +
            "    default: __syncthreads(); return 0;\n"
            "  }\n"
            "}\n")
    if compiled.syncwarp:
        text += (
            'extern "C" __attribute__((visibility("hidden"))) void\n'
            f"{symbol}_syncwarp(uint32_t mask) {{ __syncwarp(mask); }}\n")
    return text


def _block_body(symbol, compiled, path):
    """The start of the body of a C++ kernel whose Numba function runs one
    thread: each thread calls it, under kernelc's block executor, which the
    kernel's shared arrays or its naming of the barrier functions select
    (kernelc's frontend looks for both)."""
    text = ""
    for i, shared in enumerate(compiled.shared):
        align = f"alignas({shared.alignment}) " if shared.alignment else ""
        text += (f"#line {shared.line} {path}\n"
                 f"  {align}__shared__ {_CPP_TYPES[shared.dtype]} "
                 f"kc_shared{i}[{shared.size}];\n")
    for function, used in (("barrier", compiled.barrier),
                           ("syncwarp", compiled.syncwarp)):
        if used:
            text += (f"  // Called by {symbol}: named here so that kernelc\n"
                     "  // finds the barrier and runs the kernel under its\n"
                     "  // block executor.\n"
                     f"  (void)&{symbol}_{function};\n")
    return text


def _dtype(given):
    """The NumPy dtype of an annotation's element type, or None."""
    if isinstance(given, str) and given in _BIT_DTYPES:
        return _BIT_DTYPES[given]
    try:
        return np.dtype(given)
    except TypeError:
        return None


def _check_target(target):
    """kernelc.numba builds for the CPU (Numba's x86 assembly in C++), for
    CUDA (numba-cuda's PTX, kernelc._numba_ptx) or for both."""
    if target not in ("cpu", "cuda", "cpu,cuda"):
        raise ValueError(f"kernelc.numba: target {target!r}: Numba kernels "
                         "build for 'cpu', 'cuda' or 'cpu,cuda'")


def _file_lines(path, lines, first):
    try:
        with open(path, encoding="utf-8") as f:
            return f.readlines()
    except OSError:
        return [""] * (first - 1) + list(lines)


def _function_def(lines, first, name):
    """The kernel's `def` (decorators included), with the lines and columns
    of the file."""
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    indent = len(lines[0]) - len(lines[0].lstrip())
    for node in ast.walk(tree):
        if hasattr(node, "col_offset"):
            node.col_offset += indent
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise TypeError(f"kernelc.numba: no definition of {name} in its source")


def _shape_place(annotation):
    """The (line, column) of the first string in an annotation's shape, as
    `In(dtype, ("n", 4))` or `Out(dtype, shape="x")` writes it; None where
    it is written otherwise."""
    if not isinstance(annotation, ast.Call):
        return None
    shape = annotation.args[1] if len(annotation.args) > 1 else next(
        (k.value for k in annotation.keywords if k.arg == "shape"), None)
    return _string_place(shape)


def _dim_columns(annotation):
    """The columns of a tuple shape's dimensions (where a string's text
    starts), when all are constants on one line; else None."""
    if not isinstance(annotation, ast.Call) or len(annotation.args) < 2:
        return None
    shape = annotation.args[1]
    if not isinstance(shape, ast.Tuple) or not shape.elts:
        return None
    columns = []
    for e in shape.elts:
        if not isinstance(e, ast.Constant) or e.lineno != shape.elts[0].lineno:
            return None
        columns.append(e.col_offset + (1 if isinstance(e.value, str) else 0))
    return columns


def _string_place(node):
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        node = node.elts[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.lineno, node.col_offset
    return None


def _decorator_keyword(function_def, keyword):
    """The value of the decorator's `keyword=`, or None."""
    for decorator in function_def.decorator_list:
        if isinstance(decorator, ast.Call):
            for k in decorator.keywords:
                if k.arg == keyword:
                    return k.value
    return None


def _keyword_strings(function_def, keyword):
    """The (line, column) of each string the decorator's `keyword=` writes
    (one, or the elements of a tuple or list), None for an element that is
    no string literal."""
    value = _decorator_keyword(function_def, keyword)
    if value is None:
        return []
    nodes = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    return [_string_place(n) for n in nodes]


def _keyword_value_place(function_def, keyword):
    """The (line, column) where the value of the decorator's `keyword=`
    starts, or None."""
    value = _decorator_keyword(function_def, keyword)
    return None if value is None else (value.lineno, value.col_offset)


def _name_place(function_def, file_lines):
    """The (line, column) of the kernel's name in its `def`."""
    line = function_def.lineno
    text = file_lines[line - 1] if 0 < line <= len(file_lines) else ""
    column = text.find(function_def.name, function_def.col_offset)
    return line, column if column >= 0 else function_def.col_offset


def _nth(items, i):
    return items[i] if i < len(items) else None


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _text_at(text, literal, otherwise):
    """`text` at the (line, column) of the string literal `literal` (its
    quote) where the .py writes one, else at `otherwise`."""
    if literal is not None:
        return Text(text, literal[0], literal[1] + 1, literal=True)
    return Text(text, *otherwise)


def _placed(text, cpp, path):
    """`cpp` (a line of C++ that starts with a string literal after a
    macro's name, `text`'s) under a #line for `text`'s place, padded so
    that the literal starts at the column of the Python string it came
    from: kernelc's caret then points into the .py line."""
    macro = cpp.index('"')
    quote = text.column - 1
    pad = quote - macro if text.literal and quote >= macro else 0
    return f"#line {text.line} {path}\n{' ' * pad}{cpp}"


def _c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _init_text(value):
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return repr(float(value))


__all__ = ["In", "InMut", "Out", "Scalar", "numba", "load_numba",
           "numba_source", "NumbaKernel"]
