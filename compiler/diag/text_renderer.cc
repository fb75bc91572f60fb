#include "compiler/diag/text_renderer.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/Unicode.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "compiler/util/input_file.h"

namespace kernelc::diag {

namespace {

// Clang's defaults, which kernelc's diagnostics follow so that its own and
// Clang's line up the same way.
constexpr int kTabStop = 8;
constexpr int kMaxSnippetLines = 16;
constexpr size_t kMaxLineLength = 4096;

// One character of a source line as it is shown, and the columns it takes.
struct Shown {
  std::string text;
  int width = 0;
};

// The character at byte *i of `line`, which starts at display column
// `column`; advances *i past it. A tab becomes spaces to the next tab stop;
// what a terminal would not show becomes <U+XXXX> (a valid but unprintable
// character) or <XX> (a byte that is not UTF-8).
Shown NextCharacter(std::string_view line, size_t* i, int column) {
  const unsigned char c = line[*i];
  if (c == '\t') {
    ++*i;
    int spaces = kTabStop - column % kTabStop;
    return {std::string(spaces, ' '), spaces};
  }
  if (c >= 0x20 && c < 0x7f) {
    ++*i;
    return {std::string(1, static_cast<char>(c)), 1};
  }
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(line.data() + *i);
  const unsigned size = llvm::getNumBytesForUTF8(c);
  if (*i + size <= line.size() &&
      llvm::isLegalUTF8Sequence(begin, begin + size)) {
    llvm::UTF32 code = 0;
    llvm::UTF32* out = &code;
    const llvm::UTF8* from = begin;
    llvm::ConvertUTF8toUTF32(&from, begin + size, &out, out + 1,
                             llvm::strictConversion);
    std::string_view bytes = line.substr(*i, size);
    *i += size;
    if (llvm::sys::unicode::isPrintable(static_cast<int>(code))) {
      int width = llvm::sys::unicode::columnWidthUTF8(
          llvm::StringRef(bytes.data(), bytes.size()));
      return {std::string(bytes), std::max(width, 0)};
    }
    std::string hex = llvm::utohexstr(code);
    if (hex.size() < 4) hex.insert(0, 4 - hex.size(), '0');
    std::string text = "<U+" + hex + ">";
    return {text, static_cast<int>(text.size())};
  }
  ++*i;
  std::string text = fmt::format("<{:02X}>", c);
  return {text, static_cast<int>(text.size())};
}

// A source line as shown, with the display column each byte starts.
struct ShownLine {
  std::string text;
  // columns[b]: the column byte b starts, -1 for a byte inside a
  // character; columns[size] is the width of the whole line.
  std::vector<int> columns;

  explicit ShownLine(std::string_view line) {
    columns.assign(line.size() + 1, -1);
    int column = 0;
    size_t i = 0;
    while (i < line.size()) {
      columns[i] = column;
      Shown s = NextCharacter(line, &i, column);
      text += s.text;
      column += s.width;
    }
    columns[line.size()] = column;
  }

  int width() const { return columns.back(); }
  size_t bytes() const { return columns.size() - 1; }

  // The column of the character that holds byte `b`; past the end, as many
  // columns past the line's width.
  int ColumnOf(size_t b) const {
    if (b >= bytes()) return width() + static_cast<int>(b - bytes());
    while (columns[b] < 0) --b;
    return columns[b];
  }
};

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Underlines bytes [begin, end) of `line` with '~', leaving out blanks at
// either end (a range across lines would otherwise underline indentation).
void Underline(std::string_view line, const ShownLine& shown, size_t begin,
               size_t end, std::string& caret_line) {
  end = std::min(end, line.size());
  while (begin < end && IsBlank(line[begin])) ++begin;
  while (end > begin && IsBlank(line[end - 1])) --end;
  if (begin >= end) return;
  int from = shown.ColumnOf(begin), to = shown.ColumnOf(end);
  if (static_cast<int>(caret_line.size()) < to) caret_line.resize(to, ' ');
  std::fill(caret_line.begin() + from, caret_line.begin() + to, '~');
}

// The line under the caret line that shows what the fix-its of `d` insert
// on `line_no`. An insertion that would overlap the one before it moves
// right, one column apart, as Clang shows it.
std::string FixItLine(const Diagnostic& d, int line_no,
                      const ShownLine& shown) {
  std::string out;
  int end = 0;  // the column after the last insertion
  for (const FixIt& f : d.fixits) {
    if (f.loc.file != d.loc.file || f.loc.line != line_no || f.insert.empty())
      continue;
    int column =
        shown.ColumnOf(static_cast<size_t>(std::max(f.loc.col, 1) - 1));
    if (column < end) column = end + 1;
    if (static_cast<int>(out.size()) < column) out.resize(column, ' ');
    out += f.insert;
    end = column + static_cast<int>(f.insert.size());
  }
  // Tabs in inserted text, expanded as in the source line.
  std::string expanded;
  for (char c : out) {
    if (c == '\t')
      expanded.append(kTabStop - expanded.size() % kTabStop, ' ');
    else
      expanded += c;
  }
  return expanded;
}

// The lines of the files that diagnostics without an excerpt point into,
// read once each.
class LineSource {
 public:
  explicit LineSource(const SourceReader& reader) : reader_(reader) {}

