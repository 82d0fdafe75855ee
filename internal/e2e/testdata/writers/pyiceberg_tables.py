"""Writes tables with PyIceberg into a SQL catalog for internal/e2e's
foreign-writer tests (the catalog Spark's `local` reads too).

Input (stdin, JSON): {"uri": "sqlite:////abs/catalog.db", "warehouse": "file:///abs/wh",
                      "catalog": "local", "namespace": "ns"}
Output (stdout, JSON): {"tables": {"<name>": <live rows>, ...}}

The data is computed from row numbers only, so it is the same on every run.
PyIceberg 0.12 deletes by rewriting files (copy-on-write; it writes no
position or equality delete file), so these tables carry no delete files.
"""
import json
import sys
from datetime import datetime, timedelta

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, HourTransform, MonthTransform, TruncateTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "s", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "amount", DoubleType(), required=False),
)
ARROW = pa.schema([("id", pa.int64()), ("s", pa.string()), ("ts", pa.timestamp("us")), ("amount", pa.float64())])
BASE = datetime(2024, 1, 30, 22, 0, 0)


def rows(start, n, period=None):
    """Rows start..start+n; with a period, timestamps repeat every period
    rows, so that later appends land in the hours of earlier ones."""
    ids = list(range(start, start + n))
    return pa.Table.from_pydict(
        {
            "id": ids,
            "s": [None if i % 17 == 0 else f"k{i % 29:02d}-{i}" for i in ids],
            "ts": [BASE + timedelta(minutes=37 * (i % period if period else i)) for i in ids],
            "amount": [None if i % 13 == 0 else i * 1.25 for i in ids],
        },
        schema=ARROW,
    )


def main():
    job = json.load(sys.stdin)
    cat = SqlCatalog(job["catalog"], uri=job["uri"], warehouse=job["warehouse"])
    ns = job["namespace"]
    cat.create_namespace_if_not_exists(ns)
    out = {}

    # truncate and month partitions, small appends, a copy-on-write delete.
    name = "py_truncate_month"
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=TruncateTransform(3), name="s_trunc"),
        PartitionField(source_id=3, field_id=1001, transform=MonthTransform(), name="ts_month"),
    )
    t = cat.create_table(f"{ns}.{name}", SCHEMA, partition_spec=spec, properties={"format-version": "2"})
    for k in range(4):
        t.append(rows(k * 60, 60))
    t.delete("id >= 100 and id < 110")
    out[name] = 230

    # bucket and hour partitions on format v1, evolved: the bucket field is
    # dropped (a v1 spec keeps it as a void transform) and truncate added.
    name = "py_bucket_hour_evolved"
    spec = PartitionSpec(
        PartitionField(source_id=1, field_id=1000, transform=BucketTransform(4), name="id_bucket"),
        PartitionField(source_id=3, field_id=1001, transform=HourTransform(), name="ts_hour"),
    )
    t = cat.create_table(f"{ns}.{name}", SCHEMA, partition_spec=spec, properties={"format-version": "1"})
    for k in range(2):
        t.append(rows(k * 40, 40, period=40))
    with t.update_spec() as u:
        u.remove_field("id_bucket")
        u.add_field("s", TruncateTransform(2), "s_trunc")
    t = cat.load_table(f"{ns}.{name}")
    for k in range(2, 4):
        t.append(rows(k * 40, 40, period=40))
    out[name] = 160
    json.dump({"tables": out}, sys.stdout)


if __name__ == "__main__":
    main()
