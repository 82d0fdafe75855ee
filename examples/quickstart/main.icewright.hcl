# Quickstart: one local lakehouse, one policy for every table.
#
# The catalog is a SQLite file and the warehouse a directory, both under
# demo/ next to this file; `icewright demo examples/quickstart/demo` builds
# them with tables that need maintenance.

icewright {
  required_version = ">= 0.1"
}

# A SQL catalog's label is the catalog_name of its rows in the database:
# the demo's tables are under "demo".
catalog "demo" {
  type      = "sql"
  uri       = "sqlite:demo/lakehouse/catalog.db" # relative to this directory
  warehouse = "demo/lakehouse/warehouse"
}

policy "default" {
  # Small files for a laptop; production tables usually keep the 512MiB default.
  target_file_size = "128MiB"

  compaction {
    strategy        = "binpack"
    min_input_files = 5
  }

  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 3
  }

  orphan_files {
    older_than = "3d"
  }

  manifests {
    max_count = 100
  }

  properties = {
    "write.parquet.compression-codec" = "zstd"
  }
}

# Every table of every namespace in the catalog.
tables "demo.**" {
  policy = policy.default
}
