package e2e

// Pairs of features run together end to end: every pair that internal/plan's table
// (TestEveryPairOfFeatures in internal/plan/check_test.go) accepts and that involves
// several namespaces, several clusters or --resume runs here against the living cluster
// (and the second one), each making a change it should see and checking what both
// features promise together; a few refused pairs are checked for their one line, exit 2.

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// combinationFeatures are the features whose accepted pairs run here.
var combinationFeatures = []string{"several namespaces", "several clusters", "--resume"}

// combinationRuns are the end-to-end runs of the accepted pairs, each named as plan's
// table names it (its features in the table's order).
var combinationRuns = map[[2]string]func(*testing.T){
	{"several namespaces", "several clusters"}: pairNamespacesClusters,
	{"several namespaces", "--resume"}:         pairNamespacesResume,
	{"several namespaces", "--ui"}:             pairNamespacesUI,
	{"several namespaces", "--leader-elect"}:   pairNamespacesLeaderElect,
	{"several namespaces", "--until"}:          pairNamespacesUntil,
	{"several namespaces", "--until-deleted"}:  pairNamespacesUntilDeleted,
	{"several namespaces", "--until-ready"}:    pairNamespacesUntilReady,
	{"several namespaces", "--watch-only"}:     pairNamespacesWatchOnly,
	{"several namespaces", "--metadata-only"}:  pairNamespacesMetadataOnly,
	{"several namespaces", "replay"}:           pairNamespacesReplay,
	{"several clusters", "--resume"}:           pairClustersResume,
	{"several clusters", "--ui"}:               pairClustersUI,
	{"several clusters", "--until"}:            pairClustersUntil,
	{"several clusters", "--until-ready"}:      pairClustersUntilReady,
	{"several clusters", "--watch-only"}:       pairClustersWatchOnly,
	{"several clusters", "--metadata-only"}:    pairClustersMetadataOnly,
	{"several clusters", "replay"}:             pairClustersReplay,
	{"--resume", "--ui"}:                       pairResumeUI,
	{"--resume", "--leader-elect"}:             pairResumeLeaderElect,
	{"--resume", "--until"}:                    pairResumeUntil,
	{"--resume", "--until-deleted"}:            pairResumeUntilDeleted,
	{"--resume", "--metadata-only"}:            pairResumeMetadataOnly,
}

// TestCombinations runs every accepted pair of features that involves several
// namespaces, several clusters or --resume, in parallel; a pair the table accepts
// without a run here (or a run of a pair it no longer accepts) fails it.
func TestCombinations(t *testing.T) {
	accepted := acceptedPairs(t)
	for _, pair := range accepted {
		if combinationRuns[pair] == nil {
			t.Errorf("plan's table accepts %s × %s, and no end-to-end run of it is in combinationRuns", pair[0], pair[1])
		}
	}
	for pair := range combinationRuns {
		if !slices.Contains(accepted, pair) {
			t.Errorf("combinationRuns runs %s × %s, which is not an accepted pair of plan's table (refused now, renamed, or in the other order)", pair[0], pair[1])
		}
	}
	for _, pair := range accepted {
		run := combinationRuns[pair]
		if run == nil {
			continue
		}
		t.Run(slug(pair[0])+"+"+slug(pair[1]), func(t *testing.T) {
			t.Parallel()
			run(t)
		})
	}
}

// slug is a feature's short name, for a subtest's (and its namespaces') name.
func slug(feature string) string {
	return strings.TrimPrefix(strings.TrimPrefix(feature, "several "), "--")
}

// acceptedPairs are the pairs of plan's table of features that involve one of
// combinationFeatures and that it does not refuse, read from the table itself
// (internal/plan/check_test.go: the names in features, the keys of refused).
func acceptedPairs(t *testing.T) [][2]string {
	t.Helper()
	path := filepath.Join(repoRoot, "internal", "plan", "check_test.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	str := func(e ast.Expr) string {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Fatalf("%s: a feature's name that is not a string literal: %#v", path, e)
		}
		s, _ := strconv.Unquote(lit.Value)
		return s
	}
	var names []string
	refused := map[[2]string]bool{}
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				table, ok := vs.Values[i].(*ast.CompositeLit)
				switch {
				case name.Name == "features" && ok:
					for _, elt := range table.Elts {
						if feature, ok := elt.(*ast.CompositeLit); ok && len(feature.Elts) > 0 {
							names = append(names, str(feature.Elts[0]))
						}
					}
				case name.Name == "refused" && ok:
					for _, elt := range table.Elts {
						if kv, ok := elt.(*ast.KeyValueExpr); ok {
							if key, ok := kv.Key.(*ast.CompositeLit); ok && len(key.Elts) == 2 {
								refused[[2]string{str(key.Elts[0]), str(key.Elts[1])}] = true
							}
						}
					}
				}
			}
		}
	}
	if len(names) == 0 || len(refused) == 0 {
		t.Fatalf("%s no longer holds the table as this test reads it (var features: {name, on} literals; var refused: a map keyed by [2]string{a, b})", path)
	}
	for _, f := range combinationFeatures {
		if !slices.Contains(names, f) {
			t.Fatalf("plan's table has no feature %q (it has %q)", f, names)
		}
	}
	var pairs [][2]string
	for i, a := range names {
		for _, b := range names[i+1:] {
			pair := [2]string{a, b}
			if !refused[pair] && (slices.Contains(combinationFeatures, a) || slices.Contains(combinationFeatures, b)) {
				pairs = append(pairs, pair)
			}
		}
	}
	return pairs
}

// The helpers of these runs.

