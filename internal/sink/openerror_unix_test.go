//go:build unix

package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A link into a directory that does not exist says so, naming the link's target.
func TestOpenErrorThroughADanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "events.jsonl")
	target := filepath.Join(dir, "gone", "events.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, err := OpenFile(link, Rotation{}, t.Errorf)
	if err == nil || !strings.Contains(err.Error(), "symbolic link to "+target) {
		t.Errorf("OpenFile through a dangling link = %v; want it to name the link's target", err)
	}
}
