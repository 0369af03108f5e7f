package complete

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every change to cobra's bash script applies, with descriptions and without: a cobra
// upgrade that changes the script fails here rather than in a user's shell.
func TestPatchBashCompletion(t *testing.T) {
	root := &cobra.Command{Use: "kubeevents"}
	root.AddCommand(&cobra.Command{Use: "watch", Run: func(*cobra.Command, []string) {}})
	for _, descriptions := range []bool{true, false} {
		var b bytes.Buffer
		if err := Script(root, "bash", &b, descriptions); err != nil {
			t.Fatalf("descriptions %v: %v", descriptions, err)
		}
		for _, want := range []string{"__kubeevents_unquote", "__kubeevents_quote \"${COMPREPLY[0]", "${compline%%$tab*} == \"$cur\"*"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("descriptions %v: the script lacks %q", descriptions, want)
			}
		}
	}
	if _, err := patchBashCompletion("# not cobra's script", "kubeevents"); err == nil {
		t.Error("patching a script without cobra's lines did not fail")
	}
}
