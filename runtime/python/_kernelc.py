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

import functools
import re
import threading
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


# Element type name -> NumPy dtype, filled by _dtype.
_DTYPES: dict = {}


def _dtype(name):
    """The NumPy dtype of an element type as kernelc names it ("float32",
    "bfloat16", "bool", ...); computed once per name."""
    dtype = _DTYPES.get(name)
    if dtype is None:
        import numpy as np

        if name == "bfloat16":
            import jax.numpy as jnp

            dtype = np.dtype(jnp.bfloat16)
        else:
            dtype = np.dtype(name)
        _DTYPES[name] = dtype
    return dtype


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
    quick = number(value, dtype)
    if quick is not None:
        return quick
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
# failing where it lies outside int64 (INT64_MIN // -1 among them), the
# divisor is zero or a shift count lies outside 0..63. Python's // and %
# round toward negative infinity already, its >> is arithmetic, and its
# & | ^ ~ act on two's complement bits as int64's do.
# So a call that the handler would reject for its expressions fails at
# trace time instead, with the same verdict.

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class ExpressionError(ArithmeticError):
    """An expression overflows int64, divides by zero, shifts by a count
    out of range, or cannot be computed on symbolic dimensions."""


_SHIFT_COUNT = "shifts by a count outside 0..63"
_SYMBOLIC = "cannot be computed on symbolic dimensions"


def _symbolic(value):
    """Whether an expression value is a symbolic dimension (jax.export's
    shape polymorphism) or holds one, rather than an int."""
    if isinstance(value, int):
        return False
    import jax

    return jax.export.is_symbolic_dim(value)


def _unequal(a, b):
    """Whether two expression values differ. Symbolic ones differ here only
    where they differ for every value of their symbols (n + 1 and n); where
    that depends on the symbols, the handler's run-time check decides."""
    difference = a - b
    return not _symbolic(difference) and difference != 0


def _checked(compute):
    """`compute()`, checked to be an int64 value.

    The one place that computes on expression values: Python ints (concrete
    shapes and scalars), or symbolic dimensions where jax.export traces
    with symbolic shapes. A symbolic result has no value to check yet: the
    handler, which computes the same expression on the actual shapes, checks
    it at run time, and a division by a symbolic zero likewise."""
    try:
        value = compute()
    except ZeroDivisionError:
        raise ExpressionError("divides by zero") from None
    if _symbolic(value):
        return value
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ExpressionError("overflows int64")
    return value


def _extreme(pick, dim_pick, a, b):
    # Python's min and max compare, which symbolic dimensions cannot decide
    # in general; jax builds min/max expressions of them instead.
    if _symbolic(a) or _symbolic(b):
        import jax.core

        return getattr(jax.core, dim_pick)(a, b)
    return pick(a, b)


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
    return _checked(lambda: _extreme(min, "min_dim", a, b))


def maximum(a, b):
    return _checked(lambda: _extreme(max, "max_dim", a, b))


def _concrete(*values):
    """Checks that no value is symbolic: the bitwise operations and the
    casts have no symbolic form in jax.export."""
    if any(_symbolic(v) for v in values):
        raise ExpressionError(_SYMBOLIC)


def _shift_count(b):
    _concrete(b)
    if not 0 <= b < 64:
        raise ExpressionError(_SHIFT_COUNT)


def shl(a, b):
    _shift_count(b)
    # A symbolic value shifts as the product it is.
    return _checked(lambda: a * (1 << b) if _symbolic(a) else a << b)


