package objdel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	iceio "github.com/apache/iceberg-go/io"
	"gocloud.dev/blob/azureblob"

	"github.com/icewright/icewright/diff"
)

// azureBatch is the most sub-requests one Azure blob batch request takes
// (diff's, whose estimates count the batches).
const azureBatch = diff.AzureDeleteBatch

// azureStore deletes blobs of one Azure container with the Blob Batch API:
// one request per Delete call, one outcome per blob.
type azureStore struct {
	authority string // container@host, as locations name it
	c         *container.Client
	io        *viaIO // for keys gocloud escapes, and when batches are refused
	// refused is set once the account refused a batch request as such (a
	// 4xx other than throttling: an account or emulator without Blob
	// Batch); from then on every location goes through the table's IO.
	refused atomic.Bool
}

// openAzure opens the batched deleter of loc's container with a client
// built as iceberg-go v0.7.0's Azure IO builds its own (its builder is
// unexported): the same location parsing (abfs[s]/wasb[s]://container@
// account.host/key), endpoint and protocol overrides (adls.endpoint,
// adls.protocol) and the same order of credentials (shared key, a SAS token
// for the host, a connection string for the account, managed identity, the
// default Azure credential), so it reaches the container the table's IO
// reaches.
func openAzure(ctx context.Context, props map[string]string, loc string) (Store, error) {
	if !anyProperty(props, "adls.") {
		return nil, fmt.Errorf("%w: no adls.* properties to open the container with", ErrNoBatchAPI)
	}
	auth := authority(loc)
	ctr, host, ok := strings.Cut(auth, "@")
	if !ok || ctr == "" || host == "" {
		return nil, fmt.Errorf("azure location %q: want container@account.host", loc)
	}
	account, _, _ := strings.Cut(host, ".")
	containerURL := func(sas string) (string, error) {
		svc, err := azureblob.NewServiceURL(&azureblob.ServiceURLOptions{
			AccountName: account, SASToken: sas,
			Protocol: props[iceio.ADLSProtocol], StorageDomain: props[iceio.ADLSEndpoint],
		})
		if err != nil {
			return "", fmt.Errorf("azure service url: %w", err)
		}
		// The SAS query, when there is one, stays after the container.
		su, err := url.Parse(string(svc))
		if err != nil {
			return "", fmt.Errorf("azure service url: %w", err)
		}
		return su.JoinPath(ctr).String(), nil
	}
	c, err := azureContainer(props, host, account, containerURL, ctr)
	if err != nil {
		return nil, err
	}
	return &azureStore{authority: auth, c: c, io: &viaIO{props: props, root: loc}}, nil
}

