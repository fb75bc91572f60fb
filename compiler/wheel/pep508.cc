#include "compiler/wheel/pep508.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <regex>
#include <string>

namespace kernelc::wheel {

namespace {

// packaging's tokens (packaging/_tokenizer.py, DEFAULT_RULES), in its
// order. Each is matched where the text has got to, as Python's
// Pattern.match(text, pos) matches: the first match that the expression's
// alternatives and repetitions give, which ECMAScript's backtracking gives
// too. Python's \s is spelled out, since packaging's, on ASCII text, also
// takes the four information separators.
enum Token {
  kLeftParenthesis,
  kRightParenthesis,
  kLeftBracket,
  kRightBracket,
  kSemicolon,
  kComma,
  kQuotedString,
  kOp,
  kBoolOp,
  kIn,
  kNot,
  kVariable,
  kSpecifier,
  kAt,
  kUrl,
  kIdentifier,
  kVersionPrefixTrail,
  kVersionLocalLabelTrail,
  kWs,
  kTokenCount,
};

#define KC_SPACE "[ \\t\\n\\r\\f\\v\\x1c-\\x1f]"
#define KC_PRE "(?:[-_.]?(?:alpha|beta|preview|pre|a|b|c|rc)[-_.]?[0-9]*)"
#define KC_POST "(?:(?:-[0-9]+)|(?:[-_.]?(?:post|rev|r)[-_.]?[0-9]*))"
#define KC_DEV "(?:[-_.]?dev[-_.]?[0-9]*)"
#define KC_LOCAL "(?:\\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)"
#define KC_VERSION_START KC_SPACE "*v?(?:[0-9]+!)?[0-9]+"

// packaging.specifiers.Specifier._specifier_regex_str: the identity
// operator takes any text, == and != a wildcard or a local version, ~= a
// release of two numbers or more, and the others neither.
constexpr const char* kSpecifierPattern =
    "(?:"
    "(?:===" KC_SPACE
    "*[^ \\t\\n\\r\\f\\v\\x1c-\\x1f;)]*)"
    "|(?:(?:==|!=)" KC_VERSION_START
    "(?:\\.[0-9]+)*"
    "(?:\\.\\*|" KC_PRE "?" KC_POST "?" KC_DEV "?" KC_LOCAL
    "?)?)"
    "|(?:~=" KC_VERSION_START "(?:\\.[0-9]+)+" KC_PRE "?" KC_POST "?" KC_DEV
    "?)"
    "|(?:(?:<=|>=|<|>)" KC_VERSION_START "(?:\\.[0-9]+)*" KC_PRE "?" KC_POST
    "?" KC_DEV
    "?)"
    ")";

#undef KC_SPACE
#undef KC_PRE
#undef KC_POST
#undef KC_DEV
#undef KC_LOCAL
#undef KC_VERSION_START

const std::regex& Rule(Token token) {
  using std::regex;
  static const regex* const rules = new regex[kTokenCount]{
      regex(R"(\()"),
      regex(R"(\))"),
      regex(R"(\[)"),
      regex(R"(\])"),
      regex(";"),
      regex(","),
      regex(R"('[^']*'|"[^"]*")"),
      regex("===|==|~=|!=|<=|>=|<|>"),
      regex(R"(\b(or|and)\b)"),
      regex(R"(\bin\b)"),
      regex(R"(\bnot\b)"),
      regex(R"(\b(python_version|python_full_version|os[._]name)"
            R"(|sys[._]platform|platform_(release|system))"
            R"(|platform[._](version|machine|python_implementation))"
            R"(|python_implementation|implementation_(name|version))"
            R"(|extras?|dependency_groups)\b)"),
      regex(kSpecifierPattern, regex::ECMAScript | regex::icase),
      regex("@"),
      regex("[^ \\t]+"),
      regex(R"(\b[a-zA-Z0-9][a-zA-Z0-9._-]*\b)"),
      regex(R"(\.\*)"),
      regex(R"(\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)"),
      regex("[ \\t]+"),
  };
  return rules[token];
}

// packaging's recursive descent (packaging/_parser.py), one method per
// production, each returning false at the first error, which it records.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // requirement = WS? IDENTIFIER WS? extras WS? requirement_details END
  bool Requirement() {
    Consume(kWs);
    if (!Expect(kIdentifier,
                "package name at the start of dependency specifier"))
      return false;
    Consume(kWs);
    if (!Extras()) return false;
    Consume(kWs);
    if (!RequirementDetails()) return false;
    if (!AtEnd()) return Fail("end of dependency specifier");
    return SpecifierSet();
  }

  const std::string& error() const { return error_; }
  size_t error_position() const { return error_position_; }

 private:
  // The length of `token`'s match where the text has got to.
  std::optional<size_t> Match(Token token) const {
    std::match_results<std::string_view::const_iterator> m;
    auto flags = std::regex_constants::match_continuous;
    // \b looks at the character before, as Python's match at a position
    // does.
    if (pos_ > 0) flags |= std::regex_constants::match_prev_avail;
    if (!std::regex_search(text_.begin() + pos_, text_.end(), m, Rule(token),
                           flags))
      return std::nullopt;
    return static_cast<size_t>(m.length(0));
  }

  bool Check(Token token) const { return Match(token).has_value(); }
  bool AtEnd() const { return pos_ == text_.size(); }

  bool Consume(Token token) {
    std::optional<size_t> n = Match(token);
    if (n) pos_ += *n;
    return n.has_value();
  }

  bool Fail(std::string message) {
    error_ = std::move(message);
    error_position_ = pos_;
    return false;
  }

  // What packaging.specifiers.SpecifierSet checks next: the specifier
  // tokens, joined, split at commas again, each a whole specifier. The
  // identity operator's version takes commas ("===1.0,=2" is one token).
  bool SpecifierSet() {
    static const std::regex whole(
        std::string("[ \\t\\n\\r\\f\\v\\x1c-\\x1f]*") + kSpecifierPattern +
            "[ \\t\\n\\r\\f\\v\\x1c-\\x1f]*",
        std::regex::ECMAScript | std::regex::icase);
    for (llvm::StringRef piece : llvm::split(specifiers_, ',')) {
      piece = piece.trim(" \t\n\r\f\v\x1c\x1d\x1e\x1f");
      if (piece.empty() || std::regex_match(piece.begin(), piece.end(), whole))
        continue;
      pos_ = specifier_start_;
      return Fail(fmt::format("a version specifier, not '{}'", piece.str()));
    }
    return true;
  }

  bool Expect(Token token, const char* expected) {
    return Consume(token) || Fail(expected);
  }

  // The closing token of an enclosing pair that `open` opened.
  bool Close(Token close, const char* message) {
    return Consume(close) || Fail(message);
  }

  // requirement_details = AT URL (WS requirement_marker?)?
  //                     | specifier WS? (requirement_marker)?
  bool RequirementDetails() {
    if (Consume(kAt)) {
      Consume(kWs);
      if (!Expect(kUrl, "URL after @")) return false;
      if (AtEnd()) return true;
      if (!Expect(kWs, "whitespace after URL")) return false;
      if (AtEnd()) return true;
      return RequirementMarker("semicolon (after URL and whitespace)");
    }
    bool any = false;
    if (!Specifier(&any)) return false;
    Consume(kWs);
    if (AtEnd()) return true;
    return RequirementMarker(
        any ? "comma (within version specifier), semicolon (after version "
              "specifier)"
            : "semicolon (after name with no version specifier)");
  }

  // requirement_marker = SEMICOLON marker WS?
  bool RequirementMarker(const char* expected) {
    if (!Consume(kSemicolon)) return Fail(fmt::format("{} or end", expected));
    if (!Marker()) return false;
    Consume(kWs);
    return true;
  }

  // extras = (LEFT_BRACKET wsp* extras_list? wsp* RIGHT_BRACKET)?
  // extras_list = identifier (wsp* ',' wsp* identifier)*
  bool Extras() {
    if (!Consume(kLeftBracket)) return true;
    Consume(kWs);
    if (Consume(kIdentifier)) {
      while (true) {
        Consume(kWs);
        if (Check(kIdentifier)) return Fail("comma between extra names");
        if (!Consume(kComma)) break;
        Consume(kWs);
        if (!Expect(kIdentifier, "extra name after comma")) return false;
      }
    }
    Consume(kWs);
    return Close(kRightBracket, "matching ] for [, after extras");
  }

  // specifier = LEFT_PARENTHESIS WS? version_many WS? RIGHT_PARENTHESIS
  //           | WS? version_many WS?
  // version_many = (SPECIFIER (WS? COMMA WS? SPECIFIER)*)?
  bool Specifier(bool* any) {
    bool parenthesized = Consume(kLeftParenthesis);
    Consume(kWs);
    specifier_start_ = pos_;
    while (Check(kSpecifier)) {
      size_t start = pos_;
      Consume(kSpecifier);
      specifiers_ += std::string(text_.substr(start, pos_ - start)) + ",";
      *any = true;
      if (Check(kVersionPrefixTrail)) {
        std::string_view op = text_.substr(start, 3);
        bool equality =
            op.substr(0, 2) == "!=" || (op.substr(0, 2) == "==" && op != "===");
        return Fail(equality ? "no .* suffix after a pre-release, "
                               "post-release, dev or local version"
                             : "no .* suffix: only == and != take one");
      }
      if (Check(kVersionLocalLabelTrail))
        return Fail("no local version label: only == and != take one");
      Consume(kWs);
      if (!Consume(kComma)) break;
      Consume(kWs);
    }
    Consume(kWs);
    return !parenthesized || Close(kRightParenthesis,
                                   "matching ) for (, after version specifier");
  }

  // marker = marker_atom (BOOLOP marker_atom)*
  bool Marker() {
    if (!MarkerAtom()) return false;
    while (Consume(kBoolOp))
      if (!MarkerAtom()) return false;
    return true;
  }

  // marker_atom = WS? LEFT_PARENTHESIS WS? marker WS? RIGHT_PARENTHESIS WS?
  //             | WS? marker_item WS?
  bool MarkerAtom() {
    Consume(kWs);
    if (Consume(kLeftParenthesis)) {
      Consume(kWs);
      if (!Marker()) return false;
      Consume(kWs);
      if (!Close(kRightParenthesis,
                 "matching ) for (, after marker expression"))
        return false;
    } else if (!MarkerItem()) {
      return false;
    }
    Consume(kWs);
    return true;
  }

  // marker_item = WS? marker_var WS? marker_op WS? marker_var WS?
  bool MarkerItem() {
    Consume(kWs);
    if (!MarkerVar()) return false;
    Consume(kWs);
    if (!MarkerOp()) return false;
    Consume(kWs);
    if (!MarkerVar()) return false;
    Consume(kWs);
    return true;
  }

  // marker_var = VARIABLE | QUOTED_STRING
  bool MarkerVar() {
    if (Consume(kVariable)) return true;
    size_t start = pos_;
    if (!Consume(kQuotedString))
      return Fail("a marker variable or quoted string");
    if (text_.substr(start, pos_ - start).find('\\') !=
        std::string_view::npos) {
      pos_ = start;
      return Fail("a quoted string without backslashes");
    }
    return true;
  }

  // marker_op = IN | NOT WS IN | OP
  bool MarkerOp() {
    if (Consume(kIn)) return true;
    if (Consume(kNot))
      return Expect(kWs, "whitespace after 'not'") &&
             Expect(kIn, "'in' after 'not'");
    return Consume(kOp) ||
           Fail(
               "a marker operator, one of <=, <, !=, ==, >=, >, ~=, ===, in, "
               "not in");
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string specifiers_;  // the specifier tokens, each with a comma
  size_t specifier_start_ = 0;
  std::string error_;
  size_t error_position_ = 0;
};

}  // namespace

std::optional<RequirementError> CheckRequirement(std::string_view requirement) {
  for (char c : requirement)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') ||
        static_cast<unsigned char>(c) >= 0x7f)
      return RequirementError{/*not_ascii=*/true, "", 0};
  Parser parser(requirement);
  if (parser.Requirement()) return std::nullopt;
  return RequirementError{false, parser.error(), parser.error_position() + 1};
}

}  // namespace kernelc::wheel
