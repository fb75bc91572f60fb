"""The Numba half of kernelc.numba: the kernel's body as a function that
runs a row of a block's threads (or, for a kernel with shared arrays or
barriers, one thread), compiled by Numba and emitted by LLVM as assembly.
Imported only when a Numba kernel is built, so `import kernelc` needs no
Numba."""

import ast
import copy
import ctypes
import dataclasses
import re
import threading

import llvmlite.binding as llvm
import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from kernelc import _numba

# The x86-64 baseline, not the building machine's CPU: a package (or its
# wheel) runs on any x86-64 machine.
_TRIPLE = "x86_64-unknown-linux-gnu"
_CPU = "x86-64"

# What the C++ kernel's view types hand the per-thread function.
_INDEX_TYPE = types.int64

# The most static shared memory a kernel may declare, in bytes: CUDA's
# limit, kc::host::kMaxStaticSharedBytes (kernelc/block.h).
MAX_SHARED_BYTES = 48 * 1024

# Numba links every function it compiles into its JIT, which must resolve
# the barrier functions the generated C++ defines: these stand in for them,
# with their meaning in a block of one thread. Never called: kernelc takes
# the function's assembly, not the JIT's code.
_BARRIER_STAND_IN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32,
                                     ctypes.c_int32)(
    lambda kind, predicate: predicate if kind else 0)
_SYNCWARP_STAND_IN = ctypes.CFUNCTYPE(None, ctypes.c_uint32)(
    lambda mask: None)


def _external(name, signature, stand_in):
    """The C function `name` for Numba to call, known to its JIT as
    `stand_in`."""
    llvm.add_symbol(name, ctypes.cast(stand_in, ctypes.c_void_p).value)
    return types.ExternalFunction(name, signature)


@dataclasses.dataclass(frozen=True)
class SharedArray:
    """A `cuda.shared.array` of the kernel: one per call in the source,
    one copy per block."""

    dtype: object  # a NumPy dtype
    shape: tuple
    alignment: int  # 0: the element type's
    line: int
    column: int

    @property
    def size(self):
        count = 1
        for extent in self.shape:
            count *= extent
        return count


@dataclasses.dataclass(frozen=True)
class CompiledKernel:
    """What Numba made of a kernel: the assembly of its function and what
    the C++ kernel that calls it must provide. With neither shared arrays
    nor barriers the function runs a row of a block's threads (see
    compile_kernel); otherwise one thread, with the shared arrays' data
    pointers after the tensors and scalars."""

    assembly: str
    shared: tuple = ()  # SharedArray, in the source's order
    barrier: bool = False  # calls `<symbol>_barrier(kind, predicate)`
    syncwarp: bool = False  # calls `<symbol>_syncwarp(mask)`

    @property
    def per_thread(self):
        return bool(self.shared) or self.barrier or self.syncwarp


@intrinsic
def _atomic_add(typingctx, array, index, value):
    """cuda.atomic.add on the CPU: blocks run on several OS threads at
    once, so the sum is an atomic read-modify-write (relaxed, as CUDA's)."""
    if not isinstance(array, types.Array):
        return None
    dtype = array.dtype
    if not isinstance(dtype, (types.Integer, types.Float)):
        return None
    sig = dtype(array, index, value)

    def codegen(context, builder, signature, args):
        array_type, index_type, value_type = signature.args
        a, i, v = args
        view = context.make_array(array_type)(context, builder, a)
        if isinstance(index_type, types.BaseTuple):
            indices = cgutils.unpack_tuple(builder, i, len(index_type))
            index_types = list(index_type)
        else:
            indices, index_types = [i], [index_type]
        indices = [context.cast(builder, x, t, types.intp)
                   for x, t in zip(indices, index_types)]
        ptr = cgutils.get_item_pointer(context, builder, array_type, view,
                                       indices, wraparound=True)
        v = context.cast(builder, v, value_type, dtype)
        op = "fadd" if isinstance(dtype, types.Float) else "add"
        return builder.atomic_rmw(op, ptr, v, "monotonic")

    return sig, codegen


# compile_kernel's results, by what determines them (_cache_key); guarded
# by _CACHE_LOCK. Numba takes a while, and one kernel is often built into
# several packages, or decorated again with other build options.
_CACHE = {}
_CACHE_LOCK = threading.Lock()