def shr(a, b):
    _shift_count(b)
    return _checked(lambda: a // (1 << b) if _symbolic(a) else a >> b)


def bit_and(a, b):
    _concrete(a, b)
    return a & b


def bit_or(a, b):
    _concrete(a, b)
    return a | b


def bit_xor(a, b):
    _concrete(a, b)
    return a ^ b


def bit_not(a):
    _concrete(a)
    return ~a


def _convert(a, bits, signed):
    """A cast to an integer type of `bits` bits: the value modulo 2**bits,
    read as that type; it must still be an int64."""
    if bits == 64 and signed:
        return a
    _concrete(a)
    low = a & ((1 << bits) - 1)
    if signed and low >= 1 << (bits - 1):
        low -= 1 << bits
    return _checked(lambda: low)


# The casts, one per integer type a cast can name.
to_int8 = functools.partial(_convert, bits=8, signed=True)
to_uint8 = functools.partial(_convert, bits=8, signed=False)
to_int16 = functools.partial(_convert, bits=16, signed=True)
to_uint16 = functools.partial(_convert, bits=16, signed=False)
to_int32 = functools.partial(_convert, bits=32, signed=True)
to_uint32 = functools.partial(_convert, bits=32, signed=False)
to_int64 = functools.partial(_convert, bits=64, signed=True)
to_uint64 = functools.partial(_convert, bits=64, signed=False)


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
    if _unequal(arr.shape[dim], expected):
        raise ValueError(
            f"{kernel}: parameter '{param}' has shape {_shape_text(arr.shape)}, "
            f"but dimension {dim} must be {text} = {expected}")


def derived(kernel, param, value_fn, dtype, text):
    """Computes a derived value (`text`); checks that it fits its integer
    type."""
    import numpy as np

    value = _evaluate(kernel, f"derived value '{param}' = {text}", value_fn)
    info = np.iinfo(_dtype(dtype))
    if not _symbolic(value) and not info.min <= value <= info.max:
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
        if not _symbolic(n) and n < 0:
            raise ValueError(
                f"{kernel}: output '{param}' would have dimension {d} = "
                f"{text} = {n}")
    return jax.ShapeDtypeStruct(
        tuple(n if _symbolic(n) else int(n) for n in shape), _dtype(dtype))


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


def _parallel(factor):
    """Whether a factor of a sharding rule is parallel: a KC_PARALLEL symbol
    (p_*) or a vmap batch dimension (b*)."""
    return factor.startswith(("p_", "b"))


def _parallel_axes(operands, specs, usable=lambda axes, extent: True):
    """The mesh axis (or tuple of axes) of each parallel factor: the one its
    first sharded operand dimension has, where `usable(axes, extent)`, and
    no axis twice. `specs` holds each operand's (PartitionSpec, shape)."""
    axis_of, used = {}, set()
    for factors, (spec, shape) in zip(operands, specs):
        spec = tuple(spec) + (None,) * (len(factors) - len(spec))
        for f, axis, extent in zip(factors, spec, shape):
            if not _parallel(f) or axis is None or f in axis_of:
                continue
            axes = axis if isinstance(axis, tuple) else (axis,)
            if used.isdisjoint(axes) and usable(axes, extent):
                axis_of[f] = axis
                used.update(axes)
    return axis_of


def _spec(axis_of, factors):
    """The PartitionSpec of a tensor with these factors: parallel ones along
    their mesh axes, every other dimension replicated."""
    from jax.sharding import PartitionSpec

    return PartitionSpec(*(axis_of.get(f) if _parallel(f) else None
                           for f in factors))


def _summed(local, sums, axis_of):
    """`local` with each result that is a sum over a parallel factor
    (KC_SUM: `sums` holds that factor per result, or None) summed over the
    mesh axes that factor is sharded along: each device's kernel wrote the
    partial sum of its shard. `local` as it is where nothing is summed.
    Half-precision partial sums are added in float32 and rounded once, as
    one kernel that summed every row in float would round its sum."""
    import jax
    import jax.numpy as jnp

    axes = [axis_of.get(f) if f is not None else None for f in sums]
    if all(a is None for a in axes):
        return local

    def psum(partial, axis):
        if partial.dtype not in (jnp.float16, jnp.bfloat16):
            return jax.lax.psum(partial, axis)
        wide = jax.lax.psum(partial.astype(jnp.float32), axis)
        return wide.astype(partial.dtype)

    def summed(*args):
        out = local(*args)
        many = isinstance(out, (tuple, list))
        out = [psum(o, a) if a is not None else o
               for o, a in zip(out if many else (out,), axes)]
        return tuple(out) if many else out[0]

    return summed


def _shardings(mesh, operands, results, arg_shapes, result_shape, sums=()):
    """The shardings a sharded op runs with: each parallel factor (p_*, b*)
    keeps the mesh axis its first sharded operand dimension has, and every
    other dimension is replicated. Returns (result shardings, operand
    shardings, the parallel factors' mesh axes). A result that sums over a
    parallel factor (KC_SUM) lacks that factor: it is replicated. A summed
    factor whose extent the mesh axes do not divide is not sharded: XLA
    would pad the shards, and the padding would be summed."""
    from jax.sharding import NamedSharding

    axis_of = _parallel_axes(operands, [
        (s.sharding.spec, s.shape) if isinstance(s.sharding, NamedSharding)
        else ((), s.shape) for s in arg_shapes])
    for f in set(sums) & set(axis_of):
        axes = axis_of[f] if isinstance(axis_of[f], tuple) else (axis_of[f],)
        count = 1
        for a in axes:
            count *= mesh.shape[a]
        if any(extent % count for factors, s in zip(operands, arg_shapes)
               for g, extent in zip(factors, s.shape) if g == f):
            del axis_of[f]

    def named(factors):
        return NamedSharding(mesh, _spec(axis_of, factors))

    results_sharding = [named(f) for f in results]
    if not isinstance(result_shape, (tuple, list)):
        results_sharding = results_sharding[0]
    else:
        results_sharding = type(result_shape)(results_sharding)
    return results_sharding, tuple(named(f) for f in operands), axis_of


def _explicit(local, operands, results, sums, dyn):
    """`local` applied to `dyn` under explicit sharding, or None where no
    operand's type is sharded along an Explicit mesh axis.

    Under Explicit axes (jax.make_mesh's default from jax 0.12) the
    shardings are part of the operands' types, known while tracing, so the
    rule is applied here rather than at XLA's partitioning, where a
    custom_partitioning rule loses the result's sharding (it comes back
    replicated, after an all-gather). Each parallel factor keeps the
    Explicit mesh axis its first sharded operand dimension has, where that
    axis divides the dimension; every other dimension is resharded to
    replicated (a collective the rule asks for, as under Auto axes), and
    shard_map runs the kernel on each device's shards. The results' types
    say how they are sharded; a result that sums over a parallel factor
    (KC_SUM) is the psum of the devices' partial sums, replicated."""
    import jax
    from jax.sharding import AxisType

    def explicit(m):
        return any(t == AxisType.Explicit for t in getattr(m, "axis_types", ()))

    # The mesh: the operands' (replicated ones too), else the context's
    # (jax.set_mesh), where a custom_partitioning rule would not be applied.
    mesh, specs = None, []
    for x in dyn:
        sharding = getattr(jax.typeof(x), "sharding", None)
        specs.append((tuple(getattr(sharding, "spec", None) or ()), x.shape))
        if mesh is None and explicit(getattr(sharding, "mesh", None)):
            mesh = sharding.mesh
    if mesh is None and explicit(jax.sharding.get_abstract_mesh()):
        mesh = jax.sharding.get_abstract_mesh()
    if mesh is None:
        return None
    kinds = dict(zip(mesh.axis_names, mesh.axis_types))
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))

    def usable(axes, extent):
        count = 1
        for a in axes:
            count *= sizes[a]
        return (all(kinds[a] == AxisType.Explicit for a in axes)
                and extent % count == 0)

    axis_of = _parallel_axes(operands, specs, usable)
    in_specs = tuple(_spec(axis_of, f) for f in operands)
    out_specs = tuple(_spec(axis_of, f) for f in results)
    args = [x if _same_spec(spec, want) else jax.sharding.reshard(x, want)
            for x, (spec, _), want in zip(dyn, specs, in_specs)]
    summed = _summed(local, sums, axis_of)

    def run(*args):
        out = summed(*args)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    # Manual along the axes the rule uses only: under jax.vmap of a batch
    # sharded along an axis, that axis belongs to vmap, which keeps the
    # batch sharded around the shard_map.
    axes = set()
    for axis in axis_of.values():
        axes.update(axis if isinstance(axis, tuple) else (axis,))
    if not axes:
        return run(*args) if len(results) > 1 else run(*args)[0]
    try:
        out = jax.shard_map(run, mesh=mesh, in_specs=in_specs,
                            out_specs=out_specs,
                            axis_names=frozenset(axes))(*args)
    except ValueError:
        # jax before 0.9 runs vmap's rule for a batch sharded along an
        # Explicit axis with that axis still vmap's: it cannot be manual
        # there, and XLA's partitioning applies the rule instead.
        return None
    return out if len(results) > 1 else out[0]


