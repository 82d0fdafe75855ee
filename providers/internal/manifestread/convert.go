package manifestread

import (
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/twmb/avro/atype"
)

// convert turns a decoded partition value into iceberg-go's type for the
// field's logical type: iceberg-go v0.7.0's dataFile.convertAvroValueToIcebergType
// (manifest.go), which is unexported, restated. The differential tests
// hold the two to the same answers.
func (p *plan) convert(v any, fieldID int) any {
	if v == nil {
		return nil
	}
	logical, ok := p.idToType[fieldID]
	if !ok {
		return v
	}
	switch logical {
	case atype.Date:
		if t, ok := v.(time.Time); ok {
			return iceberg.Date(t.Truncate(24*time.Hour).Unix() / int64((time.Hour * 24).Seconds()))
		}
		if n, ok := v.(int32); ok {
			return iceberg.Date(n)
		}
	case atype.TimeMillis:
		if d, ok := v.(time.Duration); ok {
			return iceberg.Time(d.Microseconds())
		}
		if ms, ok := asInt64(v); ok {
			return iceberg.Time(ms * 1000)
		}
	case atype.TimeMicros:
		if d, ok := v.(time.Duration); ok {
			return iceberg.Time(d.Microseconds())
		}
		if us, ok := asInt64(v); ok {
			return iceberg.Time(us)
		}
	case atype.TimestampMillis:
		if t, ok := v.(time.Time); ok {
			return iceberg.Timestamp(t.UTC().UnixMicro())
		}
		if ms, ok := asInt64(v); ok {
			return iceberg.Timestamp(ms * 1000)
		}
	case atype.TimestampMicros:
		if t, ok := v.(time.Time); ok {
			return iceberg.Timestamp(t.UTC().UnixMicro())
		}
		if us, ok := asInt64(v); ok {
			return iceberg.Timestamp(us)
		}
	case atype.TimestampNanos:
		if t, ok := v.(time.Time); ok {
			return iceberg.TimestampNano(t.UTC().UnixNano())
		}
		if ns, ok := asInt64(v); ok {
			return iceberg.TimestampNano(ns)
		}
	case atype.Decimal:
		if r, ok := v.(*big.Rat); ok {
			scale := p.idToScale[fieldID]
			factor := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
			unscaled := new(big.Int).Mul(r.Num(), factor)
			unscaled = unscaled.Div(unscaled, r.Denom())
			return iceberg.DecimalLiteral{Scale: scale, Val: decimal128.FromBigInt(unscaled)}
		}
	case atype.UUID:
		if b, ok := v.([16]byte); ok {
			return uuid.UUID(b)
		}
	}
	return v
}

// asInt64 is an Avro int or long as int64 (iceberg-go's avroIntAsInt64).
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	}
	return 0, false
}
