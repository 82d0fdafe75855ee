package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// PricingPolicy is the `pricing` block: the prices a table's plan turns
// its estimates into money with (docs/cost.md). Unlike the other nested
// blocks it turns no action on; a price it does not set is the default of
// the table's storage (StoragePrices), chosen from the table location's
// scheme unless Storage names one.
type PricingPolicy struct {
	Declared  bool
	DeclRange hcl.Range
	// Storage is "s3", "gcs", "azure" or "none"; unset: from the table
	// location's scheme (StorageOf).
	Storage        Setting[string]
	StorageGBMonth Setting[float64] // USD per GB (1e9 bytes) stored for a month
	PutPer1000     Setting[float64] // USD per 1,000 PUT and LIST requests (class A)
	GetPer1000     Setting[float64] // USD per 1,000 GET and HEAD requests (class B)
	CPUHour        Setting[float64] // USD per CPU-hour of the process
	// ScansPerMonth is how many full scans of the table readers make in a
	// month, for the reader's saving (DefaultScansPerMonth).
	ScansPerMonth Setting[float64]
}

// DefaultScansPerMonth is pricing.scans_per_month's default: one full scan
// a day.
const DefaultScansPerMonth = 30

// StoragePrice is the documented default prices of one storage class.
type StoragePrice struct {
	Storage string   // the pricing.storage name: "s3"
	Name    string   // "S3 Standard, us-east-1"
	Schemes []string // the location schemes on this storage
	Prices           // Prices.Read is the date they were read
	Source  string   // where they were read
}

// Prices are one table's prices, resolved (Pricing.For): what a plan
// carries per table (diff.TablePlan.Pricing) so that a saved plan is
// priced as it was made.
type Prices struct {
	// Storage is the storage class ("s3", "gcs", "azure") the defaults came
	// from, or "custom" when the block set every price itself.
	Storage        string  `json:"storage"`
	StorageGBMonth float64 `json:"usd_per_gb_month"`
	PutPer1000     float64 `json:"usd_per_1000_put"`
	GetPer1000     float64 `json:"usd_per_1000_get"`
	CPUHour        float64 `json:"usd_per_cpu_hour"`
	ScansPerMonth  float64 `json:"scans_per_month"`
	// Read is the date the defaults were read ("" when the block set every
	// price, none of them a default).
	Read string `json:"read,omitempty"`
}

// StoragePrices is the one table of default prices (docs/cost.md lists
// it; a test holds the two equal). Read on 2026-12-07 from stored copies of
// the pages named, without live web access: the storage and request prices
// of S3 and GCS are the pages' own; Azure's come from a third-party table
// of its Hot LRS prices, and the CPU-hour prices are the instances' list
// prices as known then, not re-read. Check them before relying on money. List prices in USD of the first tier, in the region each names; a
// LIST request is priced as a PUT (class A), a HEAD as a GET (class B),
// deletes are free on all three. CPU-hour: the on-demand price of one vCPU
// of a general-purpose instance in the same region (a 2-vCPU instance's
// hourly price / 2). Local storage ("file") has none: its plans show
// quantities only.
var StoragePrices = []StoragePrice{
	{
		Storage: "s3", Name: "Amazon S3 Standard, us-east-1",
		Schemes: []string{"s3", "s3a", "s3n"},
		Prices:  Prices{Storage: "s3", StorageGBMonth: 0.023, PutPer1000: 0.005, GetPer1000: 0.0004, CPUHour: 0.0504, ScansPerMonth: DefaultScansPerMonth, Read: "2026-12-07"},
		Source:  "aws.amazon.com/s3/pricing (first 50 TB; PUT, COPY, POST, LIST; GET, SELECT); CPU: EC2 m7i.large on-demand $0.1008/h for 2 vCPU",
	},
	{
		Storage: "gcs", Name: "Google Cloud Storage Standard, us-east1",
		Schemes: []string{"gs"},
		Prices:  Prices{Storage: "gcs", StorageGBMonth: 0.020, PutPer1000: 0.005, GetPer1000: 0.0004, CPUHour: 0.0486, ScansPerMonth: DefaultScansPerMonth, Read: "2026-12-07"},
		Source:  "cloud.google.com/storage/pricing-examples (Standard, us-east1; class A, class B); CPU: Compute Engine n2-standard-2 on-demand $0.0971/h for 2 vCPU",
	},
	{
		Storage: "azure", Name: "Azure Blob Storage Hot, LRS, East US",
		Schemes: []string{"abfs", "abfss", "wasb", "wasbs"},
		Prices:  Prices{Storage: "azure", StorageGBMonth: 0.0184, PutPer1000: 0.005, GetPer1000: 0.0004, CPUHour: 0.048, ScansPerMonth: DefaultScansPerMonth, Read: "2026-12-07"},
		Source:  "azure.microsoft.com/pricing/details/storage/blobs (Hot LRS, first 50 TB; write and list $0.05, read $0.004 per 10,000); CPU: D2s v5 on-demand $0.096/h for 2 vCPU",
	},
}

