#include "compiler/emit/printer.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "compiler/util/status.h"

namespace kernelc::emit {
namespace {

using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

// What a format emits, filled from `subs`, when it must fill cleanly.
std::string Emitted(std::string_view format, const Printer::Subs& subs = {}) {
  Printer p;
  p.Emit(subs, format);
  Result<std::string> r = p.Finish();
  if (!r.ok()) FAIL("Emit failed: " << r.error().message);
  return r.value();
}

// The internal error a format must fail with.
std::string EmitError(std::string_view format, const Printer::Subs& subs = {}) {
  Printer p;
  p.Emit(subs, format);
  Result<std::string> r = p.Finish();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::kInternal);
  return r.error().message;
}

TEST_CASE("Emit replaces every placeholder") {
  CHECK(Emitted("int $name$ = $value$;", {{"name", "x"}, {"value", "42"}}) ==
        "int x = 42;");
  // A variable may be used more than once.
  CHECK(Emitted("$a$ + $a$", {{"a", "y"}}) == "y + y");
  CHECK(Emitted("no placeholders\n") == "no placeholders\n");
  CHECK(Emitted("").empty());
  CHECK(Emitted("[$v$]", {{"v", ""}}) == "[]");
  // Integers as decimal.
  CHECK(Emitted("$i$ $u$", {{"i", -3}, {"u", size_t{7}}}) == "-3 7");
}

TEST_CASE("Emit reads $$ as a literal dollar sign") {
  CHECK(Emitted("cost: $$5") == "cost: $5");
  CHECK(Emitted("$$$v$$$", {{"v", "x"}}) == "$x$");
  CHECK(Emitted("$$$$") == "$$");
}

TEST_CASE("Emit never reads a value as a format") {
  CHECK(Emitted("$v$", {{"v", "$not_a_var$ and $$"}}) == "$not_a_var$ and $$");
  Printer p;
  p.PrintRaw("$raw$ ");
  p.Emit({{"v", "$$"}}, "$v$");
  CHECK(p.Finish().value() == "$raw$ $$");
}

TEST_CASE("errors name the emitter's file and line") {
  // The line of the Emit call in EmitError, in this file.
  CHECK_THAT(EmitError("a $missing$ b"),
             StartsWith("snippet at compiler/emit/printer_test.cc:") &&
                 EndsWith(": no value for $missing$"));
  CHECK_THAT(EmitError("$x$ $y$", {{"x", "1"}}),
             EndsWith(": no value for $y$"));
  CHECK_THAT(EmitError("$x$", {{"x", "1"}, {"unused", "2"}}),
             EndsWith(": value $unused$ is not used"));
  CHECK_THAT(EmitError("plain", {{"v", ""}}),
             EndsWith(": value $v$ is not used"));
  CHECK_THAT(EmitError("price $5"), EndsWith(": unterminated '$'"));
  CHECK_THAT(EmitError("$x$ $", {{"x", "1"}}), EndsWith(": unterminated '$'"));
}

TEST_CASE("the first error sticks and stops the printer") {
  Printer p;
  p.Emit("a\n");
  p.Emit("$missing$");
  p.Emit("b\n");
  p.Fail(Error::Internal("later"));
  Result<std::string> r = p.Finish();
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, EndsWith("no value for $missing$"));

  Printer q;
  q.Emit({{"section", [&] { q.Fail(Error::Internal("in a section")); }}},
         "x $section$ y\n");
  REQUIRE_FALSE(q.Finish().ok());
  CHECK(q.Finish().error().message == "in a section");
}