// changeCM creates (create), patches (a data value; a JSON merge patch when value starts
// with "{") or deletes (value "-") the labelled ConfigMap name in ns of cluster c.
func changeCM(t *testing.T, c kubernetes.Interface, ns, name, value string, create bool) {
	t.Helper()
	if strings.HasPrefix(value, "{") {
		if _, err := c.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, types.MergePatchType, []byte(value), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patching configmap %s/%s: %v", ns, name, err)
		}
		return
	}
	resumeCM(t, c, ns, name, value, create)
}

// evLine is how these runs name an event: "[CLUSTER ]NAMESPACE TYPE NAME".
func evLine(cluster, ns, typ, name string) string {
	if cluster != "" {
		return cluster + " " + ns + " " + typ + " " + name
	}
	return ns + " " + typ + " " + name
}

// lineOf is evLine of a JSON line kubeevents printed.
func lineOf(t *testing.T, line string) string {
	t.Helper()
	l, err := evLineOf(line)
	if err != nil {
		t.Fatalf("not a JSON line: %q: %v", line, err)
	}
	return l
}

func evLineOf(line string) (string, error) {
	var ev clusterEnvelope
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		return "", err
	}
	cluster := ""
	if ev.Cluster != nil {
		cluster = *ev.Cluster
	}
	return evLine(cluster, ev.meta().Metadata.Namespace, ev.Type, ev.name()), nil
}

// recorded matches a line of a recording that is the event want (evLine's); a line
// still being written is none.
func recorded(want string) func(line string) bool {
	return func(line string) bool {
		l, err := evLineOf(line)
		return err == nil && l == want
	}
}

// waitEvents reads p's JSON lines until it printed each of want (evLine's), in any order.
func waitEvents(p *proc, want ...string) {
	p.t.Helper()
	left := map[string]bool{}
	for _, w := range want {
		left[w] = true
	}
	p.waitFor(eventWait, strings.Join(want, ", "), func(line string) bool {
		delete(left, lineOf(p.t, line))
		return len(left) == 0
	})
}

// checkPrinted fails unless the events p printed, p having ended, are exactly want, in
// any order; it returns them as printed.
func checkPrinted(t *testing.T, p *proc, run string, want ...string) []clusterEnvelope {
	t.Helper()
	lines := p.Lines()
	var got []string
	for _, line := range lines {
		got = append(got, lineOf(t, line))
	}
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s printed %d events:\n  %s\nwant exactly:\n  %s\nstderr:\n%s", run, len(got), strings.Join(got, "\n  "), strings.Join(want, "\n  "), p.Stderr())
	}
	return parseClusterEvents(t, lines)
}

// stopped interrupts p (Ctrl-C) and fails unless it exits with code.
func stopped(t *testing.T, p *proc, run string, code int) {
	t.Helper()
	if _, got := p.interrupt(30 * time.Second); got != code {
		t.Fatalf("%s: exit %d after Ctrl-C, want %d; stderr:\n%s", run, got, code, p.Stderr())
	}
}

// ended waits for p to end by itself and fails unless it exits with code.
func ended(t *testing.T, p *proc, run string, code int) {
	t.Helper()
	if _, got := p.wait(eventWait); got != code {
		t.Fatalf("%s: exit %d, want %d; stderr:\n%s", run, got, code, p.Stderr())
	}
}

// resumedTimes matches stderr once it says n times that a watch resumed from ckpt.
func resumedTimes(ckpt string, n int) *regexp.Regexp {
	one := `resumed configmaps from ` + regexp.QuoteMeta(ckpt) + ` `
	return regexp.MustCompile(`(?s)` + strings.Repeat(one+`.*`, n-1) + one)
}

// marker creates the ConfigMap "marker" in ns of cluster c once p's resumed start is
// done (its "resumed" lines said), and waits until p printed it: whatever that start
// emits is printed before (one sequence, delivered in order).
func marker(t *testing.T, p *proc, c kubernetes.Interface, cluster, ns string) {
	t.Helper()
	changeCM(t, c, ns, "marker", "v1", true)
	waitEvents(p, evLine(cluster, ns, "ADDED", "marker"))
}

// leaderArgs are --leader-elect's flags with the short lease of the HA tests, the Lease
// in ns.
func leaderArgs(ns string) []string {
	return []string{"--leader-elect", "--leader-elect-namespace", ns, "--leader-elect-name", "combinations",
		"--leader-elect-lease-duration", haLease.String(), "--leader-elect-renew-deadline", haRenew.String(),
		"--leader-elect-retry-period", haRetry.String()}
}

// noData fails if an event's object (or the checkpoint) carries the ConfigMap's data,
// which --metadata-only leaves out.
func noData(t *testing.T, what string, raw []byte) {
	t.Helper()
	if strings.Contains(string(raw), `"data":{`) {
		t.Errorf("%s holds data, which --metadata-only leaves out: %s", what, raw)
	}
}

// Several namespaces.

// -n a,b in two clusters: the objects of both namespaces in each cluster, tagged with
// their cluster, their changes, and nothing of a namespace not given.
func pairNamespacesClusters(t *testing.T) {
	second, kc := twoClusters(t)
	a, b, c := newNamespace(t), newNamespace(t), newNamespace(t)
	clusters := map[string]kubernetes.Interface{"one": client, "two": second.client}
	var added, modified []string
	for _, ns := range []string{a, b, c} {
		second.namespaceIn(t, ns)
		for name, cl := range clusters {
			changeCM(t, cl, ns, "x", "v1", true)
			if ns != c {
				added = append(added, evLine(name, ns, "ADDED", "x"))
				modified = append(modified, evLine(name, ns, "MODIFIED", "x"))
			}
		}
	}
	s := startKubeevents(t, "watch", "configmaps", "-n", a+","+b, "-l", resumeLabel, "-o", "json", "--kubeconfig", kc, "--context", "one,two")
	waitEvents(s, added...)
	for _, ns := range []string{a, b, c} {
		for _, cl := range clusters {
			changeCM(t, cl, ns, "x", "v2", false)
		}
	}
	waitEvents(s, modified...)
	stopped(t, s, "-n a,b --context one,two", 0)
	checkPrinted(t, s, "-n a,b --context one,two", append(added, modified...)...)
}

