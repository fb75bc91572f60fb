// libFuzzer target: the expression parser, over any bytes. Whatever parses
// must print (ToString) to a text that parses back to the same canonical
// text, and every fold over it must terminate without a fault of its own.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "compiler/expr/expr.h"

namespace {

using kernelc::expr::Node;
using kernelc::expr::NodePtr;

void CheckRoundTrip(const NodePtr& e) {
  const std::string text = kernelc::expr::ToString(e);
  kernelc::expr::Parsed<NodePtr> again = kernelc::expr::Parse(text);
  const NodePtr* back = std::get_if<NodePtr>(&again);
  if (back == nullptr || kernelc::expr::ToString(*back) != text)
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kernelc::expr::Parsed<NodePtr> parsed = kernelc::expr::Parse(text);
  if (const NodePtr* e = std::get_if<NodePtr>(&parsed)) {
    CheckRoundTrip(*e);
    kernelc::expr::FindConstantFault(*e);
    kernelc::expr::ConstantValue(*e);
    kernelc::expr::Evaluate(*e, [](const Node&) { return int64_t{3}; });
  }
  kernelc::expr::ParseShape(text);
  return 0;
}
