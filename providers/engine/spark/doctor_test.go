package spark

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
)

// deadPort is a local port nobody listens on.
func deadPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func findings(fs []diff.DoctorFinding) map[string][]diff.DoctorFinding {
	by := map[string][]diff.DoctorFinding{}
	for _, f := range fs {
		by[f.Check] = append(by[f.Check], f)
	}
	return by
}

// A wrong endpoint fails doctor's reachable check at once, naming the
// address and what to check, with the token masked; nothing further is
// tried (issue 43, item 6).
func TestDoctorNobodyListens(t *testing.T) {
	addr := deadPort(t)
	e := New(&config.Engine{Name: Name, Remote: "sc://" + addr + "/;token=tok-s3cr3t", Catalog: "lake"})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	got := e.Doctor(ctx, []string{"lake"})
	if time.Since(start) > 5*time.Second {
		t.Errorf("a refused connection took %s: the client's retries were waited out", time.Since(start))
	}
	if len(got) != 1 {
		t.Fatalf("findings = %+v, want only reachable", got)
	}
	f := got[0]
	if f.Engine != Name || f.Check != "reachable" || f.Status != diff.DoctorFail ||
		!strings.Contains(f.Message, "nothing answers at "+addr) || !strings.Contains(f.Fix, "host and port") {
		t.Errorf("finding = %+v", f)
	}
	if strings.Contains(f.Message+f.Fix, "tok-s3cr3t") || !strings.Contains(f.Message, config.Masked) {
		t.Errorf("the token is shown, or the remote is not named: %+v", f)
	}
}

// An endpoint that accepts connections and never answers fails within
// the deadline doctor gives the probe, saying so.
func TestDoctorHangingEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	e := New(&config.Engine{Name: Name, Remote: "sc://" + l.Addr().String()})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	got := e.Doctor(ctx, []string{"lake"})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("doctor took %s with a 2s deadline", took)
	}
	if len(got) != 1 || got[0].Status != diff.DoctorFail || !strings.Contains(got[0].Message, "before the deadline") {
		t.Fatalf("findings = %+v, want one failed reachable naming the deadline", got)
	}
}

// Against the real Spark Connect server: reachable with Spark's version,
// the suite's `local` catalog and its rewrite_data_files found, a catalog
// Spark does not have a failure with what to configure, and Spark's own
// session catalog (not Iceberg's) found without the procedure.
func TestDoctorSpark(t *testing.T) {
	env := testenv.Spark(t)
	e := New(&config.Engine{Name: Name, Remote: env.Remote})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	by := findings(e.Doctor(ctx, []string{"local", "nosuchcatalog", "spark_catalog"}))
	if r := by["reachable"]; len(r) != 1 || r[0].Status != diff.DoctorOK || !strings.Contains(r[0].Message, "Spark 4.") {
		t.Errorf("reachable = %+v", r)
	}
	cats := by["catalog"]
	if len(cats) != 3 || cats[0].Status != diff.DoctorOK || cats[1].Status != diff.DoctorFail || cats[2].Status != diff.DoctorOK ||
		!strings.Contains(cats[1].Message, `no catalog "nosuchcatalog"`) || !strings.Contains(cats[1].Fix, "spark.sql.catalog.nosuchcatalog") {
		t.Errorf("catalog = %+v", cats)
	}
	if p := by["procedures"]; len(p) != 2 || p[0].Status != diff.DoctorOK || !strings.Contains(p[0].Message, "local.system.rewrite_data_files exists") ||
		p[1].Status != diff.DoctorFail || !strings.Contains(p[1].Message, `"spark_catalog" has no system.rewrite_data_files`) || !strings.Contains(p[1].Fix, "IcebergSparkSessionExtensions") {
		t.Errorf("procedures = %+v", p)
	} else if m := p[1].Message; strings.Count(m, "MISSING_CATALOG_ABILITY.PROCEDURES") != 1 || strings.Count(m, "SQLSTATE") != 1 || strings.Contains(m, "execution error") {
		t.Errorf("Spark's failure is not said once, as Spark worded it: %s", m)
	}
}
