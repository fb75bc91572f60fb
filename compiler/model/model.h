// The kernel model: what kernelc knows about each kernel, independent of how
// it was read (C++ annotations or a JSON spec). Plain structs, no Clang types.
// Every later stage reads only this.
#ifndef KERNELC_COMPILER_MODEL_MODEL_H_
#define KERNELC_COMPILER_MODEL_MODEL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "compiler/diag/diagnostic.h"

namespace kernelc::model {

using diag::SourceLoc;

// Element and scalar types. The JSON and Python names are NumPy's.
enum class DType {
  kBool,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
};

std::string_view DTypeName(DType t);  // "float32", "bfloat16", "bool", ...
std::optional<DType> DTypeFromName(std::string_view name);
int DTypeBytes(DType t);
bool IsFloat(DType t);    // f16, bf16, f32, f64
bool IsInteger(DType t);  // signed or unsigned integers (not bool)
// The C++ spelling used in generated code: "float", "int32_t", "bool",
// "::kc::half", "::kc::bfloat16".
std::string_view DTypeCppName(DType t);

enum class Role {
  kIn,       // read-only input tensor
  kInMut,    // input tensor mutated in place and returned (aliased)
  kOut,      // output tensor allocated by XLA and returned
  kScalar,   // static attribute, a Python argument
  kDerived,  // computed by the shim from shapes; not a Python argument
};

std::string_view RoleName(Role r);  // "in", "inmut", "out", "scalar", "derived"
std::optional<Role> RoleFromName(std::string_view name);
inline bool IsTensor(Role r) {
  return r == Role::kIn || r == Role::kInMut || r == Role::kOut;
}
// The tensors a call passes in (In, InMut) and those it returns (Out,
// InMut): an InMut is both.
inline bool IsInput(Role r) { return r == Role::kIn || r == Role::kInMut; }
inline bool IsResult(Role r) { return r == Role::kOut || r == Role::kInMut; }

// How a tensor reaches the kernel: a raw data pointer, or a kc::In/InMut/Out
// view that also carries the shape.
enum class Access { kPointer, kView };

// A piece of annotation text and where its first character is in the source
// (inside the string literal), so errors can point inside it.
struct Text {
  std::string text;
  SourceLoc loc;
};

struct Param {
  std::string name;
  Role role = Role::kIn;
  DType dtype = DType::kF32;
  Access access = Access::kPointer;  // tensors only
  // Tensors: the rank a view type states (kc::In<float, 2> -> 2); -1 for raw
  // pointers, whose rank comes from the shape.
  int rank = -1;
  std::optional<Text> shape;    // tensors: "n, m", "x", "" ...
  std::optional<Text> init;     // kOut only: fill value, as written
  std::optional<Text> derived;  // kDerived only: the expression
  // kScalar only (KC_TRACED): a traced operand, a 0-d array in JAX, so a new
  // value does not recompile; the kernel still receives a plain scalar,
  // which the generated entry reads from the operand.
  bool traced = false;
  // kIn only (KC_OPTIONAL): the argument may be None; the kernel then gets a
  // null pointer (a view: null data and shape zero).
  bool optional = false;
  SourceLoc loc;  // the parameter's name
  // kOut only (KC_SUM("n")): a sum over the KC_PARALLEL dimension `n`, which
  // the output does not have; under sharding along n, each device's kernel
  // writes the partial sum of its shard and the op's result is their sum.
  std::optional<Text> sum;  // after loc: aggregate initializers end there
};

// The arrays a call passes to the kernel's handler: In and InMut tensors
// and traced scalars, in declaration order.
inline bool IsOperand(const Param& p) { return IsInput(p.role) || p.traced; }
// A scalar that is a static attribute of the call (not KC_TRACED).
inline bool IsStatic(const Param& p) {
  return p.role == Role::kScalar && !p.traced;
}

enum class KernelKind {
  kGlobal,  // a __global__ kernel, run over a launch grid
  kHost,    // a KC_KERNEL host function, called once with whole tensors
};

std::string_view KernelKindName(KernelKind k);  // "global", "host"

// A use of a block-level CUDA feature (__shared__, __syncthreads, warp
// intrinsics, cooperative groups): on the CPU such a kernel runs under the
// block executor, each thread of a block a fiber, instead of in the plain
// grid loop.
struct BlockFeature {
  std::string what;  // "__syncthreads", "__shared__", "__shfl_sync", ...
  SourceLoc loc;
};

// The `what` of a grid-wide barrier (cooperative_groups::grid_group::sync,
// this_grid().sync()), which no target but CUDA can run.
inline constexpr std::string_view kGridSync = "grid_group::sync";

// An `extern __shared__ T name[]` declaration (dynamic shared memory) that a
// kernel reaches: the array is defined outside the kernel source, in the
// innermost namespace around the declaration.
struct ExternShared {
  // That namespace, outermost first; "" is an unnamed one. Empty: the
  // global namespace.
  std::vector<std::string> namespaces;
  std::string name;
  // The element type as C++ spells it at namespace scope ("float",
  // "__half", "::ns::Pair").
  std::string type;

