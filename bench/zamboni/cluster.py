"""Clustering report (issue 33, item 4): what a reader can skip after a rewrite.

    python cluster.py DIR [--table bench.events] [--a x] [--b y] [--windows 10] [--width 0.05]

DIR holds catalog.db (SQL catalog "local") and the warehouse, as in check.py.
For range filters on column a alone, on b alone and on both (each window
`width` of the column's range, `windows` windows evenly spread over it), counts
the live data files a reader prunes from the manifest bounds (lower/upper
bounds of the column) and the row groups it prunes from the Parquet row-group
statistics (a row group of a pruned file counts as pruned). Prints one JSON
line: files, row_groups, and per filter the mean fraction of files and of row
groups skipped over the windows. Neither tool's code reads the tables.
"""

import argparse
import json
import struct

import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog


def local_path(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--table", default="bench.events")
    ap.add_argument("--catalog", default="local")
    ap.add_argument("--a", default="x")
    ap.add_argument("--b", default="y")
    ap.add_argument("--windows", type=int, default=10)
    ap.add_argument("--width", type=float, default=0.05)
    args = ap.parse_args()
    d = args.dir
    cat = SqlCatalog(args.catalog, uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}/warehouse")
    tbl = cat.load_table(args.table)
    schema = tbl.schema()
    cols = [args.a, args.b]
    ids = [schema.find_field(c).field_id for c in cols]
    files = []  # (bounds per column: (lo, hi) or None, [row group bounds per column])
    for task in tbl.scan().plan_files():
        df = task.file
        fb = []
        for fid in ids:
            lo, hi = df.lower_bounds.get(fid), df.upper_bounds.get(fid)
            fb.append(None if lo is None or hi is None else (struct.unpack("<i", lo)[0], struct.unpack("<i", hi)[0]))
        md = pq.ParquetFile(local_path(df.file_path)).metadata
        names = [md.schema.column(j).name for j in range(md.num_columns)]
        rgs = []
        for r in range(md.num_row_groups):
            rg = md.row_group(r)
            rb = []
            for c in cols:
                st = rg.column(names.index(c)).statistics
                rb.append((st.min, st.max) if st is not None and st.has_min_max else None)
            rgs.append(rb)
        files.append((fb, rgs))
    # Each column's range over the data, from the file bounds.
    rng = []
    for k in range(2):
        bs = [f[0][k] for f in files if f[0][k] is not None]
        rng.append((min(b[0] for b in bs), max(b[1] for b in bs)))

    def skips(bounds, q):
        # A unit is skipped when some filtered column's bounds miss the window.
        for k, w in enumerate(q):
            if w is None or bounds[k] is None:
                continue
            if bounds[k][1] < w[0] or bounds[k][0] > w[1]:
                return True
        return False

    total_rg = sum(len(f[1]) for f in files)
    out = {"files": len(files), "row_groups": total_rg, "a": args.a, "b": args.b,
           "windows": args.windows, "width": args.width}
    for name, use in (("a", (True, False)), ("b", (False, True)), ("both", (True, True))):
        fsk = rsk = 0.0
        for i in range(args.windows):
            pos = (i + 0.5) / args.windows
            q = []
            for k in range(2):
                if not use[k]:
                    q.append(None)
                    continue
                lo, hi = rng[k]
                span = hi - lo
                c = lo + pos * span
                q.append((c - args.width * span / 2, c + args.width * span / 2))
            fs = rs = 0
            for fb, rgs in files:
                if skips(fb, q):
                    fs += 1
                    rs += len(rgs)
                    continue
                rs += sum(1 for rb in rgs if skips(rb, q))
            fsk += fs / len(files)
            rsk += rs / total_rg
        out[f"files_skipped_{name}"] = round(fsk / args.windows, 3)
        out[f"row_groups_skipped_{name}"] = round(rsk / args.windows, 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
