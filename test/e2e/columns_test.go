package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const columnsCRDName = "printables.columns.kubeevents.dev"

const columnsObjects = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: printables.columns.kubeevents.dev}
spec:
  group: columns.kubeevents.dev
  scope: Namespaced
  names: {plural: printables, singular: printable, kind: Printable}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Colour, type: string, jsonPath: .spec.colour}
    - {name: Ratio, type: number, jsonPath: .spec.ratio}
    - {name: Enabled, type: boolean, jsonPath: .spec.enabled}
    - {name: Missing, type: string, jsonPath: .spec.missing}
    - {name: Tags, type: string, jsonPath: .spec.tags}
    - {name: Detail, type: string, jsonPath: .spec.detail, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

func columnsWorkloads(ns string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.27}, {name: side, image: busybox}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec: {type: NodePort, selector: {app: web}, ports: [{name: http, port: 80, nodePort: 30%[2]s, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]}
---
apiVersion: v1
kind: Service
metadata: {name: internal, namespace: %[1]s}
spec: {selector: {app: web}, ports: [{name: dns, port: 53, protocol: UDP}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: %[1]s}
spec:
  completions: 3
  parallelism: 2
  template:
    spec: {restartPolicy: Never, containers: [{name: once, image: busybox}]}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: %[1]s}
type: example.com/token
stringData: {a: "1", b: "2"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: %[1]s}
spec:
  schedule: "0 3 * * *"
  suspend: true
  timeZone: Europe/Berlin
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: nightly, image: busybox}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: %[1]s}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: app, image: nginx:1.27}]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-%[1]s}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: slow
  claimRef: {namespace: %[1]s, name: other}
  hostPath: {path: /tmp/pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %[1]s}
spec: {accessModes: [ReadWriteOnce, ReadOnlyMany], storageClassName: slow, resources: {requests: {storage: 1Gi}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: %[1]s}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com]}]
  rules:
  - {host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}
  - {host: b.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: %[1]s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
  metrics:
  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}
  - {type: Pods, pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: "10"}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: %[1]s}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: User, name: ann}