TEST_CASE("a raw-string snippet loses its first newline and its margin") {
  CHECK(Emitted(R"code(
          if (x) {
            y();
          }
        )code") == "if (x) {\n  y();\n}\n");
  // Blank lines stay, without spaces; the margin is the first line's.
  CHECK(Emitted("\n    a\n      \n      b\n  ") == "a\n\n  b\n");
  CHECK(Emitted("\n\n    a\n  ") == "\na\n");
  // Without a closing line, the last line keeps no newline.
  CHECK(Emitted("\n  a\n  b") == "a\nb");
  CHECK_THAT(EmitError("\n    a\n  b\n"),
             EndsWith(": a line is indented less than the first"));
}

TEST_CASE("a multi-line value alone on its line is re-indented") {
  // The value's first line lands at the placeholder; the others are
  // indented to its column. Empty lines stay empty.
  CHECK(Emitted("void f() {\n  $body$\n}\n", {{"body", "a();\n\nb();"}}) ==
        "void f() {\n  a();\n\n  b();\n}\n");
  // A trailing newline in the value ends the line: no blank line follows.
  CHECK(Emitted("void f() {\n  $body$\n}\n", {{"body", "a();\nb();\n"}}) ==
        "void f() {\n  a();\n  b();\n}\n");
  // At column 0 nothing is added.
  CHECK(Emitted("$body$\nend\n", {{"body", "a\n  b\n"}}) == "a\n  b\nend\n");
}

TEST_CASE("a single-line value alone on its line keeps one newline") {
  CHECK(Emitted("  $stmt$\nnext\n", {{"stmt", "a();\n"}}) == "  a();\nnext\n");
  CHECK(Emitted("  $stmt$\nnext\n", {{"stmt", "a();"}}) == "  a();\nnext\n");
}

TEST_CASE("an empty section alone on its line takes the line with it") {
  CHECK(Emitted("a\n  $opt$\nb\n", {{"opt", ""}}) == "a\nb\n");
  CHECK(Emitted("a\n$opt$\nb\n", {{"opt", [] {}}}) == "a\nb\n");
  // Not when the line has more.
  CHECK(Emitted("a\n  $opt$;\nb\n", {{"opt", ""}}) == "a\n  ;\nb\n");
}

TEST_CASE("a multi-line value mid-line goes on at the current indentation") {
  CHECK(Emitted("  x = $v$;\n", {{"v", "a +\nb"}}) == "  x = a +\nb;\n");
  // Its trailing newline is kept, and so is the format's.
  CHECK(Emitted("  x = $v$\ny\n", {{"v", "a\nb\n"}}) == "  x = a\nb\n\ny\n");
}

TEST_CASE("indentation after a multi-line value follows the new line") {
  // The second placeholder stands alone on the line the first value ended.
  CHECK(Emitted("$a$$b$\n", {{"a", "x\n  "}, {"b", "p\nq"}}) ==
        "x\n  p\n  q\n");
}

TEST_CASE("a callback's sections nest at the placeholder's column") {
  Printer p;
  auto statements = [&] {
    p.Emit(R"code(
      y();
      z();
    )code");
  };
  auto block = [&] {
    p.Emit({{"stmts", statements}}, R"code(
      if (x) {
        $stmts$
      }
    )code");
  };
  p.Emit({{"body", block}}, R"code(
    void f() {
        $body$
    }
  )code");
  CHECK(p.Finish().value() ==
        "void f() {\n    if (x) {\n      y();\n      z();\n    }\n}\n");
}

TEST_CASE("values inside a nested section take its indentation") {
  Printer p;
  p.Emit({{"inner",
           [&] {
             p.Emit({{"args", "a,\n    b"}, {"doc", "one\ntwo"}},
                    "f($args$);  // $doc$\n");
           }}},
         "{\n  $inner$\n}\n");
  CHECK(p.Finish().value() == "{\n  f(a,\n      b);  // one\n  two\n}\n");
}

TEST_CASE("PrintRaw writes text at the current indentation") {
  Printer p;
  p.Emit({{"list",
           [&] {
             p.PrintRaw("a,\n");
             p.PrintRaw("\n");
             p.PrintRaw("b\n");
           }}},
         "[\n    $list$\n]\n");
  CHECK(p.Finish().value() == "[\n    a,\n\n    b\n]\n");
}

TEST_CASE("EmitTemplate fills an embedded whole-file template") {
  Printer p;
  p.EmitTemplate("py/init.pyi.tmpl",
                 {{"banner", "# BANNER"},
                  {"package", "pkg"},
                  {"functions", [&] { p.Emit("\ndef f(): ...\n"); }}});
  Result<std::string> r = p.Finish();
  REQUIRE(r.ok());
  CHECK_THAT(r.value(), StartsWith("# BANNER\n\"\"\"pkg: JAX functions"));
  CHECK(r.value().find('$') == std::string::npos);
  CHECK_THAT(r.value(), EndsWith("CUSTOM_CALL_TARGETS: Tuple[str, ...]\n\n"
                                 "def f(): ...\n"));
}

TEST_CASE("EmitTemplate names the template in its errors") {
  Printer missing;
  missing.EmitTemplate("py/init.pyi.tmpl", {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.Finish().error().kind == ErrorKind::kInternal);
  CHECK(missing.Finish().error().message ==
        "template py/init.pyi.tmpl: no value for $banner$");

  Printer unused;
  unused.EmitTemplate(
      "py/init.pyi.tmpl",
      {{"banner", "#"}, {"package", "pkg"}, {"functions", ""}, {"extra", "x"}});
  CHECK(unused.Finish().error().message ==
        "template py/init.pyi.tmpl: value $extra$ is not used");

  for (const char* name : {"py/nope.py.tmpl", "init.pyi.tmpl",
                           "templates/py/init.pyi.tmpl", "py/init.pyi", ""}) {
    INFO(name);
    Printer unknown;
    unknown.EmitTemplate(name, {});
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.Finish().error().message ==
          "no template named '" + std::string(name) + "'");
  }
}

}  // namespace
}  // namespace kernelc::emit
