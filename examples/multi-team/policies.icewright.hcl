policy "standard" {
  compaction {
    strategy = "binpack"
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
}

policy "events" {
  extends    = policy.standard
  sort_order = ["event_time desc", "bucket(16, account_id)"]
  compaction {
    strategy = "sort"
  }
}

policy "scratch" {
  # Scratch tables keep little history (7d is Trino's floor) and no old
  # snapshots beyond the current one.
  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 1
  }
  orphan_files {
    older_than = "1d"
  }
}

policy "regulated" {
  extends = policy.standard
  snapshot_retention {
    max_age       = "400d" # a year of audit history, plus slack
    min_snapshots = 10
  }
  orphan_files {
    older_than = "7d"
    quarantine = "30d"
  }
}