// -n a,b with --resume: a restart emits exactly what changed in both namespaces while
// kubeevents was down (same names in each), and nothing for the unchanged.
func pairNamespacesResume(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	var added, changed []string
	for _, ns := range []string{a, b} {
		for _, name := range []string{"keep", "change", "remove"} {
			changeCM(t, client, ns, name, "v1", true)
			added = append(added, evLine("", ns, "ADDED", name))
		}
	}
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	args := []string{"watch", "configmaps", "-n", a + "," + b, "-l", resumeLabel, "-o", "json", "--resume", ckpt, "-v=1"}
	first := startKubeevents(t, args...)
	waitEvents(first, added...)
	stopped(t, first, "first run", 0)
	checkPrinted(t, first, "first run", added...)

	for _, ns := range []string{a, b} {
		changeCM(t, client, ns, "change", "v2", false)
		changeCM(t, client, ns, "remove", "-", false)
		changeCM(t, client, ns, "new", "v1", true)
		changed = append(changed, evLine("", ns, "MODIFIED", "change"), evLine("", ns, "DELETED", "remove"), evLine("", ns, "ADDED", "new"))
	}
	second := startKubeevents(t, args...)
	second.waitStderr(eventWait, resumedTimes(ckpt, 2))
	marker(t, second, client, "", b)
	stopped(t, second, "resumed run", 0)
	checkPrinted(t, second, "the run resumed after 3 changes in each namespace", append(changed, evLine("", b, "ADDED", "marker"))...)
}

// -n a,b in the view: a NAMESPACE column, both namespaces' objects, one made after the
// start, and nothing of a namespace not given.
func pairNamespacesUI(t *testing.T) {
	a, b, c := newNamespace(t), newNamespace(t), newNamespace(t)
	for _, ns := range []string{a, b, c} {
		changeCM(t, client, ns, "in-"+ns, "v1", true)
	}
	u := kubeevents(t).Screen(200, 20).Start("watch", "configmaps", "-n", a+","+b, "-l", resumeLabel, "--ui").screen
	u.waitScreen(eventWait, "both namespaces' ConfigMaps under a NAMESPACE column", func() bool {
		return u.has("NAMESPACE", "NAME", "DATA") && u.has(a, "in-"+a) && u.has(b, "in-"+b)
	})
	changeCM(t, client, b, "later", "v1", true)
	u.waitScreen(eventWait, "the ConfigMap made after the start", func() bool { return u.has(b, "later") })
	if u.has("in-" + c) {
		t.Errorf("the view shows the ConfigMap of %s, a namespace not given:\n%s", c, u)
	}
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit %d, want 0", code)
	}
	u.checkRestored()
}

// -n a,b with --leader-elect: only the leader streams, both namespaces; once it stops,
// the standby leads and streams both.
func pairNamespacesLeaderElect(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	args := append([]string{"watch", "configmaps", "-n", a + "," + b, "-l", resumeLabel, "-o", "json", "-v=1"}, leaderArgs(a)...)
	one := startKubeevents(t, args...)
	one.waitStderr(eventWait, leadingRe)
	two := startKubeevents(t, args...)
	two.waitStderr(eventWait, standingByRe)
	changeCM(t, client, a, "x", "v1", true)
	changeCM(t, client, b, "x", "v1", true)
	added := []string{evLine("", a, "ADDED", "x"), evLine("", b, "ADDED", "x")}
	waitEvents(one, added...)
	stopped(t, one, "the leader", 0)
	two.waitStderr(eventWait, leadingRe)
	waitEvents(two, added...)
	changeCM(t, client, a, "x", "v2", false)
	changeCM(t, client, b, "x", "v2", false)
	modified := []string{evLine("", a, "MODIFIED", "x"), evLine("", b, "MODIFIED", "x")}
	waitEvents(two, modified...)
	stopped(t, two, "the standby that took over", 0)
	checkPrinted(t, one, "the first leader", added...)
	checkPrinted(t, two, "the standby, once it led", append(added, modified...)...)
}

// -n a,b with --until: a change in a does not meet a condition on b; b's does, and the
// run ends 0 after printing it.
func pairNamespacesUntil(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	changeCM(t, client, a, "x", "v1", true)
	changeCM(t, client, b, "x", "v1", true)
	s := startKubeevents(t, "watch", "configmaps", "-n", a+","+b, "-l", resumeLabel, "-o", "json",
		"--until", fmt.Sprintf(`.type == "MODIFIED" and .object.metadata.namespace == %q`, b))
	waitEvents(s, evLine("", a, "ADDED", "x"), evLine("", b, "ADDED", "x"))
	changeCM(t, client, a, "x", "v2", false)
	waitEvents(s, evLine("", a, "MODIFIED", "x"))
	changeCM(t, client, b, "x", "v2", false)
	ended(t, s, "--until met in "+b, 0)
	evs := checkPrinted(t, s, "--until met in "+b, evLine("", a, "ADDED", "x"), evLine("", b, "ADDED", "x"),
		evLine("", a, "MODIFIED", "x"), evLine("", b, "MODIFIED", "x"))
	if last := evs[len(evs)-1]; last.Type != "MODIFIED" || last.meta().Metadata.Namespace != b {
		t.Errorf("the last event is %s in %s, want the MODIFIED in %s that met --until", last.Type, last.meta().Metadata.Namespace, b)
	}
}

