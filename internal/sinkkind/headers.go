package sinkkind

import (
	"strings"
	"sync"
)

// HeaderPrinters are the terminal's printers, whose header lines are printed again after
// a re-sync notice on stderr (which scrolls the last header away). The zero value is
// ready to use.
type HeaderPrinters struct {
	mu       sync.Mutex
	printers []HeaderPrinter
}

// Add is Env.Printed: a printer to tell.
func (h *HeaderPrinters) Add(p HeaderPrinter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.printers = append(h.printers, p)
}

// Warned is told of every diagnostic line of the stream (its format, without the
// cluster's name one of several clusters' notices starts with).
func (h *HeaderPrinters) Warned(format string) {
	if !strings.HasPrefix(format, "re-synced ") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.printers {
		p.HeadersAgain()
	}
}
