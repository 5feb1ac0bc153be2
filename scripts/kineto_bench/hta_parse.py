#!/usr/bin/env python3
"""HTA's own parser (HolisticTraceAnalysis's hta.common.trace.parse_trace_file, its default
backend) on one trace: seconds and peak RSS, for docs/PERF.md's comparison with laptime's reader.
Needs `pip install HolisticTraceAnalysis` (not a laptime dependency; never run in CI).

    hta_parse.py TRACE.json[.gz]
"""
import logging
import resource
import sys
import time

logging.disable(logging.WARNING)
from hta.common.trace import parse_trace_file  # noqa: E402

t0 = time.perf_counter()
meta, df, symbols = parse_trace_file(sys.argv[1])
s = time.perf_counter() - t0
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("hta %d events in %.2f s, peak RSS %.0f MB" % (len(df), s, rss_mb))