// -n a,b with --until-deleted: web gone from a is not enough (the run goes on, and
// prints b's change); gone from both, exit 0.
func pairNamespacesUntilDeleted(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	changeCM(t, client, a, "web", "v1", true)
	changeCM(t, client, b, "web", "v1", true)
	s := startKubeevents(t, "watch", "configmaps", "web", "-n", a+","+b, "--until-deleted", "-o", "json")
	waitEvents(s, evLine("", a, "ADDED", "web"), evLine("", b, "ADDED", "web"))
	changeCM(t, client, a, "web", "-", false)
	waitEvents(s, evLine("", a, "DELETED", "web"))
	changeCM(t, client, b, "web", "v2", false)
	waitEvents(s, evLine("", b, "MODIFIED", "web"))
	changeCM(t, client, b, "web", "-", false)
	ended(t, s, "web deleted from both namespaces", 0)
	checkPrinted(t, s, "--until-deleted", evLine("", a, "ADDED", "web"), evLine("", b, "ADDED", "web"),
		evLine("", a, "DELETED", "web"), evLine("", b, "MODIFIED", "web"), evLine("", b, "DELETED", "web"))
}

// -n a,b with --until-ready: the name is waited for in each namespace (a ConfigMap is
// Current once it exists): with it in a alone the run times out saying one is not seen;
// once b has it too, the run ends 0.
func pairNamespacesUntilReady(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	changeCM(t, client, a, "web", "v1", true)
	early := runKubeevents(t, eventWait, "watch", "configmaps", "web", "-n", a+","+b, "--until-ready", "--timeout", "3s", "-o", "json")
	if early.code != 3 || !strings.Contains(early.stderr, "timed out after 3s before --until-ready was met (1 not seen)") {
		t.Errorf("web in %s alone: exit %d, stderr %q; want 3, one not seen", a, early.code, early.stderr)
	}
	s := startKubeevents(t, "watch", "configmaps", "web", "-n", a+","+b, "--until-ready", "--timeout", "60s", "-o", "json")
	waitEvents(s, evLine("", a, "ADDED", "web"))
	changeCM(t, client, b, "web", "v1", true)
	ended(t, s, "web ready in both namespaces", 0)
	checkPrinted(t, s, "--until-ready", evLine("", a, "ADDED", "web"), evLine("", b, "ADDED", "web"))
}

// -n a,b with --watch-only: neither namespace's existing objects, both namespaces'
// changes.
func pairNamespacesWatchOnly(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	changeCM(t, client, a, "x", "v1", true)
	changeCM(t, client, b, "x", "v1", true)
	s := startKubeevents(t, "watch", "configmaps", "-n", a+","+b, "-l", resumeLabel, "-o", "json", "--watch-only", "-v=1")
	s.waitStderr(eventWait, literal("configmaps in "+a+", "+b+" listed (not shown: --watch-only); changes from here on are shown"))
	changeCM(t, client, a, "x", "v2", false)
	changeCM(t, client, b, "x", "v2", false)
	changeCM(t, client, b, "new", "v1", true)
	want := []string{evLine("", a, "MODIFIED", "x"), evLine("", b, "MODIFIED", "x"), evLine("", b, "ADDED", "new")}
	waitEvents(s, want...)
	stopped(t, s, "--watch-only", 0)
	checkPrinted(t, s, "--watch-only", want...)
}

// -n a,b with --metadata-only: both namespaces' events, objects without their data; a
// label's change is in the diff, a data change is an event with an empty diff.
func pairNamespacesMetadataOnly(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	changeCM(t, client, a, "x", "v1", true)
	changeCM(t, client, b, "x", "v1", true)
	s := startKubeevents(t, "watch", "configmaps", "-n", a+","+b, "-l", resumeLabel, "-o", "json", "--metadata-only")
	waitEvents(s, evLine("", a, "ADDED", "x"), evLine("", b, "ADDED", "x"))
	changeCM(t, client, a, "x", `{"metadata":{"labels":{"tier":"web"}}}`, false)
	changeCM(t, client, b, "x", "v2", false)
	waitEvents(s, evLine("", a, "MODIFIED", "x"), evLine("", b, "MODIFIED", "x"))
	stopped(t, s, "--metadata-only", 0)
	evs := checkPrinted(t, s, "--metadata-only", evLine("", a, "ADDED", "x"), evLine("", b, "ADDED", "x"),
		evLine("", a, "MODIFIED", "x"), evLine("", b, "MODIFIED", "x"))
	for _, ev := range evs {
		noData(t, ev.Type+" "+ev.meta().Metadata.Namespace, ev.Object)
		if ev.Type != "MODIFIED" {
			continue
		}
		var paths []string
		for _, op := range ev.Diff {
			paths = append(paths, op.Path)
		}
		want := map[string][]string{a: {"/metadata/labels/tier"}, b: nil}[ev.meta().Metadata.Namespace]
		if !slices.Equal(paths, want) {
			t.Errorf("MODIFIED in %s: diff %v, want %v", ev.meta().Metadata.Namespace, paths, want)
		}
	}
}