  // Line `n` of `d`'s file, or null.
  const std::string* Line(const Diagnostic& d, int n) {
    if (d.excerpt) return d.excerpt->Line(n);
    const std::vector<std::string>* lines = LinesOf(d.loc.file);
    if (lines == nullptr || n < 1 || n > static_cast<int>(lines->size()))
      return nullptr;
    return &(*lines)[n - 1];
  }

 private:
  const std::vector<std::string>* LinesOf(const std::string& file) {
    auto it = files_.find(file);
    if (it == files_.end()) {
      std::optional<std::vector<std::string>> lines;
      if (std::optional<std::string> text =
              reader_ ? reader_(file) : std::nullopt) {
        lines.emplace();
        size_t begin = 0;
        while (begin <= text->size()) {
          size_t end = text->find('\n', begin);
          if (end == std::string::npos) end = text->size();
          std::string line = text->substr(begin, end - begin);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          lines->push_back(std::move(line));
          begin = end + 1;
        }
      }
      it = files_.emplace(file, std::move(lines)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  const SourceReader& reader_;
  std::map<std::string, std::optional<std::vector<std::string>>> files_;
};

// The lines to show under `d`: its caret's, and those its ranges cover
// when all fit in kMaxSnippetLines.
std::pair<int, int> SnippetLines(const Diagnostic& d) {
  int first = d.loc.line, last = d.loc.line;
  for (const SourceRange& r : d.ranges) {
    if (r.begin.file != d.loc.file || r.end.file != d.loc.file ||
        !r.begin.has_position() || !r.end.has_position())
      continue;
    int f = std::min(first, r.begin.line), l = std::max(last, r.end.line);
    if (l - f + 1 <= kMaxSnippetLines) first = f, last = l;
  }
  return {first, last};
}

void RenderSnippet(const Diagnostic& d, LineSource& source, std::string& out) {
  if (static_cast<size_t>(d.loc.col) > kMaxLineLength) return;
  auto [first, last] = SnippetLines(d);
  for (int n = first; n <= last; ++n) {
    const std::string* line = source.Line(d, n);
    if (line == nullptr || line->size() > kMaxLineLength) return;
    ShownLine shown(*line);
    std::string caret_line;
    for (const SourceRange& r : d.ranges) {
      if (r.begin.file != d.loc.file || r.end.file != d.loc.file ||
          n < r.begin.line || n > r.end.line)
        continue;
      size_t begin = n == r.begin.line ? std::max(r.begin.col, 1) - 1 : 0;
      size_t end = n == r.end.line ? std::max(r.end.col, 1) - 1 : line->size();
      Underline(*line, shown, begin, end, caret_line);
    }
    if (n == d.loc.line) {
      int column =
          shown.ColumnOf(static_cast<size_t>(std::max(d.loc.col, 1) - 1));
      if (static_cast<int>(caret_line.size()) <= column)
        caret_line.resize(column + 1, ' ');
      caret_line[column] = '^';
    }
    std::string fixit_line = FixItLine(d, n, shown);
    out += shown.text + "\n";
    if (!caret_line.empty()) out += caret_line + "\n";
    if (!fixit_line.empty()) out += fixit_line + "\n";
  }
}

}  // namespace

std::optional<std::string> ReadSourceFile(const std::string& file) {
  // Only what a source can be: a diagnostic's file is a path from the
  // user's input, and no such path may make the renderer wait on a FIFO or
  // read a device without end.
  InputFile f = ReadInputFile(file);
  if (!f.ok()) return std::nullopt;
  return std::move(f.contents);
}

std::string Headline(const Diagnostic& d) {
  std::string where = d.loc.file.empty() ? "kernelc" : d.loc.file;
  if (!d.loc.file.empty() && d.loc.has_position()) {
    where += fmt::format(":{}", d.loc.line);
    if (d.loc.col > 0) where += fmt::format(":{}", d.loc.col);
  }
  return fmt::format("{}: {}: {}", where, SeverityName(d.severity), d.message);
}

std::string RenderText(const std::vector<Diagnostic>& diagnostics,
                       const SourceReader& reader) {
  LineSource source(reader);
  std::string out;
  // What Clang's printer remembers of the diagnostic before: where it was
  // and how severe, and the include stack last shown.
  const Diagnostic* last = nullptr;
  std::vector<SourceLoc> last_stack;
  for (const Diagnostic& d : diagnostics) {
    const bool located = !d.loc.file.empty() && d.loc.has_position();
    if (located && d.include_stack != last_stack) {
      last_stack = d.include_stack;
      if (d.severity != Severity::kNote)
        for (const SourceLoc& at : d.include_stack)
          out +=
              fmt::format("In file included from {}:{}:\n", at.file, at.line);
    }
    out += Headline(d) + "\n";
    bool repeats =
        last != nullptr && last->loc == d.loc && d.ranges.empty() &&
        d.fixits.empty() &&
        (last->severity != Severity::kNote || d.severity == Severity::kNote);
    if (located && !repeats) RenderSnippet(d, source, out);
    last = &d;
  }
  return out;
}

}  // namespace kernelc::diag
