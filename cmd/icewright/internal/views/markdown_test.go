package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/icewright/icewright/diff"
)

// markdownPlan is designPlan with a refusal, an error, warnings and a
// table name that would break Markdown if it were not escaped.
func markdownPlan() *diff.Plan {
	p := designPlan()
	p.Tables = append(p.Tables, diff.TablePlan{
		Address:  "lake.odd.a|b`c<script>",
		Refusals: []diff.Refusal{{Action: "remove_orphan_files", Reason: "orphan ratio 40% above max_orphan_ratio 25% <check the listing>"}},
		Warnings: []diff.Warning{{Code: "IW105", Message: "gc.enabled=false with an expiry policy", Origin: "main.icewright.hcl:7"}},
	})
	p.Errors = []diff.TableError{{Address: "lake.x.gone", Message: "observe lake.x.gone: no such table"}}
	p.Warnings = []diff.Warning{{Code: "IW102", Message: "Snapshot retention below Trino's 7-day floor", Detail: "max_age is 2d.", Origin: "main.icewright.hcl:12"}}
	diff.Summarize(p)
	return p
}

func TestPlanMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := PlanMarkdown(&buf, markdownPlan()); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	want := "<!-- icewright-plan -->\n" +
		"### icewright plan\n\n" +
		"Error: 1 table could not be planned; 1 table has refused actions. Plan: 1 table to change (6 actions, 2 destructive), 3 tables in policy.\n\n" +
		"| Table | Actions | Destructive | To rewrite | To delete |\n" +
		"| --- | ---: | ---: | ---: | ---: |\n" +
		"| `lake.analytics.clicks` | 6 | ⚠️ 2 | 3.1 GiB | 12 files (45.2 MiB) |\n" +
		"| ``lake.odd.a\\|b`c<script>`` | 0 | – | – | – |\n\n" +
		"> [!CAUTION]\n> **Destructive actions**: these delete files and cannot be undone.\n>\n" +
		"> - `lake.analytics.clicks`: expire 214 snapshots older than 2d (oldest 41d); 3 kept (1 by tag \"q3-close\")\n" +
		"> - `lake.analytics.clicks`: remove 12 orphan files (45.2 MiB) older than 3d; 3 newer files kept by the age guard; 2 excluded; 1 non-Iceberg file reported only; 1.2% unreferenced (max 25%)\n\n" +
		"#### Refused or not planned (the plan exits 1)\n\n" +
		"- ``lake.odd.a|b`c<script>``: `remove_orphan_files` refused: orphan ratio 40% above max\\_orphan\\_ratio 25% \\<check the listing\\>\n" +
		"- `lake.x.gone`: could not be planned: observe lake.x.gone: no such table\n\n" +
		"#### Warnings\n\n" +
		"- `IW102` `main.icewright.hcl:12`: Snapshot retention below Trino's 7-day floor: max\\_age is 2d.\n" +
		"- `IW105` `main.icewright.hcl:7`: ``lake.odd.a|b`c<script>``: gc.enabled=false with an expiry policy\n\n" +
		"<details><summary><code>lake.analytics.clicks</code>: 6 actions</summary>\n\n```text\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("markdown head mismatch\n--- got\n%s\n--- want prefix\n%s", got, want)
	}
	for _, s := range []string{
		// One collapsible section per table to change, with its text plan.
		"      - expire 214 snapshots older than 2d (oldest 41d)",
		"<details><summary><code>lake.odd.a|b`c&lt;script&gt;</code>: 0 actions, 1 refusal</summary>",
		"      ! refused remove_orphan_files: orphan ratio 40%",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("missing %q in\n%s", s, got)
		}
	}
	if n := strings.Count(got, "<details>"); n != 2 {
		t.Errorf("%d sections, want 2 (tables in policy get none)", n)
	}
	if strings.Contains(got, "hunter2") || strings.Contains(got, "<script>") && !strings.Contains(got, "`c<script>`") {
		t.Error("secret or unescaped HTML in the comment")
	}
	if strings.Count(got, PlanMarker) != 1 || !strings.HasPrefix(got, PlanMarker+"\n") {
		t.Error("the marker must be the first line, once")
	}
}

func TestPlanMarkdownNoChanges(t *testing.T) {
	p := &diff.Plan{FormatVersion: diff.FormatVersion, Tables: []diff.TablePlan{{Address: "lake.a.b"}}}
	diff.Summarize(p)
	var buf bytes.Buffer
	if err := PlanMarkdown(&buf, p); err != nil {
		t.Fatal(err)
	}
	want := PlanMarker + "\n### icewright plan\n\nNo changes. 1 table is in policy.\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// What a sweep did not enter (other engines' staging directories) is in
// the text plan, the Markdown plan's destructive actions and the JSON.
func TestPlanOrphanStaging(t *testing.T) {
	p := designPlan()
	o := p.Tables[0].Actions[len(p.Tables[0].Actions)-1].Orphans
	o.Staging = &diff.StagingSkip{Dirs: 2, Files: 7, Bytes: 3 << 20,
		Examples: []string{"s3://b/t/data/.hive-staging_hive_1", "s3://b/t/data/_temporary"}}
	diff.Summarize(p)
	want := "; 2 staging directories of other engines not entered (7 files, 3.0 MiB; first: s3://b/t/data/.hive-staging_hive_1, s3://b/t/data/_temporary)"
	var text, md, js bytes.Buffer
	if err := Plan(&text, p, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if err := PlanMarkdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(&js).Encode(p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "kept by the age guard; 2 excluded; 1 non-Iceberg file reported only"+want) {
		t.Errorf("text plan lacks the staging report:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "reported only"+strings.ReplaceAll(want, "_", "\\_")) {
		t.Errorf("markdown plan lacks the staging report:\n%s", md.String())
	}
	if !strings.Contains(js.String(), `"staging":{"dirs":2,"files":7,"bytes":3145728,"examples":["s3://b/t/data/.hive-staging_hive_1","s3://b/t/data/_temporary"]}`) {
		t.Errorf("JSON plan lacks the staging report:\n%s", js.String())
	}
}