// replay -n a,b of a recording that a watch of -n a,b,c made: a's and b's events, in
// the order recorded, none of c's.
func pairNamespacesReplay(t *testing.T) {
	a, b, c := newNamespace(t), newNamespace(t), newNamespace(t)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	recorder := startKubeevents(t, "watch", "configmaps", "-n", a+","+b+","+c, "-l", resumeLabel, "--no-screen", "--sink", "file="+path, "-v=1", "--watch-only")
	// Listed first: a change made during the initial list would fold into its ADDED.
	recorder.waitStderr(eventWait, literal("listed (not shown: --watch-only)"))
	for _, ns := range []string{a, b, c} {
		changeCM(t, client, ns, "x", "v1", true)
	}
	changeCM(t, client, a, "x", "v2", false)
	for _, ns := range []string{a, b, c} {
		waitRecorded(t, recorder, path, "x in "+ns, recorded(evLine("", ns, "ADDED", "x")))
	}
	waitRecorded(t, recorder, path, "x's change in "+a, recorded(evLine("", a, "MODIFIED", "x")))
	stopped(t, recorder, "the recording watch", 0)

	r := runKubeevents(t, 30*time.Second, "replay", path, "-n", a+","+b, "-o", "json")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		got = append(got, lineOf(t, line))
	}
	want := []string{evLine("", a, "ADDED", "x"), evLine("", b, "ADDED", "x"), evLine("", a, "MODIFIED", "x")}
	sort.Strings(got)
	sort.Strings(want)
	if r.code != 0 || r.stderr != "" || !slices.Equal(got, want) {
		t.Errorf("replay -n a,b: exit %d, events %q, want %q; stderr %q", r.code, got, want, r.stderr)
	}
}

// Several clusters.

// --context one,two with --resume: a restart emits exactly what changed in each
// cluster while kubeevents was down, tagged with its cluster.
func pairClustersResume(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	clusters := map[string]kubernetes.Interface{"one": client, "two": second.client}
	var added, changed []string
	for cluster, c := range clusters {
		for _, name := range []string{"keep", "change", "remove"} {
			changeCM(t, c, ns, name, "v1", true)
			added = append(added, evLine(cluster, ns, "ADDED", name))
		}
	}
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	args := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--kubeconfig", kc, "--context", "one,two", "--resume", ckpt, "-v=1"}
	first := startKubeevents(t, args...)
	waitEvents(first, added...)
	stopped(t, first, "first run", 0)
	checkPrinted(t, first, "first run", added...)

	for cluster, c := range clusters {
		changeCM(t, c, ns, "change", "v2", false)
		changeCM(t, c, ns, "remove", "-", false)
		changeCM(t, c, ns, "new", "v1", true)
		changed = append(changed, evLine(cluster, ns, "MODIFIED", "change"), evLine(cluster, ns, "DELETED", "remove"), evLine(cluster, ns, "ADDED", "new"))
	}
	again := startKubeevents(t, args...)
	again.waitStderr(eventWait, resumedTimes(ckpt, 2))
	marker(t, again, second.client, "two", ns)
	stopped(t, again, "resumed run", 0)
	checkPrinted(t, again, "the run resumed after 3 changes in each cluster", append(changed, evLine("two", ns, "ADDED", "marker"))...)
}

// Two clusters in the view: a CLUSTER column, each cluster's objects, one made in the
// second after the start.
func pairClustersUI(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	changeCM(t, client, ns, "in-one", "v1", true)
	changeCM(t, second.client, ns, "in-two", "v1", true)
	u := kubeevents(t).Screen(160, 20).Start("--kubeconfig", kc, "watch", "configmaps", "-n", ns, "-l", resumeLabel, "--context", "one,two", "--ui").screen
	u.waitScreen(eventWait, "both clusters' ConfigMaps under a CLUSTER column", func() bool {
		return u.has("CLUSTER", "NAME", "DATA") && u.has("one", "in-one") && u.has("two", "in-two")
	})
	changeCM(t, second.client, ns, "later", "v1", true)
	u.waitScreen(eventWait, "the ConfigMap made in two after the start", func() bool { return u.has("two", "later") })
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit %d, want 0", code)
	}
	u.checkRestored()
}

// --context one,two with --until: a change in one does not meet a condition on two;
// two's does, and the run ends 0 after printing it.
func pairClustersUntil(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	changeCM(t, client, ns, "x", "v1", true)
	changeCM(t, second.client, ns, "x", "v1", true)
	s := startKubeevents(t, "watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--kubeconfig", kc, "--context", "one,two",
		"--until", `.type == "MODIFIED" and .cluster == "two"`)
	waitEvents(s, evLine("one", ns, "ADDED", "x"), evLine("two", ns, "ADDED", "x"))
	changeCM(t, client, ns, "x", "v2", false)
	waitEvents(s, evLine("one", ns, "MODIFIED", "x"))
	changeCM(t, second.client, ns, "x", "v2", false)
	ended(t, s, "--until met in two", 0)
	evs := checkPrinted(t, s, "--until met in two", evLine("one", ns, "ADDED", "x"), evLine("two", ns, "ADDED", "x"),
		evLine("one", ns, "MODIFIED", "x"), evLine("two", ns, "MODIFIED", "x"))
	if last := evs[len(evs)-1]; last.Type != "MODIFIED" || clusterOf(last) != "two" {
		t.Errorf("the last event is %s of cluster %s, want the MODIFIED of two that met --until", last.Type, clusterOf(last))
	}
}

