// What the handlers of every platform share for one kernel: the binding of
// buffers and attributes, the batch (kernelc/batch.h), and the checks and
// expressions of the element function, all read from sema's plan. The
// platforms (cpu_shim.cc, cuda_shim.cc) put them around what only they do:
// how the element runs, fills and copies, and how the handler iterates the
// batch.
#ifndef KERNELC_COMPILER_EMIT_HANDLER_PARTS_H_
#define KERNELC_COMPILER_EMIT_HANDLER_PARTS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/emit/printer.h"
#include "compiler/model/model.h"
#include "compiler/sema/sema.h"

namespace kernelc::emit {

class HandlerParts {
 public:
  // Refers to `kp`, which must outlive it.
  explicit HandlerParts(const sema::KernelPlan& kp);

  const model::Kernel& kernel() const { return k_; }
  // Whether the kernel runs over a launch grid (a __global__ kernel).
  bool grid() const { return k_.kind == model::KernelKind::kGlobal; }
  // Whether parameter `i` (an Out) is pre-filled (KC_INIT), and whether
  // any is.
  bool Fills(size_t i) const { return kp_.params[i].init.has_value(); }
  bool HasFills() const;

  // The handler's parameters: the platform's `context` (XLA's stream, the
  // CPU's thread pool), then buffers and attributes in binding order.
  std::vector<std::string> ImplParams(std::string context) const;
  // The exported handler `symbol`, which checks a call frame against the
  // handler's signature (kc::ffi::Accepts: its buffers, and its attributes
  // in XLA's order, sorted by name) and calls `impl` with the operands read
  // from it. `stage` and `traits` are the signature's (XLA_FFI_... names);
  // `context` declares kc_context, the first argument of `impl`, and may
  // return early.
  void EmitHandlerSymbol(Printer& p, std::string_view symbol,
                         std::string_view impl, std::string_view stage,
                         std::string_view traits,
                         std::string_view context) const;

  // The element function's tensors and scalars, after the platform's own
  // parameters; and the handler's arguments for them: `tensor(i)` for the
  // batch's buffer i (numbered as in EmitBatchBuffers), the other values by
  // their handler names after `values` ("", or "c." for a context's
  // fields).
  std::vector<std::string> ElementParams() const;
  std::vector<std::string> ElementArgs(
      const std::function<std::string(int operand)>& tensor,
      std::string_view values) const;
  // What the element takes besides its tensors, as declarations
  // ("float a_a", "bool a__present_x"), in ElementArgs' order.
  std::vector<std::string> ElementValues() const;
  // The number of `param`'s buffer in the batch, which numbers inputs
  // (operands) in declaration order, then results: its result's when
  // `result` (an in-place tensor has both); -1 when it has none.
  int OperandIndex(const model::Param& param, bool result) const;
  // How many of the batch's buffers are inputs, and how many there are.
  int InputCount() const;
  int BufferCount() const;

  // "Kernel 'k' (src), platform P: one batch element.": the element
  // function `impl`_element with the platform's `params` first; `body`
  // emits its statements. `inlined`: always inlined into its callers, so
  // that the tensors it takes never reach memory.
  void EmitElementFunction(Printer& p, std::string_view platform,
                           std::string_view impl,
                           const std::vector<std::string>& params,
                           const std::function<void()>& body,
                           bool inlined = false) const;

  // The batch's buffers, kc_buffers (::kc::rt::BatchBuffer), inputs then
  // results; sets the number of the first result and of them all. False,
  // with the printer failed, when the kernel has no result.
  bool EmitBatchBuffers(Printer& p, int* first_result, int* count) const;
  // The handler's batch planned from its buffers (kc_batch), one operand
  // per buffer (kc_operands, in kc_buffers' order), or the call's error.
  void EmitBatchPlan(Printer& p) const;
  // The element's checks: dtypes and ranks, shape symbols, derived
  // values, dimensions, then the grid's sizes.
  void EmitChecks(Printer& p) const;
  // KC_SHARED_BYTES, evaluated with the other expressions (before
  // EmitExpressionsOk), as kc_shared_bytes.
  void EmitSharedBytes(Printer& p) const;
  // Fails the element when an expression divided by zero or overflowed.
  void EmitExpressionsOk(Printer& p) const;
  // Sizes the launch grid (kc_launch_), for a grid kernel.
  void EmitLaunchGrid(Printer& p) const;

  // The kernel's arguments for parameter `i` as the entry point and the
  // launch take them: a tensor's data (null for an absent optional input;
  // and a view's shape), a scalar (a traced one read from its buffer, as
  // the CPU can), a derived value.
  std::vector<std::string> KernelArgs(size_t i) const;
  // The rank of operand `i`'s buffer, as C++: a tensor's (with "...", its
  // other dimensions and the call's leading ones), 0 for a traced scalar.
  std::string Rank(size_t i) const;
  // The value that parameter `i` (an Out with KC_INIT) is filled with.
  std::string InitValue(size_t i) const;

  // An expression of the plan, as the handler computes it.
  std::string Cpp(const expr::NodePtr& e) const;

  // The handler's name for a parameter's buffer: inputs are the bound
  // arguments (b_), results the dereferenced results (o_); an InMut is read
  // from its result, which XLA aliases to the argument.
  static std::string BufferVar(const model::Param& p);
  // The handler's name for the attribute that says whether optional input
  // `p` is given.
  static std::string PresentVar(const model::Param& p);
  // The handler's name for the attribute that gives the number of leading
  // dimensions ("...").
  static std::string LeadingVar();
  // Dimension `d` of `buffer`; a negative one counts from the last.
  static std::string DimRef(const std::string& buffer, int64_t d);
  // The C++ type a scalar attribute is bound as.
  static std::string_view AttrCppType(model::DType t);

 private:
  const sema::KernelPlan& kp_;
  const model::Kernel& k_;
};

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_HANDLER_PARTS_H_
