"""OpenRKNN's rknn: the vendor toolkit's Python interface (rknn.api.RKNN)."""
