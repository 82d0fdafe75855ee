package config

import (
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"512MiB", 512 << 20, false},
		{"1GB", 1_000_000_000, false},
		{"64KiB", 64 << 10, false},
		{"1048576", 1 << 20, false},
		{"1.5GiB", 3 << 29, false},
		{"8 MiB", 8 << 20, false},
		{"2gib", 2 << 30, false},
		{"0", 0, false},
		{"100B", 100, false},
		{"12 parsecs", 0, true},
		{"", 0, true},
		{"MiB", 0, true},
		{"-5MiB", 0, true},
		{"1.5B", 0, true}, // not whole bytes
		{"9223372036854775807", 1<<63 - 1, false},
		{"9223372036854775808", 0, true}, // overflows int64
		{"9000000PiB", 0, true},          // overflows after the multiply
		{"1.2.3MiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"30s", 30 * time.Second, false},
		{"90m", 90 * time.Minute, false},
		{"36h", 36 * time.Hour, false},
		{"1h30m", 90 * time.Minute, false},
		{"5d", 5 * 24 * time.Hour, false},
		{"2w", 14 * 24 * time.Hour, false},
		{"1w2d", 9 * 24 * time.Hour, false},
		{"1.5h", 90 * time.Minute, false},
		{"250ms", 250 * time.Millisecond, false},
		{"0", 0, false},
		{"", 0, true},
		{"5", 0, true},
		{"5 days", 0, true},
		{"-1h", 0, true},
		{"12 parsecs", 0, true},
		{"d", 0, true},
		{"100000000w", 0, true}, // overflows
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{900, "900 B"},
		{3328599345, "3.1 GiB"},
		{47395635, "45.2 MiB"},
		{512 << 20, "512 MiB"},
		{1536, "1.5 KiB"},
		{1<<30 - 1<<15, "1 GiB"},
		{1023, "1023 B"},
	}
	for _, tt := range tests {
		if got := FormatSize(tt.in); got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{2 * 24 * time.Hour, "2d"},
		{36 * time.Hour, "36h"},
		{90 * time.Minute, "90m"},
		{14 * 24 * time.Hour, "14d"},
		{1500 * time.Millisecond, "1500ms"},
		{0, "0s"},
	}
	for _, tt := range tests {
		got := FormatDuration(tt.in)
		if got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if back, err := ParseDuration(got); err != nil || back != tt.in {
			t.Errorf("ParseDuration(FormatDuration(%v)) = %v, %v", tt.in, back, err)
		}
	}
}

func TestFormatSizeExactRoundTrip(t *testing.T) {
	for _, n := range []int64{1, 1000, 1024, 512 << 20, 921 << 20, 3 << 29, 5<<40 + 1} {
		back, err := ParseSize(FormatSizeExact(n))
		if err != nil || back != n {
			t.Errorf("ParseSize(FormatSizeExact(%d)=%q) = %d, %v", n, FormatSizeExact(n), back, err)
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for k, want := range map[string]bool{
		"s3.secret-access-key": true,
		"PASSWORD":             true,
		"token":                true,
		"credential":           true,
		"gcs.oauth2.Token":     true,
		"s3.endpoint":          false,
		"s3.access-key-id":     false,
		"warehouse":            false,
	} {
		if got := IsSecretKey(k); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestRedactURI(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://iceberg:s3cr3t@pg:5432/db":           "postgres://iceberg:****@pg:5432/db",
		"postgres://iceberg:p@ss@pg/db?x=1":              "postgres://iceberg:****@pg/db?x=1",
		"postgres://iceberg@pg/db":                       "postgres://iceberg@pg/db",
		"https://rest.example.com/api?token=x":           "https://rest.example.com/api?token=x",
		"sqlite:/abs/catalog.db":                         "sqlite:/abs/catalog.db",
		"https://u:p@host/path/with@sign/in/it":          "https://u:****@host/path/with@sign/in/it",
		"host=pg user=u password=Kw0rd-DSN dbname=db":    "host=pg user=u password=**** dbname=db",
		"host=pg password='Kw 0rd' dbname=db":            "host=pg password='****' dbname=db",
		"postgres://u@pg/db?sslmode=off&password=Qry0pw": "postgres://u@pg/db?sslmode=off&password=****",
		"host=pg mypassword=notakey":                     "host=pg mypassword=notakey",
	} {
		if got := RedactURI(in); got != want {
			t.Errorf("RedactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
