#include "compiler/wheel/pep440.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>

#include <initializer_list>
#include <utility>

namespace kernelc::wheel {

namespace {

// Python's \s on ASCII text, which packaging strips around a version: the C
// white space and the four information separators (str.isspace()).
bool IsSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

bool IsSeparator(char c) { return c == '.' || c == '_' || c == '-'; }

// Python's int(): the value's decimal text, without leading zeros.
std::string Number(std::string_view digits) {
  size_t first = digits.find_first_not_of('0');
  return first == std::string_view::npos ? "0"
                                         : std::string(digits.substr(first));
}

// A cursor over the version's text. Each method consumes what it matches,
// or nothing. packaging's pattern is possessive (Python 3.11's `?+` and
// `*+`): each optional part is taken whenever it matches, and never given
// back. So a scan that takes each part greedily, in the pattern's order,
// accepts exactly what the pattern accepts.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool AtEnd() const { return pos_ == text_.size(); }
  size_t position() const { return pos_; }
  void Reset(size_t pos) { pos_ = pos; }

  // The character `ahead` places on; NUL past the end.
  char At(size_t ahead) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  bool Consume(char c) {
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // [._-]?
  void OptionalSeparator() {
    if (IsSeparator(At(0))) ++pos_;
  }

  // [0-9]*
  std::string_view Digits() { return Run(llvm::isDigit); }

  // [a-z0-9]* (case-insensitive)
  std::string_view Alphanumerics() { return Run(llvm::isAlnum); }

  // The first of `words` (lower case) that the text continues with, in any
  // case, as a regular expression's alternation tries them; empty when none
  // does.
  std::string_view Word(std::initializer_list<std::string_view> words) {
    for (std::string_view w : words)
      if (text_.size() - pos_ >= w.size() &&
          llvm::StringRef(text_.substr(pos_, w.size())).equals_insensitive(w)) {
        pos_ += w.size();
        return w;
      }
    return {};
  }

 private:
  template <typename Pred>
  std::string_view Run(Pred pred) {
    size_t start = pos_;
    while (!AtEnd() && pred(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// packaging's _LETTER_NORMALIZATION.
std::string_view NormalLetter(std::string_view word) {
  if (word == "alpha") return "a";
  if (word == "beta") return "b";
  if (word == "c" || word == "pre" || word == "preview") return "rc";
  return word;
}

// `letter [._-]? [0-9]*` after the letter: the optional number, 0 if none.
std::string LetterNumber(Scanner& s) {
  s.OptionalSeparator();
  return Number(s.Digits());
}

}  // namespace

std::string Version::Normalized() const {
  std::string text = epoch == "0" ? "" : epoch + "!";
  text += fmt::format("{}", fmt::join(release, "."));
  if (!pre_letter.empty()) text += pre_letter + pre_number;
  if (post) text += ".post" + *post;
  if (dev) text += ".dev" + *dev;
  if (!local.empty()) text += fmt::format("+{}", fmt::join(local, "."));
  return text;
}

std::optional<Version> ParseVersion(std::string_view text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) return std::nullopt;
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);

  Version v;
  Scanner s(text);
  if (!s.Consume('v')) s.Consume('V');
  // Epoch: [0-9]+! ; release: [0-9]+(\.[0-9]+)*
  std::string_view digits = s.Digits();
  if (!digits.empty() && s.Consume('!')) {
    v.epoch = Number(digits);
    digits = s.Digits();
  }
  if (digits.empty()) return std::nullopt;
  v.release.push_back(Number(digits));
  while (s.At(0) == '.' && llvm::isDigit(s.At(1))) {
    s.Consume('.');
    v.release.push_back(Number(s.Digits()));
  }
  // Pre-release: [._-]? (alpha|a|beta|b|preview|pre|c|rc) [._-]? [0-9]*
  size_t before = s.position();
  s.OptionalSeparator();
  if (std::string_view w =
          s.Word({"alpha", "a", "beta", "b", "preview", "pre", "c", "rc"});
      !w.empty()) {
    v.pre_letter = NormalLetter(w);
    v.pre_number = LetterNumber(s);
  } else {
    s.Reset(before);
  }
  // Post-release: -[0-9]+ | [._-]? (post|rev|r) [._-]? [0-9]*
  before = s.position();
  if (s.At(0) == '-' && llvm::isDigit(s.At(1))) {
    s.Consume('-');
    v.post = Number(s.Digits());
  } else {
    s.OptionalSeparator();
    if (!s.Word({"post", "rev", "r"}).empty())
      v.post = LetterNumber(s);
    else
      s.Reset(before);
  }
  // Development release: [._-]? dev [._-]? [0-9]*
  before = s.position();
  s.OptionalSeparator();
  if (!s.Word({"dev"}).empty())
    v.dev = LetterNumber(s);
  else
    s.Reset(before);
  // Local version: \+ [a-z0-9]+ ([._-][a-z0-9]+)*
  auto add_local = [&v](std::string_view part) {
    bool numeric = part.find_first_not_of("0123456789") == part.npos;
    v.local.push_back(numeric ? Number(part) : llvm::StringRef(part).lower());
  };
  if (s.Consume('+')) {
    std::string_view part = s.Alphanumerics();
    if (part.empty()) return std::nullopt;
    add_local(part);
    while (IsSeparator(s.At(0)) && llvm::isAlnum(s.At(1))) {
      s.OptionalSeparator();
      add_local(s.Alphanumerics());
    }
  }
  if (!s.AtEnd()) return std::nullopt;
  return v;
}

}  // namespace kernelc::wheel