def _same_spec(a, b):
    """Whether two PartitionSpecs shard alike (trailing Nones aside)."""
    a, b = list(a), list(b)
    while a and a[-1] is None:
        a.pop()
    while b and b[-1] is None:
        b.pop()
    return a == b


def _typed_like(value, like):
    """`value` with the sharding of `like`'s type, where that names an
    Explicit mesh axis. A derivative kernel need not split as its forward
    kernel does: a backward kernel without KC_PARALLEL, or with a gradient
    that sums over a parallel dimension (KC_SUM), gives results that come
    back replicated, whereas JAX types a derivative as its primal, sharding
    included."""
    import jax
    from jax.sharding import AxisType

    want = getattr(jax.typeof(like), "sharding", None)
    got = getattr(jax.typeof(value), "sharding", None)
    mesh = getattr(want, "mesh", None)
    if (got is None or not any(t == AxisType.Explicit
                               for t in getattr(mesh, "axis_types", ()))
            or _same_spec(tuple(got.spec), tuple(want.spec))):
        return value
    return jax.sharding.reshard(value, want)


def sharded(op, static, operands, results, batched=(), sums=()):
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

    `sums` holds, per result, the parallel factor ("p_<symbol>") it is a sum
    over (KC_SUM), or None: such a result lacks that factor, each device's
    kernel writes the partial sum of its shard, and the op's result is their
    psum over the mesh axes that shard the factor, replicated along them.
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
                tuple(tuple(flags[j] for j in kept) for flags in batched),
                sums)(*args)
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

        sums_of = tuple(sums) or (None,) * len(results)

        def partition(mesh, arg_shapes, result_shape):
            results_sharding, operands_sharding, axis_of = _shardings(
                mesh, rule_operands, rule_results, arg_shapes, result_shape,
                sums_of)
            return (mesh, _summed(local, sums_of, axis_of), results_sharding,
                    operands_sharding)

        part = custom_partitioning(local)
        part.def_partition(partition=partition, sharding_rule=rule)

        def primal(*dyn):
            # Under jax.vmap, custom_vmap's rule below calls `sharded` again
            # with the whole batched operands, whose types hold the batch's
            # sharding too.
            explicit = _explicit(local, rule_operands, rule_results, sums_of,
                                 dyn)
            return part(*dyn) if explicit is None else explicit

        vmappable = custom_batching.custom_vmap(primal)

        @vmappable.def_vmap
        def _batched(axis_size, in_batched, *dyn):
            flags = tuple(bool(b) for b in in_batched)
            out = sharded(fn, (), operands, results, (flags,) + tuple(batched),
                          sums)(*dyn)
            return out, jax.tree_util.tree_map(lambda _: True, out)

        return vmappable(*dynamic)

    return apply


