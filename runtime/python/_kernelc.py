# kernelc's Python runtime, runtime/python/_kernelc.py in kernelc's source:
# kernelc copies it verbatim into every package it generates, as
# <package>/_kernelc.py. Do not edit a copy.
"""Import-time and trace-time support shared by the functions of a package
that kernelc generated.

The package's __init__.py imports this module first and checks the
installed jaxlib through `Package` before anything imports jax, so a missing
or too old jaxlib is reported as such. That is why the module's top level
imports only the standard library: jax and NumPy are imported where they are
used (after the check, a lookup in sys.modules).

Every trace-time check runs while JAX traces a call, so a wrong dtype, rank
or dimension is reported with the kernel's and the parameter's names before
anything is compiled or launched.
"""

import re
import warnings


def _version_tuple(text):
    """(major, minor, micro) of a version that starts with a number ("1.0"
    reads as 1.0.0, "0.8.0rc1" as 0.8.0); None for any other text."""
    match = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text))
    if not match:
        return None
    return tuple(int(p or 0) for p in match.groups())


def _jaxlib_version():
    """The installed jaxlib's version; raises ImportError without one."""
    from jaxlib import version as jaxlib_version

    return jaxlib_version.__version__


class Package:
    """What a generated package's library was built against: the package's
    name, the XLA FFI API version of the headers it was compiled with
    (`ffi_api`, "0.2") and the jaxlib those headers come from
    (`jaxlib_floor`, "0.8.1"). The package's __init__.py makes one, checks
    jaxlib with it, and registers the library's handlers through it."""

    def __init__(self, name, ffi_api, jaxlib_floor):
        self.name = name
        self.ffi_api = ffi_api
        self.jaxlib_floor = jaxlib_floor

    def check_jaxlib(self):
        """Raises ImportError when jaxlib is missing or older than the floor.

        jaxlib registers handlers of its own FFI API or an older one, and
        only an exact match before 0.8.1: so the floor and newer work, and
        an older jaxlib would reject the handlers at the first call. Say so
        at import instead. A version that does not start with a number is
        not guessed at: a warning says it could not be checked, and
        registration, which reports its own failure, decides.
        """
        floor = self.jaxlib_floor
        install = f"pip install 'jax>={floor}' 'jaxlib>={floor}'"
        try:
            found = _jaxlib_version()
        except ImportError as e:
            raise ImportError(
                f"{self.name} needs jax and jaxlib {floor} or newer (built "
                f"against XLA FFI API {self.ffi_api}), and jaxlib is not "
                f"installed: {install}") from e
        version = _version_tuple(found)
        if version is None:
            warnings.warn(
                f"{self.name} cannot read the version of jaxlib ({found!r}) "
                f"to check it; it needs jax and jaxlib {floor} or newer "
                f"(built against XLA FFI API {self.ffi_api})", RuntimeWarning,
                stacklevel=3)  # the import of the package
            return
        if version < _version_tuple(floor):
            raise ImportError(
                f"{self.name} was built against XLA FFI API {self.ffi_api} "
                f"(the headers of jaxlib {floor}) and works with jax and "
                f"jaxlib {floor} or newer; this environment has jaxlib "
                f"{found}. Upgrade with: {install}")

    def register(self, library, target, symbol, platform):
        """Registers one XLA FFI handler that `library` (a ctypes.CDLL)
        exports as `symbol`."""
        import jax

        self._register(target, jax.ffi.pycapsule(getattr(library, symbol)),
                       platform)

    def register_cuda(self, library, target, initialize, execute):
        """Registers the CUDA handlers of one kernel: an initialize stage
        that loads the module into the device's context and an execute stage
        that launches. XLA picks the cpu or the CUDA handler of a target by
        the platform the call runs on. Where jax has no CUDA backend the
        registration is kept for later and is harmless, so CPU-only
        processes import the package as usual."""
        import jax

        self._register(
            target, {"initialize": jax.ffi.pycapsule(getattr(library, initialize)),
                     "execute": jax.ffi.pycapsule(getattr(library, execute))},
            "CUDA")

    def _register(self, target, handler, platform):
        # The handler's capsules are made before: a symbol missing from the
        # library is the package's fault, not the jaxlib's.
        import jax

        try:
            jax.ffi.register_ffi_target(target, handler, platform=platform)
        except Exception as e:
            raise self._registration_failed(target, platform, e) from e

    def _registration_failed(self, target, platform, error):
        try:
            found = _jaxlib_version()
        except ImportError:
            found = "unknown"
        return ImportError(
            f"{self.name}: jax could not register the XLA FFI handler of "
            f"target '{target}' ({platform}): {type(error).__name__}: {error}. "
            f"The package's library was built against XLA FFI API "
            f"{self.ffi_api} (the headers of jaxlib {self.jaxlib_floor}) and "
            f"needs a jaxlib that accepts handlers of that API; this "
            f"environment has jaxlib {found}. Rebuild the package with "
            f"kernelc for this jaxlib, or install a jaxlib that supports XLA "
            f"FFI API {self.ffi_api}")


