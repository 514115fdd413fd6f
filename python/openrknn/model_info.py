"""What a .rknn file says about itself, read without creating a context (the C API has no query
for the target platform, which the vendor's Python rules for core masks depend on)."""
import struct

# NPU cores per platform (src/runtime/platform.cc); platforms not listed have one.
NPU_CORES = {"rk3588": 3, "rk3576": 2}


def model_platform(data):
    """The target platform an OpenRKNN model names, or None if `data` is not one. The metadata is
    a size-prefixed FlatBuffer (docs/format.md; identifier "ORKN") whose root table Model has
    `platform` as field 2 (src/model/schema/model.fbs; field ids are append-only)."""
    buf = memoryview(data)[4:]  # past the size prefix: FlatBuffer offsets count from here
    n = len(buf)

    def u32(at):
        if not 0 <= at <= n - 4:
            raise ValueError
        return struct.unpack_from("<I", buf, at)[0]

    try:
        if n < 8 or bytes(buf[4:8]) != b"ORKN":
            return None
        table = u32(0)
        vtable = table - struct.unpack_from("<i", buf, table)[0] if 0 <= table <= n - 4 else -1
        slot = 4 + 2 * 2  # vtable header (2 x uint16), then one uint16 offset per field
        if not 0 <= vtable <= n - slot - 2 or struct.unpack_from("<H", buf, vtable)[0] < slot + 2:
            return None
        off = struct.unpack_from("<H", buf, vtable + slot)[0]
        if off == 0:
            return None
        s = table + off + u32(table + off)
        length = u32(s)
        if s + 4 + length > n:
            return None
        return bytes(buf[s + 4:s + 4 + length]).decode("utf-8")
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
