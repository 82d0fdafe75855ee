# Three teams, three catalogs. The first level of every address is the
# catalog's label.

catalog "analytics" {
  type      = "sql"
  uri       = "postgres://iceberg:${env("ANALYTICS_PG_PASSWORD")}@pg.internal:5432/iceberg_catalog"
  warehouse = "s3://acme-analytics/warehouse"
  properties = {
    "s3.region" = "us-east-1"
  }
}

catalog "marketing" {
  type      = "rest"
  uri       = "https://polaris.internal.example.com/api/catalog"
  warehouse = "marketing"
  properties = {
    "credential" = env("MARKETING_REST_CREDENTIAL")
  }
}

catalog "finance" {
  type      = "glue"
  warehouse = "s3://acme-finance/warehouse"
  properties = {
    "glue.region" = "us-east-1"
  }
}
