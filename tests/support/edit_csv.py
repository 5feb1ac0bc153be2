#!/usr/bin/env python3
"""Writes a copy of an Nsight Compute raw CSV with one cell changed, for the bad-input rows of
docs/ERRORS.md that the table-driven test runs (tests/test_errors_table.cpp).

    edit_csv.py IN OUT KERNEL COLUMN VALUE     KERNEL: 0 for the first kernel row (under the units)
"""
import csv
import sys


def main():
    if len(sys.argv) != 6:
        sys.exit("usage: edit_csv.py IN OUT KERNEL COLUMN VALUE")
    src, dst, kernel, column, value = sys.argv[1:]
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    header = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    rows[header + 2 + int(kernel)][rows[header].index(column)] = value
    with open(dst, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)


if __name__ == "__main__":
    main()