def compile_kernel(spec, symbol):
    """`spec`'s kernel compiled as the function `symbol`, once per process
    for what determines the result: the kernel's source and place, its
    parameters, the values of the globals it names, Numba's and LLVM's
    versions and the target. A kernel that names a global that cannot be a
    key (an array) is compiled each time."""
    key = _cache_key(spec, symbol)
    with _CACHE_LOCK:
        if key is None:
            return _compile(spec, symbol)
        if key not in _CACHE:
            _CACHE[key] = _compile(spec, symbol)
        return _CACHE[key]


def _cache_key(spec, symbol):
    names = sorted({n.id for statement in spec.tree.body
                    for n in ast.walk(statement) if isinstance(n, ast.Name)})
    values = []
    for name in names:
        if name in spec.fn.__globals__:
            value = spec.fn.__globals__[name]
            # The type too: 1, 1.0 and True are equal keys.
            values.append((name, type(value), value))
    params = tuple((p.name, p.annotation.role, str(p.dtype), p.rank)
                   for p in spec.params)
    # The body, with its places (the shared arrays' lines reach the C++),
    # not the decorator: the build options do not change the function.
    body = tuple(ast.dump(n, include_attributes=True) for n in spec.tree.body)
    key = (spec.path, body, params,
           tuple(values), symbol, numba.__version__, llvm.llvm_version_info,
           _TRIPLE, _CPU)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _compile(spec, symbol):
    """The kernel as the function `symbol`, Numba's native calling
    convention: int32_t symbol(void**, void**, <each tensor's data pointer
    and extents, each scalar>, <each shared array's data pointer, for a
    per-thread function>, <threadIdx, blockIdx, blockDim, gridDim: x, y, z
    each, as int64_t>).

    Without shared arrays or barriers the function runs the threads of one
    row of a block (threadIdx.x from 0 to blockDim.x; the argument is
    unused): the C++ kernel calls it from the row's first thread, so that
    LLVM inlines the body into the row's loop and vectorizes it, as Clang
    does for a C++ kernel in kernelc's thread loop. The threads of such a
    block are independent, so running a row in order is a valid schedule.
    With them, the threads are not: the function runs one thread, and the
    C++ kernel calls it from each under kernelc's block executor, whose
    fibers the barriers switch."""
    tree, arg_types, features = _thread_function(spec, symbol)
    module = ast.Module(body=[tree], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace = dict(spec.fn.__globals__)
    namespace.update(features.globals)
    exec(compile(module, spec.path, "exec"), namespace)
    compiled = CompiledKernel("", tuple(features.shared), features.barrier,
                              features.syncwarp)
    entry = namespace[tree.name]
    if not compiled.per_thread:
        names = [a.arg for a in tree.args.args]
        row = ast.parse(
            f"def __kc_row_{spec.name}({', '.join(names)}):\n"
            f"    for __kc_t in range(__kc_bdim_x):\n"
            f"        {tree.name}("
            + ", ".join("__kc_t" if n == "__kc_tid_x" else n for n in names)
            + ")\n").body[0]
        namespace[tree.name] = numba.njit(error_model="numpy",
                                          no_cpython_wrapper=True)(entry)
        exec(compile(ast.Module(body=[row], type_ignores=[]), "<kernelc>",
                     "exec"), namespace)
        entry = namespace[row.name]
    signature = types.void(*arg_types)
    try:
        dispatcher = numba.njit(signature, error_model="numpy",
                                no_cpython_wrapper=True,
                                no_cfunc_wrapper=True)(entry)
    except numba.core.errors.NumbaError as e:
        raise spec.where.error(
            spec.tree.lineno, spec.tree.col_offset,
            f"Numba cannot compile kernel '{spec.name}':\n{e}") from None
    result = dispatcher.overloads[tuple(arg_types)]
    return dataclasses.replace(compiled, assembly=_assembly(
        spec, result.library.get_llvm_str(), result.fndesc.llvm_func_name,
        symbol))


def _thread_function(spec, symbol):
    """The kernel as a per-thread Python function: its arrays rebuilt from
    pointers and extents, the cuda.* indices as arguments, its shared
    arrays from pointers after the tensors' and scalars'. Returns the
    function, its argument types and the _Rewriter, which says what the
    kernel uses and the names the function needs."""
    rewriter = _Rewriter(spec, symbol)
    tree = rewriter.visit(copy.deepcopy(spec.tree))
    tree.name = f"__kc_thread_{spec.name}"
    tree.decorator_list = []
    tree.returns = None
    args, arg_types, prologue = [], [], []

    def array(name, dtype, shape):
        pointer = f"{name}__kc_data"
        args.append(pointer)
        arg_types.append(types.CPointer(numba.from_dtype(dtype)))
        prologue.append(f"{name} = __kc_carray({pointer}, {shape})")

    for p in spec.params:
        if p.annotation.role == "scalar":
            args.append(p.name)
            arg_types.append(numba.from_dtype(p.dtype))
            continue
        extents = [f"{p.name}__kc_extent{d}" for d in range(p.rank)]
        array(p.name, p.dtype, "(" + "".join(e + ", " for e in extents) + ")")
        args += extents
        arg_types += [_INDEX_TYPE] * p.rank
    for i, shared in enumerate(rewriter.shared):
        array(f"__kc_shared{i}", shared.dtype, repr(shared.shape))
    args += _numba._INDEX_ARGS
    arg_types += [_INDEX_TYPE] * len(_numba._INDEX_ARGS)
    tree.args = ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=a) for a in args], vararg=None,
        kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    first = tree.body[0]
    statements = [ast.parse(s).body[0] for s in prologue]
    for s in statements:
        ast.copy_location(s, first)
        for node in ast.walk(s):
            ast.copy_location(node, first)
    tree.body = statements + tree.body
    return tree, arg_types, rewriter


