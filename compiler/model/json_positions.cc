#include "compiler/model/json_positions.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace kernelc::model {

using nlohmann::json;

LineMap::LineMap(std::string_view text) : size_(text.size()) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts_.push_back(i + 1);
}

std::pair<int, int> LineMap::At(size_t offset) const {
  offset = std::min(offset, size_);
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  size_t line = static_cast<size_t>(it - starts_.begin());  // 1-based
  return {static_cast<int>(line),
          static_cast<int>(offset - starts_[line - 1]) + 1};
}

diag::SourceLoc JsonPlaces::Loc(size_t offset) const {
  auto [line, col] = lines_.At(offset);
  return diag::SourceLoc{file_, line, col};
}

diag::SourceLoc JsonPlaces::At(std::string path) const {
  while (true) {
    auto it = positions_.values.find(path);
    if (it != positions_.values.end()) return Loc(it->second);
    size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos || cut == 0) return Loc(0);
    path.resize(cut);
  }
}

diag::SourceLoc JsonPlaces::KeyOf(const std::string& path) const {
  auto it = positions_.keys.find(path);
  return it != positions_.keys.end() ? Loc(it->second) : At(path);
}

namespace {

// Builds the value as nlohmann's own DOM parser does, and follows the
// tokens through the text: each event is one token, and what lies between
// two tokens is whitespace and at most one ',' or ':'. The parser has
// checked every token before its event, so the scanner only skips over it.
class PositionedParser : public nlohmann::json_sax<json> {
 public:
  PositionedParser(std::string_view text, JsonPositions* positions)
      : text_(text), positions_(positions) {
    // nlohmann skips a UTF-8 byte order mark.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") cursor_ = 3;
  }

  json& root() { return root_; }
  const JsonSyntaxError& error() const { return error_; }

  bool null() override { return Value(nullptr, 4); }
  bool boolean(bool v) override { return Value(v, v ? 4 : 5); }
  bool number_integer(number_integer_t v) override {
    return Value(v, NumberLength());
  }
  bool number_unsigned(number_unsigned_t v) override {
    return Value(v, NumberLength());
  }
  bool number_float(number_float_t v, const string_t&) override {
    return Value(v, NumberLength());
  }
  bool string(string_t& v) override { return Value(std::move(v), StringLength()); }
  bool binary(binary_t&) override { return Fail("binary values"); }

  bool start_object(std::size_t) override {
    return Open(json::value_t::object);
  }
  bool start_array(std::size_t) override { return Open(json::value_t::array); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& k) override {
    const size_t at = TokenStart();
    cursor_ = at + StringLength();
    Frame& f = frames_.back();
    f.key = k;
    if (positions_) positions_->keys[Member(f, k)] = at;
    object_element_ = &(*f.value)[k];
    return true;
  }

  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error_.offset = TokenStart();
    error_.message = Clean(e.what());
    return false;
  }

 private:
  struct Frame {
    json* value = nullptr;
    std::string path;
    size_t next_index = 0;  // arrays: the next element's index
    std::string key;        // objects: the member being read
  };

  // nlohmann's messages start "[json.exception.parse_error.101] parse error
  // at line 1, column 5: "; the diagnostic has its own location.
  static std::string Clean(std::string message) {
    if (message.rfind("[json.exception.", 0) == 0) {
      size_t end = message.find("] ");
      if (end != std::string::npos) message.erase(0, end + 2);
    }
    if (message.rfind("parse error", 0) == 0) {
      size_t colon = message.find(": ");
      if (colon != std::string::npos) message.erase(0, colon + 2);
    }
    return message;
  }

  static std::string Member(const Frame& f, const std::string& key) {
    return fmt::format("{}.{}", f.path, key);
  }

  // The first byte of the next token: past whitespace and at most one
  // separator.
  size_t TokenStart() const {
    size_t i = cursor_;
    auto skip_space = [&] {
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' ||
                                  text_[i] == '\n' || text_[i] == '\r'))
        ++i;
    };
    skip_space();
    if (i < text_.size() && (text_[i] == ',' || text_[i] == ':')) {
      ++i;
      skip_space();
    }
    return i;
  }

  size_t NumberLength() const {
    size_t i = TokenStart(), n = 0;
    while (i + n < text_.size() &&
           std::string_view("+-0123456789.eE").find(text_[i + n]) !=
               std::string_view::npos)
      ++n;
    return n;
  }

  size_t StringLength() const {
    size_t i = TokenStart();
    size_t j = i + 1;
    while (j < text_.size() && text_[j] != '"') j += text_[j] == '\\' ? 2 : 1;
    return j + 1 - i;
  }

  // Where a new value goes, and its path.
  std::pair<json*, std::string> Place(json value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return {&root_, "$"};
    }
    Frame& f = frames_.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(value));
      return {&f.value->back(), fmt::format("{}[{}]", f.path, f.next_index++)};
    }
    *object_element_ = std::move(value);
    return {object_element_, Member(f, f.key)};
  }

  template <typename V>
  bool Value(V&& v, size_t length) {
    const size_t at = TokenStart();
    cursor_ = at + length;
    auto [slot, path] = Place(json(std::forward<V>(v)));
    if (positions_) positions_->values[path] = at;
    return true;
  }

  bool Open(json::value_t type) {
    const size_t at = TokenStart();
    if (static_cast<int>(frames_.size()) >= kMaxJsonDepth) {
      error_.offset = at;
      error_.message =
          fmt::format("objects and arrays nest deeper than {}", kMaxJsonDepth);
      return false;
    }
    cursor_ = at + 1;
    auto [slot, path] = Place(json(type));
    if (positions_) positions_->values[path] = at;
    frames_.push_back(Frame{slot, std::move(path)});
    return true;
  }

  bool Close() {
    cursor_ = TokenStart() + 1;
    frames_.pop_back();
    return true;
  }

  bool Fail(const char* what) {
    error_.offset = TokenStart();
    error_.message = fmt::format("{} are not JSON", what);
    return false;
  }

  std::string_view text_;
  JsonPositions* positions_;
  size_t cursor_ = 0;
  json root_;
  std::vector<Frame> frames_;
  json* object_element_ = nullptr;
  JsonSyntaxError error_;
};

}  // namespace

std::variant<json, JsonSyntaxError> ParseJson(std::string_view text,
                                              JsonPositions* positions) {
  JsonPositions local;
  PositionedParser parser(text, positions ? positions : &local);
  // Strict: the whole text is one value. No exceptions: every error is an
  // event.
  if (!json::sax_parse(text.begin(), text.end(), &parser,
                       json::input_format_t::json, /*strict=*/true))
    return parser.error();
  return std::move(parser.root());
}

}  // namespace kernelc::model
