package top

import (
	"sync"
	"time"

	"github.com/kubeevents/kubeevents/internal/attribution"
)

// Ranking counts changes over a sliding window: per object, per field (path) and per
// manager. Add is called by the sink for every event, Snapshot by the display for every
// frame, from different goroutines.
type Ranking struct {
	mu      sync.Mutex
	length  time.Duration
	started time.Time

	changes  *window // one key: every change
	objects  *window
	fields   *window
	managers *window
	// objectIDs, fieldIDs and managerIDs describe the windows' keys; byObject counts the
	// managers of each object.
	objectIDs  map[string]ObjectID
	fieldIDs   map[string]FieldID
	managerIDs map[string]attribution.Entry
	byObject   map[string]*window
	// episodes are the transitions of the open episodes each object is in, and open
	// how many are open (package episode).
	episodes map[string][]string
	open     int
}

// ObjectID names an object as a row shows it.
type ObjectID struct {
	Cluster   string `json:"cluster,omitempty"`
	Kind      string `json:"kind"` // pod, deployment.apps: -o name's form
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// FieldID names a field of a kind: its path as pretty output's diff lines show it
// (status.conditions[Ready].status).
type FieldID struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// NewRanking counts over a window of length, from start.
func NewRanking(length time.Duration, start time.Time) *Ranking {
	return &Ranking{length: length, started: start, changes: newWindow(length), objects: newWindow(length),
		fields: newWindow(length), managers: newWindow(length), objectIDs: map[string]ObjectID{},
		fieldIDs: map[string]FieldID{}, managerIDs: map[string]attribution.Entry{}, byObject: map[string]*window{},
		episodes: map[string][]string{}}
}

// Change is one event as the ranking counts it: its object, the paths it changed (for a
// MODIFIED event with a diff) and the managers that made it.
type Change struct {
	Time   time.Time
	Object ObjectID
	Paths  []string
	By     []attribution.Entry
}

// Add counts c.
func (r *Ranking) Add(c Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes.add("", c.Time)
	okey := objectKey(c.Object)
	r.objectIDs[okey] = c.Object
	r.objects.add(okey, c.Time)
	for _, p := range c.Paths {
		id := FieldID{Kind: c.Object.Kind, Path: p}
		key := id.Kind + "\x00" + id.Path
		r.fieldIDs[key] = id
		r.fields.add(key, c.Time)
	}
	for _, e := range c.By {
		who := Entry{Manager: e.Manager, Subresource: e.Subresource}
		key := attribution.Name(who)
		r.managerIDs[key] = who
		r.managers.add(key, c.Time)
		w := r.byObject[okey]
		if w == nil {
			w = newWindow(r.length)
			r.byObject[okey] = w
		}
		w.add(key, c.Time)
	}
}

// Episodes says which open episodes (their transitions) o is in, none when empty, and
// how many are open in all.
func (r *Ranking) Episodes(o ObjectID, transitions []string, open int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(transitions) == 0 {
		delete(r.episodes, objectKey(o))
	} else {
		r.episodes[objectKey(o)] = transitions
	}
	r.open = open
}

// Entry is a manager as a row counts it: its name and subresource, whatever the
// operation and time of each write.
type Entry = attribution.Entry

func objectKey(o ObjectID) string {
	return o.Cluster + "\x00" + o.Kind + "\x00" + o.Namespace + "\x00" + o.Name
}

// Snapshot is the ranking at one time: what kubeevents top draws, and writes as one JSON
// object per interval with -o json.
type Snapshot struct {
	Time time.Time `json:"time"`
	// Window is the window's length; Span the part of it counted so far (shorter than
	// Window only in the first window after the start).
	Window  Duration `json:"window"`
	Span    Duration `json:"span"`
	Changes uint64   `json:"changes"`
	// Episodes is how many episodes are open (top's --on).
	Episodes int          `json:"episodes"`
	Objects  []ObjectRow  `json:"objects"`
	Fields   []FieldRow   `json:"fields"`
	Managers []ManagerRow `json:"managers"`
}

// ObjectRow is an object's changes in the window.
type ObjectRow struct {
	ObjectID
	Changes   uint64  `json:"changes"`
	PerMinute float64 `json:"perMinute"`
	// Managers are those that made its changes, the most first.
	Managers []Count  `json:"managers"`
	Trend    []uint32 `json:"trend"`
	// Episodes are the transitions of the open episodes it is in.
	Episodes []string `json:"episodes,omitempty"`
}

// Count is a name and how many times it was counted.
type Count struct {
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

// FieldRow is a field's changes in the window, over every object of its kind.
type FieldRow struct {
	FieldID
	Changes uint64   `json:"changes"`
	Trend   []uint32 `json:"trend"`
}

// ManagerRow is a manager's writes in the window.
type ManagerRow struct {
	Manager     string   `json:"manager"`
	Subresource string   `json:"subresource,omitempty"`
	Writes      uint64   `json:"writes"`
	Trend       []uint32 `json:"trend"`
}

// Duration is a time.Duration written as Go writes it ("1m0s").
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Snapshot is the ranking as of t: at most limit rows of each kind (0: all).
func (r *Ranking) Snapshot(t time.Time, limit int) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	span := min(max(t.Sub(r.started), 0), r.length)
	s := Snapshot{Time: t, Window: Duration(r.length), Span: Duration(span), Episodes: r.open,
		Objects: []ObjectRow{}, Fields: []FieldRow{}, Managers: []ManagerRow{}}
	if all := r.changes.rank(t, 0); len(all) > 0 {
		s.Changes = all[0].total
	}
	minutes := span.Minutes()
	if minutes <= 0 {
		minutes = r.length.Minutes()
	}
	for _, row := range r.objects.rank(t, limit) {
		o := ObjectRow{ObjectID: r.objectIDs[row.key], Changes: row.total, PerMinute: float64(row.total) / minutes,
			Trend: trend(row.series), Managers: []Count{}, Episodes: r.episodes[row.key]}
		if w := r.byObject[row.key]; w != nil {
			for _, m := range w.rank(t, 3) {
				o.Managers = append(o.Managers, Count{Name: m.key, Count: m.total})
			}
		}
		s.Objects = append(s.Objects, o)
	}
	forgetUncounted(r.objectIDs, r.objects)
	forgetUncounted(r.byObject, r.objects)
	for _, row := range r.fields.rank(t, limit) {
		s.Fields = append(s.Fields, FieldRow{FieldID: r.fieldIDs[row.key], Changes: row.total, Trend: trend(row.series)})
	}
	forgetUncounted(r.fieldIDs, r.fields)
	for _, row := range r.managers.rank(t, limit) {
		e := r.managerIDs[row.key]
		s.Managers = append(s.Managers, ManagerRow{Manager: e.Manager, Subresource: e.Subresource, Writes: row.total, Trend: trend(row.series)})
	}
	forgetUncounted(r.managerIDs, r.managers)
	return s
}

func forgetUncounted[V any](ids map[string]V, w *window) {
	for key := range ids {
		if _, counted := w.rows[key]; !counted {
			delete(ids, key)
		}
	}
}

func trend(s series) []uint32 { return append([]uint32(nil), s.counts[:]...) }