# --- autodiff (KC_VJP, KC_JVP) ----------------------------------------------


class Derivative:
    """A kernel that differentiates another, as the generated package passes
    it to `differentiable`: the backward kernel (KC_VJP) or the tangent
    kernel (KC_JVP) of a forward kernel.

    kernel: its name. function: its generated function. params: its
    positional arguments, each ("value", name) for a forward input (KC_VJP:
    or output), ("cotangent", output) (KC_VJP), ("tangent", input) (KC_JVP)
    or ("static", scalar). results: per result, the forward input it is the
    gradient of (KC_VJP) or the output it is the tangent of (KC_JVP).
    modes: what the kernel declares itself ("vjp" for KC_VJP, "jvp" for
    KC_JVP), which decides how it is differentiated in turn.
    """

    def __init__(self, kernel, function, params, results, modes=()):
        self.kernel = kernel
        self.function = function
        self.params = tuple(params)
        self.results = tuple(results)
        self.modes = tuple(modes)

    @property
    def linear(self):
        """Whether the kernel takes no forward value: it is then linear in
        all its tensor arguments (cotangents or tangents), so its derivative
        is the kernel itself."""
        return not any(kind == "value" for kind, _ in self.params)

    @property
    def inputs(self):
        """The forward names of its cotangent or tangent arguments."""
        return tuple(n for kind, n in self.params
                     if kind in ("cotangent", "tangent"))

    def __call__(self, statics, values, derivatives):
        """Runs the kernel; returns {forward name: result}."""
        call = [statics[n] if kind == "static" else
                values[n] if kind == "value" else derivatives[n]
                for kind, n in self.params]
        out = self.function(*call)
        return dict(zip(self.results, out if len(self.results) > 1 else (out,)))


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


