"""analyze_many() on a Dask cluster: the laptime command does every step, on the workers where the
files are, and this module only fans the steps out and hands their documents on:

1. `laptime analyze --job PATHS --list-reports --json`: the reports the job reads, each once;
2. `laptime analyze --job REPORT --json` for each report, on any worker;
3. `laptime analyze --job PATHS --rows-from DOCS --json` on a worker: the summary (the spread, the
   straggler's diff, the gate) from those documents, by the rules of trace/compare/job.cpp that
   the command uses without a cluster.

So the dict is the command's own, by construction (tests/pip compares it on a LocalCluster)."""

import json
import os
import tempfile

from . import Report, _report, _report_text


def check_client(client):
    """A dask.distributed.Client, or TypeError naming what is expected."""
    try:
        from distributed import Client
    except ImportError:
        raise TypeError("client= takes a dask.distributed.Client (pip install laptime[dask]), not %s"
                        % type(client).__name__) from None
    if isinstance(client, (str, bytes, os.PathLike)):
        raise TypeError("client= takes a dask.distributed.Client, not the address %r: pass Client(%r), "
                        "which you then own and close" % (client, client))
    if not isinstance(client, Client):
        raise TypeError("client= takes a dask.distributed.Client, not %s" % type(client).__name__)


# --- on the workers ------------------------------------------------------------------------------

def _reports(paths, options):
    return _report("analyze", paths, dict(options, list_reports=True))["files"]


def _rows(report, options):
    return _report_text("analyze", [report], options, ok_codes=(0, 3))


def _summary(paths, documents, options):
    with tempfile.TemporaryDirectory(prefix="laptime-job-") as folder:
        rows = os.path.join(folder, "rows.json")
        with open(rows, "w", encoding="utf-8") as f:
            f.write("[" + ",".join(documents) + "]")
        return _report_text("analyze", paths, dict(options, rows_from=rows), ok_codes=(0, 3))


# --- here ----------------------------------------------------------------------------------------

def on_dask(client, paths, options):
    files = client.submit(_reports, paths, options, pure=False).result()
    futures = client.map(_rows, files, [options] * len(files), pure=False)
    documents = [future.result() for future in futures]  # the first failure in input order, as the command's
    text = client.submit(_summary, paths, documents, options, pure=False).result()
    return Report(json.loads(text))
