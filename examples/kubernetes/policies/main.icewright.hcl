# The policies the reconciler keeps, from git: the chart puts this file in a
# ConfigMap (helm --set-file, values.yaml), mounted at /etc/icewright. Secrets
# come from the environment (the Secret icewright-catalog) and are never printed.

icewright {
  required_version = ">= 0.1"
  parallelism      = 4
}

catalog "prod" {
  type      = "rest"
  uri       = env("ICEBERG_REST_URI")
  warehouse = env("ICEBERG_WAREHOUSE")

  properties = {
    # OAuth client credentials "id:secret" for the REST catalog.
    "credential" = env("ICEBERG_REST_CREDENTIAL")
    "s3.region"  = env("AWS_REGION", "us-east-1")
    # Unset, the AWS SDK's own chain finds the credentials (IRSA, an
    # instance profile).
    "s3.access-key-id"     = env("AWS_ACCESS_KEY_ID", "")
    "s3.secret-access-key" = env("AWS_SECRET_ACCESS_KEY", "")
  }
}

policy "base" {
  target_file_size = "512MiB"

  compaction {
    strategy          = "binpack"
    min_input_files   = 5
    max_bytes_per_run = "64GiB"
  }

  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 5
  }

  orphan_files {
    older_than = "3d"
    quarantine = "7d"
  }

  manifests {
    max_count = 100
  }
}

tables "prod.*.*" {
  policy = policy.base
}
