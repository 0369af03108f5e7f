package event

import "sync"

// Until ends a command's stream at the event that meets a condition (--until,
// --until-deleted). Every informer of the command shares one: it numbers their events
// one at a time and asks the condition about each as it is numbered, before any sink can
// have it, so no informer makes an event after the one that met the condition, even when
// that one comes early in a long initial list whose rest is already decoded.
type Until struct {
	// Met is the condition. It runs on an informer's goroutine, one event at a time.
	Met func(ev *Event) bool
	// Done is called once, when the condition is met.
	Done func()

	mu   sync.Mutex
	last uint64 // the last Seq handed out
	met  bool
	seq  uint64 // the Seq of the event that met the condition (the last one made)
}

// Number numbers ev with next and asks the condition about it. It returns false, leaving
// ev unnumbered, once the condition has been met: the stream is over.
func (u *Until) Number(ev *Event, next func(ev *Event) bool) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.met || !next(ev) {
		return false
	}
	u.last = ev.Seq
	if u.Met(ev) {
		u.meetLocked()
	}
	return true
}

// Meet marks the condition met without an event (as when the objects --until-deleted
// waits for never existed): the events made so far are the whole stream.
func (u *Until) Meet() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.meetLocked()
}

func (u *Until) meetLocked() {
	if u.met {
		return
	}
	u.met, u.seq = true, u.last
	if u.Done != nil {
		u.Done()
	}
}

// MetAt reports whether the condition was met and the Seq of the last event made then (0
// if none was).
func (u *Until) MetAt() (seq uint64, met bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seq, u.met
}
