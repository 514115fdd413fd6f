# Cross build for 64-bit ARM Linux with Debian's cross compiler (g++-aarch64-linux-gnu); the
# one-command form, with the tests under qemu-user, is scripts/cross_test.sh (docs/aarch64.md).
#   scripts/setup.sh aarch64
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# The target's libraries are Debian's arm64 packages unpacked by `scripts/setup.sh aarch64` into
# ORKNN_AARCH64_PACKAGES (not installed beside the host's: several arm64 -dev packages would replace
# the amd64 ones). The C and C++ runtime come with the cross compiler (/usr/aarch64-linux-gnu);
# header-only packages (FlatBuffers, CLI11) and the host's flatc serve both.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT ORKNN_AARCH64_PACKAGES)
  set(ORKNN_AARCH64_PACKAGES "${CMAKE_CURRENT_LIST_DIR}/../.cross/aarch64" CACHE PATH
      "Debian arm64 packages unpacked by scripts/setup.sh aarch64")
endif()
get_filename_component(_pkgs "${ORKNN_AARCH64_PACKAGES}" ABSOLUTE)
set(_pkg_libs "${_pkgs}/usr/lib/aarch64-linux-gnu:${_pkgs}/lib/aarch64-linux-gnu")

# Libraries and package configs of the target only from the cross root and the unpacked packages
# (never the host's x86 libraries); headers also from the host's /usr/include (header-only
# packages); programs (flatc) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu "${_pkgs}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The linker finds what the unpacked libraries need (libonnx -> libprotobuf -> libz) there too.
string(REPLACE ":" ";-Wl,-rpath-link," _rpath_link "-Wl,-rpath-link,${_pkg_libs}")
string(REPLACE ";" " " _rpath_link "${_rpath_link}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_rpath_link}")

# qemu-user runs the test programs (CTest puts CMAKE_CROSSCOMPILING_EMULATOR in front of each):
# -L gives it the target's loader and C library, -E the unpacked libraries' directories.
find_program(ORKNN_QEMU_AARCH64 qemu-aarch64)
if(ORKNN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      "${ORKNN_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${_pkg_libs}")
endif()
