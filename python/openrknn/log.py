"""The packages' log lines, in the vendor toolkit's shape ("E inference: ..." on stderr).

Errors and warnings are always printed; information lines only with verbose=True. verbose_file
receives every line as well.
"""
import sys


class Logger:
    def __init__(self, verbose=False, verbose_file=None):
        self.verbose = bool(verbose)
        self._file = None
        if verbose_file:
            self._file = open(verbose_file, "a", encoding="utf-8")
        self._warned = set()

    def _emit(self, level, where, msg):
        line = f"{level} {where}: {msg}" if where else f"{level} {msg}"
        if level != "I" or self.verbose:
            print(line, file=sys.stderr, flush=True)
        if self._file:
            self._file.write(line + "\n")
            self._file.flush()

    def error(self, where, msg):
        self._emit("E", where, msg)

    def warning(self, where, msg):
        self._emit("W", where, msg)

    def warning_once(self, where, msg):
        if msg not in self._warned:
            self._warned.add(msg)
            self._emit("W", where, msg)

    def info(self, where, msg):
        self._emit("I", where, msg)

    def close(self):
        if self._file:
            self._file.close()
            self._file = None