def _dtype(name):
    """The NumPy dtype of an element type as kernelc names it ("float32",
    "bfloat16", "bool", ...)."""
    import numpy as np

    if name == "bfloat16":
        import jax.numpy as jnp

        return np.dtype(jnp.bfloat16)
    return np.dtype(name)


def _shape_text(shape):
    """A shape as Python writes a tuple: (4, 3), (5,), ()."""
    comma = "," if len(shape) == 1 else ""
    return "(" + ", ".join(str(d) for d in shape) + comma + ")"


def tensor(kernel, param, value, dtype, rank, leading=False, optional=False):
    """Returns `value` as an array after checking its dtype and rank (with
    `leading`, a shape that starts with "...": at least `rank`); None for
    an optional input (KC_OPTIONAL) that is None."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    if value is None:
        if optional:
            return None
        raise TypeError(
            f"{kernel}: parameter '{param}' expects an array, got None (only "
            f"a KC_OPTIONAL input may be None)")

    expected = _dtype(dtype)
    got = getattr(value, "dtype", None)
    if got is not None:
        if np.dtype(got) != expected:
            raise TypeError(
                f"{kernel}: parameter '{param}' expects {dtype} elements, "
                f"got {np.dtype(got).name}")
        # Arrays and tracers pass as they are (no conversion to trace).
        arr = value if isinstance(value, jax.Array) else jnp.asarray(value)
    else:
        arr = jnp.asarray(value, dtype=expected)
    if arr.dtype != expected:
        raise TypeError(
            f"{kernel}: parameter '{param}' expects {dtype} elements, which "
            f"need 64-bit types: enable jax_enable_x64")
    if arr.ndim < rank if leading else arr.ndim != rank:
        raise ValueError(
            f"{kernel}: parameter '{param}' expects rank "
            f"{f'{rank} or more' if leading else rank}, got rank "
            f"{arr.ndim} (shape {_shape_text(arr.shape)})")
    return arr


def check_leading(kernel, param, arr, rank, leading, ref):
    """Checks that the dimensions of `arr` before its last `rank` (those of
    its "...") are `leading`, those of input `ref`."""
    if tuple(arr.shape[:arr.ndim - rank]) != tuple(leading):
        raise ValueError(
            f"{kernel}: parameter '{param}' has shape {_shape_text(arr.shape)}, "
            f"but its leading dimensions ('...') must be those of '{ref}', "
            f"{_shape_text(leading)}")


def absent_as_empty(value, dtype, rank):
    """`value`, or for an optional input that is None a zero-size array of
    its dtype and rank, which the call passes instead (with the attribute
    that says it is absent): its shape reads as zeros."""
    import jax.numpy as jnp

    if value is not None:
        return value
    return jnp.zeros((0,) * rank, _dtype(dtype))


def _kind_error(kernel, param, value, dtype, np_dtype, got):
    """The TypeError for a scalar `value` of the wrong kind for `dtype`
    (bool, integer or float), or None when its kind fits."""
    import numpy as np

    is_bool = isinstance(value, (bool, np.bool_))
    if dtype == "bool":
        if not is_bool:
            return TypeError(
                f"{kernel}: scalar '{param}' expects a bool, got {got}")
        return None
    if np.issubdtype(np_dtype, np.integer):
        if is_bool or not isinstance(value, (int, np.integer)):
            return TypeError(
                f"{kernel}: scalar '{param}' expects an integer ({dtype}), got "
                f"{got}")
        return None
    if is_bool or not isinstance(value, (int, float, np.integer, np.floating)):
        return TypeError(
            f"{kernel}: scalar '{param}' expects a number ({dtype}), got {got}")
    return None


def traced_scalar(kernel, param, value, dtype):
    """Returns a traced scalar (KC_TRACED) as a 0-d array of its dtype: an
    operand of the call, so that a new value does not recompile.

    Accepted: what a static scalar accepts (a Python or NumPy number of the
    parameter's kind, or a 0-d array), and a traced 0-d array (under jit,
    vmap, grad) whose dtype is the parameter's, or of its kind and weakly
    typed (a Python number that jit traced), which is converted. Under vmap
    a batched value gives each batch element its own.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    expected = _dtype(dtype)
    if isinstance(value, jax.core.Tracer) or (
            isinstance(value, (np.ndarray, jax.Array)) and value.ndim == 0):
        if value.ndim != 0:
            raise ValueError(
                f"{kernel}: traced scalar '{param}' expects a 0-d array, got "
                f"shape {_shape_text(value.shape)}")
        got = np.dtype(value.dtype)
        if got == expected:
            return jnp.asarray(value)
        weak = getattr(getattr(value, "aval", None), "weak_type", False)
        fits = (jnp.issubdtype(got, jnp.integer) if jnp.issubdtype(
            expected, jnp.integer) else jnp.issubdtype(
                got, jnp.integer) or jnp.issubdtype(got, jnp.floating)
                if jnp.issubdtype(expected, jnp.floating) else False)
        if not (weak and fits):
            raise TypeError(
                f"{kernel}: traced scalar '{param}' expects {dtype}, got "
                f"{got.name}")
        return jnp.asarray(value).astype(expected)
    if isinstance(value, (np.ndarray, jax.Array)):
        raise ValueError(
            f"{kernel}: traced scalar '{param}' expects a 0-d array, got "
            f"shape {_shape_text(value.shape)}")
    if dtype in ("float16", "bfloat16"):
        # NumPy knows no range of bfloat16: the value rounds as jax does.
        error = _kind_error(kernel, param, value, dtype, expected,
                            type(value).__name__)
        if error is not None:
            raise error
        return jnp.asarray(float(value), expected)
    return jnp.asarray(scalar(kernel, param, value, dtype))


