#!/usr/bin/env python3
"""Fails a test run that skipped tests it should have run (issue: skips pass silently in CTest).

Reads the GoogleTest XML reports CTest's runs wrote (GTEST_OUTPUT, tests/CMakeLists.txt) in
BUILD_DIR/test-results, prints the CPU and the features the skip rules look at, counts the skipped
tests per reason, and exits 1 when a skip matches no rule of tests/expected_skips.txt that holds on
this CPU, or when no report was written at all.

Usage: scripts/check_skips.py BUILD_DIR
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEATURES = ("avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512vbmi", "amx_int8")


def cpu():
    flags, model = set(), "unknown CPU"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "flags" and not flags:
                flags = set(value.split())
            elif key.strip() == "model name" and model == "unknown CPU":
                model = value.strip()
    return model, flags


def rules():
    out = []
    with open(os.path.join(ROOT, "tests", "expected_skips.txt"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                when, phrase = line.rstrip("\n").split("\t", 1)
                out.append((when, phrase))
    return out


def holds(when, flags):
    if when == "always":
        return True
    if when.startswith("cpu-lacks:"):
        return any(flag not in flags for flag in when[len("cpu-lacks:"):].split(","))
    raise SystemExit(f"check_skips: tests/expected_skips.txt: unknown condition '{when}'")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    reports = sorted(glob.glob(os.path.join(sys.argv[1], "test-results", "*.xml")))
    model, flags = cpu()
    print(f"check_skips: {model}; " + " ".join(f"{f}:{'yes' if f in flags else 'no'}" for f in FEATURES))
    if not reports:
        print(f"check_skips: no GoogleTest reports in {sys.argv[1]}/test-results", file=sys.stderr)
        return 1
    table = rules()
    run = 0
    expected, unexpected = {}, []
    for path in reports:
        for case in ET.parse(path).getroot().iter("testcase"):
            run += 1
            skipped = case.find("skipped")
            if skipped is None:
                continue
            message = skipped.get("message", "").split("\n")[-1]
            name = f"{case.get('classname')}.{case.get('name')}"
            match = [(w, p) for w, p in table if p in message and holds(w, flags)]
            if match:
                expected[match[0][1]] = expected.get(match[0][1], 0) + 1
            else:
                unexpected.append(f"{name}: {message}")
    print(f"check_skips: {run} tests in {len(reports)} reports, {sum(expected.values())} expected skips"
          + "".join(f"; {n} x '{p}'" for p, n in sorted(expected.items())))
    if unexpected:
        print(f"check_skips: {len(unexpected)} skip(s) no rule of tests/expected_skips.txt allows on this CPU:",
              file=sys.stderr)
        for u in unexpected:
            print(f"  {u}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
