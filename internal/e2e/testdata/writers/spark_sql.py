"""Runs Spark SQL through a Spark Connect server for internal/e2e's
foreign-writer tests and prints what it read as one JSON document.

Input (stdin, JSON):
  {"remote": "sc://127.0.0.1:15002",
   "conf": {"spark.sql.catalog.x": "..."},       (session settings, optional)
   "ops": [{"sql": "INSERT ..."},                 (rows returned as lists of strings)
           {"fingerprint": "local.ns.t", "columns": ["_row_id"]}]}
Output (stdout, JSON): one result per op, in order:
  {"rows": [["1", "a"], ...]} or {"rows": N, "columns": {"id": "<sum>", ...}}

A fingerprint is order-independent: the live row count and, per column, the
sum of a 64-bit hash of each value (as a decimal, which cannot overflow).
"columns" adds metadata columns (v3 row lineage) to the table's own.
Every statement runs in one session, in order, so a test's writer is the
list of statements it sends; the data comes from range(), so it is the same
on every run.
"""
import json
import sys
import time

from pyspark.sql import SparkSession


def main():
    job = json.load(sys.stdin)
    spark = SparkSession.builder.remote(job["remote"]).getOrCreate()
    for k, v in (job.get("conf") or {}).items():
        spark.conf.set(k, v)
    out = []
    for op in job["ops"]:
        t0 = time.time()
        if "sql" in op:
            rows = spark.sql(op["sql"]).collect()
            res = {"rows": [[None if v is None else str(v) for v in r] for r in rows]}
        else:
            name = op["fingerprint"]
            cols = spark.table(name).columns + op.get("columns", [])
            sums = ", ".join(
                f"CAST(coalesce(sum(CAST(xxhash64(`{c}`) AS DECIMAL(38,0))), 0) AS STRING)" for c in cols
            )
            row = spark.sql(f"SELECT CAST(count(*) AS STRING), {sums} FROM {name}").collect()[0]
            res = {"rows": int(row[0]), "columns": {c: row[i + 1] for i, c in enumerate(cols)}}
        res["seconds"] = round(time.time() - t0, 3)
        out.append(res)
        # A test that runs this beside something else reads progress as it goes.
        print(json.dumps(res), file=sys.stderr, flush=True)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
