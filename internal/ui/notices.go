package ui

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// noticesKept is how many diagnostic lines the view keeps to print once it has left
// the screen: a long run's repeated notices are bounded, the oldest go first.
const noticesKept = 200

// noticeShownFor is how long a notice that reports no outage stays on the bottom line.
const noticeShownFor = 10 * time.Second

// notice is one diagnostic line ("watch of pods lost (...); retrying…").
type notice struct {
	at   time.Time
	text string // without the "kubeevents: " prefix
	// outage says the line reports a watch that is down: it stays on the bottom line
	// until a later line (resumed, re-synced) replaces it.
	outage bool
}

// notices are the diagnostic lines of the run (stderr's), which the view shows on its
// bottom line while it has the screen. Lines that could not be printed meanwhile (stderr
// is the same terminal) are printed once the view has left it, so that none is lost.
type notices struct {
	now func() time.Time
	// holdWhileShown: stderr is the terminal the view takes, so lines wait until it left.
	holdWhileShown bool

	mu       sync.Mutex
	out      io.Writer // stderr
	hold     bool      // the view has the screen and stderr is the terminal: hold lines back
	held     [][]byte  // lines held back, at most noticesKept
	skipped  int       // lines held back beyond noticesKept, dropped
	latest   notice
	partial  []byte
	released bool
}

// Write takes what the run writes to stderr, line by line.
func (n *notices) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.partial = append(n.partial, p...)
	for {
		i := bytes.IndexByte(n.partial, '\n')
		if i < 0 {
			break
		}
		line := n.partial[:i+1]
		n.partial = n.partial[i+1:]
		n.lineLocked(line)
	}
	if len(n.partial) == 0 {
		n.partial = nil
	}
	return len(p), nil
}

func (n *notices) lineLocked(line []byte) {
	text := strings.TrimPrefix(strings.TrimRight(string(line), "\n"), "kubeevents: ")
	n.latest = notice{at: n.now(), text: text, outage: isOutage(text)}
	if !n.hold {
		_, _ = n.out.Write(line)
		return
	}
	if len(n.held) == noticesKept {
		n.held = n.held[1:]
		n.skipped++
	}
	n.held = append(n.held, bytes.Clone(line))
}

// isOutage tells the lines that say a watch (or a cluster) is down: the informers'
// "watch of pods lost (…); retrying…", "… still lost …", "… waiting for it to come back".
func isOutage(text string) bool {
	return strings.Contains(text, " lost") || strings.Contains(text, "waiting for it to come back")
}

// holdBack holds stderr's lines back from now on (the view takes the terminal).
func (n *notices) holdBack() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hold = !n.released
}

// release prints the lines held back and lets later ones through (the view left the
// terminal).
func (n *notices) release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.released, n.hold = true, false
	if n.skipped > 0 {
		_, _ = io.WriteString(n.out, "kubeevents: ("+strconv.Itoa(n.skipped)+" earlier notices not shown)\n")
	}
	for _, line := range n.held {
		_, _ = n.out.Write(line)
	}
	n.held, n.skipped = nil, 0
}

// current is the notice the bottom line shows now, if any.
func (n *notices) current() (notice, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.latest
	if l.text == "" || (!l.outage && n.now().Sub(l.at) >= noticeShownFor) {
		return notice{}, false
	}
	return l, true
}
