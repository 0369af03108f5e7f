package notify

import (
	"bytes"
	"strings"
	"testing"
)

// `kubeevents format` lists every format with its content type, the config file's marked.
func TestWriteList(t *testing.T) {
	c, err := NewCatalog(map[string]string{"plain": "# One line per event.\n# content-type: text/plain\nmap(title) | join(\"\\n\")"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.WriteList(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(Shipped().List())+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(Shipped().List())+1, b.String())
	}
	var plain string
	for _, l := range lines {
		if strings.HasPrefix(l, "plain ") {
			plain = l
		} else if strings.Contains(l, "(config file)") {
			t.Errorf("a shipped format marked as the config file's: %q", l)
		}
	}
	if f := strings.Fields(plain); len(f) < 3 || f[1] != "text/plain" || !strings.HasSuffix(plain, "One line per event. (config file)") {
		t.Errorf("the config file's format: %q", plain)
	}
}
