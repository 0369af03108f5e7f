// Package fastpath says which of kubeevents' speed pieces a run uses: the parts that
// replace or bend what Go or client-go do, each kept only while it earns its keep
// (bench/README.md, "The ledger"). cmd reads the environment's off switches once into a
// Settings (package switches) and hands each piece the fields it needs. The zero value
// has every piece on.
package fastpath

// Settings are every piece's switch, off when true.
type Settings struct {
	// NoFastPaths decodes, encodes and diffs every object whole: no part reuse on the
	// protobuf watch, no copied JSON parts, no same-memory shortcut in the diff
	// (KUBEEVENTS_FAST_PATHS=off).
	NoFastPaths bool
	// NoWireDecoders reads lists and watches with client-go's decoders rather than the
	// informer's own (KUBEEVENTS_WIRE_DECODERS=off; part reuse lives in those decoders).
	NoWireDecoders bool
	Recovery       Recovery
	Runtime        Runtime
}

// Recovery are the informer's recovery pieces, which bend client-go's reflector
// (docs/development.md, "client-go's recovery").
type Recovery struct {
	NoRelistInPlace      bool // KUBEEVENTS_RELIST_IN_PLACE=off: a 410 Gone goes to the reflector
	NoEndedEarlyBookmark bool // KUBEEVENTS_ENDED_EARLY_BOOKMARK=off: a watch closed at once is a failure
	NoReadinessProbe     bool // KUBEEVENTS_READINESS_PROBE=off: failed calls go to the reflector's backoff
}

// Runtime are the process's settings for a long watch (package runtimetune).
type Runtime struct {
	// NoOneProcessor leaves GOMAXPROCS to Go while watching (KUBEEVENTS_ONE_PROCESSOR=off,
	// or GOMAXPROCS set by the user).
	NoOneProcessor bool
	// NoStartupPages keeps the executable's start-up pages resident
	// (KUBEEVENTS_RELEASE_STARTUP_PAGES=off).
	NoStartupPages bool
}
