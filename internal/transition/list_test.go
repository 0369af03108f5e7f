package transition

import (
	"bytes"
	"strings"
	"testing"
)

// `kubeevents on` lists every transition, one aligned line each, the config file's marked.
func TestWriteList(t *testing.T) {
	c, err := NewCatalog(map[string]string{"warning": "# A Warning Event.\n" + `.object.kind == "Event" and .object.type == "Warning"`})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.WriteList(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(shippedOrder)+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(shippedOrder)+1, b.String())
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "warning ") || !strings.HasSuffix(last, "A Warning Event. (config file)") {
		t.Errorf("the config file's transition: %q", last)
	}
	if first := lines[0]; !strings.HasPrefix(first, shippedOrder[0]+" ") || strings.Contains(first, "(config file)") {
		t.Errorf("a shipped transition: %q", first)
	}
}
