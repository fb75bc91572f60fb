// Support for generated XLA FFI handlers: expression evaluation without
// undefined behaviour, launch-grid sizing, output filling and error text.
// What a call runs every time is inline here; the text of errors is built
// by the prebuilt runtime (libkernelc_runtime.a, linked into every
// generated library, so a generated library needs no kernelc library at run
// time). Dependency-free beyond the C++ standard library. Nothing here
// throws across the handler boundary, prints, or exits.
#ifndef KERNELC_RUNTIME_H_
#define KERNELC_RUNTIME_H_

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "kernelc/arith.h"
#include "kernelc/launch.h"

namespace kc::rt {

// Evaluates shape and grid expressions with the int64 arithmetic of
// kernelc/arith.h. Division or modulo by zero, overflow and a shift count
// out of range do not trap: they set failed() and yield 0, and the handler
// turns that into an error after evaluating every expression.
class Evaluator {
 public:
  int64_t Add(int64_t a, int64_t b) { return Take(arith::Add(a, b)); }
  int64_t Sub(int64_t a, int64_t b) { return Take(arith::Sub(a, b)); }
  int64_t Mul(int64_t a, int64_t b) { return Take(arith::Mul(a, b)); }
  int64_t Neg(int64_t a) { return Take(arith::Neg(a)); }
  int64_t FloorDiv(int64_t a, int64_t b) { return Take(arith::FloorDiv(a, b)); }
  int64_t FloorMod(int64_t a, int64_t b) { return Take(arith::FloorMod(a, b)); }
  int64_t CeilDiv(int64_t a, int64_t b) { return Take(arith::CeilDiv(a, b)); }
  int64_t Min(int64_t a, int64_t b) { return Take(arith::Min(a, b)); }
  int64_t Max(int64_t a, int64_t b) { return Take(arith::Max(a, b)); }
  int64_t Shl(int64_t a, int64_t b) { return Take(arith::Shl(a, b)); }
  int64_t Shr(int64_t a, int64_t b) { return Take(arith::Shr(a, b)); }
  int64_t And(int64_t a, int64_t b) { return Take(arith::And(a, b)); }
  int64_t Or(int64_t a, int64_t b) { return Take(arith::Or(a, b)); }
  int64_t Xor(int64_t a, int64_t b) { return Take(arith::Xor(a, b)); }
  int64_t Not(int64_t a) { return Take(arith::Not(a)); }
  int64_t ToInt8(int64_t a) { return Take(arith::ToInt(a, 8, true)); }
  int64_t ToUint8(int64_t a) { return Take(arith::ToInt(a, 8, false)); }
  int64_t ToInt16(int64_t a) { return Take(arith::ToInt(a, 16, true)); }
  int64_t ToUint16(int64_t a) { return Take(arith::ToInt(a, 16, false)); }
  int64_t ToInt32(int64_t a) { return Take(arith::ToInt(a, 32, true)); }
  int64_t ToUint32(int64_t a) { return Take(arith::ToInt(a, 32, false)); }
  int64_t ToInt64(int64_t a) { return Take(arith::ToInt(a, 64, true)); }
  int64_t ToUint64(int64_t a) { return Take(arith::ToInt(a, 64, false)); }
  bool failed() const { return failed_; }

 private:
  int64_t Take(arith::Checked r) {
    failed_ = failed_ || !r.ok();
    return r.value;
  }
  bool failed_ = false;
};

// A dimension list as a message prints it: ShapeOf(buffer.dimensions()).
struct Shape {
  const int64_t* dims;
  size_t rank;
};
template <typename Dims>
Shape ShapeOf(const Dims& dims) {
  return Shape{dims.begin(), dims.size()};
}

// The text of an error, made on an error path only: a handler appends the
// parts of its message and hands the text to XLA. Defined in the prebuilt
// runtime (libkernelc_runtime.a), so that no handler compiles the building
// of a string: a check's failure is a few calls. Never throws; should
// memory run out, the text keeps what fit.
class Message {
 public:
  Message() = default;
  ~Message();
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

  Message& operator<<(const char* text);
  Message& operator<<(int64_t value);
  Message& operator<<(uint64_t value);
  Message& operator<<(int value) { return *this << static_cast<int64_t>(value); }
  // "(2, 3)"; one dimension "(5,)", as Python writes a tuple.
  Message& operator<<(Shape shape);
  // Why SizeGrid refused `threads` in blocks of `block` (`rank` entries).
  Message& Grid(const int64_t* threads, const int64_t* block, int rank);

  // `n` bytes of `text`, which need not be NUL-terminated.
  void Append(const char* text, size_t n);

  // The text, NUL-terminated; valid until the next append.
  const char* c_str() const { return data_ != nullptr ? data_ : ""; }
  size_t size() const { return size_; }

 private:

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// CUDA's limits on the blocks of a grid along x, y, z, kept on the CPU too
// so that a kernel behaves the same on both.
inline constexpr int64_t kMaxGridBlocks[3] = {2147483647, 65535, 65535};

// Sizes a launch: `threads` along x, y, z (rank entries used, the rest 1),
// `block` threads per block. Returns true, or false when the grid cannot be
// launched (GridError says why). *empty is set when there is no thread at
// all. Inlined, so that a block known when the handler is compiled divides
// by a constant, and no string is made on the way (Message::Grid says why
// it refused).
__attribute__((always_inline)) inline bool SizeGrid(const int64_t* threads,
                                                    const int64_t* block,
                                                    int rank,
                                                    kc_launch* launch,
                                                    bool* empty) {
  uint32_t* grid[3] = {&launch->grid.x, &launch->grid.y, &launch->grid.z};
  uint32_t* blk[3] = {&launch->block.x, &launch->block.y, &launch->block.z};
  *empty = false;
  for (int d = 0; d < 3; ++d) {
    const int64_t t = d < rank ? threads[d] : 1;
    const int64_t b = d < rank ? block[d] : 1;
    if (t < 0) return false;
    if (t == 0) *empty = true;
    const int64_t blocks = t / b + (t % b != 0);
    if (blocks > kMaxGridBlocks[d]) return false;
    *grid[d] = static_cast<uint32_t>(blocks);
    *blk[d] = static_cast<uint32_t>(b);
  }
  return true;
}

template <typename T>
void Fill(void* data, int64_t count, T value) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] = value;
}

// Whether an integer value fits the derived parameter type T.
template <typename T>
bool Fits(int64_t v) {
  return static_cast<int64_t>(static_cast<T>(v)) == v &&
         ((v < 0) == (static_cast<T>(v) < 0));
}

}  // namespace kc::rt

#endif  // KERNELC_RUNTIME_H_
