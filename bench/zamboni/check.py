"""Verify the tables of the Zamboni head-to-head (bench/zamboni/run.sh) after a run.

    python check.py DIR [--tables all|NS.T,...] [--order COL,COL] [--no-rows]

DIR holds catalog.db (a SQL catalog named "local", the name Zamboni's
--local-warehouse gives it) and the tables' warehouse. Prints one JSON line,
summed over the tables:
  rows, fingerprint  row count and an order-free digest of every value of every
                     row (DuckDB: sum of hash(row)), read through PyIceberg: a
                     lossless rewrite leaves both unchanged;
  data_files, snapshots, files_on_disk (under the table locations);
  missing            files some snapshot still reaches (metadata, manifest lists,
                     manifests, data and delete files) that are gone from disk:
                     must be 0 after any run;
  order_breaks_max   with --order: the most rows in one data file that are out of
                     (COL, COL, ...) order (0 after a sort);
  sort_order_ids     the sort order ids the data files carry.
A neutral reader (neither tool's code) so that both are checked alike.
"""

import argparse
import json
import os
import sys

import duckdb
import numpy as np
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog


def local_path(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def reachable(tbl) -> set[str]:
    """Every file a snapshot of tbl reaches, and its metadata files."""
    md = tbl.metadata
    paths = {local_path(tbl.metadata_location)}
    for entry in md.metadata_log:
        paths.add(local_path(entry.metadata_file))
    manifests = {}
    for snap in md.snapshots:
        paths.add(local_path(snap.manifest_list))
        for m in snap.manifests(tbl.io):
            manifests[m.manifest_path] = m
    for path, m in manifests.items():  # each manifest once: snapshots share most of them
        paths.add(local_path(path))
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            paths.add(local_path(e.data_file.file_path))
    return paths


def order_breaks(path: str, cols: list[str]) -> int:
    t = pq.read_table(path, columns=cols)
    if t.num_rows < 2:
        return 0
    arrs = [t.column(c).to_numpy() for c in cols]
    # Row i+1 breaks the order when the first column that differs decreases.
    broken = np.zeros(t.num_rows - 1, dtype=bool)
    equal = np.ones(t.num_rows - 1, dtype=bool)
    for a in arrs:
        broken |= equal & (a[1:] < a[:-1])
        equal &= a[1:] == a[:-1]
    return int(broken.sum())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--tables", default="all")
    ap.add_argument("--order", default="")
    ap.add_argument("--no-rows", action="store_true", help="skip reading rows (tables of empty files)")
    args = ap.parse_args()
    d = os.path.abspath(args.dir)
    cat = SqlCatalog("local", uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}/warehouse")
    if args.tables == "all":
        idents = sorted(t for ns in cat.list_namespaces() for t in cat.list_tables(ns))
    else:
        idents = [tuple(t.split(".")) for t in args.tables.split(",")]
    con = duckdb.connect()
    out = {"tables": len(idents), "rows": 0, "fingerprint": 0, "data_files": 0, "snapshots": 0,
           "files_on_disk": 0, "missing": 0, "sort_order_ids": [], "order_breaks_max": 0,
           "last_operations": {}}
    cols = [c for c in args.order.split(",") if c]
    for ident in idents:
        tbl = cat.load_table(ident)
        out["snapshots"] += len(tbl.metadata.snapshots)
        cur = tbl.current_snapshot()
        if cur is not None:
            op = cur.summary.operation.value if cur.summary else "?"
            out["last_operations"][op] = out["last_operations"].get(op, 0) + 1
        tasks = list(tbl.scan().plan_files())
        out["data_files"] += len(tasks)
        for t in tasks:
            sid = t.file.sort_order_id
            if sid not in out["sort_order_ids"]:
                out["sort_order_ids"].append(sid)
            if cols:
                out["order_breaks_max"] = max(out["order_breaks_max"], order_breaks(local_path(t.file.file_path), cols))
        if not args.no_rows:
            rdr = tbl.scan().to_arrow_batch_reader()
            n, h = con.execute("SELECT count(*), coalesce(sum(hash(r)), 0)::HUGEINT FROM rdr r").fetchone()
            out["rows"] += n
            out["fingerprint"] += int(h)
        loc = local_path(tbl.location())
        on_disk = set()
        for root, _, files in os.walk(loc):
            on_disk.update(os.path.join(root, f) for f in files)
        out["files_on_disk"] += len(on_disk)
        out["missing"] += len(reachable(tbl) - on_disk)
    out["fingerprint"] = str(out["fingerprint"])
    out["sort_order_ids"] = sorted(out["sort_order_ids"], key=lambda v: -1 if v is None else v)
    json.dump(out, sys.stdout, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