def scalar(kernel, param, value, dtype):
    """Returns `value` as a NumPy scalar of the parameter's exact type.

    Accepted: for a bool parameter a bool; for an integer parameter an
    integer that fits; for a float parameter an integer or a float within
    the type's range. A bool, NumPy bool or bool array is never a number, a
    float is never an integer, and a complex never a float. Python and NumPy
    numbers are accepted, and so is a concrete (not traced) 0-d JAX or NumPy
    array, taken as the NumPy scalar of its dtype under the same rules.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    if isinstance(value, jax.core.Tracer):
        raise TypeError(
            f"{kernel}: scalar '{param}' is a static attribute and needs a "
            f"concrete Python or NumPy number, got a traced value; mark the "
            f"argument static (jax.jit's static_argnums), or declare the "
            f"parameter KC_TRACED (a traced operand: a new value does not "
            f"recompile) to pass a traced value")
    got = type(value).__name__
    if isinstance(value, (np.ndarray, jax.Array)) and value.ndim == 0:
        got = f"a 0-d {np.dtype(value.dtype).name} array"
        value = np.asarray(value)[()]
        if (not isinstance(value, (np.bool_, np.number))
                and jnp.issubdtype(value.dtype, jnp.floating)):
            value = np.float64(value)  # bfloat16 and other ml_dtypes floats
    np_dtype = _dtype(dtype)
    error = _kind_error(kernel, param, value, dtype, np_dtype, got)
    if error is not None:
        raise error
    if dtype == "bool":
        return bool(value)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        if not info.min <= int(value) <= info.max:
            raise ValueError(
                f"{kernel}: scalar '{param}' = {int(value)} does not fit "
                f"{dtype}")
        return np_dtype.type(int(value))
    try:
        as_float = float(value)
    except OverflowError:
        as_float = float("inf") if value > 0 else float("-inf")
    if np.isfinite(as_float) or isinstance(value, int):
        if not abs(as_float) <= float(np.finfo(np_dtype).max):
            raise ValueError(
                f"{kernel}: scalar '{param}' = {value} does not fit {dtype}")
    return np_dtype.type(value)


def variant(op, variants, inputs):
    """The function of the variant of template kernel `op` that takes the
    element types of `inputs` (the op's input tensors, in order); an
    optional input that is None takes any. `variants` holds, per variant,
    its name, its inputs' (name, element type) and its function."""
    import jax.numpy as jnp
    import numpy as np

    types = []
    for value in inputs:
        if value is None:
            types.append(None)
            continue
        dtype = getattr(value, "dtype", None)
        types.append(np.dtype(dtype if dtype is not None
                              else jnp.asarray(value).dtype).name)
    for _, params, function in variants:
        if all(t is None or t == dtype for t, (_, dtype) in zip(types, params)):
            return function
    described = "; ".join(
        f"{name} ({', '.join(f'{n}: {d}' for n, d in params)})"
        for name, params, _ in variants)
    got = ", ".join("None" if t is None else t for t in types)
    raise TypeError(
        f"{op}: no variant takes input element types ({got}); its variants "
        f"are {described}")


def attr(value):
    """A scalar as XLA receives it: uint64 travels as its int64 bit pattern
    (jax lowers integer attributes through a signed 64-bit integer)."""
    import numpy as np

    if isinstance(value, np.uint64):
        return value.view(np.int64)
    return value


# --- int64 expressions ------------------------------------------------------
#
# The generated functions evaluate shape, check and derived-value expressions
# through these helpers (`_kc.add(_s_n, 1)`), which compute what the
# handler's evaluator computes (kernelc/arith.h): the exact integer result,
# failing where it lies outside int64 (INT64_MIN // -1 among them) or the
# divisor is zero. Python's // and % round toward negative infinity already.
# So a call that the handler would reject for its expressions fails at
# trace time instead, with the same verdict.

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class ExpressionError(ArithmeticError):
    """An expression overflows int64 or divides by zero."""


def _checked(compute):
    """`compute()`, checked to be an int64 value.

    The one place that computes on expression values, which are Python ints
    (concrete shapes and scalars). Were they symbolic (jax.export's shape
    polymorphism), this is where they would be handled."""
    try:
        value = compute()
    except ZeroDivisionError:
        raise ExpressionError("divides by zero") from None
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ExpressionError("overflows int64")
    return value


def add(a, b):
    return _checked(lambda: a + b)


def sub(a, b):
    return _checked(lambda: a - b)


def mul(a, b):
    return _checked(lambda: a * b)


def neg(a):
    return _checked(lambda: -a)


def floor_div(a, b):
    return _checked(lambda: a // b)


def floor_mod(a, b):
    return _checked(lambda: a % b)


def ceil_div(a, b):
    return _checked(lambda: -(-a // b))


def minimum(a, b):
    return _checked(lambda: min(a, b))


def maximum(a, b):
    return _checked(lambda: max(a, b))


def int64(value):
    """An integer scalar's value as the handler's expressions read it: a
    uint64 above INT64_MAX wraps around, as its bit pattern travels (see
    attr)."""
    return int(attr(value))


def _evaluate(kernel, what, fn):
    try:
        return fn()
    except ExpressionError as e:
        raise ValueError(f"{kernel}: {what} {e}") from None


def check_dim(kernel, param, arr, dim, expected_fn, text):
    """Checks that dimension `dim` of `arr` equals `expected_fn()` (`text`)."""
    expected = _evaluate(kernel, f"dimension {dim} of '{param}' = {text}",
                         expected_fn)
    if arr.shape[dim] != expected:
        raise ValueError(
            f"{kernel}: parameter '{param}' has shape {_shape_text(arr.shape)}, "
            f"but dimension {dim} must be {text} = {expected}")


def derived(kernel, param, value_fn, dtype, text):
    """Computes a derived value (`text`); checks that it fits its integer
    type."""
    import numpy as np

    value = _evaluate(kernel, f"derived value '{param}' = {text}", value_fn)
    info = np.iinfo(_dtype(dtype))
    if not info.min <= value <= info.max:
        raise ValueError(
            f"{kernel}: derived value '{param}' = {value} does not fit {dtype}")
    return value


def out_shape(kernel, param, dtype, shape_fn, texts):
    """The result type of an output, after checking its dimensions."""
    import jax

    shape = _evaluate(
        kernel, f"the shape of output '{param}' = {_shape_text(texts)}",
        shape_fn)
    # Leading dimensions ("...") come first, and are an input's.
    texts = ("...",) * (len(shape) - len(texts)) + tuple(texts)
    for d, (n, text) in enumerate(zip(shape, texts)):
        if n < 0:
            raise ValueError(
                f"{kernel}: output '{param}' would have dimension {d} = "
                f"{text} = {n}")
    return jax.ShapeDtypeStruct(tuple(int(n) for n in shape), _dtype(dtype))


def call(target, results, operands, aliases, attrs, vmap_method):
    """Calls the kernel's FFI target; returns the list of results.

    Under jax.vmap the call stays one custom call: its operands gain leading
    batch dimensions and the handler runs the kernel once per batch element
    within that call (an elementwise kernel: once on the whole batch).
    vmap_method is "expand_dims" (an unbatched argument gets a size-1 batch
    dimension) or "broadcast_all" (every argument is broadcast to the batch:
    for in-place operands, which alias their results, and for elementwise
    kernels, whose batch folds into one run only without broadcasting).
    """
    import jax

    return jax.ffi.ffi_call(
        target, results, vmap_method=vmap_method,
        input_output_aliases=aliases)(*operands, **attrs)


# --- sharding (KC_PARALLEL) ---------------------------------------------------


def _shardings(mesh, operands, results, arg_shapes, result_shape):
    """The shardings a sharded op runs with: each parallel factor (p_*, b*)
    keeps the mesh axis its first sharded operand dimension has, and every
    other dimension is replicated. Returns (result shardings, operand
    shardings)."""
    from jax.sharding import NamedSharding, PartitionSpec

    def parallel(f):
        return f.startswith(("p_", "b"))

    axis_of, used = {}, set()
    for shape, factors in zip(arg_shapes, operands):
        sharding = shape.sharding
        if not isinstance(sharding, NamedSharding):
            continue
        spec = tuple(sharding.spec) + (None,) * (len(factors) - len(sharding.spec))
        for f, axis in zip(factors, spec):
            if not parallel(f) or axis is None or f in axis_of:
                continue
            axes = axis if isinstance(axis, tuple) else (axis,)
            if used.isdisjoint(axes):
                axis_of[f] = axis
                used.update(axes)

    def named(factors):
        return NamedSharding(mesh, PartitionSpec(
            *(axis_of.get(f) if parallel(f) else None for f in factors)))

    results_sharding = [named(f) for f in results]
    if not isinstance(result_shape, (tuple, list)):
        results_sharding = results_sharding[0]
    else:
        results_sharding = type(result_shape)(results_sharding)
    return results_sharding, tuple(named(f) for f in operands)


def sharded(op, static, operands, results, batched=()):
    """`op` (whose positional arguments at `static` are static attributes) as
    an op with a Shardy sharding rule: `operands` and `results` give each
    tensor's factor per dimension. Factors named "p_<symbol>" are the
    kernel's KC_PARALLEL symbols, along which the work splits with no
    communication; every other factor must be replicated. Under jax.jit
    with inputs sharded along a parallel dimension, each device runs the
    kernel on its shard and nothing is gathered. Inside shard_map the op
    runs on the local shards as they are.

    Under jax.vmap the batch becomes one more (parallel) leading factor of
    every result and of every operand that is batched; an unbatched operand
    keeps its factors and is not broadcast: the local function vmaps it with
    in_axes=None, so the kernel's call sees it once (with a size-1 batch
    dimension). `batched` holds, per batch dimension added so far (outermost
    first), whether each operand has it. An optional input that is None is
    no operand of the rule: the op receives it as it is.
    """
    import jax
    from jax import custom_batching
    from jax.experimental.custom_partitioning import (
        SdyShardingRule,
        custom_partitioning,
    )

    static = tuple(static)
    rule_operands = tuple(
        tuple(f"b{k}" for k, flags in enumerate(batched) if flags[j]) + tuple(m)
        for j, m in enumerate(operands))
    rule_results = tuple(tuple(f"b{k}" for k in range(len(batched))) + tuple(m)
                         for m in results)
    replicated = tuple(sorted({f for m in rule_operands + rule_results for f in m
                               if not f.startswith(("p_", "b"))}))
    rule = SdyShardingRule(rule_operands, rule_results,
                           need_replication_factors=replicated)

    def apply(*args):
        free = [i for i in range(len(args)) if i not in static]
        if any(args[i] is None for i in free):
            kept = [j for j, i in enumerate(free) if args[i] is not None]
            return sharded(
                op, tuple(sorted(static + tuple(i for i in free if args[i] is None))),
                tuple(operands[j] for j in kept), results,
                tuple(tuple(flags[j] for j in kept) for flags in batched))(*args)
        statics = tuple(args[i] for i in static)
        dynamic = [a for i, a in enumerate(args) if i not in static]

        def fn(*dyn):
            merged, it = [], iter(dyn)
            for i in range(len(args)):
                merged.append(statics[static.index(i)] if i in static else next(it))
            return op(*merged)

        local = fn
        for flags in reversed(batched):  # innermost batch dimension first
            local = jax.vmap(local, in_axes=tuple(0 if b else None for b in flags))

        def partition(mesh, arg_shapes, result_shape):
            return (mesh, local) + _shardings(mesh, rule_operands, rule_results,
                                              arg_shapes, result_shape)

        part = custom_partitioning(local)
        part.def_partition(partition=partition, sharding_rule=rule)
        vmappable = custom_batching.custom_vmap(part)

        @vmappable.def_vmap
        def _batched(axis_size, in_batched, *dyn):
            flags = tuple(bool(b) for b in in_batched)
            out = sharded(fn, (), operands, results, (flags,) + tuple(batched))(*dyn)
            return out, jax.tree_util.tree_map(lambda _: True, out)

        return vmappable(*dynamic)

    return apply


# --- autodiff (KC_VJP, KC_JVP) ----------------------------------------------


def _aval_text(x):
    import numpy as np

    return f"shape {_shape_text(x.shape)} and dtype {np.dtype(x.dtype).name}"


def _check_derivative(kernel, other, kind, produced, name, noun, role, primal):
    """Raises when `produced` (result 'd_<name>' of the `kind` kernel
    `other`) does not have the shape and dtype of `primal`, the `role`
    '<name>' of `kernel` that it is the `noun` of."""
    import numpy as np

    if (tuple(produced.shape) != tuple(primal.shape)
            or np.dtype(produced.dtype) != np.dtype(primal.dtype)):
        raise ValueError(
            f"{kernel}: {kind} kernel '{other}' returns 'd_{name}' with "
            f"{_aval_text(produced)}, but it is the {noun} of {role} '{name}', "
            f"which has {_aval_text(primal)}")


def with_vjp(kernel, backward_kernel, forward, backward, args, static, results,
             bwd_params, grads):
    """`forward` as a jax.custom_vjp whose backward pass runs `backward`
    (the function of kernel `backward_kernel`).

    args: the forward function's argument names, in order; `static` the
    positions of static scalars among them. results: the forward kernel's
    result names, in order. bwd_params: the backward function's positional
    arguments, each ("value", name) for a forward argument or result (a
    residual), ("cotangent", output) or ("static", scalar). grads: the
    forward input each backward result is the gradient of, in order. Inputs
    without a gradient (integer inputs) get none.

    The forward pass checks, at trace time, that the backward kernel will
    return each gradient with its input's shape and dtype: the backward
    kernel's result shapes follow from the shapes it is called with, which
    are known once the forward kernel has run.
    """
    import jax
    import numpy as np

    static = tuple(static)
    saved = tuple(n for kind, n in bwd_params if kind == "value")
    f = jax.custom_vjp(forward, nondiff_argnums=static)
    checked = set()  # the argument shapes and statics already checked

    def check(inputs, values, outs):
        # inputs: the forward arguments; values: they and the results; outs:
        # the results (a cotangent has its output's shape and dtype).
        # An optional input that is None stays None.
        statics = {args[i]: inputs[args[i]] for i in static}
        specs = [None if v is None else jax.ShapeDtypeStruct(np.shape(v), v.dtype)
                 for v in (values[n] if kind == "value" else outs[n]
                           for kind, n in bwd_params if kind != "static")]
        # Every forward argument: the gradients are compared with inputs
        # the backward kernel may never receive.
        key = (tuple((n, None) if v is None else
                     (n, np.shape(v), np.dtype(v.dtype).name)
                     for n, v in inputs.items() if n not in statics),
               tuple(sorted(statics.items())))
        if key in checked:
            return

        def call(*dyn):
            it = iter(dyn)
            return backward(*(statics[n] if kind == "static" else next(it)
                              for kind, n in bwd_params))

        produced = jax.eval_shape(call, *specs)
        produced = produced if len(grads) > 1 else (produced,)
        for n, g in zip(grads, produced):
            if inputs[n] is not None:
                _check_derivative(kernel, backward_kernel, "backward", g, n,
                                  "gradient", "input", inputs[n])
        checked.add(key)

    def fwd(*a):
        out = forward(*a)
        outs = out if len(results) > 1 else (out,)
        inputs = dict(zip(args, a))
        values = dict(inputs)
        values.update(zip(results, outs))
        check(inputs, values, dict(zip(results, outs)))
        return out, tuple(values[n] for n in saved)

    def bwd(*a):
        statics = dict(zip((args[i] for i in static), a[:len(static)]))
        residuals, cotangents = a[len(static):]
        values = dict(zip(saved, residuals))
        if len(results) == 1:
            cotangents = (cotangents,)
        ct = dict(zip(results, cotangents))
        call = []
        for kind, n in bwd_params:
            call.append(values[n] if kind == "value" else
                        ct[n] if kind == "cotangent" else statics[n])
        out = backward(*call)
        out = out if len(grads) > 1 else (out,)
        by_input = dict(zip(grads, out))
        result = []
        for i, n in enumerate(args):
            if i in static:
                continue
            result.append(by_input.get(n))
        return tuple(result)

    f.defvjp(fwd, bwd)
    return f


def without_vjp(kernel, op, static, inplace=()):
    """`op` for a kernel without KC_VJP or KC_JVP: differentiating through
    it (a nonzero tangent reaching it) raises an error that names the kernel
    and the way out; everything else passes through unchanged. inplace: the
    kernel's in-place (KC_INMUT) parameters, which cannot be differentiated
    at all."""
    import jax

    f = jax.custom_jvp(op, nondiff_argnums=tuple(static))

    def jvp(*_):
        if inplace:
            raise TypeError(
                f"{kernel}: cannot differentiate: the kernel updates "
                f"'{inplace[0]}' in place (KC_INMUT), and an in-place update "
                f"has no derivative (KC_VJP and KC_JVP take kernels whose "
                f"tensors are inputs and outputs); to differentiate it, "
                f"return the result as an output (KC_OUT) and name a "
                f"backward kernel with KC_VJP(\"...\")")
        raise TypeError(
            f"{kernel}: cannot differentiate: the kernel declares no backward "
            f"kernel; name one with KC_VJP(\"...\")")

    f.defjvp(jvp)
    return f


def traced(*args):
    """Whether any argument is a JAX tracer (under jit, vmap, grad...)."""
    import jax

    return any(isinstance(a, jax.core.Tracer) for a in args)


def jit(fn, static):
    """jax.jit of `fn` with the static scalars at positions `static`."""
    import jax

    return jax.jit(fn, static_argnums=tuple(static))


_FORWARD_ONLY = None


def _forward_only(x, kernel, tangent_kernel):
    """`x`, a tangent from a KC_JVP kernel, marked as linear with no
    transpose: reverse mode reaches the mark first and raises an error that
    names the kernel and says what it needs. Forward mode, jax.linearize,
    vmap and jit see the identity; it lowers to nothing."""
    global _FORWARD_ONLY
    if _FORWARD_ONLY is None:
        from jax.extend.core import Primitive
        from jax.interpreters import ad, batching, mlir

        p = Primitive("kernelc_forward_only")
        p.def_impl(lambda x, **_: x)
        p.def_abstract_eval(lambda x, **_: x)

        def transpose(ct, x, *, kernel, tangent_kernel):
            raise TypeError(
                f"{kernel}: cannot differentiate in reverse mode (jax.grad, "
                f"jax.vjp, jax.jacrev): the kernel declares a tangent kernel "
                f"('{tangent_kernel}', KC_JVP), which gives forward mode "
                f"(jax.jvp, jax.jacfwd), and a kernel cannot be transposed; "
                f"reverse mode needs a backward kernel: name one with "
                f"KC_VJP(\"...\") instead")

        ad.deflinear2(p, transpose)
        batching.primitive_batchers[p] = (
            lambda args, dims, **params: (p.bind(*args, **params), dims[0]))
        mlir.register_lowering(p, lambda ctx, x, **_: [x])
        _FORWARD_ONLY = p
    return _FORWARD_ONLY.bind(x, kernel=kernel, tangent_kernel=tangent_kernel)


def with_jvp(kernel, tangent_kernel, forward, tangent, args, static, results,
             jvp_params, outs):
    """`forward` as a jax.custom_jvp whose rule runs `tangent` (the function
    of kernel `tangent_kernel`, KC_JVP).

    args, static, results: as for with_vjp. jvp_params: the tangent
    function's positional arguments, each ("value", input), ("tangent",
    input) or ("static", scalar). outs: the forward output each tangent
    result belongs to, in order; other outputs (integer ones) get zero
    tangents. Each tangent is checked against its output's shape and dtype
    at trace time. Forward mode only: a kernel cannot be transposed, so
    reverse mode raises an error that says it needs KC_VJP.
    """
    import jax
    import numpy as np

    static = tuple(static)
    dynamic = [n for i, n in enumerate(args) if i not in static]
    f = jax.custom_jvp(forward, nondiff_argnums=static)

    def rule(*a):
        statics = dict(zip((args[i] for i in static), a[:len(static)]))
        primals, tangents = a[len(static):]
        merged, it = [], iter(primals)
        for i, n in enumerate(args):
            merged.append(statics[n] if i in static else next(it))
        out = forward(*merged)
        outs_tuple = out if len(results) > 1 else (out,)
        primal_out = dict(zip(results, outs_tuple))
        values = dict(zip(dynamic, primals))
        dots = dict(zip(dynamic, tangents))
        call = [values[n] if kind == "value" else
                dots[n] if kind == "tangent" else statics[n]
                for kind, n in jvp_params]
        t = tangent(*call)
        by_output = dict(zip(outs, t if len(outs) > 1 else (t,)))
        for n, d in by_output.items():
            _check_derivative(kernel, tangent_kernel, "tangent", d, n,
                              "tangent", "output", primal_out[n])
        tangent_out = tuple(
            _forward_only(by_output[n], kernel, tangent_kernel)
            if n in by_output else
            np.zeros(o.shape, dtype=jax.dtypes.float0)
            for n, o in zip(results, outs_tuple))
        return out, tangent_out if len(results) > 1 else tangent_out[0]

    f.defjvp(rule)
    return f
