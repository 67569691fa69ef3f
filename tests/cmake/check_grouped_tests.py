#!/usr/bin/env python3
"""Every test of the grouped suites runs under exactly one ctest entry.

tests/CMakeLists.txt registers braid_cuda_tests, braid_kernels_tests and
braid_onnx_tests per TEST / TEST_P by reading their sources, not by asking
the binaries; a test that reading misses (defined in a macro, indented) would
never run. This lists each binary's tests and matches them against the
entries' --gtest_filter patterns.

    check_grouped_tests.py CTEST BUILD_DIR
"""
import collections
import fnmatch
import json
import subprocess
import sys

GROUPED = ("braid_cuda_tests", "braid_kernels_tests", "braid_onnx_tests")


def listed_tests(binary: str) -> list[str]:
    out = subprocess.run([binary, "--gtest_list_tests"], check=True, text=True,
                         capture_output=True).stdout
    names, suite = [], ""
    for line in out.splitlines():
        if not line.strip() or line.startswith("Running main"):
            continue
        if line.startswith("  "):
            names.append(suite + line.split()[0])
        else:
            suite = line.split()[0]
    return names


def main() -> int:
    ctest, build_dir = sys.argv[1], sys.argv[2]
    doc = json.loads(subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir, check=True,
                                    text=True, capture_output=True).stdout)
    filters: dict[str, list[str]] = collections.defaultdict(list)
    for test in doc["tests"]:
        command = test.get("command") or []
        if command and command[0].rsplit("/", 1)[-1] in GROUPED:
            pattern = [a for a in command if a.startswith("--gtest_filter=")]
            filters[command[0]].append(pattern[0].split("=", 1)[1] if pattern else "*")
    if len(filters) == 0:
        print("no grouped suite is registered")
        return 1
    bad = 0
    for binary, patterns in sorted(filters.items()):
        tests = listed_tests(binary)
        for name in tests:
            hits = sum(fnmatch.fnmatchcase(name, p) for p in patterns)
            if hits != 1:
                print(f"{binary}: {name} is in {hits} ctest entries (want 1)")
                bad += 1
        print(f"{binary.rsplit('/', 1)[-1]}: {len(tests)} tests in {len(patterns)} entries")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
