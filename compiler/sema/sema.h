// Semantic analysis: checks a model and resolves what the emitters need for
// each kernel (ranks, which input dimension binds each shape symbol, the
// checks on the others, derived values in evaluation order, output shapes,
// the grid, the pairing of a kernel with the kernel that differentiates
// it). Both the C++ shim and the Python package are emitted from this one
// plan, so trace-time and run-time checks cannot disagree; emitters read
// these decisions and never make them again from the model.
#ifndef KERNELC_COMPILER_SEMA_SEMA_H_
#define KERNELC_COMPILER_SEMA_SEMA_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/expr/expr.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::sema {

// A shape symbol and the input dimension that binds it (its first plain use
// in an input shape, in declaration order).
struct Symbol {
  std::string name;
  int param = 0;  // index into Kernel::params
  int dim = 0;
};

// An input dimension that must equal an expression.
struct DimCheck {
  int param = 0;
  int dim = 0;
  expr::NodePtr expr;
  std::string text;  // the expression as the user wrote it, for messages
};

// A constant an Out is filled with. Exactly one of the values is meaningful,
// by the output's dtype: integers (and bool) use `integer`, floats `real`.
struct InitValue {
  bool is_integer = true;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;  // for uint64 values above INT64_MAX
  bool is_unsigned_large = false;
  double real = 0;
  std::string text;  // as written (canonical from the frontend)
};

struct ParamPlan {
  // Tensors: the resolved rank; with `leading`, the number of dimensions
  // after "...".
  int rank = -1;
  // Tensors: the shape starts with "...", any number of leading dimensions,
  // the kernel's leading dimensions (KernelPlan::leading). The dimensions
  // after it are counted from the last: Symbol::dim and DimCheck::dim are
  // negative for them (-1 is the last), as in Python.
  bool leading = false;
  // Inputs: per dimension, whether any value is accepted (true) or it binds a
  // symbol or is checked (false). Outputs: the dimension expressions.
  std::vector<bool> any_dim;
  std::vector<expr::NodePtr> out_dims;
  std::vector<std::string> out_dim_texts;
  expr::NodePtr derived;  // kDerived
  // Tensors: per dimension, the shape symbol that is the whole dimension
  // ("n" in "n, 2 * m", also through a same-shape reference), else "".
  std::vector<std::string> dim_symbols;
  // Tensors: per dimension, the dimension's expression as canonical text
  // (through same-shape references; "_" for any extent).
  std::vector<std::string> dim_texts;
  std::optional<InitValue> init;
  // Outputs (KC_SUM): the KC_PARALLEL symbol this output is a sum over,
  // checked to be in KernelPlan::parallel and not a dimension of it; "" for
  // every other parameter.
  std::string sum;
};

// What a parameter of a backward (KC_VJP) or tangent (KC_JVP) kernel is to
// the kernel it differentiates, the forward kernel.
struct PairedParam {
  enum class Kind {
    kComputed,    // a derived value, which its own kernel computes
    kStatic,      // a scalar: the forward kernel's scalar `of`
    kValue,       // an input receiving the value of `of`: a forward input, or
                  // (KC_VJP) a forward output; or a traced scalar (KC_TRACED)
                  // receiving the forward kernel's traced scalar `of`
    kDerivative,  // an input: the cotangent (KC_VJP) or tangent (KC_JVP) of
                  // output (resp. input) `of`; an output: the gradient
                  // (KC_VJP) of input `of`, or the tangent (KC_JVP) of
                  // output `of`
  };
  Kind kind = Kind::kComputed;
  int of = -1;  // index into the forward kernel's params; -1 for kComputed
};

// KC_VJP or KC_JVP, checked (names, dtypes, ranks, and shapes where they are
// comparable at build time): the kernel that differentiates this one and
// what each of its parameters is.
struct Pairing {
  enum class Mode { kVjp, kJvp };
  Mode mode = Mode::kVjp;
  const model::Kernel* kernel = nullptr;
  std::vector<PairedParam> params;  // parallel to kernel->params
};

