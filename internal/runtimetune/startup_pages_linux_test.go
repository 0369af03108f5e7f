package runtimetune

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

func TestCleanMappingsOf(t *testing.T) {
	const exe = "/usr/local/bin/kubeevents"
	smaps := `00400000-010ae000 r--p 00000000 fd:01 1234                               /usr/local/bin/kubeevents
Size:              13000 kB
Rss:                2808 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd mr mw me dw sd
010ae000-02a4d000 r-xp 00cae000 fd:01 1234                               /usr/local/bin/kubeevents
Rss:               19740 kB
Shared_Dirty:          0 kB
Private_Dirty:       512 kB
Anonymous:             0 kB
046dc000-046dd000 r--p 042dc000 fd:01 1234                               /usr/local/bin/kubeevents
Rss:                   4 kB
Private_Dirty:         4 kB
Anonymous:             4 kB
046dd000-047cb000 rw-p 042dd000 fd:01 1234                               /usr/local/bin/kubeevents
Rss:                 916 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:01 99                         /usr/lib/libc.so.6
Rss:                 900 kB
Private_Dirty:         0 kB
7f0000200000-7f0000300000 r--p 00000000 fd:01 98                         /usr/local/bin/kubeevents (deleted)
Rss:                 900 kB
Private_Dirty:         0 kB
`
	got := cleanMappingsOf([]byte(smaps), exe)
	want := []mapping{{0x400000, 0x10ae000}, {0x10ae000, 0x2a4d000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("cleanMappingsOf = %x, want %x (dirty file pages included; not the written RELRO page, the writable data, another file)", got, want)
	}
}

// TestReleaseStartupPages checks that the executable's resident pages leave this
// process's RSS (the test binary's, as kubeevents' own), and stay with the piece off.
// It counts the executable's own read-only mappings (smaps), not the process's whole
// RssFile: a small test binary's shared libraries and data would drown the difference.
func TestReleaseStartupPages(t *testing.T) {
	before := exeRssKB(t)
	ReleaseStartupPages(fastpath.Runtime{NoStartupPages: true})
	if after := exeRssKB(t); after < before/2 {
		t.Errorf("the executable's resident pages went from %d kB to %d kB with NoStartupPages: released anyway", before, after)
	}
	before = exeRssKB(t)
	ReleaseStartupPages(fastpath.Runtime{})
	after := exeRssKB(t)
	t.Logf("the executable's resident pages: %d kB → %d kB", before, after)
	// The pages the test and the Go runtime use come back at once (a test binary is
	// small, and much of it is hot: 35–45% of it left in runs here); a release that
	// stopped working leaves them all.
	if released := before - after; released < 256 || released < before/5 {
		t.Errorf("the executable's resident pages went from %d kB to %d kB: not released", before, after)
	}
}

// exeRssKB is the resident size of the executable's read-only mappings.
func exeRssKB(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	total, in := 0, false
	for _, line := range strings.Split(string(smaps), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case !strings.HasSuffix(fields[0], ":"):
			in = len(fields) >= 6 && strings.Join(fields[5:], " ") == exe && !strings.Contains(fields[1], "w")
		case in && fields[0] == "Rss:" && len(fields) >= 2:
			kb, _ := strconv.Atoi(fields[1])
			total += kb
		}
	}
	return total
}