// --context one,two with --until-ready: the name is waited for in each cluster: with it
// in one alone the run times out saying one is not seen; once two has it too, the run
// ends 0.
func pairClustersUntilReady(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	changeCM(t, client, ns, "web", "v1", true)
	args := []string{"watch", "configmaps", "web", "-n", ns, "-o", "json", "--kubeconfig", kc, "--context", "one,two", "--until-ready"}
	early := runKubeevents(t, eventWait, append(args, "--timeout", "3s")...)
	if early.code != 3 || !strings.Contains(early.stderr, "timed out after 3s before --until-ready was met (1 not seen)") {
		t.Errorf("web in one alone: exit %d, stderr %q; want 3, one not seen", early.code, early.stderr)
	}
	s := startKubeevents(t, append(args, "--timeout", "60s")...)
	waitEvents(s, evLine("one", ns, "ADDED", "web"))
	changeCM(t, second.client, ns, "web", "v1", true)
	ended(t, s, "web ready in both clusters", 0)
	checkPrinted(t, s, "--until-ready", evLine("one", ns, "ADDED", "web"), evLine("two", ns, "ADDED", "web"))
}

// --context one,two with --watch-only: neither cluster's existing objects, both
// clusters' changes.
func pairClustersWatchOnly(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	clusters := map[string]kubernetes.Interface{"one": client, "two": second.client}
	for _, c := range clusters {
		changeCM(t, c, ns, "x", "v1", true)
	}
	s := startKubeevents(t, "watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--kubeconfig", kc, "--context", "one,two", "--watch-only", "-v=1")
	s.waitStderr(eventWait, literal("configmaps in "+ns+", in clusters one, two listed (not shown: --watch-only); changes from here on are shown"))
	var want []string
	for cluster, c := range clusters {
		changeCM(t, c, ns, "x", "v2", false)
		want = append(want, evLine(cluster, ns, "MODIFIED", "x"))
	}
	waitEvents(s, want...)
	stopped(t, s, "--watch-only", 0)
	checkPrinted(t, s, "--watch-only", want...)
}

// --context one,two with --metadata-only: both clusters' events, objects without their
// data, a label's change in the diff.
func pairClustersMetadataOnly(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	clusters := map[string]kubernetes.Interface{"one": client, "two": second.client}
	var added, modified []string
	for cluster, c := range clusters {
		changeCM(t, c, ns, "x", "v1", true)
		added = append(added, evLine(cluster, ns, "ADDED", "x"))
		modified = append(modified, evLine(cluster, ns, "MODIFIED", "x"))
	}
	s := startKubeevents(t, "watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--kubeconfig", kc, "--context", "one,two", "--metadata-only")
	waitEvents(s, added...)
	for _, c := range clusters {
		changeCM(t, c, ns, "x", `{"metadata":{"labels":{"tier":"web"}}}`, false)
	}
	waitEvents(s, modified...)
	stopped(t, s, "--metadata-only", 0)
	for _, ev := range checkPrinted(t, s, "--metadata-only", append(added, modified...)...) {
		noData(t, ev.Type+" of cluster "+clusterOf(ev), ev.Object)
		if ev.Type == "MODIFIED" && (len(ev.Diff) != 1 || ev.Diff[0].Path != "/metadata/labels/tier") {
			t.Errorf("MODIFIED of cluster %s: diff %+v, want the label added", clusterOf(ev), ev.Diff)
		}
	}
}

// replay --cluster of a recording that a watch of --context one,two made: the events of
// the clusters named, tagged with their cluster.
func pairClustersReplay(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	recorder := startKubeevents(t, "watch", "configmaps", "-n", ns, "-l", resumeLabel, "--kubeconfig", kc, "--context", "one,two",
		"--no-screen", "--sink", "file="+path, "-v=1", "--watch-only")
	// Listed first: a change made during the initial list would fold into its ADDED.
	recorder.waitStderr(eventWait, literal("listed (not shown: --watch-only)"))
	changeCM(t, client, ns, "a", "v1", true)
	changeCM(t, second.client, ns, "b", "v1", true)
	changeCM(t, second.client, ns, "b", "v2", false)
	for _, want := range []string{evLine("one", ns, "ADDED", "a"), evLine("two", ns, "ADDED", "b"), evLine("two", ns, "MODIFIED", "b")} {
		waitRecorded(t, recorder, path, want, recorded(want))
	}
	stopped(t, recorder, "the recording watch", 0)

	for _, c := range []struct {
		clusters string
		want     []string
	}{
		{"two", []string{evLine("two", ns, "ADDED", "b"), evLine("two", ns, "MODIFIED", "b")}},
		{"one,two", []string{evLine("one", ns, "ADDED", "a"), evLine("two", ns, "ADDED", "b"), evLine("two", ns, "MODIFIED", "b")}},
	} {
		r := runKubeevents(t, 30*time.Second, "replay", path, "--cluster", c.clusters, "-o", "json")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			got = append(got, lineOf(t, line))
		}
		sort.Strings(got)
		sort.Strings(c.want)
		if r.code != 0 || r.stderr != "" || !slices.Equal(got, c.want) {
			t.Errorf("replay --cluster %s: exit %d, events %q, want %q; stderr %q", c.clusters, r.code, got, c.want, r.stderr)
		}
	}
}

// --resume.

