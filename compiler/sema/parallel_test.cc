#include "compiler/sema/parallel.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler/sema/sema_test_util.h"

// The fixtures (sema_test_util.h) are in scope.
namespace kernelc::sema::testing {
namespace {

TEST_CASE("sema: KC_PARALLEL symbols are whole dimensions") {
  Kernel k = Global("k", {"n"},
                    {In("x", "m, n", 4), In("y", "x", 5), Out("o", "m, n", 6)});
  k.parallel = {Text{"m", At(3, 10)}};
  Analysis ok(k);
  REQUIRE(ok.ok());
  CHECK(ok.plan().parallel == Strings{"m"});
  CHECK(ok.plan().params[1].dim_symbols == Strings{"m", "n"});

  Kernel bad = Global(
      "k", {"n"},
      {In("x", "m, n", 4), Scalar("s", DType::kI64, 5), Out("o", "m * 2", 6)});
  bad.parallel = {Text{"m", At(3, 10)}, Text{"q", At(3, 20)},
                  Text{"s", At(3, 30)}, Text{"m", At(3, 40)}};
  CHECK(Errors(bad) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', but "
                "the shape of 'o' uses it in 'm * 2'; a parallel symbol must "
                "be a whole dimension",
                "k.cu:3:20: error: KC_PARALLEL of kernel 'k' names 'q', which "
                "is not a dimension of an input: name a shape symbol or "
                "derived value that an input shape uses",
                "k.cu:3:30: error: KC_PARALLEL of kernel 'k' names 's', which "
                "is not a dimension of an input: name a shape symbol or "
                "derived value that an input shape uses",
                "k.cu:3:40: error: KC_PARALLEL of kernel 'k' names 'm' twice"});
}

// KC_PARALLEL("m") of kernel "k", its text at line 3, kTextCol.
Kernel Parallel(std::vector<Param> params,
                std::vector<std::string> names = {"m"}) {
  Kernel k = Host("k", std::move(params));
  for (size_t i = 0; i < names.size(); ++i)
    k.parallel.push_back(
        Text{names[i], At(3, kTextCol + 10 * static_cast<int>(i))});
  return k;
}

TEST_CASE("sema: every output of a KC_PARALLEL kernel has its dimensions") {
  Analysis ok(Parallel({In("x", "m, k", 4), In("w", "k", 5),
                        Tensor(Role::kInMut, "t", "m", 6), Out("y", "x", 7),
                        Out("s", "m", 8)}));
  REQUIRE(ok.ok());
  CHECK(ok.plan().parallel == Strings{"m"});

  // A count of the whole input, and an in-place parameter without 'm'.
  CHECK(Errors(Parallel({In("x", "m", 4), Tensor(Role::kInMut, "t", "k", 5),
                         Out("y", "m", 6), Out("count", "", 7)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', but "
                "in-place output 't' has no dimension 'm'; each device writes "
                "only its slice of every output, so every output needs each "
                "parallel symbol as a whole dimension",
                "k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', but "
                "output 'count' has no dimension 'm'; each device writes only "
                "its slice of every output, so every output needs each "
                "parallel symbol as a whole dimension"});
}

TEST_CASE("sema: a parallel symbol is at most one dimension of a tensor") {
  CHECK(Errors(Parallel({In("a", "m, m", 4), Out("d", "m", 5)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', which "
                "is 2 dimensions of 'a'; a parallel symbol can be at most one "
                "dimension of each tensor"});
}

TEST_CASE(
    "sema: a dimension that depends on a parallel symbol is that symbol") {
  // The shard sees its own extents: a derived value or size computed from
  // them is local, and fine where no dimension depends on it.
  Analysis ok(Parallel(
      {In("x", "n", 4), Derived("n", "x.size", 5), Derived("count", "n * 2", 6),
       Out("y", "n", 7), Out("z", "x", 8)},
      {"n"}));
  REQUIRE(ok.ok());
  CHECK(ok.plan().parallel == Strings{"n"});

  // x flattened: n = m * k is replicated but computed from the shard.
  CHECK(Errors(Parallel({In("x", "m, k", 4), Derived("n", "x.size", 5),
                         Out("out", "n, m", 6)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', and "
                "dimension 'n' of 'out' depends on it, so each device would "
                "compute that dimension from its own shard; a dimension that "
                "depends on a parallel symbol must be that symbol"});
  // Through a size, a shape and a chain of derived values, on an input too.
  CHECK(Errors(Parallel({In("x", "m", 4), In("y", "x.size", 5),
                         Derived("a", "x.shape[0] + 1", 6),
                         Derived("b", "a * 2", 7), Out("o", "m, b", 8)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', and "
                "dimension 'x.size' of 'y' depends on it, so each device "
                "would compute that dimension from its own shard; a dimension "
                "that depends on a parallel symbol must be that symbol",
                "k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', and "
                "dimension 'b' of 'o' depends on it, so each device would "
                "compute that dimension from its own shard; a dimension that "
                "depends on a parallel symbol must be that symbol"});
}

TEST_CASE("sema: a derived parallel symbol depends on a parallel dimension") {
  CHECK(Errors(Parallel({In("x", "m", 4), In("y", "n", 5),
                         Derived("n", "x.size * 2", 6), Out("o", "n", 7)},
                        {"n"})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'n', a "
                "derived value ('x.size * 2') that depends on no parallel "
                "dimension; on a shard it would keep its whole value: derive "
                "it from a tensor that 'n' is a dimension of"});
  // Derived from a tensor that has the dimension: the shard's extent.
  Analysis ok(Parallel(
      {In("x", "n, k", 4), Derived("n", "x.shape[0]", 5), Out("o", "n", 6)},
      {"n"}));
  CHECK(ok.messages() == Strings{});
}

}  // namespace
}  // namespace kernelc::sema::testing
