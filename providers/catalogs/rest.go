package catalogs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

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
	opts, err := restOptions(uri, props)
	if err != nil {
		return nil, err
	}
	return rest.NewCatalog(ctx, name, uri, opts...)
}

func restOptions(uri string, props iceberg.Properties) ([]rest.Option, error) {
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
	if cred := props["credential"]; cred != "" && props["token"] == "" {
		am, err := newTokenManager(uri, authURI, cred, props, tlsConfig)
		if err != nil {
			return nil, err
		}
		opts = append(opts, rest.WithAuthManager(am))
	}
	if tlsConfig != nil {
		opts = append(opts, rest.WithTLSConfig(tlsConfig))
	}
	opts = append(opts, rest.WithAdditionalProps(extra), rest.WithTransportFactory(restTransport))
	return opts, nil
}

// restTransport is iceberg-go's own default transport (proxy from the
// environment, the catalog's TLS settings) behind bound.Transport.
func restTransport(tlsConfig *tls.Config) (http.RoundTripper, func()) {
	t := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConfig}
	return bound.Transport(t), t.CloseIdleConnections
}

// tokenManager is the OAuth2 client-credentials exchange iceberg-go does
// for a credential, done with the call's context: the token request is
// bounded by the call's deadline (iceberg-go's waits up to 60 s whatever
// the call's bound) and goes through bound.Transport, and a refusal keeps
// its status, URL and the server's message (iceberg-go's drops them when
// the body is not an OAuth error). Tokens are cached until they expire.
type tokenManager struct {
	cfg    clientcredentials.Config
	client *http.Client

	mu  sync.Mutex
	tok *oauth2.Token
}

var _ rest.ContextAuthManager = (*tokenManager)(nil)

func newTokenManager(uri string, authURI *url.URL, cred string, props iceberg.Properties, tlsConfig *tls.Config) (*tokenManager, error) {
	tokenURL := ""
	if authURI != nil {
		tokenURL = authURI.String()
	} else {
		base, err := url.Parse(uri)
		if err != nil {
			return nil, err
		}
		tokenURL = base.JoinPath("v1", "oauth", "tokens").String()
	}
	id, secret, found := strings.Cut(cred, ":")
	if !found {
		id, secret = "", cred
	}
	scope := props["scope"]
	if scope == "" {
		scope = "catalog"
	}
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: tokenURL,
		Scopes: []string{scope}, AuthStyle: oauth2.AuthStyleInParams}
	for _, k := range []string{"audience", "resource"} {
		if v := props[k]; v != "" {
			if cfg.EndpointParams == nil {
				cfg.EndpointParams = url.Values{}
			}
			cfg.EndpointParams.Set(k, v)
		}
	}
	t, _ := restTransport(tlsConfig)
	return &tokenManager{cfg: cfg, client: &http.Client{Transport: t}}, nil
}

func (m *tokenManager) AuthHeader() (string, string, error) {
	return m.AuthHeaderWithContext(context.Background())
}

func (m *tokenManager) AuthHeaderWithContext(ctx context.Context) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.tok.Valid() {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, bound.Of(ctx))
			defer cancel()
		}
		tok, err := m.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, m.client))
		if err != nil {
			return "", "", fmt.Errorf("%w: %w", rest.ErrOAuthError, err)
		}
		m.tok = tok
	}
	return "Authorization", m.tok.Type() + " " + m.tok.AccessToken, nil
}
