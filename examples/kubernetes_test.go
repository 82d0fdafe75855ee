package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/icewright/icewright/internal/ociimage"
	"github.com/icewright/icewright/internal/testenv"
)

// chart is the Helm chart of `icewright reconcile`; examples/kubernetes
// deploys it with its values and policies.
const chart = "../deploy/helm/icewright"

// exampleArgs are the values of examples/kubernetes, as its README installs
// them.
var exampleArgs = []string{"-f", "kubernetes/values.yaml", "--set-file", `policies.files.main\.icewright\.hcl=kubernetes/policies/main.icewright.hcl`}

// chartMatrix: every set of values CI renders, by name.
func chartMatrix(t *testing.T) map[string][]string {
	t.Helper()
	m := map[string][]string{"examples/kubernetes": exampleArgs}
	files, _ := filepath.Glob(filepath.Join(chart, "ci", "*-values.yaml"))
	if len(files) < 3 {
		t.Fatalf("%d values files in %s/ci: want the matrix (ConfigMap, git-sync, existing ConfigMap)", len(files), chart)
	}
	for _, f := range files {
		m[filepath.Base(f)] = []string{"-f", f}
	}
	return m
}

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := testenv.Helm(t)
	cmd := exec.Command(bin, args...)
	// No cluster, no network: helm reads no kubeconfig and no repository.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(home, "none"), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestChartLint: `helm lint --strict` passes with every values file of the
// matrix.
func TestChartLint(t *testing.T) {
	for name, args := range chartMatrix(t) {
		out, err := helm(t, append([]string{"lint", "--strict", chart}, args...)...)
		if err != nil {
			t.Errorf("helm lint with %s: %v\n%s", name, err, out)
		}
	}
}

// TestChartRenders renders the chart with every values file of the matrix
// and decodes each manifest into its Kubernetes API type, refusing any field
// the type does not have (the schema check, with no cluster and no
// network), then checks that the objects agree with each other and with
// what `icewright reconcile` and the image do: the probes and the scrape hit
// its endpoints on the port it listens on, the user is the image's, the
// grace period outlasts the finishing of running commits, the policies load.
func TestChartRenders(t *testing.T) {
	appVersion := chartAppVersion(t)
	for name, args := range chartMatrix(t) {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", "icewright", chart, "--namespace", "icewright"}, args...)...)
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			checkRendered(t, out, appVersion)
		})
	}
}

// rendered is one `helm template` output, decoded.
type rendered struct {
	deploy  *appsv1.Deployment
	svc     *corev1.Service
	sa      *corev1.ServiceAccount
	cm      *corev1.ConfigMap
	pdb     *policyv1.PodDisruptionBudget
	np      *networkingv1.NetworkPolicy
	monitor *monitoringv1.ServiceMonitor
}

func decodeStrict[T any](t *testing.T, doc string) *T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil {
		t.Fatalf("%v in\n%s", err, doc)
	}
	return &v
}

func decodeRendered(t *testing.T, out string) rendered {
	t.Helper()
	var r rendered
	seen := map[string]bool{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if head.Kind == "" {
			continue // comments only
		}
		if seen[head.Kind] {
			t.Errorf("two objects of kind %s", head.Kind)
		}
		seen[head.Kind] = true
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			r.deploy = decodeStrict[appsv1.Deployment](t, doc)
		case "v1 Service":
			r.svc = decodeStrict[corev1.Service](t, doc)
		case "v1 ServiceAccount":
			r.sa = decodeStrict[corev1.ServiceAccount](t, doc)
		case "v1 ConfigMap":
			r.cm = decodeStrict[corev1.ConfigMap](t, doc)
		case "policy/v1 PodDisruptionBudget":
			r.pdb = decodeStrict[policyv1.PodDisruptionBudget](t, doc)
		case "networking.k8s.io/v1 NetworkPolicy":
			r.np = decodeStrict[networkingv1.NetworkPolicy](t, doc)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			r.monitor = decodeStrict[monitoringv1.ServiceMonitor](t, doc)
		default:
			t.Errorf("unexpected object %s %s", head.APIVersion, head.Kind)
		}
	}
	if r.deploy == nil || r.svc == nil {
		t.Fatalf("no Deployment or Service in\n%s", out)
	}
	return r
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

