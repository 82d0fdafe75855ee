# Quickstart: one local lakehouse, one policy for every table.
#
# The catalog is a SQLite file and the warehouse a directory, both next to
# this file; `iceops demo` builds them with tables that need maintenance.

iceops {
  required_version = ">= 0.1"
}

catalog "lake" {
  type      = "sql"
  uri       = "sqlite:lakehouse/catalog.db" # relative to this directory
  warehouse = "lakehouse/warehouse"
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
tables "lake.**" {
  policy = policy.default
}
