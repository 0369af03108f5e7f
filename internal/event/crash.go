package event

import (
	"slices"
	"sync"
	"time"
)

// CrashContext is what one container's crash left behind (package crashcontext fetches
// it): the last lines of its log, how it ended, why it waits, and the pod's recent
// Warning Events. Every string in it is data from the cluster and the container, kept as
// it came: whatever prints it to a terminal escapes it, as every other string taken from
// an object.
type CrashContext struct {
	// Container is the container it is about.
	Container string `json:"container"`
	// Log is the last lines of the log of the container instance that ended, oldest
	// first, without their line ends: the previous instance's (kubectl logs --previous)
	// when the container has restarted since, else the current one's, which ended and
	// was not restarted. Nil when no log was asked for (no lines asked for, or the
	// container has not ended: an image that cannot be pulled) or none could be read
	// (LogError says why).
	Log *CrashLog `json:"log,omitempty"`
	// LogError says why a log that was asked for is missing: "not allowed to get
	// pods/log", "no answer within 1s", or the API server's own words (a previous
	// container's log the node no longer has, a node that cannot be reached).
	LogError string `json:"logError,omitempty"`
	// LastTermination is how the container instance that ended did (nil if none has).
	LastTermination *Termination `json:"lastTermination,omitempty"`
	// Waiting is why the container waits now, if it does (CrashLoopBackOff,
	// ImagePullBackOff and its message).
	Waiting *Waiting `json:"waiting,omitempty"`
	// Warnings is the pod's most recent Warning Events, oldest first.
	Warnings []Warning `json:"warnings,omitempty"`
	// WarningsError says why the Warning Events are missing, as LogError does.
	WarningsError string `json:"warningsError,omitempty"`
}

// CrashLog is a container's last log lines.
type CrashLog struct {
	// Previous is true when the lines are the previous instance's (kubectl logs --previous).
	Previous bool `json:"previous"`
	// Lines are the last lines, oldest first.
	Lines []string `json:"lines"`
	// Cut is true when more came than the fetcher keeps: the first of the lines asked
	// for are missing.
	Cut bool `json:"cut,omitempty"`
}

// Termination is how a container instance ended, as its status says.
type Termination struct {
	ExitCode   int32     `json:"exitCode"`
	Signal     int32     `json:"signal,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Message    string    `json:"message,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// Waiting is why a container does not run.
type Waiting struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Warning is one of the pod's Warning Events.
type Warning struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Count is how many times it happened (at least 1).
	Count int32 `json:"count"`
	// Last is when it last happened.
	Last time.Time `json:"last,omitzero"`
}

// PendingContext is a crash's context being fetched while its event goes to the sinks:
// every sink that shows the event waits for it (Wait), for at most the fetch's bound, and
// all of them see the same: the context fetched within the bound, or, past it, what was
// known without asking (how the container ended, why it waits) with the log's and the
// Warning Events' absence said. A fetch that goes on past the bound ends later (Late), for
// a sink that can add it to what it sent.
type PendingContext struct {
	deadline time.Time
	early    *CrashContext // what is known without asking, each missing part said

	done chan struct{} // closed once the fetch ended
	mu   sync.Mutex
	got  *CrashContext
	at   time.Time // when it ended
}

// NewPendingContext is a context being fetched, to be shown at the latest at deadline;
// early is what Wait gives past it (the caller has said in it what is missing).
func NewPendingContext(deadline time.Time, early *CrashContext) *PendingContext {
	return &PendingContext{deadline: deadline, early: early, done: make(chan struct{})}
}

// Done gives the fetched context: called once, when the fetch ends, whenever that is.
func (p *PendingContext) Done(c *CrashContext) {
	p.mu.Lock()
	p.got, p.at = c, time.Now()
	p.mu.Unlock()
	close(p.done)
}

// Wait returns the context as the sinks show it: the one fetched, if it came by the
// deadline, else what was known without asking. It waits until the fetch ends or the
// deadline comes.
func (p *PendingContext) Wait() *CrashContext {
	if d := time.Until(p.deadline); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-p.done:
		case <-t.C:
		}
		t.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.got != nil && !p.at.After(p.deadline) {
		return p.got
	}
	return p.early
}

// Late reports whether the context came after the deadline (or has not come yet), so
// that what the sinks showed went without it.
func (p *PendingContext) Late() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got == nil || p.at.After(p.deadline)
}

// Ended is closed once the fetch ended; Fetched then gives what it found.
func (p *PendingContext) Ended() <-chan struct{} { return p.done }

// Fetched is what the fetch found, nil until it ended.
func (p *PendingContext) Fetched() *CrashContext {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got
}

// ReadyContext is a context known at once (tests, a recording).
func ReadyContext(c *CrashContext) *PendingContext {
	p := NewPendingContext(time.Time{}, c)
	p.Done(c)
	p.at = time.Time{}
	return p
}

// CrashTransitions are the transitions whose events carry their crash's context: a
// crash loop, an OOMKill, a failed pod, an image that cannot be pulled.
var CrashTransitions = []string{"crashloop", "oomkilled", "failed", "image-pull"}

// ShowsContext reports whether the sink given e shows its crash's context: e has one,
// and is one of the sink's episode or names a crash transition the sink asked for.
func (e *Event) ShowsContext() bool {
	return e.Context != nil && (e.Episode != nil || slices.ContainsFunc(e.On, func(t string) bool { return slices.Contains(CrashTransitions, t) }))
}

// WithContext is the event as e, with c as its crash's context: a copy, for a sink that
// shows again what came late.
func (e *Event) WithContext(c *PendingContext) *Event {
	copied := e.copyShown()
	copied.On, copied.Context = e.On, c
	return copied
}