// --resume in the view: the view shows every object as it is now, after a restart too
// (the unchanged ones among them), while a sink beside it is given only what changed
// while kubeevents was down; the checkpoint is written.
func pairResumeUI(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"cm-keep", "cm-change", "cm-remove"} {
		changeCM(t, client, ns, name, "v1", true)
	}
	dir := t.TempDir()
	ckpt, file := filepath.Join(dir, "kubeevents.ckpt"), filepath.Join(dir, "events.jsonl")
	args := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "--ui", "--resume", ckpt, "--sink", "file=" + file}
	u := kubeevents(t).Screen(160, 20).Start(args...).screen
	u.waitScreen(eventWait, "the three ConfigMaps", func() bool { return u.has("cm-keep") && u.has("cm-change") && u.has("cm-remove") })
	waitUntil(t, nil, 15*time.Second, "the checkpoint written with the three ConfigMaps", func() bool { return len(checkpointed(t, ckpt)) == 3 })
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Fatalf("q: exit %d, want 0", code)
	}
	u.checkRestored()

	changeCM(t, client, ns, "cm-change", "v2", false)
	changeCM(t, client, ns, "cm-remove", "-", false)
	changeCM(t, client, ns, "cm-new", "v1", true)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	u = kubeevents(t).Screen(160, 20).Start(args...).screen
	u.waitScreen(eventWait, "cm-change and cm-new", func() bool { return u.has("cm-change") && u.has("cm-new") })
	// The view may show every object only once it has them all: it is not the first
	// change that must bring cm-keep, it is the listing that must have.
	u.waitScreen(eventWait, "cm-keep, unchanged since the checkpoint, with the others: 3 objects", func() bool {
		return u.has("cm-keep") && strings.Contains(u.lines()[0], "3 objects")
	})
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit %d, want 0", code)
	}
	u.checkRestored()
	var sunk []string
	for _, line := range readLines(t, file, true) {
		sunk = append(sunk, lineOf(t, line))
	}
	sort.Strings(sunk)
	if want := []string{evLine("", ns, "ADDED", "cm-new"), evLine("", ns, "DELETED", "cm-remove"), evLine("", ns, "MODIFIED", "cm-change")}; !slices.Equal(sunk, want) {
		t.Errorf("the file sink beside the view was given %q, want exactly what changed: %q", sunk, want)
	}
	if got := checkpointed(t, ckpt); len(got) != 3 || got["cm-remove"] != "" || got["cm-new"] == "" {
		t.Errorf("the checkpoint holds %v, want cm-keep, cm-change and cm-new", got)
	}
}

// --resume with --leader-elect: the leader writes the checkpoint (in a Secret, as the
// chart keeps it); stopped, then started again, it leads and emits exactly what changed
// meanwhile.
func pairResumeLeaderElect(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"keep", "change", "remove"} {
		changeCM(t, client, ns, name, "v1", true)
	}
	store := &haRelease{ns: ns, checkpoint: "combinations-checkpoint"}
	args := append([]string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "-v=1",
		"--resume", "secret:" + ns + "/" + store.checkpoint}, leaderArgs(ns)...)
	first := startKubeevents(t, args...)
	first.waitStderr(eventWait, leadingRe)
	waitEvents(first, evLine("", ns, "ADDED", "keep"), evLine("", ns, "ADDED", "change"), evLine("", ns, "ADDED", "remove"))
	changeCM(t, client, ns, "keep", "v2", false)
	waitEvents(first, evLine("", ns, "MODIFIED", "keep"))
	list, err := client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: resumeLabel})
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]string{}
	for _, cm := range list.Items {
		now[cm.Name] = cm.ResourceVersion
	}
	waitUntil(t, first, 15*time.Second, "the leader's checkpoint holding every ConfigMap as it is now", func() bool { return checkpointHas(t, store, now) })
	first.signal(syscall.SIGTERM)
	ended(t, first, "the leader stopped with SIGTERM", 0)

	changeCM(t, client, ns, "change", "v2", false)
	changeCM(t, client, ns, "remove", "-", false)
	changeCM(t, client, ns, "new", "v1", true)
	again := startKubeevents(t, args...)
	again.waitStderr(eventWait, leadingRe)
	again.waitStderr(eventWait, resumedTimes("secret:"+ns+"/"+store.checkpoint, 1))
	marker(t, again, client, "", ns)
	stopped(t, again, "the leader restarted", 0)
	checkPrinted(t, again, "the leader restarted after 3 changes", evLine("", ns, "MODIFIED", "change"), evLine("", ns, "DELETED", "remove"),
		evLine("", ns, "ADDED", "new"), evLine("", ns, "ADDED", "marker"))
}

// --resume with --until: the run that met the condition checkpointed the event that met
// it; the restart emits only what changed since, and meets its own condition.
func pairResumeUntil(t *testing.T) {
	ns := newNamespace(t)
	changeCM(t, client, ns, "x", "v1", true)
	changeCM(t, client, ns, "y", "v1", true)
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	args := func(until string) []string {
		return []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt, "-v=1",
			"--until", fmt.Sprintf(`.object.data.k == %q`, until)}
	}
	first := startKubeevents(t, args("stop-1")...)
	waitEvents(first, evLine("", ns, "ADDED", "x"), evLine("", ns, "ADDED", "y"))
	changeCM(t, client, ns, "x", "stop-1", false)
	ended(t, first, "--until met", 0)
	checkPrinted(t, first, "--until met", evLine("", ns, "ADDED", "x"), evLine("", ns, "ADDED", "y"), evLine("", ns, "MODIFIED", "x"))

	changeCM(t, client, ns, "y", "v2", false)
	again := startKubeevents(t, args("stop-2")...)
	again.waitStderr(eventWait, resumedTimes(ckpt, 1))
	waitEvents(again, evLine("", ns, "MODIFIED", "y"))
	changeCM(t, client, ns, "x", "stop-2", false)
	ended(t, again, "--until met after the restart", 0)
	checkPrinted(t, again, "the restart (x checkpointed as it met --until, y changed since)", evLine("", ns, "MODIFIED", "y"), evLine("", ns, "MODIFIED", "x"))
}

