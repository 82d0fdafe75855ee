package diff

import (
	"fmt"

	"github.com/icewright/icewright/config"
)

// Money is what a Usage costs and saves at one table's prices, in US
// dollars (docs/cost.md has the formulas). It is derived, never stored: a
// plan holds quantities (Usage) and each table's prices
// (TablePlan.Pricing).
type Money struct {
	// Run is the cost of the run: Requests + CPU.
	Run      float64 `json:"run_usd"`
	Requests float64 `json:"requests_usd"`
	CPU      float64 `json:"cpu_usd"`
	// SavingPerMonth is Storage + Reads: what the table costs less each
	// month once the action is done.
	SavingPerMonth float64 `json:"saving_per_month_usd"`
	Storage        float64 `json:"storage_saving_per_month_usd"`
	Reads          float64 `json:"read_saving_per_month_usd"`
}

// bytesPerGB: storage is priced per GB of 10^9 bytes.
const bytesPerGB = 1e9

// Price is the money of u at prices p; false when there are none (local
// storage without a pricing block), when a view shows quantities only.
//
//	requests          = (PUT + LIST) / 1000 × put_per_1000 + (GET + HEAD) / 1000 × get_per_1000
//	                    (deletes, single or batch, are free on S3, GCS and Azure)
//	cpu               = CPU-seconds / 3600 × cpu_hour
//	storage per month = bytes freed / 1e9 × storage_gb_month
//	reads per month   = scan opens saved × scans_per_month × get_per_1000 / 1000
func Price(u Usage, p *config.Prices) (Money, bool) {
	if p == nil {
		return Money{}, false
	}
	r := u.Requests
	m := Money{
		Requests: float64(r.Put+r.List)/1000*p.PutPer1000 + float64(r.Get+r.Head)/1000*p.GetPer1000,
		CPU:      u.CPUSeconds / 3600 * p.CPUHour,
		Storage:  float64(u.BytesFreed) / bytesPerGB * p.StorageGBMonth,
		Reads:    float64(u.ScanOpensSaved) * p.ScansPerMonth * p.GetPer1000 / 1000,
	}
	m.Run = m.Requests + m.CPU
	m.SavingPerMonth = m.Storage + m.Reads
	return m, true
}

// Add adds o to m.
func (m *Money) Add(o Money) {
	m.Run += o.Run
	m.Requests += o.Requests
	m.CPU += o.CPU
	m.SavingPerMonth += o.SavingPerMonth
	m.Storage += o.Storage
	m.Reads += o.Reads
}

// PaybackMonths is the cost of the run over the saving per month: how many
// months the saving takes to pay for the run; false when nothing is saved.
func (m Money) PaybackMonths() (float64, bool) {
	if m.SavingPerMonth <= 0 {
		return 0, false
	}
	return m.Run / m.SavingPerMonth, true
}

// FormatUSD shows an amount in US dollars with cents ("$12.34"), an amount
// above zero but below a cent as "<$0.01", so that a cost is never shown
// as nothing.
func FormatUSD(v float64) string {
	switch {
	case v < 0:
		return "-" + FormatUSD(-v)
	case v > 0 && v < 0.01:
		return "<$0.01"
	}
	return fmt.Sprintf("$%.2f", v)
}
