package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// GCSEnv is a GCS JSON API endpoint (fake-gcs-server in CI) with a bucket
// the tests may write to.
type GCSEnv struct {
	Endpoint string // http://127.0.0.1:4443/storage/v1/
	Bucket   string
	// Prefix is unique to the test that asked.
	Prefix string
}

// Properties are the iceberg-go IO properties for this endpoint: the
// endpoint override and anonymous access (the emulator checks no
// credentials).
func (e GCSEnv) Properties() map[string]string {
	return map[string]string{
		"gcs.service.host": e.Endpoint,
		"gcs.no-auth":      "true",
	}
}

// URL returns gs://bucket/prefix/elem..., the test's own part of the bucket.
func (e GCSEnv) URL(elem ...string) string {
	return "gs://" + strings.Join(nonEmpty(append([]string{e.Bucket, e.Prefix}, elem...)), "/")
}

// Server is the endpoint's scheme://host:port, for a FaultProxy's upstream.
func (e GCSEnv) Server() string {
	u, err := url.Parse(e.Endpoint)
	if err != nil {
		return e.Endpoint
	}
	return u.Scheme + "://" + u.Host
}

// Through returns e with its endpoint on the proxy (same API path).
func (e GCSEnv) Through(p *FaultProxy) GCSEnv {
	u, err := url.Parse(e.Endpoint)
	if err != nil {
		return e
	}
	e.Endpoint = p.URL + u.Path
	return e
}

// GCS returns the GCS server for warehouses, with its bucket created and a
// prefix unique to t.
func GCS(t testing.TB) GCSEnv {
	t.Helper()
	v := lookup(t, "a GCS server", "ICEWRIGHT_TEST_GCS_ENDPOINT", "ICEWRIGHT_TEST_GCS_BUCKET")
	e := GCSEnv{Endpoint: v[0], Bucket: v[1], Prefix: UniqueName(t, "")}
	if err := createGCSBucket(e.Endpoint, e.Bucket); err != nil {
		t.Fatalf("gcs bucket %s: %v", e.Bucket, err)
	}
	return e
}

// createGCSBucket creates bucket through the JSON API; one that exists
// (409) is fine, since tests share it.
func createGCSBucket(endpoint, bucket string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := json.Marshal(map[string]string{"name": bucket})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/b?project=icewright", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusConflict {
		return nil
	}
	b, _ := io.ReadAll(resp.Body)
	return fmt.Errorf("create: %s: %s", resp.Status, b)
}

// AzureEnv is an Azure Blob endpoint (Azurite in CI) with a container the
// tests may write to, reached with a shared key.
type AzureEnv struct {
	Endpoint  string // 127.0.0.1:10000 (adls.endpoint; the account is a path segment on 127.0.0.1)
	Account   string
	Key       string
	Container string
	// Prefix is unique to the test that asked.
	Prefix string
}

// Properties are the iceberg-go IO properties for this endpoint.
func (e AzureEnv) Properties() map[string]string {
	return map[string]string{
		"adls.endpoint":                     e.Endpoint,
		"adls.protocol":                     "http",
		"adls.auth.shared-key.account.name": e.Account,
		"adls.auth.shared-key.account.key":  e.Key,
	}
}

// URL returns abfs://container@account.dfs.core.windows.net/prefix/elem...;
// iceberg-go takes the account from the host's first label and reaches it
// at the adls.endpoint.
func (e AzureEnv) URL(elem ...string) string {
	return "abfs://" + e.Container + "@" + e.Account + ".dfs.core.windows.net/" +
		strings.Join(nonEmpty(append([]string{e.Prefix}, elem...)), "/")
}

// Server is the endpoint as a URL, for a FaultProxy's upstream.
func (e AzureEnv) Server() string { return "http://" + e.Endpoint }

// Through returns e with its endpoint on the proxy.
func (e AzureEnv) Through(p *FaultProxy) AzureEnv {
	e.Endpoint = strings.TrimPrefix(p.URL, "http://")
	return e
}

// ContainerClient returns a client of the test container, to look at blobs
// behind iceberg-go's back.
func (e AzureEnv) ContainerClient(t testing.TB) *container.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(e.Account, e.Key)
	if err != nil {
		t.Fatalf("azure key: %v", err)
	}
	c, err := container.NewClientWithSharedKeyCredential(fmt.Sprintf("http://%s/%s/%s", e.Endpoint, e.Account, e.Container), cred, nil)
	if err != nil {
		t.Fatalf("azure container client: %v", err)
	}
	return c
}

// Azure returns the Azure Blob server for warehouses, with its container
// created and a prefix unique to t.
func Azure(t testing.TB) AzureEnv {
	t.Helper()
	v := lookup(t, "an Azure Blob server", "ICEWRIGHT_TEST_AZURE_ENDPOINT", "ICEWRIGHT_TEST_AZURE_ACCOUNT",
		"ICEWRIGHT_TEST_AZURE_KEY", "ICEWRIGHT_TEST_AZURE_CONTAINER")
	e := AzureEnv{Endpoint: v[0], Account: v[1], Key: v[2], Container: v[3], Prefix: UniqueName(t, "")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.ContainerClient(t).Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		t.Fatalf("azure container %s: %v", e.Container, err)
	}
	return e
}
