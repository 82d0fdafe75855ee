package examples

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// strict decodes a manifest into its Kubernetes type, refusing any field
// the type does not have (a typo, a field at the wrong level): the schema
// check kubeconform would make, from the API's own Go types (kubeconform's
// schemas are not reachable from CI).
func strict[T any](t *testing.T, file string) T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := yaml.UnmarshalStrict(raw, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return v
}

// TestKubernetesManifests: the manifests are valid objects of their kinds,
// the kustomization names every one of them and the policies, and they
// agree with what `icewright reconcile` does: the probes and the scrape hit its
// endpoints on the port it listens on, the grace period outlasts the
// finishing of running commits, and the policies load.
func TestKubernetesManifests(t *testing.T) {
	type kustomization struct {
		APIVersion         string   `json:"apiVersion"`
		Kind               string   `json:"kind"`
		Namespace          string   `json:"namespace"`
		Resources          []string `json:"resources"`
		ConfigMapGenerator []struct {
			Name  string   `json:"name"`
			Files []string `json:"files"`
		} `json:"configMapGenerator"`
	}
	k := strict[kustomization](t, "kustomization.yaml")
	if k.Kind != "Kustomization" || len(k.ConfigMapGenerator) != 1 {
		t.Fatalf("kustomization %+v", k)
	}
	for _, f := range append(slices.Clone(k.Resources), k.ConfigMapGenerator[0].Files...) {
		if _, err := os.Stat(filepath.Join("kubernetes", f)); err != nil {
			t.Errorf("kustomization names %s: %v", f, err)
		}
	}
	yamls, _ := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	for _, y := range yamls {
		if b := filepath.Base(y); b != "kustomization.yaml" && !slices.Contains(k.Resources, b) {
			t.Errorf("%s is not in the kustomization's resources", b)
		}
	}

	d := strict[appsv1.Deployment](t, "deployment.yaml")
	svc := strict[corev1.Service](t, "service.yaml")
	sm := strict[monitoringv1.ServiceMonitor](t, "servicemonitor.yaml")
	if d.Kind != "Deployment" || svc.Kind != "Service" || sm.Kind != "ServiceMonitor" {
		t.Fatalf("kinds %q %q %q", d.Kind, svc.Kind, sm.Kind)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Error("the example should show replicas sharing the tables (replicas >= 2)")
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, " reconcile ") || !strings.Contains(args, "-chdir=/etc/icewright") {
		t.Errorf("args %q: want -chdir=/etc/icewright reconcile ...", args)
	}
	port := int32(0)
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			port = p.ContainerPort
		}
	}
	if port == 0 || !strings.Contains(args, "-listen=:"+strconv.Itoa(int(port))) {
		t.Errorf("the metrics port %d is not the one -listen serves (%q)", port, args)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("probes must be GET /healthz (liveness) and /readyz (readiness)")
	}
	// apply lets running actions finish for up to 10 minutes after SIGTERM.
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= 10*time.Minute {
		t.Error("terminationGracePeriodSeconds must outlast the 10 minutes running commits may take to finish")
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || m.MountPath == "/etc/icewright"
	}
	cmName := ""
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	if !mounted || cmName != k.ConfigMapGenerator[0].Name {
		t.Errorf("the policies ConfigMap %q must be mounted at /etc/icewright (volume from %q)", k.ConfigMapGenerator[0].Name, cmName)
	}
	for key, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[key] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", key, v)
		}
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints %+v", sm.Spec.Endpoints)
	}
	for key, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[key] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, which the Service does not carry", key, v)
		}
	}
	// The policies load (without warnings) with the Secret's variables.
	load(t, filepath.Join("kubernetes", "policies"))
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "ICEWRIGHT_LOG" }) {
		t.Error("the example should set ICEWRIGHT_LOG for its logs")
	}
}