// storageNames are pricing.storage's values.
func storageNames() []string {
	out := []string{}
	for _, s := range StoragePrices {
		out = append(out, s.Storage)
	}
	return append(out, "none")
}

// StorageOf is the pricing.storage a location's scheme is on ("s3", "gcs",
// "azure"), or "none" (local files, or a scheme with no default prices).
func StorageOf(location string) string {
	scheme, _, ok := strings.Cut(location, "://")
	if !ok {
		return "none"
	}
	scheme = strings.ToLower(scheme)
	for _, s := range StoragePrices {
		for _, sc := range s.Schemes {
			if sc == scheme {
				return s.Storage
			}
		}
	}
	return "none"
}

// For resolves the prices of a table at location: each price the block
// sets, else its storage's default. ok is false when some price has none
// (local storage, or storage = "none", without the block setting all four):
// then a plan shows quantities only.
func (p *PricingPolicy) For(location string) (Prices, bool) {
	storage := p.Storage.Value
	if !p.Storage.Set || storage == "" {
		storage = StorageOf(location)
	}
	var out Prices
	have := [4]bool{}
	for _, s := range StoragePrices {
		if s.Storage == storage {
			out, have = s.Prices, [4]bool{true, true, true, true}
		}
	}
	all := true
	for i, s := range []struct {
		set *Setting[float64]
		dst *float64
	}{{&p.StorageGBMonth, &out.StorageGBMonth}, {&p.PutPer1000, &out.PutPer1000}, {&p.GetPer1000, &out.GetPer1000}, {&p.CPUHour, &out.CPUHour}} {
		if s.set.Set {
			*s.dst, have[i] = s.set.Value, true
		} else {
			all = false
		}
		if !have[i] {
			return Prices{}, false
		}
	}
	if all {
		out.Storage, out.Read = "custom", ""
	}
	out.ScansPerMonth = p.ScansPerMonth.Value
	if !p.ScansPerMonth.Set && out.ScansPerMonth == 0 {
		out.ScansPerMonth = DefaultScansPerMonth // a policy built without fillDefaults
	}
	return out, true
}

// Unset names the prices the block does not set.
func (p *PricingPolicy) Unset() []string {
	var out []string
	for _, f := range policyFields() {
		if f.block != "pricing" || f.kind != kindFloat || f.name == "scans_per_month" {
			continue
		}
		if set, _, _ := f.get(&PolicyBody{Pricing: *p}).(settingPtr).meta(); !set {
			out = append(out, f.name)
		}
	}
	return out
}

func checkPrice(v any) *fieldProblem {
	if f := v.(float64); f < 0 {
		return &fieldProblem{hcl.DiagError, "Invalid price",
			fmt.Sprintf("A price is in US dollars and cannot be negative; got %g.", f), ""}
	}
	return nil
}
