// Package checkpoint is what --resume FILE keeps between runs: for every watched object,
// the last state that every sink has been given, so that a restarted kubeevents says only
// what happened while it was down.
//
// # What "delivered" means
//
// An event is delivered to a sink when the sink's Write returned without an error (the
// listener's delivery goroutine, package listener): written, or left out on purpose by a
// filter (a jq sink that yields nothing); for a sink that holds events (http, exec: a
// batch), when the sink settles it as delivered (the receiver took it). An object's
// checkpointed state is the newest state that EVERY sink has been delivered: one state
// per object for all sinks, not one per sink, so the file stays as small as the watch and
// a resumed run needs one list. The informer hands every event to Tracker.Made before any
// sink gets it; each listener calls the event's Written once it is delivered (after Write,
// or when a holding sink settles it); the last one settles the event into the
// checkpoint (an older event that settles later is ignored, by its seq).
//
// An event a sink never writes never settles: one still in a buffer when the process is
// killed, one dropped by on-full=drop-oldest/drop-newest, one replaced in the buffer by
// coalesce (the newer one settles in its place), one a failed sink could not write. The
// checkpoint then keeps the object's older state, and the next run (--resume) emits the
// object again, as MODIFIED against that older state, to every sink. Hence:
//
//   - across a clean stop (Ctrl-C, SIGTERM, --timeout, a met condition), where every
//     sink wrote everything it held within --grace: exactly once. The next run emits
//     what changed since, and nothing it already emitted.
//   - across a crash (SIGKILL, power loss) or events a sink did not write: at least
//     once. Every object whose newest state is not in the last file written is emitted
//     again, in its current state: those some sink had not written, and those that
//     settled after the last write (at most about a second before the crash).
//     Intermediate states are not replayed (informers list, they do not replay), and the
//     sinks that did get them see the object a second time.
//
// # The file
//
// JSON Lines: a header (format, version, when it was written, and the watch it belongs
// to: the server's URL and the cluster's identity, the UID of its kube-system namespace,
// then the resource types, namespace, selectors, names, --metadata-only and
// --show-secrets), one line per object ({"resource": ..., "object": {...}}: the object as
// the sinks were given it, redacted as they saw it, with the managers and times of its
// managedFields entries but not their fields, from which a resumed run tells who wrote
// since), and a last line with the count of
// objects, without which the file is truncated. With several clusters (--context a,b)
// the file is a section of such lines per cluster, each header naming its context
// (version 2; one cluster's file stays version 1): each cluster resumes from its own,
// and the sections of clusters not watched this time are written back as they were
// read. It is written whole, at most once a
// second while something settled (and less often when writing takes long, so that it
// costs at most a tenth of the time), at the start and at exit: to a temporary file in
// the same directory, fsynced, renamed over the old one, and the directory fsynced, mode
// 0600. A crash at any moment leaves the old file or the new one, never a mix.
//
// # Where it is kept
//
// A Store keeps the checkpoint: FileStore the file above; package clusterstore the same
// lines in Secrets or ConfigMaps of the cluster (--resume secret:NAME), so that another
// replica can resume from it. The Writer hands each write's sections to its Store as a
// Snapshot; a Store hands a checkpoint back in the file's format, which Read reads and
// checks, whatever the store.
//
// # Memory
//
// The tracker holds, per object, a pointer to the object the sinks were given: the same
// object the informer's cache holds until it changes, so it costs a map entry per object
// rather than a copy (after a resumed start's first list, Tracker.Adopt points the
// unchanged ones back at the cache's). The JSON is made only while the file is written,
// and not kept. docs/sinks.md has the figures for 10,000 pods.
//
// With redacted Secrets, the header also keeps the key of the placeholders' fingerprints,
// so that an unchanged value has the same placeholder after a resume; the file is 0600.
package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Format and Version name the file's format in its header; a file of another version is
// refused, never rewritten. Version 1 is one cluster's checkpoint (a run of one cluster
// writes it, as it always did); version 2 is one section per cluster (--context a,b).
const (
	Format          = "kubeevents-checkpoint"
	Version         = 2
	VersionOneWatch = 1
)

