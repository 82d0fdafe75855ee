icewright {
  required_version = ">= 0.1"
  parallelism      = 4
}

variable "retention" {
  type    = string
  default = "5d"
}

locals {
  big = "1GiB"
}

catalog "lake" {                 # the label is the catalog's name (a SQL catalog's catalog_name column)
  type      = "sql"               # sql | rest | glue | hive | hadoop
  uri       = "sqlite:lake/catalog.db"   # sqlite:PATH (embedded default) or postgres://user:pw@host:port/db
  warehouse = "lake/warehouse"           # a path, or a file:// s3:// gs:// abfs:// URI
  properties = {                         # passed to iceberg-go: s3.*, credential, token, ...
    "s3.endpoint" = env("S3_ENDPOINT", "")
  }
}

policy "base" {
  target_file_size = "512MiB"

  compaction {
    strategy              = "binpack"   # binpack | sort (sort uses sort_order)
    min_input_files       = 5
    min_file_size         = "384MiB"    # default 75% of target
    max_file_size         = "921MiB"    # default 180% of target
    delete_file_threshold = 5
  }

  snapshot_retention {
    max_age       = var.retention
    min_snapshots = 3
    max_ref_age   = "30d"               # optional; branches and tags other than main
  }

  orphan_files {
    older_than       = "3d"             # refused below 24h
    max_orphan_ratio = 0.25             # abort the deletion above this share of files
    exclude          = ["metadata/*flink*"]
  }

  manifests {
    max_count   = 100                   # rewrite when the current snapshot has more
    target_size = "8MiB"
  }

  properties = {
    "write.parquet.compression-codec" = "zstd"
  }
}

policy "events" {
  extends    = policy.base
  sort_order = ["event_ts desc nulls last", "bucket(16, user_id)"]
  compaction { strategy = "sort" }
}

tables "lake.analytics.*" {
  policy  = policy.events
  exclude = ["lake.analytics.tmp_*"]
}

table "lake.analytics.clicks" {
  policy = policy.events
  snapshot_retention { max_age = "2d" }   # overrides one attribute, keeps the rest
}
