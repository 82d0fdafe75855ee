# Production: a REST catalog on S3. Credentials come from the environment
# (env()) and are never printed; policies inherit from one base policy.

icewright {
  required_version = ">= 0.1"
  parallelism      = 8
}

locals {
  # Properties every engine that writes these tables should agree on.
  common_properties = {
    "write.parquet.compression-codec"            = "zstd"
    "write.metadata.delete-after-commit.enabled" = "true"
    "write.metadata.previous-versions-max"       = "50"
  }
}

catalog "prod" {
  type      = "rest"
  uri       = var.catalog_uri
  warehouse = var.warehouse

  properties = {
    # OAuth client credentials "id:secret" for the REST catalog.
    "credential" = env("ICEBERG_REST_CREDENTIAL")
    "scope"      = "PRINCIPAL_ROLE:maintenance"
    "s3.region"  = var.region
    # Static keys when set; unset (""), the AWS SDK's own chain finds the
    # credentials: the OIDC role of examples/ci, an instance profile.
    "s3.access-key-id"     = env("AWS_ACCESS_KEY_ID", "")
    "s3.secret-access-key" = env("AWS_SECRET_ACCESS_KEY", "")
    "s3.session-token"     = env("AWS_SESSION_TOKEN", "")
  }
}
