# What every production table gets.
policy "base" {
  target_file_size = "512MiB"

  compaction {
    strategy              = "binpack"
    min_input_files       = 5
    delete_file_threshold = 5
    partial_progress      = true
    max_bytes_per_run     = "200GiB" # a budget for the nightly window
  }

  snapshot_retention {
    max_age       = var.snapshot_retention
    min_snapshots = 5
    max_ref_age   = "90d"
  }

  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = var.orphan_ratio
    exclude          = ["metadata/*flink*"]
  }

  manifests {
    max_count   = 200
    target_size = "8MiB"
  }

  properties = local.common_properties
}

# Streaming tables: many small commits, so compact sooner and sort by time.
policy "streaming" {
  extends    = policy.base
  sort_order = ["event_ts desc nulls last", "bucket(32, user_id)"]

  compaction {
    strategy        = "sort"
    min_input_files = 20
    where           = "event_ts >= current_date - interval '7' day"
  }

  manifests {
    max_count = 100
  }
}

# Finance keeps its history longer for audits.
policy "audited" {
  extends = policy.base

  snapshot_retention {
    max_age       = "90d"
    min_snapshots = 30
  }

  orphan_files {
    older_than = "7d"
    quarantine = "14d" # move orphans aside instead of deleting them
  }
}

tables "prod.events.*" {
  policy  = policy.streaming
  exclude = ["prod.events.staging_*"]
}

tables "prod.finance.**" {
  policy = policy.audited
}

# The click stream is the hottest table: bigger files, shorter retention.
table "prod.events.clickstream" {
  policy           = policy.streaming
  target_file_size = "1GiB"

  snapshot_retention {
    max_age = "7d"
  }

  properties = {
    "write.distribution-mode" = "hash"
  }
}
