// expr_eval: evaluates expressions as the compiler does, for tests that
// compare other evaluators with it (tests/python/test_expr_semantics.py).
//
// Reads one case per line from stdin: an expression, a tab, then bindings
// separated by spaces, each `leaf=value` where a leaf is a name or a tensor
// member as the expression language writes it (`n`, `x.size`, `x.rank`,
// `x.shape[1]`). Writes one line per case: the outcome (`value <v>`,
// `overflow`, `division by zero`, `shift count`, `unknown`, or
// `error <message>` for a text that does not parse), a tab, and the expression
// as EmitPython writes it with the support module named `_kc`, names as
// themselves and tensor members in NumPy's spelling (`x.size`, `x.ndim`,
// `x.shape[1]`).
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "compiler/expr/expr.h"

namespace {

using kernelc::expr::Node;

// The key of a leaf in the bindings: its canonical text.
std::string LeafKey(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kSize:
      return n.name + ".size";
    case Node::Kind::kRank:
      return n.name + ".rank";
    case Node::Kind::kShape:
      return fmt::format("{}.shape[{}]", n.name, n.value);
    default:
      return n.name;
  }
}

std::string Outcome(const kernelc::expr::Evaluation& e) {
  switch (e.fault) {
    case kc::arith::Fault::kOverflow:
      return "overflow";
    case kc::arith::Fault::kDivisionByZero:
      return "division by zero";
    case kc::arith::Fault::kShiftCount:
      return "shift count";
    case kc::arith::Fault::kNone:
      break;
  }
  return e.value ? fmt::format("value {}", *e.value) : "unknown";
}

std::string Case(std::string_view line) {
  const size_t tab = line.find('\t');
  const std::string_view text = line.substr(0, tab);
  std::map<std::string, int64_t, std::less<>> bindings;
  if (tab != std::string_view::npos) {
    std::string_view rest = line.substr(tab + 1);
    while (!rest.empty()) {
      const size_t space = rest.find(' ');
      const std::string_view item = rest.substr(0, space);
      const size_t eq = item.find('=');
      if (eq != std::string_view::npos)
        bindings[std::string(item.substr(0, eq))] =
            std::strtoll(std::string(item.substr(eq + 1)).c_str(), nullptr, 10);
      if (space == std::string_view::npos) break;
      rest = rest.substr(space + 1);
    }
  }
  kernelc::expr::Parsed<kernelc::expr::NodePtr> parsed =
      kernelc::expr::Parse(text);
  if (auto* err = std::get_if<kernelc::expr::ParseError>(&parsed))
    return fmt::format("error {}: {}\t", err->offset, err->message);
  const kernelc::expr::NodePtr e = std::get<kernelc::expr::NodePtr>(parsed);
  const kernelc::expr::Evaluation value = kernelc::expr::Evaluate(
      e, [&bindings](const Node& n) -> std::optional<int64_t> {
        auto it = bindings.find(LeafKey(n));
        if (it == bindings.end()) return std::nullopt;
        return it->second;
      });
  kernelc::expr::Resolver r;
  r.rank = [](std::string_view t) { return fmt::format("{}.ndim", t); };
  return fmt::format("{}\t{}", Outcome(value),
                     kernelc::expr::EmitPython(e, r, "_kc"));
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) std::cout << Case(line) << '\n';
  return std::cout.good() ? 0 : 2;
}