  bool operator<(const ExternShared& o) const {
    return std::tie(namespaces, name, type) <
           std::tie(o.namespaces, o.name, o.type);
  }
  bool operator==(const ExternShared& o) const {
    return namespaces == o.namespaces && name == o.name && type == o.type;
  }
};

// A name that annotation expressions of a kernel may use for an integer:
// a template parameter of the kernel's template (its value in this
// instantiation), or an object-like macro whose expansion is an integer
// constant expression (its value, as Clang evaluates it).
struct Constant {
  std::string name;
  int64_t value = 0;
};

// A variant of a template kernel: one explicit instantiation definition of
// the template (`template __global__ void reduce<float, 256>(...);`).
struct Instantiation {
  std::string op;  // the template's name, which the op is named after
  // The template arguments in C++, as the instantiation spells them
  // ("float", "256"): Kernel::name is "<op><<args>>".
  std::vector<std::string> args;
  int variant = 0;  // the instantiation's index among the op's, source order
  SourceLoc loc;    // the explicit instantiation
};

// How a __global__ kernel bounds its threads, when its body has the form
// that lets a target run only the threads below the bound (read by the
// frontend from the C++ source, never from a JSON spec): the body opens
// with declarations free of side effects, among them
//   INT i = blockIdx.x * blockDim.x + threadIdx.x;
// (in either order of the operands, with integer casts), then either
// `if (i < bound) ...` as its last statement or `if (i >= bound) return;`,
// where `bound` is an integer parameter of the kernel. A thread whose
// global index is at least the bound then does nothing.
struct GridGuard {
  std::string bound;  // the parameter's name
  // The narrowest integer type the index passes through (the variable's
  // and those of its arithmetic and casts): the index is exact while the
  // global index fits it. 32 or 64 bits.
  int index_bits = 64;
  bool index_signed = true;
  SourceLoc loc;  // the guard's condition
};

// How a PTX kernel's `.entry` takes the spec's parameters (README, "PTX
// kernels"). Scalars are passed as themselves under both ABIs.
enum class PtxAbi {
  // As the C++ kernel of the spec would take them: a pointer per pointer
  // tensor, a kc::cuda::View<rank> per view tensor.
  kKernelc,
  // As Numba-CUDA flattens its arrays: per tensor, 5 + 2 * rank 64-bit
  // parameters (meminfo, parent, nitems, itemsize, data, shape...,
  // strides... in bytes); meminfo and parent are null.
  kNumba,
};

std::string_view PtxAbiName(PtxAbi abi);  // "kernelc", "numba"
std::optional<PtxAbi> PtxAbiFromName(std::string_view name);

// A kernel whose CUDA code is given as PTX (a JSON spec's "ptx"), from any
// front end: the cuda target assembles it instead of compiling a source.
struct PtxCode {
  std::string file;   // the .ptx file, as the spec resolves it
  std::string entry;  // the `.entry` that is the kernel
  PtxAbi abi = PtxAbi::kKernelc;
  SourceLoc loc;  // the spec's "ptx"
};

struct Kernel {
  // A kernel's C++ name; for a template's variant, the instantiation as a
  // C++ expression names it: "reduce<float, 256>".
  std::string name;
  KernelKind kind = KernelKind::kGlobal;
  std::optional<Instantiation> instantiation;
  // Integer constants of the kernel's annotation expressions: template
  // arguments and macros, by name (sorted).
  std::vector<Constant> constants;
  // 1 to 3 expressions: total threads along x, y, z (KC_GRID) or, with
  // grid_in_blocks, blocks (KC_BLOCKS).
  std::vector<Text> grid;
  bool grid_in_blocks = false;
  std::vector<int64_t> block;  // threads per block; empty: the default
  // KC_SHARED_BYTES: dynamic shared memory per block, an expression.
  std::optional<Text> shared_bytes;
  std::vector<Param> params;  // declaration order
  // The first use of each block-level feature, in source order.
  std::vector<BlockFeature> block_features;
  // Sorted, without repeats.
  std::vector<ExternShared> extern_shared;
  // The guard that bounds the kernel's threads, when it has that form.
  std::optional<GridGuard> guard;
  // KC_VJP("bwd"): the kernel in the same sources that computes this one's
  // vector-Jacobian product (see sema for the pairing rules).
  std::optional<Text> vjp;
  // KC_JVP("jvp"): the kernel that computes this one's Jacobian-vector
  // product (forward mode); exclusive with vjp.
  std::optional<Text> jvp;
  // KC_ELEMENTWISE: all tensors share one shape and each output element
  // depends only on the inputs at its index.
  bool elementwise = false;
  // KC_PARALLEL("m", ...): shape symbols along which the work splits with no
  // communication; each is one Text.
  std::vector<Text> parallel;
  // The file that defines the kernel, as given; empty for a kernel that
  // has only PTX (then the cpu target has no code for it).
  std::string source;
  // Set when the kernel's CUDA code is PTX: the cuda target assembles it
  // and never compiles `source` for the GPU.
  std::optional<PtxCode> ptx;
  SourceLoc loc;  // the kernel's name

