package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/catalogs"
)

// credentialTimeout bounds the default chain's look-up: on a machine that
// is not a cloud instance the instance-metadata endpoint never answers.
const credentialTimeout = 5 * time.Second

// credentialSource says where the storage credentials of catalog cc's
// warehouse (base, resolved) come from, by the name of the source only:
// static keys in the catalog's properties, the environment, the cloud's
// default chain, or none. It never returns a value: a property or variable
// is named, never read out.
func credentialSource(ctx context.Context, s *checker, cc *config.Catalog, base string) diff.DoctorFinding {
	f := diff.DoctorFinding{Check: "credentials", Status: diff.DoctorOK}
	scheme, _, _ := strings.Cut(base, "://")
	if !isLocation(base) && hasPrefixKey(cc.Properties, "s3.") {
		scheme = "s3"
	}
	has := func(keys ...string) []string {
		var set []string
		for _, k := range keys {
			if cc.Properties[k] != "" {
				set = append(set, k)
			}
		}
		return set
	}
	env := func(keys ...string) []string {
		var set []string
		for _, k := range keys {
			if s.Getenv(k) != "" {
				set = append(set, k)
			}
		}
		return set
	}
	switch scheme {
	case "file":
		f.Message = "local files: no credentials needed"
	case "s3", "s3a", "s3n":
		if k := has("s3.access-key-id", "s3.secret-access-key"); len(k) == 2 {
			f.Message = "S3: static keys in the catalog's properties (" + strings.Join(k, ", ") + ")"
			return f
		}
		cfg, err := s.AWSConfig(ctx)
		if err == nil && cfg.Credentials != nil {
			cctx, cancel := context.WithTimeout(ctx, credentialTimeout)
			creds, rerr := cfg.Credentials.Retrieve(cctx)
			cancel()
			if rerr == nil {
				f.Message = "S3: the AWS default credential chain found " + awsSourceName(creds.Source)
				return f
			}
			err = rerr
		} else if err == nil {
			err = fmt.Errorf("no credentials provider")
		}
		f.Status = diff.DoctorFail
		f.Message = fmt.Sprintf("S3: no credentials: none in the catalog's properties, and the AWS default chain (environment, shared config, web identity, container or instance role) found none: %v", err)
		f.Fix = "set s3.access-key-id and s3.secret-access-key (from env()), AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with an IRSA or instance role"
		if catalogs.Lookup(cc.Type).VendsCredentials {
			// A REST catalog may vend credentials with each table.
			f.Status = diff.DoctorWarn
			f.Fix = "fine if the REST catalog vends credentials with each table; " + f.Fix
		}
	case "gs":
		switch {
		case len(has("gcs.keypath", "gcs.jsonkey", "gcs.oauth2.token", "gcs.no-auth")) > 0:
			f.Message = "GCS: credentials in the catalog's properties (" + strings.Join(has("gcs.keypath", "gcs.jsonkey", "gcs.oauth2.token", "gcs.no-auth"), ", ") + ")"
		case len(env("GOOGLE_APPLICATION_CREDENTIALS")) > 0:
			f.Message = "GCS: Application Default Credentials from GOOGLE_APPLICATION_CREDENTIALS"
		default:
			f.Status = diff.DoctorWarn
			f.Message = "GCS: nothing in the properties or GOOGLE_APPLICATION_CREDENTIALS; Application Default Credentials may still come from gcloud's user login or the metadata server (Workload Identity), which doctor does not query"
			f.Fix = "the storage probe below tells whether they work"
		}
	case "abfs", "abfss", "wasb", "wasbs":
		var props []string
		for k, v := range cc.Properties {
			if v != "" && (strings.HasPrefix(k, "adls.sas-token.") || strings.HasPrefix(k, "adls.connection-string.") ||
				k == "adls.auth.shared-key.account.key" || k == "adls.client-id" || k == "adls.auth.managed-identity.enabled") {
				props = append(props, k)
			}
		}
		slices.Sort(props)
		switch {
		case len(props) > 0:
			f.Message = "Azure: credentials in the catalog's properties (" + strings.Join(props, ", ") + ")"
		case len(env("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_SECRET")) > 0:
			f.Message = "Azure: the default credential chain from the environment (" + strings.Join(env("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_SECRET"), ", ") + ")"
		default:
			f.Status = diff.DoctorWarn
			f.Message = "Azure: nothing in the properties or AZURE_* variables; the default chain may still use a managed identity or the Azure CLI login, which doctor does not query"
			f.Fix = "the storage probe below tells whether they work"
		}
	default:
		f.Message = "not checked: the catalog block names no storage location (warehouse), so the store is known only from a table"
		if catalogs.Lookup(cc.Type).VendsCredentials {
			f.Message += "; a REST catalog may vend credentials with each table"
		}
	}
	return f
}

// awsSourceName names an aws.Credentials.Source for people.
func awsSourceName(src string) string {
	for _, n := range []struct{ prefix, name string }{
		{"EnvConfigCredentials", "keys in the environment (AWS_ACCESS_KEY_ID)"},
		{"SharedConfigCredentials", "the shared config or credentials file (AWS_PROFILE)"},
		{"WebIdentityCredentials", "a web identity (IRSA: AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)"},
		{"AssumeRoleProvider", "an assumed role"},
		{"EC2RoleProvider", "the instance profile (EC2 instance metadata)"},
		{"CredentialsEndpointProvider", "the container credentials endpoint (ECS task role or EKS Pod Identity)"},
		{"SSOProvider", "an SSO session"},
		{"ProcessProvider", "a credential_process"},
	} {
		if strings.HasPrefix(src, n.prefix) {
			return n.name
		}
	}
	if src == "" {
		return "credentials"
	}
	return "credentials (" + src + ")"
}

func hasPrefixKey(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// catalogAuth says how icewright authenticates to catalog cc itself, by the
// name of the setting only (its type's descriptor, catalogs.Type.Auth).
func catalogAuth(s *checker, cc *config.Catalog) diff.DoctorFinding {
	f := diff.DoctorFinding{Check: "catalog-auth", Status: diff.DoctorOK}
	if auth := catalogs.Lookup(cc.Type).Auth; auth != nil {
		f.Message = auth(cc, s.Getenv)
	} else {
		f.Message = cc.Type + ": no credentials of its own"
	}
	return f
}
