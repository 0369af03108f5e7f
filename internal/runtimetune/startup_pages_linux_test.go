package runtimetune

import (
	"bufio"
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
func TestReleaseStartupPages(t *testing.T) {
	before := rssFileKB(t)
	ReleaseStartupPages(fastpath.Runtime{NoStartupPages: true})
	if after := rssFileKB(t); before-after >= 1024 {
		t.Errorf("RssFile went from %d kB to %d kB with NoStartupPages: released anyway", before, after)
	}
	before = rssFileKB(t)
	ReleaseStartupPages(fastpath.Runtime{})
	after := rssFileKB(t)
	t.Logf("RssFile %d kB → %d kB", before, after)
	if before-after < 1024 {
		t.Errorf("RssFile went from %d kB to %d kB: the executable's pages were not released", before, after)
	}
}

func rssFileKB(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}