  // The op the kernel belongs to, the Python function that runs it: its
  // template's name for a variant, else its name.
  const std::string& Op() const {
    return instantiation ? instantiation->op : name;
  }
  // An identifier for the kernel in generated code, unique in the module:
  // its name, or for a variant "<op>__<variant>".
  std::string Id() const;
  const Constant* FindConstant(std::string_view name) const;
  // Whether a parameter is a traced scalar (KC_TRACED).
  bool HasTraced() const;
  // Whether a batch of the kernel folds into dimension 0 (KC_ELEMENTWISE):
  // not with a traced scalar, whose batch holds a value per element.
  bool FoldsElementwise() const { return elementwise && !HasTraced(); }

  // The file the cuda target builds the kernel from: its PTX, or its
  // source.
  const std::string& CudaSource() const { return ptx ? ptx->file : source; }

  const Param* FindParam(std::string_view name) const;
  // The index of the parameter `name` in `params`; -1 when there is none.
  int IndexOf(std::string_view name) const;
};

// What the backends compile of a source where it differs from its file
// (a whole .cu file, say, with its host code): the frontend leaves out the
// host code that no device code uses (a sample's main, its allocations and
// launches), in the source and in the user's headers it includes, and for
// NVRTC, which has no C or C++ library headers beyond kernelc's own, the
// #include of those. What is left out is blanked with spaces, so lines and
// columns stay the files'. Empty texts: the file as it is.
struct KernelText {
  std::string cpu;   // what the CPU's compiler reads
  std::string cuda;  // what NVRTC reads
  // A user header the source includes, by the name its #include spells
  // ("common.h"), relative to the including file's directory.
  struct Header {
    std::string name;
    std::string cpu, cuda;
  };
  std::vector<Header> headers;

  bool empty() const { return cpu.empty() && cuda.empty() && headers.empty(); }
};

struct Module {
  std::vector<std::string> sources;  // as given on the command line
  std::vector<Kernel> kernels;       // source order
  // Parallel to `sources` (or shorter: the rest are the files as they are);
  // read by the backends only, so not part of the JSON model.
  std::vector<KernelText> kernel_texts;

  const Kernel* FindKernel(std::string_view name) const;
};

// Calls `f` on every file path the module holds, to read or to rename: the
// sources, each kernel's source, and the file of every source location.
void ForEachPath(Module& m, const std::function<void(std::string&)>& f);

// The default threads per block for a grid of `rank` dimensions
// (256 / 16x16 / 8x8x4).
std::vector<int64_t> DefaultBlock(int rank);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_MODEL_H_
