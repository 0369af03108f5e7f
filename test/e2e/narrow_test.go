package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// top on a 20x5 terminal: a name is shortened, never a count (21 changes of a label
// shown as 2).
func TestTopNarrowTerminalKeepsNumbers(t *testing.T) {
	const cols, changes = 20, 21
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{"round": "start"}}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := kubeevents(t).Terminal(cols, 5).Start("top", "configmaps", "-n", ns, "--interval", "500ms", "--color", "never", "-v=1")
	p.waitStderr(eventWait, literal("changes from here on are shown"))
	for i := range changes {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"round":"r%d"}}}`, i)
		if _, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "settings", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A frame's line, without its control sequences (cursor home and hidden, "clear to
	// the end of the line").
	csi := regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)
	clean := func(l string) string { return strings.TrimRight(csi.ReplaceAllString(l, ""), " ") }
	count := regexp.MustCompile(`\s(\d+)$`)
	row := p.waitFor(eventWait, fmt.Sprintf("the label's row with its %d changes", changes), func(l string) bool {
		m := count.FindStringSubmatch(clean(l))
		return strings.Contains(l, "round") && m != nil && m[1] == fmt.Sprint(changes)
	})
	if !strings.Contains(row, "…") {
		t.Errorf("the field's row %q: want its name shortened to fit %d columns", clean(row), cols)
	}
	for _, l := range p.Seen() {
		if n := len([]rune(clean(l))); n > cols {
			t.Errorf("a line of %d columns on a %d-column terminal: %q", n, cols, clean(l))
		}
	}
	if _, code := p.interrupt(eventWait); code != 0 {
		t.Errorf("top exited %d on Ctrl-C; stderr:\n%s", code, p.Stderr())
	}
}