- {kind: Group, name: ops}
- {kind: ServiceAccount, name: bot, namespace: %[1]s}
- {kind: User, name: bob}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cr-%[1]s}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: crb-%[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cr-%[1]s}
subjects: [{kind: Group, name: auditors}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: sc-%[1]s}
provisioner: example.com/nfs
reclaimPolicy: Retain
allowVolumeExpansion: true
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: %[1]s}
spec: {holderIdentity: replica-1, leaseDurationSeconds: 15}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: free, namespace: %[1]s}
spec: {}
---
apiVersion: columns.kubeevents.dev/v1
kind: Printable
metadata: {name: blue, namespace: %[1]s}
spec: {size: 3, colour: blue, ratio: 1.5, enabled: true, tags: [a, b], detail: wide-only}
`, ns, fmt.Sprint(100+time.Now().UnixNano()%700))
}

// cellsAfter splits a table line into its cells after the name (columns are separated
// by two spaces or more; cells hold at most single spaces: "80, 443", "1 (3m ago)").
var cellGap = regexp.MustCompile(`\s{2,}`)

// ageCell is a kubectl duration ("45s", "3m12s"): it may differ by the second between
// the two clients' moments of printing.
var ageCell = regexp.MustCompile(`^(\d+[smhdy])+$`)

func sameCells(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] && !(ageCell.MatchString(got[i]) && ageCell.MatchString(want[i])) {
			return false
		}
	}
	return true
}

// TestColumnsMatchKubectl: for pods, deployments, services, nodes, jobs, PVCs, ingresses,
// cronjobs, replicationcontrollers, replicasets, configmaps, secrets, serviceaccounts, PVs,
// HPAs, endpoints, endpointslices, roles, rolebindings, clusterroles, clusterrolebindings,
// storageclasses, leases and a custom resource with additionalPrinterColumns, pretty
// and wide lines hold the cells `kubectl get` (-o wide) prints for the same objects,
// unchanged in between (their resourceVersions are compared before and after).
func TestColumnsMatchKubectl(t *testing.T) {
	if clusterBin == "" {
		t.Fatal("KUBEEVENTS_CLUSTER_BIN is not set; run the tests with 'make test-e2e'")
	}
	ns := newNamespace(t)
	kubectlOut(t, columnsObjects, "apply", "-f", "-")
	t.Cleanup(func() {
		_ = exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig, "delete", "crd", columnsCRDName, "--wait=false").Run()
	})
	kubectlOut(t, "", "wait", "--for=condition=Established", "crd/"+columnsCRDName, "--timeout=30s")
	kubectlOut(t, columnsWorkloads(ns), "apply", "-f", "-")
	kubectlOut(t, "", "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s")

	// The cluster-scoped objects of this test, by type.
	own := map[string]string{"persistentvolumes": "pv-" + ns, "clusterroles": "cr-" + ns, "clusterrolebindings": "crb-" + ns, "storageclasses": "sc-" + ns}
	t.Cleanup(func() {
		for typ, name := range own {
			_ = exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig, "delete", typ, name, "--wait=false").Run()
		}
	})
	types := []string{"pods", "deployments", "services", "jobs", "persistentvolumeclaims", "ingresses", "printables",
		"cronjobs", "replicationcontrollers", "replicasets", "configmaps", "secrets", "serviceaccounts",
		"horizontalpodautoscalers", "endpoints", "endpointslices", "roles", "rolebindings", "leases"}
	// The Service's Endpoints and EndpointSlice are the controllers' to make.
	waitUntil(t, nil, eventWait, "the Service's endpoints", func() bool {
		return strings.Contains(kubectlOut(t, "", "get", "endpointslices", "-n", ns, "--no-headers"), "web-")
	})
	for _, typ := range append(types, "nodes", "persistentvolumes", "clusterroles", "clusterrolebindings", "storageclasses") {
		for _, wide := range []bool{false, true} {
			args := []string{"get", typ, "--no-headers", "-o", "custom-columns=RV:.metadata.resourceVersion"}
			kubeArgs := []string{"get", typ, "--no-headers"}
			keArgs := []string{"watch", typ, "--color", "never", "--timeout", "20s"}
			switch name, ok := own[typ]; {
			case typ == "nodes":
			case ok: // this test's own
				args, kubeArgs, keArgs = append(args, name), append(kubeArgs, name), append(keArgs, name)
			default:
				args, kubeArgs, keArgs = append(args, "-n", ns), append(kubeArgs, "-n", ns), append(keArgs, "-n", ns)
			}
			if wide {
				kubeArgs, keArgs = append(kubeArgs, "-o", "wide"), append(keArgs, "-o", "wide")
			}
			var want, got map[string][]string
			for attempt := 0; ; attempt++ {
				before := kubectlOut(t, "", args...)
				want = tableRows(kubectlOut(t, "", kubeArgs...), 0)
				// It ends once it has listed what kubectl printed, not on a timeout: 26
				// types, twice each, would otherwise wait a minute more.
				r := runKubeevents(t, 30*time.Second, append(keArgs, "--max-events", strconv.Itoa(len(want)))...)
				if r.code != 0 {
					t.Fatalf("kubeevents %v: exit %d\n%s", keArgs, r.code, r.stderr)
				}
				got = withoutBy(tableRows(r.stdout, 2)) // after the time and the event type
				if wide {
					got = withoutHealth(t, got)
				}
				if kubectlOut(t, "", args...) == before || attempt == 5 {
					break // nothing changed in between: the same resourceVersions
				}
			}
			if len(want) == 0 {
				t.Fatalf("kubectl %v printed no rows", kubeArgs)
			}
			for name, cells := range want {
				if !sameCells(got[name], cells) {
					t.Errorf("%s %s (wide %v):\nkubeevents %q\nkubectl    %q", typ, name, wide, got[name], cells)
				}
			}
		}
	}
}

// withoutBy drops the cell kubeevents ends a pretty line with after kubectl's columns:
// who made the change ("by kube-controller-manager"), which kubectl does not print.
func withoutBy(rows map[string][]string) map[string][]string {
	for name, cells := range rows {
		if n := len(cells); n > 0 && strings.HasPrefix(cells[n-1], "by ") {
			rows[name] = cells[:n-1]
		}
	}
	return rows
}

// withoutHealth is wide's rows without what kubeevents adds after kubectl's columns: the
// HEALTH column, which every wide row must have, and the health's mark where it changed
// ("✓ Current"; an ADDED line's is its first). A cell wider than its column is followed
// by one space, so the HEALTH cell may end the last of kubectl's.
func withoutHealth(t *testing.T, rows map[string][]string) map[string][]string {
	t.Helper()
	for name, cells := range rows {
		if n := len(cells); n > 0 && healthMark.MatchString(cells[n-1]) {
			cells = cells[:n-1]
		}
		n := len(cells)
		if n == 0 {
			continue
		}
		last := cells[n-1]
		health := healthCell.FindString(last)
		switch {
		case health == "":
			t.Errorf("wide row %s %q: no HEALTH column", name, cells)
		case health == last:
			cells = cells[:n-1]
		default:
			cells = append(cells[:n-1:n-1], strings.TrimSuffix(last, health))
		}
		rows[name] = cells
	}
	return rows
}

var (
	healthCell = regexp.MustCompile(` ?(Current|InProgress|Failed|Terminating|Unknown)$`)
	healthMark = regexp.MustCompile(`^[✓…✗?] (Current|InProgress|Failed|Terminating|Unknown)\b`)
)

// tableRows reads lines of cells by name, the name being the field after skip fields.
func tableRows(out string, skip int) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := cellGap.Split(strings.TrimSpace(line), -1)
		if len(fields) <= skip+1 {
			continue
		}
		rows[fields[skip]] = fields[skip+1:]
	}
	return rows
}

// TestEventTypesAndAll: --event-types leaves the other types out; watch all expands to
// kubectl get all's types. (The templates are compared with kubectl in templates_test.go.)
func TestEventTypesAndAll(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web-1", map[string]string{"app": "web"})
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "name", "--event-types", "deleted", "-v=1")
	// Listed now, its ADDED of web-1 left out: the label and the deletion come after it.
	s.waitStderr(30*time.Second, regexp.MustCompile(`kubeevents: pods in `+ns+` listed \(not shown: --event-types DELETED\); changes from here on are shown`))
	labelPod(t, ns, "web-1", "tier", "web")
	deletePod(t, ns, "web-1")
	s.waitFor(eventWait, "DELETED web-1", func(l string) bool { return l == "DELETED pod/web-1" })
	lines, _ := s.interrupt(10 * time.Second)
	for _, l := range lines {
		if !strings.HasPrefix(l, "DELETED ") {
			t.Errorf("--event-types deleted printed %q", l)
		}
	}

	r := runKubeevents(t, 30*time.Second, "watch", "all", "-n", ns, "--timeout", "1s", "-v=1")
	for _, typ := range []string{"pods", "services", "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps", "jobs.batch", "cronjobs.batch"} {
		if !strings.Contains(r.stderr, typ) {
			t.Errorf("watch all does not watch %s: %s", typ, r.stderr)
		}
	}
}

// TestCompletionOfColumnsFlags: categories, -n's comma list, --exclude-namespace,
// --event-types and the template formats complete against the living cluster.
func TestCompletionOfColumnsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"al"}, "all\t"},
		{[]string{"pods", "-n", "default,kube-s"}, "default,kube-system"},
		{[]string{"pods", "-A", "--exclude-namespace", "kube-s"}, "kube-system"},
		{[]string{"pods", "--event-types", "ADDED,M"}, "ADDED,MODIFIED"},
		{[]string{"pods", "-o", "jsonp"}, "jsonpath="},
	} {
		r := runKubeevents(t, 30*time.Second, append([]string{"__complete", "watch", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, tc.args...)...)
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			found = found || strings.HasPrefix(line+"\t", tc.want) || line == tc.want
		}
		if !found {
			t.Errorf("completing %q: no %q in\n%s", tc.args, tc.want, r.stdout)
		}
	}
}
