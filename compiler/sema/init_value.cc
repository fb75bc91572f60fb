#include "compiler/sema/init_value.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace kernelc::sema {

std::optional<InitValue> ParseInit(const model::Param& p,
                                   diag::DiagnosticEngine& diags) {
  const std::string& s = p.init->text;
  InitValue v;
  v.text = s;
  char* end = nullptr;
  errno = 0;
  long long ll = std::strtoll(s.c_str(), &end, 10);
  bool is_int = !s.empty() && *end == '\0' && errno == 0;
  if (!is_int && !s.empty() && s[0] != '-') {
    errno = 0;
    unsigned long long ull = std::strtoull(s.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) {
      is_int = true;
      v.is_unsigned_large = true;
      v.unsigned_integer = ull;
    }
  }
  if (is_int) {
    v.is_integer = true;
    v.integer = ll;
    v.real = v.is_unsigned_large ? static_cast<double>(v.unsigned_integer)
                                 : static_cast<double>(ll);
  } else {
    // Decimal numbers only (strtod also reads hex and skips spaces), and
    // a finite value must not overflow to infinity.
    errno = 0;
    double d = std::strtod(s.c_str(), &end);
    bool special = s == "inf" || s == "-inf" || s == "nan";
    if (s.empty() || *end != '\0' ||
        std::isspace(static_cast<unsigned char>(s[0])) ||
        s.find_first_of("xX") != std::string::npos ||
        (!special && std::isinf(d))) {
      diags.Report<diag::Id::kInitNotANumber>(p.init->loc, s, p.name);
      return std::nullopt;
    }
    v.is_integer = false;
    v.real = d;
  }
  model::DType t = p.dtype;
  auto does_not_fit = [&]() -> std::optional<InitValue> {
    diags.Report<diag::Id::kInitDoesNotFit>(p.init->loc, s, p.name,
                                            model::DTypeName(t));
    return std::nullopt;
  };
  if (model::IsFloat(t)) {
    double max = t == model::DType::kF16    ? 65504.0
                 : t == model::DType::kBF16 ? 3.3895313892515355e38
                 : t == model::DType::kF32  ? 3.4028234663852886e38
                                           : std::numeric_limits<double>::max();
    if (std::isfinite(v.real) && std::fabs(v.real) > max) return does_not_fit();
    return v;
  }
  if (!v.is_integer) return does_not_fit();
  // Range of the integer type.
  __int128 lo = 0, hi = 1;
  switch (t) {
    case model::DType::kBool:
      lo = 0;
      hi = 1;
      break;
    case model::DType::kI8:
      lo = INT8_MIN;
      hi = INT8_MAX;
      break;
    case model::DType::kI16:
      lo = INT16_MIN;
      hi = INT16_MAX;
      break;
    case model::DType::kI32:
      lo = INT32_MIN;
      hi = INT32_MAX;
      break;
    case model::DType::kI64:
      lo = INT64_MIN;
      hi = INT64_MAX;
      break;
    case model::DType::kU8:
      hi = UINT8_MAX;
      break;
    case model::DType::kU16:
      hi = UINT16_MAX;
      break;
    case model::DType::kU32:
      hi = UINT32_MAX;
      break;
    case model::DType::kU64:
      hi = UINT64_MAX;
      break;
    default:
      break;
  }
  __int128 x = v.is_unsigned_large ? static_cast<__int128>(v.unsigned_integer)
                                   : static_cast<__int128>(v.integer);
  if (x < lo || x > hi) return does_not_fit();
  return v;
}

}  // namespace kernelc::sema
