#include "compiler/emit/code_writer.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "compiler/util/status.h"

namespace kernelc::emit {
namespace {

// Fills a template that must fill cleanly.
std::string Filled(std::string_view tmpl, const Vars& vars) {
  Result<std::string> r = Fill("test.tmpl", tmpl, vars);
  if (!r.ok()) FAIL("Fill failed: " << r.error().message);
  return r.value();
}

// The internal error a template must fail with.
std::string FillError(std::string_view tmpl, const Vars& vars) {
  Result<std::string> r = Fill("test.tmpl", tmpl, vars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::kInternal);
  return r.error().message;
}

TEST_CASE("Fill replaces every placeholder") {
  CHECK(Filled("int $name$ = $value$;", {{"name", "x"}, {"value", "42"}}) ==
        "int x = 42;");
  // A variable may be used more than once.
  CHECK(Filled("$a$ + $a$", {{"a", "y"}}) == "y + y");
  CHECK(Filled("no placeholders\n", {}) == "no placeholders\n");
  CHECK(Filled("", {}).empty());
  CHECK(Filled("[$v$]", {{"v", ""}}) == "[]");
}

TEST_CASE("Fill reads $$ as a literal dollar sign") {
  CHECK(Filled("cost: $$5", {}) == "cost: $5");
  CHECK(Filled("$$$v$$$", {{"v", "x"}}) == "$x$");
  CHECK(Filled("$$$$", {}) == "$$");
}

TEST_CASE("Fill never reads a value as a template") {
  CHECK(Filled("$v$", {{"v", "$not_a_var$ and $$"}}) == "$not_a_var$ and $$");
}

TEST_CASE("a placeholder without a value is an internal error") {
  CHECK(FillError("a $missing$ b", {}) ==
        "template test.tmpl: no value for $missing$");
  CHECK(FillError("$x$ $y$", {{"x", "1"}}) ==
        "template test.tmpl: no value for $y$");
}

TEST_CASE("a value no placeholder uses is an internal error") {
  CHECK(FillError("$x$", {{"x", "1"}, {"unused", "2"}}) ==
        "template test.tmpl: value $unused$ is not used");
  CHECK(FillError("plain", {{"v", ""}}) ==
        "template test.tmpl: value $v$ is not used");
}

TEST_CASE("an unterminated '$' is an internal error") {
  CHECK(FillError("price $5", {}) == "template test.tmpl: unterminated '$'");
  CHECK(FillError("$x$ $", {{"x", "1"}}) ==
        "template test.tmpl: unterminated '$'");
}

TEST_CASE("a multi-line value alone on its line is re-indented") {
  // The value's first line lands at the placeholder; the others are
  // indented to its column. Empty lines stay empty.
  CHECK(Filled("void f() {\n  $body$\n}\n", {{"body", "a();\n\nb();"}}) ==
        "void f() {\n  a();\n\n  b();\n}\n");
  // A trailing newline in the value ends the line: no blank line follows.
  CHECK(Filled("void f() {\n  $body$\n}\n", {{"body", "a();\nb();\n"}}) ==
        "void f() {\n  a();\n  b();\n}\n");
  // At column 0 nothing is added.
  CHECK(Filled("$body$\nend\n", {{"body", "a\n  b\n"}}) == "a\n  b\nend\n");
}

TEST_CASE("nested re-indentation adds up") {
  std::string inner =
      Filled("if (x) {\n  $stmt$\n}\n", {{"stmt", "y();\nz();\n"}});
  CHECK(inner == "if (x) {\n  y();\n  z();\n}\n");
  CHECK(Filled("void f() {\n    $inner$\n}\n", {{"inner", inner}}) ==
        "void f() {\n    if (x) {\n      y();\n      z();\n    }\n}\n");
}

TEST_CASE("a single-line value alone on its line keeps one newline") {
  CHECK(Filled("  $stmt$\nnext\n", {{"stmt", "a();\n"}}) == "  a();\nnext\n");
  CHECK(Filled("  $stmt$\nnext\n", {{"stmt", "a();"}}) == "  a();\nnext\n");
}

TEST_CASE("a multi-line value mid-line is not re-indented") {
  CHECK(Filled("  x = $v$;\n", {{"v", "a +\nb"}}) == "  x = a +\nb;\n");
  // Its trailing newline is kept, and so is the template's.
  CHECK(Filled("  x = $v$\ny\n", {{"v", "a\nb\n"}}) == "  x = a\nb\n\ny\n");
}

TEST_CASE("indentation after a multi-line value follows the new line") {
  // The second placeholder stands alone on the line the first value ended.
  CHECK(Filled("$a$$b$\n", {{"a", "x\n  "}, {"b", "p\nq"}}) == "x\n  p\n  q\n");
}

TEST_CASE("Indent prefixes every non-empty line") {
  CHECK(Indent("a\n\nb\n", "  ") == "  a\n\n  b\n");
  CHECK(Indent("a\nb", "\t") == "\ta\n\tb");
  CHECK(Indent("", "  ").empty());
}

TEST_CASE("Template finds the embedded templates") {
  Result<std::string_view> shim = Template("cpp/shim.cc.tmpl");
  REQUIRE(shim.ok());
  CHECK(shim.value().rfind("$banner$\n", 0) == 0);
  CHECK(shim.value().find("$registrations$") != std::string_view::npos);

  Result<std::string_view> stub = Template("py/init.pyi.tmpl");
  REQUIRE(stub.ok());
  CHECK(stub.value().rfind("$banner$\n", 0) == 0);
  CHECK(stub.value().find("import jax\n") != std::string_view::npos);

  for (const char* name :
       {"cpp/grid_entry.cc.tmpl", "cpp/handler.cc.tmpl",
        "cpp/host_entry.cc.tmpl", "cpp/host_kernels.cc.tmpl",
        "cpp/registration.cc.tmpl", "py/function.py.tmpl",
        "py/function.pyi.tmpl", "py/init.py.tmpl", "py/init.pyi.tmpl"}) {
    INFO(name);
    Result<std::string_view> t = Template(name);
    REQUIRE(t.ok());
    CHECK_FALSE(t.value().empty());
  }
}

TEST_CASE("Template fails for unknown names") {
  for (const char* name : {"nope.tmpl", "shim.cc.tmpl",
                           "templates/cpp/shim.cc.tmpl", "cpp/shim.cc", ""}) {
    INFO(name);
    Result<std::string_view> t = Template(name);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().kind == ErrorKind::kInternal);
    CHECK(t.error().message == "no template named '" + std::string(name) + "'");
  }
}

TEST_CASE("FillTemplate fills an embedded template") {
  Result<std::string> r =
      FillTemplate("py/init.pyi.tmpl", {{"banner", "# BANNER"},
                                        {"package", "pkg"},
                                        {"all", "\"f\""},
                                        {"functions", "def f(): ..."}});
  REQUIRE(r.ok());
  CHECK(r.value().rfind("# BANNER\n\"\"\"pkg: JAX functions", 0) == 0);
  CHECK(r.value().find('$') == std::string::npos);
  CHECK(r.value().find("\ndef f(): ...") != std::string::npos);
}

TEST_CASE("FillTemplate names the template in its errors") {
  Result<std::string> missing = FillTemplate("py/init.pyi.tmpl", {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::kInternal);
  CHECK(missing.error().message ==
        "template py/init.pyi.tmpl: no value for $banner$");

  Result<std::string> unused =
      FillTemplate("py/init.pyi.tmpl", {{"banner", "#"},
                                        {"package", "pkg"},
                                        {"all", ""},
                                        {"functions", ""},
                                        {"extra", "x"}});
  REQUIRE_FALSE(unused.ok());
  CHECK(unused.error().message ==
        "template py/init.pyi.tmpl: value $extra$ is not used");

  Result<std::string> unknown = FillTemplate("py/nope.py.tmpl", {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().kind == ErrorKind::kInternal);
  CHECK(unknown.error().message == "no template named 'py/nope.py.tmpl'");
}

}  // namespace
}  // namespace kernelc::emit