// --resume with --until-deleted: interrupted before it is met, exit 3 and a checkpoint;
// a name deleted while kubeevents was down comes as DELETED at the restart, and the run
// ends 0 once the other is deleted too.
func pairResumeUntilDeleted(t *testing.T) {
	ns := newNamespace(t)
	changeCM(t, client, ns, "web", "v1", true)
	changeCM(t, client, ns, "api", "v1", true)
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	args := []string{"watch", "configmaps", "web", "api", "-n", ns, "-o", "json", "--resume", ckpt, "--until-deleted", "-v=1"}
	first := startKubeevents(t, args...)
	waitEvents(first, evLine("", ns, "ADDED", "web"), evLine("", ns, "ADDED", "api"))
	stopped(t, first, "interrupted before --until-deleted was met", 3)

	changeCM(t, client, ns, "api", "-", false)
	changeCM(t, client, ns, "web", "v2", false)
	again := startKubeevents(t, args...)
	again.waitStderr(eventWait, resumedTimes(ckpt, 1))
	waitEvents(again, evLine("", ns, "DELETED", "api"), evLine("", ns, "MODIFIED", "web"))
	changeCM(t, client, ns, "web", "-", false)
	ended(t, again, "both deleted", 0)
	checkPrinted(t, again, "the restart", evLine("", ns, "DELETED", "api"), evLine("", ns, "MODIFIED", "web"), evLine("", ns, "DELETED", "web"))
}

// --resume with --metadata-only: the checkpoint keeps no data; a restart emits what
// changed while down as a live --metadata-only watch would have (a label in the diff, a
// data change with an empty one).
func pairResumeMetadataOnly(t *testing.T) {
	ns := newNamespace(t)
	var added []string
	for _, name := range []string{"keep", "label", "data", "remove"} {
		changeCM(t, client, ns, name, "v1", true)
		added = append(added, evLine("", ns, "ADDED", name))
	}
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	args := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--metadata-only", "--resume", ckpt, "-v=1"}
	first := startKubeevents(t, args...)
	waitEvents(first, added...)
	stopped(t, first, "first run", 0)
	noData(t, "the checkpoint", mustRead(t, ckpt))

	changeCM(t, client, ns, "label", `{"metadata":{"labels":{"tier":"web"}}}`, false)
	changeCM(t, client, ns, "data", "v2", false)
	changeCM(t, client, ns, "remove", "-", false)
	again := startKubeevents(t, args...)
	again.waitStderr(eventWait, resumedTimes(ckpt, 1))
	marker(t, again, client, "", ns)
	stopped(t, again, "resumed run", 0)
	evs := checkPrinted(t, again, "the restart", evLine("", ns, "MODIFIED", "label"), evLine("", ns, "MODIFIED", "data"),
		evLine("", ns, "DELETED", "remove"), evLine("", ns, "ADDED", "marker"))
	for _, ev := range evs {
		noData(t, ev.Type+" "+ev.name(), ev.Object)
		var paths []string
		for _, op := range ev.Diff {
			paths = append(paths, op.Path)
		}
		want := map[string][]string{"label": {"/metadata/labels/tier"}}[ev.name()]
		if ev.Type == "MODIFIED" && !slices.Equal(paths, want) {
			t.Errorf("MODIFIED %s: diff %v, want %v", ev.name(), paths, want)
		}
	}
	noData(t, "the checkpoint", mustRead(t, ckpt))
}

// TestCombinationsRefused: a refused pair of each kind is one line saying what to do,
// exit 2, before anything connects (the contexts given lead nowhere) and before any
// checkpoint is written.
func TestCombinationsRefused(t *testing.T) {
	nowhere := clientcmdapi.NewConfig()
	nowhere.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true} // nothing listens there
	nowhere.AuthInfos["gone"] = &clientcmdapi.AuthInfo{Token: "none"}
	for _, name := range []string{"one", "two"} {
		nowhere.Contexts[name] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "gone", Namespace: "default"}
	}
	nowhere.CurrentContext = "one"
	dir := t.TempDir()
	kc, ckpt := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "kubeevents.ckpt")
	if err := clientcmd.WriteToFile(*nowhere, kc); err != nil {
		t.Fatal(err)
	}
	recording := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(recording, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pair string
		args []string
		want string
	}{
		{"several namespaces × --owned", []string{"watch", "deploy/web", "-n", "a,b", "--owned"},
			"--owned follows one object in one namespace, but -n names 2 (a,b); give one namespace"},
		{"several clusters × --leader-elect", []string{"watch", "configmaps", "--context", "one,two", "--leader-elect"},
			"--leader-elect takes one cluster, the one whose Lease it holds; drop --context's list or --all-contexts"},
		{"--resume × --watch-only", []string{"watch", "configmaps", "--resume", ckpt, "--watch-only"},
			"--resume and --watch-only do not go together: a resumed start emits what changed while kubeevents was down, which --watch-only leaves out; drop one"},
		{"--ui × --leader-elect", []string{"watch", "configmaps", "--ui", "--leader-elect"},
			"--ui is a view for a person at a terminal, --leader-elect is for replicas in a cluster; drop one"},
		{"--until × --until-rollout", []string{"watch", "deploy/web", "--owned", "--until-rollout", "--until", ".x"},
			"--until-rollout cannot be combined with --until or --until-deleted: give one condition"},
		// replay has none of a live watch's flags.
		{"--resume × replay", []string{"replay", recording, "--resume", ckpt}, "unknown flag: --resume"},
	} {
		r := runKubeevents(t, 30*time.Second, append(c.args, "--kubeconfig", kc)...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want exit 2 and nothing", c.pair, r.code, r.stdout)
		}
		checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: `+regexp.QuoteMeta(c.want)+`$`))
	}
	if _, err := os.Stat(ckpt); err == nil {
		t.Errorf("a refused run wrote the checkpoint %s", ckpt)
	}
}
