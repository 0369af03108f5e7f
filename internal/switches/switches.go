// Package switches holds the off switches of kubeevents' speed pieces: the parts that
// replace or bend what Go, client-go or cobra do, each kept only while it earns its keep
// (bench/README.md, "The ledger"). Every piece has one environment variable; "off" (in
// any case) turns the piece off and kubeevents does what the library would have done,
// with the same output. "on", or the variable unset, leaves it on. Any other value is an
// error, reported once by Check before anything connects, rather than a guess.
//
// One parser for all of them, so that every switch reads the same way and the benchmark
// (bench/harness -variants) and the end-to-end test of the output's bytes
// (test/e2e TestDiffSameWithFastPathsOff) can turn every one off by name.
package switches

import (
	"fmt"
	"strings"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

// Switch is the off switch of one piece.
type Switch struct {
	// Env is the environment variable.
	Env string
	// Off says what turning it off does, for the error of a bad value.
	Off string
}

// The switches, one per piece that is kept.
var (
	// FastPaths: part reuse on the protobuf watch, part copying in the JSON encoder, and
	// the diff's shortcuts (internal/informer/decode's package comment).
	FastPaths = Switch{"KUBEEVENTS_FAST_PATHS", "decodes, encodes and diffs every object whole"}
	// WireDecoders: internal/informer/decode's protobuf watch and list readers and one-pass JSON
	// watch decoder in place of client-go's (part reuse lives in the protobuf watch: off
	// turns it off too).
	WireDecoders = Switch{"KUBEEVENTS_WIRE_DECODERS", "reads lists and watches with client-go's decoders"}
	// OneProcessor: GOMAXPROCS=1 once the initial list is in (internal/runtimetune).
	OneProcessor = Switch{"KUBEEVENTS_ONE_PROCESSOR", "leaves GOMAXPROCS to Go"}
	// StartupPages: the executable's pages that start-up left resident taken out of RSS
	// (internal/runtimetune/startup_pages_linux.go).
	StartupPages = Switch{"KUBEEVENTS_RELEASE_STARTUP_PAGES", "keeps the executable's start-up pages resident"}
	// RelistInPlace, EndedEarlyBookmark and ReadinessProbe: the informer's recovery
	// pieces, which bend client-go's reflector (internal/informer/reflector.go).
	RelistInPlace      = Switch{"KUBEEVENTS_RELIST_IN_PLACE", "leaves a watch's 410 Gone to client-go's reflector, which re-lists after its backoff"}
	EndedEarlyBookmark = Switch{"KUBEEVENTS_ENDED_EARLY_BOOKMARK", "leaves a watch the server closed at once to client-go's reflector, which re-lists after its backoff"}
	ReadinessProbe     = Switch{"KUBEEVENTS_READINESS_PROBE", "leaves the calls to an unreachable server to client-go's backoff, up to 30 s"}
)

// All are every switch, in the order of the ledger.
func All() []Switch {
	return []Switch{FastPaths, WireDecoders, OneProcessor, StartupPages,
		RelistInPlace, EndedEarlyBookmark, ReadinessProbe}
}

// On reports whether s's piece is on, reading its variable through getenv (os.Getenv):
// false only for "off". A value Check rejects counts as on.
func (s Switch) On(getenv func(string) string) bool {
	return !strings.EqualFold(getenv(s.Env), "off")
}

// check is the error for a value of s's variable that is neither on nor off.
func (s Switch) check(getenv func(string) string) error {
	switch value := getenv(s.Env); strings.ToLower(value) {
	case "", "on", "off":
		return nil
	default:
		return fmt.Errorf("%s=%q: want on or off (off %s)", s.Env, value, s.Off)
	}
}

// Check is the first switch set through getenv to a value other than on or off.
func Check(getenv func(string) string) error {
	for _, s := range All() {
		if err := s.check(getenv); err != nil {
			return err
		}
	}
	return nil
}

// Settings reads every switch through getenv (os.Getenv) into the one value a run is
// given; the error is Check's. GOMAXPROCS set by the user also leaves the processors to
// Go, as the user asked.
func Settings(getenv func(string) string) (fastpath.Settings, error) {
	off := func(s Switch) bool { return !s.On(getenv) }
	return fastpath.Settings{
		NoFastPaths: off(FastPaths), NoWireDecoders: off(WireDecoders),
		Recovery: fastpath.Recovery{NoRelistInPlace: off(RelistInPlace), NoEndedEarlyBookmark: off(EndedEarlyBookmark),
			NoReadinessProbe: off(ReadinessProbe)},
		Runtime: fastpath.Runtime{NoOneProcessor: off(OneProcessor) || getenv("GOMAXPROCS") != "", NoStartupPages: off(StartupPages)},
	}, Check(getenv)
}
