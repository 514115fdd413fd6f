"""OpenRKNN's rknnlite: the light runtime's Python interface (rknnlite.api.RKNNLite)."""
