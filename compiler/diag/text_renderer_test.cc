#include "compiler/diag/text_renderer.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "compiler/diag/diag_test_util.h"

namespace kernelc::diag {
namespace {

using testing::At;

Diagnostic Error(SourceLoc loc, std::string message = "bad") {
  return At(Severity::kError, std::move(loc), std::move(message));
}

// Renders with the files of `files` readable.
std::string Render(const std::vector<Diagnostic>& ds,
                   std::map<std::string, std::string> files = {}) {
  return RenderText(ds, testing::FileMap(std::move(files)));
}

TEST_CASE("headlines: a position, a file, or kernelc itself") {
  CHECK(Headline(Error({"k.cu", 3, 7})) == "k.cu:3:7: error: bad");
  CHECK(Headline(Error({"k.cu", 3, 0})) == "k.cu:3: error: bad");
  CHECK(Headline(Error({"spec.json"})) == "spec.json: error: bad");
  CHECK(Headline(Error({})) == "kernelc: error: bad");
  CHECK(Headline(At(Severity::kWarning, {}, "w")) == "kernelc: warning: w");
  CHECK(
      Headline(At(Severity::kFatal, {"k.cu", 1, 10}, "'x.h' file not found")) ==
      "k.cu:1:10: fatal error: 'x.h' file not found");
}

TEST_CASE("the source line and a caret; none when the file cannot be read") {
  const std::string src = "#include <kernelc.h>\nfloat* y = 0;\n";
  CHECK(Render({Error({"k.cu", 2, 8})}, {{"k.cu", src}}) ==
        "k.cu:2:8: error: bad\n"
        "float* y = 0;\n"
        "       ^\n");
  CHECK(Render({Error({"k.cu", 2, 8})}) == "k.cu:2:8: error: bad\n");
  // A line past the end of the file, or a column past the end of the line.
  CHECK(Render({Error({"k.cu", 9, 1})}, {{"k.cu", src}}) ==
        "k.cu:9:1: error: bad\n");
  CHECK(Render({Error({"k.cu", 2, 14})}, {{"k.cu", src}}) ==
        "k.cu:2:14: error: bad\n"
        "float* y = 0;\n"
        "             ^\n");
  // Windows line ends are not part of the line.
  CHECK(Render({Error({"w.cu", 1, 3})}, {{"w.cu", "a b\r\nc\r\n"}}) ==
        "w.cu:1:3: error: bad\n"
        "a b\n"
        "  ^\n");
}

TEST_CASE("tabs are expanded to tab stops of 8, and the caret follows") {
  // Byte 3 ('x') is at column 9 once the tab is expanded.
  CHECK(Render({Error({"t.cu", 1, 3})}, {{"t.cu", "a\tx = 1;\n"}}) ==
        "t.cu:1:3: error: bad\n"
        "a       x = 1;\n"
        "        ^\n");
  CHECK(Render({Error({"t.cu", 1, 3})}, {{"t.cu", "\t\tb;\n"}}) ==
        "t.cu:1:3: error: bad\n"
        "                b;\n"
        "                ^\n");
}

TEST_CASE("UTF-8: the caret counts characters and their width, not bytes") {
  // 'é' is two bytes and one column; '世' three bytes and two columns.
  const std::string line = "s = \"h\xc3\xa9\xe4\xb8\x96\" + q;";
  // 'q' is byte 16 (column 16 in bytes, 1-based), display column 13.
  CHECK(Render({Error({"u.cu", 1, 16})}, {{"u.cu", line}}) ==
        "u.cu:1:16: error: bad\n" + line + "\n" + "             ^\n");
  // A caret on the second byte of 'é' points at 'é'.
  CHECK(Render({Error({"u.cu", 1, 8})}, {{"u.cu", line}}) ==
        "u.cu:1:8: error: bad\n" + line + "\n" + "      ^\n");
}

TEST_CASE("bytes that are not UTF-8, and unprintable characters, are escaped") {
  CHECK(Render({Error({"b.cu", 1, 3})}, {{"b.cu",
                                          "a\xff"
                                          "b\x01;"}}) ==
        "b.cu:1:3: error: bad\n"
        "a<FF>b<U+0001>;\n"
        "     ^\n");
}

TEST_CASE("ranges are underlined; the caret is on top") {
  Diagnostic d = Error({"r.cu", 1, 7}, "no matching function");
  d.ranges.push_back({{"r.cu", 1, 7}, {"r.cu", 1, 12}});
  d.ranges.push_back({{"r.cu", 1, 13}, {"r.cu", 1, 14}});
  CHECK(Render({d}, {{"r.cu", "y = 2*twice(x);\n"}}) ==
        "r.cu:1:7: error: no matching function\n"
        "y = 2*twice(x);\n"
        "      ^~~~~ ~\n");
}

TEST_CASE("a range across lines shows each line, without the indentation") {
  Diagnostic d = Error({"m.cu", 2, 3}, "invalid operands");
  d.ranges.push_back({{"m.cu", 1, 5}, {"m.cu", 2, 2}});
  d.ranges.push_back({{"m.cu", 2, 5}, {"m.cu", 3, 8}});
  CHECK(Render({d}, {{"m.cu", "x = a\n  + b\n    * c;\n"}}) ==
        "m.cu:2:3: error: invalid operands\n"
        "x = a\n"
        "    ~\n"
        "  + b\n"
        "  ^ ~\n"
        "    * c;\n"
        "    ~~~\n");
  // A range in another file is left out.
  Diagnostic other = Error({"m.cu", 1, 1});
  other.ranges.push_back({{"h.h", 1, 1}, {"h.h", 1, 3}});
  CHECK(Render({other}, {{"m.cu", "x = a\n"}}) ==
        "m.cu:1:1: error: bad\n"
        "x = a\n"
        "^\n");
}

TEST_CASE("fix-its: what they insert, under the caret") {
  Diagnostic d = Error({"f.cu", 1, 17}, "expected ';' at end of declaration");
  d.fixits.push_back({{"f.cu", 1, 17}, ";"});
  CHECK(Render({d}, {{"f.cu", "  float y = x[0]\n"}}) ==
        "f.cu:1:17: error: expected ';' at end of declaration\n"
        "  float y = x[0]\n"
        "                ^\n"
        "                ;\n");
  // Two insertions at one place do not overlap.
  d.fixits.push_back({{"f.cu", 1, 17}, "}"});
  CHECK(Render({d}, {{"f.cu", "  float y = x[0]\n"}}) ==
        "f.cu:1:17: error: expected ';' at end of declaration\n"
        "  float y = x[0]\n"
        "                ^\n"
        "                ; }\n");
}

TEST_CASE("a note at the spot of the diagnostic before it has no excerpt") {
  const std::string src = "int n = 1;\nKC_GRID(n)\n";
  std::vector<Diagnostic> ds = {
      Error({"e.cu", 2, 9}, "requires a constant expression"),
      At(Severity::kNote, {"e.cu", 2, 9}, "read of non-const variable 'n'"),
      At(Severity::kNote, {"e.cu", 1, 5}, "declared here"),
      // After a note there, an error at the same spot shows it again.
      Error({"e.cu", 1, 5}, "again"),
  };
  CHECK(Render(ds, {{"e.cu", src}}) ==
        "e.cu:2:9: error: requires a constant expression\n"
        "KC_GRID(n)\n"
        "        ^\n"
        "e.cu:2:9: note: read of non-const variable 'n'\n"
        "e.cu:1:5: note: declared here\n"
        "int n = 1;\n"
        "    ^\n"
        "e.cu:1:5: error: again\n"
        "int n = 1;\n"
        "    ^\n");
}

TEST_CASE("include stacks: once for a run of diagnostics in a header") {
  std::vector<SourceLoc> stack = {{"k.cu", 1, 10}, {"lib.h", 3, 10}};
  Diagnostic a = Error({"inner.h", 2, 1}, "first");
  a.include_stack = stack;
  Diagnostic note = At(Severity::kNote, {"inner.h", 1, 1}, "declared here");
  note.include_stack = stack;
  Diagnostic b = Error({"inner.h", 3, 1}, "second");
  b.include_stack = stack;
  Diagnostic main = Error({"k.cu", 5, 1}, "in the source");
  Diagnostic c = Error({"inner.h", 4, 1}, "third");
  c.include_stack = stack;
  CHECK(Render({a, note, b, main, c}) ==
        "In file included from k.cu:1:\n"
        "In file included from lib.h:3:\n"
        "inner.h:2:1: error: first\n"
        "inner.h:1:1: note: declared here\n"
        "inner.h:3:1: error: second\n"
        "k.cu:5:1: error: in the source\n"
        "In file included from k.cu:1:\n"
        "In file included from lib.h:3:\n"
        "inner.h:4:1: error: third\n");
  // A note alone does not show the stack.
  CHECK(Render({note}) == "inner.h:1:1: note: declared here\n");
}

TEST_CASE("an excerpt stands in for the file") {
  Diagnostic d = Error({"virtual.cu", 7, 3});
  d.excerpt = Excerpt{7, {"  oops();"}};
  CHECK(Render({d}) ==
        "virtual.cu:7:3: error: bad\n"
        "  oops();\n"
        "  ^\n");
  // Lines the excerpt does not hold are not read from the file either.
  d.loc.line = 8;
  CHECK(Render({d}, {{"virtual.cu", "a\nb\nc\nd\ne\nf\ng\nh\n"}}) ==
        "virtual.cu:8:3: error: bad\n");
}

TEST_CASE("a message of several lines is kept as it is") {
  CHECK(Render({Error({},
                      "compiling x.cc for the CPU failed:\nx.cc:1: oops\n")}) ==
        "kernelc: error: compiling x.cc for the CPU failed:\nx.cc:1: oops\n\n");
}

}  // namespace
}  // namespace kernelc::diag
