#pragma once
// Reported by RKNN_QUERY_SDK_VERSION. The API level is the vendor SDK whose API we implement.
namespace orknn {
constexpr const char kOpenRknnVersion[] = "0.1.0";
constexpr const char kApiVersionString[] = "2.3.2 (OpenRKNN 0.1.0, CPU)";
constexpr const char kDriverVersionString[] = "OpenRKNN CPU 0.1.0";
}  // namespace orknn