func checkRendered(t *testing.T, out, appVersion string) {
	t.Helper()
	r := decodeRendered(t, out)
	d := r.deploy
	pod := d.Spec.Template.Spec
	podLabels := d.Spec.Template.Labels
	if !selects(d.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("the Deployment's selector %v does not select its pods %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	var c *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == "icewright" {
			c = &pod.Containers[i]
		}
	}
	if c == nil {
		t.Fatal("no container icewright")
	}
	if !strings.HasPrefix(c.Image, "ghcr.io/icewright/icewright:"+appVersion) && !strings.HasPrefix(c.Image, "ghcr.io/icewright/icewright@sha256:") {
		t.Errorf("image %q: want the release's (%s) or a digest", c.Image, appVersion)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %q: the image's entrypoint is the binary", c.Command)
	}
	if len(c.Args) < 2 || !strings.HasPrefix(c.Args[0], "-chdir=") || c.Args[1] != "reconcile" {
		t.Fatalf("args %q: want -chdir=DIR reconcile ...", c.Args)
	}
	dir := strings.TrimPrefix(c.Args[0], "-chdir=")
	port := int32(0)
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			port = p.ContainerPort
		}
	}
	if port == 0 || !slices.Contains(c.Args, "-listen=:"+strconv.Itoa(int(port))) {
		t.Errorf("the metrics port %d is not the one -listen serves (%q)", port, c.Args)
	}
	probe := func(p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe %+v: want GET %s on the metrics port", p, path)
		}
	}
	probe(c.LivenessProbe, "/healthz")
	probe(c.ReadinessProbe, "/readyz")
	// apply lets running actions finish for up to 10 minutes after SIGTERM.
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= 10*time.Minute {
		t.Error("terminationGracePeriodSeconds must outlast the 10 minutes running commits may take to finish")
	}
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != ociimage.UID {
		t.Errorf("pod security context %+v: want non-root, the image's user %d", psc, ociimage.UID)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the root filesystem must be read-only")
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().Cmp(*c.Resources.Requests.Memory()) < 0 {
		t.Errorf("resources %+v: want a memory request and a limit at least as high", c.Resources)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["tmp"] != "/tmp" || !strings.HasPrefix(dir, mounts["policies"]) {
		t.Errorf("mounts %v: want tmp at /tmp and the policies under %s", mounts, dir)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	if volumes["tmp"].EmptyDir == nil {
		t.Error("/tmp must be an emptyDir (compaction spills there)")
	}
	switch pv := volumes["policies"]; {
	case pv.ConfigMap != nil:
		if dir != "/etc/icewright" {
			t.Errorf("policies from a ConfigMap read from %s", dir)
		}
		if r.cm != nil {
			if r.cm.Name != pv.ConfigMap.Name {
				t.Errorf("the pods mount ConfigMap %q, the chart makes %q", pv.ConfigMap.Name, r.cm.Name)
			}
			// The policies of the ConfigMap load, without warnings.
			pdir := t.TempDir()
			for name, content := range r.cm.Data {
				if err := os.WriteFile(filepath.Join(pdir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			load(t, pdir)
		}
	case pv.EmptyDir != nil:
		var sync, initSync bool
		for _, s := range pod.Containers {
			sync = sync || (s.Name == "git-sync" && slices.Contains(s.Args, "--link=current"))
		}
		for _, s := range pod.InitContainers {
			initSync = initSync || (s.Name == "git-sync-init" && slices.Contains(s.Args, "--one-time"))
		}
		if !sync || !initSync || !strings.HasPrefix(dir, "/git/current") || r.cm != nil {
			t.Errorf("git-sync: sidecar %v, init %v, policies read from %s, ConfigMap %v", sync, initSync, dir, r.cm != nil)
		}
	default:
		t.Errorf("the policies volume is neither a ConfigMap nor git-sync's emptyDir: %+v", pv)
	}
	if !selects(r.svc.Spec.Selector, podLabels) {
		t.Errorf("the Service selects %v, which the pods %v do not carry", r.svc.Spec.Selector, podLabels)
	}
	if len(r.svc.Spec.Ports) != 1 || r.svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("Service ports %+v", r.svc.Spec.Ports)
	}
	if r.sa != nil && r.sa.Name != pod.ServiceAccountName {
		t.Errorf("the pods run as %q, the chart makes ServiceAccount %q", pod.ServiceAccountName, r.sa.Name)
	}
	if m := r.monitor; m != nil {
		if len(m.Spec.Endpoints) != 1 || m.Spec.Endpoints[0].Port != "metrics" || m.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoints %+v", m.Spec.Endpoints)
		}
		if !selects(m.Spec.Selector.MatchLabels, r.svc.Labels) {
			t.Errorf("the ServiceMonitor selects %v, which the Service %v does not carry", m.Spec.Selector.MatchLabels, r.svc.Labels)
		}
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if (r.pdb != nil) != (replicas > 1) {
		t.Errorf("%d replicas, PodDisruptionBudget %v: want one exactly when there is more than one replica", replicas, r.pdb != nil)
	}
	if r.pdb != nil && !selects(r.pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("the PodDisruptionBudget selects %v, not the pods %v", r.pdb.Spec.Selector.MatchLabels, podLabels)
	}
	if np := r.np; np != nil {
		if !selects(np.Spec.PodSelector.MatchLabels, podLabels) {
			t.Errorf("the NetworkPolicy selects %v, not the pods", np.Spec.PodSelector.MatchLabels)
		}
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || len(np.Spec.Egress) < 3 {
			t.Errorf("NetworkPolicy egress %+v: want DNS, the catalog and the store, and nothing open", np.Spec.Egress)
		}
		for _, e := range np.Spec.Egress {
			if len(e.To) == 0 {
				t.Errorf("an egress rule with no peers allows every destination: %+v", e)
			}
		}
		if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].Ports) != 1 || np.Spec.Ingress[0].Ports[0].Port.String() != "metrics" {
			t.Errorf("NetworkPolicy ingress %+v: want the metrics port only", np.Spec.Ingress)
		}
	}
}

// TestChartRefuses: values that would deploy a reconciler with no policies,
// two sources of them, a NetworkPolicy that cuts the catalog off, a grace
// period that kills running commits or a value the chart does not know
// fail to render, with a message.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no policies", nil, "set exactly one source of policies"},
		{"two sources", append(slices.Clone(exampleArgs), "--set", "policies.existingConfigMap=x"), "(2 set)"},
		{"git-sync without repo", []string{"--set", "policies.gitSync.enabled=true"}, "needs policies.gitSync.repo"},
		{"network policy without peers", append(slices.Clone(exampleArgs), "--set", "networkPolicy.enabled=true"), "needs networkPolicy.catalog and networkPolicy.store"},
		{"short grace", append(slices.Clone(exampleArgs), "--set", "terminationGracePeriodSeconds=60"), "terminationGracePeriodSeconds"},
		// values.schema.json: a misspelt or misplaced value is an error,
		// not a default silently kept.
		{"unknown value", append(slices.Clone(exampleArgs), "--set", "replicas=3"), "'replicas' not allowed"},
		{"unknown nested value", append(slices.Clone(exampleArgs), "--set", "networkPolicy.egress[0].to=x"), "'egress' not allowed"},
	} {
		out, err := helm(t, append([]string{"template", "icewright", chart}, tc.args...)...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: helm template: %v, want an error saying %q\n%s", tc.name, err, tc.want, out)
		}
	}
}

// chartAppVersion is the chart's appVersion, which must be the release
// number of cmd/icewright (the image's tag).
func chartAppVersion(t *testing.T) string {
	t.Helper()
	var c struct {
		AppVersion string `json:"appVersion"`
		Version    string `json:"version"`
	}
	raw, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../cmd/icewright/run.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const version = "(.*)"$`).FindSubmatch(src)
	if m == nil || string(m[1]) != c.AppVersion {
		t.Errorf("Chart.yaml appVersion %q is not cmd/icewright's version %q", c.AppVersion, m)
	}
	return c.AppVersion
}
