package catalogs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"

	"github.com/icewright/icewright/providers/internal/bound"
)

// openREST opens a REST catalog as iceberg-go's registry would from the
// same properties, but with icewright's transport (bound.Transport), so
// that a failed call names its method, URL, status and the server's
// message. The registry cannot pass a transport; rest.NewCatalog can, and
// takes the properties the registry reads before the first call (the
// credential and its token endpoint, the warehouse, TLS, SigV4) as
// options. Every property also goes in as is (WithAdditionalProps): after
// the config call iceberg-go reads the merged properties again, as the
// registry's path does.
func openREST(ctx context.Context, name, uri string, props iceberg.Properties) (catalog.Catalog, error) {
	opts, err := restOptions(props)
	if err != nil {
		return nil, err
	}
	return rest.NewCatalog(ctx, name, uri, opts...)
}

func restOptions(props iceberg.Properties) ([]rest.Option, error) {
	extra := iceberg.Properties{}
	var opts []rest.Option
	var tlsConfig *tls.Config
	var authURI, oauthServerURI *url.URL
	for k, v := range props {
		switch k {
		case "uri", "type":
			continue
		case "token":
			opts = append(opts, rest.WithOAuthToken(v))
		case "credential":
			opts = append(opts, rest.WithCredential(v))
		case "warehouse":
			opts = append(opts, rest.WithWarehouseLocation(v))
		case "metadata_location":
			opts = append(opts, rest.WithMetadataLocation(v))
		case "scope":
			opts = append(opts, rest.WithScope(v))
		case "audience":
			opts = append(opts, rest.WithAudience(v))
		case "resource":
			opts = append(opts, rest.WithResource(v))
		case "prefix":
			opts = append(opts, rest.WithPrefix(v))
		case "rest.tls.skip-verify":
			tlsConfig = &tls.Config{InsecureSkipVerify: strings.EqualFold(v, "true")}
		case "rest.authorization-url", "oauth2-server-uri":
			u, err := url.Parse(v)
			if err != nil || u.Scheme == "" || u.Host == "" {
				return nil, fmt.Errorf("invalid %s %q: want an absolute URL", k, v)
			}
			if k == "oauth2-server-uri" {
				oauthServerURI = u
			} else {
				authURI = u
			}
		}
		if v != "" {
			extra[k] = v
		}
	}
	if strings.EqualFold(props["rest.sigv4-enabled"], "true") {
		opts = append(opts, rest.WithSigV4RegionSvc(props["rest.signing-region"], props["rest.signing-name"]))
	}
	// oauth2-server-uri wins over its alias, as in iceberg-go.
	if oauthServerURI != nil {
		authURI = oauthServerURI
	}
	if authURI != nil {
		opts = append(opts, rest.WithAuthURI(authURI))
	}
	if tlsConfig != nil {
		opts = append(opts, rest.WithTLSConfig(tlsConfig))
	}
	opts = append(opts, rest.WithAdditionalProps(extra), rest.WithTransportFactory(restTransport))
	return opts, nil
}

// restTransport is iceberg-go's own default transport (proxy from the
// environment, the catalog's TLS settings) behind bound.Transport, and
// behind locationTransport, which answers MetadataLocation.
func restTransport(tlsConfig *tls.Config) (http.RoundTripper, func()) {
	t := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConfig}
	return locationTransport{inner: bound.Transport(t)}, t.CloseIdleConnections
}