def _inexact(x):
    import jax.numpy as jnp

    return jnp.issubdtype(x.dtype, jnp.inexact)


def _zeros(x):
    import jax.numpy as jnp

    return jnp.zeros(x.shape, x.dtype)


def differentiable(kernel, op, args, static, results, vjp=None, jvp=None):
    """`op` as a jax.custom_jvp whose derivatives come from the kernels that
    differentiate it: `vjp` (a Derivative, KC_VJP), `jvp` (KC_JVP), or both.

    args: the op's argument names, in order; `static` the positions of
    static scalars among them. results: the kernel's result names, in
    order. Integer inputs and outputs have no derivatives.

    The tangent of the op is one kernelc_linear (see `_linear`): reverse
    mode transposes it into the backward kernel, forward mode evaluates it
    with the tangent kernel. Forward mode without KC_JVP comes from the
    backward kernel where it can: a backward kernel that takes no forward
    value has a Jacobian independent of the inputs, so the op is affine in
    its float inputs and its Jacobian-vector product is op(t) - op(0) (exact
    for a linear op; an affine one adds the rounding of op(0)); a backward
    kernel that declares KC_VJP gives it as the gradient of its cotangents.
    Otherwise forward mode is an error that names the kernel and the
    annotation it needs, and reverse mode without KC_VJP likewise.

    Derivative kernels are called through their generated functions, so
    they are differentiated by their own declarations; one that takes no
    forward value is linear, and differentiates as itself (its transpose is
    the op's other mode). So jax.hessian, grad of grad and
    jacfwd(jacrev(...)) work as far as the declared kernels reach.
    The derivatives' shapes and dtypes are checked at trace time.
    """
    import jax
    import numpy as np

    static = tuple(static)
    dynamic = [n for i, n in enumerate(args) if i not in static]
    f = jax.custom_jvp(op, nondiff_argnums=static)
    checked = set()

    def merge(statics, dyn):
        it = iter(dyn)
        return [statics[n] if i in static else next(it)
                for i, n in enumerate(args)]

    def outputs(out):
        return dict(zip(results, out if len(results) > 1 else (out,)))

    def backward_message():
        return (f"{kernel}: cannot differentiate in reverse mode (jax.grad, "
                f"jax.vjp, jax.jacrev): the kernel declares a tangent kernel "
                f"('{jvp.kernel}', KC_JVP), which gives forward mode (jax.jvp, "
                f"jax.jacfwd), and a kernel cannot be transposed; reverse mode "
                f"needs a backward kernel: name one with KC_VJP(\"...\") "
                f"instead")

    def forward_message():
        return (f"{kernel}: cannot differentiate in forward mode (jax.jvp, "
                f"jax.jacfwd, jax.hessian): the kernel declares a backward "
                f"kernel ('{vjp.kernel}', KC_VJP), which gives reverse mode; "
                f"since '{vjp.kernel}' takes forward values, the "
                f"Jacobian-vector product needs a tangent kernel: name one "
                f"with KC_JVP(\"...\") beside KC_VJP, or give "
                f"'{vjp.kernel}' a backward kernel with KC_VJP(\"...\")")

    def modes(statics, values, ins, outs):
        """The Jacobian-vector product (tangents of `ins` -> of `outs`) and
        the vector-Jacobian product (cotangents of `outs` -> of `ins`) at
        `values`, as functions of dicts."""

        def transpose(vals, cts):
            if vjp is None:
                raise TypeError(backward_message())
            got = _run(vjp, statics, vals, cts, forward)
            return {n: _typed_like(got[n] if n in got else _zeros(vals[n]), vals[n])
                    for n in ins}

        def forward(vals, dots):
            if jvp is not None:
                got = _run(jvp, statics, vals, dots, transpose)
            elif vjp.linear:
                def at(t):
                    return outputs(f(*merge(statics, [
                        t[n] if n in dots else vals[n] for n in dynamic])))
                at_t = at(dots)
                at_0 = at({n: _zeros(d) for n, d in dots.items()})
                got = {n: at_t[n] - at_0[n] for n in outs}
            elif "vjp" in vjp.modes:
                # The backward kernel is linear in the cotangents: its
                # gradient with respect to them (anywhere, here at zero) is
                # the Jacobian-vector product.
                def grads(cts):
                    g = _run(vjp, statics, vals, cts, None)
                    return tuple(g[n] for n in vjp.results)

                zero = {n: _zeros(vals[n]) for n in vjp.inputs}
                _, pull = jax.vjp(grads, zero)
                (got,) = pull(tuple(dots[n] for n in vjp.results))
            else:
                raise TypeError(forward_message())
            return {n: _typed_like(got[n] if n in got else _zeros(vals[n]), vals[n])
                    for n in outs}

        return forward, transpose

    def check(statics, values):
        # Each derivative kernel's results have the shapes and dtypes of what
        # they are derivatives of: once per argument shapes and statics.
        # An optional input that is None stays None.
        key = (tuple((n, None) if values[n] is None else
                     (n, np.shape(values[n]), np.dtype(values[n].dtype).name)
                     for n in dynamic), tuple(sorted(statics.items())))
        if key in checked:
            return
        specs = {n: None if v is None else
                 jax.ShapeDtypeStruct(np.shape(v), v.dtype)
                 for n, v in values.items()}
        for d, kind, noun, role in ((vjp, "backward", "gradient", "input"),
                                    (jvp, "tangent", "tangent", "output")):
            if d is None:
                continue
            got = jax.eval_shape(
                lambda v, x, d=d: _run(d, statics, v, x, None),
                specs, {n: specs[n] for n in d.inputs})
            for n in d.results:
                if specs[n] is None:
                    continue
                _check_derivative(kernel, d.kernel, kind, got[n], n, noun, role,
                                  specs[n])
        checked.add(key)

    def rule(*a):
        statics = dict(zip((args[i] for i in static), a[:len(static)]))
        primals, tangents = a[len(static):]
        # The primal through f itself: a higher order differentiates it again.
        out = f(*merge(statics, primals))
        outs = outputs(out)
        values = dict(zip(dynamic, primals))
        values.update(outs)
        ins = [n for n in dynamic if _inexact(values[n])]
        diff_outs = [n for n in results if _inexact(outs[n])]
        forward, transpose = modes(statics, values, ins, diff_outs)
        check(statics, values)
        dots = dict(zip(dynamic, tangents))
        names = tuple(values)
        lin = _LinearRule(names, tuple(ins), tuple(diff_outs),
                          [jax.typeof(outs[n]) for n in diff_outs],
                          forward, transpose)
        by_out = dict(zip(diff_outs, _linear(
            lin, [values[n] for n in names], [dots[n] for n in ins])))
        tangent_out = tuple(
            by_out[n] if n in by_out else
            np.zeros(np.shape(o), dtype=jax.dtypes.float0)
            for n, o in outs.items())
        return out, tangent_out if len(results) > 1 else tangent_out[0]

    f.defjvp(rule)
    return f


