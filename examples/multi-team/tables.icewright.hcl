# Analytics: everything, except the scratch namespace, which gets its own
# selector. Without the exclude the two selectors would overlap and icewright
# would refuse the configuration.
tables "analytics.**" {
  policy  = policy.standard
  exclude = ["analytics.scratch.*", "analytics.*.events_*"]
}

tables "analytics.scratch.*" {
  policy = policy.scratch
}

tables "analytics.*.events_*" {
  policy  = policy.events
  exclude = ["analytics.scratch.*"] # scratch events_ tables stay scratch
}

# Marketing manages its campaigns; raw imports are left alone.
tables "marketing.campaigns.*" {
  policy = policy.events
}

tables "finance.**" {
  policy = policy.regulated
}

# Per-table overrides: keep one attribute different, inherit the rest.
table "analytics.web.events_pageviews" {
  policy           = policy.events
  target_file_size = "1GiB"
  compaction {
    min_input_files = 20
  }
}

table "finance.ledger.entries" {
  policy = policy.regulated
  snapshot_retention {
    max_age = "2555d" # seven years
  }
  properties = {
    "write.delete.mode" = "copy-on-write"
  }
}
