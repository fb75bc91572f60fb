// EmitCpp's output, compiled (emitted_cases.h, written by emit_cpp_cases)
// and run through the runtime's evaluator, agrees with the compiler's fold
// (Evaluate) on every value and on failure, for bindings at the limits of
// int64.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "compiler/expr/emitted_cases.h"
#include "compiler/expr/expr.h"

namespace kernelc::expr {
namespace {

std::optional<int64_t> Binding(const emitted::Env& env, const Node& n) {
  switch (n.kind) {
    case Node::Kind::kSize:
      return env.x_size;
    case Node::Kind::kRank:
      return env.x_rank;
    case Node::Kind::kShape:
      return env.x_shape[n.value];
    default:
      break;
  }
  if (n.name == "a") return env.a;
  if (n.name == "b") return env.b;
  if (n.name == "c") return env.c;
  if (n.name == "n") return env.n;
  return std::nullopt;
}

int64_t Pick(std::mt19937_64& rng) {
  static const int64_t kEdges[] = {0,
                                   1,
                                   -1,
                                   2,
                                   -2,
                                   7,
                                   -7,
                                   3037000500,
                                   -3037000500,
                                   INT64_MAX,
                                   INT64_MIN,
                                   INT64_MAX - 1,
                                   INT64_MIN + 1};
  switch (rng() % 3) {
    case 0:
      return kEdges[rng() % (sizeof(kEdges) / sizeof(kEdges[0]))];
    case 1:
      return static_cast<int64_t>(rng() % 201) - 100;
    default:
      return static_cast<int64_t>(rng());
  }
}

TEST_CASE("emitted C++ computes what the fold computes") {
  std::mt19937_64 rng(1);
  std::vector<emitted::Env> envs;
  for (int i = 0; i < 2000; ++i) {
    emitted::Env env{};
    for (int64_t* v : {&env.a, &env.b, &env.c, &env.n, &env.x_size, &env.x_rank,
                       &env.x_shape[0], &env.x_shape[1], &env.x_shape[2]})
      *v = Pick(rng);
    envs.push_back(env);
  }
  int failures = 0, values = 0;
  for (const emitted::Case& c : emitted::kCases) {
    Parsed<NodePtr> parsed = Parse(c.text);
    REQUIRE(std::holds_alternative<NodePtr>(parsed));
    const NodePtr e = std::get<NodePtr>(parsed);
    for (const emitted::Env& env : envs) {
      kc::rt::Evaluator ev;
      const int64_t got = c.eval(ev, env);
      const Evaluation want =
          Evaluate(e, [&env](const Node& n) { return Binding(env, n); });
      INFO(c.text << " with a=" << env.a << " b=" << env.b << " c=" << env.c
                  << " n=" << env.n);
      const bool fails = want.fault != kc::arith::Fault::kNone;
      REQUIRE(ev.failed() == fails);
      if (!ev.failed()) {
        REQUIRE(want.value.has_value());
        REQUIRE(got == *want.value);
      }
      (ev.failed() ? failures : values) += 1;
    }
  }
  // Both outcomes are exercised.
  CHECK(failures > 1000);
  CHECK(values > 1000);
}

}  // namespace
}  // namespace kernelc::expr