def _run(derivative, statics, values, derivatives, dual):
    """Runs a derivative kernel ({forward name: result}). One that takes no
    forward value is linear: it runs as a kernelc_linear whose forward is
    itself and whose transpose is `dual` (the forward kernel's other mode),
    so that it differentiates as itself."""
    import jax

    if not derivative.linear or dual is None:
        return derivative(statics, values, derivatives)
    ins = derivative.inputs
    outs = derivative.results
    rule = _LinearRule((), ins, outs, [jax.typeof(values[n]) for n in outs],
                       lambda _, d: derivative(statics, {}, d),
                       lambda _, c: dual(values, c))
    return dict(zip(outs, _linear(rule, [], [derivatives[n] for n in ins])))


class _LinearRule:
    """What one kernelc_linear computes: outputs `outs` from tangents `ins`,
    linearly, at the values `values` (names, in operand order). forward
    ({value}, {in: tangent}) -> {out: tangent}; transpose ({value},
    {out: cotangent}) -> {in: cotangent}. Either raises where the kernels
    do not give it. A primitive's parameter: hashed by identity."""

    def __init__(self, values, ins, outs, out_avals, forward, transpose):
        self.values = tuple(values)
        self.ins = tuple(ins)
        self.outs = tuple(outs)
        self.out_avals = list(out_avals)
        self.forward = forward
        self.transpose = transpose

    def forward_flat(self, *args):
        n = len(self.values)
        got = self.forward(dict(zip(self.values, args[:n])),
                           dict(zip(self.ins, args[n:])))
        return [got[o] for o in self.outs]

    def transpose_flat(self, values, cts):
        got = self.transpose(dict(zip(self.values, values)),
                             dict(zip(self.outs, cts)))
        return [got[i] for i in self.ins]

    def batched(self, value_axes, size):
        """The rule under jax.vmap: tangents (and cotangents) batched along
        axis 0, values along `value_axes` (0 or None)."""
        import jax
        from jax.core import ShapedArray

        axes = dict(zip(self.values, value_axes))
        return _LinearRule(
            self.values, self.ins, self.outs,
            [ShapedArray((size,) + tuple(a.shape), a.dtype)
             for a in self.out_avals],
            jax.vmap(self.forward, in_axes=(axes, 0)),
            jax.vmap(self.transpose, in_axes=(axes, 0)))


