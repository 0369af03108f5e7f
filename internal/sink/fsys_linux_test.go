package sink

import (
	"strings"
	"testing"
)

// A file that cannot be made in /proc says why: not that /proc does not exist.
func TestOpenErrorNamesAVirtualFileSystem(t *testing.T) {
	_, err := OpenFile("/proc/x.jsonl", Rotation{}, t.Errorf)
	if err == nil {
		t.Fatal("OpenFile(/proc/x.jsonl) succeeded")
	}
	want := "cannot open file sink /proc/x.jsonl: directory /proc is on the proc file system, which does not hold ordinary files (choose a directory on disk)"
	if err.Error() != want {
		t.Errorf("OpenFile(/proc/x.jsonl) = %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), "does not exist") {
		t.Errorf("the error blames a missing directory: %v", err)
	}
}
