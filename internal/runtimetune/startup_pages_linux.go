package runtimetune

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

// ReleaseStartupPages takes out of this process's memory the pages of its executable
// (code and read-only data) that are resident; the watch calls it before its informers
// start and again once the initial list is in. Start-up runs the init of every API
// group's types, discovery and the list's decoding: about 40 MB of a 70 MB executable
// is resident after it, most of it never run or read again while watching
// (bench/README.md). The pages stay in the page cache, so the few that the watch uses
// come back with a minor fault; what leaves is RSS the watch does not use.
//
// Only mappings of the executable that are not writable and hold no anonymous page (a
// page written since, copied out of the file) are released: dropping a written page of
// a private mapping would lose what was written (the relocated RELRO page of a PIE
// binary). A dirty page of the file itself (an executable just built, not yet written
// back) is the page cache's and safe to unmap. s.NoStartupPages leaves them.
func ReleaseStartupPages(s fastpath.Runtime) {
	if s.NoStartupPages {
		return
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range cleanMappingsOf(smaps, exe) {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED)
	}
}

type mapping struct{ start, end uintptr }

// cleanMappingsOf are the mappings of path in smaps that are not writable and have no
// anonymous page, in memory or swapped out.
func cleanMappingsOf(smaps []byte, path string) []mapping {
	var (
		out     []mapping
		current *mapping
		clean   bool
	)
	flush := func() {
		if current != nil && clean {
			out = append(out, *current)
		}
		current = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if addresses, ok := strings.CutSuffix(fields[0], ":"); ok {
			// A field of the mapping above: "Anonymous:      0 kB".
			switch addresses {
			case "Anonymous", "Swap":
				if len(fields) < 2 || fields[1] != "0" {
					clean = false
				}
			}
			continue
		}
		flush()
		// A mapping: "00400000-00cae000 r--p 00000000 fd:01 1234  /path/to/exe".
		if len(fields) < 6 || strings.Join(fields[5:], " ") != path || strings.Contains(fields[1], "w") {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		current, clean = &mapping{start: uintptr(start), end: uintptr(end)}, true
	}
	flush()
	return out
}