def _stack_array(count, dtype):
    """An intrinsic that returns a pointer to `count` elements of `dtype`
    on the calling function's stack: cuda.local.array's storage, allocated
    once in the function's entry block (and so once per thread, wherever
    the call is)."""

    @intrinsic
    def stack_array(typingctx):
        def codegen(context, builder, signature, args):
            return cgutils.alloca_once(builder, context.get_data_type(dtype),
                                       size=count)

        return types.CPointer(dtype)(), codegen

    return stack_array


class _Rewriter(ast.NodeTransformer):
    """cuda.grid(n), cuda.gridsize(n), cuda.threadIdx.x (and blockIdx,
    blockDim, gridDim) as the per-thread function's index arguments;
    cuda.atomic.add as an atomic sum; cuda.shared.array as an array on a
    pointer the C++ kernel passes (recorded in `shared`); cuda.local.array
    as an array on the thread's stack; the barriers as calls of the C++
    kernel's functions `<symbol>_barrier` and `<symbol>_syncwarp`
    (`barrier`, `syncwarp` say which it calls). Any other use of `cuda` is
    an error at its line. `globals`: the names the rewritten function
    needs besides the kernel's module's."""

    _SUPPORTED = ("cuda.grid, cuda.gridsize, cuda.threadIdx, cuda.blockIdx, "
                  "cuda.blockDim, cuda.gridDim, cuda.atomic.add, "
                  "cuda.shared.array, cuda.local.array, cuda.syncthreads, "
                  "cuda.syncthreads_count, cuda.syncthreads_and, "
                  "cuda.syncthreads_or, cuda.syncwarp")

    def __init__(self, spec, symbol):
        self.spec = spec
        self.names = {name for name, value in spec.fn.__globals__.items()
                      if getattr(value, "__name__", None) == "numba.cuda"}
        self.names.add("cuda")
        self.shared = []
        self.shared_bytes = 0
        self.locals = 0
        self.barrier = False
        self.syncwarp = False
        self.globals = {
            "__kc_carray": numba.carray,
            "__kc_atomic_add": _atomic_add,
            "__kc_barrier": _external(
                f"{symbol}_barrier", types.int32(types.int32, types.int32),
                _BARRIER_STAND_IN),
            "__kc_syncwarp": _external(
                f"{symbol}_syncwarp", types.void(types.uint32),
                _SYNCWARP_STAND_IN),
        }

    def _chain(self, node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.names:
            return list(reversed(parts))
        return None

    def _index(self, kind, axis, node):
        return ast.copy_location(
            ast.Name(id=f"__kc_{kind}_{axis}", ctx=ast.Load()), node)

    def _error(self, node, message):
        return self.spec.where.error(node.lineno, node.col_offset, message)

    def _unsupported(self, node, what):
        return self._error(
            node, f"cuda.{what} is not supported by kernelc.numba on the CPU "
            f"(supported: {self._SUPPORTED})")

    def _axes(self, node, args):
        if (len(args) != 1 or not isinstance(args[0], ast.Constant) or
                args[0].value not in (1, 2, 3)):
            raise self._error(
                node, "cuda.grid and cuda.gridsize take a literal 1, 2 or 3")
        return "xyz"[:args[0].value]

    def _arguments(self, node, what, names, required):
        """The argument expressions of the call `node` of cuda.`what`,
        whose parameters are `names` (the first `required` of them
        required), by name."""
        given = dict(zip(names, node.args))
        unknown = len(node.args) > len(names) or any(
            isinstance(a, ast.Starred) for a in node.args)
        for k in node.keywords:
            unknown |= k.arg not in names or k.arg in given
            given[k.arg] = k.value
        if unknown or any(n not in given for n in names[:required]):
            raise self._error(node, f"cuda.{what} takes ("
                              + ", ".join(names) + ")")
        return given

    def _constant(self, node, what, expr):
        """The value of `expr`, an argument of cuda.`what` that Numba takes
        as a constant: evaluated in the kernel's globals, as Numba freezes
        them."""
        try:
            return eval(compile(ast.fix_missing_locations(
                ast.Expression(body=expr)), self.spec.path, "eval"),
                self.spec.fn.__globals__)
        except Exception as e:  # the user's expression: any error
            raise self._error(
                node, f"cuda.{what}: '{ast.unparse(expr)}' is not a constant "
                f"of the kernel's module ({type(e).__name__}: {e})") from None

    def _array_type(self, node, what, given):
        """The shape (a tuple of positive ints) and the NumPy dtype of a
        cuda.shared.array or cuda.local.array."""
        shape = self._constant(node, what, given["shape"])
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        if (not isinstance(shape, tuple) or not shape or
                not all(isinstance(e, (int, np.integer)) and
                        not isinstance(e, bool) and e > 0 for e in shape)):
            raise self._error(
                node, f"cuda.{what}: the shape is a positive int or a tuple "
                f"of them, not {shape!r}" + (
                    " (dynamic shared memory is not supported)"
                    if what == "shared.array" else ""))
        dtype = self._constant(node, what, given["dtype"])
        if isinstance(dtype, types.Type):
            try:
                dtype = numba.np.numpy_support.as_dtype(dtype)
            except numba.core.errors.NumbaNotImplementedError:
                pass
        dtype = _numba._dtype(dtype)
        if dtype not in _numba._CPP_TYPES:
            raise self._error(
                node, f"cuda.{what}: element type "
                f"'{ast.unparse(given['dtype'])}' is not one of "
                + ", ".join(str(d) for d in _numba._CPP_TYPES))
        return tuple(int(e) for e in shape), dtype

    def _shared_array(self, node):
        what = "shared.array"
        given = self._arguments(node, what, ("shape", "dtype", "alignment"),
                                2)
        shape, dtype = self._array_type(node, what, given)
        alignment = 0
        if "alignment" in given:
            alignment = self._constant(node, what, given["alignment"])
            if alignment is None:
                alignment = 0
            elif (not isinstance(alignment, int) or alignment <= 0 or
                  alignment & (alignment - 1)):
                raise self._error(node, f"cuda.{what}: the alignment is a "
                                  f"power of two, not {alignment!r}")
        array = SharedArray(dtype, shape, alignment, node.lineno,
                            node.col_offset)
        self.shared_bytes += array.size * dtype.itemsize
        if self.shared_bytes > MAX_SHARED_BYTES:
            raise self._error(
                node, f"kernel '{self.spec.name}': its shared arrays take "
                f"{self.shared_bytes} bytes, more than the "
                f"{MAX_SHARED_BYTES} of static shared memory a block may "
                "have")
        name = f"__kc_shared{len(self.shared)}"
        self.shared.append(array)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    def _local_array(self, node):
        what = "local.array"
        shape, dtype = self._array_type(
            node, what, self._arguments(node, what, ("shape", "dtype"), 2))
        count = 1
        for extent in shape:
            count *= extent
        name = f"__kc_local{self.locals}"
        self.locals += 1
        self.globals[name] = _stack_array(count, numba.from_dtype(dtype))
        extents = ast.Tuple(elts=[ast.Constant(value=e) for e in shape],
                            ctx=ast.Load())
        return self._call("__kc_carray",
                          [self._call(name, [], node), extents], node)

    @staticmethod
    def _call(function, args, node):
        """The call `function(*args)` at `node`'s place."""
        call = ast.Call(func=ast.Name(id=function, ctx=ast.Load()),
                        args=list(args), keywords=[])
        for n in ast.walk(call):
            ast.copy_location(n, node)
        return call

    def _barrier_call(self, node, what):
        self.barrier = True
        kind = ast.Constant(value=_numba.BARRIERS[what])
        if what == "syncthreads":
            self._arguments(node, what, (), 0)
            return self._call("__kc_barrier", [kind, ast.Constant(value=1)],
                              node)
        predicate = self.visit(
            self._arguments(node, what, ("predicate",), 1)["predicate"])
        # CUDA's predicate is any value, compared with zero.
        flag = ast.IfExp(test=predicate, body=ast.Constant(value=1),
                         orelse=ast.Constant(value=0))
        return self._call("__kc_barrier", [kind, flag], node)

    def visit_Call(self, node):
        chain = self._chain(node.func)
        if chain in (["grid"], ["gridsize"]):
            exprs = []
            for axis in self._axes(node, node.args):
                if chain == ["grid"]:
                    text = (f"__kc_bid_{axis} * __kc_bdim_{axis} + "
                            f"__kc_tid_{axis}")
                else:
                    text = f"__kc_bdim_{axis} * __kc_gdim_{axis}"
                exprs.append(ast.parse(text, mode="eval").body)
            result = exprs[0] if len(exprs) == 1 else ast.Tuple(
                elts=exprs, ctx=ast.Load())
            for n in ast.walk(result):
                ast.copy_location(n, node)
            return result
        if chain == ["atomic", "add"]:
            node.func = ast.copy_location(
                ast.Name(id="__kc_atomic_add", ctx=ast.Load()), node.func)
            node.args = [self.visit(a) for a in node.args]
            return node
        if chain == ["shared", "array"]:
            return self._shared_array(node)
        if chain == ["local", "array"]:
            return self._local_array(node)
        if chain is not None and len(chain) == 1 and chain[0] in _numba.BARRIERS:
            return self._barrier_call(node, chain[0])
        if chain == ["syncwarp"]:
            self.syncwarp = True
            given = self._arguments(node, "syncwarp", ("mask",), 0)
            mask = (self.visit(given["mask"]) if "mask" in given else
                    ast.Constant(value=0xFFFFFFFF))
            return self._call("__kc_syncwarp", [mask], node)
        if chain is not None:
            raise self._unsupported(node, ".".join(chain))
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        chain = self._chain(node)
        if chain is None:
            return self.generic_visit(node)
        if (len(chain) == 2 and chain[0] in _numba._INDEX_SOURCES and
                chain[1] in ("x", "y", "z")):
            return self._index(_numba._INDEX_SOURCES[chain[0]], chain[1],
                               node)
        raise self._unsupported(node, ".".join(chain))


def _assembly(spec, ir_text, entry, symbol):
    """The x86-64 assembly of Numba's module `ir_text`: only `entry`
    (renamed `symbol`, hidden) stays visible; everything else becomes
    internal, and what no one calls is dropped, the CPython wrapper and
    Numba's environment among it."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(ir_text)
    # Numba's names hold a counter of the process's compilations: renamed
    # in module order, so that the same kernel gives the same text.
    for i, f in enumerate(module.functions):
        if f.is_declaration:
            continue
        if f.name == entry:
            f.name = symbol
            f.visibility = "hidden"
        else:
            f.linkage = "internal"
            f.name = f"{symbol}.f{i}"
    for i, g in enumerate(module.global_variables):
        if not g.is_declaration:
            g.linkage = "internal"
            g.name = f"{symbol}.g{i}"
    module.triple = _TRIPLE
    machine = llvm.Target.from_triple(_TRIPLE).create_target_machine(
        cpu=_CPU, features="", opt=3, reloc="pic", codemodel="default")
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    external = sorted(f.name for f in module.functions
                      if f.is_declaration and not f.name.startswith("llvm."))
    runtime = [n for n in external if n.startswith(("NRT_", "numba_", "Py"))]
    if runtime:
        raise spec.where.error(
            spec.tree.lineno, spec.tree.col_offset,
            f"kernel '{spec.name}' needs Numba's runtime ("
            + ", ".join(runtime) + "): allocating arrays, raising exceptions"
            " and calling Python are not supported in a kernel")
    text = machine.emit_assembly(module)
    return _relabel(text, symbol)


def _relabel(text, symbol):
    """Assembly that links beside the C++ kernel's own: local labels
    (.LBB0_1, .LCPI0_0, ...) renamed after `symbol`, no .file directive,
    and the text section current at the end, as the C++ after it
    expects."""
    text = re.sub(r"\.L(\w+)", rf".L{symbol}_\1", text)
    lines = [line for line in text.splitlines()
             if not line.lstrip().startswith((".file", ".ident"))
             and "GNU-stack" not in line]
    return "\n".join(lines) + "\n\t.text\n"