_LINEAR = None


def _linear(rule, values, tangents):
    """kernelc_linear: the tangent of a kernelc op, linear in `tangents`
    and computed at `values` as `rule` says. Forward mode evaluates
    rule.forward (eagerly, or lowered into the program); reverse mode
    transposes it into rule.transpose. Its own derivative, for higher
    orders: itself in the tangents, and rule.forward differentiated in the
    values."""
    global _LINEAR
    if _LINEAR is None:
        _LINEAR = _define_linear()
    return _LINEAR.bind(*values, *tangents, rule=rule)


def _define_linear():
    import jax
    import jax.numpy as jnp
    from jax.extend.core import Primitive
    from jax.interpreters import ad, batching, mlir

    p = Primitive("kernelc_linear")
    p.multiple_results = True
    p.def_impl(lambda *args, rule: rule.forward_flat(*args))
    p.def_abstract_eval(lambda *args, rule: rule.out_avals)
    mlir.register_lowering(
        p, lambda ctx, *args, rule: mlir.lower_fun(
            rule.forward_flat, multiple_results=True)(ctx, *args))

    def nonzero(ts):
        return any(type(t) is not ad.Zero for t in ts)

    def transpose(cts, *args, rule):
        n = len(rule.values)
        cts = [ad.instantiate_zeros(ct) for ct in cts]
        return [None] * n + list(rule.transpose_flat(args[:n], cts))

    def jvp(primals, tangents, *, rule):
        n = len(rule.values)
        out = p.bind(*primals, rule=rule)
        dvalues, dtangents = tangents[:n], tangents[n:]
        dout = None
        if nonzero(dtangents):
            dout = p.bind(*primals[:n], *map(ad.instantiate_zeros, dtangents),
                          rule=rule)
        if nonzero(dvalues):
            _, dv = jax.jvp(lambda *v: rule.forward_flat(*v, *primals[n:]),
                            tuple(primals[:n]),
                            tuple(map(ad.instantiate_zeros, dvalues)))
            dout = dv if dout is None else [a + b for a, b in zip(dout, dv)]
        if dout is None:
            dout = [ad.Zero(a.to_tangent_aval()) for a in rule.out_avals]
        return out, dout

    def batch(args, dims, *, rule):
        n = len(rule.values)
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        values = [a if d is None else jnp.moveaxis(a, d, 0)
                  for a, d in zip(args[:n], dims[:n])]
        tangents = [jnp.broadcast_to(a, (size,) + a.shape) if d is None else
                    jnp.moveaxis(a, d, 0) for a, d in zip(args[n:], dims[n:])]
        batched = rule.batched([None if d is None else 0 for d in dims[:n]], size)
        return p.bind(*values, *tangents, rule=batched), [0] * len(rule.outs)

    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batch
    return p


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
            f"kernel; name one with KC_VJP(\"...\") (or a tangent kernel with "
            f"KC_JVP(\"...\") for forward mode)")

    f.defjvp(jvp)
    return f


# --- eager calls -------------------------------------------------------------
#
# An eager call with concrete JAX arrays, and static scalars given as the
# Python type of their kind, goes straight to the op's jitted function: the
# op converts its scalars and checks its tensors (dtype, rank, dimensions)
# where it traces, which jit does once per shapes, dtypes and static
# values, and reports the same errors that the public function would. jit
# keys its cache by the scalars' values: equal values of the one Python type
# convert alike, and a value that `scalar` rejects (a bool for a number) is
# never of that type. Anything else (NumPy arrays, lists, tracers, None,
# NumPy scalars) takes the public function's full path, so errors and
# conversions stay exactly as they are.

