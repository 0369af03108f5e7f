package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/creack/pty"
)

// The full-screen view's clients (-ui): the pretty stream and the view (watch --ui),
// each on a pseudo-terminal of its own (200x50) that the harness reads and throws away,
// as a terminal that keeps up would. Both have the same jq sink of the deleted pods'
// names, which tells when every event is in (jq is not even run on the other events:
// the expression starts by selecting DELETED) and costs both alike; what they differ in
// is the terminal: lines written for each event against a table drawn at most 20 times
// a second. Their CPU is compared: ui_cpu_ratio_vs_pretty (the view's target: 1.5).
const (
	ttyPretty = "kubeevents_tty_pretty"
	ttyUI     = "kubeevents_tty_ui"
)

// ttyReady is what a client with -v=1 says on stderr once its initial list is in: a
// terminal's output cannot be read for the sentinel's events.
const ttyReady = "listed (not shown: --watch-only)"

func (o *e2eOpts) ttyClientSpec(name string, nsArgs []string, ps phaseSpec, dir string) procSpec {
	jq, _ := filepath.Abs(filepath.Join(dir, name+".jq-deleted.txt"))
	argv := append(append([]string{o.own[name], "watch", ps.typeArg}, nsArgs...), "--watch-only", "-v=1",
		"--sink", `jq(output=`+jq+`)=select(.type=="DELETED") | .object.metadata.name`, "--kubeconfig", o.kubeconfig)
	if name == ttyUI {
		argv = append(argv, "--ui")
	}
	return procSpec{name: name, argv: argv, files: []fileOutput{{"jq", jq, formatJQName}}, tty: true, ready: ttyReady}
}

// openTTY opens a pseudo-terminal for a client and reads its master side into the void
// until the client is gone; the client's end is returned.
func openTTY() (*os.File, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200}); err != nil {
		ptmx.Close()
		tty.Close()
		return nil, err
	}
	go func() {
		_, _ = io.Copy(io.Discard, ptmx) // ends once the client closed its end (EIO)
		ptmx.Close()
	}()
	return tty, nil
}

// uiFigures are the view's CPU and peak RSS against the pretty stream's, side by side.
func uiFigures(p *phaseResult, f map[string]float64) {
	pretty, ui := p.Clients[ttyPretty], p.Clients[ttyUI]
	if pretty == nil || ui == nil {
		return
	}
	f["ui_cpu_ratio_vs_pretty"] = ratio(ui.CPUS, pretty.CPUS)
	f["ui_cpu_s"], f["ui_pretty_cpu_s"] = ui.CPUS, pretty.CPUS
	f["ui_peak_rss_ratio_vs_pretty"] = ratio(ui.RSSMB, pretty.RSSMB)
}
