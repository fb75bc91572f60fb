// JSON text parsed with the place of each value, so that an error in a spec
// is reported at its line and column. nlohmann's parser (3.11) reports no
// positions to its users; its SAX events come in text order, one per token,
// so a scanner that follows the events finds each token's first byte.
#ifndef KERNELC_COMPILER_MODEL_JSON_POSITIONS_H_
#define KERNELC_COMPILER_MODEL_JSON_POSITIONS_H_

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <utility>
#include <vector>

#include "compiler/diag/diagnostic.h"

namespace kernelc::model {

// 1-based lines and byte columns of the offsets of one text.
class LineMap {
 public:
  explicit LineMap(std::string_view text);
  // The line and column of byte `offset`; an offset past the end is on the
  // last line, after its last byte.
  std::pair<int, int> At(size_t offset) const;

 private:
  std::vector<size_t> starts_;  // the offset each line starts at
  size_t size_ = 0;
};

// Where the values of a JSON document are, by path: "$" for the document,
// "$.kernels" for a member, "$.kernels[0]" for an element, and so on. A
// member that occurs twice in an object is the last one, as in the value.
struct JsonPositions {
  std::map<std::string, size_t> values;  // a value's first byte
  std::map<std::string, size_t> keys;    // a member's key (its '"')
};

struct JsonSyntaxError {
  size_t offset = 0;  // the first byte of the token where parsing stopped
  std::string message;
};

// Where the values of one JSON file are, as diagnostics name places.
class JsonPlaces {
 public:
  JsonPlaces() = default;
  JsonPlaces(std::string file, std::string_view text, JsonPositions positions)
      : file_(std::move(file)),
        lines_(text),
        positions_(std::move(positions)) {}

  const std::string& file() const { return file_; }
  // The value at `path`; the nearest enclosing value when it has no place
  // (a member that is missing), and the file's start when none has.
  diag::SourceLoc At(std::string path) const;
  // The key of the member at `path`; the value's place when it has none.
  diag::SourceLoc KeyOf(const std::string& path) const;

 private:
  diag::SourceLoc Loc(size_t offset) const;

  std::string file_;
  LineMap lines_{std::string_view()};
  JsonPositions positions_;
};

// Objects and arrays nest at most this deep in a spec; a spec needs five.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as one JSON value (a UTF-8 byte order mark is skipped) and
// records where each value is. Syntax errors, numbers out of range (1e400)
// and nesting deeper than kMaxJsonDepth are errors; nothing throws.
std::variant<nlohmann::json, JsonSyntaxError> ParseJson(
    std::string_view text, JsonPositions* positions);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_JSON_POSITIONS_H_