// Watch is what a checkpoint belongs to: a run resumes from it only if every field is the
// same (the sinks, the output format and the exit conditions may differ).
type Watch struct {
	Server string `json:"server"` // the API server's URL
	// Cluster is the UID of the cluster's kube-system namespace: the same URL may lead
	// to another cluster (a re-created one, a tunnel). Empty if it could not be read
	// (no right to get namespaces): then only the URL is compared.
	Cluster   string   `json:"cluster"`
	Resources []string `json:"resources"` // as resource.Resource.GVR prints them
	// Namespace is the one namespace watched ("" for all); Namespaces the namespaces of
	// a watch of several (-n a,b), and ExcludeNamespaces those left out of all (-A
	// --exclude-namespace): each changes which objects are watched.
	Namespace         string   `json:"namespace"`
	Namespaces        []string `json:"namespaces,omitempty"`
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`
	LabelSelector     string   `json:"labelSelector"`
	FieldSelector     string   `json:"fieldSelector"`
	Names             []string `json:"names"`
	MetadataOnly      bool     `json:"metadataOnly"`
	ShowSecrets       bool     `json:"showSecrets"`
}

// sameCluster reports whether w and now lead to the same cluster: the same server and,
// when both are known, the same kube-system UID.
func (w Watch) sameCluster(now Watch) bool {
	return w.Server == now.Server && (w.Cluster == "" || now.Cluster == "" || w.Cluster == now.Cluster)
}

// header is each section's first line.
type header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Context is the kubeconfig context whose cluster the section is (version 2); a
	// version 1 file has one section, without it, which a later run of several clusters
	// keeps unnamed if none of them is its cluster.
	Context string    `json:"context,omitempty"`
	Written time.Time `json:"written"`
	Watch   Watch     `json:"watch"`
	// RedactionKey is the key of redacted Secret values' fingerprints, kept so that an
	// unchanged value has the same placeholder after a resume (informer.Options).
	RedactionKey []byte `json:"redactionKey,omitempty"`
	// Episodes is the state of the sinks' episodes in the cluster (package episode), as
	// delivered: those open, so that a resumed run neither opens them again nor forgets
	// to resolve them. Absent when none is open.
	Episodes json.RawMessage `json:"episodes,omitempty"`
}

// line is any line after the header: an object, or the end.
type line struct {
	Resource string          `json:"resource,omitempty"`
	Object   json.RawMessage `json:"object,omitempty"`
	End      *struct {
		Objects int `json:"objects"`
	} `json:"end,omitempty"`
}

// File is a checkpoint file read back: one section per cluster (one, unnamed, in a file
// a run of one cluster wrote).
type File struct {
	Path     string
	Sections []*Saved
}

// Saved is one cluster's checkpoint read back: the watch it belongs to and, per
// resource, the JSON of every object as the sinks were given it.
type Saved struct {
	Path         string
	Context      string // the section's context; "" for a run of one cluster
	Written      time.Time
	Watch        Watch
	RedactionKey []byte
	Objects      map[string][][]byte // by resource
	Episodes     json.RawMessage     // the header's episodes (nil: none)
}

// Count is the number of objects in the checkpoint.
func (s *Saved) Count() int {
	n := 0
	for _, objs := range s.Objects {
		n += len(objs)
	}
	return n
}

// startAfresh is how every refusal of the checkpoint named path ends: what the user can
// do. A checkpoint kept in the cluster (package clusterstore: secret:NAME,
// configmap:NAMESPACE/NAME) is no file to delete.
func startAfresh(path string) string {
	for _, kind := range []string{"secret", "configmap"} {
		if ref, ok := strings.CutPrefix(path, kind+":"); ok {
			return fmt.Sprintf("to start afresh, add --resume-reset (or delete %s %s)", kind, ref)
		}
	}
	return "to start afresh, delete the file or add --resume-reset"
}

// CorruptError says the file is not a whole checkpoint of this version.
type CorruptError struct {
	Path string
	Line int // 0 when the whole file is at fault
	What string
}

func (e *CorruptError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return fmt.Sprintf("--resume %s: not a usable checkpoint: %s; %s", where, e.What, startAfresh(e.Path))
}

// MismatchError says the checkpoint belongs to another watch.
type MismatchError struct {
	Path        string
	Context     string   // the cluster whose section differs; "" with one cluster
	Differences []string // "namespace: \"a\" in the checkpoint, \"b\" now"
}

func (e *MismatchError) Error() string {
	whose := "the checkpoint is"
	if e.Context != "" {
		whose = "the checkpoint of cluster " + e.Context + " is"
	}
	return fmt.Sprintf("--resume %s: %s of another watch (%s); %s",
		e.Path, whose, strings.Join(e.Differences, "; "), startAfresh(e.Path))
}

// Load reads the checkpoint file at path; a file that does not exist is no checkpoint
// (nil, nil).
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--resume %s: %w", path, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, fmt.Errorf("--resume %s: a directory; give the path of a checkpoint file", path)
	}
	return Read(path, f)
}

// Read reads a checkpoint in the file's format from r: what Load reads from a file, and
// what a Store that keeps it elsewhere hands back whole (package clusterstore). name
// names it in errors and in File.Path and Saved.Path: the file's path, or the store's
// Name.
func Read(name string, in io.Reader) (*File, error) {
	r := bufio.NewReaderSize(in, 64<<10)
	path := name
	corrupt := func(n int, format string, args ...any) error {
		return &CorruptError{Path: path, Line: n, What: fmt.Sprintf(format, args...)}
	}
	file := &File{Path: path}
	n := 1
	for {
		first, err := r.ReadBytes('\n')
		if err != nil && (err != io.EOF || len(first) == 0) {
			if err == io.EOF {
				return nil, corrupt(0, "the file is empty")
			}
			return nil, fmt.Errorf("--resume %s: %w", path, err)
		}
		var h header
		if err := json.Unmarshal(first, &h); err != nil || h.Format != Format {
			return nil, corrupt(n, "no checkpoint header (is this a kubeevents --resume file?)")
		}
		if h.Version != Version && h.Version != VersionOneWatch {
			return nil, corrupt(n, "checkpoint version %d, this kubeevents reads versions %d and %d", h.Version, VersionOneWatch, Version)
		}
		if len(file.Sections) > 0 && (h.Version != Version || file.Sections[0].Context == "") {
			return nil, corrupt(n, "a second section in a checkpoint of one cluster")
		}
		if slices.ContainsFunc(file.Sections, func(s *Saved) bool { return s.Context == h.Context }) {
			return nil, corrupt(n, "a second section of cluster %s", h.Context)
		}
		s := &Saved{Path: path, Context: h.Context, Written: h.Written, Watch: h.Watch, RedactionKey: h.RedactionKey,
			Objects: map[string][][]byte{}, Episodes: h.Episodes}
		if n, err = readSection(r, s, n+1, corrupt); err != nil {
			return nil, err
		}
		file.Sections = append(file.Sections, s)
		if _, err := r.Peek(1); err == io.EOF {
			return file, nil
		}
		if h.Version == VersionOneWatch {
			if rest, _ := io.ReadAll(r); len(bytes.TrimSpace(rest)) > 0 {
				return nil, corrupt(n, "data after the last line")
			}
			return file, nil
		}
	}
}

// readSection reads s's object lines and its end line, the first at line number n, and
// returns the number of the line after them.
func readSection(r *bufio.Reader, s *Saved, n int, corrupt func(int, string, ...any) error) (int, error) {
	for ; ; n++ {
		raw, err := r.ReadBytes('\n')
		if err == io.EOF {
			return 0, corrupt(0, "it ends after %d lines without its last line (truncated)", n-1)
		}
		if err != nil {
			return 0, fmt.Errorf("--resume %s: %w", s.Path, err)
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return 0, corrupt(n, "%v", err)
		}
		switch {
		case l.End != nil:
			if l.End.Objects != s.Count() {
				return 0, corrupt(n, "%d objects announced, %d found", l.End.Objects, s.Count())
			}
			return n + 1, nil
		case l.Resource == "" || len(l.Object) == 0 || l.Object[0] != '{':
			return 0, corrupt(n, "not an object line")
		case !slices.Contains(s.Watch.Resources, l.Resource):
			return 0, corrupt(n, "resource %q is not one the checkpoint watched", l.Resource)
		}
		s.Objects[l.Resource] = append(s.Objects[l.Resource], l.Object)
	}
}

// For finds the section of the cluster of context name ("" in a run of one cluster)
// that watches now, and checks that it belongs to now's watch. A section is the
// cluster's if it has its context name; failing that, a section of a run of one cluster
// that is of now's watch, or, in a run of one cluster, any section whose server and
// cluster UID are now's. The
// section is nil if the file has none for the cluster: a cluster new to the file. In a
// run of one cluster, a file with sections but none of this cluster is another watch's.
func (f *File) For(name string, now Watch) (*Saved, error) {
	if f == nil {
		return nil, nil
	}
	for _, s := range f.Sections {
		if s.Context == name {
			return s, s.Check(now)
		}
	}
	for _, s := range f.Sections {
		switch {
		case name == "" && s.Watch.sameCluster(now):
			return s, s.Check(now)
		case s.Context == "" && s.Check(now) == nil:
			// Only if it is this watch: two contexts of one cluster (other namespaces,
			// say) must not take the other's checkpoint, or be refused for it.
			return s, nil
		}
	}
	if name == "" {
		contexts := make([]string, len(f.Sections))
		for i, s := range f.Sections {
			contexts[i] = s.Context
			if s.Watch.Server == now.Server {
				// The server is the same, so its cluster UID differs: re-created.
				return nil, &MismatchError{Path: f.Path, Context: s.Context, Differences: []string{fmt.Sprintf(
					"the cluster at server %s was re-created: kube-system namespace UID %s in the checkpoint, %s now",
					show(now.Server), show(s.Watch.Cluster), show(now.Cluster))}}
			}
		}
		return nil, &MismatchError{Path: f.Path, Differences: []string{fmt.Sprintf(
			"it keeps clusters %s, none of them server %s", strings.Join(contexts, ", "), show(now.Server))}}
	}
	return nil, nil
}

// Others are the sections of f not in used: those of clusters not watched this time,
// kept as they are.
func (f *File) Others(used []*Saved) []*Saved {
	if f == nil {
		return nil
	}
	var out []*Saved
	for _, s := range f.Sections {
		if !slices.Contains(used, s) {
			out = append(out, s)
		}
	}
	return out
}

// Check compares the checkpoint's watch with now's, and says every difference.
func (s *Saved) Check(now Watch) error {
	was := s.Watch
	var d differences
	d.compare("server", was.Server, now.Server)
	if was.Cluster != "" && now.Cluster != "" { // empty: it could not be read
		d.compare("cluster (kube-system namespace UID)", was.Cluster, now.Cluster)
	}
	d.compareSets("resources", was.Resources, now.Resources)
	d.compare("namespace", was.Namespace, now.Namespace)
	d.compareSets("namespaces", was.Namespaces, now.Namespaces) // -n a,b and -n b,a watch the same
	d.compareSets("excluded namespaces", was.ExcludeNamespaces, now.ExcludeNamespaces)
	d.compare("label selector", was.LabelSelector, now.LabelSelector)
	d.compare("field selector", was.FieldSelector, now.FieldSelector)
	d.compareSets("names", was.Names, now.Names)
	d.compare("--metadata-only", was.MetadataOnly, now.MetadataOnly)
	d.compare("--show-secrets", was.ShowSecrets, now.ShowSecrets)
	if len(d) > 0 {
		return &MismatchError{Path: s.Path, Context: s.Context, Differences: d}
	}
	return nil
}

// differences are what Check says: "WHAT THEN in the checkpoint, NOW now", one each.
type differences []string

// compare notes then and now if they differ: two strings, or two bools.
func (d *differences) compare(what string, then, now any) {
	if then != now {
		d.note(what, then, now)
	}
}

// compareSets notes then and now if they differ as sets.
func (d *differences) compareSets(what string, then, now []string) {
	if !slices.Equal(sorted(then), sorted(now)) {
		d.note(what, then, now)
	}
}

func (d *differences) note(what string, then, now any) {
	*d = append(*d, fmt.Sprintf("%s %s in the checkpoint, %s now", what, show(then), show(now)))
}

func show(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return "(none)"
		}
		return strconv.Quote(v)
	case []string:
		if len(v) == 0 {
			return "(none)"
		}
		return strings.Join(v, ",")
	}
	return fmt.Sprint(v)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