# The types of concrete JAX arrays (not tracers) met so far.
_CONCRETE_ARRAYS: set = set()


def arrays(*values):
    """Whether every value is a concrete JAX array (not a tracer)."""
    for value in values:
        kind = type(value)
        if kind not in _CONCRETE_ARRAYS:
            import jax

            if (not issubclass(kind, jax.Array)
                    or issubclass(kind, jax.core.Tracer)):
                return False
            _CONCRETE_ARRAYS.add(kind)
    return True


# (type of value, dtype name) -> a function of the value that returns what
# `scalar` returns for it, or None where `scalar` must decide.
_NUMBERS: dict = {}


def number(value, dtype):
    """`scalar`'s result for a value of the common kinds (a Python bool,
    int or float of the parameter's kind, or a NumPy scalar of its exact
    type) that it accepts; None for any other value, which `scalar` then
    checks in full. The type's range is read once per type and dtype, not
    on every call."""
    convert = _NUMBERS.get((type(value), dtype))
    if convert is None:
        convert = _NUMBERS.setdefault((type(value), dtype),
                                      _number_conversion(type(value), dtype))
    return convert(value)


def _never(_):
    return None


class Exact:
    """A static float scalar as jax.jit keys it: by its type and bits.
    jit compares static arguments with `==`, under which -0.0 is 0.0 (the
    jit of one would run for the other, with the other's sign) and NaN is
    not NaN (every call would compile anew). `scalar` unwraps it."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value
        self._key = (type(value), value.tobytes())

    def __eq__(self, other):
        return type(other) is Exact and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Exact({self.value!r})"


def exact(value):
    """`value`, a static float scalar as `scalar` returns it, as the eager
    jit keys it: an Exact where `==` would mistake it (a zero or NaN)."""
    return Exact(value) if value == 0 or value != value else value


def _number_conversion(kind, dtype):
    import numpy as np

    if kind is Exact:
        return lambda v: v.value  # converted and checked before `exact`
    np_dtype = _dtype(dtype)
    if kind is np_dtype.type and issubclass(kind, (np.integer, np.floating)):
        # Its range is the type's; `scalar` returns it as it is.
        return kind
    if dtype == "bool":
        return bool if kind is bool else _never
    make = np_dtype.type
    if np.issubdtype(np_dtype, np.integer):
        if kind is not int:
            return _never
        info = np.iinfo(np_dtype)
        low, high = int(info.min), int(info.max)
        return lambda v: make(v) if low <= v <= high else None
    if kind is not float:
        return _never
    # A float out of range (or not finite) goes to `scalar`, which raises
    # or passes infinities and NaN on; so does a type that NumPy knows no
    # range of (bfloat16).
    try:
        high = float(np.finfo(np_dtype).max)
    except ValueError:
        return _never
    return lambda v: make(v) if -high <= v <= high else None


class Lazy:
    """A wrapper of an op (its autodiff rule, sharding rule or jitted
    function) that is built when it is first called or asked for, once:
    importing a package defines functions and builds none of them.

    `build` returns the wrapper; `get()` returns it, building it under a
    lock the first time, so that threads that call an op for the first time
    together share one wrapper (jit and custom_jvp caches are per wrapper).
    `function` is None until then.
    """

    def __init__(self, build):
        self._build = build
        self._lock = threading.Lock()
        self.function = None

    def get(self):
        function = self.function
        if function is None:
            with self._lock:
                if self.function is None:
                    self.function = self._build()
                    self._build = None
                function = self.function
        return function

    def __call__(self, *args):
        function = self.function
        if function is None:
            function = self.get()
        return function(*args)


def traced(*args):
    """Whether any argument is a JAX tracer (under jit, vmap, grad...)."""
    import jax

    return any(isinstance(a, jax.core.Tracer) for a in args)


def jit(fn, static):
    """jax.jit of `fn` with the static scalars at positions `static`."""
    import jax

    return jax.jit(fn, static_argnums=tuple(static))