func azureContainer(props map[string]string, host, account string, containerURL func(sas string) (string, error), ctr string) (*container.Client, error) {
	if name := props[iceio.ADLSSharedKeyAccountName]; name != "" {
		key := props[iceio.ADLSSharedKeyAccountKey]
		if key == "" {
			return nil, fmt.Errorf("azure: shared-key requires both %s and %s", iceio.ADLSSharedKeyAccountName, iceio.ADLSSharedKeyAccountKey)
		}
		cu, err := containerURL("")
		if err != nil {
			return nil, err
		}
		cred, err := azblob.NewSharedKeyCredential(name, key)
		if err != nil {
			return nil, fmt.Errorf("azure shared key: %w", err)
		}
		return wrapAzure(container.NewClientWithSharedKeyCredential(cu, cred, nil))
	}
	if sas, ok := props[iceio.ADLSSasTokenPrefix+host]; ok {
		cu, err := containerURL(sas)
		if err != nil {
			return nil, err
		}
		return wrapAzure(container.NewClientWithNoCredential(cu, nil))
	}
	if cs, ok := props[iceio.ADLSConnectionStringPrefix+account]; ok {
		return wrapAzure(container.NewClientFromConnectionString(cs, ctr, nil))
	}
	cu, err := containerURL("")
	if err != nil {
		return nil, err
	}
	var cred azcore.TokenCredential
	if props[iceio.ADLSManagedIdentityEnabled] == "true" {
		var o *azidentity.ManagedIdentityCredentialOptions
		if id := props[iceio.ADLSClientID]; id != "" {
			o = &azidentity.ManagedIdentityCredentialOptions{ID: azidentity.ClientID(id)}
		}
		cred, err = azidentity.NewManagedIdentityCredential(o)
	} else {
		cred, err = azidentity.NewDefaultAzureCredential(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("azure credential: %w", err)
	}
	return wrapAzure(container.NewClient(cu, cred, nil))
}

func wrapAzure(c *container.Client, err error) (*container.Client, error) {
	if err != nil {
		return nil, fmt.Errorf("azure container client: %w", err)
	}
	return c, nil
}

func (s *azureStore) MaxBatch() int { return azureBatch }

// Delete sends one batch request. A blob already absent (BlobNotFound) is
// gone; a request that fails as a whole fails every location in it.
func (s *azureStore) Delete(ctx context.Context, locs []string) []error {
	errs := make([]error, len(locs))
	if len(locs) > azureBatch {
		return fill(errs, fmt.Errorf("azure batch of %d locations, more than %d", len(locs), azureBatch))
	}
	bb, err := s.c.NewBatchBuilder()
	if err != nil {
		return fill(errs, fmt.Errorf("azure batch: %w", err))
	}
	// sub maps a sub-request (its Content-ID) to its location.
	var sub []int
	for i, loc := range locs {
		key, err := objectKey(loc, s.authority, "abfs", "abfss", "wasb", "wasbs")
		if err != nil {
			errs[i] = err
			continue
		}
		if gocloudEscapes(key, true) {
			errs[i] = s.io.remove(ctx, loc)
			continue
		}
		if err := bb.Delete(key, nil); err != nil {
			errs[i] = fmt.Errorf("delete %s: %w", loc, err)
			continue
		}
		sub = append(sub, i)
	}
	if len(sub) == 0 {
		return errs
	}
	if s.refused.Load() {
		return s.each(ctx, locs, sub, errs)
	}
	resp, err := s.c.SubmitBatch(ctx, bb, nil)
	if batchRefused(err) {
		// Nothing of a refused batch was deleted: the sub-requests are
		// sent again, one by one, through the table's IO.
		s.refused.Store(true)
		return s.each(ctx, locs, sub, errs)
	}
	if err != nil {
		for _, i := range sub {
			errs[i] = fmt.Errorf("delete %s: batch request: %w", locs[i], err)
		}
		return errs
	}
	answered := make([]bool, len(sub))
	for _, it := range resp.Responses {
		if it == nil || it.ContentID == nil || *it.ContentID < 0 || *it.ContentID >= len(sub) {
			continue
		}
		n := *it.ContentID
		answered[n] = true
		if it.Error != nil && !bloberror.HasCode(it.Error, bloberror.BlobNotFound) {
			errs[sub[n]] = fmt.Errorf("delete %s: %w", locs[sub[n]], it.Error)
		}
	}
	// A sub-request without an answer is not known to be deleted.
	for n, ok := range answered {
		if !ok {
			errs[sub[n]] = fmt.Errorf("delete %s: no answer in the batch response", locs[sub[n]])
		}
	}
	return errs
}

// each deletes locs[sub...] one at a time through the table's IO.
func (s *azureStore) each(ctx context.Context, locs []string, sub []int, errs []error) []error {
	for _, i := range sub {
		errs[i] = s.io.remove(ctx, locs[i])
	}
	return errs
}

// batchRefused reports whether the batch request as a whole was refused by
// a client error that says the account does not take it (400, 405, 409,
// 501), as opposed to throttling, a server error, a network failure or an
// authorisation failure, which single deletes would meet as well.
func batchRefused(err error) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	switch re.StatusCode {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusNotImplemented:
		return true
	}
	return false
}

// fill sets every outcome to err: a batch that fails as a whole.
func fill(errs []error, err error) []error {
	for i := range errs {
		errs[i] = err
	}
	return errs
}
