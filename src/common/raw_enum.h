// Reads a C enum value that came from a client as its raw int. A client may pass any int in an
// enum-typed argument or field (a bad command, an unknown type); in C++ loading an enum object
// whose value lies outside the enum's range is undefined behaviour, so such values are read as
// bytes and validated as ints before they are ever used as the enum.
#pragma once
#include <cstring>

namespace orknn {

template <typename E>
int raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C API enums are 4 bytes");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

}  // namespace orknn
