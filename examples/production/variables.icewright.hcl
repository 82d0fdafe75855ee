variable "catalog_uri" {
  type        = string
  description = "The REST catalog endpoint."
  default     = "https://iceberg-rest.internal.example.com/api/catalog"
}

variable "warehouse" {
  type        = string
  description = "The warehouse the REST catalog serves."
  default     = "s3://acme-lakehouse/warehouse"
}

variable "region" {
  type    = string
  default = "eu-west-1"
}

# Overridden per environment: ICEWRIGHT_VAR_snapshot_retention=14d, or -var.
variable "snapshot_retention" {
  type        = string
  description = "How long snapshots stay queryable (time travel, incremental readers)."
  default     = "7d"
}

variable "orphan_ratio" {
  type        = number
  description = "Abort orphan removal when more than this share of the files looks unreferenced."
  default     = 0.1
}