struct KernelPlan {
  const model::Kernel* kernel = nullptr;
  std::vector<ParamPlan> params;  // parallel to kernel->params
  std::vector<Symbol> symbols;    // binding order
  std::vector<int>
      derived_order;             // indices of kDerived params, evaluation order
  std::vector<DimCheck> checks;  // input dimensions to check, declaration order
  std::vector<expr::NodePtr> grid;
  std::vector<int64_t> block;  // resolved (defaults applied)
  expr::NodePtr shared_bytes;  // KC_SHARED_BYTES; null when not given
  // A __global__ kernel that uses block-level features: on the CPU it runs
  // under the block executor (kc::host::RunBlocks), each thread of a block
  // a fiber; any other runs in the plain grid loop (RunThreadLoop).
  bool block_executor = false;
  // The kernel's guard (model::GridGuard) bounds its threads by exactly the
  // grid's total (GuardBoundsGrid): the CPU runs only the threads below the
  // bound, without the padding of the last block, and tells the compiler
  // that the guard holds, so that the loop vectorizes without masks.
  bool guard_elided = false;
  // KC_VJP or KC_JVP; none without either, or when the pairing is wrong.
  // A kernel with both has KC_VJP's here and KC_JVP's in `tangent`.
  std::optional<Pairing> pairing;
  // KC_JVP given beside KC_VJP: forward mode from the tangent kernel, reverse
  // mode from the backward kernel.
  std::optional<Pairing> tangent;
  // KC_PARALLEL: the shape symbols (or derived values), checked to be whole
  // dimensions of an input and of every output, with every dimension that
  // depends on one being that one.
  std::vector<std::string> parallel;
  // The input (an index into Kernel::params) whose leading dimensions,
  // those of its "...", every tensor whose shape starts with "..." has;
  // -1 when none does.
  int leading = -1;
  // How the op batches under jax.vmap, which the Python call (its
  // vmap_method) and the handlers (kernelc/batch.h) both follow. Unbatched
  // operands gain a size-1 batch dimension (kExpandDims), except where the
  // handler needs every operand at the batch's full extent
  // (kBroadcastAll): an in-place operand is aliased to its batched result,
  // and an elementwise kernel folds the batch into one run only when no
  // operand is broadcast.
  enum class Batching { kExpandDims, kBroadcastAll };
  Batching batching = Batching::kExpandDims;
  // Whether a batch of the elementwise kernel folds into dimension 0, so
  // that the kernel runs once on the whole batch: not with a traced scalar,
  // whose batch holds a value per element (model::Kernel::FoldsElementwise).
  bool fold_elementwise = false;

  // The name kinds for expression checking: tensors, symbols, scalars,
  // derived values.
  expr::NameKind KindOf(std::string_view name) const;
};

// An op: the Python function that runs a kernel or, for a template kernel,
// one of its variants, which it chooses at trace time by the element types
// of the input tensors (no two variants take the same).
struct OpPlan {
  std::string name;           // Kernel::Op
  std::vector<int> variants;  // indices into ModulePlan::kernels, in order
  bool is_template = false;   // of a template kernel's variants
};

struct ModulePlan {
  const model::Module* module = nullptr;
  std::vector<KernelPlan> kernels;  // parallel to module->kernels
  std::vector<OpPlan> ops;          // in the order of their first kernel

  // The plan of the kernel whose op is `op` and that pairs with `of`, for
  // KC_VJP and KC_JVP between variants: see Pairing.
  const OpPlan* FindOp(std::string_view op) const;
};

// Checks the whole module, reporting every problem to `diags` (with
// locations inside the annotation texts). The plan refers to `module`, which
// must outlive it.
Result<ModulePlan> Analyze(const model::Module& module,
                           diag::DiagnosticEngine& diags);

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_SEMA_H_
