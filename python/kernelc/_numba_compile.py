"""The Numba half of kernelc.numba: the kernel's body as a function that
runs a row of a block's threads, compiled by Numba and emitted by LLVM as
assembly. Imported only when a Numba kernel is built, so `import kernelc`
needs no Numba."""

import ast
import copy
import re

import llvmlite.binding as llvm
import numba
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


def compile_block(spec, symbol):
    """The assembly of `spec`'s kernel as the function `symbol`, which runs
    the threads of one row of a block (threadIdx.x from 0 to blockDim.x):
    int32_t symbol(void**, void**, <each tensor's data pointer and extents,
    each scalar>, <threadIdx, blockIdx, blockDim, gridDim: x, y, z each, as
    int64_t; threadIdx.x unused>), Numba's native calling convention.

    A row per call, not a thread: the C++ kernel calls it from the row's
    first thread, so that LLVM inlines the body into the row's loop and
    vectorizes it, as Clang does for a C++ kernel in kernelc's thread loop.
    The threads of a block are independent here (no barriers, no shared
    arrays), so running a row in order is a valid schedule."""
    tree, arg_types = _thread_function(spec)
    names = [a.arg for a in tree.args.args]
    row = ast.parse(
        f"def __kc_row_{spec.name}({', '.join(names)}):\n"
        f"    for __kc_t in range(__kc_bdim_x):\n"
        f"        {tree.name}("
        + ", ".join("__kc_t" if n == "__kc_tid_x" else n for n in names)
        + ")\n").body[0]
    module = ast.Module(body=[tree], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace = dict(spec.fn.__globals__)
    namespace["__kc_carray"] = numba.carray
    namespace["__kc_atomic_add"] = _atomic_add
    exec(compile(module, spec.path, "exec"), namespace)
    namespace[tree.name] = numba.njit(error_model="numpy",
                                      no_cpython_wrapper=True)(
        namespace[tree.name])
    exec(compile(ast.Module(body=[row], type_ignores=[]), "<kernelc>",
                 "exec"), namespace)
    signature = types.void(*arg_types)
    try:
        dispatcher = numba.njit(signature, error_model="numpy",
                                no_cpython_wrapper=True,
                                no_cfunc_wrapper=True)(namespace[row.name])
    except numba.core.errors.NumbaError as e:
        raise spec.where.error(
            spec.tree.lineno, spec.tree.col_offset,
            f"Numba cannot compile kernel '{spec.name}':\n{e}") from None
    result = dispatcher.overloads[tuple(arg_types)]
    return _assembly(spec, result.library.get_llvm_str(),
                     result.fndesc.llvm_func_name, symbol)


def _thread_function(spec):
    """The kernel as a per-thread Python function: its arrays rebuilt from
    pointers and extents, the cuda.* indices as arguments."""
    tree = _Rewriter(spec).visit(copy.deepcopy(spec.tree))
    tree.name = f"__kc_thread_{spec.name}"
    tree.decorator_list = []
    tree.returns = None
    args, arg_types, prologue = [], [], []
    for p in spec.params:
        if p.annotation.role == "scalar":
            args.append(p.name)
            arg_types.append(numba.from_dtype(p.dtype))
            continue
        pointer = f"{p.name}__kc_data"
        extents = [f"{p.name}__kc_extent{d}" for d in range(p.rank)]
        args += [pointer, *extents]
        arg_types += [types.CPointer(numba.from_dtype(p.dtype))]
        arg_types += [_INDEX_TYPE] * p.rank
        shape = "(" + "".join(e + ", " for e in extents) + ")"
        prologue.append(f"{p.name} = __kc_carray({pointer}, {shape})")
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
    return tree, arg_types


class _Rewriter(ast.NodeTransformer):
    """cuda.grid(n), cuda.gridsize(n), cuda.threadIdx.x (and blockIdx,
    blockDim, gridDim) as the per-thread function's index arguments;
    cuda.atomic.add as an atomic sum. Any other use of `cuda` is an error
    at its line."""

    def __init__(self, spec):
        self.spec = spec
        self.names = {name for name, value in spec.fn.__globals__.items()
                      if getattr(value, "__name__", None) == "numba.cuda"}
        self.names.add("cuda")

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

    def _unsupported(self, node, what):
        return self.spec.where.error(
            node.lineno, node.col_offset,
            f"cuda.{what} is not supported by kernelc.numba on the CPU "
            "(supported: cuda.grid, cuda.gridsize, cuda.threadIdx, "
            "cuda.blockIdx, cuda.blockDim, cuda.gridDim, cuda.atomic.add)")

    def _axes(self, node, args):
        if (len(args) != 1 or not isinstance(args[0], ast.Constant) or
                args[0].value not in (1, 2, 3)):
            raise self.spec.where.error(
                node.lineno, node.col_offset,
                "cuda.grid and cuda.gridsize take a literal 1, 2 or 3")
        return "xyz"[:args[0].value]

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
